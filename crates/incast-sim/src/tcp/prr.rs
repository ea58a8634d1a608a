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
//! Two flavors (`tcp.prr_flavor`): `"rfc6937"` counts in bytes as the RFC
//! does, with `RecoverFS` the data outstanding when recovery began and the
//! Slow Start Reduction Bound's extra segment on every ACK; `"linux"` is
//! `tcp_cwnd_reduction` (Linux 6.x, `net/ipv4/tcp_input.c`), which counts whole
//! packets, divides by the cwnd before recovery (`prior_cwnd`), adds the
//! extra segment only when the ACK advanced SND.UNA and marked nothing newly
//! lost, and lets at least one segment go while none has gone out yet in
//! recovery ("Force a fast retransmit upon entering fast recovery"), the
//! fast retransmission among them (`tcp_packets_in_flight` is taken before
//! it leaves; in the RFC flavor it goes beside the quota). Entering recovery
//! with pipe below ssthresh on an ACK that SACKed one segment, the RFC flavor
//! sends the fast retransmission and two more, Linux the fast retransmission
//! alone. `"ns3"` is ns-3.44's `TcpPrrRecovery` as `TcpSocketBase` calls it,
//! in bytes: `RecoverFS` is the pipe once the head is marked lost; an ACK
//! that SACKs new data counts one segment more than it delivered while
//! `prr_delivered` is below `RecoverFS` ("if (isDupAck && m_prrDelivered <
//! m_recoveryFlightSize) deliveredBytes += tcb->m_segmentSize", meant for
//! duplicate ACKs without SACK), so above ssthresh a SACK sender sends one
//! segment per such ACK where the RFC sends one per two; an ACK that both
//! SACKs and advances SND.UNA short of the recovery point is counted twice
//! (`DupAck` and the partial-ACK branch of `ProcessAck` each call
//! `DoRecovery`); the reduction bound's extra segment goes only on an ACK
//! that acknowledged a retransmission (`m_isRetransDataAcked`); at least the
//! fast retransmission goes out first; and its unsigned arithmetic is kept
//! (`prr_delivered · ssthresh` in 32 bits; `prr_delivered − prr_out` below
//! zero is the limit itself, not the larger of it and what was delivered).
//! Without SACK `"ns3"` runs as `"rfc6937"`.

/// Whose Proportional Rate Reduction the sender runs (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrrFlavor {
    /// RFC 6937 §3 with PRR-SSRB, in bytes.
    #[default]
    Rfc6937,
    /// Linux `tcp_cwnd_reduction`, in packets.
    Linux,
    /// ns-3.44 `TcpPrrRecovery` as `TcpSocketBase` calls it, in bytes.
    Ns3,
}

/// PRR state of one recovery episode.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    smss: u64,
    flavor: PrrFlavor,
    /// What the counts below count: bytes (RFC 6937) or segments of `smss` (Linux).
    unit: u64,
    /// `RecoverFS` (RFC 6937: bytes outstanding when recovery began) or
    /// Linux's `prior_cwnd` (segments of cwnd before it).
    recover_fs: u64,
    /// `prr_delivered`: delivered since recovery began.
    delivered: u64,
    /// `prr_out`: sent since recovery began.
    out: u64,
    /// Without SACK: duplicate ACKs counted as SACKed segments (Linux `sacked_out`).
    reno_sacked: u64,
}

impl Prr {
    /// `flavor`'s PRR for segments of `smss` bytes, no recovery yet.
    pub fn new(smss: u64, flavor: PrrFlavor) -> Self {
        let unit = match flavor {
            PrrFlavor::Rfc6937 | PrrFlavor::Ns3 => 1,
            PrrFlavor::Linux => smss,
        };
        Prr { smss, flavor, unit, ..Prr::default() }
    }

    /// Whose PRR this is.
    #[inline]
    pub fn flavor(&self) -> PrrFlavor {
        self.flavor
    }

    /// Recovery begins with `flight` bytes outstanding (ns-3: the pipe) and a
    /// window of `cwnd` bytes before its reduction (RFC 6937 §3: "RecoverFS =
    /// snd.nxt - snd.una", "prr_delivered = 0", "prr_out = 0"; Linux
    /// `tcp_init_cwnd_reduction`: "tp->prior_cwnd = tcp_snd_cwnd(tp)"; ns-3
    /// `TcpPrrRecovery::EnterRecovery`: "m_recoveryFlightSize =
    /// tcb->m_bytesInFlight").
    #[inline]
    pub fn enter(&mut self, flight: u64, cwnd: u64) {
        self.recover_fs = match self.flavor {
            PrrFlavor::Rfc6937 | PrrFlavor::Ns3 => flight,
            PrrFlavor::Linux => cwnd / self.smss,
        }
        .max(1);
        self.delivered = 0;
        self.out = 0;
    }

