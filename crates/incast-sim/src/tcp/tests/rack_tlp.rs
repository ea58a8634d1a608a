//! RACK-TLP (RFC 8985) traces on a scripted window: the tail loss probe and
//! RACK's time-based loss detection, with SACK.

use super::*;

/// `cfg_sack()` with RACK-TLP, as the `linux` presets run it.
fn cfg_rack() -> TcpConfig {
    TcpConfig { rack_tlp: true, ..cfg_sack() }
}

/// RFC 8985 §7 (Linux tcp_send_loss_probe): the last two segments of a
/// response are lost and nothing more is written. 2·SRTT + 2 ms after the
/// last ACK, long before the RTO, the probe resends the last segment; its
/// SACK lets RACK find the other one lost, recovery resends it, and the
/// response completes without a timeout.
#[test]
fn rfc8985_7_a_tail_loss_is_probed_and_recovered_without_a_timeout() {
    let mut ep = with_flight(&cfg_rack(), seg(6), 6);
    recv(&mut ep, us(100), ack(seg(4)));
    expect_nothing(&mut ep, us(100));
    let probe_at = ep.poll_timeout().expect("the probe timer is armed");
    assert!(probe_at < us(100) + ep.rto(), "the probe comes before the retransmission timer");
    assert_eq!(probe_at, us(100) + SimDuration::from_micros(2 * 100 + 2_000), "2·SRTT + 2 ms");
    assert!(ep.on_timer(probe_at).is_none(), "a probe is not a timeout");
    expect_data(&mut ep, probe_at, seg(5), MSS);
    expect_nothing(&mut ep, probe_at);

    let sacked = probe_at + SimDuration::from_micros(100);
    recv(&mut ep, sacked, sack_ack(4, &[(5, 6)]));
    assert!(ep.in_recovery(), "one SACKed segment, but RACK's clock says segment 4 is lost");
    expect_data(&mut ep, sacked, seg(4), MSS);
    recv(&mut ep, sacked + SimDuration::from_micros(100), ack(seg(6)));
    let st = ep.stats();
    assert_eq!((st.timeouts, st.retransmitted_segments, st.loss_probes), (0, 2, 1));
}

/// Linux tcp_send_loss_probe: with unsent data the peer window allows, the
/// probe is the next new segment, sent although cwnd is full.
#[test]
fn rfc8985_7_3_the_probe_sends_new_data_when_it_can() {
    let mut ep = with_flight(&TcpConfig { init_cwnd: 4, ..cfg_rack() }, seg(20), 4);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(4), MSS), (seg(5), MSS)], "slow start: 5 segments of cwnd");
    let probe_at = ep.poll_timeout().expect("the probe timer is armed");
    assert!(ep.on_timer(probe_at).is_none());
    expect_data(&mut ep, probe_at, seg(6), MSS);
    expect_nothing(&mut ep, probe_at);
    // RFC 8985 (7.3), Linux tcp_rearm_rto: after the probe, a whole RTO from it.
    assert_eq!(ep.poll_timeout(), Some(probe_at + ep.rto()), "one probe at a time: the RTO is next");
}

/// RFC 8985 §7.2 (Linux tcp_schedule_loss_probe: "If the RTO formula yields an
/// earlier time, then use that time"): with RTO_min 1 ms the RTO comes before
/// 2·SRTT + 2 ms, so the probe goes when the RTO would have fired, instead of
/// a timeout, and the RTO runs a whole RTO after it.
#[test]
fn rfc8985_7_2_a_probe_goes_instead_of_an_earlier_rto() {
    let c = TcpConfig { rto: RtoConfig { min: SimDuration::from_millis(1), ..RtoConfig::default() }, ..cfg_rack() };
    let mut ep = with_flight(&c, seg(6), 6);
    recv(&mut ep, us(100), ack(seg(4)));
    expect_nothing(&mut ep, us(100));
    let rto = ep.rto();
    assert!(SimDuration::from_micros(2 * 100 + 2_000) > rto, "the RTO comes first");
    let probe_at = ep.poll_timeout().expect("the probe timer is armed");
    assert_eq!(probe_at, us(100) + rto);
    assert!(ep.on_timer(probe_at).is_none(), "a probe, not a timeout");
    expect_data(&mut ep, probe_at, seg(5), MSS);
    assert_eq!(ep.poll_timeout(), Some(probe_at + rto));
    assert_eq!(ep.stats().timeouts, 0);
}

