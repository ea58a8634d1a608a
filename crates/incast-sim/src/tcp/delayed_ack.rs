//! Receiver ACK policy: delayed ACK (RFC 1122 4.2.3.2, RFC 5681 4.2).
//!
//! **Models:** ACK every data segment at once when delayed ACK is off;
//! otherwise ACK at once for out-of-order, duplicate and gap-filling segments
//! and whenever more than one MSS is received but unacknowledged, and hold a
//! lone in-order segment's ACK until the delayed-ACK timer (armed at the first
//! unacknowledged segment) fires or outgoing data piggybacks it.
//! **Deliberately different:** the "every second full-sized segment" rule is
//! Linux's byte test `rcv_nxt - rcv_wup > rcv_mss` (`__tcp_ack_snd_check`),
//! with `rcv_mss` = the configured MSS; the timeout is a fixed value (FAST08
//! §4.2 and CMU09 §5 study it as one).
//! **Not modelled:** Linux quick-ACK mode (the first ACKs of a connection and
//! after a timeout are immediate), the adaptive `ato` estimator, the pingpong
//! (interactive) heuristic.

use super::clock::TcpClock;
use super::receiver::Arrival;
use crate::time::{SimDuration, SimTime};

/// When the receiver owes an ACK and when its delayed-ACK timer fires.
#[derive(Clone, Debug)]
pub struct DelayedAck {
    /// `None` = delayed ACK off.
    timeout: Option<SimDuration>,
    /// Receiver MSS used by the "more than one segment unacknowledged" test.
    rcv_mss: u64,
    /// An ACK must go out at the next transmit opportunity.
    ack_now: bool,
    /// Delayed-ACK timer deadline, when armed.
    deadline: Option<SimTime>,
    /// RCV.NXT carried by the last ACK sent (Linux `rcv_wup`).
    rcv_wup: u64,
}

impl DelayedAck {
    /// A policy with delayed-ACK `timeout` (`None` = off) and receiver MSS `mss`.
    pub fn new(timeout: Option<SimDuration>, mss: u32) -> Self {
        DelayedAck { timeout, rcv_mss: mss as u64, ack_now: false, deadline: None, rcv_wup: 0 }
    }

    /// A data segment arrived; `rcv_nxt` is RCV.NXT after it was accepted.
    pub fn on_data(&mut self, now: SimTime, clock: &TcpClock, arrival: Arrival, rcv_nxt: u64) {
        let Some(timeout) = self.timeout else {
            // Delayed ACK off (CMU09 §5): every data segment is ACKed at once.
            self.ack_now = true;
            return;
        };
        let immediate = match arrival {
            // RFC 5681 (4.2): "the receiver SHOULD send an immediate duplicate ACK
            // when it receives a data segment above a gap in the sequence space."
            Arrival::OutOfOrder => true,
            // RFC 793 (3.9): "If an incoming segment is not acceptable, an
            // acknowledgment should be sent in reply"
            Arrival::Duplicate => true,
            // RFC 5681 (4.2): "the receiver SHOULD send an immediate ACK when it
            // receives a data segment that fills in all or part of a gap"
            Arrival::FillsGap => true,
            // RFC 1122 (4.2.3.2): "in a stream of full-sized segments there
            // SHOULD be an ACK for at least every second segment."
            // DEVIATION (Linux): `__tcp_ack_snd_check` ACKs once more than one
            // receiver MSS is unacknowledged, `rcv_nxt - rcv_wup > rcv_mss`.
            Arrival::InOrder => rcv_nxt - self.rcv_wup > self.rcv_mss,
        };
        if immediate {
            self.ack_now = true;
        } else if self.deadline.is_none() {
            // RFC 5681 (4.2): "an ACK ... MUST be generated within 500 ms of the
            // arrival of the first unacknowledged packet." — `timeout` after it.
            self.deadline = Some(clock.deadline(now, timeout));
        }
    }

    /// An ACK went out (pure or piggybacked on data) carrying `rcv_nxt`.
    #[inline]
    pub fn on_ack_sent(&mut self, rcv_nxt: u64) {
        self.ack_now = false;
        self.deadline = None;
        self.rcv_wup = rcv_nxt;
    }

