//! Internal pacing: the next send burst waits until the pacing rate allows
//! it, as Linux paces a socket without the fq qdisc
//! (`tcp_needs_internal_pacing`, `tcp_pacing_check` and its hrtimer).
//!
//! **Models:** the earliest departure time of the next burst
//! (`tp->tcp_wstamp_ns`): a burst may leave once it has passed; leaving,
//! the time moves to at least now, and then, once the connection has sent 10
//! data segments (`data_segs_out >= 10`, "Original sch_fq does not pace
//! first 10 MSS"), on by the burst's payload over the pacing rate, less up
//! to half of that when the clock had fallen behind (the "credit" of
//! `tcp_update_skb_after_send`, for OS jitter). A burst is one TSO/GSO
//! packet: `tcp_write_xmit` builds it of up to `tcp_tso_segs` segments,
//! `tcp_tso_autosize`'s pacing rate >> `sk_pacing_shift` (10: about 1 ms
//! of it) bytes plus, for a near peer, `sk_gso_max_size` >> (min_rtt >>
//! `tcp_tso_rtt_log`, 9: halved every 512 us of it), at most
//! `sk_gso_max_size` (`tcp.gso_max_size` less `MAX_TCP_HEADER` + 1) and at
//! least the algorithm's `min_tso_segs` (`tcp_min_tso_segs`, 2, unless it
//! sets its own); the window and the data at hand may cut it short. Its
//! segments leave back to back, as the NIC (or GSO) cuts the packet. The
//! rate comes from the congestion control when it sets one (BBR's
//! `sk_pacing_rate`), else, with `tcp.pacing` on, from
//! `tcp_update_pacing_rate` after every ACK: the window over the smoothed
//! RTT, 200 % of it while cwnd is below half of ssthresh
//! (`tcp_pacing_ss_ratio`), 120 % after (`tcp_pacing_ca_ratio`), of the
//! larger of cwnd and the flight; unpaced until an RTT is known.
//! Retransmissions wait too (`tcp_xmit_retransmit_queue` checks the
//! pacer), except a timeout's retransmission of SND.UNA, which
//! `tcp_retransmit_timer` sends directly (it still moves the departure
//! time, in `__tcp_transmit_skb`); pure ACKs never wait.
//! **Deliberately different:** the pacing timer is the endpoint's deadline
//! ([`Pacer::deadline`]), exact to the picosecond, where the kernel's hrtimer
//! fires within its slack; a burst's segments are paced from the tenth
//! segment on, where Linux paces the whole packet that holds the tenth; a
//! window-based algorithm's bursts are sized from the smoothed RTT where
//! Linux reads `tcp_min_rtt` (the rate estimator's minimum, which such a
//! sender does not keep).
//! **Not modelled:** TCP Small Queues (`tcp_small_queue_check`: at these
//! rates its limit, about 1 ms of the pacing rate or two packets, holds a
//! burst or two in the host, which a NIC serialising at line rate drains
//! before the next); TSO deferral (`tcp_tso_should_defer`); the fq qdisc's
//! own pacing; `SO_MAX_PACING_RATE`.

use crate::time::{SimDuration, SimTime};
use std::num::NonZeroU64;

/// Data segments a connection sends before pacing starts (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, in percent (Linux's defaults).
const SS_RATIO: u64 = 200;
const CA_RATIO: u64 = 120;

/// A burst holds about 1 ms of the pacing rate (`sk_pacing_shift`, 10) ...
const PACING_SHIFT: u32 = 10;
/// ... plus the GSO size halved every 2^9 us of the minimum RTT (`tcp_tso_rtt_log`).
const TSO_RTT_LOG: u32 = 9;
/// `MAX_TCP_HEADER` + 1, which `sk_setup_caps` takes off the device's GSO size
/// (`MAX_TCP_HEADER` is 320 on x86-64).
const GSO_HEADROOM: u64 = 321;
/// Segments a burst holds at least unless the algorithm says (`tcp_min_tso_segs`).
pub const MIN_TSO_SEGS: u32 = 2;

