//! The engine: composes the network, the TCP endpoints and the workload,
//! and runs events until the stop condition. Each part owns its state in a
//! module of its own — `network` (switches, links, packets in flight, with
//! `pause` for explicit port FIFOs), `endpoints` (the TCP connections),
//! `reads` (the synchronized-read application and its blocks), `udp` (the
//! UDP source), `traffic` (open-loop flows and queries), `record` (timeout
//! rows, traces, capture) — and `result` gathers the run's figures; the event
//! dispatch, and what an event at one part means for the others, are here.
//!
//! **Models:** one client (host 0) and `servers` servers (hosts 1..=N) on
//! the scenario's fabric (a star by default); connection `i` joins the
//! client and server `i`, each end a sans-IO
//! [`Endpoint`](crate::tcp::Endpoint). With several clients the hosts and
//! connections are numbered as `workload::clients` says. The run stops at
//! `stop.duration` of simulated time or once every client has completed
//! `stop.blocks` blocks, whichever comes first. What each part models is
//! in its own header.
//! **Deliberately different:** see the parts: TCP timers are lazy
//! (`sim::endpoints`); with PAUSE off and one priority a port schedules
//! each frame's arrival when it is queued (`sim::network`).
//! **Not modelled:** see the parts.

mod ahead;
mod double_clock;
mod endpoints;
mod network;
mod pause;
mod reads;
mod record;
mod result;
mod traffic;
mod udp;

use crate::error::SimError;
use crate::event::{EventQueue, Ticket};
use crate::net::pfc::PfcFrame;
use crate::net::{Direction, NodeId, PktId, PortId};
use crate::scenario::footprint::DEFAULT_MEMORY_BUDGET;
use crate::scenario::Scenario;
use crate::stats::pcap::Way;
use crate::stats::trace::{FlowSample, MAX_GOODPUT_BINS};
use crate::stats::RunResult;
use crate::tcp::forensics::Timeout;
use crate::tcp::SendFlags;
use crate::time::{SimDuration, SimTime};
use crate::workload::background::{udp_host, BULK_BYTES};
use crate::workload::{Progress, Release};
use ahead::{Ahead, NO_PORT};
use endpoints::{Endpoints, Route};
use network::DataPlane;
use reads::Reads;
use record::{Recorder, BBR_SAMPLE_BYTES, BLOCK_CWND_BYTES, FLOW_SAMPLE_BYTES, MEMORY_CHECK_EVENTS};
use traffic::OpenLoop;
use udp::UdpSource;

/// Host index of client 0, where the UDP source sends.
const CLIENT0: u32 = 0;
/// The last representable instant: time arithmetic saturates here, so an
/// event due then was due later still, and the run cannot go on.
const LAST_INSTANT: SimTime = SimTime(u64::MAX);

/// Events a run bounded by `blocks` alone (no `duration`) may take, about a
/// minute or two of one core: blocks that cannot complete (a client's link
/// filled by background traffic, a scenario far too large) end in an error
/// naming the bound instead of running without one. A `duration` is a bound
/// the user chose and lifts this one.
pub const UNBOUNDED_RUN_EVENTS: u64 = 1_000_000_000;

/// Run `scenario` to its stop condition.
pub fn run(scenario: &Scenario) -> Result<RunResult, SimError> {
    run_capped(scenario, UNBOUNDED_RUN_EVENTS)
}

/// [`run`], with `cap` events allowed when the scenario gives no duration.
fn run_capped(scenario: &Scenario, cap: u64) -> Result<RunResult, SimError> {
    scenario.validate()?;
    // Built without the optional parts the scenario leaves off, the engine
    // runs the same, faster (`tcp::gated`): without any, with pacing and
    // rate samples alone, or with all of them.
    match (extras(scenario), scenario.tcp.paced()) {
        (false, false) => run_as::<false, false>(scenario, cap),
        (false, true) => run_as::<false, true>(scenario, cap),
        (true, _) => run_as::<true, true>(scenario, cap),
    }
}

