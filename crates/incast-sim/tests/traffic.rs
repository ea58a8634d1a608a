//! Open-loop traffic (`[traffic]`): flows arriving at random between the
//! hosts, their completion times against the ideal, and queries.

use incast_sim::stats::fct::FlowRecord;
use incast_sim::time::SimDuration;
use incast_sim::workload::flow_sizes::Published;
use incast_sim::workload::traffic::{FctEnd, FlowSizes, TrafficConfig};
use incast_sim::workload::WorkloadKind;
use incast_sim::{run, Scenario};

/// Eight hosts on one 1 Gbps switch (the client and seven servers), no
/// reads, Hadoop flows at `load` for `ms` milliseconds.
fn rack(load: f64, ms: u64) -> Scenario {
    let mut s = Scenario::fast08(7);
    s.workload.kind = WorkloadKind::None;
    let sizes = FlowSizes::Published(Published::Hadoop);
    s.traffic = TrafficConfig { load: Some(load), sizes, ..TrafficConfig::default() };
    (s.stop.blocks, s.stop.duration) = (None, Some(SimDuration::from_millis(ms)));
    s.seed = 3;
    s
}

fn overlaps(a: &FlowRecord, b: &FlowRecord) -> bool {
    let end = |f: &FlowRecord| f.start_s + f.fct_s.unwrap_or(f64::INFINITY);
    a.start_s < end(b) && b.start_s < end(a)
}

/// A flow that met no other flow took exactly its ideal time: its
/// slowdown is 1, whatever its size (within the initial window, or many
/// slow-start rounds and delayed-ACK waits long).
#[test]
fn a_flow_alone_on_the_empty_fabric_has_slowdown_one() {
    let r = run(&rack(0.01, 2000)).unwrap();
    let flows = &r.open_flows;
    let alone: Vec<&FlowRecord> =
        flows.iter().filter(|f| f.fct_s.is_some() && flows.iter().filter(|g| overlaps(f, g)).count() == 1).collect();
    assert!(alone.len() >= 5, "{} flows ran alone of {}", alone.len(), flows.len());
    assert!(alone.iter().any(|f| f.size_bytes > 100 * 1460), "some lone flow leaves slow start's first rounds");
    for f in alone {
        assert_eq!(f.fct_s, Some(f.ideal_s), "{f:?}");
    }
}

/// Counted to the sender's ACK of the last byte (HPCC's reading), a lone
/// flow's completion time is again exactly its ideal, and every flow ends
/// later than at its receiver: the packets are the same, only the end moves.
#[test]
fn a_completion_time_counted_to_the_senders_ack_is_the_ideal_alone_and_ends_after_delivery() {
    let delivered = run(&rack(0.01, 4000)).unwrap();
    let mut s = rack(0.01, 4000);
    s.traffic.fct_end = FctEnd::Acked;
    let acked = run(&s).unwrap();
    assert_eq!(acked.summary.packets_sent, delivered.summary.packets_sent);
    let flows = &acked.open_flows;
    let alone: Vec<&FlowRecord> =
        flows.iter().filter(|f| f.fct_s.is_some() && flows.iter().filter(|g| overlaps(f, g)).count() == 1).collect();
    assert!(alone.len() >= 5, "{} flows ran alone of {}", alone.len(), flows.len());
    for f in alone {
        assert_eq!(f.fct_s, Some(f.ideal_s), "{f:?}");
    }
    assert_eq!(flows.len(), delivered.open_flows.len());
    for (a, d) in flows.iter().zip(&delivered.open_flows) {
        assert!(a.ideal_s > d.ideal_s, "{a:?} {d:?}");
        if let (Some(ta), Some(td)) = (a.fct_s, d.fct_s) {
            assert!(ta > td, "{a:?} {d:?}");
        }
    }
}

/// No flow completes faster than alone on the empty fabric.
#[test]
fn no_flow_beats_its_ideal() {
    let r = run(&rack(0.4, 100)).unwrap();
    assert!(r.open_flows.len() > 100);
    for f in r.open_flows.iter().filter(|f| f.fct_s.is_some()) {
        assert!(f.fct_s.unwrap() >= f.ideal_s * (1.0 - 1e-12), "{f:?}");
    }
}

