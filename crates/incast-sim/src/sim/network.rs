//! The engine's network: the switches and links of `net`, the packets in
//! flight, and what happens to a packet at each hop.
//!
//! **Models:** a packet offered to a port is queued there (its arrival at
//! the far end scheduled at once) or dropped at a full queue; an
//! ECN-capable packet queued above the port's threshold is marked CE; a
//! switch that polices rude flows drops every packet carrying the rude bit
//! (RUDE §2.3). Packets live in one pool, read in place and freed where
//! they are dropped or delivered. The counters of the run's summary and
//! per-port table (sent, delivered, dropped and marked packets, drops per
//! flow) are kept here, and the data segments dropped, until their senders
//! hear of them (the ground truth a retransmission timeout is judged by). With PAUSE or traffic classes on, ports use the
//! explicit FIFOs of `sim::pause` instead.
//! **Deliberately different:** see `net` (a port knows each frame's
//! departure when it is queued).
//! **Not modelled:** switch processing delays; see `net`.

use super::ahead::{Ahead, NO_PORT};
use super::double_clock::DoubleClock;
use super::endpoints::Route;
use super::pause::{Lossless, Priorities};
use super::{endpoint_of, Event, CLIENT0};
use crate::event::{EventQueue, Ticket};
use crate::net::buffer::BufferModel;
use crate::net::ecmp::{FiveTuple, SERVER_PORT, UDP};
use crate::net::pfc::PRIORITIES;
use crate::net::ArrivalOrder;
use crate::net::{frame, Direction, Network, Node, NodeId, PacketPool, PktId, PortId};
use crate::net::{Admission, RudePolicy};
use crate::scenario::Scenario;
use crate::stats::PortStats;
use crate::tcp::{flags, Endpoint};
use crate::time::{SimDuration, SimTime};
use crate::workload::clients::Layout;
use crate::workload::RequestPath;

/// A data segment the network dropped: its connection, its direction, its
/// bytes, and when (a port taken ahead, `sim::ahead`, decides the drop as the
/// frame leaves its NIC, for the instant it reaches the switch).
#[derive(Clone, Copy, Debug)]
pub(super) struct DroppedCopy {
    pub(super) at: SimTime,
    pub(super) flow: u32,
    pub(super) dir: Direction,
    pub(super) seq: u64,
    pub(super) len: u32,
}

/// The network and the packets crossing it.
pub(super) struct DataPlane {
    /// Hosts, switches, ports and routes.
    pub(super) net: Network,
    /// Every packet in flight.
    pub(super) pool: PacketPool,
    /// The switch port toward client 0.
    pub(super) bottleneck: PortId,
    /// Explicit per-priority port FIFOs, when `switch.pause` is on or the
    /// traffic uses several priorities.
    pub(super) lossless: Option<Box<Lossless>>,
    /// `lossless` or `double_clock` is on, or `link.arrival_order` is "ns3":
    /// [`DataPlane::forward`] takes its detour.
    detour: bool,
    /// ECN marking is on at the switch ports.
    pub(super) ecn: bool,
    /// Same-instant arrivals go in the order their transmissions started.
    wire_order: bool,
    /// Same-instant arrivals go first in the order of ns-2's double-precision
    /// clock (`link.arrival_order = "ns2"`), kept here.
    pub(super) double_clock: Option<Box<DoubleClock>>,
    /// The switch drops packets carrying the rude bit.
    police_rude: bool,
    /// Frames a host's NIC queue holds before its TCP waits (`link.tx_queue`).
    tx_queue: Option<u32>,
    /// In a multipath fabric, the 5-tuple hash of each endpoint's frames
    /// (`net::ecmp`), by `endpoint_of(flow, dir)`, the UDP source's last; else empty.
    keys: Vec<u64>,
    /// The seed of those hashes (the run's).
    ecmp_seed: u64,
    /// Packets handed to a NIC.
    pub(super) sent: u64,
    /// Packets that reached their destination host.
    pub(super) delivered: u64,
    /// Packets dropped anywhere.
    pub(super) dropped: u64,
    /// Packets dropped for carrying the rude bit.
    pub(super) rude_drops: u64,
    /// ECN-capable packets marked CE.
    pub(super) marks: u64,
    /// ECN-capable packets marked CE at each port.
    port_marks: Vec<u64>,
    /// Drops of each connection, and of the UDP source last.
    pub(super) flow_drops: Vec<u64>,
    /// The data segments dropped that their senders have not been told of
    /// yet ([`DataPlane::report_drops`]).
    pub(super) dropped_copies: Vec<DroppedCopy>,
    /// The hops taken ahead (`sim::ahead`).
    pub(super) ahead: Ahead,
}

