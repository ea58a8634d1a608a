//! Endpoint trace tests: scripted segment sequences, no network.
//!
//! Helpers: segment templates ([`ack`], [`data`]), one
//! factory per connection state ([`with_flight`]), and `#[track_caller]`
//! assertions ([`recv`], [`expect_data`], [`expect_ack`], [`expect_nothing`]).
//! Stream offsets are in units of the test MSS (1000 bytes) wherever possible.

mod ack_modes;
mod ack_policy;
mod bbr;
mod bottleneck;
mod cubic;
mod dctcp;
mod exchange;
mod gip;
mod idle;
mod loss_recovery;
mod options;
mod pacing;
mod rack_tlp;
mod rcv_window;
mod rude;
mod sack_recovery;
mod spurious_timeouts;
mod timeout_forensics;
mod timers;
mod variants;

use super::*;
use crate::time::Bytes;

/// Test MSS: round numbers make traces readable.
pub(super) const MSS: u32 = 1000;
/// Window every test segment advertises.
pub(super) const WND: u32 = 1 << 20;

/// Microseconds since the start.
pub(super) fn us(v: u64) -> SimTime {
    SimTime(v * 1_000_000)
}
/// Milliseconds since the start.
pub(super) fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000_000)
}

/// MSS 1000, IW 10, RTO_min 10 ms, exact clock, delayed ACK off; NewReno,
/// slow start, restart after idle, no limited transmit, no SACK, no
/// timestamps, no spurious-timeout detection (the defaults).
pub(super) fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        init_cwnd: 10,
        rcv_wnd: Bytes::new(WND as u64),
        dupack_threshold: 3,
        rto: RtoConfig { min: SimDuration::from_millis(10), ..RtoConfig::default() },
        delayed_ack: DelayedAckConfig::off(),
        recovery: LossRecovery::NewReno,
        cubic: CubicConfig::default(),
        limited_transmit: false,
        slow_start: true,
        restart_after_idle: true,
        ..TcpConfig::default()
    }
}

/// `cfg()` with the Linux 40 ms delayed ACK.
pub(super) fn cfg_delack() -> TcpConfig {
    TcpConfig { delayed_ack: DelayedAckConfig::default(), ..cfg() }
}

/// A pure ACK from the peer acknowledging `n` bytes.
pub(super) fn ack(n: u64) -> Segment {
    Segment::new(0, n, 0, WND, flags::ACK)
}

/// A data segment from the peer (which has received nothing from us).
pub(super) fn data(seq: u64, len: u32) -> Segment {
    Segment::new(seq, 0, len, WND, flags::ACK)
}

/// An endpoint (handshake RTT 100 µs) whose application wrote `written`
/// bytes and which sent `segments` full segments at t = 0.
pub(super) fn with_flight(cfg: &TcpConfig, written: u64, segments: u64) -> Endpoint {
    let mut ep = Endpoint::new(cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(written);
    for i in 0..segments {
        expect_data(&mut ep, SimTime::ZERO, i * MSS as u64, MSS);
    }
    ep
}

/// Deliver `seg` to `ep` at `now`.
#[track_caller]
pub(super) fn recv(ep: &mut Endpoint, now: SimTime, seg: Segment) {
    ep.on_segment(now, &seg);
}

/// The next segment `ep` sends at `now`; panics if none.
#[track_caller]
pub(super) fn expect_tx(ep: &mut Endpoint, now: SimTime) -> Segment {
    match ep.poll_transmit(now) {
        Some(s) => s,
        None => panic!("expected a segment at {now}, got nothing"),
    }
}

/// The next segment must carry `[seq, seq + len)`.
#[track_caller]
pub(super) fn expect_data(ep: &mut Endpoint, now: SimTime, seq: u64, len: u32) -> Segment {
    let s = expect_tx(ep, now);
    assert_eq!((s.seq, s.len), (seq, len), "expected data [{seq}, +{len}), got {s:?}");
    assert_eq!(s.ack, ep.delivered(), "every segment carries ack = RCV.NXT");
    assert!(s.has(flags::ACK));
    s
}

/// The next segment must be a pure ACK of `n`.
#[track_caller]
pub(super) fn expect_ack(ep: &mut Endpoint, now: SimTime, n: u64) {
    let s = expect_tx(ep, now);
    assert_eq!((s.len, s.ack), (0, n), "expected a pure ACK of {n}, got {s:?}");
    assert_eq!(s.wnd, WND);
}

/// `ep` must have nothing to send at `now`.
#[track_caller]
pub(super) fn expect_nothing(ep: &mut Endpoint, now: SimTime) {
    if let Some(s) = ep.poll_transmit(now) {
        panic!("expected nothing at {now}, got {s:?}");
    }
}

/// Fire the retransmission timer at its deadline; it must report a timeout,
/// classified from the state at its deadline and not (yet) judged spurious.
#[track_caller]
pub(super) fn expire(ep: &mut Endpoint) -> forensics::Timeout {
    let deadline = ep.poll_timeout().expect("the retransmission timer is armed");
    let rto = ep.rto();
    let t = ep.on_timer(deadline).expect("a timeout with data outstanding");
    assert_eq!((t.snapshot.time, t.snapshot.rto), (deadline, rto));
    assert!(!t.spurious, "a timeout is judged spurious only by later ACKs");
    t
}

/// A pure ACK of `n` carrying the SACK `blocks` (in test MSS units: `(2, 4)` is
/// segments 2 and 3).
pub(super) fn sack_ack(n: u64, blocks: &[(u64, u64)]) -> Segment {
    let mut s = ack(seg(n));
    let abs: Vec<(u64, u64)> = blocks.iter().map(|&(a, b)| (seg(a), seg(b))).collect();
    s.set_sack(&abs);
    s
}

/// `cfg()` with SACK-based recovery (`recovery = "sack"`).
pub(super) fn cfg_sack() -> TcpConfig {
    TcpConfig { recovery: LossRecovery::Sack, ..cfg() }
}

/// Everything `ep` sends at `now`, as `(seq, len)` pairs.
pub(super) fn drain(ep: &mut Endpoint, now: SimTime) -> Vec<(u64, u32)> {
    std::iter::from_fn(|| ep.poll_transmit(now)).map(|s| (s.seq, s.len)).collect()
}

/// Offset of segment `i` (in test MSS units).
pub(super) const fn seg(i: u64) -> u64 {
    i * MSS as u64
}
