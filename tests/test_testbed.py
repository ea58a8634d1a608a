"""The namespace testbed on the real Linux stack: incast.testbed, incast testbed, incast validate.

The first tests need nothing special: how a scenario becomes qdiscs, sysctls
and route options, what is refused, the kernel's tick. The others build real
namespaces and need root; they are skipped, with that reason, for anyone
else (CI runs them as root). Each checks afterwards that nothing with the
run's prefix is left: no namespace, no veth, no bridge, no process.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from incast import Scenario, testbed
from incast.cli import main
from incast.errors import ScenarioError
from incast.presets import LINUX_STACK
from incast.reference.base import refusals
from incast.reference.testbed import host_cost, simulator_overrides
from incast.result import BlockTimes
from incast.result import run as incast_run
from incast.testbed import KernelClock, delay, plan
from incast.testbed.emulation import PortCheck, port_check
from incast.testbed.netns import NAMESPACE_PREFIX, Shaping, alive, every_cpu_mask, namespaces, owner, run_of
from incast.testbed.plan import bucket_bytes, rules
from incast.testbed.run import kernel_rtt

from conftest import default_sigint

#: This machine's kind: HZ=250, and the congestion controls it offers.
HZ250 = KernelClock(250, "test")
CONGESTION = ["reno", "bbr", "cubic"]
#: The quick case CI runs: 4 servers at 100 Mbps, a few blocks.
SMALL = ["--servers", "4", "--link", "100Mbps", "--sru", "32KiB", "--blocks", "8"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the testbed builds network namespaces: needs root")


def scenario(**fields: Any) -> Scenario:
    return Scenario.parse({"servers": 8, "blocks": 10}, fields)


def cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command in-process; its exit status, standard output and standard error."""
    capfd.readouterr()
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def host_links() -> list[str]:
    """Interfaces in this machine's own namespace that carry a testbed name (``ic<id>-...``)."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines()]
    return [name for name in names if re.fullmatch(r"ic[0-9a-f]{6}-.*", name)]


@pytest.fixture
def clean() -> Iterator[None]:
    """The test must leave no testbed namespace of its own (runs of other live processes are not its business)."""
    before = set(namespaces())
    yield
    left = [ns for ns in set(namespaces()) - before if owner(run_of(ns)) in (None, os.getpid())]
    assert left == []
    assert host_links() == []


# ---------------------------------------------------------------------------
# From a scenario to settings (no root needed).


def test_rto_min_goes_to_the_sysctl_in_microseconds_and_to_the_route_in_milliseconds() -> None:
    p = plan(scenario(tcp={"rto_min": "1ms"}), HZ250, CONGESTION)
    assert p.sysctls["net.ipv4.tcp_rto_min_us"] == "1000"
    assert p.routes[p.routes.index("rto_min") + 1] == "1ms"


def test_a_sub_millisecond_rto_min_is_left_to_the_sysctl() -> None:
    p = plan(scenario(tcp={"rto_min": "200us"}), HZ250, CONGESTION)
    assert p.sysctls["net.ipv4.tcp_rto_min_us"] == "200"
    assert "rto_min" not in p.routes
    assert p.rto_floor_s == pytest.approx(0.004)  # one 4 ms tick


def test_the_jiffy_floors_every_rto() -> None:
    assert HZ250.rto_floor_s(0.0002) == pytest.approx(0.004)
    assert HZ250.rto_floor_s(0.001) == pytest.approx(0.004)
    assert HZ250.rto_floor_s(0.005) == pytest.approx(0.008)
    assert HZ250.rto_floor_s(0.2) == pytest.approx(0.2)
    assert KernelClock(1000, "test").rto_floor_s(0.001) == pytest.approx(0.001)


def test_delayed_ack_off_is_quickack_on_the_route_and_on_the_client_socket() -> None:
    p = plan(scenario(tcp={"delayed_ack": "off"}), HZ250, CONGESTION)
    assert p.routes[p.routes.index("quickack") + 1] == "1"
    assert p.read_options[p.read_options.index("--delayed-ack") + 1] == "off"


def test_the_default_delayed_ack_is_linux_s_own_with_a_note() -> None:
    p = plan(scenario(), HZ250, CONGESTION)
    assert "quickack" not in p.routes
    assert any(n.startswith("tcp.delayed_ack:") for n in p.notes)


@pytest.mark.parametrize(
    ("tcp", "sack", "congestion"),
    [
        ({}, "0", "reno"),
        ({"recovery": "reno"}, "0", "reno"),
        ({"recovery": "sack"}, "1", "reno"),
        ({"cc": "cubic"}, "0", "cubic"),
        ({"cc": "cubic", "recovery": "sack"}, "1", "cubic"),
    ],
)
def test_the_congestion_control_is_set_per_socket_and_sack_recovery_is_tcp_sack(
    tcp: dict[str, str], sack: str, congestion: str
) -> None:
    p = plan(scenario(tcp=tcp), HZ250, CONGESTION)
    assert p.congestion == congestion
    assert "net.ipv4.tcp_congestion_control" not in p.sysctls, "set per socket: a namespace default needs it allowed"
    assert p.sysctls["net.ipv4.tcp_sack"] == sack
    assert p.read_options[p.read_options.index("--congestion") + 1] == congestion
    assert p.serve_options[p.serve_options.index("--congestion") + 1] == congestion


@pytest.mark.parametrize(("rack_tlp", "recovery", "early_retrans"), [(True, "1", "3"), (False, "0", "0")])
def test_rack_tlp_is_the_kernels_tcp_recovery_and_tcp_early_retrans(
    rack_tlp: bool, recovery: str, early_retrans: str
) -> None:
    """The linux presets differ here: today's kernel runs RACK-TLP, 2.6.28 had neither."""
    p = plan(scenario(tcp={"recovery": "sack", "rack_tlp": rack_tlp}), HZ250, CONGESTION)
    assert (p.sysctls["net.ipv4.tcp_recovery"], p.sysctls["net.ipv4.tcp_early_retrans"]) == (recovery, early_retrans)


