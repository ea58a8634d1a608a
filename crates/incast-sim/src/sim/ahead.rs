//! Hops taken ahead: a switch port that only one NIC feeds takes each frame
//! when the NIC sends it, and the switch runs no arrival event for it.
//!
//! **Models:** the same network, in fewer events. A frame from a host's NIC
//! reaches its first switch at an instant known when the NIC queues it
//! (the NIC's departures are known, `net`). When every route through the
//! switch's output port toward the frame's destination enters the switch
//! from that NIC, the port sees its frames in the order and at the instants
//! they reach the switch whenever they are offered: its admission and
//! departure are computed when the frame is sent, at the instant it reaches
//! the switch, and its arrival at the far end is scheduled at once. In the
//! incast star these are the ports toward the servers, fed by the client's
//! requests and ACKs alone: one event fewer an ACK. The arrival at the far
//! end keeps the place among same-instant events that the switch's arrival
//! would have given it (it becomes certain when the frame reaches the
//! switch, `EventQueue::push_after_hop`); only an event scheduled for the
//! same picosecond within the same 256 ps before the frame reached the
//! switch, and before it in the queue, could order differently. At the
//! end of the run, the frames that had not reached the switch are taken back
//! out of the port's counters (frames, drops, peaks and mean occupancy), so
//! port tables and drop counts are those of a run that visits the switch.
//! Ports qualify with their own buffer (no shared memory), no loss, wide-area
//! delay or host handling time on their link, and no occupancy log; and
//! only when the network runs none of PAUSE, classes, ECN, rude policing,
//! another arrival order, a NIC queue limit or the UDP source, and routes
//! on one path (not over equal-cost next hops, `net::ecmp`).
//! **Deliberately different:** the run's event count (`events`) leaves
//! these hops out, and so does the cap on events of a run without a duration.
//! Only a frame's first switch is taken ahead.

use super::endpoints::Route;
use crate::event::Ticket;
use crate::net::{Network, Node, Peaks, PktId, PortId};
use crate::time::SimTime;

/// No port: the frame's first switch runs its arrival as an event.
pub(super) const NO_PORT: PortId = PortId(u32::MAX);

/// The hops taken ahead, and what the end of a run may take back.
#[derive(Default)]
pub(super) struct Ahead {
    /// `tickets[pkt]`: the switch arrival that the packet in slot `pkt`
    /// skipped (written for every packet taken ahead; stale for others).
    tickets: Vec<Ticket>,
    /// Frames a port dropped ahead of time: the arrival each skipped, the
    /// port and the frame's flow; kept while that arrival may not have run.
    pub(super) drops: Vec<(Ticket, PortId, u32)>,
    /// Peaks a frame taken ahead raised: the arrival it skipped, the port,
    /// and the port's (bytes, frames) peaks before; kept likewise.
    pub(super) peaks: Vec<(Ticket, PortId, Peaks)>,
    /// Frames dropped ahead that had not reached their switch when the run
    /// ended: in flight still.
    pub(super) unborn: u64,
}

impl Ahead {
    /// The port each route's frames are offered to when they are sent, or
    /// [`NO_PORT`]: the port after the route's NIC when every route through
    /// it leaves from that NIC and the port is one [`Network::send`] serves
    /// without its special path and logs nothing.
    pub(super) fn ports(net: &Network, routes: &[Route]) -> Vec<PortId> {
        let paths: Vec<Vec<PortId>> = routes
            .iter()
            .map(|r| {
                let Node::Host { host, .. } = *net.node(net.port(r.nic).node) else {
                    unreachable!("a NIC is a host's")
                };
                net.path(host, r.dst).expect("a validated scenario routes every connection")
            })
            .collect();
        // The NIC feeding each port, or `NO_PORT` once two do.
        let mut feeder: Vec<Option<PortId>> = vec![None; net.ports()];
        for path in &paths {
            for hop in path.windows(2) {
                let f = &mut feeder[hop[1].0 as usize];
                *f = match *f {
                    Some(p) if p != hop[0] => Some(NO_PORT),
                    _ => Some(hop[0]),
                };
            }
        }
        paths
            .iter()
            .map(|path| match path.get(1) {
                Some(&port) if feeder[port.0 as usize] == Some(path[0]) && net.port(port).takes_ahead() => port,
                _ => NO_PORT,
            })
            .collect()
    }

    /// The packet in slot `pkt` skipped the switch arrival `ticket`.
    #[inline(always)]
    pub(super) fn taken(&mut self, pkt: PktId, ticket: Ticket) {
        let i = pkt.index();
        if i >= self.tickets.len() {
            self.tickets.resize(i + 1, Ticket::NONE);
        }
        self.tickets[i] = ticket;
    }

    /// The switch arrival that the packet in slot `pkt` skipped.
    pub(super) fn ticket(&self, pkt: PktId) -> Ticket {
        self.tickets[pkt.index()]
    }

    /// `port` dropped a frame of `flow` taken ahead at `now` for arrival `ticket`.
    #[cold]
    pub(super) fn dropped(&mut self, now: SimTime, ticket: Ticket, port: PortId, flow: u32) {
        self.drops.retain(|d| d.0.time() >= now);
        self.drops.push((ticket, port, flow));
    }

