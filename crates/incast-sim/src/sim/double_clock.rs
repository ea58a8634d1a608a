//! ns-2's clock beside the engine's: each frame's arrival time in
//! double-precision seconds, to order arrivals that exact time makes
//! simultaneous as ns-2 orders them (`link.arrival_order = "ns2"`).
//!
//! **Models:** ns-2 keeps time as a `double` of seconds. A link that starts
//! a frame at `clock_` schedules the frame's end at `clock_ + txt` and its
//! arrival at `clock_ + (txt + delay_)` (`LinkDelay::recv`,
//! `Scheduler::schedule`); a frame that waited starts at the end its
//! predecessor scheduled. Two arrivals equal in exact time are sums taken
//! along different paths (one through the ACK that released it, one through
//! the frame before it on its own link), so their last bits often differ,
//! and ns-2's scheduler runs the smaller first. On a
//! symmetric star, where the slow-start pairs of one server reach the full
//! port at the same instant as the next server's, that decides which
//! segments are lost: ns-2's traces show both orders within a few
//! microseconds (docs/validation/ns2.md). Here every frame gets the same
//! sum: its start (the instant of the event that sent it onto an idle link,
//! or the previous frame's end) plus transmission plus the rest of the hop,
//! each converted from picoseconds; an arrival's event starts the chain of
//! what its host or switch sends, and any other event starts from its
//! picosecond time.
//! A frame's departure from a queue is ns-2's `Queue::resume`, an event at
//! the frame's end (`clock_ + txt`). Where an arrival and the end of the
//! frame in service at its port fall on the same picosecond, ns-2 runs the
//! arrival first when its double time is not later than that end (at equal
//! doubles, the arrival was scheduled first: its hop began a propagation
//! delay before the frame started), so the frame ending counts against the
//! arriving one (`DropTailQueue::admit_ahead_of_departure`).
//! **Deliberately different:** the sums follow the engine's hops (the
//! hosts' share of the round trip is charged where they receive), not ns-2's
//! link delays, and its timers and requests restart from exact time, so the
//! last bits are ns-2's kind of rounding, not its values. It stands for ns-2
//! runs whose links do not mirror the engine's (the papers' own); the
//! `ns2` preset takes `wire` order, which is ns-2's once its packets and
//! links mirror the engine's wire, as `incast validate --against ns2` makes
//! them (docs/validation/ns2.md).

use crate::net::{Link, PktId};
use crate::time::SimTime;
use std::collections::VecDeque;

/// The double-precision clock of one run.
pub(super) struct DoubleClock {
    /// The current event's time.
    now: f64,
    /// Each packet's arrival at its next node, by pool slot.
    arrival: Vec<f64>,
    /// Each port's frames that had not ended at its last offer, the latest
    /// last: end in exact time and in this clock.
    ends: Vec<VecDeque<(SimTime, f64)>>,
}

/// `ps` picoseconds in seconds, rounded to a double.
fn seconds(ps: u64) -> f64 {
    ps as f64 * 1e-12
}

impl DoubleClock {
    /// A clock for `ports` switch and host ports.
    pub(super) fn new(ports: usize) -> Self {
        DoubleClock { now: 0.0, arrival: Vec::new(), ends: vec![VecDeque::new(); ports] }
    }

    /// An event at `t` runs; `arrived` when it is that packet's arrival.
    #[inline]
    pub(super) fn at(&mut self, t: SimTime, arrived: Option<PktId>) {
        self.now = match arrived {
            Some(pkt) => self.arrival[pkt.index()],
            None => seconds(t.0),
        };
    }

    /// `link`, of port `port`, took `pkt`, which reaches its next node at
    /// `at`: the packet's arrival in this clock, as the rank of that arrival
    /// among its instant's, in units in the last place of `at` in seconds.
    #[inline]
    pub(super) fn sent(&mut self, port: usize, link: &Link, pkt: PktId, at: SimTime) -> i32 {
        // A frame that began a run started at the sending event; one that
        // waited, at the end of the frame before it, which had not ended
        // when this one was offered (`ahead_of_departure` keeps it).
        let start = match self.ends[port].back() {
            Some(&(_, end)) if link.run_start() != link.last_start() => end,
            _ => self.now,
        };
        let txt = seconds(link.busy_until().since(link.last_start()).0);
        let rest = seconds(at.since(link.busy_until()).0);
        self.ends[port].push_back((link.busy_until(), start + txt));
        let arrival = start + (txt + rest);
        let i = pkt.index();
        if i >= self.arrival.len() {
            self.arrival.resize(i + 1, 0.0);
        }
        self.arrival[i] = arrival;
        let rank = arrival.to_bits() as i64 - seconds(at.0).to_bits() as i64;
        rank.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }

