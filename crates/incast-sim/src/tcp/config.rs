//! TCP knobs that experiments vary.
//!
//! **Models:** every constant the incast papers sweep is a field here, never a
//! `const` in the code: RTO_min down to microseconds, the timer granularity
//! (high-resolution or jiffies), the delayed-ACK mode and timeouts, the initial window,
//! and the loss-recovery variants of FAST08 §5.1 (Reno or NewReno, limited
//! transmit, the duplicate-ACK threshold, slow start on or off), plus the
//! restart after idle and the Cubic constants (RFC 9438).
//! **Deliberately different:** defaults follow Linux where Linux and the RFCs
//! disagree, because `incast validate` compares the simulator against the
//! Linux kernel; each default below says where it comes from.
//! **Not modelled:** window scaling as a separate option (windows are plain
//! byte counts, as if scaled), MSS negotiation (both ends use `mss`).

use crate::time::{Bytes, SimDuration};
use serde::{Deserialize, Serialize};

/// Retransmission-timer knobs (RFC 6298).
///
/// Default values:
/// - `min`: 200 ms — Linux `TCP_RTO_MIN`, the value the incast papers start from
///   (FAST08 Table 1). RFC 6298 (2.4) says 1 s.
/// - `max`: 120 s — Linux `TCP_RTO_MAX`; RFC 6298 (2.5) allows any value ≥ 60 s.
/// - `initial`: 1 s — RFC 6298 (2.1). Rarely used: connections start with the
///   handshake's RTT sample already taken (see [`super::Endpoint::new`]).
/// - `granularity`: 0 — high-resolution timers. A non-zero value is a jiffy
///   clock (Linux HZ=1000 → 1 ms, HZ=250 → 4 ms); see `tcp::rto`.
/// - `randomize`: false — RFC 6298 and Linux arm the timer for exactly RTO.
///   True is the CMU09 §5 "randomized timeout delay", `timeout = RTO +
///   (rand(0.5) × RTO)`; see `tcp::rto_timer`.
/// - `max_backoff`: 64 doublings — Linux caps the back-off only through
///   `TCP_RTO_MAX`, and RFC 6298 (5.5) only through the RTO maximum; 64 is
///   beyond any doubling of a non-zero RTO that stays below `max`, so the
///   default leaves `max` as the only cap. CMU09 §7 (Fig 12) describes a back-off
///   "until the maximum factor of 64 * RTO", i.e. `max_backoff = 6`.
/// - `scheduling_delay`: 0 — timers fire exactly. CMU09 §3 adds "a small
///   random timer scheduling delay of up to 20µs"; a non-zero D postpones every
///   retransmission-timer expiry (not the delayed-ACK timer) by a uniform draw
///   from [0, D]; see `tcp::rto_timer`.
/// - `flavor`: [`RtoFlavor::Rfc6298`] — the RFC formula; `Linux` is the
///   kernel's `tcp_rtt_estimator` / `__tcp_set_rto`; see `tcp::rto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtoConfig {
    /// Lower bound on the retransmission timeout (RTO_min).
    pub min: SimDuration,
    /// Upper bound on the retransmission timeout, back-off included (RTO_max).
    pub max: SimDuration,
    /// RTO before any RTT sample.
    pub initial: SimDuration,
    /// Clock granularity G: 0 for exact timers, else the jiffy length.
    pub granularity: SimDuration,
    /// CMU09 §5 randomized timeout: each armed timer lasts RTO + U[0, RTO/2].
    pub randomize: bool,
    /// Most doublings of the RTO after consecutive timeouts (RTO_max still applies).
    pub max_backoff: u32,
    /// Upper bound D of a uniform [0, D] delay added to each retransmission-timer expiry.
    pub scheduling_delay: SimDuration,
    /// How the RTO is computed from the RTT samples.
    pub flavor: RtoFlavor,
}

/// The RTO formula.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RtoFlavor {
    /// RFC 6298 (2.2)–(2.4): `max(RTO_min, SRTT + max(G, 4·RTTVAR))`.
    #[default]
    #[serde(rename = "rfc6298")]
    Rfc6298,
    /// Linux `tcp_rtt_estimator` / `__tcp_set_rto`: `SRTT + rttvar`, where the
    /// variance term `rttvar` (4·mdev) is floored at RTO_min, so RTO ≈
    /// SRTT + max(4·mdev, RTO_min).
    #[serde(rename = "linux")]
    Linux,
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            min: SimDuration::from_millis(200),
            max: SimDuration::from_secs(120),
            initial: SimDuration::from_secs(1),
            granularity: SimDuration::ZERO,
            randomize: false,
            max_backoff: 64,
            scheduling_delay: SimDuration::ZERO,
            flavor: RtoFlavor::Rfc6298,
        }
    }
}

