//! Runs that cannot be represented or would not fit are refused in one line,
//! never run to a wrong answer or to an allocation failure.

use incast_sim::time::{BitRate, SimDuration};
use incast_sim::{run, Scenario, SimError};

fn message(s: &Scenario) -> String {
    match run(s) {
        Err(e) => e.to_string(),
        Ok(r) => panic!("expected a refusal, got a run of {} blocks", r.summary.blocks),
    }
}

/// At 1 bit/s a 256 KiB response takes weeks: five blocks need more than
/// 2^64 ps, and the run stops saying so instead of stacking every later event
/// on the last instant.
#[test]
fn a_run_past_the_end_of_representable_time_is_refused() {
    let mut s = Scenario::fast08(4);
    s.link.rate = BitRate::bps(1);
    // The smallest segment takes 672 s at 1 bit/s: a timer capped below that is refused.
    s.tcp.rto.max = SimDuration::from_secs(1000);
    (s.stop.blocks, s.stop.duration) = (Some(5), None);
    let m = message(&s);
    assert!(m.starts_with("scenario: the run needs more than 2^64 ps (about 213 days)"), "{m}");
    assert!(matches!(run(&s), Err(SimError::TimeOverflow)));
}

/// A goodput bin that would make more than ten million bins is refused up
/// front when the duration is known, and when the run outlasts them otherwise.
#[test]
fn a_goodput_trace_with_too_many_bins_is_refused() {
    let mut s = Scenario::fast08(8);
    s.trace.goodput_bin = Some(SimDuration::from_ps(1));
    s.stop.duration = Some(SimDuration::from_millis(10));
    assert!(
        message(&s).starts_with("trace.goodput_bin: 1ps makes 10000000000 bins over duration 10ms; at most 10000000")
    );
    s.trace.goodput_bin = Some(SimDuration::from_nanos(1));
    (s.stop.blocks, s.stop.duration) = (Some(5), None);
    assert!(message(&s).starts_with("trace.goodput_bin: 1ns bins: the run outlasted 10000000 of them"));
    s.trace.goodput_bin = Some(SimDuration::from_micros(1));
    run(&s).unwrap();
}

/// A UDP source faster than its own link would only grow its own queue.
#[test]
fn a_udp_source_faster_than_its_link_is_refused() {
    let mut s = Scenario::fast08(2);
    s.background.udp_rate = Some(BitRate::gbps(2));
    assert!(message(&s).starts_with("background.udp_rate: must not exceed link.rate (1Gbps)"));
    s.background.udp_rate = Some(BitRate::gbps(1));
    s.stop.duration = Some(SimDuration::from_millis(5));
    run(&s).unwrap();
}

/// What a run would hold in memory is estimated before anything is built,
/// and a run above `memory_budget` is refused naming the setting behind the
/// largest part: a tree of 100,000 edge switches would need 37 GiB of route
/// tables alone, and is refused in milliseconds instead of being built.
#[test]
fn a_run_above_the_memory_budget_is_refused_before_it_is_built() {
    use incast_sim::net::fabric::{TopologyConfig, TreeConfig};
    use incast_sim::time::Bytes;
    let mut s = Scenario::fast08(100_000);
    s.topology = TopologyConfig::Tree(TreeConfig { edge_switches: 100_000, trunk_rate: None, trunk_delay: None });
    let m = s.validate().unwrap_err().to_string();
    assert!(
        m.starts_with("topology.edge_switches: the run would need about 38.6 GiB of memory (route tables 37.3 GiB)"),
        "{m}"
    );
    assert!(
        m.ends_with(
            "above memory_budget (4GiB); make it smaller, or raise memory_budget if this machine has the memory"
        ),
        "{m}"
    );

    let mut s = Scenario::fast08(100_000);
    s.memory_budget = Some(Bytes::mib(1024));
    let m = s.validate().unwrap_err().to_string();
    assert!(m.starts_with("servers: the run would need about 1.3 GiB of memory (endpoints"), "{m}");
    s.memory_budget = Some(Bytes::mib(2048));
    s.validate().unwrap();
    let parts = s.footprint();
    assert!(parts.iter().all(|p| p.bytes > 0 || p.what == "route tables"), "{parts:?}");
}

/// A Linux receiver's window grows to half its largest buffer, so a large
/// response may have that much in flight: the estimate counts it.
#[test]
fn the_estimate_counts_the_window_a_linux_receiver_grows_to() {
    use incast_sim::tcp::rcv_window::RcvWindowRule;
    let mut s = Scenario::fast08(4);
    s.workload.response = incast_sim::workload::ResponseSize::Sru(incast_sim::time::Bytes::mib(64));
    let in_flight = |s: &Scenario| s.footprint().into_iter().find(|p| p.what == "packets in flight").unwrap().bytes;
    let fixed = in_flight(&s);
    s.tcp.rcv_window = RcvWindowRule::Linux;
    assert!(in_flight(&s) > 100 * fixed, "{} against {fixed}", in_flight(&s));
}

