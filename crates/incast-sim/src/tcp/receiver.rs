//! Receive half: in-order delivery and out-of-order reassembly.
//!
//! **Models:** RCV.NXT (RFC 793 §3.2), buffering of out-of-order segments so
//! that a retransmission filling a hole delivers everything buffered behind it
//! at once (RFC 793 §3.9), classification of each arrival for the ACK
//! policy (`tcp::delayed_ack`), and the SACK blocks an ACK reports (RFC 2018
//! §4): the first block holds the segment that arrived most recently out of
//! order, the others repeat the most recently reported blocks, newest first.
//! **Deliberately different:** payload bytes are never stored, only the
//! `[start, end)` ranges received; the application consumes in-order data at
//! once, so the advertised window is `TcpConfig::rcv_wnd`, or what
//! `tcp::rcv_window` grows it to.
//! **Not modelled:** receive-window enforcement (senders always respect the
//! advertised window), D-SACK (RFC 2883), out-of-order queue pruning (so
//! never reneging on SACKed data).

use super::segment::MAX_SACK_BLOCKS;

/// How an arriving data segment relates to what was already received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Starts at RCV.NXT (or overlaps it) and no data was buffered beyond.
    InOrder,
    /// Starts beyond RCV.NXT: a hole precedes it.
    OutOfOrder,
    /// Ends at or before RCV.NXT: nothing new.
    Duplicate,
    /// Advanced RCV.NXT while out-of-order data was buffered (all or part of a gap).
    FillsGap,
}

/// Reassembly state of one receiving endpoint.
#[derive(Clone, Debug)]
pub struct Receiver {
    rcv_nxt: u64,
    /// Disjoint, non-adjacent `[start, end)` ranges above `rcv_nxt`, sorted.
    ooo: Vec<(u64, u64)>,
    /// First offsets of the latest out-of-order arrivals, newest first: each
    /// names the block that holds it, for the SACK block order of RFC 2018 §4.
    recent: [u64; MAX_SACK_BLOCKS],
    /// Entries of `recent` in use (a byte, so that `sack` takes no more room).
    recent_n: u8,
    /// `recent` is kept: the endpoint sends SACK blocks.
    sack: bool,
}

impl Default for Receiver {
    fn default() -> Self {
        Self::new()
    }
}

impl Receiver {
    /// A receiver expecting stream offset 0.
    pub fn new() -> Self {
        Receiver { rcv_nxt: 0, ooo: Vec::with_capacity(8), recent: [0; MAX_SACK_BLOCKS], recent_n: 0, sack: true }
    }

    /// [`Receiver::new`] for an endpoint that sends no SACK blocks: it keeps
    /// no order of recent arrivals ([`Receiver::sack_blocks`] gives none).
    pub fn without_sack() -> Self {
        Receiver { sack: false, ..Receiver::new() }
    }

    /// RCV.NXT: the next in-order offset expected, = bytes delivered so far.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// True when out-of-order data is buffered.
    #[inline]
    pub fn has_gap(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// Out-of-order ranges currently buffered, lowest first.
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Accept the payload `[seq, seq + len)`; `len > 0`.
    // Inline: it runs on every data segment, and without the hint LLVM keeps
    // it out of line in both builds (`tcp::gated`).
    #[inline]
    pub fn on_data(&mut self, seq: u64, len: u32) -> Arrival {
        debug_assert!(len > 0);
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            // Bytes before RCV.NXT were delivered already: never twice.
            return Arrival::Duplicate;
        }
        if seq > self.rcv_nxt {
            // RFC 793 (3.9): "Segments with higher beginning sequence numbers
            // may be held for later processing."
            self.insert(seq, end);
            if self.sack {
                self.note_recent(seq);
            }
            return Arrival::OutOfOrder;
        }
        self.rcv_nxt = end;
        if self.ooo.is_empty() {
            return Arrival::InOrder;
        }
        // Drain every buffered range that RCV.NXT now reaches.
        let reached = self.ooo.partition_point(|&(s, _)| s <= self.rcv_nxt);
        if reached > 0 {
            self.rcv_nxt = self.rcv_nxt.max(self.ooo[reached - 1].1);
            self.ooo.drain(..reached);
        }
        Arrival::FillsGap
    }

