//! What the engine records on request beside the run's figures: one row
//! per retransmission timeout (`stats.timeouts`), the traces of
//! `stats::trace` and the packet capture of `stats::pcap`.
//!
//! **Models:** every retransmission timeout an endpoint reports is tagged
//! with its flow, side and block and kept as a row if `stats.timeouts` is
//! on; a later finding that it was spurious marks that row. The traces are
//! fed from the engine's event sites, each behind one test of its flag; the
//! recorder is allocated only when a trace is on. The packet capture
//! records each packet where the client's or a server's endpoint hands it
//! to its NIC and where it reaches its destination host, behind one test
//! per site. The bottleneck the queue trace follows is the switch port
//! toward client 0.
//! **Deliberately different:** traces and the capture follow the reading
//! connections only, not the background flows.
//! **Not modelled:** see `stats::trace` and `stats::pcap`.

use crate::scenario::Scenario;
use crate::stats::pcap::Capture;
use crate::stats::trace::{TraceFlags, TraceRecorder};
use crate::stats::{Side, TimeoutRecord};
use crate::tcp::forensics::Timeout;
use crate::workload::clients::Layout;

/// The timeout rows, the traces and the capture.
pub(super) struct Recorder {
    /// Keep one row per timeout (`stats.timeouts`).
    pub(super) keep_timeouts: bool,
    /// One row per timeout, when `keep_timeouts`.
    pub(super) timeouts: Vec<TimeoutRecord>,
    /// Which traces are on.
    pub(super) trace: TraceFlags,
    /// Their recorder, allocated only when one is on.
    pub(super) tr: Option<Box<TraceRecorder>>,
    /// The packet capture, allocated only when `trace.pcap` is on.
    pub(super) capture: Option<Box<Capture>>,
}

/// The side of endpoint `ep`: odd endpoints are servers.
fn side_of(ep: usize) -> Side {
    if ep % 2 == 1 {
        Side::Server
    } else {
        Side::Client
    }
}

impl Recorder {
    /// What `s` asks to record about the connections of `reads`.
    pub(super) fn new(s: &Scenario, reads: Layout) -> Self {
        Recorder {
            keep_timeouts: s.stats.timeouts,
            timeouts: Vec::new(),
            trace: TraceFlags::of(&s.trace),
            tr: s.trace.any().then(|| Box::new(TraceRecorder::new(&s.trace))),
            capture: s.trace.pcap.then(|| Box::new(Capture::new(reads))),
        }
    }

    /// Keep a row for timeout `t` of endpoint `ep`, whose connection is
    /// `client`'s (none for a background flow), in that client's block `block`.
    #[cold]
    pub(super) fn timeout(&mut self, ep: usize, client: Option<u32>, block: u64, t: Timeout) {
        let s = t.snapshot;
        self.timeouts.push(TimeoutRecord {
            time_s: s.time.as_secs_f64(),
            flow: (ep / 2) as u32,
            client,
            side: side_of(ep),
            block,
            rto_us: s.rto.as_micros_f64(),
            backoff: s.backoff,
            cwnd_bytes: s.cwnd,
            flight_bytes: s.flight,
            dart: s.dart,
            class: t.class,
            gip_class: t.gip_class,
            spurious: t.spurious,
        });
    }

    /// Endpoint `ep` found its latest timeout spurious: mark its row.
    #[cold]
    pub(super) fn spurious(&mut self, ep: usize) {
        let (flow, side) = (ep as u32 / 2, side_of(ep));
        if let Some(row) = self.timeouts.iter_mut().rev().find(|t| t.flow == flow && t.side == side) {
            row.spurious = true;
        }
    }
}
