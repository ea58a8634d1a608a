//! TCP knobs that experiments vary.
//!
//! **Models:** every constant the incast papers sweep is a field here, never a
//! `const` in the code: RTO_min down to microseconds, the timer granularity
//! (high-resolution or jiffies), the delayed-ACK mode and timeouts, the initial window,
//! and the loss-recovery variants of FAST08 §5.1 (Reno or NewReno, limited
//! transmit, the duplicate-ACK threshold, slow start on or off), plus the
//! restart after idle and the Cubic constants (RFC 9438).
//! **Deliberately different:** defaults follow Linux where Linux and the RFCs
//! disagree, because `incast validate` compares the simulator against the
//! Linux kernel; each default below says where it comes from.
//! **Not modelled:** window scaling as a separate option (windows are plain
//! byte counts, as if scaled), MSS negotiation (both ends use `mss`).

use super::cc::cubic::CubicConfig;
use super::cc::dctcp::DctcpConfig;
use super::cc::reno::CaIncrease;
use super::cc::{CcChoice, Constants, SsthreshRule};
use super::cwnd_validation::CwndValidation;
use super::delayed_ack::DelayedAckConfig;
use super::gip::GipPattern;
use super::ictcp::IctcpConfig;
use super::idle_restart::IdleRule;
use super::newreno::{PartialAckWindow, RecoveryExit};
use super::prr::PrrFlavor;
use super::rcv_window::RcvWindowRule;
use super::recovery::LossRecovery;
use super::rto::RtoConfig;
use super::rude::RudeOff;
use super::sack::SackRecovery;
use super::spurious::SpuriousRto;
use crate::settings::{Choice, Count, Duration, Flag, OrWord, Probability, Size};
use crate::time::{Bytes, SimDuration};