/// Does `s` turn on an optional part of the engine: a TCP mechanism of
/// [`crate::tcp::TcpConfig::extras`], an arrival order other than the
/// queueing order, PAUSE or traffic classes, ECN marking, rude policing,
/// the UDP source, a trace or the packet capture, sender-side loss, a NIC
/// queue limit, ICTCP or open-loop traffic? Without any, the engine is built without them
/// (`EXTRAS` false). Pacing and rate samples are a part of their own
/// (`PACED`, [`crate::tcp::TcpConfig::paced`]).
fn extras(s: &Scenario) -> bool {
    s.tcp.extras()
        || s.link.arrival_order != crate::net::ArrivalOrder::Queued
        || s.switch.pause_config().is_some()
        || s.classes()
        || s.switch.ecn_threshold.is_some()
        || s.switch.rude_policy == crate::net::RudePolicy::Drop
        || s.background.udp_rate.is_some()
        || s.trace.any()
        || s.trace.pcap
        || s.tcp.send_loss_ppb > 0
        || s.link.tx_queue.is_some()
        || s.tcp.ictcp.on
        || s.traffic.is_on()
}

/// [`run_capped`] with the engine built with its optional parts
/// (`EXTRAS`) or without, and with pacing and rate samples (`PACED`) or without.
fn run_as<const EXTRAS: bool, const PACED: bool>(scenario: &Scenario, cap: u64) -> Result<RunResult, SimError> {
    let mut sim = Sim::<EXTRAS, PACED>::new(scenario);
    sim.run(cap);
    if sim.now == LAST_INSTANT {
        return Err(SimError::TimeOverflow);
    }
    sim.note_queue_trace_overflow();
    if let Some(setting) = sim.record.over {
        let at = crate::settings::Duration::format(sim.now.since(SimTime::ZERO));
        let budget = crate::settings::Size::format(scenario.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET).get());
        let message = match sim.record.over_in_flight {
            Some(packets) => format!(
                "the packets in flight ({packets}) grew past memory_budget ({budget}) at {at} simulated: \
                 retransmissions queue at a NIC faster than it sends them; bound the NIC queues \
                 (link.tx_queue), raise tcp.rto_min or tcp.rto_max, shorten the run, or raise memory_budget \
                 if this machine has the memory"
            ),
            None => format!(
                "what it records grew past memory_budget ({budget}) at {at} simulated; turn it off, \
                 shorten the run, or raise memory_budget if this machine has the memory"
            ),
        };
        return Err(SimError::InvalidScenario { field: setting.into(), message });
    }
    if sim.stopped_at.is_none() {
        let blocks = scenario.stop.blocks.unwrap_or_default() * u64::from(sim.reads.layout.clients);
        let at = crate::settings::Duration::format(sim.now.since(SimTime::ZERO));
        let message = format!(
            "{done} of {blocks} blocks done after {cap} events ({at} simulated), the most a run \
             with blocks and no duration may take; give a duration to run longer",
            done = sim.reads.blocks.len()
        );
        return Err(SimError::InvalidScenario { field: "blocks".into(), message });
    }
    if sim.record.tr.as_ref().is_some_and(|t| t.too_many_bins()) {
        let bin = crate::settings::Duration::format(scenario.trace.goodput_bin.unwrap_or_default());
        let message =
            format!("{bin} bins: the run outlasted {MAX_GOODPUT_BINS} of them; use a longer bin or a duration");
        return Err(SimError::InvalidScenario { field: "trace.goodput_bin".into(), message });
    }
    Ok(sim.finish())
}

/// What happens next, in the event queue. Every field sits in a 32-bit word
/// of its own (`PfcFrame` is aligned to one), so that taking an event from
/// the queue reads its tag and two words, whatever the variant (with bytes
/// beside the tag, two more reads each event: 0.5 % of the benchmark's
/// instructions).
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
    PauseFrame { port: PortId, frame: PfcFrame },
    /// The next open-loop flow arrives (`sim::traffic`).
    FlowArrival,
    /// The next partition/aggregate query arrives.
    QueryArrival,
    /// The open-loop arrivals stop, and the run drains (`traffic.drain`).
    ArrivalsEnd,
    /// Time to refresh the pause of flow-control class `class` (a byte, in a
    /// word) of the link whose upstream port is `port`.
    PauseRefresh { port: PortId, class: u32 },
    /// The pause of `port` may have run out.
    Resume { port: PortId },
}

