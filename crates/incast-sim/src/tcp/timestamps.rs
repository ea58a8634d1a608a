//! The TCP timestamps option (RFC 7323 §3–§4): TSval, TS.Recent, and RTT
//! samples from the echoed timestamp.
//!
//! **Models:** a TSval clock ticking every `TcpConfig::timestamp_tick` (1 ms
//! by default, Linux's `TCP_TS_HZ`), 32 bits wide and compared modulo 2³²;
//! TS.Recent and Last.ACK.sent with the update rule of RFC 7323 §4.3 (only a
//! segment that reaches Last.ACK.sent may set TS.Recent, so an ACK of a hole
//! echoes the TSval of the segment that filled it, not of later data); RTT
//! samples from TSecr. The sender takes such a sample only when Karn's rule
//! forbids one from its own send times (a newly acknowledged segment was
//! retransmitted), as Linux `tcp_ack_update_rtt` does, and like Linux's
//! `tcp_rtt_tsopt_us` it rounds a zero-tick difference up to one tick: with
//! 1 ms ticks a retransmitted segment on a 100 µs path yields a 1 ms sample.
//! **Deliberately different:** connections start with both ends' TS.Recent
//! at 0 (the SYN exchange that would set it is not simulated).
//! **Not modelled:** PAWS (RFC 7323 §5: sequence numbers never wrap here),
//! timestamp randomization per connection.

use super::Timestamps;
use crate::time::{SimDuration, SimTime};

/// Timestamps state of one endpoint.
#[derive(Clone, Copy, Debug)]
pub struct TsClock {
    /// Tick of the TSval clock, in picoseconds (at least 1).
    tick_ps: u64,
    /// TS.Recent: the TSval to echo.
    ts_recent: u32,
    /// Last.ACK.sent: the ACK field of the latest segment sent.
    last_ack_sent: u64,
}

impl TsClock {
    /// A TSval clock ticking every `tick`.
    pub fn new(tick: SimDuration) -> Self {
        TsClock { tick_ps: tick.as_ps().max(1), ts_recent: 0, last_ack_sent: 0 }
    }

    /// TSval at `now`: ticks since time zero, modulo 2³².
    #[inline]
    pub fn val(&self, now: SimTime) -> u32 {
        (now.as_ps() / self.tick_ps) as u32
    }

    /// The option for a segment sent at `now` acknowledging `ack` (RFC 7323
    /// §4.3 (1): TSecr is TS.Recent).
    #[inline]
    pub fn stamp(&mut self, now: SimTime, ack: u64) -> Timestamps {
        self.last_ack_sent = ack;
        Timestamps { val: self.val(now), ecr: self.ts_recent }
    }

    /// An arriving segment starting at `seq` carried `ts`: RFC 7323 (4.3):
    /// "If: SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent then
    /// SEG.TSval is copied to TS.Recent; otherwise, it is ignored."
    #[inline]
    pub fn on_segment(&mut self, seq: u64, ts: Timestamps) {
        if !before(ts.val, self.ts_recent) && seq <= self.last_ack_sent {
            self.ts_recent = ts.val;
        }
    }

    /// RTT sample at `now` from an echoed `ecr` (RFC 7323 §4.1), at least one
    /// tick, as Linux `tcp_rtt_tsopt_us`.
    #[inline]
    pub fn rtt_sample(&self, now: SimTime, ecr: u32) -> SimDuration {
        let ticks = self.val(now).wrapping_sub(ecr).max(1);
        SimDuration::from_ps(ticks as u64 * self.tick_ps)
    }
}

/// `a` is earlier than `b` on the 32-bit TSval clock (RFC 7323 §4.3, modulo 2³²).
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(n)
    }

    /// RFC 7323 §4.3: an out-of-order segment (above Last.ACK.sent) does not
    /// set TS.Recent; the segment that fills the hole does.
    #[test]
    fn rfc7323_4_3_ts_recent_follows_the_segment_that_reaches_last_ack_sent() {
        let mut c = TsClock::new(SimDuration::from_millis(1));
        c.stamp(ms(0), 1000);
        c.on_segment(2000, Timestamps { val: 7, ecr: 0 });
        assert_eq!(c.stamp(ms(1), 1000).ecr, 0, "segment above Last.ACK.sent ignored");
        c.on_segment(1000, Timestamps { val: 5, ecr: 0 });
        assert_eq!(c.stamp(ms(2), 3000).ecr, 5);
        c.on_segment(3000, Timestamps { val: 4, ecr: 0 });
        assert_eq!(c.stamp(ms(3), 4000).ecr, 5, "an older TSval never moves TS.Recent back");
    }

    /// Linux `tcp_rtt_tsopt_us`: a sample is whole ticks, at least one.
    #[test]
    fn rtt_sample_is_at_least_one_tick() {
        let c = TsClock::new(SimDuration::from_millis(1));
        assert_eq!(c.val(ms(7) + SimDuration::from_micros(900)), 7);
        assert_eq!(c.rtt_sample(ms(7) + SimDuration::from_micros(100), 7), SimDuration::from_millis(1));
        assert_eq!(c.rtt_sample(ms(9), 7), SimDuration::from_millis(2));
    }

    #[test]
    fn tsval_comparison_wraps() {
        assert!(before(u32::MAX, 0));
        assert!(!before(0, u32::MAX));
        assert!(before(3, 4));
    }
}
