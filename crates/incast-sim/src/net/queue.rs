//! Drop-tail output queue limited in bytes and/or packets.
//!
//! **Models:** a frame occupies the buffer from the instant it arrives until
//! its last bit has left on the link (the memory is freed when transmission
//! completes). A frame that would exceed either limit on arrival is dropped
//! (tail drop). Occupancy counts Ethernet frame bytes, not preamble or gap.
//! On request, a queue logs its occupancy at every frame offered to it (the
//! queue trace of `stats::trace`), up to a number of entries given with the
//! request; past it the log stops and says it overflowed.
//! A host's NIC queue has no limit and drops nothing; under `link.tx_queue`
//! it counts its frames so that the host's TCP waits while it is full.
//! **Deliberately different:** departures are known at enqueue time (see
//! `net`), so departed frames are retired lazily on the next arrival.
//! With an ECN threshold K (RFC 8257 §3.1, DCTCP), a frame that arrives while
//! the queue holds more than K (bytes or frames) is marked CE if it is
//! ECN-capable: the instantaneous queue, no averaging.
//! **Not modelled:** RED. (Shared memory and QoS partitions: `net::buffer`.)

use crate::fifo::Fifo;
use crate::settings::{packet_count, python_repr, Size, Spec};
use crate::time::{Bytes, SimTime};
use serde_json::Value as Json;

/// Limit of one switch output queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferLimit {
    /// At most this many bytes of Ethernet frames (header + payload + FCS).
    Bytes(Bytes),
    /// At most this many frames, whatever their size (as ns-2 counts).
    Packets(u32),
}

/// A queue limit written as bytes (`"32KiB"`) or whole frames (`"64pkt"`).
#[derive(Clone, Copy, Debug)]
pub struct BufferLimitSpec;

impl BufferLimitSpec {
    const FORMS: &'static str =
        "a size with one of B, KB, MB, GB, KiB, MiB, GiB (e.g. \"32KiB\"), or a packet count (e.g. \"64pkt\")";
}

impl Spec<BufferLimit> for BufferLimitSpec {
    fn parse(&self, raw: &Json) -> Result<BufferLimit, String> {
        if let Some(n) = packet_count(raw) {
            return match u32::try_from(n?) {
                Ok(n) if n >= 1 => Ok(BufferLimit::Packets(n)),
                _ => Err(format!("must hold at least 1 and at most 2^32-1 packets, got {}", python_repr(raw))),
            };
        }
        Size::bytes(raw, "a buffer limit", Self::FORMS, "\"32KiB\" or \"64pkt\"")
            .map(|b| BufferLimit::Bytes(Bytes::new(b)))
    }
    fn toml(&self, value: &BufferLimit) -> Json {
        match value {
            BufferLimit::Bytes(b) => Json::String(Size::format(b.get())),
            BufferLimit::Packets(n) => Json::String(format!("{n}pkt")),
        }
    }
    fn si(&self, value: &BufferLimit) -> Json {
        match value {
            BufferLimit::Bytes(b) => Json::from(b.get()),
            BufferLimit::Packets(n) => Json::String(format!("{n}pkt")),
        }
    }
    fn kind(&self) -> &'static str {
        "buffer"
    }
    fn allowed(&self) -> String {
        "a size (e.g. \"32KiB\") or a packet count (e.g. \"64pkt\")".into()
    }
}

/// Both limits of a queue; `u64::MAX` means unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimit {
    /// Most frame bytes held at once.
    pub bytes: u64,
    /// Most frames held at once.
    pub packets: u64,
}

impl QueueLimit {
    /// No limit at all (a host NIC queue; Linux throttles the socket instead
    /// of dropping locally).
    pub const UNLIMITED: QueueLimit = QueueLimit { bytes: u64::MAX, packets: u64::MAX };
}

