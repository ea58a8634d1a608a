//! ICTCP (Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP in
//! Data Center Networks", CoNEXT 2010): the receiver paces its senders
//! through the receive windows it advertises.
//!
//! **Models:** the published algorithm, at the receiving host (the client):
//! - *Available bandwidth* (§3.2): `BW_A = max(0, α·C − BW_T)` with C the
//!   host link's rate and `BW_T` the host's total incoming goodput measured
//!   over the first of two equal subslots; each subslot lasts the average
//!   smoothed RTT of the host's connections. Window increases happen only in
//!   the second subslot, and each spends `MSS / RTT_i` of `BW_A` (the quota);
//!   a control interval that asks to grow in a first subslot grows at the
//!   connection's first arrival in the next second subslot.
//! - *Per-connection control* (§3.3–3.4), every `2·RTT_i` of connection i:
//!   the measured throughput sample `b_s` (bytes received over the interval)
//!   is smoothed as `b_m = max(b_s, β·b_m + (1 − β)·b_s)`; the expected
//!   throughput is `b_e = max(b_m, rwnd_i / RTT_i)`; with `d = (b_e − b_m) / b_e`
//!   the window grows by one MSS if `d ≤ γ1` and the quota allows, shrinks by
//!   one MSS once `d > γ2` has held for three control intervals in a row, and
//!   otherwise stays; it never goes below `min_wnd` segments.
//! - Parameters (`IctcpConfig`, the paper's values): α = 0.9, β = 0.75,
//!   γ1 = 0.1, γ2 = 0.5, minimum window 2 MSS; windows start at `init_wnd`
//!   = 2 MSS.
//!
//! `RTT_i` is the receiving endpoint's own smoothed RTT (its requests and
//! their ACKs, and the handshake); the windows persist across blocks, as the
//! paper's long-lived connections do.
//! **Deliberately different:** the fairness controller of §3.5 (shrinking the
//! largest windows when `BW_A` falls below 0.2·C) is not modelled.
//! **Not modelled:** window scaling granularity, several receiving
//! interfaces.

use crate::settings::{Count, Flag, Scaled};
use crate::time::{BitRate, SimDuration, SimTime};

impl IctcpConfig {
    /// ICTCP §3.3: γ1 (grow below it) must not exceed γ2 (shrink above it).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.gamma1_permille > self.gamma2_permille {
            let f = |p: u32| f64::from(p) / 1000.0;
            return Err((
                "tcp.ictcp_gamma1",
                format!(
                    "must not exceed tcp.ictcp_gamma2 ({}), got {}",
                    f(self.gamma2_permille),
                    f(self.gamma1_permille)
                ),
            ));
        }
        Ok(())
    }
}

crate::settings! {
    /// ICTCP's switch and parameters (Wu et al., CoNEXT 2010 §3), fractions
    /// kept in thousandths; the defaults are the paper's.
    ///
    /// Default values: off (a remedy to compare); α 0.9 of the link may be
    /// used; β 0.75, the throughput smoothing; γ1 0.1 and γ2 0.5, the grow and
    /// shrink thresholds on `d`; windows of 2 segments at least and at the start.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct IctcpConfig {
        /// ICTCP (Wu et al. 2010) at the client: each connection's receive window
        /// follows its measured throughput, growing only while the link has spare bandwidth.
        "ictcp" on: bool = false, Flag;
        /// ICTCP α: the fraction of the link rate its connections may use.
        "ictcp_alpha" alpha_permille: u32 = 900, Scaled::PERMILLE;
        /// ICTCP β: weight of the old value in the measured-throughput average.
        "ictcp_beta" beta_permille: u32 = 750, Scaled::PERMILLE;
        /// ICTCP γ1: grow a window when (expected − measured)/expected is at most this.
        "ictcp_gamma1" gamma1_permille: u32 = 100, Scaled::PERMILLE;
        /// ICTCP γ2: shrink a window after three intervals above this.
        "ictcp_gamma2" gamma2_permille: u32 = 500, Scaled::PERMILLE;
        /// ICTCP: smallest receive window, in segments.
        "ictcp_min_wnd" min_wnd: u32 = 2, Count::new(1, u32::MAX as u64, "segments");
        /// ICTCP: receive window at the start, in segments.
        "ictcp_init_wnd" init_wnd: u32 = 2, Count::new(1, u32::MAX as u64, "segments");
    }
}

