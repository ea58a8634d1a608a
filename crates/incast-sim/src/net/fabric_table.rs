//! The `[topology]` table: how a scenario writes its fabric (`net::fabric`).
//!
//! **Models:** one flat table whose `kind` picks the fabric: `star` (no other
//! key), `tree` (`edge_switches`, `trunk_rate`, `trunk_delay`), `graph`
//! (`routing`, `nodes`, `links`, `routes`, as a topology file holds them),
//! `fat_tree` (`k`, `trunk_rate`, `trunk_delay`, `ecmp`) or `leaf_spine`
//! (`leaves`, `spines`, `hosts_per_leaf`, `trunk_rate`, `trunk_delay`,
//! `ecmp`). A key of another kind is refused, naming `topology.kind`. A graph link's
//! rates and delays default to the host links' (`"link"`).
//! **Not modelled:** mixing kinds (a tree with extra links).

use super::clos::Spreading;
use super::fabric::{
    FatTreeConfig, GraphConfig, LeafSpineConfig, LinkSpec, NodeKind, NodeSpec, RouteSpec, Routing, TopologyConfig,
    TreeConfig, Trunk,
};
use crate::settings::{
    python_repr, Choice, Count, Duration, Entry, Flag, OrWord, Probability, Rate, Setting, Spec, Table,
};
use crate::time::{BitRate, SimDuration};
use serde_json::{Map, Value as Json};

/// The fabrics there are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TopologyKind {
    /// Every host on one switch.
    #[default]
    Star,
    /// A two-tier tree.
    Tree,
    /// Node by node.
    Graph,
    /// A k-ary fat tree.
    FatTree,
    /// Leaves and spines.
    LeafSpine,
}

/// How the kinds are written.
const KINDS: Choice<TopologyKind> = Choice(&[
    ("star", TopologyKind::Star),
    ("tree", TopologyKind::Tree),
    ("graph", TopologyKind::Graph),
    ("fat_tree", TopologyKind::FatTree),
    ("leaf_spine", TopologyKind::LeafSpine),
]);

/// Most edge switches of a tree.
const MAX_EDGE_SWITCHES: u64 = 100_000;

/// Largest fat tree: k = 64 holds 65,536 hosts (an address digit is 16 bits).
const MAX_K: u64 = 64;

/// Most leaves, spines or hosts on a leaf (an address digit is 16 bits).
const MAX_LEAF_SPINE: u64 = 10_000;

const SAME_AS_LINK_RATE: OrWord<Rate> = OrWord { word: "link", spec: Rate, what: "a rate" };
const SAME_AS_LINK_DELAY: OrWord<Duration> = OrWord { word: "link", spec: Duration::ANY, what: "a duration" };

crate::settings! {
    /// How hosts and switches are wired (`net::fabric`).
    ///
    /// Default values: `kind` star; for trees one edge switch and trunks like
    /// the host links; for graphs shortest-path routing.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct TopologyTable {
        /// "star" (every host on one switch), "tree" (client on a core switch,
        /// servers round-robin on edge switches), "graph" (node by node),
        /// "fat_tree" (k-ary, k³/4 hosts) or "leaf_spine" (every leaf joined to
        /// every spine); the last two forward over equal-cost paths.
        "kind" kind: TopologyKind = TopologyKind::Star, KINDS;
        /// Tree: edge switches the servers are spread over (1 = GIP Fig 14's path).
        "edge_switches" edge_switches: u32 = 1, Count::new(1, MAX_EDGE_SWITCHES, "edge switches");
        /// Tree, fat tree, leaf-spine: line rate of each link between two
        /// switches, or "link" (the host links' rate); below link.rate ×
        /// hosts_per_leaf / spines a leaf is oversubscribed.
        "trunk_rate" trunk_rate: Option<BitRate> = None, SAME_AS_LINK_RATE;
        /// Tree, fat tree, leaf-spine: one-way delay of each link between two
        /// switches, or "link" (link.propagation).
        "trunk_delay" trunk_delay: Option<SimDuration> = None, SAME_AS_LINK_DELAY;
        /// Fat tree: ports per switch, even; k³/4 hosts in k pods, (k/2)² core
        /// switches (Al-Fares et al., SIGCOMM 2008).
        "k" k: u32 = 4, Count::new(2, MAX_K, "ports");
        /// Leaf-spine: leaf (top-of-rack) switches.
        "leaves" leaves: u32 = 4, Count::new(1, MAX_LEAF_SPINE, "leaves");
        /// Leaf-spine: spine switches, each joined to every leaf.
        "spines" spines: u32 = 2, Count::new(1, MAX_LEAF_SPINE, "spines");
        /// Leaf-spine: hosts on each leaf.
        "hosts_per_leaf" hosts_per_leaf: u32 = 4, Count::new(1, MAX_LEAF_SPINE, "hosts");
        /// Fat tree, leaf-spine: how a switch picks among equal-cost next hops:
        /// "flow" (a seeded hash of each frame's 5-tuple, so a flow keeps one
        /// path, as switches do) or "packet" (a random uplink for every frame: spraying).
        "ecmp" ecmp: Spreading = Spreading::Flow,
            Choice(&[("flow", Spreading::Flow), ("packet", Spreading::Packet)]);
        /// Graph: "shortest_path" (then the routes on top) or "static" (only the routes listed).
        "routing" routing: Routing = Routing::ShortestPath,
            Choice(&[("shortest_path", Routing::ShortestPath), ("static", Routing::Static)]);
        /// Graph: the nodes, `{name, kind}` with kind "client", "server" or "switch".
        "nodes" nodes: Vec<NodeSpec> = Vec::new(), Items;
        /// Graph: the links, `{a, b}` with optional rate, delay, rate_ba, delay_ba, loss and wan.
        "links" links: Vec<LinkSpec> = Vec::new(), Items;
        /// Graph: static routes, `{at, to, via}`: switch `at` sends frames for host `to` to `via`.
        "routes" routes: Vec<RouteSpec> = Vec::new(), Items;
    }
}

