//! Several clients reading at once (`workload.clients`, `workload.server_sets`).

use incast_sim::net::fabric::{GraphConfig, LinkSpec, NodeKind, NodeSpec, TopologyConfig, TreeConfig};
use incast_sim::scenario::StopConfig;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::clients::ServerSets;
use incast_sim::workload::ResponseSize;
use incast_sim::{run, RunResult, Scenario};

/// `clients` clients each reading 1 MiB from each of `servers` servers, 200 ms.
fn reads(clients: u32, servers: u32, sets: ServerSets) -> Scenario {
    let mut s = Scenario::fast08(servers);
    s.workload.clients = clients;
    s.workload.server_sets = sets;
    s.workload.response = ResponseSize::Sru(Bytes::mib(1));
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(200));
    s
}

/// Two clients, one server each: with disjoint sets every client has a
/// server of its own and gets nearly its own link's best (two bottleneck
/// ports, one per client); with shared sets the one server's uplink carries
/// both clients' responses, so together they get at most one link's best.
#[test]
fn disjoint_sets_give_each_client_its_own_bottleneck() {
    let disjoint = run(&reads(2, 1, ServerSets::Disjoint)).unwrap().summary;
    let shared = run(&reads(2, 1, ServerSets::Shared)).unwrap().summary;
    let one_link = 949.28;
    for g in &disjoint.client_goodput_mbps {
        assert!(*g > 0.9 * one_link, "disjoint: {:?}", disjoint.client_goodput_mbps);
    }
    assert!(shared.goodput_mbps < one_link, "shared: {}", shared.goodput_mbps);
    for g in &shared.client_goodput_mbps {
        assert!(*g > 0.4 * one_link && *g < 0.6 * one_link, "shared: {:?}", shared.client_goodput_mbps);
    }
    assert!((disjoint.best_goodput_mbps - 2.0 * one_link).abs() < 0.01);
}

/// The per-client figures split the run's: goodputs and bytes add up to the
/// aggregate, each client's blocks and its connections' rows are its own.
#[test]
fn per_client_figures_add_up_to_the_run() {
    let r = run(&reads(3, 4, ServerSets::Shared)).unwrap();
    assert_eq!(r.clients.len(), 3);
    let sum: f64 = r.clients.iter().map(|c| c.goodput_mbps).sum();
    assert!((sum - r.summary.goodput_mbps).abs() < 1e-9);
    assert_eq!(r.clients.iter().map(|c| c.bytes_delivered).sum::<u64>(), r.summary.bytes_delivered);
    assert_eq!(r.clients.iter().map(|c| c.blocks).sum::<u64>(), r.summary.blocks);
    assert_eq!(r.clients.iter().map(|c| c.timeouts).sum::<u64>(), r.summary.timeouts);
    assert_eq!(r.flows.len(), 12);
    assert_eq!((r.flows[5].client, r.flows[5].server), (Some(1), Some(1)));
    for c in &r.clients {
        let blocks = r.blocks.iter().filter(|b| b.client == c.client).count() as u64;
        assert_eq!(blocks, c.blocks, "client {}", c.client);
    }
}

/// `stop.blocks` waits for every client: the run ends when the slowest
/// completes its third block, and the others read on until then.
#[test]
fn the_block_limit_waits_for_every_client() {
    let mut s = reads(2, 8, ServerSets::Shared);
    s.stop = StopConfig { blocks: Some(3), duration: None };
    let r = run(&s).unwrap();
    assert!(r.clients.iter().all(|c| c.blocks >= 3), "{:?}", r.clients);
    assert!(r.clients.iter().any(|c| c.blocks == 3));
    let last = r.blocks.last().unwrap();
    assert_eq!(last.block, 2, "the run ends on someone's third block");
    assert!((r.summary.sim_time_s - (last.start_s + last.time_ms / 1e3)).abs() < 1e-9);
}

/// One client with the new fields at their defaults is the single-client engine.
#[test]
fn one_client_is_unchanged_by_the_defaults() {
    let mut s = reads(1, 8, ServerSets::Shared);
    let a = serde_json::to_string(&run(&s).unwrap()).unwrap();
    s.workload.server_sets = ServerSets::Disjoint;
    let b = serde_json::to_string(&run(&s).unwrap()).unwrap();
    assert_eq!(a, b, "with one client, disjoint and shared sets are the same servers");
}

