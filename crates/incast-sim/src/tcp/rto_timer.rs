//! Arming the retransmission timer: randomized timeout and timer scheduling delay.
//!
//! **Models:** the CMU09 §5 "randomized timeout delay", `timeout = RTO +
//! (rand(0.5) × RTO)`: with `RtoConfig::randomize` each armed retransmission
//! timer lasts RTO plus a uniform draw from [0, RTO/2]. The CMU09 §3 timer
//! scheduling delay ("a small random timer scheduling delay of up to 20µs to
//! more accurately model real-world scheduling variance"): with a non-zero
//! `RtoConfig::scheduling_delay` D, every retransmission-timer expiry is
//! postponed by a uniform draw from [0, D]. Draws come from the endpoint's own
//! seeded substream (`rto/<endpoint index>`, see `sim`), integer picoseconds.
//! **Deliberately different:** the randomized duration is not re-capped at
//! RTO_max (CMU09's formula has no cap); the jiffy rounding of
//! `clock::TcpClock::deadline` applies to the randomized duration, and the
//! scheduling delay is added after it (the timer wheel fires on a tick, the
//! handler then runs late). The RTO that restart after idle and timeout
//! forensics read is the unrandomized one.
//! When the timer restarts: RFC 6298 restarts a running timer only on an ACK
//! of new data (5.3); with `RtoConfig::restart = "fast_retransmit"` it also
//! restarts when a fast retransmission starts loss recovery, as ns-2.35 does
//! (`TcpAgent::dupack_action` and `NewRenoTcpAgent::dupack_action` call
//! `reset_rtx_timer(1,0)` before the retransmission; `tcp-sack1.cc` likewise);
//! with `"head_retransmit"` it restarts whenever the head of the queue is
//! retransmitted, in recovery or after it, as Linux does
//! (`tcp_xmit_retransmit_queue` rearms the timer "if (skb == rtx_head)",
//! 2.6 and 6.x alike), so a head resent again after its retransmission was
//! lost has a whole RTO for its ACK. Under RFC 6298 the timer may then expire
//! less than an RTO after the retransmission left, before its ACK can be
//! back: a timeout on a retransmission that was never lost.
//! **Not modelled:** scheduling delay of the delayed-ACK timer, of packet
//! transmission or of ACK processing — only the retransmission timer is delayed.

use super::clock::TcpClock;
use super::RtoConfig;
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};

/// When a running retransmission timer restarts (`RtoConfig::restart`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RtoRestart {
    /// On an ACK of new data only (RFC 6298 (5.3)).
    #[default]
    Rfc6298,
    /// Also when a fast retransmission starts loss recovery (ns-2.35).
    FastRetransmit,
    /// Also whenever the head of the queue (SND.UNA's segment) is
    /// retransmitted, the fast retransmission included (Linux).
    HeadRetransmit,
}

/// Turns an RTO into the deadline of one armed retransmission timer.
#[derive(Clone, Debug)]
pub struct RtoTimer {
    /// CMU09 §5 randomization on.
    randomize: bool,
    /// Upper bound D of the scheduling delay, in picoseconds (0 = none).
    delay: u64,
    /// This endpoint's substream; untouched while both mechanisms are off.
    rng: Rng,
    /// When a running timer restarts.
    restart: RtoRestart,
}

impl RtoTimer {
    /// The timer of one endpoint, drawing from `rng`.
    pub fn new(cfg: &RtoConfig, rng: Rng) -> Self {
        RtoTimer { randomize: cfg.randomize, delay: cfg.scheduling_delay.as_ps(), rng, restart: cfg.restart }
    }

    /// Does a fast retransmission that starts loss recovery restart the timer?
    #[inline]
    pub fn restarts_on_fast_retransmit(&self) -> bool {
        self.restart != RtoRestart::Rfc6298
    }

    /// Does every retransmission of the head of the queue restart the timer?
    #[inline]
    pub fn restarts_on_head_retransmit(&self) -> bool {
        self.restart == RtoRestart::HeadRetransmit
    }

    /// When a retransmission timer armed at `now` with timeout `rto` expires.
    #[inline]
    pub fn deadline(&mut self, now: SimTime, clock: &TcpClock, rto: SimDuration) -> SimTime {
        if !self.randomize && self.delay == 0 {
            return clock.deadline(now, rto);
        }
        self.perturbed(now, clock, rto)
    }

