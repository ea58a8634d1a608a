//! Priority-based flow control (IEEE 802.1Qbb PFC) and traffic classes.

use incast_sim::net::buffer::BufferModel;
use incast_sim::net::fabric::{TopologyConfig, TreeConfig};
use incast_sim::net::pfc::PriorityMask;
use incast_sim::net::BufferLimit;
use incast_sim::stats::PortStats;
use incast_sim::time::{BitRate, Bytes, SimDuration};
use incast_sim::{run, RunResult, Scenario};

/// The reads' priority in these scenarios: a lossless class of its own.
const READS: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    Off,
    Pause,
    /// PFC, lossless on the reads' priority only.
    Pfc,
}

fn with_control(mut s: Scenario, control: Control) -> Scenario {
    s.switch.pause = control == Control::Pause;
    s.switch.pfc = control == Control::Pfc;
    s.switch.pfc_priorities = PriorityMask::of(READS);
    s
}

/// The head-of-line scene with PFC and only `lossless` kept lossless.
fn hol_pfc(lossless: PriorityMask, seed: u64) -> RunResult {
    let mut s = with_control(hol_scene(seed), Control::Pfc);
    s.switch.pfc_priorities = lossless;
    run(&s).unwrap()
}

fn port<'a>(r: &'a RunResult, node: &str, peer: &str) -> &'a PortStats {
    r.ports.iter().find(|p| p.node == node && p.peer == peer).expect("the port exists")
}

/// FAST08 §6's head-of-line blocking scene (`tests/pause.rs`): 16 servers
/// and one bulk background flow share a 10 Gbps trunk into the core, where
/// the client and the background receiver each have a 1 Gbps port; 5 µs
/// hops, 64 KiB ports. The reads are in priority 3, the background flow in
/// priority 0.
fn hol(control: Control, seed: u64) -> RunResult {
    run(&with_control(hol_scene(seed), control)).unwrap()
}

fn hol_scene(seed: u64) -> Scenario {
    let mut s = Scenario::fast08(16);
    s.link.rtt = SimDuration::from_micros(20);
    s.switch.buffer = BufferLimit::Bytes(Bytes::kib(64));
    s.topology = TopologyConfig::Tree(TreeConfig { trunk_rate: Some(BitRate::gbps(10)), ..TreeConfig::default() });
    s.background.tcp_flows = 1;
    s.workload.priority = READS;
    s.seed = seed;
    s
}

/// 802.1Qbb: the congested client port pauses only the reads' priority on
/// the trunk, so the background flow keeps its goodput, where 802.3x PAUSE
/// stops the whole trunk and slows it.
#[test]
fn ieee802_1qbb_pfc_spares_the_victim_that_pause_slows() {
    for seed in 1..=3 {
        let (off, pause, pfc) = (hol(Control::Off, seed), hol(Control::Pause, seed), hol(Control::Pfc, seed));
        let victim = |r: &RunResult| r.summary.background_goodput_mbps;
        let (v_off, v_pause, v_pfc) = (victim(&off), victim(&pause), victim(&pfc));
        assert!(v_off > 900.0, "seed {seed}: without flow control the victim has its port: {v_off:.1} Mbps");
        assert!(v_pause < 0.9 * v_off, "seed {seed}: PAUSE slows the victim: {v_pause:.1} of {v_off:.1} Mbps");
        assert!(v_pfc > 0.98 * v_off, "seed {seed}: PFC spares it: {v_pfc:.1} of {v_off:.1} Mbps");
        let trunk = port(&pfc, "edge0", "core");
        assert!(trunk.paused_priority_us[READS as usize] > 0.0, "seed {seed}: the reads' priority was paused");
        for p in (0..8).filter(|&p| p != READS as usize) {
            assert_eq!(trunk.paused_priority_us[p], 0.0, "seed {seed}: priority {p} never was");
        }
        assert!(port(&pfc, "core", "edge0").pause_frames > 0, "seed {seed}: by the core");
        assert!(pfc.summary.goodput_mbps > 900.0, "seed {seed}: the reads stay near line rate");
    }
}