impl From<BufferLimit> for QueueLimit {
    fn from(b: BufferLimit) -> Self {
        match b {
            BufferLimit::Bytes(n) => QueueLimit { bytes: n.get(), packets: u64::MAX },
            BufferLimit::Packets(n) => QueueLimit { bytes: u64::MAX, packets: u64::from(n) },
        }
    }
}

/// Departure of a frame that waits for its link (IEEE 802.3x PAUSE may
/// hold it for an unknown time).
const WAITING: SimTime = SimTime(u64::MAX);

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Frames accepted.
    pub enqueued: u64,
    /// Frames dropped on arrival.
    pub drops: u64,
    /// Largest occupancy seen, in frame bytes.
    pub peak_bytes: u64,
    /// Largest occupancy seen, in frames.
    pub peak_packets: u64,
    /// Frames that arrived above the ECN threshold (marked if ECN-capable).
    pub above_threshold: u64,
    /// Occupancy integrated over time, in frame bytes × picoseconds: every
    /// admitted frame adds its size times its time in the buffer.
    pub byte_ps: u128,
}

/// The largest occupancy a queue has seen: frame bytes, frames.
pub type Peaks = (u64, u64);

/// Occupancy of a queue at every frame offered to it, one entry per frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OccupancyLog {
    /// When the frame arrived.
    pub time: Vec<SimTime>,
    /// Frame bytes held once the frame was enqueued or dropped.
    pub bytes: Vec<u64>,
    /// The frame was dropped.
    pub dropped: Vec<bool>,
    /// Most entries the log may hold.
    pub limit: usize,
    /// A frame was offered when the log already held `limit` entries.
    pub overflowed: bool,
}

/// A drop-tail FIFO in front of a link.
#[derive(Clone, Debug)]
pub struct DropTailQueue {
    limit: QueueLimit,
    /// `limit` is [`QueueLimit::UNLIMITED`]: nothing to track.
    unlimited: bool,
    /// (departure of the last bit, frame bytes) of every frame still held;
    /// the last `waiting` ones have not started transmission (departure
    /// [`WAITING`]).
    held: Fifo<(SimTime, u32)>,
    /// Frames held behind a paused link, departure not known yet.
    waiting: usize,
    bytes: u64,
    stats: QueueStats,
    /// The occupancy log, when it was asked for.
    log: Option<Box<OccupancyLog>>,
    /// ECN marking threshold K, when marking is on.
    mark: Option<QueueLimit>,
    /// The frame last admitted arrived above K.
    marked: bool,
    /// A frame is admitted only with room for this many bytes
    /// (`switch.admission = "full_frame"`); 0: room for itself.
    room_for: u64,
}

impl DropTailQueue {
    /// An empty queue.
    pub fn new(limit: QueueLimit) -> Self {
        DropTailQueue {
            limit,
            unlimited: limit == QueueLimit::UNLIMITED,
            held: Fifo::default(),
            waiting: 0,
            bytes: 0,
            stats: QueueStats::default(),
            log: None,
            room_for: 0,
            mark: None,
            marked: false,
        }
    }

    /// Keep account of the frames held even though nothing limits them (a
    /// host's NIC queue under `link.tx_queue`), for [`DropTailQueue::full_until`].
    pub fn track(&mut self) {
        self.unlimited = false;
    }

    /// `None` while fewer than `frames` frames are held at `now`; else the
    /// instant one more frame has left and fewer are. Frames leave in arrival
    /// order, and their departures are known (no PAUSE at this port).
    #[inline]
    pub fn full_until(&mut self, now: SimTime, frames: u32) -> Option<SimTime> {
        self.retire(now);
        let excess = self.held.len().checked_sub(frames as usize)?;
        let (done, _) = self.held[excess];
        debug_assert!(done != WAITING, "a limited host queue is never paused");
        Some(done)
    }

    /// Admit a frame only while `bytes` more would fit, whatever its own size
    /// (`switch.admission = "full_frame"`).
    pub fn require_room_for(&mut self, bytes: u64) {
        self.room_for = bytes;
    }