/// Per-connection ICTCP state.
#[derive(Clone, Copy, Debug)]
struct Conn {
    rwnd: u64,
    /// Smoothed measured throughput `b_m`, bytes per second.
    b_m: f64,
    /// Start of the current control interval and bytes received since.
    since: SimTime,
    bytes: u64,
    /// Consecutive intervals with `d > γ2`.
    over: u32,
    /// The connection's latest smoothed RTT, in picoseconds.
    rtt_ps: u64,
    /// The last interval asked to grow the window; it grows in the next second subslot.
    grow: bool,
}

/// The receiving host's ICTCP controller.
#[derive(Clone, Debug)]
pub struct Ictcp {
    cfg: IctcpConfig,
    mss: u64,
    /// α·C in bytes per second.
    target: f64,
    conns: Vec<Conn>,
    /// Start of the current subslot pair, and whether we are in the second subslot.
    slot_start: SimTime,
    second: bool,
    /// Bytes received by the host in the current first subslot.
    slot_bytes: u64,
    /// Increase quota left in the second subslot, bytes per second.
    quota: f64,
    /// Sum of the connections' latest RTTs, for the subslot length.
    rtt_sum_ps: u64,
}

impl Ictcp {
    /// A controller for `conns` connections on a host link of `rate`, segments of `mss` bytes.
    pub fn new(cfg: IctcpConfig, conns: usize, rate: BitRate, mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        let conn = Conn {
            rwnd: cfg.init_wnd.max(cfg.min_wnd) as u64 * mss,
            b_m: 0.0,
            since: SimTime::ZERO,
            bytes: 0,
            over: 0,
            rtt_ps: 0,
            grow: false,
        };
        Ictcp {
            cfg,
            mss,
            target: cfg.alpha_permille as f64 / 1000.0 * rate.0 as f64 / 8.0,
            conns: vec![conn; conns],
            slot_start: SimTime::ZERO,
            second: false,
            slot_bytes: 0,
            quota: 0.0,
            rtt_sum_ps: 0,
        }
    }

    /// The receive window connection `i` advertises, in bytes.
    #[inline]
    pub fn rwnd(&self, i: usize) -> u64 {
        self.conns[i].rwnd
    }

    /// `bytes` of new data arrived on connection `i` at `now`; `rtt` is its
    /// smoothed RTT. Returns the connection's new window when this arrival
    /// closed a control interval that changed it.
    pub fn on_data(&mut self, now: SimTime, i: usize, bytes: u64, rtt: SimDuration) -> Option<u64> {
        let old = std::mem::replace(&mut self.conns[i].rtt_ps, rtt.as_ps());
        self.rtt_sum_ps = self.rtt_sum_ps - old + rtt.as_ps();
        let avg_rtt = SimDuration::from_ps(self.rtt_sum_ps / self.conns.len() as u64);
        self.advance_slot(now, avg_rtt);
        if !self.second {
            self.slot_bytes += bytes;
        }
        let mss = self.mss;
        let (gamma1, gamma2, beta) = (
            self.cfg.gamma1_permille as f64 / 1000.0,
            self.cfg.gamma2_permille as f64 / 1000.0,
            self.cfg.beta_permille as f64 / 1000.0,
        );
        let c = &mut self.conns[i];
        c.bytes += bytes;
        let before = c.rwnd;
        if c.grow && self.second {
            // §3.2: increases happen in the second subslot, each spending MSS/RTT of BW_A.
            let cost = mss as f64 / rtt.as_secs_f64();
            if self.quota >= cost {
                self.quota -= cost;
                c.rwnd += mss;
            }
            c.grow = false;
        }
        let interval = rtt.saturating_mul(2);
        let elapsed = now.since(c.since);
        if elapsed < interval || rtt.is_zero() {
            return (c.rwnd != before).then_some(c.rwnd);
        }
        // §3.4: b_s, b_m = max(b_s, β·b_m + (1 − β)·b_s), b_e = max(b_m, rwnd/RTT).
        let secs = elapsed.as_secs_f64();
        let b_s = c.bytes as f64 / secs;
        c.b_m = b_s.max(beta * c.b_m + (1.0 - beta) * b_s);
        let b_e = c.b_m.max(c.rwnd as f64 / rtt.as_secs_f64());
        let d = if b_e > 0.0 { (b_e - c.b_m) / b_e } else { 0.0 };
        c.since = now;
        c.bytes = 0;
        if d <= gamma1 {
            c.over = 0;
            c.grow = true;
        } else if d > gamma2 {
            c.over += 1;
            if c.over >= 3 {
                c.over = 0;
                c.rwnd = c.rwnd.saturating_sub(mss).max(self.cfg.min_wnd as u64 * mss);
            }
        } else {
            c.over = 0;
        }
        (c.rwnd != before).then_some(c.rwnd)
    }

