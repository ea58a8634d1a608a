//! Every fabric conserves packets, and the per-port table accounts for them.

use incast_sim::net::buffer::BufferModel;
use incast_sim::net::fabric::{GraphConfig, LinkSpec, NodeKind, NodeSpec, TopologyConfig, TreeConfig};
use incast_sim::time::{BitRate, SimDuration};
use incast_sim::{run, RunResult, Scenario};

/// 12 lossy servers for 100 ms on `topology`.
fn lossy(topology: TopologyConfig) -> RunResult {
    let mut s = Scenario::fast08(12);
    s.topology = topology;
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(100));
    s.seed = 4;
    run(&s).unwrap()
}

fn tree(edge_switches: u32, trunk_rate: Option<BitRate>) -> TopologyConfig {
    TopologyConfig::Tree(TreeConfig { edge_switches, trunk_rate, trunk_delay: None })
}

/// Twelve servers on two switches that reach the client's switch over two
/// different trunks of a ring.
fn ring_file() -> TopologyConfig {
    let node = |name: &str, kind| NodeSpec { name: name.into(), kind };
    let link = LinkSpec::between;
    let mut nodes = vec![node("c", NodeKind::Client), node("x", NodeKind::Switch), node("y", NodeKind::Switch)];
    nodes.push(node("z", NodeKind::Switch));
    let mut links = vec![link("c", "x"), link("x", "y"), link("y", "z"), link("z", "x")];
    for i in 0..12 {
        let name = format!("s{i}");
        links.push(link(&name, if i % 2 == 0 { "y" } else { "z" }));
        nodes.push(node(&name, NodeKind::Server));
    }
    TopologyConfig::Graph(GraphConfig { nodes, links, ..GraphConfig::default() })
}

fn every_topology() -> Vec<(&'static str, TopologyConfig)> {
    vec![
        ("star", TopologyConfig::Star),
        ("tree:3", tree(3, None)),
        ("path with a 500 Mbps trunk", tree(1, Some(BitRate::mbps(500)))),
        ("ring file", ring_file()),
    ]
}

/// Every packet handed to a NIC is delivered, dropped at a switch port, or
/// still queued or on a link; the ports' drops add up to the run's.
#[test]
fn packets_are_conserved_on_every_topology() {
    for (name, t) in every_topology() {
        let r = lossy(t);
        let s = &r.summary;
        assert!(s.drops > 0, "{name}: the run must be lossy to test anything");
        assert_eq!(s.packets_sent, s.packets_delivered + s.drops + s.packets_in_flight, "{name}");
        assert_eq!(r.ports.iter().map(|p| p.drops).sum::<u64>(), s.drops, "{name}");
    }
}

/// The ports table names each queue by its switch and the far end.
#[test]
fn port_table_names_switch_and_peer() {
    let r = lossy(tree(2, None));
    let port = |node: &str, peer: &str| r.ports.iter().find(|p| p.node == node && p.peer == peer).unwrap();
    let client = port("core", "client");
    let trunks = port("edge0", "core").drops + port("edge1", "core").drops;
    assert!(trunks > 0, "six servers share each edge switch's trunk");
    assert_eq!(client.drops + trunks, r.summary.drops, "only ports toward the client overflow");
    assert_eq!(client.peak_bytes, r.summary.queue_peak_bytes);
    assert!(client.mean_bytes > 0.0 && client.mean_bytes <= client.peak_bytes as f64);
    // Two host ports and one trunk port per edge switch; two trunk ports and the client's at the core.
    assert_eq!(r.ports.len(), 2 * (6 + 1) + 3);
    assert_eq!(port("edge1", "core").rate_mbps, 1000.0);
}

/// GIP Fig 14: when the intermediate link is slower than the hosts' links,
/// the losses move from the client's port to the trunk's.
#[test]
fn a_slow_trunk_becomes_the_bottleneck() {
    let r = lossy(tree(1, Some(BitRate::mbps(500))));
    let port = |node: &str, peer: &str| r.ports.iter().find(|p| p.node == node && p.peer == peer).unwrap();
    assert!(port("edge0", "core").drops > 0);
    assert_eq!(port("core", "client").drops, 0);
    assert!(r.summary.goodput_mbps < 500.0);
}

/// The handshake's RTT sample follows the path: a tree's server is a trunk
/// further away each way (one more store-and-forward hop and its cable), so
/// one server's first block takes longer.
#[test]
fn a_tree_adds_the_trunk_to_the_round_trip() {
    let first_block_ms = |t| {
        let mut s = Scenario::fast08(1);
        s.topology = t;
        s.workload.server_jitter = SimDuration::ZERO;
        s.stop.blocks = Some(1);
        run(&s).unwrap().blocks[0].time_ms
    };
    let star = first_block_ms(TopologyConfig::Star);
    let tree = first_block_ms(tree(1, None));
    assert!(tree > star + 0.02, "star {star} ms, tree {tree} ms");
}

