"""The Linux testbed (:mod:`incast.testbed`) as a reference, and what the simulator needs to run beside it.

Against the testbed the simulator runs each scenario as the kernel will
(:func:`simulator_overrides`): with the kernel's own recovery rules
(``incast.presets.LINUX_STACK``), its clock granularity set to the kernel's
jiffy (4 ms at HZ=250) with RTT samples in microseconds (as every kernel
since 3.15 takes them), NewReno's recovery where the scenario says ``reno``
(Linux's reno congestion control recovers as NewReno), Linux's delayed
ACK where the scenario asks for the default 40 ms, and paced bursts of one
segment (``tcp.gso_max_size = 0``): the testbed's veths have ``gso_max_segs 1``
(:mod:`incast.testbed.netns`), so ``tcp_tso_segs`` caps every burst a paced
sender builds at one segment. Every port is a token bucket as deep as the
testbed's (``link.token_bucket``, :func:`incast.testbed.plan.bucket_bytes`):
the testbed's ports are ``tbf`` qdiscs in front of veths, which pass an
unqueued frame with no serialization time and frames after an idle moment
back to back.

:func:`host_cost` measures what the real hosts cost: a short run of the
scenario with one server on both sides, the difference of the median block
times, and the server turnaround (``workload.server_jitter``, the wake-up
between a request's arrival and its answer's start) with which the
simulator's one-server block takes as long as the testbed's. One server
shows the hosts lightly loaded: what many servers sharing this machine's
cores add is not in it. The same run measures the testbed's path: the least
``tcpi_min_rtt`` its server saw (a segment that waited in no queue, through
the hosts' stacks and the veths). Where the testbed cannot apply the
scenario's ``link.rtt`` (below :data:`~incast.testbed.plan.DELAY_LINE_MIN_S`,
without a delay line) the simulator runs with that path as its ``link.rtt``,
so that both sides run over the same round trip.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from incast import testbed
from incast.presets import LINUX_STACK
from incast.reference.base import Figure, Reference, Rule, Unavailable
from incast.result import run as simulate
from incast.scenario import Scenario
from incast.testbed.kernel import KernelClock, available_congestion_controls
from incast.testbed.plan import TITLE, bucket_bytes, delay_line_s, rules
from incast.testbed.plan import plan as plan_of
from incast.units import format_duration

__all__ = ["KERNEL_FIGURES", "HostCost", "Testbed", "host_cost", "simulator_overrides"]

#: The machine a fingerprint's plan is made for: any tick (the plan's notes and RTO floor, which it changes,
#: are left out) and every congestion control the testbed can set.
_ANY_MACHINE = (KernelClock(1000, "any kernel"), ["reno", "cubic", "dctcp", "bbr"])
#: Blocks of the one-server run that measures the hosts' cost.
HOST_COST_BLOCKS = 20
#: The longest turnaround the calibration tries (a one-server block slower than this implies is a broken testbed).
_MAX_TURNAROUND_S = 1.0
#: Figures the kernel counts too (the servers' TCPSackRecovery and TCPRenoRecovery, TCPLossProbes,
#: TCPLostRetransmit, and TCP_INFO's means).
KERNEL_FIGURES = (
    Figure("fast recoveries", "fast_retransmits"),
    Figure("loss probes", "loss_probes"),
    Figure("lost retransmissions", "lost_retransmits"),
    Figure("servers' SRTT ms", "server_srtt_ms"),
    Figure("servers' RTTVAR ms", "server_rttvar_ms"),
    Figure("servers' RTO ms", "server_rto_ms"),
)


def simulator_overrides(scenario: Scenario, jiffy_s: float, path_rtt_s: float | None = None) -> dict[str, Any]:
    """The settings that make the simulator run ``scenario`` as the kernel with this jiffy does, over the
    testbed's measured path round trip ``path_rtt_s`` where the testbed does not apply ``link.rtt``."""
    # With its unit: the engine never guesses one (format_duration reads back to the same seconds).
    overrides: dict[str, Any] = {"tcp.clock_granularity": format_duration(jiffy_s), "tcp.rtt_resolution": "us"}
    overrides |= LINUX_STACK
    # tcp_tso_segs: "min_t(u32, tso_segs, sk->sk_gso_max_segs)", 1 on the testbed's veths.
    overrides["tcp.gso_max_size"] = "0B"
    # The client's switch port and the servers' NICs are tbf qdiscs; the other ports only carry ACKs and
    # requests, which a bucket at the link rate never keeps waiting, as the testbed's unshaped veths do not.
    overrides["link.token_bucket"] = f"{bucket_bytes(scenario)}B"
    if path_rtt_s is not None and not delay_line_s(scenario):
        overrides["link.rtt"] = format_duration(path_rtt_s)
    if scenario.tcp.recovery == "reno":
        overrides["tcp.recovery"] = "newreno"
    d = scenario.tcp.delayed_ack
    if isinstance(d, float) and math.isclose(d, 0.04):
        overrides["tcp.delayed_ack"] = "linux"
    return overrides


