//! DCTCP (RFC 8257): ECN marks at a shallow threshold, echoed exactly, and a
//! window cut in proportion to the fraction marked.
//!
//! **Models:** the sender side of RFC 8257 §3.3: every data segment is
//! ECN-capable (ECT); over each observation window of about one round trip
//! (from the ACK that opens it to the first ACK beyond the SND.NXT of that
//! moment) the sender counts the bytes newly acknowledged and those
//! acknowledged by ACKs carrying ECE; at the window's end it updates
//! `α ← (1 − g)·α + g·F` with F the marked fraction; on an ECE at most once per
//! window it sets `cwnd ← cwnd·(1 − α/2)` and ssthresh to the result (as Linux
//! `dctcp_ssthresh`, never below 2 segments). α starts at 1 and g is 1/16
//! (RFC 8257 §4.2, Linux `dctcp_alpha_on_init` = 1024, `dctcp_shift_g` = 4),
//! kept in 1/1024 units as Linux does. The receiver side (RFC 8257 §3.2) is
//! in `tcp::Endpoint`: ACKs echo the CE state of the data they acknowledge,
//! and a change of that state sends at once the ACK that was being delayed.
//! Window growth and the reaction to loss are conventional TCP's (RFC 8257
//! §3.4, §3.5): Reno's rules (`tcp::cc::reno`), with NewReno's loss recovery
//! or, with `sack` on, RFC 6675's. The ECN cut is this algorithm's
//! [`CongestionControl::on_ecn_echo`]; the window takes it outside loss
//! recovery only (`tcp::cc`'s `CongestionWindow`).
//! **Deliberately different:** Linux sets ssthresh at a loss by the same
//! α/2 cut (`dctcp_ssthresh`); here a loss halves the flight as RFC 5681
//! does. Only DCTCP connections are ECN-capable: the classic ECN of RFC
//! 3168 (one ECE per round trip until CWR) is not modelled.
//! **Not modelled:** ECN negotiation on the SYN, the CWR flag, ECN on pure
//! ACKs, Accurate ECN.

use super::reno::{CaIncrease, Reno};
use super::CongestionControl;
use crate::settings::{Count, Number, Scaled};
use crate::time::{SimDuration, SimTime};

crate::settings! {
    /// DCTCP constants (RFC 8257 §4.2), with Linux `tcp_dctcp.c` defaults.
    ///
    /// Default values:
    /// - `alpha_init`: 1024 (α = 1.0) — Linux `dctcp_alpha_on_init`; RFC 8257
    ///   §3.3 lets the implementation choose, and 1 is the cautious start.
    /// - `g_shift`: 4 (g = 1/16) — RFC 8257 §4.2 and Linux `dctcp_shift_g`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct DctcpConfig {
        /// DCTCP's initial α (kept in 1/1024 steps, as Linux).
        "dctcp_alpha_init" alpha_init: u32 = 1024,
            Scaled { number: Number::UNIT_INTERVAL, scale: 1024.0, min: 0, max: 1024 };
        /// DCTCP's gain g = 1/2^shift for α's moving average (RFC 8257: 1/16).
        "dctcp_g_shift" g_shift: u32 = 4, Count::new(1, 10, "");
    }
}

/// Units of α: 1024 is 1.0.
pub const ALPHA_ONE: u32 = 1024;

/// DCTCP sender state.
#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    /// Growth and the loss response (RFC 8257 §3.4, §3.5).
    reno: Reno,
    /// Least window a cut leaves: 2·SMSS (Linux `dctcp_ssthresh`).
    floor: u64,
    /// α in 1/1024 units.
    alpha: u32,
    g_shift: u32,
    /// The current observation window ends at the first ACK beyond this offset.
    window_end: u64,
    acked: u64,
    marked: u64,
    /// No further cut until an ACK passes this offset (one cut per window).
    cut_until: u64,
}

impl Dctcp {
    /// DCTCP for segments of `smss` bytes: α starts at `alpha_init`/1024
    /// and moves by g = 1/2^`g_shift` per window.
    pub fn new(smss: u64, cfg: DctcpConfig) -> Self {
        Dctcp {
            reno: Reno::new(smss, CaIncrease::Exact),
            floor: 2 * smss,
            alpha: cfg.alpha_init.min(ALPHA_ONE),
            g_shift: cfg.g_shift.min(10),
            window_end: 0,
            acked: 0,
            marked: 0,
            cut_until: 0,
        }
    }

