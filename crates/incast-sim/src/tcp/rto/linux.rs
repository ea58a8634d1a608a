//! Linux's RTT estimator: `tcp_rtt_estimator` and `__tcp_set_rto`
//! (net/ipv4/tcp_input.c), the `linux` flavor of `tcp::rto`.
//!
//! **Models:** the kernel's scaled integers: `srtt` holds 8·SRTT, `mdev`
//! 4·mdev (with the finer gain when the RTT falls), `mdev_max` the largest
//! `mdev` of the current window of data, reset to RTO_min (`tcp_rto_min_us`)
//! at each window end, and `rttvar` = max(`mdev_max`, …) decaying towards
//! `mdev_max` by 1/4 per window; the first sample sets `rttvar = max(2·R,
//! RTO_min)`. `__tcp_set_rto` returns `(srtt >> 3) + rttvar`, so RTO = SRTT +
//! rttvar ≥ SRTT + RTO_min: RTO ≈ SRTT + max(4·mdev, RTO_min), NOT the RFC's
//! max(RTO_min, SRTT + 4·RTTVAR). RTO_min there is in jiffies
//! (`icsk_rto_min`), so on a jiffy clock it is rounded up to whole ticks
//! first: with 4 ms ticks an RTO_min of 1 ms floors `rttvar` at 4 ms and 5 ms
//! at 8 ms, and the RTO, armed in whole jiffies, is then at least 8 and 12 ms
//! for any SRTT above zero. `tcp_bound_rto` caps it at RTO_max (`tcp::rto`). A
//! window ends on the first sample whose SND.UNA is past the SND.NXT recorded
//! at the previous window end (`after(tp->snd_una, tp->rtt_seq)`).
//! Before Linux 3.15 the same fields counted whole jiffies (`tp->srtt`,
//! `tp->mdev`, `tp->rttvar`, fed `tcp_time_stamp` differences): on a jiffy
//! clock with RTT samples read on it (`RttResolution::Clock`) every field is
//! an integer number of ticks and every shift truncates to ticks, so a 4·mdev
//! of 2 or 3 jiffies never decays (`mdev >> 2` is 0) and an `rttvar` less than
//! 4 jiffies above `mdev_max` never decays either; one sample of 3 jiffies
//! leaves the RTO at 5 jiffies for good, CMU09 §6's "TCP timeouts were a
//! minimum of 5ms" with RTO_min at 1 ms on a 1 ms jiffy.
//! **Deliberately different:** picoseconds where Linux 3.15 and later keep
//! microseconds. No G term and no jiffy floor on SRTT and RTTVAR beyond that
//! integer arithmetic. Samples given without sequence numbers
//! (`RtoEstimator::on_rtt_sample`) each close a window.
//! **Not modelled:** Linux's per-route `rto_min` (`RTAX_RTO_MIN`) and its BPF
//! RTT hook.

/// Linux `struct tcp_sock` RTT fields with the kernel's scaling, in whole
/// `unit`s: picoseconds, or jiffies for Linux 2.6's estimator ([`unit`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct LinuxEst {
    /// Picoseconds in one unit of the fields below.
    unit: u64,
    /// `srtt_us`: 8·SRTT.
    srtt8: u64,
    /// `mdev_us`: 4·mdev.
    mdev4: u64,
    /// `mdev_max_us`: largest `mdev_us` of the current window, at least RTO_min.
    mdev_max: u64,
    /// `rttvar_us`: the variance term added to SRTT, at least `mdev_max`.
    rttvar: u64,
    /// `rtt_seq`: SND.NXT when the current window began.
    rtt_seq: u64,
}

/// The Linux flavor's RTO_min of `min` picoseconds on a clock of granularity
/// `g` (0: exact): Linux keeps it in jiffies (`icsk_rto_min`, set with
/// `usecs_to_jiffies`; `tcp_rto_min_us` is `jiffies_to_usecs(tcp_rto_min(sk))`),
/// so on a jiffy clock it is RTO_min rounded up to whole ticks: 4 ms for 1 ms
/// at HZ=250.
pub(super) fn rto_min(min: u64, g: u64) -> u64 {
    if g > 0 {
        min.div_ceil(g).saturating_mul(g)
    } else {
        min
    }
}

/// The unit, in picoseconds, of the Linux estimator's integers on a clock of
/// granularity `g` (0: exact) whose RTT samples are read as `resolution`
/// says: the jiffy where the samples are whole jiffies (Linux 2.6's `u32`
/// `srtt`, `mdev`, `rttvar`), else a picosecond.
pub(super) fn unit(g: u64, resolution: super::RttResolution) -> u64 {
    if g > 0 && resolution == super::RttResolution::Clock {
        g
    } else {
        1
    }
}