/// Endpoint index: the client end of connection `flow` is `2·flow`, the server end `2·flow + 1`.
#[inline]
fn endpoint_of(flow: u32, dir: Direction) -> usize {
    2 * flow as usize + usize::from(dir == Direction::ToServer)
}

/// One run: the clock, the event queue and the parts it composes; built
/// with the engine's optional parts (`EXTRAS`, see [`extras`]) or without,
/// and with pacing and rate samples (`PACED`) or without.
struct Sim<const EXTRAS: bool, const PACED: bool> {
    now: SimTime,
    events: EventQueue<Event>,
    /// Events the run may take in all: the event cap, or none (`u64::MAX`) with a duration.
    cap: u64,
    /// Events at which the current stretch ends: the next look at the
    /// memory the run holds, the event cap, or the count at which a stop
    /// condition came.
    budget: u64,
    /// Of those, the events not taken yet (one test per event for all three;
    /// `budget - left` have run).
    left: u64,
    /// The simulated-time limit (`stop.duration`; `SimTime::NEVER` if none).
    end: SimTime,
    /// When the run stopped, once it has.
    stopped_at: Option<SimTime>,
    /// Best goodput of all clients together, Mbps.
    best_goodput_mbps: f64,
    /// Switches, links and the packets crossing them.
    net: DataPlane,
    /// The TCP endpoints, two per connection.
    hosts: Endpoints<EXTRAS, PACED>,
    /// The synchronized reads.
    reads: Reads,
    /// The UDP source.
    udp: UdpSource,
    /// The open-loop flows and queries.
    traffic: OpenLoop,
    /// Timeout rows, traces and the packet capture.
    record: Recorder,
}

impl<const EXTRAS: bool, const PACED: bool> Sim<EXTRAS, PACED> {
    /// The parts of a validated scenario `s`, at time zero with nothing scheduled.
    fn new(s: &Scenario) -> Self {
        let reads = Reads::new(s);
        // Connections: the reading ones first, then the background flows'.
        let flows = reads.conns + s.background.tcp_flows;
        let mut record = Recorder::new(s, reads.layout);
        let queue_trace = s.trace.queue.then(|| record.lend_to_queue_trace());
        let mut net = DataPlane::new(s, reads.layout, flows, queue_trace);
        let mut hosts = Endpoints::new(s, &net.net, reads.layout, flows);
        let udp = UdpSource::new(s, &net.net, reads.layout, flows);
        let udp_hosts = udp.is_on().then(|| (udp_host(&reads.layout, &s.background), CLIENT0));
        net.hash_flows(&hosts.routes, udp_hosts, s.seed);
        let traffic = OpenLoop::new(s, &net.net, flows);
        if !net.uses_optional_parts() && !udp.is_on() && !net.net.is_multipath() && !traffic.is_on() {
            let ports = Ahead::ports(&net.net, &hosts.routes);
            for (route, port) in hosts.routes.iter_mut().zip(ports) {
                route.ahead = port;
            }
        }
        let sim = Sim {
            now: SimTime::ZERO,
            events: EventQueue::for_frame_time(net.bucket_frame(s.tcp.mss)),
            cap: u64::MAX,
            budget: u64::MAX,
            left: u64::MAX,
            end: s
                .stop
                .duration
                .map_or(SimTime::NEVER, |d| SimTime::ZERO + d + s.traffic.drain.unwrap_or(SimDuration::ZERO)),
            stopped_at: None,
            best_goodput_mbps: s.best_goodput_mbps(&net.net).expect("validation checked every route"),
            hosts,
            udp,
            traffic,
            record,
            reads,
            net,
        };
        // `extras` chose the build from the settings; the parts know what they run.
        assert!(EXTRAS || !sim.uses_optional_parts(), "sim::extras misses an optional part this scenario turns on");
        sim
    }

