"""From a scenario to the testbed's settings: qdiscs, sysctls, route options and the read's options.

Each scenario field is honoured, noted or refused:

**Honoured.** ``servers``; ``workload.sru``/``block``, ``max_inflight``,
``stagger``; ``blocks``/``duration`` (wall time: no block starts after it,
``incast read --start-until``);
``link.rate`` (``tbf`` rate on the client's switch port and on every server's
NIC, counting 24 bytes of preamble, FCS and gap per frame as the simulator
does); ``link.loss`` (random loss on every direction of every link, an
nftables ``numgen random`` rule where each frame arrives, needing ``nft``:
Debian's nftables); ``switch.buffer`` (the client port's ``tbf`` byte limit; ``Npkt`` is
converted to N full frames of ``mss + 54`` bytes, what the qdisc counts per
frame: IP and TCP headers and the 14-byte Ethernet header); ``tcp.send_loss`` (each
data segment a server sends is lost at random as it reaches the switch, an nftables
rule: the sender believes it sent it); ``tcp.mss`` (every
MTU is ``mss + 40``); ``tcp.init_cwnd`` (route ``initcwnd``); ``tcp.rto_min``
(``net.ipv4.tcp_rto_min_us`` in every namespace, and route ``rto_min``, which
takes whole milliseconds only); ``tcp.rto_max`` (``net.ipv4.tcp_rto_max_ms``);
``tcp.delayed_ack`` off (route ``quickack 1`` and ``incast read --delayed-ack
off``); ``tcp.cc`` (the socket's congestion control, ``TCP_CONGESTION``: ``reno``,
``cubic`` or ``dctcp``); ``tcp.recovery`` (``sack`` turns ``tcp_sack`` on;
Linux's loss recovery is NewReno without SACK and SACK with RACK when SACK is
on); ``tcp.timestamps``,
``tcp.spurious_rto`` off/frto, ``tcp.dupack_threshold`` and
``tcp.restart_after_idle``, ``tcp.rack_tlp`` (``tcp_sack``, ``tcp_timestamps``,
``tcp_frto``, ``tcp_reordering``, ``tcp_slow_start_after_idle``,
``tcp_recovery`` and ``tcp_early_retrans``); ``tcp.rcv_wnd``,
``tcp.rcv_window`` and ``tcp.rcv_buf_max`` (``tcp_rmem`` of twice ``rcv_wnd``
up to ``rcv_buf_max``, the kernel offering half a buffer as window; autotuning,
``tcp_moderate_rcvbuf``, on with ``linux`` and off with ``fixed``). ECN is always off
(``tcp_ecn = 0``): ``tbf`` cannot mark. The congestion control is always set
explicitly, on every socket (``TCP_CONGESTION`` through ``incast serve`` and
``incast read --congestion``): a new namespace would otherwise inherit the
kernel's default (bbr here), and a namespace may not make a congestion control
its default unless ``tcp_allowed_congestion_control`` lists it (cubic is not
listed here), while root may set any available one per socket.

``link.rtt`` from 1 ms on (:data:`DELAY_LINE_MIN_S`: every TCP segment into the
client waits that long in a delay line, :mod:`incast.testbed.delay`, needing
``iptables-nft``: Debian's iptables).

**Noted** (a line in ``notes``): ``link.rtt`` below 1 ms (the RTT is what the veths give;
netem is not available), ``tcp.delayed_ack`` 40ms (Linux's quick-ACK mode and
adaptive ATO from 40 ms stand in for a fixed timeout), ``tcp.clock_granularity``
and ``tcp.rto_flavor`` other than the kernel's jiffy and ``linux``, RTT
samples in jiffies (``tcp.rtt_resolution = "clock"`` on a jiffy clock), timers
fired on their tick (``tcp.clock_wheel = "tick"`` on a jiffy clock; the kernel's
wheel fires them a tick later), Cubic other than ``tcp_cubic.c``'s arithmetic
(``tcp.cubic_flavor``) or without HyStart, recovery
``reno`` (runs as NewReno), ``tcp.limited_transmit`` false (Linux always
sends on the first duplicate ACKs), a packet-count buffer (converted),
``tcp.prr`` off (Linux always runs PRR, with or without SACK) or its
``prr_flavor`` other than ``linux``, with SACK a ``sack_recovery`` other than ``linux``,
``link.tx_queue`` (the kernel's qdiscs and TCP Small Queues decide when a
socket waits), ``link.token_bucket`` other than the testbed's own depth (every
port is a ``tbf`` of one frame and 100 µs of line), ``link.host_jitter`` (the
real hosts' own handling time), ``link.skew``,
the kernel's own rules of ``LINUX_STACK`` set otherwise (recovery exit, timer restart,
cwnd validation), the ns-2 and ns-3 stacks' rules (``_OTHER_STACKS``), ``tcp.sack_lost_retransmit``
(RACK finds them), ``tcp.pacing`` other than BBR's own, ``tcp.gso_max_size``,
``workload.request``, ``order`` or ``server_jitter`` (the
protocol's 24-byte request, the read's fixed order and the real servers' own timing). The
defaults of those last ones describe a real stack and are not noted.

**Refused** (:func:`rules`, one line naming the field): dctcp or any congestion control
the kernel lacks, ``switch.ecn_threshold``, what the one bridge and its reads do not
have (a topology other than the star, shared or QoS buffers, a frame-size admission
rule, PAUSE and PFC, priorities, background flows, open-loop traffic, a wide-area
delay model, Rude TCP, ICTCP), GIP, CMU09's randomized or
delayed timer, ``slow_start = false``, Eifel, an initial RTO other than 1 s,
a back-off cap, a delayed-ACK timeout Linux cannot run, non-default Cubic
constants or Linux-mode delayed-ACK knobs, a different TSval tick, and traces.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from typing import Any

from incast.presets import LINUX_STACK
from incast.reference.base import Rule, check
from incast.scenario import Scenario
from incast.testbed.kernel import KernelClock
from incast.testbed.netns import IPTABLES, LOSS_SCALE, MAX_SERVERS, Shaping
from incast.units import format_duration, format_rate

__all__ = ["DELAY_LINE_MIN_S", "TITLE", "Plan", "bucket_bytes", "delay_line_s", "plan", "rules"]

#: Slowest rate tc's tbf takes: it keeps the rate in bytes per second, so below 8 bit/s it is 0.
MIN_TBF_RATE = 8
#: IPv4 and TCP headers: the MTU is ``mss`` plus these.
_IP_TCP_HEADERS = 40
#: Bytes the qdisc counts for a full frame beyond the MSS: IP, TCP and Ethernet headers.
_QDISC_FRAME_OVERHEAD = 54
#: Linux's smallest accepted MSS (``tcp_min_snd_mss``).
_MIN_MSS = 48
#: Wire bytes of a frame beyond its payload: headers (54), FCS (4), preamble (8) and gap (12).
_WIRE_OVERHEAD = 78
#: The end of the testbed's refusals (:func:`~incast.reference.base.check`).
TITLE = "testbed"
#: The shortest link.rtt the delay line applies: below it a user-space process's timing would be most of it.
DELAY_LINE_MIN_S = 1e-3
#: Rules of the kernel's own (``LINUX_STACK``) a scenario may set otherwise, noted then with what Linux does.
_KERNEL_RULES = {
    "tcp.recovery_exit": "Linux sets cwnd to ssthresh as recovery ends (tcp_end_cwnd_reduction)",
    "tcp.rto_restart": "Linux rearms the timer whenever it retransmits the head (tcp_xmit_retransmit_queue)",
    "tcp.cwnd_validation": "Linux grows cwnd only while it limits the sender (tcp_is_cwnd_limited)",
}
#: Rules the simulator's ns-2 and ns-3 stacks differ by, noted when a scenario picks one.
_OTHER_STACKS = (
    "tcp.ca_increase",
    "tcp.partial_ack_window",
    "tcp.reno_recover_guard",
    "tcp.dupack_idle",
    "tcp.recovery_burst",
    "tcp.ssthresh_rule",
    "tcp.rto_backoff_reset",
    "tcp.rtt_timing",
    "tcp.limited_transmit_resends",
    "tcp.sack_blocks",
)
#: Fields the testbed refuses unless they keep their default, with what Linux does instead.
_FIXED = {
    "tcp.rto_initial": "Linux's initial RTO is 1s (TCP_TIMEOUT_INIT)",
    "tcp.rto_randomize": "Linux does not randomize its RTO",
    "tcp.rto_scheduling_delay": "the testbed cannot delay the kernel's timers",
    "tcp.rto_max_backoff": "Linux backs off up to tcp.rto_max only",
    "tcp.slow_start": "Linux always slow-starts",
    "tcp.gip": "Linux has no GIP",
    "tcp.cubic_beta": "the kernel's Cubic constants are fixed",
    "tcp.cubic_c": "the kernel's Cubic constants are fixed",
    "tcp.cubic_fast_convergence": "the kernel's Cubic constants are fixed",
    "tcp.delayed_ack_quickack_segments": "Linux's delayed ACK has fixed constants",
    "tcp.delayed_ack_ato_min": "Linux's delayed ACK has fixed constants",
    "tcp.delayed_ack_ato_max": "Linux's delayed ACK has fixed constants",
    "tcp.timestamp_tick": "Linux's TSval ticks every 1ms",
    "trace.goodput_bin": "the testbed records no traces",
    "trace.queue": "the testbed records no traces",
    "trace.flows": "the testbed records no traces",
    "trace.bbr": "the testbed records no traces",
    "trace.block_cwnd": "the testbed records no traces",
    "trace.pcap": "the testbed records no traces",
}


@dataclass(frozen=True)
class Plan:
    """Everything the testbed sets up for one scenario.

    ``shaping`` (rate, client-port buffer in bytes, MTU); ``congestion`` (the
    Linux congestion control); ``sysctls`` (the same in every host
    namespace) and ``routes`` (options of every host's ``ip route``);
    ``read_options`` and ``serve_options`` (command-line options of ``incast
    read`` and ``incast serve``); ``rto_floor_s`` (the shortest RTO the
    kernel can arm: RTO_min rounded up to whole ticks; the SRTT it adds makes
    it one tick more when RTO_min is a whole number of ticks); ``best_goodput_mbps`` (the link
    rate times payload over wire bytes of a full frame, as ``incast run``);
    ``notes`` (one line per field the testbed runs differently).
    """

    servers: int
    shaping: Shaping
    congestion: str
    sysctls: dict[str, str]
    routes: list[str]
    read_options: list[str]
    serve_options: list[str]
    rto_floor_s: float
    best_goodput_mbps: float
    notes: list[str] = field(default_factory=list)


def _value(data: dict[str, Any], path: str) -> Any:
    table, _, key = path.partition(".")
    return data[table][key]


def _rto_max_ms(s: Scenario) -> int:
    return round(float(s.tcp.rto_max) * 1e3)


def _linux_delayed_ack(d: float | str | None) -> bool:
    """Is ``tcp.delayed_ack`` one the testbed runs: off, Linux's own, or the fixed 40ms it stands in for?"""
    return d is None or d == "linux" or (isinstance(d, float) and math.isclose(d, 0.04))


def rules(s: Scenario, congestion_controls: list[str]) -> list[Rule]:
    """Every field the testbed restricts, on a kernel with these congestion controls (the module docstring)."""
    given, default = s.to_dict(), Scenario(servers=1).to_dict()
    tcp, d = s.tcp, s.tcp.delayed_ack
    delayed_ack = "off" if d is None else d if isinstance(d, str) else format_duration(d)
    return [
        Rule(
            "tcp.cc",
            tcp.cc not in congestion_controls,
            f"one this kernel offers ({', '.join(congestion_controls)}), not {tcp.cc}",
        ),
        *(
            Rule(path, _value(given, path) != _value(default, path), f"the default only: {why}")
            for path, why in _FIXED.items()
        ),
        Rule(
            "link.loss",
            s.link.loss > 0 and shutil.which("nft") is None,
            "0 only without nft: the testbed's random loss is an nftables rule (install Debian's nftables)",
        ),
        Rule(
            "link.rtt",
            delay_line_s(s) > 0 and shutil.which(IPTABLES) is None,
            f"below {format_duration(DELAY_LINE_MIN_S)} only without {IPTABLES}: the testbed's delay line "
            "takes segments from an xt NFQUEUE rule (install Debian's iptables)",
        ),
        Rule("topology.kind", s.topology.kind != "star", f'"star" only: one bridge is built, got {s.topology.kind!r}'),
        Rule("switch.buffer_model", s.switch.buffer_model != "static", '"static" only: the client port is one tbf'),
        Rule("switch.admission", s.switch.admission != "fits", '"fits" only: the tbf takes a frame that fits'),
        Rule("switch.pause", bool(s.switch.pause), "off only: the veths have no Ethernet flow control"),
        Rule("switch.pfc", bool(s.switch.pfc), "off only: the veths have no Ethernet flow control"),
        Rule("workload.priority", s.workload.priority != 0, "0 only: the testbed's ports have one class"),
        Rule("background.tcp_flows", s.background.tcp_flows != 0, "0 only: the testbed runs the reads alone"),
        Rule("background.udp_rate", s.background.udp_rate is not None, "none only: the testbed runs the reads alone"),
        Rule("traffic.load", s.traffic.load is not None, "none only: the testbed runs the reads alone"),
        Rule("traffic.query_rate", bool(s.traffic.query_rate), "0 only: the testbed runs the reads alone"),
        Rule("wan.delay", s.wan.delay is not None, "none only: the delay line holds a fixed link.rtt"),
        Rule(
            "tcp.send_loss",
            s.tcp.send_loss > 0 and shutil.which("nft") is None,
            "0 only without nft: the testbed's sender-side loss is an nftables rule (install Debian's nftables)",
        ),
        Rule("tcp.rude", bool(s.tcp.rude), "false only: Linux has no Rude TCP"),
        Rule("tcp.ictcp", bool(s.tcp.ictcp), "false only: Linux has no ICTCP receiver"),
        Rule("switch.ecn_threshold", s.switch.ecn_threshold is not None, '"off" only: the tbf port cannot mark ECN'),
        Rule("tcp.spurious_rto", tcp.spurious_rto == "eifel", '"off" or "frto": Linux has no Eifel'),
        Rule("servers", s.servers > MAX_SERVERS, f"at most {MAX_SERVERS}, one namespace each"),
        Rule("workload.clients", s.workload.clients != 1, f"1 only: one client namespace, got {s.workload.clients}"),
        Rule("tcp.mss", tcp.mss < _MIN_MSS, f"at least {_MIN_MSS} bytes, Linux's smallest, got {tcp.mss}"),
        Rule(
            "link.rate",
            s.link.rate < MIN_TBF_RATE,
            f"at least {format_rate(MIN_TBF_RATE)}: tc's tbf counts whole bytes per second, "
            f"got {format_rate(s.link.rate)}",
        ),
        Rule(
            "tcp.delayed_ack",
            not _linux_delayed_ack(d),
            f'Linux\'s delayed ACK ("40ms" or "linux") or "off", got {delayed_ack!r}',
        ),
        Rule(
            "tcp.rto_max",
            not 1000 <= _rto_max_ms(s) <= 120_000,
            f"1s to 120s, Linux's tcp_rto_max_ms, got {format_duration(tcp.rto_max)}",
        ),
    ]


def delay_line_s(s: Scenario) -> float:
    """The delay line's hold for ``s``: its ``link.rtt`` from :data:`DELAY_LINE_MIN_S` on, else none."""
    return float(s.link.rtt) if s.link.rtt >= DELAY_LINE_MIN_S else 0.0


def _rtt_note(s: Scenario) -> str:
    rtt = format_duration(s.link.rtt)
    if delay_line_s(s):
        return (
            f"link.rtt: a delay line holds every TCP segment into the client for {rtt} "
            "(incast.testbed.delay; the veths add their own microseconds)"
        )
    return f"link.rtt: {rtt} is not applied: the RTT is what the veths give (no netem)"


def _delayed_ack(s: Scenario, notes: list[str]) -> bool:
    """Is the delayed ACK on? A fixed 40ms runs as Linux's own, with a note."""
    d = s.tcp.delayed_ack
    if isinstance(d, float):
        notes.append(
            "tcp.delayed_ack: Linux's own delayed ACK (quick-ACK mode, then an adaptive timeout from 40ms) "
            "stands in for a fixed 40ms"
        )
    return d is not None


def _buffer_bytes(s: Scenario, notes: list[str]) -> int:
    buffer = s.switch.buffer  # bytes, or "64pkt"
    if not isinstance(buffer, str):
        return int(buffer)
    packets = int(buffer.removesuffix("pkt"))
    frame = int(s.tcp.mss) + _QDISC_FRAME_OVERHEAD
    notes.append(f"switch.buffer: {packets}pkt is a tbf limit of {packets} full frames of {frame} bytes")
    return packets * frame


def _shaping(s: Scenario, buffer: int) -> Shaping:
    return Shaping(
        rate=s.link.rate,
        buffer=buffer,
        mtu=s.tcp.mss + _IP_TCP_HEADERS,
        loss_ppb=round(s.link.loss * LOSS_SCALE),
        delay_s=delay_line_s(s),
        send_loss_ppb=round(s.tcp.send_loss * LOSS_SCALE),
    )


def bucket_bytes(s: Scenario) -> int:
    """The depth of the testbed's token buckets for ``s``, in bytes of line (:attr:`Shaping.bucket_line_bytes`)."""
    return _shaping(s, 0).bucket_line_bytes


def plan(s: Scenario, kernel: KernelClock, congestion_controls: list[str]) -> Plan:
    """The testbed's settings for ``s`` on a kernel with ``kernel``'s tick and these congestion controls.

    Raises :class:`~incast.reference.base.Refused` naming the first field the
    testbed cannot honour (:func:`rules`).
    """
    check(rules(s, congestion_controls), TITLE)
    tcp = s.tcp
    congestion = tcp.cc
    notes = [_rtt_note(s)]
    sack = tcp.recovery == "sack"
    default = Scenario(servers=1)
    delayed_ack = _delayed_ack(s, notes)
    buffer = _buffer_bytes(s, notes)
    if not math.isclose(tcp.clock_granularity, kernel.jiffy_s):
        notes.append(
            f"tcp.clock_granularity: the kernel ticks every {format_duration(kernel.jiffy_s)} (HZ={kernel.hz}), "
            f"not {format_duration(tcp.clock_granularity)}"
        )
    if tcp.clock_wheel != "linux" and tcp.clock_granularity > 0:
        notes.append("tcp.clock_wheel: the kernel's timer wheel (Linux 4.8 on) fires a timer a tick after it expires")
    if tcp.rtt_resolution != "us" and tcp.clock_granularity > 0:
        notes.append("tcp.rtt_resolution: the kernel measures RTT in microseconds, not in jiffies (Linux 3.15 on)")
    if tcp.rto_flavor != "linux":
        notes.append("tcp.rto_flavor: the kernel's RTO is Linux's, SRTT + max(4·mdev, RTO_min)")
    if tcp.recovery == "reno":
        notes.append("tcp.recovery: Linux recovers as NewReno (partial ACKs retransmit); reno runs as newreno")
    if not tcp.limited_transmit:
        notes.append("tcp.limited_transmit: Linux always sends new data on the first duplicate ACKs (RFC 3042)")
    if not tcp.prr:
        notes.append("tcp.prr: Linux (3.2 and later) always reduces the window by PRR (RFC 6937) in recovery")
    elif tcp.prr_flavor != "linux":
        notes.append("tcp.prr_flavor: the kernel counts PRR in packets as tcp_cwnd_reduction does (linux)")
    if sack and tcp.sack_recovery != "linux":
        notes.append("tcp.sack_recovery: the kernel resends only what it marked lost, then new data (linux)")
    if tcp.restart_after_idle and tcp.idle_restart != "linux":
        notes.append("tcp.idle_restart: after idle the kernel halves cwnd per idle RTO (tcp_cwnd_restart)")
    if tcp.cc == "cubic" and not tcp.cubic_hystart:
        notes.append("tcp.cubic_hystart: the kernel's Cubic runs HyStart (tcp_cubic's hystart, not per namespace)")
    if tcp.cc == "cubic" and tcp.cubic_flavor != "linux":
        notes.append("tcp.cubic_flavor: the kernel's Cubic is tcp_cubic.c's arithmetic (linux)")
    for name, rule in _KERNEL_RULES.items():
        if s.get(name) != LINUX_STACK[name]:
            notes.append(f"{name}: {rule}")
    for name in _OTHER_STACKS:
        if s.get(name) != default.get(name):
            notes.append(f"{name}: a rule of the simulator's ns-2 or ns-3 stack; the kernel runs its own")
    if tcp.sack_lost_retransmit:
        notes.append("tcp.sack_lost_retransmit: Linux finds lost retransmissions by RACK (tcp.rack_tlp)")
    if tcp.pacing and tcp.cc != "bbr":
        notes.append("tcp.pacing: the kernel paces BBR only (internal pacing: no fq qdisc here)")
    if tcp.gso_max_size != default.tcp.gso_max_size:
        notes.append("tcp.gso_max_size: every burst is one segment (the veths' gso_max_segs 1)")
    if s.link.tx_queue is not None:
        notes.append("link.tx_queue: a socket waits as the kernel decides (its qdiscs and TCP Small Queues)")
    if s.link.host_jitter != 0:
        notes.append("link.host_jitter: the real hosts take their own time to handle each frame")
    if s.link.skew != 0:
        notes.append("link.skew: the testbed's virtual links have no cables to differ")
    depth = bucket_bytes(s)
    if s.link.token_bucket not in (None, depth):
        notes.append(f"link.token_bucket: the testbed's ports are tbf buckets {depth} bytes deep (Shaping.burst)")
    wl = s.workload
    if wl.request != default.workload.request:
        notes.append("workload.request: every request is the protocol's 24-byte header")
    if wl.order != default.workload.order:
        notes.append("workload.order: incast read asks the servers in a fixed order")
    if wl.request_path != default.workload.request_path:
        notes.append("workload.request_path: the client's requests wait in its queue ahead of its ACKs (link)")
    if wl.server_jitter != default.workload.server_jitter:
        notes.append("workload.server_jitter: the real servers answer with their own timing")

    rto_min_us = max(1, math.ceil(round(tcp.rto_min * 1e6, 6)))
    rto_max_ms = _rto_max_ms(s)
    sysctls = {
        "net.ipv4.tcp_rto_min_us": str(rto_min_us),
        "net.ipv4.tcp_sack": str(int(sack)),
        "net.ipv4.tcp_timestamps": str(int(tcp.timestamps)),
        "net.ipv4.tcp_frto": "2" if tcp.spurious_rto == "frto" else "0",
        # RACK (tcp_recovery bit 1) and the tail loss probe (tcp_early_retrans 3); both need SACK.
        "net.ipv4.tcp_recovery": str(int(tcp.rack_tlp)),
        "net.ipv4.tcp_early_retrans": "3" if tcp.rack_tlp else "0",
        "net.ipv4.tcp_ecn": "0",
        "net.ipv4.tcp_reordering": str(tcp.dupack_threshold),
        "net.ipv4.tcp_slow_start_after_idle": str(int(tcp.restart_after_idle)),
        "net.ipv4.tcp_no_metrics_save": "1",
        # The kernel offers half a buffer as window (the default scaling ratio).
        "net.ipv4.tcp_rmem": f"4096 {2 * int(tcp.rcv_wnd)} {int(tcp.rcv_buf_max)}",
        "net.ipv4.tcp_moderate_rcvbuf": str(int(tcp.rcv_window == "linux")),
    }
    if rto_max_ms != 120_000:  # Linux's default; kernels before 6.15 have no tcp_rto_max_ms
        sysctls["net.ipv4.tcp_rto_max_ms"] = str(rto_max_ms)
    routes = ["initcwnd", str(tcp.init_cwnd)]
    rto_min_ms = tcp.rto_min * 1e3
    if rto_min_ms >= 1 and math.isclose(rto_min_ms, round(rto_min_ms)):
        routes += ["rto_min", f"{round(rto_min_ms)}ms"]  # the route takes whole milliseconds only
    if not delayed_ack:
        routes += ["quickack", "1"]

    read = ["--congestion", congestion, "--delayed-ack", "linux" if delayed_ack else "off"]
    read += ["--sru", f"{wl.sru}B"] if wl.sru is not None else ["--block", f"{wl.block}B"]
    if s.blocks is not None:
        read += ["--blocks", str(s.blocks)]
    if s.duration is not None:
        read += ["--start-until", format_duration(s.duration)]
    if wl.max_inflight is not None:
        read += ["--max-inflight", str(wl.max_inflight)]
    if wl.stagger:
        read += ["--stagger", format_duration(wl.stagger)]
    largest = wl.sru if wl.sru is not None else -(-(wl.block or 0) // s.servers)
    serve = ["--congestion", congestion, "--max-response", f"{max(largest, 64 * 2**20)}B"]

    payload = tcp.mss - (12 if tcp.timestamps else 0)
    best = s.link.rate * payload / (tcp.mss + _WIRE_OVERHEAD) / 1e6
    return Plan(
        servers=s.servers,
        shaping=_shaping(s, buffer),
        congestion=congestion,
        sysctls=sysctls,
        routes=routes,
        read_options=read,
        serve_options=serve,
        rto_floor_s=kernel.rto_floor_s(rto_min_us / 1e6),
        best_goodput_mbps=best,
        notes=notes,
    )
