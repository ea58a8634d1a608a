//! Time series recorded on request (`trace` in the scenario): instantaneous
//! goodput, bottleneck queue occupancy, per-flow congestion state, and every
//! server's cwnd at each block start.
//!
//! **Models:** the goodput trace counts application bytes delivered in order
//! to the client, binned by the instant of delivery (FAST08 Figure 5 uses
//! 5 ms bins). The queue trace samples the switch port toward the client at
//! every frame offered to it, after the frame was enqueued or dropped. The
//! flow trace samples a server's cwnd, ssthresh, RTO and SRTT after each
//! segment (every one carries an ACK) it processes, once it has sent what
//! that segment allowed, and after each of its retransmission timeouts. The
//! BBR trace samples a BBR server's model at the same instants, as Linux's
//! `TCP_CC_INFO` (`tcp_bbr_info`: bandwidth, min_rtt, pacing and cwnd
//! gains) and `TCP_INFO` (`tcpi_pacing_rate`, `tcpi_delivery_rate`,
//! `tcpi_snd_cwnd`) report it, with BBR's mode. The block-cwnd trace records every server's cwnd
//! when the client writes a block's first request (GIP Figure 4). With
//! several clients (`workload::clients`) the goodput trace sums every
//! client's bytes, the queue trace follows the port toward client 0, and
//! the flow and block-cwnd traces cover every reading connection (a flow's
//! client is `flow / servers`; block numbers count that client's blocks).
//! **Deliberately different:** every goodput bin, the last (partial) one
//! included, is divided by the full bin length, so the bins sum to exactly
//! the bytes delivered. Traces are columns (one vector per column), not rows,
//! and cross to Python as typed buffers (`stats::columns`); with every trace off nothing is
//! allocated and each event site costs one branch on a flag. The queue keeps
//! its own occupancy log (`net::queue`), so the per-hop path tests nothing.
//! **Not modelled:** queue occupancy between arrivals (frames leave at known
//! times, but departures are not events), the client endpoints' congestion
//! state (they send only requests), other switch ports.

use crate::net::OccupancyLog;
use crate::settings::{Duration, Flag, OrWord};
pub use crate::tcp::cc::bbr::BbrSample;
use crate::time::{SimDuration, SimTime};
use serde::Serialize;

crate::settings! {
    /// Time series the run records besides its tables. Every trace is off by
    /// default, and a run with all of them off does no trace work beyond one
    /// branch per event site.
    ///
    /// Default values: every trace off. A common `goodput_bin` is 5 ms, the bin
    /// of FAST08 Figure 5's instantaneous goodput.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct TraceConfig {
        /// Bin length of the goodput trace (application bytes delivered to the
        /// client per bin); "off" turns the trace off.
        "goodput_bin" goodput_bin: Option<SimDuration> = None,
            OrWord { word: "off", spec: Duration::POSITIVE, what: "a positive duration (e.g. \"5ms\")" };
        /// Sample the occupancy of the switch port toward the client at every
        /// frame offered to it (enqueued or dropped).
        "queue" queue: bool = false, Flag;
        /// Sample each server's cwnd, ssthresh, RTO and SRTT at every ACK it
        /// processes and at each of its retransmission timeouts.
        "flows" flows: bool = false, Flag;
        /// Sample each BBR server's state — mode, bandwidth and min_rtt
        /// estimates, gains, pacing and delivery rates, cwnd (what Linux's
        /// TCP_CC_INFO and TCP_INFO report) — at every ACK it processes and
        /// at each of its retransmission timeouts.
        "bbr" bbr: bool = false, Flag;
        /// Record every server's cwnd at the start of each block (GIP Figure 4).
        "block_cwnd" block_cwnd: bool = false, Flag;
        /// Capture every packet at the client and each server, as it is handed
        /// to the host's NIC and as it arrives (`stats::pcap`).
        "pcap" pcap: bool = false, Flag;
    }
}

impl TraceConfig {
    /// Is any time series on? (The packet capture, `pcap`, is kept apart.)
    pub fn any(&self) -> bool {
        self.goodput_bin.is_some() || self.queue || self.flows || self.bbr || self.block_cwnd
    }
}

/// Instantaneous goodput: one row per bin, from time zero to the end of the
/// run, empty bins included.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GoodputTrace {
    /// Start of the bin, in seconds.
    pub time_s: Vec<f64>,
    /// Application bytes delivered to the client in the bin, × 8 over the bin length, in Mbit/s.
    pub goodput_mbps: Vec<f64>,
}