/// Delayed-ACK knobs (RFC 1122 4.2.3.2, RFC 5681 4.2).
///
/// Default values:
/// - `mode`: `standard` — a fixed timeout, as FAST08 §4.2 and CMU09 §4.1 study it.
/// - `timeout`: 40 ms — Linux `TCP_DELACK_MIN`, the delay FAST08 §4.2 blames for
///   the "mini-timeouts" at 3–5 servers. RFC 1122 allows up to 500 ms. Used by
///   `standard` only. `None` is the older spelling of `mode = "off"` and means
///   off in `standard` mode, so scenarios that give only `timeout` keep working.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelayedAckConfig {
    /// Which ACK-delay policy the receiver runs.
    pub mode: DelayedAckMode,
    /// `standard` mode: how long a lone segment may wait for its ACK; `None` = off.
    pub timeout: Option<SimDuration>,
    /// `linux` mode: most ACKs sent at once in quick-ACK mode (`TCP_MAX_QUICKACKS`).
    pub quickack_segments: u32,
    /// `linux` mode: the smallest and starting ACK timeout (`TCP_ATO_MIN`).
    pub ato_min: SimDuration,
    /// `linux` mode: cap on a delayed ACK's timeout when the ATO exceeds `ato_min`.
    pub ato_max: SimDuration,
    /// `adaptive` mode: EWMA gain 1/2^shift of the inter-arrival gap estimator.
    pub adaptive_gain_shift: u32,
    /// `adaptive` mode: timeout = multiplier × smoothed inter-arrival gap.
    pub adaptive_multiplier: u32,
    /// `adaptive` mode: lower clamp on the timeout.
    pub adaptive_min: SimDuration,
    /// `adaptive` mode: upper clamp on the timeout (and on each gap sample).
    pub adaptive_max: SimDuration,
}

/// The receiver's ACK-delay policy (see `tcp::delayed_ack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DelayedAckMode {
    /// A fixed timeout (`timeout`) and the every-second-segment rule.
    #[default]
    #[serde(rename = "standard")]
    Standard,
    /// Every data segment is acknowledged at once (CMU09 §5).
    #[serde(rename = "off")]
    Off,
    /// Linux quick-ACK mode and adaptive ATO (`tcp_event_data_recv`).
    #[serde(rename = "linux")]
    Linux,
    /// CMU09 §5's proposal: the timeout follows the smoothed inter-arrival time.
    #[serde(rename = "adaptive")]
    Adaptive,
}

impl Default for DelayedAckConfig {
    fn default() -> Self {
        DelayedAckConfig {
            mode: DelayedAckMode::Standard,
            timeout: Some(SimDuration::from_millis(40)),
            quickack_segments: 16,
            ato_min: SimDuration::from_millis(40),
            ato_max: SimDuration::from_millis(500),
            adaptive_gain_shift: 3,
            adaptive_multiplier: 2,
            adaptive_min: SimDuration::from_micros(1),
            adaptive_max: SimDuration::from_millis(40),
        }
    }
}

impl DelayedAckConfig {
    /// Delayed ACK off: every data segment acknowledged at once.
    pub fn off() -> Self {
        DelayedAckConfig { mode: DelayedAckMode::Off, timeout: None, ..DelayedAckConfig::default() }
    }

    /// The mode in force: `standard` with `timeout = None` is `off`.
    pub fn effective_mode(&self) -> DelayedAckMode {
        match (self.mode, self.timeout) {
            (DelayedAckMode::Standard, None) => DelayedAckMode::Off,
            (mode, _) => mode,
        }
    }
}

