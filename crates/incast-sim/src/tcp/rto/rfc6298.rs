//! The RFC 6298 estimator, the default flavor of `tcp::rto`.
//!
//! **Models:** SRTT/RTTVAR smoothing with α = 1/8, β = 1/4 (§2) and the
//! clock granularity term G (§2.2, §4); `tcp::rto` clamps the result to
//! RTO_min and RTO_max (§2.4, §2.5). A jiffy clock (G > 0) floors SRTT and
//! RTTVAR at one tick each, so the effective RTO is never below 5 ticks
//! (CMU09 §6: 5 ms at G = 1 ms even with RTO_min = 1 ms).
//! **Deliberately different:** the one-tick floor of SRTT and RTTVAR is
//! CMU09 §6's account of a jiffy-clock stack, not the RFC's; integer
//! picoseconds, truncating at each step.
//! **Not modelled:** clearing SRTT after repeated back-offs (§5 note).

/// RFC 6298 (2.2), (2.3): the (SRTT, RTTVAR) in picoseconds after a sample
/// of `r` picoseconds, from `est` (none before the first sample), floored at
/// the granularity `g`.
#[inline]
pub(super) fn sample(est: Option<(u64, u64)>, r: u64, g: u64) -> (u64, u64) {
    let (srtt, rttvar) = match est {
        // RFC 6298 (2.2): "the host MUST set SRTT <- R, RTTVAR <- R/2"
        None => (r, r / 2),
        Some((srtt, rttvar)) => {
            // RFC 6298 (2.3): "RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|"
            // "The value of SRTT used in the update to RTTVAR is its value
            // before updating SRTT itself" — so RTTVAR first, with beta = 1/4.
            let rttvar = (rttvar.saturating_mul(3).saturating_add(srtt.abs_diff(r))) / 4;
            // RFC 6298 (2.3): "SRTT <- (1 - alpha) * SRTT + alpha * R'", alpha = 1/8.
            let srtt = (srtt.saturating_mul(7).saturating_add(r)) / 8;
            (srtt, rttvar)
        }
    };
    // CMU09 §6: "both the smoothed RTT estimate and RTT variance have a
    // 1 jiffy (1ms) lower bound" on a jiffy clock.
    (srtt.max(g), rttvar.max(g))
}

/// RFC 6298 (2.2): "RTO <- SRTT + max (G, K*RTTVAR) where K = 4".
#[inline]
pub(super) fn rto(srtt: u64, rttvar: u64, g: u64) -> u64 {
    srtt.saturating_add(g.max(rttvar.saturating_mul(4)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, ps, us};
    use super::super::*;

    /// RFC 6298 (2.2): first sample sets SRTT <- R, RTTVAR <- R/2.
    #[test]
    fn rfc6298_2_2_first_sample_initialises() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        assert_eq!(e.srtt(), Some(us(100)));
        assert_eq!(e.rttvar(), Some(us(50)));
        assert_eq!(e.rto(), us(300));
    }

    /// RFC 6298 (2.3): RTTVAR is updated with the old SRTT, then SRTT; exact values.
    #[test]
    fn rfc6298_2_3_updates_rttvar_before_srtt() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        e.on_rtt_sample(us(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5 µs (not 59.375, which the new SRTT gives).
        assert_eq!(e.rttvar(), Some(ps(62_500_000)));
        // SRTT = 7/8·100 + 1/8·200 = 112.5 µs.
        assert_eq!(e.srtt(), Some(ps(112_500_000)));
        assert_eq!(e.rto(), ps(362_500_000));
        e.on_rtt_sample(us(100));
        assert_eq!(e.rttvar(), Some(us(50)));
        assert_eq!(e.srtt(), Some(ps(110_937_500)));
        assert_eq!(e.rto(), ps(310_937_500));
    }

    /// Constant samples converge to max(RTO_min, SRTT) once RTTVAR decays to zero.
    #[test]
    fn converges_on_constant_samples() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        for _ in 0..200 {
            e.on_rtt_sample(us(100));
        }
        assert_eq!(e.rttvar(), Some(SimDuration::ZERO));
        assert_eq!(e.rto(), us(100));
    }

    /// CMU09 §6: at G = 1 ms with RTO_min = 1 ms, SRTT and RTTVAR are floored at
    /// one tick and RTO = SRTT + 4·RTTVAR = 5 ms; an exact clock gives RTO_min.
    #[test]
    fn rfc6298_2_2_jiffy_clock_gives_five_tick_effective_rto() {
        let g = SimDuration::from_millis(1);
        let jiffy = RtoConfig { min: g, granularity: g, ..RtoConfig::default() };
        let mut e = RtoEstimator::new(jiffy);
        // A 100 µs round trip measures as one tick (see `clock::TcpClock::sample`).
        e.on_rtt_sample(g);
        assert_eq!(e.rttvar(), Some(g), "R/2 = 0.5 ms is floored at one tick");
        assert_eq!(e.rto(), SimDuration::from_millis(5));
        for _ in 0..100 {
            e.on_rtt_sample(g);
        }
        assert_eq!((e.srtt(), e.rttvar()), (Some(g), Some(g)));
        assert_eq!(e.rto(), SimDuration::from_millis(5));

        let mut exact = RtoEstimator::new(RtoConfig { granularity: SimDuration::ZERO, ..jiffy });
        for _ in 0..100 {
            exact.on_rtt_sample(us(100));
        }
        assert_eq!(exact.rto(), g);
    }
}