/// Occupancy of the switch port toward the client: one row per frame offered to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueTrace {
    /// When the frame arrived, in seconds.
    pub time_s: Vec<f64>,
    /// Frame bytes held after the frame was enqueued (or dropped).
    pub queue_bytes: Vec<u64>,
    /// The frame was dropped.
    pub dropped: Vec<bool>,
}

/// Congestion state of the servers: one row per segment a server processes
/// and per retransmission timeout of a server.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowTrace {
    /// When the sample was taken, in seconds.
    pub time_s: Vec<f64>,
    /// Connection (server index), 0-based.
    pub flow: Vec<u32>,
    /// Congestion window, in bytes.
    pub cwnd_bytes: Vec<u64>,
    /// Slow-start threshold, in bytes; `None` while it is still "arbitrarily
    /// high" (RFC 5681 (3.1)), before the first loss.
    pub ssthresh_bytes: Vec<Option<u64>>,
    /// Current retransmission timeout (back-off included), in microseconds.
    pub rto_us: Vec<f64>,
    /// Smoothed RTT, in microseconds; `None` before the first RTT sample.
    pub srtt_us: Vec<Option<f64>>,
}

/// BBR's state on each BBR server: one row per segment it processes and per
/// retransmission timeout, in the columns the testbed writes from
/// `TCP_CC_INFO` and `TCP_INFO`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BbrTrace {
    /// When the sample was taken, in seconds.
    pub time_s: Vec<f64>,
    /// Connection (server index), 0-based.
    pub flow: Vec<u32>,
    /// BBR's mode: `startup`, `drain`, `probe_bw` or `probe_rtt`.
    pub mode: Vec<&'static str>,
    /// The bandwidth estimate (`bbr_bw`), in bit/s.
    pub bw_bps: Vec<f64>,
    /// The minimum RTT estimate, in seconds; NaN before a sample.
    pub min_rtt_s: Vec<f64>,
    /// The pacing gain as a ratio (`bbr_pacing_gain` / 256).
    pub pacing_gain: Vec<f64>,
    /// The window gain as a ratio (`bbr_cwnd_gain` / 256).
    pub cwnd_gain: Vec<f64>,
    /// The pacing rate (`sk_pacing_rate`), in bit/s.
    pub pacing_rate_bps: Vec<f64>,
    /// The delivery rate `TCP_INFO` reports (`tcpi_delivery_rate`), in bit/s; NaN before a sample.
    pub delivery_rate_bps: Vec<f64>,
    /// The congestion window, in segments (`tcpi_snd_cwnd`, rounded up).
    pub cwnd_pkts: Vec<u64>,
}

/// Every server's cwnd at each block start: one row per (block, flow).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BlockCwndTrace {
    /// Block number, 0-based.
    pub block: Vec<u64>,
    /// Connection (server index), 0-based.
    pub flow: Vec<u32>,
    /// The server's congestion window when the block's first request was written, in bytes.
    pub cwnd_bytes: Vec<u64>,
}

/// The traces of one run; a trace that was off is `None`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Traces {
    /// Instantaneous goodput (`trace.goodput_bin`).
    pub goodput: Option<GoodputTrace>,
    /// Bottleneck queue occupancy (`trace.queue`).
    pub queue: Option<QueueTrace>,
    /// Per-server congestion state (`trace.flows`).
    pub flows: Option<FlowTrace>,
    /// BBR's state on each BBR server (`trace.bbr`); left out of the JSON
    /// when off, so that results without it read as they did before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbr: Option<BbrTrace>,
    /// Every server's cwnd at each block start (`trace.block_cwnd`).
    pub block_cwnd: Option<BlockCwndTrace>,
}

impl Traces {
    /// No trace was on.
    pub fn is_empty(&self) -> bool {
        self.goodput.is_none()
            && self.queue.is_none()
            && self.flows.is_none()
            && self.bbr.is_none()
            && self.block_cwnd.is_none()
    }
}

/// One sample of a server's congestion state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSample {
    /// Congestion window, in bytes.
    pub cwnd: u64,
    /// Slow-start threshold, in bytes (`u64::MAX` while unset).
    pub ssthresh: u64,
    /// Current retransmission timeout.
    pub rto: SimDuration,
    /// Smoothed RTT, if any sample was taken.
    pub srtt: Option<SimDuration>,
}

