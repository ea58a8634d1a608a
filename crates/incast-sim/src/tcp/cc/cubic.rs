//! Cubic window growth and multiplicative decrease (RFC 9438).
//!
//! **Models:** the window function W_cubic(t) = C·(t − K)³ + W_max with
//! K = ∛((W_max − cwnd_epoch)/C) (RFC 9438 §4.2), `t` counted from the start
//! of the current congestion-avoidance epoch and the target taken one SRTT
//! ahead, W_cubic(t + RTT), clamped to [cwnd, 1.5·cwnd]; the concave and
//! convex regions (§4.4, §4.5) growing by (target − cwnd)/cwnd; the
//! Reno-friendly estimate W_est with α_cubic = 3·(1 − β)/(1 + β) (§4.3); the
//! multiplicative decrease ssthresh = max(cwnd·β_cubic, 2·SMSS) on fast
//! retransmit and timeout (§4.6, §4.8); fast convergence (§4.7); after a
//! timeout, K = 0 and W_max = the window at the start of the next epoch (§4.8).
//! This module is the algorithm's two hooks into `tcp::cc`: growth in
//! congestion avoidance and ssthresh at each loss event; slow start, the
//! loss window and loss recovery (NewReno's or RFC 6675's) are shared with
//! the other algorithms.
//!
//! Units and arithmetic are integer fixed point, so runs stay bit-for-bit
//! deterministic: windows are bytes (the RFC's segments × SMSS), C is
//! `c_thousandths`/1000 segments/s³ (so C·SMSS bytes/s³), β is `beta`/1024,
//! and the window function works on time truncated to whole microseconds
//! (simulated time itself stays integer picoseconds). K is an integer cube
//! root in microseconds; products are i128/u128 and saturate.
//!
//! **Deliberately different:** ssthresh is cut from cwnd, not FlightSize
//! (RFC 9438 §4.6 allows it; Linux `cubictcp_recalc_ssthresh`). Growth is per
//! segment acknowledged — (target − cwnd)/cwnd and α/cwnd per SMSS acked, as
//! Linux's `cnt` and `tcp_cong_avoid_ai` count — not per ACK, so delayed ACKs
//! do not halve it. α_cubic stays 3(1 − β)/(1 + β) after W_est passes
//! cwnd_prior (Linux `tcp_friendliness`; RFC 9438 §4.3 says it SHOULD become 1).
//! In the Reno-friendly region cwnd rises to W_est but never falls to it.
//! After restart-after-idle the epoch starts afresh at the next
//! congestion-avoidance ACK (Linux instead shifts `epoch_start` by the idle
//! time in `CA_EVENT_TX_START`). The kernel's own arithmetic, in jiffies
//! and whole segments, is the `linux` flavor (`tcp::cc::cubic_linux`).
//! With `cubic_hystart` on, Linux's HyStart may end slow start early
//! (`tcp::cc::hystart`); off, slow start is RFC 5681's.
//! **Not modelled:** HyStart++ (RFC 9406); the ECN reduction (§4.6 `cwnd =
//! max(ssthresh, 1)` on ECE); spurious-loss undo (§4.9); the application-
//! or cwnd-limited growth check Linux applies (`tcp_is_cwnd_limited`).

use super::hystart::HyStart;
use super::{CongestionControl, RttSample};
use crate::settings::{Choice, Flag, Number, Scaled};
use crate::time::{SimDuration, SimTime};

