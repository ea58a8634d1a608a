//! DCTCP (RFC 8257) against NewReno on the same switch: a 128 KiB port that
//! marks above 20 packets (the DCTCP paper's K at 1 Gbps).

use incast_sim::net::BufferLimit;
use incast_sim::stats::Summary;
use incast_sim::tcp::CcChoice;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::{run, Scenario};

fn marking_switch(cc: CcChoice) -> Summary {
    let mut s = Scenario::fast08(16);
    s.switch.buffer = BufferLimit::Bytes(Bytes::kib(128));
    s.switch.ecn_threshold = Some(BufferLimit::Packets(20));
    s.tcp.cc = cc;
    s.stop.duration = Some(SimDuration::from_secs(1));
    let sum = run(&s).unwrap().summary;
    println!("{cc:?}: {:.1} Mbps, {} timeouts, {} marks", sum.goodput_mbps, sum.timeouts, sum.ecn_marks);
    sum
}

/// Only ECN-capable (DCTCP) packets are marked; DCTCP keeps the queue short
/// enough to avoid most timeouts and gets several times NewReno's goodput.
#[test]
fn rfc8257_dctcp_beats_newreno_on_a_marking_switch() {
    let (newreno, dctcp) = (marking_switch(CcChoice::Reno), marking_switch(CcChoice::Dctcp));
    assert_eq!(newreno.ecn_marks, 0);
    assert!(dctcp.ecn_marks > 0);
    assert!(dctcp.timeouts < newreno.timeouts);
    assert!(dctcp.goodput_mbps > 3.0 * newreno.goodput_mbps, "{} vs {}", dctcp.goodput_mbps, newreno.goodput_mbps);
}