impl TopologyTable {
    /// The fabric the table describes; the error names the offending key.
    pub fn config(self) -> Result<TopologyConfig, (&'static str, String)> {
        use TopologyKind::{FatTree, Graph, LeafSpine, Tree};
        let defaults = TopologyTable::default();
        let graph = !self.nodes.is_empty()
            || !self.links.is_empty()
            || !self.routes.is_empty()
            || self.routing != Routing::ShortestPath;
        let switched: &[TopologyKind] = &[Tree, FatTree, LeafSpine];
        let own: [(&str, bool, &[TopologyKind]); 9] = [
            ("edge_switches", self.edge_switches != defaults.edge_switches, &[Tree]),
            ("trunk_rate", self.trunk_rate.is_some(), switched),
            ("trunk_delay", self.trunk_delay.is_some(), switched),
            ("nodes, links, routes and routing", graph, &[Graph]),
            ("k", self.k != defaults.k, &[FatTree]),
            ("leaves", self.leaves != defaults.leaves, &[LeafSpine]),
            ("spines", self.spines != defaults.spines, &[LeafSpine]),
            ("hosts_per_leaf", self.hosts_per_leaf != defaults.hosts_per_leaf, &[LeafSpine]),
            ("ecmp", self.ecmp != defaults.ecmp, &[FatTree, LeafSpine]),
        ];
        for (key, set, kinds) in own {
            if set && !kinds.contains(&self.kind) {
                let words: Vec<String> = kinds.iter().map(|&k| format!("\"{}\"", KINDS.word(k))).collect();
                let need = match words.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => unreachable!("a key belongs to some kind"),
                };
                let verb = if key.contains(" and ") { "need" } else { "needs" };
                return Err((
                    "topology.kind",
                    format!("{key} {verb} kind = {need}, not \"{}\"", KINDS.word(self.kind)),
                ));
            }
        }
        let trunk = Trunk { rate: self.trunk_rate, delay: self.trunk_delay };
        Ok(match self.kind {
            TopologyKind::Star => TopologyConfig::Star,
            TopologyKind::Tree => TopologyConfig::Tree(TreeConfig {
                edge_switches: self.edge_switches,
                trunk_rate: self.trunk_rate,
                trunk_delay: self.trunk_delay,
            }),
            TopologyKind::Graph if self.nodes.is_empty() => {
                return Err((
                    "topology.nodes",
                    "a graph needs its nodes (a \"client\", the \"server\"s and the switches)".into(),
                ))
            }
            TopologyKind::Graph => TopologyConfig::Graph(GraphConfig {
                nodes: self.nodes,
                links: self.links,
                routing: self.routing,
                routes: self.routes,
            }),
            TopologyKind::FatTree if self.k % 2 == 1 => {
                return Err((
                    "topology.k",
                    format!("must be even (k/2 ports of a switch face down, k/2 up), got {}", self.k),
                ))
            }
            TopologyKind::FatTree => TopologyConfig::FatTree(FatTreeConfig { k: self.k, trunk, spreading: self.ecmp }),
            TopologyKind::LeafSpine => TopologyConfig::LeafSpine(LeafSpineConfig {
                leaves: self.leaves,
                spines: self.spines,
                hosts_per_leaf: self.hosts_per_leaf,
                trunk,
                spreading: self.ecmp,
            }),
        })
    }

    /// The table of a fabric.
    pub fn of(config: &TopologyConfig) -> TopologyTable {
        let t = TopologyTable::default();
        match config {
            TopologyConfig::Star => t,
            TopologyConfig::Tree(tree) => TopologyTable {
                kind: TopologyKind::Tree,
                edge_switches: tree.edge_switches,
                trunk_rate: tree.trunk_rate,
                trunk_delay: tree.trunk_delay,
                ..t
            },
            TopologyConfig::Graph(g) => TopologyTable {
                kind: TopologyKind::Graph,
                routing: g.routing,
                nodes: g.nodes.clone(),
                links: g.links.clone(),
                routes: g.routes.clone(),
                ..t
            },
            TopologyConfig::FatTree(f) => TopologyTable {
                kind: TopologyKind::FatTree,
                k: f.k,
                trunk_rate: f.trunk.rate,
                trunk_delay: f.trunk.delay,
                ecmp: f.spreading,
                ..t
            },
            TopologyConfig::LeafSpine(l) => TopologyTable {
                kind: TopologyKind::LeafSpine,
                leaves: l.leaves,
                spines: l.spines,
                hosts_per_leaf: l.hosts_per_leaf,
                trunk_rate: l.trunk.rate,
                trunk_delay: l.trunk.delay,
                ecmp: l.spreading,
                ..t
            },
        }
    }

    /// Does the canonical TOML of this kind hold `key`? (Only the kind's own keys,
    /// and a graph's routes only when it has some.)
    pub fn shows(&self, key: &str) -> bool {
        match self.kind {
            TopologyKind::Star => key == "kind",
            TopologyKind::Tree => matches!(key, "kind" | "edge_switches" | "trunk_rate" | "trunk_delay"),
            TopologyKind::Graph => {
                matches!(key, "kind" | "routing" | "nodes" | "links") || key == "routes" && !self.routes.is_empty()
            }
            TopologyKind::FatTree => matches!(key, "kind" | "k" | "trunk_rate" | "trunk_delay" | "ecmp"),
            TopologyKind::LeafSpine => {
                matches!(key, "kind" | "leaves" | "spines" | "hosts_per_leaf" | "trunk_rate" | "trunk_delay" | "ecmp")
            }
        }
    }
}

