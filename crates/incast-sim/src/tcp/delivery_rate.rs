//! Delivery-rate estimation: how fast the network delivered a sender's data,
//! sampled on every ACK, for algorithms that steer by rate
//! (draft-cheng-iccrg-delivery-rate-estimation-02; Linux `tcp_rate.c`).
//!
//! **Models:** the connection's delivered count, the time it last grew and
//! the send time of the flight's first segment (C.delivered,
//! C.delivered_time, C.first_sent_time, §3.1), stamped onto each segment as
//! it leaves, both times restarting when nothing was in flight (§3.2,
//! `tcp_rate_skb_sent`); on an ACK, every segment it newly delivers,
//! cumulatively or by SACK, adds its bytes, and the one sent last (ties
//! broken by sequence: `tcp_skb_sent_after`) starts the sample: its stamp's
//! delivered count and time, and the send phase from its flight's first
//! send to its own (§3.3, `tcp_rate_skb_delivered`); a SACKed segment counts
//! once. The sample's interval is the longer of the send phase and the ACK
//! phase, and a sample shorter than the minimum RTT is refused (§3.3,
//! `tcp_rate_gen`). The sender is application-limited when the
//! application writes with less than a segment left to send and the window
//! not full; the samples of the data sent then say so until that data is
//! delivered (§3.4, `tcp_rate_check_app_limited`). Each sample also carries
//! what the sender counts for the algorithm: the data in flight before the
//! ACK and after it (Linux `tcp_packets_in_flight`: neither SACKed nor
//! marked lost, unless resent) and the data marked lost so far and by this
//! ACK (`tp->lost`, `rs->losses`).
//! **Deliberately different:** counts bytes where Linux counts packets
//! (`tp->delivered`): with full segments the rate is the same. The minimum
//! RTT is the least sample of the connection (Linux's `tcp_min_rtt` keeps
//! it over 5 minutes, longer than these runs).
//! **Not modelled:** ECN-marked delivery (`delivered_ce`), SACK reneging.

use crate::time::{SimDuration, SimTime};

/// What a segment carried away when it left (§3.2, Linux `tcp_skb_cb.tx`);
/// when it left is its record's (`tcp::sent_log`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateStamp {
    /// C.delivered when it left.
    pub delivered: u64,
    /// C.delivered_time then.
    pub delivered_time: SimTime,
    /// C.first_sent_time then: when its flight's first segment left.
    pub first_sent: SimTime,
    /// The sender was application-limited.
    pub app_limited: bool,
    /// Already delivered by a SACK (Linux clears `delivered_mstamp`).
    pub counted: bool,
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over [`RateSample::interval`] (0 with no valid sample).
    pub delivered: u64,
    /// The sampling interval; zero when the ACK gave no valid sample.
    pub interval: SimDuration,
    /// The newly delivered segments were sent while application-limited.
    pub app_limited: bool,
    /// Bytes this ACK newly acknowledged or SACKed (`acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes in flight before the ACK, as Linux counts them (`prior_in_flight`, `tcp_packets_in_flight`).
    pub prior_in_flight: u64,
    /// Bytes in flight after it, before anything more is sent (`tcp_packets_in_flight` in `cong_control`).
    pub in_flight: u64,
    /// The RTT of the newest segment the ACK covered, when it gave one.
    pub rtt: Option<SimDuration>,
    /// C.delivered when the newest segment the ACK delivered left (`prior_delivered`; 0 when it delivered none).
    pub prior_delivered: u64,
    /// C.delivered after the ACK (Linux `tp->delivered`).
    pub total_delivered: u64,
    /// C.delivered_time after the ACK: when data was last delivered (Linux `tp->delivered_mstamp`).
    pub delivered_time: SimTime,
    /// When the ACK arrived.
    pub now: SimTime,
    /// Bytes this ACK newly marked lost (Linux `rs->losses`, from `tp->lost`).
    pub losses: u64,
    /// Bytes marked lost so far (Linux `tp->lost`).
    pub total_lost: u64,
}

impl RateSample {
    /// The delivery rate in bytes per second, when the sample is valid.
    pub fn bytes_per_s(&self) -> Option<f64> {
        (self.interval > SimDuration::ZERO).then(|| self.delivered as f64 / self.interval.as_secs_f64())
    }
}

/// The newest segment an ACK delivered, the sample's start.
#[derive(Clone, Copy, Debug)]
struct Newest {
    stamp: RateStamp,
    sent_at: SimTime,
    end: u64,
}

