//! A fixed-rate algorithm, for the tests of the rate seams: `cong_control`,
//! delivery-rate samples and pacing. Built only for the tests.
//!
//! **Models:** a sender that paces at a constant rate and holds a window
//! too large to limit it; every loss hook leaves the window alone. It keeps
//! the rate samples it is handed, for the tests to read.
//! **Deliberately different:** it is no algorithm anyone runs.
//! **Not modelled:** any reaction to loss or delay.

use super::CongestionControl;
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};

/// Pace at `rate` bytes per second with a window of a megabyte.
#[derive(Clone, Debug)]
pub struct FixedRate {
    rate: u64,
    /// Every valid rate sample handed to `cong_control`, in order.
    pub samples: Vec<RateSample>,
}

/// The window it holds: larger than any test's flight.
const WINDOW: u64 = 1 << 20;

impl FixedRate {
    /// Pace at `rate` bytes per second.
    pub fn new(rate: u64) -> Self {
        FixedRate { rate, samples: Vec::new() }
    }
}

impl CongestionControl for FixedRate {
    fn cong_avoid(&mut self, cwnd: u64, _acked: u64, _now: SimTime, _srtt: SimDuration) -> u64 {
        cwnd
    }

    fn ssthresh(&mut self, cwnd: u64, _flight: u64) -> u64 {
        cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, rs: &RateSample, _cwnd: u64) -> u64 {
        if rs.interval > SimDuration::ZERO {
            self.samples.push(*rs);
        }
        WINDOW
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.rate)
    }
}
