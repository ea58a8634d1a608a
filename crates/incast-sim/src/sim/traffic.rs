//! The engine's side of the open-loop traffic (`workload::traffic`): the
//! arrivals, a connection slot per flow in progress, and each flow's and
//! query's record.
//!
//! **Models:** a flow arriving takes a free connection slot (or a new one):
//! two fresh endpoints, established at its arrival with the handshake's RTT
//! sample as the reading connections are (`sim::endpoints`); its sender
//! writes all the flow's bytes at once. A slot is free again once its flow
//! is complete, every byte acknowledged and none of its packets is still in
//! the network (sent, neither delivered nor dropped), so no packet of an old
//! flow reaches a new one; this is checked as each of its packets arrives,
//! so a flow whose last packet was dropped keeps its slot. A flow's row closes
//! when its receiver has every byte, or (`traffic.fct_end` acked) when its
//! sender has them all acknowledged, checked as each of its packets is
//! handled. Connection slots are flows `base..`, after the
//! reading and background connections. Each flow's `ideal_s` is
//! `workload::ideal` on its path, which is worked out once per host pair.
//! Each row keeps the switches its flow's data crosses (`stats::fct`): the
//! route of its sender's 5-tuple hash, as its frames take it, read once as
//! the flow opens and labelled by the switches' names (`pod0.edge1>core3>...`),
//! one label per distinct path; none when the fabric sprays packets.
//! With `traffic.drain`, the run stops at the arrivals' end if no row is
//! open then, else when the last open row closes (or at the drain's bound).
//! **Deliberately different:** see `workload::traffic`.
//! **Not modelled:** see `workload::traffic`.

use crate::net::clos::Spreading;
use crate::net::{frame, Network};
use crate::scenario::Scenario;
use crate::stats::fct::{FlowRecord, QueryRecord};
use crate::tcp::DelayedAckMode;
use crate::time::{BitRate, SimDuration, SimTime};
use crate::workload::ideal::{ideal_fct, IdealPath, IdealStack};
use crate::workload::traffic::{FctEnd, FlowArrivals, FlowSpec, QueryArrivals};
use std::collections::{BTreeMap, HashMap};

/// A connection slot.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The flow's row in `records`.
    record: u32,
    /// Its arrival.
    start: SimTime,
    /// Packets sent, and delivered, since the slot was taken.
    sent: u64,
    arrived: u64,
    /// The flow's drops counted before the slot was taken.
    drops_before: u64,
    /// The receiver has every byte.
    complete: bool,
    /// A flow holds the slot.
    live: bool,
}

/// The flows' rows, the queries' rows, and the labels of the flows' paths.
pub(super) type Rows = (Vec<FlowRecord>, Vec<QueryRecord>, Vec<String>);

/// The open-loop traffic of a run.
pub(super) struct OpenLoop {
    /// The flow number of slot 0.
    pub(super) base: u32,
    flows: Option<FlowArrivals>,
    queries: Option<QueryArrivals>,
    /// Arrivals stop here.
    end: SimTime,
    /// The run goes on after `end` until no row is open (`traffic.drain`).
    drain: bool,
    /// Flow rows (query responses included) not yet closed.
    open_rows: u64,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// One row per flow, in arrival order.
    pub(super) records: Vec<FlowRecord>,
    /// One row per query, and each one's responses still running.
    pub(super) queries_done: Vec<QueryRecord>,
    query_left: Vec<u32>,
    query_start: Vec<SimTime>,
    /// Each host pair's path on the empty fabric, and the handshake's RTT along it.
    paths: BTreeMap<(u32, u32), (IdealPath, SimDuration)>,
    stack: IdealStack,
    /// Bytes of each query response.
    query_bytes: u64,
    /// The sum of the hosts' link rates.
    pub(super) capacity_bps: f64,
    /// Each distinct path a flow took, labelled, and its code (the order it
    /// was first taken in); none kept when the switches spray packets (a flow
    /// then has no one path).
    path_codes: HashMap<String, u32>,
    sprayed: bool,
}

/// The hosts of `net`'s fabric with their NIC rates.
fn host_rates(s: &Scenario, net: &Network) -> Vec<BitRate> {
    let fabric = s.fabric().expect("a validated scenario has a fabric");
    let hosts = fabric.nodes.iter().filter(|n| n.host.is_some()).count() as u32;
    (0..hosts).map(|h| net.port(net.nic(h)).link.rate()).collect()
}

