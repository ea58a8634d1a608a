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
//! The rows and captured packets grow with simulated time, so they are held
//! to what `memory_budget` leaves over the run's estimated footprint
//! (`scenario::footprint`): past it the recorder names the setting that
//! asked for them and the run stops with an error, where it would otherwise
//! run out of memory. A timeout row is charged [`TIMEOUT_ROW_BYTES`], a
//! captured packet [`CAPTURED_PACKET_BYTES`], a flow-trace sample
//! [`FLOW_SAMPLE_BYTES`] and a block-start cwnd row [`BLOCK_CWND_BYTES`].
//! The queue trace is kept by the bottleneck's queue, out of the recorder's
//! reach on the per-frame path, so it takes half the room as a number of
//! entries ([`QUEUE_SAMPLE_BYTES`] each) and the rest keep the other half.
//! The packets in flight (the pool that holds them, the NICs' and switches'
//! queues included, and the event queue's entries) and the block rows grow
//! with simulated time too, without bound when retransmissions queue at a
//! NIC faster than it sends them: every [`MEMORY_CHECK_EVENTS`] events the
//! engine hands the recorder what they hold ([`Recorder::hold`]), which
//! counts what passes the footprint's estimate of them against the same
//! room, and names the setting to change once it is full.
//! **Deliberately different:** traces and the capture follow the reading
//! connections only, not the background flows.
//! **Not modelled:** see `stats::trace` and `stats::pcap`.

use crate::net::Direction;
use crate::scenario::footprint::{DEFAULT_MEMORY_BUDGET, IN_FLIGHT};
use crate::scenario::Scenario;
use crate::stats::pcap::{Capture, CapturedPacket, Way};
use crate::stats::trace::{TraceFlags, TraceRecorder};
use crate::stats::{Side, TimeoutRecord};
use crate::tcp::forensics::Timeout;
use crate::tcp::Segment;
use crate::time::SimTime;
use crate::workload::clients::Layout;
use std::mem::size_of;

/// Bytes one timeout row costs in the end: the row, its columns as they
/// cross to Python and the table built from them (about 310 bytes a row
/// measured with 310,100 rows: 4 times the row).
pub const TIMEOUT_ROW_BYTES: u64 = 4 * size_of::<TimeoutRecord>() as u64;
/// Bytes one captured packet costs: the record and its encoded pcap record.
pub const CAPTURED_PACKET_BYTES: u64 = 2 * size_of::<CapturedPacket>() as u64;
/// Bytes one flow-trace sample costs: its six columns (60 bytes) in the
/// engine and again in the table Python builds.
pub const FLOW_SAMPLE_BYTES: u64 = 120;
/// Bytes one BBR-trace sample costs: its ten columns (69 bytes), twice, rounded up.
pub const BBR_SAMPLE_BYTES: u64 = 140;
/// Bytes one block-start cwnd row costs: its three columns, twice.
pub const BLOCK_CWND_BYTES: u64 = 40;
/// Bytes one queue-trace entry costs: its three columns (17 bytes), twice,
/// rounded up.
pub const QUEUE_SAMPLE_BYTES: u64 = 40;

/// Events between two looks at what the packets in flight hold
/// ([`Recorder::hold`]): the growth between two looks is a few packets an
/// event, a few MiB at most.
pub const MEMORY_CHECK_EVENTS: u64 = 1 << 16;

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
    /// Bytes `memory_budget` leaves for rows and captured packets.
    room: u64,
    /// Bytes they hold so far.
    used: u64,
    /// Bytes the footprint counted for the packets in flight (`scenario::footprint`).
    in_flight_estimate: u64,
    /// The setting to change once the records, or the packets in flight, passed the room.
    pub(super) over: Option<&'static str>,
    /// The packets held when the packets in flight passed the room (`over` names the setting).
    pub(super) over_in_flight: Option<usize>,
    /// The setting that bounds the packets in flight: a NIC queue limit where
    /// one may be set, else the retransmission timer's floor.
    in_flight_setting: &'static str,
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
    /// True when it records what the plain build does not: the packet
    /// capture, the flow or BBR trace or the goodput trace.
    pub(super) fn uses_optional_parts(&self) -> bool {
        self.capture.is_some() || self.trace.per_ack || self.trace.goodput
    }

    /// What `s` asks to record about the connections of `reads`.
    pub(super) fn new(s: &Scenario, reads: Layout) -> Self {
        let footprint = s.footprint();
        let in_flight_estimate = footprint.iter().filter(|p| p.what == IN_FLIGHT).map(|p| p.bytes).sum();
        let nic_limit_allowed = s.switch.pause_config().is_none() && !s.classes();
        Recorder {
            keep_timeouts: s.stats.timeouts,
            timeouts: Vec::new(),
            trace: TraceFlags::of(&s.trace),
            tr: s.trace.any().then(|| Box::new(TraceRecorder::new(&s.trace))),
            capture: s.trace.pcap.then(|| Box::new(Capture::new(reads))),
            room: s
                .memory_budget
                .unwrap_or(DEFAULT_MEMORY_BUDGET)
                .get()
                .saturating_sub(footprint.iter().map(|p| p.bytes).sum()),
            used: 0,
            in_flight_estimate,
            over: None,
            over_in_flight: None,
            in_flight_setting: if s.link.tx_queue.is_none() && nic_limit_allowed {
                "link.tx_queue"
            } else {
                "tcp.rto_min"
            },
        }
    }

    /// The run holds `bytes` for its `packets` packets in flight and its
    /// pending events and block rows: what passes the footprint's estimate
    /// of them counts against the room with the records. False, with the
    /// setting that bounds them noted, once the room is full.
    #[cold]
    pub(super) fn hold(&mut self, bytes: u64, packets: usize) -> bool {
        if self.used.saturating_add(bytes.saturating_sub(self.in_flight_estimate)) <= self.room {
            return true;
        }
        self.over.get_or_insert(self.in_flight_setting);
        self.over_in_flight = Some(packets);
        false
    }

    /// Entries the queue trace may keep: half the room, which the other
    /// records give up.
    pub(super) fn lend_to_queue_trace(&mut self) -> usize {
        self.room /= 2;
        usize::try_from(self.room / QUEUE_SAMPLE_BYTES).unwrap_or(usize::MAX)
    }

    /// Charge `bytes` for a record `setting` asked for; past the room, note it.
    #[inline]
    pub(super) fn charge(&mut self, setting: &'static str, bytes: u64) {
        self.used += bytes;
        if self.used > self.room && self.over.is_none() {
            self.over = Some(setting);
        }
    }

    /// Capture `seg` of `flow` at `now` (the capture is on).
    #[cold]
    pub(super) fn capture(&mut self, now: SimTime, way: Way, flow: u32, dir: Direction, seg: Segment) {
        if let Some(c) = self.capture.as_mut() {
            c.record(now, way, flow, dir, seg);
            self.charge("trace.pcap", CAPTURED_PACKET_BYTES);
        }
    }

    /// Keep a row for timeout `t` of endpoint `ep`, whose connection is
    /// `client`'s (none for a background flow), in that client's block `block`.
    #[cold]
    pub(super) fn timeout(&mut self, ep: usize, client: Option<u32>, block: u64, t: Timeout) {
        self.charge("stats.timeouts", TIMEOUT_ROW_BYTES);
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
