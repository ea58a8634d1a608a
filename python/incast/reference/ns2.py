"""The same synchronized read in ns-2.35, the papers' simulator.

:func:`script` turns a scenario into the Tcl ns-2 runs: a parameter block
generated from the scenario, then the fixed text of ``ns2.tcl`` (package
data). :func:`run` runs it with ``ns`` and reads the result back.

What maps exactly: servers, blocks, the stripe unit (whole segments of
``tcp.mss``), link rate and delay (each of the four one-way hops gets
``link.rtt / 4``; server i's two links ``link.skew``·i longer), a drop-tail
port of ``"Npkt"`` packets toward the client,
the one-way agents ``Agent/TCP/Reno``, ``Newreno`` or ``Sack1`` with a sink
that ACKs every segment or delays ACKs (``TCPSink/DelAck``), the agent
settings of ``tcl/lib/ns-default.tcl`` each scenario setting stands for,
GIP's window reset at each stripe unit's head (``cwnd_`` set before the
unit's ``advanceby``) and its redundant copies at the unit's tail (the agents'
``ack_`` and ``dupacks_`` traced into a Tcl channel that resends through
``t_seqno_``, ``ns2_gip.tcl``, put before the run only then),
long-lived background flows into the client's port (``background.tcp_flows``
with ``background.tcp_to_client``: an FTP source each, ``ns2_background.tcl``),
and the constant-bit-rate UDP source into it (``background.udp_rate``: a CBR
source over UDP from a host of its own, ``ns2_udp.tcl``), each put before the
run only then, so every other script is as before.
CMU09 §7's randomized timeout (``tcp.rto_randomize``) and its back-off "until
the maximum factor of 64 * RTO" (``tcp.rto_max_backoff`` other than the
default) run in ns-2.35 patched as the paper's was, built by
:mod:`incast.reference.ns2_build` (its ``rto_random_`` set to 0.5, its
``max_backoff_`` to 2^N before the run); every other scenario runs in
Debian's ``ns`` and its Tcl as before (:func:`binary_for`).
:class:`Ns2` is this harness as a :class:`~incast.reference.base.Reference`:
what ns-2 cannot express are its :func:`rules`, what it approximates its notes.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from incast.errors import IncastError
from incast.reference import ns2_build
from incast.reference.base import Figure, Reference, Rule, Unavailable, star_read
from incast.result import Result
from incast.scenario import Scenario

__all__ = ["Ns2", "Ns2Error", "Ns2Run", "binary_for", "max_backoff", "patched", "rules", "run", "script"]

#: TCP/IP header bytes ns-2 adds to every data packet (``tcpip_base_hdr_size_``).
HEADERS = 40
#: What ns-2 adds to them with timestamps on (``ts_option_size_``).
TS_HEADER = 10
#: The engine's timestamp option, padded (RFC 7323).
TS_OPTION = 12
#: Ethernet header and FCS, the smallest frame, and the preamble and gap a frame occupies the link for.
ETHERNET, MIN_FRAME, PREAMBLE_IFG = 18, 64, 20
#: How often the barrier polls the sinks for the end of a block with delayed ACKs, in seconds.
POLL_S = 1e-5
#: Queue limit standing for "never drops" on the ports the engine does not bound.
UNBOUNDED = 1_000_000
#: The last line of ns2.tcl, which starts the simulation.
RUN = "$ns run\n"
#: ``max_ssthresh_`` standing for ``tcp.slow_start = false``: limited slow start (RFC 3742) that grows by
#: one segment per RTT above 2 segments, where the engine grows by one per RTT from 1.
NO_SLOW_START_MAX_SSTHRESH = 2
#: Payload bytes of the engine's UDP datagram as a TCP segment's would be (``workload::background::UDP_FRAME_PAYLOAD``):
#: its frame is a full 1518-byte one whatever ``tcp.mss`` is.
UDP_FRAME_PAYLOAD = 1460
#: ``rto_random_`` of the patched ns-2 (``ns2_rto_random.patch``): CMU09 §7's "timeout = RTO + (rand(0.5) * RTO)".
RTO_RANDOM = 0.5
#: The engine's default cap on the RTO's doublings (``tcp.rto_max_backoff``), beyond any that stays below RTO_max.
DEFAULT_MAX_BACKOFF = 64
#: Most doublings the patched agents' ``max_backoff_`` can stand for: ``t_backoff_`` is a C int (tcp.h).
MAX_NS2_DOUBLINGS = 30
#: What a machine without ns-2 lacks, and how to install it.
MISSING = "the ns command is missing; install it with apt-get install -y ns2"
#: FAST08 §5.1's timeout classes, under the engine's names (``crates/incast-sim/src/tcp/forensics.rs``).
FAST08_CLASSES = ("full_window_loss", "last_packet_loss", "lost_retransmit", "other")
#: GIP §III's timeout classes, under the engine's names.
GIP_CLASSES = ("floss", "lack", "other")
#: FAST08 Table 3's split of the lost retransmissions by DART against the duplicate-ACK threshold.
DART_SPLIT = ("lost_retransmit_dart_ge_thresh", "lost_retransmit_dart_lt_thresh")


class Ns2Error(IncastError):
    """ns-2 is missing or failed on a scenario it can express; the message is one line."""


@dataclass
class Ns2Run:
    """What one ns-2 run measured, with ``incast run``'s names where they mean the same."""

    scenario: Scenario
    block_time_ms: list[float]
    timeouts: int
    retransmitted_packets: int
    drops: int
    data_packets: int
    notes: list[str] = field(default_factory=list)
    #: The servers' timeouts by FAST08 §5.1 class, under the engine's names (``run(classes=True)``).
    timeout_classes: dict[str, int] | None = None
    #: The servers' timeouts by GIP §III class (``run(classes=True)``).
    gip_timeout_classes: dict[str, int] | None = None
    #: GIP §III's unluckiest flow per stripe unit, under the engine's names (``run(classes=True)``, :func:`unluckiest`).
    unluckiest: dict[str, float | None] | None = None

    @property
    def blocks(self) -> int:
        """Blocks completed."""
        return len(self.block_time_ms)

    @property
    def bytes_delivered(self) -> int:
        """Application bytes the client received (whole segments per server and block)."""
        return self.blocks * int(self.scenario.servers) * _segments(self.scenario) * int(self.scenario.tcp.mss)

    @property
    def goodput_mbps(self) -> float:
        """Application bytes over the time of all blocks, in Mbps."""
        total_s = sum(self.block_time_ms) / 1000.0
        return self.bytes_delivered * 8 / total_s / 1e6 if total_s > 0 else math.nan

    @property
    def best_goodput_mbps(self) -> float:
        """The link rate times payload over the link time of a full segment's packet, as the engine's frame."""
        s = self.scenario
        payload = int(s.tcp.mss) - (TS_OPTION if s.tcp.timestamps else 0)
        return float(s.link.rate) * payload / _segment_wire(s) / 1e6

    def to_dict(self) -> dict[str, Any]:
        """The figures ``incast validate`` compares, under ``incast run --json``'s keys."""
        times = sorted(self.block_time_ms)

        def pct(q: float) -> float | None:
            if not times:
                return None
            return times[min(len(times) - 1, max(0, math.ceil(q * len(times)) - 1))]

        return {
            "goodput_mbps": self.goodput_mbps,
            "best_goodput_mbps": self.best_goodput_mbps,
            "utilization": self.goodput_mbps / self.best_goodput_mbps,
            "blocks": self.blocks,
            "bytes_delivered": self.bytes_delivered,
            "block_time_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": times[-1] if times else None},
            "timeouts": self.timeouts,
            "retransmitted_packets": self.retransmitted_packets,
            "drops": self.drops,
            "data_packets": self.data_packets,
            "timeout_classes": self.timeout_classes,
            "gip_timeout_classes": self.gip_timeout_classes,
            **(self.unluckiest or {}),
            "notes": self.notes,
        }


