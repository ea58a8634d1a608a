//! Local congestion: a host's full NIC queue as a congestion signal (Linux
//! `tcp_transmit_skb`: when the device queue refuses a segment, `err > 0`,
//! "tcp_enter_cwr(tp)").
//!
//! **Models:** with `tcp.local_congestion` and a NIC queue limit
//! (`link.tx_queue`), a sender that has a segment to send while its host's
//! NIC queue is full has it refused — pfifo_fast drops the clone TCP handed
//! it and returns NET_XMIT_DROP; the data stays in the socket and goes later,
//! as without the setting — and enters Linux's CWR state unless it is in loss
//! recovery, after a timeout, or already there (`tcp_enter_cwr`,
//! `__tcp_enter_cwr`): ssthresh is what the algorithm sets at a loss, from
//! cwnd (`tcp_recalc_ssthresh`: max(cwnd/2, 2) segments for Reno), cwnd =
//! min(cwnd, packets in flight + 1), and SND.NXT is kept (`high_seq`). In CWR
//! no ACK grows cwnd (`tcp_may_raise_cwnd`), and each ACK of new data runs
//! `tcp_cwnd_down`: one segment less on every second ACK while cwnd is above
//! ssthresh/2, and never more than the flight plus one segment. The first
//! ACK beyond `high_seq` ends it with cwnd = min(cwnd, ssthresh)
//! (`tcp_complete_cwr`). Before TCP Small Queues (Linux 3.6) one bulk flow
//! filled its host's queue (`txqueuelen`, 100 frames before 2.6) whenever a
//! slow-start burst outgrew it, which ended slow start on a long path.
//! **Deliberately different:** duplicate ACKs in CWR do not run
//! `tcp_cwnd_down`; loss recovery or a timeout during CWR ends it and makes
//! its own cut (Linux enters recovery from CWR without cutting ssthresh again).
//! **Not modelled:** the CWR flag ECN would send (`TCP_ECN_queue_cwr`),
//! NET_XMIT_CN.

/// One sender's CWR state after a refused segment.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalCongestion {
    /// The setting is on.
    enabled: bool,
    /// SND.NXT when CWR began (`high_seq`), while in CWR.
    high: Option<u64>,
    /// An odd ACK has come since the last decrement (`snd_cwnd_cnt`).
    odd_ack: bool,
}

/// What the congestion window becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwrWindow {
    /// cwnd in bytes.
    pub cwnd: u64,
    /// ssthresh in bytes.
    pub ssthresh: u64,
}

impl LocalCongestion {
    /// Local congestion as a signal (`enabled`) or not.
    pub fn new(enabled: bool) -> Self {
        LocalCongestion { enabled, ..Self::default() }
    }

    /// True when the setting is on.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// True while in CWR.
    #[inline]
    pub fn active(&self) -> bool {
        self.high.is_some()
    }

    /// Leave CWR without its closing cut (loss recovery or a timeout took over).
    #[inline]
    pub fn cancel(&mut self) {
        self.high = None;
    }

    /// A segment was refused with SND.NXT at `snd_nxt`, `in_flight` bytes in
    /// flight and cwnd `w.cwnd`, ssthresh `w.ssthresh` the algorithm's cut of
    /// cwnd: the window entering CWR (`__tcp_enter_cwr`), or `None` when
    /// already in CWR.
    pub fn enter(&mut self, snd_nxt: u64, in_flight: u64, smss: u64, w: CwrWindow) -> Option<CwrWindow> {
        if self.high.is_some() {
            return None;
        }
        self.high = Some(snd_nxt);
        self.odd_ack = false;
        // "tp->snd_cwnd = min(tp->snd_cwnd, tcp_packets_in_flight(tp) + 1U)"
        Some(CwrWindow { cwnd: w.cwnd.min(in_flight + smss), ssthresh: w.ssthresh })
    }

    /// An ACK of new data up to `ack` in CWR, `in_flight` bytes in flight
    /// after it: the window `tcp_cwnd_down` leaves, or at the end of CWR
    /// `tcp_complete_cwr`'s. `None` outside CWR.
    pub fn on_ack(&mut self, ack: u64, in_flight: u64, smss: u64, w: CwrWindow) -> Option<u64> {
        let high = self.high?;
        if ack > high {
            // "CWR is to be held something *above* high_seq is ACKed".
            self.high = None;
            return Some(w.cwnd.min(w.ssthresh));
        }
        // "Decrease cwnd each second ack."
        let decrement = self.odd_ack;
        self.odd_ack = !self.odd_ack;
        let mut cwnd = w.cwnd;
        if decrement && cwnd > w.ssthresh / 2 {
            cwnd = cwnd.saturating_sub(smss).max(smss);
        }
        Some(cwnd.min(in_flight + smss))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn window(cwnd: u64, ssthresh: u64) -> CwrWindow {
        CwrWindow { cwnd: cwnd * MSS, ssthresh: ssthresh * MSS }
    }

    #[test]
    fn a_refused_segment_enters_cwr_once_with_cwnd_at_most_the_flight_plus_one() {
        let mut lc = LocalCongestion::new(true);
        let w = lc.enter(500 * MSS, 150 * MSS, MSS, window(200, 100)).unwrap();
        assert_eq!(w, window(151, 100));
        assert!(lc.active());
        assert_eq!(lc.enter(600 * MSS, 150 * MSS, MSS, window(151, 75)), None, "already in CWR");
    }

    #[test]
    fn in_cwr_every_second_ack_takes_a_segment_off_until_an_ack_passes_high_seq() {
        let mut lc = LocalCongestion::new(true);
        lc.enter(100 * MSS, 100 * MSS, MSS, window(100, 50));
        let mut cwnd = 100 * MSS;
        let mut seen = Vec::new();
        for ack in 1..=4 {
            cwnd = lc.on_ack(ack * MSS, 200 * MSS, MSS, CwrWindow { cwnd, ssthresh: 50 * MSS }).unwrap();
            seen.push(cwnd / MSS);
        }
        assert_eq!(seen, [100, 99, 99, 98]);
        // The ACK of high_seq itself holds CWR; the next one beyond it ends it at ssthresh.
        let held = lc.on_ack(100 * MSS, 200 * MSS, MSS, CwrWindow { cwnd, ssthresh: 50 * MSS });
        assert!(held.is_some() && lc.active());
        let end = lc.on_ack(101 * MSS, 200 * MSS, MSS, CwrWindow { cwnd, ssthresh: 50 * MSS });
        assert_eq!(end, Some(50 * MSS));
        assert!(!lc.active());
        assert_eq!(lc.on_ack(102 * MSS, 200 * MSS, MSS, window(50, 50)), None);
    }

    #[test]
    fn in_cwr_cwnd_follows_a_falling_flight() {
        let mut lc = LocalCongestion::new(true);
        lc.enter(100 * MSS, 100 * MSS, MSS, window(100, 50));
        assert_eq!(lc.on_ack(10 * MSS, 30 * MSS, MSS, window(100, 50)), Some(31 * MSS));
    }
}
