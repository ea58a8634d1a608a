"""A scenario as the options of the ns-3 3.44 harness (``ns3.py``), and that harness as a reference.

``ns3.py`` runs under an interpreter with the ``ns3`` wheel (ns-3 through
cppyy); :class:`Ns3` runs it as a child process of this interpreter, which
must have the wheel too (``pip install ns3==3.44.post0``), with the options
:func:`options` gives, and reads its ``--json`` line back.

What maps: servers, blocks, ``workload.sru``, ``request`` and ``order``, the
link rate and RTT (``rtt / 4`` per link, server i's ``link.skew``·i longer),
the client port's byte limit (``"Npkt"`` as N full PPP frames), RTO_min,
SACK or not (``tcp.recovery``), PRR or ns-3's classic recovery
(``tcp.prr``), timestamps, limited transmit, the initial window, the segment
size (ns-3's ``SegmentSize`` is payload: the engine's ``tcp.mss`` less the
timestamp option) and the receive window as both socket buffers. ns-3 runs
with ``ClockGranularity`` 0: its granularity is a floor in the RTO formula,
which no setting here expresses. What ns-3 runs differently is noted
(:meth:`Ns3.notes`); what the harness cannot express is refused
(:func:`rules`). A scenario with open-loop ``[traffic]`` runs
``ns3_traffic.py`` instead, with its own options, rules and notes
(:mod:`incast.reference.ns3_traffic_options`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from incast.errors import IncastError
from incast.reference import ns3_traffic_options as traffic
from incast.reference.base import Figure, Flows, Reference, Rule, Unavailable, star_read
from incast.scenario import Scenario
from incast.units import format_duration, format_rate, format_size, seconds_to_ps

__all__ = ["Ns3", "Ns3Error", "options", "rules"]

#: The harness, run as a script.
SCRIPT = Path(__file__).with_name("ns3.py")
#: The files each harness runs: its script and the modules it loads from beside it.
SOURCES = {
    "read": (SCRIPT, Path(__file__).with_name("ns3_cppyy.py")),
    "traffic": (traffic.SCRIPT, *(Path(__file__).with_name(f"ns3_{m}.py") for m in ("cppyy", "fabric", "ideal"))),
}
#: IPv4 and TCP headers, the timestamp option and the PPP header of ns-3's point-to-point frames.
HEADERS, TS_OPTION, PPP_HEADER = 40, 12, 2
#: What to install when the wheel is missing.
WHEEL = "pip install ns3==3.44.post0"


class Ns3Error(IncastError):
    """The ns-3 harness failed on a scenario it can express; the message is one line."""


def _payload(s: Scenario) -> int:
    """ns-3's ``SegmentSize``: payload bytes, the engine's MSS less its timestamp option."""
    return int(s.tcp.mss) - (TS_OPTION if s.tcp.timestamps else 0)


def _frame(s: Scenario) -> int:
    """Bytes of a full segment's PPP frame in ns-3's device queue."""
    return _payload(s) + HEADERS + (TS_OPTION if s.tcp.timestamps else 0) + PPP_HEADER


def _buffer(s: Scenario) -> int:
    b = s.switch.buffer
    return int(b.removesuffix("pkt")) * _frame(s) if isinstance(b, str) else int(b)


def rules(s: Scenario) -> list[Rule]:
    """What the ns-3 harness restricts, beyond :func:`~incast.reference.base.star_read`."""
    return [
        *star_read(s),
        Rule("tcp.slow_start", not s.tcp.slow_start, "slow start is always on"),
        Rule("workload.block", s.workload.block is not None, "workload.sru only: each server answers --sru bytes"),
        Rule("workload.server_jitter", s.workload.server_jitter != 0, "0 only: the harness's servers answer at once"),
        Rule("link.skew", seconds_to_ps(s.link.skew) % 1000 != 0, "whole nanoseconds: ns-3 counts time in them"),
        Rule("tcp.cc", s.tcp.cc != "reno", "reno: the harness's sockets are TcpNewReno, growing by RFC 5681"),
        Rule("tcp.recovery", s.tcp.recovery == "reno", '"newreno" or "sack": ns-3 recovers as NewReno'),
        Rule("tcp.delayed_ack", s.tcp.delayed_ack is not None, '"off" only: the harness ACKs every segment'),
        Rule("tcp.dupack_threshold", s.tcp.dupack_threshold != 3, "3 only: ns-3's ReTxThreshold is kept"),
        Rule("tcp.gip", s.tcp.gip != "off", '"off" only: no GIP in ns-3'),
        Rule("tcp.rcv_window", s.tcp.rcv_window != "fixed", '"fixed": the harness\'s socket buffers do not grow'),
        Rule("tcp.spurious_rto", s.tcp.spurious_rto != "off", '"off" only: ns-3 has no spurious-timeout detection'),
    ]


def options(s: Scenario) -> list[str]:
    """The harness's command line for ``s`` (``--json`` apart)."""
    tcp = s.tcp
    return [
        *("--servers", str(s.servers), "--blocks", str(s.blocks), "--sru", format_size(int(s.workload.sru))),
        *("--request", f"{s.workload.request}B", "--order", s.workload.order, "--seed", str(s.seed)),
        *("--link", format_rate(int(s.link.rate)), "--rtt", format_duration(s.link.rtt)),
        *("--skew", format_duration(s.link.skew), "--buffer", f"{_buffer(s)}B"),
        *("--rto-min", format_duration(tcp.rto_min), "--clock-granularity", "0"),
        "--sack" if tcp.recovery == "sack" else "--no-sack",
        *("--recovery", "prr" if tcp.prr else "classic"),
        "--timestamps" if tcp.timestamps else "--no-timestamps",
        "--limited-transmit" if tcp.limited_transmit else "--no-limited-transmit",
        *("--mss", str(_payload(s)), "--init-cwnd", str(tcp.init_cwnd), "--socket-buffer", f"{tcp.rcv_wnd}B"),
    ]


