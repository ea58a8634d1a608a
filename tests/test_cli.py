"""The incast command: JSON output, human output, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from incast import Scenario
from incast.cli import main
from incast.cli.options import OPTION_FIELDS, setting_help
from incast.scenario import schema, settings

JSON_KEYS = {
    "goodput_mbps", "throughput_mbps", "best_goodput_mbps", "utilization", "blocks", "sim_time_s",
    "timeouts", "fast_retransmits", "retransmitted_packets", "drops", "block_time_ms", "events",
    "wall_s", "events_per_s", "scenario",
}  # fmt: skip
SMALL = ["--servers", "2", "--blocks", "2", "--sru", "64KiB"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    code, out, err = cli(capsys, "run", *args, "--json")
    assert (code, err) == (0, "")
    return [json.loads(line) for line in out.splitlines()]


# -- output -----------------------------------------------------------------------


def test_json_has_the_summary_and_the_resolved_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    [d] = run_json(capsys, *SMALL)
    assert set(d) >= JSON_KEYS
    assert set(d["block_time_ms"]) == {"p50", "p99", "max"}
    assert d["blocks"] == 2
    s = Scenario.parse(d["scenario"])
    assert (s.servers, s.blocks, s.workload.sru) == (2, 2, 65536)


def test_human_output_is_a_readable_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", *SMALL)
    assert (code, err) == (0, "")
    for word in ("goodput", "Mbps", "best achievable", "blocks", "p50", "p99", "max", "timeouts", "drops", "events/s"):
        assert word in out, word


def test_server_list_runs_once_per_value(capsys: pytest.CaptureFixture[str]) -> None:
    lines = run_json(capsys, "--servers", "1,2,3", "--blocks", "1", "--sru", "16KiB")
    assert [d["scenario"]["servers"] for d in lines] == [1, 2, 3]
    code, out, _ = cli(capsys, "run", "--servers", "1,3", "--blocks", "1", "--sru", "16KiB")
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == ["1", "3"]


def test_scenario_file_with_options_and_set_on_top(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text('servers = 3\nblocks = 1\n[workload]\nsru = "16KiB"\n[tcp]\nrto_min = "10ms"\n')
    [d] = run_json(capsys, str(path))
    assert (d["scenario"]["servers"], d["scenario"]["tcp"]["rto_min"]) == (3, 0.01)
    [d] = run_json(capsys, str(path), "--servers", "2", "--rto-min", "5ms", "--set", "tcp.rto_min=1ms")
    assert (d["scenario"]["servers"], d["scenario"]["tcp"]["rto_min"]) == (2, 0.001)


def test_set_reads_toml_values(capsys: pytest.CaptureFixture[str]) -> None:
    [d] = run_json(
        capsys, *SMALL, "--set", "tcp.rto_min=2ms", "--set", "workload.order=fixed",
        "--set", "switch.buffer=64pkt", "--set", "tcp.delayed_ack=off", "--set", "seed=7",
        "--set", "tcp.gip=333", "--set", "link.tx_queue=100",
    )  # fmt: skip
    s = d["scenario"]
    assert (s["tcp"]["rto_min"], s["workload"]["order"], s["switch"]["buffer"]) == (0.002, "fixed", "64pkt")
    assert (s["tcp"]["delayed_ack"], s["seed"]) == ("off", 7)
    # A choice spelled in digits reads as TOML's number and still names its choice.
    assert (s["tcp"]["gip"], s["link"]["tx_queue"]) == ("333", 100)


def test_named_options_reach_their_fields(capsys: pytest.CaptureFixture[str]) -> None:
    [d] = run_json(
        capsys, "--servers", "2", "--block", "64KiB", "--blocks", "1", "--duration", "2s", "--link", "10Gbps",
        "--rtt", "20us", "--buffer", "128KiB", "--mss", "1000", "--rto-min", "1ms", "--rto-max", "1s",
        "--clock-granularity", "1ms", "--delayed-ack", "off", "--init-cwnd", "2", "--seed", "5",
        "--request-order", "fixed",
    )  # fmt: skip
    assert Scenario.parse(d["scenario"]) == Scenario.parse(
        {
            "servers": 2, "blocks": 1, "duration": "2s", "seed": 5,
            "link": {"rate": "10Gbps", "rtt": "20us"}, "switch": {"buffer": "128KiB"},
            "tcp": {"mss": 1000, "rto_min": "1ms", "rto_max": "1s", "clock_granularity": "1ms",
                    "delayed_ack": "off", "init_cwnd": 2},
            "workload": {"block": "64KiB", "order": "fixed"},
        }
    )  # fmt: skip


def test_help_and_version_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "run", "--help")
    assert code == 0 and "--servers" in out and "--set" in out
    code, out, _ = cli(capsys, "--version")
    assert code == 0 and out.startswith("incast ") and "(engine 0." in out


# -- errors -----------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('servers = 2\n[link]\nspeed = "1Gbps"\n')
    malformed = tmp_path / "malformed.toml"
    malformed.write_text("servers = = 2\n")
    return {"unknown": str(unknown), "malformed": str(malformed), "missing": str(tmp_path / "missing.toml")}


def test_tcp_recovery_and_flags_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    [d] = run_json(
        capsys, *SMALL, "--recovery", "reno", "--set", "tcp.limited_transmit=true", "--set", "tcp.slow_start=false",
        "--set", "tcp.restart_after_idle=false",
    )  # fmt: skip
    tcp = d["scenario"]["tcp"]
    assert (tcp["recovery"], tcp["limited_transmit"], tcp["slow_start"], tcp["restart_after_idle"]) == (
        "reno",
        True,
        False,
        False,
    )
    [d] = run_json(capsys, *SMALL)
    assert (d["scenario"]["tcp"]["cc"], d["scenario"]["tcp"]["recovery"]) == ("reno", "newreno")
    [d] = run_json(capsys, *SMALL, "--tcp", "cubic")
    assert (d["scenario"]["tcp"]["cc"], d["scenario"]["tcp"]["recovery"]) == ("cubic", "newreno")


def test_tcp_names_the_congestion_control_and_leaves_the_presets_recovery(capsys: pytest.CaptureFixture[str]) -> None:
    """As Linux's tcp_congestion_control: --preset linux --tcp reno is Reno growth on SACK with RACK."""
    [d] = run_json(capsys, *SMALL, "--preset", "linux", "--tcp", "reno")
    tcp = d["scenario"]["tcp"]
    assert (tcp["cc"], tcp["recovery"], tcp["rack_tlp"]) == ("reno", "sack", True)
    # The old variants' names keep what they ran: Reno's window rules on that recovery.
    [d] = run_json(capsys, *SMALL, "--preset", "linux", "--tcp", "newreno")
    assert (d["scenario"]["tcp"]["cc"], d["scenario"]["tcp"]["recovery"]) == ("reno", "newreno")
    [d] = run_json(capsys, *SMALL, "--tcp", "sack", "--recovery", "reno")
    assert (d["scenario"]["tcp"]["cc"], d["scenario"]["tcp"]["recovery"]) == ("reno", "reno")