impl OpenLoop {
    /// The traffic of `s` on `net`, its slots after connection `base - 1`.
    pub(super) fn new(s: &Scenario, net: &Network, base: u32) -> Self {
        let t = &s.traffic;
        let rates = if t.is_on() { host_rates(s, net) } else { Vec::new() };
        let hosts = rates.len() as u32;
        let tcp = &s.tcp;
        let delack = match tcp.delayed_ack.mode {
            DelayedAckMode::Off => None,
            DelayedAckMode::Standard(d) => Some(d),
            _ => Some(tcp.delayed_ack.ato_min),
        };
        OpenLoop {
            base,
            flows: t.load.map(|_| FlowArrivals::new(t, &rates, s.seed)),
            queries: (t.query_rate > 0.0).then(|| QueryArrivals::new(t, hosts, s.seed)),
            end: s.stop.duration.map_or(SimTime(u64::MAX), |d| SimTime::ZERO + d),
            drain: t.drain.is_some(),
            open_rows: 0,
            slots: Vec::new(),
            free: Vec::new(),
            records: Vec::new(),
            queries_done: Vec::new(),
            query_left: Vec::new(),
            query_start: Vec::new(),
            paths: BTreeMap::new(),
            stack: IdealStack {
                wire: frame::wire_bytes,
                payload: tcp.segment_payload(),
                option_bytes: if tcp.timestamps { 12 } else { 0 },
                mss: u64::from(tcp.mss),
                init_cwnd: tcp.init_cwnd,
                rcv_wnd: tcp.rcv_wnd.get(),
                delack,
                end: t.fct_end,
            },
            query_bytes: t.query_response.get(),
            capacity_bps: rates.iter().map(|r| r.as_bps() as f64).sum(),
            path_codes: HashMap::new(),
            sprayed: s.topology.spreading() == Some(Spreading::Packet),
        }
    }

    /// Row `record`'s flow, from `src` to `dst` with 5-tuple hash `key`,
    /// crosses the switches `net` routes it over (`Network::path_of`).
    pub(super) fn note_path(&mut self, net: &Network, record: u32, (src, dst): (u32, u32), key: u64) {
        if self.sprayed {
            return;
        }
        let ports = net.path_of(src, dst, key).expect("every host pair of a validated fabric has a route");
        let switches: Vec<&str> = ports[..ports.len() - 1].iter().map(|&p| net.name(net.port(p).peer)).collect();
        let next = self.path_codes.len() as u32;
        let code = *self.path_codes.entry(switches.join(">")).or_insert(next);
        self.records[record as usize].path = Some(code);
    }

    /// Are there flows or queries?
    pub(super) fn is_on(&self) -> bool {
        self.flows.is_some() || self.queries.is_some()
    }

    /// When the next flow arrives, if before the end.
    pub(super) fn next_flow_at(&self) -> Option<SimTime> {
        self.flows.as_ref().map(FlowArrivals::next_at).filter(|&t| t < self.end)
    }

    /// When the next query arrives, if before the end.
    pub(super) fn next_query_at(&self) -> Option<SimTime> {
        self.queries.as_ref().map(QueryArrivals::next_at).filter(|&t| t < self.end)
    }

    /// The flow arriving now.
    pub(super) fn take_flow(&mut self) -> FlowSpec {
        self.flows.as_mut().expect("flows are on").take()
    }

    /// The query arriving now, as the flows of its responses; its row is opened.
    pub(super) fn take_query(&mut self) -> (u32, Vec<FlowSpec>) {
        let bytes = self.query_bytes;
        let q = self.queries.as_mut().expect("queries are on").take();
        let id = self.queries_done.len() as u32;
        self.queries_done.push(QueryRecord {
            aggregator: q.aggregator,
            fanin: q.workers.len() as u32,
            start_s: q.at.since(SimTime::ZERO).as_secs_f64(),
            time_s: None,
            timed_out: false,
        });
        self.query_left.push(q.workers.len() as u32);
        self.query_start.push(q.at);
        let flows = q.workers.iter().map(|&w| FlowSpec { at: q.at, src: w, dst: q.aggregator, bytes }).collect();
        (id, flows)
    }

    /// The path from `src` to `dst` on the empty fabric and the handshake's RTT along it.
    pub(super) fn path(&mut self, net: &Network, src: u32, dst: u32) -> &(IdealPath, SimDuration) {
        self.paths.entry((src, dst)).or_insert_with(|| {
            let ports = net.path(src, dst).expect("every host pair of a validated fabric has a route");
            let hops: Vec<(BitRate, SimDuration)> =
                ports.iter().map(|&p| (net.port(p).link.rate(), net.port(p).link.delay())).collect();
            let bare = net.one_way(src, dst, 0).expect("a route");
            let wire = frame::wire_bytes(0);
            let crossing = hops.iter().fold(SimDuration::ZERO, |t, &(r, d)| t + r.tx_time(wire) + d);
            let ack = net.one_way(dst, src, 0).expect("a route");
            let path = IdealPath { hops, rx_extra: SimDuration::from_ps(bare.as_ps() - crossing.as_ps()), ack };
            (path, bare + ack)
        })
    }

