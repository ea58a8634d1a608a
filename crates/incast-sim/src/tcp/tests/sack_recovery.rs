//! SACK loss recovery traces (RFC 6675) on a scripted window: the scoreboard,
//! `pipe` and `NextSeg` as the sender sees them.

use super::*;
use crate::tcp::prr::PrrFlavor;
use crate::tcp::sack::SackRecovery;

/// 20 segments written, 12 sent; segments 1 and 4 lost. The ACK of segment 0
/// opened the window to 11 segments.
fn two_holes(cfg: &TcpConfig) -> Endpoint {
    let mut ep = with_flight(cfg, seg(20), 10);
    recv(&mut ep, us(100), ack(seg(1)));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    ep
}

/// Segments 2, 3 and 5 arrive, each drawing a duplicate ACK with its SACK
/// block.
fn three_sacking_dup_acks() -> Endpoint {
    three_sacking_dup_acks_with(&cfg_sack())
}

fn three_sacking_dup_acks_with(cfg: &TcpConfig) -> Endpoint {
    let mut ep = two_holes(cfg);
    // SACKed data has left the network: like Limited Transmit (RFC 6675 §5
    // step 3; Linux counts packets in flight so), new data goes out.
    recv(&mut ep, us(110), sack_ack(1, &[(2, 3)]));
    assert_eq!(drain(&mut ep, us(110)), vec![(seg(12), MSS)]);
    recv(&mut ep, us(120), sack_ack(1, &[(2, 4)]));
    assert_eq!(drain(&mut ep, us(120)), vec![(seg(13), MSS)]);
    assert!(!ep.in_recovery());
    recv(&mut ep, us(130), sack_ack(1, &[(5, 6), (2, 4)]));
    ep
}

/// RFC 6675 §5: the third SACKing duplicate ACK starts recovery;
/// ssthresh = cwnd = FlightSize/2 (no inflation), FlightSize without the two
/// segments SACKed data let through; segment 1 is retransmitted at once.
#[test]
fn rfc6675_5_third_sacking_dup_ack_starts_recovery_without_inflation() {
    let mut ep = three_sacking_dup_acks();
    assert!(ep.in_recovery());
    assert_eq!((ep.ssthresh(), ep.cwnd()), (5500, 5500));
    expect_data(&mut ep, us(130), seg(1), MSS);
    // pipe = segments 4 and 6..=13, not SACKed and not lost (9), + segment 1 resent > cwnd.
    expect_nothing(&mut ep, us(130));
    assert_eq!(ep.stats().fast_retransmits, 1);
}

/// ns-3.44 `TcpSocketBase::EnterRecovery` (`tcp.ssthresh_rule = "ns3"`):
/// ssthresh is half of `BytesInFlight()`, RFC 6675's pipe with the head
/// marked lost: segments 4 and 6..=13 (9), not FlightSize (11), so 4.5
/// segments where RFC 6675 gives 5.5.
#[test]
fn ns3_cuts_ssthresh_from_the_pipe_at_a_fast_retransmit() {
    let mut ep = three_sacking_dup_acks_with(&TcpConfig { ssthresh_rule: SsthreshRule::Ns3, ..cfg_sack() });
    assert!(ep.in_recovery());
    assert_eq!((ep.ssthresh(), ep.cwnd()), (4500, 4500));
    expect_data(&mut ep, us(130), seg(1), MSS);
}

/// ns-3.44 `TcpSocketBase::ReTxTimeout`: "inFlightBeforeRto =
/// BytesInFlight()": 10 segments out, one SACKed, none yet deemed lost:
/// ssthresh 4.5 segments where RFC 5681's FlightSize gives 5.
#[test]
fn ns3_cuts_ssthresh_from_the_pipe_at_a_timeout() {
    for (rule, ssthresh) in [(SsthreshRule::Rfc5681, 5000), (SsthreshRule::Ns3, 4500)] {
        let mut ep = with_flight(&TcpConfig { ssthresh_rule: rule, ..cfg_sack() }, seg(10), 10);
        recv(&mut ep, us(100), sack_ack(0, &[(1, 2)]));
        expire(&mut ep);
        assert_eq!((ep.ssthresh(), ep.cwnd()), (ssthresh, MSS as u64), "{rule:?}");
    }
}

