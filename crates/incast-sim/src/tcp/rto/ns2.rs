//! ns-2's RTT estimator (ns-2.35, `TcpAgent::rtt_update`, `rtt_timeout` and
//! `rtt_backoff` in tcp/tcp.cc), the `ns2` flavor of `tcp::rto`.
//!
//! **Models:** the estimator kept in whole ticks of `RtoConfig::tick`
//! (`tcpTick_`, 10 ms by default): a sample counts the tick boundaries it
//! crossed, at least one; `t_srtt_` holds 8·SRTT and `t_rttvar_` 4·RTTVAR in
//! ticks, the first sample setting RTTVAR = R/2; the RTO is (8·SRTT +
//! 32·RTTVAR) / 8 whole ticks, raised to RTO_min before the back-off
//! multiplies it (`rfc2988_`), capped at RTO_max, and at least two ticks.
//! Past a back-off factor of 8 the SRTT is folded into RTTVAR and cleared, so
//! the next sample starts the estimate again. With the default tick and a
//! 100 µs RTT every sample is one tick and the RTO settles at 3 ticks (30 ms)
//! whatever RTO_min below that. Which ACKs give samples is the sender's
//! (`rtt_timing`): every ACK Karn's rule allows (RFC 6298 (3)), or ns-2's one
//! timed segment at a time (`TcpAgent::output`, `newack`, `reset_rtx_timer`),
//! whose ACK alone collapses the back-off.
//! **Deliberately different:** the ticks are counted on a clock whose phase
//! all hosts share, as `tcp::clock`'s jiffies are; the timers themselves stay
//! exact, as in ns-2.
//! **Not modelled:** ns-2's `T_SRTT_BITS`, `T_RTTVAR_BITS` and `rttvar_exp_`
//! as settings: they are fixed at its defaults (3, 2 and 2).

use crate::time::{SimDuration, SimTime};

/// ns-2 `TcpAgent` RTT fields, in ticks with its scaling.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ns2Est {
    /// `t_srtt_`: 8·SRTT in ticks (0: cleared by a long back-off).
    srtt8: i64,
    /// `t_rttvar_`: 4·RTTVAR in ticks.
    rttvar4: i64,
    /// `t_rtxcur_`: the RTO before clamping and back-off, in ticks, as of the
    /// last sample (a back-off that clears SRTT leaves it alone).
    rtxcur: u64,
}

/// The sample of a segment sent at `sent` and acknowledged at `now`: the
/// boundaries of a `tick` crossed, at least one (ns-2 `rtt_update`).
#[inline]
pub(super) fn sample(tick: SimDuration, sent: SimTime, now: SimTime) -> SimDuration {
    let tick = tick.as_ps();
    SimDuration((now.as_ps() / tick - sent.as_ps() / tick).max(1) * tick)
}

/// ns-2 `TcpAgent::rtt_update` for a sample of `r` picoseconds on ticks of
/// `tick` picoseconds: fold it into `est`, or start it.
pub(super) fn rtt_update(est: &mut Option<Box<Ns2Est>>, r: u64, tick: u64) {
    // ns-2: "t_rtt_ = int((tao + tickoff) / tcp_tick_)", the tick boundaries
    // crossed, which `sample` already counted; a timestamp sample is
    // "int(tao /tcp_tick_ + 0.5)". "if (t_rtt_ < 1) t_rtt_ = 1;"
    let t_rtt = (r.saturating_add(tick / 2) / tick).clamp(1, 1 << 40) as i64;
    let (srtt8, rttvar4) = match est.as_deref() {
        Some(&Ns2Est { srtt8, rttvar4, .. }) if srtt8 != 0 => {
            // ns-2: "delta = t_rtt_ - (t_srtt_ >> T_SRTT_BITS); if ((t_srtt_ += delta) <= 0) t_srtt_ = 1;"
            let mut delta = t_rtt - (srtt8 >> 3);
            let srtt8 = (srtt8 + delta).max(1);
            // ns-2: "delta -= (t_rttvar_ >> T_RTTVAR_BITS); if ((t_rttvar_ += delta) <= 0) t_rttvar_ = 1;"
            delta = delta.abs() - (rttvar4 >> 2);
            (srtt8, (rttvar4 + delta).max(1))
        }
        // ns-2: "t_srtt_ = t_rtt_ << T_SRTT_BITS; t_rttvar_ = t_rtt_ << (T_RTTVAR_BITS-1);"
        _ => (t_rtt << 3, t_rtt << 1),
    };
    // ns-2: "t_rtxcur_ = (((t_rttvar_ << (rttvar_exp_ + (T_SRTT_BITS - T_RTTVAR_BITS)))
    // + t_srtt_) >> T_SRTT_BITS) * tcp_tick_;" with rttvar_exp_ 2.
    let rtxcur = (((rttvar4 << 3) + srtt8) >> 3) as u64;
    let next = Ns2Est { srtt8, rttvar4, rtxcur };
    match est.as_deref_mut() {
        Some(e) => *e = next,
        None => *est = Some(Box::new(next)),
    }
}

