//! The complete, validated description of one run.
//!
//! A run is a pure function of a [`Scenario`] (its `seed` included): the same
//! scenario always gives the same bytes of output.
//!
//! **Models:** FAST08 §3 / CMU09 §4 synchronized reads — one client (or
//! `workload.clients` clients, `workload::clients`) reading from `servers`
//! servers each, by default all on one switch; every host link has the same
//! rate and propagation delay. Other fabrics (trees, files) come from
//! `topology` (`net::fabric`).
//! Bulk TCP and constant-bit-rate UDP background traffic come from
//! `background`; a wide-area delay on the clients' links from `wan`
//! (`net::wan`).
//! **Not modelled (yet):** workloads other than synchronized reads (see
//! docs/MODEL.md).

use crate::error::SimError;
use crate::net::buffer::BufferModel;
use crate::net::fabric::{Fabric, Hop, HostCounts, TopologyConfig};
use crate::net::pause::PauseConfig;
use crate::net::pfc::{PriorityMask, PRIORITIES};
use crate::net::wan::WanConfig;
use crate::net::{frame, Network};
use crate::tcp::{SpuriousRto, TcpConfig, TcpVariant};
use crate::time::{BitRate, Bytes, SimDuration};
use crate::workload::background::{flow_hosts, udp_host, BackgroundConfig, MAX_BACKGROUND_FLOWS};
use crate::workload::clients::{Layout, ServerSets, MAX_CLIENTS};
use serde::{Deserialize, Serialize};

/// Every host link (server↔switch and client↔switch).
///
/// Default values: `rate` 1 Gbps and `rtt` 100 µs (FAST08 Table 1); no loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// Line rate of every link, both directions.
    pub rate: BitRate,
    /// Round-trip *propagation* delay between a server and the client: the sum
    /// of the four one-way link delays, without serialization or queueing.
    /// Each link gets `rtt / 4`.
    pub rtt: SimDuration,
    /// Probability that any link loses a frame on the wire, in parts per
    /// billion (random loss, each direction of each link from its own
    /// seeded substream); 0 for none.
    pub loss_ppb: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { rate: BitRate::gbps(1), rtt: SimDuration::from_micros(100), loss_ppb: 0 }
    }
}

/// Limit of one switch output queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferLimit {
    /// At most this many bytes of Ethernet frames (header + payload + FCS).
    Bytes(Bytes),
    /// At most this many frames, whatever their size (as ns-2 counts).
    Packets(u32),
}

/// The switch.
///
/// Default values: `buffer` 32 KiB per output port — the estimate for the
/// HP Procurve 2848 used by FAST08 §3.2 and CMU09 §3; `ecn_threshold` none
/// (no marking, as on the papers' switches; DCTCP's paper suggests 20
/// packets at 1 Gbps and 65 at 10 Gbps); `pause` none (flow control off, as
/// FAST08 ran its switches except in §6); `pfc` off, with every priority
/// lossless when on; `buffer_model` static (every port owns its buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchConfig {
    /// Drop-tail limit of each output port.
    pub buffer: BufferLimit,
    /// How each switch allocates its buffer to its ports.
    pub buffer_model: BufferModel,
    /// ECN marking threshold K of each output port (RFC 8257 §3.1), or none.
    pub ecn_threshold: Option<BufferLimit>,
    /// Ethernet flow control at every switch port, or none: its thresholds
    /// and pause time, used by 802.3x PAUSE or, with `pfc`, per priority.
    pub pause: Option<PauseConfig>,
    /// Flow control is per priority (IEEE 802.1Qbb PFC, `net::pfc`) instead
    /// of 802.3x PAUSE; needs `pause` for its thresholds.
    pub pfc: bool,
    /// The priorities PFC keeps lossless; the others are dropped at a full buffer.
    pub pfc_priorities: PriorityMask,
    /// What the switch does with packets carrying the rude bit (RUDE §2.3, §6).
    pub rude_policy: RudePolicy,
}

/// A switch's policing of rude flows (RUDE §2.3: "routers will have the
/// ability to kill Rude flows by dropping *all* packets").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RudePolicy {
    /// Forward them like any packet.
    #[default]
    Pass,
    /// Drop every packet that carries the rude bit.
    Drop,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: BufferLimit::Bytes(Bytes::kib(32)),
            buffer_model: BufferModel::Static,
            ecn_threshold: None,
            pause: None,
            pfc: false,
            pfc_priorities: PriorityMask::ALL,
            rude_policy: RudePolicy::Pass,
        }
    }
}

