//! What a run reports: a summary, one row per client, one row per flow, one row per block,
//! (unless `stats.timeouts` is off) one row per retransmission timeout, and
//! the time series the scenario's `trace` table turns on ([`trace`]) and,
//! with `trace.pcap`, the packets seen at each host ([`pcap`]).
//!
//! Column names carry their unit (`goodput_mbps`, `time_ms`) and are the same
//! in the simulator's and the real-socket benchmark's output.

pub mod columns;
pub mod fct;
pub mod pcap;
mod percentile;
pub mod trace;

pub use percentile::Percentiles;
pub use trace::Traces;

pub use crate::tcp::forensics::{GipClass, GipTimeoutClasses, TimeoutClass, TimeoutClasses};

use crate::tcp::forensics::Timeout;

use crate::settings::Flag;
use crate::time::SimDuration;
use serde::Serialize;

crate::settings! {
    /// What the run records beyond its counters.
    ///
    /// Default values: `timeouts` true. Per-class timeout counters and each
    /// block's `max_flow_timeouts` are always kept; the per-timeout table grows
    /// with the number of timeouts, so long sweeps may turn it off.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct StatsConfig {
        /// Keep one row per retransmission timeout (Result.timeouts); false keeps only the class counters.
        "timeouts" timeouts: bool = true, Flag;
    }
}

