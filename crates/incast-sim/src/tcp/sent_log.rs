//! The sent-segment log: one record per segment sent and not yet
//! cumulatively acknowledged, and the questions asked of them.
//!
//! **Models:** Linux's retransmission queue (`tp->tcp_rtx_queue`) as RACK
//! (`tcp::rack_tlp`), PRR (`tcp::prr`), timeout forensics (`tcp::forensics`),
//! the ns-3 rules of `tcp::sack` and delivery-rate estimation
//! (`tcp::delivery_rate`) read it: each record is one first transmission
//! `[start, end)` (the previous record's end is its start), when it last left,
//! whether it was sent more than once, whether RACK found its latest
//! transmission lost, whether it was resent since the last timeout (ns-3's
//! `TcpTxItem::m_retrans`), how many of its copies the network has not
//! dropped (the engine reports each drop, the ground truth a retransmission
//! timeout is judged by: CMU09 §8.1's spurious timeouts are those of segments
//! delayed, not dropped), and, when an algorithm reads rate samples, the
//! stamp of draft-cheng-iccrg-delivery-rate-estimation §3.2 (Linux
//! `tcp_rate_skb_sent`: the connection's delivered count, its time and the
//! first send time of the flight when it left, and whether the sender was
//! application-limited), held in the record as Linux holds it in the skb's
//! control block (`tcp_skb_cb.tx`), its send time the record's own.
//! **Deliberately different:** records keep the boundaries of the first
//! transmission; a retransmission that covers part of a record (a tail loss
//! probe, go-back-N after a change of MSS) marks the whole record, as
//! Linux's `tcp_retransmit_skb` resends whole skbs.
//! **Not modelled:** SACK marks on records (the scoreboard, `tcp::sack`,
//! keeps SACKed ranges; the log asks it where a record's SACK state matters).

use super::delivery_rate::RateStamp;
use crate::fifo::Fifo;
use crate::time::SimTime;

/// One transmitted, not yet cumulatively acknowledged segment.
#[derive(Clone, Copy, Debug)]
pub struct SentRecord {
    /// Stream offset one past its last byte (its start is the previous record's end).
    pub end: u64,
    /// When it was (last) sent.
    pub sent_at: SimTime,
    /// It has been sent more than once.
    pub retransmitted: bool,
    /// RACK found its latest transmission lost (counted once per transmission).
    pub lost_again: bool,
    /// Retransmitted since the last retransmission timeout (ns-3's
    /// `TcpTxItem::m_retrans`, `tcp.sack_recovery = "ns3"`).
    pub resent_since_timeout: bool,
    /// Copies sent (its first transmission and each retransmission covering
    /// it) less those the network dropped ([`SentLog::on_copy_dropped`]).
    pub copies: u16,
    /// Its delivery-rate stamp from when it (last) left, when rates are
    /// kept (the default stamp otherwise).
    pub rate: RateStamp,
}

/// What a cumulative ACK took off the log ([`SentLog::take_acked`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    /// When the oldest record it covered was last sent.
    pub oldest: Option<SimTime>,
    /// When the newest was.
    pub newest: Option<SimTime>,
    /// One of them had been retransmitted (Karn's rule, RFC 6298 §3).
    pub retransmitted: bool,
}

/// The records of one sender, oldest first.
#[derive(Clone, Debug, Default)]
pub struct SentLog {
    records: Fifo<SentRecord>,
    /// Where the oldest record starts: the end of the last one taken off.
    head_start: u64,
}

impl SentLog {
    /// A first transmission of `[previous end, end)` at `now`, `stamp` its
    /// delivery-rate stamp when rates are kept.
    #[inline]
    pub fn push(&mut self, end: u64, now: SimTime, retransmitted: bool, stamp: Option<RateStamp>) {
        self.records.push_back(SentRecord {
            end,
            sent_at: now,
            retransmitted,
            lost_again: false,
            resent_since_timeout: false,
            copies: 1,
            rate: stamp.unwrap_or_default(),
        });
    }

    /// Take off every record a cumulative ACK of `ack` covers, handing each
    /// one's bytes and record to `delivered`.
    #[inline]
    pub fn take_acked(&mut self, ack: u64, mut delivered: impl FnMut(u64, &SentRecord)) -> Acked {
        let mut out = Acked::default();
        while let Some(r) = self.records.front() {
            if r.end > ack {
                break;
            }
            out.oldest = out.oldest.or(Some(r.sent_at));
            out.newest = Some(r.sent_at);
            out.retransmitted |= r.retransmitted;
            delivered(r.end - self.head_start, r);
            self.head_start = r.end;
            self.records.pop_front();
        }
        out
    }

    /// Flag every record overlapping `[start, end)` as retransmitted at
    /// `now`, stamping each anew (`stamp`) when rates are kept.
    pub fn mark_retransmitted(&mut self, start: u64, end: u64, now: SimTime, stamp: Option<RateStamp>) {
        let held = self.overlapping(start, end);
        for r in &mut self.records.as_mut_slice()[held] {
            r.retransmitted = true;
            r.resent_since_timeout = true;
            r.lost_again = false;
            r.sent_at = now;
            r.copies = r.copies.saturating_add(1);
            if let Some(stamp) = stamp {
                r.rate = stamp;
            }
        }
    }

