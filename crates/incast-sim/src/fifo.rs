//! A first-in, first-out sequence for the hot per-packet book-keeping: a
//! port's frames in its buffer (`net::queue`) and a sender's segments in
//! flight (`tcp::sender`).
//!
//! Items are pushed on the end of a vector and read from a head that moves
//! forward; the vector is emptied whenever the head catches up with its end
//! and compacted when it would otherwise grow with at least half of it
//! consumed: it grows only when more than half of it is queued, so its
//! room stays within about four times the most items queued at once.
//! Taking and putting an item costs a comparison or two, fewer than
//! `VecDeque`'s wrap-around arithmetic on the same operations.

use std::ops::{Index, IndexMut};

/// A FIFO of `T`: push at the back, take from the front, index from the front.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    items: Vec<T>,
    /// Items before it have been taken.
    head: usize,
}

impl<T: Copy> Default for Fifo<T> {
    fn default() -> Self {
        Fifo { items: Vec::new(), head: 0 }
    }
}

impl<T: Copy> Fifo<T> {
    /// Items queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len() - self.head
    }

    /// The oldest item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.items.get(self.head)
    }

    /// Drop the oldest item, if any.
    #[inline]
    pub fn pop_front(&mut self) {
        self.head += 1;
        if self.head >= self.items.len() {
            self.items.clear();
            self.head = 0;
        }
    }

    /// Queue `item` last.
    #[inline]
    pub fn push_back(&mut self, item: T) {
        if self.items.len() == self.items.capacity() && self.head * 2 >= self.items.len() {
            self.compact();
        }
        self.items.push(item);
    }

    /// The newest item.
    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.as_slice().last()
    }

    /// Drop the newest item, if any.
    pub fn pop_back(&mut self) {
        if self.len() > 0 {
            self.items.pop();
        }
        if self.head >= self.items.len() {
            self.items.clear();
            self.head = 0;
        }
    }

    /// Move the queued items to the start, freeing the room of those taken.
    #[cold]
    fn compact(&mut self) {
        self.items.drain(..self.head);
        self.head = 0;
    }

    /// The queued items as a slice, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.items[self.head..]
    }

    /// The queued items as a slice, oldest first, to change.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items[self.head..]
    }

    /// The queued items, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// The queued items, oldest first, to change.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.as_mut_slice().iter_mut()
    }
}

impl<T> Index<usize> for Fifo<T> {
    type Output = T;
    /// The `i`-th oldest item.
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.items[self.head + i]
    }
}

impl<T> IndexMut<usize> for Fifo<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[self.head + i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Against `VecDeque`: the same items in the same order through runs of
    /// pushes and pops that empty it, compact it and let it grow.
    #[test]
    fn behaves_as_a_vecdeque() {
        let (mut fifo, mut deque) = (Fifo::default(), VecDeque::new());
        let mut most = 0;
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..20_000u64 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if rng % 5 < if step / 1_000 % 2 == 0 { 3 } else { 2 } {
                fifo.push_back(step);
                deque.push_back(step);
                most = most.max(deque.len());
            } else if !deque.is_empty() {
                fifo.pop_front();
                deque.pop_front();
            }
            assert_eq!(fifo.front(), deque.front(), "step {step}");
            assert_eq!(fifo.len(), deque.len());
            if !deque.is_empty() {
                let i = (rng % deque.len() as u64) as usize;
                assert_eq!(fifo[i], deque[i]);
            }
        }
        assert!(fifo.iter().eq(deque.iter()));
        let room = fifo.items.capacity();
        assert!(room <= 4 * most.max(4), "room for {room} items, at most {most} queued");
    }
}