    /// Open a row for flow `f` (a response of `query`, if any) and take a
    /// slot for it: its index, and whether it is a new one.
    pub(super) fn open(&mut self, net: &Network, f: FlowSpec, query: Option<u32>, drops: &[u64]) -> (u32, bool) {
        let stack = self.stack;
        let ideal = ideal_fct(&self.path(net, f.src, f.dst).0, &stack, f.bytes);
        let record = self.records.len() as u32;
        self.open_rows += 1;
        self.records.push(FlowRecord {
            src: f.src,
            dst: f.dst,
            size_bytes: f.bytes,
            delivered_bytes: 0,
            start_s: f.at.since(SimTime::ZERO).as_secs_f64(),
            fct_s: None,
            ideal_s: ideal.as_secs_f64(),
            query,
            path: None,
        });
        let slot =
            |drops_before| Slot { record, start: f.at, sent: 0, arrived: 0, drops_before, complete: false, live: true };
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot(drops[(self.base + i) as usize]);
                (i, false)
            }
            None => {
                self.slots.push(slot(0));
                (self.slots.len() as u32 - 1, true)
            }
        }
    }

    /// Slot of connection `flow`.
    #[inline]
    fn slot(&mut self, flow: u32) -> &mut Slot {
        &mut self.slots[(flow - self.base) as usize]
    }

    /// A packet of connection `flow` went onto the wire.
    #[inline]
    pub(super) fn on_sent(&mut self, flow: u32) {
        self.slot(flow).sent += 1;
    }

    /// A packet of connection `flow` reached its host.
    #[inline]
    pub(super) fn on_arrived(&mut self, flow: u32) {
        self.slot(flow).arrived += 1;
    }

    /// The receiver of connection `flow` has `delivered` bytes at `now`:
    /// if that completes its flow, the flow's row (and its query's) are
    /// closed, unless the completion time ends at the sender's ACK.
    pub(super) fn on_delivered(&mut self, flow: u32, delivered: u64, now: SimTime) {
        let s = *self.slot(flow);
        if s.complete || delivered < self.records[s.record as usize].size_bytes {
            return;
        }
        self.slot(flow).complete = true;
        self.records[s.record as usize].delivered_bytes = delivered;
        if self.stack.end == FctEnd::Delivered {
            self.close(s, now);
        }
    }

    /// Close the row of slot `s`'s flow at `now`, and its query's when it is the query's last response.
    fn close(&mut self, s: Slot, now: SimTime) {
        let row = &mut self.records[s.record as usize];
        row.fct_s = Some(now.since(s.start).as_secs_f64());
        self.open_rows -= 1;
        if let Some(q) = row.query {
            let left = &mut self.query_left[q as usize];
            *left -= 1;
            if *left == 0 {
                let start = self.query_start[q as usize];
                self.queries_done[q as usize].time_s = Some(now.since(start).as_secs_f64());
            }
        }
    }

    /// Free connection `flow`'s slot if its flow is complete, its sender has
    /// `acked` every byte and none of its packets is in the network (`drops`
    /// counts the connection's drops); a completion time that ends at the
    /// sender's ACK ends here, at `now`.
    pub(super) fn release_if_idle(&mut self, flow: u32, acked: u64, drops: u64, now: SimTime) {
        let s = *self.slot(flow);
        let size = self.records[s.record as usize].size_bytes;
        if self.stack.end == FctEnd::Acked
            && s.complete
            && acked >= size
            && self.records[s.record as usize].fct_s.is_none()
        {
            self.close(s, now);
        }
        if s.complete && acked >= size && s.sent == s.arrived + (drops - s.drops_before) {
            (self.slot(flow).complete, self.slot(flow).live) = (false, false);
            self.free.push(flow - self.base);
        }
    }

    /// A sender of connection `flow` suffered a retransmission timeout: if
    /// its flow answers a query and is not over yet, that query waits for
    /// it (a timeout after the response arrived, of a lost ACK, delays nothing).
    #[cold]
    pub(super) fn on_timeout(&mut self, flow: u32) {
        let record = self.slot(flow).record as usize;
        let row = &self.records[record];
        if let (Some(q), None) = (row.query, row.fct_s) {
            self.queries_done[q as usize].timed_out = true;
        }
    }

    /// The rows at the stop: each unfinished flow's delivered bytes are
    /// `delivered(flow)`, what its receiver has.
    pub(super) fn take_rows(&mut self, delivered: impl Fn(u32) -> u64) -> Rows {
        for (i, s) in self.slots.iter().enumerate().filter(|(_, s)| s.live && !s.complete) {
            self.records[s.record as usize].delivered_bytes = delivered(self.base + i as u32);
        }
        let mut labels = vec![String::new(); self.path_codes.len()];
        for (label, code) in self.path_codes.drain() {
            labels[code as usize] = label;
        }
        (std::mem::take(&mut self.records), std::mem::take(&mut self.queries_done), labels)
    }

    /// With `traffic.drain`: the arrivals have stopped by `now` and every row is closed.
    pub(super) fn drained(&self, now: SimTime) -> bool {
        self.drain && now >= self.end && self.open_rows == 0
    }

    /// When the arrivals stop, if the run is to drain after them.
    pub(super) fn drain_from(&self) -> Option<SimTime> {
        self.drain.then_some(self.end)
    }

    /// The seconds the arrivals ran of a run that stopped after `elapsed_s`.
    pub(super) fn arrival_s(&self, elapsed_s: f64) -> f64 {
        elapsed_s.min(self.end.since(SimTime::ZERO).as_secs_f64())
    }

    /// Bytes the rows hold.
    pub(super) fn held_bytes(&self) -> u64 {
        (self.records.capacity() * std::mem::size_of::<FlowRecord>()
            + self.queries_done.capacity() * std::mem::size_of::<QueryRecord>()) as u64
    }
}

