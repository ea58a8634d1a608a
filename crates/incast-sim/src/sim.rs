//! The engine: wires the network, the TCP endpoints and the workload, and
//! runs events until the stop condition.
//!
//! **Models:** one client (host 0) and `servers` servers (hosts 1..=N) on
//! the scenario's fabric (a star by default); connection `i` joins the client
//! and server `i`, each end a sans-IO [`Endpoint`]. With several clients the
//! hosts and connections are numbered as `workload::clients` says, every
//! client starts its first block at time zero, and the run's `blocks` limit
//! waits for the slowest client; with ICTCP on, each client has its own
//! controller over its own connections. Connections are
//! established at time zero with one RTT sample already taken, as the
//! SYN/SYN-ACK exchange would have given it along the connection's path; block 0
//! starts at time zero. Every retransmission timeout an endpoint reports is
//! tagged with its flow, side and block, counted toward the block's
//! unluckiest flow (GIP §III), and kept as a row if `stats.timeouts` is on.
//! The traces of `stats::trace` are fed from the same event sites, each
//! behind one test of its flag; the recorder is allocated only when a trace
//! is on. The packet capture (`stats::pcap`, `trace.pcap`) records each
//! packet where the client's or a server's endpoint hands it to its NIC and
//! where it reaches its destination host, behind one test per site. The
//! bottleneck the queue trace and `queue_peak_bytes` follow is the switch
//! port toward client 0.
//! **Deliberately different:** TCP timers are lazy: each endpoint has at most
//! one tracked wake-up in the event queue, and a wake-up that finds nothing
//! due simply re-arms at the endpoint's current deadline.
//! **Not modelled:** connection setup and teardown, host processing delays.

mod pause;

use crate::error::SimError;
use crate::event::EventQueue;
use crate::net::buffer::BufferModel;
use crate::net::pfc::{PfcFrame, PRIORITIES};
use crate::net::{frame, Direction, Network, Node, NodeId, Packet, PacketPool, PktId, PortId};
use crate::rng::Rng;
use crate::scenario::{RudePolicy, Scenario};
use crate::stats::pcap::{Capture, Way};
use crate::stats::trace::{FlowSample, TraceFlags, TraceRecorder};
use crate::stats::{
    BlockRecord, ClientStats, FlowStats, GipTimeoutClasses, Percentiles, PortStats, RunResult, Side, Summary,
    TimeoutClasses, TimeoutRecord,
};
use crate::tcp::forensics::Timeout;
use crate::tcp::ictcp::Ictcp;
use crate::tcp::rude::RudeRequest;
use crate::tcp::{flags, Endpoint, RudeOff, SendFlags, TcpConfig};
use crate::time::{SimDuration, SimTime};
use crate::workload::background::{flow_hosts, udp_host, BULK_BYTES, UDP_FRAME_PAYLOAD};
use crate::workload::clients::Layout;
use crate::workload::{BlockDone, Progress, Release, SyncRead};
use pause::Lossless;

/// Host index of client 0, where the UDP source sends.
const CLIENT0: u32 = 0;
/// No wake-up pending.
const NEVER: SimTime = SimTime(u64::MAX);

/// Run `scenario` to its stop condition.
pub fn run(scenario: &Scenario) -> Result<RunResult, SimError> {
    scenario.validate()?;
    let mut sim = Sim::new(scenario);
    sim.run();
    Ok(sim.finish())
}

#[derive(Clone, Copy)]
enum Event {
    /// The last bit of a packet reaches a node.
    Arrive { pkt: PktId, node: NodeId },
    /// A TCP endpoint asked to be woken.
    Wake { ep: u32 },
    /// The server of `flow` writes the response it has prepared.
    Respond { flow: u32 },
    /// The client writes its request on `flow` (held back by `workload.stagger`).
    Request { flow: u32 },
    /// Rude flows turn congestion control back on (`tcp.rude_off_at`).
    RudeOff,
    /// The UDP source sends its next datagram.
    Datagram,
    /// With PAUSE or classes on: the last bit of a packet sent on `port` reaches its peer.
    ArriveVia { pkt: PktId, port: PortId },
    /// With PAUSE or classes on: `port` finished sending a frame.
    TxDone { port: PortId },
    /// A PAUSE (802.3x) or PFC (802.1Qbb) frame reached `port`: the
    /// priorities it stops (bit p: priority p) and those it releases.
    PauseFrame { port: PortId, xoff: u8, xon: u8 },
    /// Time to refresh the pause of flow-control class `class` of the link
    /// whose upstream port is `port`.
    PauseRefresh { port: PortId, class: u8 },
    /// The pause of `port` may have run out.
    Resume { port: PortId },
}

