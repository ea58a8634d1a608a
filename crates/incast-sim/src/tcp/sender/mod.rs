//! Send half: send-buffer accounting, the retransmission timer, RTT sampling;
//! the composition of the mechanisms that decide what leaves and when.
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
//!
//! The sender keeps its segments in the sent-segment log (`tcp::sent_log`),
//! which RACK, PRR, the forensics and the ns-3 rules read; when the
//! congestion control steers by rate (`cong_control`), each ACK's
//! delivery-rate sample (`tcp::delivery_rate`) goes to it (not for an ACK
//! with nothing outstanding before it, as Linux's `tcp_ack` skips
//! `tcp_cong_control` then), and with pacing on (`tcp.pacing`, or an
//! algorithm that sets a pacing rate) each send burst waits for the pacer
//! (`tcp::pacing`). Its parts: `sack` (RFC 6675
//! recovery, PRR with SACK and the ns-3 rules), `rack` (RACK-TLP's timers),
//! `timeout` (the retransmission timer and spurious-timeout verdicts),
//! `send` (what leaves next) and `rtt` (RTT and rate samples of an ACK).
//! **Deliberately different:** Nagle is off (storage servers set
//! TCP_NODELAY); the peer window is taken from every acceptable ACK without
//! the SND.WL1/SND.WL2 ordering checks (the window is constant here);
//! without SACK a timeout resends everything from SND.UNA (go-back-N).
//! **Not modelled:** zero-window probing, TSO/GSO, the RFC 6298 (5.7) SYN
//! rule (connections start established).

mod rack;
mod rtt;
mod sack;
mod send;
mod timeout;

