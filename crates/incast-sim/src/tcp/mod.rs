//! Sans-IO TCP endpoints.
//!
//! An [`Endpoint`] is one end of an established, full-duplex connection. Its
//! caller feeds it arriving segments ([`Endpoint::on_segment`]) and due timers
//! ([`Endpoint::on_timer`]), drains what it wants to send
//! ([`Endpoint::poll_transmit`]) and asks when to wake it next
//! ([`Endpoint::poll_timeout`]). It never reads a clock or schedules anything.
//!
//! **Models:** one feature per module — the RTO estimator ([`rto`], RFC 6298),
//! the send half with its retransmission timer and Karn's rule ([`sender`]),
//! congestion control behind one interface, one module per algorithm
//! ([`cc`]: Reno's window rules, RFC 5681; Cubic, RFC 9438; DCTCP, RFC
//! 8257), Reno or NewReno fast recovery ([`newreno`], RFC 5681 and RFC
//! 6582), limited transmit ([`limited_transmit`], RFC 3042), restart
//! after idle ([`idle_restart`], RFC 5681 4.1), out-of-order reassembly ([`receiver`]), the delayed-ACK policy
//! ([`delayed_ack`], RFC 1122 4.2.3.2 / RFC 5681 4.2), the randomized
//! retransmission timer and its scheduling delay ([`rto_timer`], CMU09 §5, §3), and the exact or jiffy
//! TCP clock ([`clock`]); with the options on, SACK-based loss recovery
//! ([`sack`], RFC 2018 and RFC 6675) and timestamps ([`timestamps`], RFC
//! 7323); spurious-timeout detection and undo ([`spurious`], F-RTO RFC 5682
//! and Eifel RFC 3522); GIP's stripe-unit-aware sender ([`gip`]); the
//! ICTCP receive-window controller of a receiving host ([`ictcp`]). Each retransmission timeout is classified by
//! [`forensics`] (FAST08 §5.1, GIP §III) and counted per class. Every segment carries a cumulative ACK of RCV.NXT
//! and the constant receive window, plus SACK blocks while data is buffered
//! out of order (SACK on) and the timestamps option (timestamps on); sending
//! data piggybacks a pending ACK.
//! **Deliberately different:** connections start ESTABLISHED, with the
//! handshake's RTT as the first RTT sample (as Linux takes it from the
//! SYN/SYN-ACK exchange) and the options on or off as the configuration
//! says (both ends share it); the application consumes received data
//! instantly; Nagle is off.
//! **Not modelled:** connection setup and teardown, window scaling
//! negotiation, ECN negotiation (ECN is DCTCP's alone, `tcp::cc::dctcp`),
//! keep-alives.

pub mod cc;
pub mod clock;
mod config;
pub mod cwnd_validation;
pub mod delayed_ack;
pub mod delivery_rate;
pub mod forensics;
pub mod gated;
pub mod gip;
pub mod ictcp;
pub mod idle_restart;
pub mod limited_transmit;
pub mod local_congestion;
pub mod newreno;
pub mod pacing;
pub mod prr;
pub mod rack_tlp;
pub mod rcv_window;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod rto_timer;
pub mod rude;
pub mod sack;
mod segment;
pub mod sender;
pub mod sent_log;
pub mod spurious;
#[cfg(test)]
mod tests;
pub mod timestamps;

pub use cc::cubic::{CubicConfig, CubicFlavor};
pub use cc::dctcp::DctcpConfig;
pub use cc::{CcChoice, SsthreshRule};
pub use config::TcpConfig;
pub use delayed_ack::{DelayedAckConfig, DelayedAckMode};
pub use gip::GipPattern;
pub use ictcp::IctcpConfig;
pub use recovery::LossRecovery;
pub use rto::RtoEstimator;
pub use rto::{RtoConfig, RtoFlavor, RttResolution, TimerWheel};
pub use rude::RudeOff;
pub use segment::{flags, Segment, Timestamps, MAX_MSS, MAX_SACK_BLOCKS, TCP_IP_HEADERS};
pub use spurious::SpuriousRto;

use crate::time::{SimDuration, SimTime};
use clock::TcpClock;
use delayed_ack::DelayedAck;
use forensics::{GipTimeoutClasses, Timeout, TimeoutClasses};
use gated::Gated;
use rcv_window::{LinuxRcvWindow, RcvWindowRule};
use receiver::Receiver;
use sender::Sender;
use timestamps::TsClock;

/// Flags the application passes with a write, as `send(2)` takes `flags`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendFlags(u8);

