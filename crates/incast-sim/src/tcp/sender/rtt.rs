//! An ACK's samples: the RTT (RFC 6298 §3 with Karn's rule, Linux
//! `tcp_clean_rtx_queue`; one timed segment at a time as ns-2.35 does) and,
//! when the congestion control steers by rate, the delivery-rate sample
//! (`tcp::delivery_rate`) it hands to `cong_control`, and the pacing rate
//! that follows (`tcp::pacing`).

use super::Sender;
use crate::tcp::cc::bbr::BbrSample;
use crate::tcp::cc::{Algorithm, CaState, CongestionControl};
use crate::tcp::clock::TcpClock;
use crate::tcp::pacing::Pacer;
use crate::tcp::sent_log::Acked;
use crate::time::{SimDuration, SimTime};

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// Drop the records `ack` covers (delivering them to the rate
    /// estimator) and take at most one RTT sample from them. Returns whether
    /// one of them had been retransmitted.
    pub(super) fn take_rtt_sample(
        &mut self,
        now: SimTime,
        clock: &TcpClock,
        ack: u64,
        ts_rtt: Option<SimDuration>,
    ) -> bool {
        let mut rate = self.rate.as_deref_mut();
        let Acked { oldest, newest, retransmitted } = self.log.take_acked(ack, |bytes, s| {
            if let Some(r) = rate.as_deref_mut() {
                r.on_delivered(bytes, s.end, s.sent_at, &s.rate, now);
            }
        });
        if let (Some(sent_at), false) = (newest, retransmitted) {
            // Linux tcp_clean_rtx_queue: "ca_rtt_us" from the newest segment acknowledged.
            let rtt = now.since(sent_at);
            self.cc.on_rtt_sample(now, rtt, ack, self.snd_nxt);
            if let Some(r) = rate {
                r.on_rtt(rtt);
            }
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
    pub(super) fn take_timed_sample(&mut self, now: SimTime, clock: &TcpClock, ack: u64) {
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
}

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// Segments this ACK's SACK blocks delivered whole go to the rate
    /// estimator, each once (`tcp_sacktag_one` calls `tcp_rate_skb_delivered`).
    #[cold]
    #[inline(never)]
    pub(super) fn deliver_sacked(&mut self, now: SimTime) {
        let (Some(rate), Some(sb)) = (self.rate.as_deref_mut(), self.sack.as_deref()) else { return };
        for (start, end, s) in self.log.spans_mut() {
            if !s.rate.counted && sb.sacked_in(start, end) == end - start {
                rate.on_delivered(end - start, end, s.sent_at, &s.rate, now);
                s.rate.counted = true;
            }
        }
    }

    /// After an acceptable ACK, with `prior_in_flight` bytes in flight
    /// ([`Sender::in_flight`]) and a window of `prior_cwnd` before it,
    /// `head_lost` when it called for a retransmission of SND.UNA: an
    /// algorithm that steers by rate hears the loss-recovery state
    /// (`CaState`), gets its rate sample (with the data in flight now and
    /// what the scoreboard newly marks lost, or without SACK the head) and
    /// sets cwnd from `prior_cwnd` (Linux `tcp_cong_control` calling
    /// `cong_control`), and may mark what follows application-limited; the
    /// pacing rate follows ([`Sender::update_pacing_rate`]).
    #[inline]
    pub(super) fn after_ack(&mut self, now: SimTime, prior_in_flight: u64, prior_cwnd: u64, head_lost: bool) {
        if self.rate.is_some() {
            // Linux tcp_fastretrans_alert sets the state before tcp_cong_control runs.
            self.cc.set_ca_state(self.ca_state());
            let in_flight = self.in_flight();
            let snd_una = self.snd_una;
            let marked = self.sack.as_deref_mut().map(|sb| sb.take_newly_lost(snd_una));
            let head = self.mss.min(self.snd_max - self.snd_una);
            if let Some(rate) = self.rate.as_deref_mut() {
                match marked {
                    // What the scoreboard's marks (RFC 6675 IsLost, RACK) newly call lost.
                    Some(bytes) => rate.on_lost(bytes),
                    // The ACK called for a retransmission of SND.UNA: Linux marks
                    // the head lost (tcp_mark_head_lost, tcp_enter_recovery).
                    None if head_lost => rate.on_lost(head),
                    None => {}
                }
                // Only a build with the traces reads the reported rate (`tcp::gated`).
                let rs = rate.sample(now, prior_in_flight, in_flight, EXTRAS);
                self.cc.on_rate_sample(&rs, prior_cwnd);
                if self.cc.marks_app_limited() {
                    rate.mark_app_limited(self.snd_nxt - self.snd_una);
                }
            }
        }
        // The pacer's inputs are read again only when the algorithm's rate or the minimum RTT may have moved.
        if self.cc.take_pacing_moved() || self.pacer.as_ref().is_some_and(|p| p.min_rtt() != self.pacing_min_rtt()) {
            self.update_pacing_rate();
        }
    }

    /// The handshake at `now` measured `rtt`: the minimum RTT of the rate
    /// estimator and of an algorithm that steers by rate start from it
    /// (Linux `tcp_min_rtt` holds the SYN exchange's sample when `init` runs).
    pub fn on_handshake_rtt(&mut self, now: SimTime, rtt: SimDuration) {
        if let Some(rate) = self.rate.as_deref_mut() {
            rate.on_rtt(rtt);
            self.cc.on_init(now, rtt);
        }
    }

    /// The loss-recovery state as Linux names it: the loss state after a
    /// timeout until what was outstanding then is acknowledged, recovery, or open.
    fn ca_state(&self) -> CaState {
        if self.snd_una < self.loss_high {
            CaState::Loss
        } else if self.in_recovery() {
            CaState::Recovery
        } else {
            CaState::Open
        }
    }

    /// The minimum RTT a paced burst is sized from: the rate estimator's,
    /// or without one the smoothed RTT.
    #[inline]
    fn pacing_min_rtt(&self) -> Option<SimDuration> {
        self.rate.as_deref().and_then(|r| r.min_rtt()).or_else(|| self.rto.srtt())
    }

    /// The pacing rate from now on: the algorithm's, or with a window-based
    /// one the window over the smoothed RTT (`tcp_update_pacing_rate`).
    /// Bursts are sized by `tcp_tso_autosize` from the minimum RTT (the rate
    /// estimator's; the smoothed RTT without one) and the algorithm's
    /// `min_tso_segs`.
    pub fn update_pacing_rate(&mut self) {
        if self.pacer.is_none() {
            return;
        }
        // The smoothed RTT only where the algorithm sets no rate or no minimum RTT is known.
        let rate = self
            .cc
            .pacing_rate()
            .or_else(|| Pacer::window_rate(self.cc.cwnd(), self.cc.ssthresh(), self.flight_size(), self.rto.srtt()));
        let min_rtt = self.pacing_min_rtt();
        let min_tso_segs = self.cc.min_tso_segs();
        if let Some(pacer) = self.pacer.as_mut() {
            pacer.set_rate(rate, min_rtt, min_tso_segs);
        }
    }
}

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// BBR's state as `TCP_CC_INFO` (`bbr_get_info`) and `TCP_INFO`
    /// (`tcpi_pacing_rate`, `tcpi_delivery_rate`, `tcpi_snd_cwnd`) report
    /// it, when the algorithm is BBR.
    pub fn bbr_sample(&self) -> Option<BbrSample> {
        let Algorithm::Bbr(b) = self.cc.algorithm() else { return None };
        Some(BbrSample {
            mode: b.mode().name(),
            bw: b.bw(),
            min_rtt: b.min_rtt(),
            pacing_gain: b.pacing_gain(),
            cwnd_gain: b.cwnd_gain(),
            pacing_rate: b.pacing_rate().unwrap_or(0),
            delivery_rate: self.rate.as_deref().and_then(|r| r.reported_rate()),
            cwnd_pkts: self.cc.cwnd().div_ceil(self.mss),
        })
    }
}
