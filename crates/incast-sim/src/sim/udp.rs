//! The engine's constant-bit-rate UDP source (`background.udp_rate`).
//!
//! **Models:** one source host sends a full-sized datagram to client 0
//! every `interval`, from time zero; nothing listens at the client but a
//! count of the payload bytes delivered. Its datagrams carry the flow
//! number one past the last TCP connection.
//! **Deliberately different:** see `workload::background`.
//! **Not modelled:** see `workload::background`.

use super::ahead::NO_PORT;
use super::network::DataPlane;
use super::{Event, CLIENT0};
use crate::event::EventQueue;
use crate::net::{frame, Direction, Network, Packet, PktId, PortId};
use crate::scenario::Scenario;
use crate::tcp::Segment;
use crate::time::{SimDuration, SimTime};
use crate::workload::background::{udp_host, UDP_FRAME_PAYLOAD};
use crate::workload::clients::Layout;

/// The UDP source and what it delivered.
pub(super) struct UdpSource {
    /// The source's NIC and datagram interval, when `background.udp_rate` is set.
    source: Option<(PortId, SimDuration)>,
    /// The flow number UDP datagrams carry (one past the last connection; `u32::MAX` without a source).
    pub(super) flow: u32,
    /// UDP payload bytes delivered to the client.
    pub(super) delivered: u64,
}

impl UdpSource {
    /// The source of `s` on `net`, sending after `flows` TCP connections.
    pub(super) fn new(s: &Scenario, net: &Network, reads: Layout, flows: u32) -> Self {
        let source = s.background.udp_rate.map(|rate| {
            let wire = frame::wire_bytes(UDP_FRAME_PAYLOAD);
            (net.nic(udp_host(&reads, &s.background)), rate.tx_time(wire))
        });
        // Without a source no datagram carries a flow number (the open-loop flows' slots follow the connections).
        let flow = if source.is_some() { flows } else { u32::MAX };
        UdpSource { source, flow, delivered: 0 }
    }

    /// Is there a source?
    pub(super) fn is_on(&self) -> bool {
        self.source.is_some()
    }

    /// The source sends a full-sized datagram to client 0 at `now` and schedules the next.
    #[cold]
    pub(super) fn send(&mut self, net: &mut DataPlane, events: &mut EventQueue<Event>, now: SimTime) {
        let Some((nic, interval)) = self.source else { return };
        let seg = Segment::default();
        let (flow, tcp_bytes) = (self.flow, UDP_FRAME_PAYLOAD);
        let pkt = net.pool.alloc(Packet { seg, flow, dir: Direction::ToClient, dst: CLIENT0, tcp_bytes });
        net.sent += 1;
        net.forward::<true>(events, now, pkt, nic, NO_PORT, tcp_bytes, flow);
        events.push(now + interval, Event::Datagram);
    }

    /// A UDP datagram reached client 0: nothing listens but the count.
    #[cold]
    pub(super) fn on_delivered(&mut self, net: &mut DataPlane, pkt: PktId) {
        self.delivered += u64::from(UDP_FRAME_PAYLOAD + 12);
        net.pool.release(pkt);
    }
}
