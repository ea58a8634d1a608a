//! BBR, version 1, as Linux 6.18's `net/ipv4/tcp_bbr.c` runs it: a model of
//! the path's bottleneck bandwidth and round-trip propagation time, from
//! which the sender sets its pacing rate and window.
//!
//! **Models:** the bandwidth estimate, the windowed maximum of the
//! delivery-rate samples over 10 round trips, rounds counted by the
//! delivered count (`bbr_update_bw`, [`max_filter`]), application-limited
//! samples kept only when they raise it; the minimum RTT over 10 s
//! (`bbr_update_min_rtt`); the four modes — STARTUP at a gain of 2/ln 2 for
//! pacing and window, DRAIN at its inverse once three rounds grew the
//! bandwidth by less than 25 % (`bbr_check_full_bw_reached`,
//! `bbr_check_drain`), PROBE_BW's eight-phase pacing-gain cycle from a
//! random phase (`bbr_reset_probe_bw_mode`, `bbr_update_cycle_phase`) and
//! PROBE_RTT, a window of 4 packets for 200 ms and a round once the
//! minimum RTT is 10 s old, its samples marked application-limited
//! (`bbr_check_probe_rtt_done`); the window, twice the BDP plus three send
//! quanta, rounded up to even, grown by what each ACK delivered, at least 4
//! packets (`bbr_set_cwnd`, `bbr_target_cwnd`, `bbr_quantization_budget`,
//! `bbr_tso_segs_goal`), with packet conservation in the first round of
//! recovery and the window before it restored after (`bbr_set_cwnd_to_recover_or_restore`,
//! `bbr_save_cwnd`); the pacing rate, the gain times the bandwidth less a 1 %
//! margin, only raised before the pipe is full, from the initial window over
//! the first RTT before any sample (`bbr_set_pacing_rate`,
//! `bbr_init_pacing_rate_from_rtt`); a restart from idle pacing at the
//! estimate (`bbr_cwnd_event`); an undo resetting full-pipe detection
//! (`bbr_undo_cwnd`); a timeout resetting the full-bandwidth mark (`bbr_set_state`).
//! **Deliberately different:** the window is counted in packets of the
//! sender's MSS and the rates in bytes per second, not Linux's scaled
//! packets per microsecond; the window Linux sets when a PROBE_RTT ends at
//! a transmit from idle is set at the next ACK; the data in the network at
//! the next departure (`bbr_packets_in_net_at_edt`) is the data in flight
//! (plus a quantum while probing), the pacer's departure time left out;
//! the packets in flight after an ACK are those before it less what it
//! delivered (Linux also leaves out those marked lost); the handshake's
//! RTT sample, or without one the first ACK's, stands for the smoothed RTT
//! at `bbr_init` (RFC 6298 (2.2) makes the first SRTT the first sample);
//! `is_ack_delayed` is never set; ssthresh stays infinite.
//! **Not modelled:** the long-term (policer) bandwidth mode
//! (`bbr_lt_bw_sampling`) and the per-ACK loss counts it and the window's
//! loss deduction read (`rs->losses`, which the rate sample does not carry);
//! ACK-aggregation headroom (`bbr_update_ack_aggregation`); the socket's
//! window clamp and maximum pacing rate.

mod max_filter;
#[cfg(test)]
mod tests;

use super::{CaState, CongestionControl};
use crate::rng::Rng;
use crate::tcp::delivery_rate::RateSample;
use crate::time::{SimDuration, SimTime};
use max_filter::MaxFilter;

