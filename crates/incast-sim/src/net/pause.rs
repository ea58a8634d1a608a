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
//! Per-priority flow control (802.1Qbb PFC, `switch.pfc`) uses the same
//! thresholds and quanta per priority FIFO (`net::pfc`); a port runs either
//! PAUSE or PFC, never both, as switches enable one or the other per port.
//! **Lossless when:** a port drops nothing while its buffer exceeds `xoff`
//! by the headroom of every link that can feed it; a link of rate R and
//! one-way delay D adds `2·D·R/8 + 2·1538 + 84` bytes (frames on the wire
//! both ways, the frame the upstream is sending when the PAUSE arrives, the
//! frame that delays the PAUSE, and the PAUSE itself). With the default
//! 50 ns of cable at 1 Gbps that is about 3.2 KB per feeding link; D is the
//! cable's propagation (`link.propagation`), not the hosts' share of the RTT.
//! **Deliberately different:** congestion is judged at the output port (the
//! queue that overflows in an output-queued switch), not by per-ingress
//! buffer accounting as in 802.1Qbb PFC headroom calculations.
//! **Not modelled:** PAUSE from hosts, pause propagation delay inside a
//! switch, auto-negotiation of flow control.

use super::pfc::{ClassQueues, PfcFrame, PriorityMask, PRIORITIES};
use super::{PktId, PortId};
use crate::settings::{Count, Size};
use crate::time::{BitRate, Bytes, SimDuration, SimTime};

crate::settings! {
    /// PAUSE thresholds of every switch output port (used by PFC as well).
    ///
    /// Default values: `xoff` 16 KiB and `xon` 8 KiB (half and a quarter of the
    /// 32 KiB Procurve port estimate of FAST08 §3.2); `quanta` 65535, the
    /// largest pause a frame can ask for (33.6 ms at 1 Gbps), which switches
    /// send and then cancel with XON.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct PauseConfig {
        /// A port holding more frame bytes than this pauses the links feeding it.
        "pause_xoff" xoff: Bytes = Bytes::kib(16), Size { min: 1 };
        /// A congested port that drains to this many bytes releases them (XON).
        "pause_xon" xon: Bytes = Bytes::kib(8), Size { min: 0 };
        /// Pause time of each PAUSE frame, in quanta of 512 bit times (802.3 §31B.3.1).
        "pause_quanta" quanta: u16 = u16::MAX, Count::new(1, 65535, "pause quanta");
    }
}

/// Bytes of link time a PAUSE frame takes: a minimum frame with preamble and gap.
pub const PAUSE_WIRE_BYTES: u64 = 84;

/// How long `quanta` stop a link of `rate`: 802.3 §31B.3.1, "pause_time ... in
/// units of pause_quanta", one quantum being 512 bit times.
pub fn pause_time(quanta: u16, rate: BitRate) -> SimDuration {
    rate.tx_time(u64::from(quanta) * 64)
}

/// How long one priority of a port has been stopped.
#[derive(Clone, Copy, Debug, Default)]
struct PauseClock {
    from: SimTime,
    until: SimTime,
    total: SimDuration,
}

impl PauseClock {
    /// Stopped from `now` until `until` (`now` itself: released); a new
    /// pause replaces the running one.
    fn set(&mut self, now: SimTime, until: SimTime) {
        if now >= self.until {
            self.total = self.total + self.until.since(self.from);
            self.from = now;
        }
        self.until = until;
    }

    /// Time stopped from time zero to `end`.
    fn time(&self, end: SimTime) -> SimDuration {
        let last = if self.from < end { self.until.min(end).since(self.from) } else { SimDuration::ZERO };
        self.total + last
    }
}

/// Flow-control state of one output port. 802.3x PAUSE stops every
/// priority at once; PFC (`net::pfc`) one at a time.
#[derive(Clone, Debug, Default)]
pub struct LosslessPort {
    /// Frames waiting for the link, one FIFO per priority.
    pub queues: ClassQueues,
    /// A frame (or a PAUSE) is being transmitted.
    pub busy: bool,
    /// The data frame being transmitted: its priority and frame bytes.
    pub sending: Option<(u8, u32)>,
    /// A PAUSE or PFC frame waits to be sent, ahead of data.
    pub control: Option<PfcFrame>,
    /// PAUSE and PFC frames sent on this port's link (XON included).
    pub pause_frames: u64,
    /// Per flow-control class (the priority under PFC, class 0 under PAUSE):
    /// congested ports of this port's peer holding this port's link paused
    /// (ports are the links' upstream ends).
    pub holders: [u32; PRIORITIES],
    /// Per flow-control class: links this congested port holds paused
    /// (their upstream ports).
    pub holding: [Vec<PortId>; PRIORITIES],
    clocks: [PauseClock; PRIORITIES],
}

