//! Nodes, ports and how they are wired.
//!
//! **Models:** a [`Fabric`] turned into output ports: every link gives one
//! port at each end (a queue in front of that direction of the link); a
//! host's single port is its NIC, with an unlimited queue; a switch's ports
//! hold `buffer` each and forward on the destination host by a static table,
//! filled by breadth-first search from each switch (shortest path by hop
//! count, ties to the link listed first; hosts never forward) and then by
//! the fabric's explicit routes. A lossy link's port draws one number from
//! its own substream per frame and loses the frame on the wire (it takes its
//! link time, and never arrives). A port whose link carries the wide-area
//! delay model (`net::wan`) delays each frame it sends by the model's draw,
//! on the wire and in order. The switches of a fat tree or leaf-spine route
//! on addresses instead, over equal-cost next hops (`net::ecmp`), with one
//! entry per port.
//! **Not modelled:** multipath forwarding in other fabrics, learning
//! bridges, spanning tree.

use super::buffer::{BufferModel, SharedPool};
use super::clos::Address;
use super::ecmp::EcmpTable;
use super::fabric::Fabric;
use super::frame;
use super::host_jitter::HostJitter;
use super::link::Link;
use super::queue::{DropTailQueue, Peaks, QueueLimit};
use super::wan::{WanConfig, WanDelay};
use crate::error::SimError;
use crate::rng::Rng;
use crate::time::{BitRate, Bytes, SimDuration, SimTime};

/// Index of a node (host or switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(pub u32);

/// Index of an output port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(pub u32);

/// A forwarding entry that leads nowhere.
const NO_ROUTE: PortId = PortId(u32::MAX);

/// What sits at a node.
#[derive(Clone, Debug)]
pub enum Node {
    /// An end host (its index among hosts) and its NIC port.
    Host {
        /// Host index.
        host: u32,
        /// The NIC's output port.
        nic: PortId,
    },
    /// A switch with a static route per destination host.
    Switch {
        /// `route[h]` is the output port toward host `h`.
        route: Vec<PortId>,
    },
    /// A switch of a multipath fabric, routing on addresses (`net::ecmp`).
    Multipath {
        /// Its forwarding table.
        table: Box<EcmpTable>,
    },
}

impl Node {
    /// Is it a switch (of either kind)?
    #[inline]
    pub fn is_switch(&self) -> bool {
        !matches!(self, Node::Host { .. })
    }
}

/// An output port: a queue in front of a link to `peer`.
#[derive(Clone, Debug)]
pub struct Port {
    /// The outgoing link.
    pub link: Link,
    /// Its queue.
    pub queue: DropTailQueue,
    /// The node the port belongs to.
    pub node: NodeId,
    /// The node at the far end.
    pub peer: NodeId,
    /// From a frame's last bit leaving to the frame reaching the far end:
    /// the link's propagation delay plus what the far end adds, a host's
    /// stack and NIC latency ([`Network::set_host_delay`], zero toward a
    /// switch). One sum, added once per hop.
    flight: SimDuration,
    /// The shared memory the port draws from (`NO_POOL`: its own buffer).
    pool: u32,
    /// The port needs [`Network::send_special`]: a shared memory, a lossy
    /// link, a wide-area delay, a host's handling time or a token bucket.
    special: bool,
}

impl Port {
    /// Frames may be offered to this port when its feeder sends them
    /// (`sim::ahead`): it runs no special path ([`Network::send_special`])
    /// and logs no occupancy.
    pub fn takes_ahead(&self) -> bool {
        !self.special && !self.queue.is_logged()
    }

    /// From a frame's last bit leaving to the frame reaching the far end
    /// (propagation, then a host's stack and NIC). Time saturates, so
    /// `done + flight` is `done + delay + rx_delay` exactly.
    #[inline]
    pub fn flight(&self) -> SimDuration {
        self.flight
    }
}

/// A port with a buffer of its own.
const NO_POOL: u32 = u32::MAX;

/// The wired network.
pub struct Network {
    nodes: Vec<Node>,
    names: Vec<String>,
    ports: Vec<Port>,
    host_nodes: Vec<NodeId>,
    /// Shared memories, one per switch in the `shared` buffer model.
    pools: Vec<SharedPool>,
    /// What each port's link does to frames on the wire.
    wire: Vec<Wire>,
    /// Frames each port's link lost.
    lost: Vec<u64>,
    /// Each host's address, in a multipath fabric (else empty).
    addresses: Vec<Address>,
}