fn node(name: &str, kind: NodeKind) -> NodeSpec {
    NodeSpec { name: name.into(), kind }
}

/// Two clients on switch `x`, `servers` servers on switch `y`, one trunk between.
fn two_client_file(servers: u32) -> TopologyConfig {
    let mut nodes = vec![node("c0", NodeKind::Client), node("c1", NodeKind::Client)];
    nodes.extend([node("x", NodeKind::Switch), node("y", NodeKind::Switch)]);
    let mut links = vec![LinkSpec::between("c0", "x"), LinkSpec::between("c1", "x"), LinkSpec::between("x", "y")];
    for i in 0..servers {
        nodes.push(node(&format!("s{i}"), NodeKind::Server));
        links.push(LinkSpec::between(&format!("s{i}"), "y"));
    }
    TopologyConfig::Graph(GraphConfig { nodes, links, ..GraphConfig::default() })
}

fn lossy(topology: TopologyConfig, sets: ServerSets) -> RunResult {
    let mut s = reads(2, 6, sets);
    s.workload.response = ResponseSize::Sru(Bytes::kib(256));
    s.topology = topology;
    s.stop.duration = Some(SimDuration::from_millis(100));
    s.seed = 4;
    run(&s).unwrap()
}

/// Every packet handed to a NIC is delivered, dropped, or still in flight,
/// with two clients on every fabric and both kinds of server sets.
#[test]
fn packets_are_conserved_with_several_clients() {
    let tree = TopologyConfig::Tree(TreeConfig { edge_switches: 3, trunk_rate: None, trunk_delay: None });
    for (name, t, sets) in [
        ("star shared", TopologyConfig::Star, ServerSets::Shared),
        ("star disjoint", TopologyConfig::Star, ServerSets::Disjoint),
        ("tree:3 shared", tree.clone(), ServerSets::Shared),
        ("tree:3 disjoint", tree, ServerSets::Disjoint),
        ("file shared", two_client_file(6), ServerSets::Shared),
        ("file disjoint", two_client_file(12), ServerSets::Disjoint),
    ] {
        let r = lossy(t, sets);
        let s = &r.summary;
        assert!(s.drops > 0, "{name}: the run must be lossy to test anything");
        assert_eq!(s.packets_sent, s.packets_delivered + s.drops + s.packets_in_flight, "{name}");
        assert_eq!(r.ports.iter().map(|p| p.drops).sum::<u64>(), s.drops, "{name}");
        assert!(r.clients.iter().all(|c| c.blocks > 0), "{name}: {:?}", r.clients);
    }
}

/// Every client sits on the star's switch and on the tree's core, named by its index.
#[test]
fn clients_sit_where_the_one_client_would() {
    let r = lossy(TopologyConfig::Star, ServerSets::Disjoint);
    let peers = |node: &str| r.ports.iter().filter(|p| p.node == node).map(|p| p.peer.clone()).collect::<Vec<_>>();
    assert_eq!(peers("switch")[..3], ["client0", "client1", "server0"]);
    assert_eq!(peers("switch").len(), 2 + 12);
    let tree = TopologyConfig::Tree(TreeConfig { edge_switches: 2, trunk_rate: None, trunk_delay: None });
    let r = lossy(tree, ServerSets::Shared);
    let core: Vec<_> = r.ports.iter().filter(|p| p.node == "core").map(|p| p.peer.as_str()).collect();
    assert_eq!(core, ["client0", "client1", "edge0", "edge1"]);
}

/// A topology file lists one client node per client and every server host;
/// the error names the mismatch.
#[test]
fn a_file_must_list_every_client_and_server() {
    let error = |clients, sets, t| {
        let mut s = reads(clients, 6, sets);
        s.topology = t;
        s.validate().unwrap_err().to_string()
    };
    assert_eq!(
        error(3, ServerSets::Shared, two_client_file(6)),
        "topology.nodes: lists 2 nodes of kind \"client\" but workload.clients = 3"
    );
    assert_eq!(
        error(2, ServerSets::Disjoint, two_client_file(6)),
        "topology.nodes: lists 6 nodes of kind \"server\" but 2 clients × servers = 6 with disjoint server sets need 12"
    );
}