/// Linux `tcp_rtt_estimator`, line by line, in whole `unit`s ([`unit`]):
/// fold a sample of `r` picoseconds into `est` (or start it), on an ACK that
/// moved SND.UNA to `snd_una` while SND.NXT was `snd_nxt`, with `rto_min`
/// picoseconds from [`rto_min`] (both whole units).
#[inline(never)]
pub(super) fn tcp_rtt_estimator(
    est: &mut Option<Box<LinuxEst>>,
    r: u64,
    snd_una: u64,
    snd_nxt: u64,
    rto_min: u64,
    unit: u64,
) {
    let (r, rto_min) = (r / unit, rto_min / unit);
    // Keep 8·R inside i64 (R ≤ 2^59 ps, about 6.7 days).
    let r = r.min(1 << 59);
    let Some(l) = est.as_deref_mut() else {
        // Linux: "no previous measure." `srtt = m << 3`, `tp->mdev_us = m << 1;
        // /* make sure rto = 3*rtt */`, `tp->rttvar_us = max(tp->mdev_us,
        // tcp_rto_min_us(sk))`, `tp->mdev_max_us = tp->rttvar_us`, `tp->rtt_seq = tp->snd_nxt`.
        let rttvar = (r << 1).max(rto_min);
        let srtt8 = (r << 3).max(1);
        *est = Some(Box::new(LinuxEst { unit, srtt8, mdev4: r << 1, mdev_max: rttvar, rttvar, rtt_seq: snd_nxt }));
        return;
    };
    // Linux: "m -= (srtt >> 3); /* m is now error in rtt est */"
    let mut m = r as i64 - (l.srtt8 >> 3) as i64;
    // Linux: "srtt += m; /* rtt = 7/8 rtt + 1/8 new */"
    let srtt8 = (l.srtt8 as i64 + m) as u64;
    if m < 0 {
        // Linux: "m = -m; m -= (tp->mdev_us >> 2); ... we use finer gain for
        // mdev in this case (alpha*beta)" — `if (m > 0) m >>= 3;`
        m = -m - (l.mdev4 >> 2) as i64;
        if m > 0 {
            m >>= 3;
        }
    } else {
        m -= (l.mdev4 >> 2) as i64;
    }
    // Linux: "tp->mdev_us += m; /* mdev = 3/4 mdev + 1/4 new */"
    l.mdev4 = (l.mdev4 as i64 + m) as u64;
    if l.mdev4 > l.mdev_max {
        l.mdev_max = l.mdev4;
        l.rttvar = l.rttvar.max(l.mdev_max);
    }
    // Linux: "if (after(tp->snd_una, tp->rtt_seq))" — the window of data has ended.
    if snd_una > l.rtt_seq {
        if l.mdev_max < l.rttvar {
            // Linux: "tp->rttvar_us -= (tp->rttvar_us - tp->mdev_max_us) >> 2;"
            l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
        }
        l.rtt_seq = snd_nxt;
        // Linux: "tp->mdev_max_us = tcp_rto_min_us(sk);"
        l.mdev_max = rto_min;
    }
    // Linux: "tp->srtt_us = max(1U, srtt);"
    l.srtt8 = srtt8.max(1);
}

impl LinuxEst {
    /// Linux `__tcp_set_rto`: "return usecs_to_jiffies((tp->srtt_us >> 3) +
    /// tp->rttvar_us);" (2.6: `(tp->srtt >> 3) + tp->rttvar` in jiffies, the
    /// SRTT truncated to whole jiffies), in picoseconds, before `tcp_bound_rto`.
    pub(super) fn rto(&self) -> u64 {
        (self.srtt8 >> 3).saturating_add(self.rttvar).saturating_mul(self.unit)
    }

    /// SRTT (`srtt_us >> 3`; 2.6's `TCP_INFO`: `jiffies_to_usecs(tp->srtt) >> 3`).
    pub(super) fn srtt(&self) -> u64 {
        self.srtt8.saturating_mul(self.unit) >> 3
    }

    /// `rttvar_us / 4`, so that RTO = SRTT + 4·RTTVAR as in the RFC's formula.
    pub(super) fn rttvar(&self) -> u64 {
        self.rttvar.saturating_mul(self.unit) / 4
    }

    /// The mean deviation (`mdev_us >> 2`), what `TCP_INFO` reports as `tcpi_rttvar`.
    pub(super) fn mdev(&self) -> u64 {
        self.mdev4.saturating_mul(self.unit) / 4
    }

