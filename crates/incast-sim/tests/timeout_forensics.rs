//! Timeout forensics in FAST08 Table 3's setting, shrunk to stay fast:
//! 16 servers, a 64-packet switch port, 256 KiB SRU, 2 s instead of 20 s.

use incast_sim::net::BufferLimit;
use incast_sim::stats::StatsConfig;
use incast_sim::stats::{GipClass, RunResult, Side, TimeoutClass};
use incast_sim::tcp::LossRecovery;
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

fn table3(recovery: LossRecovery, record: bool) -> RunResult {
    let mut s = Scenario::fast08(16);
    s.switch.buffer = BufferLimit::Packets(64);
    s.tcp.recovery = recovery;
    s.stop.duration = Some(SimDuration::from_secs(2));
    s.stats = StatsConfig { timeouts: record };
    run(&s).unwrap()
}

fn check(recovery: LossRecovery) -> RunResult {
    let r = table3(recovery, true);
    let sum = &r.summary;
    let c = sum.timeout_classes;
    let g = sum.gip_timeout_classes;
    println!(
        "{recovery:?}: {} blocks, {} timeouts; full window {}, last packet {}, lost retransmit {}, other {}; \
         GIP floss {}, lack {}, other {}; max per-flow timeouts per block {:?}",
        sum.blocks,
        sum.timeouts,
        c.full_window_loss,
        c.last_packet_loss,
        c.lost_retransmit,
        c.other,
        g.floss,
        g.lack,
        g.other,
        r.blocks.iter().map(|b| b.max_flow_timeouts).collect::<Vec<_>>(),
    );
    assert!(sum.timeouts > 0, "Table 3's setting times out");
    assert_eq!(c.total(), sum.timeouts, "FAST08 classes cover every timeout");
    assert_eq!(g.total(), sum.timeouts, "GIP classes cover every timeout");
    assert_eq!(r.timeouts.len() as u64, sum.timeouts, "one row per timeout");
    assert!(r.timeouts.windows(2).all(|w| w[0].time_s <= w[1].time_s), "rows are in time order");
    assert!(r.timeouts.iter().all(|t| t.block <= sum.blocks && (t.flow as usize) < r.flows.len()));
    assert!(r.timeouts.iter().all(|t| !t.spurious));
    let rows =
        |f: &dyn Fn(&incast_sim::stats::TimeoutRecord) -> bool| r.timeouts.iter().filter(|t| f(t)).count() as u64;
    assert_eq!(rows(&|t| t.class == TimeoutClass::FullWindowLoss), c.full_window_loss);
    assert_eq!(rows(&|t| t.gip_class == GipClass::Floss), g.floss);
    assert_eq!(rows(&|t| t.side == Side::Server) + rows(&|t| t.side == Side::Client), sum.timeouts);
    // GIP §III: the unluckiest flow's count per block, never more than all of a block's timeouts.
    for b in &r.blocks {
        let in_block = r.timeouts.iter().filter(|t| t.block == b.block).count() as u64;
        assert!(b.max_flow_timeouts <= in_block, "block {}: {} > {in_block}", b.block, b.max_flow_timeouts);
        assert_eq!(b.max_flow_timeouts == 0, in_block == 0);
    }
    r
}

/// True when full window losses are the largest FAST08 class.
fn full_window_losses_dominate(r: &RunResult) -> bool {
    let c = r.summary.timeout_classes;
    c.full_window_loss >= c.last_packet_loss.max(c.lost_retransmit).max(c.other)
}

/// FAST08 §5.1, Table 3 (Reno column): every timeout falls in exactly one
/// class, and full window losses are the largest, as in the paper
/// (464 of 589 there).
#[test]
fn fast08_table3_reno_classes_cover_every_timeout_full_window_dominates() {
    let r = check(LossRecovery::Reno);
    assert!(full_window_losses_dominate(&r), "{:?}", r.summary.timeout_classes);
}

/// FAST08 §5.1, Table 3 (NewReno column): every timeout falls in exactly one
/// class. DEVIATION (FAST08 Table 3): the paper's NewReno timeouts are
/// mostly full window losses (362 of 442); here most see DART 2 ("other") or
/// a lost fast/partial-ACK retransmission, so dominance is not asserted —
/// an open modelling question, not a classifier property.
#[test]
fn fast08_table3_newreno_classes_cover_every_timeout() {
    check(LossRecovery::NewReno);
}

/// Turning the per-timeout table off keeps the counters and changes nothing else.
#[test]
fn stats_timeouts_off_keeps_counters_only() {
    let on = table3(LossRecovery::NewReno, true);
    let off = table3(LossRecovery::NewReno, false);
    assert!(off.timeouts.is_empty());
    assert_eq!(on.summary, off.summary);
    assert_eq!(on.blocks, off.blocks);
}