/// Everything one TCP endpoint needs to know.
///
/// Default values:
/// - `mss`: 1460 bytes — Ethernet MTU 1500 minus 40 bytes of IPv4 and TCP headers.
/// - `init_cwnd`: 10 segments — RFC 6928 and Linux since 2.6.39. The kernel the
///   testbed compares against uses it; paper reproductions set their own.
/// - `rcv_wnd`: 64 KiB — what Linux advertises with its default receive
///   buffer (`tcp_rmem` 128 KiB, half of it offered as window). Autotuning
///   grows it only when more than that arrives per round trip, which a
///   100 µs path at 1 Gbps (12.5 KB per RTT) never does. The window caps the
///   burst each server sends at the head of a block, so it moves the onset of
///   collapse: with an unbounded window, windows grown in loss-free slow start
///   overflow even a 128 KiB port with two servers.
/// - `dupack_threshold`: 3 — RFC 5681 3.2.
/// - `variant`: NewReno — RFC 6582, the Linux behaviour without SACK and
///   FAST08 Table 1. `cubic` grows and cuts the window by RFC 9438
///   (`tcp::cubic`) on NewReno's loss recovery, or on RFC 6675's with `sack`
///   on — the pair Linux runs by default.
/// - `cubic`: [`CubicConfig::default`] — used only when `variant` is `cubic`.
/// - `limited_transmit`: false — FAST08 Table 1 (RFC 3042; Linux has it on,
///   but it only matters with fewer than `dupack_threshold` + 1 segments out).
/// - `slow_start`: true — RFC 5681 3.1. False grows cwnd by congestion
///   avoidance only (FAST08 §5.1.3).
/// - `restart_after_idle`: true — Linux `tcp_slow_start_after_idle` defaults
///   to 1, and `incast validate` compares against Linux (RFC 5681 4.1 says
///   SHOULD as well).
/// - `sack`: false — FAST08 Table 1 and CMU09's simulations ran without SACK
///   (Linux negotiates it by default; the `sack` variant and presets turn it on).
///   True makes receivers send SACK blocks (RFC 2018) and senders recover by
///   RFC 6675 (`tcp::sack`); `variant = "sack"` implies it.
/// - `timestamps`: false — as FAST08 Table 1 (Linux negotiates them by
///   default). True puts the RFC 7323 option on every segment: 12 header
///   bytes, so a segment carries `mss` − 12 payload bytes, as Linux's
///   `mss_cache` does; RTT samples come from the echoed timestamp when Karn's
///   rule forbids one from the send time (`tcp::timestamps`).
/// - `timestamp_tick`: 1 ms — Linux's TSval clock (`TCP_TS_HZ` = 1000).
/// - `dctcp`: [`DctcpConfig::default`] — read only when `variant` is `dctcp`.
/// - `gip`: `off` — GIP (GIP §IV–V, `tcp::gip`) is a remedy to compare, not
///   a default; `333` is the paper's proposal, `123` its rejected alternative.
/// - `gip_copies`: 3 — GIP §V-B: the last packet "at most 3 times".
/// - `gip_head_cwnd`: 2 segments — GIP §V-C ("we set cwnd of each sender to 2").
/// - `ictcp`: [`IctcpConfig::default`] (off) — ICTCP is a remedy to compare.
/// - `rude_allowed`: false — RUDE §3.1: "Rude flows are by default disabled".
/// - `rude`: false; `rude_off_at`: none (rude flows stay rude); `rude_off`:
///   `nicely` — the semantics RUDE §3.2 recommends for a flow that "does not
///   want to immediately cut its sending rate"; `rude_servers`: none (every
///   connection is rude when `rude` is set).
/// - `send_loss_ppb`: 0 — no artificial loss; RUDE §4 swept 0.01 % to 5 %.
/// - `spurious_rto`: `off` — the papers' stacks did not undo timeouts. `frto`
///   is RFC 5682 (Linux `tcp_frto`, on by default there), `eifel` is RFC 3522
///   (needs `timestamps`); both undo the timeout's window reduction
///   (`tcp::spurious`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes per segment).
    pub mss: u32,
    /// Initial congestion window, in segments.
    pub init_cwnd: u32,
    /// Receive window advertised by every receiver.
    pub rcv_wnd: Bytes,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Retransmission timer.
    pub rto: RtoConfig,
    /// Delayed ACK at the receiver.
    pub delayed_ack: DelayedAckConfig,
    /// Loss-recovery variant: Reno, NewReno, Cubic (NewReno or SACK recovery) or SACK.
    pub variant: TcpVariant,
    /// Cubic's constants (RFC 9438), read only when `variant` is `cubic`.
    pub cubic: CubicConfig,
    /// Limited transmit (RFC 3042): one new segment on each of the first two
    /// duplicate ACKs.
    pub limited_transmit: bool,
    /// Slow start (RFC 5681 3.1); false = additive increase only.
    pub slow_start: bool,
    /// Restart from min(IW, cwnd) after an idle period longer than the RTO
    /// (RFC 5681 4.1).
    pub restart_after_idle: bool,
    /// SACK option (RFC 2018) and SACK-based loss recovery (RFC 6675).
    pub sack: bool,
    /// Timestamps option (RFC 7323) on every segment.
    pub timestamps: bool,
    /// Tick of the TSval clock.
    pub timestamp_tick: SimDuration,
    /// Spurious-timeout detection and response.
    pub spurious_rto: SpuriousRto,
    /// DCTCP's constants (RFC 8257), read only when `variant` is `dctcp`.
    pub dctcp: DctcpConfig,
    /// GIP: cwnd reset at each stripe unit head and redundant tail packets.
    pub gip: GipPattern,
    /// GIP: most redundant copies per stripe unit.
    pub gip_copies: u32,
    /// GIP: cwnd, in segments, at the head of each stripe unit.
    pub gip_head_cwnd: u32,
    /// ICTCP at the client: receive windows paced by measured throughput.
    pub ictcp: IctcpConfig,
    /// The hosts allow rude flows (RUDE §3.1's `tcp_rude` sysctl).
    pub rude_allowed: bool,
    /// Every flow starts rude: congestion control off (`tcp::rude`).
    pub rude: bool,
    /// When rude flows turn congestion control back on, if ever.
    pub rude_off_at: Option<SimDuration>,
    /// How they turn it back on.
    pub rude_off: RudeOff,
    /// Only each client's connections to its first this many servers are
    /// rude, background flows then never (`None`: all).
    pub rude_servers: Option<u32>,
    /// Sender-side random loss: each data segment is discarded before it
    /// reaches the wire with this probability, in parts per billion (RUDE
    /// §4's kernel patch); the sender believes it sent it.
    pub send_loss_ppb: u32,
}