/// The impairments of one direction of a link, each `None` when off.
#[derive(Clone, Debug, Default)]
struct Wire {
    /// Loss probability (parts per billion) and its random stream.
    loss: Option<(u32, Rng)>,
    /// The wide-area delay model.
    wan: Option<WanDelay>,
    /// The receiving host's handling time, on a link toward a host.
    host: Option<HostJitter>,
    /// What the far end adds before a frame reaches it, part of the port's
    /// `flight`: a host's stack and NIC latency; zero toward a switch.
    rx_delay: SimDuration,
    /// A link of their own for the data frames of a host that sends only
    /// requests and ACKs ([`Network::send_requests_apart`]).
    requests: Option<Link>,
}

impl Network {
    /// Wire `fabric`: switch ports hold `buffer` as `model` allocates it,
    /// host NICs are unlimited.
    pub fn build(fabric: &Fabric, buffer: QueueLimit, model: BufferModel, seed: u64) -> Self {
        let buffer = match model {
            BufferModel::Static | BufferModel::Shared { .. } => buffer,
            BufferModel::Qos { classes } => {
                let share = |n: u64| if n == u64::MAX { n } else { n / u64::from(classes) };
                QueueLimit { bytes: share(buffer.bytes), packets: share(buffer.packets) }
            }
        };
        let hosts = fabric.nodes.iter().filter(|n| n.host.is_some()).count();
        let mut host_nodes = vec![NodeId(u32::MAX); hosts];
        let mut nodes: Vec<Node> = fabric
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| match n.host {
                Some(h) => {
                    host_nodes[h as usize] = NodeId(i as u32);
                    Node::Host { host: h, nic: NO_ROUTE }
                }
                // Replaced by its multipath table below, without a table per host first.
                None if fabric.multipath.is_some() => Node::Switch { route: Vec::new() },
                None => Node::Switch { route: vec![NO_ROUTE; hosts] },
            })
            .collect();
        let is_host = |i: usize| fabric.nodes[i].host.is_some();
        let mut ports = Vec::with_capacity(2 * fabric.links.len());
        let mut wire = Vec::with_capacity(2 * fabric.links.len());
        // adjacency[n]: (neighbour, port toward it), in link order.
        let mut adjacency: Vec<Vec<(usize, PortId)>> = vec![Vec::new(); nodes.len()];
        for l in &fabric.links {
            for (from, to, hop) in [(l.a, l.b, l.ab), (l.b, l.a, l.ba)] {
                let id = PortId(ports.len() as u32);
                let limit = if is_host(from) { QueueLimit::UNLIMITED } else { buffer };
                ports.push(Port {
                    link: Link::new(hop.rate, hop.delay),
                    queue: DropTailQueue::new(limit),
                    node: NodeId(from as u32),
                    peer: NodeId(to as u32),
                    flight: hop.delay,
                    pool: NO_POOL,
                    special: hop.loss_ppb > 0,
                });
                let loss = (hop.loss_ppb > 0).then(|| (hop.loss_ppb, Rng::substream(seed, &format!("loss/{}", id.0))));
                wire.push(Wire { loss, ..Wire::default() });
                adjacency[from].push((to, id));
                if let Node::Host { nic, .. } = &mut nodes[from] {
                    *nic = id;
                }
            }
        }
        let mut addresses = Vec::new();
        if let Some(m) = &fabric.multipath {
            addresses = host_nodes.iter().map(|n| m.addresses[n.0 as usize]).collect();
            for (s, node) in nodes.iter_mut().enumerate().filter(|(s, _)| !is_host(*s)) {
                let neighbours = adjacency[s].iter().map(|&(v, port)| (m.addresses[v], port));
                let table = EcmpTable::new(m.addresses[s], neighbours, m.spreading, seed, &fabric.nodes[s].name);
                *node = Node::Multipath { table: Box::new(table) };
            }
        }
        for s in 0..nodes.len() {
            if is_host(s) || fabric.multipath.is_some() {
                continue;
            }
            let mut route = vec![NO_ROUTE; hosts];
            if fabric.shortest_path {
                // Breadth-first from the switch; every node inherits the first
                // hop of the node it was reached from.
                let mut first: Vec<Option<PortId>> = vec![None; nodes.len()];
                let mut frontier = std::collections::VecDeque::from([s]);
                let mut seen = vec![false; nodes.len()];
                seen[s] = true;
                while let Some(u) = frontier.pop_front() {
                    if let Some(h) = fabric.nodes[u].host {
                        route[h as usize] = first[u].expect("a host is reached through a port");
                        continue;
                    }
                    for &(v, port) in &adjacency[u] {
                        if !seen[v] {
                            seen[v] = true;
                            first[v] = Some(first[u].unwrap_or(port));
                            frontier.push_back(v);
                        }
                    }
                }
            }
            for &(at, h, via) in fabric.routes.iter().filter(|r| r.0 == s) {
                if let Some(&(_, port)) = adjacency[at].iter().find(|a| a.0 == via) {
                    route[h as usize] = port;
                }
            }
            nodes[s] = Node::Switch { route };
        }
        let mut pools = Vec::new();
        if let BufferModel::Shared { alpha_thousandths } = model {
            for s in (0..nodes.len()).filter(|&s| !is_host(s)) {
                let mine: Vec<usize> = (0..ports.len()).filter(|&p| ports[p].node.0 as usize == s).collect();
                let capacity = buffer.bytes.saturating_mul(mine.len() as u64);
                for &p in &mine {
                    ports[p].pool = pools.len() as u32;
                    ports[p].special = true;
                    ports[p].queue = DropTailQueue::new(QueueLimit { bytes: capacity, packets: u64::MAX });
                }
                pools.push(SharedPool::new(capacity, alpha_thousandths));
            }
        }
        let names = fabric.nodes.iter().map(|n| n.name.clone()).collect();
        let lost = vec![0; ports.len()];
        Network { nodes, names, ports, host_nodes, pools, wire, lost, addresses }
    }

    /// Every host takes `delay` from the last bit of a frame on its NIC to
    /// its TCP (its stack's and NIC's latency both ways, charged on receive;
    /// `LinkConfig::host_delay`).
    pub fn set_host_delay(&mut self, delay: SimDuration) {
        for (p, wire) in self.ports.iter_mut().zip(&mut self.wire) {
            if matches!(self.nodes[p.peer.0 as usize], Node::Host { .. }) {
                p.flight = p.link.delay() + delay;
                wire.rx_delay = delay;
            }
        }
    }

    /// Every host takes a random time with mean `mean` to handle each frame
    /// it receives (`net::host_jitter`); port `p`, toward a host, draws from
    /// substream `host_jitter/<p>` of `seed`.
    pub fn set_host_jitter(&mut self, mean: SimDuration, seed: u64) {
        for (i, p) in self.ports.iter_mut().enumerate() {
            if matches!(self.nodes[p.peer.0 as usize], Node::Host { .. }) {
                p.special = true;
                self.wire[i].host = Some(HostJitter::new(mean, seed, &i.to_string()));
            }
        }
    }

    /// Every port sends through a token bucket `depth` bytes deep
    /// (`link.token_bucket`, `net::token_bucket`), on the special path.
    pub fn shape_ports(&mut self, depth: Bytes) {
        for p in &mut self.ports {
            p.link.shape(depth);
            p.special = true;
        }
    }

    /// Host `h`'s data frames (a client's requests) leave its NIC on a link of
    /// their own, as fast as its link: they take a frame's time each, one
    /// after another, queue behind nothing and hold back none of its ACKs
    /// (`workload.request_path = "apart"`). On the special path.
    pub fn send_requests_apart(&mut self, h: u32) {
        let nic = self.nic(h).0 as usize;
        self.ports[nic].special = true;
        self.wire[nic].requests = Some(self.ports[nic].link.clone());
    }

    /// Keep account of the frames in every host's NIC queue (`link.tx_queue`).
    pub fn track_nic_queues(&mut self) {
        for h in 0..self.host_nodes.len() as u32 {
            let nic = self.nic(h);
            self.ports[nic.0 as usize].queue.track();
        }
    }

    /// Put the wide-area delay model `cfg` on both directions of every link
    /// of `fabric` (the one this network was built from) whose hops say
    /// `wan`; port `p` draws from the substreams `wan/<p>/…` of `seed`.
    pub fn add_wan(&mut self, fabric: &Fabric, cfg: &WanConfig, seed: u64) {
        // Link k gave ports 2k (a to b) and 2k + 1 (b to a).
        let hops = fabric.links.iter().flat_map(|l| [l.ab, l.ba]);
        for (p, _) in hops.enumerate().filter(|(_, hop)| hop.wan) {
            self.ports[p].special = true;
            self.wire[p].wan = Some(WanDelay::new(cfg, seed, &p.to_string()));
        }
    }

    /// The output ports a frame from host `src` to host `dst` crosses, the
    /// source's NIC first; the error names where the route breaks. In a
    /// multipath fabric, the path of flow hash 0: every equal-cost path of a
    /// fat tree or leaf-spine crosses the same tiers' links.
    pub fn path(&self, src: u32, dst: u32) -> Result<Vec<PortId>, SimError> {
        self.path_of(src, dst, 0)
    }

    /// [`Network::path`] of a flow with hash `key` (`net::ecmp`): the path
    /// every frame of it takes with per-flow spreading.
    pub fn path_of(&self, src: u32, dst: u32, key: u64) -> Result<Vec<PortId>, SimError> {
        let broken = |why: String| SimError::InvalidScenario {
            field: "topology.routes".into(),
            message: format!("{} to {}: {why}", self.name(self.host_node(src)), self.name(self.host_node(dst))),
        };
        let mut ports = vec![self.nic(src)];
        let mut at = self.port(ports[0]).peer;
        loop {
            let next = match self.node(at) {
                Node::Host { host, .. } if *host == dst => return Ok(ports),
                Node::Host { .. } => return Err(broken(format!("the route ends at host {}", self.name(at)))),
                Node::Switch { route } => route[dst as usize],
                Node::Multipath { table } => table.route(&self.addresses[dst as usize], key),
            };
            if next == NO_ROUTE {
                return Err(broken(format!("switch {} has no route", self.name(at))));
            }
            if ports.len() > self.nodes.len() {
                return Err(broken(format!("the route loops through switch {}", self.name(at))));
            }
            ports.push(next);
            at = self.port(next).peer;
        }
    }

    /// Propagation and serialization of one frame carrying `payload` bytes
    /// from host `src` to host `dst` on an idle network (with the base
    /// wide-area delay where a link carries it; no serialization through
    /// token buckets, full on an idle network).
    pub fn one_way(&self, src: u32, dst: u32, payload: u32) -> Result<SimDuration, SimError> {
        let wire = frame::wire_bytes(payload);
        Ok(self.path(src, dst)?.iter().fold(SimDuration::ZERO, |t, &p| {
            let port = self.port(p);
            let wan = self.wire[p.0 as usize].wan.as_ref().map_or(SimDuration::ZERO, WanDelay::base);
            t + port.link.idle_tx_time(wire) + port.link.delay() + wan + self.wire[p.0 as usize].rx_delay
        }))
    }

    /// Name of node `id`.
    pub fn name(&self, id: NodeId) -> &str {
        &self.names[id.0 as usize]
    }

    /// Every switch port admits a frame only while `bytes` more would fit
    /// (`switch.admission = "full_frame"`).
    pub fn require_room_for(&mut self, bytes: u64) {
        for p in &mut self.ports {
            if self.nodes[p.node.0 as usize].is_switch() {
                p.queue.require_room_for(bytes);
            }
        }
    }

    /// Mark ECN-capable frames at every switch output port above `k` (RFC 8257 §3.1).
    pub fn set_ecn_threshold(&mut self, k: QueueLimit) {
        for p in &mut self.ports {
            if self.nodes[p.node.0 as usize].is_switch() {
                p.queue.set_mark_threshold(k);
            }
        }
    }

    /// The node at `id`.
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    /// The port multipath switch `node` sends this frame to host `dst` of
    /// flow hash `key` out of (`net::ecmp`).
    #[inline(always)]
    pub fn next_hop(&mut self, node: NodeId, dst: u32, key: u64) -> PortId {
        let Node::Multipath { table } = &mut self.nodes[node.0 as usize] else {
            unreachable!("next_hop is asked of multipath switches")
        };
        table.next_hop(&self.addresses[dst as usize], key)
    }

    /// Entries of every switch's forwarding table: a host per entry in a
    /// single-path switch, a port per entry in a multipath one.
    pub fn route_entries(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Host { .. } => None,
                Node::Switch { route } => Some(route.len()),
                Node::Multipath { table } => Some(table.entries()),
            })
            .collect()
    }

    /// Is this a multipath fabric (`net::ecmp`)?
    pub fn is_multipath(&self) -> bool {
        !self.addresses.is_empty()
    }

    /// The node of host `h`.
    pub fn host_node(&self, h: u32) -> NodeId {
        self.host_nodes[h as usize]
    }

    /// The rate of the fastest link (1 bit/s in a network without one).
    pub fn fastest(&self) -> BitRate {
        self.ports.iter().map(|p| p.link.rate()).max().unwrap_or(BitRate(1))
    }

    /// Number of output ports; port ids are `0..ports()`.
    pub fn ports(&self) -> usize {
        self.ports.len()
    }

    /// The port at `id`.
    pub fn port(&self, id: PortId) -> &Port {
        &self.ports[id.0 as usize]
    }

    /// The port at `id`, to change.
    pub fn port_mut(&mut self, id: PortId) -> &mut Port {
        &mut self.ports[id.0 as usize]
    }

    /// The NIC port of host `h`.
    #[inline]
    pub fn nic(&self, h: u32) -> PortId {
        match self.nodes[self.host_nodes[h as usize].0 as usize] {
            Node::Host { nic, .. } => nic,
            Node::Switch { .. } | Node::Multipath { .. } => unreachable!("host_nodes holds hosts only"),
        }
    }

    /// Offer a segment with `payload` bytes to `port` at `now`. Returns the
    /// next node and the arrival time of the frame's last bit there, or `None`
    /// when the queue drops it.
    // Inline always: it is the engine's per-hop path, which LLVM otherwise
    // keeps out of line.
    #[inline(always)]
    pub fn send(&mut self, port: PortId, now: SimTime, payload: u32) -> Option<(NodeId, SimTime)> {
        self.offer::<false>(port, now, payload).map(|(node, at, _)| (node, at))
    }

    /// [`Network::send`] to a port that takes frames ahead (`sim::ahead`),
    /// which [`Port::takes_ahead`]; also the port's peaks before this frame
    /// if it raised them.
    #[inline(always)]
    pub fn send_noting_peaks(
        &mut self,
        port: PortId,
        now: SimTime,
        payload: u32,
    ) -> Option<(NodeId, SimTime, Option<Peaks>)> {
        debug_assert!(self.ports[port.0 as usize].takes_ahead());
        self.offer::<false>(port, now, payload)
    }

    /// [`Network::send`] for a segment that arrived just before the departure
    /// at the same instant from `port`, which then still counts (ns-2's
    /// order, `sim::double_clock`).
    #[cold]
    pub fn send_ahead_of_departure(&mut self, port: PortId, now: SimTime, payload: u32) -> Option<(NodeId, SimTime)> {
        self.offer::<true>(port, now, payload).map(|(node, at, _)| (node, at))
    }

    /// [`Network::send`], or with `AHEAD` [`Network::send_ahead_of_departure`];
    /// with the port's peaks before the frame, if it raised them (not
    /// told at a special port).
    #[inline(always)]
    fn offer<const AHEAD: bool>(
        &mut self,
        port: PortId,
        now: SimTime,
        payload: u32,
    ) -> Option<(NodeId, SimTime, Option<Peaks>)> {
        let p = &mut self.ports[port.0 as usize];
        if p.special {
            return self.send_special(port, now, payload, AHEAD).map(|(node, at)| (node, at, None));
        }
        let frame_bytes = frame::frame_bytes(payload);
        let fits =
            if AHEAD { p.queue.admit_ahead_of_departure(now, frame_bytes) } else { p.queue.admit(now, frame_bytes) };
        if !fits {
            return None;
        }
        let done = p.link.transmit(now, frame_bytes + u64::from(frame::PREAMBLE_IFG));
        let peaks = p.queue.push(now, done, frame_bytes);
        Some((p.peer, done + p.flight, peaks))
    }
}