/// RFC 8985 §6.2: segment 5 is lost; segment 6, from the same flight, and
/// segment 10, sent 100 us later, are SACKed: two SACKed segments are not
/// DupThresh, but segment 5 was sent an RTT and a quarter before segment 10
/// was delivered, so RACK marks it lost and recovery starts at once.
#[test]
fn rfc8985_6_2_rack_marks_an_older_segment_lost_before_dupthresh() {
    let mut ep = with_flight(&cfg_rack(), seg(20), 10);
    recv(&mut ep, us(100), ack(seg(5)));
    assert_eq!(drain(&mut ep, us(100)).len(), 6, "slow start: cwnd 11, segments 10-15");
    recv(&mut ep, us(110), sack_ack(5, &[(6, 7)]));
    assert!(!ep.in_recovery(), "segment 6 was sent with 5: no evidence yet");
    recv(&mut ep, us(230), sack_ack(5, &[(10, 11), (6, 7)]));
    assert!(ep.in_recovery());
    expect_data(&mut ep, us(230), seg(5), MSS);
}

/// Six segments leave at one instant; the fifth is lost and the sixth SACKed
/// at 100 us. It left with the sixth, so RACK.rtt has just passed and the
/// reordering window (min_RTT / 4) not yet. Returns the endpoint after that ACK.
fn fifth_of_a_burst_lost(cfg: &TcpConfig) -> Endpoint {
    let mut ep = with_flight(cfg, seg(6), 6);
    expect_nothing(&mut ep, SimTime::ZERO);
    recv(&mut ep, us(100), sack_ack(4, &[(5, 6)]));
    ep
}

/// RFC 8985 §6.3 (Linux tcp_rack_reo_timeout): in [`fifth_of_a_burst_lost`]
/// no later ACK can show the fifth lost. The reordering timer is armed for
/// RACK.rtt + min_RTT/4 after it was sent, long before the probe would go,
/// and its expiry finds the fifth lost and starts recovery, with no probe
/// and no timeout.
#[test]
fn rfc8985_6_3_the_reordering_timer_finds_a_loss_no_later_ack_would() {
    let mut ep = fifth_of_a_burst_lost(&cfg_rack());
    assert!(!ep.in_recovery(), "one SACKed segment, sent with the lost one");
    expect_nothing(&mut ep, us(100));
    assert_eq!(ep.poll_timeout(), Some(us(125)), "RACK.rtt 100 us + min_RTT / 4");
    assert!(ep.on_timer(us(125)).is_none(), "not a timeout");
    assert!(ep.in_recovery());
    expect_data(&mut ep, us(125), seg(4), MSS);
    let st = ep.stats();
    assert_eq!((st.timeouts, st.loss_probes, st.fast_retransmits), (0, 0, 1));
}

/// With PRR as Linux counts it the recovery the reordering timer starts
/// still sends its fast retransmission at once (tcp_rack_reo_timeout:
/// tcp_enter_recovery, then tcp_xmit_retransmit_queue).
#[test]
fn linux_prr_lets_the_reordering_timers_retransmission_go() {
    use crate::tcp::prr::PrrFlavor;
    let mut ep = fifth_of_a_burst_lost(&TcpConfig { prr: true, prr_flavor: PrrFlavor::Linux, ..cfg_rack() });
    assert!(ep.on_timer(us(125)).is_none());
    expect_data(&mut ep, us(125), seg(4), MSS);
}

/// The fifth segment was only late: the ACK that covers it arrives before
/// the reordering timer and disarms it (it acknowledged new data without
/// arming it again), and nothing is resent.
#[test]
fn rfc8985_6_3_a_late_segment_disarms_the_reordering_timer() {
    let mut ep = fifth_of_a_burst_lost(&cfg_rack());
    assert_eq!(ep.poll_timeout(), Some(us(125)));
    recv(&mut ep, us(110), ack(seg(6)));
    assert_eq!(ep.poll_timeout(), None, "nothing outstanding");
    expect_nothing(&mut ep, us(125));
    assert_eq!(ep.stats().retransmitted_segments, 0);
}

