//! Properties every run must have, whatever the scenario.

use incast_sim::net::BufferLimit;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::ResponseSize;
use incast_sim::{run, Scenario};

/// A lossy incast: 16 servers into a 32 KiB port with a short RTO.
fn lossy(seed: u64) -> Scenario {
    let mut s = Scenario::fast08(16);
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(200));
    s.seed = seed;
    s
}

/// Engine invariant: a run is a pure function of (scenario, seed).
#[test]
fn same_seed_gives_byte_identical_results() {
    let a = serde_json::to_string(&run(&lossy(3)).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&lossy(3)).unwrap()).unwrap();
    assert_eq!(a, b);
}

/// The seed matters: it shuffles the order of the requests.
#[test]
fn different_seeds_give_different_runs() {
    let a = run(&lossy(1)).unwrap();
    let b = run(&lossy(2)).unwrap();
    assert_ne!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

/// Every packet handed to a NIC is delivered, dropped, or still in flight.
#[test]
fn packets_are_conserved() {
    let r = run(&lossy(5)).unwrap().summary;
    assert!(r.drops > 0, "the scenario must be lossy to test anything");
    assert_eq!(r.packets_sent, r.packets_delivered + r.drops + r.packets_in_flight);
}

/// Every application byte arrives exactly once: with a block limit the client
/// has exactly `blocks × SRU` bytes from each server, despite losses and
/// retransmissions, and the rates are computed over the last completion.
#[test]
fn every_byte_is_delivered_exactly_once() {
    let mut s = lossy(7);
    s.stop = incast_sim::scenario::StopConfig { blocks: Some(5), duration: None };
    s.workload.response = ResponseSize::Sru(Bytes::new(100_000));
    let r = run(&s).unwrap();
    assert!(r.summary.retransmitted_packets > 0, "the run must retransmit to test anything");
    assert_eq!(r.summary.blocks, 5);
    for f in &r.flows {
        assert_eq!(f.bytes_delivered, 5 * 100_000, "flow {}", f.flow);
    }
    assert_eq!(r.summary.bytes_delivered, 16 * 5 * 100_000);
    let last = r.blocks.last().unwrap();
    let end_ms = last.start_s * 1e3 + last.time_ms;
    assert!((r.summary.sim_time_s * 1e3 - end_ms).abs() < 1e-6);
}

/// Blocks follow each other without gaps: each starts when the previous ends.
#[test]
fn blocks_are_back_to_back() {
    let r = run(&lossy(9)).unwrap();
    assert!(r.blocks.len() >= 2);
    for w in r.blocks.windows(2) {
        let end = w[0].start_s + w[0].time_ms / 1e3;
        assert!((w[1].start_s - end).abs() < 1e-12, "{:?}", w);
    }
}

/// A packet-limited buffer never holds more frames than its limit.
#[test]
fn packet_limited_port_respects_its_limit() {
    let mut s = lossy(11);
    s.switch.buffer = BufferLimit::Packets(64);
    let r = run(&s).unwrap().summary;
    assert!(r.queue_peak_bytes <= 64 * 1518);
    assert!(r.drops > 0);
}
