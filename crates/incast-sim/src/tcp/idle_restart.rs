//! Restart after idle (RFC 5681 §4.1): the restart window.
//!
//! **Models:** the sender remembers when it last sent data; when it is about
//! to send with nothing outstanding and has not sent for longer than the
//! current RTO (back-off included, as Linux's `icsk_rto`), cwnd becomes
//! min(cwnd, RW) with RW = min(IW, cwnd) (`tcp::cc`). On by default:
//! Linux `tcp_slow_start_after_idle` is 1 unless changed, and `incast
//! validate` compares against Linux.
//! **Deliberately different:** idle is measured from the last data segment
//! sent, as RFC 5681 and Linux `lsndtime` do, not from the last ACK.
//! DEVIATION (Linux `tcp_cwnd_restart`): Linux halves cwnd once per idle RTO
//! down to RW (the RFC 2861 decay) and raises ssthresh to ¾·cwnd first; we
//! apply the RFC 5681 restart window in one step and leave ssthresh alone.
//! **Not modelled:** cwnd validation for application-limited periods
//! (RFC 2861 §3 / RFC 7661), pacing after idle.

use crate::time::{SimDuration, SimTime};

/// Idle-restart book-keeping of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleRestart {
    enabled: bool,
    /// When data was last sent; `None` before the first segment.
    last_send: Option<SimTime>,
}

impl IdleRestart {
    /// Restart after idle on (`enabled`) or off.
    pub fn new(enabled: bool) -> Self {
        IdleRestart { enabled, last_send: None }
    }

    /// A data segment went out at `now`.
    #[inline]
    pub fn on_send(&mut self, now: SimTime) {
        self.last_send = Some(now);
    }

    /// True when a sender with nothing outstanding that is about to send at
    /// `now` must first shrink cwnd to the restart window (the caller checks
    /// that nothing is outstanding).
    #[inline]
    pub fn due(&self, now: SimTime, rto: SimDuration) -> bool {
        // RFC 5681 (4.1): "if the TCP has not sent data in an interval exceeding
        // the retransmission timeout"
        self.enabled && self.last_send.is_some_and(|t| now.0.saturating_sub(t.0) > rto.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5681 (4.1): only an interval without sending strictly longer than
    /// the RTO counts.
    #[test]
    fn rfc5681_4_1_due_after_more_than_rto_idle() {
        let rto = SimDuration::from_millis(200);
        let mut r = IdleRestart::new(true);
        assert!(!r.due(SimTime(u64::MAX / 2), rto), "never sent: no restart");
        r.on_send(SimTime::ZERO);
        let at = |d: SimDuration| SimTime(d.0);
        assert!(!r.due(at(rto), rto));
        assert!(r.due(at(SimDuration(rto.0 + 1)), rto));
        assert!(!IdleRestart::new(false).due(at(SimDuration(rto.0 + 1)), rto));
    }
}