@dataclass(frozen=True)
class HostCost:
    """What the real hosts add to a block, measured with one server.

    ``testbed_block_ms`` and ``simulator_block_ms`` are the median block
    times of the scenario with one server on the testbed and in the
    simulator (with :func:`simulator_overrides`), over ``blocks`` blocks;
    ``overhead_ms`` is the first less the second. ``server_jitter_s`` is the
    ``workload.server_jitter`` with which the simulator's median equals the
    testbed's (to the microsecond): each server then starts its answer a
    uniform draw from [0, it] after the request, so the median one-server
    block is longer by about half of it. ``None`` when even no turnaround at
    all leaves the simulator slower. ``path_rtt_s``: the least ``tcpi_min_rtt``
    the testbed's server saw (None when it sampled none); the simulator's side
    ran over it (:func:`simulator_overrides`).
    """

    blocks: int
    testbed_block_ms: float
    simulator_block_ms: float
    overhead_ms: float
    server_jitter_s: float | None
    path_rtt_s: float | None

    def to_dict(self, calibrated: bool) -> dict[str, Any]:
        """JSON-safe, with ``calibrated``: whether the simulator ran with ``server_jitter_s``."""
        return {"servers": 1, **asdict(self), "calibrated": calibrated}

    def line(self, calibrated: bool) -> str:
        """One line for humans."""
        out = (
            f"hosts, one server, {self.blocks} blocks: block p50 {self.testbed_block_ms:.3f} ms on the testbed, "
            f"{self.simulator_block_ms:.3f} ms simulated ({self.overhead_ms:+.3f} ms per block); "
        )
        if self.path_rtt_s is not None:
            out += f"the path's least min_rtt {format_duration(self.path_rtt_s)}; "
        if self.server_jitter_s is None:
            return out + "no server turnaround makes the simulator's as short"
        out += f"a server turnaround up to {format_duration(self.server_jitter_s)} (workload.server_jitter) matches it"
        return out + (", and the simulator runs with it (--calibrate)" if calibrated else "")


def host_cost(scenario: Scenario, jiffy_s: float, timeout: str) -> HostCost:
    """Run ``scenario`` with one server on the testbed and in the simulator, and find the turnaround that matches.

    The simulator's median block time grows with ``workload.server_jitter``
    (its draws scale with it); bisection between none and twice the
    scenario's (doubled until it is slow enough, up to 1 s) finds the one of
    the testbed's median. The simulator runs over the path the testbed's server measured.
    Raises :class:`~incast.testbed.TestbedError` when the testbed run fails,
    and ``KeyboardInterrupt`` when it was interrupted.
    """
    one = scenario.with_overrides({"servers": 1, "blocks": HOST_COST_BLOCKS, "duration": None})
    bed = testbed.run(one, timeout=timeout)
    if bed.status == "interrupted":
        raise KeyboardInterrupt
    if bed.status != "complete":
        raise testbed.TestbedError(f"testbed: the one-server run that measures the hosts failed: {bed.error}")
    target = bed.block_time_ms.p50
    # Whole microseconds, as TCP_INFO gives them.
    path = None if bed.server_rtt is None else round(bed.server_rtt["min_rtt_ms"] * 1e3) / 1e6
    sim = one.with_overrides(simulator_overrides(one, jiffy_s, path))

    def block_ms(jitter_s: float) -> float:
        return simulate(sim.with_overrides({"workload.server_jitter": format_duration(jitter_s)})).block_time_ms.p50

    as_given = simulate(sim).block_time_ms.p50
    lo, hi = 0.0, max(2 * scenario.workload.server_jitter, 1e-4)
    found: float | None = None
    while block_ms(hi) < target and hi < _MAX_TURNAROUND_S:
        lo, hi = hi, min(2 * hi, _MAX_TURNAROUND_S)
    if block_ms(lo) <= target <= block_ms(hi):
        while hi - lo > 1e-6:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if block_ms(mid) < target else (lo, mid)
        found = round(hi, 6)
    return HostCost(HOST_COST_BLOCKS, target, as_given, target - as_given, found, path)