/// One sender's pacing state.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    /// Bytes per second; `None` leaves segments unpaced (never zero: it divides).
    rate: Option<NonZeroU64>,
    /// Earliest departure of the next burst (`tcp_wstamp_ns`).
    next: SimTime,
    /// Data segments sent (`data_segs_out`).
    sent: u64,
    /// The last poll found a segment waiting for `next`.
    waiting: bool,
    /// The minimum RTT burst sizes were last worked out from, and it in
    /// units of 2^9 us, at most 32 (`tcp_tso_autosize`'s `r`) ...
    min_rtt: Option<SimDuration>,
    rtt_log: u8,
    /// ... and the fewest segments of a burst.
    min_tso_segs: u32,
    /// The segments of a burst ([`Pacer::burst`]) at the rate and minimum
    /// RTT set, worked out at the first burst after they moved (0 till then).
    burst_segs: u32,
    /// Segments the burst that left at `burst_at` may still add.
    left: u32,
    burst_at: SimTime,
    /// What is left of the burst's credit, in picoseconds.
    credit: u64,
    /// The next segment leaves whatever the departure time (a timeout's retransmission).
    exempt: bool,
    /// Payload bytes of a segment, and the largest burst in bytes (`sk_gso_max_size`).
    mss: u64,
    gso_max: u64,
}

impl Pacer {
    /// Unpaced until a rate is set, for segments of `mss` payload bytes and
    /// bursts of at most `gso_max_size` bytes (`tcp.gso_max_size`; 0: one
    /// segment a burst).
    pub fn new(mss: u64, gso_max_size: u64) -> Self {
        Pacer {
            rate: None,
            next: SimTime::ZERO,
            sent: 0,
            waiting: false,
            min_rtt: None,
            rtt_log: 0,
            min_tso_segs: MIN_TSO_SEGS,
            burst_segs: 0,
            left: 0,
            burst_at: SimTime::ZERO,
            credit: 0,
            exempt: false,
            mss: mss.max(1),
            gso_max: gso_max_size.saturating_sub(GSO_HEADROOM),
        }
    }

    /// Pace at `rate` bytes per second from now on (`None`: unpaced), in
    /// bursts sized by `tcp_tso_autosize` from the minimum RTT `min_rtt` and
    /// at least `min_tso_segs` segments.
    #[inline]
    pub fn set_rate(&mut self, rate: Option<u64>, min_rtt: Option<SimDuration>, min_tso_segs: u32) {
        let rate = rate.and_then(NonZeroU64::new);
        if min_rtt != self.min_rtt {
            // tcp_tso_autosize: "r = tcp_min_rtt(tcp_sk(sk)) >> ...sysctl_tcp_tso_rtt_log",
            // worked out when the minimum RTT moves, not on every ACK.
            self.min_rtt = min_rtt;
            self.rtt_log = (min_rtt.map_or(0, |m| m.as_ps() / 1_000_000) >> TSO_RTT_LOG).min(32) as u8;
            self.burst_segs = 0;
        }
        if rate != self.rate || min_tso_segs != self.min_tso_segs {
            self.burst_segs = 0;
        }
        self.rate = rate;
        self.min_tso_segs = min_tso_segs;
    }

    /// The minimum RTT the burst size was last worked out from.
    #[inline]
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// `tcp_tso_autosize` and `tcp_tso_segs`: the segments of a burst now.
    pub fn burst(&self) -> u32 {
        let Some(rate) = self.rate.filter(|_| self.gso_max > 0) else { return 1 };
        let mut bytes = rate.get() >> PACING_SHIFT;
        if self.rtt_log < 32 {
            // "bytes += sk->sk_gso_max_size >> r": the nearer the peer, the bigger the burst.
            bytes += self.gso_max >> self.rtt_log;
        }
        let segs = bytes.min(self.gso_max) / self.mss;
        segs.max(u64::from(self.min_tso_segs)).min(u64::from(u16::MAX)) as u32
    }

