//! The switches' settings: port buffers, how the memory is shared, ECN
//! marking, Ethernet flow control and the policing of rude flows.
//!
//! **Models:** every switch of a run has the same settings; each mechanism
//! lives in its own module (`net::queue`, `net::buffer`, `net::pause`,
//! `net::pfc`), and this table only gathers their knobs.
//! **Not modelled:** per-switch or per-port settings.

use super::buffer::{BufferModel, BufferModelSpec};
use super::pause::PauseConfig;
use super::pfc::{Priorities, PriorityMask};
use super::queue::{BufferLimit, BufferLimitSpec};
use crate::settings::{Choice, Flag, OrWord};
use crate::time::{BitRate, Bytes};

/// A switch's policing of rude flows (RUDE §2.3: "routers will have the
/// ability to kill Rude flows by dropping *all* packets").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RudePolicy {
    /// Forward them like any packet.
    #[default]
    Pass,
    /// Drop every packet that carries the rude bit.
    Drop,
}

/// When a switch port admits a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Admission {
    /// When the frame fits in what the port has left.
    #[default]
    Fits,
    /// Only while a full-sized frame would fit, whatever the arriving one's
    /// size: ns-3.44 stops a device queue once less than an MTU is free
    /// (`NetDeviceQueue::PacketEnqueued`: "if (queue->GetCurrentSize() +
    /// SizeOf(mtu) > queue->GetMaxSize()) ... Stop()") and, with no queue
    /// disc, drops whatever arrives while it is stopped
    /// (`TrafficControlLayer::Send`); a short segment, such as a block's
    /// last, finds no room where it would fit.
    FullFrame,
}

crate::settings! {
    /// The switch.
    ///
    /// Default values: `buffer` 32 KiB per output port, the estimate for the
    /// HP Procurve 2848 of FAST08 §3.2 and CMU09 §3; `buffer_model` static
    /// (every port owns its buffer); `ecn_threshold` off (no marking, as on
    /// the papers' switches; DCTCP's paper suggests 20 packets at 1 Gbps and
    /// 65 at 10 Gbps); `pause` and `pfc` off (FAST08 ran its switches without
    /// flow control except in §6), with every priority lossless when PFC is
    /// on; rude packets pass; a frame is admitted when it fits, as a switch
    /// that counts bytes admits it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct SwitchConfig {
        /// Drop-tail limit of each output port: bytes of Ethernet frames, or "Npkt" frames.
        "buffer" buffer: BufferLimit = BufferLimit::Bytes(Bytes::kib(32)), BufferLimitSpec;
        /// Packets carrying the rude bit: "pass", or "drop" all of them (RUDE §2.3's policing router).
        "rude_policy" rude_policy: RudePolicy = RudePolicy::Pass,
            Choice(&[("pass", RudePolicy::Pass), ("drop", RudePolicy::Drop)]);
        /// When a port admits a frame: "fits" (when it fits in the room left)
        /// or "full_frame" (only while a full-sized data frame would fit,
        /// whatever its own size, as ns-3's device queues stop with less than
        /// an MTU free).
        "admission" admission: Admission = Admission::Fits,
            Choice(&[("fits", Admission::Fits), ("full_frame", Admission::FullFrame)]);
        /// ECN marking threshold K of each output port (RFC 8257 §3.1): frames
        /// arriving above it are marked CE if ECN-capable; bytes, "Npkt", "off",
        /// or "dctcp" (the DCTCP paper's K for link.rate: 20 packets at 1 Gbps,
        /// 65 at 10 Gbps, the canonical form naming the packets).
        "ecn_threshold" ecn_threshold: Option<BufferLimit> = None,
            OrWord { word: "off", spec: BufferLimitSpec, what: "a buffer limit" };
        /// How each switch allocates its buffer: "static" (every port owns it),
        /// "qos:K" (K classes share each port; traffic sees 1/K, FAST08 §4.1) or
        /// "shared:ALPHA" (one memory of buffer × ports per switch, dynamic
        /// thresholds α × free memory, Choudhury–Hahne).
        "buffer_model" buffer_model: BufferModel = BufferModel::Static, BufferModelSpec;
        /// Ethernet flow control (IEEE 802.3x PAUSE) at every switch port (FAST08 §6).
        "pause" pause: bool = false, Flag;
        /// Priority-based flow control (IEEE 802.1Qbb PFC) at every switch port
        /// instead of PAUSE: a priority's FIFO above pause_xoff pauses only that
        /// priority upstream. Needs traffic in more than one priority.
        "pfc" pfc: bool = false, Flag;
        /// The priorities PFC keeps lossless; the others drop at a full buffer. "all" or a list.
        "pfc_priorities" pfc_priorities: PriorityMask = PriorityMask::ALL, Priorities;
    }
    flatten {
        /// The thresholds and pause time of PAUSE and PFC.
        flow_control: PauseConfig,
    }
}

impl SwitchConfig {
    /// The flow-control thresholds in force, when PAUSE or PFC is on.
    pub fn pause_config(&self) -> Option<PauseConfig> {
        (self.pause || self.pfc).then_some(self.flow_control)
    }
}

/// The word `switch.ecn_threshold` takes for [`dctcp_paper_k`].
pub const DCTCP_K_WORD: &str = "dctcp";

/// The DCTCP paper's marking threshold K, in full-sized packets, for ports of
/// `rate` (Alizadeh et al., SIGCOMM 2010, §4: 20 packets at 1 Gbps, 65 at
/// 10 Gbps): 20 up to 1 Gbps, on the straight line between the two, and above
/// 10 Gbps in proportion to the rate, as the paper's bound K > C·RTT/7
/// (§3.4) grows with C.
pub fn dctcp_paper_k(rate: BitRate) -> u32 {
    let gbps = rate.as_bps() as f64 / 1e9;
    let k = match gbps {
        g if g <= 1.0 => 20.0,
        g if g <= 10.0 => 20.0 + (g - 1.0) * 45.0 / 9.0,
        g => 65.0 * g / 10.0,
    };
    k.round().min(f64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DCTCP paper's two thresholds, and the rule between and beyond them.
    #[test]
    fn dctcp_paper_k_is_20_packets_at_1gbps_and_65_at_10gbps() {
        let k = |g: u64| dctcp_paper_k(BitRate::mbps(g));
        assert_eq!((k(100), k(1000), k(10_000)), (20, 20, 65));
        assert_eq!((k(5500), k(40_000), k(100_000)), (43, 260, 650));
    }
}
