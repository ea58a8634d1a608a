//! The minimum RTT and PROBE_RTT (Linux `bbr_update_min_rtt`,
//! `bbr_check_probe_rtt_done`).
//!
//! **Models:** a sample no higher than the minimum, or any sample once the
//! minimum is 10 s old (`bbr_min_rtt_win_sec`), replaces it; an old
//! minimum (not while restarting from idle) starts PROBE_RTT, which saves
//! the window, marks what is sent application-limited ("Ignore low rate
//! samples during this mode"), and once the flight is at most 4 packets
//! holds for 200 ms (`bbr_probe_rtt_mode_ms`) and a round; then the window
//! returns, the minimum counts as fresh, and STARTUP or PROBE_BW resumes.
//! **Deliberately different:** time is the simulated clock, not jiffies;
//! `is_ack_delayed` is never set.

use super::{Bbr, Mode, CWND_MIN_TARGET};
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};

/// Age at which the minimum RTT is probed again (`bbr_min_rtt_win_sec`).
pub(super) const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(10);
/// Time PROBE_RTT holds the small window (`bbr_probe_rtt_mode_ms`).
pub(super) const PROBE_RTT_TIME: SimDuration = SimDuration::from_millis(200);

impl Bbr {
    /// `bbr_check_probe_rtt_done`: past its end, PROBE_RTT restores the
    /// window (`cwnd`, packets) and leaves; the minimum RTT counts as fresh.
    pub(super) fn check_probe_rtt_done(&mut self, now: SimTime, cwnd: &mut u64) {
        if !self.probe_rtt_done.is_some_and(|done| now > done) {
            return;
        }
        // "wait a while until PROBE_RTT"
        self.min_rtt_expiry = now + MIN_RTT_WINDOW;
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt` at the ACK of `rs`, with the window `cwnd`
    /// (packets), which PROBE_RTT's end restores.
    pub(super) fn update_min_rtt(&mut self, rs: &RateSample, cwnd: &mut u64) {
        let now = rs.now;
        let expired = now > self.min_rtt_expiry;
        if let Some(rtt) = rs.rtt {
            // "rs->rtt_us <= bbr->min_rtt_us || (filter_expired && !rs->is_ack_delayed)"
            if self.min_rtt.map_or(true, |m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_expiry = now + MIN_RTT_WINDOW;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            // "dip, drain queue"
            self.set_mode(Mode::ProbeRtt);
            self.save_cwnd(*cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // "Maintain min packets in flight for max(200 ms, 1 round)."
            if self.probe_rtt_done.is_none() && self.inflight_after(rs) <= CWND_MIN_TARGET {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.total_delivered;
            } else if self.probe_rtt_done.is_some() {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, cwnd);
                }
            }
        }
        // "Restart after idle ends only once we process a new S/ACK for data"
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }
}