/// How a rude flow turns congestion control back on (RUDE Appendix A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RudeOff {
    /// `RUDE_OFF_NOW`: at once, with a congestion event if over the fair window.
    #[serde(rename = "now")]
    Now,
    /// `RUDE_OFF_NICELY`: once the artificial window has converged to the fair one.
    #[default]
    #[serde(rename = "nicely")]
    Nicely,
}

/// ICTCP's switch and parameters (Wu et al., CoNEXT 2010 §3), in thousandths
/// where fractional; the defaults are the paper's.
///
/// Default values: `on` false (a remedy to compare); `alpha_permille` 900
/// (α = 0.9 of the link may be used); `beta_permille` 750 (β = 0.75, the
/// throughput smoothing); `gamma1_permille` 100 and `gamma2_permille` 500
/// (γ1 = 0.1, γ2 = 0.5, the grow and shrink thresholds on `d`); `min_wnd` 2
/// and `init_wnd` 2 segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IctcpConfig {
    /// The receiving host (the client) runs ICTCP.
    pub on: bool,
    /// α: the fraction of the link rate ICTCP lets its connections use.
    pub alpha_permille: u32,
    /// β: weight of the old value in the measured-throughput average.
    pub beta_permille: u32,
    /// γ1: grow the window when `d` is at most this.
    pub gamma1_permille: u32,
    /// γ2: shrink the window when `d` exceeds this three intervals in a row.
    pub gamma2_permille: u32,
    /// Smallest receive window, in segments.
    pub min_wnd: u32,
    /// Receive window at the start, in segments.
    pub init_wnd: u32,
}

impl Default for IctcpConfig {
    fn default() -> Self {
        IctcpConfig {
            on: false,
            alpha_permille: 900,
            beta_permille: 750,
            gamma1_permille: 100,
            gamma2_permille: 500,
            min_wnd: 2,
            init_wnd: 2,
        }
    }
}

/// Which GIP redundant-transmission pattern a sender runs (GIP §IV-B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GipPattern {
    /// No GIP.
    #[default]
    #[serde(rename = "off")]
    Off,
    /// GIP's proposal: the unit's last packet, once per ACK, up to `gip_copies` times.
    #[serde(rename = "333")]
    Pattern333,
    /// GIP's first attempt: the unit's last three packets in turn, after cutting cwnd by three.
    #[serde(rename = "123")]
    Pattern123,
}

/// How a sender detects that a retransmission timeout was spurious (the
/// original segment was delayed, not lost); either way a spurious timeout's
/// cwnd and ssthresh reduction is undone (`tcp::spurious`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SpuriousRto {
    /// No detection: every timeout stands.
    #[default]
    #[serde(rename = "off")]
    Off,
    /// F-RTO (RFC 5682 §2 basic, §3 with SACK): send new data after the
    /// retransmission and judge by the next two ACKs.
    #[serde(rename = "frto")]
    Frto,
    /// Eifel detection (RFC 3522): the first ACK after the retransmission
    /// echoes a timestamp older than the retransmission's.
    #[serde(rename = "eifel")]
    Eifel,
}

