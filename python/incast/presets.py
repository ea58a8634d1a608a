"""Named presets: documented bundles of settings for the remedies people compare.

A preset sits between the engine defaults and everything the user says: a
scenario file, keyword fields, named CLI options and ``--set`` all override
it. ``incast presets`` lists them; ``incast run --preset NAME`` and
``incast.run(preset=NAME, ...)`` apply one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from incast.errors import ScenarioError
from incast.scenario import apply_overrides

__all__ = ["LINUX_STACK", "PRESETS", "Preset", "preset_base", "preset_overrides", "with_preset"]


@dataclass(frozen=True)
class Preset:
    """A named bundle of settings (dotted names, values as in TOML)."""

    name: str
    summary: str
    why: str
    settings: Mapping[str, Any]


#: How the Linux kernel's TCP works where the engine offers a choice: not settings a Linux user picks (sysctls and
#: socket options, which the testbed applies from the scenario) but the kernel's own rules. Each is the engine's model
#: of one kernel function: the RTO of tcp_rtt_estimator and tcp_set_rto; new data on the first duplicate ACKs (RFC 3042;
#: Linux has no switch for it); cwnd = ssthresh when recovery ends (tcp_end_cwnd_reduction); the retransmission timer
#: rearmed whenever the head is retransmitted (tcp_xmit_retransmit_queue); cwnd grown only while it limits the sender
#: (tcp_is_cwnd_limited); the window after idle halved per idle RTO (tcp_cwnd_restart); Cubic's HyStart (tcp_cubic's
#: hystart, on since 2.6.29) and its arithmetic (bictcp_update in jiffies and whole segments, the growth rate recomputed
#: at most every HZ/32 jiffies while cwnd holds); timers fired as Linux 4.8's wheel fires them, a tick after they expire
#: (calc_index; tcp.clock_wheel); PRR as tcp_cwnd_reduction counts it, every retransmission within its quota
#: (tcp.prr_flavor, read where tcp.prr is on); with SACK, only what is marked lost resent, then new data
#: (tcp.sack_recovery; forward retransmission left in 4.15). Presets of a Linux host include it and ``incast validate``
#: runs the simulator with it. RACK-TLP is a sysctl (tcp_recovery, tcp_early_retrans), so the presets set
#: ``tcp.rack_tlp`` and the testbed applies it; since Linux 4.4 RACK is also what finds lost retransmissions, which
#: older kernels found by sequence (``tcp.sack_lost_retransmit``, in ``linux-2.6``).
LINUX_STACK: dict[str, Any] = {
    "tcp.rto_flavor": "linux",
    "tcp.limited_transmit": True,
    "tcp.recovery_exit": "ssthresh",
    "tcp.rto_restart": "head_retransmit",
    "tcp.cwnd_validation": "linux",
    "tcp.idle_restart": "linux",
    "tcp.cubic_hystart": True,
    "tcp.cubic_flavor": "linux",
    "tcp.clock_wheel": "linux",
    "tcp.prr_flavor": "linux",
    "tcp.sack_recovery": "linux",
}

#: Every preset, by name.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            "linux",
            "The Linux stack the testbed runs: Cubic on SACK recovery, timestamps, F-RTO, IW 10, Linux delayed "
            "ACK and RTO on 4 ms jiffies, and the kernel's own recovery rules.",
            "The kernel's defaults (tcp_congestion_control cubic on most distributions; bbr on this machine, "
            "but the testbed sets the congestion control per socket), tcp_sack, tcp_timestamps and "
            "tcp_frto on, RACK-TLP with SACK and Proportional Rate Reduction (tcp_recovery 1, "
            "tcp_early_retrans 3; PRR since 3.2), IW 10 (RFC 6928, Linux 2.6.39), RTO_min 200 ms on a "
            "HZ=250 clock with the "
            "tcp_rtt_estimator formula fed microsecond RTT samples (Linux 3.15, 'tcp: switch rtt "
            "estimations to usec resolution'; tcp.rtt_resolution); and how the kernel recovers "
            "(LINUX_STACK): it always sends on the "
            "first duplicate ACKs, leaves recovery at ssthresh (tcp_end_cwnd_reduction), rearms the "
            "retransmission timer whenever it retransmits the head (tcp_xmit_retransmit_queue) and grows "
            "cwnd only while it limits the sender (tcp_is_cwnd_limited), halves it per RTO of idle "
            "(tcp_cwnd_restart), and sends within PRR's quota as tcp_cwnd_reduction counts it, in whole "
            "packets, the head a partial ACK leaves included (tcp.prr_flavor linux), resends with SACK only what "
            "it marked lost before new data (tcp.sack_recovery linux); RACK also finds retransmissions "
            "lost again (tcp_rack_mark_skb_lost). incast validate runs its scenarios over this preset and "
            "the simulator "
            "with LINUX_STACK. The receive window grows by tcp_grow_window and receive-buffer autotuning "
            "(tcp_moderate_rcvbuf, tcp_rmem 128 KiB to 32 MiB). Cubic ends slow start by HyStart "
            "(tcp_cubic's hystart = 1: tcp.cubic_hystart) and grows as tcp_cubic.c computes it, in jiffies and "
            "whole segments, its growth rate recomputed at most every HZ/32 jiffies while cwnd holds and its "
            "epoch shifted past idle time (tcp.cubic_flavor linux).",
            {
                "tcp.cc": "cubic",
                "tcp.recovery": "sack",
                "tcp.timestamps": True,
                "tcp.spurious_rto": "frto",
                "tcp.init_cwnd": 10,
                "tcp.rto_min": "200ms",
                "tcp.clock_granularity": "4ms",
                "tcp.rtt_resolution": "us",
                "tcp.delayed_ack": "linux",
                "tcp.rack_tlp": True,
                "tcp.prr": True,
                "tcp.rcv_window": "linux",
                **LINUX_STACK,
            },
        ),
        Preset(
            "linux-2.6",
            "The Linux 2.6.28 of CMU09's and SIGCOMM09's clusters: Cubic on SACK recovery, timestamps, F-RTO, "
            "IW 3, 1 ms jiffies, no RACK, TLP or PRR.",
            "CMU09 §4-6 and SIGCOMM09 ran Linux 2.6.28 with a 1 ms jiffy ('1ms jiffy-based RTO_min', CMU09 "
            "§6), RTT samples counted in those jiffies (tcp.rtt_resolution clock, the default) and SRTT, mdev and "
            "rttvar kept in whole jiffies by tcp_rtt_estimator (its RTO at least 3 jiffies); Cubic has "
            "been the default since 2.6.19, SACK, timestamps and F-RTO (tcp_frto 2) were on; "
            "the initial window was RFC 3390's three 1460-byte segments (IW 10 came in 2.6.39), PRR in 3.2, "
            "TLP in 3.10 and RACK in 4.4, so none of them (tcp.rack_tlp off), nor HyStart (2.6.29); lost "
            "retransmissions were found by sequence (tcp_mark_lost_retrans: tcp.sack_lost_retransmit). The other "
            "recovery rules of "
            "LINUX_STACK were already there (cwnd validation in an older form that let cwnd grow while at "
            "most three segments of it were unused; modelled by today's), but not the retransmission of only "
            "what is marked lost: 2.6 also resent unSACKed data not yet lost when it had no new data to send "
            "(forward retransmission, RFC 6675's NextSeg rule 3: tcp.sack_recovery rfc6675, whose rescue "
            "retransmission 2.6 did not have). Its rate-halving during "
            "recovery (tcp_cwnd_down) is not modelled, nor its receive-buffer autotuning, which sized the "
            "buffer by another formula than today's: the window stays at 64 KiB (tcp.rcv_window fixed). Cubic's "
            "arithmetic is today's tcp_cubic.c (tcp.cubic_flavor linux), whose shift of the epoch past idle time "
            "(CA_EVENT_TX_START) came after 2.6.28. Its timer wheel fired a timer on the tick it expired at "
            "(tcp.clock_wheel tick; the wheel that rounds expiries up came in 4.8).",
            {
                "tcp.cc": "cubic",
                "tcp.recovery": "sack",
                "tcp.timestamps": True,
                "tcp.spurious_rto": "frto",
                "tcp.init_cwnd": 3,
                "tcp.rto_min": "200ms",
                "tcp.clock_granularity": "1ms",
                "tcp.delayed_ack": "linux",
                "tcp.sack_lost_retransmit": True,
                **LINUX_STACK,
                "tcp.cubic_hystart": False,
                "tcp.sack_recovery": "rfc6675",
                "tcp.clock_wheel": "tick",
            },
        ),
        Preset(
            "ns2",
            "ns-2.35's one-way TCP as ns-default.tcl sets it up: 1000-byte packets, IW 2, a 20-packet window, "
            "an ACK per segment.",
            "The stack of the papers' simulations (FAST08 §4-5, CMU09 §3, GIP §VII), so their figures can be "
            "run as they were: packetSize_ 1000, windowInit_ 2, window_ 20, singledup_ 1 (limited transmit, "
            "which after a timeout resends the next segment in sequence: tcp.limited_transmit_resends), "
            "minrto_ 0.2 s, maxrto_ 60 s, rtxcur_init_ 3 s, tcpTick_ 10 ms (tcl/lib/ns-default.tcl) with the "
            'estimator of TcpAgent::rtt_update (tcp.rto_flavor = "ns2"), NewReno\'s two new segments per '
            "ACK in recovery and its exit at ssthresh (tcp.recovery_burst, tcp.recovery_exit; "
            "tcp/tcp-newreno.cc), the ssthresh cut of TcpAgent::slowdown at every loss event "
            '(tcp.ssthresh_rule = "ns2"), the retransmission timer restarted by a fast retransmission '
            "(dupack_action's reset_rtx_timer(1,0): tcp.rto_restart = \"fast_retransmit\"), Reno's wait "
            "for an ACK beyond recover_ before it fast-retransmits again, NewReno's guard "
            "(RenoTcpAgent::dupack_action with bug_fix_: tcp.reno_recover_guard), an ACK that repeats the "
            "last one counted as a duplicate with nothing outstanding too, the third cutting the window "
            "(TcpAgent::recv: tcp.dupack_idle), the deflation of a "
            "partial ACK taken from the window inflation first and the rest from the window recovery exits at "
            '(NewRenoTcpAgent::partialnewack, partial_window_deflation_ 1: tcp.partial_ack_window = "ns2"), '
            "Sack1's loss recovery (an estimated pipe_ that keeps the holes, every hole below the highest "
            'SACK resent in order, the scoreboard cleared by a timeout: tcp.sack_recovery = "ns2"), '
            "at most three SACK blocks an ACK (TCPSink's maxSackBlocks_: tcp.sack_blocks), "
            "RTT samples from one timed segment at a time, which a fast retransmission or timeout cancels "
            '(TcpAgent::output, newack, reset_rtx_timer: tcp.rtt_timing = "ns2"), '
            "and ns-2's restart "
            "after idle: the timer the last ACK re-armed "
            "expires with nothing outstanding and cwnd falls to one segment "
            '(tcp.idle_restart = "ns2"); frames arriving at one instant taken in the order their '
            "transmissions started, the younger run of back-to-back frames first, as ns-2's scheduler runs "
            'events of one time in the order it scheduled them (link.arrival_order = "wire"); TCPSink '
            "ACKs every segment (tcp/tcp-sink.cc); servers answer at once; a request is no packet of the "
            "client's but a delay that holds back none of its ACKs, as ns-2's one-way agents have no "
            'request to send (workload.request_path = "apart"). incast validate --against ns2 runs '
            "ns-2.35 itself on the same scenario.",
            {
                "tcp.mss": 1000,
                "tcp.init_cwnd": 2,
                "tcp.rcv_wnd": "20000B",
                "tcp.limited_transmit": True,
                "tcp.limited_transmit_resends": True,
                "tcp.restart_after_idle": True,
                "tcp.idle_restart": "ns2",
                "tcp.delayed_ack": "off",
                "tcp.rto_min": "200ms",
                "tcp.rto_max": "60s",
                "tcp.rto_initial": "3s",
                "tcp.rto_flavor": "ns2",
                "tcp.ssthresh_rule": "ns2",
                "tcp.recovery_exit": "ssthresh",
                "tcp.recovery_burst": 2,
                "tcp.partial_ack_window": "ns2",
                "tcp.sack_recovery": "ns2",
                "tcp.sack_blocks": 3,
                "tcp.rtt_timing": "ns2",
                "tcp.rto_tick": "10ms",
                "tcp.rto_restart": "fast_retransmit",
                "tcp.reno_recover_guard": True,
                "tcp.dupack_idle": True,
                "workload.server_jitter": "0",
                "workload.request_path": "apart",
                "link.arrival_order": "wire",
            },
        ),
        Preset(
            "ns3",
            "ns-3 3.44's TCP as its incast reference harness runs it: NewReno with SACK recovery and PRR, IW 10, "
            "an ACK per segment, no restart after idle, the back-off dropped on every new ACK.",
            "So a scenario can be compared with ns-3 (python/incast/reference/ns3.py, docs/validation/ns3.md): "
            "TcpSocketBase::Sack on (tcp.recovery = \"sack\"), TcpSocket::DelAckCount 1, InitialCwnd 10, "
            "SegmentSize 1460, 1 MiB socket buffers (the window never limits), LimitedTransmit on, cwnd set "
            "to ssthresh when recovery ends (tcp.recovery_exit), ssthresh cut from half of RFC 6675's pipe, "
            "the head counted lost at a fast retransmit (TcpSocketBase::EnterRecovery and ReTxTimeout pass "
            'BytesInFlight() to GetSsThresh: tcp.ssthresh_rule = "ns3"), no restart after idle '
            "(TcpSocketBase has none), the RTO recomputed without back-off on every ACK of new data "
            "(TcpSocketBase::NewAck: "
            'tcp.rto_backoff_reset = "new_ack"), capped at 60 s, the RFC 6298 formula (ns-3\'s with '
            "ClockGranularity 0; its default 1 ms adds max(G, 4·RTTVAR), which no setting here expresses), "
            "servers answering at once, and what the packet-by-packet comparison found "
            "(docs/validation/ns3.md): frames "
            "arriving at one instant in the order their transmissions started, an arrival at the instant a "
            'port\'s frame ends ahead of that departure (ns-3\'s scheduler: link.arrival_order = "ns3"), a port '
            "taking frames only while a full-sized one would fit (a device queue stops with less than an MTU "
            'free: switch.admission = "full_frame"), TcpPrrRecovery as TcpSocketBase calls it (tcp.prr, '
            'tcp.prr_flavor = "ns3"), TcpTxBuffer\'s pipe, NextSeg without a rescue retransmission, its '
            "sending after a timeout and the timer restarted by a recovery's first partial ACK only "
            '(tcp.sack_recovery = "ns3"), and TcpNewReno\'s increase in whole bytes (tcp.ca_increase = "ns3").',
            {
                "tcp.recovery": "sack",
                "tcp.delayed_ack": "off",
                "tcp.init_cwnd": 10,
                "tcp.mss": 1460,
                "tcp.rcv_wnd": "1MiB",
                "tcp.limited_transmit": True,
                "tcp.recovery_exit": "ssthresh",
                "tcp.ssthresh_rule": "ns3",
                "tcp.restart_after_idle": False,
                "tcp.rto_flavor": "rfc6298",
                "tcp.rto_backoff_reset": "new_ack",
                "tcp.rto_max": "60s",
                "workload.server_jitter": "0",
                "link.arrival_order": "ns3",
                "switch.admission": "full_frame",
                "tcp.prr": True,
                "tcp.prr_flavor": "ns3",
                "tcp.sack_recovery": "ns3",
                "tcp.ca_increase": "ns3",
            },
        ),
        Preset(
            "fine-rto",
            "CMU09's remedy: 200 us RTO_min on high-resolution timers, randomized timeouts, delayed ACK off.",
            "CMU09 §5-7: microsecond timers remove the 200 ms idle time; randomizing each timeout "
            "(RTO + rand(0, 0.5)·RTO) desynchronizes retransmissions; delayed ACK off avoids the 40 ms wait.",
            {
                "tcp.rto_min": "200us",
                "tcp.clock_granularity": "0",
                "tcp.rto_randomize": True,
                "tcp.delayed_ack": "off",
            },
        ),
        Preset(
            "fine-rto-unmodified-client",
            "fine-rto on the servers while the client keeps Linux's 40 ms delayed ACK.",
            "CMU09 §4.1: a server's 200 us timer fires long before an unmodified client's delayed ACK "
            "(only the client's ACK policy shapes the response direction).",
            {
                "tcp.rto_min": "200us",
                "tcp.clock_granularity": "0",
                "tcp.rto_randomize": True,
                "tcp.delayed_ack": "40ms",
            },
        ),
        Preset(
            "rude",
            "Rude TCP: congestion control off on every flow (hosts' gate opened), SACK recovery kept.",
            "RUDE §2.3, §3: the receive window is the only limit, every segment carries the rude bit; for "
            "dedicated links and grids, harmful in a shared incast fabric (compare it there at your own risk).",
            {"tcp.rude_allowed": True, "tcp.rude": True, "tcp.recovery": "sack"},
        ),
        Preset(
            "gip",
            "GIP: cwnd 2 at each stripe unit head and up to three copies of its last packet (Pattern 333).",
            "GIP §IV-V, on NewReno as the paper implemented it.",
            {"tcp.recovery": "newreno", "tcp.gip": "333"},
        ),
        Preset(
            "dctcp",
            "DCTCP: ECN marking above the DCTCP paper's K at every switch port, alpha-proportional window cuts.",
            "RFC 8257; K follows the link rate as the DCTCP paper sets it (switch.ecn_threshold = \"dctcp\": "
            "20 packets at 1 Gbps, 65 at 10 Gbps). DCTCP runs on SACK recovery as in Linux.",
            {"tcp.cc": "dctcp", "tcp.recovery": "sack", "switch.ecn_threshold": "dctcp"},
        ),
        Preset(
            "ictcp",
            "ICTCP at the client: each receive window follows its connection's measured throughput.",
            "Wu et al. 2010 §3 with the paper's parameters (α 0.9, β 0.75, γ1 0.1, γ2 0.5, 2-segment windows "
            "at least and at the start); the servers run NewReno.",
            {"tcp.ictcp": True},
        ),
        Preset(
            "app-limit-10",
            "The client asks at most 10 servers at once (the next as each response completes).",
            "Application-level mitigation used in production: Panasas stripes over about 10 servers "
            "(FAST08 §6), Facebook's memcache clients cap outstanding requests.",
            {"workload.max_inflight": 10},
        ),
        Preset(
            "large-buffer",
            "A deep-buffered switch: 1 MiB per output port, like the Force10 E1200 of FAST08.",
            "FAST08 §3.2 (the E1200 has at least 1 MB per port; no incast with 87 servers there) and §4.3 "
            "(Fig 6: at 1024 KB, 64 servers still use only about 65% of the link).",
            {"switch.buffer": "1MiB"},
        ),
        Preset(
            "shared-buffer",
            "Today's commodity switch: one shared memory with dynamic thresholds (alpha 1).",
            "Choudhury and Hahne's dynamic threshold, how FAST08 §3.2 says switches allocate each port's "
            "buffer: a congested port may take as much as the memory still free, so an incast port borrows "
            "the idle ports' share (the memory is switch.buffer times the ports).",
            {"switch.buffer_model": "shared:1"},
        ),
        Preset(
            "qos-8",
            "QoS enabled with 8 classes: best-effort traffic keeps an eighth of each port's buffer.",
            "FAST08 §4.1 (Fig 3): partitioning output queues per class shrinks the buffer a flow sees, "
            "so collapse comes earlier; a comparator, not a remedy (its absence is the remedy).",
            {"switch.buffer_model": "qos:8"},
        ),
        Preset(
            "pause",
            "Ethernet flow control (802.3x PAUSE) at every switch port, default thresholds.",
            "FAST08 §6 (Fig 14): effective on one switch, harmful across trunks where head-of-line "
            "blocking slows flows to uncongested ports (try it with --topology tree:K). A port stays "
            "lossless only with about 9.4 KB of headroom above XOFF per feeding link (net/pause.rs), so the "
            "default 32 KiB port still drops when more than a few servers burst at once.",
            {"switch.pause": True},
        ),
    ]
}


def _lookup(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ScenarioError(f"preset: unknown {name!r}; one of {', '.join(PRESETS)}") from None


def preset_base(name: str) -> dict[str, Any]:
    """The settings of preset ``name`` as a scenario mapping (TOML shape).

    Raises ScenarioError for an unknown name.
    """
    return apply_overrides({}, _lookup(name).settings)


def preset_overrides(name: str) -> list[tuple[str, Any]]:
    """The settings of preset ``name`` as (dotted setting, value) pairs. Raises ScenarioError for an unknown name."""
    return list(_lookup(name).settings.items())


def with_preset(name: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (TOML shape) over the settings of preset ``name``: what ``data`` names wins."""
    return apply_overrides({}, [*preset_overrides(name), *data.items()])