    /// True when a part of this run runs a mechanism the plain build
    /// (`EXTRAS` false) leaves out, and would leave silently off.
    fn uses_optional_parts(&self) -> bool {
        self.net.uses_optional_parts()
            || self.hosts.uses_optional_parts()
            || self.record.uses_optional_parts()
            || self.udp.is_on()
            || self.traffic.is_on()
    }

    /// Start every client's first block, the UDP source and the background
    /// flows, then run events until the stop condition, or `cap` events
    /// if the run has no duration.
    fn run(&mut self, cap: u64) {
        let end = self.end;
        if end == SimTime::NEVER {
            self.cap = cap;
        }
        let stretch = MEMORY_CHECK_EVENTS.min(self.cap);
        (self.budget, self.left) = (stretch, stretch);
        if let Some(at) = self.hosts.rude_off_at {
            self.events.push(SimTime::ZERO + at, Event::RudeOff);
        }
        if self.reads.on {
            for client in 0..self.reads.layout.clients {
                self.start_block(client);
            }
        }
        self.start_traffic();
        if self.udp.is_on() {
            self.on_datagram();
        }
        for flow in self.reads.conns..self.hosts.connections() {
            let ep = endpoint_of(flow, Direction::ToServer);
            self.hosts.eps[ep].send(BULK_BYTES);
            self.service(ep);
        }
        // Events at the last instant were due later still (time saturates there):
        // run everything before it, and stop short if any is left (see `run`).
        let horizon = SimTime(end.0.min(LAST_INSTANT.0 - 1));
        while let Some((t, ev)) = self.events.pop_until(horizon) {
            self.now = t;
            if let Some(clock) = self.net.double_clock.as_mut().filter(|_| EXTRAS) {
                clock.at(t, if let Event::Arrive { pkt, .. } = ev { Some(pkt) } else { None });
            }
            let (events, now) = (&mut self.events, self.now);
            match ev {
                Event::Arrive { pkt, node } => {
                    if self.net.arrive::<EXTRAS>(events, now, pkt, node) {
                        self.deliver(pkt);
                    }
                }
                Event::Wake { ep } => self.on_wake(ep as usize),
                Event::Respond { flow } => {
                    let ep = endpoint_of(flow, Direction::ToServer);
                    let bytes = std::mem::take(&mut self.reads.preparing[flow as usize]);
                    // The storage application knows its stripe units (GIP §V-A).
                    self.hosts.eps[ep].send_with(bytes, SendFlags::UNIT_TAIL);
                    self.service(ep);
                }
                Event::Request { flow } => self.request(flow),
                Event::RudeOff => self.rude_off(),
                Event::Datagram => self.on_datagram(),
                Event::FlowArrival => self.on_flow_arrival(),
                Event::QueryArrival => self.on_query_arrival(),
                Event::ArrivalsEnd => self.stop_if_drained(),
                Event::ArriveVia { pkt, port } => {
                    if self.net.on_arrive_via(events, now, pkt, port) {
                        self.deliver(pkt);
                    }
                }
                Event::TxDone { port } => self.net.on_tx_done(events, now, port),
                Event::PauseFrame { port, frame } => self.net.on_pause_frame(events, now, port, frame),
                Event::PauseRefresh { port, class } => {
                    let class = u8::try_from(class).expect("a flow-control class");
                    self.net.on_pause_refresh(events, now, port, class)
                }
                Event::Resume { port } => self.net.on_tx_resume(events, now, port),
            }
            self.left -= 1;
            if self.left == 0 && !self.next_stretch() {
                return self.take_back(None);
            }
        }
        self.take_back(Some(horizon));
        if end == SimTime::NEVER && !self.events.is_empty() {
            self.now = LAST_INSTANT;
            return;
        }
        self.stopped_at = Some(if end == SimTime::NEVER { self.now } else { end });
    }