crate::settings! {
    /// Cubic constants (RFC 9438 §4–§5), with Linux `tcp_cubic.c` defaults.
    ///
    /// Default values:
    /// - `beta`: 717 (/1024 ≈ 0.7002) — Linux `beta = 717`; RFC 9438 §4.6
    ///   says β_cubic "SHOULD be set to 0.7".
    /// - `c_thousandths`: 400 (C = 0.4 segments/s³) — RFC 9438 §5 "C SHOULD be
    ///   set to 0.4"; Linux `bic_scale = 41` gives 41·10/1024 ≈ 0.4004.
    /// - `fast_convergence`: true — RFC 9438 §4.7 and Linux `fast_convergence = 1`.
    /// - `flavor`: `rfc9438`; `linux` in `LINUX_STACK` (the `linux` and
    ///   `linux-2.6` presets, `incast validate`).
    ///
    /// `beta` is clamped to 1..=1023 and `c_thousandths` to at least 1.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct CubicConfig {
        /// Cubic β, the multiplicative decrease (kept in 1/1024 steps, as Linux).
        "cubic_beta" beta: u32 = 717, Scaled { number: Number::FRACTION, scale: 1024.0, min: 1, max: 1023 };
        /// Cubic C, in segments per second cubed (kept in thousandths).
        "cubic_c" c_thousandths: u32 = 400, Scaled { number: Number::POSITIVE, scale: 1000.0, min: 1, max: u32::MAX };
        /// Cubic fast convergence (RFC 9438 §4.7): release bandwidth to new flows.
        "cubic_fast_convergence" fast_convergence: bool = true, Flag;
        /// HyStart ends slow start early on an ACK train or a rising RTT, as
        /// Linux's tcp_cubic does by default since 2.6.29 (hystart = 1); off,
        /// slow start runs to ssthresh or a loss (RFC 5681).
        "cubic_hystart" hystart: bool = false, Flag;
        /// Whose arithmetic: "rfc9438" (microseconds, growth per ACK) or
        /// "linux" (tcp_cubic.c: jiffies of tcp.clock_granularity, whole
        /// segments, the growth rate recomputed at most every HZ/32 jiffies
        /// while cwnd holds, the epoch shifted past idle; `tcp::cc::cubic_linux`).
        "cubic_flavor" flavor: CubicFlavor = CubicFlavor::Rfc9438,
            Choice(&[("rfc9438", CubicFlavor::Rfc9438), ("linux", CubicFlavor::Linux)]);
    }
}

/// Which arithmetic runs the Cubic curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CubicFlavor {
    /// RFC 9438 as written: time in microseconds, cwnd grown on every ACK (this module).
    #[default]
    Rfc9438,
    /// Linux `tcp_cubic.c` (`tcp::cc::cubic_linux`).
    Linux,
}

/// Picoseconds per microsecond: the window function's time unit.
const PS_PER_US: u64 = 1_000_000;
/// Microseconds³ per second³.
const US3_PER_S3: u128 = 1_000_000_000_000_000_000;
/// β is `beta`/`BETA_SCALE` (Linux `BICTCP_BETA_SCALE`).
const BETA_SCALE: u64 = 1024;

/// Cubic state of one sender (Linux `struct bictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    smss: u64,
    /// β_cubic·1024.
    beta: u64,
    /// C in thousandths of a segment per s³.
    c_thousandths: u64,
    fast_convergence: bool,
    /// W_max in bytes: the window before the last reduction (0: none, or
    /// forgotten by a timeout).
    w_max: u64,
    /// The plateau of the current epoch's curve, in bytes: W_max, or the
    /// epoch's starting window when that is above W_max (RFC 9438 §4.8;
    /// Linux `bic_origin_point`).
    origin: u64,
    /// K in microseconds.
    k_us: u64,
    /// Start of the current congestion-avoidance epoch.
    epoch: Option<SimTime>,
    /// W_est in bytes (RFC 9438 §4.3).
    w_est: u64,
    /// Carried remainder of the cubic increments, in bytes × cwnd.
    cnt_acc: u128,
    /// Carried remainder of the W_est increments.
    est_acc: u128,
    /// HyStart, when on (boxed, as the sender keeps the algorithm inline).
    hystart: Option<Box<HyStart>>,
}

impl Cubic {
    /// Fresh state for segments of `smss` bytes; no epoch, no W_max.
    pub fn new(smss: u64, cfg: CubicConfig) -> Self {
        Cubic {
            smss: smss.max(1),
            beta: (cfg.beta as u64).clamp(1, BETA_SCALE - 1),
            c_thousandths: (cfg.c_thousandths as u64).max(1),
            fast_convergence: cfg.fast_convergence,
            w_max: 0,
            origin: 0,
            k_us: 0,
            epoch: None,
            w_est: 0,
            cnt_acc: 0,
            est_acc: 0,
            hystart: cfg.hystart.then(|| Box::new(HyStart::new(smss))),
        }
    }