def _segments(s: Scenario) -> int:
    block = s.workload.block
    unit = int(s.workload.sru) if block is None else math.ceil(int(block) / int(s.servers))
    return math.ceil(unit / int(s.tcp.mss))


def whole_segments(s: Scenario) -> tuple[Scenario, str | None]:
    """The scenario with each server's share rounded up to the whole segments ns-2 sends, and a note saying so.

    ns-2's one-way agents send whole ``packetSize_`` packets, so a 256 KiB SRU
    of 1000-byte segments is 263 segments there, where the engine would end
    each block with a 144-byte segment; a short last frame finds a full port
    of packets sooner, so the two would not run the same block.
    """
    segments, mss = _segments(s), int(s.tcp.mss)
    if s.workload.block is None:
        if int(s.workload.sru) == segments * mss:
            return s, None
        key, old, new = "workload.sru", int(s.workload.sru), segments * mss
    else:
        if int(s.workload.block) == segments * mss * int(s.servers):
            return s, None
        key, old, new = "workload.block", int(s.workload.block), segments * mss * int(s.servers)
    note = (
        f"{key}: both run {new:,} bytes ({segments} whole {mss}-byte segments per server) in place of {old:,}, "
        "as ns-2's agents send whole packets"
    )
    return s.with_overrides({key: f"{new}B"}), note


