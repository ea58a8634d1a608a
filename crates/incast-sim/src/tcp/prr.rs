//! Proportional Rate Reduction (RFC 6937): how much SACK recovery sends per ACK.
//!
//! **Models:** RFC 6937 §3 with the Slow Start Reduction Bound (PRR-SSRB), on
//! RFC 6675 recovery (`tcp::sack`). Recovery starts with `RecoverFS` = the
//! data outstanding, `prr_delivered` and `prr_out` at zero; every ACK adds
//! what it newly delivered (cumulatively or by SACK) to `prr_delivered`, and
//! sets cwnd = pipe + sndcnt, where sndcnt spreads the window reduction over
//! the round trip while pipe exceeds ssthresh (`CEIL(prr_delivered ·
//! ssthresh / RecoverFS) − prr_out`) and grows back toward ssthresh, at most
//! a segment beyond what was delivered, once pipe has fallen below it. Every
//! segment sent during recovery counts in `prr_out`. Recovery ends with cwnd =
//! ssthresh (Linux `tcp_end_cwnd_reduction`). Without it (RFC 6675 alone),
//! cwnd drops to ssthresh at once and nothing is sent until pipe falls below
//! it, then a burst may follow.
//! Without SACK (NewReno recovery, `tcp::newreno`) PRR runs as Linux runs it
//! for a reno connection: each duplicate ACK counts as one segment SACKed and
//! delivered (`tcp_add_reno_sack`, at most all but one segment outstanding),
//! a partial ACK of k segments delivers max(k − counted, 1) and takes k − 1
//! from the count (`tcp_remove_reno_sacks`), pipe is what is outstanding less
//! the count and, until its retransmission leaves, the head marked lost
//! (`tcp_packets_in_flight`), and the window inflation of RFC 5681 gives way
//! to cwnd = pipe + sndcnt (`tcp_cwnd_reduction`, which Linux calls in every
//! recovery).
//! **Deliberately different:** PRR-SSRB as the RFC gives it; Linux's
//! `tcp_cwnd_reduction` adds the extra segment only when the ACK advanced
//! SND.UNA and marked nothing newly lost. RecoverFS is the data outstanding
//! (the RFC), where Linux divides by the cwnd before recovery.

/// PRR state of one recovery episode.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    smss: u64,
    /// `RecoverFS`: bytes outstanding when recovery began.
    recover_fs: u64,
    /// `prr_delivered`: bytes delivered since recovery began.
    delivered: u64,
    /// `prr_out`: bytes sent since recovery began.
    out: u64,
    /// Without SACK: duplicate ACKs counted as SACKed segments (Linux `sacked_out`).
    reno_sacked: u64,
}

impl Prr {
    /// PRR for segments of `smss` bytes, no recovery yet.
    pub fn new(smss: u64) -> Self {
        Prr { smss, ..Prr::default() }
    }

    /// Recovery begins with `flight` bytes outstanding (RFC 6937 §3:
    /// "RecoverFS = snd.nxt - snd.una", "prr_delivered = 0", "prr_out = 0").
    #[inline]
    pub fn enter(&mut self, flight: u64) {
        self.recover_fs = flight.max(1);
        self.delivered = 0;
        self.out = 0;
    }