/// Which traces are on: the flags the engine tests at each event site before
/// calling the [`TraceRecorder`], so a run with every trace off calls none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceFlags {
    /// The goodput trace is on.
    pub goodput: bool,
    /// The queue trace is on.
    pub queue: bool,
    /// The flow trace is on.
    pub flows: bool,
    /// The BBR trace is on.
    pub bbr: bool,
    /// The flow or the BBR trace is on: servers are sampled at every ACK.
    pub per_ack: bool,
    /// The block-cwnd trace is on.
    pub block_cwnd: bool,
}

impl TraceFlags {
    /// The flags of `cfg`.
    pub fn of(cfg: &TraceConfig) -> Self {
        TraceFlags {
            goodput: cfg.goodput_bin.is_some(),
            queue: cfg.queue,
            flows: cfg.flows,
            bbr: cfg.bbr,
            per_ack: cfg.flows || cfg.bbr,
            block_cwnd: cfg.block_cwnd,
        }
    }
}

/// Most bins the goodput trace keeps (8 bytes each while recording, 16 in
/// the result): a 1 ps bin over a second would need 10^12.
pub const MAX_GOODPUT_BINS: u64 = 10_000_000;

/// Collects the traces during a run.
#[derive(Debug, Default)]
pub struct TraceRecorder {
    on: TraceFlags,
    /// Goodput bin length (zero when off).
    bin: SimDuration,
    /// Application bytes delivered to the client in each bin so far.
    bin_bytes: Vec<u64>,
    /// A delivery fell past the last bin the trace may keep.
    too_many_bins: bool,
    flows_t: FlowTrace,
    bbr_t: BbrTrace,
    block_t: BlockCwndTrace,
}

impl TraceRecorder {
    /// A recorder for the traces `cfg` turns on.
    pub fn new(cfg: &TraceConfig) -> Self {
        TraceRecorder {
            on: TraceFlags::of(cfg),
            bin: cfg.goodput_bin.unwrap_or(SimDuration::ZERO),
            ..Default::default()
        }
    }

    /// `bytes` more application bytes reached the client at `now`.
    #[cold]
    pub fn delivered(&mut self, now: SimTime, bytes: u64) {
        let i = now.0 / self.bin.as_ps();
        if i >= MAX_GOODPUT_BINS {
            self.too_many_bins = true;
            return;
        }
        let i = i as usize;
        if i >= self.bin_bytes.len() {
            self.bin_bytes.resize(i + 1, 0);
        }
        self.bin_bytes[i] += bytes;
    }

    /// Did the run outlast [`MAX_GOODPUT_BINS`] bins of the goodput trace?
    pub fn too_many_bins(&self) -> bool {
        self.too_many_bins
    }

    /// The server of `flow` is in state `s` at `now`.
    #[cold]
    pub fn flow_sample(&mut self, now: SimTime, flow: u32, s: FlowSample) {
        let t = &mut self.flows_t;
        t.time_s.push(now.as_secs_f64());
        t.flow.push(flow);
        t.cwnd_bytes.push(s.cwnd);
        t.ssthresh_bytes.push((s.ssthresh != u64::MAX).then_some(s.ssthresh));
        t.rto_us.push(s.rto.as_micros_f64());
        t.srtt_us.push(s.srtt.map(SimDuration::as_micros_f64));
    }

    /// The BBR server of `flow` is in state `s` at `now`.
    #[cold]
    pub fn bbr_sample(&mut self, now: SimTime, flow: u32, s: BbrSample) {
        let t = &mut self.bbr_t;
        t.time_s.push(now.as_secs_f64());
        t.flow.push(flow);
        t.mode.push(s.mode);
        t.bw_bps.push(s.bw as f64 * 8.0);
        t.min_rtt_s.push(s.min_rtt.map_or(f64::NAN, SimDuration::as_secs_f64));
        t.pacing_gain.push(s.pacing_gain as f64 / 256.0);
        t.cwnd_gain.push(s.cwnd_gain as f64 / 256.0);
        t.pacing_rate_bps.push(s.pacing_rate as f64 * 8.0);
        t.delivery_rate_bps.push(s.delivery_rate.map_or(f64::NAN, |r| r * 8.0));
        t.cwnd_pkts.push(s.cwnd_pkts);
    }

