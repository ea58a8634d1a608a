//! The fabric a run uses: named hosts and switches, the links between them
//! and how switches route, as a scenario describes it.
//!
//! **Models:** six topologies. `star`: every host on one switch (FAST08 §3,
//! CMU09 §3; the default). `tree`: the client on a core switch and the
//! servers spread round-robin over K edge switches, each joined to the core
//! by one trunk (FAST08 §3.2's Procurve tree); with K = 1 this is the GIP
//! Fig 14 path, where the trunk is the intermediate link that becomes the
//! bottleneck (GIP §VI-C). `graph`: any set of nodes and links from a file,
//! each link with its own rate and delay in each direction. `fat_tree` and
//! `leaf_spine`: the datacenter fabrics of `net::clos`, whose switches
//! forward over equal-cost paths (`net::ecmp`); the workload's hosts are
//! its first hosts, and every other host of the fabric exists too. In the star and
//! the tree every cable is `link.propagation` long, or server i's i·`link.skew`
//! longer, so that servers sending in step stop reaching a switch at the same
//! picosecond (where `event`'s tie order would decide the drops). With several
//! clients (`workload::clients`) every client sits where the one client
//! would (the star's switch, the tree's core), named `client0`, `client1`,
//! ...; a file lists one `client` node per client, in client order, and its
//! servers in server order (with disjoint sets, client 0's group first). Switches forward
//! on the destination host by a static table: shortest paths by hop count
//! (ties go to the link listed first), overridden per (switch, destination)
//! by explicit routes, or explicit routes only. A link may lose frames on
//! the wire at random with a fixed probability (`link.loss_ppb`, or per link
//! of a file), each direction from its own seeded substream. With the
//! wide-area delay model on (`net::wan`), every client's link carries it (in
//! a file, the links that say `wan = true`; by default the clients').
//! **Deliberately different:** a host has exactly one link (one NIC);
//! hosts never forward.
//! **Not modelled:** link aggregation, equal-cost multipath outside the fat
//! tree and leaf-spine, routing protocols and their convergence, link failures.

use super::clos::{self, Multipath, Shape, Spreading};
use crate::error::SimError;
use crate::time::{BitRate, SimDuration};
use crate::workload::clients::{Layout, ServerSets};

/// Which fabric joins the client and the servers.
///
/// Default value: `star`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TopologyConfig {
    /// Every host on one switch; every link has `link.rate` and `link.propagation`.
    #[default]
    Star,
    /// A two-tier tree (FAST08 §3.2); with one edge switch, GIP Fig 14's path.
    Tree(TreeConfig),
    /// Any fabric, node by node and link by link.
    Graph(GraphConfig),
    /// A k-ary fat tree with equal-cost multipath (`net::clos`).
    FatTree(FatTreeConfig),
    /// Leaves joined to every spine, with equal-cost multipath (`net::clos`).
    LeafSpine(LeafSpineConfig),
}

impl TopologyConfig {
    /// The kind's name when its switches forward over equal-cost paths (`net::ecmp`).
    pub fn multipath_kind(&self) -> Option<&'static str> {
        match self {
            TopologyConfig::FatTree(_) => Some("fat_tree"),
            TopologyConfig::LeafSpine(_) => Some("leaf_spine"),
            _ => None,
        }
    }

    /// How a multipath fabric's switches spread flows over their uplinks; `None` on a single-path one.
    pub fn spreading(&self) -> Option<Spreading> {
        match self {
            TopologyConfig::FatTree(f) => Some(f.spreading),
            TopologyConfig::LeafSpine(l) => Some(l.spreading),
            _ => None,
        }
    }
}

/// A k-ary fat tree (Al-Fares et al., SIGCOMM 2008 §3.1): k³/4 hosts.
///
/// Default values: k = 4; the links between switches like the host links
/// (`link.rate`, `link.propagation`); per-flow spreading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatTreeConfig {
    /// Ports per switch (even).
    pub k: u32,
    /// The links between switches: rate and delay (`None`: the host links').
    pub trunk: Trunk,
    /// How switches spread flows over equal-cost next hops.
    pub spreading: Spreading,
}