def response_classes(result: Result) -> dict[str, dict[str, int]]:
    """The simulator's servers' timeouts by class, as :func:`timeout_classes` counts ns-2's.

    The servers' only, as :func:`response_timeouts` says why.
    """
    t = result.timeouts_table
    t = t[t["side"] == "server"]
    fast08 = {c: int((t["class"] == c).sum()) for c in FAST08_CLASSES}
    lost = t[t["class"] == "lost_retransmit"]
    ge = int((lost["dart"] >= int(result.scenario.tcp.dupack_threshold)).sum())
    fast08 |= dict(zip(DART_SPLIT, (ge, len(lost) - ge), strict=True))
    gip = {c: int((t["gip_class"] == c).sum()) for c in GIP_CLASSES}
    return {"timeout_classes": fast08, "gip_timeout_classes": gip}


def response_timeouts(result: Result) -> tuple[int, str | None]:
    """The simulator's timeouts that ns-2 can have, those of the servers' responses, and a note on the rest.

    ns-2's request is a delay, so only its servers' agents time out. The
    engine's client sends its request over TCP, and the request's
    acknowledgment rides on the response: when every segment of a response's
    first window is lost, the client's timer expires too, and it resends the
    request. Those timeouts are real, but ns-2 has nothing to count them by.
    """
    if not result.scenario.get("stats.timeouts"):
        return result.timeouts, None
    client = int((result.timeouts_table["side"] == "client").sum())
    if client == 0:
        return result.timeouts, None
    note = (
        f"timeouts at {result.scenario.servers} servers: the simulator's servers' ({result.timeouts - client:,}) "
        f"only; its client timed out {client:,} more times on requests whose acknowledgment rode on a lost "
        "response (ns-2's request is a delay)"
    )
    return result.timeouts - client, note


