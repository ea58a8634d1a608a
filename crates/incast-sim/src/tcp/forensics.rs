//! Timeout forensics: why did a retransmission timer expire?
//!
//! **Models:** at every retransmission timeout of a sender with outstanding
//! data, the sender takes a [`TimeoutSnapshot`] *before* the timeout changes
//! any state, and [`classify`] turns it into a [`Timeout`] record. Two
//! classifications are kept side by side:
//!
//! FAST08 §5.1 (Table 3, Figure 11), [`TimeoutClass`], decided in this precedence:
//! 1. `lost_retransmit` if the segment at SND.UNA had already been
//!    retransmitted (by fast retransmit, a partial ACK or an earlier timeout);
//! 2. else `last_packet_loss` if every byte the application has written has
//!    been sent (SND.MAX == written) and fewer than `dupack_threshold` full
//!    segments lie beyond SND.UNA's segment (the tail of the response was lost
//!    and too little data followed to trigger fast retransmit);
//! 3. else `full_window_loss` if DART == 0 (no feedback at all);
//! 4. else `other` (some but insufficient feedback).
//!
//! GIP §III, [`GipClass`], decided in this precedence:
//! 1. `floss` (FLoss-TO) if DART == 0 and nothing of the current application
//!    write (the current stripe unit / response) had been acknowledged yet
//!    (SND.UNA == start offset of the latest write);
//! 2. else `lack` (LAck-TO) if SND.MAX == written and DART < `dupack_threshold`
//!    (too few ACKs at the unit's tail);
//! 3. else `other`.
//!
//! DART is FAST08's "Duplicate ACKs Received at Timeout": the duplicate ACKs
//! received since the last ACK of new data. "Full segments beyond SND.UNA's
//! segment" is ⌊(SND.MAX − end of SND.UNA's segment) / MSS⌋.
//! **Deliberately different:** FAST08 classified timeouts by hand from
//! packet traces of real stacks; here the classes are decided from sender
//! state alone, so a loss the sender cannot see (an ACK lost on the way back)
//! counts where its symptoms put it.
//! `spurious` is decided later than the classes: [`classify`] leaves it
//! false, and the engine sets it on the endpoint's latest timeout row when
//! F-RTO or Eifel (`tcp::spurious`) judges that timeout spurious.

use crate::time::{SimDuration, SimTime};
use serde::Serialize;

/// FAST08 §5.1 timeout category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutClass {
    /// No duplicate ACK at all: the whole window (or all of it that
    /// could trigger feedback) was lost.
    FullWindowLoss,
    /// The tail of the written data was lost with too few segments behind it
    /// to draw `dupack_threshold` duplicate ACKs.
    LastPacketLoss,
    /// The segment at SND.UNA had already been retransmitted, and that copy was lost.
    LostRetransmit,
    /// Some duplicate ACKs arrived, but too few (or too late) for recovery.
    Other,
}

/// GIP §III timeout category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GipClass {
    /// FLoss-TO: no feedback, nothing of the current write acknowledged.
    Floss,
    /// LAck-TO: all data sent, too few ACKs at the tail of the unit.
    Lack,
    /// Neither.
    Other,
}

/// Sender state at the moment a retransmission timer expires, before the
/// timeout changes anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutSnapshot {
    /// When the timer expired.
    pub time: SimTime,
    /// The timer duration that expired (back-off included).
    pub rto: SimDuration,
    /// Consecutive timeouts of the same segment before this one.
    pub backoff: u32,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// SND.NXT − SND.UNA in bytes.
    pub flight: u64,
    /// Duplicate ACKs received since the last ACK of new data.
    pub dart: u32,
    /// The segment at SND.UNA had been sent more than once.
    pub una_retransmitted: bool,
    /// SND.MAX == bytes the application has written.
    pub all_sent: bool,
    /// Full segments (⌊bytes / MSS⌋) beyond SND.UNA's segment, up to SND.MAX.
    pub segments_beyond: u64,
    /// SND.UNA == start offset of the application's latest write.
    pub write_unacked: bool,
    /// The duplicate-ACK threshold of fast retransmit.
    pub dupack_threshold: u32,
}