impl LosslessPort {
    /// A PAUSE or PFC `frame` whose pause time is `quanta` reached this port
    /// at `now`: returns when the priorities it stops may send again, if it
    /// stops any. A new pause of a priority replaces its running one.
    pub fn on_pause(&mut self, now: SimTime, frame: PfcFrame, quanta: u16, rate: BitRate) -> Option<SimTime> {
        let until = now + pause_time(quanta, rate);
        for p in PriorityMask(frame.xon).iter() {
            self.clocks[usize::from(p)].set(now, now);
        }
        for p in PriorityMask(frame.xoff).iter() {
            self.clocks[usize::from(p)].set(now, until);
        }
        (frame.xoff != 0).then_some(until)
    }

    /// Is priority `p` stopped at `now`?
    #[inline]
    pub fn is_paused(&self, p: u8, now: SimTime) -> bool {
        now < self.clocks[usize::from(p)].until
    }

    /// The next frame to send at `now` (`ClassQueues::pop`), from the
    /// priorities not stopped: (packet, priority, arrival, frame bytes).
    pub fn next_frame(&mut self, now: SimTime) -> Option<(PktId, u8, SimTime, u32)> {
        let clocks = &self.clocks;
        self.queues.pop(|p| now < clocks[usize::from(p)].until)
    }

    /// Time priority `p` spent stopped from time zero to `end`.
    pub fn paused_time(&self, p: u8, end: SimTime) -> SimDuration {
        self.clocks[usize::from(p)].time(end)
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

    const PAUSE: PfcFrame = PfcFrame { xoff: 0xFF, xon: 0 };
    const XON: PfcFrame = PfcFrame { xoff: 0, xon: 0xFF };

    /// A refresh extends the pause; XON ends it at once; time paused counts
    /// each interval once, clipped to the end of the run.
    #[test]
    fn refresh_extends_and_xon_ends_the_pause() {
        let mut p = LosslessPort::default();
        let rate = BitRate::gbps(1);
        let until = p.on_pause(us(10), PAUSE, 1000, rate);
        assert_eq!(until, Some(us(10) + SimDuration::from_nanos(512_000)));
        assert!(p.is_paused(0, us(300)) && p.is_paused(7, us(300)), "PAUSE stops every priority");
        p.on_pause(us(300), PAUSE, 1000, rate);
        assert!(p.is_paused(0, us(700)));
        assert_eq!(p.on_pause(us(400), XON, 1000, rate), None, "XON releases at once");
        assert!(!p.is_paused(0, us(400)));
        assert_eq!(p.paused_time(0, us(1000)), SimDuration::from_micros(390));
        p.on_pause(us(900), PAUSE, 1000, rate);
        assert_eq!(p.paused_time(0, us(1000)), SimDuration::from_micros(490));
    }

    /// 802.1Qbb: a PFC frame stops only the priorities of its class-enable
    /// vector; a later XON for one of them releases it alone.
    #[test]
    fn ieee802_1qbb_pfc_stops_only_the_named_priorities() {
        let mut p = LosslessPort::default();
        let rate = BitRate::gbps(1);
        p.on_pause(us(0), PfcFrame { xoff: 0b1000, xon: 0 }, 1000, rate);
        assert!(p.is_paused(3, us(100)));
        assert!(!p.is_paused(0, us(100)) && !p.is_paused(4, us(100)), "other priorities keep flowing");
        p.on_pause(us(50), PfcFrame { xoff: 0b1_0000, xon: 0 }, 1000, rate);
        p.on_pause(us(100), PfcFrame { xoff: 0, xon: 0b1000 }, 1000, rate);
        assert!(!p.is_paused(3, us(100)), "XON released priority 3");
        assert!(p.is_paused(4, us(100)), "and left priority 4 paused");
        assert_eq!(p.paused_time(3, us(1000)), SimDuration::from_micros(100));
        assert_eq!(p.paused_time(0, us(1000)), SimDuration::ZERO);
    }
}