def timeout_classes(
    s: Scenario, queue: Path, variables: Path, per_block: dict[tuple[int, int], list[int]] | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """The servers' timeouts of an ns-2 run by FAST08 §5.1 class and by GIP §III class.

    ``per_block``, if given, is filled with each (server, block)'s count of timeouts, FLoss-TOs
    and LAck-TOs (GIP §III's unluckiest flow per stripe unit, :func:`unluckiest`).

    The same rules as the engine's (``crates/incast-sim/src/tcp/forensics.rs``), from the agents'
    variable trace and the client port's queue trace: a timeout is an increment of ``nrexmit_``; DART is
    ``dupacks_`` before the timeout reset it; the head is ``ack_ + 1`` (the Tcl name of C++'s
    ``highest_ack_``), resent before if the port saw it twice by then; SND.MAX is ``maxseq_``, and a
    block's data are ``2 + (k-1)·S`` to ``1 + k·S`` (the handshake sends seqnos 0 and 1).
    """
    segments, threshold = _segments(s), int(s.tcp.dupack_threshold)
    sent: dict[tuple[int, int], list[float]] = {}
    with queue.open() as f:
        for line in f:
            w = line.split()
            if w[0] == "+" and w[4] == "tcp":
                sent.setdefault((int(w[7]), int(w[10])), []).append(float(w[1]))
    fast08 = dict.fromkeys(FAST08_CLASSES + DART_SPLIT, 0)
    gip = dict.fromkeys(GIP_CLASSES, 0)
    state: dict[int, dict[str, int]] = {}
    last: dict[int, tuple[str, float, int]] = {}  # each agent's previous line: variable, time, value before
    with variables.open() as f:
        for line in f:
            w = line.split()
            t, flow, var, value = float(w[0]), int(w[1]) - 2, w[5], int(float(w[6]))
            v = state.setdefault(flow, {"nrexmit_": 0, "dupacks_": 0, "ack_": -1, "maxseq_": -1})
            before = v[var]
            if var == "nrexmit_" and value > before:
                prev = last.get(flow)
                dart = prev[2] if prev and prev[0] == "dupacks_" and prev[1] == t else v["dupacks_"]
                head, maxseq = v["ack_"] + 1, v["maxseq_"]
                block = max(1, (maxseq - 2) // segments + 1)
                written = maxseq == 1 + block * segments
                if sum(x < t for x in sent.get((flow, head), ())) >= 2:
                    fast08["lost_retransmit"] += 1
                    fast08[DART_SPLIT[dart < threshold]] += 1
                elif written and maxseq - head < threshold:
                    fast08["last_packet_loss"] += 1
                elif dart == 0:
                    fast08["full_window_loss"] += 1
                else:
                    fast08["other"] += 1
                if dart == 0 and head == 2 + (block - 1) * segments:
                    gip_class = "floss"
                elif written and dart < threshold:
                    gip_class = "lack"
                else:
                    gip_class = "other"
                gip[gip_class] += 1
                if per_block is not None:
                    counts = per_block.setdefault((flow, block), [0, 0, 0])
                    counts[0] += 1
                    counts[1] += gip_class == "floss"
                    counts[2] += gip_class == "lack"
            v[var] = value
            last[flow] = (var, t, before)
    return fast08, gip


#: The engine's figures of GIP §III's unluckiest flow per stripe unit: all timeouts, FLoss-TOs, LAck-TOs.
UNLUCKIEST = (
    "unluckiest_flow_timeouts_per_block",
    "unluckiest_flow_floss_per_block",
    "unluckiest_flow_lack_per_block",
)


#: The metrics ns-2 measures only from its traces (``run(classes=True)``), under the engine's names.
TRACED = (
    *(f"timeout_classes.{c}" for c in FAST08_CLASSES),
    *(f"gip_timeout_classes.{c}" for c in GIP_CLASSES),
    *DART_SPLIT,
    *UNLUCKIEST,
)


def unluckiest(per_block: dict[tuple[int, int], list[int]], blocks: int) -> dict[str, float | None]:
    """GIP §III's "number of TOs suffered by the unluckiest flow per stripe unit", as the engine counts it:
    over the ``blocks`` completed blocks, the mean of the largest count of one server's timeouts in
    the block (then FLoss-TOs and LAck-TOs alone); a timeout belongs to the block its agent was sending."""
    if blocks == 0:
        return dict.fromkeys(UNLUCKIEST)
    out: dict[str, float | None] = {}
    for k, name in enumerate(UNLUCKIEST):
        worst = [
            max((c[k] for (_, b), c in per_block.items() if b == block), default=0) for block in range(1, blocks + 1)
        ]
        out[name] = sum(worst) / blocks
    return out


#: What the shared star rules refuse that ns-2 gives: a text put before the run (ns2_background.tcl, ns2_udp.tcl,
#: ns2_inflight.tcl), with rules of its own below, or the patched binary (tcp.rto_randomize, ns2_build).
_OVERLAID = ("background.tcp_flows", "background.udp_rate", "workload.max_inflight", "tcp.rto_randomize")


def max_backoff(s: Scenario) -> int | None:
    """The patched agents' ``max_backoff_`` for ``s``: the factor 2^N of ``tcp.rto_max_backoff`` = N doublings
    (the engine's ``RtoConfig::max_backoff``; CMU09 §7's 64·RTO is N = 6), or None at the default, which
    leaves ns-2.35's rtt_backoff as it is (doubling until maxrto_)."""
    n = int(s.tcp.rto_max_backoff)
    return None if n == DEFAULT_MAX_BACKOFF else 2**n


def patched(s: Scenario) -> bool:
    """Whether ``s`` runs in the patched ns-2 (:mod:`incast.reference.ns2_build`): only it has
    ``rto_random_`` and ``max_backoff_``."""
    return bool(s.tcp.rto_randomize) or max_backoff(s) is not None


def rules(s: Scenario) -> list[Rule]:
    """What ns-2's agents restrict, beyond :func:`~incast.reference.base.star_read`."""
    return [
        *(r for r in star_read(s) if r.setting not in _OVERLAID),
        Rule(
            "background.tcp_flows",
            s.background.tcp_flows != 0 and not s.background.tcp_to_client,
            "0, or flows into the client's port (background.tcp_to_client = true)",
        ),
        Rule(
            "workload.max_inflight",
            s.workload.max_inflight is not None and s.tcp.delayed_ack is not None,
            "a limit with tcp.delayed_ack off only: a held request goes when an agent learns its response completed",
        ),
        Rule(
            "tcp.rto_max_backoff",
            MAX_NS2_DOUBLINGS < int(s.tcp.rto_max_backoff) != DEFAULT_MAX_BACKOFF,
            f"{DEFAULT_MAX_BACKOFF} (no cap) or at most {MAX_NS2_DOUBLINGS} doublings: ns-2's t_backoff_ is a C int",
        ),
        Rule("tcp.cc", s.tcp.cc != "reno", "reno: the Reno, Newreno and Sack1 agents grow the window by RFC 5681"),
        Rule("tcp.rcv_window", s.tcp.rcv_window != "fixed", '"fixed": the agents\' window_ never grows'),
        Rule("tcp.spurious_rto", s.tcp.spurious_rto != "off", "spurious-timeout detection is not compared"),
        Rule("tcp.sack_lost_retransmit", bool(s.tcp.sack_lost_retransmit), "Sack1 has no lost-retransmit detection"),
        Rule("tcp.delayed_ack", isinstance(s.tcp.delayed_ack, str), '"off" or a fixed interval (TCPSink/DelAck)'),
        Rule(
            "background.udp_priority",
            s.background.udp_rate is not None and s.background.udp_priority != 0,
            "0 only: each port is one drop-tail FIFO",
        ),
    ]


def _notes(s: Scenario) -> list[str]:
    """What ns-2 runs differently from the engine on this scenario, one line each."""
    up, down = _delays(s)
    notes = [
        f"ns-2 has no Ethernet framing: its packets are as long as the engine's frames with preamble and gap "
        f"({_segment_wire(s)} bytes of data, {_wire(s, 0)} of ACK), and its links take "
        f"{up * 1e6:g} us toward the switch and {down * 1e6:g} us toward a host, the engine's cable and hosts",
        "the request is a delay (its serialization on the client's link, then the path), not a packet",
    ]
    if s.workload.request_path != "apart":
        notes.append(
            "workload.request_path: ns-2's request holds back none of the client's ACKs; the simulator's "
            'waits in the client\'s queue ahead of them (workload.request_path = "apart" runs it as ns-2 does)'
        )
    if s.servers > 1 and s.link.skew == 0:
        notes.append(
            "link.skew: every server's cable is as long, so frames of servers the port's own departures clock "
            "reach it at the same picosecond, and ns-2's scheduler and the engine (link.arrival_order) each break "
            "those ties their own way; --set link.skew=1ps breaks them by server in both"
        )
    if not isinstance(s.switch.buffer, str):
        notes.append(
            f"switch.buffer: {s.switch.buffer} bytes become {_queue(s)} packets "
            f"of {int(s.tcp.mss) + HEADERS + ETHERNET}-byte frames"
        )
    if s.background.tcp_flows:
        notes.append(
            f"background.tcp_flows: {s.background.tcp_flows} FTP source(s) from hosts of their own on the switch, "
            "started at time 0 with a handshake, where the engine's start established"
        )
    if s.background.udp_rate is not None:
        notes.append(
            f"background.udp_rate: a CBR source over UDP from a host of its own on the switch, one "
            f"{_udp_wire()}-byte datagram every {_udp_wire() * 8 / float(s.background.udp_rate) * 1e6:g} us "
            "from time 0 (one packet of the port's limit, as a data segment is), where the engine's reads start at "
            "time 0 and ns-2's after a handshake"
        )
    if s.tcp.delayed_ack is not None:
        notes.append(f"with delayed ACKs the block ends are found by polling the sinks every {POLL_S * 1e6:g} us")
    if s.tcp.rto_flavor != "ns2":
        notes.append(
            f"tcp.rto_flavor: ns-2 runs its own estimator (tcpTick_ {_tick(s) * 1e3:g} ms), not {s.tcp.rto_flavor!r}"
        )
    if s.tcp.clock_granularity:
        notes.append("tcp.clock_granularity: ns-2 timers are exact; only RTT samples use tcpTick_")
    factor = max_backoff(s)
    if factor is not None:
        notes.append(
            f"tcp.rto_max_backoff: ns-2.35 from Debian's source of ns2 2.35+dfsg-5 with ns2_max_backoff.patch "
            f"(build {ns2_build.digest()}): TcpAgent::rtt_backoff doubles the RTO while below maxrto_ "
            f"({float(s.tcp.rto_max):g} s) and below max_backoff_ {factor}·RTO ({s.tcp.rto_max_backoff} doublings)"
        )
    if s.tcp.rto_randomize:
        notes.append(
            f"tcp.rto_randomize: ns-2.35 from Debian's source of ns2 2.35+dfsg-5 with one patch "
            f"(ns2_rto_random.patch, build {ns2_build.digest()}): TcpAgent::set_rtx_timer arms the timer for "
            f"RTO + uniform({RTO_RANDOM:g}·RTO), drawn from ns-2's default generator"
        )
    if _segments(s) * s.tcp.mss != (s.workload.sru if s.workload.block is None else s.workload.block / s.servers):
        notes.append(f"each server sends {_segments(s)} whole {s.tcp.mss}-byte segments per block")
    ns2_recovery = (s.tcp.recovery_burst, s.tcp.recovery_exit, s.tcp.ssthresh_rule) == (2, "ssthresh", "ns2")
    if s.tcp.recovery == "newreno" and not ns2_recovery:
        notes.append("Agent/TCP/Newreno sends 2 segments per ACK in recovery and exits at ssthresh (preset ns2)")
    if s.tcp.recovery == "newreno" and s.tcp.partial_ack_window != "ns2":
        notes.append(
            "tcp.partial_ack_window: ns-2's NewReno takes a partial ACK's deflation beyond the window inflation "
            "out of the window its recovery exits at (partial_window_deflation_ 1); the simulator does not"
        )
    if s.tcp.recovery == "sack" and s.tcp.sack_recovery != "ns2":
        notes.append(
            "tcp.sack_recovery: ns-2's Sack1 estimates pipe_ with the holes in it and resends every hole below "
            "the highest SACK; the simulator runs RFC 6675"
        )
    if s.tcp.recovery == "reno" and (s.tcp.recovery_exit, s.tcp.ssthresh_rule) != ("ssthresh", "ns2"):
        notes.append(
            "Agent/TCP/Reno leaves recovery at the unrounded half window, below ssthresh at small windows "
            '(tcp.recovery_exit = "ssthresh" with tcp.ssthresh_rule = "ns2")'
        )
    if s.tcp.recovery == "reno" and not s.tcp.reno_recover_guard:
        notes.append(
            "tcp.reno_recover_guard: ns-2's Reno does not fast-retransmit again until an ACK passes recover_ "
            "(bug_fix_); the simulator does"
        )
    if s.tcp.recovery != "sack" and not s.tcp.dupack_idle:
        notes.append(
            "tcp.dupack_idle: ns-2's Reno and NewReno count an ACK that repeats the last one as a duplicate with "
            "nothing outstanding too, and the third cuts the window; the simulator does not"
        )
    if not s.tcp.slow_start:
        notes.append(
            f"tcp.slow_start: off in ns-2 as limited slow start with max_ssthresh_ {NO_SLOW_START_MAX_SSTHRESH} "
            "(RFC 3742): after a timeout cwnd goes from 1 to 2 in one RTT, then grows one segment per RTT "
            "as the engine's does from 1"
        )
    if s.tcp.limited_transmit and not s.tcp.limited_transmit_resends:
        notes.append(
            "tcp.limited_transmit_resends: ns-2's limited transmit (send_one) also resends after a timeout "
            "rewound the sender; the simulator sends new data only"
        )
    return notes


def _wire(s: Scenario, payload: int) -> int:
    """Bytes of link time the engine's frame carrying ``payload`` bytes of TCP data takes (``net::frame``)."""
    options = TS_OPTION if s.tcp.timestamps else 0
    return max(MIN_FRAME, payload + options + HEADERS + ETHERNET) + PREAMBLE_IFG


def _segment_wire(s: Scenario) -> int:
    """:func:`_wire` of a full segment: with timestamps its option comes out of the MSS, as the engine's
    does (``TcpConfig::segment_payload``), so the frame is as long as without them."""
    return _wire(s, int(s.tcp.mss) - (TS_OPTION if s.tcp.timestamps else 0))


def _udp_wire() -> int:
    """Bytes of link time the engine's UDP datagram takes (``sim::udp``): a full frame without TCP options."""
    return max(MIN_FRAME, UDP_FRAME_PAYLOAD + HEADERS + ETHERNET) + PREAMBLE_IFG


def _udp(s: Scenario) -> dict[str, str]:
    """``P(udp_rate)``, ``P(udp_wire)`` and ``P(udp_flow)`` with the UDP source on (``ns2_udp.tcl``), else nothing."""
    if s.background.udp_rate is None:
        return {}
    flow = int(s.servers) + int(s.background.tcp_flows)
    return {"udp_rate": f"{float(s.background.udp_rate):.0f}", "udp_wire": str(_udp_wire()), "udp_flow": str(flow)}


def _delays(s: Scenario) -> tuple[float, float]:
    """Seconds from a frame's last bit leaving a host to its arrival at the switch, and from the switch
    to a host: the cable, and the cable and that host's half of the rest of the RTT, as the engine places
    them (``net::link``, charged where the frame is received)."""
    rtt = round(float(s.link.rtt) * 1e12)
    cable = min(round(float(s.link.propagation) * 1e12), rtt // 4)
    return cable / 1e12, (cable + (rtt - 4 * cable) // 2) / 1e12


def _queue(s: Scenario) -> int:
    b = s.switch.buffer
    if isinstance(b, str):
        return int(b.removesuffix("pkt"))
    return max(1, int(b) // (int(s.tcp.mss) + HEADERS + ETHERNET))


def _tick(s: Scenario) -> float:
    return float(s.tcp.rto_tick) if s.tcp.rto_flavor == "ns2" else 1e-6


def _request_tx_s(s: Scenario) -> float:
    frame = max(MIN_FRAME, s.workload.request + HEADERS + ETHERNET) + PREAMBLE_IFG
    return float(frame * 8 / float(s.link.rate))


def parameters(s: Scenario, trace: Path | None = None, variables: Path | None = None) -> dict[str, str]:
    """The Tcl array ``P`` for scenario ``s`` (values as Tcl words)."""
    up, down = _delays(s)
    data, ack = _segment_wire(s), _wire(s, 0)
    agent = {"reno": "Reno", "newreno": "Newreno", "sack": "Sack1"}[s.tcp.recovery]
    d = s.tcp.delayed_ack
    sink = ("TCPSink/Sack1" if agent == "Sack1" else "TCPSink") + ("" if d is None else "/DelAck")
    return (
        {
            "seed": str(s.seed % 2**31 or 1),
            "servers": str(s.servers),
            "blocks": str(s.blocks),
            "segments": str(_segments(s)),
            "packet": str(data - HEADERS - (TS_HEADER if s.tcp.timestamps else 0)),
            "wire": str(data),
            "ack": str(ack),
            "sack_blocks": str(s.tcp.sack_blocks or (3 if s.tcp.timestamps else 4)),
            "init_cwnd": str(s.tcp.init_cwnd),
            "gip_head_cwnd": str(s.tcp.gip_head_cwnd if s.tcp.gip != "off" else 0),
            "window": str(max(1, int(s.tcp.rcv_wnd) // s.tcp.mss)),
            "rto_min": repr(float(s.tcp.rto_min)),
            "rto_max": repr(float(s.tcp.rto_max)),
            "rto_initial": repr(float(s.tcp.rto_initial)),
            "tick": repr(_tick(s)),
            "dupack_threshold": str(s.tcp.dupack_threshold),
            "limited_transmit": str(int(bool(s.tcp.limited_transmit))),
            "restart_after_idle": "true" if s.tcp.restart_after_idle else "false",
            "timestamps": "true" if s.tcp.timestamps else "false",
            "delayed_ack": repr(0.1 if d is None else float(d)),
            "rate": f"{float(s.link.rate):.0f}",
            "up": repr(up),
            "down": repr(down),
            "skew": repr(float(s.link.skew)),
            "queue": str(_queue(s)),
            "unbounded": str(UNBOUNDED),
            "agent": agent,
            "sink": sink,
            "poll": repr(0.0 if d is None else POLL_S),
            "ack_path": repr(2 * ack * 8 / float(s.link.rate) + up + down),
            # Three round trips of a data frame and its ACK: one agent's SYN and
            # first segment are answered before the next agent's SYN leaves.
            "handshake_gap": repr(3 * (2 * (data + ack) * 8 / float(s.link.rate) + 2 * (up + down))),
            "request_tx": repr(_request_tx_s(s)),
            "request_path": repr(up + _request_tx_s(s) + down),
            "jitter": repr(float(s.workload.server_jitter)),
            "shuffle": str(int(s.workload.order == "shuffled")),
            "trace": "" if trace is None else str(trace),
            "vars": "" if variables is None else str(variables),
        }
        | ({"background": str(s.background.tcp_flows)} if s.background.tcp_flows else {})
        | ({"max_inflight": str(s.workload.max_inflight)} if s.workload.max_inflight is not None else {})
        | _gip_copies(s)
        | _udp(s)
    )


def _gip_copies(s: Scenario) -> dict[str, str]:
    """``P(gip_pattern)`` and ``P(gip_copies)`` when GIP sends redundant copies (``ns2_gip.tcl``), else nothing."""
    if s.tcp.gip == "off" or s.tcp.gip_copies == 0:
        return {}
    return {"gip_pattern": str(s.tcp.gip), "gip_copies": str(s.tcp.gip_copies)}


def script(s: Scenario, trace: Path | None = None, variables: Path | None = None) -> str:
    """The complete Tcl for scenario ``s``; :class:`~incast.reference.base.Refused` first if ns-2 cannot run it.

    ``trace``: the client port's queue trace goes there; ``variables``: the server agents' trace of
    ``nrexmit_``, ``dupacks_``, ``ack_`` and ``maxseq_``.
    """
    Ns2().check(s)
    lines = ["# Generated by incast from the scenario; the text below the parameters is ns2.tcl."]
    lines += [f"set P({k}) {{{v}}}" for k, v in parameters(s, trace, variables).items()]
    if not s.tcp.slow_start:
        # FAST08 §5.1.3 disables slow start; RFC 3742's limited slow start with max_ssthresh_ 2 grows
        # cwnd by one segment per RTT from 2 on (tcp.cc opencwnd: K = int(cwnd_ / (0.5 * max_ssthresh_))).
        lines.append(f"Agent/TCP set max_ssthresh_ {NO_SLOW_START_MAX_SSTHRESH}")
    if patched(s):
        # CMU09 §7's timer, in the ns-2 ns2_build patches (Debian's ns has no rto_random_ nor max_backoff_).
        lines.append(f"# ns-2.35 with ns2_build's patches, build {ns2_build.digest()}")
    if s.tcp.rto_randomize:
        lines.append(f"Agent/TCP set rto_random_ {RTO_RANDOM}")
    factor = max_backoff(s)
    if factor is not None:
        lines.append(f"Agent/TCP set max_backoff_ {factor}")
    files = resources.files("incast.reference")
    template = files.joinpath("ns2.tcl").read_text(encoding="utf-8")
    # The background traffic's text, GIP's copies and the client's request limit go before the run; a scenario
    # without them runs ns2.tcl unchanged.
    parts = (
        ("ns2_background.tcl", s.background.tcp_flows),
        ("ns2_udp.tcl", _udp(s)),
        ("ns2_gip.tcl", _gip_copies(s)),
        ("ns2_inflight.tcl", s.workload.max_inflight is not None),
    )
    extra = [name for name, on in parts if on]
    if extra:
        head, run_line = template.rsplit(RUN, 1)
        template = head + "".join(files.joinpath(n).read_text(encoding="utf-8") for n in extra) + RUN + run_line
    return "\n".join(lines) + "\n" + template


def binary_for(s: Scenario) -> str:
    """The ns-2 that runs ``s``: the patched one if :func:`patched` (:func:`ns2_build.binary`, built on
    first use), else Debian's ``ns`` on PATH."""
    if patched(s):
        try:
            return str(ns2_build.binary())
        except ns2_build.BuildError as e:
            raise Ns2Error(str(e)) from None
    ns = shutil.which("ns")
    if ns is None:
        raise Ns2Error(f"ns-2: {MISSING}")
    return ns


def run(s: Scenario, *, trace: Path | None = None, classes: bool = False, timeout_s: float = 3600.0) -> Ns2Run:
    """Run scenario ``s`` in ns-2.35 (:func:`binary_for`) and return what it measured.

    ``classes``: also sort the servers' timeouts into FAST08's and GIP's classes
    (:func:`timeout_classes`), from traces written to a temporary directory (about
    100 bytes per packet and per ACK).
    """
    ns = binary_for(s)
    found: tuple[dict[str, int], dict[str, int]] | None = None
    per_block: dict[tuple[int, int], list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="incast-ns2-") as tmp:
        queue = trace or (Path(tmp) / "queue.tr" if classes else None)
        variables = Path(tmp) / "vars.tr" if classes else None
        path = Path(tmp) / "incast.tcl"
        path.write_text(script(s, queue, variables), encoding="utf-8")
        try:
            done = subprocess.run([ns, str(path)], capture_output=True, text=True, timeout=timeout_s, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns-2: no result within {timeout_s:g} s") from None
        if classes and done.returncode == 0 and queue is not None and variables is not None:
            found = timeout_classes(s, queue, variables, per_block)
    times: list[float] = []
    counters: list[int] | None = None
    for line in done.stdout.splitlines():
        word, *rest = line.split()
        if word == "block":
            times.append(float(rest[1]))
        elif word == "counters":
            counters = [int(v) for v in rest]
    if done.returncode != 0 or counters is None:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Ns2Error(f"ns-2 failed (status {done.returncode}): {last}")
    timeouts, retransmitted, drops, data = counters
    fast08, gip = found if found is not None else (None, None)
    worst = unluckiest(per_block, len(times)) if found is not None else None
    return Ns2Run(s, times, timeouts, retransmitted, drops, data, _notes(s), fast08, gip, worst)


#: The servers' timeouts by class (FAST08 §5.1, GIP §III), compared when the run counted them (``--classes``).
CLASS_FIGURES = (
    Figure("timeouts: full window loss", "timeout_classes", "full_window_loss"),
    Figure("timeouts: lost retransmit", "timeout_classes", "lost_retransmit"),
    Figure("timeouts: last packet loss", "timeout_classes", "last_packet_loss"),
    Figure("timeouts: other", "timeout_classes", "other"),
    Figure("timeouts: FLoss-TO", "gip_timeout_classes", "floss"),
    Figure("timeouts: LAck-TO", "gip_timeout_classes", "lack"),
)


class Ns2(Reference):
    """ns-2.35 as a reference; ``classes``: also count the servers' timeouts by class (:func:`timeout_classes`)."""

    name = "ns2"
    title = "ns-2.35"
    preset = "ns2"

    def __init__(self, *, classes: bool = False) -> None:
        self.classes = classes

    def require(self) -> None:
        if shutil.which("ns") is None:
            raise Unavailable(f"ns-2: {MISSING}")

    def rules(self, scenario: Scenario) -> list[Rule]:
        return rules(scenario)

    def notes(self, scenario: Scenario) -> list[str]:
        return _notes(scenario)

    def prepare(self, scenario: Scenario) -> tuple[Scenario, list[str]]:
        s, note = whole_segments(scenario)
        return s, [note] if note else []

    def run(self, scenario: Scenario) -> dict[str, Any]:
        return run(scenario, classes=self.classes).to_dict()

    def fingerprint(self, scenario: Scenario) -> str:
        """The SHA-256 of the Tcl ns-2 runs (without traces; they do not change the run)."""
        return hashlib.sha256(script(self.prepare(scenario)[0]).encode()).hexdigest()

    def simulator_figures(self, result: Result) -> tuple[dict[str, Any], list[str]]:
        timeouts, note = response_timeouts(result)
        counted = {"timeouts": timeouts} | (response_classes(result) if self.classes else {})
        return result.to_dict() | counted, [note] if note else []

    def figures(self, measured: dict[str, Any]) -> tuple[Figure, ...]:
        return CLASS_FIGURES if measured.get("timeout_classes") else ()
