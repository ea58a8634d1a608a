//! Fat trees and leaf-spines: one flow on the empty fabric takes the time
//! worked out by hand, flows hashed over the spines spread as a binomial
//! draw, and the forwarding tables grow with the ports, not the hosts.
//!
//! Every link here runs at 10 Gbps with 1 µs of propagation and `link.rtt`
//! is 4 µs, so the hosts add nothing: a hop of a frame carrying `p` bytes
//! costs its serialization (`p` + 58 bytes of headers and FCS + 20 of
//! preamble and gap, at 0.8 ns a byte) plus 1 µs. The round trip across the
//! fat tree (19.8 µs for a full segment and its ACK) exceeds the initial
//! window's serialization (12.3 µs), so slow start shows. The client is host 0 and its server
//! host 1, in another pod (another leaf), so a frame crosses 6 links of a
//! fat tree, 4 of a leaf-spine.

use incast_sim::net::buffer::BufferModel;
use incast_sim::net::clos::{Shape, Spreading};
use incast_sim::net::ecmp::FiveTuple;
use incast_sim::net::fabric::{Fabric, FatTreeConfig, Hop, HostCounts, LeafSpineConfig, TopologyConfig, Trunk};
use incast_sim::net::{Network, QueueLimit};
use incast_sim::tcp::DelayedAckMode;
use incast_sim::time::{BitRate, Bytes, SimDuration};
use incast_sim::workload::{RequestOrder, ResponseSize};
use incast_sim::{run, Scenario};

const FAT_TREE: TopologyConfig = TopologyConfig::FatTree(FatTreeConfig {
    k: 4,
    trunk: Trunk { rate: None, delay: None },
    spreading: Spreading::Flow,
});

fn leaf_spine(spines: u32) -> TopologyConfig {
    TopologyConfig::LeafSpine(LeafSpineConfig {
        leaves: 4,
        spines,
        hosts_per_leaf: 4,
        trunk: Trunk::default(),
        spreading: Spreading::Flow,
    })
}

/// One block of `response` bytes from one server, nothing else on the fabric.
fn one_flow(topology: TopologyConfig, response: u64) -> Scenario {
    let mut s = Scenario::fast08(1);
    s.topology = topology;
    s.link.rate = BitRate::gbps(10);
    s.link.rtt = SimDuration::from_micros(4);
    s.link.propagation = SimDuration::from_micros(1);
    s.workload.response = ResponseSize::Sru(Bytes::new(response));
    s.workload.request = Bytes::new(100);
    s.workload.order = RequestOrder::Fixed;
    s.workload.server_jitter = SimDuration::ZERO;
    s.tcp.delayed_ack.mode = DelayedAckMode::Off;
    s.stop.blocks = Some(1);
    s.stop.duration = None;
    s
}

/// Serialization of one frame carrying `payload` bytes at 10 Gbps, in ps.
fn frame_time(payload: u64) -> u64 {
    ((payload + 58).max(64) + 20) * 800
}

/// One hop: serialization plus 1 µs of propagation, in ps.
fn hop(payload: u64) -> u64 {
    frame_time(payload) + 1_000_000
}

fn block_ps(s: &Scenario) -> u64 {
    let r = run(s).unwrap();
    assert_eq!((r.summary.drops, r.summary.timeouts), (0, 0));
    (r.blocks[0].time_ms * 1e9).round() as u64
}

/// The request crosses the fabric, then the one-segment response does:
/// store and forward at every hop.
#[test]
fn one_segment_crosses_six_hops_of_a_fat_tree_and_four_of_a_leaf_spine() {
    assert_eq!(block_ps(&one_flow(FAT_TREE, 1000)), 6 * hop(100) + 6 * hop(1000));
    assert_eq!(block_ps(&one_flow(leaf_spine(2), 1000)), 4 * hop(100) + 4 * hop(1000));
}

/// Ten segments fit in the initial window (IW10): they leave back to back
/// and every tier forwards them at the same rate, so the last arrives nine
/// serializations after the first would have.
#[test]
fn the_initial_window_crosses_the_fat_tree_at_line_rate() {
    let expected = 6 * hop(100) + 6 * hop(1460) + 9 * frame_time(1460);
    assert_eq!(block_ps(&one_flow(FAT_TREE, 10 * 1460)), expected);
}

/// Thirty segments take one slow-start ramp (RFC 5681 §3.1): the first ten,
/// then each of their ACKs (one per segment, delayed ACK off) opens the
/// window by one and releases two more, so the twenty of the second round
/// leave back to back from the first ACK's arrival, one round trip (data one
/// way, ACK back) after the first segment left.
#[test]
fn thirty_segments_take_one_slow_start_ramp_across_the_fat_tree() {
    let first_ack = 6 * hop(100) + 6 * hop(1460) + 6 * hop(0);
    let expected = first_ack + 19 * frame_time(1460) + 6 * hop(1460);
    assert_eq!(block_ps(&one_flow(FAT_TREE, 30 * 1460)), expected);
}