crate::settings! {
    /// Everything one TCP endpoint needs to know.
    ///
    /// Default values:
    /// - `mss`: 1460 bytes — Ethernet MTU 1500 minus 40 bytes of IPv4 and TCP headers.
    /// - `init_cwnd`: 10 segments — RFC 6928 and Linux since 2.6.39. The kernel the
    ///   testbed compares against uses it; paper reproductions set their own.
    /// - `rcv_wnd`: 64 KiB — what Linux advertises with its default receive
    ///   buffer (`tcp_rmem` 128 KiB, half of it offered as window). Autotuning
    ///   grows it only when more than that arrives per round trip, which a
    ///   100 µs path at 1 Gbps (12.5 KB per RTT) never does. The window caps the
    ///   burst each server sends at the head of a block, so it moves the onset of
    ///   collapse: with an unbounded window, windows grown in loss-free slow start
    ///   overflow even a 128 KiB port with two servers.
    /// - `rcv_window`: `fixed` — `rcv_wnd` for the whole connection, as the
    ///   papers' simulators advertised; `linux` grows it as the kernel does
    ///   (`tcp::rcv_window`), part of the `linux` presets.
    /// - `rcv_buf_max`: 32 MiB — `tcp_rmem[2]` of Linux 6.x, the largest
    ///   receive buffer autotuning may reach (read only with `rcv_window = "linux"`).
    /// - `dupack_threshold`: 3 — RFC 5681 3.2.
    /// - `cc`: `reno` — RFC 5681's window rules, FAST08 Table 1 and the
    ///   papers' simulations (Linux's default is `cubic`: the `linux` presets).
    /// - `recovery`: `newreno` — RFC 6582, Linux's recovery without SACK and
    ///   FAST08 Table 1; `sack` is RFC 6675's (Linux negotiates SACK by
    ///   default: the `linux` presets), `reno` RFC 5681 §3.2's alone.
    /// - `cubic`: [`CubicConfig::default`] — used only when `cc` is `cubic`.
    /// - `limited_transmit`: false — FAST08 Table 1 (RFC 3042; Linux has it on,
    ///   but it only matters with fewer than `dupack_threshold` + 1 segments out).
    /// - `limited_transmit_resends`: false — RFC 3042 sends "new data" only;
    ///   ns-2.35's `send_one` sends the next segment in sequence, which after a
    ///   timeout's go-back-N has been sent before (the `ns2` preset).
    /// - `cwnd_validation`: `off` — RFC 5681 3.1 grows cwnd on every ACK of
    ///   new data; `linux` is the kernel's `tcp_is_cwnd_limited`
    ///   (`tcp::cwnd_validation`), part of the `linux` presets.
    /// - `slow_start`: true — RFC 5681 3.1. False grows cwnd by congestion
    ///   avoidance only (FAST08 §5.1.3).
    /// - `recovery_exit`: `flight` — RFC 6582 (3.2 step 3) option (1), the
    ///   one that avoids a burst; `ssthresh` is option (2) (`tcp::newreno`).
    /// - `partial_ack_window`: `deflate` — RFC 6582 (3.2 step 3); `ns2` is
    ///   ns-2.35's NewReno agent as `ns-default.tcl` sets it, `ssthresh` the
    ///   same agent with `partial_window_deflation_` 0 (`tcp::newreno`).
    /// - `dupack_idle`: false — RFC 5681 (2) and Linux (`tcp_ack` leaves an
    ///   ACK with nothing outstanding alone); true is ns-2.35 (the `ns2` preset).
    /// - `recovery_burst`: off — RFC 5681 and RFC 6582 send whatever the window
    ///   allows; ns-2.35's NewReno agent caps it at two per ACK (`tcp::newreno`).
    /// - `idle_restart`: `rfc5681` — RFC 5681 (4.1), as Linux counts idle time
    ///   (`lsndtime`); `linux` is Linux's gradual restart (`tcp_cwnd_restart`),
    ///   `ns2` ns-2.35's timer-driven restart (`tcp::idle_restart`).
    /// - `ssthresh_rule`: `rfc5681` — RFC 5681 (3.1) eq. (4), the RFC the
    ///   simulator follows; `ns2` is ns-2.35's `TcpAgent::slowdown` (see
    ///   [`SsthreshRule`]).
    /// - `restart_after_idle`: true — Linux `tcp_slow_start_after_idle` defaults
    ///   to 1, and `incast validate` compares against Linux (RFC 5681 4.1 says
    ///   SHOULD as well).
    /// - `prr`: false — RFC 6675 alone (cwnd = ssthresh at once) or RFC
    ///   5681's inflation without SACK, as the papers' stacks ran; the `linux`
    ///   preset turns it on (`tcp::prr`, with or without SACK as Linux runs it).
    /// - `prr_flavor`: `rfc6937` — the RFC; `linux` is what the kernel runs,
    ///   in the `linux` preset; `ns3` what ns-3.44 runs (`tcp::prr`).
    /// - `rack_tlp`: false — RFC 6675's duplicate-ACK rules alone, as the
    ///   papers' stacks recovered; the `linux` preset turns it on (Linux 4.4+
    ///   runs RACK, 3.10+ TLP). Needs `recovery = "sack"`.
    /// - `timestamps`: false — as FAST08 Table 1 (Linux negotiates them by
    ///   default). True puts the RFC 7323 option on every segment: 12 header
    ///   bytes, so a segment carries `mss` − 12 payload bytes, as Linux's
    ///   `mss_cache` does; RTT samples come from the echoed timestamp when Karn's
    ///   rule forbids one from the send time (`tcp::timestamps`).
    /// - `timestamp_tick`: 1 ms — Linux's TSval clock (`TCP_TS_HZ` = 1000).
    /// - `dctcp`: [`DctcpConfig::default`] — read only when `cc` is `dctcp`.
    /// - `gip`: `off` — GIP (GIP §IV–V, `tcp::gip`) is a remedy to compare, not
    ///   a default; `333` is the paper's proposal, `123` its rejected alternative.
    /// - `gip_copies`: 3 — GIP §V-B: the last packet "at most 3 times".
    /// - `gip_head_cwnd`: 2 segments — GIP §V-C ("we set cwnd of each sender to 2").
    /// - `ictcp`: [`IctcpConfig::default`] (off) — ICTCP is a remedy to compare.
    /// - `rude_allowed`: false — RUDE §3.1: "Rude flows are by default disabled".
    /// - `rude`: false; `rude_off_at`: none (rude flows stay rude); `rude_off`:
    ///   `nicely` — the semantics RUDE §3.2 recommends for a flow that "does not
    ///   want to immediately cut its sending rate"; `rude_servers`: none (every
    ///   connection is rude when `rude` is set).
    /// - `send_loss_ppb`: 0 — no artificial loss; RUDE §4 swept 0.01 % to 5 %.
    /// - `local_congestion`: false — a full NIC queue makes the sender wait,
    ///   as TCP Small Queues keep one flow from filling it; true is Linux
    ///   before 3.6, whose qdisc dropped the segment and cut the window.
    /// - `pacing`: false — the papers' stacks and Linux's window-based
    ///   algorithms without the fq qdisc send as the window allows; true paces
    ///   them as Linux does once a socket asks for it (`tcp::pacing`).
    /// - `gso_max_size`: 64 KiB — Linux's `GSO_LEGACY_MAX_SIZE`, what an IPv4
    ///   socket's `sk_gso_max_size` is on a NIC or veth with TSO/GSO (read only
    ///   by a paced sender).
    /// - `spurious_rto`: `off` — the papers' stacks did not undo timeouts. `frto`
    ///   is RFC 5682 (Linux `tcp_frto`, on by default there), `eifel` is RFC 3522
    ///   (needs `timestamps`); both undo the timeout's window reduction
    ///   (`tcp::spurious`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct TcpConfig {
        /// Maximum segment size: payload bytes per segment.
        "mss" mss: u32 = 1460, Count::new(1, super::MAX_MSS as u64, "bytes");
        /// Initial congestion window, in segments.
        "init_cwnd" init_cwnd: u32 = 10, Count::new(1, u32::MAX as u64, "segments");
        /// Receive window advertised by every receiver (with rcv_window "linux":
        /// the window its initial buffer offers, half of Linux's tcp_rmem[1]).
        "rcv_wnd" rcv_wnd: Bytes = Bytes::kib(64), Size { min: 1 };
        /// How the advertised window evolves: "fixed" (rcv_wnd throughout) or
        /// "linux" (grown per segment and by receive-buffer autotuning, up to
        /// half of rcv_buf_max: Linux tcp_grow_window and tcp_rcv_space_adjust).
        "rcv_window" rcv_window: RcvWindowRule = RcvWindowRule::Fixed,
            Choice(&[("fixed", RcvWindowRule::Fixed), ("linux", RcvWindowRule::Linux)]);
        /// Largest receive buffer autotuning may grow to (Linux tcp_rmem[2]);
        /// the window reaches half of it.
        "rcv_buf_max" rcv_buf_max: Bytes = Bytes::mib(32), Size { min: 1 };
        /// Duplicate ACKs that trigger fast retransmit.
        "dupack_threshold" dupack_threshold: u32 = 3, Count::new(1, u32::MAX as u64, "duplicate ACKs");
        /// Congestion control (Linux net.ipv4.tcp_congestion_control): "reno"
        /// (RFC 5681: additive increase, halving at a loss), "cubic" (RFC 9438
        /// window growth and β = 0.7 decrease), "dctcp" (RFC 8257:
        /// ECN-capable, cwnd cut by α/2 on marks; needs switch.ecn_threshold)
        /// or "bbr" (BBRv1 as Linux tcp_bbr.c: paced at its estimate of the
        /// bottleneck bandwidth, the window twice the bandwidth-delay product).
        "cc" cc: CcChoice = CcChoice::Reno, Choice(&[
            ("reno", CcChoice::Reno),
            ("cubic", CcChoice::Cubic),
            ("dctcp", CcChoice::Dctcp),
            ("bbr", CcChoice::Bbr),
        ]);
        /// Loss recovery: "reno" (RFC 5681 3.2: any new ACK ends fast
        /// recovery), "newreno" (RFC 6582: partial ACKs retransmit the next
        /// hole; Linux without SACK) or "sack" (SACK blocks, RFC 2018, and RFC
        /// 6675 recovery; Linux with net.ipv4.tcp_sack = 1).
        "recovery" recovery: LossRecovery = LossRecovery::NewReno, Choice(&[
            ("reno", LossRecovery::Reno),
            ("newreno", LossRecovery::NewReno),
            ("sack", LossRecovery::Sack),
        ]);
        /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
        "limited_transmit" limited_transmit: bool = false, Flag;
        /// Limited transmit may also resend the next segment in sequence when a
        /// timeout has rewound SND.NXT (ns-2.35 TcpAgent::send_one); false sends
        /// new data only (RFC 3042).
        "limited_transmit_resends" limited_transmit_resends: bool = false, Flag;
        /// When an ACK may grow cwnd: "off" (every ACK of new data, RFC 5681
        /// 3.1) or "linux" (only while cwnd limits the sender, or in slow start
        /// below twice the flight: Linux tcp_is_cwnd_limited).
        "cwnd_validation" cwnd_validation: CwndValidation = CwndValidation::Off,
            Choice(&[("off", CwndValidation::Off), ("linux", CwndValidation::Linux)]);
        /// Slow start (RFC 5681 3.1); false grows cwnd by additive increase only.
        "slow_start" slow_start: bool = true, Flag;
        /// Window growth per ACK with Reno, NewReno and SACK: "exact"
        /// (congestion avoidance's SMSS·SMSS/cwnd, the fraction of a byte kept
        /// for the next ACK) or "ns3" (as ns-3.44's TcpNewReno: in whole
        /// segments acknowledged, the rest carried, and the increase truncated
        /// to whole bytes, at least one).
        "ca_increase" ca_increase: CaIncrease = CaIncrease::Exact,
            Choice(&[("exact", CaIncrease::Exact), ("ns3", CaIncrease::Ns3)]);
        /// cwnd when NewReno's fast recovery ends (RFC 6582 3.2 step 3):
        /// "flight" (option 1, min(ssthresh, FlightSize + SMSS): no burst) or
        /// "ssthresh" (option 2, as ns-2.35 and Linux do; with ssthresh_rule
        /// "ns2" ns-2's unrounded half window, Reno's exit included).
        "recovery_exit" recovery_exit: RecoveryExit = RecoveryExit::Flight,
            Choice(&[("flight", RecoveryExit::Flight), ("ssthresh", RecoveryExit::Ssthresh)]);
        /// cwnd after a partial ACK in NewReno's fast recovery: "deflate" (RFC
        /// 6582 3.2 step 3: less the data acknowledged, plus one SMSS), "ns2"
        /// (the same, but what the inflation does not cover also lowers the
        /// window recovery exits at, as ns-2.35's NewReno agent does by
        /// default) or "ssthresh" (the window the fast retransmit set, as that
        /// agent does with partial_window_deflation_ 0).
        "partial_ack_window" partial_ack_window: PartialAckWindow = PartialAckWindow::Deflate,
            Choice(&[
                ("deflate", PartialAckWindow::Deflate),
                ("ns2", PartialAckWindow::Ns2),
                ("ssthresh", PartialAckWindow::Ssthresh),
            ]);
        /// Reno keeps NewReno's guard (RFC 6582 3.2 step 2): no fast
        /// retransmit until an ACK passes the highest byte sent at the last
        /// fast retransmit or timeout, so a second loss in a window waits for
        /// the timer, as ns-2.35's Reno agent does with bug_fix_; false is RFC
        /// 5681's Reno, which fast-retransmits on every threshold-th duplicate.
        "reno_recover_guard" reno_recover_guard: bool = false, Flag;
        /// Reno and NewReno count an ACK that repeats the last one as a
        /// duplicate with nothing outstanding too, as ns-2.35's agents do
        /// (TcpAgent::recv: any "seqno() == last_ack_"); the threshold-th cuts
        /// ssthresh and cwnd as a fast retransmit would, with nothing to resend
        /// (ns-2's dupack_action also sends the segment after the data, which is
        /// not modelled). False is RFC 5681 (2): "the receiver of the ACK has
        /// outstanding data".
        "dupack_idle" dupack_idle: bool = false, Flag;
        /// At most this many new segments per ACK while NewReno's fast recovery
        /// lasts, besides the retransmission (ns-2.35's NewReno agent sends two:
        /// "send_much(0, 0, 2)"), or "off".
        "recovery_burst" recovery_burst: Option<u32> = None,
            OrWord { word: "off", spec: Count::new(1, u32::MAX as u64, "segments"), what: "a count" };
        /// ssthresh at a fast retransmit or timeout: "rfc5681" (max(FlightSize/2,
        /// 2·SMSS), held when the same segment times out again) or "ns2" (half
        /// the congestion window before fast-recovery inflation, at most the peer
        /// window, in whole segments, at every loss event, as ns-2.35 does) or
        /// "ns3" (with SACK, half of RFC 6675's pipe, the lost head left out at a
        /// fast retransmit, as ns-3's TcpSocketBase passes BytesInFlight()).
        "ssthresh_rule" ssthresh_rule: SsthreshRule = SsthreshRule::Rfc5681,
            Choice(&[("rfc5681", SsthreshRule::Rfc5681), ("ns2", SsthreshRule::Ns2), ("ns3", SsthreshRule::Ns3)]);
        /// After sending nothing for longer than the RTO, restart from
        /// min(init_cwnd, cwnd) (RFC 5681 4.1; Linux tcp_slow_start_after_idle).
        "restart_after_idle" restart_after_idle: bool = true, Flag;
        /// With restart_after_idle: "rfc5681" (idle counted from the last data
        /// sent; cwnd = min(IW, cwnd)), "linux" (idle counted the same way; cwnd
        /// halved once per RTO of idle down to min(IW, cwnd), ssthresh raised to
        /// 3/4 cwnd first, as Linux's tcp_cwnd_restart does) or "ns2" (the
        /// retransmission timer the last ACK of new data re-armed expires with
        /// nothing outstanding; cwnd = one segment, as ns-2.35's one-way agent does).
        "idle_restart" idle_restart: IdleRule = IdleRule::Rfc5681,
            Choice(&[("rfc5681", IdleRule::Rfc5681), ("linux", IdleRule::Linux), ("ns2", IdleRule::Ns2)]);
        /// Most SACK blocks an ACK carries: "fit" (as many as the option space
        /// holds, RFC 2018 §3: 4, or 3 beside timestamps) or a count from 1
        /// (ns-2.35's sinks send 3: maxSackBlocks_ in ns-default.tcl).
        "sack_blocks" sack_blocks: Option<u32> = None,
            OrWord { word: "fit", spec: Count::new(1, 4, "blocks"), what: "a count" };
        /// SACK recovery re-marks a retransmitted hole as lost once data sent
        /// after the retransmission is SACKed, and sends it again (the "lost
        /// retransmit" detection of Linux before 4.4, tcp_mark_lost_retrans;
        /// RACK does it by time since, `rack_tlp`; RFC 6675 has none, so off
        /// by default).
        "sack_lost_retransmit" sack_lost_retransmit: bool = false, Flag;
        /// Whose SACK loss recovery: "rfc6675" (IsLost, SetPipe, NextSeg),
        /// "ns2" (ns-2.35's Sack1 agent: a pipe estimate that keeps the holes,
        /// every hole below the highest SACK resent in order, the scoreboard
        /// cleared by a timeout) or "linux" (RFC 6675 resending only what is
        /// marked lost, then new data: no NextSeg rules 3 and 4, as Linux's
        /// tcp_xmit_retransmit_queue since 4.15) or "ns3" (as ns-3.44's
        /// TcpTxBuffer and TcpSocketBase: a retransmitted segment stays in the
        /// pipe once SACKed, until a cumulative ACK or a timeout; after a
        /// timeout only lost segments below the highest SACK are resent before
        /// new data; no rescue retransmission; in recovery only the first
        /// partial ACK restarts the timer).
        "sack_recovery" sack_recovery: SackRecovery = SackRecovery::Rfc6675,
            Choice(&[
                ("rfc6675", SackRecovery::Rfc6675),
                ("ns2", SackRecovery::Ns2),
                ("linux", SackRecovery::Linux),
                ("ns3", SackRecovery::Ns3),
            ]);
        /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) in loss recovery:
        /// the window falls to ssthresh over a round trip, one segment sent per
        /// ssthresh/RecoverFS delivered (Linux since 3.2; without SACK it counts
        /// duplicate ACKs as delivered segments, as Linux does).
        "prr" prr: bool = false, Flag;
        /// Whose PRR: "rfc6937" (in bytes, RecoverFS the data outstanding, the
        /// reduction bound's extra segment on every ACK), "linux"
        /// (tcp_cwnd_reduction: in packets, divided by the cwnd before recovery,
        /// the extra segment only on an ACK that advanced SND.UNA and marked
        /// nothing newly lost, at least the fast retransmission at first) or
        /// "ns3" (ns-3.44's TcpPrrRecovery: a SACKing ACK counts a segment more
        /// than it delivered, RecoverFS the pipe, the window grown on the ACK
        /// that ends recovery).
        "prr_flavor" prr_flavor: PrrFlavor = PrrFlavor::Rfc6937,
            Choice(&[("rfc6937", PrrFlavor::Rfc6937), ("linux", PrrFlavor::Linux), ("ns3", PrrFlavor::Ns3)]);
        /// RACK-TLP (RFC 8985) with SACK: segments sent before a delivered one
        /// are lost once an RTT and a reordering window have passed (a timer
        /// waits for that when no later ACK may come), and a tail loss probe
        /// goes out 2·SRTT after the last send (Linux tcp_recovery 1,
        /// tcp_early_retrans 3).
        "rack_tlp" rack_tlp: bool = false, Flag;
        /// Timestamps option (RFC 7323) on every segment: 12 header bytes, so
        /// segments carry mss - 12 payload bytes; echoed timestamps give RTT
        /// samples where Karn's rule gives none.
        "timestamps" timestamps: bool = false, Flag;
        /// Tick of the TSval clock.
        "timestamp_tick" timestamp_tick: SimDuration = SimDuration::from_millis(1), Duration::POSITIVE;
        /// Internal pacing (Linux tcp_update_pacing_rate without the fq qdisc):
        /// each data segment waits its size over 200 % of cwnd/SRTT in slow
        /// start, 120 % after, once 10 segments have gone.
        "pacing" pacing: bool = false, Flag;
        /// Largest send burst a paced sender builds (Linux sk_gso_max_size, the
        /// device's GSO size: 64 KiB for IPv4); Linux tcp_tso_autosize sizes
        /// each burst from the pacing rate and the minimum RTT up to it. 0
        /// sends one segment per pacing slot.
        "gso_max_size" gso_max_size: Bytes = Bytes::kib(64), Size { min: 0 };
        /// Spurious-timeout detection, with undo of the window reduction: "off",
        /// "frto" (RFC 5682) or "eifel" (RFC 3522, needs timestamps).
        "spurious_rto" spurious_rto: SpuriousRto = SpuriousRto::Off, Choice(&[
            ("off", SpuriousRto::Off),
            ("frto", SpuriousRto::Frto),
            ("eifel", SpuriousRto::Eifel),
        ]);
        /// GIP (Zhang et al.): "333" resets cwnd to gip_head_cwnd at each stripe
        /// unit head and resends the unit's last packet once per ACK, up to
        /// gip_copies times; "123" resends the last three in turn.
        "gip" gip: GipPattern = GipPattern::Off, Choice(&[
            ("off", GipPattern::Off),
            ("333", GipPattern::Pattern333),
            ("123", GipPattern::Pattern123),
        ]);
        /// GIP: most redundant copies per stripe unit.
        "gip_copies" gip_copies: u32 = 3, Count::new(0, 255, "copies");
        /// GIP: cwnd at the head of each stripe unit, in segments.
        "gip_head_cwnd" gip_head_cwnd: u32 = 2, Count::new(1, u32::MAX as u64, "segments");
        /// The hosts allow rude flows (RUDE §3.1's tcp_rude sysctl; off by default).
        "rude_allowed" rude_allowed: bool = false, Flag;
        /// Every flow starts rude (RUDE): congestion control off, the receive
        /// window the only limit, every segment marked with the rude bit. Needs
        /// rude_allowed.
        "rude" rude: bool = false, Flag;
        /// When rude flows turn congestion control back on, or "never".
        "rude_off_at" rude_off_at: Option<SimDuration> = None,
            OrWord { word: "never", spec: Duration::ANY, what: "a duration" };
        /// How: "now" (a congestion event if over the fair window) or "nicely"
        /// (an artificial window converging to the fair one, RUDE Table 1).
        "rude_off" rude_off: RudeOff = RudeOff::Nicely, Choice(&[("nicely", RudeOff::Nicely), ("now", RudeOff::Now)]);
        /// Only each client's connections to its first K servers start rude
        /// (background flows then never); "all" for all.
        "rude_servers" rude_servers: Option<u32> = None,
            OrWord { word: "all", spec: Count::new(1, u32::MAX as u64, "servers"), what: "a count" };
        /// Sender-side random loss (RUDE §4's kernel patch): each data segment is
        /// discarded before the wire with this probability (kept in parts per
        /// billion); the sender believes it sent it.
        "send_loss" send_loss_ppb: u32 = 0, Probability;
        /// A segment refused by the host's full NIC queue (link.tx_queue) is a
        /// congestion signal: the sender enters Linux's CWR state, ssthresh
        /// cut as at a loss and cwnd brought down to it over the next round
        /// trip (tcp_transmit_skb's tcp_enter_cwr on NET_XMIT_DROP, which one
        /// bulk flow met before TCP Small Queues; `tcp::local_congestion`).
        "local_congestion" local_congestion: bool = false, Flag;
    }
    flatten {
        /// Retransmission timer.
        rto: RtoConfig,
        /// Delayed ACK at the receiver.
        delayed_ack: DelayedAckConfig,
        /// Cubic's constants (RFC 9438), read only when `cc` is `cubic`.
        cubic: CubicConfig,
        /// DCTCP's constants (RFC 8257), read only when `cc` is `dctcp`.
        dctcp: DctcpConfig,
        /// ICTCP at the client: receive windows paced by measured throughput.
        ictcp: IctcpConfig,
    }
}

