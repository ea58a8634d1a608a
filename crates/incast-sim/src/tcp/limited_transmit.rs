//! Limited transmit (RFC 3042): new data on the first two duplicate ACKs.
//!
//! **Models:** while not in fast recovery, each of the first two duplicate
//! ACKs lets the sender put one more segment of NEW data in flight than cwnd
//! allows — the usable window is min(cwnd + min(dupacks, 2)·SMSS, peer
//! window) − FlightSize — without changing cwnd; data sent this way is left
//! out of FlightSize when the fast retransmit computes ssthresh (RFC 5681 3.2
//! step 2). Off by default (FAST08 Table 1).
//! With `tcp.limited_transmit_resends`, the allowance also sends the next
//! segment in sequence when it was sent before: after a timeout has rewound
//! SND.NXT (go-back-N), the first duplicate ACKs each push out one more
//! resend beyond cwnd, as ns-2.35's `singledup_` does (`NewRenoTcpAgent::recv`
//! calls `send_one`, which sends `t_seqno_`, and `TcpAgent::timeout` has set
//! `t_seqno_ = highest_ack_ + 1`; tcp/tcp-newreno.cc, tcp/tcp.cc). RFC 3042
//! allows new data only, the default.
//! **Deliberately different:** nothing; the allowance counts duplicate ACKs
//! as `tcp::newreno` does, so it ends at the fast retransmit or with the
//! next ACK of new data.
//! **Not modelled:** the SACK variant of the "new data only" rule, and
//! early retransmit (RFC 5827).

/// Limited-transmit book-keeping of one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct LimitedTransmit {
    enabled: bool,
    /// Data sent before may go out under the allowance (ns-2.35).
    resends: bool,
    /// Bytes sent beyond cwnd under the allowance since the last ACK of new data.
    sent: u64,
}

impl LimitedTransmit {
    /// Limited transmit on (`enabled`) or off; `resends`: for data sent
    /// before too, not only new data.
    pub fn new(enabled: bool, resends: bool) -> Self {
        LimitedTransmit { enabled, resends, sent: 0 }
    }

    /// May the allowance send the segment at SND.NXT, which was sent before
    /// when `rewound` (SND.NXT below SND.MAX)?
    #[inline]
    pub fn may_send(&self, rewound: bool) -> bool {
        !rewound || self.resends
    }

    /// Bytes the usable window may exceed cwnd by after `dupacks` duplicate
    /// ACKs; 0 when off or in fast recovery.
    #[inline]
    pub fn allowance(&self, dupacks: u32, in_recovery: bool, smss: u64) -> u64 {
        if !self.enabled || in_recovery {
            return 0;
        }
        // RFC 3042 (2): "a TCP SHOULD send a new data segment in response to each
        // of the first two duplicate acknowledgments that arrive at the sender"
        // ... "the amount of outstanding data would remain less than or equal to
        // the congestion window plus 2 segments."
        dupacks.min(2) as u64 * smss
    }

    /// `len` bytes of new data went out only because of the allowance.
    #[inline]
    pub fn on_sent(&mut self, len: u64) {
        self.sent += len;
    }

    /// Bytes sent under the allowance that FlightSize must not count when the
    /// fast retransmit sets ssthresh.
    #[inline]
    pub fn excluded(&self) -> u64 {
        self.sent
    }

    /// An ACK of new data, a fast retransmit or a timeout ends the episode.
    #[inline]
    pub fn reset(&mut self) {
        self.sent = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3042 (2): one extra segment per duplicate ACK, at most two, none
    /// in fast recovery or when off.
    #[test]
    fn rfc3042_2_allowance_is_two_segments_at_most() {
        let lt = LimitedTransmit::new(true, false);
        let got: Vec<u64> = (0..4).map(|d| lt.allowance(d, false, 1000)).collect();
        assert_eq!(got, vec![0, 1000, 2000, 2000]);
        assert_eq!(lt.allowance(2, true, 1000), 0);
        assert_eq!(LimitedTransmit::new(false, false).allowance(2, false, 1000), 0);
    }

    /// RFC 5681 (3.2 step 2): limited-transmit bytes are excluded until reset.
    #[test]
    fn rfc5681_3_2_step2_excluded_bytes_reset() {
        let mut lt = LimitedTransmit::new(true, false);
        lt.on_sent(1000);
        lt.on_sent(500);
        assert_eq!(lt.excluded(), 1500);
        lt.reset();
        assert_eq!(lt.excluded(), 0);
    }
}