    /// W_max in bytes (0 before the first loss and after a timeout).
    #[inline]
    pub fn w_max(&self) -> u64 {
        self.w_max
    }
    /// K of the current epoch.
    #[inline]
    pub fn k(&self) -> SimDuration {
        SimDuration::from_micros(self.k_us)
    }
    /// W_est in bytes.
    #[inline]
    pub fn w_est(&self) -> u64 {
        self.w_est
    }
    /// Start of the current congestion-avoidance epoch, if one is running.
    #[inline]
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.epoch
    }

    /// W_cubic(t) in bytes for `t_us` microseconds into the epoch.
    fn w_cubic(&self, t_us: u64) -> u64 {
        // RFC 9438 (4.2): "W_cubic(t) = C * (t - K)^3 + W_max" (Figure 1),
        // in bytes: C·SMSS·(t − K)³ with t, K in µs and C in 1/1000 seg/s³.
        let d = t_us as i128 - self.k_us as i128;
        let scale = self.c_thousandths as i128 * self.smss as i128;
        let offs = d
            .checked_mul(d)
            .and_then(|d2| d2.checked_mul(d))
            .and_then(|d3| d3.checked_mul(scale))
            .map(|v| v / (1000 * US3_PER_S3 as i128))
            .unwrap_or(if d < 0 { i128::MIN / 2 } else { i128::MAX / 2 });
        (self.origin as i128).saturating_add(offs).clamp(0, u64::MAX as i128) as u64
    }

    /// Start an epoch at `now` with window `cwnd`.
    fn start_epoch(&mut self, now: SimTime, cwnd: u64) {
        self.epoch = Some(now);
        self.cnt_acc = 0;
        self.est_acc = 0;
        // RFC 9438 (4.3): "W_est is set equal to cwnd_epoch at the start of the
        // congestion avoidance stage."
        self.w_est = cwnd;
        if cwnd < self.w_max {
            // RFC 9438 (4.2): "K = cubic_root((W_max - cwnd_epoch)/C)" (Figure 2),
            // in µs: ∛((W_max − cwnd)[bytes] · 1000 · 10¹⁸ / (C_thousandths · SMSS)).
            let num = ((self.w_max - cwnd) as u128).saturating_mul(1000 * US3_PER_S3);
            self.k_us = icbrt(num / (self.c_thousandths as u128 * self.smss as u128));
            self.origin = self.w_max;
        } else {
            // RFC 9438 (4.8): after a timeout (or above the old W_max, Linux
            // `bictcp_update`) "K is set to 0, and W_max is set to the
            // congestion window size at the beginning of the current
            // congestion avoidance stage."
            self.k_us = 0;
            self.origin = cwnd;
        }
    }
}

