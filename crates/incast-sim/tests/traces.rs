//! Traces: what each one holds, and that recording them changes nothing the
//! engine computes.

use incast_sim::net::BufferLimit;
use incast_sim::stats::trace::TraceConfig;
use incast_sim::time::SimDuration;
use incast_sim::{run, RunResult, Scenario};

const SERVERS: u32 = 16;
const BLOCKS: u64 = 6;

/// A FAST08 incast (16 servers, 32 KiB port, 200 ms RTO_min) long enough for timeouts.
fn fast08(trace: TraceConfig) -> RunResult {
    let mut s = Scenario::fast08(SERVERS);
    s.stop.blocks = Some(BLOCKS);
    s.stop.duration = None;
    s.trace = trace;
    run(&s).unwrap()
}

fn all_on() -> TraceConfig {
    TraceConfig {
        goodput_bin: Some(SimDuration::from_millis(5)),
        queue: true,
        flows: true,
        bbr: true,
        block_cwnd: true,
        pcap: false,
    }
}

/// With every trace off the result carries none, and turning them on changes
/// no simulated figure.
#[test]
fn traces_do_not_change_the_simulation() {
    let off = fast08(TraceConfig::default());
    let on = fast08(all_on());
    assert!(off.traces.is_empty());
    assert!(!on.timeouts.is_empty(), "the scenario should time out");
    assert_eq!(off.summary, on.summary);
    assert_eq!(off.flows, on.flows);
    assert_eq!(off.blocks, on.blocks);
    assert_eq!(off.timeouts, on.timeouts);
}

/// The goodput bins hold every byte delivered to the client: Σ goodput × bin / 8 = bytes delivered.
#[test]
fn goodput_bins_sum_to_the_bytes_delivered() {
    let r = fast08(all_on());
    let g = r.traces.goodput.unwrap();
    let bin_s = 0.005;
    let bytes: f64 = g.goodput_mbps.iter().map(|m| m * 1e6 * bin_s / 8.0).sum();
    let delivered = r.summary.bytes_delivered as f64;
    assert!((bytes - delivered).abs() < 1e-6 * delivered, "{bytes} vs {delivered}");
    let bins = (r.summary.sim_time_s / bin_s).ceil() as usize;
    assert!(
        g.time_s.len() == bins || g.time_s.len() == bins + 1,
        "{} bins for {} s",
        g.time_s.len(),
        r.summary.sim_time_s
    );
    assert!(g.goodput_mbps.contains(&0.0), "200 ms timeouts leave empty bins");
    assert!(g.goodput_mbps.iter().all(|&m| m <= 1000.0));
}

/// The bottleneck never holds more than its buffer, and every drop there is sampled.
#[test]
fn queue_samples_never_exceed_the_buffer() {
    let r = fast08(all_on());
    let q = r.traces.queue.unwrap();
    let BufferLimit::Bytes(limit) = Scenario::fast08(1).switch.buffer else { panic!("a byte buffer") };
    assert!(!q.queue_bytes.is_empty());
    assert!(q.queue_bytes.iter().all(|&b| b <= limit.0));
    assert_eq!(q.queue_bytes.iter().copied().max(), Some(r.summary.queue_peak_bytes));
    // Drops of the data direction all happen at the bottleneck.
    let drops = q.dropped.iter().filter(|&&d| d).count() as u64;
    assert_eq!(drops, r.summary.drops);
    assert!(q.time_s.windows(2).all(|w| w[0] <= w[1]));
}

/// One row per (block, server), block by block, and the flow samples cover every server.
#[test]
fn block_cwnd_has_a_row_per_server_and_block() {
    let r = fast08(all_on());
    let b = r.traces.block_cwnd.unwrap();
    assert_eq!(b.block.len(), (SERVERS as u64 * BLOCKS) as usize);
    assert_eq!(b.block[..SERVERS as usize], vec![0; SERVERS as usize][..]);
    assert_eq!(b.block.last(), Some(&(BLOCKS - 1)));
    assert_eq!(b.cwnd_bytes[0], 10 * 1460, "the initial window at block 0");
    let f = r.traces.flows.unwrap();
    assert!((0..SERVERS).all(|flow| f.flow.contains(&flow)));
    let n = f.time_s.len();
    assert!([f.flow.len(), f.cwnd_bytes.len(), f.ssthresh_bytes.len(), f.rto_us.len(), f.srtt_us.len()]
        .iter()
        .all(|&l| l == n));
    assert!(f.rto_us.iter().all(|&rto| rto >= 200_000.0));
}

/// Only the traces asked for are recorded.
#[test]
fn each_trace_is_independent() {
    let r = fast08(TraceConfig { queue: true, ..Default::default() });
    assert!(r.traces.queue.is_some());
    assert!(r.traces.goodput.is_none() && r.traces.flows.is_none() && r.traces.block_cwnd.is_none());
}

/// The BBR trace (`trace.bbr`) follows each BBR server from STARTUP at the
/// high gain, with the handshake's RTT as its first min_rtt, and turning it
/// on changes no simulated figure; a Reno run has no rows.
#[test]
fn the_bbr_trace_follows_each_bbr_server_and_changes_nothing() {
    let bbr_run = |trace| {
        let mut s = Scenario::fast08(SERVERS);
        s.tcp.cc = incast_sim::tcp::CcChoice::Bbr;
        s.stop.blocks = Some(BLOCKS);
        s.stop.duration = None;
        s.trace = trace;
        run(&s).unwrap()
    };
    let on = TraceConfig { bbr: true, ..TraceConfig::default() };
    let (plain, traced) = (bbr_run(TraceConfig::default()), bbr_run(on));
    assert_eq!(plain.summary, traced.summary);
    let b = traced.traces.bbr.expect("the BBR trace is on");
    for flow in 0..SERVERS {
        let first = b.flow.iter().position(|&f| f == flow).expect("every server is sampled");
        assert_eq!(b.mode[first], "startup");
        assert_eq!(b.pacing_gain[first], 739.0 / 256.0);
        assert!(b.min_rtt_s[first] > 0.0, "the handshake's RTT");
    }
    assert!(b.mode.contains(&"probe_bw"), "the servers reach PROBE_BW");
    assert_eq!(fast08(on).traces.bbr.map(|t| t.time_s.len()), Some(0), "no BBR server, no rows");
}