/// One classified retransmission timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    /// The state it was classified from.
    pub snapshot: TimeoutSnapshot,
    /// FAST08 §5.1 category.
    pub class: TimeoutClass,
    /// GIP §III category.
    pub gip_class: GipClass,
    /// False when classified; spurious-timeout detection decides it later.
    pub spurious: bool,
}

/// Classify a timeout from its snapshot; the precedence is the module header's.
pub fn classify(s: TimeoutSnapshot) -> Timeout {
    // FAST08 §5.1: "lost retransmit" first, then "last packet loss", then
    // "full window loss" (no duplicate ACK), then the rest.
    let class = if s.una_retransmitted {
        TimeoutClass::LostRetransmit
    } else if s.all_sent && s.segments_beyond < s.dupack_threshold as u64 {
        TimeoutClass::LastPacketLoss
    } else if s.dart == 0 {
        TimeoutClass::FullWindowLoss
    } else {
        TimeoutClass::Other
    };
    // GIP §III: FLoss-TO "full window of packets lost", LAck-TO "lack of ACKs"
    // at the tail of the stripe unit.
    let gip_class = if s.dart == 0 && s.write_unacked {
        GipClass::Floss
    } else if s.all_sent && s.dart < s.dupack_threshold {
        GipClass::Lack
    } else {
        GipClass::Other
    };
    Timeout { snapshot: s, class, gip_class, spurious: false }
}

/// Timeouts per FAST08 §5.1 category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeoutClasses {
    /// [`TimeoutClass::FullWindowLoss`].
    pub full_window_loss: u64,
    /// [`TimeoutClass::LastPacketLoss`].
    pub last_packet_loss: u64,
    /// [`TimeoutClass::LostRetransmit`].
    pub lost_retransmit: u64,
    /// [`TimeoutClass::Other`].
    pub other: u64,
}

impl TimeoutClasses {
    /// Count one timeout of `class`.
    #[inline]
    pub fn add(&mut self, class: TimeoutClass) {
        match class {
            TimeoutClass::FullWindowLoss => self.full_window_loss += 1,
            TimeoutClass::LastPacketLoss => self.last_packet_loss += 1,
            TimeoutClass::LostRetransmit => self.lost_retransmit += 1,
            TimeoutClass::Other => self.other += 1,
        }
    }
    /// Add another set of counts.
    pub fn merge(&mut self, o: &TimeoutClasses) {
        self.full_window_loss += o.full_window_loss;
        self.last_packet_loss += o.last_packet_loss;
        self.lost_retransmit += o.lost_retransmit;
        self.other += o.other;
    }
    /// All timeouts counted.
    pub fn total(&self) -> u64 {
        self.full_window_loss + self.last_packet_loss + self.lost_retransmit + self.other
    }
}

/// Timeouts per GIP §III category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GipTimeoutClasses {
    /// [`GipClass::Floss`].
    pub floss: u64,
    /// [`GipClass::Lack`].
    pub lack: u64,
    /// [`GipClass::Other`].
    pub other: u64,
}