/// Under load every flow either finished with all its bytes or is counted
/// unfinished with fewer; every packet is delivered, dropped or in flight.
#[test]
fn bytes_are_conserved_and_every_flow_finishes_or_is_counted_unfinished() {
    let mut s = rack(0.6, 100);
    s.switch.buffer = incast_sim::net::BufferLimit::Packets(40);
    let r = run(&s).unwrap();
    let t = r.summary.traffic.as_ref().unwrap();
    assert!(r.summary.drops > 0, "the run must lose packets to test anything");
    assert_eq!(t.open_flows, r.open_flows.len() as u64);
    assert!(t.open_flows_unfinished > 0);
    for f in &r.open_flows {
        match f.fct_s {
            Some(_) => assert_eq!(f.delivered_bytes, f.size_bytes, "{f:?}"),
            None => assert!(f.delivered_bytes < f.size_bytes, "{f:?}"),
        }
    }
    let unfinished = r.open_flows.iter().filter(|f| f.fct_s.is_none()).count() as u64;
    assert_eq!(unfinished, t.open_flows_unfinished);
    let m = &r.summary;
    assert_eq!(m.packets_sent, m.packets_delivered + m.drops + m.packets_in_flight);
}

/// Queries fan in: each completes when its last response has arrived, no
/// sooner than its slowest response alone would.
#[test]
fn a_query_completes_with_its_last_response() {
    let mut s = rack(0.1, 200);
    s.traffic.query_rate = 200.0;
    s.traffic.query_fanin = 6;
    let r = run(&s).unwrap();
    assert!(r.queries.len() > 10);
    for (q, row) in r.queries.iter().enumerate().filter(|(_, q)| q.time_s.is_some()) {
        let responses: Vec<&FlowRecord> = r.open_flows.iter().filter(|f| f.query == Some(q as u32)).collect();
        assert_eq!(responses.len(), 6);
        let last = responses.iter().map(|f| f.fct_s.unwrap()).fold(0.0, f64::max);
        assert_eq!(row.time_s, Some(last));
        assert!(responses.iter().all(|f| f.dst == row.aggregator && f.src != row.aggregator));
    }
    assert!(r.summary.traffic.as_ref().unwrap().query_time_ms.p99.is_some());
}

/// A query "suffers a timeout" (DCTCP §4.3) when a sender of one of its
/// responses timed out. Six 2 KB responses into a port of twelve packets
/// beside Hadoop flows lose some and wait for RTO_min: exactly the queries that took RTO_min or
/// longer are the ones counted, and the figures count them.
#[test]
fn a_query_whose_response_waits_for_a_timeout_is_counted_as_timed_out() {
    let mut s = rack(0.1, 300);
    s.traffic.query_rate = 200.0;
    s.traffic.query_fanin = 6;
    s.switch.buffer = incast_sim::net::BufferLimit::Packets(12);
    s.tcp.rto.min = SimDuration::from_millis(10);
    let r = run(&s).unwrap();
    let rto_min = 10e-3;
    let finished: Vec<_> = r.queries.iter().filter_map(|q| q.time_s.map(|t| (t, q.timed_out))).collect();
    assert!(finished.iter().any(|&(_, late)| late) && finished.iter().any(|&(_, late)| !late), "{finished:?}");
    for (t, timed_out) in finished {
        assert_eq!(timed_out, t >= rto_min, "a query of {t} s");
    }
    let figures = r.summary.traffic.as_ref().unwrap();
    let counted = r.queries.iter().filter(|q| q.timed_out).count() as u64;
    assert_eq!(figures.queries_timed_out, counted);
    assert_eq!(figures.query_timeout_fraction, counted as f64 / r.queries.len() as f64);
    s.switch.buffer = incast_sim::net::BufferLimit::Packets(1000);
    let roomy = run(&s).unwrap();
    assert_eq!(roomy.summary.traffic.as_ref().unwrap().queries_timed_out, 0);
}

/// With a drain, the run goes on after the arrivals stop until the flows
/// still open are complete, and stops then: the same flows arrive, those
/// that finished without the drain finish at the same times, the others
/// finish too, and the offered load is counted over the arrivals alone.
#[test]
fn a_drain_lets_the_open_flows_finish_and_stops_when_the_last_one_has() {
    let cut = run(&rack(0.5, 100)).unwrap();
    let mut s = rack(0.5, 100);
    s.traffic.drain = Some(SimDuration::from_secs(5));
    let drained = run(&s).unwrap();
    let (a, b) = (&cut.open_flows, &drained.open_flows);
    assert!(a.iter().any(|f| f.fct_s.is_none()), "some flow is open at 100 ms");
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!((x.src, x.dst, x.size_bytes, x.start_s), (y.src, y.dst, y.size_bytes, y.start_s));
        assert!(y.fct_s.is_some(), "{y:?}");
        if x.fct_s.is_some() {
            assert_eq!(x.fct_s, y.fct_s);
        }
    }
    let last = b.iter().map(|f| f.start_s + f.fct_s.unwrap()).fold(0.0, f64::max);
    assert!(drained.summary.sim_time_s > 0.1 && drained.summary.sim_time_s < 5.1);
    assert!((drained.summary.sim_time_s - last).abs() < 1e-9, "{} against {last}", drained.summary.sim_time_s);
    let (t, u) = (cut.summary.traffic.as_ref().unwrap(), drained.summary.traffic.as_ref().unwrap());
    assert_eq!(t.offered_load, u.offered_load);
    assert_eq!(u.open_flows_unfinished, 0);
}