impl DataPlane {
    /// The frame time the event queue sizes its buckets from: a full-sized
    /// frame on the fastest link; in a multipath fabric, an eighth of it, since
    /// such a fabric keeps many links busy at once and a bucket a frame wide
    /// would hold hundreds of events to sort (`event`). The order of events is
    /// the same whatever the width.
    pub(super) fn bucket_frame(&self, mss: u32) -> SimDuration {
        let frame = self.net.fastest().tx_time(frame::wire_bytes(mss));
        if self.net.is_multipath() {
            frame / 8
        } else {
            frame
        }
    }

    /// The scenario's fabric carrying `flows` TCP connections (the reading
    /// ones of `reads` first) and, one past them, the UDP source; the
    /// bottleneck logs its occupancy, at most `queue_trace` entries, if given.
    pub(super) fn new(s: &Scenario, reads: Layout, flows: u32, queue_trace: Option<usize>) -> Self {
        let fabric = s.fabric().expect("a validated scenario has a fabric");
        // With traffic classes the class FIFOs enforce `qos:K` partitions (`net::pfc`).
        let classes = s.classes();
        let model = if classes { BufferModel::Static } else { s.switch.buffer_model };
        let mut net = Network::build(&fabric, s.switch.buffer.into(), model, s.seed);
        net.set_host_delay(s.link.host_delay());
        if s.wan.is_on() {
            net.add_wan(&fabric, &s.wan, s.seed);
        }
        if s.link.host_jitter > SimDuration::ZERO {
            net.set_host_jitter(s.link.host_jitter, s.seed);
        }
        if s.link.tx_queue.is_some() {
            net.track_nic_queues();
        }
        if let Some(depth) = s.link.token_bucket {
            net.shape_ports(depth);
        }
        if s.workload.request_path == RequestPath::Apart {
            for client in 0..reads.clients {
                net.send_requests_apart(client);
            }
        }
        let path = net.path(reads.server_host(0), CLIENT0).expect("a validated scenario routes every connection");
        let bottleneck = *path.last().expect("a path has a port");
        if let Some(entries) = queue_trace {
            net.port_mut(bottleneck).queue.log_occupancy(entries);
        }
        if let Some(k) = s.switch.ecn_threshold {
            net.set_ecn_threshold(k.into());
        }
        if s.switch.admission == Admission::FullFrame {
            net.require_room_for(frame::frame_bytes(s.tcp.mss));
        }
        let ports = net.ports();
        let priorities = Priorities {
            conns: reads.connections(),
            udp_flow: flows,
            reads: s.workload.priority,
            background: s.background.priority,
            udp: s.background.udp_priority,
        };
        let lossless = (s.switch.pause_config().is_some() || classes)
            .then(|| Box::new(Lossless::new(&s.switch, classes, ports, priorities)));
        let ns2 = s.link.arrival_order == ArrivalOrder::Ns2;
        DataPlane {
            net,
            pool: PacketPool::default(),
            bottleneck,
            detour: lossless.is_some() || ns2 || s.link.arrival_order == ArrivalOrder::Ns3,
            lossless,
            ecn: s.switch.ecn_threshold.is_some(),
            wire_order: s.link.arrival_order != ArrivalOrder::Queued,
            double_clock: ns2.then(|| Box::new(DoubleClock::new(ports))),
            police_rude: s.switch.rude_policy == RudePolicy::Drop,
            tx_queue: s.link.tx_queue,
            keys: Vec::new(),
            ecmp_seed: 0,
            sent: 0,
            delivered: 0,
            dropped: 0,
            rude_drops: 0,
            marks: 0,
            port_marks: vec![0; ports],
            flow_drops: vec![0; flows as usize + 1],
            dropped_copies: Vec::new(),
            ahead: Ahead::default(),
        }
    }

    /// In a multipath fabric, hash each endpoint's 5-tuple (`net::ecmp`)
    /// under `seed`: `routes[endpoint_of(flow, dir)]` sends `flow` from its
    /// host to its peer; `udp` is the UDP source's host and destination, when
    /// it sends (its datagrams carry the flow number one past the routes').
    pub(super) fn hash_flows(&mut self, routes: &[Route], udp: Option<(u32, u32)>, seed: u64) {
        if !self.net.is_multipath() {
            return;
        }
        self.ecmp_seed = seed;
        self.hash_endpoints(0, routes);
        if let Some((src, dst)) = udp {
            let tuple = FiveTuple { src, dst, sport: SERVER_PORT, dport: SERVER_PORT, proto: UDP };
            self.keys.push(tuple.key(seed));
        }
    }

