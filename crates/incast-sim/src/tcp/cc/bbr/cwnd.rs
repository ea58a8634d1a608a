//! BBR's window (Linux `bbr_set_cwnd`, `bbr_set_cwnd_to_recover_or_restore`,
//! `bbr_bdp`, `bbr_quantization_budget`, `bbr_update_ack_aggregation`).
//!
//! **Models:** the target, the gain times the BDP (rounded up, "to avoid a
//! negative feedback loop"; the initial window before an RTT is known),
//! plus, once the pipe is full, the most data ACKed beyond the estimate's
//! expectation in an epoch of the last 5 to 10 rounds (at most 100 ms of
//! the estimate, and the window), plus three send quanta, rounded up to
//! even, two more in PROBE_BW's probing phase; the window grows toward it
//! by what each ACK delivered, snaps down to it once the pipe is full, and
//! is at least 4 packets (at most 4 in PROBE_RTT); each ACK first takes
//! off what it found lost (`rs->losses`); the first round of recovery
//! conserves packets (the flight plus what the ACK delivered), and leaving
//! recovery or the loss state restores the window saved at its start.
//! **Deliberately different:** packets of the sender's MSS, rounded up.
//! **Not modelled:** `snd_cwnd_clamp`.

use super::{Bbr, Mode, CWND_MIN_TARGET, INIT_CWND, PS_PER_S, UNIT};
use crate::tcp::cc::CaState;
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};

/// Rounds of each of the two halves of the aggregation filter (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Packets an epoch counts before it starts again (`bbr_ack_epoch_acked_reset_thresh`).
const EPOCH_ACKED_RESET: u64 = 1 << 20;
/// The aggregation allowance is at most this much of the estimate (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX: SimDuration = SimDuration::from_millis(100);

/// ACK aggregation: packets ACKed beyond what the estimate expects in the
/// current epoch, and the most of it in each half of the filter.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckAggregation {
    epoch_start: SimTime,
    epoch_acked: u64,
    extra_acked: [u64; 2],
    win_rounds: u32,
    /// The half of the filter taking samples (`extra_acked_win_idx`).
    win_idx: bool,
}

impl AckAggregation {
    /// A new epoch from `now` (`bbr_init`, and a transmit from idle in `bbr_cwnd_event`).
    pub fn start_epoch(&mut self, now: SimTime) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// `bbr_extra_acked`: the larger half of the filter, in packets.
    pub fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }
}

/// The BDP at the window's gain and the aggregation cap
/// ([`Bbr::target_bdp`]), with the bandwidth, gain and minimum RTT they
/// were worked out from (none yet while the gain is 0, which no mode sets).
#[derive(Clone, Copy, Debug, Default)]
pub struct TargetBdp {
    inputs: (u64, u64, Option<SimDuration>),
    bdp: u64,
    aggregation_cap: u64,
}

/// Whole packets of `mss` bytes that `bw` bytes a second deliver in `t`.
fn packets_in(bw: u64, t: SimDuration, mss: u64) -> u64 {
    match bw.checked_mul(t.as_ps()) {
        Some(bytes) => bytes / (PS_PER_S as u64 * mss),
        None => (u128::from(bw) * u128::from(t.as_ps()) / (PS_PER_S * u128::from(mss))) as u64,
    }
}

impl Bbr {
    /// `bbr_bdp`: `gain` times the bandwidth-delay product of `bw`, in whole
    /// packets rounded up; the initial window before an RTT is known.
    pub(super) fn bdp(&self, bw: u64, gain: u64) -> u64 {
        let Some(min_rtt) = self.min_rtt else { return INIT_CWND };
        let per_packet = UNIT * PS_PER_S as u64 * self.mss.get();
        match bw.checked_mul(min_rtt.as_ps()).and_then(|w| w.checked_mul(gain)) {
            // "round the value up to avoid a negative feedback loop"
            Some(bytes) => bytes.div_ceil(per_packet),
            None => {
                let bytes = u128::from(bw) * u128::from(min_rtt.as_ps()) * u128::from(gain);
                bytes.div_ceil(u128::from(per_packet)).min(u128::from(u64::MAX)) as u64
            }
        }
    }

    /// `bbr_quantization_budget`: room for three send quanta ("one skb in
    /// sending host Qdisc, one skb in sending host TSO/GSO engine, one skb
    /// being received by receiver host LRO/GRO/delayed-ACK engine"),
    /// rounded up to an even count ("Reduce delayed ACKs"), two more in
    /// PROBE_BW's probing phase ("gain cycling gets inflight above BDP even for small BDPs").
    pub(super) fn quantization_budget(&self, cwnd: u64) -> u64 {
        let cwnd = (cwnd + 3 * self.quantum + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd + 2
        } else {
            cwnd
        }
    }

