//! BBR, version 1, as Linux 6.18's `net/ipv4/tcp_bbr.c` runs it: a model of
//! the path's bottleneck bandwidth and round-trip propagation time, from
//! which the sender sets its pacing rate and window.
//!
//! **Models:** `bbr_main` on every ACK: `bbr_update_model` then
//! `bbr_set_pacing_rate` and `bbr_set_cwnd`. The bandwidth estimate, the
//! windowed maximum of the delivery-rate samples over 10 round trips,
//! rounds counted by the delivered count (`bbr_update_bw`, [`max_filter`]),
//! application-limited samples kept only when they raise it; the minimum
//! RTT over 10 s, a sample no higher refreshing it (`bbr_update_min_rtt`);
//! the four modes ([`startup`], [`cycle`], [`probe_rtt`]) — STARTUP at a
//! gain of 2/ln 2 for pacing and window, DRAIN at its inverse once three
//! rounds grew the bandwidth by less than 25 % (`bbr_check_full_bw_reached`,
//! `bbr_check_drain`, which sets ssthresh), PROBE_BW's eight-phase
//! pacing-gain cycle from a random phase (`bbr_reset_probe_bw_mode`,
//! `bbr_is_next_cycle_phase`) and PROBE_RTT, a window of 4 packets for
//! 200 ms and a round once the minimum RTT is 10 s old, its samples marked
//! application-limited (`bbr_check_probe_rtt_done`); the long-term
//! (policer) bandwidth ([`lt_bw`]: two lossy intervals of consistent rate
//! make their average the estimate for 48 rounds); the window ([`cwnd`]):
//! twice the BDP plus the ACK-aggregation allowance
//! (`bbr_update_ack_aggregation`) plus three send quanta, rounded up to
//! even, grown by what each ACK delivered less what it found lost, at least
//! 4 packets (`bbr_set_cwnd`, `bbr_quantization_budget`,
//! `bbr_tso_segs_goal`), with packet conservation in the first round of
//! recovery and the window before it restored after
//! (`bbr_set_cwnd_to_recover_or_restore`, `bbr_save_cwnd`); the pacing rate
//! ([`pacing`]), the gain times the bandwidth less a 1 % margin, only
//! raised before the pipe is full, from the initial window over the first
//! RTT before any sample (`bbr_set_pacing_rate`,
//! `bbr_init_pacing_rate_from_rtt`), and the fewest segments of a paced
//! burst (`bbr_min_tso_segs`); a restart from idle while application-limited
//! pacing at the estimate (`bbr_cwnd_event`); an undo resetting full-pipe
//! detection and the long-term sampling (`bbr_undo_cwnd`); a timeout
//! resetting the full-bandwidth mark and ending a round (`bbr_set_state`).
//! The pacing itself, in bursts of `tcp_tso_autosize`'s size, is the
//! sender's (`tcp::pacing`).
//! **Deliberately different:** the window is counted in packets of the
//! sender's MSS and the rates in bytes per second, not Linux's scaled
//! packets per microsecond; the window Linux sets when a PROBE_RTT ends at
//! a transmit from idle is set at the next ACK; the data in the network at
//! the next departure (`bbr_packets_in_net_at_edt`) is the data in flight
//! (plus a quantum while probing), the pacer's departure time left out;
//! the handshake's RTT sample, or without one the first ACK's, stands for
//! the smoothed RTT at `bbr_init` (RFC 6298 (2.2) makes the first SRTT the
//! first sample); `is_ack_delayed` is never set; the timers of 10 s and
//! 200 ms run on the simulated clock, not in jiffies. The packets in flight before an ACK
//! (`rs->prior_in_flight`) and after it (`tcp_packets_in_flight`), and the
//! packets it newly marked lost (`rs->losses`, from `tp->lost`), are the
//! sender's count, as Linux keeps them (`tcp::delivery_rate`'s sample).
//! **Not modelled:** TCP Small Queues and the fq qdisc (see `tcp::pacing`);
//! the socket's window clamp and maximum pacing rate; BBRv2/v3.

pub mod cwnd;
pub mod cycle;
pub mod lt_bw;
mod max_filter;
pub mod pacing;
pub mod probe_rtt;
pub mod startup;
#[cfg(test)]
mod tests;

use super::{CaState, CongestionControl};
use crate::rng::Rng;
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};
use cwnd::{AckAggregation, TargetBdp};
use lt_bw::LtBw;
use max_filter::MaxFilter;
use std::num::NonZeroU64;

