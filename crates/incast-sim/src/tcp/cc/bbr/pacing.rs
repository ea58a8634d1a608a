//! BBR's pacing rate and send quantum (Linux `bbr_set_pacing_rate`,
//! `bbr_init_pacing_rate_from_rtt`, `bbr_tso_segs_goal`, `bbr_min_tso_segs`).
//!
//! **Models:** the rate, the gain times the bandwidth estimate less a 1 %
//! margin (`bbr_rate_bytes_per_sec`), taken when the pipe is full or it is
//! higher; before any RTT sample, the initial window over a nominal 1 ms
//! at the high gain, restarted from the window over the first sample; the
//! quantum, about 1 ms of the rate (`sk_pacing_shift`), at most a legacy
//! GSO packet and 127 segments, at least 1 segment below 1.2 Mbit/s and 2
//! above. **Deliberately different:** bytes per second, not Linux's scaled
//! packets per microsecond. **Not modelled:** `sk_max_pacing_rate`.

use super::{Bbr, HIGH_GAIN, PS_PER_S, UNIT};
use crate::time::SimDuration;

/// The pacing rate's margin below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this rate (1.2 Mbit/s) a send quantum is one segment, else two (`bbr_min_tso_rate`).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// A quantum holds about 1 ms of the pacing rate (`sk_pacing_shift`, 10) ...
const PACING_SHIFT: u32 = 10;
/// ... at most a legacy GSO packet less the headers (`GSO_LEGACY_MAX_SIZE - 1 -
/// MAX_TCP_HEADER`, 320 on x86-64) ...
const QUANTUM_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// ... and 127 segments.
const QUANTUM_MAX_SEGS: u64 = 0x7f;
/// The RTT the initial pacing rate assumes before a sample (`bbr_init_pacing_rate_from_rtt`).
const NOMINAL_RTT: SimDuration = SimDuration::from_millis(1);

impl Bbr {
    /// `bbr_rate_bytes_per_sec` and `bbr_bw_to_pacing_rate`: `bw` times `gain`, less the margin.
    pub(super) fn pacing_rate_for(bw: u64, gain: u64) -> u64 {
        match bw.checked_mul(gain * (100 - PACING_MARGIN_PERCENT)) {
            Some(r) => r / (UNIT * 100),
            None => (u128::from(bw) * u128::from(gain) * 99 / u128::from(UNIT * 100)).min(u128::from(u64::MAX)) as u64,
        }
    }

    /// `bbr_init_pacing_rate_from_rtt`: `cwnd` packets over the RTT (1 ms
    /// before one is known) at the high gain.
    pub(super) fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, srtt: Option<SimDuration>) {
        self.has_seen_rtt = srtt.is_some();
        let rtt = srtt.filter(|r| *r > SimDuration::ZERO).unwrap_or(NOMINAL_RTT);
        let bw = u128::from(cwnd * self.mss.get()) * PS_PER_S / u128::from(rtt.as_ps());
        self.store_pacing_rate(Self::pacing_rate_for(bw.min(u128::from(u64::MAX)) as u64, HIGH_GAIN));
    }

    /// Pace at `rate` bytes per second, the send quantum following it.
    fn store_pacing_rate(&mut self, rate: u64) {
        self.pacing_rate = rate;
        self.quantum = self.tso_segs_goal();
        self.pacing_moved = true;
    }

    /// `bbr_set_pacing_rate`: the rate of `gain` times `bw`, taken when the
    /// pipe is full or it is higher; the first RTT sample restarts it from
    /// the window of `cwnd` packets.
    pub(super) fn set_pacing_rate(&mut self, bw: u64, gain: u64, cwnd: u64, rtt: Option<SimDuration>) {
        let rate = Self::pacing_rate_for(bw, gain);
        if !self.has_seen_rtt && rtt.is_some() {
            self.init_pacing_rate_from_rtt(cwnd, rtt);
        }
        if (self.full_bw_reached || rate > self.pacing_rate) && rate != self.pacing_rate {
            self.store_pacing_rate(rate);
        }
    }

    /// `bbr_tso_segs_goal`: segments a send quantum holds, about 1 ms of the
    /// pacing rate ("Sort of tcp_tso_autosize() but ignoring driver provided
    /// sk_gso_max_size"), at least `bbr_min_tso_segs`.
    pub(super) fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(QUANTUM_MAX_BYTES);
        (bytes / self.mss).max(u64::from(self.min_tso_segs_now())).min(QUANTUM_MAX_SEGS)
    }

    /// `bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2.
    pub(super) fn min_tso_segs_now(&self) -> u32 {
        if self.pacing_rate < MIN_TSO_RATE {
            1
        } else {
            2
        }
    }
}
