//! The engine's side of Ethernet flow control (`net::pause`, `net::pfc`),
//! the other path of its network (`sim::network`): frames move through
//! explicit per-port FIFOs, one per priority, with one
//! transmission-complete event each, so that a PAUSE or PFC frame can stop
//! a link (or one priority of it) with frames already queued on it.
//!
//! **Models:** with `switch.pause` on, or traffic of several priorities,
//! every port (switch ports and host NICs) sends its FIFOs one frame at a
//! time, round robin across priorities; a stopped priority keeps its frames
//! (they hold their buffer space) until it may send again. PAUSE and PFC
//! frames jump the queue but never cut a frame short. Under 802.3x PAUSE a
//! port is congested when its whole queue passes XOFF and its PAUSE stops
//! every priority; under PFC each lossless priority's FIFO is judged alone
//! and its PFC frame stops that priority only. With `qos:K` and several
//! priorities, a frame is admitted only if its priority's partition has room.
//! **Deliberately different:** with PAUSE off and one priority none of this
//! runs: a port knows each frame's departure when it is queued (see `net`),
//! which is exact for a FIFO nothing can stop and costs one event per hop
//! instead of two.
//! **Not modelled:** see `net::pause` and `net::pfc`.

use super::network::DataPlane;
use super::Event;
use crate::event::EventQueue;
use crate::net::frame;
use crate::net::pause::{pause_time, LosslessPort, PauseConfig, PAUSE_WIRE_BYTES};
use crate::net::pfc::{partition, PfcFrame, PriorityMask, PRIORITIES};
use crate::net::SwitchConfig;
use crate::net::{Node, PktId, PortId, QueueLimit};
use crate::time::{SimDuration, SimTime};

/// Who flow control stops when a port passes XOFF.
#[derive(Clone, Copy)]
enum Control {
    /// 802.3x PAUSE: the whole link.
    Pause,
    /// 802.1Qbb PFC: one priority, if it is one of these lossless ones.
    Pfc(PriorityMask),
}

/// The 802.1p priority of each kind of flow, and where each kind's flow numbers lie.
#[derive(Clone, Copy)]
pub(super) struct Priorities {
    /// Reading connections: flows `0..conns`; background connections follow.
    pub(super) conns: u32,
    /// The flow number the UDP source's datagrams carry.
    pub(super) udp_flow: u32,
    /// The reads' priority (`workload.priority`).
    pub(super) reads: u8,
    /// The background connections' priority.
    pub(super) background: u8,
    /// The UDP source's priority.
    pub(super) udp: u8,
}

/// Explicit port FIFOs and their flow control, present only when PAUSE or
/// traffic classes are on.
pub(super) struct Lossless {
    /// Flow control: its thresholds and who it stops; `None` for classes without it.
    control: Option<(PauseConfig, Control)>,
    /// With traffic classes and `qos:K`: K and each partition's limit.
    partitions: Option<(u32, QueueLimit)>,
    ports: Vec<LosslessPort>,
    /// Which priority each flow's frames carry.
    priorities: Priorities,
}

impl Lossless {
    /// Every port idle and unpaused; `classes` when the traffic uses several priorities.
    pub(super) fn new(sw: &SwitchConfig, classes: bool, ports: usize, priorities: Priorities) -> Self {
        let how = if sw.pfc { Control::Pfc(sw.pfc_priorities) } else { Control::Pause };
        let partitions = match sw.buffer_model {
            crate::net::buffer::BufferModel::Qos { classes: k } if classes => {
                let all = QueueLimit::from(sw.buffer);
                let share = |n: u64| if n == u64::MAX { n } else { n / u64::from(k) };
                Some((k, QueueLimit { bytes: share(all.bytes), packets: share(all.packets) }))
            }
            _ => None,
        };
        Lossless {
            control: sw.pause_config().map(|cfg| (cfg, how)),
            partitions,
            ports: vec![LosslessPort::default(); ports],
            priorities,
        }
    }

    /// The 802.1p priority of connection `flow`'s frames (or the UDP
    /// source's): its class, found off the per-packet path.
    fn priority_of(&self, flow: u32) -> u8 {
        let p = &self.priorities;
        if flow < p.conns {
            p.reads
        } else if flow == p.udp_flow {
            p.udp
        } else {
            p.background
        }
    }

    /// PAUSE and PFC frames sent on `port`, and the time each priority of
    /// `port` spent paused until `end`.
    pub(super) fn port_stats(&self, port: PortId, end: SimTime) -> (u64, [SimDuration; PRIORITIES]) {
        let p = &self.ports[port.0 as usize];
        (p.pause_frames, std::array::from_fn(|i| p.paused_time(i as u8, end)))
    }

