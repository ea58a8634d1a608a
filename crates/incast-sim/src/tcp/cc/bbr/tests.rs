//! BBR's rules one at a time, from scripted rate samples: a path that
//! delivers at a set rate, an ACK per packet, the flight at the window
//! BBR set (each test named after the kernel function it checks).

use super::cycle::PACING_GAIN;
use super::probe_rtt::PROBE_RTT_TIME;
use super::*;

const MSS: u64 = 1000;

fn bbr(seed: u64) -> Bbr {
    Bbr::new(MSS, 10, Rng::substream(seed, "bbr-test"))
}

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// A path delivering the window BBR sets, one ACK a packet: the window's
/// packets of a round are ACKed evenly over the RTT, or at the path's rate
/// when the window holds more than the path's BDP (the rest queues), each
/// sample rating the round's deliveries at the path's rate.
struct Path {
    now: SimTime,
    delivered: u64,
    cwnd: u64,
    /// Bytes newly lost on the next ACK, and all lost so far.
    losses: u64,
    lost: u64,
    /// ACKs of a round come all at its end (an aggregating receiver or link).
    aggregated: bool,
    /// When each PROBE_BW phase began, and which.
    phases: Vec<(SimTime, usize)>,
}

impl Path {
    fn new() -> Self {
        Path {
            now: SimTime::ZERO,
            delivered: 0,
            cwnd: 10 * MSS,
            losses: 0,
            lost: 0,
            aggregated: false,
            phases: Vec::new(),
        }
    }

    /// One round trip of `rtt` at `rate` bytes a second, the flight being
    /// `flight` bytes (the window when `None`); `app_limited` samples.
    fn round_with(&mut self, b: &mut Bbr, rate: u64, rtt: SimDuration, flight: Option<u64>, app_limited: bool) {
        let flight = flight.unwrap_or(self.cwnd).max(MSS);
        let packets = flight / MSS;
        let sent_at_delivered = self.delivered;
        let interval = SimDuration(u64::try_from(u128::from(flight) * 1_000_000_000_000 / u128::from(rate)).unwrap());
        let gap = SimDuration((rtt.as_ps() / packets).max(MSS * 1_000_000_000_000 / rate));
        for k in 0..packets {
            self.now += match (self.aggregated, k) {
                (false, _) => gap,
                (true, 0) => SimDuration(gap.as_ps() * packets),
                (true, _) => SimDuration::ZERO,
            };
            self.lost += self.losses;
            self.delivered += MSS;
            let rs = RateSample {
                delivered: flight,
                interval,
                app_limited,
                acked_sacked: MSS,
                prior_in_flight: flight,
                in_flight: flight - MSS,
                rtt: Some(rtt),
                prior_delivered: sent_at_delivered,
                total_delivered: self.delivered,
                delivered_time: self.now,
                now: self.now,
                losses: std::mem::take(&mut self.losses),
                total_lost: self.lost,
            };
            self.cwnd = b.cong_control(&rs, self.cwnd);
            if b.mode() == Mode::ProbeBw && self.phases.last().map_or(true, |&(_, i)| i != b.cycle_idx) {
                self.phases.push((self.now, b.cycle_idx));
            }
        }
    }

    fn round(&mut self, b: &mut Bbr, rate: u64, rtt: SimDuration) {
        self.round_with(b, rate, rtt, None, false);
    }

    /// Rounds at `rate` until BBR is in PROBE_BW.
    fn run_until_probe_bw(&mut self, b: &mut Bbr, rate: u64, rtt: SimDuration) {
        for _ in 0..50 {
            if b.mode() == Mode::ProbeBw {
                return;
            }
            self.round(b, rate, rtt);
        }
        panic!("still in {:?}", b.mode());
    }
}

/// 10 MB/s with a 10 ms RTT: a BDP of 100 packets.
const RATE: u64 = 10_000_000;

/// `bbr_init` / `bbr_init_pacing_rate_from_rtt`: STARTUP paces the initial
/// window over a nominal 1 ms at 2/ln 2 (739/256), less 1 %; the first RTT
/// sample restarts that from the window over it.
#[test]
fn bbr_init_pacing_rate_from_rtt_is_the_high_gain_times_the_window_over_the_rtt() {
    let mut b = bbr(1);
    assert_eq!((b.mode(), b.pacing_gain(), b.cwnd_gain), (Mode::Startup, HIGH_GAIN, HIGH_GAIN));
    assert_eq!(HIGH_GAIN, 739);
    // 10 packets a millisecond: 10 MB/s, times 739/256, less 1 %.
    assert_eq!(b.pacing_rate(), Some(10_000_000 * 739 / 256 * 99 / 100));
    let rs = RateSample { rtt: Some(ms(2)), now: SimTime::ZERO + ms(2), ..RateSample::default() };
    b.cong_control(&rs, 10 * MSS);
    assert_eq!(b.pacing_rate(), Some(5_000_000 * 739 / 256 * 99 / 100));
}