    /// Hash the 5-tuples of endpoints `first..first + routes.len()` (`net::ecmp`),
    /// as [`DataPlane::hash_flows`] does: a connection opened while the run
    /// goes calls this with its two routes. Nothing in a single-path fabric.
    pub(super) fn hash_endpoints(&mut self, first: usize, routes: &[Route]) {
        if !self.net.is_multipath() {
            return;
        }
        if self.keys.len() < first + routes.len() {
            self.keys.resize(first + routes.len(), 0);
        }
        for (i, r) in routes.iter().enumerate() {
            let Node::Host { host, .. } = *self.net.node(self.net.port(r.nic).node) else {
                unreachable!("a NIC is a host's")
            };
            let flow = ((first + i) / 2) as u32;
            let tuple = FiveTuple::tcp(flow, host, r.dst, r.dir == Direction::ToServer);
            self.keys[first + i] = tuple.key(self.ecmp_seed);
        }
    }

    /// The 5-tuple hash of endpoint `ep`'s frames (0 in a single-path fabric).
    pub(super) fn key(&self, ep: usize) -> u64 {
        self.keys.get(ep).copied().unwrap_or(0)
    }

    /// The port switch `node` sends `pkt` out of.
    pub(super) fn switch_port(&mut self, node: NodeId, pkt: PktId) -> PortId {
        match self.net.node(node) {
            Node::Switch { route } => route[self.pool.get(pkt).dst as usize],
            Node::Multipath { .. } => self.multipath_hop(node, pkt),
            Node::Host { .. } => unreachable!("only switches forward"),
        }
    }

    /// The port multipath switch `node` sends `pkt` out of.
    #[inline(always)]
    fn multipath_hop(&mut self, node: NodeId, pkt: PktId) -> PortId {
        let p = self.pool.get(pkt);
        let key = self.keys[endpoint_of(p.flow, p.dir)];
        self.net.next_hop(node, p.dst, key)
    }

    /// True when the switches and links run a part the plain build leaves
    /// out: PAUSE or classes, another arrival order, ECN marking, rude
    /// policing or a NIC queue limit.
    pub(super) fn uses_optional_parts(&self) -> bool {
        self.detour
            || self.double_clock.is_some()
            || self.wire_order
            || self.ecn
            || self.police_rude
            || self.tx_queue.is_some()
    }

    /// `pkt` reached `node`: a switch polices it or forwards it. Returns
    /// whether `node` is a host, where the packet waits for its endpoint.
    /// `EXTRAS` false: the scenario turns no optional part on ([`super::extras`]).
    #[inline(always)]
    pub(super) fn arrive<const EXTRAS: bool>(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        node: NodeId,
    ) -> bool {
        let p = self.pool.get(pkt);
        let (tcp_bytes, flow) = (p.tcp_bytes, p.flow);
        let port = match self.net.node(node) {
            Node::Switch { route } => route[p.dst as usize],
            Node::Host { .. } => return true,
            Node::Multipath { .. } => self.multipath_hop(node, pkt),
        };
        let p = self.pool.get(pkt);
        if EXTRAS && self.police_rude && p.seg.has(flags::RUDE) {
            // RUDE §2.3: a policing switch kills rude flows by dropping their packets.
            self.drop_packet(pkt, flow, now);
            self.rude_drops += 1;
            return false;
        }
        self.forward::<EXTRAS>(events, now, pkt, port, NO_PORT, tcp_bytes, flow);
        false
    }

