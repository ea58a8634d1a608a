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
//! The scenario composes the settings of the modules that use them (each a
//! table of the user's TOML: `[link]` from `net::link`, `[tcp]` from
//! `tcp::config` and the modules it flattens, ...; see `settings`), reads
//! the user's shape directly ([`Scenario::from_json`], with dotted overrides),
//! and gives back its canonical form, its plain-SI form, its hash and the
//! schema of every setting.
//! **Not modelled (yet):** workloads other than synchronized reads (see
//! docs/MODEL.md).

use crate::error::SimError;
use crate::net::buffer::BufferModel;
use crate::net::clos::Shape;
use crate::net::fabric::{Fabric, Hop, HostCounts, TopologyConfig};
use crate::net::pfc::PriorityMask;
use crate::net::wan::WanConfig;
use crate::net::{frame, ArrivalOrder, BufferLimit, LinkConfig, Network, SwitchConfig};
use crate::settings::{Duration, Rate, Spec};
use crate::stats::trace::TraceConfig;
use crate::stats::trace::MAX_GOODPUT_BINS;
use crate::stats::StatsConfig;
use crate::tcp::rcv_window::RcvWindowRule;
use crate::tcp::sack::SackRecovery;
use crate::tcp::{CcChoice, SpuriousRto, TcpConfig};
use crate::time::{Bytes, SimDuration};
use crate::workload::background::{flow_hosts, partners, udp_host, BackgroundConfig};
use crate::workload::clients::Layout;
use crate::workload::traffic::TrafficConfig;
use crate::workload::{ResponseSize, SyncReadConfig, WorkloadKind};

/// When the run ends: after `blocks` completed blocks or at `duration` of
/// simulated time, whichever comes first. At least one must be set. With
/// several clients, `blocks` is reached once *every* client has completed
/// that many; a client that gets there first keeps reading, so the others
/// meet the same cross traffic to the end.
///
/// Default values: `duration` 1 s when `blocks` is not given either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopConfig {
    /// Stop once every client has completed this many blocks.
    pub blocks: Option<u64>,
    /// Stop at this simulated time.
    pub duration: Option<SimDuration>,
}

impl Default for StopConfig {
    fn default() -> Self {
        StopConfig { blocks: None, duration: Some(DEFAULT_DURATION) }
    }
}

/// The seed of a scenario that names none (the Rust constructors keep 0).
const DEFAULT_SEED: u64 = 1;

/// The run length when neither `blocks` nor `duration` is given.
const DEFAULT_DURATION: SimDuration = SimDuration::from_secs(1);

/// One complete run description.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scenario {
    /// Number of servers answering each block (of each client); 0 runs no
    /// reads (the parser sets `workload.kind` to "none").
    pub servers: u32,
    /// Every host link.
    pub link: LinkConfig,
    /// How hosts and switches are wired.
    pub topology: TopologyConfig,
    /// The switches.
    pub switch: SwitchConfig,
    /// TCP at every host.
    pub tcp: TcpConfig,
    /// The synchronized reads.
    pub workload: SyncReadConfig,
    /// Traffic beside the reads.
    pub background: BackgroundConfig,
    /// Open-loop flows and partition/aggregate queries between the hosts.
    pub traffic: TrafficConfig,
    /// The wide-area delay model on the clients' links.
    pub wan: WanConfig,
    /// When the run ends.
    pub stop: StopConfig,
    /// What the run records beyond its counters.
    pub stats: StatsConfig,
    /// Time series the run records.
    pub trace: TraceConfig,
    /// Master seed; every random choice derives from it.
    pub seed: u64,
    /// Refuse a run whose estimated memory exceeds this (`footprint`), and
    /// stop one whose records or packets in flight grow past it (`sim::record`);
    /// `None`: [`footprint::DEFAULT_MEMORY_BUDGET`].
    pub memory_budget: Option<Bytes>,
}

/// Most servers one run may have (the client's switch needs a port each),
/// and most reading connections (`workload.clients × servers`).
pub const MAX_SERVERS: u32 = 100_000;

pub mod footprint;
mod shape;

pub use shape::{SchemaEntry, Written};

fn invalid(field: &'static str, message: impl Into<String>) -> SimError {
    invalid_owned(field.to_owned(), message.into())
}

fn invalid_owned(field: String, message: String) -> SimError {
    SimError::InvalidScenario { field, message }
}