BAD_INPUTS = [
    (
        ["--servers", "2", "--rtt", "100xs"],
        "error: link.rtt: '100xs' is not a duration: use a number with one of ps, ns, us",
    ),
    (["--servers", "2", "--rtt", "100"], "error: link.rtt: '100' needs a unit"),
    (["--servers", "2", "--link", "-1Gbps"], "error: link.rate: '-1Gbps' is not a rate: it must not be negative"),
    (["--servers", "2", "--link=0bps"], "error: link.rate: must be a positive rate"),
    (
        ["--servers", "2", "--buffer", "1000B"],
        "error: switch.buffer: 1000 bytes cannot hold one full frame (1518 bytes for MSS 1460)",
    ),
    (
        ["--servers", "0"],
        "error: servers: 0 runs no reads and nothing else runs: "
        "give traffic.load, traffic.query_rate or background flows",
    ),
    # Runs past 2^64 ps (about 213 days) of simulated time stop with one line (issue: wrong results).
    (
        ["--servers", "4", "--blocks", "5", "--link", "1bps", "--rto-max", "1000s"],
        "error: scenario: the run needs more than 2^64 ps",
    ),
    (["--servers", "2", "--set", "tcp.rto_min=1"], 'error: tcp.rto_min: 1 needs a unit, e.g. "1s" or "200ms"'),
    (
        ["--servers", "2", "--set", "tcp.rto_min=-0.0", "--set", "tcp.rto_max=-0.0"],
        "error: tcp.rto_max: must be positive (at least 1ps), got -0.0",
    ),
    (["--servers", "2", "--rto-max", "1ps", "--rto-min", "0"], "error: tcp.rto_max: 1ps is shorter than the 672ns"),
    (["--servers", "100", "--blocks", "2", "--stagger", "1e6s"], "error: scenario: the run needs more than 2^64 ps"),
    (["--servers", "4", "--blocks", "2", "--wan", "1e7s"], "error: scenario: the run needs more than 2^64 ps"),
    (["--servers", "4", "--background", "udp:2Gbps"], "error: background.udp_rate: must not exceed link.rate (1Gbps)"),
    (["--servers", "4", "--set", "trace.goodput_bin=1ps"], "error: trace.goodput_bin: 1ps makes 1000000000000 bins"),
    (["--servers", "abc"], "error: servers: 'abc' is not a whole number; give a count like 16 or a list like 1,4,16"),
    (["--servers", "1,,4"], "error: servers: '' is not a whole number"),
    (["--servers", "2", "--blocks", "abc"], "error: blocks: 'abc' is not a whole number of blocks"),
    (["--servers", "2", "--mss", "1.5"], "error: tcp.mss: '1.5' is not a whole number of bytes between 1 and 65495"),
    (["--servers", "2", "--request-order", "random"], 'error: workload.order: must be "shuffled" or "fixed"'),
    (
        ["--servers", "2", "--delayed-ack", "fast"],
        'error: tcp.delayed_ack: must be a positive duration (e.g. "40ms"), "off" (ACK every segment), "linux" or '
        "\"adaptive\"; 'fast'",
    ),
    (
        ["--servers", "2", "--delayed-ack", "0"],
        'error: tcp.delayed_ack: must be a positive duration (e.g. "40ms"), "off" (ACK every segment), "linux" or '
        "\"adaptive\"; got '0'",
    ),
    (
        ["--servers", "2", "--tcp", "vegas"],
        'error: tcp.cc: must be "reno" or "cubic" or "dctcp" or "bbr", got \'vegas\'',
    ),
    (
        ["--servers", "2", "--set", "tcp.limited_transmit=maybe"],
        "error: tcp.limited_transmit: must be true or false, got 'maybe'",
    ),
    (["--servers", "2", "--sru", "1KiB", "--block", "1MiB"], "error: workload: give --sru"),
    (["--servers", "2", "--set", "tcp.rto_mn=1ms"], "error: tcp.rto_mn: unknown setting; did you mean rto_min?"),
    (["--servers", "2", "--set", "tcp.xyzzy=1ms"], "error: tcp.xyzzy: unknown setting; [tcp] has mss, init_cwnd"),
    (["--servers", "2", "--set", "nonsense"], "error: --set: 'nonsense' is not KEY=VALUE"),
    (["--servers", "2", "--set", "link.rate=inf"], "error: link.rate: inf is not a finite number"),
    (["--servers", "2", "--frobnicate"], "error: --frobnicate: no such option; see 'incast run --help'"),
    (["--servers"], "error: --servers: requires an argument"),
    (["--blocks", "2"], "error: servers: required; a whole number of servers between 0 and 100000"),
    (
        ["--servers", "32", "--duration", "2s", "--tcp", "dctcp"],
        'error: tcp.cc: "dctcp" needs ECN marks: set switch.ecn_threshold ("dctcp" is the DCTCP paper\'s K',
    ),
    (["{unknown}"], "error: link.speed: unknown setting; [link] has rate, rtt"),
    (["{malformed}"], "error: {malformed}: not valid TOML: "),
    (["{missing}"], "error: {missing}: no such file or directory"),
]