/// Gains are fixed point in 1/256ths (`BBR_UNIT`).
pub const UNIT: u64 = 256;
/// 2/ln(2), the smallest gain that doubles the sending rate each round (`bbr_high_gain`).
pub const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// Its inverse, to drain STARTUP's queue in a round (`bbr_drain_gain`).
pub const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW's window gain (`bbr_cwnd_gain`).
pub const CWND_GAIN: u64 = UNIT * 2;
/// Phases of PROBE_BW's gain cycle (`CYCLE_LEN`).
const CYCLE_LEN: usize = 8;
/// Rounds the bandwidth filter spans (`bbr_bw_rtts`: CYCLE_LEN + 2).
const BW_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// The smallest window, in packets (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u64 = 4;
/// The window before an RTT is known, and the delivered packets STARTUP grows by regardless (`TCP_INIT_CWND`).
const INIT_CWND: u64 = 10;
/// Picoseconds in a second.
const PS_PER_S: u128 = 1_000_000_000_000;

/// One sample of a BBR sender's state, as `TCP_CC_INFO` (`tcp_bbr_info`)
/// and `TCP_INFO` report it (the BBR trace, `stats::trace`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrSample {
    /// The mode's name.
    pub mode: &'static str,
    /// The bandwidth estimate, bytes per second.
    pub bw: u64,
    /// The minimum RTT estimate.
    pub min_rtt: Option<SimDuration>,
    /// The pacing and window gains, in 1/256ths.
    pub pacing_gain: u64,
    /// See `pacing_gain`.
    pub cwnd_gain: u64,
    /// The pacing rate, bytes per second.
    pub pacing_rate: u64,
    /// `tcpi_delivery_rate`, bytes per second.
    pub delivery_rate: Option<f64>,
    /// The window, in segments.
    pub cwnd_pkts: u64,
}

/// BBR's state machine (`enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up, doubling each round.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cruise at the estimate, probing for more bandwidth once every eight phases.
    ProbeBw,
    /// Cut the window to 4 packets to measure the propagation RTT.
    ProbeRtt,
}

impl Mode {
    /// The mode's name as the traces write it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// One sender's BBR state (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    /// The sender's MSS, never zero: the packet counts divide by it.
    mss: NonZeroU64,
    mode: Mode,
    /// Picks PROBE_BW's first phase.
    rng: Rng,
    /// Maximum delivery rate, bytes per second, over [`BW_ROUNDS`] rounds.
    bw: MaxFilter,
    /// Rounds counted (`rtt_cnt`), the delivered count ending this one
    /// (`next_rtt_delivered`), and whether this ACK started one.
    rounds: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<SimDuration>,
    /// When the minimum RTT's 10 s run out (`min_rtt_stamp` plus
    /// `bbr_min_rtt_win_sec`; never before the first sample).
    min_rtt_expiry: SimTime,
    /// When PROBE_RTT may end, and whether a round has passed since it started holding.
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    /// The loss-recovery state the sender last set, and the one before the latest ACK.
    state: CaState,
    prev_state: CaState,
    /// The window to restore after recovery or PROBE_RTT, in packets.
    prior_cwnd: u64,
    /// The window the last ACK set, in packets.
    cwnd: u64,
    /// Sending resumed from idle; cleared by the first ACK that delivers.
    idle_restart: bool,
    /// A PROBE_RTT ended at a transmit from idle: the next ACK restores the window.
    restore_pending: bool,
    /// The bandwidth of the last round that grew 25 %, rounds since, and the verdict.
    full_bw: u64,
    full_bw_rounds: u32,
    full_bw_reached: bool,
    /// PROBE_BW's phase and when it started (`cycle_mstamp`).
    cycle_idx: usize,
    cycle_stamp: SimTime,
    /// When data was last delivered (`tp->delivered_mstamp`), and the
    /// delivered and lost counts then, in bytes (`tp->delivered`, `tp->lost`).
    delivered_stamp: SimTime,
    delivered: u64,
    lost: u64,
    pacing_gain: u64,
    cwnd_gain: u64,
    /// The mode, PROBE_BW's phase or the use of the long-term rate moved
    /// since the gains were last worked out (`bbr_update_gains`).
    gains_moved: bool,
    /// Bytes per second (`sk_pacing_rate`), and the segments of a send
    /// quantum at that rate (`bbr_tso_segs_goal`), set with it; whether
    /// the rate moved since the sender last read it.
    pacing_rate: u64,
    quantum: u64,
    pacing_moved: bool,
    has_seen_rtt: bool,
    /// The slow-start threshold DRAIN sets, in packets (`None`: `TCP_INFINITE_SSTHRESH`).
    ssthresh: Option<u64>,
    /// The long-term (policer) bandwidth estimator.
    lt: LtBw,
    /// ACK aggregation (`extra_acked`).
    aggregation: AckAggregation,
    /// The window target's BDP and aggregation cap, as last worked out.
    target: TargetBdp,
}

