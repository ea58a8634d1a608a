//! Rude TCP in whole runs: the hosts' gate, a policing switch, turning off.

use incast_sim::net::RudePolicy;
use incast_sim::tcp::RudeOff;
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::{run, Scenario, SimError};

fn rude(servers: u32) -> Scenario {
    let mut s = Scenario::fast08(servers);
    s.tcp.rude_allowed = true;
    s.tcp.rude = true;
    s.stop.duration = Some(SimDuration::from_millis(300));
    s
}

/// RUDE §3.1: "Rude flows are by default disabled": asking for them with the
/// gate closed is refused, naming the field.
#[test]
fn rude_3_1_gate_off_refuses_rude_flows() {
    let mut s = rude(4);
    s.tcp.rude_allowed = false;
    match run(&s) {
        Err(SimError::InvalidScenario { field, .. }) => assert_eq!(field, "tcp.rude"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// RUDE §2.3: a policing switch drops every rude packet, so nothing gets
/// through until the flows turn polite (off_now at 100 ms), after which blocks complete.
#[test]
fn rude_2_3_policing_switch_kills_rude_flows_until_they_turn_polite() {
    let mut s = rude(4);
    s.switch.rude_policy = RudePolicy::Drop;
    let killed = run(&s).unwrap().summary;
    assert_eq!((killed.bytes_delivered, killed.blocks), (0, 0));
    assert!(killed.rude_drops > 0 && killed.rude_drops == killed.drops);

    s.tcp.rude_off_at = Some(SimDuration::from_millis(100));
    s.tcp.rude_off = RudeOff::Now;
    s.stop.duration = Some(SimDuration::from_secs(2));
    let recovered = run(&s).unwrap().summary;
    assert!(recovered.blocks > 0, "polite after 100 ms, the flows get through");
    assert!(recovered.rude_drops > 0);
}

/// RUDE §4: one 32 MiB transfer over a dedicated path (a 4 MiB switch
/// buffer, no congestion loss), SACK, 8 MiB windows, delayed ACK off, 5 % of
/// data segments lost at the sender; `rude` turns congestion control off.
fn bulk_32mib_at_5_percent_loss(rude: bool) -> Scenario {
    let mut s = Scenario::fast08(1);
    s.switch.buffer = incast_sim::net::BufferLimit::Bytes(Bytes::mib(4));
    s.workload.response = incast_sim::workload::ResponseSize::Sru(Bytes::mib(32));
    s.tcp.recovery = incast_sim::tcp::LossRecovery::Sack;
    s.tcp.rcv_wnd = Bytes::mib(8);
    s.tcp.delayed_ack = incast_sim::tcp::DelayedAckConfig::off();
    s.tcp.send_loss_ppb = 50_000_000;
    (s.tcp.rude_allowed, s.tcp.rude) = (rude, rude);
    (s.stop.blocks, s.stop.duration) = (Some(1), None);
    s
}

/// RUDE §4–5, shrunk to a 32 MiB transfer (the paper's 256 MiB setting is
/// checked in `tests/test_remedies.py`): a dedicated 1 Gbps path with 5 % of
/// data segments lost at the sender. Rude TCP, which never cuts its window,
/// times out less and gets more goodput than stock (SACK) TCP.
#[test]
fn rude_4_sender_side_loss_rude_beats_stock_tcp() {
    let bulk = |rude: bool| {
        let mut s = bulk_32mib_at_5_percent_loss(rude);
        s.link.rtt = SimDuration::from_micros(50);
        let sum = run(&s).unwrap().summary;
        println!(
            "rude {rude}: {:.1} Mbps, {} timeouts, {} segments lost",
            sum.goodput_mbps, sum.timeouts, sum.send_losses
        );
        assert!(sum.send_losses > 0);
        sum
    };
    let (stock, rude) = (bulk(false), bulk(true));
    assert!(rude.timeouts < stock.timeouts);
    assert!(
        rude.goodput_mbps > 1.5 * stock.goodput_mbps,
        "rude {:.1} vs stock {:.1}",
        rude.goodput_mbps,
        stock.goodput_mbps
    );
}

/// RUDE §5.1 (Fig. 8) as Linux 2.4 ran it, a 32 MiB transfer at 5 % sender
/// loss, six seeds: with the NIC queue at txqueuelen's 100 frames
/// (`link.tx_queue`), Rude TCP keeps sending new data behind each
/// retransmission, so a lost retransmission is seen and sent again
/// (`tcp.sack_lost_retransmit`); at most the transfer's tail waits for a
/// timeout. With no limit the sender queues its whole 8 MiB window at its
/// own NIC, 70 ms of it; a retransmission waits behind that, no data goes
/// out after it, and each lost one costs a 200 ms timeout.
#[test]
fn rude_5_1_a_full_nic_queue_holds_the_window_in_the_socket() {
    let bulk = |tx_queue: Option<u32>, seed: u64| {
        let mut s = bulk_32mib_at_5_percent_loss(true);
        s.seed = seed;
        s.link.rtt = SimDuration::from_micros(129);
        s.link.tx_queue = tx_queue;
        s.tcp.sack_lost_retransmit = true;
        (s.tcp.mss, s.tcp.init_cwnd) = (1460, 3);
        let sum = run(&s).unwrap().summary;
        assert!(sum.send_losses > 1000);
        (sum.timeouts, sum.utilization)
    };
    let (mut limited_timeouts, mut unlimited_timeouts) = (0, 0);
    for seed in 0..6 {
        let (limited, unlimited) = (bulk(Some(100), seed), bulk(None, seed));
        println!("seed {seed}: (timeouts, utilization) 100 frames {limited:?}, no limit {unlimited:?}");
        assert!(limited.0 <= 1 && limited.1 > 0.55, "{limited:?}");
        assert!(unlimited.0 >= limited.0 && unlimited.1 <= limited.1, "{unlimited:?} against {limited:?}");
        (limited_timeouts, unlimited_timeouts) = (limited_timeouts + limited.0, unlimited_timeouts + unlimited.0);
    }
    assert!(unlimited_timeouts >= 10 && unlimited_timeouts >= 3 * limited_timeouts);
}

/// RUDE §3.2, Fig. 4 shrunk to 100 Mbps and 10 ms: one rude flow beside two
/// polite ones turns off nicely at 10 s and stops marking a little later.
#[test]
fn rude_fig4_off_nicely_converges() {
    let mut s = rude(3);
    s.link.rate = incast_sim::time::BitRate::mbps(100);
    s.link.rtt = SimDuration::from_millis(10);
    s.switch.buffer = incast_sim::net::BufferLimit::Bytes(Bytes::kib(64));
    s.workload.response = incast_sim::workload::ResponseSize::Sru(Bytes::mib(1024));
    s.tcp.rcv_wnd = Bytes::new(112_500);
    s.tcp.delayed_ack = incast_sim::tcp::DelayedAckConfig::off();
    s.tcp.rude_servers = Some(1);
    s.tcp.rude_off_at = Some(SimDuration::from_secs(10));
    s.stop.duration = Some(SimDuration::from_secs(60));
    let sum = run(&s).unwrap().summary;
    let polite = sum.rude_polite_s.expect("the rude flow turned polite");
    println!("turned polite at {polite:.2} s");
    assert!(polite > 10.0 && polite < 60.0);
}