/// Where an endpoint's segments go.
#[derive(Clone, Copy)]
struct Route {
    /// The NIC port of the endpoint's host.
    nic: PortId,
    /// The peer's host.
    dst: u32,
    /// The direction on the connection.
    dir: Direction,
}

/// Endpoint index: the client end of connection `flow` is `2·flow`, the server end `2·flow + 1`.
#[inline]
fn endpoint_of(flow: u32, dir: Direction) -> usize {
    2 * flow as usize + usize::from(dir == Direction::ToServer)
}

struct Sim<'a> {
    s: &'a Scenario,
    now: SimTime,
    events: EventQueue<Event>,
    net: Network,
    pool: PacketPool,
    eps: Vec<Endpoint>,
    /// `routes[ep]` is where endpoint `ep` sends.
    routes: Vec<Route>,
    wake_at: Vec<SimTime>,
    app: SyncRead,
    /// Who reads from whom.
    reads: Layout,
    /// Reading connections (`reads.connections()`); background flows follow.
    conns: u32,
    /// Clients that have not yet completed `stop.blocks` blocks.
    short: u32,
    /// Response bytes the client application had seen on each flow.
    client_seen: Vec<u64>,
    /// Response bytes each server is preparing (written at its `Respond` event).
    preparing: Vec<u64>,
    /// The requests released at the start of the current block (a reused buffer).
    first: Vec<Release>,
    blocks: Vec<BlockRecord>,
    flow_drops: Vec<u64>,
    /// Timeouts of each flow (both ends) in the current block.
    block_timeouts: Vec<u64>,
    /// One row per timeout, when `stats.timeouts` is on.
    timeouts: Vec<TimeoutRecord>,
    /// The switch port toward client 0.
    bottleneck: PortId,
    /// Which traces are on.
    trace: TraceFlags,
    /// Their recorder, allocated only when one is on.
    tr: Option<Box<TraceRecorder>>,
    /// The packet capture, allocated only when `trace.pcap` is on.
    capture: Option<Box<Capture>>,
    processed: u64,
    sent: u64,
    delivered: u64,
    dropped: u64,
    /// ECN marking is on at the switch ports.
    ecn: bool,
    /// The switch drops packets carrying the rude bit.
    police_rude: bool,
    /// Sender-side random loss, parts per billion, its draws and its count.
    send_loss_ppb: u32,
    send_loss_rng: Rng,
    send_losses: u64,
    /// After `tcp.rude_off_at`: the endpoints still rude, and when the last one turned polite.
    rude_left: Vec<u32>,
    rude_polite_at: Option<SimTime>,
    /// Packets dropped for carrying the rude bit.
    rude_drops: u64,
    /// Each client's ICTCP controller, when on (else empty).
    ictcp: Vec<Ictcp>,
    /// ECN-capable packets marked CE.
    marks: u64,
    /// ECN-capable packets marked CE at each port.
    port_marks: Vec<u64>,
    /// Explicit per-priority port FIFOs, when `switch.pause` is on or the
    /// traffic uses several priorities.
    lossless: Option<Box<Lossless>>,
    /// The UDP source's NIC and datagram interval, when `background.udp_rate` is set.
    udp: Option<(PortId, SimDuration)>,
    /// The flow number UDP datagrams carry (one past the last connection).
    udp_flow: u32,
    /// UDP payload bytes delivered to the client.
    udp_delivered: u64,
    stopped_at: Option<SimTime>,
}

