//! Spurious retransmission timeouts: F-RTO (RFC 5682) and Eifel detection
//! (RFC 3522), and the undo of the timeout's window reduction.
//!
//! **Models:**
//! - F-RTO, the basic algorithm of RFC 5682 §2.1, on SACK and non-SACK
//!   connections alike. On a timeout that does not fall inside an earlier
//!   timeout's recovery (RFC 5682 §2.1 step 1: not if `recover` ≥ SND.UNA) the
//!   sender retransmits SND.UNA's segment as usual. Step 2: if the first ACK
//!   after it is a duplicate, reaches `recover` (SND.MAX at the timeout), or
//!   does not cover the whole retransmitted segment, the timeout stands and
//!   go-back-N goes on; otherwise the sender sends up to two new segments
//!   instead of retransmitting (or, with nothing new to send or no peer window
//!   for it, the timeout stands). Step 3: a duplicate ACK next means real loss
//!   (cwnd ≤ 3·SMSS, go-back-N from SND.UNA); an ACK that advances SND.UNA
//!   acknowledges data that was never retransmitted, so the timeout was spurious.
//! - Eifel detection (RFC 3522 §2): the sender remembers the TSval of the
//!   timeout's first retransmission (RetransmitTS); if the first ACK that
//!   acknowledges new data echoes an older TSval, the original segment's ACK
//!   came back and the timeout was spurious. Needs the timestamps option.
//!   With 1 ms timestamp ticks a retransmission within the original's tick
//!   cannot be told apart — true of Linux too; a finer `timestamp_tick` can.
//! - The response to a spurious timeout: cwnd and ssthresh go back to at
//!   least their values before the timeout (Linux `tcp_undo_cwnd_reduction`:
//!   cwnd = max(cwnd, prior cwnd), ssthresh = max(ssthresh, prior ssthresh)),
//!   sending resumes with new data at SND.MAX instead of go-back-N (RFC 4015
//!   §3 step 4), and `recover` moves to SND.UNA so a later loss can
//!   fast-retransmit (RFC 5682 §2.1 step 3b). The timeout's record is marked
//!   `spurious` (`tcp::forensics`).
//!
//! **Deliberately different:** RFC 4015's cwnd of FlightSize + min(bytes
//! acked, IW) is not used: the issue this simulator serves asks for the undo,
//! and Linux restores the prior window in full.
//! **Not modelled:** the SACK-enhanced F-RTO of RFC 5682 §3 (the basic
//! algorithm runs on SACK connections too), RFC 4015's RTO re-initialization,
//! D-SACK based undo (RFC 3708), undo of fast retransmits.

use super::timestamps::before;

/// How a sender detects that a retransmission timeout was spurious (the
/// original segment was delayed, not lost); either way a spurious timeout's
/// cwnd and ssthresh reduction is undone (`tcp::spurious`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpuriousRto {
    /// No detection: every timeout stands.
    #[default]
    Off,
    /// F-RTO (RFC 5682 §2 basic, §3 with SACK): send new data after the
    /// retransmission and judge by the next two ACKs.
    Frto,
    /// Eifel detection (RFC 3522): the first ACK after the retransmission
    /// echoes a timestamp older than the retransmission's.
    Eifel,
}

/// What the sender must do after an ACK, as decided by the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing changes.
    Continue,
    /// F-RTO step 2b: send up to two new segments from SND.MAX instead of retransmitting.
    SendNew,
    /// F-RTO step 3a: the loss was real: cwnd ≤ 3·SMSS, go-back-N from SND.UNA.
    Conventional,
    /// The timeout was spurious: undo it.
    Spurious,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// RFC 3522: waiting for the first ACK of new data; RetransmitTS once sent.
    Eifel {
        retransmit_ts: Option<u32>,
    },
    /// RFC 5682 step 2: waiting for the first ACK after the retransmission of
    /// `[SND.UNA, rtx_end)`; `recover` is SND.MAX at the timeout.
    FrtoFirst {
        rtx_end: u64,
        recover: u64,
    },
    /// RFC 5682 step 3: new data sent; waiting for the next ACK.
    FrtoSecond,
}