/// How much each server returns per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseSize {
    /// Fixed server request unit: every server returns this many bytes, so the
    /// block grows with the number of servers (FAST08 §3, default 256 KiB).
    Sru(Bytes),
    /// Fixed block: the servers share this many bytes, `block / servers` each;
    /// the first `block % servers` servers send one byte more (CMU09 §4, 1 MiB).
    Block(Bytes),
}

/// In which order the client sends its per-block requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestOrder {
    /// Server 0 first, every block.
    Fixed,
    /// A fresh seeded permutation each block, so that no server is always the
    /// last to be asked (and the first to lose at a full buffer).
    Shuffled,
}

/// Barrier-synchronized reads (FAST08 §3, CMU09 §4).
///
/// Default values: `response` 256 KiB SRU (FAST08 Table 1), `request` 100 bytes,
/// `order` shuffled, `server_jitter` 10 µs; no application-level mitigation
/// (`max_inflight` none: every server is asked at once; `stagger` 0); one
/// client (`clients` 1, `server_sets` shared); `priority` 0 (best effort).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncReadConfig {
    /// Bytes each server returns per block.
    pub response: ResponseSize,
    /// Size of the request the client sends each server per block.
    pub request: Bytes,
    /// Order of the requests within a block.
    pub order: RequestOrder,
    /// Each server starts its response a delay drawn uniformly from
    /// `[0, server_jitter]` after the whole request has arrived (its
    /// turnaround: OS scheduling, copying into the socket). Without it,
    /// identical servers on identical links stay phase-locked at a drop-tail
    /// queue and the same flow loses every burst, block after block — the
    /// phase effect of Floyd and Jacobson (1992) that ns-2 users break with
    /// random per-packet overhead and CMU09 §3 with a random timer delay.
    pub server_jitter: SimDuration,
    /// Application-level mitigation: at most this many servers answer at
    /// once; the client asks the next server (in request order) as each
    /// response completes (Panasas stripes over about 10 servers; Facebook's
    /// memcache clients limit outstanding requests). `None`: all at once.
    pub max_inflight: Option<u32>,
    /// Application-level mitigation: the i-th request of a block (0-based,
    /// in request order) leaves `i × stagger` after the block starts, or
    /// later if `max_inflight` holds it back.
    pub stagger: SimDuration,
    /// Clients reading at once, each its own barrier-synchronized block loop
    /// from time zero (`workload::clients`); the fields above apply to each.
    pub clients: u32,
    /// Whether the clients read from the same `servers` servers or each from
    /// a group of its own.
    pub server_sets: ServerSets,
    /// IEEE 802.1p priority of the reads' frames, requests and ACKs
    /// included, 0 to 7 (`net::pfc`).
    pub priority: u8,
}

impl Default for SyncReadConfig {
    fn default() -> Self {
        SyncReadConfig {
            response: ResponseSize::Sru(Bytes::kib(256)),
            request: Bytes::new(100),
            order: RequestOrder::Shuffled,
            server_jitter: SimDuration::from_micros(10),
            max_inflight: None,
            stagger: SimDuration::ZERO,
            clients: 1,
            server_sets: ServerSets::Shared,
            priority: 0,
        }
    }
}

/// When the run ends: after `blocks` completed blocks or at `duration` of
/// simulated time, whichever comes first. At least one must be set. With
/// several clients, `blocks` is reached once *every* client has completed
/// that many; a client that gets there first keeps reading, so the others
/// meet the same cross traffic to the end.
///
/// Default values: `duration` 1 s, no block limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StopConfig {
    /// Stop once every client has completed this many blocks.
    pub blocks: Option<u64>,
    /// Stop at this simulated time.
    pub duration: Option<SimDuration>,
}

impl Default for StopConfig {
    fn default() -> Self {
        StopConfig { blocks: None, duration: Some(SimDuration::from_secs(1)) }
    }
}

/// What the run records beyond its counters.
///
/// Default values: `timeouts` true. Per-class timeout counters and each
/// block's `max_flow_timeouts` are always kept; the per-timeout table grows
/// with the number of timeouts, so long sweeps may turn it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatsConfig {
    /// Keep one `TimeoutRecord` per retransmission timeout in `RunResult.timeouts`.
    pub timeouts: bool,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig { timeouts: true }
    }
}