impl<'a> Sim<'a> {
    fn new(s: &'a Scenario) -> Self {
        let n = s.servers;
        let reads = s.reads();
        let conns = reads.connections();
        let fabric = s.fabric().expect("a validated scenario has a fabric");
        // With traffic classes the class FIFOs enforce `qos:K` partitions (`net::pfc`).
        let classes = s.classes();
        let model = if classes { BufferModel::Static } else { s.switch.buffer_model };
        let mut net = Network::build(&fabric, s.switch.buffer.into(), model, s.seed);
        if s.wan.is_on() {
            net.add_wan(&fabric, &s.wan, s.seed);
        }
        let path = |src, dst| net.path(src, dst).expect("a validated scenario routes every connection");
        let bottleneck = *path(reads.server_host(0), CLIENT0).last().expect("a path has a port");
        if s.trace.queue {
            net.port_mut(bottleneck).queue.log_occupancy();
        }
        if let Some(k) = s.switch.ecn_threshold {
            net.set_ecn_threshold(k.into());
        }
        // Connections: the reading ones first, then the background flows'.
        let flows = conns + s.background.tcp_flows;
        // The handshake's sample: a minimum-size frame each way along the path.
        let handshake_rtt = |flow| {
            let (a, b) = flow_hosts(flow, &reads, &s.background);
            let way = |a, b| net.one_way(a, b, 0).expect("a validated scenario routes every connection");
            way(a, b) + way(b, a)
        };
        // Each endpoint's retransmission timer draws from its own substream.
        let polite = TcpConfig { rude: false, ..s.tcp };
        let mut eps: Vec<Endpoint> = (0..2 * flows)
            .map(|i| {
                let rng = Rng::substream(s.seed, &format!("rto/{i}"));
                // `tcp.rude_servers`: only each client's connections to its first K servers start rude.
                let flow = i / 2;
                let cfg =
                    if s.tcp.rude_servers.is_some_and(|k| flow >= conns || flow % n >= k) { &polite } else { &s.tcp };
                Endpoint::new_seeded(cfg, SimTime::ZERO, Some(handshake_rtt(i / 2)), rng)
            })
            .collect();
        let clients = if s.tcp.ictcp.on { reads.clients } else { 0 };
        let ictcp = (0..clients)
            .map(|c| {
                let ic = Ictcp::new(s.tcp.ictcp, n as usize, s.link.rate, s.tcp.segment_payload());
                for j in 0..n {
                    eps[endpoint_of(c * n + j, Direction::ToServer)].set_rcv_wnd(ic.rwnd(j as usize));
                }
                ic
            })
            .collect();
        let routes = (0..flows)
            .flat_map(|flow| {
                let (client, server) = flow_hosts(flow, &reads, &s.background);
                [
                    Route { nic: net.nic(client), dst: server, dir: Direction::ToServer },
                    Route { nic: net.nic(server), dst: client, dir: Direction::ToClient },
                ]
            })
            .collect();
        let ports = net.ports();
        let udp = s.background.udp_rate.map(|rate| {
            let wire = frame::wire_bytes(UDP_FRAME_PAYLOAD);
            (net.nic(udp_host(&reads, &s.background)), rate.tx_time(wire))
        });
        Sim {
            s,
            now: SimTime::ZERO,
            events: EventQueue::new(),
            net,
            pool: PacketPool::default(),
            eps,
            routes,
            wake_at: vec![NEVER; 2 * flows as usize],
            app: SyncRead::new(&s.workload, reads, (0..n).map(|j| s.response_bytes(j)).collect(), s.seed),
            reads,
            conns,
            short: reads.clients,
            client_seen: vec![0; conns as usize],
            preparing: vec![0; conns as usize],
            first: Vec::with_capacity(n as usize),
            blocks: Vec::new(),
            flow_drops: vec![0; flows as usize + 1],
            block_timeouts: vec![0; conns as usize],
            timeouts: Vec::new(),
            bottleneck,
            trace: TraceFlags::of(&s.trace),
            tr: s.trace.any().then(|| Box::new(TraceRecorder::new(&s.trace))),
            capture: s.trace.pcap.then(|| Box::new(Capture::new(reads))),
            processed: 0,
            sent: 0,
            delivered: 0,
            dropped: 0,
            ecn: s.switch.ecn_threshold.is_some(),
            ictcp,
            police_rude: s.switch.rude_policy == RudePolicy::Drop,
            send_loss_ppb: s.tcp.send_loss_ppb,
            send_loss_rng: Rng::substream(s.seed, "send_loss"),
            send_losses: 0,
            rude_left: Vec::new(),
            rude_polite_at: None,
            rude_drops: 0,
            marks: 0,
            port_marks: vec![0; ports],
            lossless: (s.switch.pause.is_some() || classes).then(|| Box::new(Lossless::new(&s.switch, classes, ports))),
            udp,
            udp_flow: flows,
            udp_delivered: 0,
            stopped_at: None,
        }
    }

