//! Congestion-window validation: the window grows only while it limits the sender.
//!
//! **Models:** Linux's measurement-based check (`tcp_cwnd_validate` in
//! net/ipv4/tcp_output.c, `tcp_is_cwnd_limited` in include/net/tcp.h, as
//! fixed by commit f4ce91ce12a7, "tcp: fix tcp_cwnd_validate() to not forget
//! is_cwnd_limited"). After each burst of sending the sender reports whether
//! the congestion window stopped it (the data in flight fills it) and how
//! much is in flight. The record is kept for one window of data: it is
//! replaced once SND.UNA passes the SND.NXT of the burst that set it, by any
//! cwnd-limited burst, and, while no burst of this window was cwnd-limited,
//! by a burst with more in flight. Reno and Cubic grow cwnd only when
//! [`CwndUsage::may_grow`] says so: the window was cwnd-limited, or in slow
//! start cwnd is below twice the most that was in flight ("ensure cwnd grows
//! to twice what was ACKed"). A sender held back by the peer's window or by
//! the application therefore keeps its cwnd where its flight last used it,
//! in the spirit of RFC 7661 (new CWV), instead of growing it on every ACK as
//! RFC 5681 (3.1) alone would.
//! **Deliberately different:** counted in bytes (Linux counts packets):
//! cwnd-limited means another full segment would not fit under cwnd.
//! **Not modelled:** `tcp_cwnd_application_limited`, the decay of an unused
//! window after an RTO of not being cwnd-limited (RFC 2861): it needs the
//! socket's send-buffer state (`SOCK_NOSPACE`), which the engine's
//! unbounded send buffer does not have.

/// Which rule decides whether an ACK may grow cwnd.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CwndValidation {
    /// RFC 5681 (3.1): every ACK of new data grows cwnd.
    #[default]
    Off,
    /// Linux's `tcp_is_cwnd_limited`: only while the window limits the sender.
    Linux,
}

/// How fully the sender used its window lately (Linux `is_cwnd_limited`,
/// `max_packets_out`, `cwnd_usage_seq`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CwndUsage {
    rule: CwndValidation,
    /// The latest window had a cwnd-limited burst.
    cwnd_limited: bool,
    /// Most bytes in flight at the end of a burst in the latest window.
    max_flight: u64,
    /// SND.NXT when the record was last replaced: the window's right edge.
    usage_seq: u64,
}

impl CwndUsage {
    /// Usage tracking by `rule`; nothing recorded yet.
    pub fn new(rule: CwndValidation) -> Self {
        CwndUsage { rule, ..CwndUsage::default() }
    }

    /// A burst of sending ended with `flight` bytes in flight, SND.UNA at
    /// `snd_una` and SND.NXT at `snd_nxt`; `cwnd_limited` when cwnd stopped it.
    #[inline]
    pub fn on_burst(&mut self, snd_una: u64, snd_nxt: u64, flight: u64, cwnd_limited: bool) {
        // tcp_cwnd_validate: "If cwnd-limited then remember that fact for the
        // current window. If not cwnd-limited then track the maximum number of
        // outstanding packets in the current window."
        if snd_una >= self.usage_seq || cwnd_limited || (!self.cwnd_limited && flight > self.max_flight) {
            self.cwnd_limited = cwnd_limited;
            self.max_flight = flight;
            self.usage_seq = snd_nxt;
        }
    }

    /// True when an ACK may grow a window of `cwnd` bytes with slow-start
    /// threshold `ssthresh` (always, with the rule off).
    #[inline]
    pub fn may_grow(&self, cwnd: u64, ssthresh: u64) -> bool {
        match self.rule {
            CwndValidation::Off => true,
            // tcp_is_cwnd_limited: "If in slow start, ensure cwnd grows to twice what was ACKed."
            CwndValidation::Linux => self.cwnd_limited || (cwnd < ssthresh && cwnd < 2 * self.max_flight),
        }
    }

    /// True when the rule is on (the sender reports bursts only then).
    #[inline]
    pub fn tracks(&self) -> bool {
        self.rule != CwndValidation::Off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 5681 (3.1) alone: growth on every ACK, whatever was in flight.
    #[test]
    fn off_always_grows() {
        let u = CwndUsage::new(CwndValidation::Off);
        assert!(u.may_grow(100 * MSS, u64::MAX));
    }

    /// Linux tcp_is_cwnd_limited: "cwnd is 10 (IW10), but application sends 9
    /// frames. We allow cwnd to reach 18 when all frames are ACKed."
    #[test]
    fn slow_start_grows_to_twice_the_flight() {
        let mut u = CwndUsage::new(CwndValidation::Linux);
        u.on_burst(0, 9 * MSS, 9 * MSS, false);
        assert!(u.may_grow(17 * MSS, u64::MAX));
        assert!(!u.may_grow(18 * MSS, u64::MAX));
    }

    /// In congestion avoidance only a cwnd-limited window grows: a sender
    /// held back by the peer's window keeps its cwnd.
    #[test]
    fn congestion_avoidance_grows_only_when_cwnd_limited() {
        let mut u = CwndUsage::new(CwndValidation::Linux);
        u.on_burst(0, 8 * MSS, 8 * MSS, false);
        assert!(!u.may_grow(10 * MSS, 5 * MSS), "peer-window-limited at 8 of 10 segments");
        u.on_burst(0, 10 * MSS, 10 * MSS, true);
        assert!(u.may_grow(10 * MSS, 5 * MSS));
    }

    /// tcp_cwnd_validate (commit f4ce91ce12a7): a cwnd-limited burst is
    /// remembered for the rest of its window even if a later burst of that
    /// window has more in flight without being cwnd-limited; the next window
    /// starts afresh.
    #[test]
    fn a_cwnd_limited_window_is_not_forgotten_within_the_window() {
        let mut u = CwndUsage::new(CwndValidation::Linux);
        u.on_burst(0, 4 * MSS, 4 * MSS, true);
        u.on_burst(MSS, 9 * MSS, 8 * MSS, false);
        assert!(u.may_grow(20 * MSS, 5 * MSS), "still the window that was cwnd-limited");
        u.on_burst(4 * MSS, 10 * MSS, 6 * MSS, false);
        assert!(!u.may_grow(20 * MSS, 5 * MSS), "SND.UNA passed the window's edge: not cwnd-limited now");
    }
}
