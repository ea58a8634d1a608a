//! Send half: send-buffer accounting, the retransmission timer, RTT sampling.
//!
//! **Models:** SND.UNA / SND.NXT / SND.MAX over a send buffer the application
//! appends to; the usable window min(cwnd, peer window) − (SND.NXT − SND.UNA);
//! sender silly-window avoidance (RFC 1122 4.2.3.4: only full-sized segments,
//! except the tail of the buffer); the retransmission timer of RFC 6298 §5;
//! go-back-N after a timeout; duplicate-ACK detection (RFC 5681 §2) feeding
//! fast recovery (`tcp::newreno`), or with SACK the RFC 6675 scoreboard of
//! `tcp::sack`; the congestion window and its algorithm (`tcp::cc`), grown
//! by ACKs outside recovery and fed every ACK's ECN-Echo when it needs ECN; the
//! hooks of limited transmit (`tcp::limited_transmit`), restart after idle
//! (`tcp::idle_restart`) and spurious-timeout detection (`tcp::spurious`);
//! the snapshot each timeout hands to `tcp::forensics` (DART, back-off count,
//! start of the latest write). RTT sampling follows Linux
//! `tcp_clean_rtx_queue`: the sample is the age of the OLDEST segment a
//! cumulative ACK newly covers, and no sample is taken when any newly covered
//! segment was retransmitted (Karn's rule, RFC 6298 §3) — unless the ACK
//! echoes a timestamp (RFC 7323 §4), which then gives the sample
//! (`tcp::timestamps`).
//!
//! With SACK, SACKed data never counts as outstanding when the window is
//! sized — RFC 6675's `pipe` during recovery, and outside it the same
//! accounting as Linux `tcp_packets_in_flight` (which subsumes Limited
//! Transmit, RFC 6675 §5 step 3) — and go-back-N after a timeout skips
//! SACKed ranges.
//! **Deliberately different:** Nagle is off (storage servers set
//! TCP_NODELAY); the peer window is taken from every acceptable ACK without
//! the SND.WL1/SND.WL2 ordering checks (the window is constant here);
//! without SACK a timeout resends everything from SND.UNA (go-back-N).
//! **Not modelled:** zero-window probing, TSO/GSO, pacing, the RFC 6298
//! (5.7) SYN rule (connections start established).

use super::cc::reno::CaIncrease;
use super::cc::{Algorithm, CongestionWindow, SsthreshRule};
use super::clock::TcpClock;
use super::forensics::{self, Timeout, TimeoutSnapshot};
use super::gated::Gated;
use super::gip::Gip;
use super::idle_restart::{IdleRestart, IdleRule};
use super::limited_transmit::LimitedTransmit;
use super::newreno::{NewAck, NewReno};
use super::prr::{Prr, PrrFlavor};
use super::rack_tlp::RackTlp;
use super::rto::{RtoEstimator, RttTiming};
use super::rto_timer::RtoTimer;
use super::rude::{Rude, RudeExit, RudeRequest};
use super::sack::{LostMarks, Scoreboard};
use super::spurious::{SpuriousDetector, Verdict};
use super::{flags, EndpointStats, GipPattern, Segment, SendFlags, TcpConfig, TcpVariant};
use crate::fifo::Fifo;
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};

/// One transmitted, not yet acknowledged segment.
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    /// Stream offset one past its last byte (its start is the previous end).
    end: u64,
    /// When it was (last) sent.
    sent_at: SimTime,
    /// It has been sent more than once.
    retransmitted: bool,
    /// RACK found its latest transmission lost (counted once per transmission).
    lost_again: bool,
    /// Retransmitted since the last retransmission timeout (ns-3's
    /// `TcpTxItem::m_retrans`, `tcp.sack_recovery = "ns3"`).
    resent_since_timeout: bool,
}

/// A data segment the sender wants on the wire now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataTx {
    /// First stream offset.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Some of these bytes were sent before.
    pub retransmission: bool,
    /// A GIP redundant copy (`tcp::gip`).
    pub redundant: bool,
}

/// The sending half of an endpoint; with `EXTRAS` false, built without
/// its optional mechanisms (`tcp::gated`).
#[derive(Clone, Debug)]
pub struct Sender<const EXTRAS: bool = true> {
    mss: u64,
    /// Stream offset one past the last byte the application wrote.
    app_end: u64,
    /// Stream offset where the application's latest write starts.
    write_start: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    peer_wnd: u64,
    sent: Fifo<SentRecord>,
    rto: RtoEstimator,
    /// Arms the retransmission timer (randomization, scheduling delay).
    timer: RtoTimer,
    /// cwnd, ssthresh and the congestion-control algorithm.
    cc: CongestionWindow,
    /// Reno or NewReno fast recovery (idle when SACK is on).
    recovery: NewReno,
    limited: LimitedTransmit,
    idle: IdleRestart,
    rtx_deadline: Option<SimTime>,
    /// Fast retransmit or partial-ACK retransmission of SND.UNA is due.
    retransmit_now: bool,
    /// Consecutive timeouts of the segment at SND.UNA (0: not yet timed out).
    backoff: u32,
    /// Duplicate ACKs since the last ACK of new data (FAST08 §5.1 DART).
    dart: u32,
    /// Fast retransmit threshold, for timeout forensics.
    dupack_threshold: u32,
    /// The RFC 6675 scoreboard, when SACK is on.
    sack: Gated<Box<Scoreboard>, EXTRAS>,
    /// With SACK: the segment that starts loss recovery, due now (RFC 6675 §5 step 4.3).
    sack_rtx: Option<(u64, u64)>,
    /// `rtt_timing = "ns2"`: RTT samples from one timed segment at a time.
    time_one: bool,
    /// That segment's end and when it left (ns-2's `rtt_seq_`, `rtt_ts_`).
    timed: Option<(u64, SimTime)>,
    /// F-RTO and Eifel (`tcp::spurious`).
    spurious: SpuriousDetector,
    /// New segments F-RTO step 2b may still send beyond the window.
    frto_new: u8,
    /// GIP (`tcp::gip`), when on.
    gip: Gated<Gip, EXTRAS>,
    /// A GIP redundant copy due now, sent whatever the window.
    gip_copy: Option<(u64, u64)>,
    /// Rude TCP (`tcp::rude`): congestion control off, or turning back on.
    rude: Rude,
    /// What a loss event cuts ssthresh from.
    ssthresh_rule: SsthreshRule,
    /// Data left since the last end of a burst (`tcp::cwnd_validation`, `tcp::rack_tlp`).
    burst_sent: bool,
    /// RACK-TLP (`tcp::rack_tlp`), when on with SACK (boxed, as the
    /// scoreboard: a sender without it stays small).
    rack: Gated<Box<RackTlp>, EXTRAS>,
    /// Proportional Rate Reduction (`tcp::prr`), when on: in SACK recovery,
    /// or in NewReno recovery as Linux runs it for a connection without SACK.
    prr: Gated<Box<Prr>, EXTRAS>,
}

impl<const EXTRAS: bool> Sender<EXTRAS> {
    /// An idle sender of an established connection; `timer_rng` feeds the
    /// randomized timeout and scheduling delay (`tcp::rto_timer`).
    pub fn new(cfg: &TcpConfig, timer_rng: Rng) -> Self {
        let mss = cfg.segment_payload().max(1);
        Sender {
            mss: mss as u64,
            app_end: 0,
            write_start: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            peer_wnd: cfg.rcv_wnd.get().min(u32::MAX as u64),
            sent: Fifo::default(),
            rto: RtoEstimator::new(cfg.rto),
            timer: RtoTimer::new(&cfg.rto, timer_rng),
            cc: CongestionWindow::new(mss as u64, cfg.init_cwnd, cfg.slow_start, Algorithm::new(cfg, mss as u64))
                .with_validation(cfg.cwnd_validation)
                .counting_segments(
                    cfg.ca_increase == CaIncrease::Ns3
                        && matches!(cfg.variant, TcpVariant::Reno | TcpVariant::NewReno | TcpVariant::Sack),
                ),
            recovery: NewReno::new(
                mss as u64,
                cfg.dupack_threshold,
                cfg.variant,
                cfg.recovery_exit,
                cfg.recovery_burst,
            )
            .with_partial_window(cfg.partial_ack_window)
            .with_reno_guard(cfg.reno_recover_guard),
            limited: LimitedTransmit::new(cfg.limited_transmit, cfg.limited_transmit_resends),
            idle: IdleRestart::new(cfg.restart_after_idle, cfg.idle_restart),
            rtx_deadline: None,
            retransmit_now: false,
            backoff: 0,
            dart: 0,
            dupack_threshold: cfg.dupack_threshold,
            sack: Gated::new(cfg.sack_enabled().then(|| {
                Box::new(
                    Scoreboard::new(mss, cfg.dupack_threshold, cfg.sack_lost_retransmit)
                        .with_recovery(cfg.sack_recovery),
                )
            })),
            sack_rtx: None,
            time_one: cfg.rto.timing == RttTiming::Ns2,
            timed: None,
            spurious: SpuriousDetector::new(cfg.spurious_rto),
            frto_new: 0,
            gip: Gated::new((cfg.gip != GipPattern::Off).then(|| Gip::new(cfg.gip, cfg.gip_copies, cfg.gip_head_cwnd))),
            gip_copy: None,
            rude: {
                let mut rude = Rude::new();
                if cfg.rude {
                    rude.request(RudeRequest::On, 0, 0);
                }
                rude
            },
            ssthresh_rule: cfg.ssthresh_rule,
            burst_sent: false,
            rack: Gated::new((cfg.rack_tlp && cfg.sack_enabled()).then(|| Box::new(RackTlp::new()))),
            prr: Gated::new(cfg.prr.then(|| Box::new(Prr::new(mss as u64, cfg.prr_flavor)))),
        }
    }