def test_dctcp_runs_with_the_papers_k_for_the_link_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """DCTCP is DCTCP: the switch marks, and --ecn-threshold dctcp follows the link rate."""
    [d] = run_json(capsys, "--servers", "8", "--blocks", "3", "--tcp", "dctcp", "--ecn-threshold", "dctcp")
    assert d["ecn_marks"] > 0 and d["scenario"]["switch"]["ecn_threshold"] == "20pkt"


@pytest.mark.parametrize(("args", "expected"), BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_prints_one_line_and_exits_2(
    args: list[str], expected: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "run", *[a.format(**files) for a in args])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(expected.format(**files)), err


def test_a_panic_in_the_engine_is_one_line_and_a_nonzero_exit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from incast import _core

    def panics(scenario_json: str) -> str:
        _core.panic_for_test("a float's digits")
        return scenario_json

    monkeypatch.setattr(_core, "resolve_json", panics)
    code, out, err = cli(capsys, "run", "--servers", "2", "--blocks", "1")
    assert (code, out) == (1, "")
    assert err.startswith("error: engine: internal error: a float's digits (at crates/incast-py/src/lib.rs:"), err
    assert err.count("\n") == 1, err


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "rnu")
    assert (code, out) == (2, "")
    assert err.startswith("error: rnu: no such command") and err.endswith("; see 'incast --help'\n")
    assert err.count("\n") == 1
    code, out, err = cli(capsys, "xyzzy")
    assert (code, out, err) == (2, "", "error: xyzzy: no such command; see 'incast --help'\n")


