//! The engine's side of Ethernet flow control (`net::pause`): frames move
//! through explicit per-port FIFOs, one transmission-complete event each, so
//! that a PAUSE can stop a link with frames already queued on it.
//!
//! **Models:** with `switch.pause` on, every port (switch ports and host
//! NICs) sends its queue in order, one frame at a time; a port stopped by a
//! PAUSE keeps its frames (they hold their buffer space) until it may send
//! again. PAUSE frames jump the queue but never cut a frame short.
//! **Deliberately different:** with PAUSE off none of this runs: a port
//! knows each frame's departure when it is queued (see `net`), which is
//! exact for a link nothing can stop and costs one event per hop instead of two.
//! **Not modelled:** see `net::pause`.

use super::{Event, Sim};
use crate::net::frame;
use crate::net::pause::{pause_time, LosslessPort, PauseConfig, PAUSE_WIRE_BYTES};
use crate::net::{Node, PktId, PortId};
use crate::time::SimDuration;

/// Flow-control state of every port, present only when PAUSE is on.
pub(super) struct Lossless {
    cfg: PauseConfig,
    ports: Vec<LosslessPort>,
}

impl Lossless {
    /// Every port idle and unpaused.
    pub(super) fn new(cfg: PauseConfig, ports: usize) -> Self {
        Lossless { cfg, ports: vec![LosslessPort::default(); ports] }
    }

    /// PAUSE frames sent on `port` and time `port` spent paused until `end`.
    pub(super) fn port_stats(&self, port: PortId, end: crate::time::SimTime) -> (u64, SimDuration) {
        let p = &self.ports[port.0 as usize];
        (p.pause_frames, p.paused_time(end))
    }

    /// Frames waiting at `port`: (packet, arrival).
    pub(super) fn waiting(&self, port: PortId) -> impl Iterator<Item = &(PktId, crate::time::SimTime)> {
        self.ports[port.0 as usize].fifo.iter()
    }
}

/// The port at the other end of `port`'s link: ports come in pairs, one per direction.
#[inline]
fn reverse(port: PortId) -> PortId {
    PortId(port.0 ^ 1)
}