@pytest.mark.parametrize(("rcv_window", "moderate"), [("linux", "1"), ("fixed", "0")])
def test_the_receive_window_is_the_kernels_tcp_rmem_and_autotuning(rcv_window: str, moderate: str) -> None:
    """The kernel offers half its buffer as window: 48 KiB of window is a 96 KiB tcp_rmem default."""
    tcp = {"rcv_wnd": "48KiB", "rcv_buf_max": "4MiB", "rcv_window": rcv_window}
    p = plan(scenario(tcp=tcp), HZ250, CONGESTION)
    assert p.sysctls["net.ipv4.tcp_rmem"] == "4096 98304 4194304"
    assert p.sysctls["net.ipv4.tcp_moderate_rcvbuf"] == moderate
    assert not any(n.startswith("tcp.rcv_wnd") for n in p.notes)


def test_a_congestion_control_the_kernel_lacks_is_a_one_line_error() -> None:
    offered = r"^tcp.cc: one this kernel offers \(reno, bbr, cubic\), not dctcp \(testbed\)$"
    with pytest.raises(ScenarioError, match=offered):
        plan(scenario(tcp={"cc": "dctcp"}, switch={"ecn_threshold": "20pkt"}), HZ250, CONGESTION)


def test_the_buffer_is_the_client_port_limit_and_a_packet_count_is_converted_with_a_note() -> None:
    assert plan(scenario(switch={"buffer": "32KiB"}), HZ250, CONGESTION).shaping.buffer == 32768
    p = plan(scenario(switch={"buffer": "20pkt"}), HZ250, CONGESTION)
    assert p.shaping.buffer == 20 * 1514
    assert any(n.startswith("switch.buffer: 20pkt") for n in p.notes)


def test_the_mss_sets_every_mtu_and_the_best_goodput() -> None:
    p = plan(scenario(tcp={"mss": 1000}, link={"rate": "1Gbps"}), HZ250, CONGESTION)
    assert p.shaping.mtu == 1040
    assert p.best_goodput_mbps == pytest.approx(1000 * 1000 / 1078)


def test_the_simulator_s_best_goodput_is_the_testbed_s() -> None:
    p = plan(scenario(link={"rate": "1Gbps"}), HZ250, CONGESTION)
    assert p.best_goodput_mbps == pytest.approx(949.2847854, rel=1e-9)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"switch": {"ecn_threshold": "20pkt"}}, "switch.ecn_threshold"),
        ({"tcp": {"gip": "333"}}, "tcp.gip"),
        ({"tcp": {"delayed_ack": "200us"}}, "tcp.delayed_ack"),
        ({"tcp": {"delayed_ack": "adaptive"}}, "tcp.delayed_ack"),
        ({"tcp": {"rto_initial": "3s"}}, "tcp.rto_initial"),
        ({"tcp": {"rto_randomize": True}}, "tcp.rto_randomize"),
        ({"tcp": {"slow_start": False}}, "tcp.slow_start"),
        ({"tcp": {"rto_max": "500ms"}}, "tcp.rto_max"),
        ({"trace": {"queue": True}}, "trace.queue"),
        ({"servers": 251}, "servers"),
        ({"link": {"rate": "7bps"}}, "link.rate"),
    ],
)
def test_what_the_kernel_cannot_run_is_refused_naming_the_field(fields: dict[str, Any], field: str) -> None:
    assert refusals(rules(scenario(**fields), CONGESTION))[0].setting == field
    with pytest.raises(ScenarioError) as e:
        plan(scenario(**fields), HZ250, CONGESTION)
    assert str(e.value).startswith(f"{field}: ")
    assert "\n" not in str(e.value)


