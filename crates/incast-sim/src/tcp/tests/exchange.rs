//! Two endpoints over a tiny lossy pipe: the request/response exchange the
//! simulator runs, end to end, with losses scripted by sequence number.

use super::*;

/// Serialization of one byte at 1 Gbps, in picoseconds.
const PS_PER_BYTE: u64 = 8_000;
/// Header bytes per segment on the wire.
const HEADER: u64 = 40;
/// One-way propagation delay.
const DELAY: SimDuration = SimDuration::from_micros(50);

/// What one exchange ended with.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    done_at: SimTime,
    client: EndpointStats,
    server: EndpointStats,
}

/// Client writes a 100-byte request; when the server has it, the server
/// writes `response` bytes. Server data segments whose first transmission
/// starts at an offset in `drop` are lost (once each).
fn exchange(cfg: &TcpConfig, response: u64, drop: &[u64]) -> Outcome {
    let rtt = Some(SimDuration::from_micros(100));
    let mut eps = [Endpoint::new(cfg, SimTime::ZERO, rtt), Endpoint::new(cfg, SimTime::ZERO, rtt)];
    let mut dropped: Vec<u64> = Vec::new();
    // (arrival, order, destination, segment)
    let mut wire: Vec<(SimTime, u64, usize, Segment)> = Vec::new();
    let mut busy = [SimTime::ZERO; 2];
    let (mut now, mut order, mut responded) = (SimTime::ZERO, 0u64, false);
    eps[0].send(100);
    for _ in 0..1_000_000 {
        for (src, ep) in eps.iter_mut().enumerate() {
            while let Some(s) = ep.poll_transmit(now) {
                let start = busy[src].max(now);
                busy[src] = start + SimDuration((s.len as u64 + HEADER) * PS_PER_BYTE);
                if src == 1 && s.has_data() && drop.contains(&s.seq) && !dropped.contains(&s.seq) {
                    dropped.push(s.seq);
                    continue;
                }
                wire.push((busy[src] + DELAY, order, 1 - src, s));
                order += 1;
            }
        }
        if eps[0].delivered() == response && eps[1].delivered() == 100 && eps[1].flight_size() == 0 {
            return Outcome { done_at: now, client: eps[0].stats().clone(), server: eps[1].stats().clone() };
        }
        let next_wire = wire.iter().map(|w| w.0).min();
        let next_timer = eps.iter().filter_map(|e| e.poll_timeout()).min();
        now = match (next_wire, next_timer) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("exchange stalled"),
        };
        wire.sort_by_key(|w| (w.0, w.1));
        let due = wire.iter().take_while(|w| w.0 <= now).count();
        for (_, _, dst, s) in wire.drain(..due) {
            eps[dst].on_segment(now, &s);
        }
        for ep in eps.iter_mut() {
            ep.on_timer(now);
        }
        if !responded && eps[1].delivered() == 100 {
            eps[1].send(response);
            responded = true;
        }
    }
    panic!("exchange did not finish");
}

/// `cfg_delack()` with the Linux 200 ms RTO_min.
fn linux() -> TcpConfig {
    TcpConfig { rto: RtoConfig::default(), ..cfg_delack() }
}

/// A lossless 256 KiB response: no retransmissions, every byte delivered once.
#[test]
fn lossless_response_delivers_every_byte_once() {
    let out = exchange(&linux(), 256 * 1024, &[]);
    assert_eq!(out.server.data_segments_sent, 263);
    assert_eq!(out.server.bytes_sent, 256 * 1024);
    assert_eq!((out.server.retransmitted_segments, out.server.timeouts), (0, 0));
    // The request's ACK rode on the response; the client ACKs every second segment.
    assert_eq!(out.server.acks_sent, 0);
    assert!(out.client.acks_sent >= 131 && out.client.acks_sent <= 133, "{:?}", out.client);
    assert!(out.server.max_cwnd > 100_000);
}

/// One loss in mid-flight is repaired by fast retransmit, without a timeout.
#[test]
fn single_loss_repaired_by_fast_retransmit() {
    let out = exchange(&linux(), 256 * 1024, &[seg(20)]);
    assert_eq!(out.server.fast_retransmits, 1);
    assert_eq!(out.server.retransmitted_segments, 1);
    assert_eq!(out.server.timeouts, 0);
    assert_eq!(out.server.bytes_sent, 256 * 1024 + MSS as u64);
}

/// RFC 6582 (3.2 step 3): a burst of 15 losses is repaired by one fast
/// retransmit and 14 partial-ACK retransmissions, one hole per round trip,
/// without a timeout (RTO_min 200 ms) and without resending anything twice.
#[test]
fn burst_loss_recovers_and_completes() {
    let burst: Vec<u64> = (30..45).map(seg).collect();
    let out = exchange(&linux(), 256 * 1024, &burst);
    assert_eq!(out.server.retransmitted_segments, 15);
    assert_eq!((out.server.fast_retransmits, out.server.timeouts), (1, 0));
}

/// Losing the last segment leaves no duplicate ACKs: only the timer repairs it.
#[test]
fn tail_loss_needs_a_timeout() {
    let out = exchange(&cfg(), 10 * MSS as u64, &[seg(9)]);
    assert_eq!((out.server.timeouts, out.server.fast_retransmits), (1, 0));
    assert!(out.done_at >= ms(10), "waited for RTO_min: {}", out.done_at);
}

/// CMU09 §5: with RTO_min (10 ms) below the delayed-ACK timeout (40 ms), the
/// odd tail segment's ACK is held long enough to time the sender out.
#[test]
fn delayed_ack_beyond_rto_min_causes_spurious_timeout() {
    let out = exchange(&cfg_delack(), 256 * 1024, &[]);
    assert_eq!((out.server.timeouts, out.server.retransmitted_segments), (1, 1));
    assert_eq!(out.client.delayed_ack_timeouts, 0, "the retransmission is ACKed at once");
    assert!(out.done_at >= ms(10));
}

/// The same exchange twice gives identical results.
#[test]
fn exchange_is_deterministic() {
    let burst: Vec<u64> = (5..9).chain(50..52).map(seg).collect();
    let a = exchange(&linux(), 64 * 1024, &burst);
    let b = exchange(&linux(), 64 * 1024, &burst);
    assert_eq!(a, b);
}