    fn run(&mut self) {
        let end = self.s.stop.duration.map_or(NEVER, |d| SimTime::ZERO + d);
        if let Some(at) = self.s.tcp.rude_off_at {
            self.events.push(SimTime::ZERO + at, Event::RudeOff);
        }
        for client in 0..self.reads.clients {
            self.start_block(client);
        }
        if self.udp.is_some() {
            self.on_datagram();
        }
        for flow in self.conns..self.eps.len() as u32 / 2 {
            let ep = endpoint_of(flow, Direction::ToServer);
            self.eps[ep].send(BULK_BYTES);
            self.service(ep);
        }
        while let Some((t, ev)) = self.events.pop_until(end) {
            self.now = t;
            self.processed += 1;
            match ev {
                Event::Arrive { pkt, node } => self.on_arrive(pkt, node),
                Event::Wake { ep } => self.on_wake(ep as usize),
                Event::Respond { flow } => {
                    let ep = endpoint_of(flow, Direction::ToServer);
                    let bytes = std::mem::take(&mut self.preparing[flow as usize]);
                    // The storage application knows its stripe units (GIP §V-A).
                    self.eps[ep].send_with(bytes, SendFlags::UNIT_TAIL);
                    self.service(ep);
                }
                Event::Request { flow } => self.request(flow),
                Event::RudeOff => self.rude_off(),
                Event::Datagram => self.on_datagram(),
                Event::ArriveVia { pkt, port } => self.on_arrive_via(pkt, port),
                Event::TxDone { port } => self.on_tx_done(port),
                Event::PauseFrame { port, xoff, xon } => self.on_pause_frame(port, PfcFrame { xoff, xon }),
                Event::PauseRefresh { port, class } => self.on_pause_refresh(port, class),
                Event::Resume { port } => self.on_tx_resume(port),
            }
            if self.stopped_at.is_some() {
                return;
            }
        }
        self.stopped_at = Some(if end == NEVER { self.now } else { end });
    }

    fn on_arrive(&mut self, pkt: PktId, node: NodeId) {
        match self.net.node(node) {
            Node::Switch { route } => {
                let p = self.pool.get(pkt);
                let (port, tcp_bytes, flow) = (route[p.dst as usize], p.tcp_bytes, p.flow);
                if self.police_rude && p.seg.has(flags::RUDE) {
                    // RUDE §2.3: a policing switch kills rude flows by dropping their packets.
                    self.pool.release(pkt);
                    self.dropped += 1;
                    self.rude_drops += 1;
                    self.flow_drops[flow as usize] += 1;
                    return;
                }
                self.forward(pkt, port, tcp_bytes, flow);
            }
            Node::Host { .. } => {
                self.delivered += 1;
                // The packet is read in place and its slot freed after: no copy on the hot path.
                let p = self.pool.get(pkt);
                let (flow, dir) = (p.flow, p.dir);
                if flow == self.udp_flow {
                    return self.on_datagram_delivered(pkt);
                }
                if let Some(c) = self.capture.as_mut().filter(|_| flow < self.conns) {
                    c.record(self.now, Way::Rx, flow, dir, p.seg);
                }
                let ep = endpoint_of(flow, dir);
                let spurious = self.eps[ep].on_segment(self.now, &p.seg);
                let has_data = p.seg.has_data();
                self.pool.release(pkt);
                if spurious {
                    self.on_spurious(ep);
                }
                if !self.rude_left.is_empty() {
                    self.note_polite();
                }
                // A pure ACK delivers nothing to the application.
                if has_data {
                    self.on_progress(ep);
                }
                self.service(ep);
                if self.trace.flows && ep % 2 == 1 {
                    self.trace_flow(ep);
                }
            }
        }
    }

