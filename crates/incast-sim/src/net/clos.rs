//! Datacenter fabrics: the k-ary fat tree and the two-tier leaf-spine, and
//! the hierarchical addresses their switches route on.
//!
//! **Models:** the k-ary fat tree of Al-Fares et al. (SIGCOMM 2008 §3.1):
//! k pods, each of k/2 edge and k/2 aggregation switches, (k/2)² core
//! switches, k³/4 hosts, k/2 on each edge switch; every edge switch is
//! joined to every aggregation switch of its pod, and aggregation switch
//! `a` of every pod to cores `a·k/2 .. (a+1)·k/2`. The leaf-spine: `leaves`
//! leaf switches of `hosts_per_leaf` hosts each, every leaf joined to every
//! spine. Host links have `link.rate` and `link.propagation`; the links
//! between switches (`trunk`) a rate and delay of their own, so a leaf's
//! oversubscription is `hosts_per_leaf · link.rate / (spines · trunk rate)`.
//! Each node has an [`Address`]: a host its (pod, edge, port) or (leaf,
//! port), a switch the prefix of the hosts below it (the fat tree's
//! pod/subnet addressing, §3.2); a switch sends a frame down toward the
//! child its destination's next digit names, or up over any of its uplinks
//! (`net::ecmp`). Hosts are numbered round-robin over the pods (leaves):
//! host `j` sits in pod `j mod k`, on edge switch `(j / k) mod k/2`, port
//! `j / (k²/2)`; so the hosts a workload numbers first (the client, then
//! its servers, `workload::clients`) sit in different pods, and every host of
//! the fabric exists, the ones no workload names as `host<j>`.
//! **Deliberately different:** per-tier rates are one for the host links and
//! one for every link between switches.
//! **Not modelled:** oversubscribed fat trees, hosts with several NICs,
//! three-tier leaf-spine (super-spines).

use super::fabric::{Fabric, FabricNode, Hop};
use crate::error::SimError;

/// Digits of a hierarchical address (pod, edge, port) at most.
const DIGITS: usize = 3;

/// A node's place in a hierarchical fabric: its first `len` digits. A host
/// has every digit; a switch the prefix it owns (an edge switch (pod,
/// edge), an aggregation switch (pod), a core none). The digits are packed
/// 16 bits each, the first highest, so a prefix is a shift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Address {
    packed: u64,
    len: u8,
}

impl Address {
    /// The address of `digits` (at most three).
    pub fn new(digits: &[u16]) -> Self {
        assert!(digits.len() <= DIGITS, "an address has at most {DIGITS} digits");
        let mut packed = 0;
        for (i, &d) in digits.iter().enumerate() {
            packed |= u64::from(d) << (16 * (DIGITS - 1 - i));
        }
        Address { packed, len: digits.len() as u8 }
    }

    /// The first `len` digits, packed.
    #[inline]
    fn prefix(&self, len: usize) -> u64 {
        self.packed >> (16 * (DIGITS - len))
    }

    /// Digits it has.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// It has no digit (a core or spine switch).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Digit `i`.
    #[inline]
    pub fn digit(&self, i: usize) -> u16 {
        (self.packed >> (16 * (DIGITS - 1 - i))) as u16
    }

    /// `other` lies below this prefix: it is longer and starts with it.
    #[inline]
    pub fn covers(&self, other: &Address) -> bool {
        other.len > self.len && other.prefix(self.len()) == self.prefix(self.len())
    }
}

/// How switches spread flows over equal-cost next hops.
///
/// Default value: `flow`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spreading {
    /// Per flow: a seeded hash of the 5-tuple picks the next hop, so a flow keeps one path.
    #[default]
    Flow,
    /// Per packet: each switch picks a next hop at random for every packet (packet spraying).
    Packet,
}

/// The multipath part of a fabric: every node's address and the spreading rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Multipath {
    /// `addresses[n]` is the address of fabric node `n`.
    pub addresses: Vec<Address>,
    /// How equal-cost next hops are chosen.
    pub spreading: Spreading,
}