/// RFC 6675 §4–5: as SACKs for 6..=10 arrive, segment 4 becomes lost (three
/// SACKed segments above it) and, once pipe falls a segment below cwnd, is
/// retransmitted before any partial ACK — the second loss of the window
/// costs neither a timeout nor a round trip (FAST08 §5.1: the SACK variant).
#[test]
fn rfc6675_second_hole_is_resent_before_any_partial_ack() {
    let mut ep = three_sacking_dup_acks();
    expect_data(&mut ep, us(130), seg(1), MSS);
    for (t, upto) in [(140, 7), (150, 8), (160, 9), (170, 10)] {
        recv(&mut ep, us(t), sack_ack(1, &[(5, upto), (2, 4)]));
        // pipe: the unSACKed segments above 5 plus segment 1 resent, ≥ cwnd (5.5).
        expect_nothing(&mut ep, us(t));
    }
    recv(&mut ep, us(180), sack_ack(1, &[(5, 11), (2, 4)]));
    expect_data(&mut ep, us(180), seg(4), MSS);
    expect_nothing(&mut ep, us(180));
    recv(&mut ep, us(190), sack_ack(1, &[(5, 12), (2, 4)]));
    // NextSeg rule (2): with both holes resent, new data.
    expect_data(&mut ep, us(190), seg(14), MSS);

    // Segment 1's retransmission arrives: a cumulative ACK up to the next hole.
    recv(&mut ep, us(230), sack_ack(4, &[(5, 12)]));
    assert!(ep.in_recovery(), "RecoveryPoint (14) not yet acknowledged");
    recv(&mut ep, us(260), ack(seg(15)));
    assert!(!ep.in_recovery());
    assert_eq!(ep.cwnd(), 5500, "RFC 6675: cwnd stays at ssthresh after recovery");
    let st = ep.stats();
    assert_eq!((st.timeouts, st.fast_retransmits, st.retransmitted_segments), (0, 1, 2));
}

/// Recovery after a timeout keeps the scoreboard (as Linux does): segments 0
/// and 2 of four were lost, 1 and 3 SACKed; after the timeout's
/// retransmission of 0 is acknowledged, slow start resends 2 and skips 3.
#[test]
fn retransmission_after_timeout_skips_sacked_segments() {
    let mut ep = with_flight(&cfg_sack(), seg(4), 4);
    recv(&mut ep, us(100), sack_ack(0, &[(1, 2)]));
    recv(&mut ep, us(110), sack_ack(0, &[(3, 4), (1, 2)]));
    assert!(!ep.in_recovery(), "two SACKed segments above SND.UNA: not yet lost");
    let t = expire(&mut ep);
    assert_eq!(drain(&mut ep, t.snapshot.time), vec![(seg(0), MSS)]);
    let later = t.snapshot.time + SimDuration::from_micros(100);
    recv(&mut ep, later, sack_ack(2, &[(3, 4)]));
    assert_eq!(drain(&mut ep, later), vec![(seg(2), MSS)], "segment 3 is SACKed: not resent");
}

/// The ACK that ends recovery sets cwnd to ssthresh (5.5 segments); ns-3's
/// `ProcessAck` then grows it as any ACK in the open state
/// (`ExitRecovery`, then `IncreaseWindow`: 1000²/5500 bytes more).
#[test]
fn ns3_grows_the_window_on_the_ack_that_ends_recovery() {
    for (flavor, cwnd) in [(PrrFlavor::Rfc6937, 5500), (PrrFlavor::Ns3, 5681)] {
        let mut ep = three_sacking_dup_acks_with(&TcpConfig { prr: true, prr_flavor: flavor, ..cfg_sack() });
        drain(&mut ep, us(130));
        recv(&mut ep, us(300), ack(seg(14)));
        assert!(!ep.in_recovery());
        assert_eq!((ep.ssthresh(), ep.cwnd()), (5500, cwnd), "{flavor:?}");
    }
}

