//! Loss recovery traces: fast retransmit, NewReno partial/full ACKs, timeouts.

use super::*;
use crate::tcp::newreno::RecoveryExit;
use crate::tcp::prr::PrrFlavor;

/// 20 segments written with the settings `c`, 10 sent at t = 0, segment 1 lost. The ACK of segment
/// 0 at 100 µs opens the window to 11 and sends segments 10 and 11.
fn seg1_lost_with(c: &TcpConfig) -> Endpoint {
    let mut ep = with_flight(c, seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    assert_eq!(ep.flight_size(), seg(11));
    ep
}

/// Three duplicate ACKs of segment 1 at 110, 120, 130 µs.
fn fast_retransmitted() -> Endpoint {
    fast_retransmitted_with(&cfg())
}

/// [`fast_retransmitted`] with the settings `c`.
fn fast_retransmitted_with(c: &TcpConfig) -> Endpoint {
    let mut ep = seg1_lost_with(c);
    for t in [110, 120] {
        recv(&mut ep, us(t), ack(seg(1)));
        expect_nothing(&mut ep, us(t));
    }
    recv(&mut ep, us(130), ack(seg(1)));
    expect_data(&mut ep, us(130), seg(1), MSS);
    expect_nothing(&mut ep, us(130));
    ep
}

/// RFC 5681 (3.2 step 2): the third duplicate ACK retransmits SND.UNA,
/// ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh + 3·SMSS.
#[test]
fn rfc5681_3_2_step2_three_dup_acks_fast_retransmit() {
    let ep = fast_retransmitted();
    assert!(ep.in_recovery());
    assert_eq!(ep.ssthresh(), 5500);
    assert_eq!(ep.cwnd(), 8500);
    let st = ep.stats();
    assert_eq!((st.fast_retransmits, st.retransmitted_segments, st.timeouts), (1, 1, 0));
    assert_eq!(st.data_segments_sent, 13);
}

/// RFC 5681 (3.2 step 4): each further duplicate ACK inflates cwnd by SMSS;
/// new data goes out once cwnd exceeds the flight by a full segment.
#[test]
fn rfc5681_3_2_step4_inflation_releases_new_data() {
    let mut ep = fast_retransmitted();
    for (i, t) in [140, 150, 160].into_iter().enumerate() {
        recv(&mut ep, us(t), ack(seg(1)));
        assert_eq!(ep.cwnd(), 9500 + 1000 * i as u64);
        expect_nothing(&mut ep, us(t));
    }
    recv(&mut ep, us(170), ack(seg(1)));
    assert_eq!(ep.cwnd(), 12_500);
    expect_data(&mut ep, us(170), seg(12), MSS);
    expect_nothing(&mut ep, us(170));
    assert_eq!(ep.stats().fast_retransmits, 1, "no second fast retransmit in recovery");
}

/// RFC 6582 (3.2 step 3): a partial ACK retransmits the next hole, deflates
/// cwnd by the amount acked plus one SMSS back, and resets the retransmission
/// timer on the first partial ACK only.
#[test]
fn rfc6582_3_2_step3_partial_ack_retransmits_next_hole() {
    let mut ep = fast_retransmitted();
    // Segments 4 and 7 were lost too: the retransmission of 1 fills only up to 4.
    recv(&mut ep, us(250), ack(seg(4)));
    assert!(ep.in_recovery());
    assert_eq!(ep.cwnd(), 8500 - 3000 + 1000);
    expect_data(&mut ep, us(250), seg(4), MSS);
    expect_nothing(&mut ep, us(250));
    let rearmed = us(250) + ep.rto();
    assert_eq!(ep.poll_timeout(), Some(rearmed));

    recv(&mut ep, us(350), ack(seg(7)));
    assert_eq!(ep.cwnd(), 4500);
    expect_data(&mut ep, us(350), seg(7), MSS);
    assert_eq!(ep.poll_timeout(), Some(rearmed), "second partial ACK leaves the timer alone");
    assert_eq!(ep.stats().retransmitted_segments, 3);
    assert_eq!(ep.stats().fast_retransmits, 1);
}

/// RFC 6582 (3.2 step 3): the full ACK (covering `recover`) exits recovery
/// with cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
#[test]
fn rfc6582_3_2_step3_full_ack_exits_recovery() {
    let mut ep = fast_retransmitted();
    recv(&mut ep, us(250), ack(seg(12)));
    assert!(!ep.in_recovery());
    assert_eq!(ep.cwnd(), 2000, "nothing outstanding: SMSS + SMSS");
    assert_eq!(ep.ssthresh(), 5500);
    assert_eq!(drain(&mut ep, us(250)), vec![(seg(12), MSS), (seg(13), MSS)]);
    // Below ssthresh: slow start.
    recv(&mut ep, us(350), ack(seg(13)));
    assert_eq!(ep.cwnd(), 3000);
}

/// RFC 6582 (3.2 step 3) option (2), as ns-2.35's NewReno agent exits
/// (`dupwnd_ = 0`, cwnd_ left at ssthresh): the same full ACK leaves cwnd at
/// ssthresh and grows it as any ACK of new data (congestion avoidance:
/// SMSS²/cwnd), and the five full segments it allows go out at once.
#[test]
fn rfc6582_3_2_step3_option2_full_ack_leaves_cwnd_at_ssthresh() {
    let mut ep = fast_retransmitted_with(&TcpConfig { recovery_exit: RecoveryExit::Ssthresh, ..cfg() });
    recv(&mut ep, us(250), ack(seg(12)));
    assert!(!ep.in_recovery());
    assert_eq!((ep.cwnd(), ep.ssthresh()), (5500 + 1_000_000 / 5500, 5500));
    assert_eq!(drain(&mut ep, us(250)).len(), 5);
}

/// RFC 5681 (3.1), RFC 6298 (5.4): a timeout sets cwnd to one SMSS,
/// ssthresh = max(FlightSize/2, 2·SMSS), and resends from SND.UNA (go-back-N,
/// every resent segment counted as a retransmission).
#[test]
fn rfc5681_3_1_timeout_resends_from_snd_una_with_loss_window() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    let deadline = ep.poll_timeout().unwrap();
    assert_eq!(deadline, us(100) + SimDuration::from_millis(10));
    ep.on_timer(deadline);
    assert_eq!(ep.stats().timeouts, 1);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, 4500));
    expect_data(&mut ep, deadline, seg(1), MSS);
    expect_nothing(&mut ep, deadline);
    // Only the retransmission arrived: slow start from one segment, resending.
    let t = deadline + SimDuration::from_micros(100);
    recv(&mut ep, t, ack(seg(2)));
    assert_eq!(ep.cwnd(), 2000);
    assert_eq!(drain(&mut ep, t), vec![(seg(2), MSS), (seg(3), MSS)]);
    assert_eq!(ep.stats().retransmitted_segments, 3);
}