    /// Remember `seq`, just buffered, as the newest out-of-order arrival. Its
    /// block (after merging) replaces any older entry in it, and entries
    /// already delivered go, so the entries name distinct blocks: RFC 2018
    /// §4, "as many distinct SACK blocks as possible", as Linux's
    /// `tcp_sack_new_ofo_skb` keeps them.
    fn note_recent(&mut self, seq: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        let (start, end) = self.ooo[i];
        let mut kept = 0;
        for j in 0..usize::from(self.recent_n) {
            let r = self.recent[j];
            if r >= self.rcv_nxt && !(start..end).contains(&r) {
                self.recent[kept] = r;
                kept += 1;
            }
        }
        let n = (kept + 1).min(MAX_SACK_BLOCKS);
        self.recent.copy_within(0..n - 1, 1);
        self.recent[0] = seq;
        self.recent_n = n as u8;
    }

    /// The SACK blocks for an ACK sent now, at most `max` (RFC 2018 §4): "The
    /// first SACK block ... MUST specify the contiguous block of data
    /// containing the segment which triggered this ACK", and the rest "the
    /// most recently reported SACK blocks". Writes them into `out`, newest
    /// first, and returns how many; none when nothing is buffered out of order.
    pub fn sack_blocks(&self, max: usize, out: &mut [(u64, u64); MAX_SACK_BLOCKS]) -> usize {
        let mut n = 0;
        for &seq in &self.recent[..usize::from(self.recent_n)] {
            if n == max.min(MAX_SACK_BLOCKS) {
                break;
            }
            let i = self.ooo.partition_point(|&(_, e)| e <= seq);
            match self.ooo.get(i) {
                Some(&block) if block.0 <= seq => {
                    // `note_recent` keeps one entry per block.
                    debug_assert!(!out[..n].contains(&block), "two entries name {block:?}");
                    out[n] = block;
                    n += 1;
                }
                _ => {}
            }
        }
        n
    }

