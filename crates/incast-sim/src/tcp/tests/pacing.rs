//! Pacing and delivery-rate samples through the rate seams: the tests'
//! fixed-rate algorithm (`cc::fixed_rate`) sets cwnd by `cong_control` and
//! the pacing rate; `tcp.pacing` paces a window-based algorithm
//! (`tcp_update_pacing_rate`).

use super::bottleneck::transfer;
use super::*;
use crate::tcp::cc::Algorithm;

/// 1000-byte segments at 100 MB/s: one every 10 µs.
const RATE: u64 = 100_000_000;

/// Every data segment `ep` sends from `now` on, each at the first instant
/// it may (woken at its deadline whenever it has to wait), until `n` have gone.
fn departures(ep: &mut Endpoint, mut now: SimTime, n: usize) -> Vec<(SimTime, u64)> {
    let mut out = Vec::new();
    while out.len() < n {
        match ep.poll_transmit(now) {
            Some(s) if s.len > 0 => out.push((now, s.seq)),
            Some(_) => {}
            None => {
                let next = ep.poll_timeout().expect("a paced sender waits for its pacing deadline");
                assert!(next > now, "nothing to wait for at {now}");
                now = next;
            }
        }
    }
    out
}

/// The fixed-rate algorithm from a window of 40 segments (it sets its own
/// from the first ACK on), one segment a pacing slot (no GSO).
fn paced(rate: u64) -> TcpConfig {
    TcpConfig { cc: CcChoice::FixedRate(rate), init_cwnd: 40, gso_max_size: Bytes::new(0), ..cfg() }
}

/// Linux `tcp_update_skb_after_send`: past the first 10 segments, each
/// waits its size over the pacing rate.
#[test]
fn a_paced_sender_spaces_its_segments_by_size_over_rate() {
    let mut ep = Endpoint::new(&paced(RATE), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(30 * MSS as u64);
    let sent = departures(&mut ep, SimTime::ZERO, 30);
    assert!(sent[..10].iter().all(|&(t, _)| t == SimTime::ZERO), "the first 10 segments are not paced");
    for pair in sent[9..].windows(2) {
        assert_eq!(pair[1].0.since(pair[0].0), SimDuration::from_micros(10), "{pair:?}");
    }
    let seqs: Vec<u64> = sent.iter().map(|&(_, s)| s).collect();
    assert_eq!(seqs, (0..30).map(|i| i * MSS as u64).collect::<Vec<_>>());
}

/// Linux `tcp_write_xmit` with `tcp_tso_autosize`: a GSO size of 4 segments
/// (4,321 bytes less the 321 of headroom) sends 4 back to back per pacing
/// slot, the slots 40 µs apart at 100 MB/s, where one segment takes 10 µs.
#[test]
fn tcp_tso_autosize_sends_a_burst_per_pacing_slot() {
    let cfg = TcpConfig { gso_max_size: Bytes::new(4_321), ..paced(RATE) };
    let mut ep = Endpoint::new(&cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(40 * MSS as u64);
    let sent = departures(&mut ep, SimTime::ZERO, 40);
    let mut slots: Vec<(SimTime, usize)> = Vec::new();
    for &(t, _) in &sent {
        match slots.last_mut() {
            Some((at, n)) if *at == t => *n += 1,
            _ => slots.push((t, 1)),
        }
    }
    // The first 12 leave at once: 10 unpaced, and the rest of the burst that holds the tenth.
    assert_eq!(slots[0], (SimTime::ZERO, 12), "{slots:?}");
    for pair in slots[1..].windows(2) {
        assert_eq!(pair[0].1, 4, "{slots:?}");
        assert_eq!(pair[1].0.since(pair[0].0), SimDuration::from_micros(40), "{slots:?}");
    }
}

/// tcp.pacing with Reno in slow start: 200 % of cwnd over SRTT, so ten
/// 1000-byte segments over a 100 µs SRTT leave 5 µs apart.
#[test]
fn tcp_pacing_paces_a_window_algorithm_at_twice_cwnd_over_srtt_in_slow_start() {
    let paced = TcpConfig { pacing: true, init_cwnd: 20, gso_max_size: Bytes::new(0), ..cfg() };
    let mut ep = Endpoint::new(&paced, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(20 * MSS as u64);
    let sent = departures(&mut ep, SimTime::ZERO, 20);
    // 20 segments of cwnd over 100 µs, at 200 %: 400 MB/s, 2.5 µs a segment.
    for pair in sent[9..].windows(2) {
        assert_eq!(pair[1].0.since(pair[0].0), SimDuration::from_nanos(2_500), "{pair:?}");
    }
    let unpaced = Endpoint::new(&cfg(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    assert!(!unpaced.uses_optional_parts(), "pacing is off by default");
}

/// One paced flow through an idle bottleneck that serves payload at
/// `BOTTLENECK` bytes a second, 20 µs away each way, the receiver ACKing
/// every segment: once the queue has built, every delivery-rate sample is
/// the bottleneck's rate (draft-cheng-iccrg-delivery-rate-estimation §3).
#[test]
fn one_flows_delivery_rate_samples_equal_the_bottleneck_rate() {
    const BOTTLENECK: u64 = 50_000_000;
    let one_way = SimDuration::from_micros(20);
    let cfg = TcpConfig { rcv_wnd: Bytes::mib(8), ..paced(2 * BOTTLENECK) };
    let mut tx = Endpoint::new(&cfg, SimTime::ZERO, Some(one_way + one_way));
    let mut rx = Endpoint::new(&cfg, SimTime::ZERO, Some(one_way + one_way));
    tx.send(400 * MSS as u64);
    transfer(&mut tx, &mut rx, 400 * MSS as u64, BOTTLENECK, one_way, |_, _, _| {});
    assert_eq!(rx.delivered(), 400 * MSS as u64, "the transfer completes");
    let Algorithm::FixedRate(alg) = tx.sender.cc().algorithm() else { panic!("the fixed-rate algorithm") };
    // Past the first two round trips the queue has built and the ACKs come at the bottleneck's pace.
    let settled: Vec<f64> =
        alg.samples.iter().skip(20).filter(|s| !s.app_limited).filter_map(|s| s.bytes_per_s()).collect();
    assert!(settled.len() > 300, "{} samples", settled.len());
    for rate in settled {
        assert!((rate / BOTTLENECK as f64 - 1.0).abs() < 0.01, "sample {rate:.0} B/s against {BOTTLENECK}");
    }
}

/// Linux `tcp_retransmit_timer` sends the head retransmission itself, not
/// through `tcp_write_xmit`'s pacing check: at 1000 B/s the eleventh
/// segment waits a second for the pacer, and the timeout's retransmission
/// of the first leaves at the timeout.
#[test]
fn a_timeouts_head_retransmission_leaves_unpaced() {
    let mut ep = Endpoint::new(&paced(1_000), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(20 * MSS as u64);
    departures(&mut ep, SimTime::ZERO, 10);
    expect_nothing(&mut ep, SimTime::ZERO);
    let t = expire(&mut ep);
    assert!(t.snapshot.time < SimTime::ZERO + SimDuration::from_secs(1), "the timeout comes first");
    expect_data(&mut ep, t.snapshot.time, 0, MSS);
}