/// A two-tier leaf-spine.
///
/// Default values: 4 leaves, 2 spines, 4 hosts per leaf; the links between
/// switches like the host links; per-flow spreading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSpineConfig {
    /// Leaf (top-of-rack) switches.
    pub leaves: u32,
    /// Spine switches, each joined to every leaf.
    pub spines: u32,
    /// Hosts on each leaf.
    pub hosts_per_leaf: u32,
    /// The leaf-spine links: rate and delay (`None`: the host links').
    pub trunk: Trunk,
    /// How switches spread flows over equal-cost next hops.
    pub spreading: Spreading,
}

/// Rate and one-way delay of the links between switches, each `None` for the host links' value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trunk {
    /// Line rate, both directions.
    pub rate: Option<BitRate>,
    /// One-way propagation delay.
    pub delay: Option<SimDuration>,
}

/// A two-tier tree: the client (and any background receiver) on the core
/// switch, server `i` on edge switch `i mod edge_switches`, each edge switch
/// joined to the core by a trunk.
///
/// Default values: one edge switch; the trunks have the host links' rate and
/// propagation (`link.rate`, `link.propagation`), so a server's round trip
/// adds four trunk crossings' propagation to `link.rtt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeConfig {
    /// Number of edge switches the servers are spread over.
    pub edge_switches: u32,
    /// Line rate of each trunk, both directions (`None`: `link.rate`).
    pub trunk_rate: Option<BitRate>,
    /// One-way propagation delay of each trunk (`None`: `link.propagation`).
    pub trunk_delay: Option<SimDuration>,
}

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig { edge_switches: 1, trunk_rate: None, trunk_delay: None }
    }
}

/// What a node of a [`GraphConfig`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A host that reads blocks (as many as `workload.clients`, numbered in the order listed).
    Client,
    /// A host that answers them; servers are numbered in the order listed.
    Server,
    /// A store-and-forward switch.
    Switch,
}

/// One node of a [`GraphConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Unique name, used by links and routes.
    pub name: String,
    /// What the node is.
    pub kind: NodeKind,
}

/// One full-duplex link of a [`GraphConfig`] between nodes `a` and `b`.
///
/// Default values: `rate` `link.rate`, `delay` `link.propagation` (every host adds
/// its share of `link.rtt` where it receives); the `b → a`
/// direction takes the `a → b` values unless `rate_ba` / `delay_ba` are set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end.
    pub a: String,
    /// The other end.
    pub b: String,
    /// Line rate from `a` to `b`.
    pub rate: Option<BitRate>,
    /// One-way propagation delay from `a` to `b`.
    pub delay: Option<SimDuration>,
    /// Line rate from `b` to `a` (`None`: as `rate`).
    pub rate_ba: Option<BitRate>,
    /// One-way propagation delay from `b` to `a` (`None`: as `delay`).
    pub delay_ba: Option<SimDuration>,
    /// Probability that a frame is lost on the wire, either way, in parts
    /// per billion (`None`: `link.loss_ppb`).
    pub loss_ppb: Option<u32>,
    /// The link carries the wide-area delay model, both ways (`None`: only
    /// if it is a client's link and the model is on).
    pub wan: Option<bool>,
}

impl LinkSpec {
    /// A link between `a` and `b` with every setting at its default.
    pub fn between(a: &str, b: &str) -> Self {
        LinkSpec {
            a: a.into(),
            b: b.into(),
            rate: None,
            delay: None,
            rate_ba: None,
            delay_ba: None,
            loss_ppb: None,
            wan: None,
        }
    }
}

/// A static route: switch `at` sends frames for host `to` to its neighbour `via`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteSpec {
    /// The switch holding the entry.
    pub at: String,
    /// The destination host.
    pub to: String,
    /// The neighbour of `at` the frames go to.
    pub via: String,
}

/// How switches of a [`GraphConfig`] fill their forwarding tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Routing {
    /// Shortest paths by hop count, then the explicit routes on top.
    #[default]
    ShortestPath,
    /// The explicit routes only: every hop of every path must be listed.
    Static,
}