/// Which fast-recovery algorithm a sender runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TcpVariant {
    /// RFC 5681 §3.2 only: any ACK of new data ends fast recovery.
    #[serde(rename = "reno")]
    Reno,
    /// RFC 6582: partial ACKs retransmit the next hole; `recover` guards
    /// against spurious fast retransmits.
    #[default]
    #[serde(rename = "newreno")]
    NewReno,
    /// RFC 9438: NewReno recovery (RFC 6582) with the Cubic window function in
    /// congestion avoidance and β_cubic as the multiplicative decrease.
    #[serde(rename = "cubic")]
    Cubic,
    /// RFC 5681 window rules with SACK-based loss recovery (RFC 6675): the
    /// FAST08 §5.1 "SACK" variant. Implies `TcpConfig::sack`.
    #[serde(rename = "sack")]
    Sack,
    /// RFC 8257: ECN-capable segments, the window cut by α/2 on marks
    /// (`tcp::dctcp`); NewReno recovery, or SACK's with `sack` on.
    #[serde(rename = "dctcp")]
    Dctcp,
}

/// DCTCP constants (RFC 8257 §4.2), with Linux `tcp_dctcp.c` defaults.
///
/// Default values:
/// - `alpha_init`: 1024 (α = 1.0) — Linux `dctcp_alpha_on_init`; RFC 8257
///   §3.3 lets the implementation choose, and 1 is the cautious start.
/// - `g_shift`: 4 (g = 1/16) — RFC 8257 §4.2 and Linux `dctcp_shift_g`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpConfig {
    /// Initial α in 1/1024 units (at most 1024).
    pub alpha_init: u32,
    /// g = 1/2^g_shift, the gain of α's moving average.
    pub g_shift: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { alpha_init: 1024, g_shift: 4 }
    }
}

/// Cubic constants (RFC 9438 §4–§5), with Linux `tcp_cubic.c` defaults.
///
/// Default values:
/// - `beta`: 717 (/1024 ≈ 0.7002) — Linux `beta = 717`; RFC 9438 §4.6
///   says β_cubic "SHOULD be set to 0.7".
/// - `c_thousandths`: 400 (C = 0.4 segments/s³) — RFC 9438 §5 "C SHOULD be
///   set to 0.4"; Linux `bic_scale = 41` gives 41·10/1024 ≈ 0.4004.
/// - `fast_convergence`: true — RFC 9438 §4.7 and Linux `fast_convergence = 1`.
///
/// `beta` is clamped to 1..=1023 and `c_thousandths` to at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// β_cubic, the multiplicative decrease factor, in units of 1/1024.
    pub beta: u32,
    /// C, the window-growth constant, in thousandths of a segment per s³.
    pub c_thousandths: u32,
    /// Fast convergence (RFC 9438 §4.7): release bandwidth to new flows.
    pub fast_convergence: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig { beta: 717, c_thousandths: 400, fast_convergence: true }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            init_cwnd: 10,
            rcv_wnd: Bytes::kib(64),
            dupack_threshold: 3,
            rto: RtoConfig::default(),
            delayed_ack: DelayedAckConfig::default(),
            variant: TcpVariant::NewReno,
            cubic: CubicConfig::default(),
            limited_transmit: false,
            slow_start: true,
            restart_after_idle: true,
            sack: false,
            timestamps: false,
            timestamp_tick: SimDuration::from_millis(1),
            spurious_rto: SpuriousRto::Off,
            dctcp: DctcpConfig::default(),
            gip: GipPattern::Off,
            gip_copies: 3,
            gip_head_cwnd: 2,
            ictcp: IctcpConfig::default(),
            rude_allowed: false,
            rude: false,
            rude_off_at: None,
            rude_off: RudeOff::Nicely,
            rude_servers: None,
            send_loss_ppb: 0,
        }
    }
}

impl TcpConfig {
    /// True when SACK is in use: `sack` set, or the `sack` variant.
    #[inline]
    pub fn sack_enabled(&self) -> bool {
        self.sack || self.variant == TcpVariant::Sack
    }

    /// Payload bytes of a full-sized segment: `mss`, less the 12 option bytes
    /// every segment carries with timestamps on (Linux `tcp_current_mss`).
    #[inline]
    pub fn segment_payload(&self) -> u32 {
        if self.timestamps {
            self.mss.saturating_sub(12)
        } else {
            self.mss
        }
    }
}
