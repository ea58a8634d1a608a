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
use crate::net::fabric::{Fabric, Hop, HostCounts, TopologyConfig};
use crate::net::pfc::PriorityMask;
use crate::net::wan::WanConfig;
use crate::net::{frame, BufferLimit, LinkConfig, Network, SwitchConfig};
use crate::settings::{Duration, Rate, Spec};
use crate::stats::trace::TraceConfig;
use crate::stats::trace::MAX_GOODPUT_BINS;
use crate::stats::StatsConfig;
use crate::tcp::rcv_window::RcvWindowRule;
use crate::tcp::sack::SackRecovery;
use crate::tcp::{CcChoice, SpuriousRto, TcpConfig};
use crate::time::{Bytes, SimDuration};
use crate::workload::background::{flow_hosts, udp_host, BackgroundConfig};
use crate::workload::clients::Layout;
use crate::workload::{ResponseSize, SyncReadConfig};

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
    /// Number of servers answering each block (of each client).
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
    /// Refuse a run whose estimated memory exceeds this (`footprint`);
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
                "\"dctcp\" needs ECN marks: set switch.ecn_threshold (the DCTCP paper's K: 20 packets at \
                 1 Gbps, 65 at 10 Gbps), or use the dctcp preset, which scales it with the link rate",
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
        match (self.stop.blocks, self.stop.duration) {
            (None, None) => Err(invalid("blocks", "set blocks, duration, or both")),
            _ => Ok(()),
        }
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
            background_senders: self.background.tcp_flows,
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
        }
    }

    /// The fabric is well formed and every connection has a route both ways.
    fn validate_fabric(&self) -> Result<(), SimError> {
        if self.background.tcp_to_server && self.background.tcp_to_client {
            return Err(invalid("background.tcp_to_client", "cannot be set together with background.tcp_to_server"));
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
        let fabric = self.fabric()?;
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
    use crate::time::{BitRate, Bytes};
    use serde_json::{json, Map, Value as Json};

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

    fn field_of(s: &Scenario) -> String {
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
        assert_eq!(field_of(&s), "tcp.rto_min");
        let mut s = ok.clone();
        s.stop = StopConfig { blocks: None, duration: None };
        assert_eq!(field_of(&s), "blocks");
        let mut s = ok.clone();
        s.workload.response = ResponseSize::Block(Bytes::new(2));
        assert_eq!(field_of(&s), "workload.block");
        let mut s = ok.clone();
        s.trace.goodput_bin = Some(SimDuration::ZERO);
        assert_eq!(field_of(&s), "trace.goodput_bin");
        let mut s = ok.clone();
        s.workload.clients = 0;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "workload.clients: must be a whole number of clients between 1 and 10000, got 0"
        );
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
        paused.switch.pause = true;
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
        ok.switch.pfc = true;
        ok.validate().unwrap();
        let mut s = ok.clone();
        s.workload.priority = 8;
        assert_eq!(field_of(&s), "workload.priority");
        let mut s = ok.clone();
        s.background.udp_priority = 9;
        assert_eq!(field_of(&s), "background.udp_priority");
        let mut s = ok.clone();
        s.switch.pause = true;
        assert_eq!(field_of(&s), "switch.pfc", "PFC replaces PAUSE");
        let mut s = ok.clone();
        s.workload.priority = 0;
        assert_eq!(field_of(&s), "switch.pfc", "one class: PFC is PAUSE");
        let mut s = ok.clone();
        s.switch.pfc_priorities = PriorityMask(0);
        assert_eq!(field_of(&s), "switch.pfc_priorities");
        let mut s = ok.clone();
        s.switch.buffer_model = BufferModel::Qos { classes: 4 };
        assert_eq!(field_of(&s), "switch.pause_xoff", "16 KiB XOFF in an 8 KiB partition");
        let mut s = ok;
        s.switch.pfc = false;
        s.switch.buffer_model = BufferModel::Shared { alpha_thousandths: 1000 };
        assert_eq!(field_of(&s), "switch.buffer_model");
    }

    fn refused(raw: serde_json::Value) -> String {
        Scenario::from_json(&raw).unwrap_err().to_string()
    }

    /// Settings that contradict each other, or that the engine would keep as
    /// something else than what was written, are refused naming the setting.
    #[test]
    fn contradictions_and_values_kept_otherwise_are_refused() {
        let m = refused(json!({"servers": 4, "switch": {"buffer": "32KiB", "ecn_threshold": "1MiB"}}));
        assert!(m.starts_with("switch.ecn_threshold: must be below switch.buffer (32KiB)"), "{m}");
        let m = refused(json!({"servers": 4, "tcp": {"ictcp_gamma1": 0.9, "ictcp_gamma2": 0.1}}));
        assert_eq!(m, "tcp.ictcp_gamma1: must not exceed tcp.ictcp_gamma2 (0.1), got 0.9");
        let m = refused(json!({"servers": 4, "tcp": {"ictcp": true, "rcv_window": "linux"}}));
        assert!(m.starts_with("tcp.rcv_window: \"linux\" grows the window ICTCP sets"), "{m}");
        let m = refused(json!({"servers": 4, "tcp": {"rude_allowed": true, "rude": true, "rude_servers": 100}}));
        assert_eq!(m, "tcp.rude_servers: must be at most servers (4), or \"all\", got 100");
        let m = refused(json!({"servers": 4, "tcp": {"cubic_c": 5000000}}));
        assert!(m.starts_with("tcp.cubic_c: 5000000 kept in steps of 1/1000 is 5000000000, outside"), "{m}");
        let m = refused(json!({"servers": 4, "tcp": {"cubic_c": 0.0001}}));
        assert!(m.starts_with("tcp.cubic_c: 0.0001 kept in steps of 1/1000 is 0, outside 0.001"), "{m}");
        let m = refused(json!({"servers": 4, "link": {"rtt": "0.1ps"}}));
        assert_eq!(m, "link.rtt: '0.1ps' rounds to 0: durations are kept in whole picoseconds");
        let m = refused(json!({"servers": 4, "link": {"tx_queue": 100}, "switch": {"pause": true}}));
        assert!(m.starts_with("link.tx_queue: a NIC queue limit together with switch.pause"), "{m}");
        let m = refused(json!({"servers": 4, "link": {"host_jitter": "40us"}, "switch": {"pause": true}}));
        assert!(m.starts_with("link.host_jitter: a host's handling time together with PAUSE"), "{m}");
        let graph = json!({"kind": "graph", "nodes": [{"name": "c", "kind": "client"}, {"name": "s", "kind": "server"}],
            "links": [{"a": "c", "b": "s"}]});
        let m = refused(json!({"servers": 1, "link": {"skew": "1ps"}, "topology": graph}));
        assert_eq!(m, "link.skew: 0 only with topology.kind = \"graph\": a graph's links give their own delays");
        let m = refused(json!({"servers": 4, "tcp": {"recovery": "sack", "sack_recovery": "ns2", "prr": true}}));
        assert!(m.starts_with("tcp.sack_recovery: \"ns2\" (ns-2.35's Sack1) has no PRR"), "{m}");
        let m = refused(json!({"servers": 4, "link": {"tx_queue": 0}}));
        assert_eq!(
            m,
            "link.tx_queue: must be \"off\" or a count; must be a whole number of frames between 1 and 2^32-1, got 0"
        );
        let m = refused(json!({"servers": 4, "link": {"loss": 0.9999999999}}));
        assert!(m.starts_with("link.loss: must be a probability from 0 up to 1 (exclusive) once kept in parts"), "{m}");
    }

    /// A scenario file names only what it changes; the rest takes the defaults.
    #[test]
    fn missing_keys_take_the_defaults() {
        let s = Scenario::from_json(&json!({"servers": 4, "tcp": {"rto_min": "1us"}})).unwrap();
        let mut expected = Scenario { seed: DEFAULT_SEED, ..Scenario::fast08(4) };
        expected.tcp.rto.min = SimDuration::from_micros(1);
        assert_eq!(s, expected);
    }

    /// The settings the congestion control and loss recovery replaced name what replaced them.
    #[test]
    fn retired_tcp_settings_name_their_replacements() {
        for raw in [json!({"servers": 2, "tcp": {"variant": "cubic"}}), json!({"servers": 2, "tcp": {"sack": true}})] {
            let m = refused(raw);
            assert!(m.contains("replaced by tcp.") && m.contains("tcp.recovery"), "{m}");
        }
        let mut raw = serde_json::Map::new();
        let m = Scenario::apply_override(&mut raw, "tcp.variant", json!("sack")).unwrap_err().to_string();
        assert!(m.starts_with("tcp.variant: replaced by tcp.cc"), "{m}");
    }

    /// DCTCP without a marking switch would run as Reno under DCTCP's name.
    #[test]
    fn dctcp_without_an_ecn_threshold_is_refused() {
        let m = refused(json!({"servers": 4, "tcp": {"cc": "dctcp"}}));
        assert!(m.starts_with("tcp.cc: \"dctcp\" needs ECN marks: set switch.ecn_threshold"), "{m}");
        let ok = json!({"servers": 4, "tcp": {"cc": "dctcp"}, "switch": {"ecn_threshold": "20pkt"}});
        assert!(Scenario::from_json(&ok).is_ok());
    }

    #[test]
    fn unknown_keys_are_refused_naming_the_table_and_what_it_has() {
        let err = Scenario::from_json(&json!({"servers": 2, "link": {"speed": 5}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "link.speed: unknown setting; [link] has rate, rtt, propagation, loss, arrival_order, tx_queue, host_jitter, skew"
        );
    }

    /// The canonical form reads back to the same scenario, and the SI form
    /// keeps plain numbers.
    #[test]
    fn the_written_form_reads_back() {
        let raw = json!({"servers": 8, "blocks": 3, "switch": {"buffer": "64pkt", "pause": true},
            "tcp": {"delayed_ack": "off", "cc": "cubic", "recovery": "sack"},
            "topology": {"kind": "tree", "edge_switches": 2}, "workload": {"block": "1MiB"}});
        let s = Scenario::from_json(&raw).unwrap();
        let w = s.written();
        assert_eq!(Scenario::from_json(&w.toml).unwrap(), s);
        assert_eq!(w.toml["tcp"]["rto_min"], json!("200ms"));
        assert_eq!(w.si["tcp"]["rto_min"], json!(0.2));
        assert_eq!(w.si["switch"]["buffer"], json!("64pkt"));
        assert_eq!(w.si["workload"]["block"], json!(1_048_576));
        assert!(w.si.get("duration").is_none() && w.toml["workload"].get("sru").is_none());
    }

    #[test]
    fn overrides_take_dotted_paths_and_replace_sru_with_block() {
        let mut raw = Map::new();
        Scenario::apply_override(&mut raw, "servers", json!(4)).unwrap();
        Scenario::apply_override(&mut raw, "workload.sru", json!("1KiB")).unwrap();
        Scenario::apply_override(&mut raw, "workload.block", json!("1MiB")).unwrap();
        Scenario::apply_override(&mut raw, "tcp", json!({"rto_min": "1ms"})).unwrap();
        assert_eq!(Json::Object(raw), json!({"servers": 4, "workload": {"block": "1MiB"}, "tcp": {"rto_min": "1ms"}}));
        let err = Scenario::apply_override(&mut Map::new(), "servers.x", json!(1)).unwrap_err();
        assert_eq!(err.to_string(), "servers.x: unknown setting; servers is a single value, not a table");
    }

    /// Every setting in the schema is dotted, documented and has a default
    /// that reads back (except `servers` and `blocks`, which have none).
    #[test]
    fn the_schema_documents_every_setting() {
        let schema = Scenario::schema();
        assert!(schema.iter().any(|e| e.name == "tcp.rto_min" && e.setting.kind == "duration"));
        for e in &schema {
            assert!(!e.setting.doc.is_empty(), "{} has no doc", e.name);
        }
        let names: Vec<&str> = schema.iter().map(|e| e.name.as_str()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