/// Linux tcp_rack_mark_lost arms the reordering timer for the time left
/// plus TCP_TIMEOUT_MIN, two jiffies: on a 4 ms clock the 25 us left become
/// the tick after 100 us, plus two, at 12 ms.
#[test]
fn linux_the_reordering_timer_waits_two_jiffies_more() {
    let c = TcpConfig { rto: RtoConfig { granularity: SimDuration::from_millis(4), ..cfg_rack().rto }, ..cfg_rack() };
    assert_eq!(fifth_of_a_burst_lost(&c).poll_timeout(), Some(ms(12)));
}

/// Without RACK-TLP (RFC 6675 alone) the same tail loss waits for the timer.
#[test]
fn without_rack_tlp_the_tail_loss_times_out() {
    let mut ep = with_flight(&cfg_sack(), seg(6), 6);
    recv(&mut ep, us(100), ack(seg(4)));
    expect_nothing(&mut ep, us(100));
    assert_eq!(ep.poll_timeout(), Some(us(100) + ep.rto()));
    expire(&mut ep);
}

/// Ten segments out; 0 and 1 are lost, recovery resends both (by 110 us),
/// the resent 0 is lost again, and at 250 us the resent 1 is SACKed.
/// Returns the endpoint, yet to send what that ACK allows.
fn lost_retransmission(cfg: &TcpConfig) -> Endpoint {
    let mut ep = with_flight(cfg, seg(10), 10);
    recv(&mut ep, us(103), sack_ack(0, &[(2, 3)]));
    recv(&mut ep, us(104), sack_ack(0, &[(2, 4)]));
    recv(&mut ep, us(105), sack_ack(0, &[(2, 5)]));
    assert!(ep.in_recovery());
    let mut sent = drain(&mut ep, us(105));
    for k in 6..=10 {
        recv(&mut ep, us(100 + k), sack_ack(0, &[(2, k)]));
        sent.extend(drain(&mut ep, us(100 + k)));
    }
    assert_eq!(sent, vec![(seg(0), MSS), (seg(1), MSS)], "rack_tlp = {}", cfg.rack_tlp);
    // The first block holds the segment that triggered the ACK (RFC 2018 §4): the resent 1.
    recv(&mut ep, us(250), sack_ack(0, &[(1, 10)]));
    ep
}

/// RFC 8985 §6.2 step 5 judges every segment by its latest transmission
/// (Linux tcp_rack_mark_skb_lost: "retransmits that are lost again"). In
/// [`lost_retransmission`] the resent 1 went with the resent 0 but later in
/// sequence (Linux tcp_rack_sent_after), and RACK.rtt has passed since they
/// left, so 0 is lost again and goes out at once. RFC 6675 alone never
/// resends an octet twice in one recovery and waits for the timer.
#[test]
fn rfc8985_6_2_a_retransmission_is_lost_again_when_a_later_one_is_delivered() {
    let mut ep = lost_retransmission(&cfg_rack());
    assert_eq!(drain(&mut ep, us(250)), vec![(seg(0), MSS)]);
    assert_eq!(ep.stats().lost_retransmits, 1, "Linux counts it in TCPLostRetransmit");
    assert_eq!(drain(&mut lost_retransmission(&cfg_sack()), us(250)), vec![]);
}

/// A transmission found lost again counts once, however many ACKs find it
/// so before it is resent: in [`lost_retransmission`] a second ACK arrives
/// before the resent 0 can leave.
#[test]
fn a_retransmission_lost_again_counts_once() {
    let mut ep = lost_retransmission(&cfg_rack());
    recv(&mut ep, us(251), sack_ack(0, &[(1, 10)]));
    assert_eq!(ep.stats().lost_retransmits, 1);
    assert_eq!(drain(&mut ep, us(251)), vec![(seg(0), MSS)]);
}