impl<const EXTRAS: bool, const PACED: bool> super::Sim<EXTRAS, PACED> {
    /// Schedule the first flow and the first query, if any.
    pub(super) fn start_traffic(&mut self) {
        if let Some(at) = self.traffic.next_flow_at() {
            self.events.push(at, super::Event::FlowArrival);
        }
        if let Some(at) = self.traffic.next_query_at() {
            self.events.push(at, super::Event::QueryArrival);
        }
        if let Some(at) = self.traffic.drain_from() {
            self.events.push(at, super::Event::ArrivalsEnd);
        }
    }

    /// With `traffic.drain`: stop the run once the arrivals are over and every row is closed.
    pub(super) fn stop_if_drained(&mut self) {
        if self.traffic.drained(self.now) {
            self.stop();
        }
    }

    /// A flow arrives: open it, and schedule the next.
    pub(super) fn on_flow_arrival(&mut self) {
        let f = self.traffic.take_flow();
        self.open_flow(f, None);
        if let Some(at) = self.traffic.next_flow_at() {
            self.events.push(at, super::Event::FlowArrival);
        }
    }

    /// A query arrives: open each worker's response, and schedule the next query.
    pub(super) fn on_query_arrival(&mut self) {
        let (id, flows) = self.traffic.take_query();
        for f in flows {
            self.open_flow(f, Some(id));
        }
        if let Some(at) = self.traffic.next_query_at() {
            self.events.push(at, super::Event::QueryArrival);
        }
    }

    /// Open flow `f` on a connection slot and let its sender write it.
    fn open_flow(&mut self, f: FlowSpec, query: Option<u32>) {
        // The slot's old flow hears of its drops before new endpoints take its place.
        self.net.report_drops(self.now, self.udp.flow, &mut self.hosts.eps);
        let n = self.traffic.records.len() as u32;
        let (slot, new) = self.traffic.open(&self.net.net, f, query, &self.net.flow_drops);
        let flow = self.traffic.base + slot;
        if new {
            self.net.flow_drops.push(0);
        }
        let rtt = self.traffic.path(&self.net.net, f.src, f.dst).1;
        self.hosts.open(&self.net.net, flow, (f.dst, f.src), self.now, rtt, n);
        let first = super::endpoint_of(flow, crate::net::Direction::ToClient);
        self.net.hash_endpoints(first, &self.hosts.routes[first..first + 2]);
        // The sender is the connection's server end: its data goes toward the client, on that route's hash.
        self.traffic.note_path(&self.net.net, n, (f.src, f.dst), self.net.key(first));
        let ep = super::endpoint_of(flow, crate::net::Direction::ToServer);
        self.hosts.eps[ep].send(f.bytes);
        self.service(ep);
    }

    /// Connection `flow` handled a packet: free its slot if its flow is over.
    pub(super) fn release_if_idle(&mut self, flow: u32) {
        let acked = self.hosts.eps[super::endpoint_of(flow, crate::net::Direction::ToServer)].acked();
        self.traffic.release_if_idle(flow, acked, self.net.flow_drops[flow as usize], self.now);
        self.stop_if_drained();
    }
}
