//! The engine's TCP endpoints: two per connection, where each one sends
//! and when it wants to be woken.
//!
//! **Models:** connection `i` joins its client and server hosts
//! (`workload::clients`, `workload::background`); each end is a sans-IO
//! [`Endpoint`] established at time zero with one RTT sample already taken,
//! as the SYN/SYN-ACK exchange would have given it along the connection's
//! path (a minimum-size frame each way). Each endpoint's retransmission
//! timer draws from its own seeded substream. Also kept here, because they
//! act on the endpoints: RUDE's sender-side random loss (§4) and the switch
//! of every endpoint back to polite congestion control (§3.2), and each
//! client's ICTCP controller over its connections' receive windows.
//! With `link.tx_queue`, an endpoint whose host's NIC queue is full sends
//! nothing more until a frame has left it, then is woken to go on, as a
//! socket waits on a full device queue (or on TCP Small Queues); with
//! `tcp.local_congestion` the refusal also cuts its window
//! (`tcp::local_congestion`).
//! **Deliberately different:** TCP timers are lazy: each endpoint has at
//! most one tracked wake-up in the event queue, and a wake-up that finds
//! nothing due simply re-arms at the endpoint's current deadline.
//! **Not modelled:** connection setup and teardown, host processing delays.

use super::ahead::NO_PORT;
use super::{endpoint_of, Event};
use crate::event::EventQueue;
use crate::net::{Direction, Network, PortId};
use crate::rng::Rng;
use crate::scenario::Scenario;
use crate::tcp::forensics::Timeout;
use crate::tcp::ictcp::Ictcp;
use crate::tcp::rude::RudeRequest;
use crate::tcp::{Endpoint, RudeOff, TcpConfig};
use crate::time::{SimDuration, SimTime};
use crate::workload::background::{flow_hosts, partners};
use crate::workload::clients::Layout;

/// Where an endpoint's segments go.
#[derive(Clone, Copy)]
pub(super) struct Route {
    /// The NIC port of the endpoint's host.
    pub(super) nic: PortId,
    /// The peer's host.
    pub(super) dst: u32,
    /// The direction on the connection.
    pub(super) dir: Direction,
    /// The port of the first switch that takes the endpoint's frames when
    /// they are sent (`sim::ahead`), or `NO_PORT`.
    pub(super) ahead: PortId,
}

/// Every TCP endpoint, with its route and its pending wake-up.
pub(super) struct Endpoints<const EXTRAS: bool, const PACED: bool> {
    /// `eps[endpoint_of(flow, dir)]`: the reading connections first, then the background flows'.
    pub(super) eps: Vec<Endpoint<EXTRAS, PACED>>,
    /// `routes[ep]` is where endpoint `ep` sends.
    pub(super) routes: Vec<Route>,
    /// The wake-up each endpoint has in the event queue (`SimTime::NEVER`: none).
    wake_at: Vec<SimTime>,
    /// When each endpoint waiting for room in its host's NIC queue is woken
    /// (`link.tx_queue`; empty without the limit).
    nic_wait: Vec<SimTime>,
    /// Sender-side random loss, parts per billion, its draws and its count.
    pub(super) send_loss_ppb: u32,
    send_loss_rng: Rng,
    pub(super) send_losses: u64,
    /// When every endpoint turns rudeness off (`tcp.rude_off_at`), and how.
    pub(super) rude_off_at: Option<SimDuration>,
    rude_off: RudeRequest,
    /// After `tcp.rude_off_at`: the endpoints still rude, and when the last one turned polite.
    pub(super) rude_left: Vec<u32>,
    pub(super) rude_polite_at: Option<SimTime>,
    /// Each client's ICTCP controller, when on (else empty).
    pub(super) ictcp: Vec<Ictcp>,
    /// TCP of the open-loop flows' endpoints (`tcp.rude_servers` keeps them polite), and the seed.
    open_tcp: TcpConfig,
    seed: u64,
}

