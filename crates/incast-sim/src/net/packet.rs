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

/// Slab of packets with a free list.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    /// Store `p`, reusing a free slot when there is one.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PktId(i)
            }
            None => {
                self.slots.push(p);
                PktId((self.slots.len() - 1) as u32)
            }
        }
    }

    /// The slot the next packet will take, to build it in place: the
    /// slot [`PacketPool::alloc`] would fill. It holds nothing until
    /// [`PacketPool::commit`] stores it; left uncommitted, it stays the next.
    #[inline]
    pub fn vacant(&mut self) -> &mut Packet {
        let i = match self.free.last() {
            Some(&i) => i,
            None => {
                let i = self.slots.len() as u32;
                self.slots.push(Packet::EMPTY);
                self.free.push(i);
                i
            }
        };
        &mut self.slots[i as usize]
    }

    /// Store the packet built in [`PacketPool::vacant`].
    #[inline]
    pub fn commit(&mut self) -> PktId {
        PktId(self.free.pop().expect("a packet is built in the vacant slot"))
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
        self.slots.len() - self.free.len()
    }
}