/// Time series the run records besides its tables (`stats::trace`). Every
/// trace is off by default, and a run with all of them off does no trace work
/// beyond one branch per event site.
///
/// Default values: every trace off. A common `goodput_bin` is 5 ms, the bin of
/// FAST08 Figure 5's instantaneous goodput.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// Bin length of the goodput trace (application bytes delivered to the
    /// client per bin); `None` turns the trace off.
    pub goodput_bin: Option<SimDuration>,
    /// Sample the occupancy of the switch port toward the client at every
    /// frame offered to it (enqueued or dropped).
    pub queue: bool,
    /// Sample each server's cwnd, ssthresh, RTO and SRTT at every ACK it
    /// processes and at each of its retransmission timeouts.
    pub flows: bool,
    /// Record every server's cwnd at the start of each block (GIP Figure 4).
    pub block_cwnd: bool,
    /// Capture every packet at the client and each server, as it is handed
    /// to the host's NIC and as it arrives (`stats::pcap`).
    pub pcap: bool,
}

impl TraceConfig {
    /// Is any time series on? (The packet capture, `pcap`, is kept apart.)
    pub fn any(&self) -> bool {
        self.goodput_bin.is_some() || self.queue || self.flows || self.block_cwnd
    }
}

/// One complete run description.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Number of servers answering each block (of each client).
    pub servers: u32,
    /// Every host link.
    pub link: LinkConfig,
    /// How hosts and switches are wired (the single-switch star by default).
    pub topology: TopologyConfig,
    /// The switch.
    pub switch: SwitchConfig,
    /// TCP at every host.
    pub tcp: TcpConfig,
    /// The synchronized-read workload.
    pub workload: SyncReadConfig,
    /// Traffic beside the reads (none by default).
    pub background: BackgroundConfig,
    /// Wide-area delay on the clients' links (off by default).
    pub wan: WanConfig,
    /// When to stop.
    pub stop: StopConfig,
    /// What to record.
    pub stats: StatsConfig,
    /// Time series to record (all off by default).
    pub trace: TraceConfig,
    /// Master seed; every random choice derives from it.
    pub seed: u64,
}

/// Most servers one run may have (the client's switch needs a port each),
/// and most reading connections (`workload.clients × servers`).
pub const MAX_SERVERS: u32 = 100_000;

fn invalid(field: &'static str, message: impl Into<String>) -> SimError {
    SimError::InvalidScenario { field, message: message.into() }
}

impl Scenario {
    /// The FAST08 Table 1 defaults with `servers` servers.
    pub fn fast08(servers: u32) -> Self {
        Scenario { servers, ..Default::default() }
    }

