//! Reno window rules (RFC 5681 §3.1, §3.2): additive increase, and ssthresh
//! at half the flight at each loss.
//!
//! **Models:** congestion avoidance's cwnd += SMSS·SMSS/cwnd per ACK,
//! rounded up to 1 byte (RFC 5681 §3.1 eq. 3), and ssthresh = max(FlightSize/2,
//! 2·SMSS) at a fast retransmit or timeout (eq. 4). These are the window rules
//! of Reno and NewReno alike — the two differ only in fast recovery
//! (`tcp::newreno`) — and of SACK recovery (RFC 6675 §5 step 4.2). Slow start
//! and the loss window are common to every algorithm (`tcp::cc`'s
//! `CongestionWindow`).
//! **Deliberately different:** the increase is per ACK, not per SMSS
//! acknowledged: RFC 5681 §3.1 allows either and this is its equation (3),
//! so a delayed ACK grows cwnd half as fast as Linux's `tcp_cong_avoid_ai`.
//! **Not modelled:** appropriate byte counting (RFC 3465).

use super::CongestionControl;
use crate::time::{SimDuration, SimTime};

/// RFC 5681's algorithm for segments of one size.
#[derive(Clone, Copy, Debug)]
pub struct Reno {
    smss: u64,
}

impl Reno {
    /// Reno for segments of `smss` bytes.
    pub fn new(smss: u64) -> Self {
        Reno { smss }
    }
}

/// RFC 5681 (3.1): "ssthresh = max (FlightSize / 2, 2*SMSS)" (4).
#[inline]
pub fn half_flight(flight: u64, smss: u64) -> u64 {
    (flight / 2).max(2 * smss)
}

impl CongestionControl for Reno {
    #[inline]
    fn cong_avoid(&mut self, cwnd: u64, _acked: u64, _now: SimTime, _srtt: SimDuration) -> u64 {
        // RFC 5681 (3.1): "cwnd += SMSS*SMSS/cwnd" (3) "... if the above
        // formula yields 0, the result SHOULD be rounded up to 1 byte."
        cwnd + (self.smss * self.smss / cwnd).max(1)
    }

    #[inline]
    fn ssthresh(&mut self, _cwnd: u64, flight: u64) -> u64 {
        half_flight(flight, self.smss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: SimTime = SimTime::ZERO;

    /// RFC 5681 (3.1): congestion avoidance adds SMSS·SMSS/cwnd per ACK, at least 1 byte.
    #[test]
    fn rfc5681_3_1_congestion_avoidance_adds_smss_squared_over_cwnd() {
        let mut r = Reno::new(1000);
        assert_eq!(r.cong_avoid(4000, 1000, T0, SimDuration::ZERO), 4250);
        assert_eq!(r.cong_avoid(4250, 1000, T0, SimDuration::ZERO), 4250 + 1_000_000 / 4250);
        let mut tiny = Reno::new(1);
        assert_eq!(tiny.cong_avoid(1000, 1, T0, SimDuration::ZERO), 1001, "1·1/1000 rounds up to 1 byte");
    }

    /// RFC 5681 (3.1): ssthresh = max(FlightSize/2, 2·SMSS), whatever cwnd.
    #[test]
    fn rfc5681_3_1_ssthresh_is_half_the_flight() {
        let mut r = Reno::new(1000);
        assert_eq!(r.ssthresh(20_000, 10_000), 5000);
        assert_eq!(r.ssthresh(20_000, 3000), 2000, "floor of 2·SMSS");
    }
}