    /// A frame taken ahead at `now` for arrival `ticket` raised the peaks of
    /// `port` from `before`.
    #[cold]
    pub(super) fn peaked(&mut self, now: SimTime, ticket: Ticket, port: PortId, before: Peaks) {
        self.peaks.retain(|p| p.0.time() >= now);
        self.peaks.push((ticket, port, before));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{run_as, Sim};
    use super::*;
    use crate::scenario::Scenario;
    use crate::stats::RunResult;
    use crate::time::SimDuration;
    use serde_json::json;

    const CAP: u64 = 1 << 26;

    /// `s` run as it is, and with every switch visited as an event, with
    /// `check` asked of the first run once it has run (the frames in flight
    /// past a port that took them ahead): the results differ in the event
    /// count alone, the first run having no more.
    fn same_either_way(s: &Scenario, check: impl Fn(&Sim<false, false>)) -> RunResult {
        let mut visited = Sim::<false, false>::new(s);
        assert!(visited.hosts.routes.iter().any(|r| r.ahead != NO_PORT), "the scenario takes hops ahead");
        for route in &mut visited.hosts.routes {
            route.ahead = NO_PORT;
        }
        visited.run(CAP);
        let mut taken = Sim::<false, false>::new(s);
        taken.run(CAP);
        check(&taken);
        let (mut visited, taken) = (visited.finish(), taken.finish());
        assert!(taken.summary.events <= visited.summary.events, "{:?}", (taken.summary.events, visited.summary.events));
        visited.summary.events = taken.summary.events;
        assert_eq!(taken, visited);
        taken
    }

    #[test]
    fn the_ports_toward_servers_take_the_clients_frames_ahead_and_the_clients_port_does_not() {
        let s = Scenario::fast08(4);
        let sim = Sim::<false, false>::new(&s);
        let (client, server) = (&sim.hosts.routes[0], &sim.hosts.routes[1]);
        assert_ne!(client.ahead, NO_PORT, "the port toward a server is fed by the client alone");
        assert_eq!(server.ahead, NO_PORT, "four servers feed the port toward the client");
        let servers: Vec<_> = sim.hosts.routes.iter().step_by(2).map(|r| r.ahead).collect();
        assert!(servers.windows(2).all(|w| w[0] != w[1]), "{servers:?}");
    }

    #[test]
    fn a_run_that_stops_on_its_last_block_counts_at_the_ports_only_the_frames_that_reached_them() {
        let s = json!({"servers": 16, "blocks": 3, "tcp": {"delayed_ack": "off"}, "stats": {"timeouts": true}});
        let r = same_either_way(&Scenario::from_json(&s).unwrap(), |sim| {
            let frames = sim.past_ahead();
            assert!(frames.iter().any(|&(pkt, _, _)| !sim.events.ran(sim.net.ahead.ticket(pkt))), "{frames:?}");
        });
        assert!(r.summary.timeouts > 0);
    }

    #[test]
    fn a_duration_that_ends_with_frames_between_the_client_and_a_switch_takes_them_back() {
        let mut s = Scenario::fast08(4);
        // Stops while the requests cross the client's link (they raise the
        // ports' peaks first), then at many instants of the first block, each
        // with ACKs on the wire.
        for ns in (500..6_000).step_by(500).chain((40_000..400_000).step_by(7_000)) {
            s.stop.duration = Some(SimDuration::from_nanos(ns));
            same_either_way(&s, |_| {});
        }
    }

    #[test]
    fn drops_and_peaks_at_a_slow_port_taken_ahead_are_those_of_a_visited_switch() {
        // The client's ACKs at 1 Gbps into 20 Mbps links toward the servers, 3 frames of buffer there.
        let links: Vec<_> = (0..4)
            .map(|i| json!({"a": "x", "b": format!("s{i}"), "rate": "20Mbps", "rate_ba": "1Gbps"}))
            .chain([json!({"a": "c", "b": "x"})])
            .collect();
        let mut nodes = vec![json!({"name": "c", "kind": "client"}), json!({"name": "x", "kind": "switch"})];
        nodes.extend((0..4).map(|i| json!({"name": format!("s{i}"), "kind": "server"})));
        let mut s = Scenario::from_json(&json!({"servers": 4, "blocks": 2, "switch": {"buffer": "3pkt"},
            "topology": {"kind": "graph", "nodes": nodes, "links": links}}))
        .unwrap();
        let r = same_either_way(&s, |_| {});
        let toward_servers = r.ports.iter().filter(|p| p.peer.starts_with('s'));
        assert!(toward_servers.clone().any(|p| p.drops > 0 && p.peak_packets == 3), "{:?}", r.ports);
        for us in (1000..1600).step_by(37) {
            s.stop.duration = Some(SimDuration::from_micros(us));
            same_either_way(&s, |_| {});
        }
    }

    #[test]
    fn the_plain_build_and_the_full_one_take_the_same_hops_ahead() {
        let mut s = Scenario::fast08(8);
        s.stop.blocks = Some(2);
        assert_eq!(run_as::<false, false>(&s, CAP).unwrap(), run_as::<true, true>(&s, CAP).unwrap());
    }
}
