//! The event queue: earliest time first, then the order events became certain.
//!
//! **Models:** discrete-event scheduling with integer picosecond time.
//! Events at the same instant run in the order they became certain, then in
//! scheduling order (FIFO): an event scheduled with `push` became certain
//! when it was scheduled, so same-instant events run FIFO, and a frame's
//! arrival is scheduled so when it is queued for its link. With
//! `link.arrival_order = "wire"` an arrival instead became certain when its
//! transmission started (`push_since`), and among frames that started at the
//! same instant, the one whose link's run of back-to-back frames began last
//! runs first; a frame sent onto an idle link begins a run, so it runs
//! before every frame that waited in a queue. That is how ns-2 and ns-3
//! order simultaneous arrivals: they schedule an arrival when its
//! transmission starts and run same-time events in the order they were
//! scheduled. A waiting frame starts from the event that ended the previous
//! frame, scheduled one frame time earlier, while the event that started a
//! younger run (the arrival or timer that made its host send) was scheduled
//! earlier than that, a whole link delay before; so the younger run's frame
//! starts first at that instant, and at every later instant where both
//! links start a frame together. At a full
//! port the two orders drop different frames: by queueing order, frames
//! queued behind a burst win every tie over the retransmissions an ACK just
//! released (docs/validation/ns2.md). With `link.arrival_order = "ns2"`
//! a frame's rank in ns-2's double-precision clock (`sim::double_clock`)
//! comes first among arrivals that started together (`push_since_ranked`).
//! Every order is a pure function of the inputs, so every run is.
//! **Deliberately different:** there is no cancellation: owners of a moved
//! deadline (TCP timers) ignore stale wake-ups instead.

use crate::time::{SimDuration, SimTime};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Bucket width in picoseconds of [`EventQueue::new`], a power of two so
/// that finding an event's bucket is a shift: 8.4 µs, two thirds of a
/// full-sized frame at 1 Gbps. A run sizes its buckets from its fastest link
/// ([`EventQueue::for_frame_time`]).
const BUCKET_PS: u64 = 1 << 23;
/// Buckets in the ring, which covers the next 2.1 ms at 1 Gbps (0.27 ms at
/// 10 Gbps): packets in flight and sub-millisecond retransmission timers
/// fall in it, delayed-ACK timers and longer timeouts wait beyond it. A
/// bucket's vector keeps the room its largest burst needed, so a small ring
/// keeps memory flat over long runs. A larger ring helps at 10 Gbps and
/// costs at 1 Gbps about as much, so the ring stays small.
const BUCKETS: u64 = 256;
/// Bits in one word of the occupancy map.
const WORD: u64 = u64::BITS as u64;
/// Words in the occupancy map.
const WORDS: usize = (BUCKETS / WORD) as usize;
/// Buckets a slot of the second ring spans: half the first ring, so that a
/// slot's events all fit the first ring once the bucket being run is within
/// half a ring of the slot.
const SLOT_BUCKETS: u64 = BUCKETS / 2;
/// Slots in the second ring (as many as buckets in the first, so that one
/// occupancy search serves both): 275 ms ahead at 1 Gbps, 34 ms at 10 Gbps.
const SLOTS: u64 = BUCKETS;
/// Up to this many events, a bucket is sorted by insertion.
const SMALL_BUCKET: usize = 16;

/// Largest lead a key holds, in units of 256 ps: 4.3 ms.
const LEAD_MAX: u64 = (1 << 24) - 1;
/// Largest rank [`EventQueue::push_since_ranked`] takes either way; beyond
/// it a rank counts as this.
pub const RANK_MAX: i32 = 4096;

/// Time in the high half; in the low half, from the top: how long before
/// `time` the event became certain (its lead, in 256 ps units, saturating at
/// 4.3 ms and complemented, so that the longer lead comes first), the age of
/// its link's run of back-to-back frames when its transmission started
/// (younger first; 0 for all but frame arrivals in wire order; [`age_code`]),
/// and the scheduling sequence number (its low 24 bits: only events that
/// tie on all the rest compare on it). Saturation is exact for events
/// scheduled with `push`, the longer lead being the earlier scheduled. One
/// comparison orders them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