impl Sim<'_> {
    fn lossless(&mut self) -> &mut Lossless {
        self.lossless.as_mut().expect("flow control is on")
    }

    /// Offer `pkt` to `port`; `ingress` is the port whose link brought it to
    /// this switch (`None` at a host's NIC).
    // Cold for the layout of the engine's per-packet path with PAUSE off.
    #[cold]
    pub(super) fn forward_lossless(
        &mut self,
        pkt: PktId,
        port: PortId,
        tcp_bytes: u32,
        flow: u32,
        ingress: Option<PortId>,
    ) {
        let now = self.now;
        let frame_bytes = frame::frame_bytes(tcp_bytes);
        let queue = &mut self.net.port_mut(port).queue;
        if !queue.admit(now, frame_bytes) {
            self.pool.release(pkt);
            self.dropped += 1;
            self.flow_drops[flow as usize] += 1;
            return;
        }
        queue.push_waiting(now, frame_bytes);
        if self.ecn && queue.marked() {
            self.mark(pkt, port);
        }
        self.lossless().ports[port.0 as usize].fifo.push_back((pkt, now));
        if let Some(ingress) = ingress {
            self.check_xoff(port, ingress);
        }
        self.try_start(port);
    }

    /// A frame crossing `port`'s link reached the far end.
    pub(super) fn on_arrive_via(&mut self, pkt: PktId, port: PortId) {
        let node = self.net.port(port).peer;
        match self.net.node(node) {
            Node::Switch { route } => {
                let p = self.pool.get(pkt);
                let (out, tcp_bytes, flow) = (route[p.dst as usize], p.tcp_bytes, p.flow);
                self.forward_lossless(pkt, out, tcp_bytes, flow, Some(port));
            }
            Node::Host { .. } => self.on_arrive(pkt, node),
        }
    }

    /// `port` holds more than XOFF after a frame from `ingress`: hold that link paused.
    fn check_xoff(&mut self, port: PortId, ingress: PortId) {
        let bytes = self.net.port(port).queue.bytes();
        let l = self.lossless.as_mut().expect("flow control is on");
        if bytes <= l.cfg.xoff.0 || l.ports[port.0 as usize].holding.contains(&ingress) {
            return;
        }
        l.ports[port.0 as usize].holding.push(ingress);
        let holders = &mut l.ports[ingress.0 as usize].holders;
        *holders += 1;
        if *holders == 1 {
            let quanta = l.cfg.quanta;
            self.send_pause(ingress, quanta);
            self.schedule_refresh(ingress);
        }
    }

    /// Refresh the pause of `link` halfway through its time.
    fn schedule_refresh(&mut self, link: PortId) {
        let rate = self.net.port(link).link.rate();
        let at = self.now + pause_time(self.lossless().cfg.quanta, rate) / 2;
        self.events.push(at, Event::PauseRefresh { port: link });
    }

    /// The switch at the far end of `link` still holds it paused: send the PAUSE again.
    pub(super) fn on_pause_refresh(&mut self, link: PortId) {
        if self.lossless().ports[link.0 as usize].holders > 0 {
            let quanta = self.lossless().cfg.quanta;
            self.send_pause(link, quanta);
            self.schedule_refresh(link);
        }
    }

    /// Queue a PAUSE of `quanta` (0: XON) for the upstream end of `link`.
    fn send_pause(&mut self, link: PortId, quanta: u16) {
        let back = reverse(link);
        self.lossless().ports[back.0 as usize].control = Some(quanta);
        self.try_start(back);
    }

    /// Start the next transmission on `port` if it is idle: a waiting PAUSE
    /// first, else the oldest frame unless the link is paused.
    fn try_start(&mut self, port: PortId) {
        let now = self.now;
        let l = self.lossless.as_mut().expect("flow control is on");
        let lp = &mut l.ports[port.0 as usize];
        if lp.busy {
            return;
        }
        if let Some(quanta) = lp.control.take() {
            lp.busy = true;
            lp.pause_frames += 1;
            let link = &mut self.net.port_mut(port).link;
            let done = link.transmit(now, PAUSE_WIRE_BYTES);
            self.events.push(done, Event::TxDone { port });
            self.events.push(link.arrival(done), Event::PauseFrame { port: reverse(port), quanta });
            return;
        }
        if lp.is_paused(now) {
            return;
        }
        let Some((pkt, arrived)) = lp.fifo.pop_front() else { return };
        lp.busy = true;
        let wire = frame::wire_bytes(self.pool.get(pkt).tcp_bytes);
        let p = self.net.port_mut(port);
        let done = p.link.transmit(now, wire);
        p.queue.start_next(arrived, done);
        self.events.push(done, Event::TxDone { port });
        self.events.push(p.link.arrival(done), Event::ArriveVia { pkt, port });
    }

    /// `port` finished a transmission: release the links it holds paused if
    /// it has drained to XON, then send the next frame.
    pub(super) fn on_tx_done(&mut self, port: PortId) {
        let now = self.now;
        let bytes = self.net.port_mut(port).queue.bytes_at(now);
        let l = self.lossless.as_mut().expect("flow control is on");
        l.ports[port.0 as usize].busy = false;
        if bytes <= l.cfg.xon.0 && !l.ports[port.0 as usize].holding.is_empty() {
            let held = std::mem::take(&mut l.ports[port.0 as usize].holding);
            for &link in &held {
                let l = self.lossless();
                l.ports[link.0 as usize].holders -= 1;
                if l.ports[link.0 as usize].holders == 0 {
                    self.send_pause(link, 0);
                }
            }
            let mut held = held;
            held.clear();
            self.lossless().ports[port.0 as usize].holding = held;
        }
        self.try_start(port);
    }

    /// The pause of `port` may have run out: send if it has.
    pub(super) fn on_tx_resume(&mut self, port: PortId) {
        self.try_start(port);
    }

    /// A PAUSE of `quanta` reached `port`: stop its link, or restart it on XON.
    pub(super) fn on_pause_frame(&mut self, port: PortId, quanta: u16) {
        let (now, rate) = (self.now, self.net.port(port).link.rate());
        let until = self.lossless().ports[port.0 as usize].on_pause(now, quanta, rate);
        if until > now {
            self.events.push(until, Event::Resume { port });
        }
        self.try_start(port);
    }
}