    fn on_wake(&mut self, ep: usize) {
        if self.wake_at[ep] == self.now {
            self.wake_at[ep] = NEVER;
        }
        if let Some(t) = self.eps[ep].on_timer(self.now) {
            self.on_timeout(ep, t);
        }
        self.service(ep);
    }

    /// The UDP source sends a full-sized datagram to client 0 and schedules the next.
    #[cold]
    fn on_datagram(&mut self) {
        let Some((nic, interval)) = self.udp else { return };
        let seg = crate::tcp::Segment::default();
        let (flow, tcp_bytes) = (self.udp_flow, UDP_FRAME_PAYLOAD);
        let pkt = self.pool.alloc(Packet { seg, flow, dir: Direction::ToClient, dst: CLIENT0, tcp_bytes });
        self.sent += 1;
        self.forward(pkt, nic, tcp_bytes, flow);
        self.events.push(self.now + interval, Event::Datagram);
    }

    /// A UDP datagram reached client 0: nothing listens but the count.
    #[cold]
    fn on_datagram_delivered(&mut self, pkt: PktId) {
        self.udp_delivered += u64::from(UDP_FRAME_PAYLOAD + 12);
        self.pool.release(pkt);
    }

    /// Endpoint `ep` suffered the retransmission timeout `t`.
    #[cold]
    fn on_timeout(&mut self, ep: usize, t: Timeout) {
        let flow = ep / 2;
        if let Some(t) = self.block_timeouts.get_mut(flow) {
            *t += 1; // a server's, not a background flow's
        }
        if self.trace.flows && ep % 2 == 1 {
            self.trace_flow(ep);
        }
        if !self.s.stats.timeouts {
            return;
        }
        let s = t.snapshot;
        let client = (flow < self.conns as usize).then(|| self.reads.client_of(flow as u32));
        self.timeouts.push(TimeoutRecord {
            time_s: s.time.as_secs_f64(),
            flow: flow as u32,
            client,
            side: if ep % 2 == 1 { Side::Server } else { Side::Client },
            block: self.app.blocks_completed(client.unwrap_or(0)),
            rto_us: s.rto.as_micros_f64(),
            backoff: s.backoff,
            cwnd_bytes: s.cwnd,
            flight_bytes: s.flight,
            dart: s.dart,
            class: t.class,
            gip_class: t.gip_class,
            spurious: t.spurious,
        });
    }

    /// Endpoint `ep` found its latest timeout spurious: mark its row.
    #[cold]
    fn on_spurious(&mut self, ep: usize) {
        let (flow, side) = (ep as u32 / 2, if ep % 2 == 1 { Side::Server } else { Side::Client });
        if let Some(row) = self.timeouts.iter_mut().rev().find(|t| t.flow == flow && t.side == side) {
            row.spurious = true;
        }
    }

    /// Sample the congestion state of server endpoint `ep`.
    #[cold]
    fn trace_flow(&mut self, ep: usize) {
        if ep / 2 >= self.conns as usize {
            return; // traces follow the reading connections only
        }
        let e = &self.eps[ep];
        let s = FlowSample { cwnd: e.cwnd(), ssthresh: e.ssthresh(), rto: e.rto(), srtt: e.srtt() };
        if let Some(tr) = &mut self.tr {
            tr.flow_sample(self.now, (ep / 2) as u32, s);
        }
    }

    /// Put `pkt` on `port`, or drop it there.
    // Measured: left to LLVM's judgement, this call stays out of line on
    // every hop (about 5 % more instructions per packet in the benchmark).
    #[inline(always)]
    /// Offer packet `pkt` of `tcp_bytes` (payload and TCP options) to `port`.
    fn forward(&mut self, pkt: PktId, port: PortId, tcp_bytes: u32, flow: u32) {
        if self.lossless.is_some() {
            // Only from a host: with PAUSE or classes on, switches forward in `on_arrive_via`.
            return self.forward_lossless(pkt, port, tcp_bytes, flow, None);
        }
        match self.net.send(port, self.now, tcp_bytes) {
            Some((node, at)) => {
                if self.ecn && self.net.port(port).queue.marked() {
                    self.mark(pkt, port);
                }
                self.events.push(at, Event::Arrive { pkt, node })
            }
            None => {
                self.pool.release(pkt);
                self.dropped += 1;
                self.flow_drops[flow as usize] += 1;
            }
        }
    }