/// Whole-run figures. With several clients (`workload.clients`) every
/// figure is the aggregate over all of them; `client_goodput_mbps` and
/// [`RunResult::clients`] split it by client.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Application bytes delivered to the clients, over `sim_time_s`, in Mbit/s.
    pub goodput_mbps: f64,
    /// Each client's share of `goodput_mbps`, client 0 first.
    pub client_goodput_mbps: Vec<f64>,
    /// Payload bytes that reached the clients, retransmitted duplicates
    /// included, over `sim_time_s`: what the clients' links carried as data
    /// (never above their rate; dropped packets do not count).
    pub throughput_mbps: f64,
    /// Best goodput the clients' links can carry together with full-sized
    /// segments (one client link's best times the number of clients).
    pub best_goodput_mbps: f64,
    /// `goodput_mbps / best_goodput_mbps`.
    pub utilization: f64,
    /// Blocks completed, all clients together.
    pub blocks: u64,
    /// Elapsed simulated time the rates are computed over: the completion of
    /// the last block in block-limited runs, else the run's duration.
    pub sim_time_s: f64,
    /// Application bytes delivered to the client.
    pub bytes_delivered: u64,
    /// Retransmission timeouts, all endpoints.
    pub timeouts: u64,
    /// `timeouts` by FAST08 §5.1 class (they sum to `timeouts`).
    pub timeout_classes: TimeoutClasses,
    /// `timeouts` by GIP §III class (they sum to `timeouts`).
    pub gip_timeout_classes: GipTimeoutClasses,
    /// Timeouts F-RTO or Eifel judged spurious and undid (`tcp.spurious_rto`).
    pub spurious_timeouts: u64,
    /// Timeouts whose segment (the one at SND.UNA, which the timeout resends)
    /// had a copy sent before the timer fired that no port, link or sender-side
    /// loss had dropped by then: it had reached the receiver (its ACKs may have
    /// been lost) or was still on its way. The engine's ground truth for CMU09
    /// §8.1's spurious timeouts,
    /// which come of a sudden rise in delay rather than a drop; every timeout
    /// is judged, repeated ones included, whatever `tcp.spurious_rto` is.
    pub undropped_timeouts: u64,
    /// `timeout_classes.lost_retransmit` whose flow had drawn at least
    /// `tcp.dupack_threshold` duplicate ACKs since its last new ACK (FAST08
    /// Table 3: the lost retransmission of a fast retransmit).
    pub lost_retransmit_dart_ge_thresh: u64,
    /// `timeout_classes.lost_retransmit` with fewer duplicate ACKs than that
    /// (the lost retransmission of a timeout's own).
    pub lost_retransmit_dart_lt_thresh: u64,
    /// GIP §III's "number of TOs suffered by the unluckiest flow per stripe
    /// unit": over the completed blocks, the mean of the largest count of
    /// timeouts of one server in the block (`None` without a completed block).
    pub unluckiest_flow_timeouts_per_block: Option<f64>,
    /// The same, counting FLoss-TOs only (GIP Fig. 16).
    pub unluckiest_flow_floss_per_block: Option<f64>,
    /// The same, counting LAck-TOs only (GIP Fig. 16).
    pub unluckiest_flow_lack_per_block: Option<f64>,
    /// SIGCOMM09 §2.2's "requests that experienced a TCP timeout": the share
    /// of completed blocks during which either end of one of the block's
    /// connections timed out (`None` without a completed block).
    pub timed_out_block_fraction: Option<f64>,
    /// Fast retransmits, all endpoints.
    pub fast_retransmits: u64,
    /// Tail loss probes sent, all endpoints (`tcp.rack_tlp`).
    pub loss_probes: u64,
    /// Retransmitted segments RACK found lost again, all endpoints (`tcp.rack_tlp`).
    pub lost_retransmits: u64,
    /// Data segments sent again, all endpoints.
    pub retransmitted_packets: u64,
    /// GIP's redundant copies of stripe-unit tail packets (part of `retransmitted_packets`).
    pub redundant_packets: u64,
    /// ECN-capable packets a switch port marked CE (`switch.ecn_threshold`).
    pub ecn_marks: u64,
    /// Packets a policing switch dropped for their rude bit (part of `drops`).
    pub rude_drops: u64,
    /// Data segments discarded by sender-side random loss before the wire (`tcp.send_loss_ppb`).
    pub send_losses: u64,
    /// When the last rude flow stopped marking its segments after
    /// `tcp.rude_off_at` (RUDE Fig. 4's convergence), if it did.
    pub rude_polite_s: Option<f64>,
    /// Packets dropped at switch ports or lost on links.
    pub drops: u64,
    /// Block completion time percentiles, in milliseconds.
    pub block_time_ms: Percentiles,
    /// The servers' mean smoothed RTT as each request after a connection's
    /// first reached them ([`RequestRtt`]), in milliseconds (`None` without one).
    pub server_srtt_ms: Option<f64>,
    /// Their mean RTT variation at those moments, as Linux's `TCP_INFO`
    /// reports it (`tcpi_rttvar`: the mean deviation for the Linux RTO
    /// flavor, RTTVAR for the others), in milliseconds.
    pub server_rttvar_ms: Option<f64>,
    /// Their mean RTO at those moments, back-off included, in milliseconds.
    pub server_rto_ms: Option<f64>,
    /// Data segments sent, all endpoints, retransmissions included.
    pub data_packets: u64,
    /// Packets (data and ACKs) handed to host NICs.
    pub packets_sent: u64,
    /// Packets that reached their destination host.
    pub packets_delivered: u64,
    /// Packets still queued or on a link when the run ended.
    pub packets_in_flight: u64,
    /// Peak occupancy of the switch port toward the client (client 0), in frame bytes.
    pub queue_peak_bytes: u64,
    /// Bytes the background flows delivered to their receivers, over
    /// `sim_time_s`, in Mbit/s (0 without background flows).
    pub background_goodput_mbps: f64,
    /// UDP payload bytes the background UDP source delivered to the client,
    /// over `sim_time_s`, in Mbit/s (0 without it).
    pub udp_goodput_mbps: f64,
    /// The open-loop traffic's figures (`stats::fct`), flattened into the
    /// summary; absent when `[traffic]` is off.
    #[serde(flatten)]
    pub traffic: Option<fct::TrafficFigures>,
    /// Events the engine processed.
    pub events: u64,
}

