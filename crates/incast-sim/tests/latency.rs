//! SIGCOMM09 §2.2: a latency-sensitive client beside bulk cross traffic.
//!
//! Ten bulk TCP flows send to one server; another client asks that server
//! for 1 KB at a time, waiting for each response before the next request
//! (a synchronized read of one server with a 1 KB SRU: each block is one
//! request). Its requests queue behind the bulk data at the server's port,
//! counted in frames as ns-2 counts them (128 frames): a 100-byte request
//! needs a slot as a full frame does, as in switches that buffer in cells.
//! (Counted in bytes, a small request nearly always fits where a full
//! frame would not, and is almost never lost.)

use incast_sim::net::BufferLimit;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::ResponseSize;
use incast_sim::{run, RunResult, Scenario};

fn requests(rto_min: SimDuration, fine_timers: bool) -> RunResult {
    let mut s = Scenario::fast08(1);
    s.workload.response = ResponseSize::Sru(Bytes::new(1000));
    s.background.tcp_flows = 10;
    s.background.tcp_to_server = true;
    s.switch.buffer = BufferLimit::Packets(128);
    s.tcp.rto.min = rto_min;
    if fine_timers {
        s.tcp.rto.granularity = SimDuration::ZERO;
        s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    }
    s.stop.duration = Some(SimDuration::from_secs(2));
    s.seed = 1;
    run(&s).unwrap()
}

/// The fraction of requests that took at least `ms`.
fn slower_than(r: &RunResult, ms: f64) -> f64 {
    r.blocks.iter().filter(|b| b.time_ms >= ms).count() as f64 / r.blocks.len() as f64
}

/// SIGCOMM09 §2.2: "Approximately 1% of these requests experienced a TCP
/// timeout, delaying the response by at least 200ms"; with a 200 µs RTO_min
/// and high-resolution timers no request waits that long.
#[test]
fn sigcomm09_2_2_some_requests_wait_out_a_200ms_timeout() {
    let coarse = requests(SimDuration::from_millis(200), false);
    let fine = requests(SimDuration::from_micros(200), true);
    let timed_out = |r: &RunResult| r.blocks.iter().any(|b| b.max_flow_timeouts > 0);
    assert!(slower_than(&coarse, 200.0) > 0.0);
    assert!(timed_out(&fine), "requests still time out, but after 200 µs");
    assert_eq!(slower_than(&fine, 200.0), 0.0);
    assert!(fine.blocks.len() > coarse.blocks.len());
}
