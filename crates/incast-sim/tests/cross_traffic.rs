//! Cross traffic beside the reads (constant-bit-rate UDP, GIP §VI-C) and
//! random loss on the links.

use incast_sim::net::fabric::{TopologyConfig, TreeConfig};
use incast_sim::time::{BitRate, SimDuration};
use incast_sim::{run, Scenario};

fn reads(servers: u32, udp: Option<BitRate>) -> Scenario {
    let mut s = Scenario::fast08(servers);
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    s.background.udp_rate = udp;
    s.stop.duration = Some(SimDuration::from_millis(500));
    s.seed = 2;
    s
}

/// GIP §VI-C: 100 Mbps of UDP into the client's port costs the reads about
/// 0.1 Gbps ("about 0.1 Gbps smaller ... consumed by the UDP background");
/// a little less here, as the datagrams also fill the idle round trip
/// between one server's blocks.
#[test]
fn gip_vi_c_udp_takes_its_share_of_the_bottleneck() {
    let alone = run(&reads(1, None)).unwrap().summary;
    let beside = run(&reads(1, Some(BitRate::mbps(100)))).unwrap().summary;
    let udp_wire = 100.0 * 1472.0 / 1538.0;
    assert!((beside.udp_goodput_mbps - udp_wire).abs() < 3.0, "UDP {:.1} Mbps", beside.udp_goodput_mbps);
    let lost = alone.goodput_mbps - beside.goodput_mbps;
    assert!(
        (60.0..130.0).contains(&lost),
        "alone {:.1}, beside UDP {:.1} Mbps",
        alone.goodput_mbps,
        beside.goodput_mbps
    );
}

/// Datagrams count as packets like segments do: sent = delivered + dropped
/// + in flight, on a star and across a tree's trunk.
#[test]
fn udp_datagrams_are_conserved() {
    for topology in [TopologyConfig::Star, TopologyConfig::Tree(TreeConfig::default())] {
        let mut s = reads(16, Some(BitRate::mbps(300)));
        s.topology = topology;
        let m = run(&s).unwrap().summary;
        assert!(m.drops > 0);
        assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight);
    }
}

/// Random loss of 1% on every link: a packet crosses two links, so about 2%
/// of packets never arrive; the switch's ports count what their links lost.
#[test]
fn random_loss_takes_its_share_of_every_link() {
    let mut s = reads(1, None);
    s.link.loss_ppb = 10_000_000;
    let r = run(&s).unwrap();
    let m = &r.summary;
    let rate = m.drops as f64 / m.packets_sent as f64;
    assert!((0.015..0.025).contains(&rate), "{rate}");
    assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight);
    let lost: u64 = r.ports.iter().map(|p| p.lost).sum();
    assert!(lost > 0 && lost < m.drops, "the hosts' links lose the rest");
    assert!(m.timeouts + m.fast_retransmits > 0);
}
