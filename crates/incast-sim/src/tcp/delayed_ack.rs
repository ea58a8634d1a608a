//! Receiver ACK policy: delayed ACK (RFC 1122 4.2.3.2, RFC 5681 4.2) in four
//! modes (`DelayedAckConfig::mode`).
//!
//! **Models:** `off` ACKs every data segment at once. The other modes ACK at
//! once for out-of-order, duplicate and gap-filling segments and whenever more
//! than one MSS is received but unacknowledged, and otherwise hold the ACK
//! until the delayed-ACK timer (armed at the first unacknowledged segment)
//! fires or outgoing data piggybacks it. They differ in the timer's length:
//! `standard` uses the fixed `timeout` (FAST08 §4.2; CMU09 Fig 6's 200 µs is
//! `standard` with `timeout = 200us`). `linux` runs the kernel's quick-ACK
//! mode and ATO estimator: the first ACKs of a connection, those after a gap
//! in the data longer than the receiver's RTO, and those after a duplicate
//! segment go out at once (up to `quickack_segments`, `tcp_incr_quickack`);
//! the ATO starts at `ato_min`, follows the data inter-arrival gap
//! (`tcp_event_data_recv`), doubles when the timer fires
//! (`tcp_delack_timer_handler`), and is bounded by the smoothed RTT
//! (`tcp_send_delayed_ack`). `adaptive` is CMU09 §5's proposal: the timeout is
//! `adaptive_multiplier` × an EWMA (gain 1/2^`adaptive_gain_shift`) of the
//! gaps between data segments, clamped to [`adaptive_min`, `adaptive_max`].
//! **Deliberately different:** the "every second full-sized segment" rule is
//! Linux's byte test `rcv_nxt - rcv_wup > rcv_mss` (`__tcp_ack_snd_check`),
//! with `rcv_mss` = the configured MSS. In `linux` mode gaps are measured on
//! the exact clock, not in jiffies (sub-millisecond gaps are all below
//! `TCP_ATO_MIN / 2` either way); quick-ACK credit counts one per ACK sent
//! (`tcp_dec_quickack_mode` with one packet); the quick-ACK budget uses the
//! constant advertised window, `min(max(rcv_wnd / (2·MSS), 2), quickack_segments)`;
//! the `ICSK_ACK_PUSHED` 200 ms cap is not applied, only `ato_max`. In
//! `adaptive` mode every data segment (in order or not) is a gap sample, each
//! sample clamped to `adaptive_max` so one idle period cannot dominate, and
//! before the first sample the timeout is `adaptive_max`.
//! **Not modelled:** Linux's pingpong (interactive) heuristic and the ATO
//! deflation on leaving it, `tcp_delack_max` / BPF overrides, receive-buffer
//! driven ACKs (`__tcp_select_window`), quick ACKs on ECN CE marks.

use super::clock::TcpClock;
use super::receiver::Arrival;
use super::rto::RtoEstimator;
use crate::settings::{python_repr, Count, Duration, Spec};
use crate::time::{SimDuration, SimTime};
use serde_json::Value as Json;

