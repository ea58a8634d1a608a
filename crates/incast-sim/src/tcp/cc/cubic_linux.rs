//! Cubic as Linux's `tcp_cubic.c` computes it (`tcp.cubic_flavor = "linux"`).
//!
//! **Models:** the same curve as [`super::cubic`] (RFC 9438), in the kernel's
//! arithmetic (`bictcp_update`, Linux 6.x): windows in whole segments; time
//! in jiffies of the TCP clock (`tcp.clock_granularity`), converted to
//! 1/1024 s (`BICTCP_HZ`), with the smallest RTT seen (`delay_min`) added to
//! the time into the epoch; the growth rate kept as `cnt`, the segments to
//! acknowledge per segment of growth, and applied by `tcp_cong_avoid_ai`
//! with its carried count (`snd_cwnd_cnt`). The kernel recomputes `cnt` at
//! most once per jiffy, and while cwnd holds still at most once per HZ/32
//! jiffies: `if (ca->last_cwnd == cwnd && (s32)(tcp_jiffies32 -
//! ca->last_time) <= HZ / 32) return;`. At HZ=250 that is 28 ms, so a window
//! that the curve holds flat (`cnt = 100·cwnd`) stays flat that long, however
//! many ACKs the Reno-friendly estimate has counted meanwhile: in a kernel
//! trace (`tcp:tcp_probe`) of the testbed at 16 servers, a server left
//! recovery at cwnd 4 and kept it for 30 ms and 30 ACKs, where RFC 9438's
//! per-ACK rule grows it within an RTT. The other kernel rules here: `cnt`
//! at most 20 while W_max is unknown ("increase cwnd 5% per RTT"), at least
//! 2 (1.5·cwnd per RTT);
//! `tcp_friendliness` with `beta_scale = 8(1024 + β)/3/(1024 − β)`; when
//! data is sent with nothing in flight, the epoch start moves forward by the
//! time since the last send (`CA_EVENT_TX_START`, "Shift epoch_start to keep
//! cwnd growth to cubic curve"), no later than now; restart after idle
//! leaves the curve alone (`CA_EVENT_CWND_RESTART` is not Cubic's);
//! ssthresh and W_max with fast convergence in segments
//! (`cubictcp_recalc_ssthresh`); a timeout forgets everything, `delay_min`
//! included (`bictcp_reset`); RTT samples within a second (HZ jiffies) of an
//! epoch's start are not taken (`cubictcp_acked`). With an exact clock
//! (`clock_granularity` 0) a jiffy is 1 ms, Linux's HZ=1000.
//! **Deliberately different:** K is an exact integer cube root where Linux
//! uses a table and one Newton step (`cubic_root`, within 0.2 %). Segments
//! acknowledged are counted from bytes, the remainder carried.
//! `snd_cwnd_cnt` is cleared at each loss event and timeout, where the
//! kernel clears it as it enters recovery or loss.
//! **Not modelled:** the same as [`super::cubic`]; HyStart is shared
//! ([`super::hystart`]).

use super::cubic::{icbrt, CubicConfig};
use super::hystart::HyStart;
use super::{CongestionControl, RttSample};
use crate::time::{SimDuration, SimTime};

/// Linux `BICTCP_BETA_SCALE`: β is `beta`/1024.
const BETA_SCALE: u64 = 1024;
/// Linux `BICTCP_HZ`: the curve's time unit is 2⁻¹⁰ s.
const BICTCP_HZ: u32 = 10;
/// Picoseconds per second.
const PS_PER_S: u64 = 1_000_000_000_000;
/// Picoseconds per microsecond.
const PS_PER_US: u64 = 1_000_000;
/// The jiffy of an exact clock: Linux's HZ=1000.
const EXACT_CLOCK_JIFFY: SimDuration = SimDuration::from_millis(1);