    /// Mark frames that arrive while more than `k` is queued (RFC 8257 §3.1).
    pub fn set_mark_threshold(&mut self, k: QueueLimit) {
        self.mark = Some(k);
    }

    /// True when the frame last admitted arrived above the marking threshold.
    #[inline]
    pub fn marked(&self) -> bool {
        self.marked
    }

    /// Log the occupancy at every frame offered from now on, at most
    /// `limit` entries.
    pub fn log_occupancy(&mut self, limit: usize) {
        self.log = Some(Box::new(OccupancyLog { limit, ..OccupancyLog::default() }));
    }

    /// The occupancy log was asked for and overflowed its limit.
    pub fn occupancy_log_overflowed(&self) -> bool {
        self.log.as_ref().is_some_and(|l| l.overflowed)
    }

    /// The occupancy log, if it was asked for; logging stops.
    pub fn take_occupancy_log(&mut self) -> Option<OccupancyLog> {
        self.log.take().map(|b| *b)
    }

    #[cold]
    fn log_offer(&mut self, now: SimTime, held: u64, dropped: bool) {
        if let Some(log) = &mut self.log {
            if log.time.len() >= log.limit {
                log.overflowed = true;
                return;
            }
            log.time.push(now);
            log.bytes.push(held);
            log.dropped.push(dropped);
        }
    }

    fn retire(&mut self, now: SimTime) {
        while let Some(&(done, b)) = self.held.front() {
            if done > now {
                break;
            }
            self.bytes -= u64::from(b);
            self.held.pop_front();
        }
    }

    /// Would a frame of `frame_bytes` arriving at `now` fit? Counts a drop if not.
    /// A frame whose last bit leaves at `now` has left.
    #[inline]
    pub fn admit(&mut self, now: SimTime, frame_bytes: u64) -> bool {
        self.judge(now, now, frame_bytes)
    }

    /// [`DropTailQueue::admit`] for a frame that arrives just before the
    /// departure at the same instant: a frame whose last bit leaves at `now`
    /// still counts (ns-2 ran the arrival first, `sim::double_clock`).
    #[cold]
    pub fn admit_ahead_of_departure(&mut self, now: SimTime, frame_bytes: u64) -> bool {
        self.judge(now, SimTime(now.0.saturating_sub(1)), frame_bytes)
    }

    /// Would a frame of `frame_bytes` arriving at `now` fit, with the frames
    /// that leave by `left` gone? Counts a drop if not.
    #[inline]
    fn judge(&mut self, now: SimTime, left: SimTime, frame_bytes: u64) -> bool {
        if self.unlimited {
            return true;
        }
        self.retire(left);
        let fits = self.bytes + frame_bytes.max(self.room_for) <= self.limit.bytes
            && (self.held.len() as u64) < self.limit.packets;
        if !fits {
            self.stats.drops += 1;
        }
        if let Some(k) = self.mark {
            self.marked = fits && (self.bytes > k.bytes || self.held.len() as u64 > k.packets);
            self.stats.above_threshold += u64::from(self.marked);
        }
        if self.log.is_some() {
            self.log_offer(now, if fits { self.bytes + frame_bytes } else { self.bytes }, !fits);
        }
        fits
    }

    /// [`DropTailQueue::admit`] with the byte limit lowered to `bound` for
    /// this frame (a shared memory's dynamic threshold).
    pub fn admit_below(&mut self, now: SimTime, frame_bytes: u64, bound: u64) -> bool {
        let own = self.limit.bytes;
        self.limit.bytes = own.min(bound);
        let fits = self.admit(now, frame_bytes);
        self.limit.bytes = own;
        fits
    }

    /// Record a frame admitted at `now` that leaves the link at `done`;
    /// the peaks before it ([`DropTailQueue::peaks`]) if it raised them.
    #[inline]
    pub fn push(&mut self, now: SimTime, done: SimTime, frame_bytes: u64) -> Option<Peaks> {
        self.stats.enqueued += 1;
        if self.unlimited {
            return None;
        }
        self.stats.byte_ps += u128::from(frame_bytes) * u128::from(done.0 - now.0);
        self.hold(done, frame_bytes)
    }