    /// Fire the delayed-ACK timer if due; returns true when it fired.
    pub fn on_timer(&mut self, now: SimTime) -> bool {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                self.ack_now = true;
                true
            }
            _ => false,
        }
    }

    /// True when an ACK is owed right now.
    #[inline]
    pub fn should_ack(&self) -> bool {
        self.ack_now
    }

    /// The delayed-ACK deadline, when armed.
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::receiver::Receiver;

    const MSS: u32 = 1460;
    const MS: u64 = 1_000_000_000;

    fn delayed() -> (DelayedAck, Receiver, TcpClock) {
        let d = DelayedAck::new(Some(SimDuration::from_millis(40)), MSS);
        (d, Receiver::new(), TcpClock::new(SimDuration::ZERO))
    }

    fn arrive(d: &mut DelayedAck, r: &mut Receiver, c: &TcpClock, now: u64, seq: u64, len: u32) {
        let a = r.on_data(seq, len);
        d.on_data(SimTime(now), c, a, r.rcv_nxt());
    }

    /// RFC 5681 (4.2): a lone in-order segment waits for the delayed-ACK timer.
    #[test]
    fn rfc5681_4_2_lone_segment_waits_for_timer() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, MS, 0, MSS);
        assert!(!d.should_ack());
        assert_eq!(d.poll_timeout(), Some(SimTime(41 * MS)));
        assert!(!d.on_timer(SimTime(41 * MS - 1)));
        assert!(d.on_timer(SimTime(41 * MS)));
        assert!(d.should_ack());
        assert_eq!(d.poll_timeout(), None);
    }

    /// RFC 1122 (4.2.3.2): the second full-sized segment is ACKed at once,
    /// and the timer stays armed from the first.
    #[test]
    fn rfc1122_4_2_3_2_second_full_segment_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        arrive(&mut d, &mut r, &c, 5 * MS, MSS as u64, MSS);
        assert!(d.should_ack());
        d.on_ack_sent(r.rcv_nxt());
        assert_eq!(d.poll_timeout(), None);
        // The count restarts from the ACKed point.
        arrive(&mut d, &mut r, &c, 6 * MS, 2 * MSS as u64, MSS);
        assert!(!d.should_ack());
        assert_eq!(d.poll_timeout(), Some(SimTime(46 * MS)));
    }

    /// RFC 1122 (4.2.3.2), DEVIATION (Linux): small segments are ACKed once more
    /// than one MSS of them is unacknowledged.
    #[test]
    fn rfc1122_4_2_3_2_small_segments_acked_after_one_mss() {
        let (mut d, mut r, c) = delayed();
        for i in 0..14 {
            arrive(&mut d, &mut r, &c, 0, i * 100, 100);
            assert!(!d.should_ack(), "{} bytes unacked", (i + 1) * 100);
        }
        arrive(&mut d, &mut r, &c, 0, 1400, 100);
        assert!(d.should_ack());
    }

    /// RFC 5681 (4.2): out-of-order and gap-filling segments are ACKed at once.
    #[test]
    fn rfc5681_4_2_out_of_order_and_gap_fill_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, MSS as u64, MSS);
        assert!(d.should_ack());
        d.on_ack_sent(r.rcv_nxt());
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        assert!(d.should_ack());
    }

    /// RFC 793 (3.9): a duplicate segment is ACKed at once.
    #[test]
    fn rfc793_3_9_duplicate_segment_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        d.on_ack_sent(r.rcv_nxt());
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        assert!(d.should_ack());
    }

    /// CMU09 §5: with delayed ACK off every data segment is ACKed at once.
    #[test]
    fn off_mode_acks_every_segment() {
        let mut d = DelayedAck::new(None, MSS);
        let mut r = Receiver::new();
        let c = TcpClock::new(SimDuration::ZERO);
        arrive(&mut d, &mut r, &c, 0, 0, 100);
        assert!(d.should_ack());
        assert_eq!(d.poll_timeout(), None);
    }

    /// On a jiffy clock the timer expires on a tick boundary.
    #[test]
    fn jiffy_clock_timer_on_tick_boundary() {
        let mut d = DelayedAck::new(Some(SimDuration::from_millis(40)), MSS);
        let mut r = Receiver::new();
        let c = TcpClock::new(SimDuration::from_millis(4));
        arrive(&mut d, &mut r, &c, 5 * MS, 0, 100);
        // tick(5 ms) = 1; 1 + 10 ticks = 44 ms.
        assert_eq!(d.poll_timeout(), Some(SimTime(44 * MS)));
    }
}