impl<const EXTRAS: bool, const PACED: bool> Endpoints<EXTRAS, PACED> {
    /// The endpoints of `flows` connections of `s` on `net`: the reading
    /// connections of `reads` first, then the background flows'.
    pub(super) fn new(s: &Scenario, net: &Network, reads: Layout, flows: u32) -> Self {
        let n = s.servers;
        let conns = reads.connections();
        let partners = partners(&s.background, s.seed);
        // The handshake's sample: a minimum-size frame each way along the path.
        let handshake_rtt = |flow| {
            let (a, b) = flow_hosts(flow, &reads, &s.background, &partners);
            let way = |a, b| net.one_way(a, b, 0).expect("a validated scenario routes every connection");
            way(a, b) + way(b, a)
        };
        // Each endpoint's retransmission timer draws from its own substream.
        let polite = TcpConfig { rude: false, ..s.tcp };
        let mut eps: Vec<Endpoint<EXTRAS, PACED>> = (0..2 * flows)
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
                let (client, server) = flow_hosts(flow, &reads, &s.background, &partners);
                [
                    Route { nic: net.nic(client), dst: server, dir: Direction::ToServer, ahead: NO_PORT },
                    Route { nic: net.nic(server), dst: client, dir: Direction::ToClient, ahead: NO_PORT },
                ]
            })
            .collect();
        Endpoints {
            eps,
            routes,
            wake_at: vec![SimTime::NEVER; 2 * flows as usize],
            nic_wait: if s.link.tx_queue.is_some() { vec![SimTime::ZERO; 2 * flows as usize] } else { Vec::new() },
            send_loss_ppb: s.tcp.send_loss_ppb,
            send_loss_rng: Rng::substream(s.seed, "send_loss"),
            send_losses: 0,
            rude_off_at: s.tcp.rude_off_at,
            rude_off: match s.tcp.rude_off {
                RudeOff::Now => RudeRequest::OffNow,
                RudeOff::Nicely => RudeRequest::OffNicely,
            },
            rude_left: Vec::new(),
            rude_polite_at: None,
            ictcp,
            open_tcp: if s.tcp.rude_servers.is_some() { polite } else { s.tcp },
            seed: s.seed,
        }
    }

    /// Open connection `flow` at `now` (`sim::traffic`): a new one past the
    /// last, or a slot whose flow has ended, with fresh endpoints at
    /// `receiver` (the client end) and `sender` (the server end); `rtt` is
    /// the handshake's sample and `n` the flow's number among the open-loop
    /// flows, which names its timers' substreams.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open(
        &mut self,
        net: &Network,
        flow: u32,
        (receiver, sender): (u32, u32),
        now: SimTime,
        rtt: SimDuration,
        n: u32,
    ) {
        let (cfg, seed) = (&self.open_tcp, self.seed);
        let ep = |side: &str| {
            Endpoint::new_seeded(cfg, now, Some(rtt), Rng::substream(seed, &format!("traffic/rto/{n}/{side}")))
        };
        let routes = [
            Route { nic: net.nic(receiver), dst: sender, dir: Direction::ToServer, ahead: NO_PORT },
            Route { nic: net.nic(sender), dst: receiver, dir: Direction::ToClient, ahead: NO_PORT },
        ];
        let first = endpoint_of(flow, Direction::ToClient);
        if first == self.eps.len() {
            self.eps.extend([ep("client"), ep("server")]);
            self.routes.extend(routes);
            self.wake_at.extend([SimTime::NEVER; 2]);
            if !self.nic_wait.is_empty() {
                self.nic_wait.extend([SimTime::ZERO; 2]);
            }
        } else {
            // Wake-ups pending for the old endpoints find the new ones' deadlines (timers are lazy).
            (self.eps[first], self.eps[first + 1]) = (ep("client"), ep("server"));
            (self.routes[first], self.routes[first + 1]) = (routes[0], routes[1]);
        }
    }

    /// True when the endpoints run a part the plain build leaves out:
    /// sender-side loss, Rude TCP turned off on a schedule, ICTCP, or a
    /// mechanism of an endpoint's. (Waiting for room at a NIC comes of the
    /// NIC queue limit, which `DataPlane` reports.)
    pub(super) fn uses_optional_parts(&self) -> bool {
        self.send_loss_ppb > 0
            || self.rude_off_at.is_some()
            || !self.ictcp.is_empty()
            || self.eps.iter().any(Endpoint::uses_optional_parts)
    }

    /// Connections, reading and background.
    pub(super) fn connections(&self) -> u32 {
        self.eps.len() as u32 / 2
    }

    /// Endpoint `ep`'s wake-up came due at `now`: the timeout it suffered, if any.
    #[inline]
    pub(super) fn on_wake(&mut self, ep: usize, now: SimTime) -> Option<Timeout> {
        self.woke(ep, now);
        self.eps[ep].on_timer(now)
    }

    /// True when a timer of endpoint `ep` is due at `now`.
    #[inline]
    pub(super) fn due(&self, ep: usize, now: SimTime) -> bool {
        self.eps[ep].poll_timeout().is_some_and(|d| d <= now)
    }

    /// Endpoint `ep`'s wake-up came due at `now` with no timer due: its
    /// deadlines moved on (timers are not cancelled). Keep it armed at the new ones.
    #[inline]
    pub(super) fn on_stale_wake(&mut self, events: &mut EventQueue<Event>, now: SimTime, ep: usize) {
        self.woke(ep, now);
        self.arm(events, now, ep);
    }

    /// The wake-up armed for `now`, if it was endpoint `ep`'s, has come.
    #[inline]
    fn woke(&mut self, ep: usize, now: SimTime) {
        if self.wake_at[ep] == now {
            self.wake_at[ep] = SimTime::NEVER;
        }
    }

    /// Keep endpoint `ep`'s wake-up armed at its current deadline (not before `now`).
    // Inline always: it runs after every event an endpoint handles and on
    // every stale wake-up, and with `#[inline]` alone LLVM keeps it out of line.
    #[inline(always)]
    pub(super) fn arm(&mut self, events: &mut EventQueue<Event>, now: SimTime, ep: usize) {
        if let Some(deadline) = self.eps[ep].poll_timeout() {
            let deadline = deadline.max(now);
            if deadline < self.wake_at[ep] {
                self.wake_at[ep] = deadline;
                events.push(deadline, Event::Wake { ep: ep as u32 });
            }
        }
    }

    /// Endpoint `ep` found its host's NIC queue full at `now`: wake it at
    /// `room`, when a frame has left, unless a wake-up no later is pending.
    #[cold]
    pub(super) fn wait_for_nic(&mut self, events: &mut EventQueue<Event>, now: SimTime, ep: usize, room: SimTime) {
        let pending = self.nic_wait[ep];
        if pending <= now || pending > room {
            self.nic_wait[ep] = room;
            events.push(room, Event::Wake { ep: ep as u32 });
        }
    }

    /// RUDE §4's sender-side loss: discard this data segment before the wire?
    #[cold]
    pub(super) fn lose_before_sending(&mut self) -> bool {
        let lost = self.send_loss_rng.below(1_000_000_000) < u64::from(self.send_loss_ppb);
        self.send_losses += u64::from(lost);
        lost
    }

    /// Endpoint `ep` turns rudeness off with the scenario's semantics (RUDE §3.2).
    #[cold]
    pub(super) fn rude_off(&mut self, ep: usize) {
        self.eps[ep].set_rude(self.rude_off);
        self.rude_left.push(ep as u32);
    }

    /// Drop the endpoints that stopped being rude; once none is left, note `now`.
    #[cold]
    pub(super) fn note_polite(&mut self, now: SimTime) {
        let eps = &self.eps;
        self.rude_left.retain(|&ep| eps[ep as usize].rude());
        if self.rude_left.is_empty() {
            self.rude_polite_at.get_or_insert(now);
        }
    }

    /// The client end `ep` of a connection of `reads` received `bytes` of
    /// response at `now`: its client's ICTCP controller may move the receive window.
    #[cold]
    pub(super) fn ictcp_on_data(&mut self, ep: usize, now: SimTime, bytes: u64, reads: &Layout) {
        let flow = (ep / 2) as u32;
        let (c, j) = (reads.client_of(flow), flow % reads.servers);
        let rtt = self.eps[ep].srtt().unwrap_or(SimDuration::ZERO);
        if let Some(w) = self.ictcp[c as usize].on_data(now, j as usize, bytes, rtt) {
            self.eps[ep].set_rcv_wnd(w);
        }
    }
}
