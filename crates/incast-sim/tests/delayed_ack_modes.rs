//! Delayed-ACK modes in the FAST08 setting with CMU09's fine-grained RTO
//! (RTO_min 200 µs, exact timers, 1 s simulated): goodput at 8, 16 and 32
//! servers for `standard` 40 ms, `off`, `linux`, `adaptive` and `standard`
//! 200 µs (CMU09 Fig 6). Run with `--nocapture` to see the table.

use incast_sim::tcp::{DelayedAckConfig, DelayedAckMode};
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

fn goodput(servers: u32, delayed_ack: DelayedAckConfig) -> f64 {
    let mut s = Scenario::fast08(servers);
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.tcp.rto.granularity = SimDuration::ZERO;
    s.tcp.delayed_ack = delayed_ack;
    s.stop.duration = Some(SimDuration::from_secs(1));
    run(&s).unwrap().summary.goodput_mbps
}

fn modes() -> [(&'static str, DelayedAckConfig); 5] {
    let mode = |mode| DelayedAckConfig { mode, ..DelayedAckConfig::default() };
    [
        ("standard 40ms", DelayedAckConfig::default()),
        ("off", DelayedAckConfig::off()),
        ("linux", mode(DelayedAckMode::Linux)),
        ("adaptive", mode(DelayedAckMode::Adaptive)),
        ("standard 200us", mode(DelayedAckMode::Standard(SimDuration::from_micros(200)))),
    ]
}

/// CMU09 §5 and Fig 6: with a 200 µs RTO_min, the 40 ms delayed ACK costs
/// goodput at 16 servers; acknowledging every segment, or delaying by a
/// multiple of the inter-arrival gap, does at least as well.
#[test]
fn off_and_adaptive_at_least_standard_40ms_at_sixteen_servers() {
    let counts = [8, 16, 32];
    let modes = modes();
    let mut table = vec![[0.0; 3]; modes.len()];
    println!("{:<16}{:>10}{:>10}{:>10}", "goodput Mbps", "8", "16", "32");
    for (row, (name, da)) in table.iter_mut().zip(modes.iter()) {
        for (cell, &n) in row.iter_mut().zip(counts.iter()) {
            *cell = goodput(n, *da);
        }
        println!("{name:<16}{:>10.1}{:>10.1}{:>10.1}", row[0], row[1], row[2]);
    }
    let (standard, off, adaptive) = (table[0][1], table[1][1], table[3][1]);
    assert!(off >= standard, "16 servers: off {off:.1} < standard 40 ms {standard:.1} Mbps");
    assert!(adaptive >= standard, "16 servers: adaptive {adaptive:.1} < standard 40 ms {standard:.1} Mbps");
}
