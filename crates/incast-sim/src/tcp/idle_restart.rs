//! Restart after idle (RFC 5681 §4.1): the restart window.
//!
//! **Models:** the sender remembers when it last sent data; when it is about
//! to send with nothing outstanding and has not sent for longer than the
//! current RTO (back-off included, as Linux's `icsk_rto`), cwnd becomes
//! min(cwnd, RW) with RW = min(IW, cwnd) (`tcp::cc`). On by default:
//! Linux `tcp_slow_start_after_idle` is 1 unless changed, and `incast
//! validate` compares against Linux.
//! **Deliberately different:** idle is measured from the last data segment
//! sent, as RFC 5681 and Linux `lsndtime` do, not from the last ACK — unless
//! `IdleRule::Ns2`: ns-2.35's one-way agent leaves its retransmission timer
//! armed by the ACK that acknowledged everything (`TcpAgent::newtimer`: "if
//! (t_seqno_ > tcph->seqno() ...) set_rtx_timer()"), and when it expires with
//! nothing outstanding `TcpAgent::timeout` does
//! `slowdown(CLOSE_CWND_ONE|NO_OUTSTANDING_DATA)` (`slow_start_restart_` and
//! `restart_bugfix_` on): idle counts from the last ACK of new data and the
//! window restarts at one segment, ssthresh untouched. A window the
//! application then sets outright (a GIP unit head, `tcp::gip`) replaces the
//! one the expired timer left, as the write comes after the expiry.
//! With `IdleRule::Linux` the window restarts as Linux's `tcp_cwnd_restart`
//! does it (the RFC 2861 decay): ssthresh rises to ¾·cwnd first
//! (`tcp_current_ssthresh`), then cwnd is halved once for every whole RTO of
//! idle time beyond the first, never below RW (`tcp::cc`); RFC 5681's rule
//! applies RW in one step and leaves ssthresh alone.
//! **Not modelled:** cwnd validation for application-limited periods
//! (RFC 2861 §3 / RFC 7661), pacing after idle.

use crate::time::{SimDuration, SimTime};

/// When a sender counts as idle, and the window it restarts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IdleRule {
    /// RFC 5681 (4.1): no data sent for longer than the RTO; cwnd = min(IW, cwnd).
    #[default]
    Rfc5681,
    /// Linux `tcp_cwnd_restart`: idle counted as RFC 5681 counts it; cwnd
    /// halved per RTO of idle down to min(IW, cwnd), ssthresh ≥ ¾·cwnd.
    Linux,
    /// ns-2.35: the retransmission timer re-armed by the last ACK of new data
    /// expired with nothing outstanding; cwnd = one segment.
    Ns2,
}

/// Idle-restart book-keeping of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleRestart {
    enabled: bool,
    rule: IdleRule,
    /// When data was last sent (`Rfc5681`), or new data last acknowledged
    /// (`Ns2`); `None` before either.
    since: Option<SimTime>,
}

impl IdleRestart {
    /// Restart after idle on (`enabled`) or off, counted by `rule`.
    pub fn new(enabled: bool, rule: IdleRule) -> Self {
        IdleRestart { enabled, rule, since: None }
    }

    /// The rule idle periods are counted by.
    #[inline]
    pub fn rule(&self) -> IdleRule {
        self.rule
    }

    /// A data segment went out at `now`.
    #[inline]
    pub fn on_send(&mut self, now: SimTime) {
        if self.rule != IdleRule::Ns2 {
            self.since = Some(now);
        }
    }

    /// How long the sender has been idle at `now` (Linux `tcp_jiffies32 - lsndtime`).
    #[inline]
    pub fn idle(&self, now: SimTime) -> SimDuration {
        SimDuration(self.since.map_or(0, |t| now.0.saturating_sub(t.0)))
    }

    /// When data last went out (Linux `lsndtime`); `None` under the `Ns2`
    /// rule, which counts from ACKs instead.
    #[inline]
    pub fn last_send(&self) -> Option<SimTime> {
        self.since.filter(|_| self.rule != IdleRule::Ns2)
    }

    /// ns-2's retransmission timer was re-armed at `now`: by an ACK of new
    /// data (`TcpAgent::newtimer`), or by the window cut of duplicate ACKs
    /// with nothing outstanding (`dupack_action`'s `reset_rtx_timer`).
    #[inline]
    pub fn on_timer_rearmed(&mut self, now: SimTime) {
        if self.rule == IdleRule::Ns2 {
            self.since = Some(now);
        }
    }

    /// The application set cwnd outright (a GIP unit head, `tcp::gip`).
    /// Under the `Ns2` rule this disarms the timer the last ACK of new data
    /// armed, until the next one. Had it expired during the idle gap, ns-2
    /// closed the window before the write, which then sets it; had it not,
    /// the write's segments go out at once (ns-2's write calls `send_much`)
    /// and the timer guards them as a retransmission timer, no longer as an
    /// idle one.
    #[inline]
    pub fn on_window_set(&mut self) {
        if self.rule == IdleRule::Ns2 {
            self.since = None;
        }
    }

    /// True when a sender with nothing outstanding that is about to send at
    /// `now` must first shrink cwnd to the restart window (the caller checks
    /// that nothing is outstanding).
    #[inline]
    pub fn due(&self, now: SimTime, rto: SimDuration) -> bool {
        // RFC 5681 (4.1): "if the TCP has not sent data in an interval exceeding
        // the retransmission timeout"
        self.enabled
            && self.since.is_some_and(|t| {
                let idle = now.0.saturating_sub(t.0);
                match self.rule {
                    IdleRule::Rfc5681 | IdleRule::Linux => idle > rto.0,
                    // ns-2 `TcpAgent::timeout` fires at exactly the RTO after the last ACK.
                    IdleRule::Ns2 => idle >= rto.0,
                }
            })
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
        let mut r = IdleRestart::new(true, IdleRule::Rfc5681);
        assert!(!r.due(SimTime(u64::MAX / 2), rto), "never sent: no restart");
        r.on_send(SimTime::ZERO);
        r.on_timer_rearmed(SimTime(rto.0));
        let at = |d: SimDuration| SimTime(d.0);
        assert!(!r.due(at(rto), rto));
        assert!(r.due(at(SimDuration(rto.0 + 1)), rto), "counted from the send, not the ACK");
        assert!(!IdleRestart::new(false, IdleRule::Rfc5681).due(at(SimDuration(rto.0 + 1)), rto));
    }

    /// ns-2.35 `TcpAgent::newtimer`/`timeout`: the timer the last ACK of new
    /// data armed expires after one RTO; sending does not re-arm it.
    #[test]
    fn ns2_idle_counts_from_the_last_ack_and_the_timer_expiry() {
        let rto = SimDuration::from_millis(200);
        let mut r = IdleRestart::new(true, IdleRule::Ns2);
        r.on_send(SimTime::ZERO);
        assert!(!r.due(SimTime(u64::MAX / 2), rto), "no ACK yet: no timer armed by one");
        r.on_timer_rearmed(SimTime(1000));
        r.on_send(SimTime(rto.0));
        assert!(!r.due(SimTime(rto.0 + 999), rto));
        assert!(r.due(SimTime(rto.0 + 1000), rto), "the timer fires at exactly one RTO");
    }
}