impl Bbr {
    /// BBR for segments of `mss` bytes from an initial window of `init_cwnd`
    /// segments (`bbr_init`: STARTUP, paced at the high gain over a nominal 1 ms).
    pub fn new(mss: u64, init_cwnd: u32, rng: Rng) -> Self {
        let mut bbr = Bbr {
            mss: NonZeroU64::new(mss).unwrap_or(NonZeroU64::MIN),
            mode: Mode::Startup,
            rng,
            bw: MaxFilter::default(),
            rounds: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_expiry: SimTime::NEVER,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            state: CaState::Open,
            prev_state: CaState::Open,
            prior_cwnd: 0,
            cwnd: 0,
            idle_restart: false,
            restore_pending: false,
            full_bw: 0,
            full_bw_rounds: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            delivered_stamp: SimTime::ZERO,
            delivered: 0,
            lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            gains_moved: false,
            pacing_rate: 0,
            quantum: 0,
            pacing_moved: false,
            has_seen_rtt: false,
            ssthresh: None,
            lt: LtBw::default(),
            aggregation: AckAggregation::default(),
            target: TargetBdp::default(),
        };
        bbr.init_pacing_rate_from_rtt(u64::from(init_cwnd.max(1)), None);
        bbr
    }

    /// The mode it is in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate, bytes per second (`bbr_bw`: the long-term
    /// rate while policed, else the windowed maximum).
    pub fn bw(&self) -> u64 {
        if self.lt.in_use() {
            self.lt.bw()
        } else {
            self.max_bw()
        }
    }

    /// The windowed maximum delivery rate, bytes per second (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The minimum RTT of the last 10 s, once sampled.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// Bytes marked lost so far, as the last ACK reported them (`tp->lost`).
    #[cfg(test)]
    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    /// The pacing gain now, in 1/256ths (`bbr_pacing_gain` in `tcp_bbr_info`).
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// The window gain now, in 1/256ths (`bbr_cwnd_gain`).
    pub fn cwnd_gain(&self) -> u64 {
        self.cwnd_gain
    }

    /// Packets, rounded up, in `bytes`.
    fn packets(&self, bytes: u64) -> u64 {
        bytes / self.mss + u64::from(bytes % self.mss != 0)
    }

    /// The packets in flight after the ACK of `rs` (`tcp_packets_in_flight`).
    fn inflight_after(&self, rs: &RateSample) -> u64 {
        self.packets(rs.in_flight)
    }

    /// `bbr_update_bw`: a round starts when the ACK delivered data sent
    /// after the previous round's start; the long-term sampler sees the
    /// sample; a valid one enters the filter unless it is
    /// application-limited and below the estimate.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.interval == SimDuration::ZERO {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses > 0, rs.app_limited);
        let bw = match rs.delivered.checked_mul(PS_PER_S as u64) {
            Some(scaled) => scaled / rs.interval.as_ps(),
            None => (u128::from(rs.delivered) * PS_PER_S / u128::from(rs.interval.as_ps())) as u64,
        };
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw.update(BW_ROUNDS, self.rounds, bw);
        }
    }

    /// Enter `mode`; the gains follow at the ACK's end.
    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        self.gains_moved = true;
    }

    /// `bbr_update_gains`: the pacing and window gains of the mode (PROBE_BW
    /// cruises at 1.0 while the long-term rate is in use), worked out again
    /// only when the mode, the phase or the use of the long-term rate moved.
    fn update_gains(&mut self) {
        if !std::mem::take(&mut self.gains_moved) {
            return;
        }
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt.in_use() => (UNIT, CWND_GAIN),
            Mode::ProbeBw => (cycle::PACING_GAIN[self.cycle_idx % CYCLE_LEN], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }
}

