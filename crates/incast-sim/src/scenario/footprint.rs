//! The memory a run will need, estimated before anything is built, and the
//! budget it must fit (`memory_budget`).
//!
//! **Models:** the parts that grow with the network, each as many of the
//! structure that holds it as the scenario makes: two TCP endpoints per
//! connection (with the SACK scoreboard where SACK is on); two output ports
//! per link (`net::Port`); the packets each connection can have in flight
//! (the largest window its receiver may offer or its whole response,
//! whichever is smaller, in segments, with
//! their ACKs and event-queue entries); one route per host in every switch's
//! table (per port in a fat tree's or leaf-spine's, `net::ecmp`); and per connection its result rows ([`RESULT_ROW_BYTES`]). Each part is charged to the setting that
//! drives it, so a refusal names the one to change.
//! **Not modelled:** what grows with simulated time (the timeout rows of
//! `stats.timeouts`, flow traces, the packet capture, and packets in flight
//! beyond the windows, retransmissions queued at a NIC faster than it sends
//! them), which the run holds to what this estimate leaves of the budget
//! while it goes (`sim::record`); the goodput bins (`trace.goodput_bin`, capped apart at
//! ten million); the state an endpoint keeps out of line for the parts a
//! Reno run leaves off (Cubic's, DCTCP's, Linux's and the adaptive delayed
//! ACK's, the Linux and ns-2 RTO estimators', RACK-TLP's, PRR's): at most
//! 472 bytes against the endpoint's 1,080; allocator overhead; the Python
//! side's copies of the tables.

use super::Scenario;
use crate::net::clos::Address;
use crate::net::fabric::TopologyConfig;
use crate::net::{Packet, Port, PortId};
use crate::tcp::sack::Scoreboard;
use crate::tcp::Endpoint;
use crate::time::Bytes;
use std::mem::size_of;

/// The budget when the scenario sets none: what a laptop can spare.
pub const DEFAULT_MEMORY_BUDGET: Bytes = Bytes::mib(4096);

/// Bytes of results per connection: its flow row and its switch-port row, as
/// the engine keeps them and as the JSON that carries them (about 430 bytes
/// per server measured at 10,000 servers), with room for the columns built
/// from them.
pub const RESULT_ROW_BYTES: u64 = 1024;

/// What the part for the packets in flight is called: the run counts what
/// they really hold against this estimate of them (`sim::record`).
pub const IN_FLIGHT: &str = "packets in flight";

/// Bytes of one event-queue entry (time key and event).
const EVENT_BYTES: u64 = 24;

/// One part of the estimate: the setting that drives it, what it is, bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The dotted setting that makes this part large.
    pub setting: &'static str,
    /// What the bytes hold.
    pub what: &'static str,
    /// Estimated bytes.
    pub bytes: u64,
}

impl Scenario {
    /// The estimate of what this run will hold in memory, by part. Built from
    /// the fabric's node and link lists only: no route table, endpoint or
    /// packet is allocated to make it.
    pub fn footprint(&self) -> Vec<Part> {
        let reads = self.reads();
        let conns = u64::from(reads.connections()) + u64::from(self.background.tcp_flows);
        let mut endpoint = 2 * size_of::<Endpoint>() as u64;
        if self.tcp.sack_enabled() {
            endpoint += size_of::<Scoreboard>() as u64;
        }
        let mss = u64::from(self.tcp.mss.max(1));
        let rcv_wnd = self.tcp.rcv_window.largest(self.tcp.rcv_wnd.get(), self.tcp.rcv_buf_max.get());
        // Server 0's response is the largest (a block's remainder goes to the first servers).
        let window = rcv_wnd.min(self.response_bytes(0).max(mss)).div_ceil(mss) + 1;
        // A data packet and its ACK, each in the pool and in the event queue.
        let in_flight = window * 2 * (size_of::<Packet>() as u64 + EVENT_BYTES);
        let (hosts, switches, links) = match self.fabric() {
            Ok(f) => {
                let hosts = f.nodes.iter().filter(|n| n.host.is_some()).count() as u64;
                (hosts, f.nodes.len() as u64 - hosts, f.links.len() as u64)
            }
            // An invalid fabric is refused by the checks after this one.
            Err(_) => (0, 0, 0),
        };
        let routes_setting = match self.topology {
            TopologyConfig::Tree(_) => "topology.edge_switches",
            TopologyConfig::Graph(_) => "topology.nodes",
            TopologyConfig::Star => "servers",
            TopologyConfig::FatTree(_) => "topology.k",
            TopologyConfig::LeafSpine(_) => "topology.leaves",
        };
        // A single-path switch holds a port per host; a multipath one a port
        // per neighbour (each link an entry at each switch end) and the
        // network each host's address (`net::ecmp`).
        let routes = if self.topology.multipath_kind().is_some() {
            links * 2 * size_of::<PortId>() as u64 + hosts * size_of::<Address>() as u64
        } else {
            switches * hosts * size_of::<PortId>() as u64
        };
        vec![
            Part { setting: "servers", what: "endpoints", bytes: conns * endpoint },
            Part { setting: "servers", what: IN_FLIGHT, bytes: conns * in_flight },
            Part { setting: "servers", what: "result rows", bytes: conns * RESULT_ROW_BYTES },
            Part { setting: "servers", what: "ports", bytes: links * 2 * size_of::<Port>() as u64 },
            Part { setting: routes_setting, what: "route tables", bytes: routes },
        ]
    }

    /// The footprint fits `memory_budget`, or the error names the setting
    /// behind the largest part.
    pub(super) fn check_footprint(&self) -> Result<(), crate::SimError> {
        let budget = self.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET).get();
        let parts = self.footprint();
        let total: u64 = parts.iter().map(|p| p.bytes).sum();
        if total <= budget {
            return Ok(());
        }
        let largest = parts.iter().max_by_key(|p| p.bytes).expect("the estimate has parts");
        let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30));
        let shown: Vec<String> =
            parts.iter().filter(|p| p.bytes > total / 20).map(|p| format!("{} {}", p.what, gib(p.bytes))).collect();
        Err(crate::SimError::InvalidScenario {
            field: largest.setting.to_owned(),
            message: format!(
                "the run would need about {} of memory ({}), above memory_budget ({}); make it smaller, \
                 or raise memory_budget if this machine has the memory",
                gib(total),
                shown.join(", "),
                crate::settings::Size::format(budget)
            ),
        })
    }
}