use super::cc::reno::CaIncrease;
use super::cc::{Algorithm, CcChoice, CongestionWindow, SsthreshRule};
use super::clock::TcpClock;
use super::delivery_rate::DeliveryRate;
use super::gated::Gated;
use super::gip::{Gip, GipPattern};
use super::idle_restart::IdleRestart;
use super::limited_transmit::LimitedTransmit;
use super::local_congestion::{CwrWindow, LocalCongestion};
use super::newreno::{NewAck, NewReno};
use super::pacing::Pacer;
use super::prr::{Prr, PrrFlavor};
use super::rack_tlp::RackTlp;
use super::rto::{RtoEstimator, RttTiming};
use super::rto_timer::RtoTimer;
use super::rude::{Rude, RudeExit, RudeRequest};
use super::sack::Scoreboard;
use super::sent_log::SentLog;
use super::spurious::SpuriousDetector;
use super::{flags, EndpointStats, Segment, SendFlags, TcpConfig};
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};

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
/// its optional mechanisms, with `PACED` false without pacing and rate
/// samples (`tcp::gated`).
#[derive(Clone, Debug)]
pub struct Sender<const EXTRAS: bool = true, const PACED: bool = true> {
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
    /// Every segment sent and not yet cumulatively acknowledged.
    log: SentLog,
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
    /// SND.MAX at the latest timeout: until SND.UNA reaches it the sender is
    /// in Linux's loss state (`TCP_CA_Loss`, `tp->high_seq`).
    loss_high: u64,
    /// Duplicate ACKs since the last ACK of new data (FAST08 §5.1 DART).
    dart: u32,
    /// Fast retransmit threshold, for timeout forensics.
    dupack_threshold: u32,
    /// Count duplicate ACKs with nothing outstanding (`tcp.dupack_idle`, ns-2).
    dupack_idle: bool,
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
    /// Delivery-rate samples (`tcp::delivery_rate`), when the algorithm steers by rate.
    rate: Gated<Box<DeliveryRate>, PACED>,
    /// Pacing (`tcp::pacing`), when on.
    pacer: Gated<Pacer, PACED>,
    /// CWR after a segment the full NIC queue refused (`tcp::local_congestion`).
    local: LocalCongestion,
}

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// An idle sender of an established connection; `timer_rng` feeds the
    /// randomized timeout and scheduling delay (`tcp::rto_timer`).
    pub fn new(cfg: &TcpConfig, timer_rng: Rng) -> Self {
        let mss = cfg.segment_payload().max(1);
        let algorithm = Algorithm::new(cfg.cc, mss as u64, &cfg.cc_constants(), &timer_rng);
        Sender {
            mss: mss as u64,
            app_end: 0,
            write_start: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            peer_wnd: cfg.rcv_wnd.get().min(u32::MAX as u64),
            log: SentLog::default(),
            rto: RtoEstimator::new(cfg.rto),
            timer: RtoTimer::new(&cfg.rto, timer_rng),
            cc: CongestionWindow::new(mss as u64, cfg.init_cwnd, cfg.slow_start, algorithm)
                .with_validation(cfg.cwnd_validation)
                .counting_segments(cfg.ca_increase == CaIncrease::Ns3 && cfg.cc == CcChoice::Reno),
            recovery: NewReno::new(
                mss as u64,
                cfg.dupack_threshold,
                cfg.recovery,
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
            loss_high: 0,
            dart: 0,
            dupack_threshold: cfg.dupack_threshold,
            dupack_idle: cfg.dupack_idle,
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
            rate: Gated::new(cfg.cc.needs_rate_samples().then(Box::default)),
            pacer: Gated::new(cfg.paced().then(|| Pacer::new(mss as u64, cfg.gso_max_size.get()))),
            local: LocalCongestion::new(cfg.local_congestion),
        }
    }

    /// True when this sender runs a mechanism the plain build leaves out
    /// (`tcp::gated`): Rude TCP, F-RTO or Eifel, or cwnd validation. (SACK,
    /// RACK-TLP, PRR and GIP keep state the plain build cannot hold at all:
    /// [`Gated::new`] refuses it.)
    pub fn uses_optional_parts(&self) -> bool {
        self.rude.marked() || self.spurious.is_on() || self.cc.tracks_usage() || self.local.enabled()
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
        if let Some(rate) = self.rate.as_deref_mut() {
            rate.on_write(self.app_end - self.snd_nxt, self.mss, self.snd_nxt - self.snd_una, self.cc.cwnd());
        }
        // GIP §III: the current stripe unit starts here (FLoss-TO test).
        self.write_start = self.app_end;
        self.app_end += bytes;
        if let Some(gip) = self.gip.as_mut() {
            let tail = flags.contains(SendFlags::UNIT_TAIL);
            if let Some(segments) = gip.on_write(self.write_start, self.app_end, tail) {
                // GIP §V-C: every stripe unit starts from a window of 2 segments.
                self.cc.restart_at(segments as u64 * self.mss);
                self.idle.on_window_set();
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
        // Only an algorithm that steers by rate reads it (`after_ack`).
        let prior_in_flight = if self.rate.is_some() { self.in_flight() } else { 0 };
        let rtx_due_before = self.retransmit_now;
        // Linux tcp_ack: "if (!prior_packets) goto no_queue;" — an ACK with
        // nothing outstanding before it reaches neither tcp_rate_gen nor
        // tcp_cong_control, and delivers nothing to sample.
        let sampled = seg.ack >= self.snd_una && seg.ack <= self.snd_max && self.snd_max > self.snd_una;
        if let Some(rate) = self.rate.as_deref_mut().filter(|_| sampled) {
            rate.begin_ack();
        }
        let spurious = self.process_ack(now, clock, seg, ts_rtt, stats);
        if EXTRAS && self.rude.marked() {
            self.rude_follow(fair_before);
        }
        if sampled && (self.rate.is_some() || self.pacer.is_some()) {
            self.after_ack(now, prior_in_flight, fair_before, !rtx_due_before && self.retransmit_now);
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
        if newly_sacked && self.rate.is_some() {
            self.deliver_sacked(now);
        }
        // RFC 5681 (2): a duplicate ACK when "(a) the receiver of the ACK has
        // outstanding data, (b) the incoming acknowledgment carries no data,
        // ... (d) the acknowledgment number is equal to the greatest
        // acknowledgment received ... and (e) the advertised window in the
        // incoming acknowledgment equals the advertised window in the last".
        // RFC 6675 (2) counts an ACK that SACKs new data whatever its window
        // (a SACK receiver grows its window on out-of-order data, `tcp::rcv_window`).
        let mut reo_armed = false;
        if self.rack.is_some() {
            let wait = self.rack_detect(now, ack, seg.sack().next(), stats);
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
            } else if self.dupack_idle && self.sack.is_none() && ack == self.snd_max && seg.len == 0 {
                self.on_idle_dup_ack(now, ack);
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
        self.idle.on_timer_rearmed(now);
        self.snd_una = ack;
        // The receiver had buffered data beyond what go-back-N has resent.
        self.snd_nxt = self.snd_nxt.max(ack);
        self.backoff = 0;
        self.dart = 0;
        self.limited.reset();
        let srtt = self.rto.srtt().unwrap_or(SimDuration::ZERO);
        let cut = self.cc.needs_ecn() && self.on_ecn_echo(acked, ack, seg.has(flags::ECE));
        let cut = cut || EXTRAS && self.local.active() && self.cwr_on_ack(ack);
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
        if newly_sacked
            && ack >= self.loss_high
            && self.sack.as_deref().is_some_and(|sb| sb.recovers_on_any_ack() && sb.loss_found(ack))
        {
            // Linux tcp_ack: an ACK that SACKs data is "dubious" (FLAG_CA_ALERT)
            // however far it moves SND.UNA, and tcp_fastretrans_alert starts
            // recovery once anything is marked lost (tcp_time_to_recover).
            self.enter_sack_recovery(now, clock, ack, stats);
        }
        if self.prr.is_some() {
            self.prr_update(old_una, sacked_before, lost_before, newly_sacked, resent_acked);
        }
        spurious
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

    /// The host's NIC queue was full as the sender looked for room: with a
    /// segment to send, it was refused, and outside recovery and CWR the
    /// sender enters CWR (`tcp::local_congestion`, Linux `tcp_enter_cwr`).
    #[cold]
    pub fn on_nic_full(&mut self) {
        if !EXTRAS || !self.local.enabled() || self.local.active() || self.recovering_or_lost() || !self.has_data_due()
        {
            return;
        }
        let before = self.cc.cwnd();
        let in_flight = self.packets_in_flight();
        // Linux tcp_recalc_ssthresh: the algorithm's cut, of cwnd.
        let ssthresh = self.cc.on_loss(before);
        let entered = self.local.enter(self.snd_nxt, in_flight, self.mss, CwrWindow { cwnd: before, ssthresh });
        if let Some(w) = entered {
            self.cc.set_cwnd(w.cwnd);
        }
        if self.rude.marked() {
            self.rude_follow(before);
        }
    }

    /// An ACK of new data up to `ack` in CWR: `tcp_cwnd_down`, or the end of
    /// CWR; true when CWR held (the ACK grows nothing, `tcp_may_raise_cwnd`).
    #[cold]
    fn cwr_on_ack(&mut self, ack: u64) -> bool {
        if self.recovering_or_lost() {
            self.local.cancel();
            return false;
        }
        let w = CwrWindow { cwnd: self.cc.cwnd(), ssthresh: self.cc.ssthresh() };
        if let Some(cwnd) = self.local.on_ack(ack, self.packets_in_flight(), self.mss, w) {
            self.cc.set_cwnd(cwnd);
        }
        true
    }

    /// In loss recovery, or after a timeout until SND.UNA passes what was
    /// outstanding then (Linux `TCP_CA_Recovery` or `TCP_CA_Loss`).
    fn recovering_or_lost(&self) -> bool {
        self.in_recovery() || self.snd_una < self.loss_high
    }

    /// Linux `tcp_packets_in_flight` outside recovery: outstanding bytes, less those SACKed.
    fn packets_in_flight(&self) -> u64 {
        let sacked = self.sack.as_ref().map_or(0, |sb| sb.sacked_in(self.snd_una, self.snd_nxt));
        self.flight_size() - sacked
    }

    /// Linux `tcp_packets_in_flight` ("packets_out - left_out + retrans_out",
    /// `left_out` the SACKed and the lost): in SACK recovery RFC 6675's
    /// `pipe`, before the fast retransmission that starts it leaves; otherwise
    /// the outstanding bytes less those SACKed. Without SACK the outstanding
    /// bytes: Linux's count of duplicate ACKs as SACKed segments
    /// (`tcp_add_reno_sack`) is not modelled.
    pub(super) fn in_flight(&self) -> u64 {
        match self.sack.as_deref() {
            Some(sb) if sb.in_recovery() => {
                let pipe = sb.pipe(self.snd_una, self.snd_max);
                pipe - self.sack_rtx.map_or(0, |(_, len)| len).min(pipe)
            }
            _ => self.packets_in_flight(),
        }
    }

    /// True when a retransmission is due or the window has room for the next new segment.
    fn has_data_due(&self) -> bool {
        let unsent = self.app_end - self.snd_nxt;
        self.retransmit_now
            || self.sack_rtx.is_some()
            || unsent > 0 && self.packets_in_flight() + unsent.min(self.mss) <= self.send_window()
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

    /// An ACK of `ack` = SND.MAX that repeats the last one, with nothing
    /// outstanding (`tcp.dupack_idle`): ns-2.35's Reno and NewReno agents count
    /// it as a duplicate (`TcpAgent::recv`), and at the threshold-th cut the
    /// window; `dupack_action`'s `reset_rtx_timer` re-arms ns-2's timer
    /// ("rtt_active_ = 0"), from which its restart after idle counts.
    #[cold]
    fn on_idle_dup_ack(&mut self, now: SimTime, ack: u64) {
        let ns2_half = (self.ssthresh_rule == SsthreshRule::Ns2).then(|| self.cc.ns2_half(false, self.peer_wnd));
        if self.recovery.on_idle_dup_ack(&mut self.cc, ack, self.snd_max, ns2_half) {
            self.timed = None;
            self.idle.on_timer_rearmed(now);
        }
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

    /// When the pacer lets the segment it held back leave.
    #[inline]
    pub fn pacing_deadline(&self) -> Option<SimTime> {
        self.pacer.as_ref().and_then(Pacer::deadline)
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
mod tests;