impl Key {
    #[inline]
    fn new(time: SimTime, since: SimTime, age_code: u64, seq: u64) -> Self {
        debug_assert!(since <= time, "an event becomes certain before it happens");
        let lead = LEAD_MAX.saturating_sub((time.0 - since.0) >> 8);
        Key(u128::from(time.0) << 64 | u128::from(lead << 40 | age_code << 24 | (seq & 0xFF_FFFF)))
    }

    /// This key with its lead field moved by `rank` (negative: earlier).
    #[inline]
    fn ranked(self, rank: i32) -> Self {
        let lead = (self.0 as u64 >> 40) as i64 + i64::from(rank.clamp(-RANK_MAX, RANK_MAX));
        let lead = lead.clamp(0, LEAD_MAX as i64) as u64;
        Key(self.0 & !(u128::from(LEAD_MAX) << 40) | u128::from(lead) << 40)
    }

    #[inline]
    fn time(self) -> SimTime {
        SimTime((self.0 >> 64) as u64)
    }

    /// The bucket this key falls in, counted from time zero, with buckets of `2^shift` ps.
    #[inline]
    fn bucket(self, shift: u32) -> u64 {
        self.time().0 >> shift
    }
}

/// The key an event would have had, for an event that was never scheduled
/// ([`EventQueue::push_after_hop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(Key);

impl Ticket {
    /// A ticket for nothing, before everything.
    pub const NONE: Ticket = Ticket(Key(0));

    /// The instant of the event it stands for.
    #[inline]
    pub fn time(self) -> SimTime {
        self.0.time()
    }
}

/// A duration in 16 bits, in the same order: 0 for none, else the position
/// of its highest set bit and the 10 bits below it, a relative precision of
/// 1/1,024 (100 µs ± 0.1 µs) over any span.
#[inline]
fn age_code(age: SimDuration) -> u64 {
    let x = age.0;
    if x == 0 {
        return 0;
    }
    let top = u64::from(63 - x.leading_zeros());
    let mantissa = if top >= 10 { x >> (top - 10) } else { x << (10 - top) } & 0x3FF;
    ((top + 1) << 10 | mantissa).min(0xFFFF)
}

/// The word of an occupancy map that holds index `i`, and its bit there.
#[inline]
fn word_bit(i: u64) -> (usize, u64) {
    ((i / WORD) as usize, 1 << (i % WORD))
}

/// The first index from `start` on, within one lap of a ring of `WORDS`
/// words, whose bit is set in `map` (bit `i % WORD` of word `i / WORD` for
/// index `i` modulo the ring), unless none is.
#[inline]
fn first_set(map: &[u64; WORDS], start: u64) -> Option<u64> {
    let size = WORDS as u64 * WORD;
    let mut w = (start % size / WORD) as usize;
    let mut bits = map[w] & (u64::MAX << (start % WORD));
    // One lap around the ring from `start`; the first word comes round
    // again at the end for the slots before `start`, which belong to the
    // next lap.
    for _ in 0..=WORDS {
        if bits != 0 {
            let slot = w as u64 * WORD + u64::from(bits.trailing_zeros());
            return Some(start + (slot + size - start % size) % size);
        }
        w = (w + 1) % WORDS;
        bits = map[w];
    }
    None
}

/// An event beyond the second ring. Ordered in reverse of its key, so that
/// [`BinaryHeap`] (a max-heap) yields the earliest first.
struct Far<E>(Key, E);

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.cmp(&self.0)
    }
}

/// Sort a bucket by key. A bucket usually holds a handful of events, which
/// insertion sort orders fastest; a crowded one (a burst on fast links) goes
/// to the library sort. Keys are unique, so an unstable sort is exact.
#[inline]
fn sort_bucket<E: Copy>(bucket: &mut [(Key, E)]) {
    if bucket.len() > SMALL_BUCKET {
        bucket.sort_unstable_by_key(|e| e.0);
        return;
    }
    for i in 1..bucket.len() {
        let entry = bucket[i];
        let mut hole = i;
        while hole > 0 && bucket[hole - 1].0 > entry.0 {
            bucket[hole] = bucket[hole - 1];
            hole -= 1;
        }
        bucket[hole] = entry;
    }
}