    /// The queue was above its ECN threshold: mark the packet CE if it is ECN-capable.
    #[cold]
    fn mark(&mut self, pkt: PktId, port: PortId) {
        let seg = &mut self.pool.get_mut(pkt).seg;
        if seg.has(flags::ECT) {
            seg.flags |= flags::CE;
            self.marks += 1;
            self.port_marks[port.0 as usize] += 1;
        }
    }

    /// Let the applications react to what endpoint `ep` has received.
    fn on_progress(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        if flow >= self.conns {
            return; // a background flow: no application to tell
        }
        let delivered = self.eps[ep].delivered();
        if ep % 2 == 1 {
            match self.app.on_server_delivered(flow, delivered) {
                Some(r) if r.after.is_zero() => self.eps[ep].send_with(r.bytes, SendFlags::UNIT_TAIL),
                Some(r) => {
                    self.preparing[flow as usize] += r.bytes;
                    self.events.push(self.now + r.after, Event::Respond { flow });
                }
                None => {}
            }
            return;
        }
        let before = std::mem::replace(&mut self.client_seen[flow as usize], delivered);
        if delivered == before {
            return;
        }
        if !self.ictcp.is_empty() {
            self.ictcp_on_data(ep, delivered - before);
        }
        if self.trace.goodput {
            if let Some(tr) = &mut self.tr {
                tr.delivered(self.now, delivered - before);
            }
        }
        match self.app.on_client_delivered(self.now, flow, delivered, before) {
            Progress::Waiting => {}
            Progress::Release(r) => self.release(r),
            Progress::Done(done) => self.on_block_done(done),
        }
    }

    /// The client end `ep` received `bytes` of response: its client's ICTCP
    /// controller may move the receive window.
    #[cold]
    fn ictcp_on_data(&mut self, ep: usize, bytes: u64) {
        let flow = (ep / 2) as u32;
        let (c, j) = (self.reads.client_of(flow), flow % self.reads.servers);
        let rtt = self.eps[ep].srtt().unwrap_or(SimDuration::ZERO);
        if let Some(w) = self.ictcp[c as usize].on_data(self.now, j as usize, bytes, rtt) {
            self.eps[ep].set_rcv_wnd(w);
        }
    }

    /// RUDE §4's sender-side loss: discard this data segment before the wire?
    #[cold]
    fn lose_before_sending(&mut self) -> bool {
        let lost = self.send_loss_rng.below(1_000_000_000) < u64::from(self.send_loss_ppb);
        self.send_losses += u64::from(lost);
        lost
    }

    /// Every endpoint turns rudeness off with the scenario's semantics (RUDE §3.2).
    #[cold]
    fn rude_off(&mut self) {
        let req = match self.s.tcp.rude_off {
            RudeOff::Now => RudeRequest::OffNow,
            RudeOff::Nicely => RudeRequest::OffNicely,
        };
        for ep in 0..self.eps.len() {
            self.eps[ep].set_rude(req);
            self.rude_left.push(ep as u32);
            self.service(ep);
        }
        self.note_polite();
    }

    /// Drop the endpoints that stopped being rude; once none is left, note when.
    #[cold]
    fn note_polite(&mut self) {
        let eps = &self.eps;
        self.rude_left.retain(|&ep| eps[ep as usize].rude());
        if self.rude_left.is_empty() {
            self.rude_polite_at.get_or_insert(self.now);
        }
    }

    /// Write the request `r` now, or schedule it for its release time.
    fn release(&mut self, r: Release) {
        if r.at <= self.now {
            self.request(r.flow);
        } else {
            self.events.push(r.at, Event::Request { flow: r.flow });
        }
    }

    /// The flow's client writes this block's request on `flow`.
    fn request(&mut self, flow: u32) {
        let ep = endpoint_of(flow, Direction::ToClient);
        self.eps[ep].send(self.s.workload.request.0);
        self.service(ep);
    }