impl Summary {
    /// The name of every single-number figure, in order, the parts of a
    /// composite one (`timeout_classes`, `block_time_ms`) as `figure.part`:
    /// what a run's summary holds, read from the summary itself, so that
    /// tables and the Python front name no figure the engine does not have.
    pub fn figure_names() -> Vec<String> {
        let with_traffic = Summary { traffic: Some(fct::TrafficFigures::default()), ..Summary::default() };
        let Ok(serde_json::Value::Object(figures)) = serde_json::to_value(with_traffic) else {
            unreachable!("a summary serializes to a table")
        };
        let mut names = Vec::new();
        for (name, value) in figures {
            match value {
                serde_json::Value::Object(parts) => names.extend(parts.keys().map(|part| format!("{name}.{part}"))),
                serde_json::Value::Array(_) => {}
                _ => names.push(name),
            }
        }
        names
    }
}

/// One connection (a server ↔ a client). Byte and packet columns describe
/// the response direction; `timeouts`, `fast_retransmits` and
/// `retransmitted_packets` count both directions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlowStats {
    /// Connection index, 0-based: client `c`'s `j`-th server is `c · servers + j`
    /// (with one client, the server index).
    pub flow: u32,
    /// The client reading over it (absent for a background flow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<u32>,
    /// The server answering on it, 0-based among all servers (absent for a background flow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<u32>,
    /// Response bytes delivered in order to the client application.
    pub bytes_delivered: u64,
    /// Response payload bytes sent by the server, retransmissions included.
    pub bytes_sent: u64,
    /// Response data segments sent, retransmissions included.
    pub data_packets_sent: u64,
    /// Data segments sent again.
    pub retransmitted_packets: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Largest congestion window of the server, in bytes.
    pub max_cwnd_bytes: u64,
    /// Packets of this connection dropped at the switch (both directions).
    pub drops: u64,
}

/// One completed block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockRecord {
    /// The client that read it.
    pub client: u32,
    /// Block number of that client, 0-based.
    pub block: u64,
    /// When the client sent the block's first request, in seconds.
    pub start_s: f64,
    /// From the first request to the last response byte, in milliseconds.
    pub time_ms: f64,
    /// Retransmission timeouts (both directions) of the client's flow that
    /// suffered most of them in this block — GIP §III's per-block metric.
    pub max_flow_timeouts: u64,
}

/// The reading connections' timeouts, tallied as the run goes for the
/// summary's per-block figures, so that they need no per-timeout table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockTimeouts {
    /// Completed blocks during which either end of one of their connections timed out.
    pub timed_out: u64,
    /// Over the completed blocks, the sum of each block's largest count of
    /// one server's timeouts: all, FLoss-TOs, LAck-TOs.
    pub unluckiest: [u64; 3],
    /// Lost-retransmit timeouts after at least `dupack_threshold` duplicate ACKs, and after fewer.
    pub lost_retransmit_dart: [u64; 2],
}

impl BlockTimeouts {
    /// Count timeout `t`'s lost retransmission, if it was one.
    pub fn add_timeout(&mut self, t: &Timeout) {
        if t.class == TimeoutClass::LostRetransmit {
            self.lost_retransmit_dart[usize::from(t.snapshot.dart < t.snapshot.dupack_threshold)] += 1;
        }
    }

    /// Count a completed block: whether it `timed_out`, and its unluckiest
    /// server's timeouts (all, FLoss-TOs, LAck-TOs).
    pub fn add_block(&mut self, timed_out: bool, unluckiest: [u64; 3]) {
        self.timed_out += u64::from(timed_out);
        for (sum, n) in self.unluckiest.iter_mut().zip(unluckiest) {
            *sum += n;
        }
    }

    /// Each tally over `blocks` completed blocks (`None` without one).
    pub fn per_block(&self, blocks: u64) -> ([Option<f64>; 3], Option<f64>) {
        let mean = |n: u64| (blocks > 0).then(|| n as f64 / blocks as f64);
        (self.unluckiest.map(mean), mean(self.timed_out))
    }
}