/// A priority left out of `switch.pfc_priorities` is lossy: with only the
/// background's priority lossless, the congested client port pauses
/// nothing and drops the reads' frames as a drop-tail port does.
#[test]
fn ieee802_1qbb_a_priority_outside_the_lossless_set_is_never_paused() {
    let r = hol_pfc(PriorityMask::of(0), 1);
    assert!(r.summary.drops > 0, "the reads drop at the client's port");
    assert!(r.ports.iter().all(|p| p.pause_frames == 0 && p.paused_us == 0.0), "nothing is paused");
    let lossless = hol_pfc(PriorityMask::of(READS), 1);
    assert_eq!(lossless.summary.drops, 0, "with the reads lossless, none of their frames drop");
}

/// Packets are conserved with traffic classes, with and without PAUSE and
/// PFC, with TCP and UDP background in their own priorities, on a star and
/// across trunks.
#[test]
fn packets_are_conserved_with_traffic_classes() {
    for control in [Control::Off, Control::Pause, Control::Pfc] {
        for topology in
            [TopologyConfig::Star, TopologyConfig::Tree(TreeConfig { edge_switches: 2, ..TreeConfig::default() })]
        {
            let mut s = Scenario::fast08(12);
            s.topology = topology;
            s.workload.priority = READS;
            s.background.tcp_flows = 2;
            s.background.priority = 1;
            s.background.udp_rate = Some(BitRate::mbps(100));
            s.background.udp_priority = 5;
            s.stop.duration = Some(SimDuration::from_millis(100));
            s.seed = 1;
            let r = run(&with_control(s, control)).unwrap();
            let m = &r.summary;
            assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight, "{control:?}");
            assert!(m.background_goodput_mbps > 0.0 && m.udp_goodput_mbps > 0.0, "{control:?}");
        }
    }
}

/// `net::pfc`, "Lossless when": with `qos:2` the reads (priority 4) have the
/// upper half of each port to themselves; with that half XOFF plus 9.4 KB
/// per server link, PFC on priority 4 loses none of their frames, while
/// UDP in the lossy priority 0 still drops at the client's port, where it
/// gets its round-robin share.
#[test]
fn a_lossless_priority_never_drops_under_the_documented_headroom() {
    let servers = 8;
    let mut s = Scenario::fast08(servers);
    let xoff = 16 * 1024;
    let headroom = 2 * 25_000 * 1_000 / 8 / 1_000 + 2 * 1538 + 84; // 25 µs at 1 Gbps, both ways
    s.switch.buffer = BufferLimit::Bytes(Bytes::new(2 * (xoff + u64::from(servers) * headroom)));
    s.switch.buffer_model = BufferModel::Qos { classes: 2 };
    s.switch.pfc = true;
    s.switch.pfc_priorities = PriorityMask::of(4);
    s.workload.priority = 4;
    s.background.udp_rate = Some(BitRate::mbps(700));
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(300));
    s.seed = 1;
    let r = run(&s).unwrap();
    assert_eq!(r.flows.iter().map(|f| f.drops).sum::<u64>(), 0, "the lossless reads lost frames");
    assert!(r.summary.drops > 0, "UDP, lossy, drops at the client's port");
    let client = port(&r, "switch", "client");
    assert!(client.pause_frames == 0, "the client sends nothing to pause");
    let paused: f64 = r.ports.iter().map(|p| p.paused_priority_us[4]).sum();
    assert!(paused == 0.0, "switch ports are never paused: hosts send no PFC");
    let server_link = port(&r, "switch", "server0");
    assert!(server_link.pause_frames > 0, "the client's port passed XOFF and paused the servers");
    assert!(r.summary.goodput_mbps > 300.0, "the reads keep their share: {:.1} Mbps", r.summary.goodput_mbps);
}