impl Scenario {
    /// The FAST08 Table 1 defaults with `servers` servers.
    pub fn fast08(servers: u32) -> Self {
        Scenario { servers, ..Default::default() }
    }

    /// Check every field; the error names the first offending one. Each
    /// setting is checked by the spec that reads it (the scenario is written
    /// out and read back), then the rules between settings apply.
    pub fn validate(&self) -> Result<(), SimError> {
        Self::read(&self.written().toml)?;
        self.check()
    }

    /// The rules between settings (each setting alone is checked when read).
    fn check(&self) -> Result<(), SimError> {
        let clients = self.workload.clients;
        if u64::from(clients) * u64::from(self.servers) > u64::from(MAX_SERVERS) {
            return Err(invalid(
                "workload.clients",
                format!("{clients} clients × {} servers is more than {MAX_SERVERS} connections", self.servers),
            ));
        }
        let cable = self.link.propagation;
        if cable.as_ps().saturating_mul(4) > self.link.rtt.as_ps() && cable != LinkConfig::default().propagation {
            return Err(invalid(
                "link.propagation",
                format!(
                    "four links' propagation must fit in link.rtt ({}): at most {}, got {}",
                    Duration::format(self.link.rtt),
                    Duration::format(self.link.rtt / 4),
                    Duration::format(self.link.propagation)
                ),
            ));
        }
        if self.link.tx_queue.is_some() && (self.switch.pause_config().is_some() || self.classes()) {
            // There a host's NIC may be paused, and when its frames leave is not known in advance.
            return Err(invalid(
                "link.tx_queue",
                "a NIC queue limit together with switch.pause, switch.pfc or several traffic priorities \
                 is not modelled; use \"off\"",
            ));
        }
        // Before the fabric is built: its route tables are part of the estimate.
        self.check_footprint()?;
        self.validate_fabric()?;
        let tcp = &self.tcp;
        if tcp.rcv_wnd.get() < u64::from(tcp.mss) || tcp.rcv_wnd.get() > u64::from(u32::MAX) {
            return Err(invalid(
                "tcp.rcv_wnd",
                format!("must be between one MSS ({} bytes) and 4 GiB, got {} bytes", tcp.mss, tcp.rcv_wnd.get()),
            ));
        }
        if tcp.rcv_window == RcvWindowRule::Linux && tcp.ictcp.on {
            return Err(invalid(
                "tcp.rcv_window",
                "\"linux\" grows the window ICTCP sets itself (tcp.ictcp); use \"fixed\" with ICTCP",
            ));
        }
        tcp.rto.validate().map_err(|(f, m)| invalid(f, m))?;
        if tcp.cc == CcChoice::Dctcp && self.switch.ecn_threshold.is_none() {
            // Without marks DCTCP is Reno under another name (RFC 8257 §3.1: the switch marks above K).
            return Err(invalid(
                "tcp.cc",
                "\"dctcp\" needs ECN marks: set switch.ecn_threshold (\"dctcp\" is the DCTCP paper's K for \
                 the link rate: 20 packets at 1 Gbps, 65 at 10 Gbps), or use the dctcp preset",
            ));
        }
        if tcp.sack_recovery == SackRecovery::Ns2 && (tcp.prr || tcp.rack_tlp || tcp.sack_lost_retransmit) {
            // Each of them reads or moves RFC 6675's scoreboard state, which Sack1's pipe_ estimate replaces.
            return Err(invalid(
                "tcp.sack_recovery",
                "\"ns2\" (ns-2.35's Sack1) has no PRR, RACK-TLP or lost-retransmit detection: use \"rfc6675\" \
                 or \"linux\" with tcp.prr, tcp.rack_tlp or tcp.sack_lost_retransmit",
            ));
        }
        if tcp.local_congestion && self.link.tx_queue.is_none() {
            return Err(invalid(
                "tcp.local_congestion",
                "needs a NIC queue limit to fill (link.tx_queue, e.g. 100 frames)",
            ));
        }
        if tcp.rude && !tcp.rude_allowed {
            return Err(invalid(
                "tcp.rude",
                "refused: the hosts do not allow rude flows (set tcp.rude_allowed = true, RUDE's tcp_rude sysctl)",
            ));
        }
        if tcp.rude_servers.is_some() && !tcp.rude {
            return Err(invalid("tcp.rude_servers", "needs rude flows (tcp.rude = true)"));
        }
        if let Some(k) = tcp.rude_servers.filter(|&k| k > self.servers) {
            return Err(invalid(
                "tcp.rude_servers",
                format!("must be at most servers ({}), or \"all\", got {k}", self.servers),
            ));
        }
        tcp.ictcp.validate().map_err(|(f, m)| invalid(f, m))?;
        if tcp.rude_off_at.is_some() && !tcp.rude {
            return Err(invalid("tcp.rude_off_at", "needs rude flows to turn off (tcp.rude = true)"));
        }
        if tcp.spurious_rto == SpuriousRto::Eifel && !tcp.timestamps {
            return Err(invalid("tcp.spurious_rto", "eifel needs the timestamps option (tcp.timestamps = true)"));
        }
        if tcp.timestamps && tcp.mss <= 12 {
            return Err(invalid(
                "tcp.mss",
                format!("must exceed the 12 bytes of the timestamps option, got {}", tcp.mss),
            ));
        }
        tcp.delayed_ack.validate().map_err(|(f, m)| invalid(f, m))?;
        let full_frame = frame::frame_bytes(tcp.mss);
        if let BufferLimit::Bytes(b) = self.switch.buffer {
            if b.get() < full_frame {
                return Err(invalid(
                    "switch.buffer",
                    format!("{} bytes cannot hold one full frame ({full_frame} bytes for MSS {})", b.get(), tcp.mss),
                ));
            }
        }
        self.validate_buffer_model(full_frame)?;
        self.validate_token_bucket()?;
        if let Some(k) = self.switch.ecn_threshold {
            // A threshold the queue can never pass marks nothing: compare in bytes,
            // a packet count as that many full frames.
            let bytes = |b: BufferLimit| match b {
                BufferLimit::Bytes(b) => b.get(),
                BufferLimit::Packets(n) => u64::from(n) * full_frame,
            };
            if bytes(k) >= bytes(self.switch.buffer) {
                let spec = crate::net::BufferLimitSpec;
                let show = |b: BufferLimit| spec.toml(&b).as_str().unwrap_or_default().to_owned();
                return Err(invalid(
                    "switch.ecn_threshold",
                    format!(
                        "must be below switch.buffer ({}): the queue never holds more, so nothing would be marked, got {}",
                        show(self.switch.buffer),
                        show(k)
                    ),
                ));
            }
        }
        self.validate_classes()?;
        let sw = &self.switch;
        if let Some(p) = sw.pause_config() {
            if p.xon.get() >= p.xoff.get() {
                return Err(invalid(
                    "switch.pause_xon",
                    format!("must be below switch.pause_xoff ({} bytes), got {}", p.xoff.get(), p.xon.get()),
                ));
            }
            if let BufferLimit::Bytes(b) = sw.buffer {
                if p.xoff.get() >= b.get() {
                    return Err(invalid(
                        "switch.pause_xoff",
                        format!("must be below switch.buffer ({} bytes), got {}", b.get(), p.xoff.get()),
                    ));
                }
            }
        }
        if let ResponseSize::Block(b) = self.workload.response {
            if b.get() < u64::from(self.servers) {
                let n = self.servers;
                return Err(invalid(
                    "workload.block",
                    format!("must give every server at least 1 byte: at least {n} bytes for {n} servers"),
                ));
            }
        }
        if let (Some(bin), Some(d)) = (self.trace.goodput_bin, self.stop.duration) {
            let bins = d.as_ps().div_ceil(bin.as_ps());
            if bins > MAX_GOODPUT_BINS {
                let f = Duration::format;
                return Err(invalid(
                    "trace.goodput_bin",
                    format!(
                        "{} makes {bins} bins over duration {}; at most {MAX_GOODPUT_BINS}: use a bin of at least {}",
                        f(bin),
                        f(d),
                        f(SimDuration::from_ps(d.as_ps().div_ceil(MAX_GOODPUT_BINS)))
                    ),
                ));
            }
        }
        if let Some(rate) = self.background.udp_rate {
            if rate > self.link.rate {
                return Err(invalid(
                    "background.udp_rate",
                    format!(
                        "must not exceed link.rate ({}): a source faster than its own link only fills its own queue, got {}",
                        Rate::format(self.link.rate),
                        Rate::format(rate)
                    ),
                ));
            }
        }
        self.validate_traffic()?;
        match (self.stop.blocks, self.stop.duration) {
            (None, None) => Err(invalid("blocks", "set blocks, duration, or both")),
            _ => Ok(()),
        }
    }