impl SendFlags {
    /// No flag.
    pub const NONE: SendFlags = SendFlags(0);
    /// This write ends a stripe unit (GIP §V-A's `flags = 0x10000`); only a
    /// GIP sender acts on it (`tcp::gip`).
    pub const UNIT_TAIL: SendFlags = SendFlags(1);

    /// True if every flag of `other` is set.
    #[inline]
    pub fn contains(self, other: SendFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Counters one endpoint keeps about its own sending and receiving.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Segments carrying payload, retransmissions included.
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes received, duplicates included.
    pub bytes_received: u64,
    /// Data segments sent that had been sent before.
    pub retransmitted_segments: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Retransmission timeouts per FAST08 §5.1 class.
    pub timeout_classes: TimeoutClasses,
    /// Retransmission timeouts per GIP §III class.
    pub gip_timeout_classes: GipTimeoutClasses,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Tail loss probes sent (RFC 8985 §7; Linux counts `TCPLossProbes`).
    pub loss_probes: u64,
    /// Retransmitted segments RACK found lost again (RFC 8985 §6.2; Linux
    /// counts `TCPLostRetransmit`).
    pub lost_retransmits: u64,
    /// Largest congestion window reached, in bytes.
    pub max_cwnd: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    /// Delayed ACKs sent because the delayed-ACK timer fired.
    pub delayed_ack_timeouts: u64,
    /// Retransmission timeouts judged spurious and undone (`tcp::spurious`).
    pub spurious_timeouts: u64,
    /// Retransmission timeouts whose segment had a copy, sent before the
    /// timer fired, that the network had not dropped by then
    /// ([`Endpoint::judge_timeout`]).
    pub undropped_timeouts: u64,
    /// Redundant copies of stripe-unit tail packets (`tcp::gip`); also in `retransmitted_segments`.
    pub redundant_segments: u64,
}

impl EndpointStats {
    /// Segments handed to the network: data segments and pure ACKs.
    pub fn segments_sent(&self) -> u64 {
        self.data_segments_sent + self.acks_sent
    }
}

/// A window of `bytes` as a segment carries it (at most 4 GiB).
#[inline]
fn window_field(bytes: u64) -> u32 {
    bytes.min(u64::from(u32::MAX)) as u32
}

/// One end of an established TCP connection, driven by its caller; with
/// `EXTRAS` false, built without its optional mechanisms, with `PACED`
/// false without pacing and rate samples (`tcp::gated`).
#[derive(Clone, Debug)]
pub struct Endpoint<const EXTRAS: bool = true, const PACED: bool = true> {
    clock: TcpClock,
    /// Advertised window carried by every segment.
    rcv_wnd: u32,
    /// Linux's growth of that window (`tcp::rcv_window`), when on.
    linux_wnd: Gated<Box<LinuxRcvWindow>, EXTRAS>,
    sender: Sender<EXTRAS, PACED>,
    receiver: Receiver,
    delack: DelayedAck,
    /// Most SACK blocks per segment; 0 when SACK is off.
    sack_blocks: usize,
    /// SACK or timestamps are on: segments may carry options.
    options: bool,
    /// The timestamps option's clock and echo state, when on.
    ts: Gated<TsClock, EXTRAS>,
    /// DCTCP receiver (RFC 8257 §3.2): the CE state of the latest data
    /// segment, echoed as ECE on every ACK.
    ce_state: bool,
    /// DCTCP receiver: a CE change arrived while an ACK was held back; that
    /// ACK (of this RCV.NXT, with the old ECE) goes out first.
    ce_ack: Option<u64>,
    /// DCTCP at both ends: data is ECT, ACKs echo CE.
    ecn: bool,
    stats: EndpointStats,
}

impl Endpoint {
    /// An endpoint of an already established connection.
    ///
    /// If `handshake_rtt` is `Some(r)`, `r` is the RTO estimator's first RTT
    /// sample (measured on the TCP clock as if the SYN left `r` before `now`).
    /// The retransmission timer draws from substream `"rto"` of seed 0; the
    /// engine gives each endpoint its own with [`Endpoint::new_seeded`].
    pub fn new(cfg: &TcpConfig, now: SimTime, handshake_rtt: Option<SimDuration>) -> Self {
        Self::new_seeded(cfg, now, handshake_rtt, crate::rng::Rng::substream(0, "rto"))
    }
}

impl<const EXTRAS: bool, const PACED: bool> Endpoint<EXTRAS, PACED> {
    /// [`Endpoint::new`] whose retransmission timer draws its randomized
    /// timeout and scheduling delay (`tcp::rto_timer`) from `timer_rng`.
    pub fn new_seeded(
        cfg: &TcpConfig,
        now: SimTime,
        handshake_rtt: Option<SimDuration>,
        timer_rng: crate::rng::Rng,
    ) -> Self {
        let clock = TcpClock::new(cfg.rto.granularity).with_wheel(cfg.rto.wheel);
        let mut sender = Sender::new(cfg, timer_rng);
        if let Some(r) = handshake_rtt {
            let sample = sender.rto().sample_span(&clock, r, now);
            sender.rto_mut().on_rtt_sample(sample);
            sender.on_handshake_rtt(now, r);
        }
        sender.update_pacing_rate();
        let stats = EndpointStats { max_cwnd: sender.cc().cwnd(), ..EndpointStats::default() };
        let linux_wnd = (cfg.rcv_window == RcvWindowRule::Linux).then(|| {
            Box::new(LinuxRcvWindow::new(cfg.rcv_wnd.get(), cfg.segment_payload(), cfg.rcv_buf_max.get(), now))
        });
        Endpoint {
            clock,
            rcv_wnd: window_field(linux_wnd.as_ref().map_or(cfg.rcv_wnd.get(), |w| w.advertised())),
            linux_wnd: Gated::new(linux_wnd),
            sender,
            receiver: if cfg.sack_enabled() { Receiver::new() } else { Receiver::without_sack() },
            delack: DelayedAck::new(&cfg.delayed_ack, cfg.segment_payload().max(1), cfg.rcv_wnd.get()),
            // RFC 2018 (3): 4 blocks fit the option space, 3 beside timestamps.
            sack_blocks: match (cfg.sack_enabled(), cfg.timestamps) {
                (false, _) => 0,
                (true, false) => MAX_SACK_BLOCKS,
                (true, true) => MAX_SACK_BLOCKS - 1,
            }
            .min(cfg.sack_blocks.map_or(MAX_SACK_BLOCKS, |n| n as usize)),
            ts: Gated::new(cfg.timestamps.then(|| TsClock::new(cfg.timestamp_tick))),
            options: cfg.sack_enabled() || cfg.timestamps,
            ce_state: false,
            ce_ack: None,
            ecn: cfg.cc == CcChoice::Dctcp,
            stats,
        }
    }

