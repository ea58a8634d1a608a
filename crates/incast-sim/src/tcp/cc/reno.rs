//! Reno window rules (RFC 5681 §3.1, §3.2): additive increase, and ssthresh
//! at half the flight at each loss.
//!
//! **Models:** congestion avoidance's cwnd += SMSS·SMSS/cwnd per ACK
//! (RFC 5681 §3.1 eq. 3), and ssthresh = max(FlightSize/2,
//! 2·SMSS) at a fast retransmit or timeout (eq. 4). These are the window rules
//! of Reno and NewReno alike — the two differ only in fast recovery
//! (`tcp::newreno`) — and of SACK recovery (RFC 6675 §5 step 4.2). Slow start
//! and the loss window are common to every algorithm (`tcp::cc`'s
//! `CongestionWindow`).
//! **Deliberately different:** the increase is per ACK, not per SMSS
//! acknowledged: RFC 5681 §3.1 allows either and this is its equation (3),
//! so a delayed ACK grows cwnd half as fast as Linux's `tcp_cong_avoid_ai`.
//! DEVIATION (RFC 5681 §3.1): the increase keeps its fraction of a byte (in
//! 2^-32 byte units) for the next ACK instead of rounding each step — "rounded
//! up to 1 byte" when it is below one — so cwnd grows by exactly eq. (3)
//! summed, one SMSS per window of ACKs as Linux's `snd_cwnd_cnt` and ns-2's
//! floating-point `cwnd_` do; truncating each step lost up to a byte per ACK.
//! `tcp.ca_increase = "ns3"` truncates as ns-3.44's
//! `TcpNewReno::CongestionAvoidance` does ("adder = std::max(1.0, adder);
//! tcb->m_cWnd += static_cast<uint32_t>(adder)"): a window a few hundred
//! bytes smaller after a hundred ACKs, which decides when a segment more may go.
//! **Not modelled:** appropriate byte counting (RFC 3465).

use super::CongestionControl;
use crate::time::{SimDuration, SimTime};

/// How congestion avoidance's per-ACK increase is rounded (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CaIncrease {
    /// SMSS·SMSS/cwnd, the fraction of a byte carried to the next ACK.
    #[default]
    Exact,
    /// ns-3.44: max(1, SMSS·SMSS/cwnd) truncated to whole bytes at each ACK.
    Ns3,
}

/// RFC 5681's algorithm for segments of one size.
#[derive(Clone, Copy, Debug)]
pub struct Reno {
    smss: u64,
    /// The fraction of a byte the increases so far left over, in 2^-32 bytes
    /// (always 0 with [`CaIncrease::Ns3`]).
    frac: u32,
    increase: CaIncrease,
}

impl Reno {
    /// Reno for segments of `smss` bytes, its increase rounded by `increase`.
    pub fn new(smss: u64, increase: CaIncrease) -> Self {
        Reno { smss, frac: 0, increase }
    }
}

/// RFC 5681 (3.1): "ssthresh = max (FlightSize / 2, 2*SMSS)" (4).
#[inline]
pub fn half_flight(flight: u64, smss: u64) -> u64 {
    (flight / 2).max(2 * smss)
}

/// `square / cwnd + frac` in 2^-32 bytes, for an SMSS whose square needs 128 bits.
#[cold]
#[inline(never)]
fn wide_step(square: u64, cwnd: u64, frac: u32) -> u128 {
    ((u128::from(square) << 32) / u128::from(cwnd.max(1))) + u128::from(frac)
}