/// An ACK beyond SND.NXT after a timeout (the receiver had buffered the rest)
/// moves SND.NXT up to SND.UNA: nothing is resent needlessly.
#[test]
fn ack_beyond_snd_nxt_after_timeout_skips_resend() {
    let mut ep = with_flight(&cfg(), seg(12), 10);
    let deadline = ep.poll_timeout().unwrap();
    ep.on_timer(deadline);
    expect_data(&mut ep, deadline, seg(0), MSS);
    recv(&mut ep, deadline + SimDuration::from_micros(100), ack(seg(10)));
    assert_eq!(ep.flight_size(), 0);
    let t = deadline + SimDuration::from_micros(100);
    assert_eq!(drain(&mut ep, t), vec![(seg(10), MSS), (seg(11), MSS)]);
    assert_eq!(ep.stats().retransmitted_segments, 1);
}

/// RFC 6582 (3.2 step 2): after a timeout, duplicate ACKs for data sent before
/// it do not cover more than `recover`: no fast retransmit, ssthresh kept.
#[test]
fn rfc6582_3_2_step2_recover_blocks_dup_acks_after_timeout() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    let deadline = ep.poll_timeout().unwrap();
    ep.on_timer(deadline);
    expect_data(&mut ep, deadline, seg(1), MSS);
    // Originals of segments 2..4, stuck in a deep queue, finally arrive.
    for i in 1..=5 {
        let t = deadline + SimDuration::from_micros(i);
        recv(&mut ep, t, ack(seg(1)));
        expect_nothing(&mut ep, t);
    }
    assert_eq!(ep.stats().fast_retransmits, 0);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, 4500));
    assert!(!ep.in_recovery());
}

/// RFC 5681 (3.1): a repeated timeout of the same segment holds ssthresh.
#[test]
fn rfc5681_3_1_repeated_timeout_holds_ssthresh() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    let first = ep.poll_timeout().unwrap();
    ep.on_timer(first);
    expect_data(&mut ep, first, seg(0), MSS);
    assert_eq!(ep.ssthresh(), 5000);
    let second = ep.poll_timeout().unwrap();
    ep.on_timer(second);
    expect_data(&mut ep, second, seg(0), MSS);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, 5000));
    assert_eq!(ep.stats().timeouts, 2);
}

/// RFC 5681 (2): a segment carrying data is never a duplicate ACK.
#[test]
fn rfc5681_2_data_segments_are_not_dup_acks() {
    let mut ep = with_flight(&cfg(), seg(10), 10);
    for i in 0..5 {
        recv(&mut ep, us(100 + i), Segment::new(100 * i, 0, 100, WND, flags::ACK));
    }
    assert_eq!(ep.stats().fast_retransmits, 0);
    assert_eq!(ep.delivered(), 500);
}

