//! The incast collapse and its cure, in the FAST08/CMU09 setting:
//! 1 Gbps links, 100 µs RTT, 32 KiB switch port, 256 KiB SRU, NewReno.

use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

fn goodput(servers: u32, rto_min: SimDuration, fine_timers: bool) -> f64 {
    let mut s = Scenario::fast08(servers);
    s.tcp.rto.min = rto_min;
    if fine_timers {
        s.tcp.rto.granularity = SimDuration::ZERO;
        s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    }
    s.stop.duration = Some(SimDuration::from_secs(2));
    let r = run(&s).unwrap();
    r.summary.goodput_mbps
}

/// FAST08 §4: with the default 200 ms RTO_min, 16 servers get less than a
/// fifth of what one server gets.
#[test]
fn sixteen_servers_collapse_with_200ms_rto_min() {
    let one = goodput(1, SimDuration::from_millis(200), false);
    let sixteen = goodput(16, SimDuration::from_millis(200), false);
    assert!(one > 800.0, "one server should nearly fill the link, got {one:.1} Mbps");
    assert!(sixteen < 0.2 * one, "16 servers: {sixteen:.1} Mbps vs 1 server {one:.1} Mbps");
}

/// CMU09 §5: a 200 µs RTO_min with high-resolution timers and no delayed
/// ACK keeps 16 servers above 70% of the best achievable goodput.
#[test]
fn fine_grained_rto_keeps_sixteen_servers_above_70_percent() {
    let best = Scenario::fast08(16).best_goodput_bps() / 1e6;
    let sixteen = goodput(16, SimDuration::from_micros(200), true);
    assert!(sixteen > 0.7 * best, "16 servers: {sixteen:.1} Mbps, best {best:.1} Mbps");
}