    /// True when this sender runs a mechanism the plain build leaves out
    /// (`tcp::gated`): Rude TCP, F-RTO or Eifel, or cwnd validation. (SACK,
    /// RACK-TLP, PRR and GIP keep state the plain build cannot hold at all:
    /// [`Gated::new`] refuses it.)
    pub fn uses_optional_parts(&self) -> bool {
        self.rude.marked() || self.spurious.is_on() || self.cc.tracks_usage()
    }

    /// The window data may fill: min(cwnd, peer window), or what Rude TCP allows.
    #[inline]
    fn send_window(&self) -> u64 {
        if EXTRAS && self.rude.marked() {
            self.rude.window(self.cc.cwnd(), self.peer_wnd)
        } else {
            self.cc.cwnd().min(self.peer_wnd)
        }
    }

    /// The application asks to be rude, or polite again (RUDE §3.2, `tcp::rude`).
    pub fn set_rude(&mut self, req: RudeRequest) {
        if let RudeExit::CongestionEvent { flight } = self.rude.request(req, self.flight_size(), self.cc.cwnd()) {
            self.cc.on_rude_exit(flight);
        }
    }

    /// FlightSize as the fair congestion control sees it: a rude flow's
    /// flight (sized by the receive window or R) counts only up to F, so a
    /// loss halves the fair window, not the rude one (RUDE §3.2).
    #[inline]
    fn fair_flight(&self, flight: u64) -> u64 {
        if EXTRAS && self.rude.marked() {
            flight.min(self.cc.cwnd())
        } else {
            flight
        }
    }

    /// True while this sender's segments carry the rude bit.
    #[inline]
    pub fn rude(&self) -> bool {
        EXTRAS && self.rude.marked()
    }

    /// While turning off nicely, mirror the congestion control's change of
    /// the fair window from `before` onto the artificial one (RUDE Table 1).
    #[cold]
    fn rude_follow(&mut self, before: u64) {
        self.rude.on_fair_change(before, self.cc.cwnd());
    }

    /// The application appends `bytes` to the send buffer, with `flags`.
    #[inline]
    pub fn write(&mut self, bytes: u64, flags: SendFlags) {
        // GIP §III: the current stripe unit starts here (FLoss-TO test).
        self.write_start = self.app_end;
        self.app_end += bytes;
        if let Some(gip) = self.gip.as_mut() {
            let tail = flags.contains(SendFlags::UNIT_TAIL);
            if let Some(segments) = gip.on_write(self.write_start, self.app_end, tail) {
                // GIP §V-C: every stripe unit starts from a window of 2 segments.
                self.cc.restart_at(segments as u64 * self.mss);
                self.gip_copy = None;
            }
        }
    }

    /// Process the acknowledgment fields of an arriving segment; `ts_rtt` is
    /// the RTT its echoed timestamp gives, when it carries one. Returns true
    /// when the ACK showed the latest timeout to be spurious (`tcp::spurious`).
    pub fn on_ack(
        &mut self,
        now: SimTime,
        clock: &TcpClock,
        seg: &Segment,
        ts_rtt: Option<SimDuration>,
        stats: &mut EndpointStats,
    ) -> bool {
        let fair_before = self.cc.cwnd();
        let spurious = self.process_ack(now, clock, seg, ts_rtt, stats);
        if EXTRAS && self.rude.marked() {
            self.rude_follow(fair_before);
        }
        spurious
    }

    /// [`Sender::on_ack`] without the Rude TCP bookkeeping.
    #[inline]
    fn process_ack(
        &mut self,
        now: SimTime,
        clock: &TcpClock,
        seg: &Segment,
        ts_rtt: Option<SimDuration>,
        stats: &mut EndpointStats,
    ) -> bool {
        let ack = seg.ack;
        let wnd = seg.wnd as u64;
        if ack > self.snd_max || ack < self.snd_una {
            // RFC 793 (3.9): "If the ACK is a duplicate (SEG.ACK < SND.UNA), it
            // can be ignored. If the ACK acks something not yet sent ... drop"
            return false;
        }
        let old_una = self.snd_una;
        // Linux's PRR asks whether an ACK in recovery marked anything newly lost.
        let (sacked_before, lost_before) = match (self.prr.as_ref(), self.sack.as_ref()) {
            (Some(prr), Some(sb)) => (
                sb.sacked_in(self.snd_una, self.snd_max),
                (prr.flavor() == PrrFlavor::Linux && sb.in_recovery()).then(|| sb.lost_marks()),
            ),
            (None, Some(sb)) if self.cc.counts_segments() => (sb.sacked_in(self.snd_una, self.snd_max), None),
            _ => (0, None),
        };
        // RFC 6675 (4): "the scoreboard MUST be updated via the Update () routine".
        let newly_sacked = match self.sack.as_mut() {
            Some(sb) => {
                sb.on_ack();
                (seg.has_sack() || !sb.is_empty()) && sb.update(ack, seg.sack())
            }
            None => false,
        };
        // RFC 5681 (2): a duplicate ACK when "(a) the receiver of the ACK has
        // outstanding data, (b) the incoming acknowledgment carries no data,
        // ... (d) the acknowledgment number is equal to the greatest
        // acknowledgment received ... and (e) the advertised window in the
        // incoming acknowledgment equals the advertised window in the last".
        // RFC 6675 (2) counts an ACK that SACKs new data whatever its window
        // (a SACK receiver grows its window on out-of-order data, `tcp::rcv_window`).
        let mut reo_armed = false;
        if self.rack.is_some() {
            let (newly, wait) = self.rack_detect(now, ack, seg.sack().next());
            stats.lost_retransmits += newly;
            reo_armed = self.arm_reordering_timer(now, clock, wait);
        }
        let dup = ack == self.snd_una
            && self.snd_max > self.snd_una
            && seg.len == 0
            && (wnd == self.peer_wnd || newly_sacked);
        let spurious = EXTRAS && self.spurious.armed() && self.on_verdict(ack, dup, seg, stats);
        if self.gip.is_some() {
            self.gip_on_ack(ack);
        }
        if ack == self.snd_una {
            self.peer_wnd = wnd;
            // FAST08 §5.1: DART, "Duplicate ACKs Received at Timeout".
            self.dart += u32::from(dup);
            if dup {
                self.on_dup_ack(now, clock, ack, newly_sacked, stats);
            }
            if self.prr.is_some() {
                self.prr_update(old_una, sacked_before, lost_before, newly_sacked, false);
            }
            return spurious;
        }
        self.peer_wnd = wnd;
        let recovering = self.in_recovery();
        if let Some(rack) = self.rack.as_mut() {
            if rack.on_ack(ack, recovering) {
                // RFC 8985 (7.4.2): the probe repaired a loss: "invoke a congestion
                // control response equivalent to fast recovery" (Linux tcp_process_tlp_ack).
                self.cc.on_sack_recovery((self.snd_nxt - self.snd_una).min(self.cc.cwnd()));
            }
        }
        let acked = ack - self.snd_una;
        let resent_acked = self.take_rtt_sample(now, clock, ack, ts_rtt);
        self.rto.on_new_ack();
        self.idle.on_new_ack(now);
        self.snd_una = ack;
        // The receiver had buffered data beyond what go-back-N has resent.
        self.snd_nxt = self.snd_nxt.max(ack);
        self.backoff = 0;
        self.dart = 0;
        self.limited.reset();
        let srtt = self.rto.srtt().unwrap_or(SimDuration::ZERO);
        let cut = self.cc.needs_ecn() && self.on_ecn_echo(acked, ack, seg.has(flags::ECE));
        let flight = self.flight_size();
        let restart = match self.sack.as_ref() {
            Some(_) => self.sack_new_ack(ack, acked, sacked_before, cut, now, srtt),
            None if cut => true,
            None => match self.recovery.on_new_ack(&mut self.cc, acked, ack, flight, now, srtt) {
                NewAck::Advance => true,
                NewAck::Partial { reset_timer } => {
                    // RFC 6582 (3.2 step 3): "retransmit the first unacknowledged segment."
                    self.retransmit_now = true;
                    self.reno_prr(acked, flight);
                    reset_timer
                }
            },
        };
        if restart {
            self.rearm_after_ack(now, clock, reo_armed);
        } else if self.snd_una == self.snd_max {
            self.rtx_deadline = None;
        }
        if self.prr.is_some() {
            self.prr_update(old_una, sacked_before, lost_before, newly_sacked, resent_acked);
        }
        spurious
    }

