//! Drop-tail output queue limited in bytes and/or packets.
//!
//! **Models:** a frame occupies the buffer from the instant it arrives until
//! its last bit has left on the link (the memory is freed when transmission
//! completes). A frame that would exceed either limit on arrival is dropped
//! (tail drop). Occupancy counts Ethernet frame bytes, not preamble or gap.
//! **Deliberately different:** departures are known at enqueue time (see
//! `net`), so departed frames are retired lazily on the next arrival.
//! **Not modelled:** shared-memory buffers, QoS partitions, AQM/ECN marking.

use crate::scenario::BufferLimit;
use crate::time::SimTime;
use std::collections::VecDeque;

/// Both limits of a queue; `u64::MAX` means unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimit {
    /// Most frame bytes held at once.
    pub bytes: u64,
    /// Most frames held at once.
    pub packets: u64,
}

impl QueueLimit {
    /// No limit at all (a host NIC queue; Linux throttles the socket instead
    /// of dropping locally).
    pub const UNLIMITED: QueueLimit = QueueLimit { bytes: u64::MAX, packets: u64::MAX };
}

impl From<BufferLimit> for QueueLimit {
    fn from(b: BufferLimit) -> Self {
        match b {
            BufferLimit::Bytes(n) => QueueLimit { bytes: n.0, packets: u64::MAX },
            BufferLimit::Packets(n) => QueueLimit { bytes: u64::MAX, packets: u64::from(n) },
        }
    }
}

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Frames accepted.
    pub enqueued: u64,
    /// Frames dropped on arrival.
    pub drops: u64,
    /// Largest occupancy seen, in frame bytes.
    pub peak_bytes: u64,
    /// Largest occupancy seen, in frames.
    pub peak_packets: u64,
}

/// A drop-tail FIFO in front of a link.
#[derive(Clone, Debug)]
pub struct DropTailQueue {
    limit: QueueLimit,
    /// `limit` is [`QueueLimit::UNLIMITED`]: nothing to track.
    unlimited: bool,
    /// (departure of the last bit, frame bytes) of every frame still held.
    held: VecDeque<(SimTime, u32)>,
    bytes: u64,
    stats: QueueStats,
}

impl DropTailQueue {
    /// An empty queue.
    pub fn new(limit: QueueLimit) -> Self {
        DropTailQueue {
            limit,
            unlimited: limit == QueueLimit::UNLIMITED,
            held: VecDeque::new(),
            bytes: 0,
            stats: QueueStats::default(),
        }
    }

    fn retire(&mut self, now: SimTime) {
        while let Some(&(done, b)) = self.held.front() {
            if done > now {
                break;
            }
            self.bytes -= u64::from(b);
            self.held.pop_front();
        }
    }

    /// Would a frame of `frame_bytes` arriving at `now` fit? Counts a drop if not.
    #[inline]
    pub fn admit(&mut self, now: SimTime, frame_bytes: u64) -> bool {
        if self.unlimited {
            return true;
        }
        self.retire(now);
        let fits = self.bytes + frame_bytes <= self.limit.bytes && (self.held.len() as u64) < self.limit.packets;
        if !fits {
            self.stats.drops += 1;
        }
        fits
    }

    /// Record an admitted frame that leaves the link at `done`.
    #[inline]
    pub fn push(&mut self, done: SimTime, frame_bytes: u64) {
        self.stats.enqueued += 1;
        if self.unlimited {
            return;
        }
        self.held.push_back((done, frame_bytes as u32));
        self.bytes += frame_bytes;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes);
        self.stats.peak_packets = self.stats.peak_packets.max(self.held.len() as u64);
    }

    /// Frame bytes held at the last arrival.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Counters.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Bytes;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// A frame is held until its last bit leaves, then its space is free again.
    #[test]
    fn frees_space_when_transmission_completes() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        assert!(q.admit(us(0), 1518));
        q.push(us(12), 1518);
        assert!(!q.admit(us(1), 1518), "two frames exceed 3000 bytes");
        assert!(q.admit(us(12), 1518), "the first frame has left");
        assert_eq!(q.stats().drops, 1);
    }

    #[test]
    fn packet_limit_counts_frames_not_bytes() {
        let mut q = DropTailQueue::new(BufferLimit::Packets(2).into());
        for i in 0..2 {
            assert!(q.admit(us(0), 64));
            q.push(us(10 + i), 64);
        }
        assert!(!q.admit(us(0), 64));
        assert_eq!(q.stats().peak_packets, 2);
        assert_eq!(q.stats().peak_bytes, 128);
    }

    #[test]
    fn unlimited_queue_never_drops() {
        let mut q = DropTailQueue::new(QueueLimit::UNLIMITED);
        for _ in 0..10_000 {
            assert!(q.admit(us(0), 1518));
            q.push(us(1), 1518);
        }
        assert_eq!(q.stats().drops, 0);
        assert_eq!(q.stats().enqueued, 10_000);
    }
}