/// Cubic state of one sender, as Linux `struct bictcp` holds it.
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    smss: u64,
    /// β·1024.
    beta: u64,
    fast_convergence: bool,
    /// C·1024 (Linux `cube_rtt_scale = bic_scale * 10`).
    cube_rtt_scale: u64,
    /// 2⁴⁰ / `cube_rtt_scale` (Linux `cube_factor`).
    cube_factor: u64,
    /// Linux `beta_scale`: Reno-friendly ACKs per segment of growth, × 8 / cwnd.
    beta_scale: u64,
    /// The jiffy, in picoseconds.
    jiffy_ps: u64,
    /// Jiffies per second (HZ).
    hz: u64,
    /// Segments to acknowledge per segment of growth.
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    /// Jiffy of the last `cnt` update (0: none).
    last_time: u64,
    bic_origin_point: u64,
    /// K in 2⁻¹⁰ s.
    bic_k: u64,
    /// Smallest RTT seen, in µs (0: none).
    delay_min: u64,
    /// Jiffy the epoch started (0: no epoch).
    epoch_start: u64,
    ack_cnt: u64,
    /// The Reno-friendly window estimate, in segments.
    tcp_cwnd: u64,
    /// Linux `tp->snd_cwnd_cnt`.
    cwnd_cnt: u64,
    /// Acknowledged bytes short of a whole segment, carried.
    acked_bytes: u64,
    /// The last send a `CA_EVENT_TX_START` shifted the epoch for.
    shifted_for: Option<SimTime>,
    hystart: Option<Box<HyStart>>,
}

impl LinuxCubic {
    /// Fresh state (`cubictcp_init`) for segments of `smss` bytes on a clock of
    /// `jiffy` (0: exact, counted in 1 ms jiffies).
    pub fn new(smss: u64, cfg: CubicConfig, jiffy: SimDuration) -> Self {
        let beta = (cfg.beta as u64).clamp(1, BETA_SCALE - 1);
        let cube_rtt_scale = ((cfg.c_thousandths as u64 * 1024 + 500) / 1000).max(1);
        let jiffy = if jiffy == SimDuration::ZERO { EXACT_CLOCK_JIFFY } else { jiffy };
        LinuxCubic {
            smss: smss.max(1),
            beta,
            fast_convergence: cfg.fast_convergence,
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            jiffy_ps: jiffy.as_ps(),
            hz: (PS_PER_S / jiffy.as_ps()).max(1),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
            acked_bytes: 0,
            shifted_for: None,
            hystart: cfg.hystart.then(|| Box::new(HyStart::new(smss))),
        }
    }

    /// `tcp_jiffies32` at `now`, from 1 so that 0 can mean "none" as in the kernel.
    #[inline]
    fn jiffies(&self, now: SimTime) -> u64 {
        now.as_ps() / self.jiffy_ps + 1
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
    }

    /// Segments to acknowledge per segment of growth now.
    #[inline]
    pub fn cnt(&self) -> u64 {
        self.cnt
    }