    fn on_block_done(&mut self, done: BlockDone) {
        let n = self.reads.servers as usize;
        let mine = &mut self.block_timeouts[done.client as usize * n..][..n];
        self.blocks.push(BlockRecord {
            client: done.client,
            block: done.block,
            start_s: done.started.as_secs_f64(),
            time_ms: done.duration.as_millis_f64(),
            max_flow_timeouts: mine.iter().copied().max().unwrap_or(0),
        });
        mine.fill(0);
        // The `blocks` limit waits for every client; the ones that reach it first read on.
        if self.s.stop.blocks == Some(done.block + 1) {
            self.short -= 1;
            if self.short == 0 {
                self.stopped_at = Some(self.now);
                return;
            }
        }
        self.start_block(done.client);
    }

    /// Client `client` writes its requests, in the workload's order and as
    /// its mitigations (`max_inflight`, `stagger`) release them.
    fn start_block(&mut self, client: u32) {
        if let Some(tr) = self.tr.as_mut().filter(|_| self.trace.block_cwnd) {
            let block = self.app.blocks_completed(client);
            let n = self.reads.servers;
            for flow in client * n..(client + 1) * n {
                tr.block_start(block, flow, self.eps[endpoint_of(flow, Direction::ToServer)].cwnd());
            }
        }
        let mut first = std::mem::take(&mut self.first);
        first.clear();
        first.extend_from_slice(self.app.start_block(client, self.now).0);
        for &r in &first {
            self.release(r);
        }
        self.first = first;
    }

    /// Transmit whatever endpoint `ep` has to send, and keep its wake-up armed.
    fn service(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        let Route { nic, dst, dir } = self.routes[ep];
        while let Some(seg) = self.eps[ep].poll_transmit(self.now) {
            if self.send_loss_ppb > 0 && seg.has_data() && self.lose_before_sending() {
                continue;
            }
            self.sent += 1;
            if let Some(c) = self.capture.as_mut().filter(|_| flow < self.conns) {
                c.record(self.now, Way::Tx, flow, dir, seg);
            }
            let tcp_bytes = seg.len + seg.option_bytes();
            let pkt = self.pool.alloc(Packet { seg, flow, dir, dst, tcp_bytes });
            self.forward(pkt, nic, tcp_bytes, flow);
        }
        if let Some(deadline) = self.eps[ep].poll_timeout() {
            let deadline = deadline.max(self.now);
            if deadline < self.wake_at[ep] {
                self.wake_at[ep] = deadline;
                self.events.push(deadline, Event::Wake { ep: ep as u32 });
            }
        }
    }