/// Linux tcp_xmit_retransmit_queue rearms the retransmission timer whenever
/// it resends the head (`tcp.rto_restart = "head_retransmit"`): the head
/// resent again at 250 us has a whole RTO from then. ns-2's rule
/// (`"fast_retransmit"`) restarts it only when recovery starts, at 105 us.
#[test]
fn linux_every_retransmission_of_the_head_restarts_the_timer() {
    use crate::tcp::rto::RtoRestart;
    for (restart, armed_at) in [(RtoRestart::FastRetransmit, us(105)), (RtoRestart::HeadRetransmit, us(250))] {
        let mut c = cfg_rack();
        c.rto.restart = restart;
        let mut ep = lost_retransmission(&c);
        let again = drain(&mut ep, us(250));
        assert_eq!(again, vec![(seg(0), MSS)]);
        assert_eq!(ep.poll_timeout(), Some(armed_at + ep.rto()), "{restart:?}");
    }
}

/// `cfg_rack()` with Linux's recovery (`tcp.sack_recovery = "linux"`).
fn cfg_rack_linux() -> TcpConfig {
    TcpConfig { sack_recovery: crate::tcp::sack::SackRecovery::Linux, ..cfg_rack() }
}

/// Linux tcp_ack sends every ACK that SACKs data to tcp_fastretrans_alert,
/// however far it moves SND.UNA: ten segments out at 0, segments 10-15 at
/// 100 us, and at 230 us an ACK that covers segment 5 and SACKs segment 10.
/// RACK finds 6-9 lost and Linux's recovery starts on that very ACK;
/// RFC 6675 starts only at a duplicate ACK.
#[test]
fn linux_recovery_starts_at_a_cumulative_ack_that_sacks_data() {
    for (c, starts) in [(cfg_rack_linux(), true), (cfg_rack(), false)] {
        let mut ep = with_flight(&c, seg(20), 10);
        recv(&mut ep, us(100), ack(seg(5)));
        assert_eq!(drain(&mut ep, us(100)).len(), 6, "slow start: cwnd 11, segments 10-15");
        recv(&mut ep, us(230), sack_ack(6, &[(10, 11)]));
        assert_eq!(ep.in_recovery(), starts, "{:?}", c.sack_recovery);
        if starts {
            expect_data(&mut ep, us(230), seg(6), MSS);
        }
    }
}

/// Five segments out, 0 delivered (RACK's minimum RTT 100 us), the other four
/// lost, and the probe too, then a timeout: go-back-N resends 1, its ACK lets 2 and 3 go at once,
/// 2 is lost again and 3 SACKed. In the loss state RACK judges what go-back-N
/// resent (Linux tcp_rack_detect_loss in TCP_CA_Loss, with a reordering window
/// of 0): the resent 2 left with 3, earlier in sequence, and RACK.rtt has
/// passed, so it is lost again; recovery starts (Linux tcp_fastretrans_alert:
/// "Change state if cwnd is undone or retransmits are lost") and resends it at
/// once, then 4, which the timeout marked lost. No second timeout.
#[test]
fn linux_a_retransmission_lost_again_after_a_timeout_starts_recovery() {
    let mut ep = with_flight(&cfg_rack_linux(), seg(5), 5);
    recv(&mut ep, us(100), ack(seg(1)));
    let probe = ep.poll_timeout().expect("the probe timer is armed");
    assert!(ep.on_timer(probe).is_none());
    expect_data(&mut ep, probe, seg(4), MSS);
    let t = ep.poll_timeout().expect("the retransmission timer is armed");
    expire(&mut ep);
    expect_data(&mut ep, t, seg(1), MSS);
    let (t1, t2) = (t + SimDuration::from_micros(100), t + SimDuration::from_micros(200));
    recv(&mut ep, t1, ack(seg(2)));
    assert_eq!(drain(&mut ep, t1), vec![(seg(2), MSS), (seg(3), MSS)], "cwnd 2 after the ACK");
    assert!(!ep.in_recovery());
    recv(&mut ep, t2, sack_ack(2, &[(3, 4)]));
    assert!(ep.in_recovery(), "the resent 2 is lost again");
    assert_eq!(drain(&mut ep, t2), vec![(seg(2), MSS), (seg(4), MSS)]);
    let st = ep.stats();
    assert_eq!((st.timeouts, st.lost_retransmits, st.fast_retransmits), (1, 1, 1));
}
