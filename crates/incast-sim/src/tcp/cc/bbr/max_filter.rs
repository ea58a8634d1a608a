//! A windowed running maximum, as Linux's `lib/minmax.c` keeps BBR's
//! bandwidth filter (Kathleen Nichols' algorithm).
//!
//! **Models:** the best, second-best and third-best estimates of the window
//! (`minmax_running_max`), each with the time it was taken, the time here
//! being BBR's count of round trips: a new maximum or a window gone stale
//! restarts all three from the sample; otherwise the sample replaces the
//! estimates it beats, and estimates older than the window, or a second or
//! third that has not moved over a quarter or half of it, age out
//! (`minmax_subwin_update`).
//! **Deliberately different:** times are `u64` round counts, never wrapping.
//! **Not modelled:** the running minimum (`minmax_running_min`): BBR's
//! min_rtt is a single value with a timestamp.

/// One estimate: the round it was taken in and its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Estimate {
    t: u64,
    v: u64,
}

/// The maximum of the samples of the last `window` rounds (`struct minmax`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [Estimate; 3],
}

impl MaxFilter {
    /// The current maximum (`minmax_get`).
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Take the sample `v` of round `t` into a filter over `window` rounds
    /// (`minmax_running_max`).
    pub fn update(&mut self, window: u64, t: u64, v: u64) {
        let new = Estimate { t, v };
        if v >= self.s[0].v || t - self.s[2].t > window {
            self.s = [new; 3];
            return;
        }
        if v >= self.s[1].v {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        self.age(window, new);
    }

    /// `minmax_subwin_update`: the best estimate older than the window
    /// gives way to the next ones; a second or third estimate that stayed
    /// equal to the one above it for a quarter or half of the window takes
    /// the sample.
    fn age(&mut self, window: u64, new: Estimate) {
        let dt = new.t - self.s[0].t;
        if dt > window {
            self.s = [self.s[1], self.s[2], new];
            if new.t - self.s[0].t > window {
                self.s = [self.s[1], self.s[2], new];
            }
        } else if self.s[1].t == self.s[0].t && dt > window / 4 {
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > window / 2 {
            self.s[2] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peak holds for the window's ten rounds, then the best of the rounds after it rules.
    #[test]
    fn minmax_running_max_keeps_a_peak_for_the_window_then_forgets_it() {
        let mut f = MaxFilter::default();
        f.update(10, 1, 100);
        for round in 2..=11 {
            f.update(10, round, 60 + round);
            assert_eq!(f.get(), 100, "round {round}");
        }
        f.update(10, 12, 50);
        assert_eq!(f.get(), 71, "the peak of round 1 is older than 10 rounds");
    }
}