    /// Put `pkt` on `port`, or drop it there: offer packet `pkt` of
    /// `tcp_bytes` (payload and TCP options) to `port`; from a NIC, `ahead`
    /// is the port of the first switch that takes it at once (`sim::ahead`),
    /// or `NO_PORT`. `EXTRAS` as for [`DataPlane::arrive`].
    // Inline always: it runs on every hop, and LLVM otherwise keeps it out
    // of line.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn forward<const EXTRAS: bool>(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
        ahead: PortId,
        tcp_bytes: u32,
        flow: u32,
    ) {
        if EXTRAS && self.detour {
            return self.forward_detour(events, now, pkt, port, tcp_bytes, flow);
        }
        self.forward_as::<false, EXTRAS>(events, now, pkt, port, ahead, tcp_bytes, flow)
    }

    /// [`DataPlane::forward`] with PAUSE or classes on, or in ns-2's or ns-3's
    /// order (`link.arrival_order = "ns2"` or `"ns3"`).
    // Cold and out of line, so that the default queueing order's path does
    // not carry the tests of PAUSE, classes and ns-2's or ns-3's ties.
    #[cold]
    #[inline(never)]
    fn forward_detour(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
        tcp_bytes: u32,
        flow: u32,
    ) {
        if self.lossless.is_some() {
            // Only from a host: with PAUSE or classes on, switches forward in `on_arrive_via`.
            return self.forward_lossless(events, now, pkt, port, tcp_bytes, flow, None);
        }
        self.forward_as::<true, true>(events, now, pkt, port, NO_PORT, tcp_bytes, flow)
    }

    /// [`DataPlane::forward`] past PAUSE; `TIES` in ns-2's order (with the
    /// double clock) or ns-3's (without: an arrival always goes before a
    /// departure at its instant); `EXTRAS` as for [`DataPlane::arrive`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn forward_as<const TIES: bool, const EXTRAS: bool>(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
        ahead: PortId,
        tcp_bytes: u32,
        flow: u32,
    ) {
        let before_departure =
            TIES && self.double_clock.as_mut().map_or(true, |c| c.ahead_of_departure(port.0 as usize, now));
        let sent = if before_departure {
            self.net.send_ahead_of_departure(port, now, tcp_bytes)
        } else {
            self.net.send(port, now, tcp_bytes)
        };
        match sent {
            Some((_, at)) if ahead != NO_PORT => self.hop_ahead(events, now, pkt, ahead, at, tcp_bytes, flow),
            Some((node, at)) => {
                if EXTRAS && self.ecn && self.net.port(port).queue.marked() {
                    self.mark(pkt, port);
                }
                let event = Event::Arrive { pkt, node };
                if EXTRAS && self.wire_order {
                    let link = &self.net.port(port).link;
                    match if TIES { self.double_clock.as_deref_mut() } else { None } {
                        Some(clock) => {
                            let rank = clock.sent(port.0 as usize, link, pkt, at);
                            events.push_since_ranked(at, link.last_start(), link.run_start(), rank, event)
                        }
                        None => events.push_since(at, link.last_start(), link.run_start(), event),
                    }
                } else {
                    events.push(at, event)
                }
            }
            None => self.drop_packet(pkt, flow, now),
        }
    }

    /// `pkt` of `flow` is dropped at `at`: its slot freed, the drop counted
    /// (run and connection), and a data segment kept for its sender to hear of.
    #[inline(always)]
    pub(super) fn drop_packet(&mut self, pkt: PktId, flow: u32, at: SimTime) {
        let p = self.pool.get(pkt);
        if p.seg.len > 0 {
            self.dropped_copies.push(DroppedCopy { at, flow, dir: p.dir, seq: p.seg.seq, len: p.seg.len });
        }
        self.pool.release(pkt);
        self.dropped += 1;
        self.flow_drops[flow as usize] += 1;
    }

    /// Tell each sender (of `eps`, the UDP source's `udp` flow aside) of the
    /// copies of its data dropped up to `now`; the drops ports taken ahead
    /// decided for later wait until then. Run before a timeout is judged,
    /// before a connection slot takes a new flow, and at each look at memory,
    /// which bounds what waits.
    #[cold]
    pub(super) fn report_drops<const E: bool, const P: bool>(
        &mut self,
        now: SimTime,
        udp: u32,
        eps: &mut [Endpoint<E, P>],
    ) {
        self.dropped_copies.retain(|c| {
            if c.at > now {
                return true;
            }
            if c.flow != udp {
                // The sender's end: the other end of the receiver's.
                eps[endpoint_of(c.flow, c.dir) ^ 1].on_copy_dropped(c.seq, c.seq + u64::from(c.len));
            }
            false
        });
    }

    /// `pkt`, leaving a NIC, reaches its first switch at `at`, where `port`
    /// takes it at once (`sim::ahead`): queue it there and schedule its
    /// arrival beyond, or drop it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn hop_ahead(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
        at: SimTime,
        tcp_bytes: u32,
        flow: u32,
    ) {
        match self.net.send_noting_peaks(port, at, tcp_bytes) {
            Some((node, arrival, peaks)) => {
                let ticket = events.push_after_hop(at, arrival, Event::Arrive { pkt, node });
                self.ahead.taken(pkt, ticket);
                if let Some(before) = peaks {
                    self.ahead.peaked(now, ticket, port, before);
                }
            }
            None => {
                let ticket = events.ticket(at);
                self.ahead.dropped(now, ticket, port, flow);
                self.drop_packet(pkt, flow, at);
            }
        }
    }

    /// Take back what frames taken ahead counted at their ports before the
    /// run ended and they reached them (`sim::ahead`): `frames` are the
    /// packets in flight past a port taken ahead, each with its arrival
    /// beyond that port and the port; `ran` tells the switch arrivals that
    /// would have run.
    pub(super) fn take_back(&mut self, frames: Vec<(PktId, SimTime, PortId)>, ran: impl Fn(Ticket) -> bool) {
        let mut frames: Vec<_> = frames
            .into_iter()
            .map(|(pkt, arrival, port)| (pkt, self.ahead.ticket(pkt), arrival, port))
            .filter(|&(_, ticket, _, _)| !ran(ticket))
            .collect();
        // Newest first, so that each frame still held is its port's newest.
        frames.sort_by_key(|&(_, _, arrival, _)| std::cmp::Reverse(arrival));
        for (pkt, ticket, arrival, port) in frames {
            let (arrived, bytes) = (ticket.time(), frame::frame_bytes(self.pool.get(pkt).tcp_bytes));
            let p = self.net.port_mut(port);
            let done = SimTime(arrival.0 - p.flight().0);
            p.queue.withdraw(arrived, done, bytes);
        }
        for &(ticket, port, flow) in &self.ahead.drops {
            if !ran(ticket) {
                self.net.port_mut(port).queue.withdraw_drop();
                self.dropped -= 1;
                self.flow_drops[flow as usize] -= 1;
                self.ahead.unborn += 1;
            }
        }
        for &(ticket, port, before) in self.ahead.peaks.iter().rev() {
            if !ran(ticket) {
                self.net.port_mut(port).queue.restore_peaks(before);
            }
        }
    }

    /// `None` while the host NIC `nic` may take another frame at `now`; else
    /// the instant it may (`link.tx_queue`).
    #[inline]
    pub(super) fn nic_full_until(&mut self, nic: PortId, now: SimTime) -> Option<SimTime> {
        let frames = self.tx_queue?;
        self.net.port_mut(nic).queue.full_until(now, frames)
    }

    /// The queue was above its ECN threshold: mark the packet CE if it is ECN-capable.
    #[cold]
    pub(super) fn mark(&mut self, pkt: PktId, port: PortId) {
        let seg = &mut self.pool.get_mut(pkt).seg;
        if seg.has(flags::ECT) {
            seg.flags |= flags::CE;
            self.marks += 1;
            self.port_marks[port.0 as usize] += 1;
        }
    }

    /// One row per switch output port, at the end of the run.
    pub(super) fn port_stats(&self, end: SimTime) -> Vec<PortStats> {
        (0..self.net.ports() as u32)
            .map(PortId)
            .filter(|&id| self.net.node(self.net.port(id).node).is_switch())
            .map(|id| {
                let p = self.net.port(id);
                let q = p.queue.stats();
                let (pause_frames, paused, waiting) = match &self.lossless {
                    None => (0, [SimDuration::ZERO; PRIORITIES], 0),
                    Some(l) => {
                        let (frames, paused) = l.port_stats(id, end);
                        let waiting = l.waiting(id).map(|(pkt, arrived)| {
                            let bytes = frame::frame_bytes(self.pool.get(pkt).tcp_bytes);
                            u128::from(bytes) * u128::from(end.since(arrived).as_ps())
                        });
                        (frames, paused, waiting.sum())
                    }
                };
                PortStats {
                    node: self.net.name(p.node).to_owned(),
                    peer: self.net.name(p.peer).to_owned(),
                    rate_mbps: p.link.rate().0 as f64 / 1e6,
                    frames: q.enqueued,
                    drops: q.drops,
                    lost: self.net.lost(id),
                    ecn_marks: self.port_marks[id.0 as usize],
                    peak_bytes: q.peak_bytes,
                    peak_packets: q.peak_packets,
                    mean_bytes: p.queue.mean_bytes(end, waiting),
                    pause_frames,
                    paused_us: paused.iter().max().map_or(0.0, |d| d.as_micros_f64()),
                    paused_priority_us: paused.map(|d| d.as_micros_f64()),
                }
            })
            .collect()
    }
}