/// The servers' smoothed RTT and RTO as each request after a connection's
/// first reaches them, tallied for the summary: the figures `incast serve`
/// reads from the kernel's `TCP_INFO` at the same moment, so that a
/// comparison with the testbed sets the two stacks' round trips side by side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestRtt {
    /// Requests sampled.
    pub requests: u64,
    /// Their smoothed RTTs, summed, in picoseconds.
    pub srtt_ps: u128,
    /// Their RTT variations as `TCP_INFO` reports it (`tcpi_rttvar`), summed, in picoseconds.
    pub rttvar_ps: u128,
    /// Their RTOs (back-off included), summed, in picoseconds.
    pub rto_ps: u128,
}

impl RequestRtt {
    /// A request reached a server whose SRTT is `srtt`, RTT variation `rttvar` and RTO `rto`.
    pub fn add(&mut self, srtt: SimDuration, rttvar: SimDuration, rto: SimDuration) {
        self.requests += 1;
        self.srtt_ps += u128::from(srtt.as_ps());
        self.rttvar_ps += u128::from(rttvar.as_ps());
        self.rto_ps += u128::from(rto.as_ps());
    }

    /// The mean SRTT, RTT variation and RTO in milliseconds (`None` without a request).
    pub fn means_ms(&self) -> [Option<f64>; 3] {
        let mean = |sum: u128| (self.requests > 0).then(|| sum as f64 / self.requests as f64 / 1e9);
        [mean(self.srtt_ps), mean(self.rttvar_ps), mean(self.rto_ps)]
    }
}

/// One client: its share of the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientStats {
    /// Client index, 0-based.
    pub client: u32,
    /// Application bytes delivered to this client, over `sim_time_s`, in Mbit/s.
    pub goodput_mbps: f64,
    /// Application bytes delivered to this client.
    pub bytes_delivered: u64,
    /// Blocks this client completed.
    pub blocks: u64,
    /// Median completion time of its blocks, in milliseconds (`None` without one).
    pub block_time_p50_ms: Option<f64>,
    /// Longest completion time of its blocks, in milliseconds (`None` without one).
    pub block_time_max_ms: Option<f64>,
    /// Retransmission timeouts on its connections, both directions.
    pub timeouts: u64,
    /// Packets of its connections dropped or lost (both directions).
    pub drops: u64,
}

/// Which end of a connection timed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The server (sending a response).
    Server,
    /// The client (sending a request).
    Client,
}

/// One retransmission timeout, classified by `tcp::forensics` from the
/// sender's state before the timeout acted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeoutRecord {
    /// When the timer expired, in seconds.
    pub time_s: f64,
    /// Connection, 0-based (numbered as in [`FlowStats::flow`]).
    pub flow: u32,
    /// The client reading over it (`None` for a background flow).
    pub client: Option<u32>,
    /// The end whose timer expired.
    pub side: Side,
    /// The block in progress (the number of blocks the flow's client had
    /// completed; client 0's for a background flow).
    pub block: u64,
    /// The timer duration that expired, back-off included, in microseconds.
    pub rto_us: f64,
    /// Consecutive timeouts of the same segment before this one.
    pub backoff: u32,
    /// Congestion window, in bytes.
    pub cwnd_bytes: u64,
    /// SND.NXT − SND.UNA, in bytes.
    pub flight_bytes: u64,
    /// Duplicate ACKs received since the last ACK of new data (FAST08 §5.1).
    pub dart: u32,
    /// FAST08 §5.1 class.
    pub class: TimeoutClass,
    /// GIP §III class.
    pub gip_class: GipClass,
    /// F-RTO or Eifel later judged this timeout spurious (and undid it).
    pub spurious: bool,
}

