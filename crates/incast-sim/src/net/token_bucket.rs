//! A token-bucket port: Linux's `sch_tbf` in front of a line that takes no
//! time to move a frame (`link.token_bucket`).
//!
//! **Models:** `tbf_dequeue` (net/sched/sch_tbf.c). Tokens are kept in time
//! units, as the kernel keeps them: the bucket holds at most `depth`, its
//! depth's time at the link rate, and fills at one picosecond a picosecond,
//! `toks = min(now - t_c + toks, buffer)`; the frame at the head costs its
//! wire bytes' time at the link rate (`psched_l2t_ns`, the frame's length and
//! the `overhead` of preamble, FCS and gap) and goes "if ((toks|ptoks) >= 0)"
//! after `toks -= L/rate`, at once when the bucket holds it, else the moment
//! it will. Frames go in arrival order, so a frame waits for the one ahead of
//! it. The bucket starts full (`tbf_change`: `q->tokens = q->buffer`). So an
//! unqueued frame crosses with no serialization time, frames after an idle
//! moment leave back to back until the bucket is empty, and from then on at
//! the link rate: over any interval at most `depth` plus the rate's bytes
//! leave.
//! The line behind the bucket is a veth: `veth_xmit` hands the frame to its
//! peer's backlog in one call, with nothing serialized, so the frame's last
//! bit leaves the instant the bucket releases it; what the hosts' CPUs spend
//! on it is their share of `link.rtt`, which the port's link adds after it as
//! after a serializing port.
//! **Deliberately different:** tbf waits for tokens on an hrtimer
//! (`qdisc_watchdog_schedule_ns`) that may fire late; here it fires on time.
//! The testbed's bucket is deep enough for the timer's lateness
//! (`Shaping.burst`), which costs the line nothing either way.
//! **Not modelled:** the peak-rate bucket (`peakrate`, `ptoks`), GSO
//! segmentation of frames larger than the bucket (a frame must fit: the
//! scenario's check).

use crate::time::{SimDuration, SimTime};

/// One port's bucket: its depth, its tokens and when they were counted, all in
/// time at the link rate.
#[derive(Clone, Copy, Debug)]
pub struct TokenBucket {
    /// Most tokens the bucket holds (tbf's `buffer`).
    depth: SimDuration,
    /// Tokens left when the last frame went (tbf's `tokens`).
    tokens: SimDuration,
    /// When the last frame went (tbf's `t_c`).
    last: SimTime,
}

impl TokenBucket {
    /// A full bucket of `depth` (`tbf_change`: "q->tokens = q->buffer").
    pub fn new(depth: SimDuration) -> Self {
        TokenBucket { depth, tokens: depth, last: SimTime::ZERO }
    }

    /// The instant a frame that costs `cost` of the line's time, handed over at
    /// `now`, goes: once the frames ahead of it have gone and the bucket holds
    /// `cost` (`tbf_dequeue`). Takes its tokens.
    #[inline]
    pub fn release(&mut self, now: SimTime, cost: SimDuration) -> SimTime {
        debug_assert!(cost <= self.depth, "a frame larger than the bucket never goes");
        let at = now.max(self.last);
        // tbf_dequeue: "toks = min_t(s64, now - q->t_c, q->buffer); ... toks += q->tokens;
        // if (toks > q->buffer) toks = q->buffer;"
        let toks = (self.tokens + at.since(self.last)).min(self.depth);
        // "toks -= (s64) psched_l2t_ns(&q->rate, len); if ((toks|ptoks) >= 0)": otherwise the
        // watchdog wakes the queue when the missing tokens have come, none lost to the cap.
        let go = at + (cost - toks);
        self.tokens = toks + go.since(at) - cost;
        self.last = go;
        go
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    fn micros(x: u64) -> SimDuration {
        SimDuration::from_micros(x)
    }

    /// tbf_dequeue: a frame offered to a full bucket goes at once.
    #[test]
    fn tbf_dequeue_an_idle_port_passes_a_frame_at_once() {
        let mut b = TokenBucket::new(micros(100));
        assert_eq!(b.release(us(50), micros(60)), us(50));
    }

    /// tbf_dequeue: frames offered together go back to back while the bucket
    /// holds their tokens, then one cost apart, the link's rate.
    #[test]
    fn tbf_dequeue_a_burst_empties_the_bucket_then_goes_at_the_rate() {
        // 100 µs deep, frames of 30 µs: three go at once (90 µs), the fourth
        // waits for the 20 µs it lacks, then one every 30 µs.
        let mut b = TokenBucket::new(micros(100));
        let out: Vec<SimTime> = (0..6).map(|_| b.release(us(1_000), micros(30))).collect();
        assert_eq!(out, [us(1_000), us(1_000), us(1_000), us(1_020), us(1_050), us(1_080)]);
    }

    /// tbf_dequeue: "if (toks > q->buffer) toks = q->buffer": tokens past the
    /// depth are lost, so an idle hour buys no more than one bucket.
    #[test]
    fn tbf_dequeue_tokens_stop_at_the_depth() {
        let mut b = TokenBucket::new(micros(100));
        assert_eq!(b.release(us(0), micros(100)), us(0));
        let later = SimTime(3_600 * 1_000_000_000_000);
        let out: Vec<SimTime> = (0..3).map(|_| b.release(later, micros(50))).collect();
        assert_eq!(out, [later, later, later + micros(50)]);
    }

    /// A frame behind a waiting one waits for it, whatever the bucket holds by
    /// the time it arrives.
    #[test]
    fn tbf_dequeue_frames_go_in_order() {
        let mut b = TokenBucket::new(micros(40));
        assert_eq!(b.release(us(0), micros(40)), us(0));
        assert_eq!(b.release(us(0), micros(40)), us(40));
        assert_eq!(b.release(us(10), micros(10)), us(50));
    }
}
