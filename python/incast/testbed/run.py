"""Run one scenario on the testbed: build the network, start the servers, read, collect, tear down.

Order matters: each namespace's sysctls and route options are set while the
network is built, before any server starts, because a listening socket keeps
the RTO_min it was created with. Then ``incast serve`` starts in every server
namespace (each in a session of its own, so that a Ctrl-C reaches only this
process, which stops the children in order), ``incast read --json`` runs in
the client namespace, and the kernel's TCP counters of every server namespace
are read before and after it: the timeouts reported are the servers'
``TCPTimeouts``, the retransmissions their ``RetransSegs``, and the drops the
client port's ``tbf`` drop count; with ``link.loss``, the frames the links lost
are the loss rules' counters.

With a delay line (``link.rtt`` of 1 ms or more), :mod:`incast.testbed.delay`
starts in the client namespace before the servers and stops after them; its
closing line is the result's ``delay_line``.

With ``sample_every``, every server samples its connection's sending state
(:mod:`incast.testbed.sampling`) into a temporary directory, read into the
result's ``trace`` once the servers have stopped and removed with the run.

Teardown runs in a ``finally`` block, on success, failure, Ctrl-C and
SIGTERM: the children are stopped and every namespace of the run deleted,
which deletes its veths and the bridge.
"""

from __future__ import annotations

import json
import math
import platform
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from incast.bench import check_timeout
from incast.result import BlockTimes
from incast.scenario import Scenario
from incast.signals import signals_held, stop_signals_raise_keyboard_interrupt
from incast.testbed.errors import TestbedError
from incast.testbed.kernel import KernelClock, available_congestion_controls, clock, require_privileges
from incast.testbed.netns import Network, command
from incast.testbed.plan import Plan, plan
from incast.testbed.sampling import collect, serve_options

__all__ = ["SERVER_COUNTERS", "TestbedResult", "run"]

#: The port every server listens on (each in its own namespace).
PORT = 7470
#: The delay line (:mod:`incast.testbed.delay`), run with ``-I`` in the client's namespace.
_DELAY_LINE = Path(__file__).with_name("delay.py")
#: How long the servers may take to start (each imports incast; 32 of them share 2 cores here).
_START_TIMEOUT_S = 120.0
#: Kernel counters summed over the server namespaces into ``server_counters``.
SERVER_COUNTERS = (
    "TCPTimeouts",
    "RetransSegs",
    "TCPLossProbes",
    "TCPLossProbeRecovery",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPLostRetransmit",
    "TCPRenoRecovery",
    "TCPSackRecovery",
    "TCPSpuriousRTOs",
    "TCPSACKReorder",
    "TCPRenoReorder",
    "TCPTSReorder",
    "TCPDSACKRecv",
    "OutSegs",
)