    /// α in 1/1024 units.
    #[inline]
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// An ACK newly acknowledged `acked` bytes up to `ack` (`ece` set or not),
    /// with SND.NXT = `snd_nxt`. Updates α at a window's end and returns true
    /// when the window must be cut now (`cwnd · (1 − α/2)`, see [`Dctcp::cut`]).
    fn observe(&mut self, acked: u64, ack: u64, ece: bool, snd_nxt: u64) -> bool {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if ack > self.window_end {
            // RFC 8257 (3.3 step 4-5): "Compute the congestion level for the
            // current observation window: M = bytes_marked / bytes_acked" and
            // "DCTCP.Alpha = DCTCP.Alpha * (1 - g) + g * M".
            // In 1/1024 units as Linux `dctcp_update_alpha`: the decay takes
            // at least 1 while α > 0 (`min_not_zero`), so α can reach 0.
            let decay = match self.alpha >> self.g_shift {
                0 => self.alpha,
                d => d,
            };
            self.alpha -= decay;
            if let Some(f) = (self.marked << (10 - self.g_shift)).checked_div(self.acked) {
                self.alpha = (self.alpha + f as u32).min(ALPHA_ONE);
            }
            self.window_end = snd_nxt;
            self.acked = 0;
            self.marked = 0;
        }
        if ece && ack > self.cut_until {
            self.cut_until = snd_nxt;
            return true;
        }
        false
    }

    /// RFC 8257 (3.3 step 8): `cwnd · (1 − α/2)`, at least 2·SMSS.
    #[inline]
    fn cut(&self, cwnd: u64) -> u64 {
        (cwnd - cwnd * self.alpha as u64 / (2 * ALPHA_ONE as u64)).max(self.floor)
    }
}

impl CongestionControl for Dctcp {
    #[inline]
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, now: SimTime, srtt: SimDuration) -> u64 {
        self.reno.cong_avoid(cwnd, acked, now, srtt)
    }
    #[inline]
    fn ssthresh(&mut self, cwnd: u64, flight: u64) -> u64 {
        self.reno.ssthresh(cwnd, flight)
    }
    #[inline]
    fn needs_ecn(&self) -> bool {
        true
    }
    /// α per observation window; on an ECE at most once per window, the
    /// window `cwnd` cut to `cwnd · (1 − α/2)` (RFC 8257 §3.3).
    #[inline]
    fn on_ecn_echo(&mut self, acked: u64, ack: u64, ece: bool, snd_nxt: u64, cwnd: u64) -> Option<u64> {
        self.observe(acked, ack, ece, snd_nxt).then(|| self.cut(cwnd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SMSS 1000, α = 1, g = 1/16.
    fn dctcp() -> Dctcp {
        Dctcp::new(1000, DctcpConfig { alpha_init: ALPHA_ONE, g_shift: 4 })
    }

    /// RFC 8257 §3.3: on a steady marking pattern α converges to the fraction
    /// of bytes marked: every window 30 % marked gives α ≈ 0.3.
    #[test]
    fn rfc8257_3_3_alpha_converges_to_the_marked_fraction() {
        let mut d = dctcp();
        let mut snd_nxt = 10_000;
        for _ in 0..300 {
            // One window: ten ACKs of 1000 bytes, the first three marked.
            let start = snd_nxt - 10_000;
            for i in 0..10 {
                d.observe(1000, start + 1000 * (i + 1), i < 3, snd_nxt);
            }
            snd_nxt += 10_000;
        }
        let alpha = d.alpha() as f64 / ALPHA_ONE as f64;
        assert!((alpha - 0.3).abs() < 0.02, "α = {alpha}");
    }

    /// RFC 8257 §3.3: α starts at 1, so the first mark halves the window, and
    /// an unmarked stream decays α toward 0.
    #[test]
    fn rfc8257_3_3_first_cut_halves_and_alpha_decays_without_marks() {
        let mut d = dctcp();
        assert!(d.observe(1000, 1000, true, 10_000));
        assert_eq!(d.cut(20_000), 10_000);
        assert!(!d.observe(1000, 2000, true, 10_000), "one cut per window");
        for w in 1..200u64 {
            d.observe(10_000, 10_000 * w + 1, false, 10_000 * (w + 1));
        }
        assert!(d.alpha() < 10, "α = {}/1024", d.alpha());
        assert_eq!(d.cut(20_000), 20_000 - 20_000 * d.alpha() as u64 / 2048);
    }

    /// RFC 8257 §3.4, §3.5: growth and the loss response are Reno's.
    #[test]
    fn rfc8257_3_4_3_5_growth_and_loss_are_renos() {
        let (mut d, mut r) = (dctcp(), Reno::new(1000, CaIncrease::Exact));
        let t = SimTime::ZERO;
        assert_eq!(d.cong_avoid(4000, 1000, t, SimDuration::ZERO), r.cong_avoid(4000, 1000, t, SimDuration::ZERO));
        assert_eq!(d.ssthresh(20_000, 10_000), r.ssthresh(20_000, 10_000));
    }
}