    /// §3.2: move to the next subslot once `avg_rtt` has passed; entering
    /// the second subslot sets the quota `BW_A = max(0, α·C − BW_T)`.
    fn advance_slot(&mut self, now: SimTime, avg_rtt: SimDuration) {
        if avg_rtt.is_zero() {
            return;
        }
        while now.since(self.slot_start) >= avg_rtt {
            if !self.second {
                let bw_t = self.slot_bytes as f64 / avg_rtt.as_secs_f64();
                self.quota = (self.target - bw_t).max(0.0);
            }
            self.second = !self.second;
            self.slot_start += avg_rtt;
            self.slot_bytes = 0;
            if now.since(self.slot_start) >= avg_rtt.saturating_mul(2) {
                // A long silence: restart the slots here.
                self.slot_start = now;
                self.second = false;
                self.quota = 0.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }

    fn ictcp() -> Ictcp {
        Ictcp::new(IctcpConfig::default(), 2, BitRate::gbps(1), MSS as u32)
    }

    /// §3.4: a connection that fills its window (d ≤ γ1) grows by one MSS per
    /// control interval while the link has spare bandwidth.
    #[test]
    fn window_grows_when_throughput_meets_expectation_and_quota_allows() {
        let mut c = Ictcp::new(IctcpConfig::default(), 1, BitRate::gbps(1), MSS as u32);
        let rtt = SimDuration::from_micros(100);
        assert_eq!(c.rwnd(0), 2 * MSS);
        let mut grown = vec![];
        // A full window per RTT, exactly rwnd/RTT (d = 0), in quarters every 25 µs.
        for k in 1..=80u64 {
            let w = c.rwnd(0);
            if let Some(new) = c.on_data(us(25 * k), 0, w / 4, rtt) {
                grown.push(new);
            }
        }
        assert!(grown.len() >= 3 && grown.windows(2).all(|p| p[1] == p[0] + MSS), "{grown:?}");
    }

    /// §3.4: a connection far below its expected throughput (d > γ2) for three
    /// intervals in a row loses one MSS, never going below 2 MSS.
    #[test]
    fn window_shrinks_after_three_slow_intervals_but_not_below_two_mss() {
        let mut c = Ictcp::new(IctcpConfig { init_wnd: 6, ..IctcpConfig::default() }, 1, BitRate::gbps(1), MSS as u32);
        let rtt = SimDuration::from_micros(100);
        let mut changes = vec![];
        for k in 1..=200u64 {
            // 100 bytes every 200 µs: far below 6 MSS per RTT.
            if let Some(w) = c.on_data(us(200 * k), 0, 100, rtt) {
                changes.push(w);
            }
        }
        assert_eq!(changes, vec![5 * MSS, 4 * MSS, 3 * MSS, 2 * MSS]);
    }

    /// §3.2: when the host already receives more than α·C, no window grows.
    #[test]
    fn no_growth_without_available_bandwidth() {
        let mut c = ictcp();
        let rtt = SimDuration::from_micros(100);
        for k in 1..=40u64 {
            // Connection 1 alone brings 125 KB per 100 µs, the full 1 Gbps.
            c.on_data(us(50 * k), 1, 6250, rtt);
            assert_eq!(c.on_data(us(50 * k), 0, c.rwnd(0) / 2, rtt), None);
        }
    }
}