/// Settings a scenario may no longer name, with what replaced each.
const RETIRED: &[(&str, &str)] = &[
    (
        "variant",
        "replaced by tcp.cc (the congestion control: reno, cubic or dctcp) and tcp.recovery (the loss \
         recovery: reno, newreno or sack)",
    ),
    ("sack", "replaced by tcp.recovery = \"sack\" (SACK blocks and RFC 6675 recovery)"),
];

impl TcpConfig {
    /// What replaced `key`, if it is a setting the `[tcp]` table no longer has.
    pub fn retired(key: &str) -> Option<&'static str> {
        RETIRED.iter().find(|(k, _)| *k == key).map(|(_, why)| *why)
    }

    /// True when SACK is in use: the receiver sends SACK blocks and the sender recovers by RFC 6675.
    #[inline]
    pub fn sack_enabled(&self) -> bool {
        self.recovery == LossRecovery::Sack
    }

    /// The constants [`super::cc::Algorithm::new`] reads.
    pub fn cc_constants(&self) -> Constants {
        Constants {
            ca_increase: self.ca_increase,
            cubic: self.cubic,
            dctcp: self.dctcp,
            granularity: self.rto.granularity,
            init_cwnd: self.init_cwnd,
        }
    }

    /// True when segments wait for a pacer (`tcp::pacing`): `pacing` on, or
    /// an algorithm that sets its own pacing rate.
    #[inline]
    pub fn paced(&self) -> bool {
        self.pacing || self.cc.needs_rate_samples()
    }

    /// True when a mechanism an endpoint may be built without is on: SACK,
    /// RACK-TLP, PRR, GIP, timestamps, Linux's receive window, F-RTO or
    /// Eifel, cwnd validation, DCTCP or Rude TCP (`tcp::gated`; pacing and
    /// rate samples, which it may be built without too, are [`TcpConfig::paced`]).
    pub fn extras(&self) -> bool {
        self.sack_enabled()
            || self.rack_tlp
            || self.prr
            || self.gip != GipPattern::Off
            || self.timestamps
            || self.rcv_window == RcvWindowRule::Linux
            || self.spurious_rto != SpuriousRto::Off
            || self.cwnd_validation != CwndValidation::Off
            || self.cc == CcChoice::Dctcp
            || self.rude
            || self.rude_off_at.is_some()
    }

    /// Payload bytes of a full-sized segment: `mss`, less the 12 option bytes
    /// every segment carries with timestamps on (Linux `tcp_current_mss`).
    #[inline]
    pub fn segment_payload(&self) -> u32 {
        if self.timestamps {
            self.mss.saturating_sub(12)
        } else {
            self.mss
        }
    }
}
