//! Rate limits on the server's log lines, as Linux's `___ratelimit`
//! (lib/ratelimit.c) limits kernel messages: at most so many lines a window
//! (its `burst` and `interval`), and the next line admitted says how many
//! were left out (its "callbacks suppressed").

use std::time::{Duration, Instant};

/// A rate limit on one kind of log line: at most `lines` per `window`; the
/// first line after some were dropped says how many.
#[derive(Debug)]
pub(super) struct Throttle {
    window: Duration,
    lines: u32,
    started: Option<Instant>,
    used: u32,
    dropped: u64,
}

impl Throttle {
    pub(super) fn new(window: Duration, lines: u32) -> Throttle {
        Throttle { window, lines, started: None, used: 0, dropped: 0 }
    }

    /// `line` as it should be logged at `now`, or `None` when over the limit.
    pub(super) fn admit(&mut self, now: Instant, line: &str) -> Option<String> {
        let window_over = match self.started {
            Some(t) => now.duration_since(t) >= self.window,
            None => true,
        };
        if window_over {
            (self.started, self.used) = (Some(now), 0);
        }
        if self.used >= self.lines {
            self.dropped += 1;
            return None;
        }
        self.used += 1;
        Some(match std::mem::take(&mut self.dropped) {
            0 => line.to_owned(),
            n => format!("{line} ({n} similar lines not logged before this one)"),
        })
    }

    /// Lines left out since the last one logged.
    pub(super) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_logs_so_many_lines_a_window_then_counts_the_rest() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut throttle = Throttle::new(Duration::from_secs(5), 2);
        assert_eq!(throttle.admit(at(0), "a").as_deref(), Some("a"));
        assert_eq!(throttle.admit(at(1), "b").as_deref(), Some("b"));
        assert_eq!(throttle.admit(at(2), "c"), None);
        assert_eq!(throttle.admit(at(4), "d"), None);
        assert_eq!(throttle.dropped, 2);
        assert_eq!(throttle.admit(at(5), "e").as_deref(), Some("e (2 similar lines not logged before this one)"));
        assert_eq!(throttle.admit(at(6), "f").as_deref(), Some("f"));
        assert_eq!(throttle.admit(at(7), "g"), None);
        assert_eq!(throttle.dropped, 1, "left for the shutdown line");
    }
}