crate::settings! {
    /// Delayed-ACK knobs (RFC 1122 4.2.3.2, RFC 5681 4.2).
    ///
    /// Default values:
    /// - `mode`: a fixed 40 ms timeout — Linux `TCP_DELACK_MIN`, the delay FAST08
    ///   §4.2 blames for the "mini-timeouts" at 3–5 servers, as FAST08 §4.2 and
    ///   CMU09 §4.1 study it. RFC 1122 allows up to 500 ms.
    /// - `quickack_segments`: 16 — Linux `TCP_MAX_QUICKACKS` (`linux` mode).
    /// - `ato_min`: 40 ms — Linux `TCP_ATO_MIN` (= `TCP_DELACK_MIN`, `linux` mode).
    /// - `ato_max`: 500 ms — Linux `HZ/2`, the cap `tcp_send_delayed_ack` puts on a
    ///   delayed ACK (`linux` mode).
    /// - `adaptive_gain_shift`: 3 — the smoothed gap moves 1/2^3 = 1/8 of the way
    ///   to each sample, the gain RFC 6298 gives SRTT (`adaptive` mode).
    /// - `adaptive_multiplier`: 2 — the timeout is two smoothed gaps: in a steady
    ///   stream the next segment (which draws the every-second-segment ACK) arrives
    ///   one gap later, so twice the gap tolerates 100% jitter before a timer fires,
    ///   yet a lone segment waits only about one gap longer than necessary.
    /// - `adaptive_min`: 1 µs — below the gap between full-sized frames at 10 Gbps
    ///   (1.2 µs); it only stops back-to-back small segments arming a near-zero timer.
    /// - `adaptive_max`: 40 ms — never wait longer than the `standard` default.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DelayedAckConfig {
        /// How long a lone segment may wait for its ACK (a duration); "off"
        /// acknowledges every segment at once; "linux" runs Linux quick-ACK mode
        /// and its adaptive ATO; "adaptive" delays by twice the smoothed
        /// inter-arrival gap (CMU09 §5).
        "delayed_ack" mode: DelayedAckMode = DelayedAckMode::Standard(SimDuration::from_millis(40)), DelayedAckSpec;
        /// "linux" mode: most ACKs sent at once in quick-ACK mode (TCP_MAX_QUICKACKS).
        "delayed_ack_quickack_segments" quickack_segments: u32 = 16, Count::new(0, u32::MAX as u64, "ACKs");
        /// "linux" mode: the smallest and starting ACK timeout (TCP_ATO_MIN).
        "delayed_ack_ato_min" ato_min: SimDuration = SimDuration::from_millis(40), Duration::POSITIVE;
        /// "linux" mode: cap on a delayed ACK's timeout when the ATO exceeds ato_min.
        "delayed_ack_ato_max" ato_max: SimDuration = SimDuration::from_millis(500), Duration::POSITIVE;
        /// "adaptive" mode: the inter-arrival estimator moves 1/2^shift toward each sample.
        "delayed_ack_adaptive_gain_shift" adaptive_gain_shift: u32 = 3, Count::new(0, 16, "");
        /// "adaptive" mode: timeout = multiplier × smoothed inter-arrival gap.
        "delayed_ack_adaptive_multiplier" adaptive_multiplier: u32 = 2, Count::new(1, u32::MAX as u64, "");
        /// "adaptive" mode: lower clamp on the timeout.
        "delayed_ack_adaptive_min" adaptive_min: SimDuration = SimDuration::from_micros(1), Duration::POSITIVE;
        /// "adaptive" mode: upper clamp on the timeout and on each gap sample.
        "delayed_ack_adaptive_max" adaptive_max: SimDuration = SimDuration::from_millis(40), Duration::POSITIVE;
    }
}

/// The receiver's ACK-delay policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DelayedAckMode {
    /// A fixed timeout and the every-second-segment rule.
    Standard(SimDuration),
    /// Every data segment is acknowledged at once (CMU09 §5).
    Off,
    /// Linux quick-ACK mode and adaptive ATO (`tcp_event_data_recv`).
    Linux,
    /// CMU09 §5's proposal: the timeout follows the smoothed inter-arrival time.
    Adaptive,
}

/// The delayed-ACK policy written as a positive duration (`"40ms"`), `"off"`,
/// `"linux"` or `"adaptive"`.
#[derive(Clone, Copy, Debug)]
pub struct DelayedAckSpec;