/// Spurious-timeout detection state of one sender.
#[derive(Clone, Copy, Debug)]
pub struct SpuriousDetector {
    mode: SpuriousRto,
    state: State,
    /// SND.MAX at the latest timeout: its recovery lasts until SND.UNA passes it.
    rto_recover: Option<u64>,
    /// cwnd and ssthresh before the timeout being judged.
    prior: (u64, u64),
}

impl SpuriousDetector {
    /// A detector running `mode`.
    pub fn new(mode: SpuriousRto) -> Self {
        SpuriousDetector { mode, state: State::Idle, rto_recover: None, prior: (0, 0) }
    }

    /// cwnd and ssthresh before the timeout being judged, to restore on undo.
    #[inline]
    pub fn prior(&self) -> (u64, u64) {
        self.prior
    }

    /// The retransmission timer expired with SND.UNA's segment `[snd_una,
    /// rtx_end)` about to be resent, SND.MAX = `snd_max`, and `cwnd` and
    /// `ssthresh` not yet reduced; `repeated` when this segment had already
    /// timed out.
    pub fn on_timeout(&mut self, snd_una: u64, rtx_end: u64, snd_max: u64, cwnd: u64, ssthresh: u64, repeated: bool) {
        // RFC 5682 (2.1 step 1): "If the TCP sender is already in RTO recovery
        // AND "recover" is larger than or equal to SND.UNA, do not enter step 2".
        let in_rto_recovery = self.rto_recover.is_some_and(|r| r > snd_una);
        self.rto_recover = Some(snd_max);
        self.state = match self.mode {
            SpuriousRto::Off => State::Idle,
            SpuriousRto::Frto if in_rto_recovery => State::Idle,
            SpuriousRto::Frto => State::FrtoFirst { rtx_end, recover: snd_max },
            // RFC 3522 (2): RetransmitTS is the first retransmission's; a
            // repeated timeout keeps it.
            SpuriousRto::Eifel if repeated => self.state,
            SpuriousRto::Eifel => State::Eifel { retransmit_ts: None },
        };
        if !repeated && self.state != State::Idle {
            self.prior = (cwnd, ssthresh);
        }
    }

    /// A retransmission went out with TSval `tsval` (Eifel's RetransmitTS, the first time).
    #[inline]
    pub fn on_retransmission_sent(&mut self, tsval: u32) {
        if let State::Eifel { retransmit_ts: ts @ None } = &mut self.state {
            *ts = Some(tsval);
        }
    }

    /// True when F-RTO or Eifel is on.
    pub fn is_on(&self) -> bool {
        self.mode != SpuriousRto::Off
    }

    /// True while the detector waits for an ACK (the sender asks before
    /// calling [`SpuriousDetector::on_ack`], to keep the common path short).
    #[inline]
    pub fn armed(&self) -> bool {
        self.state != State::Idle
    }

    /// An acceptable ACK of `ack` arrived while SND.UNA was `snd_una`; `dup`
    /// when it is a duplicate ACK (RFC 5681 §2), `ecr` its TSecr if any.
    pub fn on_ack(&mut self, ack: u64, snd_una: u64, dup: bool, ecr: Option<u32>) -> Verdict {
        let advances = ack > snd_una;
        match self.state {
            State::Idle => Verdict::Continue,
            State::Eifel { retransmit_ts } => {
                if !advances {
                    return Verdict::Continue;
                }
                self.state = State::Idle;
                // RFC 3522 (2 step 3): "If the value of the Timestamp Echo Reply
                // field of the acceptable ACK's Timestamps option is smaller than
                // the value of RetransmitTS" the timeout was spurious.
                match (retransmit_ts, ecr) {
                    (Some(rts), Some(e)) if before(e, rts) => Verdict::Spurious,
                    _ => Verdict::Continue,
                }
            }
            State::FrtoFirst { rtx_end, recover } => {
                if !dup && !advances {
                    return Verdict::Continue; // a window update: not an ACK F-RTO counts
                }
                // RFC 5682 (2.1 step 2a): "If ... the acknowledgment is a duplicate
                // ACK, OR the Acknowledgment field covers "recover" but not more
                // than "recover", OR the acknowledgment does not acknowledge all
                // of the data that was retransmitted in step 1" — revert.
                if dup || ack >= recover || ack < rtx_end {
                    self.state = State::Idle;
                    return Verdict::Continue;
                }
                self.state = State::FrtoSecond;
                Verdict::SendNew
            }
            State::FrtoSecond => {
                if !dup && !advances {
                    return Verdict::Continue;
                }
                self.state = State::Idle;
                // RFC 5682 (2.1 step 3a): a duplicate ACK — conventional recovery;
                // (3b): an ACK that acknowledges data not retransmitted — spurious.
                if dup {
                    Verdict::Conventional
                } else {
                    Verdict::Spurious
                }
            }
        }
    }

