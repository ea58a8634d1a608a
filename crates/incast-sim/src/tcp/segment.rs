//! The TCP segment as endpoints see it.
//!
//! **Models:** the header fields that drive TCP's behaviour: sequence and
//! acknowledgment numbers, the advertised window, payload length and flags,
//! and the two options incast experiments vary: SACK blocks (RFC 2018 §3) and
//! timestamps (RFC 7323 §3). Options take header bytes on the wire
//! ([`Segment::option_bytes`]): 12 for timestamps (10 plus two NOPs, as Linux
//! aligns them) and 4 + 8·n for n SACK blocks (two NOPs, kind, length).
//! **Deliberately different:** sequence numbers are 64-bit stream offsets
//! starting at 0 and never wrap (a 10 Gbps flow would wrap 32 bits within
//! 3.5 s; wrap-around handling is not what incast experiments study).
//! Payload bytes are not carried, only their count.
//! SACK blocks are stored as 32-bit offsets from the segment's ACK (a block
//! always lies above the cumulative ACK, within one window), which keeps a
//! segment at 72 bytes.
//! **Not modelled:** SYN/FIN (connections are established before the
//! measurement starts and never closed), URG, checksums, D-SACK (RFC 2883),
//! window scaling and MSS options (they ride on the SYN, which is not simulated).

/// IPv4 and TCP headers, no options.
pub const TCP_IP_HEADERS: u32 = 40;
/// Largest MSS accepted: an IPv4 datagram holds at most 65535 bytes.
pub const MAX_MSS: u32 = 65_535 - TCP_IP_HEADERS;

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
    /// IP header: ECN-Capable Transport, ECT(0) (RFC 3168 §5).
    pub const ECT: u8 = 1 << 4;
    /// IP header: Congestion Experienced, set by a marking switch on an ECT packet (RFC 3168 §5).
    pub const CE: u8 = 1 << 5;
    /// The rude bit: the lowest reserved TCP flag, set on every segment of a
    /// rude flow (RUDE §3.1, `tcp::rude`).
    pub const RUDE: u8 = 1 << 6;
}

/// Most SACK blocks one segment carries: 4 fit in the 40 option bytes, 3
/// beside the timestamps option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The timestamps option (RFC 7323 §3): TSval and TSecr, in ticks of the
/// sender's timestamp clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamps {
    /// TSval: the sender's timestamp clock when the segment was sent.
    pub val: u32,
    /// TSecr: the TSval being echoed (TS.Recent).
    pub ecr: u32,
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
    /// Number of SACK blocks in `sack_rel`.
    sack_n: u8,
    /// Option bytes on the wire (see [`Segment::option_bytes`]), kept current by the setters.
    opt_len: u8,
    /// SACK blocks as `[start, end)` offsets from `ack`, most recent first.
    sack_rel: [(u32, u32); MAX_SACK_BLOCKS],
    /// The timestamps option, when the connection negotiated it.
    ts: Option<Timestamps>,
}

impl Segment {
    /// An empty segment (all zero), the [`Default`].
    pub const EMPTY: Segment = Segment::new(0, 0, 0, 0, 0);

    /// A segment without options.
    #[inline]
    pub const fn new(seq: u64, ack: u64, len: u32, wnd: u32, flags: u8) -> Self {
        Segment { seq, ack, len, wnd, flags, sack_n: 0, opt_len: 0, sack_rel: [(0, 0); MAX_SACK_BLOCKS], ts: None }
    }

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

    /// The SACK blocks as absolute `[start, end)` stream ranges, in option order.
    #[inline]
    pub fn sack(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack_rel[..self.sack_n as usize].iter().map(|&(s, e)| (self.ack + s as u64, self.ack + e as u64))
    }

    /// True when the segment carries at least one SACK block.
    #[inline]
    pub fn has_sack(&self) -> bool {
        self.sack_n > 0
    }

    /// Carry `blocks` (absolute ranges above `self.ack`, at most
    /// [`MAX_SACK_BLOCKS`]) as the SACK option; set `ack` first.
    pub fn set_sack(&mut self, blocks: &[(u64, u64)]) {
        debug_assert!(blocks.len() <= MAX_SACK_BLOCKS);
        debug_assert!(blocks.iter().all(|&(s, e)| self.ack < s && s < e && e - self.ack <= u32::MAX as u64));
        self.sack_n = blocks.len() as u8;
        for (slot, &(s, e)) in self.sack_rel.iter_mut().zip(blocks) {
            *slot = ((s - self.ack) as u32, (e - self.ack) as u32);
        }
        self.update_opt_len();
    }

    /// The timestamps option, if the segment carries it.
    #[inline]
    pub fn ts(&self) -> Option<Timestamps> {
        self.ts
    }

    /// Carry (or drop) the timestamps option.
    pub fn set_ts(&mut self, ts: Option<Timestamps>) {
        self.ts = ts;
        self.update_opt_len();
    }

    fn update_opt_len(&mut self) {
        let ts = if self.ts.is_some() { 12 } else { 0 };
        let sack = if self.sack_n > 0 { 4 + 8 * self.sack_n } else { 0 };
        self.opt_len = ts + sack;
    }

    /// TCP option bytes this segment carries: 12 for timestamps, 4 + 8·n for
    /// n SACK blocks (each padded with NOPs to a 4-byte boundary, as Linux does).
    #[inline]
    pub fn option_bytes(&self) -> u32 {
        self.opt_len as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 2018 §3: a SACK option of n blocks is 2 + 8·n bytes; with two NOPs
    /// of alignment and the 12-byte timestamps option, three blocks fill 38 of
    /// the 40 option bytes.
    #[test]
    fn rfc2018_3_option_sizes() {
        let mut seg = Segment { ack: 1000, ..Segment::default() };
        assert_eq!(seg.option_bytes(), 0);
        seg.set_sack(&[(3000, 4000), (5000, 6000), (7000, 8000)]);
        seg.set_ts(Some(Timestamps { val: 1, ecr: 2 }));
        assert_eq!(seg.option_bytes(), 12 + 4 + 24);
        assert_eq!(seg.sack().collect::<Vec<_>>(), vec![(3000, 4000), (5000, 6000), (7000, 8000)]);
    }
}