/// Gains are fixed point in 1/256ths (`BBR_UNIT`).
const UNIT: u64 = 256;
/// 2/ln(2), the smallest gain that doubles the sending rate each round (`bbr_high_gain`).
const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// Its inverse, to drain STARTUP's queue in a round (`bbr_drain_gain`).
const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW's window gain (`bbr_cwnd_gain`).
const CWND_GAIN: u64 = UNIT * 2;
/// PROBE_BW's pacing gains, one phase a minimum RTT (`bbr_pacing_gain`).
const PACING_GAIN: [u64; CYCLE_LEN] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
const CYCLE_LEN: usize = 8;
/// PROBE_BW starts in one of this many phases, never the draining one (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Rounds the bandwidth filter spans (`bbr_bw_rtts`: CYCLE_LEN + 2).
const BW_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// Age at which the minimum RTT is probed again (`bbr_min_rtt_win_sec`).
const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(10);
/// Time PROBE_RTT holds the small window (`bbr_probe_rtt_mode_ms`).
const PROBE_RTT_TIME: SimDuration = SimDuration::from_millis(200);
/// The smallest window, in packets (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u64 = 4;
/// Growth that counts as the pipe still filling (`bbr_full_bw_thresh`) ...
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
/// ... and the rounds without it that mark it full (`bbr_full_bw_cnt`).
const FULL_BW_ROUNDS: u32 = 3;
/// The pacing rate's margin below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this rate (1.2 Mbit/s) a send quantum is one segment, else two (`bbr_min_tso_rate`).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// A quantum holds about 1 ms of the pacing rate (`sk_pacing_shift`, 10) ...
const PACING_SHIFT: u32 = 10;
/// ... at most a legacy GSO packet less the headers (`GSO_LEGACY_MAX_SIZE - 1 -
/// MAX_TCP_HEADER`, 320 on x86-64) ...
const QUANTUM_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// ... and 127 segments.
const QUANTUM_MAX_SEGS: u64 = 0x7f;
/// The window before an RTT is known, and the delivered packets STARTUP grows by regardless (`TCP_INIT_CWND`).
const INIT_CWND: u64 = 10;
/// The RTT the initial pacing rate assumes before a sample (`bbr_init_pacing_rate_from_rtt`).
const NOMINAL_RTT: SimDuration = SimDuration::from_millis(1);

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

/// One sender's BBR state (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    mss: u64,
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
    min_rtt_stamp: Option<SimTime>,
    /// When PROBE_RTT may end, and whether a round has passed since it started holding.
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    /// The loss-recovery state the sender last set, and the one before the latest ACK.
    state: CaState,
    prev_state: CaState,
    /// The window to restore after recovery or PROBE_RTT, in packets.
    prior_cwnd: u64,
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
    /// When data was last delivered (`tp->delivered_mstamp`).
    delivered_stamp: SimTime,
    pacing_gain: u64,
    cwnd_gain: u64,
    /// Bytes per second (`sk_pacing_rate`).
    pacing_rate: u64,
    has_seen_rtt: bool,
}

impl Bbr {
    /// BBR for segments of `mss` bytes from an initial window of `init_cwnd`
    /// segments (`bbr_init`: STARTUP, paced at the high gain over a nominal 1 ms).
    pub fn new(mss: u64, init_cwnd: u32, rng: Rng) -> Self {
        let mut bbr = Bbr {
            mss: mss.max(1),
            mode: Mode::Startup,
            rng,
            bw: MaxFilter::default(),
            rounds: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            state: CaState::Open,
            prev_state: CaState::Open,
            prior_cwnd: 0,
            idle_restart: false,
            restore_pending: false,
            full_bw: 0,
            full_bw_rounds: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            delivered_stamp: SimTime::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: 0,
            has_seen_rtt: false,
        };
        bbr.init_pacing_rate_from_rtt(u64::from(init_cwnd.max(1)), None);
        bbr
    }

    /// The mode it is in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate, bytes per second (`bbr_max_bw`; `bbr_bw` without the long-term mode).
    pub fn bw(&self) -> u64 {
        self.bw.get()
    }

