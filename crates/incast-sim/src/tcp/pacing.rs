//! Internal pacing: the next data segment waits until the pacing rate
//! allows it, as Linux paces a socket without the fq qdisc
//! (`tcp_needs_internal_pacing`, `tcp_pacing_check` and its hrtimer).
//!
//! **Models:** the earliest departure time of the next segment
//! (`tp->tcp_wstamp_ns`): a segment may leave once it has passed; leaving,
//! the time moves to at least now, and then, once the connection has sent 10
//! data segments (`data_segs_out >= 10`, "Original sch_fq does not pace
//! first 10 MSS"), on by the segment's payload over the pacing rate, less up
//! to half of that when the clock had fallen behind (the "credit" of
//! `tcp_update_skb_after_send`, for OS jitter). The rate comes from the
//! congestion control when it sets one (BBR's `sk_pacing_rate`), else, with
//! `tcp.pacing` on, from `tcp_update_pacing_rate` after every ACK: the
//! window over the smoothed RTT, 200 % of it while cwnd is below half of
//! ssthresh (`tcp_pacing_ss_ratio`), 120 % after (`tcp_pacing_ca_ratio`),
//! of the larger of cwnd and the flight; unpaced until an RTT is known.
//! Retransmissions wait too (`tcp_xmit_retransmit_queue` checks the
//! pacer), except a timeout's retransmission of SND.UNA, which
//! `tcp_retransmit_timer` sends directly; pure ACKs never wait.
//! **Deliberately different:** the pacing timer is the endpoint's deadline
//! ([`Pacer::deadline`]), exact to the picosecond, where the kernel's hrtimer
//! fires within its slack.
//! **Not modelled:** TCP Small Queues (`tcp_small_queue_check`) and TSO
//! autosizing (`tcp_tso_autosize`): every segment is one MSS; the fq qdisc's
//! own pacing; `SO_MAX_PACING_RATE`.

use crate::time::{SimDuration, SimTime};

/// Data segments a connection sends before pacing starts (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, in percent (Linux's defaults).
const SS_RATIO: u64 = 200;
const CA_RATIO: u64 = 120;

/// One sender's pacing state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// Bytes per second; `None` leaves segments unpaced.
    rate: Option<u64>,
    /// Earliest departure of the next segment (`tcp_wstamp_ns`).
    next: SimTime,
    /// Data segments sent (`data_segs_out`).
    sent: u64,
    /// The last poll found a segment waiting for `next`.
    waiting: bool,
}

impl Pacer {
    /// Pace at `rate` bytes per second from now on (`None`: unpaced).
    #[inline]
    pub fn set_rate(&mut self, rate: Option<u64>) {
        self.rate = rate.filter(|&r| r > 0);
    }

    /// The rate `tcp_update_pacing_rate` sets for a window-based algorithm:
    /// `cwnd` and `flight` bytes against `ssthresh`, over `srtt`.
    pub fn window_rate(cwnd: u64, ssthresh: u64, flight: u64, srtt: Option<SimDuration>) -> Option<u64> {
        let srtt = srtt.filter(|s| *s > SimDuration::ZERO)?;
        let ratio = if cwnd < ssthresh / 2 { SS_RATIO } else { CA_RATIO };
        let bytes = u128::from(cwnd.max(flight)) * u128::from(ratio) * 1_000_000_000_000 / 100;
        Some((bytes / u128::from(srtt.as_ps())).min(u128::from(u64::MAX)) as u64)
    }

    /// May a segment leave at `now` (`tcp_pacing_check`)? A refusal arms
    /// [`Pacer::deadline`].
    #[inline]
    pub fn may_send(&mut self, now: SimTime) -> bool {
        self.waiting = self.next > now;
        !self.waiting
    }

    /// When a segment refused by [`Pacer::may_send`] may leave.
    #[inline]
    pub fn deadline(&self) -> Option<SimTime> {
        self.waiting.then_some(self.next)
    }

    /// A data segment of `len` payload bytes left at `now`
    /// (`__tcp_transmit_skb` and `tcp_update_skb_after_send`).
    #[inline]
    pub fn on_sent(&mut self, now: SimTime, len: u64) {
        let prior = self.next;
        self.next = self.next.max(now);
        self.sent += 1;
        let Some(rate) = self.rate else { return };
        if self.sent < UNPACED_SEGMENTS {
            return;
        }
        let gap = (u128::from(len) * 1_000_000_000_000 / u128::from(rate)).min(u128::from(u64::MAX)) as u64;
        // "take into account OS jitter": a clock that fell behind lends up to half a gap.
        let credit = self.next.since(prior).as_ps();
        self.next += SimDuration(gap - credit.min(gap / 2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> SimDuration {
        SimDuration::from_micros(n)
    }

    /// At 1000 bytes per 10 us, segments after the tenth leave 10 us apart.
    #[test]
    fn after_ten_segments_each_waits_its_size_over_the_rate() {
        let mut p = Pacer::default();
        p.set_rate(Some(100_000_000));
        let t0 = SimTime::ZERO;
        for _ in 0..10 {
            assert!(p.may_send(t0));
            p.on_sent(t0, 1000);
        }
        assert!(!p.may_send(t0), "the tenth segment starts the pacing");
        assert_eq!(p.deadline(), Some(t0 + us(10)));
        assert!(p.may_send(t0 + us(10)));
        p.on_sent(t0 + us(10), 1000);
        assert_eq!((p.may_send(t0 + us(19)), p.deadline()), (false, Some(t0 + us(20))));
    }

    /// A sender that was late (idle) gets at most half a gap of credit.
    #[test]
    fn a_late_clock_lends_at_most_half_a_gap() {
        let mut p = Pacer { sent: 10, ..Pacer::default() };
        p.set_rate(Some(100_000_000));
        p.on_sent(SimTime::ZERO + us(100), 1000);
        assert_eq!(p.next, SimTime::ZERO + us(105));
    }

    /// tcp_update_pacing_rate: 200 % of cwnd/SRTT in slow start, 120 % after.
    #[test]
    fn the_window_rate_is_twice_or_1_2_times_cwnd_over_srtt() {
        let srtt = Some(us(100));
        assert_eq!(Pacer::window_rate(10_000, u64::MAX, 0, srtt), Some(200_000_000));
        assert_eq!(Pacer::window_rate(10_000, 10_000, 0, srtt), Some(120_000_000));
        assert_eq!(Pacer::window_rate(10_000, 10_000, 20_000, srtt), Some(240_000_000));
        assert_eq!(Pacer::window_rate(10_000, 10_000, 0, None), None);
    }
}