class Testbed(Reference):
    """The Linux stack in network namespaces; ``timeout`` is the read's limit per block (``incast testbed``).

    ``sample_every``: how often the servers' connections are sampled into each run's ``trace`` (None: not).

    ``turnaround``: the ``workload.server_jitter`` the simulator runs with beside it (``--calibrate``);
    ``path_rtt``: the testbed's path round trip :meth:`measure_hosts` found (:func:`simulator_overrides`).
    """

    name = "testbed"
    title = TITLE
    preset = "linux"

    def __init__(self, *, timeout: str = "60s", sample_every: float | None = None) -> None:
        self.timeout = timeout
        self.sample_every = sample_every
        self.turnaround: float | None = None
        self.path_rtt: float | None = None
        self._kernel: testbed.KernelClock | None = None

    @property
    def kernel(self) -> testbed.KernelClock:
        """This machine's kernel clock (:func:`incast.testbed.clock`), read once."""
        if self._kernel is None:
            self._kernel = testbed.clock()
        return self._kernel

    def measure_hosts(self, scenario: Scenario, *, calibrate: bool) -> HostCost:
        """:func:`host_cost` of ``scenario`` on this kernel; ``calibrate``: the simulator runs with the turnaround."""
        cost = host_cost(scenario, self.kernel.jiffy_s, self.timeout)
        self.turnaround = cost.server_jitter_s if calibrate else None
        self.path_rtt = cost.path_rtt_s
        return cost

    def require(self) -> None:
        try:
            testbed.require_privileges()
        except testbed.TestbedUnavailable as e:
            raise Unavailable(str(e)) from None

    def rules(self, scenario: Scenario) -> list[Rule]:
        return rules(scenario, available_congestion_controls())

    def notes(self, scenario: Scenario) -> list[str]:
        return testbed.notes(scenario)

    def fingerprint(self, scenario: Scenario) -> str:
        """SHA-256 of what the testbed sets up for ``scenario`` (:func:`incast.testbed.plan.plan`, without what
        it reads of the machine: :data:`_ANY_MACHINE`) and of the seed, which tells a point's repeated runs
        apart. A setting the testbed does not read, such as one only the simulator has, leaves a recorded run
        valid, and a record keeps its key wherever it is read."""
        plan = asdict(plan_of(scenario, *_ANY_MACHINE))
        for machine in ("notes", "rto_floor_s"):
            del plan[machine]
        text = json.dumps({"plan": plan, "seed": scenario.seed}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def simulator_overrides(self, scenario: Scenario) -> dict[str, Any]:
        hosts = {} if self.turnaround is None else {"workload.server_jitter": format_duration(self.turnaround)}
        return simulator_overrides(scenario, self.kernel.jiffy_s, self.path_rtt) | hosts

    def run(self, scenario: Scenario) -> dict[str, Any]:
        return testbed.run(scenario, timeout=self.timeout, sample_every=self.sample_every).to_dict()

    def figures(self, measured: dict[str, Any]) -> tuple[Figure, ...]:
        return KERNEL_FIGURES
