//! Exact checks against completion times worked out by hand.
//!
//! At 1 Gbps a byte takes 8 ns; every link has 25 µs of propagation delay
//! (RTT 100 µs / 4); a frame is stored and forwarded by the switch, so each of
//! its two hops costs its full serialization plus 25 µs.

use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::RequestOrder;
use incast_sim::workload::ResponseSize;
use incast_sim::{run, Scenario};

fn one_server(response: u64) -> Scenario {
    let mut s = Scenario::fast08(1);
    s.workload.response = ResponseSize::Sru(Bytes::new(response));
    s.workload.request = Bytes::new(100);
    s.workload.order = RequestOrder::Fixed;
    s.workload.server_jitter = SimDuration::ZERO;
    s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    s.stop.blocks = Some(1);
    s.stop.duration = None;
    s
}

/// One hop of a frame carrying `payload` bytes at 1 Gbps: serialization of
/// frame + preamble/IFG, then 25 µs of propagation.
fn hop(payload: u64) -> u64 {
    let wire = (payload + 58).max(64) + 20;
    wire * 8_000 + 25_000_000
}

/// A 100-byte request and a 1000-byte one-segment response: the block takes
/// exactly two hops each way (120.096 µs).
#[test]
fn single_segment_block_time_is_four_hops() {
    let r = run(&one_server(1000)).unwrap();
    let expected = 2 * hop(100) + 2 * hop(1000);
    assert_eq!(expected, 120_096_000);
    assert_eq!(r.blocks.len(), 1);
    assert_eq!(SimDuration::from_ps((r.blocks[0].time_ms * 1e9).round() as u64).as_ps(), expected);
    assert_eq!(r.summary.sim_time_s, expected as f64 / 1e12);
}

/// Ten full segments fit in the initial window (IW10): they leave the server
/// back to back and the switch forwards them at the same rate, so the last
/// one arrives nine serializations after the first would have.
#[test]
fn initial_window_burst_arrives_at_line_rate() {
    let r = run(&one_server(10 * 1460)).unwrap();
    let frame_time = (1460 + 58 + 20) * 8_000;
    let expected = 2 * hop(100) + 2 * hop(1460) + 9 * frame_time;
    assert_eq!((r.blocks[0].time_ms * 1e9).round() as u64, expected);
    assert_eq!(r.summary.timeouts, 0);
    assert_eq!(r.summary.drops, 0);
}

/// Token-bucket ports (`link.token_bucket`, Linux's tbf in front of a veth)
/// with full buckets take no serialization time: the one-segment block takes
/// the round trip's 100 µs and nothing more.
#[test]
fn token_bucket_ports_pass_an_unqueued_frame_without_serializing() {
    let mut s = one_server(1000);
    s.link.token_bucket = Some(Bytes::new(3 * 1538));
    let r = run(&s).unwrap();
    assert_eq!((r.blocks[0].time_ms * 1e9).round() as u64, 100_000_000);
}

/// The initial window through buckets three full frames deep: the server's
/// bucket lets three frames go at once and the other seven one frame time
/// apart, and the switch's port, full again, passes each as it comes. The
/// last arrives seven frame times after the first.
#[test]
fn token_bucket_initial_window_is_a_burst_of_the_depth_then_the_rate() {
    let mut s = one_server(10 * 1460);
    s.link.token_bucket = Some(Bytes::new(3 * 1538));
    let r = run(&s).unwrap();
    let frame_time = 1538 * 8_000;
    assert_eq!((r.blocks[0].time_ms * 1e9).round() as u64, 100_000_000 + 7 * frame_time);
    assert_eq!(r.summary.drops, 0);
}