impl Spec<DelayedAckMode> for DelayedAckSpec {
    fn parse(&self, raw: &Json) -> Result<DelayedAckMode, String> {
        let word = raw.as_str().map(|s| s.trim().to_ascii_lowercase());
        match (raw, word.as_deref()) {
            (Json::Null | Json::Bool(false), _) | (_, Some("off")) => return Ok(DelayedAckMode::Off),
            (_, Some("linux")) => return Ok(DelayedAckMode::Linux),
            (_, Some("adaptive")) => return Ok(DelayedAckMode::Adaptive),
            _ => {}
        }
        let forms = self.allowed();
        match Duration::ANY.parse(raw) {
            Ok(d) if d.is_zero() => Err(format!("must be {forms}; got {}", python_repr(raw))),
            Ok(d) => Ok(DelayedAckMode::Standard(d)),
            Err(e) => Err(format!("must be {forms}; {e}")),
        }
    }
    fn toml(&self, value: &DelayedAckMode) -> Json {
        match value {
            DelayedAckMode::Standard(d) => Duration::ANY.toml(d),
            DelayedAckMode::Off => Json::String("off".into()),
            DelayedAckMode::Linux => Json::String("linux".into()),
            DelayedAckMode::Adaptive => Json::String("adaptive".into()),
        }
    }
    fn si(&self, value: &DelayedAckMode) -> Json {
        match value {
            DelayedAckMode::Standard(d) => Duration::ANY.si(d),
            other => self.toml(other),
        }
    }
    fn kind(&self) -> &'static str {
        "delayed ack"
    }
    fn allowed(&self) -> String {
        "a positive duration (e.g. \"40ms\"), \"off\" (ACK every segment), \"linux\" or \"adaptive\"".into()
    }
    fn none_word(&self) -> Option<&'static str> {
        Some("off")
    }
}

impl DelayedAckConfig {
    /// Delayed ACK off: every data segment acknowledged at once.
    pub fn off() -> Self {
        DelayedAckConfig { mode: DelayedAckMode::Off, ..DelayedAckConfig::default() }
    }

    /// The clamps of the `linux` and `adaptive` modes are in order.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let f = Duration::format;
        if self.ato_min > self.ato_max {
            let m = format!("must not exceed tcp.delayed_ack_ato_max ({}), got {}", f(self.ato_max), f(self.ato_min));
            return Err(("tcp.delayed_ack_ato_min", m));
        }
        if self.adaptive_min > self.adaptive_max {
            let m = format!(
                "must not exceed tcp.delayed_ack_adaptive_max ({}), got {}",
                f(self.adaptive_max),
                f(self.adaptive_min)
            );
            return Err(("tcp.delayed_ack_adaptive_min", m));
        }
        Ok(())
    }
}

/// How long a lone segment's ACK may wait, per mode.
#[derive(Clone, Debug)]
enum Delay {
    /// Delayed ACK off.
    Off,
    /// A fixed timeout.
    Fixed(SimDuration),
    /// Linux quick-ACK mode and ATO estimator (boxed, as the adaptive
    /// estimator: a receiver's delayed-ACK state then fits one cache line).
    Linux(Box<LinuxAto>),
    /// CMU09 §5: a multiple of the smoothed inter-arrival gap.
    Adaptive(Box<GapEstimator>),
}

/// Linux `inet_csk(sk)->icsk_ack` state.
#[derive(Clone, Debug)]
struct LinuxAto {
    /// `TCP_ATO_MIN`.
    ato_min: SimDuration,
    /// `HZ/2` cap in `tcp_send_delayed_ack`.
    ato_max: SimDuration,
    /// Quick-ACK budget granted by `tcp_incr_quickack`.
    quickacks: u32,
    /// `icsk_ack.quick`: ACKs still to send at once.
    quick: u32,
    /// `icsk_ack.ato`; `None` until the first data segment (Linux `ato == 0`).
    ato: Option<SimDuration>,
    /// `icsk_ack.lrcvtime`: when the last in-sequence data segment arrived.
    lrcvtime: SimTime,
}

impl LinuxAto {
    /// Linux `tcp_incr_quickack`: `quick = max(quick, quickacks)`.
    fn incr_quickack(&mut self) {
        self.quick = self.quick.max(self.quickacks);
    }