/// A list of tables: a graph's nodes (`{name, kind}`), links (`{a, b, rate,
/// delay, rate_ba, delay_ba, loss, wan}`) or routes (`{at, to, via}`).
#[derive(Clone, Copy, Debug)]
pub struct Items;

fn fields<'a>(raw: &'a Json, keys: &[&str]) -> Result<&'a Map<String, Json>, String> {
    let Json::Object(map) = raw else {
        return Err(format!("must be a table of {}, got {}", keys.join(", "), python_repr(raw)));
    };
    if let Some(k) = map.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(format!("unknown key {k:?}; an item has {}", keys.join(", ")));
    }
    Ok(map)
}

fn name(map: &Map<String, Json>, key: &str) -> Result<String, String> {
    match map.get(key) {
        Some(Json::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(v) => Err(format!("{key}: must be a non-empty node name, got {}", python_repr(v))),
        None => Err(format!("{key}: required")),
    }
}

fn optional<T>(map: &Map<String, Json>, key: &str, spec: &impl Spec<T>) -> Result<Option<T>, String> {
    match map.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => spec.parse(v).map(Some).map_err(|e| format!("{key}: {e}")),
    }
}

fn node(raw: &Json) -> Result<NodeSpec, String> {
    let map = fields(raw, &["name", "kind"])?;
    let kinds = Choice(&[("client", NodeKind::Client), ("server", NodeKind::Server), ("switch", NodeKind::Switch)]);
    let kind = map.get("kind").ok_or("kind: required")?;
    Ok(NodeSpec { name: name(map, "name")?, kind: kinds.parse(kind).map_err(|e| format!("kind: {e}"))? })
}

fn link(raw: &Json) -> Result<LinkSpec, String> {
    let map = fields(raw, &["a", "b", "rate", "delay", "rate_ba", "delay_ba", "loss", "wan"])?;
    let rate = |k| optional(map, k, &SAME_AS_LINK_RATE).map(Option::flatten);
    let delay = |k| optional(map, k, &SAME_AS_LINK_DELAY).map(Option::flatten);
    Ok(LinkSpec {
        a: name(map, "a")?,
        b: name(map, "b")?,
        rate: rate("rate")?,
        delay: delay("delay")?,
        rate_ba: rate("rate_ba")?,
        delay_ba: delay("delay_ba")?,
        loss_ppb: optional(map, "loss", &Probability)?,
        wan: optional(map, "wan", &Flag)?,
    })
}