def test_settings_that_match_linux_leave_only_the_rtt_note() -> None:
    linux = {"clock_granularity": "4ms", "rto_flavor": "linux", "delayed_ack": "linux", "limited_transmit": True}
    linux |= {"rtt_resolution": "us", "prr": True, "prr_flavor": "linux", "idle_restart": "linux"}
    linux |= {"clock_wheel": "linux", "recovery_exit": "ssthresh", "rto_restart": "head_retransmit"}
    linux |= {"cwnd_validation": "linux"}
    assert [n.split(":")[0] for n in plan(scenario(tcp=linux), HZ250, CONGESTION).notes] == ["link.rtt"]
    jiffy_samples = plan(scenario(tcp={**linux, "rtt_resolution": "clock"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in jiffy_samples] == ["link.rtt", "tcp.rtt_resolution"]
    tick_timers = plan(scenario(tcp={**linux, "clock_wheel": "tick"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in tick_timers] == ["link.rtt", "tcp.clock_wheel"]
    jitter = plan(scenario(tcp=linux, link={"host_jitter": "30us"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in jitter] == ["link.rtt", "link.host_jitter"]
    skew = plan(scenario(tcp=linux, link={"skew": "1ns"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in skew] == ["link.rtt", "link.skew"]
    bucket = plan(scenario(tcp=linux, link={"token_bucket": "64KiB"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in bucket] == ["link.rtt", "link.token_bucket"]
    own = f"{bucket_bytes(scenario())}B"
    same = plan(scenario(tcp=linux, link={"token_bucket": own}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in same] == ["link.rtt"], "the testbed's own depth is not noted"
    rfc_restart = plan(scenario(tcp={**linux, "idle_restart": "rfc5681"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in rfc_restart] == ["link.rtt", "tcp.idle_restart"]
    rfc_prr = plan(scenario(tcp={**linux, "prr_flavor": "rfc6937"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in rfc_prr] == ["link.rtt", "tcp.prr_flavor"]
    rfc_sack = plan(scenario(tcp={**linux, "recovery": "sack"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in rfc_sack] == ["link.rtt", "tcp.sack_recovery"]
    linux_sack = plan(scenario(tcp={**linux, "recovery": "sack", "sack_recovery": "linux"}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in linux_sack] == ["link.rtt"]
    cubic = {**linux, "cc": "cubic"}
    no_hystart = plan(scenario(tcp=cubic), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in no_hystart] == ["link.rtt", "tcp.cubic_hystart", "tcp.cubic_flavor"]
    with_hystart = plan(scenario(tcp={**cubic, "cubic_hystart": True}), HZ250, CONGESTION).notes
    assert [n.split(":")[0] for n in with_hystart] == ["link.rtt", "tcp.cubic_flavor"]
    kernel_cubic = plan(scenario(tcp={**cubic, "cubic_hystart": True, "cubic_flavor": "linux"}), HZ250, CONGESTION)
    assert [n.split(":")[0] for n in kernel_cubic.notes] == ["link.rtt"]


def test_the_kernel_hz_read_from_its_configuration_is_the_one_measured() -> None:
    from incast.testbed.kernel import _measure_hz

    assert testbed.clock().hz == _measure_hz()


def test_without_root_the_testbed_is_a_one_line_error_with_status_2(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    for verb in ("testbed", "validate"):
        code, out, err = cli(capfd, verb, *SMALL)
        assert (code, out) == (2, "")
        assert err == "error: testbed: needs root (network namespaces, veths, a bridge and qdiscs); run as root\n"


# ---------------------------------------------------------------------------
# Real runs (root).


def test_the_servers_kernel_rtt_is_weighted_by_the_requests_each_sampled_and_the_least_min_rtt_kept() -> None:
    lines = [
        "shutdown: 1 connections, ...; kernel RTT 1000 us, RTTVAR 400 us and RTO 5000 us on average (RTO at most "
        "8000 us, min_rtt at least 31 us) over 3 requests after a connection's first",
        "shutdown: 1 connections, ...; kernel RTT 3000 us, RTTVAR 800 us and RTO 9000 us on average (RTO at most "
        "12000 us, min_rtt at least 27 us) over 1 requests after a connection's first",
        "",
    ]
    assert kernel_rtt(lines) == {
        "requests": 4,
        "rtt_ms": 1.5,
        "rttvar_ms": 0.5,
        "rto_ms": 6.0,
        "rto_max_ms": 12.0,
        "min_rtt_ms": 0.027,
    }
    assert kernel_rtt(["error: a server that never answered", ""]) is None


@needs_root
def test_a_small_incast_runs_on_the_kernel_and_leaves_nothing_behind(
    capfd: pytest.CaptureFixture[str], clean: None
) -> None:
    code, out, err = cli(capfd, "testbed", *SMALL, "--rto-min", "1ms", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["source"], d["status"], d["blocks"]) == ("testbed", "complete", 8)
    assert d["bytes_delivered"] == 8 * 4 * 32 * 1024
    assert 0 < d["goodput_mbps"] < d["best_goodput_mbps"]
    assert d["kernel"]["hz"] == testbed.clock().hz
    assert d["kernel"]["rto_floor_s"] == pytest.approx(max(0.001, 1 / d["kernel"]["hz"]))
    assert d["port"]["bytes"] <= d["port"]["frames"] * 1514  # MTU-sized frames at the switch port
    assert d["timeouts"] == sum(d["timeouts_per_server"])
    assert len(d["read"]["connections"]) == 4
    assert err.startswith("note: link.rtt: ")
    # Each server's kernel RTT and RTO as blocks 2-8 were asked for: 7 requests of 4 servers.
    rtt = d["server_rtt"]
    assert rtt["requests"] == 7 * 4
    assert 0 < rtt["rtt_ms"] < rtt["rto_ms"] <= rtt["rto_max_ms"]
    assert rtt["rto_ms"] >= d["kernel"]["rto_floor_s"] * 1000


@needs_root
def test_cubic_runs_although_the_kernel_does_not_allow_it_as_a_namespace_default(
    capfd: pytest.CaptureFixture[str], clean: None
) -> None:
    """Set per socket (TCP_CONGESTION), not as the namespace default that
    tcp_allowed_congestion_control restricts: this kernel allows only reno and bbr."""
    code, out, err = cli(capfd, "testbed", *SMALL, "--tcp", "cubic", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["status"], d["blocks"], d["kernel"]["congestion"]) == ("complete", 8, "cubic")


@needs_root
def test_a_field_the_kernel_cannot_run_stops_the_command_before_anything_is_built(
    capfd: pytest.CaptureFixture[str], clean: None
) -> None:
    code, out, err = cli(capfd, "testbed", *SMALL, "--tcp", "dctcp", "--set", "switch.ecn_threshold=20pkt")
    assert (code, out) == (2, "")
    assert err.startswith("error: tcp.cc: one this kernel offers (") and "), not dctcp (testbed)" in err
    assert err.count("\n") == 1


def test_the_shaper_keeps_tokens_for_a_timer_that_fires_late() -> None:
    """tbf waits for a frame's tokens on a timer and loses what its bucket cannot hold, so with a
    bucket of one frame every microsecond a timer fires late is lost to the line. The bucket holds a
    frame and 100 µs of the line (the live rate is not asserted here: a loaded machine's timers are
    later still)."""
    frame = 1500 + 14 + 64
    assert Shaping(rate=200_000_000, buffer=48 * 1024, mtu=1500).burst == frame + 2_500
    assert Shaping(rate=1_000_000_000, buffer=48 * 1024, mtu=1500).burst == frame + 12_500


def test_every_veth_steers_its_flows_over_every_cpu() -> None:
    """The RPS mask each namespace gives its new veths: every CPU, in sysfs's comma-separated 32-bit words."""
    assert [every_cpu_mask(n) for n in (1, 2, 32, 33, 40)] == ["1", "3", "ffffffff", "1,ffffffff", "ff,ffffffff"]


def test_link_loss_is_the_engine_s_setting_in_parts_per_billion() -> None:
    assert plan(scenario(link={"loss": 0.01}), HZ250, CONGESTION).shaping.loss_ppb == 10_000_000
    assert plan(scenario(), HZ250, CONGESTION).shaping.loss_ppb == 0


def test_sender_side_loss_is_the_engine_s_setting_in_parts_per_billion() -> None:
    assert plan(scenario(tcp={"send_loss": 0.02}), HZ250, CONGESTION).shaping.send_loss_ppb == 20_000_000
    assert plan(scenario(), HZ250, CONGESTION).shaping.send_loss_ppb == 0


def test_link_loss_without_nft_is_refused_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "nft" else real_which(name))
    plan(scenario(), HZ250, CONGESTION)  # no loss, no nft needed
    with pytest.raises(ScenarioError, match=r"^link.loss: 0 only without nft: .*nftables\) \(testbed\)$"):
        plan(scenario(link={"loss": 0.01}), HZ250, CONGESTION)


def test_a_round_trip_longer_than_the_simulator_s_by_more_than_the_buffer_says_the_port_was_not_emulated() -> None:
    """32 KiB at 1 Gbps hold a frame at most 0.26 ms: a kernel SRTT 1.86 ms over the simulator's says
    the frames waited where the model has no queue; 0.1 ms over it is within the buffer."""
    slow = PortCheck(
        1_000_000_000, 32 * 1024, kernel_srtt_ms=3.51, model_srtt_ms=1.65, kernel_drops=0, model_drops=4164
    )
    assert slow.allowed_ms == pytest.approx(0.262144)
    assert slow.emulated is False
    assert slow.line() == (
        "testbed: this machine did not emulate a 1Gbps port: the servers' kernel SRTT averaged 3.51 ms "
        "against the simulator's 1.65 ms, 1.86 ms more where a 32KiB buffer at 1Gbps queues a frame at most "
        "0.26 ms, and its port dropped 0 frames against the simulator's 4,164 (the frames waited in front of "
        "the port, not in it)"
    )
    measured = {"shaping": {"rate_bps": 10**9, "buffer_bytes": 32 * 1024}, "server_srtt_ms": 3.51, "drops": 0}
    assert port_check(measured, {"server_srtt_ms": 1.65, "drops": 4164}) == slow
    faithful = PortCheck(10**9, 32 * 1024, kernel_srtt_ms=1.75, model_srtt_ms=1.65, kernel_drops=3000, model_drops=4164)
    assert faithful.line() is None
    assert (
        PortCheck(10**9, 32 * 1024, kernel_srtt_ms=None, model_srtt_ms=1.65, kernel_drops=0, model_drops=9).emulated
        is None
    )


def test_a_port_that_drops_under_a_tenth_of_the_simulator_s_drops_was_not_emulated() -> None:
    """The simulator's SRTT grows with its timeouts (2.36 ms at 8 servers and 32 KiB), so a kernel's
    2.59 ms passes the round trip; its port's 7 drops against 3,872 do not."""
    check = PortCheck(10**9, 32 * 1024, kernel_srtt_ms=2.59, model_srtt_ms=2.36, kernel_drops=7, model_drops=3872)
    assert check.emulated is False
    assert PortCheck(10**9, 32 * 1024, kernel_srtt_ms=2.59, model_srtt_ms=2.36, kernel_drops=0, model_drops=0).emulated


class _SlowMachine:
    """What a testbed run returns on a machine whose cores cannot keep up: a 50 ms round trip."""

    status, error, blocks = "complete", None, 2

    def to_dict(self) -> dict[str, Any]:
        return {"shaping": {"rate_bps": 10**9, "buffer_bytes": 32 * 1024}, "server_srtt_ms": 50.0, "drops": 0}


def test_incast_testbed_says_in_one_line_when_the_port_was_not_emulated(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(testbed, "require_privileges", lambda: None)
    monkeypatch.setattr(testbed, "run", lambda scenario, timeout, **_: _SlowMachine())
    code, out, err = cli(capfd, "testbed", "--servers", "4", "--link", "1Gbps", "--blocks", "2", "--json")
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "warning: testbed: this machine did not emulate a 1Gbps port: the servers' kernel SRTT averaged 50.00 ms "
        "against the simulator's "
    )
    assert json.loads(out)["port_check"]["emulated"] is False


def test_a_round_trip_of_a_millisecond_or_more_is_a_delay_line_and_a_shorter_one_is_noted() -> None:
    assert plan(scenario(link={"rtt": "100ms"}), HZ250, CONGESTION).shaping.delay_s == pytest.approx(0.1)
    assert plan(scenario(link={"rtt": "1ms"}), HZ250, CONGESTION).shaping.delay_s == pytest.approx(1e-3)
    short = plan(scenario(link={"rtt": "999us"}), HZ250, CONGESTION)
    assert short.shaping.delay_s == 0
    assert short.notes[0].startswith("link.rtt: 999us is not applied: the RTT is what the veths give")
    assert plan(scenario(link={"rtt": "20ms"}), HZ250, CONGESTION).notes[0].startswith(
        "link.rtt: a delay line holds every TCP segment into the client for 20ms"
    )


def test_pacing_is_noted_where_the_kernel_would_not_pace() -> None:
    """The kernel paces BBR by itself (internal pacing) and nothing else without fq: a paced Reno is noted, BBR not."""
    assert "tcp.pacing" in [n.split(":")[0] for n in plan(scenario(tcp={"pacing": True}), HZ250, CONGESTION).notes]
    for tcp in ({"cc": "bbr"}, {"cc": "bbr", "pacing": True}, {}):
        assert "tcp.pacing" not in [n.split(":")[0] for n in plan(scenario(tcp=tcp), HZ250, CONGESTION).notes]


def test_a_delay_line_without_iptables_is_refused_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "iptables-nft" else real_which(name))
    plan(scenario(), HZ250, CONGESTION)  # 100 us: no delay line, no iptables needed
    refused = r"^link.rtt: below 1ms only without iptables-nft: .*iptables\) \(testbed\)$"
    with pytest.raises(ScenarioError, match=refused):
        plan(scenario(link={"rtt": "10ms"}), HZ250, CONGESTION)


def test_the_delay_line_reads_each_queued_segments_id_and_frees_every_one_up_to_an_id_in_one_verdict() -> None:
    """Two NFQNL_MSG_PACKET messages in one read, each with its packet header first (ids in network order),
    and a verdict batch whose header accepts through an id; an error message of 0 acknowledges a request, any
    other refuses it."""

    def packet(packet_id: int) -> bytes:
        header = delay.attribute(1, struct.pack(">IHB", packet_id, 0x0800, 1))
        return delay.message(0, 0, header + delay.attribute(10, b"\0" * 6))

    assert delay.packet_ids(packet(7) + packet(8)) == [7, 8]
    verdict = delay.accept_through(0, 8)
    size, kind = struct.unpack_from("=IH", verdict)
    assert (size, kind) == (len(verdict), (3 << 8) | 3)
    assert verdict[-8:] == struct.pack(">II", 1, 8)  # NF_ACCEPT through id 8
    acked = struct.pack("=IHHII", 36, 2, 0, 1, 0) + struct.pack("=i", 0) + b"\0" * 16
    assert delay.acks(acked + acked) == 2
    refused = struct.pack("=IHHII", 36, 2, 0, 1, 0) + struct.pack("=i", -1) + b"\0" * 16
    with pytest.raises(OSError):
        delay.packet_ids(refused)


@needs_root
def test_a_delay_line_adds_its_hold_to_every_round_trip_and_leaves_nothing_behind(clean: None) -> None:
    """20 ms held at the client: the servers' SRTT is the hold plus the veths' and hosts' own fraction of a
    millisecond, and the line says how many segments it held."""
    s = scenario(servers=2, blocks=5, workload={"sru": "256KiB"}, link={"rate": "200Mbps", "rtt": "20ms"})
    r = testbed.run(s)
    assert r.status == "complete" and r.server_rtt is not None
    assert 20 <= r.server_rtt["rtt_ms"] < 25
    assert r.delay_line is not None and r.delay_line.startswith("delay line: ")
    held = int(r.delay_line.split()[2])
    assert held >= 5 * 2 * 256 * 1024 // s.tcp.mss, "every data segment waited in it"


@needs_root
def test_frames_of_one_flow_arrive_in_order_so_nothing_unlost_is_retransmitted(clean: None) -> None:
    """Eight servers at 1 Gbps into a port too deep to drop: a veth hands each frame to the backlog
    of the CPU that sent it, so without steering each flow to one CPU its frames overtake each other
    at the bridge, and duplicate ACKs make the servers retransmit what was never lost."""
    s = scenario(blocks=20, link={"rate": "1Gbps"}, switch={"buffer": "4MiB"}, tcp={"cc": "cubic", "recovery": "sack"})
    r = testbed.run(s)
    assert (r.status, r.drops) == ("complete", 0)
    c = r.server_counters
    assert (c["TCPSACKReorder"], c["TCPDSACKRecv"], r.retransmitted_packets) == (0, 0, 0)


@needs_root
def test_link_loss_makes_one_bulk_flow_retransmit_as_often_as_its_links_lose(clean: None) -> None:
    """Each data frame crosses two lossy links (server to switch, switch to client), so 1 % loss on
    each loses 1.99 % of them, and SACK retransmits each once. 34,500 frames make the expected 690
    losses a count whose standard deviation is 3.8 %: 20 % is over five of them."""
    s = Scenario.parse(
        {"servers": 1, "blocks": 3},
        {
            "workload": {"sru": "16MiB"},
            "link": {"rate": "200Mbps", "loss": 0.01},
            "tcp": {"cc": "cubic", "recovery": "sack"},
        },
    )
    r = testbed.run(s)
    assert r.status == "complete"
    expected = 1 - (1 - 0.01) ** 2
    rate = r.retransmitted_packets / r.server_counters["OutSegs"]
    assert rate == pytest.approx(expected, rel=0.2)
    assert r.lost > 0 and r.to_dict()["lost"] == r.lost


@needs_root
def test_sender_side_loss_makes_one_bulk_flow_retransmit_what_it_lost(clean: None) -> None:
    """RUDE §4's loss at the sender: 1 % of a server's 34,500 data segments (about 345, a standard deviation of
    5.4 %) dropped as they reach the switch, each resent once by SACK; nothing else is lost."""
    s = Scenario.parse(
        {"servers": 1, "blocks": 3},
        {
            "workload": {"sru": "16MiB"},
            "link": {"rate": "200Mbps"},
            "tcp": {"cc": "cubic", "recovery": "sack", "send_loss": 0.01},
        },
    )
    r = testbed.run(s)
    assert r.status == "complete" and r.lost == 0
    assert r.send_losses / r.server_counters["OutSegs"] == pytest.approx(0.01, rel=0.2)
    assert r.retransmitted_packets == pytest.approx(r.send_losses, rel=0.05)
    assert r.to_dict()["send_losses"] == r.send_losses


@needs_root
def test_rto_min_reaches_sockets_created_after_it_is_set(clean: None) -> None:
    rtos = {}
    for rto_min in ("200ms", "1ms"):
        r = testbed.run(
            Scenario.parse({"servers": 2, "blocks": 3, "link": {"rate": "100Mbps"}}, {"tcp.rto_min": rto_min})
        )
        rtos[rto_min] = r.read["connections"][0]["rto_us"]
    assert rtos["200ms"] >= 200_000
    assert rtos["1ms"] < 200_000


@needs_root
def test_a_failure_inside_the_run_tears_everything_down(monkeypatch: pytest.MonkeyPatch, clean: None) -> None:
    seen: list[list[str]] = []

    def broken(net: Any, p: Any, *_: Any) -> Any:
        seen.append(namespaces())
        raise testbed.TestbedError("testbed: injected failure")

    monkeypatch.setattr(importlib.import_module("incast.testbed.run"), "_start_servers", broken)
    with pytest.raises(testbed.TestbedError, match="injected"):
        testbed.run(Scenario.parse({"servers": 3, "blocks": 1}))
    assert len(seen[0]) == 5  # switch, client and 3 servers existed when it failed


@contextmanager
def cli_mid_run(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``incast testbed ARGS`` in a child process, and its namespace prefix, once its client is reading.

    The child is killed and its run cleaned up at the end, whatever the test did to it.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "incast", "testbed", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not (reading := [ns for ns in namespaces() if ns.endswith("-c") and _runs(ns, "incast read")]):
            assert time.monotonic() < deadline and proc.poll() is None, "the client never started"
            time.sleep(0.1)
        prefix = reading[0].removesuffix("-c")
        while _frames_to_client(prefix) < 200:  # some blocks in
            assert time.monotonic() < deadline and proc.poll() is None, "no traffic"
            time.sleep(0.1)
        yield proc, prefix
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
            testbed.cleanup()


def _pids(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], check=False, capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _frames_to_client(prefix: str) -> int:
    """Frames the client's switch port has sent so far."""
    port = f"ic{prefix.removeprefix(NAMESPACE_PREFIX)}-c"
    out = subprocess.run(
        ["tc", "-n", f"{prefix}-sw", "-s", "-j", "qdisc", "show", "dev", port],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sum(int(q.get("packets", 0)) for q in json.loads(out))


def _runs(ns: str, command: str) -> bool:
    """Does a process in ``ns`` run ``command`` (``incast read``, ``incast serve``)?"""
    lines = []
    for pid in _pids(ns):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return any(f"-m {command}" in line for line in lines)


LONG = ["--servers", "4", "--link", "100Mbps", "--sru", "32KiB", "--duration", "60s"]


@needs_root
def test_a_server_killed_mid_run_fails_the_run_in_one_line_and_nothing_is_left(clean: None) -> None:
    with cli_mid_run(*LONG) as (proc, prefix):
        assert host_links() == []  # nothing of the run in the host's namespace, even mid-run
        [server] = _pids(f"{prefix}-s2")
        os.kill(server, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.splitlines()[-1].startswith("error: server 10.0.1.3:7470")
    assert "partial results" in out


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_prints_the_partial_results_and_tears_down(sig: signal.Signals, clean: None) -> None:
    with cli_mid_run(*LONG, "--json") as (proc, _):
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert json.loads(out)["status"] == "interrupted"
    assert err.splitlines()[-1].startswith("error: interrupted after ")


@needs_root
def test_cleanup_removes_what_a_killed_run_left_and_only_that(capfd: pytest.CaptureFixture[str], clean: None) -> None:
    subprocess.run(["ip", "netns", "add", "incast-tbx-not-ours"], check=True)
    try:
        with cli_mid_run(*LONG) as (proc, prefix):
            servers = _pids(f"{prefix}-s0")
            proc.kill()  # no teardown: the namespaces and servers stay
            proc.communicate()
            assert f"{prefix}-sw" in namespaces()
            assert _runs(f"{prefix}-s0", "incast serve")
            code, out, err = cli(capfd, "testbed", "--cleanup")
        assert code == 0, err
        assert f"removed run {run_of(prefix)}: {prefix}-c, " in out
        assert servers and not any(map(alive, servers))
        ours = subprocess.run(["ip", "netns", "list"], check=True, capture_output=True, text=True).stdout
        assert "incast-tbx-not-ours" in ours
    finally:
        subprocess.run(["ip", "netns", "del", "incast-tbx-not-ours"], check=False)


@needs_root
def test_validate_measures_the_hosts_and_calibrate_runs_the_simulator_with_them(
    capfd: pytest.CaptureFixture[str], clean: None
) -> None:
    code, out, err = cli(capfd, "validate", *SMALL, "--json")
    assert code == 0, err
    cost = json.loads(out)["host_cost"]
    assert (cost["servers"], cost["blocks"], cost["calibrated"]) == (1, 20, False)
    assert cost["testbed_block_ms"] > 0
    assert cost["overhead_ms"] == pytest.approx(cost["testbed_block_ms"] - cost["simulator_block_ms"])
    code, out, err = cli(capfd, "validate", *SMALL, "--json", "--calibrate")
    assert code == 0, err
    d = json.loads(out)
    jitter = d["host_cost"]["server_jitter_s"]
    assert d["host_cost"]["calibrated"] == (jitter is not None)
    if jitter is not None:
        assert d["simulator"]["scenario"]["workload"]["server_jitter"] == pytest.approx(jitter)
        assert d["simulator_overrides"]["workload.server_jitter"].endswith("s")


@needs_root
def test_validate_puts_the_simulator_beside_the_testbed(capfd: pytest.CaptureFixture[str], clean: None) -> None:
    code, out, err = cli(capfd, "validate", *SMALL, "--json")
    assert code == 0, err
    d = json.loads(out)
    g = d["figures"]["goodput_mbps"]
    assert g["simulator"] == d["simulator"]["goodput_mbps"]
    assert g["testbed"] == d["testbed"]["goodput_mbps"]
    assert g["ratio"] == pytest.approx(g["testbed"] / g["simulator"])
    assert d["simulator_overrides"]["tcp.clock_granularity"] == "4ms"
    assert d["simulator"]["scenario"]["tcp"]["clock_granularity"] == pytest.approx(1 / testbed.clock().hz)
    assert d["simulator"]["scenario"]["tcp"]["rto_flavor"] == "linux"
    assert d["preset"] == "linux"
    assert d["testbed"]["scenario"]["tcp"]["recovery"] == "sack", "the scenario sits on the linux preset"
    # The kernel's own counters beside the simulator's.
    counters = d["testbed"]["server_counters"]
    probes = d["figures"]["loss_probes"]
    assert (probes["simulator"], probes["testbed"]) == (d["simulator"]["loss_probes"], counters["TCPLossProbes"])
    relost = d["figures"]["lost_retransmits"]["testbed"]
    assert relost == counters["TCPLostRetransmit"]
    recoveries = d["figures"]["fast_retransmits"]["testbed"]
    assert recoveries == counters["TCPSackRecovery"] + counters["TCPRenoRecovery"]


class _OneServerBed:
    """A testbed run whose median block took ``p50_ms``, its server's least min_rtt 27 µs."""

    status, error = "complete", None
    server_rtt = {"min_rtt_ms": 0.027}

    def __init__(self, p50_ms: float) -> None:
        self.block_time_ms = BlockTimes(p50_ms, p50_ms, p50_ms)


def test_host_cost_finds_the_turnaround_of_hosts_like_the_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    """A testbed whose one-server block takes as long as the simulator's with a 700 µs turnaround measures 700 µs,
    the simulator running over the 27 µs path the testbed's server measured."""
    base = Scenario.parse({"servers": 16, "blocks": 3, "link": {"rate": "200Mbps"}, "workload": {"sru": "96KiB"}})
    one = base.with_overrides({"servers": 1, "blocks": 20, **simulator_overrides(base, 0.004, 27e-6)})
    assert one.link.rtt == pytest.approx(27e-6)
    slow = incast_run(one.with_overrides({"workload.server_jitter": "700us"})).block_time_ms.p50
    monkeypatch.setattr(testbed, "run", lambda scenario, timeout: _OneServerBed(slow))
    cost = host_cost(base, 0.004, "60s")
    assert cost.path_rtt_s == pytest.approx(27e-6)
    assert cost.server_jitter_s == pytest.approx(700e-6, abs=2e-6)
    assert cost.simulator_block_ms == incast_run(one).block_time_ms.p50
    assert cost.overhead_ms == pytest.approx(slow - cost.simulator_block_ms) and cost.overhead_ms > 0
    # Hosts faster than the simulator with no turnaround at all: none matches.
    monkeypatch.setattr(testbed, "run", lambda scenario, timeout: _OneServerBed(0.1))
    assert host_cost(base, 0.004, "60s").server_jitter_s is None


def test_the_simulator_runs_over_the_testbeds_path_only_where_the_testbed_cannot_apply_link_rtt() -> None:
    """Below the delay line's 1 ms the testbed's RTT is its veths' and hosts': the simulator takes the measured one;
    from 1 ms on the delay line applies link.rtt, and the simulator keeps it."""
    short = Scenario.parse({"servers": 4, "link": {"rtt": "100us"}})
    assert simulator_overrides(short, 0.004, 27e-6)["link.rtt"] == "27us"
    assert "link.rtt" not in simulator_overrides(short, 0.004)
    delayed = Scenario.parse({"servers": 4, "link": {"rtt": "20ms"}})
    assert "link.rtt" not in simulator_overrides(delayed, 0.004, 27e-6)


def test_calibrate_is_refused_against_ns2(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capfd, "validate", "--against", "ns2", "--servers", "4", "--calibrate")
    assert code == 2 and not out
    why = "error: --calibrate: measures the testbed's hosts; it does not apply with --against ns2"
    assert err.strip().splitlines() == [why]


def test_validate_runs_the_simulator_with_the_kernels_recovery_rules() -> None:
    """Linux recovers as NewReno where Reno recovery is asked; the rest of LINUX_STACK applies to every scenario."""
    reno = Scenario.parse({"servers": 4}, {"tcp.recovery": "reno"})
    overrides = simulator_overrides(reno, 0.004)
    assert overrides["tcp.recovery"] == "newreno"
    assert overrides["tcp.clock_granularity"] == "4ms"
    assert overrides["tcp.rtt_resolution"] == "us", "the kernel here (3.15 or later) samples RTT in microseconds"
    assert LINUX_STACK.items() <= overrides.items()
    assert overrides["tcp.gso_max_size"] == "0B", "the veths' gso_max_segs 1: paced bursts of one segment"
    assert "tcp.recovery" not in simulator_overrides(Scenario.parse({"servers": 4}, {"tcp.cc": "cubic"}), 0.004)


def test_validate_runs_the_simulators_ports_as_the_testbeds_token_buckets() -> None:
    """Every port a token bucket as deep as the testbed's tbf: one frame, 64 bytes and 100 µs of line, and the
    24 bytes of overhead psched_l2t_ns charges the burst as it charges every frame."""
    s = Scenario.parse({"servers": 4, "link": {"rate": "200Mbps"}})
    depth = s.tcp.mss + 40 + 14 + 64 + 2500 + 24
    assert simulator_overrides(s, 0.004)["link.token_bucket"] == f"{depth}B"
    assert Scenario.parse({"servers": 4}, simulator_overrides(s, 0.004)).link.token_bucket == depth


@needs_root
@pytest.mark.slow
def test_fast08_shape_200ms_collapses_and_1ms_recovers_on_the_kernel(clean: None) -> None:
    """8 servers, 200 Mbps, 32 KiB buffer, 64 KiB SRU: RTO_min 1 ms gives several times the goodput of 200 ms."""
    base = {"servers": 8, "blocks": 60, "link": {"rate": "200Mbps"}, "workload": {"sru": "64KiB"}}
    slow, fast = (testbed.run(Scenario.parse(base, {"tcp.rto_min": r})) for r in ("200ms", "1ms"))
    assert slow.timeouts > 0 and fast.timeouts > 0
    assert fast.goodput_mbps > 3 * slow.goodput_mbps