    /// An in-sequence data segment arrived at `now`; `rto` is the receiver's own RTO.
    fn event_data_recv(&mut self, now: SimTime, rto: SimDuration) {
        let min = self.ato_min;
        match self.ato {
            None => {
                // Linux tcp_event_data_recv: "The _first_ data packet received,
                // initialize delayed ACK engine." tcp_incr_quickack(sk,
                // TCP_MAX_QUICKACKS); icsk->icsk_ack.ato = TCP_ATO_MIN;
                self.incr_quickack();
                self.ato = Some(min);
            }
            Some(ato) => {
                let m = now.since(self.lrcvtime);
                if m <= min / 2 {
                    // Linux tcp_event_data_recv: if (m <= TCP_ATO_MIN / 2)
                    // ato = (ato >> 1) + TCP_ATO_MIN / 2;
                    self.ato = Some(ato / 2 + min / 2);
                } else if m < ato {
                    // Linux tcp_event_data_recv: else if (m < ato) { ato = (ato >> 1)
                    // + m; if (ato > icsk_rto) ato = icsk_rto; }
                    self.ato = Some((ato / 2 + m).min(rto));
                } else if m > rto {
                    // Linux tcp_event_data_recv: else if (m > icsk_rto) "Too long
                    // gap. Apparently sender failed to restart window, so that we
                    // send ACKs quickly." tcp_incr_quickack(sk, TCP_MAX_QUICKACKS);
                    self.incr_quickack();
                }
            }
        }
        self.lrcvtime = now;
    }

    /// Linux `tcp_enter_quickack_mode`: quick-ACK credit and `ato = TCP_ATO_MIN`.
    fn enter_quickack_mode(&mut self) {
        self.incr_quickack();
        self.ato = Some(self.ato_min);
    }

    /// Linux `tcp_send_delayed_ack`: the timeout a new delayed ACK gets.
    fn timeout(&self, srtt: Option<SimDuration>) -> SimDuration {
        let ato = self.ato.unwrap_or(self.ato_min);
        if ato <= self.ato_min {
            return ato;
        }
        // Linux tcp_send_delayed_ack: if (ato > TCP_DELACK_MIN) { max_ato = HZ / 2;
        // ... if (tp->srtt_us) { rtt = max(srtt, TCP_DELACK_MIN); if (rtt < max_ato)
        // max_ato = rtt; } ato = min(ato, max_ato); }
        let mut max_ato = self.ato_max;
        if let Some(s) = srtt {
            max_ato = max_ato.min(s.max(self.ato_min));
        }
        ato.min(max_ato)
    }
}

/// CMU09 §5: EWMA of the gaps between data segments.
#[derive(Clone, Debug)]
struct GapEstimator {
    shift: u32,
    multiplier: u64,
    min: SimDuration,
    max: SimDuration,
    /// Smoothed gap, picoseconds; `None` before the first sample.
    sgap: Option<u64>,
    /// Arrival time of the last data segment.
    last: Option<SimTime>,
}

impl GapEstimator {
    fn on_arrival(&mut self, now: SimTime) {
        if let Some(last) = self.last {
            // Each sample is clamped to `adaptive_max`: an idle period counts
            // as one long gap, not as an unbounded one.
            let m = now.since(last).as_ps().min(self.max.as_ps());
            // CMU09 §5: "tracking the smoothed inter-arrival time" — sgap +=
            // (m − sgap) / 2^shift, as RFC 6298 (2.3) smooths SRTT with 1/8.
            self.sgap = Some(match self.sgap {
                None => m,
                Some(s) if m >= s => s + ((m - s) >> self.shift),
                Some(s) => s - ((s - m) >> self.shift),
            });
        }
        self.last = Some(now);
    }

    /// clamp(multiplier × sgap, min, max); `max` before the first sample.
    fn timeout(&self) -> SimDuration {
        let Some(s) = self.sgap else { return self.max };
        let t = SimDuration(s.saturating_mul(self.multiplier));
        t.max(self.min).min(self.max)
    }
}

/// When the receiver owes an ACK and when its delayed-ACK timer fires.
#[derive(Clone, Debug)]
pub struct DelayedAck {
    delay: Delay,
    /// Receiver MSS used by the "more than one segment unacknowledged" test.
    rcv_mss: u64,
    /// An ACK must go out at the next transmit opportunity.
    ack_now: bool,
    /// Delayed-ACK timer deadline, when armed.
    deadline: Option<SimTime>,
    /// RCV.NXT carried by the last ACK sent (Linux `rcv_wup`).
    rcv_wup: u64,
}

