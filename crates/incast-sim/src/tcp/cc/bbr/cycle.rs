//! PROBE_BW's gain cycle (Linux `bbr_update_cycle_phase`,
//! `bbr_is_next_cycle_phase`, `bbr_advance_cycle_phase`,
//! `bbr_reset_probe_bw_mode`, `bbr_reset_mode`).
//!
//! **Models:** eight phases of pacing gain 5/4, 3/4 and six of 1, each
//! timed from when data was last delivered: a phase lasts a minimum RTT;
//! probing (5/4) lasts until the flight reaches 5/4 of the BDP's inflight
//! or the ACK found a loss ("a path with small buffers may not hold that
//! much"), draining (3/4) at most until the flight falls to the BDP's;
//! PROBE_BW starts from a random phase other than the draining one
//! (`bbr_cycle_rand`, 7). **Deliberately different:** the random phase
//! comes from the sender's seeded substream, not `get_random_u32_below`;
//! the flight leaves out `bbr_packets_in_net_at_edt`'s departure time.

use super::{Bbr, Mode, CYCLE_LEN, UNIT};

/// PROBE_BW's pacing gains, one phase a minimum RTT (`bbr_pacing_gain`).
pub(super) const PACING_GAIN: [u64; CYCLE_LEN] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
/// PROBE_BW starts in one of this many phases, never the draining one (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;

impl Bbr {
    /// `bbr_advance_cycle_phase`.
    pub(super) fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.delivered_stamp;
        self.gains_moved = true;
    }

    /// `bbr_packets_in_net_at_edt`: `inflight` packets, plus the quantum
    /// about to leave when the gain raises the flight.
    pub(super) fn in_net_at_edt(&self, inflight: u64) -> u64 {
        if self.pacing_gain > UNIT {
            inflight + self.quantum
        } else {
            inflight
        }
    }

    /// `bbr_is_next_cycle_phase`, from `prior_in_flight` bytes in flight
    /// before the ACK (counted in packets where the phase asks), `lost` when
    /// it marked packets lost (`rs->losses`).
    pub(super) fn is_next_cycle_phase(&self, prior_in_flight: u64, lost: bool) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| self.delivered_stamp.since(self.cycle_stamp) > m);
        if self.pacing_gain == UNIT {
            // "just use wall clock time"
            return full_length;
        }
        let inflight = self.in_net_at_edt(self.packets(prior_in_flight));
        let bw = self.max_bw();
        if self.pacing_gain > UNIT {
            full_length && (lost || inflight >= self.inflight(bw, self.pacing_gain))
        } else {
            full_length || inflight <= self.inflight(bw, UNIT)
        }
    }

    /// `bbr_reset_probe_bw_mode`: PROBE_BW from a random phase other than
    /// the draining one (the phase before a random one of the other seven, then advanced).
    pub(super) fn reset_probe_bw_mode(&mut self) {
        self.set_mode(Mode::ProbeBw);
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`: back to STARTUP until the pipe was found full, else PROBE_BW.
    pub(super) fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.set_mode(Mode::Startup);
        }
    }
}
