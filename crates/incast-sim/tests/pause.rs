//! Ethernet flow control (IEEE 802.3x PAUSE): FAST08 §6.

use incast_sim::net::fabric::{TopologyConfig, TreeConfig};
use incast_sim::net::BufferLimit;
use incast_sim::time::{BitRate, Bytes, SimDuration};
use incast_sim::{run, RunResult, Scenario};

fn incast(servers: u32, pause: bool) -> Scenario {
    let mut s = Scenario::fast08(servers);
    s.switch.pause = pause;
    s.stop.duration = Some(SimDuration::from_secs(1));
    s.seed = 1;
    s
}

fn goodput(s: &Scenario) -> f64 {
    run(s).unwrap().summary.goodput_mbps
}

/// One switch with short wires (5 µs a hop) and 64 KiB ports: 48 KiB above
/// XOFF cover the frames in flight on all 16 server links once they are
/// paused (`net::pause`, "Lossless when"). With the default 25 µs hops the
/// same 16 links would need about 150 KB above XOFF.
fn one_switch(pause: bool) -> Scenario {
    let mut s = incast(16, pause);
    s.link.rtt = SimDuration::from_micros(20);
    s.switch.buffer = BufferLimit::Bytes(Bytes::kib(64));
    s
}

/// FAST08 §6, Fig 14: on a single switch, enabling Ethernet flow control
/// lifts the goodput of 16 servers from the collapse to near line rate.
#[test]
fn fast08_fig14_pause_mitigates_incast_on_one_switch() {
    let off = goodput(&one_switch(false));
    let on = goodput(&one_switch(true));
    assert!(off < 200.0, "without PAUSE 16 servers collapse: {off:.1} Mbps");
    assert!(on > 800.0, "with PAUSE: {on:.1} Mbps");
}

/// Packets are conserved with and without PAUSE, with background flows,
/// on a star and across trunks.
#[test]
fn packets_are_conserved_with_pause_and_background_flows() {
    for pause in [false, true] {
        for topology in
            [TopologyConfig::Star, TopologyConfig::Tree(TreeConfig { edge_switches: 2, ..TreeConfig::default() })]
        {
            let mut s = incast(12, pause);
            s.topology = topology;
            s.background.tcp_flows = 2;
            s.stop.duration = Some(SimDuration::from_millis(100));
            let r = run(&s).unwrap();
            let m = &r.summary;
            assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight, "pause {pause}");
            assert!(m.background_goodput_mbps > 0.0 && r.background.len() == 2);
            assert_eq!(r.flows.len(), 12);
        }
    }
}

/// The headroom documented in `net::pause`: with a buffer of XOFF plus
/// 9.4 KB per link that can feed the client's port, nothing is dropped.
#[test]
fn no_drops_with_the_documented_headroom() {
    let servers = 8;
    let mut s = incast(servers, true);
    let xoff = 16 * 1024;
    let headroom = 2 * 25_000 * 1_000 / 8 / 1_000 + 2 * 1538 + 84; // 25 µs at 1 Gbps, both ways
    s.switch.buffer = BufferLimit::Bytes(Bytes::new(xoff + u64::from(servers) * headroom));
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(300));
    let r: RunResult = run(&s).unwrap();
    assert_eq!(r.summary.drops, 0);
    let client = r.ports.iter().find(|p| p.peer == "client").unwrap();
    assert!(client.peak_bytes > xoff, "the port must pass XOFF to test anything");
    let sent: u64 = r.ports.iter().map(|p| p.pause_frames).sum();
    assert!(sent > 0);
}

/// FAST08 §6's head-of-line blocking: 16 servers and one bulk background
/// flow share a 10 Gbps trunk from their edge switch to the core, where the
/// client and the background receiver each have a 1 Gbps port. The trunk
/// never fills, and nothing else loads the receiver's port; yet with PAUSE
/// the congested client port stops the whole trunk, and the background flow
/// with it.
fn victim(pause: bool, seed: u64) -> RunResult {
    let mut s = one_switch(pause);
    s.topology = TopologyConfig::Tree(TreeConfig { trunk_rate: Some(BitRate::gbps(10)), ..TreeConfig::default() });
    s.background.tcp_flows = 1;
    s.seed = seed;
    run(&s).unwrap()
}

#[test]
fn fast08_s6_pause_slows_a_victim_flow_to_an_uncongested_port() {
    for seed in [1, 2] {
        let (off, on) = (victim(false, seed), victim(true, seed));
        let (v_off, v_on) = (off.summary.background_goodput_mbps, on.summary.background_goodput_mbps);
        assert!(v_off > 900.0, "seed {seed}: without PAUSE the victim has its port to itself: {v_off:.1} Mbps");
        assert!(v_on < 0.9 * v_off, "seed {seed}: victim {v_off:.1} Mbps without PAUSE, {v_on:.1} with");
        let port = |r: &RunResult, node: &str, peer: &str| {
            r.ports.iter().find(|p| p.node == node && p.peer == peer).unwrap().clone()
        };
        assert_eq!(port(&on, "core", "bg_receiver0").drops, 0);
        assert!(port(&on, "edge0", "core").paused_us > 0.0, "the trunk was paused");
        assert!(port(&on, "core", "edge0").pause_frames > 0, "by the core");
    }
}