    /// Record a frame admitted whose departure is not known yet: it waits
    /// until [`DropTailQueue::start_next`] (a link that PAUSE can stop),
    /// which counts its time in the buffer.
    pub fn push_waiting(&mut self, frame_bytes: u64) {
        self.stats.enqueued += 1;
        if self.unlimited {
            return;
        }
        let _ = self.hold(WAITING, frame_bytes);
        self.waiting += 1;
    }

    /// Hold a frame of `frame_bytes` that leaves at `done`; the peaks
    /// before it if it raised them.
    #[inline]
    fn hold(&mut self, done: SimTime, frame_bytes: u64) -> Option<Peaks> {
        self.held.push_back((done, frame_bytes as u32));
        self.bytes += frame_bytes;
        let before = self.peaks();
        self.stats.peak_bytes = before.0.max(self.bytes);
        self.stats.peak_packets = before.1.max(self.held.len() as u64);
        (self.bytes > before.0 || self.held.len() as u64 > before.1).then_some(before)
    }

    /// A waiting frame of `frame_bytes`, admitted at `arrived`, starts
    /// transmission; its last bit leaves at `done`. Frames start in
    /// transmission order, which with traffic classes (`net::pfc`) need not
    /// be arrival order: the waiting entries stand for any waiting frame, so
    /// the first takes this frame's size and gives its own to the entry
    /// that had it.
    pub fn start_next(&mut self, arrived: SimTime, done: SimTime, frame_bytes: u64) {
        if self.unlimited {
            return;
        }
        let i = self.held.len() - self.waiting;
        let b = frame_bytes as u32;
        if self.held[i].1 != b {
            let j = (i..self.held.len()).find(|&j| self.held[j].1 == b).expect("the frame was pushed waiting");
            self.held[j].1 = self.held[i].1;
        }
        self.waiting -= 1;
        self.held[i] = (done, b);
        self.stats.byte_ps += u128::from(frame_bytes) * u128::from(done.0 - arrived.0);
    }

    /// A frame offered at `now` was refused before [`DropTailQueue::admit`]
    /// (its buffer partition was full, `net::pfc`): count the drop.
    pub fn refuse(&mut self, now: SimTime) {
        self.stats.drops += 1;
        if self.log.is_some() {
            self.log_offer(now, self.bytes, true);
        }
    }

    /// The largest occupancy seen, in frame bytes and in frames.
    #[inline]
    pub fn peaks(&self) -> Peaks {
        (self.stats.peak_bytes, self.stats.peak_packets)
    }

    /// Take back a frame admitted at `arrived` that leaves at `done` (the
    /// newest one still held, if it is held): a frame a run counted ahead of
    /// its arrival, which the run ended before (`sim::ahead`). Its peaks are
    /// restored apart ([`DropTailQueue::restore_peaks`]).
    pub fn withdraw(&mut self, arrived: SimTime, done: SimTime, frame_bytes: u64) {
        self.stats.enqueued -= 1;
        if self.unlimited {
            return;
        }
        self.stats.byte_ps -= u128::from(frame_bytes) * u128::from(done.0 - arrived.0);
        if self.held.back() == Some(&(done, frame_bytes as u32)) {
            self.held.pop_back();
            self.bytes -= frame_bytes;
        }
    }

    /// Take back a drop counted ahead of the frame's arrival (`sim::ahead`).
    pub fn withdraw_drop(&mut self) {
        self.stats.drops -= 1;
    }

    /// Set the peaks back to `(bytes, frames)` (`sim::ahead`).
    pub fn restore_peaks(&mut self, (bytes, frames): Peaks) {
        (self.stats.peak_bytes, self.stats.peak_packets) = (bytes, frames);
    }