/// Pending events, earliest first; ties in scheduling order.
///
/// A calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue
/// implementation for the simulation event set problem", CACM 31(10), 1988).
/// Time is cut into buckets of `BUCKET_PS`; a ring of `BUCKETS` buckets
/// covers the near future, where scheduling an event only files it in its
/// bucket, in no order. When the queue reaches a bucket, it sorts the
/// bucket's few events by `(time, seq)`, unless they were filed in that
/// order, and runs them in that order; events
/// scheduled into the bucket being run are inserted in place. Events beyond
/// the ring wait, unordered, in the slots of a second ring, each slot as wide
/// as half the first ring, and are filed into the first as it comes within
/// reach of their slot (a hierarchical timing wheel: G. Varghese and T.
/// Lauck, "Hashed and hierarchical timing wheels", SOSP 1987); events beyond
/// the second ring wait in a heap, and go to the first ring as directly as a
/// slot's. The order is exactly that of one heap of all events — the buckets
/// are visited in time order and every event carries its own `(time, seq)`
/// — but scheduling costs the same however many packets are in flight, and
/// no ordering work is spent on the many timers that lie ahead.
pub struct EventQueue<E> {
    /// The events of bucket `current` (and of any earlier instant), sorted;
    /// those before `ran` have run.
    present: Vec<(Key, E)>,
    ran: usize,
    /// The ring: bucket `b` (counted from time zero), for `current < b <
    /// current + BUCKETS`, is `ring[b % BUCKETS]`, in no particular order.
    ring: Box<[Vec<(Key, E)>; BUCKETS as usize]>,
    /// Bit `i % WORD` of `occupied[i / WORD]` is set when `ring[i]` is not empty.
    occupied: [u64; WORDS],
    /// The same bit of `unsorted` is set when an event filed into `ring[i]`
    /// comes before the last one filed there. Most come after it, and a
    /// bucket filed in order needs no sorting.
    unsorted: [u64; WORDS],
    /// The second ring: the events of buckets `s · SLOT_BUCKETS` to
    /// `(s + 1) · SLOT_BUCKETS - 1`, all at or after bucket `current +
    /// BUCKETS` when filed, for `s` below `current / SLOT_BUCKETS + SLOTS`,
    /// are `slots[s % SLOTS]`, in no particular order.
    slots: Box<[Vec<(Key, E)>; SLOTS as usize]>,
    /// Bit `i % WORD` of `slot_occupied[i / WORD]` is set when `slots[i]` is not empty.
    slot_occupied: [u64; WORDS],
    /// The first bucket of the earliest slot holding events, in the second
    /// ring or the heap (`u64::MAX` when there is none): one test tells
    /// whether the next bucket may wait for either.
    slot_bucket: u64,
    /// A slot's events while they are filed into the first ring.
    spill: Vec<(Key, E)>,
    /// Events beyond the second ring.
    far: BinaryHeap<Far<E>>,
    /// Events moved into the first ring from the second or the heap.
    #[cfg(test)]
    moved: u64,
    /// The bucket being run.
    current: u64,
    /// Buckets are `2^shift` ps wide.
    shift: u32,
    next_seq: u64,
    /// The key of the event run last (zero before any).
    last: Key,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue with buckets `BUCKET_PS` wide.
    pub fn new() -> Self {
        Self::with_shift(BUCKET_PS.trailing_zeros())
    }

    /// An empty queue for a network whose fastest link sends a full-sized
    /// frame in `frame`: buckets two thirds of that wide, to the nearest
    /// power of two. Narrow enough that a bucket holds a handful of events
    /// (the sort on reaching it and the insertions into the bucket being run
    /// stay short), wide enough that the queue rarely steps through empty
    /// ones. Following the fastest link matters most at 10 Gbps with
    /// thousands of senders, where 1 Gbps's 8.4 µs buckets would each hold
    /// many events.
    pub fn for_frame_time(frame: SimDuration) -> Self {
        let width = (frame.0 * 2 / 3).max(1) as f64;
        Self::with_shift(width.log2().round() as u32)
    }

