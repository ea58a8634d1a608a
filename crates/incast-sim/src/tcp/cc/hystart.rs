//! HyStart: Cubic's early exit from slow start, as Linux's `tcp_cubic.c` runs it.
//!
//! **Models:** Linux's HyStart (Ha and Rhee, "Taming the elephants", 2011;
//! in Linux since 2.6.29, on by default, `hystart_detect = 3`: both
//! detectors). A round starts at the first ACK beyond the previous round's
//! SND.NXT (`bictcp_hystart_reset`); from a window of `hystart_low_window`
//! (16) segments on, slow start ends (ssthresh = cwnd) when either
//! - the ACK train of the round, ACKs no more than `hystart_ack_delta_us`
//!   (2 ms) apart, has lasted longer than half the minimum RTT (`delay_min`;
//!   halved because the sender does not pace), or
//! - the smallest RTT among the round's first `HYSTART_MIN_SAMPLES` (8)
//!   samples exceeds `delay_min` by `HYSTART_DELAY_THRESH`: `delay_min`/8
//!   clamped to 4–16 ms.
//!
//! Once it has fired it stays off until a retransmission timeout
//! (`bictcp_reset` in `CA_Loss`), which also forgets `delay_min`. The RTT
//! samples are Linux's `ca_rtt_us`: from the newest segment an ACK covers,
//! none when it covers a retransmission, and none within a second of the
//! start of a congestion-avoidance epoch ("Discard delay samples right
//! after fast recovery", `bictcp_acked`).
//! **Deliberately different:** the ACK-train threshold adds no
//! `hystart_ack_delay`: the kernel computes it from `sk_gso_max_size`, which
//! is 0 with GSO off, as on the testbed's veths; with TSO a real host adds
//! up to 1 ms.
//! **Not modelled:** HyStart++ (RFC 9406), which Linux does not run.

use super::RttSample;

/// Linux `hystart_low_window`: segments below which HyStart does not act.
const LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delta_us`: the largest gap within an ACK train.
const ACK_DELTA_US: u64 = 2_000;
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples of a round before the delay test.
const MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`, in microseconds.
const DELAY_THRESH_US: (u64, u64) = (4_000, 16_000);
/// Picoseconds per microsecond (Linux `bictcp_clock_us`).
const PS_PER_US: u64 = 1_000_000;

/// HyStart state of one Cubic sender (the `hystart` fields of Linux `struct bictcp`).
#[derive(Clone, Debug)]
pub struct HyStart {
    smss: u64,
    /// Slow start was ended (`found`).
    found: bool,
    /// First ACK of the current round, in µs.
    round_start: u64,
    /// Latest ACK of the current ACK train, in µs.
    last_ack: u64,
    /// SND.NXT when the round started; `None` before the first round.
    end_seq: Option<u64>,
    /// Smallest RTT of the round so far, in µs.
    curr_rtt: u64,
    /// Samples the round has taken, up to `MIN_SAMPLES`.
    sample_cnt: u32,
    /// Smallest RTT seen, in µs; 0 before the first sample.
    delay_min: u64,
}

impl HyStart {
    /// Fresh state for segments of `smss` bytes.
    pub fn new(smss: u64) -> Self {
        HyStart {
            smss: smss.max(1),
            found: false,
            round_start: 0,
            last_ack: 0,
            end_seq: None,
            curr_rtt: u64::MAX,
            sample_cnt: 0,
            delay_min: 0,
        }
    }

    /// An ACK's RTT `sample`: true when slow start must end now (Linux
    /// `bictcp_acked` and `hystart_update` set ssthresh to cwnd).
    pub fn on_rtt_sample(&mut self, sample: &RttSample) -> bool {
        let RttSample { now, rtt, snd_una, snd_nxt, cwnd, in_slow_start } = *sample;
        let delay = (rtt.as_ps() / PS_PER_US).max(1);
        // "first time call or link delay decreases"
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.found || !in_slow_start {
            return false;
        }
        let now_us = now.as_ps() / PS_PER_US;
        if self.end_seq.map_or(true, |end| snd_una > end) {
            // bictcp_hystart_reset: a new round.
            self.round_start = now_us;
            self.last_ack = now_us;
            self.end_seq = Some(snd_nxt);
            self.curr_rtt = u64::MAX;
            self.sample_cnt = 0;
        }
        // "hystart triggers when cwnd is larger than some threshold"
        if cwnd < LOW_WINDOW * self.smss {
            return false;
        }
        // "first detection parameter - ack-train detection"
        if now_us - self.last_ack <= ACK_DELTA_US {
            self.last_ack = now_us;
            // "Hystart ack train triggers if we get ack past ca->delay_min/2."
            if now_us - self.round_start > self.delay_min / 2 {
                self.found = true;
            }
        }
        // "obtain the minimum delay of more than sampling packets"
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt > self.delay_min + (self.delay_min / 8).clamp(DELAY_THRESH_US.0, DELAY_THRESH_US.1) {
            self.found = true;
        }
        self.found
    }