    /// The queue logs its occupancy.
    pub fn is_logged(&self) -> bool {
        self.log.is_some()
    }

    /// Frame bytes held at `now`.
    pub fn bytes_at(&mut self, now: SimTime) -> u64 {
        self.retire(now);
        self.bytes
    }

    /// Frame bytes held at the last arrival.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Counters.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    /// Mean occupancy from time zero to `end`, in frame bytes; the part of
    /// each frame's stay after `end` does not count. `waiting_byte_ps` is the
    /// stay until `end` of the frames still waiting for their link.
    pub fn mean_bytes(&self, end: SimTime, waiting_byte_ps: u128) -> f64 {
        if end == SimTime::ZERO {
            return 0.0;
        }
        let after: u128 = self
            .held
            .iter()
            .filter(|h| h.0 > end && h.0 != WAITING)
            .map(|&(done, b)| u128::from(b) * u128::from(done.0 - end.0))
            .sum();
        (self.stats.byte_ps + waiting_byte_ps - after) as f64 / end.0 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Bytes;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// A frame is held until its last bit leaves, then its space is free again.
    #[test]
    fn frees_space_when_transmission_completes() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        assert!(q.admit(us(0), 1518));
        q.push(us(0), us(12), 1518);
        assert!(!q.admit(us(1), 1518), "two frames exceed 3000 bytes");
        assert!(q.admit(us(12), 1518), "the first frame has left");
        assert_eq!(q.stats().drops, 1);
    }