    /// An ACK of new data, `acked` bytes up to `ack`, with SACK on (`sacked_before`
    /// bytes above the old SND.UNA were SACKed before it; `cut` when ECN cut
    /// the window): ends recovery at RecoveryPoint and grows the window outside
    /// it. Returns whether the retransmission timer restarts.
    // Out of line, so that the per-ACK path without SACK stays small enough
    // to be inlined in `Sim::deliver`.
    #[inline(never)]
    fn sack_new_ack(
        &mut self,
        ack: u64,
        acked: u64,
        sacked_before: u64,
        cut: bool,
        now: SimTime,
        srtt: SimDuration,
    ) -> bool {
        let counted = if self.cc.counts_segments() { self.delivered(acked, sacked_before) } else { acked };
        let Some(sb) = self.sack.as_mut() else { return true };
        // RFC 6675 (5): no window growth during recovery; (A) it ends at RecoveryPoint.
        let recovering = sb.in_recovery();
        let ended = sb.on_cumulative_ack(ack);
        if ended && self.prr.is_some() {
            // Linux tcp_end_cwnd_reduction: "tcp_snd_cwnd_set(tp, tp->snd_ssthresh)".
            self.cc.set_cwnd(self.cc.ssthresh());
        }
        // ns-3 ProcessAck grows the window on the ACK that ends recovery too:
        // ExitRecovery, then "IncreaseWindow(m_tcb, segsAcked)" in CA_OPEN.
        let grows = !recovering || ended && self.prr.as_ref().is_some_and(|p| p.flavor() == PrrFlavor::Ns3);
        if grows && !cut {
            self.cc.on_ack(counted, now, srtt);
        }
        // ns-3 ProcessAck in recovery: "NewAck(ackNumber, m_isFirstPartialAck)",
        // the timer restarted by the first partial ACK only (RFC 6582's rule).
        let later_partial = sb.is_ns3() && recovering && !ended && !sb.first_partial_ack();
        !later_partial
    }

    /// What an ACK that moved SND.UNA over `acked` bytes newly delivered, the
    /// SACKed bytes above SND.UNA having been `sacked_before` (RFC 6937:
    /// "DeliveredData = (change in snd.una) + (change in SACKed bytes)"); ns-3
    /// grows the window from that ("bytesAcked = currentDelivered"), not from
    /// `acked`.
    fn delivered(&self, acked: u64, sacked_before: u64) -> u64 {
        let sacked = self.sack.as_deref().map_or(0, |sb| sb.sacked_in(self.snd_una, self.snd_max));
        (acked + sacked).saturating_sub(sacked_before)
    }

    /// PRR (RFC 6937) after an ACK in SACK recovery: SND.UNA moved from
    /// `old_una`, and before the ACK `sacked_before` bytes above it were
    /// SACKed and, for Linux's PRR in recovery, `lost_before` marked lost;
    /// for ns-3's, whether the ACK SACKed new data (`newly_sacked`) and
    /// acknowledged a retransmission (`resent_acked`).
    #[inline(never)]
    fn prr_update(
        &mut self,
        old_una: u64,
        sacked_before: u64,
        lost_before: Option<LostMarks>,
        newly_sacked: bool,
        resent_acked: bool,
    ) {
        // EnterRecovery marks the head lost until its fast retransmission leaves.
        let ns3_pipe = self.ns3_pipe(self.sack_rtx.is_some());
        let delivered = self.delivered(self.snd_una - old_una, sacked_before);
        let (Some(prr), Some(sb)) = (self.prr.as_mut(), self.sack.as_ref()) else { return };
        if !sb.in_recovery() || delivered == 0 {
            return;
        }
        let mut pipe = sb.pipe(self.snd_una, self.snd_max);
        if let Some(ns3) = ns3_pipe {
            pipe = ns3;
        } else if prr.flavor() != PrrFlavor::Rfc6937 {
            // Linux: tcp_packets_in_flight before the fast retransmission leaves;
            // ns-3: EnterRecovery's BytesInFlight(), the head marked lost.
            pipe -= self.sack_rtx.map_or(0, |(_, len)| len).min(pipe);
        }
        if prr.flavor() == PrrFlavor::Ns3 {
            let partial = self.snd_una > old_una && delivered >= self.mss;
            let (ssthresh, sacked) = (self.cc.ssthresh(), newly_sacked);
            if let Some(cwnd) = prr.on_ns3_ack(delivered, pipe, ssthresh, sacked, partial, resent_acked) {
                self.cc.set_cwnd(cwnd);
            }
            return;
        }
        // An ACK that starts recovery is a duplicate: it never advances SND.UNA.
        let clean = self.snd_una > old_una && lost_before.is_some_and(|b| !sb.newly_lost(b, self.snd_una));
        self.cc.set_cwnd(prr.on_ack(delivered, pipe, self.cc.ssthresh(), clean));
    }

    /// The retransmission timer after an ACK of new data; `reo_armed` when
    /// the same ACK armed RACK's reordering timer.
    #[inline]
    fn rearm_after_ack(&mut self, now: SimTime, clock: &TcpClock, reo_armed: bool) {
        self.rtx_deadline = if self.snd_una == self.snd_max {
            // RFC 6298 (5.2): "When all outstanding data has been acknowledged,
            // turn off the retransmission timer."
            None
        } else {
            // RFC 6298 (5.3): "When an ACK is received that acknowledges new
            // data, restart the retransmission timer"
            Some(self.timer.deadline(now, clock, self.rto.rto()))
        };
        let Some(rack) = self.rack.as_mut() else { return };
        // Linux keeps one timer per socket: an ACK that armed the reordering
        // timer does not set the probe's (tcp_rack_mark_lost clears
        // FLAG_SET_XMIT_TIMER); any other ACK of new data replaces it.
        if !reo_armed {
            rack.arm_reo(None);
            self.schedule_probe(now, clock);
        }
    }

    /// RFC 8985 (6.2 step 6): arm the reordering timer when a segment sent
    /// before the latest delivered one is not yet old enough to count as
    /// lost; `wait` is when the last of them will be. Linux
    /// (`tcp_rack_mark_lost`) arms it that long plus `TCP_TIMEOUT_MIN`, two
    /// jiffies (none on an exact clock), in the slot the probe would use
    /// ([`RackTlp::arm_reo`]).
    /// Returns true when armed.
    #[inline]
    fn arm_reordering_timer(&mut self, now: SimTime, clock: &TcpClock, wait: Option<SimTime>) -> bool {
        let (Some(rack), Some(at)) = (self.rack.as_mut(), wait) else { return false };
        let slack = SimDuration(2 * clock.granularity().as_ps());
        rack.arm_reo(Some(clock.deadline(now, at.since(now) + slack)));
        true
    }

