//! TCP knobs that experiments vary.
//!
//! **Models:** every constant the incast papers sweep is a field here, never a
//! `const` in the code: RTO_min down to microseconds, the timer granularity
//! (high-resolution or jiffies), the delayed-ACK timeout, the initial window,
//! and the loss-recovery variants of FAST08 §5.1 (Reno or NewReno, limited
//! transmit, the duplicate-ACK threshold, slow start on or off), plus the
//! restart after idle.
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
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            min: SimDuration::from_millis(200),
            max: SimDuration::from_secs(120),
            initial: SimDuration::from_secs(1),
            granularity: SimDuration::ZERO,
        }
    }
}

/// Delayed-ACK knobs (RFC 1122 4.2.3.2, RFC 5681 4.2).
///
/// Default values:
/// - `timeout`: 40 ms — Linux `TCP_DELACK_MIN`, the delay FAST08 §4.2 blames for
///   the "mini-timeouts" at 3–5 servers. RFC 1122 allows up to 500 ms.
///   `None` turns delayed ACK off: every data segment is acknowledged at once
///   (the CMU09 §5 recommendation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelayedAckConfig {
    /// How long a lone segment may wait for its ACK; `None` = delayed ACK off.
    pub timeout: Option<SimDuration>,
}

impl Default for DelayedAckConfig {
    fn default() -> Self {
        DelayedAckConfig { timeout: Some(SimDuration::from_millis(40)) }
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
/// - `variant`: NewReno — RFC 6582, the Linux behaviour and FAST08 Table 1.
/// - `limited_transmit`: false — FAST08 Table 1 (RFC 3042; Linux has it on,
///   but it only matters with fewer than `dupack_threshold` + 1 segments out).
/// - `slow_start`: true — RFC 5681 3.1. False grows cwnd by congestion
///   avoidance only (FAST08 §5.1.3).
/// - `restart_after_idle`: true — Linux `tcp_slow_start_after_idle` defaults
///   to 1, and `incast validate` compares against Linux (RFC 5681 4.1 says
///   SHOULD as well).
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
    /// Loss-recovery variant: Reno or NewReno.
    pub variant: TcpVariant,
    /// Limited transmit (RFC 3042): one new segment on each of the first two
    /// duplicate ACKs.
    pub limited_transmit: bool,
    /// Slow start (RFC 5681 3.1); false = additive increase only.
    pub slow_start: bool,
    /// Restart from min(IW, cwnd) after an idle period longer than the RTO
    /// (RFC 5681 4.1).
    pub restart_after_idle: bool,
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
            limited_transmit: false,
            slow_start: true,
            restart_after_idle: true,
        }
    }
}