fn route(raw: &Json) -> Result<RouteSpec, String> {
    let map = fields(raw, &["at", "to", "via"])?;
    Ok(RouteSpec { at: name(map, "at")?, to: name(map, "to")?, via: name(map, "via")? })
}

/// `(toml, si)` of one link: TOML holds only what is set, in human units;
/// the SI form holds every key, `null` where unset.
fn link_forms(l: &LinkSpec) -> (Json, Json) {
    let mut toml = Map::new();
    let mut si = Map::new();
    for (k, v) in [("a", &l.a), ("b", &l.b)] {
        toml.insert(k.into(), Json::String(v.clone()));
        si.insert(k.into(), Json::String(v.clone()));
    }
    for (k, v) in [("rate", l.rate), ("rate_ba", l.rate_ba)] {
        if let Some(r) = v {
            toml.insert(k.into(), Rate.toml(&r));
        }
        si.insert(k.into(), v.map_or(Json::Null, |r| Rate.si(&r)));
    }
    for (k, v) in [("delay", l.delay), ("delay_ba", l.delay_ba)] {
        if let Some(d) = v {
            toml.insert(k.into(), Duration::ANY.toml(&d));
        }
        si.insert(k.into(), v.map_or(Json::Null, |d| Duration::ANY.si(&d)));
    }
    let loss = l.loss_ppb.map(|p| Probability.toml(&p));
    let wan = l.wan.map(Json::Bool);
    for (k, v) in [("loss", loss), ("wan", wan)] {
        if let Some(v) = &v {
            toml.insert(k.into(), v.clone());
        }
        si.insert(k.into(), v.unwrap_or(Json::Null));
    }
    (Json::Object(toml), Json::Object(si))
}

macro_rules! items_spec {
    ($t:ty, $parse:ident, $forms:expr) => {
        impl Spec<Vec<$t>> for Items {
            fn parse(&self, raw: &Json) -> Result<Vec<$t>, String> {
                let Json::Array(items) = raw else {
                    return Err(format!("must be a list of tables, got {}", python_repr(raw)));
                };
                items.iter().enumerate().map(|(i, v)| $parse(v).map_err(|e| format!("item {i}: {e}"))).collect()
            }
            fn toml(&self, value: &Vec<$t>) -> Json {
                Json::Array(value.iter().map(|v| $forms(v).0).collect())
            }
            fn si(&self, value: &Vec<$t>) -> Json {
                Json::Array(value.iter().map(|v| $forms(v).1).collect())
            }
            fn kind(&self) -> &'static str {
                "list"
            }
            fn allowed(&self) -> String {
                "a list of tables".into()
            }
        }
    };
}

fn plain_forms(pairs: &[(&str, &str)]) -> (Json, Json) {
    let map: Map<String, Json> = pairs.iter().map(|(k, v)| ((*k).into(), Json::String((*v).into()))).collect();
    (Json::Object(map.clone()), Json::Object(map))
}

fn node_forms(n: &NodeSpec) -> (Json, Json) {
    let kind = match n.kind {
        NodeKind::Client => "client",
        NodeKind::Server => "server",
        NodeKind::Switch => "switch",
    };
    plain_forms(&[("name", &n.name), ("kind", kind)])
}

fn route_forms(r: &RouteSpec) -> (Json, Json) {
    plain_forms(&[("at", &r.at), ("to", &r.to), ("via", &r.via)])
}

items_spec!(NodeSpec, node, node_forms);
items_spec!(LinkSpec, link, link_forms);
items_spec!(RouteSpec, route, route_forms);

/// Read a `[topology]` table.
pub fn read(raw: &Map<String, Json>) -> Result<TopologyConfig, (String, String)> {
    let table: TopologyTable = crate::settings::read_table("topology", raw)?;
    table.config().map_err(|(f, m)| (f.trim_start_matches("topology.").to_owned(), m))
}

/// The `[topology]` table of a fabric: only the kind's keys in TOML, every key in SI.
pub fn write(config: &TopologyConfig, out: &mut Vec<Entry>) {
    let table = TopologyTable::of(config);
    let mut all = Vec::new();
    table.write(&mut all);
    for mut e in all {
        if !table.shows(e.key) {
            e.toml = Json::Null;
        }
        out.push(e);
    }
}

/// The schema of the `[topology]` table.
pub fn describe(out: &mut Vec<Setting>) {
    TopologyTable::describe(out);
}