    /// RACK (RFC 8985 §6.2) on an ACK of everything below `ack` whose first
    /// SACK block is `first_block` (or at the reordering timer's expiry, with
    /// `ack` SND.UNA and no block): note the newest transmission it shows
    /// delivered, then hand the scoreboard the boundary below which every
    /// unSACKed segment is lost, and the retransmissions lost again. Returns
    /// how many retransmitted segments it found lost for the first time and,
    /// when the newest delivery moved, when the last unSACKed segment sent
    /// before it that is not lost yet will be (step 5's `timeout`).
    #[inline(never)]
    fn rack_detect(&mut self, now: SimTime, ack: u64, first_block: Option<(u64, u64)>) -> (u64, Option<SimTime>) {
        let (Some(rack), Some(sb)) = (self.rack.as_mut(), self.sack.as_mut()) else { return (0, None) };
        // RFC 8985 (6.2 step 2): a retransmitted segment counts only when its
        // delivery cannot be the original's: "now - Segment.xmit_ts < RACK.min_RTT"
        // would be ambiguous.
        let plausible = |r: &SentRecord| !r.retransmitted || rack.unambiguous(r.sent_at, now);
        // The newest delivered: among what the cumulative ACK covers, and the
        // segment holding the top SACKed octet.
        let mut newest = None;
        for r in self.sent.iter().take_while(|r| r.end <= ack).filter(|r| plausible(r)) {
            newest = newest.max(Some((r.sent_at, r.end)));
        }
        if let Some(&(_, top)) = sb.ranges().last() {
            let i = self.sent.as_slice().partition_point(|r| r.end < top);
            if let Some(r) = self.sent.as_slice().get(i).filter(|r| plausible(r)) {
                newest = newest.max(Some((r.sent_at, r.end)));
            }
        }
        // RFC 2018 (4): "The first SACK block ... MUST specify the contiguous
        // block of data containing the segment which triggered this ACK": in
        // recovery often a retransmission, sent after everything above it.
        if let Some((start, end)) = first_block {
            let sent = self.sent.as_slice();
            let first = sent.partition_point(|r| r.end <= start);
            let mut from = sent.get(first.wrapping_sub(1)).map_or(self.snd_una, |r| r.end);
            for r in &sent[first..] {
                if r.end > end {
                    break;
                }
                if from >= start && plausible(r) {
                    newest = newest.max(Some((r.sent_at, r.end)));
                }
                from = r.end;
            }
        }
        let advanced = newest.is_some_and(|(sent_at, end)| rack.on_delivered(sent_at, end, now));
        if sb.is_empty() {
            sb.set_rack_lost(0);
            sb.set_rack_relost(None);
            return (0, None);
        }
        let reo_wnd = rack.reo_wnd(sb.in_recovery(), sb.dupthresh_boundary() > 0);
        let mut boundary = 0;
        for r in self.sent.iter().skip_while(|r| r.end <= ack).filter(|r| !r.retransmitted) {
            if !rack.is_lost(r.sent_at, r.end, now, reo_wnd) {
                break;
            }
            boundary = r.end;
        }
        sb.set_rack_lost(boundary);
        // Linux tcp_rack_mark_lost runs only "if (tp->rack.advanced)".
        let mut wait = None;
        if advanced {
            let mut start = ack;
            for r in self.sent.iter().skip_while(|r| r.end <= ack) {
                let s = std::mem::replace(&mut start, r.end).max(ack);
                match rack.lost_at(r.sent_at, r.end, reo_wnd) {
                    // Originals leave in sequence: none after this one was sent before it.
                    None if !r.retransmitted => break,
                    Some(at) if at > now && sb.sacked_in(s, r.end) < r.end - s => wait = wait.max(Some(at)),
                    _ => {}
                }
            }
        }
        // RFC 8985 (6.2 step 5) judges every segment by its latest
        // transmission, retransmissions too ("The advantage of RACK is it
        // applies to both original and retransmitted packet", Linux
        // tcp_recovery.c): the lowest run of retransmitted, unSACKed segments
        // that RACK's clock finds lost again.
        let (mut relost, mut newly): (Option<(u64, u64)>, u64) = (None, 0);
        if sb.in_recovery() {
            let mut start = ack;
            for r in self.sent.iter_mut().skip_while(|r| r.end <= ack) {
                let s = std::mem::replace(&mut start, r.end).max(ack);
                if s >= sb.high_rxt() {
                    break;
                }
                let lost_again = r.retransmitted
                    && sb.sacked_in(s, r.end) < r.end - s
                    && rack.is_lost(r.sent_at, r.end, now, reo_wnd);
                if lost_again && !r.lost_again {
                    r.lost_again = true;
                    newly += 1;
                }
                match (lost_again, &mut relost) {
                    (true, Some(run)) => run.1 = r.end,
                    (true, None) => relost = Some((s, r.end)),
                    (false, Some(_)) => break,
                    (false, None) => {}
                }
            }
        }
        sb.set_rack_relost(relost);
        (newly, wait)
    }

    /// Arm the tail loss probe (Linux `tcp_schedule_loss_probe`): with data
    /// in flight, outside recovery and loss, one probe at a time, never
    /// later than the retransmission timer.
    fn schedule_probe(&mut self, now: SimTime, clock: &TcpClock) {
        let allowed = self.may_probe();
        let Some(rack) = self.rack.as_mut() else { return };
        let at = match self.rto.srtt() {
            Some(srtt) if allowed && rack.may_probe() => {
                let segments = (self.snd_max - self.snd_una).div_ceil(self.mss);
                let at = clock.deadline(now, RackTlp::pto(srtt, segments, self.rto.rto_min()));
                // RFC 8985 (7.2) and Linux: "If the RTO formula yields an earlier
                // time, then use that time": the probe goes no later than the RTO.
                Some(self.rtx_deadline.map_or(at, |rto| at.min(rto)))
            }
            _ => None,
        };
        rack.arm(at);
    }

    /// A tail loss probe may go out: data in flight, not in recovery, and not
    /// in the loss recovery after a timeout either (Linux probes in Open or
    /// CWR only): neither backed off nor resending what go-back-N rewound.
    #[inline]
    fn may_probe(&self) -> bool {
        self.snd_una < self.snd_max && self.snd_nxt == self.snd_max && self.backoff == 0 && !self.in_recovery()
    }

    /// The probe timer fired: one segment goes out whatever cwnd says — new
    /// data if the peer window allows, else the highest outstanding segment
    /// again (Linux `tcp_send_loss_probe`).
    /// Returns false when there is nothing to probe with.
    #[cold]
    fn send_probe(&mut self) -> bool {
        let unsent = self.app_end - self.snd_max;
        let new_len = unsent.min(self.mss);
        let probe = if unsent > 0 && self.snd_max + new_len <= self.snd_una + self.peer_wnd {
            (self.snd_max, new_len)
        } else {
            let start = match self.sent.len() {
                0 => return false,
                1 => self.snd_una,
                n => self.sent[n - 2].end.max(self.snd_una),
            };
            (start, self.snd_max - start)
        };
        let retransmitted = probe.0 < self.snd_max;
        let end = self.snd_max.max(probe.0 + probe.1);
        if let Some(rack) = self.rack.as_mut() {
            rack.on_probe_due(probe, end, retransmitted);
        }
        true
    }

    /// GIP (`tcp::gip`): an ACK may call for a redundant copy of the unit's tail.
    #[cold]
    fn gip_on_ack(&mut self, ack: u64) {
        let Some(gip) = self.gip.as_mut() else { return };
        if let Some((copy, cut)) = gip.on_ack(ack, self.snd_max, self.mss) {
            if cut {
                // GIP §IV-B, Pattern 123: "cwnd should be decreased by 3".
                self.cc.cap_cwnd(self.cc.cwnd().saturating_sub(3 * self.mss).max(self.mss));
            }
            self.gip_copy = Some(copy);
        }
    }

    /// An algorithm that needs ECN (DCTCP, RFC 8257 §3.3) sees every ACK of
    /// new data; it may cut the window, not during loss recovery. Returns
    /// true when it cut: that ACK grows nothing (Linux enters CWR).
    #[cold]
    fn on_ecn_echo(&mut self, acked: u64, ack: u64, ece: bool) -> bool {
        let recovering = self.in_recovery();
        self.cc.on_ecn_echo(acked, ack, ece, self.snd_nxt, recovering)
    }

    /// A duplicate ACK of `ack`: fast retransmit by NewReno, or by RFC 6675
    /// when SACK is on (where a duplicate must also SACK new data).
    fn on_dup_ack(&mut self, now: SimTime, clock: &TcpClock, ack: u64, newly_sacked: bool, stats: &mut EndpointStats) {
        if let Some(sb) = self.sack.as_mut() {
            if newly_sacked && sb.on_dup_ack(ack) {
                self.enter_sack_recovery(now, clock, ack, stats);
            }
            return;
        }
        // RFC 5681 (3.2 step 2): "When [RFC3042] is in use, additional data
        // sent in limited transmit MUST NOT be included in this calculation."
        let flight = self.fair_flight(self.flight_size().saturating_sub(self.limited.excluded()));
        let ns2_half = (self.ssthresh_rule == SsthreshRule::Ns2).then(|| self.cc.ns2_half(false, self.peer_wnd));
        let (recovering, prior_cwnd) = (self.recovery.in_recovery(), self.cc.cwnd());
        if self.recovery.on_dup_ack(&mut self.cc, ack, flight, self.snd_max, ns2_half) {
            stats.fast_retransmits += 1;
            self.restart_for_fast_retransmit(now, clock);
            self.retransmit_now = true;
            self.limited.reset();
            let (out, dupacks) = (self.flight_size(), self.recovery.dupacks());
            if let Some(prr) = self.prr.as_mut() {
                prr.enter_reno(out, prior_cwnd, dupacks);
            }
            self.reno_prr(0, out);
        } else if recovering {
            self.reno_prr(0, self.flight_size());
        }
    }

