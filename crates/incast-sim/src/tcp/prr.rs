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
//! **Deliberately different:** PRR-SSRB as the RFC gives it; Linux's
//! `tcp_cwnd_reduction` adds the extra segment only when the ACK advanced
//! SND.UNA and marked nothing newly lost.
//! **Not modelled:** PRR on NewReno recovery without SACK (Linux runs it there
//! too, counting duplicate ACKs as delivered segments).

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