/// `bbr_update_bw`: the estimate is the largest sample of the last 10
/// rounds; an application-limited sample counts only when it raises it.
#[test]
fn bbr_update_bw_keeps_the_largest_sample_of_ten_rounds() {
    let (mut b, mut path) = (bbr(1), Path::new());
    path.round(&mut b, 2 * RATE, ms(10));
    assert_eq!(b.bw(), 2 * RATE);
    for round in 2..=11 {
        path.round_with(&mut b, RATE, ms(10), Some(50 * MSS), false);
        assert_eq!(b.bw(), 2 * RATE, "round {round}");
    }
    path.round_with(&mut b, RATE, ms(10), Some(50 * MSS), false);
    assert_eq!(b.bw(), RATE, "the peak is more than 10 rounds old");
    path.round_with(&mut b, RATE / 2, ms(10), Some(50 * MSS), true);
    assert_eq!(b.bw(), RATE, "a lower application-limited sample is left out");
    path.round_with(&mut b, 3 * RATE, ms(10), Some(50 * MSS), true);
    assert_eq!(b.bw(), 3 * RATE, "a higher one is taken");
    assert_eq!(b.rounds, 14);
}

/// `bbr_check_full_bw_reached` and `bbr_check_drain`: while each round
/// grows the estimate by 25 % STARTUP goes on; three rounds without end
/// it, DRAIN paces at 1/2.885 until the flight fits the BDP, then PROBE_BW.
#[test]
fn bbr_check_full_bw_reached_after_three_rounds_without_25_percent_growth() {
    let (mut b, mut path) = (bbr(1), Path::new());
    let mut rate = RATE / 8;
    for _ in 0..4 {
        rate = rate * 3 / 2;
        path.round(&mut b, rate, ms(10));
    }
    assert_eq!((b.mode(), b.full_bw_rounds), (Mode::Startup, 0));
    for rounds in 1..=2 {
        path.round(&mut b, rate, ms(10));
        assert_eq!((b.mode(), b.full_bw_rounds), (Mode::Startup, rounds));
    }
    // A round of the full flight: full at its first ACK, still too much in flight to leave DRAIN.
    path.round_with(&mut b, rate, ms(10), Some(400 * MSS), false);
    assert!(b.full_bw_reached);
    assert_eq!((b.mode(), b.pacing_gain()), (Mode::Drain, DRAIN_GAIN));
    path.round_with(&mut b, rate, ms(10), Some(20 * MSS), false);
    assert_eq!(b.mode(), Mode::ProbeBw, "the flight fits the BDP");
}

/// `bbr_reset_probe_bw_mode`: PROBE_BW starts in a random phase other
/// than the draining one (3/4), the same for the same seed.
#[test]
fn bbr_reset_probe_bw_mode_starts_in_a_random_phase_never_the_draining_one() {
    let mut starts = [0u32; CYCLE_LEN];
    for seed in 0..200 {
        let mut b = bbr(seed);
        b.reset_probe_bw_mode();
        starts[b.cycle_idx] += 1;
        let mut again = bbr(seed);
        again.reset_probe_bw_mode();
        assert_eq!(again.cycle_idx, b.cycle_idx, "seed {seed}");
    }
    assert_eq!(starts[1], 0, "{starts:?}");
    assert!(starts.iter().enumerate().all(|(i, &n)| i == 1 || n > 0), "{starts:?}");
}

/// `bbr_update_cycle_phase` / `bbr_is_next_cycle_phase`: in PROBE_BW the
/// phases follow in order (gains 5/4, 3/4 and six of 1), each lasting just
/// over a minimum RTT (10 ms) of delivery time, the ACKs here 100 us apart.
#[test]
fn bbr_update_cycle_phase_cycles_the_eight_pacing_gains_a_min_rtt_each() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    path.phases.clear();
    for _ in 0..24 {
        path.round(&mut b, RATE, ms(10));
    }
    assert!(path.phases.len() > 9, "{:?}", path.phases);
    // The first phase seen began before the test looked.
    for pair in path.phases[1..].windows(2) {
        let ((t0, i0), (t1, i1)) = (pair[0], pair[1]);
        assert_eq!(i1, (i0 + 1) % CYCLE_LEN, "{:?}", path.phases);
        let length = t1.since(t0);
        assert!(length > ms(10) && length <= ms(10) + SimDuration::from_micros(200), "phase {i0}: {length}");
    }
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
}