    /// RFC 6675 (5 step 4): loss recovery starts at HighACK `ack`, with the
    /// fast retransmission of its segment.
    fn enter_sack_recovery(&mut self, now: SimTime, clock: &TcpClock, ack: u64, stats: &mut EndpointStats) {
        stats.fast_retransmits += 1;
        // ns-3's BytesInFlight() once EnterRecovery has marked the head lost.
        let ns3_pipe = self.ns3_pipe(true);
        let (prior_cwnd, pipe_head_lost) = match self.sack.as_ref() {
            Some(sb) => (self.cc.cwnd(), ns3_pipe.unwrap_or_else(|| sb.pipe_head_lost(ack, self.snd_max, self.mss))),
            None => (self.cc.cwnd(), 0),
        };
        match self.ssthresh_rule {
            // RFC 6675 (5 step 4.2): "ssthresh = cwnd = (FlightSize / 2)", where
            // FlightSize leaves out what SACKed data let through beyond cwnd
            // (RFC 5681 3.2 leaves out Limited Transmit's segments).
            SsthreshRule::Rfc5681 => self.cc.on_sack_recovery((self.snd_nxt - self.snd_una).min(self.cc.cwnd())),
            // ns-3.44 TcpSocketBase::EnterRecovery: MarkHeadAsLost, then
            // "GetSsThresh(m_tcb, bytesInFlight)" with BytesInFlight() the pipe.
            SsthreshRule::Ns3 => self.cc.on_sack_recovery(pipe_head_lost),
            // ns-2.35 Sack1TcpAgent::dupack_action: "slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)".
            SsthreshRule::Ns2 => {
                let half = self.cc.ns2_half(false, self.peer_wnd);
                self.cc.on_loss(self.cc.ns2_loss_basis(half));
                self.cc.set_cwnd(half.max(self.mss));
            }
        }
        if let Some(prr) = self.prr.as_mut() {
            let flight = match (prr.flavor(), self.sack.as_ref()) {
                // TcpPrrRecovery::EnterRecovery: "m_recoveryFlightSize = tcb->m_bytesInFlight".
                (PrrFlavor::Ns3, Some(_)) => pipe_head_lost,
                _ => self.snd_nxt - self.snd_una,
            };
            prr.enter(flight, prior_cwnd);
        }
        let Some(sb) = self.sack.as_mut() else { return };
        // (4.1) RecoveryPoint = HighData; (4.3) retransmit HighACK's segment.
        self.sack_rtx = Some(sb.enter_recovery(ack, self.snd_max));
        self.restart_for_fast_retransmit(now, clock);
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3, Linux
    /// `tcp_rack_reo_timeout`): judge the outstanding segments again, start
    /// recovery if that found the head lost, and run the retransmission timer
    /// again, for the head's RTO counted from when it was sent.
    #[cold]
    fn on_reordering_timeout(&mut self, now: SimTime, clock: &TcpClock, stats: &mut EndpointStats) {
        let ack = self.snd_una;
        let (newly, _) = self.rack_detect(now, ack, None);
        stats.lost_retransmits += newly;
        if self.sack.as_ref().is_some_and(|sb| sb.loss_found(ack)) {
            self.enter_sack_recovery(now, clock, ack, stats);
        }
        if self.snd_una == self.snd_max {
            return;
        }
        // tcp_rearm_rto: "rto = usecs_to_jiffies(max_t(int, delta_us, 1))" with
        // delta_us the RTO left since the head was sent (tcp_rto_delta_us).
        let head_sent = self.sent.front().map_or(now, |r| r.sent_at);
        let left = (head_sent + self.rto.rto()).since(now).max(SimDuration(1));
        self.rtx_deadline = Some(self.timer.deadline(now, clock, left));
    }

    /// PRR in NewReno recovery without SACK (`tcp::prr`, Linux
    /// `tcp_cwnd_reduction` for a reno connection), after a duplicate ACK
    /// (`acked` 0) or a partial ACK of `acked` bytes, `flight` bytes left
    /// outstanding: cwnd takes PRR's value in place of the inflated one.
    /// The head awaits its retransmission when one is due.
    #[inline]
    fn reno_prr(&mut self, acked: u64, flight: u64) {
        let Some(prr) = self.prr.as_mut() else { return };
        if let Some(cwnd) = prr.on_reno_ack(acked, flight, self.retransmit_now, self.cc.ssthresh()) {
            self.cc.set_cwnd(cwnd);
        }
    }

    /// With `rto_restart = "fast_retransmit"` (ns-2) or `"head_retransmit"`
    /// (Linux): the fast retransmission about to leave restarts the
    /// retransmission timer.
    #[inline]
    fn restart_for_fast_retransmit(&mut self, now: SimTime, clock: &TcpClock) {
        // ns-2.35 reset_rtx_timer, which dupack_action calls: "rtt_active_ = 0".
        self.timed = None;
        if self.timer.restarts_on_fast_retransmit() {
            self.restart_rtx_timer(now, clock);
        }
    }

    /// Restart the retransmission timer for a whole RTO from `now`; in Linux's
    /// one timer slot that replaces RACK's reordering timer.
    #[inline]
    fn restart_rtx_timer(&mut self, now: SimTime, clock: &TcpClock) {
        self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
        if let Some(rack) = self.rack.as_mut() {
            rack.arm_reo(None);
        }
    }

    /// Act on what the spurious-timeout detector makes of this ACK; true when
    /// it judged the latest timeout spurious.
    #[cold]
    fn on_verdict(&mut self, ack: u64, dup: bool, seg: &Segment, stats: &mut EndpointStats) -> bool {
        match self.spurious.on_ack(ack, self.snd_una, dup, seg.ts().map(|t| t.ecr)) {
            Verdict::Continue => false,
            Verdict::SendNew => {
                // RFC 5682 (2.1 step 2b): "transmit up to two new (previously
                // unsent) segments" — if there are any and the peer window allows.
                if self.app_end > self.snd_max && self.snd_max + self.mss <= ack + seg.wnd as u64 {
                    self.snd_nxt = self.snd_max;
                    self.frto_new = 2;
                } else {
                    self.spurious.cancel();
                }
                false
            }
            Verdict::Conventional => {
                // RFC 5682 (2.1 step 3a): "set the congestion window to no more than
                // 3 * MSS, and continue with the slow start algorithm retransmitting
                // unacknowledged segments."
                self.cc.cap_cwnd(3 * self.mss);
                self.snd_nxt = self.snd_una;
                self.frto_new = 0;
                false
            }
            Verdict::Spurious => {
                let (cwnd, ssthresh) = self.spurious.prior();
                // Undo (Linux tcp_undo_cwnd_reduction); RFC 5682 (2.1 step 3b):
                // "set the value of the "recover" variable to SND.UNA".
                self.cc.undo(cwnd, ssthresh);
                self.recovery.on_undo(ack);
                if let Some(sb) = self.sack.as_mut() {
                    sb.on_undo();
                }
                // RFC 4015 (3 step 4): resume with previously unsent data.
                self.snd_nxt = self.snd_max;
                self.frto_new = 0;
                stats.spurious_timeouts += 1;
                true
            }
        }
    }

    /// Drop the records `ack` covers and take at most one RTT sample from
    /// them. Returns whether one of them had been retransmitted.
    fn take_rtt_sample(&mut self, now: SimTime, clock: &TcpClock, ack: u64, ts_rtt: Option<SimDuration>) -> bool {
        let (mut oldest, mut newest) = (None, None);
        let mut retransmitted = false;
        while let Some(r) = self.sent.front() {
            if r.end > ack {
                break;
            }
            oldest = oldest.or(Some(r.sent_at));
            newest = Some(r.sent_at);
            retransmitted |= r.retransmitted;
            self.sent.pop_front();
        }
        if let (Some(sent_at), false) = (newest, retransmitted) {
            // Linux tcp_clean_rtx_queue: "ca_rtt_us" from the newest segment acknowledged.
            self.cc.on_rtt_sample(now, now.since(sent_at), ack, self.snd_nxt);
        }
        if self.time_one && ts_rtt.is_none() {
            self.take_timed_sample(now, clock, ack);
            return retransmitted;
        }
        // RFC 6298 (3): "RTT samples MUST NOT be made using segments that were
        // retransmitted" — Linux `tcp_clean_rtx_queue` skips the sample when
        // any newly acknowledged segment was, and otherwise uses the oldest.
        let sample = match (oldest, retransmitted) {
            (Some(sent_at), false) => Some(self.rto.sample(clock, sent_at, now)),
            // Linux tcp_ack_update_rtt: the echoed timestamp when Karn's rule
            // leaves no sample (RFC 7323 (4): RTTM needs no such rule).
            (Some(_), true) => ts_rtt,
            (None, _) => None,
        };
        if let Some(rtt) = sample {
            self.rto.on_ack_rtt_sample(rtt, ack, self.snd_nxt);
        }
        retransmitted
    }

    /// The RTT sample of [`Sender::take_rtt_sample`] as ns-2.35 times segments
    /// (`rtt_timing = "ns2"`): `TcpAgent::newack` samples once an ACK covers the timed
    /// segment ("if (rtt_active_ && tcph->seqno() >= rtt_seq_)") and only then
    /// ends the back-off; a NewReno partial ACK that covers it ends the timing
    /// and the back-off without a sample (`partialnewack`); a Sack1 partial
    /// ACK ends the back-off and keeps the timing (`recv`: "t_backoff_ = 1").
    #[cold]
    fn take_timed_sample(&mut self, now: SimTime, clock: &TcpClock, ack: u64) {
        let covered = self.timed.filter(|&(end, _)| ack >= end);
        if self.sack.as_deref().is_some_and(|sb| sb.is_partial(ack)) {
            self.rto.reset_backoff();
            return;
        }
        if self.sack.is_none() && self.recovery.is_partial(ack) {
            if covered.is_some() {
                self.timed = None;
                self.rto.reset_backoff();
            }
            return;
        }
        if let Some((_, sent_at)) = covered {
            self.timed = None;
            let rtt = self.rto.sample(clock, sent_at, now);
            self.rto.on_ack_rtt_sample(rtt, ack, self.snd_nxt);
        }
    }

    /// Fire the retransmission timer if due; returns the classified timeout
    /// when it expired with data outstanding.
    pub fn on_timer(&mut self, now: SimTime, clock: &TcpClock, stats: &mut EndpointStats) -> Option<Timeout> {
        if let Some(rack) = self.rack.as_mut() {
            // The reordering timer holds the socket's one timer while armed.
            if let Some(at) = rack.reo_at() {
                if at <= now {
                    rack.arm_reo(None);
                    self.on_reordering_timeout(now, clock, stats);
                }
                return None;
            }
            if rack.probe_at().is_some_and(|p| p <= now) {
                rack.arm(None);
                if self.may_probe() && self.send_probe() {
                    stats.loss_probes += 1;
                    // RFC 8985 (7.3) and Linux tcp_send_loss_probe's tcp_rearm_rto:
                    // after a probe the retransmission timer runs a whole RTO from now.
                    self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
                    return None;
                }
            }
        }
        match self.rtx_deadline {
            Some(d) if d <= now => self.rtx_deadline = None,
            _ => return None,
        }
        if self.snd_una == self.snd_max {
            return None;
        }
        stats.timeouts += 1;
        // FAST08 §5.1 / GIP §III: classify from the state BEFORE the timeout acts.
        let timeout = forensics::classify(self.snapshot(now));
        let cwnd = self.cc.cwnd();
        if EXTRAS {
            // F-RTO and Eifel are optional parts: without them, nothing to note.
            let rtx_end = self.snd_max.min(self.snd_una + self.mss);
            let ssthresh = self.cc.ssthresh();
            self.spurious.on_timeout(self.snd_una, rtx_end, self.snd_max, cwnd, ssthresh, self.backoff > 0);
        }
        let (basis, repeated) = match self.ssthresh_rule {
            SsthreshRule::Rfc5681 => (self.fair_flight(self.flight_size()), self.backoff > 0),
            // ns-3.44 TcpSocketBase::ReTxTimeout: "inFlightBeforeRto = BytesInFlight()".
            SsthreshRule::Ns3 => match self.sack.as_ref() {
                Some(sb) => {
                    let pipe = self.ns3_pipe(false).unwrap_or_else(|| sb.pipe(self.snd_una, self.snd_max));
                    (pipe, self.backoff > 0)
                }
                None => (self.fair_flight(self.flight_size()), self.backoff > 0),
            },
            SsthreshRule::Ns2 => {
                let half = self.cc.ns2_half(self.recovery.in_recovery(), self.peer_wnd);
                (self.cc.ns2_loss_basis(half), false)
            }
        };
        self.cc.on_rto(basis, repeated);
        self.recovery.on_rto(self.snd_max);
        if EXTRAS && self.rude.marked() {
            self.rude_follow(cwnd);
        }
        if let Some(sb) = self.sack.as_mut() {
            // RFC 6675 (5.1): "RecoveryPoint MUST be set to HighData" and recovery ends.
            sb.on_timeout(self.snd_max);
        }
        if self.sack.as_deref().is_some_and(Scoreboard::is_ns3) {
            // TcpTxBuffer::SetSentListLost: every unSACKed segment "becomes lost",
            // "(*it)->m_retrans = false".
            self.sent.iter_mut().for_each(|r| r.resent_since_timeout = false);
        }
        self.sack_rtx = None;
        // ns-2.35 reset_rtx_timer, which the timeout calls: "rtt_active_ = 0".
        self.timed = None;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_timeout();
        }
        self.frto_new = 0;
        self.backoff = self.backoff.saturating_add(1);
        self.retransmit_now = false;
        self.limited.reset();
        // RFC 6298 (5.4): "Retransmit the earliest segment that has not been
        // acknowledged" — go-back-N: everything from SND.UNA is sent again.
        self.snd_nxt = self.snd_una;
        // RFC 6298 (5.5): "The host MUST set RTO <- RTO * 2"
        self.rto.on_timeout();
        // RFC 6298 (5.6): "Start the retransmission timer, such that it expires
        // after RTO seconds (for the value of RTO after the doubling"
        self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
        Some(timeout)
    }