def test_console_script_prints_no_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    proc = subprocess.run(
        [sys.executable, "-m", "incast", "run", "--servers", "abc"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "error: servers: 'abc' is not a whole number; give a count like 16 or a list like 1,4,16"
    ]


def test_settings_lists_every_setting_from_the_engine_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["name"] for r in rows] == settings()
    rto_min = next(r for r in rows if r["name"] == "tcp.rto_min")
    assert (rto_min["kind"], rto_min["default"]) == ("duration", "200ms")
    assert main(["settings", "rto_m"]) == 0
    out = capsys.readouterr().out
    assert "tcp.rto_min" in out and "tcp.rto_max" in out and "link.rate" not in out
    assert main(["settings", "nothing-like-this"]) == 2
    assert capsys.readouterr().err.startswith("error: settings: no setting's name contains 'nothing-like-this'")


def test_named_options_take_their_help_from_the_setting_they_stand_for(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI restates no doc: --rto-min's help is the engine's doc line of tcp.rto_min."""
    doc = next(s["doc"] for s in schema() if s["name"] == "tcp.rto_min")
    assert setting_help("tcp.rto_min") == f"{doc.split('. ')[0].rstrip('.')}. [tcp.rto_min]"
    for flag, name in OPTION_FIELDS.items():
        assert name in settings(), f"--{flag} stands for {name}, which the engine does not have"


def test_a_servers_file_that_is_not_utf8_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_bytes(b"\xff\xfe")
    code, out, err = cli(capsys, "read", "--servers-file", str(tmp_path / "f"))
    assert (code, out) == (2, "")
    assert err.startswith("error: servers_file: ") and "is not UTF-8 text" in err and err.count("\n") == 1


#: Never imported by ``incast --help`` or a verb's ``--help``: the table, plot and cluster
#: libraries, and the incast modules a verb imports only when it runs.
NOT_AT_START = (
    "pandas", "pyarrow", "matplotlib", "dask", "numpy", "rich",
    "incast.result", "incast.presets", "incast.topology", "incast.labels", "incast.experiment",
    "incast.sweep", "incast.report", "incast.plots", "incast.testbed", "incast.reference.ns2",
)  # fmt: skip


def test_the_command_line_starts_without_pandas_pyarrow_or_matplotlib() -> None:
    """``incast --help`` and every verb's ``--help`` import no table, plot or cluster library
    and none of the simulator, testbed or experiment code: a verb imports what it needs when
    it runs. ``import incast`` alone loads neither the result nor the scenario code."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys\n"
        "import incast\n"
        "print(' '.join(m for m in ('incast.result', 'incast.scenario') if m in sys.modules))\n"
        "from incast.cli import app, main\n"
        "verbs = [[], *([c.name] for c in app.registered_commands)]\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    codes = {main([*verb, '--help']) for verb in verbs}\n"
        "assert out.getvalue().count('Usage: incast') == len(verbs) > 10, out.getvalue()\n"
        f"print(codes, ' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == ["", "{0} "]


def test_a_run_read_for_its_summary_builds_no_table() -> None:
    """``incast run --json`` and a caller reading only the summary never import pandas: the
    tables are built when first read, and then hold the engine's rows."""
    import subprocess
    import sys

    code = (
        "import sys, incast\n"
        "r = incast.run(servers=4, blocks=3, tcp={'rto_min': '200us'})\n"
        "before = 'pandas' in sys.modules\n"
        "t = r.timeouts_table\n"
        "print(before, 'pandas' in sys.modules, len(t) == r.timeouts, len(r.flows), r.clients['blocks'].sum())"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "True", "True", "4", "3"]


def test_a_run_above_the_memory_budget_is_refused_in_one_line_before_it_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """100,000 servers need about 1.3 GiB: refused under a 1 GiB budget, naming
    servers and the parts; ``--set memory_budget`` raises the budget."""
    code = main(["run", "--servers", "100000", "--blocks", "1", "--set", "memory_budget=1GiB"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: servers: the run would need about 1.3 GiB of memory (endpoints "), err
    assert "above memory_budget (1GiB)" in err


def test_a_slow_links_goodput_reads_in_kbps_not_as_zero_mbps(capsys: pytest.CaptureFixture[str]) -> None:
    from incast.cli.output import rate

    assert main(["run", "--link", "50Kbps", "--servers", "1", "--blocks", "1"]) == 0
    out = capsys.readouterr().out
    assert "0.0 Mbps" not in out and " kbps = " in out and "best achievable 47.5 kbps" in out
    assert [rate(x) for x in (949.3, 0.0422, 0.0000425, 0.0)] == ["949.3 Mbps", "42.2 kbps", "42.5 bit/s", "0.0 Mbps"]