/// A fabric given node by node and link by link (a topology file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphConfig {
    /// Hosts and switches.
    pub nodes: Vec<NodeSpec>,
    /// Links between them.
    pub links: Vec<LinkSpec>,
    /// How forwarding tables are filled.
    pub routing: Routing,
    /// Explicit routes.
    pub routes: Vec<RouteSpec>,
}

/// One direction of a link, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Line rate.
    pub rate: BitRate,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Probability that a frame is lost on the wire, in parts per billion.
    pub loss_ppb: u32,
    /// The wide-area delay model (`net::wan`) applies to this direction.
    pub wan: bool,
}

impl Hop {
    /// This hop without the wide-area delay model.
    const fn local(self) -> Hop {
        Hop { wan: false, ..self }
    }

    /// This hop on server `i`'s cable, `i`·`skew` longer (`LinkConfig::skew`).
    fn server(self, i: u32, skew: SimDuration) -> Hop {
        Hop { delay: self.delay + skew.saturating_mul(u64::from(i)), ..self.local() }
    }
}

/// A link between fabric nodes `a` and `b` (indices into [`Fabric::nodes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricLink {
    /// One end.
    pub a: usize,
    /// The other end.
    pub b: usize,
    /// From `a` to `b`.
    pub ab: Hop,
    /// From `b` to `a`.
    pub ba: Hop,
}

/// A node of a resolved fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricNode {
    /// Its name (in results and error messages).
    pub name: String,
    /// Host index (the clients, then the servers, then background hosts, as
    /// `workload::clients` numbers them), or `None` for a switch.
    pub host: Option<u32>,
}

/// A fabric with every default filled in: what [`super::Network::build`] wires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fabric {
    /// Hosts and switches.
    pub nodes: Vec<FabricNode>,
    /// Links, in the order given.
    pub links: Vec<FabricLink>,
    /// Compute shortest paths before applying `routes`.
    pub shortest_path: bool,
    /// Explicit routes as (switch node, destination host, neighbour node).
    pub routes: Vec<(usize, u32, usize)>,
    /// Switches route on hierarchical addresses over equal-cost next hops
    /// (`net::clos`) instead of by the per-host table.
    pub multipath: Option<Multipath>,
}

/// Hosts a fabric must hold besides its switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCounts {
    /// The clients and the servers they read from (the first hosts).
    pub reads: Layout,
    /// Background senders after the servers.
    pub background_senders: u32,
    /// Each background sender has a receiver of its own (else they all send to server 0).
    pub background_receivers: bool,
    /// A UDP source host after all the others.
    pub udp_sender: bool,
}

impl HostCounts {
    /// One client and `servers` servers only.
    pub const fn servers(servers: u32) -> Self {
        HostCounts::reads(Layout::one_client(servers))
    }

    /// The clients and servers of `reads` only.
    pub const fn reads(reads: Layout) -> Self {
        HostCounts { reads, background_senders: 0, background_receivers: true, udp_sender: false }
    }

    /// Hosts the workload numbers: the reads', the background flows' and the UDP source.
    pub fn total(&self) -> u32 {
        let per_flow = if self.background_receivers { 2 } else { 1 };
        self.reads.hosts() + per_flow * self.background_senders + u32::from(self.udp_sender)
    }

    /// The name the workload gives host `h` (as the star names it), or `None`
    /// for a host it does not use.
    pub fn name(&self, h: u32) -> Option<String> {
        let reads = self.reads.hosts();
        if h < self.reads.clients {
            return Some(self.client_name(h));
        }
        if h < reads {
            return Some(format!("server{}", h - self.reads.clients));
        }
        let per_flow = if self.background_receivers { 2 } else { 1 };
        let (i, role) = ((h - reads) / per_flow, (h - reads) % per_flow);
        if i < self.background_senders {
            return Some(if role == 0 { format!("bg_sender{i}") } else { format!("bg_receiver{i}") });
        }
        (self.udp_sender && h == self.total() - 1).then(|| "udp_sender".into())
    }