    /// A frame offered to port `port` at `now`, during the current event:
    /// true when a frame in service there ends at `now` too, but not before
    /// the current event in this clock (ns-2 takes the offer first).
    #[inline]
    pub(super) fn ahead_of_departure(&mut self, port: usize, now: SimTime) -> bool {
        let ends = &mut self.ends[port];
        while ends.front().is_some_and(|&(done, _)| done < now) {
            ends.pop_front();
        }
        ends.front().is_some_and(|&(done, end)| done == now && self.now <= end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{BitRate, SimDuration};

    fn pkt(i: u32) -> PktId {
        PktId::at_index(i)
    }

    /// Two frames that arrive at the same picosecond, one the second of a
    /// pair that waited behind the first on its link, the other sent onto
    /// an idle link by an event one frame time later: in exact time they tie,
    /// in ns-2's double-precision sums they need not, and the rank says which
    /// is earlier in those sums, as ns-2's scheduler would see it.
    #[test]
    fn a_waiting_frame_and_a_fresh_one_tie_only_in_exact_time() {
        let (rate, delay) = (BitRate::gbps(1), SimDuration::from_micros(25));
        let mut clock = DoubleClock::new(2);
        let (mut a, mut b) = (Link::new(rate, delay), Link::new(rate, delay));
        // Server A answers an ACK that reached it at 0.0123456789 s with two frames.
        let ack_a = SimTime(12_345_678_900);
        clock.at(ack_a, None);
        let first = a.transmit(ack_a, 1078);
        clock.sent(0, &a, pkt(0), a.arrival(first));
        let second = a.transmit(ack_a, 1078);
        let rank_a = clock.sent(0, &a, pkt(1), a.arrival(second));
        // Server B's ACK comes one frame time later and B sends one frame.
        let ack_b = SimTime(ack_a.0 + 8_624_000);
        clock.at(ack_b, None);
        let fresh = b.transmit(ack_b, 1078);
        let rank_b = clock.sent(1, &b, pkt(2), b.arrival(fresh));
        assert_eq!(a.arrival(second), b.arrival(fresh), "the two arrivals tie in exact time");
        let (wait, new) = (clock.arrival[1], clock.arrival[2]);
        assert_eq!(wait, (seconds(ack_a.0) + 8.624e-6) + (8.624e-6 + 25e-6));
        assert_eq!(new, seconds(ack_b.0) + (8.624e-6 + 25e-6));
        assert_eq!(rank_a.cmp(&rank_b), wait.partial_cmp(&new).unwrap());
        assert_ne!(wait, new, "these two sums round apart");
    }

    /// A switch port sends a frame that ends one frame time later; a frame
    /// reaching that port at that picosecond goes ahead of the departure
    /// when its double time is not later than the frame's end (equal sums:
    /// ns-2 scheduled the arrival first), and not when it is later, or when
    /// nothing ends then.
    #[test]
    fn an_arrival_at_a_frames_end_goes_first_unless_later_in_double_time() {
        let rate = BitRate::gbps(1);
        let mut clock = DoubleClock::new(1);
        let mut port = Link::new(rate, SimDuration::from_micros(25));
        let start = SimTime(1_000_000_000);
        clock.at(start, None);
        let done = port.transmit(start, 1078);
        clock.sent(0, &port, pkt(0), port.arrival(done));
        let end = clock.ends[0][0].1;
        assert_eq!(end, seconds(start.0) + seconds(done.since(start).0));
        clock.arrival.resize(3, 0.0);
        clock.arrival[1] = end;
        clock.at(done, Some(pkt(1)));
        assert!(clock.ahead_of_departure(0, done), "equal doubles: the arrival was scheduled first");
        clock.arrival[2] = f64::from_bits(end.to_bits() + 1);
        clock.at(done, Some(pkt(2)));
        assert!(!clock.ahead_of_departure(0, done), "one ulp later: the departure goes first");
        clock.at(SimTime(done.0 + 1), Some(pkt(1)));
        assert!(!clock.ahead_of_departure(0, SimTime(done.0 + 1)), "the frame ended a picosecond before");
        assert!(clock.ends[0].is_empty(), "frames that ended are forgotten");
    }

    /// An arrival's event starts the chain of what is sent from it: a frame
    /// a switch forwards onto an idle link starts at the arrival's double
    /// time, not at its picosecond time.
    #[test]
    fn a_forwarded_frame_starts_from_its_arrival_in_double_time() {
        let mut clock = DoubleClock::new(2);
        let mut host = Link::new(BitRate::gbps(1), SimDuration::from_nanos(50));
        let t = SimTime(3_000_000_001);
        clock.at(t, None);
        let done = host.transmit(t, 84);
        let at = host.arrival(done);
        clock.sent(0, &host, pkt(0), at);
        clock.at(at, Some(pkt(0)));
        assert_eq!(clock.now, clock.arrival[0]);
        assert_eq!(clock.now, seconds(t.0) + (seconds(672_000) + 50e-9));
    }
}