impl CongestionControl for Cubic {
    /// An ACK of `acked` new bytes at `now` in congestion avoidance, with
    /// window `cwnd` and smoothed RTT `srtt`: the new window.
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, now: SimTime, srtt: SimDuration) -> u64 {
        let cwnd = cwnd.max(1);
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.start_epoch(now, cwnd);
                now
            }
        };
        // RFC 9438 (4.2): "t is the elapsed time ... from the beginning of the
        // current congestion avoidance stage".
        let t_us = now.since(epoch).as_ps() / PS_PER_US;
        let rtt_us = srtt.as_ps() / PS_PER_US;
        // RFC 9438 (4.3): "W_est = W_est + α_cubic * segments_acked / cwnd",
        // "α_cubic = 3 * (1 - β_cubic) / (1 + β_cubic)"; in bytes
        // SMSS · α · acked/cwnd with α = 3(1024 − b)/(1024 + b).
        self.est_acc += 3 * (BETA_SCALE - self.beta) as u128 * self.smss as u128 * acked as u128;
        let est_den = (BETA_SCALE + self.beta) as u128 * cwnd as u128;
        self.w_est = self.w_est.saturating_add((self.est_acc / est_den) as u64);
        self.est_acc %= est_den;
        if self.w_cubic(t_us) < self.w_est {
            // RFC 9438 (4.3): "If W_cubic(t) is less than W_est, then the protocol
            // is in the Reno-friendly region and cwnd SHOULD be set to W_est at
            // each reception of a new ACK." DEVIATION: never below cwnd.
            return cwnd.max(self.w_est);
        }
        // RFC 9438 (4.2): target is W_cubic(t + RTT), "cwnd" if below cwnd and
        // "1.5*cwnd" if above 1.5·cwnd (Figure 4).
        let target = self.w_cubic(t_us.saturating_add(rtt_us)).clamp(cwnd, cwnd + cwnd / 2);
        // RFC 9438 (4.4, 4.5): "cwnd MUST be incremented by (target - cwnd)/cwnd
        // for each received new ACK" — DEVIATION (Linux): per SMSS acknowledged,
        // i.e. (target − cwnd)·acked/cwnd bytes, the remainder carried.
        self.cnt_acc += (target - cwnd) as u128 * acked as u128;
        let inc = self.cnt_acc / cwnd as u128;
        self.cnt_acc %= cwnd as u128;
        cwnd.saturating_add(inc as u64)
    }

    /// A loss (fast retransmit, SACK recovery or a first timeout) with window
    /// `cwnd`: remember W_max, end the epoch, and return the new ssthresh.
    fn ssthresh(&mut self, cwnd: u64, _flight: u64) -> u64 {
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            // RFC 9438 (4.7): "W_max = cwnd * (1 + β_cubic) / 2"
            ((cwnd as u128 * (BETA_SCALE + self.beta) as u128) / (2 * BETA_SCALE) as u128) as u64
        } else {
            // RFC 9438 (4.7): "W_max = cwnd"
            cwnd
        };
        self.epoch = None;
        // RFC 9438 (4.6): "ssthresh = flight_size * β_cubic" ... "ssthresh =
        // max(ssthresh, 2)" — DEVIATION (Linux): cwnd, not flight_size.
        ((cwnd as u128 * self.beta as u128 / BETA_SCALE as u128) as u64).max(2 * self.smss)
    }

    /// The retransmission timer expired (after [`CongestionControl::ssthresh`]
    /// if ssthresh was cut).
    fn on_timeout(&mut self, _lost: u64) {
        // RFC 9438 (4.8): "During the first congestion avoidance stage after a
        // timeout, CUBIC increases its congestion window size using Figure 1,
        // where t is the elapsed time since the beginning of the current
        // congestion avoidance stage, K is set to 0, and W_max is set to the
        // congestion window size at the beginning of the current congestion
        // avoidance stage." (Linux `bictcp_reset` in `CA_Loss`.)
        self.w_max = 0;
        self.epoch = None;
        if let Some(h) = &mut self.hystart {
            h.on_timeout();
        }
    }

    /// An RTT sample for HyStart, when on (Linux `bictcp_acked`).
    fn on_rtt_sample(&mut self, sample: &RttSample) -> bool {
        let Some(h) = &mut self.hystart else { return false };
        // "Discard delay samples right after fast recovery": within a second (HZ
        // jiffies) of the start of a congestion-avoidance epoch.
        if self.epoch.is_some_and(|e| sample.now.since(e) < SimDuration::from_millis(1_000)) {
            return false;
        }
        h.on_rtt_sample(sample)
    }

    /// The window restarts after idle (or at a GIP stripe-unit head): the
    /// next congestion-avoidance ACK starts a new epoch.
    fn on_restart(&mut self) {
        // DEVIATION (Linux): Linux shifts epoch_start by the idle time.
        self.epoch = None;
    }
}