    /// The minimum RTT of the last 10 s, once sampled.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// PROBE_BW's pacing gain now, in 1/256ths.
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// Packets, rounded up, in `bytes`.
    fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }

    /// `bbr_rate_bytes_per_sec` and `bbr_bw_to_pacing_rate`: `bw` times `gain`, less the margin.
    fn pacing_rate_for(bw: u64, gain: u64) -> u64 {
        let rate = u128::from(bw) * u128::from(gain) / u128::from(UNIT);
        (rate * u128::from(100 - PACING_MARGIN_PERCENT) / 100).min(u128::from(u64::MAX)) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: `cwnd` packets over the RTT (1 ms
    /// before one is known) at the high gain.
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, srtt: Option<SimDuration>) {
        self.has_seen_rtt = srtt.is_some();
        let rtt = srtt.filter(|r| *r > SimDuration::ZERO).unwrap_or(NOMINAL_RTT);
        let bw = u128::from(cwnd * self.mss) * 1_000_000_000_000 / u128::from(rtt.as_ps());
        self.pacing_rate = Self::pacing_rate_for(bw.min(u128::from(u64::MAX)) as u64, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: the rate of `gain` times `bw`, taken when the
    /// pipe is full or it is higher; the first RTT sample restarts it from
    /// the window of `cwnd` packets.
    fn set_pacing_rate(&mut self, bw: u64, gain: u64, cwnd: u64, rtt: Option<SimDuration>) {
        let rate = Self::pacing_rate_for(bw, gain);
        if !self.has_seen_rtt && rtt.is_some() {
            self.init_pacing_rate_from_rtt(cwnd, rtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: segments a send quantum holds, about 1 ms of the
    /// pacing rate, at least 1 below 1.2 Mbit/s and 2 above (`bbr_min_tso_segs`).
    fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(QUANTUM_MAX_BYTES);
        (bytes / self.mss).max(u64::from(self.min_tso_segs_now())).min(QUANTUM_MAX_SEGS)
    }

    /// `bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2.
    fn min_tso_segs_now(&self) -> u32 {
        if self.pacing_rate < MIN_TSO_RATE {
            1
        } else {
            2
        }
    }

    /// `bbr_bdp`: `gain` times the bandwidth-delay product of `bw`, in whole
    /// packets rounded up; the initial window before an RTT is known.
    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        let Some(min_rtt) = self.min_rtt else { return INIT_CWND };
        let bytes = u128::from(bw) * u128::from(min_rtt.as_ps()) * u128::from(gain);
        let per_packet = u128::from(UNIT) * 1_000_000_000_000 * u128::from(self.mss);
        bytes.div_ceil(per_packet).min(u128::from(u64::MAX)) as u64
    }

    /// `bbr_quantization_budget`: room for three send quanta, rounded up to
    /// an even count ("Reduce delayed ACKs"), two more in PROBE_BW's probing
    /// phase ("gain cycling gets inflight above BDP even for small BDPs").
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let cwnd = (cwnd + 3 * self.tso_segs_goal() + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd + 2
        } else {
            cwnd
        }
    }

    /// `bbr_inflight`: the data in flight `gain` times the BDP of `bw` calls for, in packets.
    fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: `inflight` packets, plus the quantum
    /// about to leave when the gain raises the flight.
    fn in_net_at_edt(&self, inflight: u64) -> u64 {
        if self.pacing_gain > UNIT {
            inflight + self.tso_segs_goal()
        } else {
            inflight
        }
    }

    /// `bbr_update_bw`: a round starts when the ACK delivered data sent
    /// after the previous round's start; a valid sample enters the filter
    /// unless it is application-limited and below the estimate.
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
        let bw = (u128::from(rs.delivered) * 1_000_000_000_000 / u128::from(rs.interval.as_ps())) as u64;
        if !rs.app_limited || bw >= self.bw() {
            self.bw.update(BW_ROUNDS, self.rounds, bw);
        }
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.delivered_stamp;
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts a minimum RTT; probing
    /// (gain above 1) lasts until the flight reaches its gain times the
    /// BDP, draining (below 1) at most until it falls to the BDP.
    fn is_next_cycle_phase(&self, prior_inflight: u64) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| self.delivered_stamp.since(self.cycle_stamp) > m);
        if self.pacing_gain == UNIT {
            return full_length;
        }
        let inflight = self.in_net_at_edt(prior_inflight);
        let bw = self.bw();
        if self.pacing_gain > UNIT {
            full_length && inflight >= self.inflight(bw, self.pacing_gain)
        } else {
            full_length || inflight <= self.inflight(bw, UNIT)
        }
    }

    /// `bbr_reset_probe_bw_mode`: PROBE_BW from a random phase other than
    /// the draining one (the phase before a random one of the other seven, then advanced).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`: back to STARTUP until the pipe was found full, else PROBE_BW.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_full_bw_reached`: at each round start of a sample not
    /// application-limited, the pipe is full once three rounds in a row
    /// failed to grow the estimate by 25 %.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        if u128::from(self.bw()) * u128::from(UNIT) >= u128::from(self.full_bw) * u128::from(FULL_BW_THRESH) {
            self.full_bw = self.bw();
            self.full_bw_rounds = 0;
            return;
        }
        self.full_bw_rounds += 1;
        self.full_bw_reached = self.full_bw_rounds >= FULL_BW_ROUNDS;
    }

    /// `bbr_check_drain`: a full pipe ends STARTUP; DRAIN ends once the
    /// `inflight` packets fit the BDP.
    fn check_drain(&mut self, inflight: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && self.in_net_at_edt(inflight) <= self.inflight(self.bw(), UNIT) {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_save_cwnd`: the window of `cwnd` packets to restore later,
    /// the larger of it and the saved one while recovery or PROBE_RTT have cut it.
    fn save_cwnd(&mut self, cwnd: u64) {
        self.prior_cwnd = if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// `bbr_check_probe_rtt_done`: past its end, PROBE_RTT restores the
    /// window (`cwnd`, packets) and leaves; the minimum RTT counts as fresh.
    fn check_probe_rtt_done(&mut self, now: SimTime, cwnd: &mut u64) {
        if !self.probe_rtt_done.is_some_and(|done| now > done) {
            return;
        }
        self.min_rtt_stamp = Some(now);
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: a lower sample, or any once the minimum is 10 s
    /// old, replaces it; an old minimum (not while restarting from idle)
    /// starts PROBE_RTT, which holds until 200 ms and a round have passed
    /// with at most 4 packets in flight (`inflight`).
    fn update_min_rtt(&mut self, rs: &RateSample, inflight: u64, cwnd: &mut u64) {
        let now = rs.now;
        let expired = self.min_rtt_stamp.is_some_and(|s| now > s + MIN_RTT_WINDOW);
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.map_or(true, |m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = Some(now);
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            if self.probe_rtt_done.is_none() && inflight <= CWND_MIN_TARGET {
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
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`: the pacing and window gains of the mode.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: entering recovery, the window
    /// drops to the flight plus what the ACK delivered and packet
    /// conservation holds for a round (the round restarts now); leaving
    /// recovery or a timeout's loss state restores the saved window.
    /// True while packet conservation holds, `cwnd` then being its window.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u64, inflight: u64, cwnd: &mut u64) -> bool {
        let (prev, state) = (self.prev_state, self.state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.total_delivered;
            *cwnd = inflight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(inflight + acked);
        }
        self.packet_conservation
    }

    /// `bbr_set_cwnd`: toward the target — `gain` times the BDP of `bw` plus
    /// the quantization budget — by what the ACK delivered (`acked`
    /// packets), cut to it once the pipe is full; at least 4 packets, at
    /// most 4 in PROBE_RTT.
    fn set_cwnd(&mut self, rs: &RateSample, acked: u64, inflight: u64, bw: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd;
        if acked > 0 && !self.recover_or_restore(rs, acked, inflight, &mut cwnd) {
            let target = self.quantization_budget(self.bdp(bw, self.cwnd_gain));
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || rs.total_delivered < INIT_CWND * self.mss {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }
}

impl CongestionControl for Bbr {
    fn cong_avoid(&mut self, cwnd: u64, _acked: u64, _now: SimTime, _srtt: SimDuration) -> u64 {
        cwnd
    }

    /// `bbr_ssthresh`: saves the window; ssthresh stays infinite (`TCP_INFINITE_SSTHRESH`).
    fn ssthresh(&mut self, cwnd: u64, _flight: u64) -> u64 {
        self.save_cwnd(self.packets(cwnd));
        u64::MAX
    }

    /// `bbr_init`: the minimum RTT is the handshake's, and the pacing rate
    /// the initial window over it (`bbr_init_pacing_rate_from_rtt`, `srtt_us` set).
    fn on_init(&mut self, now: SimTime, rtt: SimDuration, cwnd: u64) {
        self.min_rtt = Some(rtt);
        self.min_rtt_stamp = Some(now);
        self.init_pacing_rate_from_rtt(self.packets(cwnd), Some(rtt));
    }

    /// `bbr_set_state`: a timeout's loss state ends the full-bandwidth
    /// mark; the next exit from it restores the window.
    fn set_state(&mut self, state: CaState) {
        self.state = state;
        if state == CaState::Loss {
            self.prev_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
        }
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending resumes from idle; in
    /// PROBE_BW at the estimate, in PROBE_RTT perhaps past its end.
    fn on_tx_start(&mut self, now: SimTime, _last_send: Option<SimTime>) {
        self.idle_restart = true;
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
        let mut cwnd = self.packets(cwnd);
        if std::mem::take(&mut self.restore_pending) {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        if rs.acked_sacked > 0 {
            self.delivered_stamp = rs.delivered_time;
        }
        let acked = self.packets(rs.acked_sacked);
        let prior_inflight = self.packets(rs.prior_in_flight);
        let inflight = self.packets(rs.prior_in_flight.saturating_sub(rs.acked_sacked));
        self.update_bw(rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(prior_inflight) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(rs);
        self.check_drain(inflight);
        self.update_min_rtt(rs, inflight, &mut cwnd);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, cwnd, rs.rtt);
        self.set_cwnd(rs, acked, inflight, bw, cwnd) * self.mss
    }

    /// `bbr_undo_cwnd`: a spurious slow-down resets full-pipe detection; the window stays.
    fn undo_cwnd(&mut self, cwnd: u64, _prior: u64) -> u64 {
        self.full_bw = 0;
        self.full_bw_rounds = 0;
        cwnd
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(&self) -> u32 {
        self.min_tso_segs_now()
    }

    /// PROBE_RTT's samples are application-limited (`bbr_update_min_rtt`).
    fn marks_app_limited(&self) -> bool {
        self.mode == Mode::ProbeRtt
    }
}
