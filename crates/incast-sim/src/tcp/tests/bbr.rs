//! BBR (`cc::bbr`, Linux `tcp_bbr.c`) over a path: one paced flow through
//! an idle bottleneck (`bottleneck::transfer`), the receiver ACKing every segment.

use super::bottleneck::transfer;
use super::*;
use crate::tcp::cc::bbr::{Bbr, Mode};
use crate::tcp::cc::{Algorithm, CongestionControl};

/// BBR with an 8 MiB receive window (the window never limits it).
fn bbr_cfg() -> TcpConfig {
    TcpConfig { cc: CcChoice::Bbr, rcv_wnd: Bytes::mib(8), ..cfg() }
}

fn bbr(ep: &Endpoint) -> &Bbr {
    let Algorithm::Bbr(b) = ep.sender.cc().algorithm() else { panic!("BBR") };
    b
}

/// A transfer of `bytes` at `rate` bytes a second, `one_way` each way:
/// every data segment's (time, mode, pacing gain, bytes queued ahead of it).
fn run(bytes: u64, rate: u64, one_way: SimDuration) -> Vec<(SimTime, Mode, u64, u64)> {
    let mut tx = Endpoint::new(&bbr_cfg(), SimTime::ZERO, Some(one_way + one_way));
    let mut rx = Endpoint::new(&bbr_cfg(), SimTime::ZERO, Some(one_way + one_way));
    tx.send(bytes);
    let mut log = Vec::new();
    transfer(&mut tx, &mut rx, bytes, rate, one_way, |now, tx, queued| {
        let b = bbr(tx);
        log.push((now, b.mode(), b.pacing_gain(), queued));
    });
    log
}

/// The modes a run went through, each once per stay, with when it was entered.
fn modes(log: &[(SimTime, Mode, u64, u64)]) -> Vec<(SimTime, Mode)> {
    let mut out: Vec<(SimTime, Mode)> = Vec::new();
    for &(t, m, _, _) in log {
        if out.last().map_or(true, |&(_, last)| last != m) {
            out.push((t, m));
        }
    }
    out
}

/// The bytes queued ahead of every segment sent in PROBE_BW's cruise phases
/// (gain 1) of a transfer of `segments` at `rate` bytes a second, 5 ms each
/// way, once STARTUP and DRAIN are over, and ahead of those sent probing (gain 5/4).
fn cruise_and_probe_queues(segments: u64, rate: u64) -> (Vec<u64>, Vec<u64>) {
    let log = run(segments * MSS as u64, rate, SimDuration::from_millis(5));
    let seen: Vec<Mode> = modes(&log).iter().map(|&(_, m)| m).collect();
    assert_eq!(seen, [Mode::Startup, Mode::Drain, Mode::ProbeBw], "{seen:?}");
    let probe_bw = log.iter().position(|e| e.1 == Mode::ProbeBw).expect("PROBE_BW");
    let queued =
        |keep: fn(u64) -> bool| log[probe_bw..].iter().filter(|e| keep(e.2)).map(|e| e.3 / MSS as u64).collect();
    (queued(|g| g == 256), queued(|g| g > 256))
}

/// One paced flow through an idle bottleneck, 5 ms each way, the sender's
/// segments reaching the bottleneck's queue as they leave: in PROBE_BW's
/// cruise phases (gain 1, paced 1 % below the estimate) the queue is not
/// below 2 packets but up to the quantization budget, because the draining
/// phase (3/4) stops once the flight fits `bbr_inflight(bw, 1)` — the BDP
/// plus three send quanta, rounded up to even (`bbr_is_next_cycle_phase`,
/// `bbr_quantization_budget`) — and the 1 % margin drains a hundredth of
/// the BDP a round. At 8 Mbit/s (1 MB/s): a minimum RTT of 11 ms (a
/// packet's serialization included), a BDP of 11 packets, quanta of 2
/// segments (`bbr_tso_segs_goal`): 11 + 6, rounded up to 18, less 11 — 7
/// packets, the pacing bursts of 2 (`tcp_tso_autosize`) adding 1. At 100
/// Mbit/s (12.5 MB/s): a BDP of 126 packets, quanta of 12: 36 packets,
/// the bursts of 12 adding 11. The probing phase (5/4) queues more.
#[test]
fn bbr_quantization_budget_keeps_up_to_three_quanta_queued_in_the_cruise_phases() {
    for (rate, segments, budget, burst) in [(1_000_000, 3_000, 7, 2), (12_500_000, 30_000, 36, 12)] {
        let (cruise, probing) = cruise_and_probe_queues(segments, rate);
        assert!(cruise.len() as u64 > segments / 2, "{} cruise segments at {rate} B/s", cruise.len());
        let worst = cruise.iter().max().copied().unwrap_or(0);
        assert!(worst < budget + burst, "{worst} packets queued ahead of a cruise segment at {rate} B/s");
        assert!(worst >= 2, "at {rate} B/s the cruise queue reaches {worst} packets, not below 2");
        let probed = probing.iter().max().copied().unwrap_or(0);
        assert!(probed > worst, "probing at 5/4 queues more at {rate} B/s: {probed} against {worst}");
    }
}