    /// A retransmission timeout (Linux `bictcp_reset` and
    /// `bictcp_hystart_reset` in `CA_Loss`): HyStart acts again, from a new
    /// round at the next sample.
    pub fn on_timeout(&mut self) {
        *self = HyStart::new(self.smss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

    const MSS: u64 = 1000;

    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }
    fn rtt(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }
    fn at(now: SimTime, rtt: SimDuration, snd_una: u64, snd_nxt: u64, cwnd: u64, in_slow_start: bool) -> RttSample {
        RttSample { now, rtt, snd_una, snd_nxt, cwnd, in_slow_start }
    }

    /// Linux hystart_update, ACK-train detection: with 16 segments of window
    /// and ACKs 60 µs apart at a 100 µs minimum RTT, slow start ends once the
    /// round's train is longer than 50 µs: at its second ACK.
    #[test]
    fn the_ack_train_ends_slow_start_past_half_the_minimum_rtt() {
        let mut h = HyStart::new(MSS);
        let cwnd = 16 * MSS;
        assert!(!h.on_rtt_sample(&at(us(1_000), rtt(100), 1_000, 20_000, cwnd, true)), "the round starts");
        assert!(h.on_rtt_sample(&at(us(1_060), rtt(100), 2_000, 20_000, cwnd, true)), "60 µs > 100 µs / 2");
        assert!(!h.on_rtt_sample(&at(us(1_120), rtt(100), 3_000, 20_000, cwnd, true)), "found: off until a timeout");
    }

    /// hystart_low_window: below 16 segments neither detector acts, however
    /// long the train; nor outside slow start.
    #[test]
    fn nothing_below_sixteen_segments_or_outside_slow_start() {
        let mut h = HyStart::new(MSS);
        for k in 0..40 {
            assert!(!h.on_rtt_sample(&at(us(1_000 + 60 * k), rtt(100 + 500 * k), k * MSS, 50_000, 15 * MSS, true)));
            assert!(!h.on_rtt_sample(&at(us(1_030 + 60 * k), rtt(100 + 500 * k), k * MSS, 50_000, 40 * MSS, false)));
        }
    }

    /// Linux hystart_update, delay detection: ACKs 3 ms apart (no train); the
    /// round's eight samples set its minimum, and the ninth sample ends slow
    /// start when that minimum exceeds delay_min by more than 4 ms
    /// (delay_min / 8 clamped to 4-16 ms).
    #[test]
    fn a_round_whose_rtt_grew_by_the_threshold_ends_slow_start() {
        for (later, ends) in [(4_100, false), (4_101, true)] {
            let mut h = HyStart::new(MSS);
            let cwnd = 20 * MSS;
            assert!(!h.on_rtt_sample(&at(us(0), rtt(100), 1_000, 2_000, cwnd, true)), "delay_min 100 µs; round 1");
            // Round 2 starts past SND.NXT 2,000.
            for k in 0..8 {
                assert!(!h.on_rtt_sample(&at(us(3_000 * (k + 1)), rtt(later), 3_000 + k, 90_000, cwnd, true)));
            }
            assert_eq!(h.on_rtt_sample(&at(us(30_000), rtt(later), 4_000, 90_000, cwnd, true)), ends, "{later} µs");
        }
    }

    /// bictcp_reset in CA_Loss: after a timeout HyStart acts again.
    #[test]
    fn a_timeout_rearms_it() {
        let mut h = HyStart::new(MSS);
        h.on_rtt_sample(&at(us(1_000), rtt(100), 1_000, 20_000, 16 * MSS, true));
        assert!(h.on_rtt_sample(&at(us(1_060), rtt(100), 2_000, 20_000, 16 * MSS, true)));
        h.on_timeout();
        h.on_rtt_sample(&at(us(9_000), rtt(100), 21_000, 40_000, 16 * MSS, true));
        assert!(h.on_rtt_sample(&at(us(9_060), rtt(100), 22_000, 40_000, 16 * MSS, true)));
    }
}
