//! Local congestion in whole runs (`tcp.local_congestion`): a 100-frame NIC
//! queue that refuses a slow-start burst ends slow start, as Linux 2.4's
//! pfifo_fast drop and `tcp_enter_cwr` did on a long path.

use incast_sim::net::BufferLimit;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::workload::ResponseSize;
use incast_sim::{run, Scenario, SimError};

/// One 32 MiB transfer over 1 Gbps with a 100 ms round trip (RUDE §5.3's
/// emulated WAN), 16 MiB windows, Reno with SACK, no loss on the path, and
/// Linux 2.4's 100-frame NIC queue.
fn wan_bulk(local_congestion: bool, rude: bool) -> Scenario {
    let mut s = Scenario::fast08(1);
    s.link.rtt = SimDuration::from_millis(100);
    s.link.tx_queue = Some(100);
    s.switch.buffer = BufferLimit::Bytes(Bytes::mib(16));
    s.workload.response = ResponseSize::Sru(Bytes::mib(32));
    s.tcp.recovery = incast_sim::tcp::LossRecovery::Sack;
    s.tcp.init_cwnd = 3;
    s.tcp.rcv_wnd = Bytes::mib(16);
    s.tcp.local_congestion = local_congestion;
    (s.tcp.rude_allowed, s.tcp.rude) = (rude, rude);
    (s.stop.blocks, s.stop.duration) = (Some(1), None);
    s
}

/// Without the setting the sender waits for room and slow start runs on to
/// the receive window; with it the first refused burst halves the window and
/// congestion avoidance, one segment per 100 ms round trip, holds it far below
/// the path's 8,500 segments.
#[test]
fn a_refused_slow_start_burst_ends_slow_start_on_a_long_path() {
    let waits = run(&wan_bulk(false, false)).unwrap();
    let cwr = run(&wan_bulk(true, false)).unwrap();
    let max_cwnd = |r: &incast_sim::RunResult| r.flows[0].max_cwnd_bytes / 1460;
    println!(
        "waits: {:.1} Mbps, max cwnd {} segments; cwr: {:.1} Mbps, max cwnd {} segments",
        waits.summary.goodput_mbps,
        max_cwnd(&waits),
        cwr.summary.goodput_mbps,
        max_cwnd(&cwr)
    );
    assert_eq!((waits.summary.drops, cwr.summary.drops), (0, 0), "nothing is lost on the path");
    assert!(max_cwnd(&waits) > 5_000);
    assert!(max_cwnd(&cwr) < 1_000);
    assert!(cwr.summary.goodput_mbps < waits.summary.goodput_mbps / 2.0);
}

/// Rude TCP does not consult cwnd (RUDE §3): the refused bursts cut only the
/// fair window running beside it, and its goodput is the same either way.
#[test]
fn rude_tcp_sends_as_the_receive_window_allows_whatever_the_nic_refuses() {
    let waits = run(&wan_bulk(false, true)).unwrap().summary;
    let cwr = run(&wan_bulk(true, true)).unwrap().summary;
    assert_eq!(waits.goodput_mbps, cwr.goodput_mbps);
}

/// The signal needs a queue that can fill: without `link.tx_queue` the
/// setting is refused, naming it.
#[test]
fn local_congestion_without_a_nic_queue_limit_is_refused() {
    let mut s = wan_bulk(true, false);
    s.link.tx_queue = None;
    match run(&s) {
        Err(SimError::InvalidScenario { field, message }) => {
            assert_eq!(field, "tcp.local_congestion");
            assert!(message.contains("link.tx_queue"), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}