/// Validation names the field, and for a file the node or link.
#[test]
fn validation_names_the_topology_field() {
    let error = |t| {
        let mut s = Scenario::fast08(2);
        s.topology = t;
        s.validate().unwrap_err().to_string()
    };
    assert_eq!(
        error(tree(0, None)),
        "topology.edge_switches: must be a whole number of edge switches between 1 and 100000, got 0"
    );
    assert_eq!(
        error(tree(1, Some(BitRate(0)))),
        "topology.trunk_rate: must be \"link\" or a rate; must be a positive rate (e.g. \"1Gbps\"), got '0bps'"
    );
    assert_eq!(error(ring_file()), "topology.nodes: lists 12 nodes of kind \"server\" but servers = 2");
    // More edge switches than servers: the rest would hang off the core with no
    // host, and cost time and memory for nothing (tree:100000 did).
    assert_eq!(
        error(tree(100_000, None)),
        "topology.edge_switches: 100000 edge switches for 2 server hosts would leave 99998 without a host; at most 2"
    );
}

fn with_buffer_model(model: BufferModel) -> incast_sim::stats::Summary {
    let mut s = Scenario::fast08(12);
    s.switch.buffer_model = model;
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(200));
    s.seed = 4;
    run(&s).unwrap().summary
}

/// FAST08 §4.1: QoS classes shrink what a flow gets of the port; a shared
/// memory (Choudhury–Hahne) lends the congested port the idle ports' buffer.
#[test]
fn buffer_models_move_the_collapse() {
    let fixed = with_buffer_model(BufferModel::Static);
    let qos = with_buffer_model(BufferModel::Qos { classes: 4 });
    let shared = with_buffer_model(BufferModel::Shared { alpha_thousandths: 1000 });
    assert!(qos.queue_peak_bytes <= 8 * 1024 && fixed.queue_peak_bytes > 24 * 1024);
    assert!(shared.queue_peak_bytes > 4 * fixed.queue_peak_bytes, "13 ports × 32 KiB shared");
    assert!(qos.drops > fixed.drops && shared.drops < fixed.drops);
    for m in [fixed, qos, shared] {
        assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight);
    }
}

/// A client `c` and four servers on one switch `x`, the client's link at
/// `client` and each server's at `server` (the host links' `link.rate` stays 1 Gbps).
fn one_switch_file(client: BitRate, server: BitRate) -> TopologyConfig {
    let node = |name: &str, kind| NodeSpec { name: name.into(), kind };
    let mut nodes = vec![node("c", NodeKind::Client), node("x", NodeKind::Switch)];
    let mut links = vec![LinkSpec { rate: Some(client), ..LinkSpec::between("c", "x") }];
    for i in 0..4 {
        let name = format!("s{i}");
        links.push(LinkSpec { rate: Some(server), ..LinkSpec::between(&name, "x") });
        nodes.push(node(&name, NodeKind::Server));
    }
    TopologyConfig::Graph(GraphConfig { nodes, links, ..GraphConfig::default() })
}

/// The best goodput a run is measured against is what the routes can carry
/// to the client (the max flow along them), not what a `link.rate` link
/// would: a 10 Gbps fabric is not held to 949 Mbps, a 100 Mbps client link
/// or four 100 Mbps servers not to a gigabit, a 500 Mbps trunk not to its
/// host links. Full-sized frames carry 1460 of 1538 wire bytes.
#[test]
fn best_goodput_is_what_the_routes_carry_to_the_client() {
    let payload = 1460.0 / 1538.0;
    let cases = [
        ("star", TopologyConfig::Star, 1e9),
        ("10 Gbps file", one_switch_file(BitRate::gbps(10), BitRate::gbps(10)), 1e10),
        ("100 Mbps client link", one_switch_file(BitRate::mbps(100), BitRate::gbps(10)), 1e8),
        ("four 100 Mbps servers", one_switch_file(BitRate::gbps(10), BitRate::mbps(100)), 4e8),
        ("a 500 Mbps trunk", tree(1, Some(BitRate::mbps(500))), 5e8),
        ("two edge switches, 300 Mbps trunks", tree(2, Some(BitRate::mbps(300))), 6e8),
    ];
    for (name, topology, bottleneck_bps) in cases {
        let mut s = Scenario::fast08(4);
        s.topology = topology;
        s.stop.blocks = Some(2);
        let r = run(&s).unwrap();
        let best = r.summary.best_goodput_mbps;
        assert!((best - bottleneck_bps * payload / 1e6).abs() < 1e-6, "{name}: {best}");
        assert!(r.summary.utilization > 0.0 && r.summary.utilization <= 1.0, "{name}: {}", r.summary.utilization);
    }
}