/// RFC 5681 (3.1): slow start grows cwnd by one SMSS per ACK of a full segment,
/// releasing two segments per ACK; `max_cwnd` follows.
#[test]
fn rfc5681_3_1_slow_start_two_segments_per_ack() {
    let mut ep = with_flight(&cfg(), seg(100), 10);
    for i in 1..=10 {
        recv(&mut ep, us(100 + i), ack(seg(i)));
        let next = 10 + 2 * (i - 1);
        assert_eq!(drain(&mut ep, us(100 + i)), vec![(seg(next), MSS), (seg(next + 1), MSS)]);
    }
    assert_eq!(ep.cwnd(), 20_000);
    assert_eq!(ep.stats().max_cwnd, 20_000);
}

/// ns-2.35 `TcpAgent::timeout`: `slowdown(CLOSE_SSTHRESH_HALF)` halves
/// `min(cwnd_, wnd_)`, and ns-2 keeps fast recovery's inflation in `dupwnd_`,
/// outside `cwnd_`. A sender whose window inflated in recovery (cwnd 12.5
/// segments over ssthresh 5.5) times out: "ns2" cuts ssthresh from the window
/// before inflation (5 segments → 2.5, whole segments: 2), where RFC 5681
/// halves the 12 segments then outstanding.
#[test]
fn ns2_timeout_in_recovery_halves_the_window_before_inflation() {
    for (rule, ssthresh) in [(SsthreshRule::Rfc5681, 6000), (SsthreshRule::Ns2, 2000)] {
        let mut ep = fast_retransmitted_with(&TcpConfig { ssthresh_rule: rule, ..cfg() });
        for t in [140, 150, 160, 170] {
            recv(&mut ep, us(t), ack(seg(1)));
        }
        expect_data(&mut ep, us(170), seg(12), MSS);
        assert_eq!((ep.cwnd(), ep.flight_size()), (12_500, seg(12)));
        expire(&mut ep);
        assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, ssthresh), "{rule:?}");
    }
}

/// ns-2.35 cuts ssthresh at every timeout, the repeated one included: with
/// cwnd at one segment the half rounds to nothing and the floor of two
/// segments applies (RFC 5681 (3.1) holds ssthresh instead).
#[test]
fn ns2_repeated_timeout_cuts_ssthresh_to_two_segments() {
    let mut ep = with_flight(&TcpConfig { ssthresh_rule: SsthreshRule::Ns2, ..cfg() }, seg(10), 10);
    expire(&mut ep);
    assert_eq!(ep.ssthresh(), 5000);
    expire(&mut ep);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (1000, 2000));
}

/// ns-2.35 `NewRenoTcpAgent::recv`: in fast recovery each ACK releases at
/// most two new segments ("send_much(0, 0, 2)"), whatever room the inflated
/// window has. Twelve segments written and sent, segment 1 lost; six more
/// duplicate ACKs inflate cwnd with nothing left to send; the application
/// then writes eight more and the next duplicate ACK finds room for four.
#[test]
fn ns2_recovery_burst_caps_new_segments_per_ack() {
    for (burst, first) in [(None, 4), (Some(2), 2)] {
        let mut ep = with_flight(&TcpConfig { recovery_burst: burst, ..cfg() }, seg(12), 10);
        recv(&mut ep, us(100), ack(seg(1)));
        assert_eq!(drain(&mut ep, us(100)).len(), 2);
        for t in (110..=190).step_by(10) {
            recv(&mut ep, us(t), ack(seg(1)));
        }
        expect_data(&mut ep, us(190), seg(1), MSS);
        expect_nothing(&mut ep, us(190));
        ep.send(seg(8));
        recv(&mut ep, us(200), ack(seg(1)));
        assert_eq!(drain(&mut ep, us(200)).len(), first, "{burst:?}");
    }
}

/// ns-2.35 `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)` at the third
/// duplicate ACK: `halfwin` = 11 segments / 2 = 5.5, `ssthresh_ = (int)
/// halfwin` = 5 whole segments, `cwnd_ = halfwin` = 5.5 plus the three
/// duplicate ACKs; the full ACK restores `cwnd_` = 5.5 segments (and grows
/// it), not the rounded ssthresh.
#[test]
fn ns2_fast_retransmit_rounds_ssthresh_and_recovery_keeps_the_fraction() {
    let c = TcpConfig { ssthresh_rule: SsthreshRule::Ns2, recovery_exit: RecoveryExit::Ssthresh, ..cfg() };
    let mut ep = fast_retransmitted_with(&c);
    assert_eq!((ep.ssthresh(), ep.cwnd()), (5000, 8500));
    recv(&mut ep, us(250), ack(seg(12)));
    assert_eq!((ep.ssthresh(), ep.cwnd()), (5000, 5500 + 1_000_000 / 5500));
}