/// ns-3.44's pipe (`tcp.sack_recovery = "ns3"`): a segment retransmitted
/// after the timeout still counts once SACKed (`TcpTxBuffer::Update` clears
/// its lost mark, not its retransmitted one). All four segments lost; after
/// the ACK of the timeout's retransmission, slow start resends 1 and 2, and 2
/// is SACKed: RFC 6675 counts 1 alone in the pipe and resends 3; ns-3 counts
/// both against the window of 2 and sends nothing.
#[test]
fn ns3_pipe_keeps_a_sacked_retransmission_until_a_cumulative_ack() {
    for (rule, resent) in [(SackRecovery::Rfc6675, vec![(seg(3), MSS)]), (SackRecovery::Ns3, vec![])] {
        let mut ep = with_flight(&TcpConfig { sack_recovery: rule, ..cfg_sack() }, seg(4), 4);
        let t = expire(&mut ep);
        assert_eq!(drain(&mut ep, t.snapshot.time), vec![(seg(0), MSS)]);
        let later = t.snapshot.time + SimDuration::from_micros(100);
        recv(&mut ep, later, ack(seg(1)));
        assert_eq!(drain(&mut ep, later), vec![(seg(1), MSS), (seg(2), MSS)]);
        let sacked = later + SimDuration::from_micros(100);
        recv(&mut ep, sacked, sack_ack(1, &[(2, 3)]));
        assert_eq!(drain(&mut ep, sacked), resent, "{rule:?}");
    }
}

/// ns-3.44 after a timeout (`tcp.sack_recovery = "ns3"`): `NextSeg` resends
/// what is marked lost only below the highest SACK, then sends new data.
/// Segments 0..=5 out, 2 SACKed, then a timeout; once the timeout's
/// retransmission of 0 is acknowledged, both resend 1; then RFC 6675's
/// go-back-N resends 3, where ns-3 sends new segment 6 (3 lies above the
/// highest SACK and waits for later SACKs to pass it).
#[test]
fn ns3_after_a_timeout_resends_only_below_the_highest_sack() {
    for (rule, next) in [(SackRecovery::Rfc6675, seg(3)), (SackRecovery::Ns3, seg(6))] {
        let mut ep = with_flight(&TcpConfig { sack_recovery: rule, ..cfg_sack() }, seg(10), 6);
        recv(&mut ep, us(100), sack_ack(0, &[(2, 3)]));
        let t = expire(&mut ep);
        assert_eq!(drain(&mut ep, t.snapshot.time), vec![(seg(0), MSS)]);
        let later = t.snapshot.time + SimDuration::from_micros(100);
        recv(&mut ep, later, sack_ack(1, &[(2, 3)]));
        assert_eq!(drain(&mut ep, later), vec![(seg(1), MSS), (next, MSS)], "{rule:?}");
    }
}

/// ns-3.44 restarts the retransmission timer in SACK recovery on the first
/// partial ACK only (`ProcessAck`: "NewAck(ackNumber, m_isFirstPartialAck)",
/// RFC 6582's rule), where RFC 6298 (5.3) restarts it on every ACK of new
/// data.
#[test]
fn ns3_restarts_the_timer_on_the_first_partial_ack_of_a_recovery_only() {
    for (rule, restarts) in [(SackRecovery::Rfc6675, true), (SackRecovery::Ns3, false)] {
        let mut ep = three_sacking_dup_acks_with(&TcpConfig { sack_recovery: rule, ..cfg_sack() });
        drain(&mut ep, us(130));
        recv(&mut ep, us(200), sack_ack(4, &[(5, 6)]));
        assert!(ep.in_recovery());
        let first = ep.poll_timeout().expect("armed");
        assert_eq!(first, us(200) + ep.rto(), "the first partial ACK restarts it");
        drain(&mut ep, us(200));
        recv(&mut ep, us(300), sack_ack(5, &[(6, 7)]));
        assert!(ep.in_recovery());
        let second = ep.poll_timeout().expect("armed");
        assert_eq!(second != first, restarts, "{rule:?}");
    }
}

