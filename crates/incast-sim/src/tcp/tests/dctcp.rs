//! DCTCP traces (RFC 8257 §3.2–3.3): ECT data, the receiver's exact echo of
//! CE, and the sender's window cut by α/2.

use super::*;

fn cfg_dctcp() -> TcpConfig {
    TcpConfig { cc: CcChoice::Dctcp, ..cfg() }
}

fn ce(mut seg: Segment) -> Segment {
    seg.flags |= flags::ECT | flags::CE;
    seg
}

/// RFC 8257 §3.1/§3.3: every data segment of a DCTCP sender is ECN-capable;
/// a NewReno sender's is not.
#[test]
fn rfc8257_data_is_ect() {
    let mut ep = with_flight(&cfg_dctcp(), seg(1), 0);
    assert!(expect_data(&mut ep, SimTime::ZERO, 0, MSS).has(flags::ECT));
    let mut plain = with_flight(&cfg(), seg(1), 0);
    assert!(!expect_data(&mut plain, SimTime::ZERO, 0, MSS).has(flags::ECT));
}

/// RFC 8257 §3.2: ACKs carry ECE exactly while the data they acknowledge
/// was CE-marked; with delayed ACKs a change of CE state first sends the
/// held-back ACK with the old state.
#[test]
fn rfc8257_3_2_receiver_echoes_ce_exactly_and_flushes_on_change() {
    let mut ep =
        Endpoint::new(&TcpConfig { delayed_ack: DelayedAckConfig::default(), ..cfg_dctcp() }, SimTime::ZERO, None);
    recv(&mut ep, us(10), data(seg(0), MSS));
    expect_nothing(&mut ep, us(10)); // one segment: the ACK is delayed
    recv(&mut ep, us(20), ce(data(seg(1), MSS)));
    let held = expect_tx(&mut ep, us(20));
    assert_eq!((held.ack, held.has(flags::ECE)), (seg(1), false), "the delayed ACK of the unmarked segment");
    let now = expect_tx(&mut ep, us(20));
    assert_eq!((now.ack, now.has(flags::ECE)), (seg(2), true), "two segments: ACK at once, echoing CE");
    recv(&mut ep, us(30), data(seg(2), MSS));
    recv(&mut ep, us(40), data(seg(3), MSS));
    let clear = expect_tx(&mut ep, us(40));
    assert_eq!((clear.ack, clear.has(flags::ECE)), (seg(4), false));
}

/// RFC 8257 §3.3: α starts at 1, so the first ECE halves cwnd (and sets
/// ssthresh); a second ECE in the same window does not cut again.
#[test]
fn rfc8257_3_3_first_echo_halves_the_window_once_per_window() {
    let mut ep = with_flight(&cfg_dctcp(), seg(20), 10);
    let mut a = ack(seg(1));
    a.flags |= flags::ECE;
    recv(&mut ep, us(100), a);
    assert_eq!((ep.cwnd(), ep.ssthresh()), (seg(5), seg(5)));
    let mut b = ack(seg(2));
    b.flags |= flags::ECE;
    recv(&mut ep, us(110), b);
    assert!(ep.cwnd() >= seg(5), "no second cut within the window");
    assert_eq!(ep.ssthresh(), seg(5));
}