    /// Open-loop traffic runs between the fabric's hosts until a duration.
    fn validate_traffic(&self) -> Result<(), SimError> {
        if self.servers == 0 && self.workload.kind != WorkloadKind::None {
            return Err(invalid("servers", "0 runs no reads: workload.kind must be \"none\""));
        }
        // What turned the reads off, in the user's words.
        let (field, what) = if self.servers == 0 { ("servers", "0") } else { ("workload.kind", "\"none\"") };
        if self.workload.kind == WorkloadKind::None && self.stop.blocks.is_some() {
            return Err(invalid("blocks", format!("needs reads: {field} = {what} runs none; give a duration")));
        }
        let background = self.background.tcp_flows > 0 || self.background.udp_rate.is_some();
        if self.workload.kind == WorkloadKind::None && !self.traffic.is_on() && !background {
            let give = "give traffic.load, traffic.query_rate or background flows";
            return Err(invalid(field, format!("{what} runs no reads and nothing else runs: {give}")));
        }
        if !self.traffic.is_on() {
            return Ok(());
        }
        if self.stop.duration.is_none() {
            return Err(invalid("traffic", "open-loop traffic needs a duration to end the run"));
        }
        if self.background.udp_rate.is_some() {
            return Err(invalid("background.udp_rate", "together with [traffic] is not modelled; use \"off\""));
        }
        let hosts = self.fabric()?.nodes.iter().filter(|n| n.host.is_some()).count() as u32;
        self.traffic.check_hosts(hosts).map_err(|(f, m)| invalid(f, m))
    }