    /// What timeout forensics needs, read before a timeout changes anything.
    #[cold]
    fn snapshot(&self, now: SimTime) -> TimeoutSnapshot {
        // The record covering SND.UNA is the oldest one still held.
        let (una_end, una_retransmitted) =
            self.sent.front().map_or((self.snd_max, false), |r| (r.end, r.retransmitted));
        TimeoutSnapshot {
            time: now,
            rto: self.rto.rto(),
            backoff: self.backoff,
            cwnd: self.cc.cwnd(),
            flight: self.flight_size(),
            dart: self.dart,
            una_retransmitted,
            all_sent: self.snd_max == self.app_end,
            segments_beyond: self.snd_max.saturating_sub(una_end) / self.mss,
            write_unacked: self.snd_una == self.write_start,
            dupack_threshold: self.dupack_threshold,
        }
    }

    /// The next data segment to send now, if any: a GIP copy or a tail loss
    /// probe that is due, a due retransmission of SND.UNA, then data from
    /// SND.NXT as the window allows.
    pub fn poll_data(&mut self, now: SimTime, clock: &TcpClock) -> Option<DataTx> {
        let copy = if EXTRAS && self.gip_copy.is_some() { self.take_gip_copy() } else { None };
        let next = match copy.or_else(|| self.rack.as_mut().and_then(|r| r.take_probe())) {
            Some(c) => Some(c),
            None if self.sack.is_some() => self.next_sack_segment(now),
            None => self.next_segment(now),
        };
        let Some((seq, len)) = next else {
            if EXTRAS && (self.cc.tracks_usage() || self.rack.is_some()) {
                self.end_burst(now, clock);
            }
            return None;
        };
        let mut tx = self.transmit(now, clock, seq, len);
        tx.redundant = copy.is_some();
        Some(tx)
    }

    /// The GIP copy due now, unless its data was acknowledged meanwhile.
    #[cold]
    fn take_gip_copy(&mut self) -> Option<(u64, u64)> {
        self.gip_copy.take().filter(|&(seq, len)| seq + len > self.snd_una)
    }

    /// Nothing more to send for now: tell cwnd validation how full the window
    /// is (Linux calls `tcp_cwnd_validate` at the end of `tcp_write_xmit` when
    /// it sent something or was cwnd-limited).
    /// The tail loss probe is rescheduled after each burst (`tcp_write_xmit`
    /// ends with `tcp_schedule_loss_probe`).
    #[cold]
    fn end_burst(&mut self, now: SimTime, clock: &TcpClock) {
        if self.cc.tracks_usage() {
            let mut flight = self.flight_size();
            if let Some(sb) = self.sack.as_ref() {
                flight -= sb.sacked_in(self.snd_una, self.snd_nxt);
            }
            // tcp_write_xmit: "is_cwnd_limited |= (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp))".
            let cwnd_limited = flight + self.mss > self.cc.cwnd();
            if self.burst_sent || cwnd_limited {
                self.cc.on_burst(self.snd_una, self.snd_nxt, flight, cwnd_limited);
            }
        }
        if self.burst_sent && self.rack.is_some() {
            self.schedule_probe(now, clock);
        }
        self.burst_sent = false;
    }