    /// The application writes `bytes` more bytes.
    #[inline]
    pub fn send(&mut self, bytes: u64) {
        self.sender.write(bytes, SendFlags::NONE);
    }

    /// The application writes `bytes` more bytes with `flags` (`send(2)` with flags).
    #[inline]
    pub fn send_with(&mut self, bytes: u64, flags: SendFlags) {
        self.sender.write(bytes, flags);
    }

    /// Cumulative in-order bytes received from the peer (RCV.NXT).
    #[inline]
    pub fn delivered(&self) -> u64 {
        self.receiver.rcv_nxt()
    }

    /// Process one arriving segment: its ACK fields drive the send half, its
    /// payload the receive half. Returns true when it showed this endpoint's
    /// latest retransmission timeout to be spurious (`tcp::spurious`).
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) -> bool {
        let mut spurious = false;
        let mut ts_rtt = None;
        if let (Some(ts), Some(opt)) = (self.ts.as_mut(), seg.ts()) {
            ts.on_segment(seg.seq, opt);
            ts_rtt = Some(ts.rtt_sample(now, opt.ecr));
        }
        if seg.has(flags::ACK) {
            spurious = self.sender.on_ack(now, &self.clock, seg, ts_rtt, &mut self.stats);
            self.note_cwnd();
        }
        if seg.has_data() {
            self.stats.bytes_received += seg.len as u64;
            if EXTRAS && self.ecn && seg.has(flags::CE) != self.ce_state {
                self.on_ce_change(seg.has(flags::CE));
            }
            let arrival = self.receiver.on_data(seg.seq, seg.len);
            if let Some(w) = self.linux_wnd.as_deref_mut() {
                let sack = self.sack_blocks > 0;
                w.on_data(now, arrival, seg.len, self.receiver.rcv_nxt(), self.sender.rto().srtt(), sack);
                self.rcv_wnd = window_field(w.advertised());
            }
            self.delack.on_data(now, &self.clock, arrival, self.receiver.rcv_nxt(), self.sender.rto());
        }
        spurious
    }

    /// RFC 8257 (3.2): "If the CE codepoint is set and DCTCP.CE is false, set
    /// DCTCP.CE to true and send an immediate ACK" — the ACK of what arrived
    /// before, with the old ECE, when one was being delayed; likewise when CE clears.
    #[cold]
    fn on_ce_change(&mut self, ce: bool) {
        if self.delack.poll_timeout().is_some() || self.delack.should_ack() {
            self.ce_ack = Some(self.receiver.rcv_nxt());
        }
        self.ce_state = ce;
    }