    /// The network dropped a copy of `[start, end)`: one copy fewer of every
    /// record it covers (none once they are acknowledged).
    #[cold]
    pub fn on_copy_dropped(&mut self, start: u64, end: u64) {
        if end <= self.head_start {
            return;
        }
        let held = self.overlapping(start, end);
        for r in &mut self.records.as_mut_slice()[held] {
            r.copies = r.copies.saturating_sub(1);
        }
    }

    /// The records a transmission of `[start, end)` covers: a partial one
    /// marks its record whole.
    #[inline]
    fn overlapping(&self, start: u64, end: u64) -> std::ops::Range<usize> {
        let records = self.records.as_slice();
        // Most retransmissions resend the oldest record (SND.UNA): found without a search.
        let first = if records.first().is_some_and(|r| r.end > start) {
            0
        } else {
            records.partition_point(|r| r.end <= start)
        };
        let last = first + records[first..].iter().position(|r| r.end >= end).map_or(records.len() - first, |i| i + 1);
        first..last
    }

    /// Each record with the bytes `[start, end)` it still holds above
    /// `una`, oldest first.
    pub fn outstanding(&self, una: u64) -> impl Iterator<Item = (u64, u64, &SentRecord)> + '_ {
        self.records
            .iter()
            .scan(self.head_start.max(una), move |start, r| {
                let s = (*start).max(una);
                *start = r.end;
                Some((s, r.end, r))
            })
            .filter(|&(s, e, _)| s < e)
    }

    /// Each record with its `[start, end)`, oldest first, to stamp.
    pub fn spans_mut(&mut self) -> impl Iterator<Item = (u64, u64, &mut SentRecord)> + '_ {
        self.records.iter_mut().scan(self.head_start, |start, r| {
            let s = std::mem::replace(start, r.end);
            Some((s, r.end, r))
        })
    }

    /// Clear every record's resent-since-timeout mark (ns-3's
    /// `TcpTxBuffer::SetSentListLost`: "(*it)->m_retrans = false").
    pub fn forget_resends(&mut self) {
        self.records.iter_mut().for_each(|r| r.resent_since_timeout = false);
    }

    /// The oldest record.
    #[inline]
    pub fn front(&self) -> Option<&SentRecord> {
        self.records.front()
    }

    /// The records, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[SentRecord] {
        self.records.as_slice()
    }

    /// The records, oldest first, to mark.
    #[inline]
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut SentRecord> + '_ {
        self.records.iter_mut()
    }

    /// Where the newest record starts (the oldest's start when it is the only one).
    pub fn last_start(&self) -> Option<u64> {
        match self.records.len() {
            0 => None,
            1 => Some(self.head_start),
            n => Some(self.records.as_slice()[n - 2].end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(ends: &[u64]) -> SentLog {
        let mut log = SentLog::default();
        for (i, &end) in ends.iter().enumerate() {
            log.push(end, SimTime(i as u64), false, None);
        }
        log
    }

    /// A cumulative ACK takes off whole records only, oldest first.
    #[test]
    fn a_cumulative_ack_takes_off_the_records_it_covers() {
        let mut l = log(&[1000, 2000, 3000]);
        let acked = l.take_acked(2500, |_, _| {});
        assert_eq!((acked.oldest, acked.newest, acked.retransmitted), (Some(SimTime(0)), Some(SimTime(1)), false));
        assert_eq!(l.as_slice().len(), 1);
        let held: Vec<(u64, u64)> = l.outstanding(2500).map(|(s, e, _)| (s, e)).collect();
        assert_eq!(held, vec![(2500, 3000)]);
    }

    /// A retransmission of part of a record marks it whole (Linux resends skbs).
    #[test]
    fn a_retransmission_marks_every_record_it_overlaps() {
        let mut l = log(&[1000, 2000, 3000]);
        l.mark_retransmitted(1500, 2500, SimTime(9), None);
        let marked: Vec<bool> = l.as_slice().iter().map(|r| r.retransmitted).collect();
        assert_eq!(marked, vec![false, true, true]);
        assert_eq!(l.as_slice()[1].sent_at, SimTime(9));
        assert_eq!(l.last_start(), Some(2000));
    }

    /// Copies count sends less drops: a record whose every copy was dropped
    /// holds none, one retransmitted after its drop holds one again.
    #[test]
    fn copies_are_the_sends_the_network_did_not_drop() {
        let mut l = log(&[1000, 2000, 3000]);
        l.on_copy_dropped(1000, 2000);
        l.mark_retransmitted(0, 1000, SimTime(9), None);
        let copies: Vec<u16> = l.as_slice().iter().map(|r| r.copies).collect();
        assert_eq!(copies, vec![2, 0, 1]);
        l.mark_retransmitted(1000, 2000, SimTime(10), None);
        l.on_copy_dropped(1500, 2500);
        let copies: Vec<u16> = l.as_slice().iter().map(|r| r.copies).collect();
        assert_eq!(copies, vec![2, 0, 0]);
        l.take_acked(1000, |_, _| {});
        l.on_copy_dropped(0, 1000);
        let copies: Vec<u16> = l.as_slice().iter().map(|r| r.copies).collect();
        assert_eq!(copies, vec![0, 0], "a drop of acknowledged bytes changes nothing");
    }
}