    /// `rtt_seq`: SND.NXT when the current window began.
    pub(super) fn rtt_seq(&self) -> u64 {
        self.rtt_seq
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, ms, ps, us};
    use super::super::*;

    fn linux(min: SimDuration) -> RtoConfig {
        RtoConfig { min, flavor: RtoFlavor::Linux, ..RtoConfig::default() }
    }

    /// Linux `tcp_rtt_estimator`: "tp->rttvar_us = max(tp->mdev_us,
    /// tcp_rto_min_us(sk))" and `__tcp_set_rto` = SRTT + rttvar — with
    /// RTO_min = 200 ms and 100 µs samples, RTO = 200.1 ms, not RFC 6298's 200 ms.
    #[test]
    fn linux_tcp_set_rto_adds_rto_min_to_srtt() {
        let mut lx = RtoEstimator::new(linux(SimDuration::from_millis(200)));
        let mut rfc = RtoEstimator::new(cfg(SimDuration::from_millis(200)));
        for i in 0..50 {
            lx.on_rtt_sample(us(100));
            rfc.on_rtt_sample(us(100));
            assert_eq!(lx.rto(), us(200_100), "sample {i}");
            assert_eq!(rfc.rto(), SimDuration::from_millis(200), "sample {i}");
        }
        assert_eq!(lx.srtt(), Some(us(100)));
    }

    /// Linux `tcp_rtt_estimator` with RTO_min = 200 µs: the first sample gives
    /// `mdev_us = m << 1` = 200 µs = RTO_min, so RTO = 3·R = 300 µs; constant
    /// samples keep rttvar at its floor RTO_min, so RTO stays SRTT + 200 µs
    /// while RFC 6298 converges to SRTT = 100 µs, floored at 200 µs.
    #[test]
    fn linux_tcp_rtt_estimator_floors_rttvar_at_rto_min() {
        let mut lx = RtoEstimator::new(linux(us(200)));
        let mut rfc = RtoEstimator::new(cfg(us(200)));
        lx.on_rtt_sample(us(100));
        rfc.on_rtt_sample(us(100));
        assert_eq!((lx.rto(), rfc.rto()), (us(300), us(300)));
        for _ in 0..200 {
            lx.on_rtt_sample(us(100));
            rfc.on_rtt_sample(us(100));
        }
        assert_eq!(lx.rto(), us(300));
        assert_eq!(rfc.rto(), us(200));
        // With RTO_min below the variance, mdev sets the RTO: first sample 3·R.
        let mut small = RtoEstimator::new(linux(us(1)));
        small.on_rtt_sample(us(100));
        assert_eq!(small.rto(), us(300));
    }

    /// Linux `tcp_rtt_estimator`: a rising RTT raises `mdev` with gain 1/4; a
    /// falling one only with gain 1/32 ("we use finer gain for mdev in this
    /// case (alpha*beta)"); `rttvar` decays towards `mdev_max` by 1/4 per window.
    #[test]
    fn linux_tcp_rtt_estimator_mdev_gains_and_window_decay() {
        let mut e = RtoEstimator::new(linux(us(1)));
        e.on_ack_rtt_sample(us(100), 0, 10);
        // srtt8 = 800, mdev4 = 200, rttvar = 200 (µs).
        // Rise to 200 µs within the window (snd_una 5 ≤ rtt_seq 10): m = 100,
        // srtt8 = 900, m - mdev4/4 = 50, mdev4 = 250 > mdev_max → rttvar = 250.
        e.on_ack_rtt_sample(us(200), 5, 20);
        assert_eq!(e.srtt(), Some(ps(112_500_000)));
        assert_eq!(e.rto(), ps(362_500_000));
        // Fall to 100 µs, ending the window (snd_una 11 > 10): m = −12.5 µs,
        // srtt8 = 887.5; |m| − mdev4/4 = 12.5 − 62.5 < 0, not scaled: mdev4 = 200.
        // Window end: rttvar 250 > mdev_max 250? no decay; mdev_max ← RTO_min.
        e.on_ack_rtt_sample(us(100), 11, 30);
        assert_eq!(e.srtt(), Some(ps(110_937_500)));
        assert_eq!(e.rto(), ps(110_937_500 + 250_000_000));
        // Next window end: mdev4 = 200 − 200/4 + … stays below 250, so rttvar
        // decays by (250 − mdev_max)/4.
        e.on_ack_rtt_sample(us(110), 31, 40);
        let v = e.rttvar().expect("sampled").as_ps() * 4;
        assert!(v < 250_000_000 && v > 180_000_000, "rttvar {v}");
    }