    /// The rate `tcp_update_pacing_rate` sets for a window-based algorithm:
    /// `cwnd` and `flight` bytes against `ssthresh`, over `srtt`.
    pub fn window_rate(cwnd: u64, ssthresh: u64, flight: u64, srtt: Option<SimDuration>) -> Option<u64> {
        let srtt = srtt.filter(|s| *s > SimDuration::ZERO)?;
        let ratio = if cwnd < ssthresh / 2 { SS_RATIO } else { CA_RATIO };
        let bytes = u128::from(cwnd.max(flight)) * u128::from(ratio) * 1_000_000_000_000 / 100;
        Some((bytes / u128::from(srtt.as_ps())).min(u128::from(u64::MAX)) as u64)
    }

    /// True while the burst that left at `now` may take one more segment.
    #[inline]
    fn in_burst(&self, now: SimTime) -> bool {
        self.left > 0 && self.burst_at == now
    }

    /// May a segment leave at `now` (`tcp_pacing_check`)? A refusal arms
    /// [`Pacer::deadline`].
    #[inline]
    pub fn may_send(&mut self, now: SimTime) -> bool {
        self.waiting = self.next > now && !self.exempt && !self.in_burst(now);
        !self.waiting
    }

    /// The next segment leaves at once: a timeout's retransmission of SND.UNA
    /// (`tcp_retransmit_timer` sends it outside `tcp_write_xmit`'s pacing check).
    #[inline]
    pub fn exempt_next(&mut self) {
        self.exempt = true;
    }

    /// When a segment refused by [`Pacer::may_send`] may leave.
    #[inline]
    pub fn deadline(&self) -> Option<SimTime> {
        self.waiting.then_some(self.next)
    }

    /// A data segment of `len` payload bytes left at `now`
    /// (`__tcp_transmit_skb` and `tcp_update_skb_after_send`): the first of a
    /// burst moves the departure time to at least now, and each moves it on
    /// by its size over the rate, less the credit. Inline always: it runs
    /// for every data segment, and with `#[inline]` LLVM keeps it out of line.
    #[inline(always)]
    pub fn on_sent(&mut self, now: SimTime, len: u64) {
        if self.in_burst(now) && !self.exempt {
            self.left -= 1;
        } else {
            let prior = self.next;
            self.next = self.next.max(now);
            // "take into account OS jitter": a clock that fell behind lends
            // up to half of the burst's time.
            self.credit = self.next.since(prior).as_ps();
            if self.burst_segs == 0 {
                // The burst size moves only with the rate, the minimum RTT or min_tso_segs.
                self.burst_segs = self.burst();
            }
            self.left = if self.exempt { 0 } else { self.burst_segs - 1 };
            self.burst_at = now;
            self.exempt = false;
        }
        self.sent += 1;
        let Some(rate) = self.rate else { return };
        if self.sent < UNPACED_SEGMENTS {
            return;
        }
        // A segment's payload times 10^12 fits 64 bits (len is at most MAX_MSS).
        let gap = len * 1_000_000_000_000 / rate;
        // Taken segment by segment, min(gap / 2, credit) sums to the kernel's
        // min(burst time / 2, credit) over the whole packet.
        let lent = self.credit.min(gap / 2);
        self.credit -= lent;
        self.next += SimDuration(gap - lent);
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
        let mut p = Pacer::new(1000, 0);
        p.set_rate(Some(100_000_000), None, MIN_TSO_SEGS);
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
        let mut p = Pacer { sent: 10, ..Pacer::new(1000, 0) };
        p.set_rate(Some(100_000_000), None, MIN_TSO_SEGS);
        p.on_sent(SimTime::ZERO + us(100), 1000);
        assert_eq!(p.next, SimTime::ZERO + us(105));
    }

