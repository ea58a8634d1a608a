//! STARTUP and DRAIN (Linux `bbr_check_full_bw_reached`, `bbr_check_drain`).
//!
//! **Models:** at each round start of a sample not application-limited,
//! the pipe counts as full once three rounds in a row failed to grow the
//! bandwidth estimate by 25 % ("1: rwin autotuning grows the rwin, 2: we
//! fill the higher rwin, 3: we get higher delivery rate samples"); a full
//! pipe moves STARTUP to DRAIN, which sets ssthresh to the BDP's inflight,
//! and DRAIN ends in PROBE_BW once the flight fits the BDP.
//! **Deliberately different:** the flight is the data in flight, not
//! `bbr_packets_in_net_at_edt`'s estimate at the next departure.

use super::{Bbr, Mode, UNIT};
use crate::tcp::delivery_rate::RateSample;

/// Growth that counts as the pipe still filling (`bbr_full_bw_thresh`) ...
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
/// ... and the rounds without it that mark it full (`bbr_full_bw_cnt`).
const FULL_BW_ROUNDS: u32 = 3;

impl Bbr {
    /// `bbr_check_full_bw_reached`.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let max_bw = self.max_bw();
        if u128::from(max_bw) * u128::from(UNIT) >= u128::from(self.full_bw) * u128::from(FULL_BW_THRESH) {
            self.full_bw = max_bw;
            self.full_bw_rounds = 0;
            return;
        }
        self.full_bw_rounds += 1;
        self.full_bw_reached = self.full_bw_rounds >= FULL_BW_ROUNDS;
    }

    /// `bbr_check_drain`: a full pipe ends STARTUP ("drain queue we
    /// created", ssthresh = `bbr_inflight(max_bw, 1.0)`); DRAIN ends once
    /// the packets in flight after the ACK of `rs` fit the BDP.
    pub(super) fn check_drain(&mut self, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.set_mode(Mode::Drain);
            self.ssthresh = Some(self.inflight(self.max_bw(), UNIT));
        }
        if self.mode == Mode::Drain && self.in_net_at_edt(self.inflight_after(rs)) <= self.inflight(self.max_bw(), UNIT)
        {
            // "we estimate queue is drained"
            self.reset_probe_bw_mode();
        }
    }
}