def _notes(s: Scenario) -> list[str]:
    """What ns-3 runs differently from the engine on this scenario, one line each."""
    tcp, frame = s.tcp, _frame(s)
    best = float(s.link.rate) * _payload(s) / frame / 1e6
    notes = [f"ns-3 has no Ethernet framing: a full segment is a {frame}-byte PPP frame; its best is {best:.1f} Mbps"]
    if isinstance(s.switch.buffer, str):
        notes.append(f"switch.buffer: {s.switch.buffer} becomes {_buffer(s)} bytes, that many {frame}-byte frames")
    notes.append(
        f"switch.buffer: ns-3's port counts the frames waiting ({_buffer(s) // frame} full ones), "
        "not the one on the wire"
    )
    if tcp.clock_granularity:
        notes.append("tcp.clock_granularity: ns-3 runs with ClockGranularity 0 and fires its timers on time")
    if tcp.rto_flavor != "rfc6298":
        notes.append(f"tcp.rto_flavor: ns-3's RTO is RFC 6298's formula, not {tcp.rto_flavor!r}")
    changed = [
        ("tcp.rto_backoff_reset", tcp.rto_backoff_reset != "new_ack", "drops the back-off on every ACK of new data"),
        ("tcp.rto_max", tcp.rto_max != 60, "caps the backed-off RTO at 60s"),
        ("tcp.ssthresh_rule", tcp.ssthresh_rule != "ns3", "cuts ssthresh from half of BytesInFlight()"),
        ("tcp.recovery_exit", tcp.recovery_exit != "ssthresh", "sets cwnd to ssthresh when recovery ends"),
        ("tcp.restart_after_idle", bool(tcp.restart_after_idle), "keeps cwnd across idle periods"),
        ("tcp.prr_flavor", bool(tcp.prr) and tcp.prr_flavor != "ns3", "runs TcpPrrRecovery as TcpSocketBase calls it"),
        ("tcp.sack_recovery", tcp.recovery == "sack" and tcp.sack_recovery != "ns3", "resends by TcpTxBuffer's pipe"),
        ("tcp.ca_increase", tcp.ca_increase != "ns3", "grows TcpNewReno's window in whole bytes"),
        ("link.arrival_order", s.link.arrival_order != "ns3", "takes frames arriving at one instant in its own order"),
        ("switch.admission", s.switch.admission != "full_frame", "stops a port with less than an MTU free"),
    ]
    notes += [f"{setting}: ns-3 {does} (preset ns3)" for setting, differs, does in changed if differs]
    if tcp.recovery == "newreno":
        notes.append("tcp.recovery: without SACK ns-3 still keeps a scoreboard, one segment per duplicate ACK")
    if s.workload.order == "shuffled" and s.servers > 1:
        notes.append("workload.order: the harness shuffles the requests with its own generator (mt19937_64)")
    if s.workload.request_path != "link":
        notes.append("workload.request_path: ns-3's client queues its requests ahead of its ACKs (link)")
    return notes