/// `bbr_set_cwnd` / `bbr_quantization_budget`: once the pipe is full,
/// the window in the cruise phases is twice the BDP plus three send quanta,
/// rounded up to even: 200 packets and three of 9 (9.9 MB/s over 1 ms), 228.
#[test]
fn bbr_set_cwnd_is_twice_the_bdp_plus_three_quanta() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    let mut cruise = Vec::new();
    for _ in 0..16 {
        path.round(&mut b, RATE, ms(10));
        if b.pacing_gain() == UNIT {
            cruise.push(path.cwnd / MSS);
        }
    }
    assert_eq!(b.tso_segs_goal(), 9);
    assert!(cruise.iter().filter(|&&c| c == 228).count() >= 8, "{cruise:?}");
    assert!(cruise.iter().all(|&c| (222..=228).contains(&c)), "down from 3/4's 222 at most: {cruise:?}");
}

/// `bbr_tso_segs_goal`: a quantum is about 1 ms of the pacing rate, at
/// least one segment below 1.2 Mbit/s and two above, at most 64 KB.
#[test]
fn bbr_tso_segs_goal_is_a_millisecond_of_pacing_at_least_two_segments() {
    let mut b = bbr(1);
    for (rate, goal) in [(100_000, 1), (1_000_000, 2), (10_000_000, 9), (125_000_000, 65)] {
        b.pacing_rate = rate;
        assert_eq!(b.tso_segs_goal(), goal, "at {rate} B/s");
    }
}

/// `bbr_set_cwnd`: the window is at least 4 packets, here after an ACK
/// grew a window of one by one.
#[test]
fn bbr_set_cwnd_keeps_at_least_four_packets() {
    let (mut b, mut path) = (bbr(1), Path::new());
    path.cwnd = MSS;
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    assert_eq!(path.cwnd, CWND_MIN_TARGET * MSS);
}

/// `bbr_set_cwnd_to_recover_or_restore`: the first round of recovery
/// conserves packets — the window is the flight plus what each ACK
/// delivered — and leaving recovery restores the window `bbr_ssthresh`
/// saved (`bbr_save_cwnd`).
#[test]
fn bbr_set_cwnd_to_recover_or_restore_conserves_packets_then_restores() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    path.round(&mut b, RATE, ms(10));
    let before = path.cwnd;
    // bbr_check_drain set ssthresh to the BDP's inflight: 100 packets and three quanta of STARTUP's rate.
    assert!((100 * MSS..200 * MSS).contains(&b.ssthresh(before, before)), "ssthresh stays DRAIN's");
    assert_eq!(b.prior_cwnd * MSS, before);
    b.set_state(CaState::Recovery);
    // Half the window in flight after a loss: each ACK sends one packet for the one delivered.
    path.round_with(&mut b, RATE, ms(10), Some(40 * MSS), false);
    assert!(b.packet_conservation);
    assert_eq!(path.cwnd, 40 * MSS, "the flight before each ACK, no more");
    b.set_state(CaState::Open);
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    assert!(!b.packet_conservation);
    assert!(path.cwnd >= 200 * MSS, "{} restored from 40 to twice the BDP and more", path.cwnd);
}

/// `bbr_set_state(TCP_CA_Loss)` and `bbr_save_cwnd`: a timeout (the window
/// drops to one segment) forgets the full-bandwidth mark; once the loss
/// state ends the window saved at the timeout returns.
#[test]
fn bbr_set_state_loss_then_the_saved_window_returns() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    path.round(&mut b, RATE, ms(10));
    let before = path.cwnd;
    b.ssthresh(before, before);
    b.on_timeout(before);
    b.set_state(CaState::Loss);
    assert_eq!(b.full_bw, 0);
    path.cwnd = MSS;
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    assert_eq!(path.cwnd, CWND_MIN_TARGET * MSS, "1 + 1, at least 4, while the loss state lasts");
    b.set_state(CaState::Open);
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    assert!(before >= 200 * MSS && path.cwnd >= 200 * MSS, "{} restored (before the timeout {before})", path.cwnd);
}

/// `bbr_undo_cwnd`: an undone timeout resets full-pipe detection and keeps the window.
#[test]
fn bbr_undo_cwnd_resets_full_pipe_detection() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    assert_eq!(b.undo_cwnd(30 * MSS, 90 * MSS), 30 * MSS);
    assert_eq!((b.full_bw, b.full_bw_rounds), (0, 0));
}

