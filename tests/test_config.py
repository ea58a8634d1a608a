"""Scenario: defaults, units, the canonical form, TOML round trips, friendly errors, overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import incast
from incast import Scenario, ScenarioError, _core
from incast.scenario import schema, settings


def canonical(s: Scenario) -> dict[str, Any]:
    """The engine's canonical form of ``s``: the TOML shape in human units."""
    return json.loads(s.to_json())  # type: ignore[no-any-return]


def scenario_error(data: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as info:
        Scenario.parse(data)
    message = str(info.value)
    assert "\n" not in message
    return message


# -- defaults and units -------------------------------------------------------


def test_defaults_follow_fast08_table1() -> None:
    s = Scenario(servers=16)
    assert (s.link.rate, s.link.rtt) == (10**9, 100e-6)
    assert s.switch.buffer == 32 * 1024
    assert (s.tcp.mss, s.tcp.init_cwnd, s.tcp.rcv_wnd, s.tcp.dupack_threshold) == (1460, 10, 64 * 1024, 3)
    assert (s.tcp.rto_min, s.tcp.rto_max, s.tcp.rto_initial, s.tcp.clock_granularity) == (0.2, 120.0, 1.0, 0.0)
    assert s.tcp.delayed_ack == 0.04
    assert (s.tcp.rto_randomize, s.tcp.rto_max_backoff, s.tcp.rto_scheduling_delay, s.tcp.rto_flavor) == (
        False,
        64,
        0.0,
        "rfc6298",
    )
    assert (s.tcp.cc, s.tcp.recovery, s.tcp.limited_transmit, s.tcp.slow_start, s.tcp.restart_after_idle) == (
        "reno",
        "newreno",
        False,
        True,
        True,
    )
    assert (s.workload.kind, s.workload.sru, s.workload.block) == ("sync_read", 256 * 1024, None)
    assert (s.workload.request, s.workload.order) == (100, "shuffled")
    assert (s.seed, s.blocks, s.duration) == (1, None, 1.0)


def test_servers_is_required() -> None:
    assert scenario_error({}) == "servers: required; a whole number of servers between 0 and 100000"


def test_defaults_are_the_engine_schema_defaults() -> None:
    """Python states no default: a scenario that names only its servers holds the schema's defaults."""
    written = canonical(Scenario(servers=1))
    for setting in schema():
        table, _, key = setting["name"].partition(".")
        if setting["name"] in ("servers", "blocks", "workload.block"):
            continue  # no default: required, or not in use unless given
        if setting["name"] == "memory_budget":  # canonical only when given, so the hash stays
            assert "memory_budget" not in written and Scenario(servers=1).memory_budget == 4 * 2**30
            continue
        if table == "traffic":  # canonical only when on, so the hash stays; the SI form holds the defaults
            assert "traffic" not in written and Scenario(servers=1).get(setting["name"]) is not None
            continue
        if key and key not in written[table]:
            assert table == "topology", setting["name"]  # a star writes its kind alone
            continue
        value = written[table][key] if key else written[table]
        assert value == setting["default"], setting["name"]
        assert setting["doc"] and setting["allowed"], setting["name"]


def test_blocks_alone_means_no_time_limit() -> None:
    s = Scenario(servers=2, blocks=5)
    assert (s.blocks, s.duration) == (5, None)
    assert canonical(s)["blocks"] == 5 and "duration" not in canonical(s)


def test_every_field_takes_unit_strings_or_plain_si_numbers_in_the_marked_si_form() -> None:
    a = Scenario.parse(
        {
            "servers": "8",
            "duration": "250ms",
            "link": {"rate": "10Gbps", "rtt": "20us"},
            "switch": {"buffer": "64KiB"},
            "tcp": {"rcv_wnd": "64KiB", "rto_min": "1ms", "clock_granularity": "4ms", "delayed_ack": "off"},
            "workload": {"block": "1MiB", "request": "1KB", "order": "fixed"},
        }
    )
    b = Scenario.parse(
        {
            "units": "si",
            "servers": 8,
            "duration": 0.25,
            "link": {"rate": 10**10, "rtt": 20e-6},
            "switch": {"buffer": 65536},
            "tcp": {"rcv_wnd": 65536, "rto_min": 0.001, "clock_granularity": 0.004, "delayed_ack": None},
            "workload": {"block": 2**20, "request": 1000, "order": "fixed"},
        }
    )
    assert a == b
    assert a.link.rate == 10**10 and a.tcp.delayed_ack is None and a.workload.sru is None


def test_a_plain_number_needs_a_unit_in_files_overrides_and_the_api(tmp_path: Path) -> None:
    """Issue 48: a bare number once meant seconds ("RTO_min 1s"); now it is refused naming the unit it needs."""
    needs = 'tcp.rto_min: 1 needs a unit, e.g. "1s" or "200ms"'
    path = tmp_path / "s.toml"
    path.write_text("servers = 2\n[tcp]\nrto_min = 1\n")
    with pytest.raises(ScenarioError) as file_error:
        Scenario.from_toml(path)
    with pytest.raises(ScenarioError) as api_error:
        incast.run(servers=2, tcp={"rto_min": 1})
    with pytest.raises(ScenarioError) as override_error:
        Scenario(servers=2).with_overrides({"tcp.rto_min": 1})
    assert str(file_error.value) == str(api_error.value) == str(override_error.value) == needs
    assert (
        scenario_error({"servers": 2, "link": {"rate": 1e9}})
        == 'link.rate: 1000000000.0 needs a unit, e.g. "1Gbps" or "100Mbps"'
    )
    assert (
        scenario_error({"servers": 2, "switch": {"buffer": 65536}})
        == 'switch.buffer: 65536 needs a unit, e.g. "32KiB" or "64pkt"'
    )
    assert (
        Scenario(servers=2, tcp={"rto_min": 0}).tcp.rto_min
        == 0
        == Scenario(servers=2, tcp={"rto_min": -0.0}).tcp.rto_min
    )


def test_only_the_marked_si_form_takes_plain_numbers() -> None:
    s = Scenario(servers=4, tcp={"rto_min": "1ms"}, link={"rate": "10Gbps"})
    d = s.to_dict()
    assert (d["units"], d["tcp"]["rto_min"], d["link"]["rate"]) == ("si", 0.001, 10**10)
    assert Scenario.parse(d) == s
    assert scenario_error({k: v for k, v in d.items() if k != "units"}).startswith("duration: 1.0 needs a unit")
    assert scenario_error({**d, "units": "ms"}).startswith('units: must be "si"')


def test_scenarios_are_frozen() -> None:
    s = Scenario(servers=4)
    with pytest.raises(AttributeError):
        s.servers = 5


# -- the canonical form -------------------------------------------------------


def test_canonical_form_writes_human_units_and_the_si_form_plain_numbers() -> None:
    s = Scenario(servers=16)
    c = canonical(s)
    assert (c["servers"], c["seed"], c["duration"]) == (16, 1, "1s")
    link = {"rate": "1Gbps", "rtt": "100us", "propagation": "50ns", "loss": 0.0, "arrival_order": "queued"}
    assert c["link"] == {**link, "tx_queue": "off", "host_jitter": "0", "skew": "0", "token_bucket": "off"}
    assert (c["switch"]["buffer"], c["tcp"]["rto_min"], c["tcp"]["delayed_ack"]) == ("32KiB", "200ms", "40ms")
    assert c["workload"]["sru"] == "256KiB" and "block" not in c["workload"]
    d = s.to_dict()
    si = (d["link"]["rate"], d["link"]["rtt"], d["switch"]["buffer"], d["tcp"]["rto_min"])
    assert si == (10**9, 1e-4, 32768, 0.2)
    assert Scenario.parse(canonical(s)) == s and s.hash == Scenario.parse(d).hash


def test_canonical_form_variants() -> None:
    s = Scenario.parse(
        {
            "servers": 4,
            "blocks": 3,
            "switch": {"buffer": "64pkt"},
            "tcp": {"delayed_ack": "off", "rto_min": "1.5ms"},
            "workload": {"block": "1MiB"},
        }
    )
    c = canonical(s)
    assert (c["switch"]["buffer"], c["tcp"]["delayed_ack"], c["tcp"]["rto_min"]) == ("64pkt", "off", "1.5ms")
    assert c["workload"]["block"] == "1MiB" and "sru" not in c["workload"]
    assert c["blocks"] == 3 and "duration" not in c


def test_durations_round_to_the_nearest_picosecond() -> None:
    s = Scenario(servers=1, link={"rtt": "1.4ps"})
    assert (s.link.rtt, canonical(s)["link"]["rtt"]) == (1e-12, "1ps")


# -- TOML -------------------------------------------------------------------------

EXAMPLE_TOML = """\
servers = 16
seed = 7
blocks = 100
duration = "2s"

[link]
rate = "10Gbps"
rtt = "20us"

[switch]
buffer = "64pkt"

[tcp]
rto_min = "1ms"
clock_granularity = "1ms"
delayed_ack = "off"

[workload]
kind = "sync_read"
block = "1MiB"
order = "fixed"
"""


def test_reads_the_documented_toml_shape(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(EXAMPLE_TOML)
    s = Scenario.from_toml(path)
    assert (s.servers, s.seed, s.blocks, s.duration) == (16, 7, 100, 2.0)
    assert (s.link.rate, s.link.rtt, s.switch.buffer) == (10**10, 20e-6, "64pkt")
    assert (s.tcp.rto_min, s.tcp.clock_granularity, s.tcp.delayed_ack) == (0.001, 0.001, None)
    assert (s.workload.block, s.workload.order) == (2**20, "fixed")


@pytest.mark.parametrize(
    ("value", "stored", "written"),
    [
        ("40ms", 0.04, "40ms"),
        ("200us", 2e-4, "200us"),
        ("off", None, "off"),
        ("linux", "linux", "linux"),
        (" ADAPTIVE ", "adaptive", "adaptive"),
    ],
)
def test_delayed_ack_forms_name_the_engine_modes(value: str, stored: Any, written: str) -> None:
    """A duration is the engine's standard mode; "off", "linux" and "adaptive" name modes."""
    s = Scenario.parse({"servers": 4, "tcp": {"delayed_ack": value}})
    assert s.tcp.delayed_ack == stored
    assert canonical(s)["tcp"]["delayed_ack"] == written
    one_block = Scenario.parse({"servers": 2, "blocks": 1, "tcp": {"delayed_ack": value}})
    assert json.loads(_core.run(one_block.to_json())[0])["summary"]["blocks"] == 1


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario(servers=16),
        Scenario.parse({"servers": 3, "blocks": 4, "switch": {"buffer": "7pkt"}, "tcp": {"delayed_ack": "off"}}),
        Scenario.parse({"servers": 3, "tcp": {"delayed_ack": "linux"}}),
        Scenario.parse({"servers": 3, "tcp": {"delayed_ack": "Adaptive"}}),
        Scenario.parse(
            {
                "servers": 1,
                "wan": {
                    "delay": "35ms",
                    "jitter": "1.5ms",
                    "jitter_dist": "uniform",
                    "spike_interval": "7s",
                    "spike_height": "250ms",
                    "spike_duration": "80ms",
                    "shift_interval": "30s",
                    "shift": "12ms",
                },
            }
        ),
        Scenario.parse(
            {
                "units": "si",
                "servers": 5,
                "duration": 0.123456789,
                "link": {"rate": 1_234_567_891, "rtt": 1 / 3 * 1e-4},
                "switch": {"buffer": 100_001},
                "tcp": {"rto_min": 1.234567e-3, "rcv_wnd": 65_537, "delayed_ack": 0.0125},
                "workload": {"block": 999_999, "request": 1, "server_jitter": 0},
            }
        ),
    ],
)
def test_toml_and_dict_round_trip_exactly(scenario: Scenario, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(scenario.to_toml())
    assert Scenario.from_toml(path) == scenario
    assert Scenario.parse(json.loads(json.dumps(scenario.to_dict()))) == scenario


def test_unknown_toml_keys_are_rejected_naming_them(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('servers = 4\n[link]\nspeed = "1Gbps"\n')
    has = "rate, rtt, propagation, loss, arrival_order, tx_queue, host_jitter, skew, token_bucket"
    unknown = rf"^link\.speed: unknown setting; \[link\] has {has}$"
    with pytest.raises(ScenarioError, match=unknown):
        Scenario.from_toml(path)
    assert scenario_error({"servers": 4, "srevers": 5}) == "srevers: unknown setting; did you mean servers?"
    assert scenario_error({"servers": 4, "xyzzy": 5}).startswith("xyzzy: unknown setting; a scenario has servers, seed")


def test_every_unknown_key_is_named_at_once_with_a_close_name() -> None:
    got = scenario_error({"servers": 4, "tcp": {"rto_mn": "1ms", "rto_max": "1s", "mms": 9000}, "lnk": {}})
    assert got == (
        "tcp.rto_mn: unknown setting; did you mean rto_min?; also unknown: tcp.mms (did you mean mss), "
        "lnk (did you mean link)"
    )


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("servers = = 4\n")
    with pytest.raises(ScenarioError, match=r"bad\.toml: not valid TOML: .*line 1"):
        Scenario.from_toml(path)


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Scenario.from_toml(tmp_path / "missing.toml")


# -- validation messages ----------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"servers": 0},
            "servers: 0 runs no reads and nothing else runs: give traffic.load, traffic.query_rate or background flows",
        ),
        ({"servers": "abc"}, "servers: 'abc' is not a whole number of servers between 0 and 100000"),
        ({"servers": 2.5}, "servers: 2.5 is not a whole number of servers between 0 and 100000"),
        ({"servers": True}, "servers: True is not a whole number of servers between 0 and 100000"),
        (
            {"servers": 4, "switch": {"buffer": "1000B"}},
            "switch.buffer: 1000 bytes cannot hold one full frame (1518 bytes for MSS 1460)",
        ),
        (
            {"servers": 4, "switch": {"buffer": "0pkt"}},
            "switch.buffer: must hold at least 1 and at most 2^32-1 packets, got '0pkt'",
        ),
        ({"servers": 4, "link": {"rate": "0Gbps"}}, "link.rate: must be a positive rate (e.g. \"1Gbps\"), got '0Gbps'"),
        ({"servers": 4, "link": {"rate": "-1Gbps"}}, "link.rate: '-1Gbps' is not a rate: it must not be negative"),
        ({"servers": 4, "link": {"rtt": "100"}}, "link.rtt: '100' needs a unit"),
        (
            {"servers": 4, "tcp": {"rto_min": "1s", "rto_max": "500ms"}},
            "tcp.rto_min: must not exceed tcp.rto_max (500ms), got 1s",
        ),
        ({"servers": 4, "tcp": {"rto_max": 0}}, "tcp.rto_max: must be positive"),
        ({"servers": 4, "tcp": {"mss": 0}}, "tcp.mss: must be a whole number of bytes between 1 and 65495, got 0"),
        ({"servers": 4, "tcp": {"rcv_wnd": "1KB"}}, "tcp.rcv_wnd: must be between one MSS (1460 bytes) and 4 GiB"),
        (
            {"servers": 4, "tcp": {"delayed_ack": 0}},
            'tcp.delayed_ack: must be a positive duration (e.g. "40ms"), "off" (ACK every segment), "linux" or '
            '"adaptive"; got 0',
        ),
        ({"servers": 4, "workload": {"sru": "1KiB", "block": "1MiB"}}, "workload: set either sru"),
        ({"servers": 8, "workload": {"block": "4B"}}, "workload.block: must give every server at least 1 byte"),
        ({"servers": 4, "workload": {"kind": "web"}}, 'workload.kind: must be "sync_read"'),
        ({"servers": 4, "workload": {"order": "random"}}, 'workload.order: must be "shuffled" or "fixed"'),
        ({"servers": 4, "blocks": 0}, "blocks: must be a whole number of blocks between 1 and 2^64-1, got 0"),
        ({"servers": 4, "duration": 0}, "duration: must be positive"),
        ({"servers": 4, "seed": -1}, "seed: must be a whole number between 0 and 2^64-1, got -1"),
        ({"servers": 4, "tcp": 5}, "tcp: must be a table of settings, got 5"),
    ],
)
def test_invalid_fields_give_one_line_naming_the_field(data: dict[str, Any], message: str) -> None:
    got = scenario_error(data)
    assert got.startswith(message), got