    /// `(seq, len)` of the next segment with SACK on: the segment that starts
    /// recovery, then RFC 6675 `NextSeg` while cwnd − pipe ≥ SMSS during
    /// recovery; otherwise new data (or, after a timeout, the next unSACKed
    /// data) as the window allows, SACKed data not counting as outstanding.
    fn next_sack_segment(&mut self, now: SimTime) -> Option<(u64, u64)> {
        if let Some(first) = self.sack_rtx.take() {
            return Some(first);
        }
        if self.sack.as_deref()?.in_recovery() {
            // RFC 6675 (5 step C): "If cwnd - pipe >= 1 SMSS, the sender SHOULD
            // transmit one or more segments"
            let (cwnd, ns3_pipe) = (self.rude.window(self.cc.cwnd(), u64::MAX), self.ns3_pipe(false));
            let sb = self.sack.as_deref_mut()?;
            let may = match ns3_pipe {
                Some(pipe) => cwnd >= pipe + self.mss,
                None => sb.may_send(cwnd, self.snd_una, self.snd_max),
            };
            if !may {
                return None;
            }
            let may_send_new = self.snd_max + self.mss.min(self.app_end - self.snd_max) <= self.snd_una + self.peer_wnd;
            let (seq, len, rule) = sb.next_seg(self.snd_una, self.snd_max, self.app_end, may_send_new)?;
            sb.on_sent(seq + len, rule);
            return Some((seq, len));
        }
        if self.sack.as_deref().is_some_and(|sb| sb.is_ns3() && self.snd_una < sb.timeout_high()) {
            return self.ns3_next_after_timeout();
        }
        let mut run_end = u64::MAX;
        if self.snd_nxt < self.snd_max {
            // After a timeout: skip what the receiver holds (Linux tcp_enter_loss keeps SACK marks).
            (self.snd_nxt, run_end) = self.sack.as_deref()?.hole_at(self.snd_nxt);
        }
        let unsent = self.app_end.saturating_sub(self.snd_nxt);
        if unsent == 0 {
            return None;
        }
        if self.snd_una == self.snd_max {
            self.restart_if_idle(now);
        }
        let sb = self.sack.as_deref()?;
        let flight = self.snd_nxt - self.snd_una - sb.sacked_in(self.snd_una, self.snd_nxt);
        let usable = self.send_window().saturating_sub(flight);
        let len = unsent.min(self.mss).min(run_end - self.snd_nxt);
        // RFC 9293 (3.8.6.2.1): "usable window ... U = SND.UNA + SND.WND - SND.NXT".
        // The flight leaves SACKed bytes out, the peer's window does not: new data
        // must end within it, and a retransmission start within it (or at
        // SND.UNA), as Linux's tcp_snd_wnd_test and tcp_retransmit_skb require.
        let wnd_end = self.snd_una + self.peer_wnd;
        let in_window = if self.snd_nxt < self.snd_max {
            self.snd_nxt < wnd_end || self.snd_nxt == self.snd_una
        } else {
            self.snd_nxt + len <= wnd_end
        };
        if len <= usable && in_window || self.frto_allows(len) {
            return Some((self.snd_nxt, len));
        }
        None
    }

    /// F-RTO step 2b: one of the two new segments, within the peer window.
    #[inline]
    fn frto_allows(&mut self, len: u64) -> bool {
        let allowed = EXTRAS
            && self.frto_new > 0
            && self.snd_nxt >= self.snd_max
            && self.snd_nxt + len <= self.snd_una + self.peer_wnd;
        self.frto_new -= u8::from(allowed);
        allowed
    }

    /// `(seq, len)` of the segment [`Sender::poll_data`] sends next, if any.
    #[inline]
    fn next_segment(&mut self, now: SimTime) -> Option<(u64, u64)> {
        if self.retransmit_now {
            if self.prr.as_ref().is_some_and(|p| p.flavor() == PrrFlavor::Linux) && self.cc.cwnd() < self.flight_size()
            {
                // Linux retransmits within cwnd (tcp_xmit_retransmit_queue: "if
                // (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp)) break"): the head
                // a partial ACK left waits for the quota of a later ACK.
                return None;
            }
            self.retransmit_now = false;
            if self.snd_una < self.snd_max {
                // RFC 5681 (3.2 step 3): "The lost segment starting at SND.UNA MUST be retransmitted"
                return Some((self.snd_una, self.mss.min(self.snd_max - self.snd_una)));
            }
        }
        let unsent = self.app_end - self.snd_nxt;
        if unsent == 0 {
            return None;
        }
        if self.snd_una == self.snd_max {
            self.restart_if_idle(now);
        }
        let flight = self.snd_nxt - self.snd_una;
        let usable = self.send_window().saturating_sub(flight);
        // RFC 1122 (4.2.3.4): send "if a maximum-sized segment can be sent" or
        // "if the data is pushed and all queued data can be sent now" (Nagle off).
        let len = unsent.min(self.mss);
        if len <= usable && self.recovery.burst_left() || self.frto_allows(len) {
            return Some((self.snd_nxt, len));
        }
        self.limited_transmit(len, flight)
    }

    /// Data to send with nothing outstanding: tell the algorithm, and shrink
    /// cwnd first if idle too long.
    #[cold]
    #[inline(never)]
    fn restart_if_idle(&mut self, now: SimTime) {
        self.cc.on_tx_start(now, self.idle.last_send());
        if self.idle.due(now, self.rto.rto()) {
            match self.idle.rule() {
                IdleRule::Rfc5681 => self.cc.on_idle_restart(),
                IdleRule::Linux => self.cc.on_linux_idle_restart(self.idle.idle(now), self.rto.rto()),
                // ns-2 `slowdown(CLOSE_CWND_ONE)`.
                IdleRule::Ns2 => self.cc.restart_at(self.mss),
            }
        }
    }

    /// The window is full: send `len` new bytes anyway if limited transmit allows.
    fn limited_transmit(&mut self, len: u64, flight: u64) -> Option<(u64, u64)> {
        // RFC 3042 (2): "The congestion window (cwnd) MUST NOT be changed when
        // these new segments are transmitted." — only NEW data (unless the
        // ns-2.35 rule resends), within the peer window.
        let extra = self.limited.allowance(self.recovery.dupacks(), self.recovery.in_recovery(), self.mss);
        if extra == 0 || !self.limited.may_send(self.snd_nxt < self.snd_max) {
            return None;
        }
        let wnd = (self.cc.cwnd() + extra).min(self.peer_wnd);
        if len > wnd.saturating_sub(flight) {
            return None;
        }
        self.limited.on_sent(len);
        Some((self.snd_nxt, len))
    }

    /// Book-keeping for sending `[seq, seq + len)` at `now`.
    fn transmit(&mut self, now: SimTime, clock: &TcpClock, seq: u64, len: u64) -> DataTx {
        let end = seq + len;
        let retransmission = seq < self.snd_max;
        if retransmission {
            self.mark_retransmitted(seq, end.min(self.snd_max), now);
            if seq == self.snd_una && self.timer.restarts_on_head_retransmit() {
                // Linux tcp_xmit_retransmit_queue: "if (skb == rtx_head ...) rearm_timer = true".
                self.restart_rtx_timer(now, clock);
            }
        }
        if end > self.snd_max {
            self.sent.push_back(SentRecord {
                end,
                sent_at: now,
                retransmitted: retransmission,
                lost_again: false,
                resent_since_timeout: false,
            });
            self.snd_max = end;
            if self.time_one && self.timed.is_none() {
                // ns-2.35 TcpAgent::output: "if (seqno > maxseq_) { ... if (!rtt_active_)"
                self.timed = Some((end, now));
            }
        }
        self.snd_nxt = self.snd_nxt.max(end);
        self.burst_sent = true;
        if let Some(prr) = self.prr.as_mut() {
            prr.on_sent(len);
        }
        self.idle.on_send(now);
        if self.rtx_deadline.is_none() {
            // RFC 6298 (5.1): "Every time a packet containing data is sent
            // (including a retransmission), if the timer is not running, start it"
            self.rtx_deadline = Some(self.timer.deadline(now, clock, self.rto.rto()));
        }
        DataTx { seq, len: len as u32, retransmission, redundant: false }
    }