    /// A token-bucket port (`net::token_bucket`) passes a full frame, and runs
    /// where each frame's departure is known when it is queued.
    fn validate_token_bucket(&self) -> Result<(), SimError> {
        let Some(depth) = self.link.token_bucket else { return Ok(()) };
        let wire = frame::wire_bytes(self.tcp.mss);
        if depth.get() < wire {
            let mss = self.tcp.mss;
            return Err(invalid(
                "link.token_bucket",
                format!("{} bytes cannot pass one full frame ({wire} bytes on the wire for MSS {mss})", depth.get()),
            ));
        }
        let against = if self.switch.pause_config().is_some() || self.classes() {
            "switch.pause, switch.pfc or several traffic priorities (ports that wait on explicit FIFOs)"
        } else if matches!(self.link.arrival_order, ArrivalOrder::Ns2 | ArrivalOrder::Ns3) {
            "link.arrival_order \"ns2\" or \"ns3\" (their ties are those of a serializing port)"
        } else if self.traffic.is_on() {
            "[traffic] (a flow's ideal completion time assumes serializing ports)"
        } else {
            return Ok(());
        };
        Err(invalid("link.token_bucket", format!("together with {against} is not modelled; use \"off\"")))
    }

    /// The buffer model fits the buffer it divides.
    fn validate_buffer_model(&self, full_frame: u64) -> Result<(), SimError> {
        match self.switch.buffer_model {
            BufferModel::Qos { classes } => {
                let share = match self.switch.buffer {
                    BufferLimit::Bytes(b) => b.get() / u64::from(classes) >= full_frame,
                    BufferLimit::Packets(n) => n / classes >= 1,
                };
                if !share {
                    return Err(invalid(
                        "switch.buffer_model",
                        format!("a 1/{classes} share of switch.buffer cannot hold one full frame ({full_frame} bytes)"),
                    ));
                }
            }
            BufferModel::Shared { .. } => {
                if matches!(self.switch.buffer, BufferLimit::Packets(_)) {
                    return Err(invalid(
                        "switch.buffer_model",
                        "shared memory is counted in bytes: give switch.buffer in bytes",
                    ));
                }
                if self.switch.pause_config().is_some() {
                    return Err(invalid(
                        "switch.buffer_model",
                        "shared memory together with switch.pause is not modelled",
                    ));
                }
            }
            BufferModel::Static => {}
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
        if sw.pause {
            return Err(invalid(
                "switch.pfc",
                "replaces 802.3x PAUSE at every port: set switch.pause or switch.pfc, not both",
            ));
        }
        let pause = sw.flow_control;
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
            let share = b.get() / u64::from(classes);
            if pause.xoff.get() >= share {
                return Err(invalid(
                    "switch.pause_xoff",
                    format!(
                        "must be below a 1/{classes} partition of switch.buffer ({share} bytes) with PFC, got {}",
                        pause.xoff.get()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The hosts, switches and links of the run.
    pub fn fabric(&self) -> Result<Fabric, SimError> {
        let hosts = HostCounts {
            reads: self.reads(),
            background_senders: if self.background.tcp_permutation {
                self.background.hosts(self.reads().hosts())
            } else {
                self.background.tcp_flows
            },
            background_receivers: self.background.own_receivers(),
            udp_sender: self.background.udp_rate.is_some(),
        };
        let host =
            Hop { rate: self.link.rate, delay: self.link.cable(), loss_ppb: self.link.loss_ppb, wan: self.wan.is_on() };
        match &self.topology {
            TopologyConfig::Star => Ok(Fabric::star(hosts, host, self.link.skew)),
            TopologyConfig::Tree(t) => {
                let trunk = Hop {
                    rate: t.trunk_rate.unwrap_or(host.rate),
                    delay: t.trunk_delay.unwrap_or(host.delay),
                    loss_ppb: host.loss_ppb,
                    wan: false,
                };
                Ok(Fabric::tree(hosts, host, trunk, t.edge_switches, self.link.skew))
            }
            TopologyConfig::Graph(g) => Fabric::graph(g, hosts, host),
            TopologyConfig::FatTree(f) => Fabric::clos(Shape::FatTree { k: f.k }, f.trunk, f.spreading, hosts, host),
            TopologyConfig::LeafSpine(l) => {
                let shape = Shape::LeafSpine { leaves: l.leaves, spines: l.spines, hosts_per_leaf: l.hosts_per_leaf };
                Fabric::clos(shape, l.trunk, l.spreading, hosts, host)
            }
        }
    }

    /// The fabric is well formed and every connection has a route both ways.
    fn validate_fabric(&self) -> Result<(), SimError> {
        let bg = &self.background;
        if bg.tcp_to_server && bg.tcp_to_client {
            return Err(invalid("background.tcp_to_client", "cannot be set together with background.tcp_to_server"));
        }
        if bg.tcp_permutation {
            if bg.tcp_to_server || bg.tcp_to_client {
                return Err(invalid(
                    "background.tcp_permutation",
                    "cannot be set together with background.tcp_to_server or background.tcp_to_client",
                ));
            }
            let least = self.reads().hosts().max(2);
            if bg.tcp_flows < least {
                return Err(invalid(
                    "background.tcp_flows",
                    format!(
                        "with background.tcp_permutation must be at least {least} (the reads' hosts, and two), got {}",
                        bg.tcp_flows
                    ),
                ));
            }
        }
        self.validate_wan()?;
        if let TopologyConfig::Tree(t) = &self.topology {
            let servers = self.reads().server_hosts();
            if t.edge_switches > servers {
                return Err(invalid(
                    "topology.edge_switches",
                    format!(
                        "{} edge switches for {servers} server hosts would leave {} without a host; at most {servers}",
                        t.edge_switches,
                        t.edge_switches - servers
                    ),
                ));
            }
        }
        if !self.link.host_jitter.is_zero() && (self.switch.pause_config().is_some() || self.classes()) {
            return Err(invalid(
                "link.host_jitter",
                "a host's handling time together with PAUSE, PFC or traffic classes is not modelled",
            ));
        }
        if !self.link.skew.is_zero() && matches!(self.topology, TopologyConfig::Graph(_)) {
            return Err(invalid(
                "link.skew",
                "0 only with topology.kind = \"graph\": a graph's links give their own delays",
            ));
        }
        if let Some(kind) = self.topology.multipath_kind() {
            if !self.link.skew.is_zero() {
                return Err(invalid(
                    "link.skew",
                    format!("0 only with topology.kind = \"{kind}\": its cables are equal"),
                ));
            }
            if self.wan.is_on() {
                return Err(invalid("wan.delay", format!("the wide-area model on a {kind} is not modelled")));
            }
        }
        let fabric = self.fabric()?;
        self.validate_rto_max(&fabric)?;
        let lossy = fabric.links.iter().any(|l| l.ab.loss_ppb > 0);
        if lossy && self.switch.pause_config().is_some() {
            return Err(invalid("link.loss", "random loss together with switch.pause is not modelled"));
        }
        if lossy && self.classes() {
            return Err(invalid(
                "link.loss",
                "random loss together with traffic classes (several priorities) is not modelled",
            ));
        }
        let net = Network::build(&fabric, crate::net::QueueLimit::UNLIMITED, BufferModel::Static, 0);
        let reads = self.reads();
        if self.background.udp_rate.is_some() {
            net.path(udp_host(&reads, &self.background), 0)?;
        }
        let partners = partners(&self.background, self.seed);
        for flow in 0..reads.connections() + self.background.tcp_flows {
            let (a, b) = flow_hosts(flow, &reads, &self.background, &partners);
            net.path(a, b)?;
            net.path(b, a)?;
        }
        Ok(())
    }

    /// The retransmission timer may fire no faster than the fastest link of
    /// `fabric` sends the smallest segment: RFC 6298 (5.4) retransmits one
    /// segment each time it expires, and (5.5) backs off no further than
    /// `tcp.rto_max`, so a shorter cap queues retransmissions at a NIC faster
    /// than it can send them, and the packets in flight grow for as long as
    /// the run lasts.
    fn validate_rto_max(&self, fabric: &Fabric) -> Result<(), SimError> {
        let fastest = fabric.links.iter().flat_map(|l| [l.ab.rate, l.ba.rate]).max().unwrap_or(self.link.rate);
        let smallest = fastest.tx_time(frame::wire_bytes(1));
        if self.tcp.rto.max >= smallest {
            return Ok(());
        }
        let f = Duration::format;
        Err(invalid(
            "tcp.rto_max",
            format!(
                "{} is shorter than the {} the fastest link ({}) takes to send the smallest segment: \
                 every timeout would queue a retransmission faster than a NIC sends one; at least {}",
                f(self.tcp.rto.max),
                f(smallest),
                Rate::format(fastest),
                f(smallest)
            ),
        ))
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
        if self.switch.pause_config().is_some() {
            return Err(invalid("wan.delay", "the wide-area model together with PAUSE or PFC is not modelled"));
        }
        if w.spike_interval.is_some() && (w.spike_height.is_zero() || w.spike_duration.is_zero()) {
            let field = if w.spike_height.is_zero() { "wan.spike_height" } else { "wan.spike_duration" };
            return Err(invalid(field, "must be positive when wan.spike_interval is set"));
        }
        if w.shift_interval.is_some() && w.shift.is_zero() {
            return Err(invalid("wan.shift", "must be positive when wan.shift_interval is set"));
        }
        if w.shift > delay {
            let f = Duration::format;
            return Err(invalid(
                "wan.shift",
                format!("must not exceed wan.delay ({}): a delay is never negative, got {}", f(delay), f(w.shift)),
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

    /// The best goodput one client link of `link.rate` can carry with
    /// full-sized segments: `rate · payload / (payload + per-frame overhead)`
    /// — 949.28 Mbps at 1 Gbps, MSS 1460 (941.48 Mbps with timestamps: 1448
    /// payload bytes per segment).
    pub fn best_goodput_bps(&self) -> f64 {
        self.goodput_at(self.link.rate.0)
    }

    /// The goodput of full-sized segments on a link of `bps` bit/s.
    fn goodput_at(&self, bps: u64) -> f64 {
        // With timestamps the 12 option bytes replace payload: the frame stays `mss` + headers.
        bps as f64 * self.tcp.segment_payload() as f64 / frame::wire_bytes(self.tcp.mss) as f64
    }

    /// The best goodput of all clients together on the network `net` built
    /// for this scenario, Mbps: for each client, the most its servers can
    /// deliver to it along their routes (the max flow on the tree the routes
    /// form, `net::bottleneck`: the client's access link unless a trunk or
    /// the servers' own links are slower), carried in full-sized segments;
    /// summed over the clients (links that several clients' routes share
    /// are counted for each). On a star that is the client link's figure
    /// ([`Scenario::best_goodput_bps`]) times the clients.
    pub fn best_goodput_mbps(&self, net: &Network) -> Result<f64, SimError> {
        let reads = self.reads();
        // Clients with the same figure are counted together: a star's is one product.
        let mut clients_at: std::collections::BTreeMap<u64, u32> = std::collections::BTreeMap::new();
        for client in 0..reads.clients {
            let servers: Vec<u32> =
                (0..reads.servers).map(|i| reads.flow_hosts(client * reads.servers + i).1).collect();
            *clients_at.entry(crate::net::bottleneck::deliverable_bps(net, client, &servers)?).or_default() += 1;
        }
        Ok(clients_at.iter().map(|(&bps, &n)| self.goodput_at(bps) / 1e6 * f64::from(n)).sum())
    }
}

#[cfg(test)]
mod tests;
