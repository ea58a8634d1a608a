//! A wide-area path on the client's link (`net::wan`): exact delays without
//! jitter, determinism and conservation with it, and CMU09 §8's spurious
//! timeouts when delay spikes outrun a 200 µs RTO_min.

use incast_sim::net::fabric::{TopologyConfig, TreeConfig};
use incast_sim::net::wan::WanConfig;
use incast_sim::tcp::SpuriousRto;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::ResponseSize;
use incast_sim::{run, Scenario};

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// One bulk transfer from one server to the client across a 20 ms WAN hop.
fn bulk(rto_min: SimDuration) -> Scenario {
    let mut s = Scenario::fast08(1);
    s.workload.response = ResponseSize::Sru(Bytes::mib(1024));
    s.tcp.rto.min = rto_min;
    s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    s.tcp.spurious_rto = SpuriousRto::Frto;
    s.wan = WanConfig { delay: Some(ms(20)), ..WanConfig::default() };
    s.stop.duration = Some(SimDuration::from_secs(5));
    s
}

/// Spikes of 50 ms for 100 ms every 2 s on average, as a bloated buffer filling up.
fn spiky(mut s: Scenario) -> Scenario {
    s.wan.spike_interval = Some(SimDuration::from_secs(2));
    s.wan.spike_height = ms(50);
    s.wan.spike_duration = ms(100);
    s
}

/// A one-segment read takes exactly twice the base delay longer with a WAN
/// hop than without: the request crosses the client's link once each way,
/// and so does the response. The same holds on a tree.
#[test]
fn a_wan_hop_without_jitter_adds_exactly_its_delay_each_way() {
    for topology in [TopologyConfig::Star, TopologyConfig::Tree(TreeConfig::default())] {
        let mut s = Scenario::fast08(1);
        s.topology = topology;
        s.workload.response = ResponseSize::Sru(Bytes::new(1000));
        s.workload.server_jitter = SimDuration::ZERO;
        s.stop.blocks = Some(3);
        s.stop.duration = None;
        let local = run(&s).unwrap();
        s.wan.delay = Some(ms(15));
        let wide = run(&s).unwrap();
        for (a, b) in local.blocks.iter().zip(&wide.blocks) {
            let extra = b.time_ms - a.time_ms;
            assert!((extra - 30.0).abs() < 1e-9, "block {}: {extra} ms more", a.block);
        }
    }
}

/// The same seed gives the same run, to the byte; another seed another.
#[test]
fn a_wan_run_is_a_function_of_scenario_and_seed() {
    let mut s = spiky(bulk(SimDuration::from_micros(200)));
    s.wan.jitter = ms(2);
    s.wan.shift_interval = Some(SimDuration::from_secs(1));
    s.wan.shift = ms(10);
    s.stop.duration = Some(SimDuration::from_secs(2));
    let a = run(&s).unwrap();
    let b = run(&s).unwrap();
    assert_eq!(format!("{:?}", a.summary), format!("{:?}", b.summary));
    assert_eq!(format!("{:?}", a.timeouts), format!("{:?}", b.timeouts));
    s.seed += 1;
    assert_ne!(run(&s).unwrap().summary.bytes_delivered, a.summary.bytes_delivered);
}

/// Every packet sent is delivered, dropped or still in flight, with
/// jitter, spikes, shifts and random loss all on.
#[test]
fn packets_are_conserved_across_a_wan_hop() {
    let mut s = spiky(bulk(SimDuration::from_micros(200)));
    s.wan.jitter = ms(3);
    s.wan.shift_interval = Some(SimDuration::from_millis(500));
    s.wan.shift = ms(15);
    s.link.loss_ppb = 1_000_000;
    s.background.tcp_flows = 2;
    let m = run(&s).unwrap().summary;
    assert!(m.packets_in_flight > 0, "the wide-area path holds packets at the end");
    assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight);
}

/// CMU09 §8: a spurious timeout comes from a sudden rise in delay, not
/// from loss. A 50 ms
/// spike on a 40 ms path outruns a 200 µs RTO_min (the RTO has shrunk to
/// about one RTT) but not a 200 ms one; nothing is lost, so every timeout is
/// spurious, and F-RTO and Eifel both say so. With no spike there is no
/// timeout at all.
#[test]
fn cmu09_8_delay_spikes_cause_spurious_timeouts_at_a_low_rto_min() {
    let calm = run(&bulk(SimDuration::from_micros(200))).unwrap().summary;
    assert_eq!((calm.timeouts, calm.drops), (0, 0));
    for eifel in [false, true] {
        let with = |rto_min| {
            let mut s = spiky(bulk(rto_min));
            s.stop.duration = Some(SimDuration::from_secs(10));
            if eifel {
                s.tcp.timestamps = true;
                s.tcp.spurious_rto = SpuriousRto::Eifel;
            }
            run(&s).unwrap().summary
        };
        let (fine, coarse) = (with(SimDuration::from_micros(200)), with(ms(200)));
        assert_eq!(fine.drops, 0);
        assert!(fine.timeouts > 0 && fine.spurious_timeouts == fine.timeouts, "eifel {eifel}: {fine:?}");
        assert_eq!(coarse.timeouts, 0, "eifel {eifel}");
    }
}

/// CMU09 §8.1's spurious timeouts are judged for every timeout, as its
/// trace analysis did: a 250 ms spike lasting 300 ms holds a segment through
/// several backed-off 200 µs-RTO_min timeouts. The path drops nothing, so
/// every one of them is undropped; F-RTO, which judges only a segment's
/// first timeout (RFC 5682 §2.1), calls fewer of them spurious.
#[test]
fn cmu09_8_1_every_timeout_of_a_delayed_segment_is_undropped() {
    let mut s = bulk(SimDuration::from_micros(200));
    s.wan.spike_interval = Some(SimDuration::from_secs(2));
    s.wan.spike_height = ms(250);
    s.wan.spike_duration = ms(300);
    s.stop.duration = Some(SimDuration::from_secs(10));
    let m = run(&s).unwrap().summary;
    assert_eq!(m.drops, 0);
    assert!(m.spurious_timeouts < m.timeouts, "repeated timeouts: {m:?}");
    assert_eq!(m.undropped_timeouts, m.timeouts);
}

/// Where every copy of the segment a timeout resends was lost, the timeout
/// is not undropped: FAST08's incast at a 200 ms RTO_min, whose switch drops
/// them, and a WAN path without spikes whose sender loses data segments
/// before the wire (ACKs all arrive).
#[test]
fn a_timeout_after_every_copy_was_lost_is_not_undropped() {
    let mut incast = Scenario::fast08(16);
    incast.stop.duration = Some(SimDuration::from_secs(2));
    let mut lossy = bulk(ms(200));
    lossy.tcp.send_loss_ppb = 50_000_000;
    lossy.stop.duration = Some(SimDuration::from_secs(20));
    for s in [incast, lossy] {
        let m = run(&s).unwrap().summary;
        assert!(m.timeouts > 0 && m.drops + m.send_losses > 0, "{m:?}");
        assert_eq!(m.undropped_timeouts, 0, "{m:?}");
    }
}