impl GipTimeoutClasses {
    /// Count one timeout of `class`.
    #[inline]
    pub fn add(&mut self, class: GipClass) {
        match class {
            GipClass::Floss => self.floss += 1,
            GipClass::Lack => self.lack += 1,
            GipClass::Other => self.other += 1,
        }
    }
    /// Add another set of counts.
    pub fn merge(&mut self, o: &GipTimeoutClasses) {
        self.floss += o.floss;
        self.lack += o.lack;
        self.other += o.other;
    }
    /// All timeouts counted.
    pub fn total(&self) -> u64 {
        self.floss + self.lack + self.other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mid-response, full window lost: data still unsent, nothing acked of the
    /// write, no duplicate ACK.
    fn base() -> TimeoutSnapshot {
        TimeoutSnapshot {
            time: SimTime(0),
            rto: SimDuration::from_millis(200),
            backoff: 0,
            cwnd: 10_000,
            flight: 10_000,
            dart: 0,
            una_retransmitted: false,
            all_sent: false,
            segments_beyond: 9,
            write_unacked: true,
            dupack_threshold: 3,
        }
    }

    /// FAST08 §5.1: no duplicate ACK at all is a full window loss; GIP §III: FLoss-TO.
    #[test]
    fn fast08_5_1_no_dupack_is_full_window_loss_and_gip_floss() {
        let t = classify(base());
        assert_eq!((t.class, t.gip_class, t.spurious), (TimeoutClass::FullWindowLoss, GipClass::Floss, false));
    }

    /// FAST08 §5.1: some but too few duplicate ACKs is "other"; GIP §III: neither FLoss nor LAck.
    #[test]
    fn fast08_5_1_some_dupacks_is_other() {
        let t = classify(TimeoutSnapshot { dart: 2, ..base() });
        assert_eq!((t.class, t.gip_class), (TimeoutClass::Other, GipClass::Other));
    }

    /// FAST08 §5.1: the tail was lost with fewer than three segments behind it.
    #[test]
    fn fast08_5_1_tail_loss_is_last_packet_loss_and_gip_lack() {
        let s = TimeoutSnapshot { all_sent: true, segments_beyond: 2, dart: 2, write_unacked: false, ..base() };
        let t = classify(s);
        assert_eq!((t.class, t.gip_class), (TimeoutClass::LastPacketLoss, GipClass::Lack));
    }

    /// FAST08 §5.1: enough segments followed the hole, so it is not a last packet loss.
    #[test]
    fn fast08_5_1_three_segments_beyond_is_not_last_packet_loss() {
        let s = TimeoutSnapshot { all_sent: true, segments_beyond: 3, dart: 1, write_unacked: false, ..base() };
        assert_eq!(classify(s).class, TimeoutClass::Other);
        let s = TimeoutSnapshot { dart: 0, ..s };
        assert_eq!(classify(s).class, TimeoutClass::FullWindowLoss);
    }

    /// FAST08 §5.1: a lost retransmission takes precedence over every other class.
    #[test]
    fn fast08_5_1_lost_retransmit_takes_precedence() {
        for s in [base(), TimeoutSnapshot { all_sent: true, segments_beyond: 0, ..base() }] {
            let t = classify(TimeoutSnapshot { una_retransmitted: true, ..s });
            assert_eq!(t.class, TimeoutClass::LostRetransmit);
        }
    }

    /// FAST08 §5.1: last packet loss precedes full window loss when DART is 0.
    #[test]
    fn fast08_5_1_last_packet_loss_precedes_full_window_loss() {
        let s = TimeoutSnapshot { all_sent: true, segments_beyond: 0, dart: 0, ..base() };
        assert_eq!(classify(s).class, TimeoutClass::LastPacketLoss);
    }

    /// GIP §III: FLoss-TO precedes LAck-TO when the whole (short) unit was lost.
    #[test]
    fn gip_iii_floss_precedes_lack() {
        let s = TimeoutSnapshot { all_sent: true, dart: 0, write_unacked: true, ..base() };
        assert_eq!(classify(s).gip_class, GipClass::Floss);
    }

    /// GIP §III: no feedback after part of the unit was acknowledged is not
    /// FLoss-TO; with data left to send it is not LAck-TO either.
    #[test]
    fn gip_iii_partly_acked_unit_is_not_floss() {
        let s = TimeoutSnapshot { write_unacked: false, ..base() };
        assert_eq!(classify(s).gip_class, GipClass::Other);
        assert_eq!(classify(TimeoutSnapshot { all_sent: true, ..s }).gip_class, GipClass::Lack);
    }

    /// GIP §III: LAck-TO needs fewer than `dupack_threshold` duplicate ACKs.
    #[test]
    fn gip_iii_enough_dupacks_is_not_lack() {
        let s = TimeoutSnapshot { all_sent: true, dart: 3, write_unacked: false, ..base() };
        assert_eq!(classify(s).gip_class, GipClass::Other);
    }

    /// The counters add up by class.
    #[test]
    fn counters_sum_to_total() {
        let mut c = TimeoutClasses::default();
        let mut g = GipTimeoutClasses::default();
        for s in [base(), TimeoutSnapshot { dart: 1, ..base() }, TimeoutSnapshot { una_retransmitted: true, ..base() }]
        {
            let t = classify(s);
            c.add(t.class);
            g.add(t.gip_class);
        }
        assert_eq!((c.total(), g.total()), (3, 3));
        assert_eq!((c.full_window_loss, c.other, c.lost_retransmit), (1, 1, 1));
    }
}