    /// [`RtoTimer::deadline`] with randomization or scheduling delay on.
    #[inline(never)]
    fn perturbed(&mut self, now: SimTime, clock: &TcpClock, rto: SimDuration) -> SimTime {
        let mut d = rto;
        if self.randomize {
            // CMU09 §5: "timeout = RTO + (rand(0.5) * RTO)" — uniform in [RTO, 1.5·RTO].
            d = SimDuration(d.as_ps().saturating_add(self.rng.below(rto.as_ps() / 2 + 1)));
        }
        let expiry = clock.deadline(now, d);
        if self.delay == 0 {
            return expiry;
        }
        // CMU09 §3: "a small random timer scheduling delay of up to 20µs"
        expiry + SimDuration(self.rng.below(self.delay.saturating_add(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }

    fn timer(randomize: bool, delay: SimDuration, seed: u64) -> RtoTimer {
        let cfg = RtoConfig { randomize, scheduling_delay: delay, ..RtoConfig::default() };
        RtoTimer::new(&cfg, Rng::substream(seed, "rto/0"))
    }

    fn draws(t: &mut RtoTimer, n: usize) -> Vec<SimDuration> {
        let clock = TcpClock::new(SimDuration::ZERO);
        (0..n).map(|_| t.deadline(SimTime(0), &clock, us(200)).since(SimTime(0))).collect()
    }

    /// Both off: the deadline is exactly now + RTO and no draw is taken.
    #[test]
    fn off_is_exact() {
        let mut t = timer(false, SimDuration::ZERO, 1);
        assert!(draws(&mut t, 50).iter().all(|&d| d == us(200)));
    }

    /// CMU09 §5: "timeout = RTO + (rand(0.5) * RTO)" — each armed timer lies in
    /// [RTO, 1.5·RTO], draws differ, and the same seed repeats them exactly.
    #[test]
    fn cmu09_5_randomized_timeout_in_range_and_seeded() {
        let mut t = timer(true, SimDuration::ZERO, 7);
        let a = draws(&mut t, 1000);
        assert!(a.iter().all(|&d| d >= us(200) && d <= us(300)), "outside [RTO, 1.5 RTO]");
        let mut distinct = a.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 900, "draws should differ, got {} distinct", distinct.len());
        // The draws cover the range: some below 1.1·RTO, some above 1.4·RTO.
        assert!(a.iter().any(|&d| d < us(220)) && a.iter().any(|&d| d > us(280)));
        assert_eq!(a, draws(&mut timer(true, SimDuration::ZERO, 7), 1000), "same seed, same draws");
        assert_ne!(a, draws(&mut timer(true, SimDuration::ZERO, 8), 1000), "other seed, other draws");
    }

    /// CMU09 §3: "a small random timer scheduling delay of up to 20µs" — each
    /// expiry is late by a uniform draw from [0, D].
    #[test]
    fn cmu09_3_scheduling_delay_within_bound() {
        let mut t = timer(false, us(20), 3);
        let a = draws(&mut t, 1000);
        assert!(a.iter().all(|&d| d >= us(200) && d <= us(220)));
        assert!(a.iter().any(|&d| d < us(202)) && a.iter().any(|&d| d > us(218)));
    }

    /// CMU09 §5 and §3 together: the delay is added after the randomized RTO.
    #[test]
    fn cmu09_5_randomized_plus_scheduling_delay() {
        let mut t = timer(true, us(20), 5);
        assert!(draws(&mut t, 1000).iter().all(|&d| d >= us(200) && d <= us(320)));
    }

    /// The jiffy clock rounds the randomized duration up to whole ticks.
    #[test]
    fn jiffy_clock_rounds_randomized_timeout() {
        let g = SimDuration::from_millis(1);
        let clock = TcpClock::new(g);
        let mut t = timer(true, SimDuration::ZERO, 9);
        for _ in 0..100 {
            let d = t.deadline(SimTime(0), &clock, SimDuration::from_millis(5)).since(SimTime(0));
            assert_eq!(d.as_ps() % g.as_ps(), 0);
            assert!(d >= SimDuration::from_millis(5) && d <= SimDuration::from_millis(8));
        }
    }
}