/// A scenario that sets no budget (or the default) is written without one, so
/// its hash (the sweep cache's key) is what it was before the setting existed.
#[test]
fn an_unset_memory_budget_is_not_written() {
    let mut s = Scenario::fast08(4);
    assert!(s.written().toml.get("memory_budget").is_none());
    s.memory_budget = Some(incast_sim::time::Bytes::mib(4096));
    assert!(s.written().toml.get("memory_budget").is_none(), "the default, however given, is not written");
    assert_eq!(s.written().si["memory_budget"], 4u64 << 30);
    s.memory_budget = Some(incast_sim::time::Bytes::mib(8192));
    assert_eq!(s.written().toml["memory_budget"], "8GiB");
}

/// What grows with simulated time is held to what `memory_budget` leaves over
/// the estimate: with 10 kB of room, the timeout rows of a lossy run pass it
/// and the run stops naming `stats.timeouts`, the capture `trace.pcap`, the
/// flow trace `trace.flows`, the queue trace `trace.queue` (kept by the
/// bottleneck's queue, with half the room); without them the same run
/// completes, and a short run with a megabyte of room keeps its queue trace.
#[test]
fn records_that_outgrow_the_memory_budget_stop_the_run_naming_their_setting() {
    use incast_sim::time::Bytes;
    let mut s = Scenario::fast08(16);
    s.tcp.rto.min = SimDuration::from_micros(200);
    s.stop.duration = Some(SimDuration::from_millis(200));
    let room = |s: &Scenario| Bytes::new(s.footprint().iter().map(|p| p.bytes).sum::<u64>() + 10_000);
    s.memory_budget = Some(room(&s));
    let m = message(&s);
    assert!(m.starts_with("stats.timeouts: what it records grew past memory_budget ("), "{m}");
    s.stats.timeouts = false;
    s.trace.pcap = true;
    assert!(message(&s).starts_with("trace.pcap: what it records grew past memory_budget"));
    s.trace.pcap = false;
    s.trace.flows = true;
    assert!(message(&s).starts_with("trace.flows: what it records grew past memory_budget"));
    s.trace.flows = false;
    s.trace.queue = true;
    assert!(message(&s).starts_with("trace.queue: what it records grew past memory_budget"));
    s.trace.queue = false;
    assert!(run(&s).unwrap().summary.timeouts > 100, "the run is lossy: its rows would have passed the room");
    s.trace.queue = true;
    s.stop.duration = Some(SimDuration::from_micros(400));
    s.memory_budget = Some(Bytes::new(room(&s).get() + 1_000_000));
    let q = run(&s).unwrap().traces.queue.expect("the queue trace is on");
    assert!(q.time_s.len() > 125, "more entries than 10 kB would have held: {}", q.time_s.len());
}

/// RFC 6298 (5.5): the timer backs off no further than `tcp.rto_max`. A cap
/// shorter than the fastest link takes to send the smallest segment would
/// queue a retransmission at a NIC faster than it sends one, for as long as
/// the run lasts: it is refused up front, naming the setting.
#[test]
fn an_rto_max_shorter_than_the_smallest_frame_is_refused_up_front() {
    let mut s = Scenario::fast08(2);
    s.tcp.rto.min = SimDuration::ZERO;
    s.tcp.rto.max = SimDuration::from_ps(1);
    s.stats.timeouts = false;
    let m = s.validate().unwrap_err().to_string();
    assert_eq!(
        m,
        "tcp.rto_max: 1ps is shorter than the 672ns the fastest link (1Gbps) takes to send the smallest segment: \
         every timeout would queue a retransmission faster than a NIC sends one; at least 672ns"
    );
    s.tcp.rto.max = SimDuration::from_ps(672_000);
    s.validate().unwrap();
}

/// Packets in flight grow with simulated time when every 1 µs timeout queues
/// a 12 µs frame at a NIC without a limit (`link.tx_queue = "off"`): the run
/// holds them to `memory_budget` as it does its records, and stops naming
/// the NIC queue limit once they pass it, whether or not it keeps timeout
/// rows. With a NIC queue limit the same run completes.
#[test]
fn a_retransmission_storm_stops_at_the_memory_budget_naming_the_nic_queue() {
    use incast_sim::time::Bytes;
    let mut s = Scenario::fast08(2);
    (s.tcp.rto.min, s.tcp.rto.max) = (SimDuration::ZERO, SimDuration::from_micros(1));
    s.stats.timeouts = false;
    s.stop.duration = Some(SimDuration::from_secs(1));
    s.memory_budget = Some(Bytes::mib(64));
    let m = message(&s);
    assert!(m.starts_with("link.tx_queue: the packets in flight ("), "{m}");
    assert!(m.contains(") grew past memory_budget (64MiB) at "), "{m}");
    s.link.tx_queue = Some(100);
    s.stop.duration = Some(SimDuration::from_millis(20));
    let r = run(&s).unwrap();
    assert!(r.summary.packets_in_flight <= 2 * 100 + 64, "{}", r.summary.packets_in_flight);
}