class TestbedResult:
    """What one testbed run measured, with ``incast run``'s names where they mean the same.

    ``status`` (``"complete"``, ``"failed"`` or ``"interrupted"``), ``error``,
    ``goodput_mbps``, ``best_goodput_mbps``, ``utilization``, ``blocks``,
    ``bytes_delivered``, ``block_time_ms`` (p50/p99/max), ``wall_s``;
    from the kernel: ``timeouts`` (the servers' ``TCPTimeouts``),
    ``retransmitted_packets`` (their ``RetransSegs``), ``fast_retransmits`` (their
    ``TCPSackRecovery`` and ``TCPRenoRecovery``: entries into fast recovery),
    ``loss_probes`` (``TCPLossProbes``), ``lost_retransmits`` (``TCPLostRetransmit``), ``drops`` (the client
    port's ``tbf`` drops), ``lost`` (frames the links lost on the wire, ``link.loss``), ``send_losses`` (data
    segments ``tcp.send_loss`` dropped),
    ``port`` (the client port's ``frames``, ``bytes`` and
    ``drops``: bytes over frames shows the frames were MTU-sized), ``server_counters`` (:data:`SERVER_COUNTERS` summed
    over the servers), ``timeouts_per_server``, ``server_rtt`` (the servers' kernel RTT and RTO as
    requests arrived, :func:`kernel_rtt`; None when none was sampled); ``shaping`` (the plan's rate, port
    buffer, MTU and loss); ``kernel`` (release, HZ, the
    jiffy and the RTO floor), ``notes``, ``scenario``, and ``read``, the
    client's ``incast read --json`` object (per-connection ``TCP_INFO``); ``trace``, the servers'
    sampled sending state (:func:`~incast.testbed.sampling.collect`; None unless sampled); ``delay_line``, the
    delay line's closing line (how many segments it held and how late it released them; None without one).
    """

    def __init__(
        self,
        scenario: Scenario,
        plan: Plan,
        kernel: KernelClock,
        read: dict[str, Any],
        counters: list[dict[str, int]],
        port: dict[str, int],
        rtt: dict[str, float] | None = None,
        lost: int = 0,
        trace: dict[str, Any] | None = None,
        delay_line: str | None = None,
        send_losses: int = 0,
    ) -> None:
        self.scenario = scenario
        self.delay_line = delay_line
        self.trace = trace
        self.notes = list(plan.notes)
        self.read = read
        self.status: str = read["status"]
        self.error: str | None = read["error"]
        self.goodput_mbps = _f(read["goodput_mbps"])
        self.best_goodput_mbps = plan.best_goodput_mbps
        self.utilization = self.goodput_mbps / plan.best_goodput_mbps
        self.blocks: int = read["blocks"]
        self.bytes_delivered: int = read["bytes_delivered"]
        t = read["block_time_ms"]
        self.block_time_ms = BlockTimes(_f(t["p50"]), _f(t["p99"]), _f(t["max"]))
        self.wall_s = float(read["wall_s"])
        self.server_counters = {name: sum(c.get(name, 0) for c in counters) for name in SERVER_COUNTERS}
        self.timeouts_per_server = [c.get("TCPTimeouts", 0) for c in counters]
        self.timeouts = self.server_counters["TCPTimeouts"]
        self.retransmitted_packets = self.server_counters["RetransSegs"]
        self.fast_retransmits = self.server_counters["TCPSackRecovery"] + self.server_counters["TCPRenoRecovery"]
        self.loss_probes = self.server_counters["TCPLossProbes"]
        self.lost_retransmits = self.server_counters["TCPLostRetransmit"]
        self.drops = port["drops"]
        self.lost = lost
        self.send_losses = send_losses
        self.port = port
        self.server_rtt = rtt
        self.shaping = plan.shaping
        self.kernel: dict[str, Any] = {
            "release": platform.release(),
            "hz": kernel.hz,
            "hz_source": kernel.source,
            "jiffy_s": kernel.jiffy_s,
            "rto_min_s": scenario.tcp.rto_min,
            "rto_floor_s": plan.rto_floor_s,
            "congestion": plan.congestion,
        }

    def to_dict(self) -> dict[str, Any]:
        """One JSON-safe object, tagged ``"source": "testbed"``: ``incast testbed --json``. NaN becomes None."""
        out: dict[str, Any] = {"source": "testbed", "status": self.status, "error": self.error}
        for key in ("goodput_mbps", "best_goodput_mbps", "utilization"):
            value = getattr(self, key)
            out[key] = None if math.isnan(value) else value
        out["blocks"] = self.blocks
        out["bytes_delivered"] = self.bytes_delivered
        out["block_time_ms"] = {k: None if math.isnan(v) else v for k, v in self.block_time_ms._asdict().items()}
        out["wall_s"] = self.wall_s
        out["timeouts"] = self.timeouts
        out["retransmitted_packets"] = self.retransmitted_packets
        out["fast_retransmits"] = self.fast_retransmits
        out["loss_probes"] = self.loss_probes
        out["lost_retransmits"] = self.lost_retransmits
        out["drops"] = self.drops
        out["lost"] = self.lost
        out["send_losses"] = self.send_losses
        sh = self.shaping
        out["shaping"] = {
            "rate_bps": sh.rate,
            "buffer_bytes": sh.buffer,
            "mtu_bytes": sh.mtu,
            "loss_ppb": sh.loss_ppb,
            "delay_s": sh.delay_s,
            "send_loss_ppb": sh.send_loss_ppb,
        }
        out["delay_line"] = self.delay_line
        out["port"] = self.port
        out["timeouts_per_server"] = self.timeouts_per_server
        out["server_counters"] = self.server_counters
        out["server_rtt"] = self.server_rtt
        # The simulator's names for the means, so that validate sets them beside its own.
        out["server_srtt_ms"] = None if self.server_rtt is None else self.server_rtt["rtt_ms"]
        out["server_rttvar_ms"] = None if self.server_rtt is None else self.server_rtt["rttvar_ms"]
        out["server_rto_ms"] = None if self.server_rtt is None else self.server_rtt["rto_ms"]
        out["server_min_rtt_ms"] = None if self.server_rtt is None else self.server_rtt["min_rtt_ms"]
        out["kernel"] = self.kernel
        out["notes"] = self.notes
        out["read"] = self.read
        out["trace"] = self.trace
        out["scenario"] = self.scenario.to_dict()
        return out

    def __repr__(self) -> str:
        state = "" if self.status == "complete" else f" ({self.status})"
        return (
            f"<TestbedResult {self.scenario.describe()}{state}: goodput {self.goodput_mbps:.1f} Mbps, "
            f"{self.blocks} blocks, {self.timeouts} timeouts>"
        )


