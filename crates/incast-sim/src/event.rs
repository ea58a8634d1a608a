//! The event queue: earliest `(time, sequence number)` first.
//!
//! **Models:** discrete-event scheduling with integer picosecond time.
//! Every event gets a sequence number when it is scheduled, and events at the
//! same instant run in that order (FIFO), which makes every run a pure
//! function of its inputs.
//! **Deliberately different:** most events are packet arrivals at the far end
//! of a link, and a link delivers in the order it transmits. Such events are
//! scheduled on a *channel* (one per link), a FIFO whose times never
//! decrease; only the head of each channel sits in the heap. The order of
//! events is exactly that of one big heap — every event still carries its
//! own `(time, seq)` — but the heap holds one entry per busy link instead of
//! one per packet in flight. There is no cancellation: owners of a moved
//! deadline (TCP timers) ignore stale wake-ups instead.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy)]
enum Slot<E> {
    /// The event itself.
    Event(E),
    /// The head of this channel.
    Channel(u32),
}

struct Entry<E> {
    time: SimTime,
    seq: u64,
    slot: Slot<E>,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, earliest first; ties in scheduling order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    channels: Vec<VecDeque<(SimTime, u64, E)>>,
    next_seq: u64,
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue with `channels` FIFO channels.
    pub fn new(channels: usize) -> Self {
        EventQueue { heap: BinaryHeap::new(), channels: (0..channels).map(|_| VecDeque::new()).collect(), next_seq: 0 }
    }

    fn seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.seq();
        self.heap.push(Entry { time, seq, slot: Slot::Event(event) });
    }

    /// Schedule `event` at `time` on FIFO `channel`; `time` must not be
    /// earlier than that of the channel's last event.
    #[inline]
    pub fn push_fifo(&mut self, channel: u32, time: SimTime, event: E) {
        let seq = self.seq();
        let ch = &mut self.channels[channel as usize];
        debug_assert!(ch.back().is_none_or(|&(t, _, _)| t <= time), "channel {channel} went back in time");
        if ch.is_empty() {
            self.heap.push(Entry { time, seq, slot: Slot::Channel(channel) });
        }
        ch.push_back((time, seq, event));
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let mut top = self.heap.peek_mut()?;
        let time = top.time;
        match top.slot {
            Slot::Event(e) => {
                std::collections::binary_heap::PeekMut::pop(top);
                Some((time, e))
            }
            Slot::Channel(c) => {
                let ch = &mut self.channels[c as usize];
                let (_, _, e) = ch.pop_front().expect("a channel in the heap is not empty");
                match ch.front() {
                    // Replace the head in place: one sift-down instead of a pop and a push.
                    Some(&(t, s, _)) => {
                        top.time = t;
                        top.seq = s;
                    }
                    None => {
                        std::collections::binary_heap::PeekMut::pop(top);
                    }
                }
                Some((time, e))
            }
        }
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.iter().filter(|e| matches!(e.slot, Slot::Event(_))).count()
            + self.channels.iter().map(VecDeque::len).sum::<usize>()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain<E: Copy>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new(0);
        for (t, e) in [(30, 'c'), (10, 'a'), (20, 'b')] {
            q.push(SimTime(t), e);
        }
        assert_eq!(drain(&mut q), vec![(10, 'a'), (20, 'b'), (30, 'c')]);
    }

    /// Engine invariant: events at equal times run in scheduling order.
    #[test]
    fn equal_times_run_in_scheduling_order() {
        let mut q = EventQueue::new(0);
        for i in 0..1000u32 {
            q.push(SimTime(u64::from(i % 3)), i);
        }
        let out = drain(&mut q);
        for w in out.windows(2) {
            assert!(w[0].0 < w[1].0 || w[0].1 < w[1].1, "tie broke out of order: {w:?}");
        }
    }

    /// Channels interleave with plain events exactly as one heap would order
    /// them, ties included.
    #[test]
    fn channels_keep_the_global_order() {
        let mut q = EventQueue::new(2);
        let mut expected = Vec::new();
        // (kind, time): kind 0/1 = channel, 2 = plain event; times nondecreasing per channel.
        let script = [(0, 5), (2, 5), (1, 3), (0, 5), (2, 1), (1, 9), (0, 7), (2, 7), (1, 9)];
        for (i, &(kind, t)) in script.iter().enumerate() {
            match kind {
                2 => q.push(SimTime(t), i),
                c => q.push_fifo(c, SimTime(t), i),
            }
            expected.push((t, i));
        }
        expected.sort(); // by time, then by scheduling order (= index)
        assert_eq!(drain(&mut q), expected);
        assert_eq!(q.len(), 0);
    }
}