    /// An ACK in recovery delivered `delivered` bytes, leaving `pipe` bytes
    /// in the network, with slow-start threshold `ssthresh`: the new cwnd.
    #[inline]
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64) -> u64 {
        // "prr_delivered += DeliveredData"
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // "sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out"
            let share = (u128::from(self.delivered) * u128::from(ssthresh)).div_ceil(u128::from(self.recover_fs));
            (share.min(u128::from(u64::MAX)) as u64).saturating_sub(self.out)
        } else {
            // PRR-SSRB: "limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS;
            // sndcnt = MIN(ssthresh - pipe, limit)"
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + self.smss;
            (ssthresh - pipe).min(limit)
        };
        // "cwnd = pipe + sndcnt"
        pipe + sndcnt
    }

    /// NewReno recovery without SACK begins: `flight` bytes outstanding after
    /// `dupacks` duplicate ACKs, the last of which is then handed to
    /// [`Prr::on_reno_ack`] (Linux counts the duplicates before recovery too).
    #[inline]
    pub fn enter_reno(&mut self, flight: u64, dupacks: u32) {
        self.enter(flight);
        self.reno_sacked = u64::from(dupacks.saturating_sub(1));
    }

    /// Without SACK, an ACK in NewReno recovery: a duplicate (`acked` 0) or a
    /// partial ACK of `acked` bytes, leaving `flight` bytes outstanding from
    /// SND.UNA; `head_lost` while the head's retransmission has yet to leave.
    /// The new cwnd as the sender counts it (all outstanding data, the
    /// counted duplicates included), or `None` when the ACK delivered nothing
    /// (Linux leaves cwnd alone).
    #[inline]
    pub fn on_reno_ack(&mut self, acked: u64, flight: u64, head_lost: bool, ssthresh: u64) -> Option<u64> {
        let delivered = if acked == 0 {
            // tcp_add_reno_sack, tcp_limit_reno_sacked: at most all but one segment.
            let before = self.reno_sacked;
            self.reno_sacked = (before + 1).min(flight.div_ceil(self.smss).saturating_sub(1));
            self.reno_sacked.saturating_sub(before)
        } else {
            // tcp_remove_reno_sacks: "One ACK acked hole. The rest eat duplicate ACKs."
            let k = acked.div_ceil(self.smss);
            let d = k.saturating_sub(self.reno_sacked).max(1);
            self.reno_sacked = self.reno_sacked.saturating_sub(k - 1);
            d
        };
        if delivered == 0 {
            return None;
        }
        let sacked = (self.reno_sacked * self.smss).min(flight);
        let pipe = (flight - sacked).saturating_sub(if head_lost { self.smss } else { 0 });
        Some(self.on_ack(delivered * self.smss, pipe, ssthresh) + (flight - pipe))
    }

    /// `bytes` went out during recovery ("prr_out += (data sent)").
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 §3 (example of its Figure 1 shape): 20 segments outstanding,
    /// ssthresh 10; while pipe stays above ssthresh, one segment goes out for
    /// every two delivered, so the reduction is spread over the round trip.
    #[test]
    fn rfc6937_3_one_segment_per_two_delivered_above_ssthresh() {
        let mut p = Prr::new(MSS);
        p.enter(20 * MSS);
        let mut sent = 0;
        for delivered in 1..=8 {
            let pipe = 19 * MSS - delivered * MSS + sent;
            let cwnd = p.on_ack(MSS, pipe, 10 * MSS);
            let send = cwnd.saturating_sub(pipe);
            p.on_sent(send);
            sent += send;
        }
        assert_eq!(sent, 4 * MSS, "half of what was delivered (ssthresh / RecoverFS)");
    }

    /// Linux reno (no SACK): 20 segments out, ssthresh 10. The third duplicate
    /// ACK enters recovery: 3 counted as SACKed, the head lost, pipe 16, one
    /// segment delivered → sndcnt half a segment, no room beyond the head's
    /// retransmission (which leaves regardless). Each later duplicate
    /// delivers a segment, and whole new segments go out at half that pace. A
    /// partial ACK of 5 segments delivers max(5 − 9, 1) and takes 4 from the
    /// 9 counted.
    #[test]
    fn linux_reno_prr_counts_duplicate_acks_as_delivered() {
        let mut p = Prr::new(MSS);
        p.enter_reno(20 * MSS, 3);
        let cwnd = p.on_reno_ack(0, 20 * MSS, true, 10 * MSS).expect("delivered one");
        assert_eq!(cwnd, 20 * MSS + MSS / 2, "less than a segment beyond what is out");
        p.on_sent(MSS);
        let mut new = 0;
        for _ in 0..6 {
            let cwnd = p.on_reno_ack(0, 20 * MSS + new, false, 10 * MSS).expect("delivered one");
            let send = cwnd.saturating_sub(20 * MSS + new) / MSS * MSS;
            p.on_sent(send);
            new += send;
        }
        assert_eq!(new, 2 * MSS, "7 delivered × 10/20 = 3.5 segments: the retransmission and 2 new");
        assert_eq!(p.reno_sacked, 9);
        assert!(p.on_reno_ack(5 * MSS, 15 * MSS + new, true, 10 * MSS).is_some());
        assert_eq!(p.reno_sacked, 5, "9 less the 4 a 5-segment partial ACK eats");
        // At most all but one segment counts: a duplicate beyond that delivers nothing.
        let mut full = Prr::new(MSS);
        full.enter_reno(4 * MSS, 3);
        assert!(full.on_reno_ack(0, 4 * MSS, true, 2 * MSS).is_some());
        assert_eq!(full.on_reno_ack(0, 4 * MSS, false, 2 * MSS), None);
    }

    /// RFC 6937 §3 (PRR-SSRB): below ssthresh, cwnd grows back toward it, at
    /// most one segment more than was delivered on this ACK.
    #[test]
    fn rfc6937_3_slow_start_reduction_bound_below_ssthresh() {
        let mut p = Prr::new(MSS);
        p.enter(20 * MSS);
        assert_eq!(p.on_ack(2 * MSS, 4 * MSS, 10 * MSS), 4 * MSS + 3 * MSS, "delivered 2 + 1 MSS");
        p.on_sent(3 * MSS);
        assert_eq!(p.on_ack(MSS, 9 * MSS + 500, 10 * MSS), 10 * MSS, "never beyond ssthresh");
    }
}