    /// Name of client `c`: `client` when it is the only one, else `client<c>`.
    fn client_name(&self, c: u32) -> String {
        if self.reads.clients == 1 {
            "client".into()
        } else {
            format!("client{c}")
        }
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> SimError {
    SimError::InvalidScenario { field: field.into(), message: message.into() }
}

impl Fabric {
    fn node(&mut self, name: String, host: Option<u32>) -> usize {
        self.nodes.push(FabricNode { name, host });
        self.nodes.len() - 1
    }

    /// Join nodes `a` and `b` by a link `hop` both ways.
    pub(super) fn link(&mut self, a: usize, b: usize, hop: Hop) {
        self.links.push(FabricLink { a, b, ab: hop, ba: hop });
    }

    /// Background hosts after the servers (numbered as `workload::background`
    /// says): senders on `src`, their receivers, if any, on `dst`.
    fn background(&mut self, hosts: HostCounts, src: usize, dst: usize, hop: Hop) {
        let per_flow = if hosts.background_receivers { 2 } else { 1 };
        for i in 0..hosts.background_senders {
            let first = hosts.reads.hosts() + per_flow * i;
            let s = self.node(format!("bg_sender{i}"), Some(first));
            self.link(s, src, hop);
            if hosts.background_receivers {
                let r = self.node(format!("bg_receiver{i}"), Some(first + 1));
                self.link(r, dst, hop);
            }
        }
        if hosts.udp_sender {
            let h = hosts.reads.hosts() + per_flow * hosts.background_senders;
            let u = self.node("udp_sender".into(), Some(h));
            self.link(u, src, hop);
        }
    }

    fn empty() -> Self {
        Fabric { nodes: Vec::new(), links: Vec::new(), shortest_path: true, routes: Vec::new(), multipath: None }
    }

    /// A fabric of `nodes` routed on their addresses (`net::clos`), links to be joined.
    pub(super) fn hierarchical(nodes: Vec<FabricNode>, multipath: Multipath) -> Self {
        Fabric { nodes, multipath: Some(multipath), shortest_path: false, ..Fabric::empty() }
    }

    /// Every host on one switch, each link `host` both ways (FAST08 §3),
    /// server i's `skew`·i longer; only the clients' links keep `host.wan`.
    pub fn star(hosts: HostCounts, host: Hop, skew: SimDuration) -> Self {
        let mut f = Fabric::empty();
        let sw = f.node("switch".into(), None);
        for c in 0..hosts.reads.clients {
            let n = f.node(hosts.client_name(c), Some(c));
            f.link(n, sw, host);
        }
        for i in 0..hosts.reads.server_hosts() {
            let s = f.node(format!("server{i}"), Some(hosts.reads.server_host(i)));
            f.link(s, sw, host.server(i, skew));
        }
        f.background(hosts, sw, sw, host.local());
        f
    }

    /// The two-tier tree of [`TreeConfig`]; background senders sit on the
    /// first edge switch and their receivers on the core, so their flows share
    /// a trunk with servers' responses; server i's link is `skew`·i longer.
    /// Only the clients' links keep `host.wan`.
    pub fn tree(hosts: HostCounts, host: Hop, trunk: Hop, edges: u32, skew: SimDuration) -> Self {
        let mut f = Fabric::empty();
        let core = f.node("core".into(), None);
        for c in 0..hosts.reads.clients {
            let n = f.node(hosts.client_name(c), Some(c));
            f.link(n, core, host);
        }
        let edge: Vec<usize> = (0..edges)
            .map(|e| {
                let n = f.node(format!("edge{e}"), None);
                f.link(n, core, trunk);
                n
            })
            .collect();
        for i in 0..hosts.reads.server_hosts() {
            let s = f.node(format!("server{i}"), Some(hosts.reads.server_host(i)));
            f.link(s, edge[(i % edges) as usize], host.server(i, skew));
        }
        f.background(hosts, edge[0], core, host.local());
        f
    }

    /// A fat tree or leaf-spine (`net::clos`) whose first hosts are the
    /// workload's (`hosts`, named as the star names them); host links `host`
    /// without the wide-area model, the links between switches `trunk`'s or
    /// the host links' rate and delay.
    pub fn clos(
        shape: Shape,
        trunk: Trunk,
        spreading: Spreading,
        hosts: HostCounts,
        host: Hop,
    ) -> Result<Self, SimError> {
        let (field, of) = match shape {
            Shape::FatTree { k } => ("topology.k", format!("a fat tree of k = {k}")),
            Shape::LeafSpine { leaves, hosts_per_leaf, .. } => {
                ("topology.hosts_per_leaf", format!("{leaves} leaves of {hosts_per_leaf} hosts"))
            }
        };
        if u64::from(hosts.total()) > shape.hosts() {
            return Err(invalid(
                field,
                format!("{of} has {} hosts, fewer than the {} the workload places", shape.hosts(), hosts.total()),
            ));
        }
        let host = host.local();
        let trunk = Hop { rate: trunk.rate.unwrap_or(host.rate), delay: trunk.delay.unwrap_or(host.delay), ..host };
        clos::build(shape, spreading, host, trunk, |h| hosts.name(h))
    }

    /// The fabric of a topology file; `default` fills unset link fields
    /// (`default.wan`: the model is on, for the clients' links unless a link says otherwise).
    pub fn graph(g: &GraphConfig, hosts: HostCounts, default: Hop) -> Result<Self, SimError> {
        if hosts.background_senders > 0 || hosts.udp_sender {
            return Err(invalid("background", "a graph topology has no background hosts: use star or tree"));
        }
        let mut f = Fabric::empty();
        f.shortest_path = g.routing == Routing::ShortestPath;
        let reads = hosts.reads;
        let mut servers = 0;
        let mut clients = 0;
        for n in &g.nodes {
            if n.name.is_empty() {
                return Err(invalid("topology.nodes", "every node needs a non-empty name"));
            }
            if f.nodes.iter().any(|m| m.name == n.name) {
                return Err(invalid("topology.nodes", format!("node {:?} is listed twice", n.name)));
            }
            let host = match n.kind {
                NodeKind::Switch => None,
                NodeKind::Client => {
                    clients += 1;
                    Some(clients - 1)
                }
                NodeKind::Server => {
                    servers += 1;
                    Some(reads.server_host(servers - 1))
                }
            };
            f.node(n.name.clone(), host);
        }
        if clients != reads.clients {
            return Err(invalid(
                "topology.nodes",
                format!("lists {clients} nodes of kind \"client\" but workload.clients = {}", reads.clients),
            ));
        }
        if servers != reads.server_hosts() {
            let needed = match reads.sets {
                ServerSets::Disjoint if reads.clients > 1 => format!(
                    "{} clients × servers = {} with disjoint server sets need {}",
                    reads.clients,
                    reads.servers,
                    reads.server_hosts()
                ),
                _ => format!("servers = {}", reads.servers),
            };
            return Err(invalid("topology.nodes", format!("lists {servers} nodes of kind \"server\" but {needed}")));
        }
        let find = |field: &'static str, what: &str, name: &str| {
            f.nodes
                .iter()
                .position(|n| n.name == name)
                .ok_or_else(|| invalid(field, format!("{what} names unknown node {name:?}")))
        };
        let mut links = Vec::with_capacity(g.links.len());
        for l in &g.links {
            let what = format!("link {:?}-{:?}", l.a, l.b);
            let (a, b) = (find("topology.links", &what, &l.a)?, find("topology.links", &what, &l.b)?);
            if a == b {
                return Err(invalid("topology.links", format!("{what} joins a node to itself")));
            }
            let loss_ppb = l.loss_ppb.unwrap_or(default.loss_ppb);
            if loss_ppb >= 1_000_000_000 {
                return Err(invalid("topology.links", format!("{what} needs a loss probability below 1")));
            }
            if l.wan == Some(true) && !default.wan {
                return Err(invalid("topology.links", format!("{what} sets wan but the model is off (set wan.delay)")));
            }
            let is_client = |n: usize| f.nodes[n].host.is_some_and(|h| h < reads.clients);
            let wan = l.wan.unwrap_or(default.wan && (is_client(a) || is_client(b)));
            let ab =
                Hop { rate: l.rate.unwrap_or(default.rate), delay: l.delay.unwrap_or(default.delay), loss_ppb, wan };
            let ba = Hop { rate: l.rate_ba.unwrap_or(ab.rate), delay: l.delay_ba.unwrap_or(ab.delay), ..ab };
            if ab.rate.0 == 0 || ba.rate.0 == 0 {
                return Err(invalid("topology.links", format!("{what} needs a positive rate")));
            }
            links.push(FabricLink { a, b, ab, ba });
        }
        let mut routes = Vec::with_capacity(g.routes.len());
        for r in &g.routes {
            let what = format!("route at {:?} to {:?}", r.at, r.to);
            let at = find("topology.routes", &what, &r.at)?;
            let to = find("topology.routes", &what, &r.to)?;
            let via = find("topology.routes", &what, &r.via)?;
            if f.nodes[at].host.is_some() {
                return Err(invalid("topology.routes", format!("{what}: {:?} is a host; only switches route", r.at)));
            }
            let Some(host) = f.nodes[to].host else {
                return Err(invalid("topology.routes", format!("{what}: {:?} is a switch, not a host", r.to)));
            };
            if !links.iter().any(|l: &FabricLink| (l.a, l.b) == (at, via) || (l.a, l.b) == (via, at)) {
                return Err(invalid("topology.routes", format!("{what}: no link between {:?} and {:?}", r.at, r.via)));
            }
            routes.push((at, host, via));
        }
        f.links = links;
        f.routes = routes;
        f.check_hosts()?;
        Ok(f)
    }

    /// Every host has exactly one link, to a switch.
    fn check_hosts(&self) -> Result<(), SimError> {
        for (i, n) in self.nodes.iter().enumerate() {
            if n.host.is_none() {
                continue;
            }
            let mine: Vec<&FabricLink> = self.links.iter().filter(|l| l.a == i || l.b == i).collect();
            if mine.len() != 1 {
                return Err(invalid(
                    "topology.links",
                    format!("host {:?} has {} links; a host has exactly one (its NIC)", n.name, mine.len()),
                ));
            }
            let peer = if mine[0].a == i { mine[0].b } else { mine[0].a };
            if self.nodes[peer].host.is_some() {
                return Err(invalid(
                    "topology.links",
                    format!(
                        "host {:?} is linked to host {:?}; hosts connect to switches",
                        n.name, self.nodes[peer].name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Name of the node of host `h`.
    pub fn host_name(&self, h: u32) -> &str {
        self.nodes.iter().find(|n| n.host == Some(h)).map_or("?", |n| n.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOP: Hop = Hop { rate: BitRate(1_000_000_000), delay: SimDuration(25_000_000), loss_ppb: 0, wan: false };

    fn graph(nodes: &[(&str, NodeKind)], links: &[(&str, &str)]) -> GraphConfig {
        GraphConfig {
            nodes: nodes.iter().map(|&(n, k)| NodeSpec { name: n.into(), kind: k }).collect(),
            links: links.iter().map(|&(a, b)| LinkSpec::between(a, b)).collect(),
            ..GraphConfig::default()
        }
    }

    fn message(r: Result<Fabric, SimError>) -> String {
        match r {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error"),
        }
    }

    const ONE: HostCounts = HostCounts::servers(1);

    #[test]
    fn skew_makes_each_servers_cable_longer_than_the_one_before_both_ways() {
        let skew = SimDuration::from_ps(3);
        let delays = |f: &Fabric, host: &str| {
            let i = f.nodes.iter().position(|n| n.name == host).unwrap();
            let l = f.links.iter().find(|l| l.a == i).unwrap();
            (l.ab.delay.as_ps(), l.ba.delay.as_ps())
        };
        let star = Fabric::star(HostCounts::servers(3), HOP, skew);
        assert_eq!(delays(&star, "client"), (25_000_000, 25_000_000));
        assert_eq!(delays(&star, "server0"), (25_000_000, 25_000_000));
        assert_eq!(delays(&star, "server2"), (25_000_006, 25_000_006));
        let tree = Fabric::tree(HostCounts::servers(3), HOP, HOP, 2, skew);
        assert_eq!(delays(&tree, "server1"), (25_000_003, 25_000_003));
    }

    #[test]
    fn tree_spreads_servers_round_robin_over_edge_switches() {
        let f = Fabric::tree(HostCounts::servers(5), HOP, HOP, 2, SimDuration::ZERO);
        let edge_of = |s: &str| {
            let i = f.nodes.iter().position(|n| n.name == s).unwrap();
            let l = f.links.iter().find(|l| l.a == i).unwrap();
            f.nodes[l.b].name.clone()
        };
        assert_eq!(edge_of("server0"), "edge0");
        assert_eq!(edge_of("server1"), "edge1");
        assert_eq!(edge_of("server4"), "edge0");
    }

    #[test]
    fn graph_errors_name_the_offending_node_or_link() {
        use NodeKind::*;
        let g = graph(&[("c", Client), ("s", Server), ("sw", Switch)], &[("c", "sw"), ("s", "sw9")]);
        assert_eq!(
            message(Fabric::graph(&g, ONE, HOP)),
            "topology.links: link \"s\"-\"sw9\" names unknown node \"sw9\""
        );
        let g = graph(&[("c", Client), ("s", Server), ("sw", Switch)], &[("c", "sw")]);
        assert!(message(Fabric::graph(&g, ONE, HOP)).contains("host \"s\" has 0 links"));
        let g = graph(&[("c", Client), ("c", Server)], &[]);
        assert!(message(Fabric::graph(&g, ONE, HOP)).contains("node \"c\" is listed twice"));
        let g = graph(&[("c", Client), ("s", Server)], &[("c", "s")]);
        assert!(message(Fabric::graph(&g, ONE, HOP)).contains("hosts connect to switches"));
        let g = graph(&[("c", Client), ("sw", Switch)], &[("c", "sw")]);
        assert!(message(Fabric::graph(&g, ONE, HOP)).contains("0 nodes of kind \"server\" but servers = 1"));
    }

    #[test]
    fn a_static_route_must_follow_a_link() {
        use NodeKind::*;
        let mut g =
            graph(&[("c", Client), ("s", Server), ("a", Switch), ("b", Switch)], &[("c", "a"), ("s", "b"), ("a", "b")]);
        g.routes.push(RouteSpec { at: "a".into(), to: "s".into(), via: "b".into() });
        assert_eq!(Fabric::graph(&g, ONE, HOP).unwrap().routes, vec![(2, 1, 3)]);
        g.routes[0].via = "s".into();
        assert_eq!(
            message(Fabric::graph(&g, ONE, HOP)),
            "topology.routes: route at \"a\" to \"s\": no link between \"a\" and \"s\""
        );
    }

    #[test]
    fn one_direction_may_differ_from_the_other() {
        use NodeKind::*;
        let mut g = graph(&[("c", Client), ("s", Server), ("sw", Switch)], &[("c", "sw"), ("s", "sw")]);
        g.links[1].rate_ba = Some(BitRate(100_000_000));
        let f = Fabric::graph(&g, ONE, HOP).unwrap();
        assert_eq!(f.links[1].ab.rate, HOP.rate);
        assert_eq!(f.links[1].ba.rate, BitRate(100_000_000));
        assert_eq!(f.links[1].ba.delay, HOP.delay);
    }

    /// A file's links carry the wide-area model where they say `wan = true`,
    /// the client's link by default; a link cannot ask for a model that is off.
    #[test]
    fn the_wan_model_goes_on_the_clients_link_unless_a_link_says_otherwise() {
        use NodeKind::*;
        let mut g = graph(&[("c", Client), ("s", Server), ("sw", Switch)], &[("c", "sw"), ("s", "sw")]);
        let on = Hop { wan: true, ..HOP };
        let wan = |f: &Fabric| f.links.iter().map(|l| (l.ab.wan, l.ba.wan)).collect::<Vec<_>>();
        assert_eq!(wan(&Fabric::graph(&g, ONE, on).unwrap()), [(true, true), (false, false)]);
        assert_eq!(wan(&Fabric::graph(&g, ONE, HOP).unwrap()), [(false, false), (false, false)]);
        g.links[0].wan = Some(false);
        g.links[1].wan = Some(true);
        assert_eq!(wan(&Fabric::graph(&g, ONE, on).unwrap()), [(false, false), (true, true)]);
        assert_eq!(
            message(Fabric::graph(&g, ONE, HOP)),
            "topology.links: link \"s\"-\"sw\" sets wan but the model is off (set wan.delay)"
        );
    }
}