/// ns-2 `rtt_backoff` once the back-off factor passes 8: "if (t_backoff_ > 8)
/// { t_rttvar_ += (t_srtt_ >> T_SRTT_BITS); t_srtt_ = 0; }" (t_backoff_ =
/// 2^backoff); t_rtxcur_ stays.
pub(super) fn rtt_backoff(e: &mut Ns2Est) {
    e.rttvar4 += e.srtt8 >> 3;
    e.srtt8 = 0;
}

/// ns-2 `rtt_timeout`: "if (timeout < 2.0 * tcp_tick_) ... timeout = 2.0 *
/// tcp_tick_;" for a backed-off RTO of `rto` picoseconds.
pub(super) fn at_least_two_ticks(rto: u64, tick: u64) -> u64 {
    rto.max(tick.saturating_mul(2))
}

impl Ns2Est {
    /// ns-2 `rtt_timeout`: t_rtxcur_ in picoseconds, raised to minrto_ before
    /// the back-off ("Correction from Tom Kelly to be RFC2988-compliant") by
    /// `tcp::rto`.
    pub(super) fn rto(&self, tick: u64) -> u64 {
        self.rtxcur.saturating_mul(tick)
    }

    /// SRTT in picoseconds (zero once a long back-off cleared it).
    pub(super) fn srtt(&self, tick: u64) -> u64 {
        self.srtt8 as u64 * tick / 8
    }

    /// RTTVAR in picoseconds.
    pub(super) fn rttvar(&self, tick: u64) -> u64 {
        self.rttvar4 as u64 * tick / 4
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ms, us};
    use super::super::*;

    fn ns2(min: SimDuration) -> RtoEstimator {
        RtoEstimator::new(RtoConfig { min, flavor: RtoFlavor::Ns2, ..RtoConfig::default() })
    }

    /// ns-2 `rtt_update`: a 100 µs round trip on the default 10 ms tick counts
    /// as one tick; SRTT = 1 tick, RTTVAR = 1/2 tick, RTO = (8 + 16) >> 3 = 3
    /// ticks, and further one-tick samples leave it there (RTTVAR's 1/4 step
    /// truncates to nothing) — 30 ms with a 1 ms RTO_min, the floor above it.
    #[test]
    fn ns2_rtt_update_counts_ticks_and_settles_at_three() {
        let clock = TcpClock::new(SimDuration::ZERO);
        for (min, rto) in [(ms(1), ms(30)), (ms(200), ms(200))] {
            let mut e = ns2(min);
            let sent = SimTime(ms(25).as_ps());
            let r = e.sample(&clock, sent, sent + us(100));
            assert_eq!(r, ms(10), "a sample within one tick is one tick");
            for _ in 0..20 {
                e.on_ack_rtt_sample(r, 0, 0);
                assert_eq!(e.rto(), rto);
            }
            assert_eq!(e.srtt(), Some(ms(10)));
        }
    }

    /// ns-2 `rtt_update` counts the tick boundaries a sample crossed: 100 µs
    /// across a boundary is one tick, 25 ms from the middle of a tick three.
    #[test]
    fn ns2_samples_count_tick_boundaries_crossed() {
        let (clock, e) = (TcpClock::new(SimDuration::ZERO), ns2(ms(1)));
        let at = |v: u64| SimTime(us(v).as_ps());
        assert_eq!(e.sample(&clock, at(9_950), at(10_050)), ms(10));
        assert_eq!(e.sample(&clock, at(5_000), at(30_000)), ms(30));
    }

    /// ns-2 `rtt_timeout` raises t_rtxcur_ to minrto_ before the back-off
    /// multiplies it, and `rtt_backoff` clears SRTT once the factor passes 8,
    /// so the next sample starts the estimate afresh (RTTVAR = R/2) rather
    /// than smoothing into the old one.
    #[test]
    fn ns2_backoff_doubles_from_rto_min_and_clears_srtt_past_eight() {
        let mut e = ns2(ms(1));
        for _ in 0..30 {
            e.on_ack_rtt_sample(ms(50), 0, 0);
        }
        // t_rttvar_ falls 10, 8, 6, 5, 4, 3 and stops (3 >> 2 = 0): RTO = 5 + 3 ticks.
        assert_eq!(e.rto(), ms(80));
        for k in 1..=4 {
            e.on_timeout();
            assert_eq!(e.rto(), ms(80 << k));
        }
        e.on_ack_rtt_sample(ms(10), 0, 0);
        assert_eq!((e.srtt(), e.rto()), (Some(ms(10)), ms(30)), "restarted from the one-tick sample");
    }
}