    /// A stretch of events has run: unless the run stopped or took every
    /// event it may, look at the memory its packets in flight, pending events
    /// and block rows hold (`Recorder::hold`), and go on for another stretch
    /// if it fits. False when the run ends here.
    #[cold]
    fn next_stretch(&mut self) -> bool {
        if self.stopped_at.is_some() || self.budget >= self.cap {
            return false;
        }
        // A vector that grows copies itself into one twice its size, holding
        // both meanwhile: the pool and the queue may take twice what they hold
        // before the next look.
        let held = 2 * (self.net.pool.held_bytes() + self.events.held_bytes())
            + (self.reads.blocks.capacity() * std::mem::size_of::<crate::stats::BlockRecord>()) as u64
            + self.traffic.held_bytes();
        self.net.report_drops(self.now, self.udp.flow, &mut self.hosts.eps);
        if !self.record.hold(held, self.net.pool.live()) {
            self.stopped_at = Some(self.now);
            return false;
        }
        let stretch = MEMORY_CHECK_EVENTS.min(self.cap - self.budget);
        (self.budget, self.left) = (self.budget + stretch, stretch);
        true
    }

    /// The run ended: take back from the ports taken ahead (`sim::ahead`)
    /// what frames that had not reached them yet counted there. The run
    /// ran every event up to `horizon`, or, with `None`, stopped right after
    /// the event it ran last.
    fn take_back(&mut self, horizon: Option<SimTime>) {
        let frames = self.past_ahead();
        if frames.is_empty() && self.net.ahead.drops.is_empty() && self.net.ahead.peaks.is_empty() {
            return;
        }
        let events = &self.events;
        let ran = |t: Ticket| horizon.map_or_else(|| events.ran(t), |h| t.time() <= h);
        self.net.take_back(frames, ran);
    }

    /// The packets in flight beyond a port that took them ahead, each with
    /// its arrival there and the port.
    fn past_ahead(&self) -> Vec<(PktId, SimTime, PortId)> {
        let (routes, net) = (&self.hosts.routes, &self.net);
        self.events
            .pending()
            .filter_map(|(arrival, event)| {
                let &Event::Arrive { pkt, node } = event else { return None };
                let p = net.pool.get(pkt);
                // The sender's end: the other end of the receiver's.
                let port = routes.get(endpoint_of(p.flow, p.dir) ^ 1)?.ahead;
                (port != NO_PORT && net.net.port(port).peer == node).then_some((pkt, arrival, port))
            })
            .collect()
    }

    /// `pkt` reached its destination host: hand it to its endpoint.
    fn deliver(&mut self, pkt: PktId) {
        self.net.delivered += 1;
        // The packet is read in place and its slot freed after: no copy on the hot path.
        let p = self.net.pool.get(pkt);
        let (flow, dir) = (p.flow, p.dir);
        if EXTRAS && flow == self.udp.flow {
            return self.udp.on_delivered(&mut self.net, pkt);
        }
        if EXTRAS && self.record.capture.is_some() && flow < self.reads.conns {
            self.record.capture(self.now, Way::Rx, flow, dir, p.seg);
        }
        let ep = endpoint_of(flow, dir);
        let spurious = self.hosts.eps[ep].on_segment(self.now, &p.seg);
        let has_data = p.seg.has_data();
        self.net.pool.release(pkt);
        if EXTRAS && flow >= self.traffic.base {
            self.traffic.on_arrived(flow);
        }
        if spurious {
            self.record.spurious(ep);
        }
        if EXTRAS && !self.hosts.rude_left.is_empty() {
            self.hosts.note_polite(self.now);
        }
        // A pure ACK delivers nothing to the application.
        if has_data {
            self.on_progress(ep);
        }
        self.service(ep);
        if EXTRAS && flow >= self.traffic.base {
            self.release_if_idle(flow);
        }
        if EXTRAS && self.record.trace.per_ack && ep % 2 == 1 {
            self.trace_flow(ep);
        }
        if EXTRAS {
            self.stop_if_over_budget(); // the capture's budget; `run` reports it
        }
    }

    /// Endpoint `ep`'s wake-up came due: run its timers, then let it send.
    fn on_wake(&mut self, ep: usize) {
        // In the plain build only timers wake an endpoint (waiting for room
        // at the NIC is an optional part's), and an endpoint sends all it
        // can whenever its state changes: a wake-up that finds no timer due
        // finds nothing new to send either. The pacer is not held to that
        // rule: in the paced build a wake-up takes the whole path, as in the full one.
        if !EXTRAS && !PACED && !self.hosts.due(ep, self.now) {
            return self.hosts.on_stale_wake(&mut self.events, self.now, ep);
        }
        if let Some(t) = self.hosts.on_wake(ep, self.now) {
            self.on_timeout(ep, t);
        }
        self.service(ep);
    }