    /// Block `block` starts and the server of `flow` has congestion window `cwnd`.
    pub fn block_start(&mut self, block: u64, flow: u32, cwnd: u64) {
        let t = &mut self.block_t;
        t.block.push(block);
        t.flow.push(flow);
        t.cwnd_bytes.push(cwnd);
    }

    /// The traces of a run that ended at `end`; `queue` is the bottleneck's
    /// occupancy log (kept by the queue itself, see `net::queue`).
    pub fn finish(self, end: SimTime, queue: Option<OccupancyLog>) -> Traces {
        let goodput = self.on.goodput.then(|| {
            let bin = self.bin.as_ps();
            let bins = (end.0.div_ceil(bin) as usize).max(self.bin_bytes.len());
            let bin_s = self.bin.as_secs_f64();
            GoodputTrace {
                time_s: (0..bins).map(|i| SimTime(i as u64 * bin).as_secs_f64()).collect(),
                goodput_mbps: (0..bins)
                    .map(|i| self.bin_bytes.get(i).copied().unwrap_or(0) as f64 * 8.0 / bin_s / 1e6)
                    .collect(),
            }
        });
        Traces {
            goodput,
            queue: queue.filter(|_| self.on.queue).map(|q| QueueTrace {
                time_s: q.time.iter().map(|t| t.as_secs_f64()).collect(),
                queue_bytes: q.bytes,
                dropped: q.dropped,
            }),
            flows: self.on.flows.then_some(self.flows_t),
            bbr: self.on.bbr.then_some(self.bbr_t),
            block_cwnd: self.on.block_cwnd.then_some(self.block_t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000_000)
    }

    /// Empty bins are kept up to the end, and a bin holds what arrived in it.
    #[test]
    fn goodput_bins_cover_the_run_including_empty_bins() {
        let cfg = TraceConfig { goodput_bin: Some(SimDuration::from_millis(5)), ..Default::default() };
        let mut r = TraceRecorder::new(&cfg);
        r.delivered(ms(1), 625);
        r.delivered(ms(4), 625);
        r.delivered(ms(12), 1250);
        let g = r.finish(ms(18), None).goodput.unwrap();
        assert_eq!(g.time_s, vec![0.0, 0.005, 0.010, 0.015]);
        // 1250 bytes in 5 ms = 2 Mbit/s.
        assert_eq!(g.goodput_mbps, vec![2.0, 0.0, 2.0, 0.0]);
    }

    /// An unset ssthresh and a missing SRTT are written as nulls.
    #[test]
    fn unset_ssthresh_and_srtt_are_none() {
        let cfg = TraceConfig { flows: true, ..Default::default() };
        let mut r = TraceRecorder::new(&cfg);
        let rto = SimDuration::from_millis(200);
        r.flow_sample(ms(1), 3, FlowSample { cwnd: 14600, ssthresh: u64::MAX, rto, srtt: None });
        let f = r.finish(ms(2), None).flows.unwrap();
        assert_eq!((f.flow, f.ssthresh_bytes, f.srtt_us), (vec![3], vec![None], vec![None]));
        assert_eq!(f.rto_us, vec![200_000.0]);
    }

    /// The BBR trace writes rates in bit/s, gains as ratios and a missing min_rtt as NaN.
    #[test]
    fn bbr_samples_are_in_bits_and_ratios() {
        let cfg = TraceConfig { bbr: true, ..Default::default() };
        let mut r = TraceRecorder::new(&cfg);
        let s = BbrSample {
            mode: "probe_bw",
            bw: 125_000_000,
            min_rtt: None,
            pacing_gain: 320,
            cwnd_gain: 512,
            pacing_rate: 123_750_000,
            delivery_rate: Some(1e6),
            cwnd_pkts: 12,
        };
        r.bbr_sample(ms(1), 2, s);
        let b = r.finish(ms(2), None).bbr.unwrap();
        assert_eq!(
            (b.mode, b.bw_bps, b.pacing_gain, b.cwnd_gain),
            (vec!["probe_bw"], vec![1e9], vec![1.25], vec![2.0])
        );
        assert!(b.min_rtt_s[0].is_nan());
        assert_eq!((b.pacing_rate_bps, b.delivery_rate_bps, b.cwnd_pkts), (vec![9.9e8], vec![8e6], vec![12]));
    }

    /// Traces that are off come back as `None`.
    #[test]
    fn traces_off_are_none() {
        let t = TraceRecorder::new(&TraceConfig::default()).finish(ms(10), None);
        assert!(t.is_empty());
    }
}