/// One switch output port: the queue at `node` in front of its link to
/// `peer` (one direction of one link).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortStats {
    /// The switch holding the port.
    pub node: String,
    /// The node at the far end of its link.
    pub peer: String,
    /// Line rate of the link, in Mbit/s.
    pub rate_mbps: f64,
    /// Frames admitted to the queue.
    pub frames: u64,
    /// Frames dropped on arrival (tail drop).
    pub drops: u64,
    /// Frames the link lost on the wire after this port sent them (`link.loss_ppb`).
    pub lost: u64,
    /// ECN-capable frames marked CE here.
    pub ecn_marks: u64,
    /// Largest occupancy, in frame bytes.
    pub peak_bytes: u64,
    /// Largest occupancy, in frames.
    pub peak_packets: u64,
    /// Time-averaged occupancy over the run, in frame bytes.
    pub mean_bytes: f64,
    /// IEEE 802.3x PAUSE or 802.1Qbb PFC frames `node` sent to `peer` on
    /// this port, telling `peer` to stop sending to `node` (XON, zero
    /// quanta, included).
    pub pause_frames: u64,
    /// Time this port was stopped by PAUSE frames from `peer`, in
    /// microseconds; with PFC, the time of its most-paused priority.
    pub paused_us: f64,
    /// Time each 802.1p priority of this port was stopped by PAUSE or PFC
    /// frames from `peer`, in microseconds (802.3x PAUSE stops all eight).
    pub paused_priority_us: [f64; 8],
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    /// Whole-run figures.
    pub summary: Summary,
    /// One row per client.
    pub clients: Vec<ClientStats>,
    /// One row per reading connection.
    pub flows: Vec<FlowStats>,
    /// One row per background flow (`flow` numbers continue after the
    /// reading connections'); counters of the reading connections leave them out.
    pub background: Vec<FlowStats>,
    /// One row per completed block, in completion order.
    pub blocks: Vec<BlockRecord>,
    /// One row per retransmission timeout, in time order (empty when
    /// `stats.timeouts` is off).
    pub timeouts: Vec<TimeoutRecord>,
    /// One row per switch output port, in link order.
    pub ports: Vec<PortStats>,
    /// The time series `trace` turned on (each `None` when off).
    pub traces: Traces,
    /// The open-loop flows' and queries' rows (`[traffic]`; empty when off);
    /// never serialized (they cross as columns, [`fct::flow_columns`]).
    #[serde(skip)]
    pub open_flows: Vec<fct::FlowRecord>,
    /// The queries' rows.
    #[serde(skip)]
    pub queries: Vec<fct::QueryRecord>,
    /// The labels the flows' `path` codes index: each distinct path's
    /// switches by name, joined by `>`.
    #[serde(skip)]
    pub flow_paths: Vec<String>,
    /// Every packet seen at a host, when `trace.pcap` is on; never
    /// serialized (encode it with [`pcap::Capture::host_files`]).
    #[serde(skip)]
    pub capture: Option<pcap::Capture>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run, Scenario};

    /// Every figure a run's summary holds is named, parts flattened, lists left out.
    #[test]
    fn figure_names_are_the_summarys_single_numbers() {
        let names = Summary::figure_names();
        for name in ["goodput_mbps", "timeout_classes.full_window_loss", "block_time_ms.p99", "events"] {
            assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.starts_with("client_goodput_mbps")), "a list is not one number");
        let mut s = Scenario::fast08(2);
        s.stop.blocks = Some(1);
        let summary = serde_json::to_value(run(&s).unwrap().summary).unwrap();
        let Ok(serde_json::Value::Object(traffic)) = serde_json::to_value(fct::TrafficFigures::default()) else {
            unreachable!("the traffic figures serialize to a table")
        };
        // Without [traffic] the summary leaves the traffic figures out.
        for name in names.iter().filter(|n| !traffic.contains_key(n.split('.').next().unwrap_or_default())) {
            let mut at = &summary;
            for part in name.split('.') {
                at = at.get(part).unwrap_or_else(|| panic!("{name} is in a run's summary"));
            }
            assert!(!at.is_array() && !at.is_object(), "{name} is one number or none in a run's summary");
        }
    }
}