    fn finish(mut self) -> RunResult {
        let end = self.stopped_at.unwrap_or(self.now);
        let elapsed = end.since(SimTime::ZERO);
        let mbps = |bytes: u64| if elapsed.is_zero() { 0.0 } else { bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e6 };
        // Endpoints come in (client, server) pairs, one pair per connection;
        // the reading connections first, then the background flows'.
        let (servers, background) = self.eps.split_at(2 * self.conns as usize);
        let pairs = || servers.chunks_exact(2).map(|p| (&p[0], &p[1]));
        let sum = |f: &dyn Fn(&Endpoint) -> u64| servers.iter().map(f).sum::<u64>();
        let bytes_delivered: u64 = pairs().map(|(c, _)| c.delivered()).sum();
        let bytes_received: u64 = pairs().map(|(c, _)| c.stats().bytes_received).sum();
        let best = self.s.best_goodput_bps() / 1e6 * f64::from(self.reads.clients);
        let goodput = mbps(bytes_delivered);
        let times: Vec<f64> = self.blocks.iter().map(|b| b.time_ms).collect();
        let bottleneck = self.net.port(self.bottleneck).queue.stats();
        let queue_log = self.net.port_mut(self.bottleneck).queue.take_occupancy_log();
        let traces = self.tr.take().map(|tr| tr.finish(end, queue_log)).unwrap_or_default();
        let mut timeout_classes = TimeoutClasses::default();
        let mut gip_timeout_classes = GipTimeoutClasses::default();
        for e in servers {
            timeout_classes.merge(&e.stats().timeout_classes);
            gip_timeout_classes.merge(&e.stats().gip_timeout_classes);
        }
        let reads = self.reads;
        let row = |i: usize, c: &Endpoint, s: &Endpoint| FlowStats {
            flow: i as u32,
            client: (i < self.conns as usize).then(|| reads.client_of(i as u32)),
            server: (i < self.conns as usize).then(|| reads.server_of(i as u32)),
            bytes_delivered: c.delivered(),
            bytes_sent: s.stats().bytes_sent,
            data_packets_sent: s.stats().data_segments_sent,
            retransmitted_packets: s.stats().retransmitted_segments + c.stats().retransmitted_segments,
            timeouts: s.stats().timeouts + c.stats().timeouts,
            fast_retransmits: s.stats().fast_retransmits + c.stats().fast_retransmits,
            max_cwnd_bytes: s.stats().max_cwnd,
            drops: self.flow_drops[i],
        };
        let flows: Vec<FlowStats> = pairs().enumerate().map(|(i, (c, s))| row(i, c, s)).collect();
        let clients = self.client_stats(&flows, &mbps);
        let first = self.conns as usize;
        let background: Vec<FlowStats> =
            background.chunks_exact(2).enumerate().map(|(i, p)| row(first + i, &p[0], &p[1])).collect();
        let summary = Summary {
            goodput_mbps: goodput,
            client_goodput_mbps: clients.iter().map(|c| c.goodput_mbps).collect(),
            throughput_mbps: mbps(bytes_received),
            best_goodput_mbps: best,
            utilization: goodput / best,
            blocks: self.blocks.len() as u64,
            sim_time_s: elapsed.as_secs_f64(),
            bytes_delivered,
            timeouts: sum(&|e| e.stats().timeouts),
            timeout_classes,
            gip_timeout_classes,
            spurious_timeouts: sum(&|e| e.stats().spurious_timeouts),
            fast_retransmits: sum(&|e| e.stats().fast_retransmits),
            retransmitted_packets: sum(&|e| e.stats().retransmitted_segments),
            redundant_packets: sum(&|e| e.stats().redundant_segments),
            ecn_marks: self.marks,
            rude_drops: self.rude_drops,
            send_losses: self.send_losses,
            rude_polite_s: self.rude_polite_at.map(|t| t.as_secs_f64()),
            drops: self.dropped,
            block_time_ms: Percentiles::of(&times),
            data_packets: sum(&|e| e.stats().data_segments_sent),
            packets_sent: self.sent,
            packets_delivered: self.delivered,
            packets_in_flight: self.pool.live() as u64,
            queue_peak_bytes: bottleneck.peak_bytes,
            background_goodput_mbps: mbps(background.iter().map(|f| f.bytes_delivered).sum()),
            udp_goodput_mbps: mbps(self.udp_delivered),
            events: self.processed,
        };
        let ports = self.port_stats(end);
        let capture = self.capture.take().map(|c| *c);
        RunResult {
            summary,
            clients,
            flows,
            background,
            blocks: self.blocks,
            timeouts: self.timeouts,
            ports,
            traces,
            capture,
        }
    }

    /// One row per client, summed over its connections' rows `flows`.
    fn client_stats(&self, flows: &[FlowStats], mbps: &dyn Fn(u64) -> f64) -> Vec<ClientStats> {
        let n = self.reads.servers as usize;
        (0..self.reads.clients)
            .map(|c| {
                let mine = &flows[c as usize * n..][..n];
                let bytes_delivered = mine.iter().map(|f| f.bytes_delivered).sum();
                let times: Vec<f64> = self.blocks.iter().filter(|b| b.client == c).map(|b| b.time_ms).collect();
                let p = Percentiles::of(&times);
                ClientStats {
                    client: c,
                    goodput_mbps: mbps(bytes_delivered),
                    bytes_delivered,
                    blocks: self.app.blocks_completed(c),
                    block_time_p50_ms: p.p50,
                    block_time_max_ms: p.max,
                    timeouts: mine.iter().map(|f| f.timeouts).sum(),
                    drops: mine.iter().map(|f| f.drops).sum(),
                }
            })
            .collect()
    }

    /// One row per switch output port.
    fn port_stats(&self, end: SimTime) -> Vec<PortStats> {
        (0..self.net.ports() as u32)
            .map(PortId)
            .filter(|&id| matches!(self.net.node(self.net.port(id).node), Node::Switch { .. }))
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