    /// Check every field; the error names the first offending one.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.servers == 0 || self.servers > MAX_SERVERS {
            return Err(invalid("servers", format!("must be between 1 and {MAX_SERVERS}")));
        }
        let clients = self.workload.clients;
        if clients == 0 || clients > MAX_CLIENTS {
            return Err(invalid("workload.clients", format!("must be between 1 and {MAX_CLIENTS}")));
        }
        if u64::from(clients) * u64::from(self.servers) > u64::from(MAX_SERVERS) {
            return Err(invalid(
                "workload.clients",
                format!("{clients} clients × {} servers is more than {MAX_SERVERS} connections", self.servers),
            ));
        }
        if self.link.rate.0 == 0 {
            return Err(invalid("link.rate", "must be a positive rate"));
        }
        self.validate_priorities()?;
        self.validate_fabric()?;
        let tcp = &self.tcp;
        if !(1..=frame::MAX_MSS).contains(&tcp.mss) {
            return Err(invalid("tcp.mss", format!("must be between 1 and {} bytes", frame::MAX_MSS)));
        }
        if tcp.init_cwnd == 0 {
            return Err(invalid("tcp.init_cwnd", "must be at least 1 segment"));
        }
        if tcp.rcv_wnd.0 < tcp.mss as u64 || tcp.rcv_wnd.0 > u32::MAX as u64 {
            return Err(invalid("tcp.rcv_wnd", format!("must be between one MSS ({} bytes) and 4 GiB", tcp.mss)));
        }
        if tcp.dupack_threshold == 0 {
            return Err(invalid("tcp.dupack_threshold", "must be at least 1"));
        }
        if tcp.rto.max.is_zero() {
            return Err(invalid("tcp.rto.max", "must be positive"));
        }
        if tcp.rto.min > tcp.rto.max {
            return Err(invalid("tcp.rto.min", format!("must not exceed tcp.rto.max ({})", tcp.rto.max)));
        }
        if tcp.rto.initial.is_zero() {
            return Err(invalid("tcp.rto.initial", "must be positive"));
        }
        if tcp.delayed_ack.timeout == Some(SimDuration::ZERO) {
            return Err(invalid("tcp.delayed_ack.timeout", "must be positive, or off"));
        }
        let da = &tcp.delayed_ack;
        if da.ato_min.is_zero() {
            return Err(invalid("tcp.delayed_ack.ato_min", "must be positive"));
        }
        if da.ato_min > da.ato_max {
            return Err(invalid(
                "tcp.delayed_ack.ato_min",
                format!("must not exceed tcp.delayed_ack.ato_max ({})", da.ato_max),
            ));
        }
        if da.adaptive_multiplier == 0 {
            return Err(invalid("tcp.delayed_ack.adaptive_multiplier", "must be at least 1"));
        }
        if da.adaptive_gain_shift > 16 {
            return Err(invalid("tcp.delayed_ack.adaptive_gain_shift", "must be at most 16 (gain 1/65536)"));
        }
        if da.adaptive_min.is_zero() {
            return Err(invalid("tcp.delayed_ack.adaptive_min", "must be positive"));
        }
        if da.adaptive_min > da.adaptive_max {
            return Err(invalid(
                "tcp.delayed_ack.adaptive_min",
                format!("must not exceed tcp.delayed_ack.adaptive_max ({})", da.adaptive_max),
            ));
        }
        if tcp.sack && matches!(tcp.variant, TcpVariant::Reno | TcpVariant::NewReno) {
            return Err(invalid(
                "tcp.sack",
                "SACK recovery (RFC 6675) replaces Reno/NewReno recovery: use tcp.variant = \"sack\" (or cubic)",
            ));
        }
        if tcp.timestamps && tcp.mss <= 12 {
            return Err(invalid("tcp.mss", "must exceed the 12 bytes of the timestamps option"));
        }
        if tcp.timestamp_tick.is_zero() {
            return Err(invalid("tcp.timestamp_tick", "must be positive"));
        }
        if tcp.spurious_rto == SpuriousRto::Eifel && !tcp.timestamps {
            return Err(invalid("tcp.spurious_rto", "eifel needs the timestamps option (tcp.timestamps = true)"));
        }
        let full_frame = frame::frame_bytes(tcp.mss);
        match self.switch.buffer {
            BufferLimit::Bytes(b) if b.0 < full_frame => {
                return Err(invalid(
                    "switch.buffer",
                    format!("{} bytes cannot hold one full frame ({full_frame} bytes for MSS {})", b.0, tcp.mss),
                ));
            }
            BufferLimit::Packets(0) => return Err(invalid("switch.buffer", "must hold at least 1 packet")),
            _ => {}
        }
        match self.workload.response {
            ResponseSize::Sru(b) if b.0 == 0 => return Err(invalid("workload.sru", "must be at least 1 byte")),
            ResponseSize::Block(b) if b.0 < self.servers as u64 => {
                return Err(invalid("workload.block", "must give every server at least 1 byte"));
            }
            _ => {}
        }
        if tcp.rude && !tcp.rude_allowed {
            return Err(invalid(
                "tcp.rude",
                "refused: the hosts do not allow rude flows (set tcp.rude_allowed = true, RUDE's tcp_rude sysctl)",
            ));
        }
        if tcp.send_loss_ppb >= 1_000_000_000 {
            return Err(invalid("tcp.send_loss_ppb", "must be below 10^9 (a probability below 1)"));
        }
        if tcp.rude_servers.is_some() && !tcp.rude {
            return Err(invalid("tcp.rude_servers", "needs rude flows (tcp.rude = true)"));
        }
        if tcp.rude_off_at.is_some() && !tcp.rude {
            return Err(invalid("tcp.rude_off_at", "needs rude flows to turn off (tcp.rude = true)"));
        }
        if tcp.dctcp.alpha_init > 1024 {
            return Err(invalid("tcp.dctcp.alpha_init", "must be at most 1024 (α = 1)"));
        }
        if !(1..=10).contains(&tcp.dctcp.g_shift) {
            return Err(invalid("tcp.dctcp.g_shift", "must be between 1 and 10 (g = 1/2 to 1/1024)"));
        }
        match self.switch.buffer_model {
            BufferModel::Qos { classes } if !(1..=64).contains(&classes) => {
                return Err(invalid("switch.buffer_model", "qos needs between 1 and 64 classes"));
            }
            BufferModel::Qos { classes } => {
                let share = match self.switch.buffer {
                    BufferLimit::Bytes(b) => b.0 / u64::from(classes) >= full_frame,
                    BufferLimit::Packets(n) => n / classes >= 1,
                };
                if !share {
                    return Err(invalid(
                        "switch.buffer_model",
                        format!("a 1/{classes} share of switch.buffer cannot hold one full frame ({full_frame} bytes)"),
                    ));
                }
            }
            BufferModel::Shared { alpha_thousandths } => {
                if alpha_thousandths == 0 {
                    return Err(invalid("switch.buffer_model", "shared needs a positive alpha"));
                }
                if matches!(self.switch.buffer, BufferLimit::Packets(_)) {
                    return Err(invalid(
                        "switch.buffer_model",
                        "shared memory is counted in bytes: give switch.buffer in bytes",
                    ));
                }
                if self.switch.pause.is_some() {
                    return Err(invalid(
                        "switch.buffer_model",
                        "shared memory together with switch.pause is not modelled",
                    ));
                }
            }
            BufferModel::Static => {}
        }
        if let Some(p) = self.switch.pause {
            if p.xon.0 >= p.xoff.0 {
                return Err(invalid(
                    "switch.pause.xon",
                    format!("must be below switch.pause.xoff ({} bytes)", p.xoff.0),
                ));
            }
            if let BufferLimit::Bytes(b) = self.switch.buffer {
                if p.xoff.0 >= b.0 {
                    return Err(invalid("switch.pause.xoff", format!("must be below switch.buffer ({} bytes)", b.0)));
                }
            }
            if p.quanta == 0 {
                return Err(invalid("switch.pause.quanta", "must be at least 1 (512 bit times)"));
            }
        }
        self.validate_classes()?;
        if matches!(self.switch.ecn_threshold, Some(BufferLimit::Packets(0))) {
            return Err(invalid("switch.ecn_threshold", "must be at least 1 packet, or none"));
        }
        if self.workload.max_inflight == Some(0) {
            return Err(invalid("workload.max_inflight", "must be at least 1 server, or none for all at once"));
        }
        if self.workload.request.0 == 0 {
            return Err(invalid("workload.request", "must be at least 1 byte"));
        }
        if self.trace.goodput_bin.is_some_and(|b| b.is_zero()) {
            return Err(invalid("trace.goodput_bin", "must be positive, or off"));
        }
        match (self.stop.blocks, self.stop.duration) {
            (None, None) => return Err(invalid("stop", "set blocks, duration, or both")),
            (Some(0), _) => return Err(invalid("stop.blocks", "must be at least 1")),
            (_, Some(d)) if d.is_zero() => return Err(invalid("stop.duration", "must be positive")),
            _ => {}
        }
        Ok(())
    }

    /// Who reads from whom: clients, servers per client, shared or disjoint sets.
    pub fn reads(&self) -> Layout {
        Layout { clients: self.workload.clients, servers: self.servers, sets: self.workload.server_sets }
    }

    /// The 802.1p priorities the run's traffic uses (`net::pfc`).
    pub fn priorities(&self) -> PriorityMask {
        let bg = &self.background;
        let mut m = PriorityMask::of(self.workload.priority);
        if bg.tcp_flows > 0 {
            m.0 |= PriorityMask::of(bg.priority).0;
        }
        if bg.udp_rate.is_some() {
            m.0 |= PriorityMask::of(bg.udp_priority).0;
        }
        m
    }

    /// Does the traffic use more than one priority, so that ports keep one
    /// FIFO per priority (`net::pfc`)?
    pub fn classes(&self) -> bool {
        self.priorities().0.count_ones() > 1
    }

    /// Every priority is an 802.1p priority.
    fn validate_priorities(&self) -> Result<(), SimError> {
        let max = PRIORITIES as u8 - 1;
        for (field, p) in [
            ("workload.priority", self.workload.priority),
            ("background.priority", self.background.priority),
            ("background.udp_priority", self.background.udp_priority),
        ] {
            if p > max {
                return Err(invalid(field, format!("must be an 802.1p priority between 0 and {max}, got {p}")));
            }
        }
        Ok(())
    }

    /// Traffic classes and PFC only where they are modelled and mean something.
    fn validate_classes(&self) -> Result<(), SimError> {
        let sw = &self.switch;
        if self.classes() && matches!(sw.buffer_model, BufferModel::Shared { .. }) {
            return Err(invalid(
                "switch.buffer_model",
                "shared memory together with traffic classes (several priorities) is not modelled",
            ));
        }
        if !sw.pfc {
            return Ok(());
        }
        let Some(pause) = sw.pause else {
            return Err(invalid("switch.pfc", "needs the flow-control thresholds of switch.pause"));
        };
        if sw.pfc_priorities.0 == 0 {
            return Err(invalid("switch.pfc_priorities", "must name at least one priority (0 to 7)"));
        }
        if !self.classes() {
            return Err(invalid(
                "switch.pfc",
                "needs traffic in more than one priority (workload.priority, background.priority, \
                 background.udp_priority); with one class use 802.3x PAUSE (switch.pause)",
            ));
        }
        if let (BufferModel::Qos { classes }, BufferLimit::Bytes(b)) = (sw.buffer_model, sw.buffer) {
            let share = b.0 / u64::from(classes);
            if pause.xoff.0 >= share {
                return Err(invalid(
                    "switch.pause.xoff",
                    format!("must be below a 1/{classes} partition of switch.buffer ({share} bytes) with PFC"),
                ));
            }
        }
        Ok(())
    }

    /// The hosts, switches and links of the run.
    pub fn fabric(&self) -> Result<Fabric, SimError> {
        let hosts = HostCounts {
            reads: self.reads(),
            background_senders: self.background.tcp_flows,
            background_receivers: self.background.own_receivers(),
            udp_sender: self.background.udp_rate.is_some(),
        };
        let host =
            Hop { rate: self.link.rate, delay: self.link.rtt / 4, loss_ppb: self.link.loss_ppb, wan: self.wan.is_on() };
        match &self.topology {
            TopologyConfig::Star => Ok(Fabric::star(hosts, host)),
            TopologyConfig::Tree(t) => {
                if t.edge_switches == 0 || t.edge_switches > MAX_SERVERS {
                    return Err(invalid("topology.edge_switches", format!("must be between 1 and {MAX_SERVERS}")));
                }
                if t.trunk_rate.is_some_and(|r| r.0 == 0) {
                    return Err(invalid("topology.trunk_rate", "must be a positive rate"));
                }
                let trunk = Hop {
                    rate: t.trunk_rate.unwrap_or(host.rate),
                    delay: t.trunk_delay.unwrap_or(host.delay),
                    loss_ppb: host.loss_ppb,
                    wan: false,
                };
                Ok(Fabric::tree(hosts, host, trunk, t.edge_switches))
            }
            TopologyConfig::Graph(g) => Fabric::graph(g, hosts, host),
        }
    }

    /// The fabric is well formed and every connection has a route both ways.
    fn validate_fabric(&self) -> Result<(), SimError> {
        if self.background.tcp_flows > MAX_BACKGROUND_FLOWS {
            return Err(invalid("background.tcp_flows", format!("must be at most {MAX_BACKGROUND_FLOWS}")));
        }
        if self.background.tcp_to_server && self.background.tcp_to_client {
            return Err(invalid("background.tcp_to_client", "cannot be set together with background.tcp_to_server"));
        }
        if self.background.udp_rate.is_some_and(|r| r.0 == 0) {
            return Err(invalid("background.udp_rate", "must be a positive rate, or none"));
        }
        if self.link.loss_ppb >= 1_000_000_000 {
            return Err(invalid("link.loss_ppb", "must be below 1000000000 (a probability below 1)"));
        }
        self.validate_wan()?;
        let fabric = self.fabric()?;
        let lossy = fabric.links.iter().any(|l| l.ab.loss_ppb > 0);
        if lossy && self.switch.pause.is_some() {
            return Err(invalid("link.loss_ppb", "random loss together with switch.pause is not modelled"));
        }
        if lossy && self.classes() {
            return Err(invalid(
                "link.loss_ppb",
                "random loss together with traffic classes (several priorities) is not modelled",
            ));
        }
        let net = Network::build(&fabric, crate::net::QueueLimit::UNLIMITED, BufferModel::Static, 0);
        let reads = self.reads();
        if self.background.udp_rate.is_some() {
            net.path(udp_host(&reads, &self.background), 0)?;
        }
        for flow in 0..reads.connections() + self.background.tcp_flows {
            let (a, b) = flow_hosts(flow, &reads, &self.background);
            net.path(a, b)?;
            net.path(b, a)?;
        }
        Ok(())
    }

    /// The wide-area delay model's fields agree with each other (`net::wan`).
    fn validate_wan(&self) -> Result<(), SimError> {
        let w = &self.wan;
        let Some(delay) = w.delay else {
            let set = [
                ("wan.jitter", !w.jitter.is_zero()),
                ("wan.spike_interval", w.spike_interval.is_some()),
                ("wan.shift_interval", w.shift_interval.is_some()),
            ];
            return match set.iter().find(|s| s.1) {
                Some(&(field, _)) => Err(invalid(field, "needs the wide-area model on (set wan.delay)")),
                None => Ok(()),
            };
        };
        if self.switch.pause.is_some() {
            return Err(invalid("wan.delay", "the wide-area model together with PAUSE or PFC is not modelled"));
        }
        if w.spike_interval.is_some_and(SimDuration::is_zero) {
            return Err(invalid("wan.spike_interval", "must be positive, or none"));
        }
        if w.spike_interval.is_some() && (w.spike_height.is_zero() || w.spike_duration.is_zero()) {
            let field = if w.spike_height.is_zero() { "wan.spike_height" } else { "wan.spike_duration" };
            return Err(invalid(field, "must be positive when wan.spike_interval is set"));
        }
        if w.shift_interval.is_some_and(SimDuration::is_zero) {
            return Err(invalid("wan.shift_interval", "must be positive, or none"));
        }
        if w.shift_interval.is_some() && w.shift.is_zero() {
            return Err(invalid("wan.shift", "must be positive when wan.shift_interval is set"));
        }
        if w.shift > delay {
            return Err(invalid(
                "wan.shift",
                format!("must not exceed wan.delay ({delay}): a delay is never negative"),
            ));
        }
        Ok(())
    }

    /// Response bytes that the `server`-th server of a client returns per block.
    pub fn response_bytes(&self, server: u32) -> u64 {
        match self.workload.response {
            ResponseSize::Sru(b) => b.0,
            ResponseSize::Block(b) => {
                let n = self.servers as u64;
                b.0 / n + u64::from((server as u64) < b.0 % n)
            }
        }
    }

    /// Application bytes in one block of one client.
    pub fn block_bytes(&self) -> u64 {
        match self.workload.response {
            ResponseSize::Sru(b) => b.0 * self.servers as u64,
            ResponseSize::Block(b) => b.0,
        }
    }

    /// The best goodput one client link can carry with full-sized segments:
    /// `rate · payload / (payload + per-frame overhead)` — 949.28 Mbps at 1 Gbps,
    /// MSS 1460 (941.48 Mbps with timestamps: 1448 payload bytes per segment).
    pub fn best_goodput_bps(&self) -> f64 {
        // With timestamps the 12 option bytes replace payload: the frame stays `mss` + headers.
        self.link.rate.0 as f64 * self.tcp.segment_payload() as f64 / frame::wire_bytes(self.tcp.mss) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_follow_fast08_table1() {
        let s = Scenario::fast08(8);
        s.validate().unwrap();
        assert_eq!(s.link.rate, BitRate::gbps(1));
        assert_eq!(s.link.rtt, SimDuration::from_micros(100));
        assert_eq!(s.response_bytes(3), 256 * 1024);
        assert_eq!(s.tcp.rto.min, SimDuration::from_millis(200));
    }

    #[test]
    fn best_goodput_at_one_gigabit_is_949_mbps() {
        let g = Scenario::fast08(1).best_goodput_bps() / 1e6;
        assert!((g - 949.28).abs() < 0.01, "{g}");
    }

    #[test]
    fn fixed_block_spreads_the_remainder_over_the_first_servers() {
        let mut s = Scenario::fast08(3);
        s.workload.response = ResponseSize::Block(Bytes::new(10));
        assert_eq!((0..3).map(|i| s.response_bytes(i)).collect::<Vec<_>>(), vec![4, 3, 3]);
        assert_eq!(s.block_bytes(), 10);
    }

    fn field_of(s: &Scenario) -> &'static str {
        match s.validate() {
            Err(SimError::InvalidScenario { field, .. }) => field,
            other => panic!("expected a scenario error, got {other:?}"),
        }
    }

    #[test]
    fn validation_names_the_offending_field() {
        let ok = Scenario::fast08(4);
        let mut s = ok.clone();
        s.servers = 0;
        assert_eq!(field_of(&s), "servers");
        let mut s = ok.clone();
        s.switch.buffer = BufferLimit::Bytes(Bytes::new(1000));
        assert_eq!(field_of(&s), "switch.buffer");
        let mut s = ok.clone();
        s.link.rate = BitRate(0);
        assert_eq!(field_of(&s), "link.rate");
        let mut s = ok.clone();
        s.tcp.rto.min = SimDuration::from_secs(500);
        assert_eq!(field_of(&s), "tcp.rto.min");
        let mut s = ok.clone();
        s.stop = StopConfig { blocks: None, duration: None };
        assert_eq!(field_of(&s), "stop");
        let mut s = ok.clone();
        s.workload.response = ResponseSize::Block(Bytes::new(2));
        assert_eq!(field_of(&s), "workload.block");
        let mut s = ok.clone();
        s.trace.goodput_bin = Some(SimDuration::ZERO);
        assert_eq!(field_of(&s), "trace.goodput_bin");
        let mut s = ok.clone();
        s.workload.clients = 0;
        assert_eq!(s.validate().unwrap_err().to_string(), "workload.clients: must be between 1 and 10000");
        let mut s = ok;
        (s.servers, s.workload.clients) = (20, 10_000);
        assert_eq!(field_of(&s), "workload.clients");
    }

    #[test]
    fn wan_fields_that_disagree_are_named() {
        let ms = SimDuration::from_millis;
        let on = |f: &dyn Fn(&mut WanConfig)| {
            let mut s = Scenario::fast08(1);
            s.wan.delay = Some(ms(20));
            f(&mut s.wan);
            s
        };
        on(&|_| {}).validate().unwrap();
        let mut off = Scenario::fast08(1);
        off.wan.jitter = ms(1);
        assert_eq!(field_of(&off), "wan.jitter");
        assert_eq!(field_of(&on(&|w| w.spike_interval = Some(ms(100)))), "wan.spike_height");
        assert_eq!(
            field_of(&on(&|w| {
                w.spike_interval = Some(ms(100));
                w.spike_height = ms(5);
            })),
            "wan.spike_duration"
        );
        assert_eq!(
            field_of(&on(&|w| {
                w.shift_interval = Some(ms(100));
                w.shift = ms(21);
            })),
            "wan.shift"
        );
        let mut paused = on(&|_| {});
        paused.switch.pause = Some(PauseConfig::default());
        assert_eq!(field_of(&paused), "wan.delay");
    }

    /// Priorities are 802.1p's eight; PFC needs its thresholds, a lossless
    /// priority and traffic in more than one priority; classes are not
    /// modelled in shared memory; a PFC XOFF must fit a `qos:K` partition.
    #[test]
    fn traffic_classes_and_pfc_name_the_offending_field() {
        let mut ok = Scenario::fast08(4);
        ok.background.tcp_flows = 1;
        ok.workload.priority = 3;
        ok.switch.pause = Some(PauseConfig::default());
        ok.switch.pfc = true;
        ok.validate().unwrap();
        let mut s = ok.clone();
        s.workload.priority = 8;
        assert_eq!(field_of(&s), "workload.priority");
        let mut s = ok.clone();
        s.background.udp_priority = 9;
        assert_eq!(field_of(&s), "background.udp_priority");
        let mut s = ok.clone();
        s.switch.pause = None;
        assert_eq!(field_of(&s), "switch.pfc");
        let mut s = ok.clone();
        s.workload.priority = 0;
        assert_eq!(field_of(&s), "switch.pfc", "one class: PFC is PAUSE");
        let mut s = ok.clone();
        s.switch.pfc_priorities = PriorityMask(0);
        assert_eq!(field_of(&s), "switch.pfc_priorities");
        let mut s = ok.clone();
        s.switch.buffer_model = BufferModel::Qos { classes: 4 };
        assert_eq!(field_of(&s), "switch.pause.xoff", "16 KiB XOFF in an 8 KiB partition");
        let mut s = ok;
        s.switch.pause = None;
        s.switch.pfc = false;
        s.switch.buffer_model = BufferModel::Shared { alpha_thousandths: 1000 };
        assert_eq!(field_of(&s), "switch.buffer_model");
    }

    /// A scenario file names only what it changes; the rest takes the defaults.
    #[test]
    fn missing_json_keys_take_the_defaults() {
        let s: Scenario = serde_json::from_str(r#"{"servers": 4, "tcp": {"rto": {"min": 1000000}}}"#).unwrap();
        let mut expected = Scenario::fast08(4);
        expected.tcp.rto.min = SimDuration::from_micros(1);
        assert_eq!(s, expected);
    }

    #[test]
    fn unknown_json_keys_are_rejected() {
        let mut v = serde_json::to_value(Scenario::fast08(2)).unwrap();
        v["link"]["speed"] = serde_json::json!(5);
        assert!(serde_json::from_value::<Scenario>(v).is_err());
    }
}
