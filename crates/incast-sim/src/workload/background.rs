//! Background traffic beside the synchronized reads.
//!
//! **Models:** long-lived bulk TCP flows (GIP §VII-B): each background flow
//! joins a sender host and a receiver host of its own, and its sender has an
//! unending amount of data to send from time zero. The fabric places them
//! (`net::fabric`): on a star both hosts sit on the switch; in a tree the
//! sender sits on the first edge switch and the receiver on the core, so
//! the flow shares a trunk with the servers' responses but not the
//! client's port — the victim of FAST08 §6's head-of-line blocking when
//! PAUSE stops that trunk. With `tcp_to_server` the flows all send to
//! server 0 instead (SIGCOMM09 §2.2); with `tcp_to_client` they send to
//! client 0 and share its port with the reads (GIP §VII-B's long-term flow
//! through the bottleneck). With `tcp_permutation` the flows run among the
//! run's first `tcp_flows` hosts (the reads' clients and servers, then hosts
//! of their own) as a seeded random cyclic permutation: every host sends one
//! flow and receives one, the permutation traffic matrix of datacenter
//! multipath studies (htsim's `ConnectionMatrix::setPermutation`).
//! One constant-bit-rate UDP source (GIP §VI-C) sends full-sized datagrams
//! back to back at a fixed interval to the client, from a sender host placed
//! as a background sender: on the star's switch, on a tree's first edge
//! switch (so it crosses the trunk and the client's port). With several
//! clients (`workload::clients`) the background flows keep their own
//! receivers (or server 0), and the UDP source sends to client 0.
//! **Deliberately different:** GIP Fig 14's UDP flow ends at a host of its
//! own behind the intermediate link; here it ends at the client.
//! **Not modelled (yet):** UDP with a receiver of its own,
//! background flows in topology files.

use super::clients::Layout;
use crate::rng::Rng;

/// Host of client 0 (the clients are hosts `0..clients`, `workload::clients`).
const CLIENT_0: u32 = 0;
use crate::settings::{Count, Flag, OrWord, Rate};
use crate::time::BitRate;

crate::settings! {
    /// Background traffic.
    ///
    /// Default values: no background flow; each flow has its own receiver;
    /// priority 0 (best effort, 802.1Q Table I-2) for both kinds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct BackgroundConfig {
        /// Long-lived bulk TCP flows, each between its own sender and receiver
        /// (GIP §VII-B); in a tree the sender is on the first edge switch and
        /// the receiver on the core.
        "tcp_flows" tcp_flows: u32 = 0, Count::new(0, MAX_BACKGROUND_FLOWS as u64, "background flows");
        /// Every background flow sends to server 0 instead of a receiver of its
        /// own: SIGCOMM09 §2.2's ten bulk flows into the server a
        /// latency-sensitive client asks for 1 KB at a time.
        "tcp_to_server" tcp_to_server: bool = false, Flag;
        /// Every background flow sends to client 0 instead of a receiver of its
        /// own, so it shares the bottleneck port with the reads: GIP §VII-B's
        /// long-term TCP flow (Figs. 19-20).
        "tcp_to_client" tcp_to_client: bool = false, Flag;
        /// The flows run among the run's first `tcp_flows` hosts (the reads'
        /// hosts, then hosts of their own) as a seeded random permutation
        /// without fixed points: every host sends one flow and receives one.
        "tcp_permutation" tcp_permutation: bool = false, Flag;
        /// A constant-bit-rate UDP source sending full-sized datagrams to the
        /// client at this rate of link time (GIP §VI-C: "100Mbps"), or "off".
        "udp_rate" udp_rate: Option<BitRate> = None, OrWord { word: "off", spec: Rate, what: "a rate" };
        /// IEEE 802.1p priority (0-7) of the background TCP flows; with traffic
        /// in several priorities every port keeps one FIFO per priority, served
        /// round robin (`net::pfc`).
        "priority" priority: u8 = 0, Count::new(0, 7, "");
        /// IEEE 802.1p priority (0-7) of the UDP source.
        "udp_priority" udp_priority: u8 = 0, Count::new(0, 7, "");
    }
}

impl BackgroundConfig {
    /// Whether each background flow has a receiver host of its own.
    pub fn own_receivers(&self) -> bool {
        !(self.tcp_to_server || self.tcp_to_client || self.tcp_permutation)
    }

    /// Hosts of their own the background flows add after the reads' `reads_hosts`.
    pub fn hosts(&self, reads_hosts: u32) -> u32 {
        if self.tcp_permutation {
            self.tcp_flows.saturating_sub(reads_hosts)
        } else if self.own_receivers() {
            2 * self.tcp_flows
        } else {
            self.tcp_flows
        }
    }
}