def test_packets_buffer_is_not_checked_against_the_frame_size() -> None:
    assert Scenario.parse({"servers": 1, "switch": {"buffer": "1pkt"}}).switch.buffer == "1pkt"


# -- overrides ------------------------------------------------------------------


def test_overrides_take_dotted_paths_and_any_unit_form() -> None:
    s = Scenario(servers=16).with_overrides({"tcp.rto_min": "1ms", "servers": 64, "link.rate": "10Gbps"})
    assert (s.tcp.rto_min, s.servers, s.link.rate) == (0.001, 64, 10**10)


def test_overrides_accept_nested_tables() -> None:
    s = Scenario(servers=4).with_overrides({"tcp": {"rto_min": "1ms", "delayed_ack": "off"}})
    assert (s.tcp.rto_min, s.tcp.delayed_ack, s.tcp.mss) == (0.001, None, 1460)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("tcp.rto_mn", r"^tcp\.rto_mn: unknown setting; did you mean rto_min\?$"),
        ("tcp.xyzzy", r"^tcp\.xyzzy: unknown setting; \[tcp\] has mss, init_cwnd, "),
        ("speed", r"^speed: unknown setting; did you mean seed\?$"),
        ("xyzzy", r"^xyzzy: unknown setting; a scenario has servers, seed, blocks, duration, "),
        ("servers.x", r"^servers\.x: unknown setting; servers is a single value, not a table$"),
        (
            "link.rate.bps",
            r"^link\.rate\.bps: unknown setting; \[link\] has rate, rtt, propagation, loss, arrival_order, tx_queue, "
            r"host_jitter, skew, token_bucket$",
        ),
    ],
)
def test_unknown_override_path_is_named(path: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        Scenario(servers=4).with_overrides({path: 1})


def test_sru_and_block_overrides_replace_each_other() -> None:
    s = Scenario(servers=4).with_overrides({"workload.block": "1MiB"})
    assert (s.workload.sru, s.workload.block) == (None, 2**20)
    s = s.with_overrides({"workload.sru": "64KiB"})
    assert (s.workload.sru, s.workload.block) == (65536, None)


def test_blocks_override_drops_only_a_defaulted_duration() -> None:
    assert Scenario(servers=4).with_overrides({"blocks": 5}).duration is None
    assert Scenario(servers=4, duration="2s").with_overrides({"blocks": 5}).duration == 2.0


def test_invalid_override_value_names_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"^switch\.buffer: 1000 bytes cannot hold one full frame"):
        Scenario(servers=4).with_overrides({"switch.buffer": "1000B"})


