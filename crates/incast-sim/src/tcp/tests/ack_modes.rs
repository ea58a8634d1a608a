//! Delayed-ACK mode traces: `linux` quick-ACK and ATO, `adaptive` timeout,
//! and the serde forms of `DelayedAckConfig`.

use super::*;

/// A receiver (handshake RTT 100 µs, RTO_min 200 ms) running `mode`.
fn receiver(mode: DelayedAckMode) -> Endpoint {
    let cfg = TcpConfig {
        rto: RtoConfig { min: SimDuration::from_millis(200), ..RtoConfig::default() },
        delayed_ack: DelayedAckConfig { mode, ..DelayedAckConfig::default() },
        ..cfg()
    };
    Endpoint::new(&cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)))
}

/// Segment `i` arrives at `t` µs; returns what the receiver sends at once.
fn arrive(ep: &mut Endpoint, t: u64, i: u64) -> Vec<(u64, u32)> {
    recv(ep, us(t), data(seg(i), MSS));
    drain(ep, us(t))
}

/// Linux tcp_event_data_recv: the first data segment calls
/// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`: the first 16 segments are ACKed
/// at once, then `tcp_dec_quickack_mode` deflates the ATO to TCP_ATO_MIN and
/// lone segments wait 40 ms.
#[test]
fn linux_quickack_acks_first_segments_at_once_then_delays() {
    let mut ep = receiver(DelayedAckMode::Linux);
    for i in 0..16 {
        assert_eq!(arrive(&mut ep, 12 * i, i).len(), 1, "segment {i} is quick-ACKed");
    }
    assert_eq!(ep.delack.quick(), 0);
    assert_eq!(ep.delack.ato(), Some(SimDuration::from_millis(40)));
    // The 17th waits for the 40 ms timer; the 18th is the second segment: ACK at once.
    assert!(arrive(&mut ep, 12 * 16, 16).is_empty());
    assert_eq!(ep.poll_timeout(), Some(us(12 * 16) + SimDuration::from_millis(40)));
    assert_eq!(arrive(&mut ep, 12 * 17, 17), vec![(0, 0)]);
    assert_eq!(ep.stats().acks_sent, 17);
    assert_eq!(ep.stats().delayed_ack_timeouts, 0);
}

/// Linux tcp_delack_timer_handler: "Delayed ACK missed: inflate ATO." Then
/// tcp_event_data_recv: `m < ato` gives `ato/2 + m`, and each gap
/// `m <= TCP_ATO_MIN/2` gives `ato/2 + TCP_ATO_MIN/2`, shrinking it back
/// towards 40 ms; tcp_send_delayed_ack bounds the timer by max(srtt, 40 ms).
#[test]
fn linux_ato_inflates_on_timer_and_shrinks_with_fast_arrivals() {
    let mut ep = receiver(DelayedAckMode::Linux);
    for i in 0..16 {
        arrive(&mut ep, 12 * i, i);
    }
    // A lone segment: the timer fires at 40 ms and doubles the ATO.
    let t0 = 1000;
    assert!(arrive(&mut ep, t0, 16).is_empty());
    let fire = us(t0) + SimDuration::from_millis(40);
    ep.on_timer(fire);
    expect_ack(&mut ep, fire, seg(17));
    assert_eq!(ep.delack.ato(), Some(SimDuration::from_millis(80)));
    // 41 ms later: m < ato, ato = 80/2 + 41 = 81 ms.
    let t1 = t0 + 41_000;
    assert!(arrive(&mut ep, t1, 17).is_empty());
    assert_eq!(ep.delack.ato(), Some(SimDuration::from_millis(81)));
    // The timer is bounded by max(srtt = 100 µs, TCP_DELACK_MIN) = 40 ms.
    assert_eq!(ep.poll_timeout(), Some(us(t1) + SimDuration::from_millis(40)));
    // Fast arrivals: 81 → 60.5 → 50.25 → 45.125 → 42.5625 ms.
    let expect = [60_500, 50_250, 45_125, 42_562];
    for (k, i) in (18..22u64).enumerate() {
        arrive(&mut ep, t1 + 12 * (k as u64 + 1), i);
        let ato = ep.delack.ato().unwrap();
        assert_eq!(ato.as_ps() / 1_000_000, expect[k], "after segment {i}");
    }
    for i in 22..60 {
        arrive(&mut ep, t1 + 12 * (i - 17), i);
    }
    let ato = ep.delack.ato().unwrap();
    assert!(ato >= SimDuration::from_millis(40) && ato < SimDuration::from_micros(40_001), "{ato}");
}

