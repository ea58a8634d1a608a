//! The TCP segment as endpoints see it.
//!
//! **Models:** the header fields that drive TCP's behaviour: sequence and
//! acknowledgment numbers, the advertised window, payload length and flags.
//! **Deliberately different:** sequence numbers are 64-bit stream offsets
//! starting at 0 and never wrap (a 10 Gbps flow would wrap 32 bits within
//! 3.5 s; wrap-around handling is not what incast experiments study).
//! Payload bytes are not carried, only their count.
//! **Not modelled:** SYN/FIN (connections are established before the
//! measurement starts and never closed), URG, checksums.

/// Bits in [`Segment::flags`].
pub mod flags {
    /// The acknowledgment field is valid (set on every segment here).
    pub const ACK: u8 = 1 << 0;
    /// ECN-Echo (RFC 3168).
    pub const ECE: u8 = 1 << 1;
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: u8 = 1 << 2;
    /// Push: the sender's buffer is empty after this segment.
    pub const PSH: u8 = 1 << 3;
}

/// One TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    /// Stream offset of the first payload byte.
    pub seq: u64,
    /// Next stream offset expected from the peer (cumulative ACK).
    pub ack: u64,
    /// Payload length in bytes.
    pub len: u32,
    /// Advertised receive window in bytes.
    pub wnd: u32,
    /// [`flags`] bits.
    pub flags: u8,
}

impl Segment {
    /// Stream offset one past the last payload byte.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    /// True when the segment carries payload.
    #[inline]
    pub fn has_data(&self) -> bool {
        self.len > 0
    }
    /// True if `flag` (from [`flags`]) is set.
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}