/// 8 Mbit/s, 5 ms each way, 10.5 MB: STARTUP, DRAIN, PROBE_BW, and
/// PROBE_RTT once the minimum RTT is 10 s old (no later sample is lower),
/// 200 ms and a round at 4 packets, then PROBE_BW again
/// (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).
#[test]
fn bbr_update_min_rtt_one_long_flow_goes_startup_drain_probe_bw_then_probe_rtt_after_10_s() {
    let log = run(10_500 * MSS as u64, 1_000_000, SimDuration::from_millis(5));
    let seen = modes(&log);
    let order: Vec<Mode> = seen.iter().map(|&(_, m)| m).collect();
    assert_eq!(order, [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt, Mode::ProbeBw], "{seen:?}");
    let (entered, left) = (seen[3].0, seen[4].0);
    assert!(entered > SimTime::ZERO + SimDuration::from_secs(10), "PROBE_RTT at {entered}");
    assert!(entered < SimTime::ZERO + SimDuration::from_millis(10_200), "PROBE_RTT at {entered}");
    let stay = left.since(entered);
    assert!(stay >= SimDuration::from_millis(200) && stay < SimDuration::from_millis(260), "PROBE_RTT for {stay}");
}

/// Ten segments out, the first lost and the timer expiring: the loss
/// window of one segment; the ACK of its retransmission, still short of
/// what was outstanding at the timeout, grows the window to BBR's floor of
/// 4; the ACK of the rest ends the loss state and the window the timeout
/// saved (10) returns, grown by the 9 segments it delivered
/// (`bbr_set_state`, `bbr_save_cwnd`, `bbr_set_cwnd_to_recover_or_restore`).
#[test]
fn bbr_set_cwnd_to_recover_or_restore_after_a_timeout_through_the_sender() {
    let mut tx = with_flight(&bbr_cfg(), 20 * MSS as u64, 10);
    let t = expire(&mut tx);
    assert_eq!(tx.cwnd(), MSS as u64);
    let resent = expect_tx(&mut tx, t.snapshot.time);
    assert_eq!((resent.seq, resent.len), (0, MSS));
    recv(&mut tx, t.snapshot.time + SimDuration::from_micros(100), ack(MSS as u64));
    assert_eq!(tx.cwnd(), 4 * MSS as u64, "1 + 1, raised to 4, in the loss state");
    recv(&mut tx, t.snapshot.time + SimDuration::from_micros(200), ack(10 * MSS as u64));
    assert_eq!(tx.cwnd(), 19 * MSS as u64, "the saved 10 plus the 9 delivered");
}

/// `bbr_init` after a handshake of 100 µs: the minimum RTT is its sample
/// and STARTUP paces the initial window of 10 segments over it at 2/ln 2
/// (739/256), less 1 % (`bbr_init_pacing_rate_from_rtt` with `srtt_us` set).
#[test]
fn bbr_init_takes_the_handshakes_rtt() {
    let ep = Endpoint::new(&bbr_cfg(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    let b = bbr(&ep);
    assert_eq!((b.mode(), b.min_rtt()), (Mode::Startup, Some(SimDuration::from_micros(100))));
    // 10 000 bytes over 100 µs: 100 MB/s.
    assert_eq!(b.pacing_rate(), Some(100_000_000 * 739 / 256 * 99 / 100));
}

/// Entering SACK recovery, `bbr_set_cwnd_to_recover_or_restore` conserves
/// the packets in flight as Linux counts them (`tcp_packets_in_flight`:
/// neither what the receiver SACKed nor what the scoreboard marks lost),
/// and each ACK takes off the window what it newly marked lost
/// (`rs->losses`). Ten segments out, the first five lost, the next three
/// SACKed one ACK each: the third SACK makes the five lost (RFC 6675
/// `IsLost`) and starts recovery with two segments (8 and 9) in flight, so
/// the window is those two plus the one this ACK delivered — not the ten outstanding.
#[test]
fn bbr_recovery_conserves_the_packets_in_flight_not_the_outstanding_ones() {
    let cfg = TcpConfig { cc: CcChoice::Bbr, ..cfg_sack() };
    let mut tx = with_flight(&cfg, 20 * MSS as u64, 10);
    for (i, t) in [(6, 100), (7, 110), (8, 120)] {
        recv(&mut tx, us(t), sack_ack(0, &[(5, i)]));
    }
    assert!(tx.in_recovery());
    assert_eq!(tx.cwnd(), 3 * MSS as u64, "segments 8 and 9 in flight, plus segment 7 delivered");
    assert_eq!(bbr(&tx).lost(), 5 * MSS as u64, "the five holes, each counted once");
    recv(&mut tx, us(130), sack_ack(0, &[(5, 9)]));
    assert_eq!(bbr(&tx).lost(), 5 * MSS as u64, "a later SACK marks nothing new");
}