    /// `switch.admission = "full_frame"`: with 1,000 bytes left a 500-byte
    /// frame fits, but ns-3's device queue has stopped (less than a full
    /// frame free) and drops it; once a frame leaves, it is taken.
    #[test]
    fn a_short_frame_needs_room_for_a_full_one() {
        let mut fits = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(4000)).into());
        let mut full_frame = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(4000)).into());
        full_frame.require_room_for(1500);
        for q in [&mut fits, &mut full_frame] {
            for i in 0..2 {
                assert!(q.admit(us(0), 1500));
                q.push(us(0), us(12 * (i + 1)), 1500);
            }
        }
        assert!(fits.admit(us(1), 500));
        assert!(!full_frame.admit(us(1), 500), "1,000 bytes free: less than a full frame");
        assert!(full_frame.admit(us(12), 500), "the first frame has left");
    }

    #[test]
    fn packet_limit_counts_frames_not_bytes() {
        let mut q = DropTailQueue::new(BufferLimit::Packets(2).into());
        for i in 0..2 {
            assert!(q.admit(us(0), 64));
            q.push(us(0), us(10 + i), 64);
        }
        assert!(!q.admit(us(0), 64));
        assert_eq!(q.stats().peak_packets, 2);
        assert_eq!(q.stats().peak_bytes, 128);
    }

    /// A full port whose frame in service ends at the instant another
    /// arrives: the arrival fits if the departure goes first (the engine's
    /// order) and is dropped if it goes first itself (ns-2's, on a tie).
    #[test]
    fn an_arrival_ahead_of_a_departure_finds_the_port_full() {
        let mut q = DropTailQueue::new(BufferLimit::Packets(2).into());
        for done in [us(10), us(20)] {
            assert!(q.admit(us(0), 1078));
            q.push(us(0), done, 1078);
        }
        assert!(!q.admit_ahead_of_departure(us(10), 1078), "the frame ending now still counts");
        assert!(q.admit(us(10), 1078), "once it has left there is room");
        assert_eq!(q.stats().drops, 1);
    }

    /// The log holds the occupancy after each offered frame, drops included.
    #[test]
    fn occupancy_log_samples_every_offered_frame() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        q.log_occupancy(10);
        assert!(q.admit(us(0), 1518));
        q.push(us(0), us(12), 1518);
        assert!(!q.admit(us(1), 1518));
        assert!(q.admit(us(12), 64));
        q.push(us(12), us(13), 64);
        let log = q.take_occupancy_log().unwrap();
        assert_eq!(log.time, vec![us(0), us(1), us(12)]);
        assert_eq!(log.bytes, vec![1518, 1518, 64]);
        assert_eq!(log.dropped, vec![false, true, false]);
        assert!(!log.overflowed);
    }

    /// A log at its limit keeps what it has and says it overflowed.
    #[test]
    fn occupancy_log_stops_at_its_limit() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        q.log_occupancy(1);
        assert!(q.admit(us(0), 64));
        assert!(!q.occupancy_log_overflowed());
        assert!(q.admit(us(1), 64));
        assert!(q.occupancy_log_overflowed());
        assert_eq!(q.take_occupancy_log().unwrap().time, vec![us(0)]);
    }

    /// Two frames held 12 µs each over a 48 µs window: a mean of half a frame;
    /// a frame still held at the end counts only up to it.
    #[test]
    fn mean_occupancy_integrates_time_in_the_buffer() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        assert!(q.admit(us(0), 1000));
        q.push(us(0), us(12), 1000);
        assert!(q.admit(us(30), 1000));
        q.push(us(30), us(42), 1000);
        assert_eq!(q.mean_bytes(us(48), 0), 500.0);
        assert_eq!(q.mean_bytes(us(36), 0), 1000.0 * 18.0 / 36.0);
    }

    /// A frame behind a paused link holds its space until it has started and
    /// left; frames start in arrival order.
    #[test]
    fn waiting_frames_hold_space_until_they_start_and_leave() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        assert!(q.admit(us(0), 1000));
        q.push_waiting(1000);
        assert!(q.admit(us(1), 1500));
        q.push_waiting(1500);
        assert_eq!(q.bytes_at(us(100)), 2500, "nothing leaves while the link is paused");
        q.start_next(us(0), us(110), 1000);
        assert_eq!(q.bytes_at(us(110)), 1500);
        q.start_next(us(1), us(130), 1500);
        assert_eq!(q.bytes_at(us(130)), 0);
        assert_eq!(q.stats().byte_ps, 1000 * 110_000_000 + 1500 * 129_000_000);
    }

    /// A later frame may start first (another priority's turn): the space
    /// freed is that frame's, and the earlier one keeps holding its own.
    #[test]
    fn waiting_frames_may_start_out_of_arrival_order() {
        let mut q = DropTailQueue::new(BufferLimit::Bytes(Bytes::new(3000)).into());
        q.push_waiting(1000);
        q.push_waiting(64);
        q.start_next(us(1), us(2), 64);
        assert_eq!(q.bytes_at(us(2)), 1000);
        q.start_next(us(0), us(10), 1000);
        assert_eq!(q.bytes_at(us(9)), 1000);
        assert_eq!(q.bytes_at(us(10)), 0);
    }

    #[test]
    fn a_tracked_queue_is_full_until_the_frame_that_makes_room_leaves() {
        let mut q = DropTailQueue::new(QueueLimit::UNLIMITED);
        q.track();
        for (i, done) in [10, 20, 30].into_iter().enumerate() {
            assert!(q.admit(us(i as u64), 1538));
            q.push(us(i as u64), us(done), 1538);
        }
        assert_eq!(q.full_until(us(3), 4), None);
        assert_eq!(q.full_until(us(3), 3), Some(us(10)));
        assert_eq!(q.full_until(us(3), 2), Some(us(20)));
        assert_eq!(q.full_until(us(10), 3), None, "the first frame has left");
        assert_eq!(q.full_until(us(10), 1), Some(us(30)));
    }

    #[test]
    fn unlimited_queue_never_drops() {
        let mut q = DropTailQueue::new(QueueLimit::UNLIMITED);
        for _ in 0..10_000 {
            assert!(q.admit(us(0), 1518));
            q.push(us(0), us(1), 1518);
        }
        assert_eq!(q.stats().drops, 0);
        assert_eq!(q.stats().enqueued, 10_000);
    }
}