/// RFC 6675 §5.1: no new recovery until RecoveryPoint (SND.MAX at the
/// timeout) is acknowledged, whatever the duplicate ACKs say.
#[test]
fn rfc6675_5_1_no_fast_retransmit_below_recovery_point_after_timeout() {
    let mut ep = with_flight(&cfg_sack(), seg(10), 10);
    let t = expire(&mut ep);
    let now = t.snapshot.time + SimDuration::from_micros(100);
    drain(&mut ep, t.snapshot.time);
    recv(&mut ep, now, sack_ack(1, &[]));
    drain(&mut ep, now);
    for (i, upto) in [3, 4, 5, 6].into_iter().enumerate() {
        recv(&mut ep, now + SimDuration::from_micros(i as u64), sack_ack(1, &[(2, upto)]));
    }
    assert!(!ep.in_recovery());
    assert_eq!(ep.stats().fast_retransmits, 0);
}

/// RFC 9293 §3.8.6.2.1: the usable window is SND.UNA + SND.WND − SND.NXT.
/// SACKed data has left the network and lets new data out (RFC 6675 §5), but
/// never past the right edge of the peer's window: with a 12-segment window
/// from SND.UNA = 1, segment 12 may go and segment 13 may not, however much
/// is SACKed (Linux `tcp_snd_wnd_test`).
#[test]
fn rfc9293_sacked_data_never_lets_the_sender_past_the_peer_window() {
    let window = |mut s: Segment| {
        s.wnd = 12 * MSS;
        s
    };
    let mut ep = with_flight(&cfg_sack(), seg(20), 10);
    recv(&mut ep, us(100), window(ack(seg(1))));
    assert_eq!(drain(&mut ep, us(100)), vec![(seg(10), MSS), (seg(11), MSS)]);
    recv(&mut ep, us(110), window(sack_ack(1, &[(2, 3)])));
    assert_eq!(drain(&mut ep, us(110)), vec![(seg(12), MSS)]);
    recv(&mut ep, us(120), window(sack_ack(1, &[(2, 4)])));
    assert_eq!(drain(&mut ep, us(120)), vec![], "segment 13 would end past SND.UNA + SND.WND");
    // The window slides with SND.UNA: segment 1 arrives, the ACK covers up to 4, segment 13 goes.
    recv(&mut ep, us(130), window(ack(seg(4))));
    assert_eq!(drain(&mut ep, us(130)).first(), Some(&(seg(13), MSS)));
}

/// As with NewReno (`loss_recovery`): the fast retransmission that starts SACK
/// recovery restarts the retransmission timer only with `tcp.rto_restart =
/// "fast_retransmit"` (ns-2.35's `tcp-sack1.cc` calls `reset_rtx_timer(1,0)`
/// there); under RFC 6298 it runs from the last ACK of new data, at 100 µs.
#[test]
fn rto_restart_fast_retransmit_restarts_the_timer_when_sack_recovery_starts() {
    use crate::tcp::rto::RtoRestart;
    for (restart, armed_at) in [(RtoRestart::Rfc6298, us(100)), (RtoRestart::FastRetransmit, us(130))] {
        let mut c = cfg_sack();
        c.rto.restart = restart;
        let mut ep = with_flight(&c, seg(20), 10);
        recv(&mut ep, us(100), ack(seg(1)));
        drain(&mut ep, us(100));
        recv(&mut ep, us(110), sack_ack(1, &[(2, 3)]));
        drain(&mut ep, us(110));
        recv(&mut ep, us(120), sack_ack(1, &[(2, 4)]));
        drain(&mut ep, us(120));
        recv(&mut ep, us(130), sack_ack(1, &[(5, 6), (2, 4)]));
        assert!(ep.in_recovery());
        assert_eq!(ep.poll_timeout(), Some(armed_at + ep.rto()), "{restart:?}");
    }
}