/// A sender's delivery-rate state (Linux's `tcp_sock` fields of `tcp_rate.c`).
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    delivered: u64,
    delivered_time: SimTime,
    first_sent: SimTime,
    /// C.app_limited: the delivered count that ends the application-limited phase (0: not limited).
    app_limited: u64,
    min_rtt: Option<SimDuration>,
    /// This ACK's newest delivered segment, C.delivered before the ACK, and
    /// the RTT of the newest segment it acknowledged.
    newest: Option<Newest>,
    delivered_before: u64,
    rtt: Option<SimDuration>,
    /// Bytes marked lost (`tp->lost`), and that count when the ACK arrived.
    lost: u64,
    lost_before: u64,
    /// The sample `TCP_INFO` reports (`tcpi_delivery_rate`: `tp->rate_delivered`
    /// over `tp->rate_interval_us`), once there is one.
    reported: Option<(u64, SimDuration)>,
}

impl DeliveryRate {
    /// A segment leaves at `now` with `in_flight` bytes outstanding before it (`tcp_rate_skb_sent`).
    #[inline]
    pub fn on_sent(&mut self, now: SimTime, in_flight: u64) -> RateStamp {
        if in_flight == 0 {
            self.first_sent = now;
            self.delivered_time = now;
        }
        RateStamp {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent: self.first_sent,
            app_limited: self.app_limited != 0,
            counted: false,
        }
    }

    /// An ACK arrives: its sample starts empty.
    #[inline]
    pub fn begin_ack(&mut self) {
        self.newest = None;
        self.delivered_before = self.delivered;
        self.lost_before = self.lost;
        self.rtt = None;
    }