    /// Insert `[start, end)` (entirely above RCV.NXT), merging overlaps and neighbours.
    fn insert(&mut self, start: u64, end: u64) {
        // First range that ends at or after `start` (may touch or overlap).
        let i = self.ooo.partition_point(|&(_, e)| e < start);
        // Ranges i..j touch or overlap [start, end).
        let j = i + self.ooo[i..].partition_point(|&(s, _)| s <= end);
        if i == j {
            self.ooo.insert(i, (start, end));
            return;
        }
        let merged = (start.min(self.ooo[i].0), end.max(self.ooo[j - 1].1));
        self.ooo[i] = merged;
        self.ooo.drain(i + 1..j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(r: &Receiver, max: usize) -> Vec<(u64, u64)> {
        let mut out = [(0, 0); MAX_SACK_BLOCKS];
        let n = r.sack_blocks(max, &mut out);
        out[..n].to_vec()
    }

    /// RFC 2018 §4: the block holding the latest arrival comes first, then
    /// earlier reported blocks, newest first; filled holes drop out.
    #[test]
    fn rfc2018_4_sack_blocks_newest_first() {
        let mut r = Receiver::new();
        r.on_data(0, 1000);
        r.on_data(2000, 1000);
        r.on_data(4000, 1000);
        r.on_data(6000, 1000);
        assert_eq!(blocks(&r, 4), vec![(6000, 7000), (4000, 5000), (2000, 3000)]);
        r.on_data(3000, 1000); // joins [2000, 3000) and [4000, 5000)
        assert_eq!(blocks(&r, 4), vec![(2000, 5000), (6000, 7000)]);
        assert_eq!(blocks(&r, 1), vec![(2000, 5000)], "at most `max` blocks");
        r.on_data(1000, 1000); // fills the first hole
        assert_eq!(blocks(&r, 4), vec![(6000, 7000)]);
        r.on_data(5000, 1000);
        assert_eq!(blocks(&r, 4), vec![]);
    }

    /// RFC 2018 §4: "as many distinct SACK blocks as possible". Arrivals
    /// that extend one block do not push the others out of the report.
    #[test]
    fn rfc2018_4_a_growing_block_keeps_the_others_reported() {
        let mut r = Receiver::new();
        r.on_data(1000, 1000);
        for seq in (3000..9000).step_by(1000) {
            r.on_data(seq, 1000);
        }
        assert_eq!(blocks(&r, 3), vec![(3000, 9000), (1000, 2000)]);
        r.on_data(10_000, 1000);
        r.on_data(12_000, 1000);
        r.on_data(9000, 1000); // joins [3000, 9000) and [10000, 11000)
        assert_eq!(blocks(&r, 3), vec![(3000, 11_000), (12_000, 13_000), (1000, 2000)]);
    }

    #[test]
    fn in_order_data_advances_rcv_nxt() {
        let mut r = Receiver::new();
        assert_eq!(r.on_data(0, 100), Arrival::InOrder);
        assert_eq!(r.on_data(100, 1460), Arrival::InOrder);
        assert_eq!(r.rcv_nxt(), 1560);
    }

    /// RFC 793 (3.9): out-of-order segments are held, and adjacent or
    /// overlapping ranges merge into one.
    #[test]
    fn rfc793_3_9_out_of_order_ranges_merge() {
        let mut r = Receiver::new();
        assert_eq!(r.on_data(3000, 1000), Arrival::OutOfOrder);
        assert_eq!(r.on_data(6000, 1000), Arrival::OutOfOrder);
        assert_eq!(r.on_data(1000, 1000), Arrival::OutOfOrder);
        assert_eq!(r.ooo_ranges(), &[(1000, 2000), (3000, 4000), (6000, 7000)]);
        // Adjacent on both sides: bridges two ranges.
        assert_eq!(r.on_data(2000, 1000), Arrival::OutOfOrder);
        assert_eq!(r.ooo_ranges(), &[(1000, 4000), (6000, 7000)]);
        // Overlapping the tail of one and the head of the next.
        assert_eq!(r.on_data(3500, 3000), Arrival::OutOfOrder);
        assert_eq!(r.ooo_ranges(), &[(1000, 7000)]);
        // Entirely inside: no change.
        assert_eq!(r.on_data(2000, 500), Arrival::OutOfOrder);
        assert_eq!(r.ooo_ranges(), &[(1000, 7000)]);
        assert_eq!(r.rcv_nxt(), 0);
    }

    /// RFC 793 (3.9): filling the hole delivers everything buffered behind it.
    #[test]
    fn rfc793_3_9_delivered_jumps_when_hole_fills() {
        let mut r = Receiver::new();
        r.on_data(1000, 1000);
        r.on_data(2000, 1000);
        r.on_data(5000, 1000);
        // Fills part of the gap: delivers up to the next hole.
        assert_eq!(r.on_data(0, 1000), Arrival::FillsGap);
        assert_eq!(r.rcv_nxt(), 3000);
        assert_eq!(r.ooo_ranges(), &[(5000, 6000)]);
        assert_eq!(r.on_data(3000, 1000), Arrival::FillsGap);
        assert_eq!(r.rcv_nxt(), 4000);
        assert_eq!(r.on_data(4000, 1000), Arrival::FillsGap);
        assert_eq!(r.rcv_nxt(), 6000);
        assert!(!r.has_gap());
        assert_eq!(r.on_data(6000, 10), Arrival::InOrder);
    }

    /// Bytes before RCV.NXT are never delivered twice.
    #[test]
    fn duplicates_never_delivered_twice() {
        let mut r = Receiver::new();
        r.on_data(0, 1000);
        assert_eq!(r.on_data(0, 1000), Arrival::Duplicate);
        assert_eq!(r.on_data(500, 500), Arrival::Duplicate);
        // Partly old, partly new: only the new part counts.
        assert_eq!(r.on_data(500, 1000), Arrival::InOrder);
        assert_eq!(r.rcv_nxt(), 1500);
        // A segment overlapping RCV.NXT whose end lies inside a buffered range.
        r.on_data(2000, 1000);
        assert_eq!(r.on_data(1000, 1500), Arrival::FillsGap);
        assert_eq!(r.rcv_nxt(), 3000);
    }
}