/// Linux's PRR (`tcp_cwnd_reduction`) against RFC 6937's on a burst loss:
/// 20 segments out and nothing more to send, segments 0–13 lost, the third
/// duplicate ACK SACKs 14–16, so 14 segments are lost and pipe is 3, below
/// ssthresh 10. The RFC's reduction bound lets delivered + 1 go beside the
/// fast retransmission (RFC 6675 counts it in pipe before PRR runs); Linux
/// counts it within its quota and adds the extra segment only on an ACK that
/// advanced SND.UNA, so the fast retransmission goes alone, and each later
/// duplicate lets one more go where the RFC lets two.
#[test]
fn linux_prr_sends_the_fast_retransmission_alone_into_a_burst_loss() {
    let resent = |prr_flavor| {
        let cfg = TcpConfig { prr: true, prr_flavor, init_cwnd: 20, ..cfg_sack() };
        let mut ep = with_flight(&cfg, seg(20), 20);
        for k in 15..=17 {
            recv(&mut ep, us(100 + k), sack_ack(0, &[(14, k)]));
        }
        assert!(ep.in_recovery());
        let first = drain(&mut ep, us(117));
        recv(&mut ep, us(118), sack_ack(0, &[(14, 18)]));
        (first, drain(&mut ep, us(118)))
    };
    let (first, next) = resent(PrrFlavor::Rfc6937);
    assert_eq!(first, vec![(seg(0), MSS), (seg(1), MSS), (seg(2), MSS)], "RFC 6937: delivered 1 + 1 MSS");
    assert_eq!(next, vec![(seg(3), MSS), (seg(4), MSS)]);
    let (first, next) = resent(PrrFlavor::Linux);
    assert_eq!(first, vec![(seg(0), MSS)], "Linux: max(prr_delivered - prr_out, 1), no extra");
    assert_eq!(next, vec![(seg(1), MSS)]);
}

/// RFC 6937 §3: 20 segments out, the first lost, the rest SACKed one by
/// one. RFC 6675 alone cuts cwnd to ssthresh (10) and sends nothing until
/// pipe falls below it; PRR sends from the start of recovery, a segment for
/// every two delivered (ssthresh / RecoverFS = 10 / 20): after six deliveries
/// CEIL(6 · 10 / 20) = 3 segments, the retransmission and two new ones; and
/// recovery ends with cwnd = ssthresh.
#[test]
fn rfc6937_prr_sends_in_proportion_to_what_is_delivered() {
    let sent_while_pipe_above_ssthresh = |prr: bool| {
        let cfg = TcpConfig { prr, init_cwnd: 20, ..cfg_sack() };
        let mut ep = with_flight(&cfg, seg(40), 20);
        for k in 2..=4 {
            recv(&mut ep, us(100 + k), sack_ack(0, &[(1, k)]));
        }
        assert!(ep.in_recovery());
        expect_data(&mut ep, us(104), seg(0), MSS);
        assert_eq!(ep.ssthresh(), 10 * MSS as u64);
        let mut sent = vec![];
        for k in 5..=9 {
            recv(&mut ep, us(100 + k), sack_ack(0, &[(1, k)]));
            sent.extend(drain(&mut ep, us(100 + k)));
        }
        recv(&mut ep, us(300), ack(seg(20)));
        assert!(!ep.in_recovery());
        (sent, ep.cwnd())
    };
    let (sent, _) = sent_while_pipe_above_ssthresh(false);
    assert_eq!(sent, vec![], "RFC 6675: pipe (16 down to 12) is above cwnd = ssthresh");
    let (sent, cwnd) = sent_while_pipe_above_ssthresh(true);
    assert_eq!(sent, vec![(seg(20), MSS), (seg(21), MSS)], "one per two delivered");
    assert_eq!(cwnd, 10 * MSS as u64, "Linux tcp_end_cwnd_reduction: cwnd = ssthresh");
}