    /// The UDP source sends its next datagram.
    #[cold]
    fn on_datagram(&mut self) {
        self.udp.send(&mut self.net, &mut self.events, self.now);
    }

    /// Endpoint `ep` suffered the retransmission timeout `t`.
    #[cold]
    fn on_timeout(&mut self, ep: usize, t: Timeout) {
        self.net.report_drops(self.now, self.udp.flow, &mut self.hosts.eps);
        self.hosts.eps[ep].judge_timeout();
        let flow = ep / 2;
        self.reads.on_timeout(flow, ep % 2 == 1, &t);
        if self.traffic.is_on() && flow as u32 >= self.traffic.base {
            self.traffic.on_timeout(flow as u32);
        }
        if self.record.trace.per_ack && ep % 2 == 1 {
            self.trace_flow(ep);
        }
        if !self.record.keep_timeouts {
            return;
        }
        let client = (flow < self.reads.conns as usize).then(|| self.reads.layout.client_of(flow as u32));
        let block = self.reads.app.blocks_completed(client.unwrap_or(0));
        self.record.timeout(ep, client, block, t);
        self.stop_if_over_budget();
    }

    /// The queue trace filled its share of the room: note it as the records' overflow.
    fn note_queue_trace_overflow(&mut self) {
        if self.record.trace.queue && self.net.net.port(self.net.bottleneck).queue.occupancy_log_overflowed() {
            self.record.over.get_or_insert("trace.queue");
        }
    }

    /// The records passed what `memory_budget` leaves: stop here (`run` reports it).
    #[inline]
    fn stop_if_over_budget(&mut self) {
        if self.record.over.is_some() {
            self.stop();
        }
    }

    /// A stop condition came: the run ends after this event (after the
    /// first, if it came before any).
    fn stop(&mut self) {
        self.stopped_at = Some(self.now);
        self.budget -= self.left - 1;
        self.left = 1;
    }

    /// Events run so far.
    fn processed(&self) -> u64 {
        self.budget - self.left
    }

    /// Sample the congestion state of server endpoint `ep` (and its BBR model, with `trace.bbr`).
    #[cold]
    fn trace_flow(&mut self, ep: usize) {
        if ep / 2 >= self.reads.conns as usize {
            return; // traces follow the reading connections only
        }
        let e = &self.hosts.eps[ep];
        let flow = (ep / 2) as u32;
        let on = self.record.trace;
        let flow_sample =
            on.flows.then(|| FlowSample { cwnd: e.cwnd(), ssthresh: e.ssthresh(), rto: e.rto(), srtt: e.srtt() });
        let bbr_sample = e.bbr_sample().filter(|_| on.bbr);
        let Some(tr) = &mut self.record.tr else { return };
        if let Some(s) = flow_sample {
            tr.flow_sample(self.now, flow, s);
        }
        if let Some(s) = bbr_sample {
            tr.bbr_sample(self.now, flow, s);
        }
        if flow_sample.is_some() {
            self.record.charge("trace.flows", FLOW_SAMPLE_BYTES);
        }
        if bbr_sample.is_some() {
            self.record.charge("trace.bbr", BBR_SAMPLE_BYTES);
        }
        self.stop_if_over_budget();
    }