    /// tcp_tso_autosize: about 1 ms of the rate, plus the whole GSO size for a
    /// peer nearer than 512 us, at most the GSO size (65,536 bytes less 321 of
    /// headroom: 45 segments of 1448), at least the minimum.
    #[test]
    fn tcp_tso_autosize_gives_near_peers_whole_gso_packets() {
        let mut p = Pacer::new(1448, 65_536);
        let mut segs = |rate, rtt_us, min| {
            p.set_rate(Some(rate), Some(us(rtt_us)), min);
            p.burst()
        };
        assert_eq!(segs(125_000_000, 100, 2), 45, "1 Gbps, 100 us");
        assert_eq!(segs(12_500_000, 100, 2), 45, "100 Mbps, 100 us");
        assert_eq!(segs(12_500_000, 10_000, 2), 12_500_000 / 1024 / 1448, "100 Mbps, 10 ms: 1 ms of the rate");
        assert_eq!(segs(12_500_000, 1_000, 2), (12_500_000 / 1024 + 65_215 / 2) / 1448, "1 ms: half the GSO size");
        assert_eq!(segs(125_000, 10_000, 1), 1, "1 Mbit/s: the minimum");
        let mut off = Pacer::new(1448, 0);
        off.set_rate(Some(125_000_000), Some(us(100)), 2);
        assert_eq!(off.burst(), 1, "no GSO: a segment a burst");
    }

    /// tcp_write_xmit sends a burst of tcp_tso_segs segments at one pacing
    /// slot; the next waits the whole burst's size over the rate.
    /// A new rate and minimum RTT size the next burst, not the one before.
    #[test]
    fn a_new_rate_sizes_the_next_burst() {
        let mut p = Pacer::new(1448, 65_536);
        p.set_rate(Some(125_000_000), Some(us(100)), 2);
        p.on_sent(SimTime::ZERO, 1448);
        assert_eq!(p.left, 44, "1 Gbps, 100 us: 45 segments");
        p.set_rate(Some(12_500_000), Some(us(10_000)), 2);
        p.on_sent(SimTime::ZERO + us(1000), 1448);
        assert_eq!(p.left, 12_500_000 / 1024 / 1448 - 1, "100 Mbps, 10 ms: 1 ms of the rate");
        p.set_rate(Some(12_500_000), Some(us(10_000)), 9);
        p.on_sent(SimTime::ZERO + us(2000), 1448);
        assert_eq!(p.left, 8, "at least min_tso_segs");
    }

    #[test]
    fn tcp_write_xmit_sends_a_burst_per_pacing_slot() {
        let mut p = Pacer { sent: 10, ..Pacer::new(1000, 4000 + GSO_HEADROOM) };
        p.set_rate(Some(100_000_000), Some(us(100)), MIN_TSO_SEGS);
        assert_eq!(p.burst(), 4);
        let t0 = SimTime::ZERO;
        for _ in 0..4 {
            assert!(p.may_send(t0));
            p.on_sent(t0, 1000);
        }
        assert_eq!((p.may_send(t0), p.deadline()), (false, Some(t0 + us(40))));
        assert!(!p.may_send(t0 + us(39)), "the burst ended with its time");
        assert!(p.may_send(t0 + us(40)));
        p.on_sent(t0 + us(40), 1000);
        assert!(p.may_send(t0 + us(40)), "a new burst");
    }

    /// A timeout's retransmission leaves at once and still moves the departure time.
    #[test]
    fn tcp_retransmit_timer_sends_the_head_unpaced() {
        let mut p = Pacer { sent: 10, ..Pacer::new(1000, 0) };
        p.set_rate(Some(100_000_000), None, MIN_TSO_SEGS);
        p.on_sent(SimTime::ZERO, 1000);
        assert!(!p.may_send(SimTime::ZERO));
        p.exempt_next();
        assert!(p.may_send(SimTime::ZERO));
        p.on_sent(SimTime::ZERO, 1000);
        assert_eq!((p.may_send(SimTime::ZERO), p.deadline()), (false, Some(SimTime::ZERO + us(20))));
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