impl DelayedAck {
    /// The policy `cfg` for a receiver with MSS `mss` advertising `rcv_wnd` bytes.
    pub fn new(cfg: &DelayedAckConfig, mss: u32, rcv_wnd: u64) -> Self {
        let rcv_mss = (mss as u64).max(1);
        let delay = match cfg.mode {
            DelayedAckMode::Off => Delay::Off,
            DelayedAckMode::Standard(timeout) => Delay::Fixed(timeout),
            DelayedAckMode::Linux => {
                // Linux tcp_incr_quickack: quickacks = rcv_wnd / (2 * rcv_mss);
                // if (quickacks == 0) quickacks = 2; quickacks = min(quickacks, max);
                let budget = (rcv_wnd / (2 * rcv_mss)).max(2).min(cfg.quickack_segments as u64) as u32;
                Delay::Linux(Box::new(LinuxAto {
                    ato_min: cfg.ato_min,
                    ato_max: cfg.ato_max,
                    quickacks: budget,
                    quick: 0,
                    ato: None,
                    lrcvtime: SimTime::ZERO,
                }))
            }
            DelayedAckMode::Adaptive => Delay::Adaptive(Box::new(GapEstimator {
                shift: cfg.adaptive_gain_shift.min(63),
                multiplier: cfg.adaptive_multiplier as u64,
                min: cfg.adaptive_min,
                max: cfg.adaptive_max,
                sgap: None,
                last: None,
            })),
        };
        DelayedAck { delay, rcv_mss, ack_now: false, deadline: None, rcv_wup: 0 }
    }

    /// A data segment arrived; `rcv_nxt` is RCV.NXT after it was accepted,
    /// `est` the receiving endpoint's own RTO estimator (read in `linux` mode only).
    // Inline always: it runs on every data segment, and with `#[inline]`
    // alone LLVM keeps it out of line in both builds (`tcp::gated`).
    #[inline(always)]
    pub fn on_data(&mut self, now: SimTime, clock: &TcpClock, arrival: Arrival, rcv_nxt: u64, est: &RtoEstimator) {
        let mut quick = false;
        let timeout = match &mut self.delay {
            Delay::Off => {
                // Delayed ACK off (CMU09 §5): every data segment is ACKed at once.
                self.ack_now = true;
                return;
            }
            Delay::Fixed(t) => *t,
            Delay::Linux(l) => {
                match arrival {
                    // Linux tcp_data_queue: in-sequence data calls tcp_event_data_recv.
                    Arrival::InOrder | Arrival::FillsGap => l.event_data_recv(now, est.rto()),
                    // Linux tcp_data_queue: "A retransmit, 2nd most common case.
                    // Force an immediate ack." tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS);
                    Arrival::Duplicate => l.enter_quickack_mode(),
                    Arrival::OutOfOrder => {}
                }
                // Linux tcp_in_quickack_mode: icsk->icsk_ack.quick && !pingpong.
                quick = l.quick > 0;
                l.timeout(est.srtt())
            }
            Delay::Adaptive(g) => {
                g.on_arrival(now);
                g.timeout()
            }
        };
        let immediate = quick
            || match arrival {
                // RFC 5681 (4.2): "the receiver SHOULD send an immediate duplicate ACK
                // when it receives a data segment above a gap in the sequence space."
                Arrival::OutOfOrder => true,
                // RFC 793 (3.9): "If an incoming segment is not acceptable, an
                // acknowledgment should be sent in reply"
                Arrival::Duplicate => true,
                // RFC 5681 (4.2): "the receiver SHOULD send an immediate ACK when it
                // receives a data segment that fills in all or part of a gap"
                Arrival::FillsGap => true,
                // RFC 1122 (4.2.3.2): "in a stream of full-sized segments there
                // SHOULD be an ACK for at least every second segment."
                // DEVIATION (Linux): `__tcp_ack_snd_check` ACKs once more than one
                // receiver MSS is unacknowledged, `rcv_nxt - rcv_wup > rcv_mss`.
                Arrival::InOrder => rcv_nxt - self.rcv_wup > self.rcv_mss,
            };
        if immediate {
            self.ack_now = true;
            return;
        }
        // RFC 5681 (4.2): "an ACK ... MUST be generated within 500 ms of the
        // arrival of the first unacknowledged packet." — `timeout` after it.
        let new = clock.deadline(now, timeout);
        self.deadline = Some(match self.deadline {
            // Linux tcp_send_delayed_ack: "Use new timeout only if there wasn't a
            // older one earlier." (`standard` and `adaptive` keep the first one.)
            Some(d) if matches!(self.delay, Delay::Linux(_)) => {
                // Linux tcp_send_delayed_ack: "If delack timer is about to expire,
                // send ACK now." if (icsk_ack.timeout <= jiffies + (ato >> 2))
                if d <= now + timeout / 4 {
                    self.ack_now = true;
                }
                d.min(new)
            }
            Some(d) => d,
            None => new,
        });
    }