def test_settings_lists_every_dotted_field() -> None:
    names = settings()
    assert "servers" in names and "tcp.rto_min" in names and "workload.server_jitter" in names
    si = Scenario(servers=4).to_dict()  # plain SI numbers, marked units = "si"
    for name in names:
        Scenario.parse(si, {name: getattr_dotted(Scenario(servers=4), name)})


def getattr_dotted(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# -- loss-recovery variants (FAST08 5.1) -------------------------------------------


def test_loss_recovery_fields_reach_the_engine_and_round_trip_toml(tmp_path: Path) -> None:
    s = Scenario.parse(
        {
            "servers": 2,
            "tcp": {"recovery": "reno", "limited_transmit": True, "slow_start": "false", "restart_after_idle": False},
        }
    )
    tcp = canonical(s)["tcp"]
    assert (tcp["recovery"], tcp["limited_transmit"], tcp["slow_start"], tcp["restart_after_idle"]) == (
        "reno",
        True,
        False,
        False,
    )
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s
    assert Scenario.parse(json.loads(json.dumps(s.to_dict()))) == s
    assert 'recovery = "reno"' in s.to_toml() and "limited_transmit = true" in s.to_toml()


def test_cubic_round_trips_to_the_engine() -> None:
    """RFC 9438: "cubic" is a valid ``tcp.cc`` and reaches the engine as such."""
    s = Scenario.parse({"servers": 1, "tcp": {"cc": "cubic"}})
    assert (s.tcp.cc, s.tcp.recovery) == ("cubic", "newreno")
    assert canonical(s)["tcp"]["cc"] == "cubic"
    assert 'cc = "cubic"' in s.to_toml()


def test_bad_congestion_control_recovery_and_flag_are_one_line_errors() -> None:
    assert scenario_error({"servers": 1, "tcp": {"cc": "vegas"}}) == (
        "tcp.cc: must be \"reno\" or \"cubic\" or \"dctcp\" or \"bbr\", got 'vegas'"
    )
    assert scenario_error({"servers": 1, "tcp": {"recovery": "cubic"}}) == (
        "tcp.recovery: must be \"reno\" or \"newreno\" or \"sack\", got 'cubic'"
    )
    assert scenario_error({"servers": 1, "tcp": {"slow_start": "yes"}}) == (
        "tcp.slow_start: must be true or false, got 'yes'"
    )
    assert scenario_error({"servers": 1, "tcp": {"limited_transmit": 1}}) == (
        "tcp.limited_transmit: must be true or false, got 1"
    )


# -- retransmission timer (CMU09 §5, §3; Linux tcp_rtt_estimator) -------------


def test_rto_timer_fields_reach_the_engine_and_round_trip_toml(tmp_path: Path) -> None:
    s = Scenario(servers=4).with_overrides(
        {
            "tcp.rto_randomize": True,
            "tcp.rto_max_backoff": 6,
            "tcp.rto_scheduling_delay": "20us",
            "tcp.rto_flavor": "linux",
        }
    )
    tcp = canonical(s)["tcp"]
    assert (tcp["rto_randomize"], tcp["rto_max_backoff"], tcp["rto_scheduling_delay"], tcp["rto_flavor"]) == (
        True,
        6,
        "20us",
        "linux",
    )
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s
    assert "tcp.rto_flavor" in settings()
    assert "tcp.rto_flavor" in scenario_error({"servers": 2, "tcp": {"rto_flavor": "bsd"}})


# -- SACK, timestamps, spurious timeouts; Cubic and delayed-ACK sub-knobs ----


def test_loss_recovery_options_reach_the_engine_and_round_trip_toml(tmp_path: Path) -> None:
    s = Scenario(servers=4).with_overrides(
        {
            "tcp.cc": "cubic",
            "tcp.recovery": "sack",
            "tcp.timestamps": True,
            "tcp.timestamp_tick": "1us",
            "tcp.spurious_rto": "eifel",
            "tcp.cubic_beta": 0.5,
            "tcp.cubic_c": 0.8,
            "tcp.cubic_fast_convergence": False,
            "tcp.delayed_ack": "adaptive",
            "tcp.delayed_ack_adaptive_multiplier": 3,
            "tcp.delayed_ack_ato_max": "200ms",
        }
    )
    tcp = canonical(s)["tcp"]
    assert (tcp["recovery"], tcp["timestamps"], tcp["timestamp_tick"], tcp["spurious_rto"]) == (
        "sack",
        True,
        "1us",
        "eifel",
    )
    assert (tcp["cubic_beta"], tcp["cubic_c"], tcp["cubic_fast_convergence"]) == (0.5, 0.8, False)
    assert (tcp["delayed_ack_adaptive_multiplier"], tcp["delayed_ack_ato_max"]) == (3, "200ms")
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s
    assert json.loads(_core.run(s.with_overrides({"blocks": 2}).to_json())[0])["summary"]["blocks"] == 2


@pytest.mark.parametrize(
    ("tcp", "message"),
    [
        ({"sack": True}, 'tcp.sack: replaced by tcp.recovery = "sack" (SACK blocks and RFC 6675 recovery)'),
        (
            {"variant": "cubic"},
            "tcp.variant: replaced by tcp.cc (the congestion control: reno, cubic or dctcp) and tcp.recovery "
            "(the loss recovery: reno, newreno or sack)",
        ),
        ({"spurious_rto": "eifel"}, "tcp.spurious_rto: eifel needs the timestamps option (tcp.timestamps = true)"),
        ({"spurious_rto": "dsack"}, "tcp.spurious_rto: must be \"off\" or \"frto\" or \"eifel\", got 'dsack'"),
        ({"cubic_beta": 1.2}, "tcp.cubic_beta: must be a number between 0 and 1 (exclusive), got 1.2"),
        ({"cubic_c": 0}, "tcp.cubic_c: must be a positive number, got 0"),
        ({"timestamp_tick": "0"}, "tcp.timestamp_tick: must be positive (at least 1ps), got '0'"),
        (
            {"delayed_ack_ato_min": "1s"},
            "tcp.delayed_ack_ato_min: must not exceed tcp.delayed_ack_ato_max (500ms), got 1s",
        ),
    ],
)
def test_loss_recovery_options_bad_values_are_one_line_errors(tcp: dict[str, Any], message: str) -> None:
    assert scenario_error({"servers": 1, "tcp": tcp}).startswith(message)


def test_application_level_mitigations_reach_the_engine_and_round_trip_toml(tmp_path: Path) -> None:
    s = Scenario(servers=8).with_overrides({"workload.max_inflight": 3, "workload.stagger": "20us"})
    assert canonical(s)["workload"] == {
        "kind": "sync_read",
        "request": "100B",
        "order": "shuffled",
        "server_jitter": "10us",
        "max_inflight": 3,
        "stagger": "20us",
        "request_path": "link",
        "priority": 0,
        "clients": 1,
        "server_sets": "shared",
        "sru": "256KiB",
    }
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s
    assert Scenario(servers=8).with_overrides({"workload.max_inflight": "all"}).workload.max_inflight is None
    assert scenario_error({"servers": 1, "workload": {"max_inflight": 0}}).startswith("workload.max_inflight: must be")


def test_rude_flows_need_the_hosts_gate_and_round_trip_toml(tmp_path: Path) -> None:
    """RUDE §3.1: rude flows are refused unless the hosts allow them."""
    message = scenario_error({"servers": 1, "tcp": {"rude": True}})
    assert message.startswith("tcp.rude: refused: the hosts do not allow rude flows")
    s = Scenario(servers=2).with_overrides(
        {"tcp.rude_allowed": True, "tcp.rude": True, "tcp.rude_off_at": "50ms", "tcp.rude_off": "now",
         "switch.rude_policy": "drop"}
    )  # fmt: skip
    tcp = canonical(s)["tcp"]
    assert (tcp["rude"], tcp["rude_off_at"], tcp["rude_off"]) == (True, "50ms", "now")
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s


def test_several_clients_reach_the_engine_and_round_trip_toml(tmp_path: Path) -> None:
    s = Scenario(servers=8).with_overrides({"workload.clients": 4, "workload.server_sets": "disjoint"})
    workload = canonical(s)["workload"]
    assert (workload["clients"], workload["server_sets"]) == (4, "disjoint")
    assert s.describe().startswith("4 clients x 8 servers (disjoint), ")
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    assert Scenario.from_toml(path) == s


@pytest.mark.parametrize(
    ("workload", "servers", "message"),
    [
        ({"clients": 0}, 4, "workload.clients: must be a whole number of clients between 1 and 10000, got 0"),
        ({"server_sets": "some"}, 4, "workload.server_sets: "),
        ({"clients": 10_000}, 11, "workload.clients: 10000 clients × 11 servers is more than 100000 connections"),
    ],
)
def test_client_settings_are_checked_with_the_field_named(workload: dict[str, Any], servers: int, message: str) -> None:
    assert scenario_error({"servers": servers, "workload": workload}).startswith(message)


def test_overrides_are_a_mapping_or_pairs_applied_in_order() -> None:
    allowed = "a mapping of dotted settings to values, or \\(setting, value\\) pairs"
    with pytest.raises(ScenarioError, match=f"^overrides: must be {allowed}, got None$"):
        Scenario(servers=2).with_overrides(None)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match=f"^overrides: must be {allowed}, got \\['tcp.rto_min'\\]$"):
        Scenario(servers=2).with_overrides(["tcp.rto_min"])  # type: ignore[arg-type]
    pairs = [("tcp.rto_min", "5ms"), ("workload.block", "64KiB"), ("tcp.rto_min", "1ms")]
    s = Scenario(servers=2).with_overrides(pairs)
    assert (s.tcp.rto_min, s.workload.block, s.workload.sru) == (0.001, 65536, None), "in order, the last one winning"
