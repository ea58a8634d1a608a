//! GIP (Zhang et al.) in its paper's simulation setting (GIP §VII-A: 1 Gbps,
//! a 128-packet bottleneck buffer, 1 KB packets, 256 KB stripe units, 117 µs
//! of propagation delay), with every segment acknowledged as ns-2's receiver does.

use incast_sim::net::BufferLimit;
use incast_sim::stats::Summary;
use incast_sim::tcp::{DelayedAckConfig, GipPattern};
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

fn gip_setting(servers: u32, gip: GipPattern) -> Summary {
    let mut s = Scenario::fast08(servers);
    s.link.rtt = SimDuration::from_micros(117);
    s.switch.buffer = BufferLimit::Packets(128);
    s.tcp.mss = 1000;
    s.tcp.delayed_ack = DelayedAckConfig::off();
    s.tcp.gip = gip;
    s.stop.duration = Some(SimDuration::from_secs(1));
    let sum = run(&s).unwrap().summary;
    println!(
        "{servers} servers, {gip:?}: utilization {:.2}, {} timeouts ({:?}), {} redundant copies",
        sum.utilization, sum.timeouts, sum.gip_timeout_classes, sum.redundant_packets
    );
    sum
}

/// GIP §VII-A: the two timeout kinds GIP targets — FLoss-TOs at the head of a
/// stripe unit and LAck-TOs at its tail — vanish at 16 senders, which lifts
/// goodput several-fold, and fall to under a third of NewReno's at 64 senders
/// (where the timeouts left are mid-unit losses in windows of a few packets).
#[test]
fn gip_vii_a_removes_most_floss_and_lack_timeouts() {
    let targeted = |s: &Summary| s.gip_timeout_classes.floss + s.gip_timeout_classes.lack;
    let (plain, gip) = (gip_setting(16, GipPattern::Off), gip_setting(16, GipPattern::Pattern333));
    assert_eq!(targeted(&gip), 0);
    assert!(gip.redundant_packets > 0);
    assert!(
        gip.utilization > 2.0 * plain.utilization,
        "GIP {:.2} vs NewReno {:.2}",
        gip.utilization,
        plain.utilization
    );
    let (plain, gip) = (gip_setting(64, GipPattern::Off), gip_setting(64, GipPattern::Pattern333));
    assert!(3 * targeted(&gip) < targeted(&plain), "GIP {} vs NewReno {}", targeted(&gip), targeted(&plain));
}
