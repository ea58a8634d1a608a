//! GIP, "Guarantee Important Packets" (GIP §IV–V): a sender that knows where
//! each stripe unit ends.
//!
//! **Models:** the application marks the write that ends a stripe unit (GIP
//! §V-A: `send()` with `flags = 0x10000`; here [`super::SendFlags::UNIT_TAIL`]).
//! At the head of every stripe unit — the first write, and every write after a
//! marked one — cwnd is reset to `gip_head_cwnd` segments, 2 by default (GIP
//! §IV-C, §V-C: 2 rather than 1 so a delayed-ACK receiver answers at once), so
//! every flow restarts in slow start and the synchronized burst fits the
//! buffer (against FLoss-TOs). Once the whole unit has been sent, each
//! arriving ACK that does not yet cover the unit's last packet triggers one
//! redundant retransmission of it, at most `gip_copies` (3) times per unit
//! and never once it is acknowledged (GIP §IV-B, §V-B: "Pattern 333", against
//! LAck-TOs); the copies go out whatever cwnd says, as the paper's
//! `tcp_retransmit_skb()` call does. The comparison pattern of GIP §IV-B,
//! "Pattern 123", sends the unit's last three packets in turn instead, one per
//! such ACK, after cutting cwnd by three segments as the paper describes.
//! The per-unit count of redundant copies is reset at each unit head (GIP
//! §V-C resets `retrans_out`; redundant copies never count as outstanding
//! here, so there is nothing else to reset).
//! **Deliberately different:** GIP §V-B counts "a new ACK which is not for
//! the last packet"; here every acceptable ACK counts, duplicates included
//! (a duplicate ACK is exactly the feedback the copies are meant to draw).
//! **Not modelled:** the dynamic initial window of GIP §VIII (cwnd sized from
//! the previous unit's rate).

/// Which GIP redundant-transmission pattern a sender runs (GIP §IV-B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GipPattern {
    /// No GIP.
    #[default]
    Off,
    /// GIP's proposal: the unit's last packet, once per ACK, up to `gip_copies` times.
    Pattern333,
    /// GIP's first attempt: the unit's last three packets in turn, after cutting cwnd by three.
    Pattern123,
}

/// GIP state of one sender.
#[derive(Clone, Copy, Debug)]
pub struct Gip {
    pattern: GipPattern,
    copies: u8,
    head_cwnd: u32,
    /// The next write starts a stripe unit.
    at_head: bool,
    /// Start of the current unit and one past its last byte, once its tail is written.
    unit: Option<(u64, u64)>,
    /// Redundant copies sent for the current unit.
    sent: u8,
}

impl Gip {
    /// GIP with `pattern`, `copies` redundant packets per unit and cwnd reset
    /// to `head_cwnd` segments at each unit head.
    pub fn new(pattern: GipPattern, copies: u32, head_cwnd: u32) -> Self {
        Gip {
            pattern,
            copies: copies.min(u8::MAX as u32) as u8,
            head_cwnd: head_cwnd.max(1),
            at_head: true,
            unit: None,
            sent: 0,
        }
    }

    /// The application writes `[start, end)`; `tail` when the write ends a
    /// stripe unit. Returns the cwnd (in segments) to restart from when the
    /// write begins a unit.
    pub fn on_write(&mut self, start: u64, end: u64, tail: bool) -> Option<u32> {
        let head = std::mem::replace(&mut self.at_head, tail);
        if head {
            self.unit = None;
            self.sent = 0;
        }
        let unit_start = match self.unit {
            Some((s, _)) if !head => s,
            _ => start,
        };
        self.unit = Some((unit_start, if tail { end } else { u64::MAX }));
        head.then_some(self.head_cwnd)
    }

    /// An acceptable ACK of `ack` arrived with SND.MAX = `snd_max`: the
    /// segment `(seq, len)` to send redundantly now, if any, given segments of
    /// `mss` bytes. Pattern 123 also asks the caller to cut cwnd by three
    /// segments before the first copy (the second value).
    pub fn on_ack(&mut self, ack: u64, snd_max: u64, mss: u64) -> Option<((u64, u64), bool)> {
        let (start, end) = self.unit?;
        // GIP §V-B: only after the whole unit was sent, at most `copies` times,
        // and "if the sender has received the ACK of the last packet, it will
        // not transmit it any more".
        if snd_max < end || ack >= end || self.sent >= self.copies {
            return None;
        }
        let last_len = match (end - start) % mss {
            0 => mss,
            r => r,
        };
        let last = end - last_len.min(end - start);
        let seg = match self.pattern {
            GipPattern::Off => return None,
            GipPattern::Pattern333 => (last, end - last),
            GipPattern::Pattern123 => {
                // The last three packets in turn: third-last, second-last, last.
                let back = (2 - self.sent.min(2)) as u64 * mss;
                let seq = last.saturating_sub(back).max(start);
                let seg_end = if seq == last { end } else { (seq + mss).min(last) };
                if seg_end <= ack {
                    self.sent += 1;
                    return self.on_ack(ack, snd_max, mss);
                }
                (seq, seg_end - seq)
            }
        };
        let first = self.sent == 0;
        self.sent += 1;
        Some((seg, first && self.pattern == GipPattern::Pattern123))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// GIP §V-C: the first write and every write after a unit tail restart
    /// cwnd at 2 segments; a write in the middle of a unit does not.
    #[test]
    fn gip_v_c_cwnd_reset_at_every_unit_head() {
        let mut g = Gip::new(GipPattern::Pattern333, 3, 2);
        assert_eq!(g.on_write(0, 5000, false), Some(2));
        assert_eq!(g.on_write(5000, 10_000, true), None, "same unit");
        assert_eq!(g.on_write(10_000, 20_000, true), Some(2));
    }

    /// GIP §V-B, Pattern 333: three copies of the last packet, one per ACK, only
    /// after the unit was sent and never once the last packet is acknowledged.
    #[test]
    fn gip_v_b_pattern_333_three_copies_of_the_last_packet() {
        let mut g = Gip::new(GipPattern::Pattern333, 3, 2);
        g.on_write(0, 10_500, true);
        assert_eq!(g.on_ack(3000, 9000, MSS), None, "unit not fully sent");
        let copies: Vec<_> = (0..5).filter_map(|i| g.on_ack(4000 + i, 10_500, MSS)).collect();
        assert_eq!(copies, vec![((10_000, 500), false); 3]);

        let mut g = Gip::new(GipPattern::Pattern333, 3, 2);
        g.on_write(0, 10_000, true);
        assert_eq!(g.on_ack(9000, 10_000, MSS), Some(((9000, 1000), false)));
        assert_eq!(g.on_ack(10_000, 10_000, MSS), None, "the last packet is acknowledged");
    }

    /// GIP §IV-B, Pattern 123: the last three packets in turn, the first copy
    /// asking for cwnd to be cut by three segments.
    #[test]
    fn gip_iv_b_pattern_123_last_three_in_turn() {
        let mut g = Gip::new(GipPattern::Pattern123, 3, 2);
        g.on_write(0, 10_000, true);
        let copies: Vec<_> = (0..4).filter_map(|i| g.on_ack(1000 + i, 10_000, MSS)).collect();
        assert_eq!(copies, vec![((7000, 1000), true), ((8000, 1000), false), ((9000, 1000), false)]);
    }
}