/// `bbr_set_pacing_rate`: gain times the estimate less 1 %, only ever
/// raised before the pipe is full, then set each ACK.
#[test]
fn bbr_set_pacing_rate_is_the_gain_times_the_estimate_less_one_percent() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.round(&mut b, RATE, ms(10));
    let startup = b.pacing_rate().unwrap();
    path.round(&mut b, RATE / 2, ms(10));
    assert_eq!(b.pacing_rate(), Some(startup), "STARTUP never lowers it");
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    path.round(&mut b, RATE, ms(10));
    let gain = b.pacing_gain();
    assert_eq!(b.pacing_rate(), Some(RATE * gain / UNIT * 99 / 100));
}

/// The sender reads the pacing rate again only once it moved
/// (`take_pacing_moved`): the first RTT sample restarts it, and STARTUP,
/// never lowering it, leaves it put through a round at half the rate.
#[test]
fn the_pacing_rate_is_marked_moved_only_where_it_is_stored() {
    let (mut b, mut path) = (bbr(3), Path::new());
    assert!(b.take_pacing_moved(), "bbr_init sets a rate");
    assert!(!b.take_pacing_moved(), "the mark is cleared once read");
    path.round(&mut b, RATE, ms(10));
    assert!(b.take_pacing_moved());
    path.round(&mut b, RATE / 2, ms(10));
    assert!(!b.take_pacing_moved(), "STARTUP never lowers it");
}

/// `bbr_update_min_rtt` and `bbr_check_probe_rtt_done`: 10 s without a
/// lower RTT start PROBE_RTT at 4 packets; 200 ms and a round at that
/// flight end it, the window restored and the minimum fresh; its samples
/// are application-limited.
#[test]
fn bbr_update_min_rtt_probes_the_rtt_for_200_ms_after_10_s() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    let expiry = b.min_rtt_expiry;
    while b.mode() != Mode::ProbeRtt {
        path.round(&mut b, RATE, ms(11));
        assert!(path.now < expiry + ms(20), "no PROBE_RTT by {}", path.now);
    }
    assert!(path.now > expiry, "the minimum RTT was 10 s old");
    let saved = b.prior_cwnd;
    assert_eq!(path.cwnd, CWND_MIN_TARGET * MSS);
    assert!(b.marks_app_limited());
    let entered = path.now;
    while b.mode() == Mode::ProbeRtt {
        path.round(&mut b, RATE, ms(10));
    }
    let stay = path.now.since(entered);
    assert!(stay > PROBE_RTT_TIME && stay < PROBE_RTT_TIME + ms(30), "PROBE_RTT for {stay}");
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert!(saved >= 200 && path.cwnd >= 200 * MSS, "{} restored (saved {saved} packets)", path.cwnd);
    assert_eq!(b.min_rtt(), Some(ms(10)), "the 10 ms samples of PROBE_RTT");
}

/// `bbr_update_min_rtt`: "rs->rtt_us <= bbr->min_rtt_us" — a sample equal
/// to the minimum refreshes it, so a path whose RTT never changes never
/// needs PROBE_RTT (11 s of 10 ms rounds).
#[test]
fn bbr_update_min_rtt_an_equal_sample_refreshes_the_minimum() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    while path.now < SimTime::ZERO + SimDuration::from_secs(11) {
        path.round(&mut b, RATE, ms(10));
        assert_ne!(b.mode(), Mode::ProbeRtt, "at {}", path.now);
    }
}

/// `bbr_set_cwnd_to_recover_or_restore`: "we deduct the number of lost
/// packets" — an ACK of one packet that found 5 lost, outside recovery,
/// leaves the window 4 packets smaller (1 + 1 delivered, less 5).
#[test]
fn bbr_set_cwnd_to_recover_or_restore_takes_the_losses_off_the_window() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    path.round(&mut b, RATE, ms(10));
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    let before = path.cwnd;
    path.losses = 5 * MSS;
    path.round_with(&mut b, RATE, ms(10), Some(MSS), false);
    assert_eq!(path.cwnd, before - 4 * MSS);
}

/// `bbr_is_next_cycle_phase`: the probing phase (5/4) lasts until the
/// flight reaches 5/4 of the BDP — with the flight held at the BDP it does
/// not end, a minimum RTT on, until an ACK finds a loss ("We do not persist
/// if packets are lost, since a path with small buffers may not hold that
/// much"); the draining phase then ends as soon as the flight fits the BDP.
#[test]
fn bbr_is_next_cycle_phase_ends_probing_at_a_loss() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    while b.cycle_idx != 0 {
        path.round(&mut b, RATE, ms(10));
    }
    for _ in 0..3 {
        path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
        assert_eq!(b.cycle_idx, 0, "still probing");
    }
    path.losses = MSS;
    path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
    // The loss ended the probe, and with the flight at the BDP the draining phase ended at once.
    assert_eq!(b.cycle_idx, 2, "the loss ended the probe");
}