/// The network of `shape` at 1 Gbps, the workload of one client and `servers` servers placed on it.
fn network(shape: Shape, spreading: Spreading, seed: u64) -> Network {
    let hop = Hop { rate: BitRate::gbps(1), delay: SimDuration::from_micros(1), loss_ppb: 0, wan: false };
    let f = Fabric::clos(shape, Trunk::default(), spreading, HostCounts::servers(1), hop).unwrap();
    Network::build(&f, QueueLimit::UNLIMITED, BufferModel::Static, seed)
}

/// Flows hashed over S spines: how many take each spine is Binomial(N, 1/S).
/// For 40 seeds, 2,000 flows between hosts on different leaves each pick a
/// spine by their 5-tuple's hash; every spine's count stays within 4.5
/// standard deviations of N/S (a binomial count leaves that band with
/// probability below 10⁻⁵, so 40 seeds × S spines stay inside unless the
/// hash is biased or correlated).
#[test]
fn flows_hashed_over_the_spines_spread_within_binomial_bounds() {
    let (leaves, hosts_per_leaf) = (8, 16);
    for spines in [2u32, 4, 7] {
        let shape = Shape::LeafSpine { leaves, spines, hosts_per_leaf };
        for seed in 0..40 {
            let net = network(shape, Spreading::Flow, seed);
            let mut count = vec![0u32; spines as usize];
            let mut flows = 0;
            'pairs: for src in 0..leaves * hosts_per_leaf {
                for dst in 0..leaves * hosts_per_leaf {
                    if src % leaves == dst % leaves {
                        continue;
                    }
                    if flows == 2_000 {
                        break 'pairs;
                    }
                    let key = FiveTuple::tcp(flows, src, dst, true).key(seed);
                    let path = net.path_of(src, dst, key).unwrap();
                    let spine = net.name(net.port(path[1]).peer).to_owned();
                    count[spine.trim_start_matches("spine").parse::<usize>().unwrap()] += 1;
                    flows += 1;
                }
            }
            let (n, p) = (f64::from(flows), 1.0 / f64::from(spines));
            let (mean, sd) = (n * p, (n * p * (1.0 - p)).sqrt());
            for (spine, &c) in count.iter().enumerate() {
                assert!(
                    (f64::from(c) - mean).abs() <= 4.5 * sd,
                    "seed {seed}: spine {spine} of {spines} carries {c} of {flows} flows (mean {mean:.0}, sd {sd:.1})"
                );
            }
        }
    }
}

/// A sprayed flow's frames take every spine; a hashed flow's take one.
#[test]
fn spraying_spreads_one_flow_over_every_spine() {
    let shape = Shape::LeafSpine { leaves: 2, spines: 4, hosts_per_leaf: 2 };
    let mut spray = network(shape, Spreading::Packet, 1);
    let key = FiveTuple::tcp(0, 0, 1, true).key(1);
    let leaf0 = spray.port(spray.nic(0)).peer;
    let mut used: Vec<u32> = (0..400).map(|_| spray.next_hop(leaf0, 1, key).0).collect();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), 4);
    let mut hashed = network(shape, Spreading::Flow, 1);
    let first = hashed.next_hop(leaf0, 1, key);
    assert!((0..400).all(|_| hashed.next_hop(leaf0, 1, key) == first));
}

/// A multipath switch holds an entry per port (k of them in a fat tree):
/// the tables grow as k³ while the hosts × switches of a per-host table
/// would grow as k⁵.
#[test]
fn route_tables_grow_with_the_ports_not_the_hosts() {
    for k in [4u32, 8, 16, 24] {
        let net = network(Shape::FatTree { k }, Spreading::Flow, 0);
        let entries = net.route_entries();
        assert_eq!(entries.len() as u32, 5 * k * k / 4);
        assert!(entries.iter().all(|&e| e == k as usize), "k = {k}: {entries:?}");
        let per_host_table = u64::from(k).pow(3) / 4 * entries.len() as u64;
        assert_eq!(entries.iter().sum::<usize>() as u64 * u64::from(k * k / 4), per_host_table);
    }
}

/// The synchronized read runs on the new fabrics with its servers in other pods.
#[test]
fn a_synchronized_read_spreads_its_servers_over_the_pods_and_finishes() {
    let mut s = Scenario::fast08(8);
    s.topology = FAT_TREE;
    s.stop.blocks = Some(5);
    s.stop.duration = None;
    let r = run(&s).unwrap();
    assert_eq!(r.blocks.len(), 5);
    let ports: Vec<(String, String)> = r.ports.iter().map(|p| (p.node.clone(), p.peer.clone())).collect();
    assert!(ports.contains(&("pod0.edge0".into(), "client".into())));
    assert!(ports.contains(&("pod1.edge0".into(), "server0".into())));
    assert!(ports.contains(&("pod0.edge1".into(), "server3".into())));
}

/// A run on a fat tree is a pure function of its scenario and seed, and the
/// seed moves the flows' paths.
#[test]
fn a_fat_tree_run_is_deterministic() {
    let mut s = Scenario::fast08(12);
    s.topology = FAT_TREE;
    s.stop.duration = Some(SimDuration::from_millis(20));
    let a = serde_json::to_string(&run(&s).unwrap()).unwrap();
    assert_eq!(a, serde_json::to_string(&run(&s).unwrap()).unwrap());
}