    /// An ACK in recovery delivered `delivered` bytes, leaving `pipe` bytes
    /// in the network, with slow-start threshold `ssthresh`: the new cwnd.
    /// `clean`: the ACK advanced SND.UNA and marked nothing newly lost, which
    /// Linux asks of the reduction bound's extra segment.
    #[inline]
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, clean: bool) -> u64 {
        let u = self.unit;
        let (delivered, in_flight, ssthresh) = (delivered.div_ceil(u), pipe.div_ceil(u), ssthresh / u);
        // "prr_delivered += DeliveredData"
        self.delivered += delivered;
        let mut sndcnt = if in_flight > ssthresh {
            // "sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out"
            let share = (u128::from(self.delivered) * u128::from(ssthresh)).div_ceil(u128::from(self.recover_fs));
            (share.min(u128::from(u64::MAX)) as u64).saturating_sub(self.out)
        } else {
            // PRR-SSRB: "limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS;
            // sndcnt = MIN(ssthresh - pipe, limit)"; Linux: "if (flag &
            // FLAG_SND_UNA_ADVANCED && !newly_lost) sndcnt++".
            let extra = match self.flavor {
                PrrFlavor::Rfc6937 | PrrFlavor::Ns3 => self.smss,
                PrrFlavor::Linux => u64::from(clean),
            };
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + extra;
            (ssthresh - in_flight).min(limit)
        };
        if self.flavor == PrrFlavor::Linux && self.out == 0 {
            // "Force a fast retransmit upon entering fast recovery".
            sndcnt = sndcnt.max(1);
        }
        // "cwnd = pipe + sndcnt"
        pipe + sndcnt * u
    }

    /// ns-3's PRR after an ACK in SACK recovery that delivered `delivered`
    /// bytes, leaving `pipe` bytes in the network, with slow-start threshold
    /// `ssthresh`: `sacked` when it SACKed new data (ns-3's duplicate ACK),
    /// `partial` when it also advanced SND.UNA by at least a segment short of
    /// the recovery point, `resent_acked` when what it acknowledged had been
    /// retransmitted. The new cwnd, or `None` when ns-3 leaves cwnd alone.
    #[inline]
    pub fn on_ns3_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: u64,
        sacked: bool,
        partial: bool,
        resent_acked: bool,
    ) -> Option<u64> {
        // ProcessAck: "DupAck(currentDelivered)" -> "DoRecovery(m_tcb, currentDelivered,
        // true)", then for a partial ACK "DoRecovery(m_tcb, currentDelivered, false)".
        let mut cwnd = None;
        for dup in [true, false] {
            if (dup && sacked) || (!dup && partial) {
                cwnd = self.ns3_do_recovery(delivered, pipe, ssthresh, dup, resent_acked).or(cwnd);
            }
        }
        cwnd
    }

    /// ns-3.44 `TcpPrrRecovery::DoRecovery`, quoted line by line.
    fn ns3_do_recovery(&mut self, delivered: u64, pipe: u64, ssthresh: u64, dup: bool, safe: bool) -> Option<u64> {
        let mss = self.smss as i64;
        let mut delivered = delivered;
        // "if (isDupAck && m_prrDelivered < m_recoveryFlightSize) deliveredBytes += tcb->m_segmentSize"
        if dup && self.delivered < self.recover_fs {
            delivered += self.smss;
        }
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let send = if pipe > ssthresh {
            // "std::ceil(m_prrDelivered * tcb->m_ssThresh * 1.0 / m_recoveryFlightSize) - m_prrOut",
            // the product in 32 bits.
            let product = (self.delivered as u32).wrapping_mul(ssthresh as u32);
            (f64::from(product) / self.recover_fs as f64).ceil() as i64 - self.out as i64
        } else {
            // "int limit = std::max(m_prrDelivered - m_prrOut, deliveredBytes)" in unsigned
            // arithmetic: a negative difference wraps above everything, then back below zero.
            let mut limit = match self.delivered.checked_sub(self.out) {
                Some(ahead) => ahead.max(delivered) as i64,
                None => self.delivered as i64 - self.out as i64,
            };
            // "if (safeACK) limit += tcb->m_segmentSize"
            if safe {
                limit += mss;
            }
            limit.min((ssthresh - pipe) as i64)
        };
        // "Force a fast retransmit upon entering fast recovery"
        let send = send.max(if self.out > 0 { 0 } else { mss });
        // "tcb->m_cWnd = tcb->m_bytesInFlight + sendCount"
        Some((pipe as i64 + send).max(0) as u64)
    }

    /// NewReno recovery without SACK begins: `flight` bytes outstanding after
    /// `dupacks` duplicate ACKs, the last of which is then handed to
    /// [`Prr::on_reno_ack`] (Linux counts the duplicates before recovery too).
    #[inline]
    pub fn enter_reno(&mut self, flight: u64, cwnd: u64, dupacks: u32) {
        self.enter(flight, cwnd);
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
        // Linux marks each new head lost on a partial ACK (tcp_newreno_mark_lost):
        // never the reduction bound's extra segment. Its head's retransmission
        // takes one of the segments sndcnt allows.
        let pending = if head_lost && self.flavor == PrrFlavor::Linux { self.smss } else { 0 };
        Some((self.on_ack(delivered * self.smss, pipe, ssthresh, false) + (flight - pipe)).saturating_sub(pending))
    }

    /// `bytes` went out during recovery ("prr_out += (data sent)").
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes.div_ceil(self.unit);
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
        let mut p = Prr::new(MSS, PrrFlavor::Rfc6937);
        p.enter(20 * MSS, 20 * MSS);
        let mut sent = 0;
        for delivered in 1..=8 {
            let pipe = 19 * MSS - delivered * MSS + sent;
            let cwnd = p.on_ack(MSS, pipe, 10 * MSS, false);
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
        let mut p = Prr::new(MSS, PrrFlavor::Rfc6937);
        p.enter_reno(20 * MSS, 20 * MSS, 3);
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
        let mut full = Prr::new(MSS, PrrFlavor::Rfc6937);
        full.enter_reno(4 * MSS, 4 * MSS, 3);
        assert!(full.on_reno_ack(0, 4 * MSS, true, 2 * MSS).is_some());
        assert_eq!(full.on_reno_ack(0, 4 * MSS, false, 2 * MSS), None);
    }

    /// RFC 6937 §3 (PRR-SSRB): below ssthresh, cwnd grows back toward it, at
    /// most one segment more than was delivered on this ACK.
    #[test]
    fn rfc6937_3_slow_start_reduction_bound_below_ssthresh() {
        let mut p = Prr::new(MSS, PrrFlavor::Rfc6937);
        p.enter(20 * MSS, 20 * MSS);
        assert_eq!(p.on_ack(2 * MSS, 4 * MSS, 10 * MSS, false), 4 * MSS + 3 * MSS, "delivered 2 + 1 MSS");
        p.on_sent(3 * MSS);
        assert_eq!(p.on_ack(MSS, 9 * MSS + 500, 10 * MSS, false), 10 * MSS, "never beyond ssthresh");
    }

    /// Linux `tcp_cwnd_reduction` on the ACK that starts recovery: 16 segments
    /// out, 3 SACKed and 7 marked lost (pipe 6), cwnd 12 before it, ssthresh 8,
    /// one segment newly SACKed. Below ssthresh the RFC's bound lets 2 go;
    /// Linux adds its extra segment only when SND.UNA advanced, so 1 (the
    /// fast retransmission) goes.
    #[test]
    fn linux_entering_recovery_below_ssthresh_sends_the_fast_retransmission_alone() {
        let (mut rfc, mut linux) = (Prr::new(MSS, PrrFlavor::Rfc6937), Prr::new(MSS, PrrFlavor::Linux));
        rfc.enter(16 * MSS, 12 * MSS);
        linux.enter(16 * MSS, 12 * MSS);
        assert_eq!(rfc.on_ack(MSS, 6 * MSS, 8 * MSS, false), 8 * MSS, "RFC 6937: delivered 1 + 1 MSS");
        assert_eq!(linux.on_ack(MSS, 6 * MSS, 8 * MSS, false), 7 * MSS, "Linux: max(1 - 0, 1)");
        linux.on_sent(MSS);
        // A later ACK that advances SND.UNA and marks nothing lost earns the extra segment.
        assert_eq!(linux.on_ack(MSS, 6 * MSS, 8 * MSS, true), 8 * MSS, "max(2 - 1, 1) + 1");
    }

    /// Linux above ssthresh: whole packets, divided by the cwnd before recovery
    /// (prior_cwnd 20, not the 25 segments outstanding), rounded up; and at
    /// least the fast retransmission while nothing has gone out.
    #[test]
    fn linux_counts_packets_against_the_cwnd_before_recovery() {
        let mut p = Prr::new(MSS, PrrFlavor::Linux);
        p.enter(25 * MSS, 20 * MSS);
        // ceil(10 · 1 / 20) = 1 segment; the RFC in bytes gives 400 (10 · 1000 / 25).
        assert_eq!(p.on_ack(MSS, 18 * MSS, 10 * MSS, false), 19 * MSS);
        p.on_sent(MSS);
        // ceil(10 · 2 / 20) − 1 = 0: nothing more.
        assert_eq!(p.on_ack(MSS, 17 * MSS, 10 * MSS, false), 17 * MSS);
        // ceil(10 · 4 / 20) − 1 = 1 after two more delivered.
        assert_eq!(p.on_ack(2 * MSS, 15 * MSS, 10 * MSS, false), 16 * MSS);
        // Without SACK (the reno test above): the third duplicate ACK allows one
        // segment, which the head's retransmission takes: nothing new goes.
        let mut reno = Prr::new(MSS, PrrFlavor::Linux);
        reno.enter_reno(20 * MSS, 20 * MSS, 3);
        assert_eq!(reno.on_reno_ack(0, 20 * MSS, true, 10 * MSS), Some(20 * MSS));
    }

    /// ns-3's PRR above ssthresh: each ACK that SACKs one new segment counts
    /// two (the segment and "deliveredBytes += tcb->m_segmentSize"), so with
    /// ssthresh half of RecoverFS one segment goes per such ACK, where the RFC
    /// sends one per two; at entry the fast retransmission alone.
    #[test]
    fn ns3_sends_a_segment_per_sacking_ack_where_the_rfc_sends_one_per_two() {
        let mut p = Prr::new(MSS, PrrFlavor::Ns3);
        p.enter(10 * MSS, 20 * MSS);
        // delivered 2, ceil(2 · 5 / 10) = 1: cwnd = pipe + 1, the fast retransmission.
        assert_eq!(p.on_ns3_ack(MSS, 10 * MSS, 5 * MSS, true, false, false), Some(11 * MSS));
        p.on_sent(MSS);
        let mut sent = 1;
        for pipe in [10, 10, 10, 10] {
            let cwnd = p.on_ns3_ack(MSS, pipe * MSS, 5 * MSS, true, false, false).unwrap();
            let send = cwnd.saturating_sub(pipe * MSS) / MSS;
            p.on_sent(send * MSS);
            sent += send;
        }
        assert_eq!(sent, 5, "one per ACK; RFC 6937 would have sent 1 + 2");
        // Once prr_delivered reaches RecoverFS the extra segment stops: ceil(11 · 5 / 10) − 5.
        assert_eq!(p.on_ns3_ack(MSS, 10 * MSS, 5 * MSS, true, false, false), Some(10 * MSS + MSS / 2));
        // An ACK that delivers nothing leaves cwnd alone.
        assert_eq!(p.on_ns3_ack(0, 10 * MSS, 5 * MSS, false, false, false), None);
    }

    /// ns-3's PRR below ssthresh: an ACK that both SACKs and advances SND.UNA
    /// runs `DoRecovery` twice; a `prr_out` above `prr_delivered` is itself
    /// the limit (unsigned arithmetic), so nothing goes where max(prr_delivered
    /// − prr_out, delivered) would send a segment, even with the reduction
    /// bound's extra segment of an ACK that acknowledged a retransmission.
    #[test]
    fn ns3_counts_a_partial_sacking_ack_twice_and_keeps_its_unsigned_limit() {
        let mut p = Prr::new(MSS, PrrFlavor::Ns3);
        p.enter(4 * MSS, 8 * MSS);
        p.on_sent(6 * MSS);
        // delivered 1 (+1 as a duplicate): the limit is 2 − 6 = −4, not max(−4, 2).
        assert_eq!(p.on_ns3_ack(MSS, 3 * MSS, 4 * MSS, true, false, false), Some(3 * MSS));
        // A partial ACK of a retransmission: 3 − 6 + 1 = −2, still nothing.
        assert_eq!(p.on_ns3_ack(MSS, 3 * MSS, 4 * MSS, false, true, true), Some(3 * MSS));
        let mut twice = Prr::new(MSS, PrrFlavor::Ns3);
        twice.enter(4 * MSS, 8 * MSS);
        twice.on_sent(MSS);
        // Both calls in one ACK: delivered 2 then 1 more; min(limit, ssthresh - pipe = 2).
        assert_eq!(twice.on_ns3_ack(MSS, 2 * MSS, 4 * MSS, true, true, false), Some(4 * MSS));
        assert_eq!(twice.delivered, 3 * MSS);
    }
}