/// `bbr_lt_bw_sampling` and `bbr_lt_bw_interval_done`: a policer that lets
/// 10 MB/s through and drops a quarter of each round's data — two lossy
/// intervals of 4 rounds at a consistent rate make their average the
/// estimate, PROBE_BW cruising at a gain of 1, until 48 rounds have passed.
#[test]
fn bbr_lt_bw_sampling_detects_a_policer_in_two_lossy_intervals() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    let mut rounds = 0;
    while !b.lt.in_use() {
        path.losses = 25 * MSS;
        path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
        rounds += 1;
        assert!(rounds <= 12, "no policer found in {rounds} rounds");
    }
    assert!(rounds >= 2 * 4, "two intervals of at least 4 rounds: {rounds}");
    // 100 packets a 10 ms round: 10 MB/s, averaged over the two intervals.
    assert!(b.lt.bw().abs_diff(RATE) <= RATE / 50, "{} B/s", b.lt.bw());
    assert_eq!(b.bw(), b.lt.bw());
    path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
    assert_eq!((b.mode(), b.pacing_gain()), (Mode::ProbeBw, UNIT), "cruising at the policed rate");
    for _ in 0..48 {
        path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
    }
    assert!(!b.lt.in_use(), "48 rounds later the windowed maximum is the estimate again");
}

/// `bbr_lt_bw_sampling`: "reset sampling if we run out of data" — an
/// application-limited sample ends a sampling interval.
#[test]
fn bbr_lt_bw_sampling_starts_again_when_application_limited() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    for _ in 0..3 {
        path.losses = 25 * MSS;
        path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), false);
    }
    assert!(b.lt.sampling);
    path.round_with(&mut b, RATE, ms(10), Some(100 * MSS), true);
    assert!(!b.lt.sampling && !b.lt.in_use());
}

/// `bbr_check_drain`: entering DRAIN sets ssthresh to `bbr_inflight(max_bw, 1.0)`.
#[test]
fn bbr_check_drain_sets_ssthresh_to_the_bdps_inflight() {
    let (mut b, mut path) = (bbr(3), Path::new());
    assert_eq!(b.ssthresh(10 * MSS, 10 * MSS), u64::MAX, "TCP_INFINITE_SSTHRESH before");
    while b.mode() == Mode::Startup {
        path.round(&mut b, RATE, ms(10));
    }
    let drained = b.ssthresh.expect("DRAIN set it");
    assert!((100..200).contains(&drained), "100 packets of BDP and three quanta: {drained}");
}

/// `bbr_update_ack_aggregation` and `bbr_ack_aggregation_cwnd`: once the
/// pipe is full, ACKs that come a round's worth at once (more than the
/// estimate expects) raise the window's target by the excess, at most
/// 100 ms of the estimate.
#[test]
fn bbr_update_ack_aggregation_provisions_for_aggregated_acks() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    for _ in 0..8 {
        path.round(&mut b, RATE, ms(10));
    }
    let smooth = path.cwnd;
    assert!(b.aggregation.extra_acked() <= 2, "evenly spaced ACKs: {}", b.aggregation.extra_acked());
    path.aggregated = true;
    for _ in 0..4 {
        path.round(&mut b, RATE, ms(10));
    }
    assert!(b.aggregation.extra_acked() > 100, "{}", b.aggregation.extra_acked());
    assert!(path.cwnd > smooth + 100 * MSS, "{} against {smooth}", path.cwnd);
}

/// `bbr_cwnd_event`: "if (event == CA_EVENT_TX_START && tp->app_limited)" —
/// a transmit from idle counts as a restart only when application-limited.
#[test]
fn bbr_cwnd_event_restarts_from_idle_only_when_application_limited() {
    let (mut b, mut path) = (bbr(3), Path::new());
    path.run_until_probe_bw(&mut b, RATE, ms(10));
    b.on_tx_start(path.now, None, false);
    assert!(!b.idle_restart);
    b.on_tx_start(path.now, None, true);
    assert!(b.idle_restart);
    assert_eq!(b.pacing_rate(), Some(Bbr::pacing_rate_for(b.bw(), UNIT)), "paced at the estimate");
}