/// The same scenario gives the same flows.
#[test]
fn a_traffic_run_is_a_function_of_its_seed() {
    let a = run(&rack(0.3, 30)).unwrap();
    assert_eq!(a, run(&rack(0.3, 30)).unwrap());
    let mut other = rack(0.3, 30);
    other.seed = 4;
    assert_ne!(a.open_flows, run(&other).unwrap().open_flows);
}

/// Bad settings are refused naming the field.
#[test]
fn traffic_settings_are_checked_against_the_fabric() {
    let err = |s: Scenario| s.validate().unwrap_err().to_string();
    let mut s = rack(0.3, 10);
    (s.workload.kind, s.stop.duration, s.stop.blocks) = (WorkloadKind::SyncRead, None, Some(2));
    assert_eq!(err(s), "traffic: open-loop traffic needs a duration to end the run");
    let mut s = rack(0.3, 10);
    s.traffic.query_rate = 10.0;
    s.traffic.query_fanin = 8;
    assert_eq!(err(s), "traffic.query_fanin: must be below the 8 hosts, got 8");
    let mut s = rack(0.3, 10);
    s.stop.blocks = Some(3);
    assert!(err(s).starts_with("blocks: needs reads"));
}

/// The synchronized reads run beside the open-loop flows: blocks complete
/// and flows finish, on the same switch (a 1 ms RTO_min, so that the reads'
/// incast timeouts leave room for blocks in 100 ms).
#[test]
fn the_reads_run_beside_the_open_loop_flows() {
    let mut s = rack(0.2, 100);
    s.workload.kind = WorkloadKind::SyncRead;
    s.tcp.rto.min = SimDuration::from_millis(1);
    let r = run(&s).unwrap();
    assert!(r.summary.blocks > 0, "{} blocks", r.summary.blocks);
    let t = r.summary.traffic.unwrap();
    assert!(t.open_flows > 10 && t.open_flows_unfinished < t.open_flows, "{t:?}");
}

/// Open-loop flows on a k = 4 fat tree with per-flow ECMP: every
/// connection opened while the run goes is hashed onto a path, and a flow
/// that met no other took exactly its ideal time over any of the
/// equal-cost paths (they have the same hops' rates and delays). "Met no
/// other" keeps a millisecond clear after each other flow's end, where its
/// last ACKs still cross the fabric (one ahead of a frame at a shared port
/// delays it by the ACK's 84 bytes of line time); delayed ACK is off, so
/// no 40 ms timer sends an ACK later than that.
#[test]
fn open_loop_flows_cross_a_fat_tree_by_ecmp_at_their_ideal_when_alone() {
    use incast_sim::net::clos::Spreading;
    use incast_sim::net::fabric::{FatTreeConfig, TopologyConfig, Trunk};
    let mut s = rack(0.02, 500);
    s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    s.topology = TopologyConfig::FatTree(FatTreeConfig {
        k: 4,
        trunk: Trunk { rate: None, delay: None },
        spreading: Spreading::Flow,
    });
    let r = run(&s).unwrap();
    let flows = &r.open_flows;
    assert!(flows.len() > 50, "{} flows", flows.len());
    let clear = |f: &FlowRecord, g: &FlowRecord| {
        let end = |x: &FlowRecord| x.start_s + x.fct_s.unwrap_or(f64::INFINITY);
        std::ptr::eq(f, g) || end(f) < g.start_s || end(g) + 1e-3 < f.start_s
    };
    let alone: Vec<&FlowRecord> =
        flows.iter().filter(|f| f.fct_s.is_some() && flows.iter().all(|g| clear(f, g))).collect();
    assert!(alone.len() >= 5, "{} flows ran alone of {}", alone.len(), flows.len());
    for f in alone {
        assert_eq!(f.fct_s, Some(f.ideal_s), "{f:?}");
    }
}
