//! RACK-TLP in the sender (RFC 8985): loss detection by time on every ACK
//! ([`crate::tcp::rack_tlp::RackTlp::detect`] over the sent-segment log),
//! the reordering timer (§6.3, Linux `tcp_rack_reo_timeout`) and the tail
//! loss probe (§7, `tcp_schedule_loss_probe`, `tcp_send_loss_probe`).

use super::Sender;
use crate::tcp::clock::TcpClock;
use crate::tcp::rack_tlp::RackTlp;
use crate::tcp::EndpointStats;
use crate::time::{SimDuration, SimTime};

impl<const EXTRAS: bool, const PACED: bool> Sender<EXTRAS, PACED> {
    /// RFC 8985 (6.2 step 6): arm the reordering timer when a segment sent
    /// before the latest delivered one is not yet old enough to count as
    /// lost; `wait` is when the last of them will be. Linux
    /// (`tcp_rack_mark_lost`) arms it that long plus `TCP_TIMEOUT_MIN`, two
    /// jiffies (none on an exact clock), in the slot the probe would use
    /// ([`RackTlp::arm_reo`]).
    /// Returns true when armed.
    #[inline]
    pub(super) fn arm_reordering_timer(&mut self, now: SimTime, clock: &TcpClock, wait: Option<SimTime>) -> bool {
        let (Some(rack), Some(at)) = (self.rack.as_mut(), wait) else { return false };
        let slack = SimDuration(2 * clock.granularity().as_ps());
        rack.arm_reo(Some(clock.deadline(now, at.since(now) + slack)));
        true
    }

    /// [`RackTlp::detect`] on this sender's log and scoreboard, when RACK is
    /// on, for an ACK of everything below `ack`: retransmissions are judged
    /// below HighRxt in recovery, and in the loss state after a timeout over
    /// what go-back-N has resent since, where one found lost again starts
    /// recovery ([`Sender::enter_recovery_from_loss`]).
    #[inline(never)]
    pub(super) fn rack_detect(
        &mut self,
        now: SimTime,
        ack: u64,
        first_block: Option<(u64, u64)>,
        stats: &mut EndpointStats,
    ) -> Option<SimTime> {
        let in_recovery = self.sack.as_deref()?.in_recovery();
        let lost_state = !in_recovery && ack < self.loss_high;
        let recovering = match self.sack.as_deref() {
            Some(sb) if in_recovery => Some(sb.high_rxt()),
            _ if lost_state => Some(self.resent_since_timeout(ack)),
            _ => None,
        };
        let (Some(rack), Some(sb)) = (self.rack.as_mut(), self.sack.as_mut()) else { return None };
        let (newly, wait) = rack.detect(sb, &mut self.log, self.snd_una, now, ack, first_block, recovering);
        stats.lost_retransmits += newly;
        if let Some(rate) = self.rate.as_deref_mut() {
            // Linux tcp_mark_skb_lost counts a retransmission lost again in `tp->lost`.
            rate.on_lost(newly * self.mss);
        }
        if let Some(resent_to) = recovering.filter(|_| lost_state && newly > 0) {
            self.enter_recovery_from_loss(ack, resent_to, stats);
        }
        wait
    }

    /// One past the run of segments from `ack` up that go-back-N resent since
    /// the latest timeout or the receiver SACKed.
    fn resent_since_timeout(&self, ack: u64) -> u64 {
        let Some(sb) = self.sack.as_deref() else { return ack };
        let mut end = ack;
        for (s, e, r) in self.log.outstanding(ack) {
            if !r.resent_since_timeout && sb.sacked_in(s, e) < e - s {
                break;
            }
            end = e;
        }
        end
    }

    /// Arm the tail loss probe (Linux `tcp_schedule_loss_probe`): with data
    /// in flight, outside recovery and loss, one probe at a time, never
    /// later than the retransmission timer.
    pub(super) fn schedule_probe(&mut self, now: SimTime, clock: &TcpClock) {
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
    pub(super) fn may_probe(&self) -> bool {
        self.snd_una < self.snd_max && self.snd_nxt == self.snd_max && self.backoff == 0 && !self.in_recovery()
    }

    /// The probe timer fired: one segment goes out whatever cwnd says — new
    /// data if the peer window allows, else the highest outstanding segment
    /// again (Linux `tcp_send_loss_probe`).
    /// Returns false when there is nothing to probe with.
    #[cold]
    pub(super) fn send_probe(&mut self) -> bool {
        let unsent = self.app_end - self.snd_max;
        let new_len = unsent.min(self.mss);
        let probe = if unsent > 0 && self.snd_max + new_len <= self.snd_una + self.peer_wnd {
            (self.snd_max, new_len)
        } else {
            let Some(start) = self.log.last_start() else { return false };
            let start = start.max(self.snd_una);
            (start, self.snd_max - start)
        };
        let retransmitted = probe.0 < self.snd_max;
        let end = self.snd_max.max(probe.0 + probe.1);
        if let Some(rack) = self.rack.as_mut() {
            rack.on_probe_due(probe, end, retransmitted);
        }
        true
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3, Linux
    /// `tcp_rack_reo_timeout`): judge the outstanding segments again, start
    /// recovery if that found the head lost, and run the retransmission timer
    /// again, for the head's RTO counted from when it was sent.
    #[cold]
    pub(super) fn on_reordering_timeout(&mut self, now: SimTime, clock: &TcpClock, stats: &mut EndpointStats) {
        let ack = self.snd_una;
        self.rack_detect(now, ack, None, stats);
        if let (Some(rate), Some(sb)) = (self.rate.as_deref_mut(), self.sack.as_deref_mut()) {
            rate.on_lost(sb.take_newly_lost(ack));
        }
        if self.sack.as_ref().is_some_and(|sb| sb.loss_found(ack)) {
            self.enter_sack_recovery(now, clock, ack, stats);
        }
        if self.snd_una == self.snd_max {
            return;
        }
        // tcp_rearm_rto: "rto = usecs_to_jiffies(max_t(int, delta_us, 1))" with
        // delta_us the RTO left since the head was sent (tcp_rto_delta_us).
        let head_sent = self.log.front().map_or(now, |r| r.sent_at);
        let left = (head_sent + self.rto.rto()).since(now).max(SimDuration(1));
        self.rtx_deadline = Some(self.timer.deadline(now, clock, left));
    }
}
