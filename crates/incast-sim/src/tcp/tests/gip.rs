//! GIP traces (GIP §IV–V): cwnd at each stripe unit's head, and redundant
//! copies of its last packet.

use super::*;
use crate::tcp::idle_restart::IdleRule;

fn cfg_gip(pattern: GipPattern) -> TcpConfig {
    TcpConfig { gip: pattern, ..cfg() }
}

/// A GIP sender that wrote one 10-segment stripe unit (marked as the tail)
/// and sent its first two segments: cwnd 2 at the unit head.
fn unit_of_ten(pattern: GipPattern) -> Endpoint {
    let mut ep = Endpoint::new(&cfg_gip(pattern), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send_with(seg(10), SendFlags::UNIT_TAIL);
    assert_eq!(drain(&mut ep, SimTime::ZERO), vec![(seg(0), MSS), (seg(1), MSS)], "cwnd 2 at the unit head");
    ep
}

/// ACK segments one by one (slow start from 2) until the whole unit is sent.
fn all_sent(ep: &mut Endpoint) {
    let mut acked = 0;
    while ep.stats().data_segments_sent < 10 {
        acked += 1;
        recv(ep, us(100 * acked), ack(seg(acked)));
        drain(ep, us(100 * acked));
    }
    assert_eq!(ep.stats().redundant_segments, 0, "no copy before the unit is fully sent");
}

/// GIP §V-C: every stripe unit starts from cwnd = 2 segments, whatever the
/// window grew to in the previous unit; a write that is not marked keeps the window.
#[test]
fn gip_v_c_each_unit_head_restarts_at_two_segments() {
    let mut ep = unit_of_ten(GipPattern::Pattern333);
    all_sent(&mut ep);
    recv(&mut ep, ms(1), ack(seg(10)));
    assert!(ep.cwnd() > seg(2));
    ep.send_with(seg(10), SendFlags::UNIT_TAIL);
    assert_eq!(ep.cwnd(), seg(2));
    assert_eq!(drain(&mut ep, ms(1)).len(), 2);

    let mut plain = Endpoint::new(&cfg(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    plain.send_with(seg(10), SendFlags::UNIT_TAIL);
    assert_eq!(drain(&mut plain, SimTime::ZERO).len(), 10, "without GIP the flag changes nothing");
}

/// GIP §V-B, Pattern 333: once the unit is sent, each ACK short of the last
/// packet sends one copy of it, regardless of cwnd — exactly three, never a fourth.
#[test]
fn gip_v_b_exactly_three_copies_of_the_last_packet() {
    let mut ep = unit_of_ten(GipPattern::Pattern333);
    all_sent(&mut ep);
    let before = ep.stats().data_segments_sent;
    // ACKs of segments 5..=8, then a duplicate: none covers segment 9.
    for (i, n) in [5, 6, 7, 8, 8].into_iter().enumerate() {
        let t = us(700 + i as u64);
        recv(&mut ep, t, ack(seg(n)));
        let sent = drain(&mut ep, t);
        assert_eq!(sent, if i < 3 { vec![(seg(9), MSS)] } else { vec![] }, "ACK {i}");
    }
    let st = ep.stats();
    assert_eq!((st.redundant_segments, st.data_segments_sent - before), (3, 3));
    assert_eq!(st.retransmitted_segments, 3, "copies count as retransmissions");
}

/// GIP §V-B: "if the sender has received the ACK of the last packet, it will
/// not transmit it any more".
#[test]
fn gip_v_b_no_copy_once_the_last_packet_is_acknowledged() {
    let mut ep = unit_of_ten(GipPattern::Pattern333);
    all_sent(&mut ep);
    recv(&mut ep, us(700), ack(seg(9)));
    assert_eq!(drain(&mut ep, us(700)), vec![(seg(9), MSS)]);
    recv(&mut ep, us(800), ack(seg(10)));
    assert_eq!(drain(&mut ep, us(800)), vec![]);
    assert_eq!(ep.stats().redundant_segments, 1);
}

/// GIP §IV-B, Pattern 123: the last three packets in turn, one per ACK.
#[test]
fn gip_iv_b_pattern_123_resends_the_last_three_in_turn() {
    let mut ep = unit_of_ten(GipPattern::Pattern123);
    all_sent(&mut ep);
    let copies: Vec<_> = (700..703)
        .flat_map(|t| {
            recv(&mut ep, us(t), ack(seg(6)));
            drain(&mut ep, us(t))
        })
        .collect();
    assert_eq!(copies, vec![(seg(7), MSS), (seg(8), MSS), (seg(9), MSS)]);
}

/// GIP §V-C under ns-2's idle rule: the retransmission timer the unit's last
/// ACK re-armed expired while the sender was idle and closed the window to
/// one segment (`TcpAgent::timeout`), and the next unit's head then sets it
/// to two, so the unit starts with two segments, not one.
#[test]
fn gip_v_c_a_unit_head_after_ns2_idle_restart_keeps_two_segments() {
    let c = TcpConfig { idle_restart: IdleRule::Ns2, ..cfg_gip(GipPattern::Pattern333) };
    let mut ep = Endpoint::new(&c, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send_with(seg(2), SendFlags::UNIT_TAIL);
    assert_eq!(drain(&mut ep, SimTime::ZERO).len(), 2);
    recv(&mut ep, us(100), ack(seg(2)));
    let idle_past_the_timer = us(100) + ep.rto() + SimDuration::from_millis(1);
    ep.send_with(seg(10), SendFlags::UNIT_TAIL);
    assert_eq!(drain(&mut ep, idle_past_the_timer), vec![(seg(2), MSS), (seg(3), MSS)]);
    assert_eq!(ep.cwnd(), seg(2));
}

/// ns-2.35's agents count an ACK equal to the last one as a duplicate with
/// nothing outstanding too (`TcpAgent::recv`, `tcp.dupack_idle`): the three
/// copies of a unit's last packet that reach the receiver after the original
/// come back as three such ACKs once the unit is acknowledged, and the third
/// halves the window as `dupack_action` does, sending nothing. RFC 5681's
/// sender, with nothing outstanding, counts none.
#[test]
fn ns2_the_copies_duplicate_acks_cut_the_window_after_the_unit() {
    let idle = |dupack_idle| {
        let c = TcpConfig { dupack_idle, ssthresh_rule: SsthreshRule::Ns2, ..cfg_gip(GipPattern::Pattern333) };
        let mut ep = Endpoint::new(&c, SimTime::ZERO, Some(SimDuration::from_micros(100)));
        ep.send_with(seg(10), SendFlags::UNIT_TAIL);
        drain(&mut ep, SimTime::ZERO);
        all_sent(&mut ep);
        for (i, n) in [6, 7, 8].into_iter().enumerate() {
            recv(&mut ep, us(700 + i as u64), ack(seg(n)));
            assert_eq!(drain(&mut ep, us(700 + i as u64)), vec![(seg(9), MSS)], "a copy per ACK");
        }
        recv(&mut ep, us(800), ack(seg(10)));
        let (cwnd, ssthresh) = (ep.cwnd(), ep.ssthresh());
        for i in 0..3 {
            recv(&mut ep, us(801 + i), ack(seg(10)));
            assert_eq!(drain(&mut ep, us(801 + i)), vec![], "nothing to resend");
        }
        (cwnd, ssthresh, ep.cwnd(), ep.ssthresh(), ep.stats().fast_retransmits)
    };
    let (cwnd, ssthresh, after, ssthresh_after, fast) = idle(true);
    assert!(cwnd > seg(4) && ssthresh > cwnd, "slow start grew the window: {cwnd}, ssthresh {ssthresh}");
    let half = cwnd / 2 / MSS as u64 * MSS as u64;
    assert_eq!((after, ssthresh_after, fast), (cwnd / 2, half, 0), "halfwin; ssthresh in whole segments");
    let (cwnd, ssthresh, after, ssthresh_after, _) = idle(false);
    assert_eq!((after, ssthresh_after), (cwnd, ssthresh), "RFC 5681 (2): not duplicates");
}