    /// Let the applications react to what endpoint `ep` has received.
    fn on_progress(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        if EXTRAS && flow >= self.traffic.base && ep % 2 == 0 {
            let delivered = self.hosts.eps[ep].delivered();
            self.traffic.on_delivered(flow, delivered, self.now);
            return self.stop_if_drained();
        }
        if flow >= self.reads.conns {
            return; // a background flow: no application to tell
        }
        let delivered = self.hosts.eps[ep].delivered();
        if ep % 2 == 1 {
            let response = self.reads.app.on_server_delivered(flow, delivered);
            let server = &self.hosts.eps[ep];
            if let (Some(_), Some(srtt), Some(rttvar), true) =
                (&response, server.srtt(), server.tcp_info_rttvar(), server.acked() > 0)
            {
                self.reads.request_rtt.add(srtt, rttvar, server.rto());
            }
            match response {
                Some(r) if r.after.is_zero() => self.hosts.eps[ep].send_with(r.bytes, SendFlags::UNIT_TAIL),
                Some(r) => {
                    self.reads.preparing[flow as usize] += r.bytes;
                    self.events.push(self.now + r.after, Event::Respond { flow });
                }
                None => {}
            }
            return;
        }
        let before = std::mem::replace(&mut self.reads.client_seen[flow as usize], delivered);
        if delivered == before {
            return;
        }
        if EXTRAS && !self.hosts.ictcp.is_empty() {
            self.hosts.ictcp_on_data(ep, self.now, delivered - before, &self.reads.layout);
        }
        if EXTRAS && self.record.trace.goodput {
            if let Some(tr) = &mut self.record.tr {
                tr.delivered(self.now, delivered - before);
            }
        }
        match self.reads.app.on_client_delivered(self.now, flow, delivered, before) {
            Progress::Waiting => {}
            Progress::Release(r) => self.release(r),
            Progress::Done(done) => {
                if self.reads.on_block_done(done) {
                    self.stop();
                } else {
                    self.start_block(done.client);
                }
            }
        }
    }

    /// Every endpoint turns rudeness off (RUDE §3.2).
    #[cold]
    fn rude_off(&mut self) {
        for ep in 0..self.hosts.eps.len() {
            self.hosts.rude_off(ep);
            self.service(ep);
        }
        self.hosts.note_polite(self.now);
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
        self.hosts.eps[ep].send(self.reads.request);
        self.service(ep);
    }

    /// Client `client` writes its requests, in the workload's order and as
    /// its mitigations (`max_inflight`, `stagger`) release them.
    fn start_block(&mut self, client: u32) {
        if let Some(tr) = self.record.tr.as_mut().filter(|_| self.record.trace.block_cwnd) {
            let block = self.reads.app.blocks_completed(client);
            let n = self.reads.layout.servers;
            for flow in client * n..(client + 1) * n {
                tr.block_start(block, flow, self.hosts.eps[endpoint_of(flow, Direction::ToServer)].cwnd());
            }
            self.record.charge("trace.block_cwnd", BLOCK_CWND_BYTES * u64::from(n));
        }
        self.note_queue_trace_overflow();
        self.stop_if_over_budget();
        let mut first = std::mem::take(&mut self.reads.first);
        first.clear();
        first.extend_from_slice(self.reads.app.start_block(client, self.now).0);
        for &r in &first {
            self.release(r);
        }
        self.reads.first = first;
    }