def _f(value: Any) -> float:
    return math.nan if value is None else float(value)


def run(scenario: Scenario, *, timeout: str = "60s", sample_every: float | None = None) -> TestbedResult:
    """Run ``scenario`` on a fresh testbed and tear it down; ``timeout`` is the read's per-block limit.

    ``sample_every`` (seconds): sample every server's connection this often into the result's ``trace``.

    Raises :class:`~incast.testbed.kernel.TestbedUnavailable` when this
    machine cannot run it (not root, no iproute2),
    :class:`~incast.errors.ScenarioError` for a field the testbed cannot
    honour, :class:`TestbedError` when the client fails without a result or
    a command fails, and ``KeyboardInterrupt`` on Ctrl-C or SIGTERM when
    the client printed nothing. A client that fails or is interrupted after
    printing its partial results gives a result whose ``status`` says so.
    """
    check_timeout(timeout)
    require_privileges()
    kernel = clock()
    p = plan(scenario, kernel, available_congestion_controls())
    net = Network(p.servers)
    servers: list[subprocess.Popen[str]] = []
    line: list[subprocess.Popen[str]] = []  # the delay line, if any
    last_lines: list[str] = []
    trace = None
    with stop_signals_raise_keyboard_interrupt(), tempfile.TemporaryDirectory(prefix="incast-tb-samples-") as tmp:
        samples = None if sample_every is None else (Path(tmp), sample_every)
        try:
            net.build(p.shaping, {host: p.sysctls for host in net.hosts}, {host: p.routes for host in net.hosts})
            if p.shaping.delay_s:
                line.append(_start_delay_line(net, p.shaping.delay_s))
            servers = _start_servers(net, p, samples)
            before = [net.counters(net.server(i)) for i in range(p.servers)]
            read = _read(net, p, timeout)
            after = [net.counters(net.server(i)) for i in range(p.servers)]
            if read["status"] == "complete":
                _check_running(servers, line)
            counters = [{k: a[k] - b.get(k, 0) for k in a} for a, b in zip(after, before, strict=True)]
            port = _port(net)
            lost = net.lost() if p.shaping.loss_ppb else 0
            send_losses = net.send_losses() if p.shaping.send_loss_ppb else 0
        finally:
            with signals_held():
                last_lines = _stop(line + servers)
                net.teardown()
        if samples is not None:
            trace = collect(samples[0], p.servers, read.get("start_unix_s"), samples[1])
    delay_line = last_lines.pop(0) if p.shaping.delay_s else None
    rtt = kernel_rtt(last_lines)
    return TestbedResult(scenario, p, kernel, read, counters, port, rtt, lost, trace, delay_line, send_losses)


def _spawn(argv: list[str], stdout: int) -> subprocess.Popen[str]:
    """Start ``argv`` in a session of its own (a Ctrl-C reaches only this process), its standard error piped."""
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def _start_delay_line(net: Network, delay_s: float) -> subprocess.Popen[str]:
    """Start the client namespace's delay line (:mod:`incast.testbed.delay`); return once it holds the queue."""
    argv = ["ip", "netns", "exec", net.client, sys.executable, "-I", str(_DELAY_LINE), repr(delay_s)]
    line = _spawn(argv, subprocess.DEVNULL)
    _await(line, "delaying", f"the delay line in {net.client}", time.monotonic() + _START_TIMEOUT_S)
    return line


def _await(process: subprocess.Popen[str], marker: str, name: str, deadline: float) -> None:
    """Wait until ``process`` logs ``marker`` on standard error; TestbedError naming it if it exits or is late."""
    assert process.stderr is not None
    line = ""
    while marker not in line:
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
        line = process.stderr.readline() if ready else ""
        if not ready or (not line and process.poll() is not None):
            why = f"exited with status {process.poll()}" if process.poll() is not None else "did not start in time"
            raise TestbedError(f"testbed: {name} {why}: {line.strip()}".strip(": "))