def wheel_missing() -> bool:
    """Does this interpreter lack the ``ns3`` wheel (its ``ns`` package and cppyy)?"""
    return importlib.util.find_spec("ns") is None or importlib.util.find_spec("cppyy") is None


class Ns3(Reference):
    """ns-3 3.44 as a reference: ``ns3.py`` run by this interpreter; ``timeout_s`` bounds each run.

    ``flows="engine"``: open-loop traffic runs the flows the engine draws for the scenario (one engine
    run before each ns-3 run), not ns-3's own draws from the same distributions.
    """

    name = "ns3"
    title = "ns-3 3.44"
    preset = "ns3"

    def __init__(self, *, timeout_s: float = 3600.0, flows: Flows = "own") -> None:
        self.timeout_s = timeout_s
        self.flows = flows

    def require(self) -> None:
        if wheel_missing():
            raise Unavailable(f"ns-3: this Python has no ns3 wheel; install it with {WHEEL} (about 670 MiB)")

    def rules(self, scenario: Scenario) -> list[Rule]:
        if traffic.is_traffic(scenario):
            return traffic.rules(scenario)
        engine_flows = self.flows == "engine"
        engine = Rule("claim.reference.flows", engine_flows, '"own" only: the engine\'s flows are open-loop traffic')
        return [engine, *rules(scenario)]

    def notes(self, scenario: Scenario) -> list[str]:
        if traffic.is_traffic(scenario):
            return traffic.notes(scenario, engine_flows=self.flows == "engine")
        return _notes(scenario)

    def fingerprint(self, scenario: Scenario) -> str:
        """The SHA-256 of the command ns-3 runs (with the size CDF it reads) and of the harness's source: a
        setting it does not read leaves a recorded run valid, a change to the harness does not."""
        s = self.prepare(scenario)[0]
        if traffic.is_traffic(s):
            flows = Path("engine.flows") if self.flows == "engine" else None
            command = [*traffic.options(s, Path("sizes.cdf"), flows), traffic.sizes_text(s)]
            sources = SOURCES["traffic"]
        else:
            command, sources = options(s), SOURCES["read"]
        texts = [f.read_text(encoding="utf-8") for f in sources]
        return hashlib.sha256("\0".join([*command, *texts]).encode()).hexdigest()

    def run(self, scenario: Scenario) -> dict[str, Any]:
        self.check(scenario)
        self.require()
        if not traffic.is_traffic(scenario):
            out = self._run([str(SCRIPT), *options(scenario)])
            # The simulator's name for entries into fast recovery; ns-3 does not count the segments it resends.
            return out | {"fast_retransmits": out["fast_recoveries"], "retransmitted_packets": None}
        with tempfile.TemporaryDirectory(prefix="incast-ns3-") as folder:
            sizes = Path(folder) / "sizes.cdf"
            sizes.write_text(traffic.sizes_text(scenario), encoding="utf-8")
            flows = None
            if self.flows == "engine":
                from incast.result import run as simulate

                flows = Path(folder) / "engine.flows"
                flows.write_text(traffic.flows_text(simulate(scenario)), encoding="utf-8")
            return self._run([str(traffic.SCRIPT), *traffic.options(scenario, sizes, flows)])

    def _run(self, command: list[str]) -> dict[str, Any]:
        """Run a harness script with ``command``'s arguments and ``--json``; the object it printed last."""
        try:
            done = subprocess.run(
                [sys.executable, *command, "--json"], capture_output=True, text=True, timeout=self.timeout_s
            )
        except subprocess.TimeoutExpired:
            raise Ns3Error(f"ns-3: no result within {self.timeout_s:g} s") from None
        lines = done.stdout.splitlines()
        if done.returncode not in (0, 1) or not lines:  # 1: it stopped before the last block, and says so
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Ns3Error(f"ns-3 failed (status {done.returncode}): {last}")
        out: dict[str, Any] = json.loads(lines[-1])
        return out

    def figures(self, measured: dict[str, Any]) -> tuple[Figure, ...]:
        if "queries" in measured:
            return traffic.FIGURES
        return (Figure("fast recoveries", "fast_retransmits"),)