    /// An ACK went out (pure or piggybacked on data) carrying `rcv_nxt`.
    #[inline]
    pub fn on_ack_sent(&mut self, rcv_nxt: u64) {
        self.ack_now = false;
        self.deadline = None;
        self.rcv_wup = rcv_nxt;
        if let Delay::Linux(l) = &mut self.delay {
            // Linux tcp_dec_quickack_mode (one packet): if (pkts >= quick) { quick = 0;
            // "Leaving quickack mode we deflate ATO." ato = TCP_ATO_MIN; } else quick -= pkts;
            if l.quick == 1 {
                l.ato = Some(l.ato_min);
            }
            l.quick = l.quick.saturating_sub(1);
        }
    }

    /// Fire the delayed-ACK timer if due; returns true when it fired. `rto`
    /// is the receiving endpoint's own RTO (`linux` mode).
    pub fn on_timer(&mut self, now: SimTime, rto: SimDuration) -> bool {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                self.ack_now = true;
                if let Delay::Linux(l) = &mut self.delay {
                    // Linux tcp_delack_timer_handler: "Delayed ACK missed: inflate
                    // ATO." ato = min(ato << 1, icsk_rto);
                    l.ato = l.ato.map(|ato| ato.saturating_mul(2).min(rto));
                }
                true
            }
            _ => false,
        }
    }

    /// True when an ACK is owed right now.
    #[inline]
    pub fn should_ack(&self) -> bool {
        self.ack_now
    }

    /// The delayed-ACK deadline, when armed.
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.deadline
    }

    /// `linux` mode: the current ATO (`None` before the first data segment or
    /// in other modes).
    pub fn ato(&self) -> Option<SimDuration> {
        match &self.delay {
            Delay::Linux(l) => l.ato,
            _ => None,
        }
    }

    /// `linux` mode: ACKs still to be sent at once (Linux `icsk_ack.quick`).
    pub fn quick(&self) -> u32 {
        match &self.delay {
            Delay::Linux(l) => l.quick,
            _ => 0,
        }
    }

    /// The timeout a lone segment arriving now would get, for `standard` and
    /// `adaptive` modes (`None` when off or in `linux` mode).
    pub fn current_timeout(&self) -> Option<SimDuration> {
        match &self.delay {
            Delay::Fixed(t) => Some(*t),
            Delay::Adaptive(g) => Some(g.timeout()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::receiver::Receiver;
    use crate::tcp::RtoConfig;

    const MSS: u32 = 1460;
    const MS: u64 = 1_000_000_000;
    const RTO: SimDuration = SimDuration(200 * MS);

    fn delayed() -> (DelayedAck, Receiver, TcpClock) {
        let d = DelayedAck::new(&DelayedAckConfig::default(), MSS, 65536);
        (d, Receiver::new(), TcpClock::new(SimDuration::ZERO))
    }

    fn arrive(d: &mut DelayedAck, r: &mut Receiver, c: &TcpClock, now: u64, seq: u64, len: u32) {
        let a = r.on_data(seq, len);
        d.on_data(SimTime(now), c, a, r.rcv_nxt(), &RtoEstimator::new(RtoConfig::default()));
    }

    /// RFC 5681 (4.2): a lone in-order segment waits for the delayed-ACK timer.
    #[test]
    fn rfc5681_4_2_lone_segment_waits_for_timer() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, MS, 0, MSS);
        assert!(!d.should_ack());
        assert_eq!(d.poll_timeout(), Some(SimTime(41 * MS)));
        assert!(!d.on_timer(SimTime(41 * MS - 1), RTO));
        assert!(d.on_timer(SimTime(41 * MS), RTO));
        assert!(d.should_ack());
        assert_eq!(d.poll_timeout(), None);
    }

    /// RFC 1122 (4.2.3.2): the second full-sized segment is ACKed at once,
    /// and the timer stays armed from the first.
    #[test]
    fn rfc1122_4_2_3_2_second_full_segment_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        arrive(&mut d, &mut r, &c, 5 * MS, MSS as u64, MSS);
        assert!(d.should_ack());
        d.on_ack_sent(r.rcv_nxt());
        assert_eq!(d.poll_timeout(), None);
        // The count restarts from the ACKed point.
        arrive(&mut d, &mut r, &c, 6 * MS, 2 * MSS as u64, MSS);
        assert!(!d.should_ack());
        assert_eq!(d.poll_timeout(), Some(SimTime(46 * MS)));
    }

    /// RFC 1122 (4.2.3.2), DEVIATION (Linux): small segments are ACKed once more
    /// than one MSS of them is unacknowledged.
    #[test]
    fn rfc1122_4_2_3_2_small_segments_acked_after_one_mss() {
        let (mut d, mut r, c) = delayed();
        for i in 0..14 {
            arrive(&mut d, &mut r, &c, 0, i * 100, 100);
            assert!(!d.should_ack(), "{} bytes unacked", (i + 1) * 100);
        }
        arrive(&mut d, &mut r, &c, 0, 1400, 100);
        assert!(d.should_ack());
    }

    /// RFC 5681 (4.2): out-of-order and gap-filling segments are ACKed at once.
    #[test]
    fn rfc5681_4_2_out_of_order_and_gap_fill_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, MSS as u64, MSS);
        assert!(d.should_ack());
        d.on_ack_sent(r.rcv_nxt());
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        assert!(d.should_ack());
    }

    /// RFC 793 (3.9): a duplicate segment is ACKed at once.
    #[test]
    fn rfc793_3_9_duplicate_segment_acked_at_once() {
        let (mut d, mut r, c) = delayed();
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        d.on_ack_sent(r.rcv_nxt());
        arrive(&mut d, &mut r, &c, 0, 0, MSS);
        assert!(d.should_ack());
    }

    /// CMU09 §5: with delayed ACK off every data segment is ACKed at once.
    #[test]
    fn off_mode_acks_every_segment() {
        let mut d = DelayedAck::new(&DelayedAckConfig::off(), MSS, 65536);
        let mut r = Receiver::new();
        let c = TcpClock::new(SimDuration::ZERO);
        arrive(&mut d, &mut r, &c, 0, 0, 100);
        assert!(d.should_ack());
        assert_eq!(d.poll_timeout(), None);
    }

    /// On a jiffy clock the timer expires on a tick boundary.
    #[test]
    fn jiffy_clock_timer_on_tick_boundary() {
        let mut d = DelayedAck::new(&DelayedAckConfig::default(), MSS, 65536);
        let mut r = Receiver::new();
        let c = TcpClock::new(SimDuration::from_millis(4));
        arrive(&mut d, &mut r, &c, 5 * MS, 0, 100);
        // tick(5 ms) = 1; 1 + 10 ticks = 44 ms.
        assert_eq!(d.poll_timeout(), Some(SimTime(44 * MS)));
    }
}