    /// With `tcp.sack_recovery = "ns3"`, the pipe as ns-3.44 counts it
    /// (`TcpTxBuffer::BytesInFlight`: "m_sentSize - leftOut + retrans"):
    /// a segment retransmitted since the last timeout counts whole, SACKed or
    /// not (`Update` clears its lost mark, not its retransmitted one); any
    /// other SACKed byte does not, nor a segment marked lost: every unSACKed
    /// one a timeout found outstanding (`SetSentListLost`), one with
    /// DupThresh segments SACKed above it (`UpdateLostCount`), and with
    /// `head_lost` the head (`MarkHeadAsLost` at a fast retransmit). `None`
    /// with any other recovery.
    fn ns3_pipe(&self, head_lost: bool) -> Option<u64> {
        let sb = self.sack.as_deref().filter(|sb| sb.is_ns3())?;
        let mut pipe = 0;
        for (s, e, r) in self.outstanding() {
            if r.resent_since_timeout {
                pipe += e - s;
            } else if !(sb.ns3_lost(s) || head_lost && s == self.snd_una) {
                pipe += e - s - sb.sacked_in(s, e);
            }
        }
        Some(pipe)
    }

    /// After a timeout, what ns-3.44 sends next (`TcpTxBuffer::NextSeg`, rules
    /// 1 and 2, as `SendPendingData` calls it outside recovery): the first
    /// segment marked lost and not yet resent, but only below the highest
    /// SACKed byte when any is SACKed, else new data; a lost segment above
    /// the highest SACK waits until SACKs of later data pass it. Within cwnd
    /// less [`Sender::ns3_pipe`] and the peer's window.
    fn ns3_next_after_timeout(&self) -> Option<(u64, u64)> {
        let pipe = self.ns3_pipe(false)?;
        let sb = self.sack.as_deref()?;
        if self.send_window() < pipe + self.mss {
            return None;
        }
        let highest_sack = sb.ranges().last().map(|&(_, end)| end);
        for (s, e, r) in self.outstanding() {
            if r.resent_since_timeout {
                continue;
            }
            let (hole, run_end) = sb.hole_at(s);
            if hole >= e {
                continue;
            }
            if highest_sack.is_some_and(|h| hole >= h) {
                break;
            }
            if sb.ns3_lost(hole) {
                return Some((hole, self.mss.min(e.min(run_end) - hole)));
            }
        }
        let len = self.mss.min(self.app_end.saturating_sub(self.snd_max));
        (len > 0 && self.snd_max + len <= self.snd_una + self.peer_wnd).then_some((self.snd_max, len))
    }

    /// Each unacknowledged record with the bytes `[start, end)` it still holds
    /// above SND.UNA, oldest first.
    fn outstanding(&self) -> impl Iterator<Item = (u64, u64, &SentRecord)> + '_ {
        let una = self.snd_una;
        self.sent
            .iter()
            .scan(una, move |start, r| {
                let s = (*start).max(una);
                *start = r.end;
                Some((s, r.end, r))
            })
            .filter(|&(s, e, _)| s < e)
    }

    /// Flag every record overlapping `[start, end)` as retransmitted.
    fn mark_retransmitted(&mut self, start: u64, end: u64, now: SimTime) {
        let first = self.sent.as_slice().partition_point(|r| r.end <= start);
        for r in &mut self.sent.as_mut_slice()[first..] {
            r.retransmitted = true;
            r.resent_since_timeout = true;
            r.lost_again = false;
            r.sent_at = now;
            if r.end >= end {
                break;
            }
        }
    }

    /// Bytes sent and not yet acknowledged (SND.NXT − SND.UNA).
    #[inline]
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    /// SND.UNA: bytes the peer has acknowledged.
    #[inline]
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// SND.NXT: the next offset to send.
    #[inline]
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// One past the highest offset ever sent.
    #[inline]
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// Bytes the application has written so far.
    #[inline]
    pub fn written(&self) -> u64 {
        self.app_end
    }
    /// Retransmission-timer deadline, or the tail loss probe's when earlier;
    /// RACK's reordering timer's while it is armed.
    #[inline]
    pub fn rtx_deadline(&self) -> Option<SimTime> {
        let Some(rack) = self.rack.as_ref() else { return self.rtx_deadline };
        if let Some(reo) = rack.reo_at() {
            return Some(reo);
        }
        match rack.probe_at() {
            Some(p) => Some(self.rtx_deadline.map_or(p, |d| d.min(p))),
            None => self.rtx_deadline,
        }
    }
    /// The RTO estimator.
    #[inline]
    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }
    /// The RTO estimator, mutably (for the handshake sample).
    #[inline]
    pub fn rto_mut(&mut self) -> &mut RtoEstimator {
        &mut self.rto
    }
    /// The congestion window and its algorithm.
    #[inline]
    pub fn cc(&self) -> &CongestionWindow {
        &self.cc
    }
    /// True during fast recovery (NewReno) or loss recovery (RFC 6675).
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.sack.as_ref().map_or(self.recovery.in_recovery(), |sb| sb.in_recovery())
    }
    /// The spurious-timeout detector, to hand it the TSval of a retransmission.
    #[inline]
    pub fn spurious_mut(&mut self) -> &mut SpuriousDetector {
        &mut self.spurious
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn sender(mss: u32, init_cwnd: u32) -> (Sender, TcpClock) {
        let cfg = TcpConfig { mss, init_cwnd, ..TcpConfig::default() };
        (Sender::<true>::new(&cfg, Rng::substream(0, "rto/0")), TcpClock::new(SimDuration::ZERO))
    }

    fn drain(s: &mut Sender, c: &TcpClock, now: SimTime) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| s.poll_data(now, c)).map(|t| (t.seq, t.len)).collect()
    }

    /// RFC 1122 (4.2.3.4): full-sized segments, then the tail of the buffer.
    #[test]
    fn rfc1122_4_2_3_4_full_segments_then_tail() {
        let (mut s, c) = sender(1000, 10);
        s.write(2500, SendFlags::NONE);
        assert_eq!(drain(&mut s, &c, SimTime(0)), vec![(0, 1000), (1000, 1000), (2000, 500)]);
        assert_eq!(s.flight_size(), 2500);
    }

    /// RFC 1122 (4.2.3.4): no runt segment when the window cannot take a full one.
    #[test]
    fn rfc1122_4_2_3_4_no_runt_when_window_short() {
        let (mut s, c) = sender(1000, 2);
        s.write(1500, SendFlags::NONE);
        assert_eq!(drain(&mut s, &c, SimTime(0)), vec![(0, 1000), (1000, 500)]);
        s.write(3000, SendFlags::NONE);
        // cwnd 2000, 1500 in flight: 500 usable, but 3000 more queued → wait.
        assert_eq!(drain(&mut s, &c, SimTime(0)), vec![]);
    }

    /// ns-2.35 `TcpAgent::output` and `newack` (`rtt_timing = "ns2"`): one
    /// segment is timed at a time, so the ACK of a segment sent while another
    /// was being timed gives no sample, where RFC 6298 (3) samples every ACK.
    #[test]
    fn ns2_times_one_segment_at_a_time() {
        let us = SimDuration::from_micros;
        let ack = |a: u64| Segment::new(0, a, 0, 64_000, flags::ACK);
        let srtt_after_two_acks = |timing: RttTiming| {
            let mut cfg = TcpConfig { mss: 1000, init_cwnd: 10, ..TcpConfig::default() };
            cfg.rto.timing = timing;
            let (mut s, c) = (Sender::<true>::new(&cfg, Rng::substream(0, "rto/0")), TcpClock::new(SimDuration::ZERO));
            let mut stats = EndpointStats::default();
            s.write(2000, SendFlags::NONE);
            assert_eq!(drain(&mut s, &c, SimTime::ZERO).len(), 2);
            s.on_ack(SimTime::ZERO + us(100), &c, &ack(1000), None, &mut stats);
            s.on_ack(SimTime::ZERO + us(500), &c, &ack(2000), None, &mut stats);
            s.rto().srtt()
        };
        assert_eq!(srtt_after_two_acks(RttTiming::Ns2), Some(us(100)), "segment 2 was not timed");
        assert!(srtt_after_two_acks(RttTiming::EveryAck) > Some(us(100)), "RFC 6298: both ACKs sample");
    }

    /// RFC 6298 (5.1): the first data segment starts the timer; later ones do not move it.
    #[test]
    fn rfc6298_5_1_timer_started_by_first_data_segment() {
        let (mut s, c) = sender(1000, 10);
        assert_eq!(s.rtx_deadline(), None);
        s.write(1000, SendFlags::NONE);
        s.poll_data(SimTime(5), &c);
        assert_eq!(s.rtx_deadline(), Some(SimTime(5) + s.rto().rto()));
        s.write(1000, SendFlags::NONE);
        s.poll_data(SimTime(9), &c);
        assert_eq!(s.rtx_deadline(), Some(SimTime(5) + s.rto().rto()));
    }
}