/// Linux tcp_event_data_recv: "Too long gap. Apparently sender failed to
/// restart window, so that we send ACKs quickly." — a gap longer than the
/// receiver's RTO re-enters quick-ACK mode.
#[test]
fn linux_gap_longer_than_rto_reenters_quickack() {
    let mut ep = receiver(DelayedAckMode::Linux);
    for i in 0..18 {
        arrive(&mut ep, 12 * i, i);
    }
    assert_eq!(ep.delack.quick(), 0);
    let rto = ep.rto();
    let t = 12 * 17 + rto.as_ps() / 1_000_000 + 1;
    assert_eq!(arrive(&mut ep, t, 18).len(), 1, "quick-ACKed after an idle gap > RTO ({rto})");
    assert_eq!(ep.delack.quick(), 15);
    assert_eq!(arrive(&mut ep, t + 12, 19).len(), 1);
}

/// Linux tcp_data_queue: a duplicate segment ("A retransmit") calls
/// tcp_enter_quickack_mode: ACKed at once and the next ones too.
#[test]
fn linux_duplicate_enters_quickack_mode() {
    let mut ep = receiver(DelayedAckMode::Linux);
    for i in 0..18 {
        arrive(&mut ep, 12 * i, i);
    }
    assert_eq!(arrive(&mut ep, 1000, 3), vec![(0, 0)]);
    assert_eq!(ep.delack.quick(), 15);
    assert_eq!(arrive(&mut ep, 1012, 18).len(), 1, "quick mode: no delay");
}

/// CMU09 §5: the adaptive timeout tracks the smoothed inter-arrival time: a
/// lone segment after a stream with 12 µs gaps is ACKed after 2 × 12 µs, not
/// 40 ms.
#[test]
fn adaptive_timeout_tracks_inter_arrival_gap() {
    let mut ep = receiver(DelayedAckMode::Adaptive);
    // Before any gap sample the timeout is `adaptive_max` (40 ms).
    assert!(arrive(&mut ep, 0, 0).is_empty());
    assert_eq!(ep.poll_timeout(), Some(ms(40)));
    for i in 1..20 {
        arrive(&mut ep, 12 * i, i);
    }
    // 20 segments: 10 ACKs, nothing owed. The 21st is alone.
    assert_eq!(ep.stats().acks_sent, 10);
    assert!(arrive(&mut ep, 12 * 20, 20).is_empty());
    assert_eq!(ep.poll_timeout(), Some(us(12 * 20 + 24)));
    ep.on_timer(us(12 * 20 + 24));
    expect_ack(&mut ep, us(12 * 20 + 24), seg(21));
    assert_eq!(ep.stats().delayed_ack_timeouts, 1);
}

/// CMU09 §5: the smoothed gap moves 1/8 of the way to each sample, and a
/// sample is clamped to `adaptive_max`.
#[test]
fn adaptive_gap_is_an_ewma_with_gain_one_eighth() {
    let mut ep = receiver(DelayedAckMode::Adaptive);
    arrive(&mut ep, 0, 0);
    arrive(&mut ep, 80, 1); // sgap = 80 µs
    assert_eq!(ep.delack.current_timeout(), Some(SimDuration::from_micros(160)));
    arrive(&mut ep, 80 + 16, 2); // sgap = 80 - (80 - 16)/8 = 72 µs
    assert_eq!(ep.delack.current_timeout(), Some(SimDuration::from_micros(144)));
    // A 10 s idle gap counts as 40 ms: sgap = 72 + (40000 - 72)/8 = 5063 µs.
    arrive(&mut ep, 10_000_096, 3);
    assert_eq!(ep.delack.current_timeout(), Some(SimDuration::from_micros(10_126)));
}

/// `delayed_ack = "off"` acknowledges every segment.
#[test]
fn off_mode_acks_every_segment() {
    let mut ep = Endpoint::new(&TcpConfig { delayed_ack: DelayedAckConfig::off(), ..cfg() }, SimTime::ZERO, None);
    assert_eq!(arrive(&mut ep, 0, 0), vec![(0, 0)]);
    assert_eq!(ep.poll_timeout(), None);
}

/// The user's forms of `tcp.delayed_ack`: a positive duration, "off",
/// "linux" or "adaptive"; zero is refused.
#[test]
fn delayed_ack_setting_forms() {
    use crate::settings::Spec;
    use serde_json::json;
    let parse = |v: serde_json::Value| super::super::delayed_ack::DelayedAckSpec.parse(&v);
    assert_eq!(parse(json!("off")), Ok(DelayedAckMode::Off));
    assert_eq!(parse(json!("200us")), Ok(DelayedAckMode::Standard(SimDuration::from_micros(200))));
    assert_eq!(parse(json!("linux")), Ok(DelayedAckMode::Linux));
    assert_eq!(parse(json!("adaptive")), Ok(DelayedAckMode::Adaptive));
    assert!(parse(json!(0)).unwrap_err().starts_with("must be a positive duration (e.g. \"40ms\"), \"off\""));
    assert!(parse(json!("fast")).is_err());
}