/// The shape of a hierarchical fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A k-ary fat tree.
    FatTree {
        /// Ports per switch (even).
        k: u32,
    },
    /// Leaves, each joined to every spine.
    LeafSpine {
        /// Leaf switches.
        leaves: u32,
        /// Spine switches.
        spines: u32,
        /// Hosts on each leaf.
        hosts_per_leaf: u32,
    },
}

impl Shape {
    /// Hosts the fabric holds.
    pub fn hosts(&self) -> u64 {
        match *self {
            Shape::FatTree { k } => u64::from(k).pow(3) / 4,
            Shape::LeafSpine { leaves, hosts_per_leaf, .. } => u64::from(leaves) * u64::from(hosts_per_leaf),
        }
    }

    /// Switches the fabric holds.
    pub fn switches(&self) -> u64 {
        match *self {
            Shape::FatTree { k } => 5 * u64::from(k).pow(2) / 4,
            Shape::LeafSpine { leaves, spines, .. } => u64::from(leaves) + u64::from(spines),
        }
    }

    /// Links the fabric holds (one per host, then those between switches).
    pub fn links(&self) -> u64 {
        match *self {
            Shape::FatTree { k } => 3 * u64::from(k).pow(3) / 4,
            Shape::LeafSpine { leaves, spines, hosts_per_leaf } => {
                u64::from(leaves) * (u64::from(hosts_per_leaf) + u64::from(spines))
            }
        }
    }

    /// Where host `j` sits: its full address (hosts round-robin over pods or leaves).
    pub fn host_address(&self, j: u32) -> Address {
        match *self {
            Shape::FatTree { k } => {
                let half = k / 2;
                Address::new(&[(j % k) as u16, ((j / k) % half) as u16, (j / (k * half)) as u16])
            }
            Shape::LeafSpine { leaves, .. } => Address::new(&[(j % leaves) as u16, (j / leaves) as u16]),
        }
    }
}