    /// Process every timer due at `now`; a no-op when none is due.
    ///
    /// Returns the classified retransmission timeout (`tcp::forensics`) when
    /// the retransmission timer expired with data outstanding; it is already
    /// counted in [`EndpointStats`], and the caller may keep the record.
    pub fn on_timer(&mut self, now: SimTime) -> Option<Timeout> {
        let timeout = self.sender.on_timer(now, &self.clock, &mut self.stats);
        if let Some(t) = &timeout {
            self.stats.timeout_classes.add(t.class);
            self.stats.gip_timeout_classes.add(t.gip_class);
        }
        if self.delack.on_timer(now, self.rto()) {
            self.stats.delayed_ack_timeouts += 1;
        }
        timeout
    }

    /// The network dropped a copy of `[seq, end)` this endpoint sent: the
    /// ground truth [`Endpoint::judge_timeout`] reads.
    #[cold]
    pub fn on_copy_dropped(&mut self, seq: u64, end: u64) {
        self.sender.on_copy_dropped(seq, end);
    }

    /// Judge the retransmission timeout [`Endpoint::on_timer`] just returned,
    /// once every drop up to now is reported ([`Endpoint::on_copy_dropped`]):
    /// true, and counted in `undropped_timeouts`, when the segment it resends
    /// had a copy the network had not dropped, delivered or still on its way
    /// (CMU09 §8.1: spurious timeouts come of a sudden delay, not of a drop).
    #[cold]
    pub fn judge_timeout(&mut self) -> bool {
        let undropped = self.sender.head_undropped();
        self.stats.undropped_timeouts += u64::from(undropped);
        undropped
    }