/// RFC 6298 (5.3) restarts a running retransmission timer only on an ACK of
/// new data: the fast retransmission at 130 µs leaves the timer where the ACK
/// at 100 µs set it. ns-2.35 (`dupack_action`: `reset_rtx_timer(1,0)` before
/// the retransmission) and Linux restart it with the retransmission
/// (`tcp.rto_restart = "fast_retransmit"`), so its ACK has a whole RTO to
/// come back.
#[test]
fn rto_restart_fast_retransmit_restarts_the_timer_with_the_retransmission() {
    let rfc = fast_retransmitted();
    let rto = rfc.rto();
    assert_eq!(rfc.poll_timeout(), Some(us(100) + rto));
    let mut c = cfg();
    c.rto.restart = crate::tcp::rto::RtoRestart::FastRetransmit;
    let ns2 = fast_retransmitted_with(&c);
    assert_eq!(ns2.poll_timeout(), Some(us(130) + rto));
    assert_eq!(ns2.stats().fast_retransmits, 1);
}

/// Linux `tcp_cwnd_reduction` on a connection without SACK: duplicate ACKs
/// count as SACKed, delivered segments, and PRR sets cwnd = pipe + sndcnt in
/// place of RFC 5681's inflation. 11 segments out, ssthresh 5.5: the third
/// duplicate gives pipe 7 (the 3 counted and the lost head left out) and half
/// a segment to send, which the head's retransmission takes; pipe falls
/// below ssthresh by the third further duplicate, and from the fourth one new
/// segment leaves per duplicate, as with inflation. The partial ACK of
/// segments 1-4 delivers one segment, eats 3 of the 10 counted, and lets
/// two new segments go with the retransmission of segment 5, where
/// deflation lets one.
#[test]
fn linux_prr_without_sack_counts_duplicate_acks_as_delivered() {
    let c = TcpConfig { prr: true, recovery_exit: RecoveryExit::Ssthresh, ..cfg() };
    let mut ep = fast_retransmitted_with(&c);
    assert_eq!((ep.ssthresh(), ep.cwnd()), (5500, 11_500), "inflation would give 8,500");
    for (t, cwnd) in [(140, 11_000), (150, 11_500), (160, 11_500)] {
        recv(&mut ep, us(t), ack(seg(1)));
        assert_eq!(ep.cwnd(), cwnd);
        expect_nothing(&mut ep, us(t));
    }
    for (i, t) in [170, 180, 190, 200].into_iter().enumerate() {
        recv(&mut ep, us(t), ack(seg(1)));
        assert_eq!(drain(&mut ep, us(t)), vec![(seg(12 + i as u64), MSS)]);
    }
    recv(&mut ep, us(210), ack(seg(5)));
    assert_eq!(drain(&mut ep, us(210)), vec![(seg(5), MSS), (seg(16), MSS), (seg(17), MSS)]);
    recv(&mut ep, us(300), ack(seg(18)));
    assert!(!ep.in_recovery());
    assert!((5500..6500).contains(&ep.cwnd()), "ssthresh, grown by the full ACK: {}", ep.cwnd());
}

/// Linux retransmits only within cwnd (`tcp_xmit_retransmit_queue`), and with
/// PRR cwnd is pipe + sndcnt: a head that a partial ACK leaves waits for the
/// quota of a later ACK, where RFC 6582 resends it at once. 11 segments out,
/// segment 1 lost, prior_cwnd 11, ssthresh 5. The fast retransmission took
/// the first ACK's quota; the partial ACK of segments 1-4 at 140 µs leaves
/// pipe 6 (segments 6-11) above ssthresh and CEIL(5 · 2 / 11) − 1 = 0 to
/// send; the duplicate at 150 µs leaves pipe at ssthresh, nothing again; the
/// one at 160 µs brings pipe to 4 and a segment's room: segment 5 goes.
#[test]
fn linux_prr_without_sack_holds_a_partial_acks_head_for_quota() {
    let after_partial_ack = |prr_flavor| {
        let c = TcpConfig { prr: true, prr_flavor, recovery_exit: RecoveryExit::Ssthresh, ..cfg() };
        let mut ep = fast_retransmitted_with(&c);
        recv(&mut ep, us(140), ack(seg(5)));
        let mut sent = vec![drain(&mut ep, us(140))];
        for t in [150, 160] {
            recv(&mut ep, us(t), ack(seg(5)));
            sent.push(drain(&mut ep, us(t)));
        }
        sent
    };
    assert_eq!(after_partial_ack(PrrFlavor::Rfc6937)[0], vec![(seg(5), MSS)], "RFC 6582: at once");
    assert_eq!(after_partial_ack(PrrFlavor::Linux), vec![vec![], vec![], vec![(seg(5), MSS)]]);
}
