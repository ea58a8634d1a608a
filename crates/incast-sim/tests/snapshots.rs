//! Small incast tables pinned as snapshots: any change in what the engine
//! computes shows up here as a diff that must be explained in review.
//!
//! FAST08 settings (1 Gbps, 100 µs RTT, 256 KiB SRU, NewReno, delayed ACK
//! 40 ms), 300 ms of simulated time, seed 1.

use incast_sim::net::BufferLimit;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::{run, Scenario};
use std::fmt::Write;

fn table(rto_min: SimDuration) -> String {
    let mut out = String::from("servers  buffer  goodput_mbps  blocks  timeouts  fast_rtx  drops\n");
    for buffer_kib in [32, 128] {
        for servers in [1, 2, 4, 8, 16] {
            let mut s = Scenario::fast08(servers);
            s.switch.buffer = BufferLimit::Bytes(Bytes::kib(buffer_kib));
            s.tcp.rto.min = rto_min;
            s.stop.duration = Some(SimDuration::from_millis(300));
            s.seed = 1;
            let r = run(&s).unwrap().summary;
            writeln!(
                out,
                "{servers:>7}  {:>6}  {:>12.1}  {:>6}  {:>8}  {:>8}  {:>5}",
                format!("{buffer_kib}KiB"),
                r.goodput_mbps,
                r.blocks,
                r.timeouts,
                r.fast_retransmits,
                r.drops
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn incast_table_with_200ms_rto_min() {
    insta::assert_snapshot!(table(SimDuration::from_millis(200)));
}

#[test]
fn incast_table_with_200us_rto_min() {
    insta::assert_snapshot!(table(SimDuration::from_micros(200)));
}