impl CongestionControl for Reno {
    #[inline(always)]
    fn cong_avoid(&mut self, cwnd: u64, _acked: u64, _now: SimTime, _srtt: SimDuration) -> u64 {
        if self.increase == CaIncrease::Ns3 {
            return cwnd.saturating_add((self.smss * self.smss / cwnd.max(1)).max(1));
        }
        // RFC 5681 (3.1): "cwnd += SMSS*SMSS/cwnd" (3), the fraction carried.
        let square = self.smss * self.smss;
        // The 128-bit division is a library call; 64 bits hold the quotient
        // for any SMSS below 46,341 bytes (SMSS² below 2^31), so the common
        // case divides in 64 bits and only larger segments take the wide path.
        let step = if square < 1 << 31 {
            u128::from(((square << 32) / cwnd.max(1)) + u64::from(self.frac))
        } else {
            wide_step(square, cwnd, self.frac)
        };
        self.frac = step as u32;
        cwnd.saturating_add((step >> 32) as u64)
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

    /// RFC 5681 (3.1): congestion avoidance adds SMSS·SMSS/cwnd per ACK; the
    /// fractions of a byte add up rather than being lost or rounded up.
    #[test]
    fn rfc5681_3_1_congestion_avoidance_adds_smss_squared_over_cwnd() {
        let mut r = Reno::new(1000, CaIncrease::Exact);
        assert_eq!(r.cong_avoid(4000, 1000, T0, SimDuration::ZERO), 4250);
        // 1e6 / 4250 = 235.29...: 235 bytes now, the 0.29 kept.
        assert_eq!(r.cong_avoid(4250, 1000, T0, SimDuration::ZERO), 4485);
        let mut tiny = Reno::new(1, CaIncrease::Exact);
        let mut steps = 0;
        while tiny.cong_avoid(1000, 1, T0, SimDuration::ZERO) == 1000 {
            steps += 1;
        }
        // 1/1000 byte is 4,294,967 units of 2^-32 (rounded down): the byte is
        // complete at the 1,001st step.
        assert_eq!(steps, 1000, "steps of 1/1000 byte add up to one byte");
    }

    /// Over a window of ACKs from 10 segments, the exact sum of eq. (3) is
    /// one segment (1e6/10000 + 1e6/10100 + ... ≈ 995 bytes for 10 ACKs);
    /// truncating each step would lose up to a byte per ACK.
    #[test]
    fn rfc5681_3_1_increase_keeps_its_fractions() {
        let mut r = Reno::new(1000, CaIncrease::Exact);
        let (mut exact, mut cwnd) = (10_000.0_f64, 10_000);
        for _ in 0..100 {
            exact += 1e6 / exact;
            cwnd = r.cong_avoid(cwnd, 1000, T0, SimDuration::ZERO);
        }
        assert!((cwnd as f64 - exact).abs() < 1.0, "{cwnd} vs {exact}");
    }

    /// The largest segments (SMSS² of 2^31 and more, 46,341 bytes up) take
    /// the 128-bit division and add up exactly like small ones.
    #[test]
    fn rfc5681_3_1_increase_is_exact_for_the_largest_segments() {
        for smss in [46_340, 46_341, 65_495] {
            let mut r = Reno::new(smss, CaIncrease::Exact);
            let (mut exact, mut cwnd) = (10.0 * smss as f64, 10 * smss);
            for _ in 0..100 {
                exact += (smss * smss) as f64 / exact;
                cwnd = r.cong_avoid(cwnd, smss, T0, SimDuration::ZERO);
            }
            assert!((cwnd as f64 - exact).abs() < 1.0, "SMSS {smss}: {cwnd} vs {exact}");
        }
    }

    /// ns-3.44's TcpNewReno truncates each step to whole bytes, at least one:
    /// 1e6/10000 = 100, then 1e6/10100 = 99.0 gives 99; over 100 ACKs the
    /// window falls short of the exact sum by tens of bytes.
    #[test]
    fn ns3_truncates_each_increase() {
        let mut r = Reno::new(1000, CaIncrease::Ns3);
        assert_eq!(r.cong_avoid(10_000, 1000, T0, SimDuration::ZERO), 10_100);
        assert_eq!(r.cong_avoid(10_100, 1000, T0, SimDuration::ZERO), 10_199);
        assert_eq!(r.cong_avoid(2_000_000, 1000, T0, SimDuration::ZERO), 2_000_001, "at least a byte");
        let (mut exact, mut cwnd) = (10_000.0_f64, 10_000);
        for _ in 0..100 {
            exact += 1e6 / exact;
            cwnd = r.cong_avoid(cwnd, 1000, T0, SimDuration::ZERO);
        }
        assert!(exact - (cwnd as f64) > 30.0, "{cwnd} vs {exact}");
    }

    /// RFC 5681 (3.1): ssthresh = max(FlightSize/2, 2·SMSS), whatever cwnd.
    #[test]
    fn rfc5681_3_1_ssthresh_is_half_the_flight() {
        let mut r = Reno::new(1000, CaIncrease::Exact);
        assert_eq!(r.ssthresh(20_000, 10_000), 5000);
        assert_eq!(r.ssthresh(20_000, 3000), 2000, "floor of 2·SMSS");
    }
}