def _start_servers(net: Network, p: Plan, samples: tuple[Path, float] | None = None) -> list[subprocess.Popen[str]]:
    """Start ``incast serve`` in every server namespace; return once each has logged that it listens.

    ``samples``: the directory each server samples its connections into, and how often.
    """
    servers = []
    for i in range(p.servers):
        sampling = [] if samples is None else serve_options(samples[0], i, samples[1])
        argv = [
            "ip",
            "netns",
            "exec",
            net.server(i),
            sys.executable,
            "-m",
            "incast",
            "serve",
            "--port",
            str(PORT),
            "--bind",
            net.server_address(i),
            *p.serve_options,
            *sampling,
        ]
        servers.append(_spawn(argv, subprocess.DEVNULL))
    deadline = time.monotonic() + _START_TIMEOUT_S
    for i, server in enumerate(servers):
        _await(server, "listening on", f"incast serve in {net.server(i)}", deadline)
    return servers


def _read(net: Network, p: Plan, timeout: str) -> dict[str, Any]:
    """Run ``incast read --json`` in the client namespace; its JSON object (partial on failure or Ctrl-C)."""
    targets = [f"{net.server_address(i)}:{PORT}" for i in range(p.servers)]
    argv = [
        "ip",
        "netns",
        "exec",
        net.client,
        sys.executable,
        "-m",
        "incast",
        "read",
        *targets,
        *p.read_options,
        "--timeout",
        timeout,
        "--json",
    ]
    client = _spawn(argv, subprocess.PIPE)
    try:
        out, err = client.communicate()
    except KeyboardInterrupt:
        client.send_signal(signal.SIGINT)  # the client prints its partial results, then exits
        try:
            out, err = client.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            client.kill()
            out = ""
        if not out.strip():
            raise
    lines = out.strip().splitlines()
    if not lines:
        reason = (err.strip().splitlines() or [f"exit status {client.returncode}"])[-1]
        raise TestbedError(f"testbed: incast read failed: {reason.removeprefix('error: ')}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _check_running(servers: list[subprocess.Popen[str]], line: list[subprocess.Popen[str]]) -> None:
    for i, server in enumerate(servers):
        if server.poll() is not None:
            raise TestbedError(f"testbed: server {i} exited with status {server.returncode} during the run")
    for process in line:
        if process.poll() is not None:
            raise TestbedError(f"testbed: the delay line exited with status {process.returncode} during the run")


def _port(net: Network) -> dict[str, int]:
    """Frames and bytes the client port's tbf sent, and frames it dropped (``tc -s -j qdisc``)."""
    out = command("tc", "-n", net.switch, "-s", "-j", "qdisc", "show", "dev", net.port(net.client))
    tbf = next(q for q in json.loads(out) if q.get("kind") == "tbf")
    return {"frames": int(tbf["packets"]), "bytes": int(tbf["bytes"]), "drops": int(tbf["drops"])}


def _stop(servers: list[subprocess.Popen[str]]) -> list[str]:
    """SIGTERM every server still running, then SIGKILL those that do not stop within 5 s; their last log lines."""
    for server in servers:
        if server.poll() is None:
            server.terminate()
    deadline = time.monotonic() + 5.0
    last = []
    for server in servers:
        try:
            server.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stderr is not None:
            last.append((server.stderr.read().strip().splitlines() or [""])[-1])
            server.stderr.close()
    return last


#: The kernel's round trip in an ``incast serve`` shutdown line.
_RTT_LINE = re.compile(
    r"kernel RTT (\d+) us, RTTVAR (\d+) us and RTO (\d+) us on average \(RTO at most (\d+) us, "
    r"min_rtt at least (\d+) us\) over (\d+) requests",
    re.ASCII,
)


def kernel_rtt(lines: list[str]) -> dict[str, float] | None:
    """The servers' kernel RTT and RTO from their shutdown lines: means weighted by requests, the largest RTO,
    and the least ``tcpi_min_rtt`` (``min_rtt_ms``: the path's round trip where a segment waited in no queue).

    ``incast serve`` takes them from ``TCP_INFO`` as each request after a connection's first arrives.
    None when no server sampled any.
    """
    found = [[int(v) for v in m.groups()] for m in map(_RTT_LINE.search, lines) if m is not None]
    found = [m for m in found if m[5]]
    samples = sum(m[5] for m in found)
    if samples == 0:
        return None

    def mean_ms(i: int) -> float:
        return sum(m[i] * m[5] for m in found) / samples / 1000

    return {
        "requests": samples,
        "rtt_ms": mean_ms(0),
        "rttvar_ms": mean_ms(1),
        "rto_ms": mean_ms(2),
        "rto_max_ms": max(m[3] for m in found) / 1000,
        "min_rtt_ms": min(m[4] for m in found) / 1000,
    }
