//! Ethernet flow control: IEEE 802.3x PAUSE frames (MAC Control, Annex 31B).
//!
//! **Models:** a switch output port whose queue passes `xoff` bytes pauses
//! each link that delivers a frame to it while it is above `xoff`: the switch
//! sends a PAUSE frame carrying `quanta` (units of 512 bit times, 802.3
//! §31B.3.1) back over that link, ahead of any data waiting there but after
//! the frame being transmitted; the frame takes its 64 bytes of link time and
//! the link's propagation delay. The receiving port finishes the frame it is
//! sending, then sends nothing until the pause time has passed or a PAUSE of
//! zero quanta (XON) arrives. The switch refreshes the pause halfway through
//! its time while the port is still congested, and releases it with XON once
//! the port drains to `xon` bytes and no other congested port of the switch
//! holds that link. A paused port stops *every* frame on its link, whatever
//! its destination: head-of-line blocking across trunks emerges from this
//! (FAST08 §6). Hosts obey PAUSE (their NIC queues grow; they never drop).
//! **Lossless when:** a port drops nothing while its buffer exceeds `xoff`
//! by the headroom of every link that can feed it; a link of rate R and
//! one-way delay D adds `2·D·R/8 + 2·1538 + 84` bytes (frames on the wire
//! both ways, the frame the upstream is sending when the PAUSE arrives, the
//! frame that delays the PAUSE, and the PAUSE itself). With 25 µs links at
//! 1 Gbps that is about 9.4 KB per feeding link.
//! **Deliberately different:** congestion is judged at the output port (the
//! queue that overflows in an output-queued switch), not by per-ingress
//! buffer accounting as in 802.1Qbb PFC headroom calculations.
//! **Not modelled:** per-priority PFC (802.1Qbb), PAUSE from hosts, pause
//! propagation delay inside a switch, auto-negotiation of flow control.

use super::PktId;
use super::PortId;
use crate::time::{BitRate, Bytes, SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// PAUSE thresholds of every switch output port.
///
/// Default values: `xoff` 16 KiB and `xon` 8 KiB (half and a quarter of the
/// 32 KiB Procurve port estimate of FAST08 §3.2); `quanta` 65535, the
/// largest pause a frame can ask for (33.6 ms at 1 Gbps), which switches
/// send and then cancel with XON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PauseConfig {
    /// A port holding more than this many frame bytes pauses the links feeding it.
    pub xoff: Bytes,
    /// A congested port that drains to this many bytes releases them (XON).
    pub xon: Bytes,
    /// Pause time of each PAUSE frame, in quanta of 512 bit times (802.3 §31B.3.1).
    pub quanta: u16,
}

impl Default for PauseConfig {
    fn default() -> Self {
        PauseConfig { xoff: Bytes::kib(16), xon: Bytes::kib(8), quanta: u16::MAX }
    }
}

/// Bytes of link time a PAUSE frame takes: a minimum frame with preamble and gap.
pub const PAUSE_WIRE_BYTES: u64 = 84;

/// How long `quanta` stop a link of `rate`: 802.3 §31B.3.1, "pause_time ... in
/// units of pause_quanta", one quantum being 512 bit times.
pub fn pause_time(quanta: u16, rate: BitRate) -> SimDuration {
    rate.tx_time(u64::from(quanta) * 64)
}

/// Flow-control state of one output port.
#[derive(Clone, Debug, Default)]
pub struct LosslessPort {
    /// Frames waiting for the link, with their arrival times, oldest first.
    pub fifo: VecDeque<(PktId, SimTime)>,
    /// A frame (or a PAUSE) is being transmitted.
    pub busy: bool,
    /// A PAUSE frame (its quanta) waits to be sent, ahead of data.
    pub control: Option<u16>,
    /// PAUSE frames sent on this port's link (XON included).
    pub pause_frames: u64,
    /// Congested ports of this port's peer holding this port's link paused
    /// (ports are the links' upstream ends).
    pub holders: u32,
    /// Links this congested port holds paused (their upstream ports).
    pub holding: Vec<PortId>,
    paused_from: SimTime,
    paused_until: SimTime,
    paused_total: SimDuration,
}

impl LosslessPort {
    /// A PAUSE of `quanta` reached this port at `now`: returns when it may
    /// send again (`now` for XON). A new PAUSE replaces the running one.
    pub fn on_pause(&mut self, now: SimTime, quanta: u16, rate: BitRate) -> SimTime {
        if now >= self.paused_until {
            self.paused_total = self.paused_total + self.paused_until.since(self.paused_from);
            self.paused_from = now;
        }
        self.paused_until = now + pause_time(quanta, rate);
        self.paused_until
    }

    /// Is the link stopped at `now`?
    #[inline]
    pub fn is_paused(&self, now: SimTime) -> bool {
        now < self.paused_until
    }

    /// Time spent paused from time zero to `end`.
    pub fn paused_time(&self, end: SimTime) -> SimDuration {
        let last =
            if self.paused_from < end { self.paused_until.min(end).since(self.paused_from) } else { SimDuration::ZERO };
        self.paused_total + last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// 802.3 §31B.3.1: one quantum is 512 bit times, 512 ns at 1 Gbps.
    #[test]
    fn ieee802_3_31b_quantum_is_512_bit_times() {
        assert_eq!(pause_time(1, BitRate::gbps(1)), SimDuration::from_nanos(512));
        assert_eq!(pause_time(u16::MAX, BitRate::gbps(1)), SimDuration::from_nanos(512 * 65_535));
    }

    /// A refresh extends the pause; XON ends it at once; time paused counts
    /// each interval once, clipped to the end of the run.
    #[test]
    fn refresh_extends_and_xon_ends_the_pause() {
        let mut p = LosslessPort::default();
        let rate = BitRate::gbps(1);
        let until = p.on_pause(us(10), 1000, rate);
        assert_eq!(until, us(10) + SimDuration::from_nanos(512_000));
        assert!(p.is_paused(us(300)));
        p.on_pause(us(300), 1000, rate);
        assert!(p.is_paused(us(700)));
        assert_eq!(p.on_pause(us(400), 0, rate), us(400), "XON releases at once");
        assert!(!p.is_paused(us(400)));
        assert_eq!(p.paused_time(us(1000)), SimDuration::from_micros(390));
        p.on_pause(us(900), 1000, rate);
        assert_eq!(p.paused_time(us(1000)), SimDuration::from_micros(490));
    }
}
