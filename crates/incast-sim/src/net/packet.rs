//! Packets in flight and the pool that stores them.
//!
//! Events refer to packets by index, so the hot path moves 4-byte ids, not
//! packets, and allocates nothing once the pool has grown to the peak number
//! of packets in flight.

use crate::tcp::Segment;

/// Which way a packet travels on its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the client to a server (requests and the client's ACKs).
    ToServer,
    /// From a server to the client (responses and the server's ACKs).
    ToClient,
}

/// A TCP segment on its way through the network.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// The segment.
    pub seg: Segment,
    /// Connection index (the server's index).
    pub flow: u32,
    /// Direction on the connection.
    pub dir: Direction,
    /// Destination host index.
    pub dst: u32,
    /// TCP payload and option bytes: what the frame carries above the TCP/IP headers.
    pub tcp_bytes: u32,
}

impl Packet {
    /// What fills a slot before a packet is built in it.
    const EMPTY: Packet = Packet { seg: Segment::EMPTY, flow: 0, dir: Direction::ToServer, dst: 0, tcp_bytes: 0 };
}

/// Index of a packet in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PktId(u32);

impl PktId {
    /// The slot this packet occupies, for tables kept beside the pool.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of slot `i`, for tests of tables kept beside the pool.
    #[cfg(test)]
    pub(crate) fn at_index(i: u32) -> Self {
        PktId(i)
    }
}

/// Slab of packets with a free list, and always one vacant slot ready for
/// the next packet to be built in.
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// The slot the next packet takes; in neither `free` nor use.
    next: u32,
}

impl Default for PacketPool {
    fn default() -> Self {
        PacketPool { slots: vec![Packet::EMPTY], free: Vec::new(), next: 0 }
    }
}

impl PacketPool {
    /// Store `p`.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        *self.vacant() = p;
        self.commit()
    }

    /// The slot the next packet will take, to build it in place. It holds
    /// nothing until [`PacketPool::commit`] stores it; left uncommitted, it
    /// stays the next.
    #[inline]
    pub fn vacant(&mut self) -> &mut Packet {
        &mut self.slots[self.next as usize]
    }

    /// Store the packet built in [`PacketPool::vacant`], and make another
    /// slot vacant: a freed one, or a new one.
    #[inline]
    pub fn commit(&mut self) -> PktId {
        let id = PktId(self.next);
        self.next = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Packet::EMPTY);
                (self.slots.len() - 1) as u32
            }
        };
        id
    }

    /// The packet stored at `id`.
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id.0 as usize]
    }
    /// The packet stored at `id`, to change (a switch marking it CE).
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
    /// Release `id`; its slot may be reused by the next [`PacketPool::alloc`].
    #[inline]
    pub fn release(&mut self, id: PktId) {
        self.free.push(id.0);
    }
    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len() - 1
    }
    /// Bytes the pool has allocated: its slots and its free list.
    pub fn held_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<Packet>() + self.free.capacity() * 4) as u64
    }
}