    /// `bytes` were marked lost (`tcp_mark_skb_lost` adding to `tp->lost`).
    #[inline]
    pub fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// True while the data sent is application-limited (`tp->app_limited`).
    #[inline]
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// The least RTT sampled (Linux `tcp_min_rtt`), once one was.
    #[inline]
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// The ACK's RTT sample, from the newest segment it acknowledged (Linux's `ca_rtt_us`).
    #[inline]
    pub fn on_rtt(&mut self, rtt: SimDuration) {
        self.rtt = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// The ACK delivered `bytes` of the segment ending at `end` that left
    /// at `sent_at` with `stamp` (`tcp_rate_skb_delivered`), at `now`.
    pub fn on_delivered(&mut self, bytes: u64, end: u64, sent_at: SimTime, stamp: &RateStamp, now: SimTime) {
        if stamp.counted {
            return;
        }
        self.delivered += bytes;
        self.delivered_time = now;
        let later = |n: &Newest| sent_at > n.sent_at || sent_at == n.sent_at && end > n.end;
        if self.newest.as_ref().map_or(true, later) {
            self.newest = Some(Newest { stamp: *stamp, sent_at, end });
            // "Record send time of most recently ACKed packet".
            self.first_sent = sent_at;
        }
    }

    /// The ACK's sample (`tcp_rate_gen`) at `now`, with `prior_in_flight`
    /// bytes outstanding before it; with `report`, also the rate `TCP_INFO`
    /// reports ([`DeliveryRate::reported_rate`], which only the BBR trace
    /// reads: a build without the traces leaves it out).
    pub fn sample(&mut self, now: SimTime, prior_in_flight: u64, in_flight: u64, report: bool) -> RateSample {
        let rtt = self.rtt;
        // "Clear app limited if bubble is acked and gone." (Linux tests
        // `tp->app_limited` first; without a bubble, 0 stays 0 here.)
        if self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let acked_sacked = self.delivered - self.delivered_before;
        let mut rs = RateSample {
            acked_sacked,
            prior_in_flight,
            in_flight,
            rtt,
            total_delivered: self.delivered,
            delivered_time: self.delivered_time,
            now,
            losses: self.lost - self.lost_before,
            total_lost: self.lost,
            ..RateSample::default()
        };
        let Some(Newest { stamp, sent_at, .. }) = self.newest else { return rs };
        rs.prior_delivered = stamp.delivered;
        // "Model sending data and receiving ACKs as separate pipeline phases":
        // the longer of the two.
        let send_phase = sent_at.since(stamp.first_sent);
        let ack_phase = now.since(stamp.delivered_time);
        let interval = send_phase.max(ack_phase);
        rs.app_limited = stamp.app_limited;
        // "Normally we expect interval_us >= min-rtt."
        if self.min_rtt.is_some_and(|m| interval < m) || interval == SimDuration::ZERO {
            return rs;
        }
        rs.delivered = self.delivered - stamp.delivered;
        rs.interval = interval;
        // tcp_rate_gen: "Record the last non-app-limited or the highest app-limited bw".
        let higher = |&(d, i): &(u64, SimDuration)| {
            u128::from(rs.delivered) * u128::from(i.as_ps()) >= u128::from(d) * u128::from(interval.as_ps())
        };
        if report && (!rs.app_limited || self.reported.as_ref().map_or(true, higher)) {
            self.reported = Some((rs.delivered, interval));
        }
        rs
    }

    /// The delivery rate `TCP_INFO` reports, bytes per second
    /// (`tcpi_delivery_rate`), once a sample was taken.
    pub fn reported_rate(&self) -> Option<f64> {
        self.reported.map(|(d, i)| d as f64 / i.as_secs_f64())
    }

    /// Data sent from now on is application-limited, with `in_flight` bytes
    /// outstanding: the algorithm asks so (BBR's PROBE_RTT sets
    /// `tp->app_limited` on each ACK, "Ignore low rate samples during this mode").
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// The application writes with `unsent` bytes not yet sent, `in_flight`
    /// outstanding and a window of `cwnd` (`tcp_rate_check_app_limited`):
    /// less than a segment to send and room in the window make the data
    /// sent from now on application-limited.
    pub fn on_write(&mut self, unsent: u64, mss: u64, in_flight: u64, cwnd: u64) {
        if unsent < mss && in_flight < cwnd {
            self.mark_app_limited(in_flight);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    /// Ten segments of 1000 bytes leave back to back at t = 0 and their ACKs
    /// come one per millisecond from t = 10 ms: the ACK of the last samples
    /// the ten over the 19 ms since the flight left (the ACK phase, which
    /// holds the first round trip: a first window's samples are low).
    #[test]
    fn a_window_acked_at_one_segment_per_millisecond_samples_that_rate() {
        let mut r = DeliveryRate::default();
        let t0 = SimTime::ZERO;
        let stamps: Vec<RateStamp> = (0..10).map(|i| r.on_sent(t0, i * 1000)).collect();
        let mut last = RateSample::default();
        for (i, stamp) in stamps.iter().enumerate() {
            let now = t0 + ms(10 + i as u64);
            r.begin_ack();
            r.on_delivered(1000, 1000 * (i as u64 + 1), t0, stamp, now);
            r.on_rtt(ms(10));
            last = r.sample(now, 1000 * (10 - i as u64), 1000 * (9 - i as u64), true);
        }
        // The last segment's stamp: delivered 0 at t0; the ACK phase is 19 ms.
        assert_eq!((last.delivered, last.interval), (10_000, ms(19)));
        assert_eq!(last.acked_sacked, 1000);
    }

    /// A sample shorter than the minimum RTT says nothing (`tcp_rate_gen`).
    #[test]
    fn a_sample_shorter_than_the_minimum_rtt_is_refused() {
        let mut r = DeliveryRate::default();
        let s = r.on_sent(SimTime::ZERO, 0);
        r.begin_ack();
        r.on_delivered(1000, 1000, SimTime::ZERO, &s, SimTime::ZERO + ms(1));
        r.on_rtt(ms(2));
        let rs = r.sample(SimTime::ZERO + ms(1), 1000, 0, true);
        assert_eq!((rs.interval, rs.delivered, rs.acked_sacked), (SimDuration::ZERO, 0, 1000));
        assert_eq!(rs.bytes_per_s(), None);
    }

    /// A segment a SACK delivered counts once, not again at the cumulative ACK.
    #[test]
    fn a_sacked_segment_is_delivered_once() {
        let mut r = DeliveryRate::default();
        let mut s = r.on_sent(SimTime::ZERO, 0);
        r.begin_ack();
        r.on_delivered(1000, 1000, SimTime::ZERO, &s, SimTime::ZERO + ms(1));
        s.counted = true;
        r.begin_ack();
        r.on_delivered(1000, 1000, SimTime::ZERO, &s, SimTime::ZERO + ms(2));
        assert_eq!(r.delivered, 1000);
    }

    /// Data written with room in the window is application-limited until it is delivered.
    #[test]
    fn an_application_limited_phase_ends_once_its_data_is_delivered() {
        let mut r = DeliveryRate::default();
        r.on_write(0, 1000, 0, 10_000);
        let s = r.on_sent(SimTime::ZERO, 0);
        assert!(s.app_limited);
        r.begin_ack();
        r.on_delivered(1000, 1000, SimTime::ZERO, &s, SimTime::ZERO + ms(1));
        assert!(r.sample(SimTime::ZERO + ms(1), 1000, 0, true).app_limited);
        assert!(!r.on_sent(SimTime::ZERO + ms(1), 0).app_limited);
    }
}