/// ⌊∛n⌋ by bisection (deterministic integer arithmetic).
pub(super) fn icbrt(n: u128) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 42);
    if (hi as u128).pow(3) <= n {
        return hi;
    }
    // Invariant: lo³ ≤ n < hi³.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if (mid as u128).pow(3) <= n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readable segments.
    const MSS: u64 = 1000;

    fn cubic() -> Cubic {
        Cubic::new(MSS, CubicConfig::default())
    }
    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    #[test]
    fn integer_cube_root() {
        assert_eq!(icbrt(0), 0);
        assert_eq!(icbrt(26), 2);
        assert_eq!(icbrt(27), 3);
        assert_eq!(icbrt(1_000_000_000_000_000_000), 1_000_000);
        assert_eq!(icbrt(u128::MAX), 1 << 42);
    }

    /// RFC 9438 (4.2) Figures 1 and 2, worked by hand: W_max = 100 segments,
    /// cwnd_epoch = 70 (= β·W_max), C = 0.4 → K = ∛(30/0.4) = ∛75 =
    /// 4.217163 s; W_cubic(0) = 70, W_cubic(K) = 100, W_cubic(K + 1 s) = 100.4.
    #[test]
    fn rfc9438_4_2_k_and_w_cubic_hand_worked() {
        let mut c = cubic();
        c.w_max = 100 * MSS;
        c.start_epoch(ms(0), 70 * MSS);
        assert_eq!(c.k(), SimDuration::from_micros(4_217_163));
        // K rounds down to the microsecond, so C·K³ = 29.99999 segments and the
        // offset truncates toward zero: one byte above 70 segments.
        assert_eq!(c.w_cubic(0), 70 * MSS + 1);
        assert_eq!(c.w_cubic(4_217_163), 100 * MSS);
        assert_eq!(c.w_cubic(4_217_163 + 1_000_000), 100 * MSS + 400);
        assert_eq!(c.w_cubic(4_217_163 + 2_000_000), 100 * MSS + 3200);
        // The brief's form K = ∛(W_max·(1 − β)/C) agrees when cwnd_epoch = β·W_max:
        let kf = (100.0f64 * (1.0 - 0.7) / 0.4).cbrt();
        assert!((c.k().as_secs_f64() - kf).abs() < 1e-6);
    }

    /// RFC 9438 (4.6): a loss sets ssthresh = cwnd·β_cubic (717/1024), at least 2·SMSS.
    #[test]
    fn rfc9438_4_6_multiplicative_decrease() {
        let mut c = cubic();
        assert_eq!(c.ssthresh(100 * MSS, 0), 100 * MSS * 717 / 1024);
        assert_eq!(c.ssthresh(2 * MSS, 0), 2 * MSS);
        assert_eq!(c.epoch_start(), None);
    }

    /// RFC 9438 (4.7): a loss below the previous W_max lowers W_max to
    /// cwnd·(1 + β)/2; a loss above it sets W_max = cwnd; off, always cwnd.
    #[test]
    fn rfc9438_4_7_fast_convergence() {
        let mut c = cubic();
        c.ssthresh(100 * MSS, 0);
        assert_eq!(c.w_max(), 100 * MSS);
        c.ssthresh(80 * MSS, 0);
        assert_eq!(c.w_max(), 80 * MSS * (1024 + 717) / 2048);
        c.ssthresh(90 * MSS, 0);
        assert_eq!(c.w_max(), 90 * MSS);
        let mut off = Cubic::new(MSS, CubicConfig { fast_convergence: false, ..CubicConfig::default() });
        off.ssthresh(100 * MSS, 0);
        off.ssthresh(80 * MSS, 0);
        assert_eq!(off.w_max(), 80 * MSS);
    }

    /// Drive `c` from `cwnd` with one ACK of one SMSS every `gap_us` µs and
    /// `srtt`; returns cwnd (bytes) sampled at each ACK.
    fn drive(c: &mut Cubic, mut cwnd: u64, gap_us: u64, acks: u64, srtt: SimDuration) -> Vec<u64> {
        (1..=acks)
            .map(|i| {
                cwnd = c.cong_avoid(cwnd, MSS, SimTime::ZERO + SimDuration::from_micros(i * gap_us), srtt);
                cwnd
            })
            .collect()
    }

    /// RFC 9438 (4.4, 4.5): below W_max growth is concave — fast, then slower
    /// as cwnd nears W_max, a plateau about t = K — and beyond it convex.
    /// W_max = 1000 segments, a 100 ms SRTT and an ACK every 100 µs (≈ a
    /// window per RTT), so the Reno-friendly W_est (+0.53 segment per RTT)
    /// stays below W_cubic; K = ∛(300/0.4) = 9.0856 s.
    #[test]
    fn rfc9438_4_4_4_5_concave_plateau_then_convex() {
        let mut c = cubic();
        c.w_max = 1000 * MSS;
        let srtt = SimDuration::from_millis(100);
        let w = drive(&mut c, 700 * MSS, 100, 130_000, srtt);
        let at = |s: f64| w[(s * 10_000.0) as usize - 1];
        let k = c.k().as_secs_f64();
        assert!((k - 9.0856).abs() < 1e-3, "K = {k}");
        assert!(c.w_est() < 800 * MSS, "W_est {}", c.w_est());
        // Concave: the first second gains far more than the second before K.
        assert!(at(1.0) - 700 * MSS > 50 * (at(k) - at(k - 1.0)));
        // Plateau: within 1.5 segments of W_max for a second either side of K.
        for s in [k - 1.0, k, k + 1.0] {
            assert!(at(s).abs_diff(1000 * MSS) <= 1500, "cwnd {} at {s}", at(s));
        }
        // Convex: growth accelerates past K.
        assert!(at(k + 3.0) - at(k + 2.0) > at(k + 2.0) - at(k + 1.0));
        assert!(w[129_999] > 1020 * MSS);
        // cwnd follows the target W_cubic(t + RTT) within a few segments.
        let target = c.w_cubic(130_000 * 100 + 100_000);
        assert!(w[129_999].abs_diff(target) <= 3 * MSS, "{} vs {target}", w[129_999]);
    }

    /// RFC 9438 (4.3): at small RTT·bandwidth (a 100 µs RTT, W_max of 10
    /// segments) W_cubic(t) barely moves in many RTTs while W_est grows by
    /// α_cubic ≈ 0.53 segment per RTT; cwnd follows W_est.
    #[test]
    fn rfc9438_4_3_reno_friendly_region_dominates() {
        let mut c = cubic();
        let ssthresh = c.ssthresh(10 * MSS, 0);
        assert_eq!(ssthresh, 7001, "10 000·717/1024, truncated");
        // One ACK per segment, a window's worth per 100 µs RTT.
        let mut cwnd = ssthresh;
        let mut now_us = 0;
        for _rtt in 0..100 {
            let per = cwnd / MSS;
            for _ in 0..per {
                now_us += 100 / per;
                cwnd = c.cong_avoid(
                    cwnd,
                    MSS,
                    SimTime::ZERO + SimDuration::from_micros(now_us),
                    SimDuration::from_micros(100),
                );
            }
        }
        assert_eq!(cwnd, c.w_est(), "cwnd = W_est in the Reno-friendly region");
        assert!(c.w_cubic(now_us) < c.w_est());
        // α = 3·307/1741 = 0.529 segments per RTT: ≈53 segments in 100 RTTs.
        let grown = (cwnd - ssthresh) as f64 / MSS as f64;
        assert!((45.0..=56.0).contains(&grown), "grew {grown} segments");
    }

    /// RFC 9438 (4.8): after a timeout K = 0 and the curve starts from the
    /// epoch's window: convex growth, none at first.
    #[test]
    fn rfc9438_4_8_after_timeout_k_zero_from_epoch_window() {
        let mut c = cubic();
        c.ssthresh(100 * MSS, 0);
        c.on_timeout(0);
        assert_eq!(c.w_max(), 0);
        let cw = c.cong_avoid(20 * MSS, MSS, ms(5), SimDuration::from_millis(1));
        assert_eq!(c.k(), SimDuration::ZERO);
        assert_eq!(c.epoch_start(), Some(ms(5)));
        assert_eq!(c.w_cubic(1_000_000), 20 * MSS + 400);
        assert!(cw >= 20 * MSS);
    }
}