/// Each background flow's receiver with `tcp_permutation` (flow `i` sends
/// from host `i`), drawn from the run's seed; empty without it.
pub fn partners(bg: &BackgroundConfig, seed: u64) -> Vec<u32> {
    if bg.tcp_permutation {
        Rng::substream(seed, "background/permutation").cycle(bg.tcp_flows)
    } else {
        Vec::new()
    }
}

/// Bytes above the UDP/IP headers that fill a 1518-byte frame: 1472 bytes
/// of UDP payload take the place of a 1460-byte TCP segment.
pub const UDP_FRAME_PAYLOAD: u32 = 1460;

/// Most background flows one run may have.
pub const MAX_BACKGROUND_FLOWS: u32 = 10_000;

/// Bytes a background sender writes at time zero: more than any run can
/// send (a petabyte, 93 days at 1 Gbps).
pub const BULK_BYTES: u64 = 1 << 50;

/// The host of the UDP source: after every other host.
pub fn udp_host(reads: &Layout, bg: &BackgroundConfig) -> u32 {
    reads.hosts() + bg.hosts(reads.hosts())
}

/// The (client-end host, server-end host) of connection `flow`: the reading
/// connections' client and server first ([`Layout::flow_hosts`]), then each
/// background flow's receiver and sender. With `H` hosts for the reads,
/// background flow `i` sends from host `H + 2i` to `H + 2i + 1`, or with
/// `tcp_to_server` (`tcp_to_client`) from host `H + i` to server 0 (client 0),
/// with `tcp_permutation` from host `i` to `partners[i]` ([`partners`]).
pub fn flow_hosts(flow: u32, reads: &Layout, bg: &BackgroundConfig, partners: &[u32]) -> (u32, u32) {
    let first = reads.connections();
    if flow < first {
        reads.flow_hosts(flow)
    } else if bg.tcp_permutation {
        let sender = flow - first;
        (partners[sender as usize], sender)
    } else if bg.tcp_to_server {
        (reads.server_host(0), reads.hosts() + (flow - first))
    } else if bg.tcp_to_client {
        (CLIENT_0, reads.hosts() + (flow - first))
    } else {
        let sender = reads.hosts() + 2 * (flow - first);
        (sender + 1, sender)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_flows_come_after_the_servers() {
        let own = BackgroundConfig { tcp_flows: 2, ..Default::default() };
        let one = Layout::one_client(3);
        assert_eq!(flow_hosts(0, &one, &own, &[]), (0, 1));
        assert_eq!(flow_hosts(2, &one, &own, &[]), (0, 3));
        assert_eq!(flow_hosts(3, &one, &own, &[]), (5, 4));
        assert_eq!(flow_hosts(4, &one, &own, &[]), (7, 6));
        assert_eq!(udp_host(&one, &own), 8);
        let to_server = BackgroundConfig { tcp_to_server: true, ..own };
        assert_eq!(flow_hosts(3, &one, &to_server, &[]), (1, 4));
        assert_eq!(flow_hosts(4, &one, &to_server, &[]), (1, 5));
        let to_client = BackgroundConfig { tcp_to_client: true, ..own };
        assert_eq!(flow_hosts(3, &one, &to_client, &[]), (0, 4));
        assert_eq!(flow_hosts(4, &one, &to_client, &[]), (0, 5));
        assert_eq!(udp_host(&one, &to_client), 6);
    }

    /// With two clients the background hosts follow both clients and every server.
    #[test]
    fn background_hosts_follow_every_client_and_server() {
        use crate::workload::clients::ServerSets;
        let own = BackgroundConfig { tcp_flows: 1, ..Default::default() };
        let two = Layout { clients: 2, servers: 3, sets: ServerSets::Disjoint };
        assert_eq!(flow_hosts(6, &two, &own, &[]), (9, 8));
        let to_server = BackgroundConfig { tcp_to_server: true, ..own };
        assert_eq!(flow_hosts(6, &two, &to_server, &[]), (2, 8));
    }

    /// A permutation of four flows on one client and one server: the
    /// reads' two hosts send and receive one flow each, as the two after them do.
    #[test]
    fn a_permutation_sends_from_every_host_to_its_partner() {
        let perm = BackgroundConfig { tcp_flows: 4, tcp_permutation: true, ..Default::default() };
        let one = Layout::one_client(1);
        let partners = partners(&perm, 7);
        let flows: Vec<(u32, u32)> = (1..5).map(|f| flow_hosts(f, &one, &perm, &partners)).collect();
        let mut receivers: Vec<u32> = flows.iter().map(|&(r, _)| r).collect();
        receivers.sort_unstable();
        assert_eq!(receivers, vec![0, 1, 2, 3]);
        assert_eq!(flows.iter().map(|&(_, s)| s).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert!(flows.iter().all(|&(r, s)| r != s));
        assert_eq!(perm.hosts(one.hosts()), 2);
        assert_eq!(udp_host(&one, &perm), 4);
    }
}
