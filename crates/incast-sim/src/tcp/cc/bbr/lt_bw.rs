//! The long-term (policer) bandwidth estimate (Linux `bbr_lt_bw_sampling`,
//! `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling`).
//!
//! **Models:** "We estimate that we're policed if we see 2 consecutive
//! sampling intervals with consistent throughput and high packet loss":
//! sampling starts at the first loss; an interval spans 4 to 16 rounds,
//! ends at a loss once the lost data is at least 50/256 (about 20 %) of
//! the delivered, and rates the data delivered over its length in whole
//! milliseconds; two intervals whose rates differ by at most 1/8 or by
//! 4 kbit/s make their average the estimate (`lt_use_bw`), PROBE_BW then
//! cruising at a gain of 1, for 48 rounds; application-limited samples and
//! overlong intervals start sampling again.
//! **Deliberately different:** the counts are bytes, not packets; the rates
//! bytes per second.

use super::{Bbr, Mode, UNIT};

/// The fewest rounds of a sampling interval (`bbr_lt_intvl_min_rtts`).
const INTERVAL_MIN_ROUNDS: u32 = 4;
/// A lossy interval: lost / delivered at least 50/256 (`bbr_lt_loss_thresh`).
const LOSS_THRESH: u64 = 50;
/// Two intervals agree within 1/8 of the rate (`bbr_lt_bw_ratio`) ...
const BW_RATIO: u64 = UNIT / 8;
/// ... or 4 kbit/s (`bbr_lt_bw_diff`).
const BW_DIFF: u64 = 4000 / 8;
/// Rounds the long-term rate stays in use (`bbr_lt_bw_max_rtts`).
const USE_ROUNDS: u32 = 48;

/// The long-term sampler's state.
#[derive(Clone, Copy, Debug, Default)]
pub struct LtBw {
    /// The previous interval's rate, or the estimate in use (bytes per second).
    bw: u64,
    use_bw: bool,
    pub(super) sampling: bool,
    rounds: u32,
    /// Where the interval started: delivered and lost bytes, milliseconds.
    last_delivered: u64,
    last_lost: u64,
    last_ms: u64,
}

impl LtBw {
    /// True while the long-term rate is the estimate (`lt_use_bw`).
    pub fn in_use(&self) -> bool {
        self.use_bw
    }

    /// The long-term rate, bytes per second (`lt_bw`).
    pub fn bw(&self) -> u64 {
        self.bw
    }
}

impl Bbr {
    /// `bbr_reset_lt_bw_sampling_interval`: a new interval from now.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt.last_ms = self.delivered_stamp.as_ps() / 1_000_000_000;
        self.lt.last_delivered = self.delivered;
        self.lt.last_lost = self.lost;
        self.lt.rounds = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.gains_moved = true;
        self.lt.sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_interval_done`: an interval rated `bw` bytes per second.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt.bw > 0 {
            let diff = bw.abs_diff(self.lt.bw);
            if diff * UNIT <= BW_RATIO * self.lt.bw || Self::pacing_rate_for(diff, UNIT) <= BW_DIFF {
                // "All criteria are met; estimate we're policed."
                self.lt.bw = (bw + self.lt.bw) / 2;
                self.lt.use_bw = true;
                self.pacing_gain = UNIT;
                self.gains_moved = true;
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`, for an ACK (or a timeout) that found losses
    /// when `lost`, its sample application-limited when `app_limited`.
    #[inline]
    pub(super) fn lt_bw_sampling(&mut self, lost: bool, app_limited: bool) {
        // "Wait for the first loss before sampling": the common case, decided
        // without a call; so is an ACK that found no loss, started no round and
        // is not application-limited, which leaves a sampling interval as it
        // was (its rounds, at most 16, move only at a round's start).
        if self.lt.use_bw || lost || self.lt.sampling && (self.round_start || app_limited) {
            self.lt_bw_sample(lost, app_limited);
        }
    }

    /// [`Bbr::lt_bw_sampling`] once it uses, samples, or starts sampling the long-term rate.
    #[inline(never)]
    fn lt_bw_sample(&mut self, lost: bool, app_limited: bool) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rounds += 1;
                if self.lt.rounds >= USE_ROUNDS {
                    // "stop using lt_bw", "restart gain cycling"
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // "Wait for the first loss before sampling, to let the policer exhaust its tokens"
        if !self.lt.sampling {
            if !lost {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt.sampling = true;
        }
        if app_limited {
            // "To avoid underestimates, reset sampling if we run out of data."
            self.reset_lt_bw_sampling();
            return;
        }
        self.lt.rounds += u32::from(self.round_start);
        if self.lt.rounds < INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * INTERVAL_MIN_ROUNDS {
            // "interval is too long"
            self.reset_lt_bw_sampling();
            return;
        }
        if !lost {
            return;
        }
        let lost = self.lost - self.lt.last_lost;
        let delivered = self.delivered - self.lt.last_delivered;
        if delivered == 0 || lost * UNIT < LOSS_THRESH * delivered {
            return;
        }
        let ms = (self.delivered_stamp.as_ps() / 1_000_000_000).saturating_sub(self.lt.last_ms);
        if ms < 1 {
            // "interval is less than one ms, so wait"
            return;
        }
        self.lt_bw_interval_done(delivered * 1000 / ms);
    }
}