    /// Transmit whatever endpoint `ep` has to send, and keep its wake-up armed.
    fn service(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        loop {
            if EXTRAS {
                let nic = self.hosts.routes[ep].nic;
                if let Some(room) = self.net.nic_full_until(nic, self.now) {
                    self.hosts.eps[ep].on_nic_full();
                    self.hosts.wait_for_nic(&mut self.events, self.now, ep, room);
                    break;
                }
            }
            // The packet is built in the slot it travels in, not copied there.
            let slot = self.net.pool.vacant();
            if !self.hosts.eps[ep].transmit_into(self.now, &mut slot.seg) {
                break;
            }
            // The route is read here, when a segment goes, not before the
            // loop: most calls send one segment or none, and a value read
            // before the loop is saved to the stack on every call.
            let Route { nic, dst, dir, ahead } = self.hosts.routes[ep];
            let tcp_bytes = slot.seg.len + slot.seg.option_bytes();
            (slot.flow, slot.dir, slot.dst, slot.tcp_bytes) = (flow, dir, dst, tcp_bytes);
            // Lost before the wire: the slot stays vacant for the next segment.
            if EXTRAS && self.hosts.send_loss_ppb > 0 && slot.seg.has_data() && self.hosts.lose_before_sending() {
                let (seq, len) = (slot.seg.seq, slot.seg.len);
                self.hosts.eps[ep].on_copy_dropped(seq, seq + u64::from(len));
                continue;
            }
            self.net.sent += 1;
            if EXTRAS && flow >= self.traffic.base {
                self.traffic.on_sent(flow);
            }
            if EXTRAS && self.record.capture.is_some() && flow < self.reads.conns {
                let seg = self.net.pool.vacant().seg;
                self.record.capture(self.now, Way::Tx, flow, dir, seg);
                self.stop_if_over_budget();
            }
            let pkt = self.net.pool.commit();
            self.net.forward::<EXTRAS>(&mut self.events, self.now, pkt, nic, ahead, tcp_bytes, flow);
            // A pure ACK goes only when no data can (`Endpoint::transmit_into`),
            // and sending it changes nothing data waits for: nothing follows it.
            if !EXTRAS && tcp_bytes == 0 {
                break;
            }
        }
        self.hosts.arm(&mut self.events, self.now, ep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::CcChoice;
    use crate::time::BitRate;

    /// UDP at the client's line rate leaves the reads almost nothing: three
    /// blocks do not complete in the events a run without a duration may take.
    fn starved() -> Scenario {
        let mut s = Scenario::fast08(4);
        s.background.udp_rate = Some(BitRate::gbps(1));
        (s.stop.blocks, s.stop.duration) = (Some(3), None);
        s
    }

    #[test]
    fn blocks_that_cannot_complete_end_in_an_error_naming_the_bound() {
        let err = run_capped(&starved(), 200_000).unwrap_err().to_string();
        assert!(err.starts_with("blocks: 0 of 3 blocks done after 200000 events ("), "{err}");
        assert!(err.ends_with("give a duration to run longer"), "{err}");
    }

    /// A scenario that turns no optional part on runs on the engine built
    /// without them (`tcp::gated`); built with them, it gives the same result.
    #[test]
    fn the_engine_without_its_optional_parts_runs_as_with_them() {
        let mut s = Scenario::fast08(16);
        s.stop.blocks = Some(3);
        s.stats.timeouts = true;
        assert!(!extras(&s));
        let (plain, full) = (run_as::<false, false>(&s, 1 << 24).unwrap(), run_as::<true, true>(&s, 1 << 24).unwrap());
        assert!(plain.summary.timeouts > 0, "the run exercises recovery: {:?}", plain.summary.timeouts);
        assert_eq!(plain, full);
    }

    /// BBR, and Reno with pacing on, pace and turn no other optional part
    /// on: they run on the build with pacing and rate samples alone, as on
    /// the full build.
    #[test]
    fn a_paced_run_without_the_other_optional_parts_runs_as_with_them() {
        for (cc, pacing) in [(CcChoice::Bbr, false), (CcChoice::Reno, true)] {
            let mut s = Scenario::fast08(16);
            (s.stop.blocks, s.stop.duration, s.tcp.cc, s.tcp.pacing) = (Some(6), None, cc, pacing);
            assert!(!extras(&s) && s.tcp.paced());
            let (paced, full) =
                (run_as::<false, true>(&s, 1 << 24).unwrap(), run_as::<true, true>(&s, 1 << 24).unwrap());
            assert!(paced.summary.retransmitted_packets > 0, "{cc:?} recovers: {:?}", paced.summary);
            assert_eq!(paced, full, "{cc:?}");
        }
    }

    /// Were a setting that turns an optional part on missing from `extras`,
    /// its scenario would run in the plain build with that part silently
    /// off: the plain build refuses to start with it (here the flow trace).
    #[test]
    #[should_panic(expected = "sim::extras misses an optional part")]
    fn the_plain_build_refuses_a_scenario_with_an_optional_part() {
        let mut s = Scenario::fast08(4);
        s.trace.flows = true;
        Sim::<false, false>::new(&s);
    }

    #[test]
    fn a_duration_is_the_users_bound_and_lifts_the_event_cap() {
        let mut s = starved();
        s.stop.duration = Some(crate::time::SimDuration::from_secs(1));
        let r = run_capped(&s, 200_000).unwrap();
        assert!(r.summary.events > 200_000 && r.summary.blocks < 3, "{:?}", (r.summary.events, r.summary.blocks));
    }
}
