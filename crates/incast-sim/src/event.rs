//! The event queue: a min-heap keyed on `(time, sequence number)`.
//!
//! **Models:** discrete-event scheduling with integer picosecond time.
//! Events at the same instant run in the order they were scheduled (FIFO),
//! which makes every run a pure function of its inputs.
//! **Deliberately different:** no cancellation; owners of a rescheduled
//! deadline (TCP timers) ignore stale wake-ups instead, which is cheaper
//! than removing entries from the heap.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
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
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, earliest first; ties in scheduling order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }
    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        for (t, e) in [(30, 'c'), (10, 'a'), (20, 'b')] {
            q.push(SimTime(t), e);
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    /// Engine invariant: events at equal times run in scheduling order.
    #[test]
    fn equal_times_run_in_scheduling_order() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.push(SimTime(u64::from(i % 3)), i);
        }
        let mut last = (SimTime(0), None::<u32>);
        while let Some((t, i)) = q.pop() {
            if t == last.0 {
                if let Some(prev) = last.1 {
                    assert!(i > prev, "tie at {t:?} broke out of order: {prev} then {i}");
                }
            }
            last = (t, Some(i));
        }
    }
}