    /// `bbr_inflight`: the data in flight `gain` times the BDP of `bw` calls for, in packets.
    pub(super) fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_update_ack_aggregation`: an ACK of `acked` packets with the
    /// estimate at `bw` and the window at `cwnd` packets.
    pub(super) fn update_ack_aggregation(&mut self, rs: &RateSample, acked: u64, bw: u64, cwnd: u64) {
        if acked == 0 || rs.interval == SimDuration::ZERO {
            return;
        }
        let agg = &mut self.aggregation;
        if self.round_start {
            agg.win_rounds = (agg.win_rounds + 1).min(0x1f);
            if agg.win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                agg.win_rounds = 0;
                agg.win_idx = !agg.win_idx;
                agg.extra_acked[usize::from(agg.win_idx)] = 0;
            }
        }
        let epoch = self.delivered_stamp.since(agg.epoch_start);
        let mut expected = packets_in(bw, epoch, self.mss.get());
        // "Reset the aggregation epoch if ACK rate is below expected rate or
        // significantly large no. of ack received since epoch"
        if agg.epoch_acked <= expected || agg.epoch_acked + acked >= EPOCH_ACKED_RESET {
            agg.epoch_acked = 0;
            agg.epoch_start = self.delivered_stamp;
            expected = 0;
        }
        agg.epoch_acked = (agg.epoch_acked + acked).min(EPOCH_ACKED_RESET - 1);
        let extra = (agg.epoch_acked - expected).min(cwnd);
        let half = &mut agg.extra_acked[usize::from(agg.win_idx)];
        *half = (*half).max(extra);
    }

    /// `bbr_bdp` of `bw` at the window's gain, and 100 ms of `bw`, the cap
    /// of the aggregation allowance, in packets: worked out again only when
    /// the bandwidth, the gain or the minimum RTT moved since the last ACK.
    fn target_bdp(&mut self, bw: u64) -> (u64, u64) {
        let inputs = (bw, self.cwnd_gain, self.min_rtt);
        if self.target.inputs != inputs {
            let (bdp, cap) = (self.bdp(bw, self.cwnd_gain), packets_in(bw, EXTRA_ACKED_MAX, self.mss.get()));
            self.target = TargetBdp { inputs, bdp, aggregation_cap: cap };
        }
        (self.target.bdp, self.target.aggregation_cap)
    }

    /// `bbr_save_cwnd`: the window of `cwnd` packets to restore later,
    /// the larger of it and the saved one while recovery or PROBE_RTT have cut it.
    pub(super) fn save_cwnd(&mut self, cwnd: u64) {
        self.prior_cwnd = if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the ACK's losses come off the
    /// window (at least 1); entering recovery, the window drops to the
    /// flight plus what the ACK delivered and packet conservation holds for
    /// a round (the round restarts now); leaving recovery or a timeout's
    /// loss state restores the saved window. True while packet
    /// conservation holds, `cwnd` then being its window.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u64, cwnd: &mut u64) -> bool {
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(self.packets(rs.losses)).max(1);
        }
        let (prev, state) = (self.prev_state, self.state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // "Starting 1st round of Recovery, so do packet conservation."
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.total_delivered;
            *cwnd = self.inflight_after(rs) + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // "Exiting loss recovery; restore cwnd saved before recovery."
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(self.inflight_after(rs) + acked);
        }
        self.packet_conservation
    }

    /// `bbr_set_cwnd`: toward the target by what the ACK delivered
    /// (`acked` packets), cut to it once the pipe is full; at least 4
    /// packets, at most 4 in PROBE_RTT.
    pub(super) fn set_cwnd(&mut self, rs: &RateSample, acked: u64, bw: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd;
        if acked > 0 && !self.recover_or_restore(rs, acked, &mut cwnd) {
            let (bdp, aggregation_cap) = self.target_bdp(bw);
            // bbr_ack_aggregation_cwnd: the aggregation allowance once the pipe is full.
            let aggregation =
                if self.full_bw_reached { self.aggregation.extra_acked().min(aggregation_cap) } else { 0 };
            let target = self.quantization_budget(bdp + aggregation);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || rs.total_delivered < INIT_CWND * self.mss.get() {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        if self.mode == Mode::ProbeRtt {
            // "drain queue, refresh min_rtt"
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }
}