    /// Frames waiting at `port`: (packet, arrival).
    pub(super) fn waiting(&self, port: PortId) -> impl Iterator<Item = (PktId, SimTime)> + '_ {
        self.ports[port.0 as usize].queues.waiting()
    }

    /// Is there room for a frame of priority `p` and `frame_bytes` in its
    /// `qos:K` partition at `port`?
    fn partition_fits(&self, port: PortId, p: u8, frame_bytes: u64) -> bool {
        let Some((k, limit)) = self.partitions else { return true };
        let q = &self.ports[port.0 as usize].queues;
        let part = partition(p, k);
        let (bytes, frames) = (0..PRIORITIES as u8)
            .filter(|&o| partition(o, k) == part)
            .map(|o| q.held(o))
            .fold((0, 0), |(b, f), (ob, of)| (b + ob, f + u64::from(of)));
        bytes + frame_bytes <= limit.bytes && frames < limit.packets
    }
}

/// The port at the other end of `port`'s link: ports come in pairs, one per direction.
#[inline]
fn reverse(port: PortId) -> PortId {
    PortId(port.0 ^ 1)
}

/// The PAUSE or PFC frame that stops (`xoff`) or releases flow-control
/// class `class`: every priority under PAUSE, priority `class` under PFC.
fn frame_for(how: Control, class: u8, xoff: bool) -> PfcFrame {
    let bits = match how {
        Control::Pause => PriorityMask::ALL.0,
        Control::Pfc(_) => PriorityMask::of(class).0,
    };
    if xoff {
        PfcFrame { xoff: bits, xon: 0 }
    } else {
        PfcFrame { xoff: 0, xon: bits }
    }
}

impl DataPlane {
    fn lossless(&mut self) -> &mut Lossless {
        self.lossless.as_mut().expect("explicit port FIFOs are on")
    }

    /// Offer `pkt` to `port`; `ingress` is the port whose link brought it to
    /// this switch (`None` at a host's NIC).
    // Cold for the layout of the engine's per-packet path with PAUSE off.
    #[cold]
    #[expect(clippy::too_many_arguments, reason = "the hop's packet and ports, and the engine's queue and clock")]
    pub(super) fn forward_lossless(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
        tcp_bytes: u32,
        flow: u32,
        ingress: Option<PortId>,
    ) {
        let frame_bytes = frame::frame_bytes(tcp_bytes);
        let prio = self.lossless().priority_of(flow);
        let fits = ingress.is_none() || self.lossless().partition_fits(port, prio, frame_bytes);
        let queue = &mut self.net.port_mut(port).queue;
        if !fits {
            queue.refuse(now);
        }
        if !fits || !queue.admit(now, frame_bytes) {
            self.drop_packet(pkt, flow, now);
            return;
        }
        queue.push_waiting(frame_bytes);
        if self.ecn && queue.marked() {
            self.mark(pkt, port);
        }
        self.lossless().ports[port.0 as usize].queues.push(pkt, prio, now, frame_bytes as u32);
        if let Some(ingress) = ingress {
            self.check_xoff(events, now, port, ingress, prio);
        }
        self.try_start(events, now, port);
    }

    /// A frame crossing `port`'s link reached the far end: a switch
    /// forwards it. Returns whether the far end is a host, where the packet
    /// waits for its endpoint.
    pub(super) fn on_arrive_via(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        pkt: PktId,
        port: PortId,
    ) -> bool {
        let node = self.net.port(port).peer;
        match self.net.node(node) {
            Node::Switch { .. } | Node::Multipath { .. } => {
                let p = self.pool.get(pkt);
                let (tcp_bytes, flow) = (p.tcp_bytes, p.flow);
                let out = self.switch_port(node, pkt);
                self.forward_lossless(events, now, pkt, out, tcp_bytes, flow, Some(port));
                false
            }
            Node::Host { .. } => true,
        }
    }

    /// A frame of priority `prio` from `ingress` was queued at `port`: if
    /// that leaves `port` (PAUSE) or its FIFO of `prio` (PFC) above XOFF,
    /// hold that link (or its priority) paused.
    fn check_xoff(&mut self, events: &mut EventQueue<Event>, now: SimTime, port: PortId, ingress: PortId, prio: u8) {
        let port_bytes = self.net.port(port).queue.bytes();
        let l = self.lossless.as_mut().expect("explicit port FIFOs are on");
        let Some((cfg, how)) = l.control else { return };
        let (class, bytes) = match how {
            Control::Pause => (0, port_bytes),
            Control::Pfc(lossless) if lossless.contains(prio) => (prio, l.ports[port.0 as usize].queues.held(prio).0),
            Control::Pfc(_) => return,
        };
        let c = usize::from(class);
        if bytes <= cfg.xoff.0 || l.ports[port.0 as usize].holding[c].contains(&ingress) {
            return;
        }
        l.ports[port.0 as usize].holding[c].push(ingress);
        let holders = &mut l.ports[ingress.0 as usize].holders[c];
        *holders += 1;
        if *holders == 1 {
            self.send_pause(events, now, ingress, frame_for(how, class, true));
            self.schedule_refresh(events, now, ingress, class);
        }
    }

    /// The thresholds and mode of flow control, which is on.
    fn control(&mut self) -> (PauseConfig, Control) {
        self.lossless().control.expect("flow control is on")
    }

    /// Refresh the pause of class `class` of `link` halfway through its time.
    fn schedule_refresh(&mut self, events: &mut EventQueue<Event>, now: SimTime, link: PortId, class: u8) {
        let rate = self.net.port(link).link.rate();
        let at = now + pause_time(self.control().0.quanta, rate) / 2;
        events.push(at, Event::PauseRefresh { port: link, class: u32::from(class) });
    }

