//! Retransmission timeout estimator (RFC 6298).
//!
//! **Models:** SRTT/RTTVAR smoothing with α = 1/8, β = 1/4 (§2), the clock
//! granularity term G (§2.2, §4), RTO_min/RTO_max clamping (§2.4, §2.5),
//! exponential back-off (§5.5) that collapses on the next valid sample (§5).
//! A jiffy clock (G > 0) floors SRTT and RTTVAR at one tick each, so the
//! effective RTO is never below 5 ticks (CMU09 §6: 5 ms at G = 1 ms even with
//! RTO_min = 1 ms).
//! **Deliberately different:** RTO_min and RTO_max are configuration, not the
//! RFC's 1 s and ≥ 60 s — the incast experiments sweep RTO_min down to
//! microseconds. Arithmetic is integer picoseconds, truncating at each step.
//! **Not modelled:** Linux's `mdev_max`/`rttvar` per-window decay, timestamp
//! RTTM (RFC 7323 §4), clearing SRTT after repeated back-offs (§5 note).
//!
//! Which segments yield samples (Karn's rule, RFC 6298 §3) is decided by the
//! sender (`tcp::sender`); this module only folds samples in.

use super::RtoConfig;
use crate::time::SimDuration;

/// SRTT/RTTVAR state and the current back-off of one sender.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    cfg: RtoConfig,
    /// Clock granularity G in picoseconds (0 = exact).
    g: u64,
    /// (SRTT, RTTVAR) in picoseconds, once a sample has been taken.
    est: Option<(u64, u64)>,
    /// Number of doublings since the last valid sample.
    backoff: u32,
}

impl RtoEstimator {
    /// An estimator with no sample yet. G comes from `cfg.granularity`.
    pub fn new(cfg: RtoConfig) -> Self {
        RtoEstimator { g: cfg.granularity.as_ps(), cfg, est: None, backoff: 0 }
    }

    /// Fold in one RTT sample `r` (already rounded to the clock by the caller).
    pub fn on_rtt_sample(&mut self, r: SimDuration) {
        let r = r.as_ps();
        let (mut srtt, mut rttvar) = match self.est {
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
        srtt = srtt.max(self.g);
        rttvar = rttvar.max(self.g);
        self.est = Some((srtt, rttvar));
        // RFC 6298 (5): "once a new RTT measurement is obtained ... [this] may
        // result in "collapsing" RTO back down after ... exponential back off"
        self.backoff = 0;
    }

    /// The retransmission timer expired: back off.
    pub fn on_timeout(&mut self) {
        // RFC 6298 (5.5): "The host MUST set RTO <- RTO * 2 ("back off the
        // timer"). The maximum value ... may be used to provide an upper bound"
        if self.rto() < self.cfg.max && self.backoff < 63 {
            self.backoff += 1;
        }
    }

    /// RTO before back-off: the RFC 6298 (2.2)–(2.5) formula, clamped.
    pub fn base_rto(&self) -> SimDuration {
        let rto = match self.est {
            // RFC 6298 (2.1): "the sender SHOULD set RTO <- 1 second" (configurable).
            None => self.cfg.initial.as_ps(),
            // RFC 6298 (2.2): "RTO <- SRTT + max (G, K*RTTVAR) where K = 4"
            Some((srtt, rttvar)) => srtt.saturating_add(self.g.max(rttvar.saturating_mul(4))),
        };
        // RFC 6298 (2.4): "if it is less than 1 second, then the RTO SHOULD be
        // rounded up" — to the configured RTO_min instead of 1 s.
        // RFC 6298 (2.5): "A maximum value MAY be placed on RTO".
        SimDuration(rto.max(self.cfg.min.as_ps()).min(self.cfg.max.as_ps()))
    }

    /// The current RTO, back-off included, never above RTO_max.
    pub fn rto(&self) -> SimDuration {
        let base = self.base_rto().as_ps();
        let backed = base.checked_shl(self.backoff).filter(|v| v >> self.backoff == base);
        SimDuration(backed.unwrap_or(u64::MAX).min(self.cfg.max.as_ps()))
    }

    /// Smoothed RTT, once a sample has been taken.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.est.map(|(s, _)| SimDuration(s))
    }

    /// RTT variation, once a sample has been taken.
    pub fn rttvar(&self) -> Option<SimDuration> {
        self.est.map(|(_, v)| SimDuration(v))
    }

    /// Doublings applied since the last valid sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }
    fn ps(v: u64) -> SimDuration {
        SimDuration(v)
    }
    fn cfg(min: SimDuration) -> RtoConfig {
        RtoConfig { min, ..RtoConfig::default() }
    }

    /// RFC 6298 (2.1): before any sample the RTO is the initial value.
    #[test]
    fn rfc6298_2_1_initial_rto_before_any_sample() {
        let e = RtoEstimator::new(cfg(us(1)));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }

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

    /// RFC 6298 (2.4): the computed RTO is rounded up to RTO_min.
    #[test]
    fn rfc6298_2_4_rto_min_floor() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.on_rtt_sample(us(100));
        assert_eq!(e.rto(), SimDuration::from_millis(200));
    }

    /// RFC 6298 (2.5): the computed RTO is capped at RTO_max.
    #[test]
    fn rfc6298_2_5_rto_max_cap() {
        let mut e = RtoEstimator::new(RtoConfig { max: SimDuration::from_secs(2), ..cfg(us(1)) });
        e.on_rtt_sample(SimDuration::from_secs(1));
        assert_eq!(e.base_rto(), SimDuration::from_secs(2));
    }

    /// RFC 6298 (5.5): back-off doubles and is capped by RTO_max.
    #[test]
    fn rfc6298_5_5_backoff_doubles_until_max() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.on_rtt_sample(us(100));
        let mut expect = SimDuration::from_millis(200);
        for _ in 0..9 {
            assert_eq!(e.rto(), expect);
            e.on_timeout();
            expect = expect.saturating_mul(2).min(SimDuration::from_secs(120));
        }
        // 200 ms · 2^9 = 102.4 s; the next doubling is capped at 120 s and stays there.
        assert_eq!(e.rto(), SimDuration::from_millis(102_400));
        e.on_timeout();
        assert_eq!(e.rto(), SimDuration::from_secs(120));
        for _ in 0..100 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(120));
    }

    /// RFC 6298 (5): the next valid sample collapses the backed-off RTO.
    #[test]
    fn rfc6298_5_new_sample_collapses_backoff() {
        let mut e = RtoEstimator::new(cfg(us(1)));
        e.on_rtt_sample(us(100));
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), us(1200));
        e.on_rtt_sample(us(100));
        assert_eq!(e.backoff(), 0);
        // RTTVAR = 3/4·50 = 37.5 µs; RTO = 100 + 150 µs.
        assert_eq!(e.rto(), us(250));
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