    /// F-RTO step 2b found nothing new to send: the timeout stands (RFC 5682
    /// §2.1: "the recommended action is to skip step 3").
    pub fn cancel(&mut self) {
        self.state = State::Idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn frto() -> SpuriousDetector {
        let mut d = SpuriousDetector::new(SpuriousRto::Frto);
        // Ten segments out, timeout retransmits segment 0.
        d.on_timeout(0, MSS, 10 * MSS, 10 * MSS, u64::MAX, false);
        d
    }

    /// RFC 5682 §2.1: the ACK of the retransmission covers only it; the next
    /// ACK covers segments never retransmitted: the timeout was spurious.
    #[test]
    fn rfc5682_2_1_ack_of_unretransmitted_data_after_new_data_is_spurious() {
        let mut d = frto();
        assert_eq!(d.on_ack(MSS, 0, false, None), Verdict::SendNew);
        assert_eq!(d.on_ack(5 * MSS, MSS, false, None), Verdict::Spurious);
        assert_eq!(d.prior(), (10 * MSS, u64::MAX));
        assert!(!d.armed());
    }

    /// RFC 5682 §2.1 step 3a: a duplicate ACK after the new data means loss.
    #[test]
    fn rfc5682_2_1_duplicate_ack_after_new_data_is_real_loss() {
        let mut d = frto();
        assert_eq!(d.on_ack(MSS, 0, false, None), Verdict::SendNew);
        assert_eq!(d.on_ack(MSS, MSS, true, None), Verdict::Conventional);
    }

    /// RFC 5682 §2.1 step 2a: a duplicate ACK, or an ACK of everything up to
    /// `recover`, as the first ACK leaves the timeout standing.
    #[test]
    fn rfc5682_2_1_step_2a_reverts() {
        let mut d = frto();
        assert_eq!(d.on_ack(0, 0, true, None), Verdict::Continue);
        assert!(!d.armed());
        let mut d = frto();
        assert_eq!(d.on_ack(10 * MSS, 0, false, None), Verdict::Continue);
        assert!(!d.armed());
    }

    /// RFC 5682 §2.1 step 1: no F-RTO for a timeout inside an earlier
    /// timeout's recovery.
    #[test]
    fn rfc5682_2_1_step_1_not_within_rto_recovery() {
        let mut d = frto();
        d.on_ack(0, 0, true, None);
        d.on_timeout(2 * MSS, 3 * MSS, 10 * MSS, MSS, 5 * MSS, false);
        assert!(!d.armed(), "SND.UNA 2000 is below recover 10000");
        d.on_timeout(10 * MSS, 11 * MSS, 12 * MSS, MSS, 5 * MSS, false);
        assert!(d.armed());
    }

    /// RFC 3522 §2: the first ACK of new data echoes a TSval older than the
    /// retransmission's: spurious; an echo of the retransmission itself is not.
    #[test]
    fn rfc3522_2_older_echo_means_spurious() {
        let mut d = SpuriousDetector::new(SpuriousRto::Eifel);
        d.on_timeout(0, MSS, 10 * MSS, 10 * MSS, u64::MAX, false);
        d.on_retransmission_sent(200);
        assert_eq!(d.on_ack(0, 0, true, Some(0)), Verdict::Continue, "a duplicate ACK is not acceptable");
        assert_eq!(d.on_ack(10 * MSS, 0, false, Some(0)), Verdict::Spurious);

        let mut d = SpuriousDetector::new(SpuriousRto::Eifel);
        d.on_timeout(0, MSS, 10 * MSS, 10 * MSS, u64::MAX, false);
        d.on_retransmission_sent(200);
        d.on_retransmission_sent(600);
        assert_eq!(d.on_ack(MSS, 0, false, Some(200)), Verdict::Continue);
    }
}
