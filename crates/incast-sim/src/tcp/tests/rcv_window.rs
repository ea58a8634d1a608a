//! The advertised window of a Linux receiver (`tcp::rcv_window`) as its ACKs
//! carry it, and the duplicate ACKs a sender still counts while it grows.

use super::*;
use crate::tcp::rcv_window::RcvWindowRule;

/// `cfg()` with Linux's receive window: 64 KiB from the initial buffer.
fn cfg_linux_wnd() -> TcpConfig {
    TcpConfig { rcv_window: RcvWindowRule::Linux, rcv_wnd: Bytes::kib(64), ..cfg() }
}

/// A receiver (handshake RTT 100 µs) of `c`.
fn receiver(c: &TcpConfig) -> Endpoint {
    Endpoint::new(c, SimTime::ZERO, Some(SimDuration::from_micros(100)))
}

/// The window of the ACK `ep` owes at `now`.
#[track_caller]
fn acked_window(ep: &mut Endpoint, now: SimTime) -> u32 {
    let s = expect_tx(ep, now);
    assert_eq!(s.len, 0, "a pure ACK");
    s.wnd
}

/// tcp_init_buffer_space and tcp_rcv_space_adjust: the first ACKs offer the
/// initial buffer's window less one segment (rounded up to the scale's 1 KiB),
/// however fast data comes within the first round trip; once a round trip has
/// brought more than ten segments, autotuning raises the clamp and each
/// in-order segment after (tcp_grow_window) adds two segments to the window.
#[test]
fn linux_receiver_offers_the_initial_buffer_then_grows_once_a_round_trip_brought_more() {
    let mut ep = receiver(&cfg_linux_wnd());
    let initial = (64 * 1024 - MSS).div_ceil(1024) * 1024;
    for i in 0..60 {
        recv(&mut ep, us(i), data(seg(i), MSS));
        assert_eq!(acked_window(&mut ep, us(i)), initial, "segment {i}, within the first RTT");
    }
    // The read a round trip on raises the clamp; the window grows from the next segment.
    recv(&mut ep, us(100), data(seg(60), MSS));
    assert_eq!(acked_window(&mut ep, us(100)), initial);
    let mut last = initial;
    for i in 61..70 {
        recv(&mut ep, us(40 + i), data(seg(i), MSS));
        let w = acked_window(&mut ep, us(40 + i));
        assert!(w > last && w <= last + 3 * 1024, "segment {i}: {last} -> {w}");
        last = w;
    }
}

/// The same arrivals with `rcv_window = "fixed"` advertise `rcv_wnd` throughout.
#[test]
fn fixed_receiver_keeps_its_window() {
    let mut ep = receiver(&TcpConfig { rcv_window: RcvWindowRule::Fixed, ..cfg_linux_wnd() });
    for i in 0..110 {
        recv(&mut ep, us(i), data(seg(i), MSS));
        assert_eq!(acked_window(&mut ep, us(i)), 64 * 1024);
    }
}

/// tcp_data_queue_ofo: "For non sack flows, do not grow window to force
/// DUPACK and trigger fast retransmit": behind a hole, a non-SACK receiver's
/// ACKs repeat the window; a SACK receiver's grow it.
#[test]
fn out_of_order_data_grows_the_window_only_with_sack() {
    for (sack, grows) in [(false, false), (true, true)] {
        let c =
            TcpConfig { recovery: if sack { LossRecovery::Sack } else { LossRecovery::NewReno }, ..cfg_linux_wnd() };
        let mut ep = receiver(&c);
        for i in 0..30 {
            recv(&mut ep, us(i), data(seg(i), MSS));
            acked_window(&mut ep, us(i));
        }
        // A round trip later, the next read raises the clamp.
        recv(&mut ep, us(150), data(seg(30), MSS));
        let before = acked_window(&mut ep, us(150));
        for i in 32..36 {
            recv(&mut ep, us(150 + i), data(seg(i), MSS)); // segment 31 lost
            let w = acked_window(&mut ep, us(150 + i));
            assert_eq!(w > before, grows, "sack {sack}: {before} -> {w}");
        }
    }
}

/// RFC 6675 (2): an ACK that SACKs new data is a duplicate ACK whatever window
/// it carries, so a receiver growing its window out of order still triggers
/// fast retransmit on the third.
#[test]
fn rfc6675_sacking_acks_with_growing_windows_are_duplicates() {
    let mut ep = with_flight(&cfg_sack(), seg(20), 10);
    for (k, wnd) in [(2u64, WND + 2000), (3, WND + 4000), (4, WND + 6000)] {
        let mut a = sack_ack(0, &[(1, k)]);
        a.wnd = wnd;
        recv(&mut ep, us(100 + k), a);
        drain(&mut ep, us(100 + k));
    }
    assert!(ep.in_recovery());
    assert_eq!(ep.stats().fast_retransmits, 1);
}