impl Network {
    /// [`Network::send`] at a port that draws from its switch's shared memory
    /// or sends through a token bucket, or whose link loses frames, adds a
    /// wide-area delay or ends at a host with a handling time; a lost frame is
    /// `None` too, counted in [`Network::lost`]. `ahead` as for
    /// [`Network::send_ahead_of_departure`].
    #[cold]
    fn send_special(&mut self, port: PortId, now: SimTime, payload: u32, ahead: bool) -> Option<(NodeId, SimTime)> {
        let i = port.0 as usize;
        let p = &mut self.ports[i];
        let frame_bytes = frame::frame_bytes(payload);
        if let Some(requests) = self.wire[i].requests.as_mut().filter(|_| payload > 0) {
            let done = requests.transmit_shaped(now, frame_bytes + u64::from(frame::PREAMBLE_IFG));
            return Some((p.peer, done + p.flight));
        }
        let admitted = match self.pools.get_mut(p.pool as usize) {
            None if ahead => p.queue.admit_ahead_of_departure(now, frame_bytes),
            None => p.queue.admit(now, frame_bytes),
            // A shared memory counts the departures at `now` first whatever `ahead` says
            // (ns-2 has no shared memory to follow).
            Some(pool) => {
                let bound = pool.threshold(now, p.queue.bytes_at(now));
                p.queue.admit_below(now, frame_bytes, bound)
            }
        };
        if !admitted {
            return None;
        }
        let done = p.link.transmit_shaped(now, frame_bytes + u64::from(frame::PREAMBLE_IFG));
        p.queue.push(now, done, frame_bytes);
        if let Some(pool) = self.pools.get_mut(p.pool as usize) {
            pool.push(done, frame_bytes);
        }
        let wire = &mut self.wire[i];
        if let Some((ppb, rng)) = &mut wire.loss {
            if rng.below(1_000_000_000) < u64::from(*ppb) {
                self.lost[i] += 1;
                return None;
            }
        }
        let arrival = p.link.arrival(done);
        let at = match &mut wire.wan {
            Some(wan) => wan.arrival(done, arrival) + wire.rx_delay,
            None => arrival + wire.rx_delay,
        };
        Some((p.peer, wire.host.as_mut().map_or(at, |h| h.handled(at))))
    }