    /// Linux 3.15 "tcp: switch rtt estimations to usec resolution": on a 4 ms
    /// jiffy clock a 312.7 µs round trip measures 312 µs, where Linux 2.6's
    /// `tcp_time_stamp` counted one jiffy; the RTO then is SRTT + RTO_min
    /// (1 ms, held as one 4 ms jiffy) instead of 4 ms + 4 ms, and the timer
    /// expires on a tick.
    #[test]
    fn linux_3_15_samples_in_microseconds_on_a_jiffy_clock() {
        let g = SimDuration::from_millis(4);
        let clock = TcpClock::new(g);
        let (sent, now) = (SimTime(g.as_ps() * 10 - us(100).as_ps()), SimTime(g.as_ps() * 10 + 212_700_000));
        let jiffies = RtoEstimator::new(RtoConfig { granularity: g, ..linux(SimDuration::from_millis(1)) });
        let micro = RtoEstimator::new(RtoConfig { resolution: RttResolution::Microsecond, ..jiffies.cfg });
        assert_eq!(jiffies.sample(&clock, sent, now), g);
        assert_eq!(micro.sample(&clock, sent, now), us(312));
        assert_eq!(micro.sample_span(&clock, ps(312_700_000), now), us(312));
        // The handshake's span ends at time zero: still the whole span, not zero.
        assert_eq!(micro.sample_span(&clock, ps(312_700_000), SimTime::ZERO), us(312));
        let mut e = micro.clone();
        e.on_rtt_sample(micro.sample(&clock, sent, now));
        // First sample: rttvar = max(2·R, RTO_min in jiffies) = 4 ms.
        assert_eq!(e.rto(), us(4312));
        assert_eq!(clock.deadline(now, e.rto()), SimTime(g.as_ps() * 12));
    }

    /// Linux keeps RTO_min in jiffies (`icsk_rto_min`, `tcp_rto_min_us`): on
    /// a 4 ms clock 1 ms floors the variance term at 4 ms and 5 ms at 8 ms,
    /// so 100 µs round trips give RTOs of 4.1 and 8.1 ms, where on an exact
    /// clock they give 1.1 and 5.1 ms.
    #[test]
    fn linux_rounds_rto_min_up_to_whole_jiffies() {
        let rto_after_samples = |min: u64, g: SimDuration| {
            let cfg = RtoConfig { granularity: g, resolution: RttResolution::Microsecond, ..linux(ms(min)) };
            let mut e = RtoEstimator::new(cfg);
            for _ in 0..50 {
                e.on_rtt_sample(us(100));
            }
            e.rto()
        };
        let (jiffy, exact) = (ms(4), SimDuration::ZERO);
        assert_eq!((rto_after_samples(1, jiffy), rto_after_samples(5, jiffy)), (us(4100), us(8100)));
        assert_eq!((rto_after_samples(1, exact), rto_after_samples(5, exact)), (us(1100), us(5100)));
        assert_eq!(rto_after_samples(8, jiffy), us(8100), "a whole number of jiffies stays as it is");
    }

    /// Linux 2.6 counted `srtt`, `mdev` and `rttvar` in whole jiffies: with
    /// RTO_min one 1 ms jiffy and samples of one jiffy, `mdev >> 2` of the
    /// first sample's 4·mdev of 2 jiffies is 0, so the RTO stays 3 jiffies
    /// where finer arithmetic decays it to 2; one sample of 3 jiffies
    /// lifts the variance term to 4 jiffies, less than 4 above `mdev_max`
    /// (3), so it never decays again: CMU09 §6's 5 ms minimum.
    #[test]
    fn linux_2_6_estimator_truncates_to_whole_jiffies() {
        let g = ms(1);
        let jiffies = RtoConfig { granularity: g, ..linux(ms(1)) };
        let micro = RtoConfig { resolution: RttResolution::Microsecond, ..jiffies };
        let (mut j, mut u) = (RtoEstimator::new(jiffies), RtoEstimator::new(micro));
        for _ in 0..100 {
            j.on_rtt_sample(g);
            u.on_rtt_sample(g);
        }
        assert_eq!(j.rto(), ms(3));
        assert!(u.rto() > ms(2) && u.rto() < us(2001), "{:?}", u.rto());
        j.on_rtt_sample(ms(3));
        for i in 0..1000 {
            j.on_rtt_sample(g);
            assert_eq!(j.rto(), ms(5), "sample {i} after the 3 ms one");
        }
        assert_eq!(j.srtt(), Some(us(1250)), "8·SRTT = 10 jiffies: a sample of 1 never moves it");
    }
}