    /// Linux `bictcp_update`: `cnt` for a window of `cwnd` segments after an
    /// ACK of `acked` segments at jiffy `now`.
    fn update(&mut self, cwnd: u64, acked: u64, now: u64) {
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now - self.last_time <= self.hz / 32 {
            return;
        }
        // "The CUBIC function can update ca->cnt at most once per jiffy."
        if self.epoch_start == 0 || now != self.last_time {
            self.last_cwnd = cwnd;
            self.last_time = now;
            if self.epoch_start == 0 {
                self.epoch_start = now;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    self.bic_k = icbrt(self.cube_factor as u128 * (self.last_max_cwnd - cwnd) as u128);
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            // "t = (s32)(tcp_jiffies32 - ca->epoch_start); t += usecs_to_jiffies(ca->delay_min);"
            let delay_jiffies = (self.delay_min * PS_PER_US).div_ceil(self.jiffy_ps);
            let t = ((now - self.epoch_start + delay_jiffies) << BICTCP_HZ) / self.hz;
            let offs = t.abs_diff(self.bic_k) as u128;
            let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.bic_k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // "The initial growth of cubic function may be too conservative
            // when the available bandwidth is still unknown."
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // "TCP Friendly"
        let delta = (cwnd * self.beta_scale) >> 3;
        while self.ack_cnt > delta && delta > 0 {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        // "The maximum rate of cwnd increase CUBIC allows is 1 packet per 2 packets ACKed"
        self.cnt = self.cnt.max(2);
    }
}

impl CongestionControl for LinuxCubic {
    /// `cubictcp_cong_avoid` past slow start: `bictcp_update`, then
    /// `tcp_cong_avoid_ai(tp, ca->cnt, acked)`. Kept out of line, so that the
    /// per-ACK dispatch of the other algorithms stays small enough to inline.
    #[inline(never)]
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, now: SimTime, _srtt: SimDuration) -> u64 {
        self.acked_bytes += acked;
        let acked = self.acked_bytes / self.smss;
        self.acked_bytes %= self.smss;
        if acked == 0 {
            return cwnd;
        }
        let segments = (cwnd / self.smss).max(1);
        self.update(segments, acked, self.jiffies(now));
        let w = self.cnt;
        let mut grown = segments;
        // "If credits accumulated at a higher w, apply them gently now."
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            grown += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            grown += delta;
        }
        cwnd + (grown - segments) * self.smss
    }

    /// `cubictcp_recalc_ssthresh`, in segments.
    fn ssthresh(&mut self, cwnd: u64, _flight: u64) -> u64 {
        let segments = cwnd / self.smss;
        self.epoch_start = 0;
        self.cwnd_cnt = 0;
        self.last_max_cwnd = if segments < self.last_max_cwnd && self.fast_convergence {
            segments * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            segments
        };
        (segments * self.beta / BETA_SCALE).max(2) * self.smss
    }

    /// `CA_Loss`: `bictcp_reset` and `bictcp_hystart_reset`.
    fn on_timeout(&mut self, _lost: u64) {
        self.reset();
        self.cwnd_cnt = 0;
        if let Some(h) = &mut self.hystart {
            h.on_timeout();
        }
    }

    /// `cubictcp_acked`: `delay_min`, and HyStart when on.
    fn on_rtt_sample(&mut self, sample: &RttSample) -> bool {
        let now = self.jiffies(sample.now);
        // "Discard delay samples right after fast recovery"
        if self.epoch_start != 0 && now - self.epoch_start < self.hz {
            return false;
        }
        let delay = (sample.rtt.as_ps() / PS_PER_US).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        self.hystart.as_mut().is_some_and(|h| h.on_rtt_sample(sample))
    }

    /// `CA_EVENT_TX_START` at `now`, the last data having gone out at `last_send`.
    fn on_tx_start(&mut self, now: SimTime, last_send: Option<SimTime>, _app_limited: bool) {
        let Some(last) = last_send else { return };
        if self.shifted_for == Some(last) {
            return;
        }
        self.shifted_for = Some(last);
        let now = self.jiffies(now);
        let delta = now - self.jiffies(last);
        if self.epoch_start != 0 && delta > 0 {
            self.epoch_start = (self.epoch_start + delta).min(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const JIFFY: SimDuration = SimDuration::from_millis(4);

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    /// Two losses, at 10 and then 8 segments: fast convergence leaves W_max
    /// at 8·(1 + β)/2 = 6, below the window the next epoch starts from (7,
    /// after slow start to ssthresh and one more segment), so K = 0 and the
    /// curve is flat for its first second: `cnt = 100·cwnd`. The
    /// Reno-friendly count passes cwnd within two RTTs of ACKs, but `cnt` is
    /// not recomputed for HZ/32 = 7 jiffies (28 ms at HZ=250) while cwnd
    /// stays 7; on the first ACK after that, growth resumes.
    #[test]
    fn a_flat_curve_holds_cwnd_for_hz_over_32_jiffies() {
        let mut c = LinuxCubic::new(MSS, CubicConfig::default(), JIFFY);
        c.ssthresh(10 * MSS, 10 * MSS);
        assert_eq!(c.ssthresh(8 * MSS, 8 * MSS), 5 * MSS);
        assert_eq!(c.last_max_cwnd, 6);
        let mut cwnd = 7 * MSS;
        // One ACK per ms for 28 ms: the epoch starts at the first and cnt is 700.
        for t in 0..=28 {
            cwnd = c.cong_avoid(cwnd, MSS, ms(t), SimDuration::ZERO);
        }
        assert_eq!((cwnd, c.cnt()), (7 * MSS, 700));
        // 32 ms: 8 jiffies after the epoch's, cnt recomputed: the curve is
        // still flat, the 30 ACKs counted make tcp_cwnd = 7 + 30/13 = 9, so
        // cnt = 7/2 = 3; the count carried from cnt = 700 is applied as one segment.
        cwnd = c.cong_avoid(cwnd, MSS, ms(32), SimDuration::ZERO);
        assert_eq!((cwnd, c.cnt()), (8 * MSS, 3));
        cwnd = c.cong_avoid(cwnd, MSS, ms(33), SimDuration::ZERO);
        assert_eq!(cwnd, 8 * MSS);
        cwnd = c.cong_avoid(cwnd, MSS, ms(34), SimDuration::ZERO);
        assert_eq!(cwnd, 9 * MSS);
    }

    /// RFC 9438's per-ACK rule on the same ACKs grows the window within the
    /// first RTTs: the difference this module exists for.
    #[test]
    fn rfc9438_grows_where_linux_holds() {
        let mut rfc = super::super::cubic::Cubic::new(MSS, CubicConfig::default());
        rfc.ssthresh(10 * MSS, 10 * MSS);
        rfc.ssthresh(8 * MSS, 8 * MSS);
        let mut cwnd = 7 * MSS;
        for t in 0..=28 {
            cwnd = rfc.cong_avoid(cwnd, MSS, ms(t), SimDuration::from_millis(1));
        }
        assert!(cwnd >= 8 * MSS, "{cwnd}");
    }

    /// Without a known W_max (a fresh connection or after a timeout) the
    /// curve grows at least 5 % per RTT: cnt ≤ 20.
    #[test]
    fn unknown_w_max_caps_cnt_at_20() {
        let mut c = LinuxCubic::new(MSS, CubicConfig::default(), JIFFY);
        c.cong_avoid(40 * MSS, MSS, ms(0), SimDuration::ZERO);
        assert_eq!(c.cnt(), 20);
    }

    /// CA_EVENT_TX_START: the epoch moves forward by the idle time since the
    /// last send, never past now; a second call for the same idle period does
    /// nothing.
    #[test]
    fn sending_after_idle_shifts_the_epoch_by_the_idle_time() {
        let mut c = LinuxCubic::new(MSS, CubicConfig::default(), JIFFY);
        c.ssthresh(10 * MSS, 10 * MSS);
        c.cong_avoid(7 * MSS, MSS, ms(0), SimDuration::ZERO);
        assert_eq!(c.epoch_start, 1);
        c.on_tx_start(ms(40), Some(ms(8)), false);
        assert_eq!(c.epoch_start, 1 + 8);
        c.on_tx_start(ms(40), Some(ms(8)), false);
        assert_eq!(c.epoch_start, 1 + 8);
        c.on_tx_start(ms(100), Some(ms(0)), false);
        assert_eq!(c.epoch_start, 26, "no later than now");
    }

    /// Fast convergence and the decrease in whole segments
    /// (`cubictcp_recalc_ssthresh`); a timeout forgets W_max.
    #[test]
    fn ssthresh_in_segments_with_fast_convergence() {
        let mut c = LinuxCubic::new(MSS, CubicConfig::default(), JIFFY);
        assert_eq!(c.ssthresh(20 * MSS + 999, 0), 14 * MSS);
        assert_eq!(c.last_max_cwnd, 20);
        assert_eq!(c.ssthresh(10 * MSS, 0), 7 * MSS);
        assert_eq!(c.last_max_cwnd, 10 * 1741 / 2048);
        assert_eq!(c.ssthresh(2 * MSS, 0), 2 * MSS, "at least two segments");
        c.on_timeout(0);
        assert_eq!(c.last_max_cwnd, 0);
    }
}