impl CongestionControl for Bbr {
    fn cong_avoid(&mut self, cwnd: u64, _acked: u64, _now: SimTime, _srtt: SimDuration) -> u64 {
        cwnd
    }

    /// `bbr_ssthresh`: saves the window; ssthresh stays what it was
    /// (infinite, or what DRAIN set).
    fn ssthresh(&mut self, cwnd: u64, _flight: u64) -> u64 {
        self.save_cwnd(self.packets(cwnd));
        self.ssthresh.map_or(u64::MAX, |s| s * self.mss.get())
    }

    /// `bbr_init`: the minimum RTT is the handshake's, and the pacing rate
    /// the initial window over it (`bbr_init_pacing_rate_from_rtt`, `srtt_us` set).
    fn on_init(&mut self, now: SimTime, rtt: SimDuration, cwnd: u64) {
        self.min_rtt = Some(rtt);
        self.min_rtt_expiry = now + probe_rtt::MIN_RTT_WINDOW;
        self.aggregation.start_epoch(now);
        self.init_pacing_rate_from_rtt(self.packets(cwnd), Some(rtt));
    }

    /// A timeout marked `lost` bytes lost (`tcp_timeout_mark_lost`).
    fn on_timeout(&mut self, lost: u64) {
        self.lost += lost;
    }

    /// `bbr_set_state`: a timeout's loss state forgets the full-bandwidth
    /// mark, ends a round and counts as a loss for the long-term sampler;
    /// the next exit from it restores the window.
    fn set_state(&mut self, state: CaState) {
        self.state = state;
        if state == CaState::Loss {
            self.prev_state = CaState::Loss;
            self.full_bw = 0;
            // "treat RTO like end of a round"
            self.round_start = true;
            self.lt_bw_sampling(true, false);
        }
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending resumes from idle; when
    /// application-limited, PROBE_BW paces at the estimate and PROBE_RTT may
    /// be past its end.
    fn on_tx_start(&mut self, now: SimTime, _last_send: Option<SimTime>, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.aggregation.start_epoch(now);
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), UNIT, 0, None),
            Mode::ProbeRtt => {
                let mut cwnd = 0;
                self.check_probe_rtt_done(now, &mut cwnd);
                self.restore_pending = cwnd > 0;
            }
            Mode::Startup | Mode::Drain => {}
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`: the model from the sample (`bbr_update_model`), then the
    /// pacing rate and the window.
    fn cong_control(&mut self, rs: &RateSample, cwnd: u64) -> u64 {
        // Unless the sender changed it since, the window is the one the last ACK set: no division.
        let mut cwnd = if cwnd == self.cwnd * self.mss.get() { self.cwnd } else { self.packets(cwnd) };
        if self.restore_pending {
            self.restore_pending = false;
            cwnd = cwnd.max(self.prior_cwnd);
        }
        if rs.acked_sacked > 0 {
            self.delivered_stamp = rs.delivered_time;
        }
        (self.delivered, self.lost) = (rs.total_delivered, rs.total_lost);
        let acked = self.packets(rs.acked_sacked);
        self.update_bw(rs);
        // The estimate stays what the sample made it until the next ACK.
        let bw = self.bw();
        self.update_ack_aggregation(rs, acked, bw, cwnd);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs.prior_in_flight, rs.losses > 0) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        self.update_min_rtt(rs, &mut cwnd);
        self.update_gains();
        self.set_pacing_rate(bw, self.pacing_gain, cwnd, rs.rtt);
        self.cwnd = self.set_cwnd(rs, acked, bw, cwnd);
        self.cwnd * self.mss.get()
    }

    /// `bbr_undo_cwnd`: a spurious slow-down resets full-pipe detection and
    /// the long-term sampling; the window stays.
    fn undo_cwnd(&mut self, cwnd: u64, _prior: u64) -> u64 {
        self.full_bw = 0;
        self.full_bw_rounds = 0;
        self.reset_lt_bw_sampling();
        cwnd
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    /// The rate moves only where it is stored (`store_pacing_rate`).
    fn take_pacing_moved(&mut self) -> bool {
        std::mem::take(&mut self.pacing_moved)
    }

    /// PROBE_RTT's samples are application-limited (`bbr_update_min_rtt`).
    fn marks_app_limited(&self) -> bool {
        self.mode == Mode::ProbeRtt
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(&self) -> u32 {
        self.min_tso_segs_now()
    }
}
