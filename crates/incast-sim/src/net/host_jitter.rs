//! Host jitter: the random time a host's stack takes to handle each frame it
//! receives (`link.host_jitter`).
//!
//! **Models:** a real host does not answer an ACK in a fixed time: its
//! softirq runs when the CPU gets to it, shared with other sockets and other
//! hosts' work, so the segments an ACK releases leave a few to a few hundred
//! microseconds later. Each frame reaching a host is handed to TCP later by
//! an exponential draw with mean `link.host_jitter`, on top of the fixed host
//! share of `link.rtt`; a host handles its frames in order, so a frame never
//! overtakes the one before it (`max(arrival + draw, previous)`). Without it
//! every sender answers in lockstep with the bottleneck's departures, and a
//! drop-tail queue then drops by phase, not by chance (Floyd and Jacobson,
//! "On Traffic Phase Effects in Packet-Switched Gateways", 1992; ns-2
//! randomizes with its agents' `overhead_` for the same reason). How long
//! the testbed's hosts take, from an ACK passing the switch to the segment
//! it released reaching it, is measured by `docs/host_timing.py`; the value
//! varies from run to run, so it is a setting, off by default.
//! **Deliberately different:** one draw per frame whatever its size, and
//! independent across hosts (a host's CPU is not shared with the others').
//! **Not modelled:** a CPU shared by several hosts, interrupt coalescing.

use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};

/// The handling time of the frames one host receives.
#[derive(Clone, Debug)]
pub struct HostJitter {
    mean: u64,
    rng: Rng,
    last: SimTime,
}

impl HostJitter {
    /// Draws with mean `mean` from substream `host_jitter/<name>` of `seed`.
    pub fn new(mean: SimDuration, seed: u64, name: &str) -> Self {
        HostJitter {
            mean: mean.as_ps(),
            rng: Rng::substream(seed, &format!("host_jitter/{name}")),
            last: SimTime::ZERO,
        }
    }

    /// When a frame reaching the host at `arrival` is handed to TCP: later
    /// by one draw, and never before the frame before it.
    pub fn handled(&mut self, arrival: SimTime) -> SimTime {
        let at = arrival + SimDuration::from_ps(self.rng.exponential(self.mean));
        self.last = self.last.max(at);
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    #[test]
    fn frames_wait_a_draw_in_order_and_average_the_mean() {
        let mut h = HostJitter::new(SimDuration::from_micros(40), 1, "7");
        let (mut prev, mut late) = (SimTime::ZERO, 0);
        for k in 0..100_000u64 {
            let arrival = SimTime(k * 10_000 * US); // 10 ms apart: no frame waits for another
            let at = h.handled(arrival);
            assert!(at >= arrival && at >= prev);
            late += at.since(arrival).as_ps();
            prev = at;
        }
        let mean_us = late as f64 / 100_000.0 / US as f64;
        assert!((mean_us - 40.0).abs() < 1.0, "mean {mean_us} us");
    }

    #[test]
    fn a_frame_right_behind_a_slow_one_waits_for_it() {
        let mut h = HostJitter::new(SimDuration::from_micros(40), 3, "0");
        let mut waited = 0;
        for k in 0..1_000u64 {
            let t = SimTime(k * 100 * US);
            let first = h.handled(t);
            let second = h.handled(t + SimDuration(1));
            assert!(second >= first);
            waited += usize::from(second == first); // its own draw was shorter
        }
        assert!(waited > 300, "about half the pairs: {waited}");
        let mut one = HostJitter::new(SimDuration::from_micros(40), 3, "0");
        let mut other = HostJitter::new(SimDuration::from_micros(40), 3, "0");
        assert_eq!(one.handled(SimTime(0)), other.handled(SimTime(0)), "a run is a pure function of its seed");
    }
}
