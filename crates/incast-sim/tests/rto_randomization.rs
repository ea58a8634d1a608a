//! CMU09 §7 (Fig 12, Fig 13): with many flows and a microsecond RTO_min, flows
//! that time out together back off deterministically and retransmit "at
//! precisely the same time"; the randomized timeout (`timeout = RTO +
//! (rand(0.5) × RTO)`) desynchronizes them. Shrunk to stay fast: 1 Gbps,
//! 64 servers, 1 MiB fixed block, RTO_min 200 µs, exact timers, delayed ACK off.

use incast_sim::stats::{RunResult, Side};
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::ResponseSize;
use incast_sim::{run, Scenario};

/// Window within which two flows' timeouts count as simultaneous.
const WINDOW_S: f64 = 20e-6;

fn fig12(randomize: bool) -> RunResult {
    let mut s = Scenario::fast08(64);
    s.workload.response = ResponseSize::Block(Bytes::mib(1));
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.tcp.rto.granularity = SimDuration::ZERO;
    s.tcp.rto.randomize = randomize;
    s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    s.stop.blocks = Some(40);
    s.stop.duration = None;
    run(&s).expect("valid scenario")
}

/// "Repeated simultaneous retransmissions": server timeouts of a segment that
/// had already timed out (`backoff >= min_backoff`) expiring within `WINDOW_S`
/// of another flow's such timeout.
fn simultaneous(r: &RunResult, min_backoff: u32) -> usize {
    let t: Vec<(f64, u32)> = r
        .timeouts
        .iter()
        .filter(|t| t.side == Side::Server && t.backoff >= min_backoff)
        .map(|t| (t.time_s, t.flow))
        .collect();
    (0..t.len())
        .filter(|&i| {
            let near = |j: usize| t[j].1 != t[i].1 && (t[j].0 - t[i].0).abs() <= WINDOW_S;
            (i.saturating_sub(64)..i).rev().any(near) || (i + 1..t.len().min(i + 65)).any(near)
        })
        .count()
}

/// CMU09 §5 "randomized timeout delay": `timeout = RTO + (rand(0.5) * RTO)`
/// desynchronizes the retransmissions of flows that time out together
/// (CMU09 §7: "fewer flows experience repeated timeouts").
#[test]
fn cmu09_5_randomized_rto_desynchronizes_retransmissions() {
    let plain = fig12(false);
    let random = fig12(true);
    let (sp, sr) = (simultaneous(&plain, 1), simultaneous(&random, 1));
    for (name, r) in [("deterministic RTO", &plain), ("randomized RTO   ", &random)] {
        println!(
            "{name}: {} timeouts; within 20us of another flow's: {} of all, {} repeated (backoff>=1), \
             {} backoff>=2; goodput {:.1} Mbps",
            r.summary.timeouts,
            simultaneous(r, 0),
            simultaneous(r, 1),
            simultaneous(r, 2),
            r.summary.goodput_mbps
        );
    }
    assert!(sp > 0, "the deterministic setting has simultaneous repeated timeouts");
    assert!(sr * 4 < sp * 3, "randomization should cut repeated simultaneous timeouts by > 25%: {sr} vs {sp}");
    assert!(simultaneous(&random, 2) * 2 < simultaneous(&plain, 2), "and more than halve the twice-repeated ones");
    assert!(random.summary.goodput_mbps > plain.summary.goodput_mbps, "CMU09 Fig 13: goodput improves");
    // Same scenario and seed, same run.
    assert_eq!(simultaneous(&fig12(true), 1), sr);
}