    /// Frames the link of `port` lost on the wire.
    pub fn lost(&self, port: PortId) -> u64 {
        self.lost[port.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::fabric::{GraphConfig, Hop, HostCounts, LinkSpec, NodeKind, NodeSpec, RouteSpec, Routing};
    use crate::net::BufferLimit;
    use crate::time::{BitRate, Bytes};

    const HOP: Hop = Hop { rate: BitRate(1_000_000_000), delay: SimDuration(25_000_000), loss_ppb: 0, wan: false };

    fn star(servers: u32, buffer: BufferLimit) -> Network {
        Network::build(
            &Fabric::star(HostCounts::servers(servers), HOP, SimDuration::ZERO),
            buffer.into(),
            BufferModel::Static,
            0,
        )
    }

    /// A full frame from a server reaches the client after two serializations
    /// and two propagation delays (store and forward).
    #[test]
    fn server_to_client_crosses_two_hops() {
        let mut net = star(2, BufferLimit::Bytes(Bytes::kib(32)));
        let (sw, t1) = net.send(net.nic(2), SimTime::ZERO, 1460).unwrap();
        assert_eq!(net.name(sw), "switch");
        let Node::Switch { route } = net.node(sw).clone() else { panic!() };
        let (client, t2) = net.send(route[0], t1, 1460).unwrap();
        assert_eq!(client, net.host_node(0));
        let hop = SimDuration::from_nanos(12_304) + SimDuration::from_micros(25);
        assert_eq!(t2, SimTime::ZERO + hop + hop);
        assert_eq!(net.one_way(2, 0, 1460).unwrap(), hop + hop);
    }

    /// `workload.request_path = "apart"`: the client's requests take a frame's
    /// time each on a link of their own, so an ACK sent after them leaves at
    /// once; in the NIC's queue it waits for both.
    #[test]
    fn requests_apart_hold_back_no_ack() {
        let request_then_ack = |apart: bool| {
            let mut net = star(2, BufferLimit::Bytes(Bytes::kib(32)));
            if apart {
                net.send_requests_apart(0);
            }
            let nic = net.nic(0);
            let (_, first) = net.send(nic, SimTime::ZERO, 100).unwrap();
            let (_, second) = net.send(nic, SimTime::ZERO, 100).unwrap();
            let (_, ack) = net.send(nic, SimTime::ZERO, 0).unwrap();
            (first, second, ack)
        };
        let request = SimDuration::from_nanos(1_424); // 178 wire bytes at 1 Gbps
        let ack = SimDuration::from_nanos(672); // 84, a minimum frame
        let hop = SimDuration::from_micros(25);
        let (first, second, queued_ack) = request_then_ack(false);
        assert_eq!((second.since(first), queued_ack), (request, SimTime::ZERO + request + request + ack + hop));
        let (first, second, apart_ack) = request_then_ack(true);
        assert_eq!(
            (first, second.since(first), apart_ack),
            (SimTime::ZERO + request + hop, request, SimTime::ZERO + ack + hop)
        );
    }

    /// A host's stack and NIC latency delays what reaches the host, not what
    /// reaches the switch, and counts in the one-way time.
    #[test]
    fn host_delay_is_charged_where_a_host_receives() {
        let mut net = star(2, BufferLimit::Bytes(Bytes::kib(32)));
        let host = SimDuration::from_micros(40);
        net.set_host_delay(host);
        let (_, at_switch) = net.send(net.nic(2), SimTime::ZERO, 1460).unwrap();
        let hop = SimDuration::from_nanos(12_304) + SimDuration::from_micros(25);
        assert_eq!(at_switch, SimTime::ZERO + hop);
        let Node::Switch { route } = net.node(NodeId(0)).clone() else { panic!() };
        let (_, at_client) = net.send(route[0], at_switch, 1460).unwrap();
        assert_eq!(at_client, at_switch + hop + host);
        assert_eq!(net.one_way(2, 0, 1460).unwrap(), hop + hop + host);
    }

    /// A host's handling time delays each frame the host receives by its own
    /// draw, in order, and leaves the switch's arrivals and the one-way time
    /// (the handshake's RTT) as they were.
    #[test]
    fn host_jitter_delays_what_a_host_receives_in_order() {
        let mut net = star(2, BufferLimit::Bytes(Bytes::kib(32)));
        net.set_host_jitter(SimDuration::from_micros(40), 1);
        let hop = SimDuration::from_nanos(12_304) + SimDuration::from_micros(25);
        let (_, at_switch) = net.send(net.nic(2), SimTime::ZERO, 1460).unwrap();
        assert_eq!(at_switch, SimTime::ZERO + hop);
        let Node::Switch { route } = net.node(NodeId(0)).clone() else { panic!() };
        let mut last = SimTime::ZERO;
        let mut late = SimDuration::ZERO;
        for k in 0..20u64 {
            let sent = at_switch + SimDuration::from_micros(100 * k);
            let (_, at_client) = net.send(route[0], sent, 1460).unwrap();
            assert!(at_client >= sent + hop && at_client >= last);
            late = late.max(at_client.since(sent + hop));
            last = at_client;
        }
        assert!(late > SimDuration::ZERO);
        assert_eq!(net.one_way(2, 0, 1460).unwrap(), hop + hop);
    }

    /// QoS with 4 classes leaves a flow a quarter of the port (FAST08 §4.1).
    #[test]
    fn qos_classes_partition_the_port() {
        let f = Fabric::star(HostCounts::servers(1), HOP, SimDuration::ZERO);
        let mut net = Network::build(&f, BufferLimit::Packets(8).into(), BufferModel::Qos { classes: 4 }, 0);
        let Node::Switch { route } = net.node(NodeId(0)).clone() else { panic!() };
        let sent = (0..8).filter(|_| net.send(route[0], SimTime::ZERO, 1460).is_some()).count();
        assert_eq!(sent, 2);
    }

    /// In shared memory a lone congested port takes α/(1+α) of the switch's
    /// memory: with α = 1 and four ports of 4 frames each, 8 frames where a
    /// static buffer would give it 4.
    #[test]
    fn shared_memory_lends_a_congested_port_the_idle_ports_buffer() {
        let f = Fabric::star(HostCounts::servers(3), HOP, SimDuration::ZERO);
        let frame = frame::frame_bytes(1460);
        let buffer = BufferLimit::Bytes(crate::time::Bytes::new(4 * frame));
        let mut net = Network::build(&f, buffer.into(), BufferModel::Shared { alpha_thousandths: 1000 }, 0);
        let Node::Switch { route } = net.node(NodeId(0)).clone() else { panic!() };
        let sent = (0..20).filter(|_| net.send(route[0], SimTime::ZERO, 1460).is_some()).count();
        assert_eq!(sent, 8);
    }

    #[test]
    fn switch_port_drops_beyond_its_buffer() {
        let mut net = star(1, BufferLimit::Packets(2));
        let Node::Switch { route } = net.node(NodeId(0)).clone() else { panic!() };
        let sent = (0..5).filter(|_| net.send(route[0], SimTime::ZERO, 1460).is_some()).count();
        assert_eq!(sent, 2);
        assert_eq!(net.port(route[0]).queue.stats().drops, 3);
    }

    /// In a tree a server's frames cross its edge switch, the trunk and the core.
    #[test]
    fn tree_paths_cross_the_trunk() {
        let f = Fabric::tree(HostCounts::servers(3), HOP, HOP, 2, SimDuration::ZERO);
        let net = Network::build(&f, QueueLimit::UNLIMITED, BufferModel::Static, 0);
        let names = |src, dst| -> Vec<String> {
            net.path(src, dst).unwrap().iter().map(|&p| net.name(net.port(p).peer).to_owned()).collect()
        };
        assert_eq!(names(2, 0), ["edge1", "core", "client"]);
        assert_eq!(names(0, 3), ["core", "edge0", "server2"]);
        assert_eq!(names(1, 3), ["edge0", "server2"], "servers on one edge switch talk directly");
    }

    fn diamond(routing: Routing, routes: &[(&str, &str, &str)]) -> Network {
        let node = |n: &str, kind| NodeSpec { name: n.into(), kind };
        let link = LinkSpec::between;
        let g = GraphConfig {
            nodes: vec![
                node("c", NodeKind::Client),
                node("s", NodeKind::Server),
                node("a", NodeKind::Switch),
                node("b1", NodeKind::Switch),
                node("b2", NodeKind::Switch),
                node("d", NodeKind::Switch),
            ],
            links: vec![
                link("c", "a"),
                link("a", "b1"),
                link("a", "b2"),
                link("b1", "d"),
                link("b2", "d"),
                link("s", "d"),
            ],
            routing,
            routes: routes
                .iter()
                .map(|&(at, to, via)| RouteSpec { at: at.into(), to: to.into(), via: via.into() })
                .collect(),
        };
        let f = Fabric::graph(&g, HostCounts::servers(1), HOP).unwrap();
        Network::build(&f, QueueLimit::UNLIMITED, BufferModel::Static, 0)
    }

    fn via(net: &Network, src: u32, dst: u32) -> Vec<String> {
        net.path(src, dst).unwrap().iter().map(|&p| net.name(net.port(p).peer).to_owned()).collect()
    }

    /// Equal-length paths: the link listed first wins; an explicit route overrides it.
    #[test]
    fn shortest_path_ties_go_to_the_first_link_and_routes_override() {
        let net = diamond(Routing::ShortestPath, &[]);
        assert_eq!(via(&net, 0, 1), ["a", "b1", "d", "s"]);
        assert_eq!(via(&net, 1, 0), ["d", "b1", "a", "c"]);
        let net = diamond(Routing::ShortestPath, &[("a", "s", "b2")]);
        assert_eq!(via(&net, 0, 1), ["a", "b2", "d", "s"]);
    }

    /// With static routing a missing entry or a loop is named.
    #[test]
    fn static_routing_reports_missing_entries_and_loops() {
        let net = diamond(Routing::Static, &[("a", "s", "b1"), ("b1", "s", "d")]);
        assert_eq!(net.path(0, 1).unwrap_err().to_string(), "topology.routes: c to s: switch d has no route");
        let net = diamond(Routing::Static, &[("a", "s", "b1"), ("b1", "s", "a")]);
        assert!(net.path(0, 1).unwrap_err().to_string().contains("loops through switch"));
        let net = diamond(Routing::Static, &[("a", "s", "b1"), ("b1", "s", "d"), ("d", "s", "s")]);
        assert_eq!(via(&net, 0, 1), ["a", "b1", "d", "s"]);
    }
}