/// Build the fabric of `shape`: hosts named by `name` (`None`: `host<j>`),
/// host links `host`, links between switches `trunk`. Nodes are the
/// switches (cores or spines first), then the hosts in host order.
pub fn build(
    shape: Shape,
    spreading: Spreading,
    host: Hop,
    trunk: Hop,
    name: impl Fn(u32) -> Option<String>,
) -> Result<Fabric, SimError> {
    let hosts = u32::try_from(shape.hosts()).map_err(|_| SimError::InvalidScenario {
        field: "topology".into(),
        message: format!("{} hosts are more than the engine numbers", shape.hosts()),
    })?;
    let mut nodes = Vec::new();
    let mut addresses = Vec::new();
    let mut links = Vec::new();
    let mut add = |n: String, host: Option<u32>, a: Address| {
        nodes.push(FabricNode { name: n, host });
        addresses.push(a);
        nodes.len() - 1
    };
    // `edge_of[e]`: edge switch (or leaf) `e`, pod by pod.
    let mut edge_of = Vec::new();
    match shape {
        Shape::FatTree { k } => {
            let half = k / 2;
            let cores: Vec<usize> =
                (0..half * half).map(|c| add(format!("core{c}"), None, Address::new(&[]))).collect();
            for p in 0..k {
                let aggs: Vec<usize> =
                    (0..half).map(|a| add(format!("pod{p}.agg{a}"), None, Address::new(&[p as u16]))).collect();
                for e in 0..half {
                    let edge = add(format!("pod{p}.edge{e}"), None, Address::new(&[p as u16, e as u16]));
                    edge_of.push(edge);
                    links.extend(aggs.iter().map(|&agg| (edge, agg, trunk)));
                }
                for (a, &agg) in aggs.iter().enumerate() {
                    let mine = &cores[a * half as usize..(a + 1) * half as usize];
                    links.extend(mine.iter().map(|&core| (agg, core, trunk)));
                }
            }
        }
        Shape::LeafSpine { leaves, spines, .. } => {
            let spines: Vec<usize> = (0..spines).map(|s| add(format!("spine{s}"), None, Address::new(&[]))).collect();
            for l in 0..leaves {
                let leaf = add(format!("leaf{l}"), None, Address::new(&[l as u16]));
                edge_of.push(leaf);
                links.extend(spines.iter().map(|&spine| (leaf, spine, trunk)));
            }
        }
    }
    let mut host_links = Vec::with_capacity(hosts as usize);
    for j in 0..hosts {
        let a = shape.host_address(j);
        // The switch a host hangs from: its pod's edge switch, or its leaf.
        let parent = match shape {
            Shape::FatTree { k } => edge_of[(a.digit(0) as u32 * (k / 2) + a.digit(1) as u32) as usize],
            Shape::LeafSpine { .. } => edge_of[a.digit(0) as usize],
        };
        let n = add(name(j).unwrap_or_else(|| format!("host{j}")), Some(j), a);
        host_links.push((n, parent, host));
    }
    let mut f = Fabric::hierarchical(nodes, Multipath { addresses, spreading });
    for (a, b, hop) in host_links.into_iter().chain(links) {
        f.link(a, b, hop);
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{BitRate, SimDuration};

    const HOP: Hop = Hop { rate: BitRate(1_000_000_000), delay: SimDuration(1_000_000), loss_ppb: 0, wan: false };

    fn fat_tree(k: u32) -> Fabric {
        build(Shape::FatTree { k }, Spreading::Flow, HOP, HOP, |_| None).unwrap()
    }

    /// Al-Fares §3.1: a k-ary fat tree has k³/4 hosts, 5k²/4 switches, and
    /// every switch k ports.
    #[test]
    fn fat_tree_has_al_fares_counts_and_k_ports_per_switch() {
        for k in [2, 4, 8] {
            let f = fat_tree(k);
            let hosts = f.nodes.iter().filter(|n| n.host.is_some()).count() as u64;
            assert_eq!(hosts, u64::from(k).pow(3) / 4);
            assert_eq!(f.nodes.len() as u64 - hosts, 5 * u64::from(k * k) / 4);
            assert_eq!(f.links.len() as u64, Shape::FatTree { k }.links());
            for (i, n) in f.nodes.iter().enumerate().filter(|(_, n)| n.host.is_none()) {
                let ports = f.links.iter().filter(|l| l.a == i || l.b == i).count();
                assert_eq!(ports as u32, k, "{}", n.name);
            }
        }
    }

    /// Consecutive hosts sit in different pods: the client (host 0) and its
    /// first servers (hosts 1, 2, 3) are in pods 0, 1, 2, 3.
    #[test]
    fn hosts_go_round_robin_over_pods() {
        let shape = Shape::FatTree { k: 4 };
        let pods: Vec<u16> = (0..6).map(|j| shape.host_address(j).digit(0)).collect();
        assert_eq!(pods, [0, 1, 2, 3, 0, 1]);
        assert_eq!(shape.host_address(4), Address::new(&[0, 1, 0]));
        assert_eq!(shape.host_address(8), Address::new(&[0, 0, 1]));
        let f = fat_tree(4);
        let host4 = f.nodes.iter().position(|n| n.host == Some(4)).unwrap();
        let link = f.links.iter().find(|l| l.a == host4).unwrap();
        assert_eq!(f.nodes[link.b].name, "pod0.edge1");
    }

    #[test]
    fn leaf_spine_joins_every_leaf_to_every_spine() {
        let shape = Shape::LeafSpine { leaves: 3, spines: 2, hosts_per_leaf: 4 };
        let f = build(shape, Spreading::Flow, HOP, HOP, |j| (j == 0).then(|| "client".into())).unwrap();
        assert_eq!(f.nodes.len(), 2 + 3 + 12);
        assert_eq!(f.links.len() as u64, shape.links());
        assert_eq!(f.nodes[5].name, "client");
        assert_eq!(f.nodes[6].name, "host1");
        assert_eq!(shape.host_address(4), Address::new(&[1, 1]));
    }

    #[test]
    fn a_prefix_covers_the_longer_addresses_that_start_with_it() {
        let pod = Address::new(&[1]);
        assert!(pod.covers(&Address::new(&[1, 0])));
        assert!(pod.covers(&Address::new(&[1, 1, 3])));
        assert!(!pod.covers(&Address::new(&[2, 0])));
        assert!(!pod.covers(&Address::new(&[1])));
        assert!(Address::new(&[]).covers(&pod));
    }
}