    /// Next segment to send now, if any; call until `None`.
    ///
    /// Order: a due retransmission (fast retransmit, partial ACK, go-back-N),
    /// then new data as the window allows, then a pure ACK if one is owed.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let mut seg = Segment::default();
        self.transmit_into(now, &mut seg).then_some(seg)
    }

    /// [`Endpoint::poll_transmit`] writing the segment into `out` (a packet
    /// slot, so that the segment is built where it travels and not copied
    /// there); returns false, `out` untouched, when there is nothing to send.
    #[inline]
    pub fn transmit_into(&mut self, now: SimTime, out: &mut Segment) -> bool {
        let rcv_nxt = self.receiver.rcv_nxt();
        if let Some(tx) = self.sender.poll_data(now, &self.clock) {
            self.stats.data_segments_sent += 1;
            self.stats.bytes_sent += tx.len as u64;
            self.stats.retransmitted_segments += tx.retransmission as u64;
            self.stats.redundant_segments += tx.redundant as u64;
            let end = tx.seq + tx.len as u64;
            let push = if end == self.sender.written() { flags::PSH } else { 0 };
            let push = push | self.ecn_flags(flags::ECT);
            // Data piggybacks the ACK: no separate ACK stays owed.
            self.delack.on_ack_sent(rcv_nxt);
            *out = Segment::new(tx.seq, rcv_nxt, tx.len, self.rcv_wnd, flags::ACK | push);
            self.with_options(now, out);
            if let (Some(ts), true) = (out.ts(), tx.retransmission) {
                self.sender.spurious_mut().on_retransmission_sent(ts.val);
            }
            return true;
        }
        if self.ce_ack.is_some() {
            self.held_ce_ack(now, out);
            return true;
        }
        if self.delack.should_ack() {
            self.stats.acks_sent += 1;
            self.delack.on_ack_sent(rcv_nxt);
            *out = Segment::new(self.sender.snd_nxt(), rcv_nxt, 0, self.rcv_wnd, flags::ACK | self.ecn_flags(0));
            self.with_options(now, out);
            return true;
        }
        false
    }

    /// DCTCP (RFC 8257 §3.2): the ACK held back when the CE state changed,
    /// with the ECE of the data it covers (the old state).
    #[cold]
    fn held_ce_ack(&mut self, now: SimTime, out: &mut Segment) {
        let held = self.ce_ack.take().unwrap_or(self.receiver.rcv_nxt());
        self.stats.acks_sent += 1;
        let ece = if self.ce_state { 0 } else { flags::ECE };
        *out = Segment::new(self.sender.snd_nxt(), held, 0, self.rcv_wnd, flags::ACK | ece);
        self.with_options(now, out);
    }

    /// DCTCP: `data_bits` (ECT on data), plus ECE while the CE state is set.
    #[inline]
    fn ecn_flags(&self, data_bits: u8) -> u8 {
        if !EXTRAS || !self.ecn {
            return 0;
        }
        data_bits | if self.ce_state { flags::ECE } else { 0 }
    }

    /// Give `seg` the options this connection uses: SACK blocks while data
    /// waits out of order, and the timestamps option.
    #[inline]
    fn with_options(&mut self, now: SimTime, seg: &mut Segment) {
        if self.sender.rude() {
            seg.flags |= flags::RUDE;
        }
        if EXTRAS && self.options {
            self.add_options(now, seg);
        }
    }

    #[inline(never)]
    fn add_options(&mut self, now: SimTime, seg: &mut Segment) {
        if self.sack_blocks > 0 && self.receiver.has_gap() {
            let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
            let n = self.receiver.sack_blocks(self.sack_blocks, &mut blocks);
            seg.set_sack(&blocks[..n]);
        }
        if let Some(ts) = self.ts.as_mut() {
            seg.set_ts(Some(ts.stamp(now, seg.ack)));
        }
    }

    /// Earliest armed deadline: the retransmission, delayed-ACK or pacing timer.
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let earliest = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        earliest(earliest(self.sender.rtx_deadline(), self.delack.poll_timeout()), self.sender.pacing_deadline())
    }

    /// Counters.
    #[inline]
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// True when this endpoint runs a mechanism the plain build leaves out
    /// (`tcp::gated`): DCTCP's ECN, TCP options, or one of its sender's
    /// ([`Sender::uses_optional_parts`]). (Timestamps' and Linux's receive
    /// window's state the plain build cannot hold at all: [`Gated::new`]
    /// refuses it.)
    pub fn uses_optional_parts(&self) -> bool {
        self.ecn || self.options || self.sender.uses_optional_parts()
    }

    /// The application asks to be rude or polite again (RUDE §3.2, `tcp::rude`).
    pub fn set_rude(&mut self, req: rude::RudeRequest) {
        self.sender.set_rude(req);
    }

    /// The host's NIC queue was full when this endpoint looked for room
    /// (`tcp::local_congestion`).
    #[cold]
    pub fn on_nic_full(&mut self) {
        self.sender.on_nic_full();
        self.note_cwnd();
    }

    /// True while this endpoint's segments carry the rude bit.
    #[inline]
    pub fn rude(&self) -> bool {
        self.sender.rude()
    }

    /// Advertise a receive window of `bytes` from now on (ICTCP, `tcp::ictcp`).
    pub fn set_rcv_wnd(&mut self, bytes: u64) {
        self.rcv_wnd = window_field(bytes);
    }

    /// Current congestion window in bytes.
    #[inline]
    pub fn cwnd(&self) -> u64 {
        self.sender.cc().cwnd()
    }

    /// BBR's state as `TCP_CC_INFO` and `TCP_INFO` report it, when the sender runs BBR.
    pub fn bbr_sample(&self) -> Option<cc::bbr::BbrSample> {
        self.sender.bbr_sample()
    }

    /// Current slow-start threshold in bytes (`u64::MAX` until the first loss,
    /// the initial window with slow start off).
    #[inline]
    pub fn ssthresh(&self) -> u64 {
        self.sender.cc().ssthresh()
    }

    /// Current retransmission timeout, back-off included.
    #[inline]
    pub fn rto(&self) -> SimDuration {
        self.sender.rto().rto()
    }

    /// Bytes sent and not yet acknowledged (SND.NXT − SND.UNA).
    #[inline]
    pub fn flight_size(&self) -> u64 {
        self.sender.flight_size()
    }

    /// Smoothed RTT, once a sample has been taken.
    #[inline]
    pub fn srtt(&self) -> Option<SimDuration> {
        self.sender.rto().srtt()
    }

    /// The RTT variation Linux's `TCP_INFO` would report (`tcpi_rttvar`).
    #[inline]
    pub fn tcp_info_rttvar(&self) -> Option<SimDuration> {
        self.sender.rto().tcp_info_rttvar()
    }

    /// Bytes of this endpoint's stream the peer has acknowledged (SND.UNA).
    #[inline]
    pub fn acked(&self) -> u64 {
        self.sender.snd_una()
    }

    /// Bytes the application has written so far.
    #[inline]
    pub fn written(&self) -> u64 {
        self.sender.written()
    }

    /// True while in (Reno or NewReno) fast recovery or RFC 6675 loss recovery.
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.sender.in_recovery()
    }

    #[inline]
    fn note_cwnd(&mut self) {
        self.stats.max_cwnd = self.stats.max_cwnd.max(self.sender.cc().cwnd());
    }
}