    /// An empty queue with buckets `2^shift` ps wide.
    fn with_shift(shift: u32) -> Self {
        EventQueue {
            shift,
            present: Vec::new(),
            ran: 0,
            ring: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            unsorted: [0; WORDS],
            slots: Box::new(std::array::from_fn(|_| Vec::new())),
            slot_occupied: [0; WORDS],
            slot_bucket: u64::MAX,
            spill: Vec::new(),
            far: BinaryHeap::new(),
            #[cfg(test)]
            moved: 0,
            current: 0,
            next_seq: 0,
            last: Key(0),
        }
    }

    /// Schedule `event` at `time`.
    // Inline always: every event is pushed, and with `#[inline]` alone LLVM keeps it out of line.
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: E) {
        let key = Key::new(time, self.last.time(), 0, self.next_seq);
        self.next_seq += 1;
        self.file(key, event);
    }

    /// Schedule `event`, a frame's arrival at `time`, ordered among
    /// same-time events by when its transmission started (`since`) and,
    /// among those that started together, by when its link's run of
    /// back-to-back frames began (`run_start`; later first).
    #[inline]
    pub fn push_since(&mut self, time: SimTime, since: SimTime, run_start: SimTime, event: E) {
        let key = Key::new(time, since, age_code(since.since(run_start)), self.next_seq);
        self.next_seq += 1;
        self.file(key, event);
    }

    /// [`EventQueue::push_since`] for an arrival that `rank` units of
    /// another clock put before (negative) or after (positive) the other
    /// frames of its instant that left as it did (`link.arrival_order =
    /// "ns2"`: `rank` counts the last-bit steps of ns-2's double-precision
    /// time, `sim::double_clock`). It shifts the key's lead by at most
    /// [`RANK_MAX`] of its 256 ps units, so it decides only among arrivals
    /// whose transmissions started within about a microsecond of each other.
    #[inline]
    pub fn push_since_ranked(&mut self, time: SimTime, since: SimTime, run_start: SimTime, rank: i32, event: E) {
        let key = Key::new(time, since, age_code(since.since(run_start)), self.next_seq).ranked(rank);
        self.next_seq += 1;
        self.file(key, event);
    }

    /// Schedule `event` at `time`, the end of a hop that runs no event of its
    /// own: a frame reached a switch at `hop` and was queued there at once
    /// (`sim::ahead`). `event` is ordered as if the switch's arrival had
    /// been scheduled now and had scheduled it at `hop`; the returned
    /// [`Ticket`] stands for that arrival, to ask later whether it
    /// would have run ([`EventQueue::ran`]).
    #[inline(always)]
    pub fn push_after_hop(&mut self, hop: SimTime, time: SimTime, event: E) -> Ticket {
        let ticket = self.ticket(hop);
        let key = Key::new(time, hop, 0, self.next_seq);
        self.next_seq += 1;
        self.file(key, event);
        ticket
    }

    /// A ticket for an event at `time` scheduled now and never run (a
    /// frame dropped by a port that took it ahead).
    #[inline(always)]
    pub fn ticket(&mut self, time: SimTime) -> Ticket {
        let ticket = Ticket(Key::new(time, self.last.time(), 0, self.next_seq));
        self.next_seq += 1;
        ticket
    }

    /// Whether the event `ticket` stands for would have run by now: had it
    /// been in the queue, it would have come before the event run last.
    pub fn ran(&self, ticket: Ticket) -> bool {
        ticket.0 < self.last
    }

    /// The events still pending, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = (SimTime, &E)> {
        let present = self.present[self.ran..].iter();
        let rings = self.ring.iter().chain(self.slots.iter()).flatten();
        let far = self.far.iter().map(|Far(k, e)| (k, e));
        present.chain(rings).map(|(k, e)| (k, e)).chain(far).map(|(k, e)| (k.time(), e))
    }

    /// Put an event where it belongs: the present, the ring, the second ring or the heap.
    // Inline always: it runs for every event filed, and LLVM otherwise keeps
    // it out of line.
    #[inline(always)]
    fn file(&mut self, key: Key, event: E) {
        let b = key.bucket(self.shift);
        if b <= self.current {
            // Only events scheduled for (nearly) the present instant. Nearly
            // all of them run next: such an event takes the slot of the one
            // that just ran, and no later event moves.
            if self.ran > 0 && self.present.get(self.ran).map_or(true, |e| key < e.0) {
                self.ran -= 1;
                self.present[self.ran] = (key, event);
            } else {
                let at = self.ran + self.present[self.ran..].partition_point(|e| e.0 < key);
                self.present.insert(at, (key, event));
            }
        } else if b < self.current + BUCKETS {
            let i = b % BUCKETS;
            let bucket = &mut self.ring[i as usize];
            let (w, bit) = word_bit(i);
            match bucket.last() {
                None => self.occupied[w] |= bit,
                Some(e) if e.0 > key => self.unsorted[w] |= bit,
                Some(_) => {}
            }
            bucket.push((key, event));
        } else {
            let s = b / SLOT_BUCKETS;
            if s < self.current / SLOT_BUCKETS + SLOTS {
                let i = s % SLOTS;
                self.slots[i as usize].push((key, event));
                let (w, bit) = word_bit(i);
                self.slot_occupied[w] |= bit;
            } else {
                self.far.push(Far(key, event));
            }
            self.slot_bucket = self.slot_bucket.min(s * SLOT_BUCKETS);
        }
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_until(SimTime(u64::MAX))
    }

    /// Remove and return the earliest event if it is due at or before `end`.
    // Inline always: every event is taken here, and with `#[inline]` alone
    // LLVM keeps it out of line in both builds (`tcp::gated`).
    #[inline(always)]
    pub fn pop_until(&mut self, end: SimTime) -> Option<(SimTime, E)> {
        let &(key, event) = match self.present.get(self.ran) {
            Some(next) => next,
            None => {
                self.advance();
                self.present.get(self.ran)?
            }
        };
        if key.time() > end {
            return None;
        }
        self.ran += 1;
        self.last = key;
        Some((key.time(), event))
    }

    /// The present bucket has run: move on to the next bucket that holds
    /// events, filing first any slot of the second ring that may come before it.
    // Inline always: it runs whenever a bucket has run, and LLVM otherwise
    // keeps it out of line in both builds (`tcp::gated`).
    #[inline(always)]
    fn advance(&mut self) {
        self.present.clear();
        self.ran = 0;
        loop {
            // A slot's events are at or after its first bucket: with that
            // after the next bucket, they can wait.
            match first_set(&self.occupied, self.current + 1) {
                Some(b) if b < self.slot_bucket => {
                    self.current = b;
                    let i = b % BUCKETS;
                    let (w, bit) = word_bit(i);
                    self.occupied[w] &= !bit;
                    // The bucket becomes the present, and the present's empty
                    // vector takes its place in the ring.
                    std::mem::swap(&mut self.present, &mut self.ring[i as usize]);
                    if self.unsorted[w] & bit != 0 {
                        self.unsorted[w] &= !bit;
                        sort_bucket(&mut self.present);
                    }
                }
                None if self.slot_bucket == u64::MAX => return,
                _ => {
                    self.file_slot();
                    continue;
                }
            }
            return;
        }
    }

    /// Move the window up to the earliest slot holding events, in the second
    /// ring or the heap, so that the ring holds every bucket of it, and file
    /// them (none comes before the next occupied bucket of the ring, or the
    /// slot would not be first).
    #[cold]
    #[inline(never)]
    fn file_slot(&mut self) {
        let s = self.slot_bucket / SLOT_BUCKETS;
        self.current = self.current.max(s * SLOT_BUCKETS - SLOT_BUCKETS);
        while self.far.peek().is_some_and(|Far(key, _)| key.bucket(self.shift) / SLOT_BUCKETS == s) {
            let Far(key, event) = self.far.pop().expect("a far event");
            self.file(key, event);
            #[cfg(test)]
            {
                self.moved += 1;
            }
        }
        // The second ring holds no slot before `s`: with `s` beyond its reach
        // (only the heap holds that slot), it is empty.
        let i = s % SLOTS;
        let (w, bit) = word_bit(i);
        if self.slot_occupied[w] & bit != 0 {
            self.slot_occupied[w] &= !bit;
            // The slot keeps the spare vector's room, and the spare its events.
            let mut spill = std::mem::replace(&mut self.slots[i as usize], std::mem::take(&mut self.spill));
            for &(key, event) in &spill {
                self.file(key, event);
            }
            #[cfg(test)]
            {
                self.moved += spill.len() as u64;
            }
            spill.clear();
            self.spill = spill;
        }
        let ring = first_set(&self.slot_occupied, s + 1).map_or(u64::MAX, |s| s * SLOT_BUCKETS);
        let far = self.far.peek().map_or(u64::MAX, |Far(key, _)| key.bucket(self.shift) / SLOT_BUCKETS * SLOT_BUCKETS);
        self.slot_bucket = ring.min(far);
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.present.len() - self.ran
            + self.ring.iter().map(Vec::len).sum::<usize>()
            + self.slots.iter().map(Vec::len).sum::<usize>()
            + self.far.len()
    }

    /// Bytes the queue holds for its entries, pending or not (what its
    /// vectors and heap have allocated).
    pub fn held_bytes(&self) -> u64 {
        let entries = self.present.capacity()
            + self.ring.iter().map(Vec::capacity).sum::<usize>()
            + self.slots.iter().map(Vec::capacity).sum::<usize>()
            + self.spill.capacity();
        (entries * std::mem::size_of::<(Key, E)>() + self.far.capacity() * std::mem::size_of::<Far<E>>()) as u64
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain<E: Copy>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        for (t, e) in [(30, 'c'), (10, 'a'), (20, 'b')] {
            q.push(SimTime(t), e);
        }
        assert_eq!(drain(&mut q), vec![(10, 'a'), (20, 'b'), (30, 'c')]);
    }

    /// ns-2's order of simultaneous arrivals (`push_since`): at 100 ns three
    /// frames arrive; the one whose transmission started first (at 2.56 ns)
    /// runs first, and of the two that started at 10.24 ns, the one sent then
    /// onto an idle link before the one queued at 0 behind another frame,
    /// although the queued one was scheduled first.
    #[test]
    fn same_instant_arrivals_go_in_the_order_their_transmissions_started() {
        let (at, early, later) = (SimTime(100_000), SimTime(10 << 8), SimTime(40 << 8));
        let mut q = EventQueue::new();
        q.push(later, 'y');
        q.push_since(at, later, SimTime::ZERO, 'q');
        q.push_since(at, early, early, 'a');
        assert_eq!(q.pop(), Some((later, 'y')));
        q.push_since(at, later, later, 'i');
        q.push(at, 'z');
        let order: Vec<char> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, vec!['a', 'i', 'z', 'q'], "an event scheduled at 10.24 ns sorts with the idle-link frame");
    }

    /// ns-2's and ns-3's order among frames of busy links that start
    /// together: the link whose run of back-to-back frames began last goes
    /// first, whatever order the frames were queued in.
    #[test]
    fn among_frames_that_started_together_the_younger_run_goes_first() {
        let us = |n: u64| SimTime::ZERO + SimDuration::from_micros(n);
        let (at, start) = (us(20), us(12));
        let mut q = EventQueue::new();
        q.push_since(at, start, us(1), "old run");
        q.push_since(at, start, us(4), "young run");
        q.push_since(at, start, us(2), "middle run");
        let order: Vec<&str> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, vec!["young run", "middle run", "old run"]);
    }

    /// ns-2's order when its double-precision times differ: among frames
    /// that started together, the smaller rank goes first, even before a
    /// younger run; equal ranks fall back to the younger run; a rank cannot
    /// move a frame past one whose transmission started a microsecond or more
    /// before it.
    #[test]
    fn ranks_order_frames_that_started_together() {
        let us = |n: u64| SimTime::ZERO + SimDuration::from_micros(n);
        let (at, start) = (us(20), us(12));
        let mut q = EventQueue::new();
        q.push_since_ranked(at, start, us(4), 3, "young run, later in double time");
        q.push_since_ranked(at, start, us(1), -2, "old run, earlier in double time");
        q.push_since_ranked(at, start, us(2), 3, "middle run, later in double time");
        q.push_since_ranked(at, us(10), us(10), RANK_MAX * 4, "started 2 us before the rest");
        let order: Vec<&str> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(
            order,
            vec![
                "started 2 us before the rest",
                "old run, earlier in double time",
                "young run, later in double time",
                "middle run, later in double time"
            ]
        );
    }

    /// The age's code keeps the order of ages, whatever their span.
    #[test]
    fn age_codes_keep_the_order_of_ages() {
        let ages = [0, 1, 2, 3, 1_000, 1_023, 1_024, 1_025, 12_304_000, 12_400_000, 1 << 40, u64::MAX];
        let codes: Vec<u64> = ages.iter().map(|&a| age_code(SimDuration(a))).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        assert!(codes.iter().all(|&c| c <= 0xFFFF));
    }

    /// Engine invariant: events at equal times run in scheduling order.
    #[test]
    fn equal_times_run_in_scheduling_order() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.push(SimTime(u64::from(i % 3)), i);
        }
        let out = drain(&mut q);
        for w in out.windows(2) {
            assert!(w[0].0 < w[1].0 || w[0].1 < w[1].1, "tie broke out of order: {w:?}");
        }
    }

    /// A simulated run against a reference that sorts all pending events:
    /// events scheduled while the queue runs, at the present instant, in the
    /// bucket being run, across the ring's wrap-around, in the second ring
    /// and beyond it, come out in exactly the reference order, ties
    /// included, whatever the buckets' width.
    #[test]
    fn matches_a_single_sorted_queue() {
        for shift in [20, 23] {
            matches_a_single_sorted_queue_with(shift);
        }
    }

    fn matches_a_single_sorted_queue_with(shift: u32) {
        let width = 1 << shift;
        let mut q = EventQueue::with_shift(shift);
        // Pending (time, scheduling index) pairs; the minimum runs next.
        let mut reference = Vec::new();
        let mut scheduled = 0u64;
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut draw = |bound: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % bound
        };
        let mut now = 0;
        for step in 0..40_000 {
            // Busy stretches alternate with quiet ones, in which the ring
            // drains and far events come due.
            let pushes = if step / 2_000 % 2 == 0 { draw(3) } else { u64::from(draw(8) == 0) };
            for _ in 0..pushes {
                let second = SLOTS * SLOT_BUCKETS * width;
                let delay = match draw(8) {
                    0 => 0,
                    1 => draw(width),
                    2 => draw(40 * width),
                    3 => draw(2 * BUCKETS * width),
                    4 => draw(second),
                    5 => second - 2 * SLOT_BUCKETS * width + draw(4 * SLOT_BUCKETS * width),
                    6 => second + draw(second),
                    _ => BUCKETS * width - width + draw(2 * width),
                };
                q.push(SimTime(now + delay), scheduled);
                reference.push((now + delay, scheduled));
                scheduled += 1;
            }
            let Some(next) = reference.iter().copied().min() else { continue };
            reference.retain(|&e| e != next);
            assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some(next), "shift {shift}, step {step}");
            now = next.0;
        }
        assert_eq!(q.len(), reference.len());
        reference.sort_unstable();
        assert_eq!(drain(&mut q), reference);
        assert!(q.is_empty());
    }

    /// Buckets two thirds of the fastest link's full frame: 8.4 µs at 1 Gbps
    /// (a 1,538-byte frame in 12.3 µs), 1 µs at 10 Gbps.
    #[test]
    fn buckets_follow_the_fastest_links_frame_time() {
        let frame_ps = |gbps: u64| SimDuration(1538 * 8 * 1000 / gbps);
        assert_eq!(EventQueue::<()>::for_frame_time(frame_ps(1)).shift, 23);
        assert_eq!(EventQueue::<()>::for_frame_time(frame_ps(10)).shift, 20);
        assert_eq!(EventQueue::<()>::for_frame_time(frame_ps(100)).shift, 16);
    }

    /// An event scheduled beyond the ring runs before an event scheduled
    /// later but after it, once the ring has come round to both.
    #[test]
    fn far_event_runs_before_a_later_ring_event() {
        let ring = BUCKETS * BUCKET_PS;
        let mut q = EventQueue::new();
        q.push(SimTime(0), 'a');
        q.push(SimTime(ring + ring / 2), 'f');
        assert_eq!(q.pop(), Some((SimTime(0), 'a')));
        q.push(SimTime(ring - ring / 5), 'x');
        assert_eq!(q.pop(), Some((SimTime(ring - ring / 5), 'x')));
        q.push(SimTime(ring + 6 * ring / 10), 'r');
        assert_eq!(drain(&mut q), vec![(ring + ring / 2, 'f'), (ring + 6 * ring / 10, 'r')]);
    }

    /// However long the ring runs before they come due, events beyond the
    /// second ring move to the first once, when they do. (A first version
    /// parked them in its last slot and filed them again each time round:
    /// the same order, and 4.7 times the instructions at 2,048 servers,
    /// where timers wait 100 s ahead for hours of simulated time.)
    #[test]
    fn events_beyond_the_second_ring_move_once() {
        let width = 1 << 10;
        let reach = SLOTS * SLOT_BUCKETS * width;
        let mut q = EventQueue::with_shift(10);
        for i in 0..100 {
            q.push(SimTime(5 * reach + i), u64::MAX - i);
        }
        // One event a bucket (counting up from 0; the far ones count down
        // from u64::MAX) keeps the ring busy until they come due.
        q.push(SimTime(0), 0);
        let mut last = 0;
        while let Some((t, e)) = q.pop() {
            if t.0 < 5 * reach && e < 1 << 32 {
                q.push(SimTime(t.0 + width), e + 1);
            }
            assert!(t.0 >= last);
            last = t.0;
        }
        assert_eq!(q.moved, 100);
    }

    /// `pop_until` leaves later events in place, and events scheduled after
    /// it stopped still run in order.
    #[test]
    fn pop_until_stops_at_end() {
        let far = 3 * BUCKETS * BUCKET_PS;
        let mut q = EventQueue::new();
        for t in [10, 20 * BUCKET_PS, far] {
            q.push(SimTime(t), t);
        }
        assert_eq!(q.pop_until(SimTime(10)), Some((SimTime(10), 10)));
        assert_eq!(q.pop_until(SimTime(10)), None);
        assert_eq!(q.len(), 2);
        q.push(SimTime(11), 11);
        assert_eq!(drain(&mut q), vec![(11, 11), (20 * BUCKET_PS, 20 * BUCKET_PS), (far, far)]);
    }

    /// A hop taken ahead orders its event as if the hop had run as an
    /// event at its instant and scheduled it then; its ticket tells when
    /// that event would have run.
    #[test]
    fn an_event_after_a_hop_goes_where_the_hop_would_have_put_it() {
        let us = |n: u64| SimTime::ZERO + SimDuration::from_micros(n);
        let mut q = EventQueue::new();
        let hop = q.push_after_hop(us(10), us(20), 'a');
        q.push(us(20), 'b');
        q.push(us(15), 'c');
        assert!(!q.ran(hop));
        assert_eq!(q.pop(), Some((us(15), 'c')));
        assert!(q.ran(hop), "the hop at 10 us came before the event at 15 us");
        q.push(us(20), 'd');
        // 'b' became certain at 0, 'a' at the hop (10 us), 'd' at 15 us.
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ['b', 'a', 'd']);
        let late = q.ticket(us(30));
        assert!(!q.ran(late));
    }
}