    /// The switch at the far end of `link` still holds class `class` of it
    /// paused: send the PAUSE or PFC frame again.
    pub(super) fn on_pause_refresh(&mut self, events: &mut EventQueue<Event>, now: SimTime, link: PortId, class: u8) {
        if self.lossless().ports[link.0 as usize].holders[usize::from(class)] > 0 {
            let how = self.control().1;
            self.send_pause(events, now, link, frame_for(how, class, true));
            self.schedule_refresh(events, now, link, class);
        }
    }

    /// Queue `frame` for the upstream end of `link`, merged into any frame
    /// still waiting there.
    fn send_pause(&mut self, events: &mut EventQueue<Event>, now: SimTime, link: PortId, frame: PfcFrame) {
        let back = reverse(link);
        let waiting = &mut self.lossless().ports[back.0 as usize].control;
        *waiting = Some(waiting.map_or(frame, |w| w.merge(frame)));
        self.try_start(events, now, back);
    }

    /// Start the next transmission on `port` if it is idle: a waiting PAUSE
    /// or PFC frame first, else the next frame of an unpaused priority.
    fn try_start(&mut self, events: &mut EventQueue<Event>, now: SimTime, port: PortId) {
        let l = self.lossless.as_mut().expect("explicit port FIFOs are on");
        let lp = &mut l.ports[port.0 as usize];
        if lp.busy {
            return;
        }
        if let Some(f) = lp.control.take() {
            lp.busy = true;
            lp.pause_frames += 1;
            let link = &mut self.net.port_mut(port).link;
            let done = link.transmit(now, PAUSE_WIRE_BYTES);
            events.push(done, Event::TxDone { port });
            events.push(link.arrival(done), Event::PauseFrame { port: reverse(port), frame: f });
            return;
        }
        let Some((pkt, prio, arrived, frame_bytes)) = lp.next_frame(now) else { return };
        lp.busy = true;
        lp.sending = Some((prio, frame_bytes));
        let wire = u64::from(frame_bytes) + u64::from(frame::PREAMBLE_IFG);
        let p = self.net.port_mut(port);
        let done = p.link.transmit(now, wire);
        p.queue.start_next(arrived, done, u64::from(frame_bytes));
        events.push(done, Event::TxDone { port });
        events.push(done + p.flight(), Event::ArriveVia { pkt, port });
    }

    /// `port` finished a transmission: release the links (or priorities) it
    /// holds paused if it has drained to XON, then send the next frame.
    pub(super) fn on_tx_done(&mut self, events: &mut EventQueue<Event>, now: SimTime, port: PortId) {
        let port_bytes = self.net.port_mut(port).queue.bytes_at(now);
        let l = self.lossless.as_mut().expect("explicit port FIFOs are on");
        let lp = &mut l.ports[port.0 as usize];
        lp.busy = false;
        let sent = lp.sending.take();
        if let Some((prio, b)) = sent {
            lp.queues.on_sent(prio, b);
        }
        let drained = match (l.control, sent) {
            (Some((cfg, Control::Pause)), _) => (port_bytes <= cfg.xon.0).then_some((Control::Pause, 0)),
            (Some((cfg, how @ Control::Pfc(_))), Some((prio, _))) => {
                (lp.queues.held(prio).0 <= cfg.xon.0).then_some((how, prio))
            }
            _ => None,
        };
        if let Some((how, class)) = drained {
            self.release_held(events, now, port, how, class);
        }
        self.try_start(events, now, port);
    }

    /// `port` drained to XON in flow-control class `class`: release the
    /// links it holds paused in that class.
    fn release_held(&mut self, events: &mut EventQueue<Event>, now: SimTime, port: PortId, how: Control, class: u8) {
        let c = usize::from(class);
        let mut held = std::mem::take(&mut self.lossless().ports[port.0 as usize].holding[c]);
        for &link in &held {
            let holders = &mut self.lossless().ports[link.0 as usize].holders[c];
            *holders -= 1;
            if *holders == 0 {
                self.send_pause(events, now, link, frame_for(how, class, false));
            }
        }
        held.clear();
        self.lossless().ports[port.0 as usize].holding[c] = held;
    }

    /// The pause of `port` may have run out: send if it has.
    pub(super) fn on_tx_resume(&mut self, events: &mut EventQueue<Event>, now: SimTime, port: PortId) {
        self.try_start(events, now, port);
    }

    /// A PAUSE or PFC `frame` reached `port`: stop the priorities it names,
    /// or restart them on XON.
    pub(super) fn on_pause_frame(
        &mut self,
        events: &mut EventQueue<Event>,
        now: SimTime,
        port: PortId,
        frame: PfcFrame,
    ) {
        let rate = self.net.port(port).link.rate();
        let quanta = self.control().0.quanta;
        if let Some(until) = self.lossless().ports[port.0 as usize].on_pause(now, frame, quanta, rate) {
            if until > now {
                events.push(until, Event::Resume { port });
            }
        }
        self.try_start(events, now, port);
    }
}
