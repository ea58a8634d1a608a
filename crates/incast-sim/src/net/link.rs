//! One direction of a point-to-point link.
//!
//! **Models:** a serializer at a fixed line rate (one frame at a time, back to
//! back, with preamble and inter-frame gap counted in the frame's wire bytes)
//! followed by a fixed propagation delay.
//! Ethernet PAUSE stops a link from outside (`net::pause`). Under
//! `link.token_bucket` the serializer gives way to a token bucket in front of
//! a line that takes no time (`net::token_bucket`).
//! Frames reaching a node at the same picosecond are taken in the order
//! `LinkConfig::arrival_order` says (`event` explains both).
//! **Not modelled:** bit errors, rate changes.

use super::token_bucket::TokenBucket;
use crate::settings::{Choice, Count, Duration, OrWord, Probability, Rate, Size};
use crate::time::{BitRate, ByteTime, Bytes, SimDuration, SimTime};

crate::settings! {
    /// Every host link (server↔switch and client↔switch), both directions.
    ///
    /// Default values: `rate` 1 Gbps and `rtt` 100 µs (FAST08 Table 1);
    /// `propagation` 50 ns, ten metres of cable (light covers about 0.2 m per
    /// ns in copper or fibre), so that nearly all of the round trip is spent
    /// in the hosts, as on a real cluster (CMU09 §4: 100 µs RTTs through one
    /// switch); no loss; `arrival_order` `queued`, the order the engine always
    /// had; `tx_queue` off (no limit at a host's NIC), as the engine always had;
    /// no `host_jitter` and no `skew`, as the engine always had; `token_bucket`
    /// off, every port a serializer, as the engine always had.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct LinkConfig {
        /// Line rate of every link, both directions.
        "rate" rate: BitRate = BitRate::gbps(1), Rate;
        /// Round trip between a server and the client on one switch, without
        /// serialization or queueing: four links' propagation plus the hosts'
        /// stacks and NICs, which take the rest (rtt − 4·propagation), half of
        /// it at each host.
        "rtt" rtt: SimDuration = SimDuration::from_micros(100), Duration::ANY;
        /// One-way propagation delay of every link (the cable); at most rtt / 4
        /// (the default yields to a shorter round trip). Only this part of the
        /// round trip holds frames on the wire, where PAUSE and PFC must leave
        /// headroom for them.
        "propagation" propagation: SimDuration = SimDuration::from_nanos(50), Duration::ANY;
        /// Probability that any link loses a frame on the wire (random loss,
        /// each direction of each link from its own seeded substream), kept in
        /// parts per billion; 0 for none.
        "loss" loss_ppb: u32 = 0, Probability;
        /// Frames reaching a node at the same picosecond: "queued" (in the order
        /// they were queued for their links) or "wire" (in the order their
        /// transmissions started, then the younger run of back-to-back frames
        /// first, a frame sent onto an idle link before one that waited, as
        /// ns-2 and ns-3 order them when their times are equal), or "ns2"
        /// (first by each arrival's time as ns-2 computes it in
        /// double-precision seconds, whose rounding tells apart arrivals that
        /// exact time makes simultaneous; then as "wire"; and a frame reaching
        /// a port at the instant the frame in service there ends finds it
        /// still held unless that end is earlier in ns-2's clock), or "ns3"
        /// (as "wire", and a frame reaching a port at the instant the frame in
        /// service there ends always finds it still held, as ns-3 runs them).
        "arrival_order" arrival_order: ArrivalOrder = ArrivalOrder::Queued,
            Choice(&[
                ("queued", ArrivalOrder::Queued),
                ("wire", ArrivalOrder::Wire),
                ("ns2", ArrivalOrder::Ns2),
                ("ns3", ArrivalOrder::Ns3),
            ]);
        /// Frames a host's NIC queue holds before the host's TCP stops handing
        /// it segments: a connection waits while the queue is full and sends
        /// again as a frame leaves, so a large window waits in the socket, not
        /// at the NIC (Linux's txqueuelen, 1000 frames since 2.6 and 100
        /// before; TCP Small Queues hold less). "off": no limit, a sender puts
        /// all its window in its NIC's queue at once.
        "tx_queue" tx_queue: Option<u32> = None,
            OrWord { word: "off", spec: Count::new(1, u32::MAX as u64, "frames"), what: "a count" };
        /// Mean of the random time each host's stack adds to every frame it
        /// receives, beyond its share of rtt: exponential draws, a host's
        /// frames kept in order (`net::host_jitter`; the testbed's hosts
        /// measure 20us to 90us, by run). 0: none, every host answers in a fixed time.
        "host_jitter" host_jitter: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// How much longer each server's cable is than the one before it:
        /// server i's link has `propagation` + i·skew both ways. With equal
        /// cables the frames of servers sending in step reach the switch at
        /// the same picosecond and `arrival_order` alone decides which one
        /// the full port drops; 1ps breaks those ties by server number, a
        /// metre of cable is about 5ns. Star and tree only (a graph's links
        /// give their own delays). 0: every cable is `propagation` long.
        "skew" skew: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// Every port sends as a token bucket of this depth (bytes on the wire:
        /// frames with their preamble, FCS and gap) filling at its link's rate,
        /// in front of a line that takes no time, as Linux's `tbf` in front of a
        /// veth (`net::token_bucket`; the testbed's ports, whose depth is one
        /// frame and 100 µs of line): a frame goes as soon as the bucket holds
        /// its bytes, so an unqueued frame crosses with no serialization time
        /// and frames after an idle moment leave back to back. At least one
        /// full frame. "off": every port serializes each frame at its line rate.
        "token_bucket" token_bucket: Option<Bytes> = None,
            OrWord { word: "off", spec: Size { min: 1 }, what: "a size" };
    }
}

impl LinkConfig {
    /// The propagation every link gets: `propagation`, at most rtt / 4.
    pub fn cable(&self) -> SimDuration {
        self.propagation.min(self.rtt / 4)
    }

    /// The share of the round trip one host's stack and NIC take, both
    /// directions together: (rtt − 4·cable) / 2, charged where the host
    /// receives (`net::topology`).
    pub fn host_delay(&self) -> SimDuration {
        SimDuration((self.rtt.as_ps() - 4 * self.cable().as_ps()) / 2)
    }
}

/// The order of frames that reach a node at the same instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ArrivalOrder {
    /// The order they were handed to their links' queues.
    #[default]
    Queued,
    /// The order their transmissions started; among those that started
    /// together, the one whose link began its run of back-to-back frames
    /// last first (a frame sent onto an idle link before all).
    Wire,
    /// First by the arrival time ns-2's double-precision clock would give
    /// (`sim::double_clock`), then as [`ArrivalOrder::Wire`]; an arrival at
    /// the instant a port's frame in service ends goes before that departure
    /// unless the end is earlier in that clock.
    Ns2,
    /// As [`ArrivalOrder::Wire`], and an arrival at the instant a port's frame
    /// in service ends goes before that departure, so the ending frame counts
    /// against it. ns-3 schedules an arrival when its hop's transmission
    /// starts, one frame time and a propagation delay ahead, and the end of
    /// the frame in service when that frame started, one frame time ahead;
    /// its scheduler runs the events of one instant in the order they were
    /// scheduled (`DefaultSimulatorImpl`, `MapScheduler`). A server sending
    /// back to back into a busy port at line rate reaches it at the very
    /// instants its frames leave: without this rule that server never finds
    /// the full port full, and the others take all of its drops.
    Ns3,
}

/// A serializer followed by a propagation delay.
#[derive(Clone, Debug)]
pub struct Link {
    byte_time: ByteTime,
    delay: SimDuration,
    busy_until: SimTime,
    /// When the latest frame's transmission started.
    last_start: SimTime,
    /// When the link's current run of back-to-back frames began.
    run_start: SimTime,
    /// The token bucket frames wait in instead of serializing (`link.token_bucket`).
    bucket: Option<TokenBucket>,
}

impl Link {
    /// An idle link.
    pub fn new(rate: BitRate, delay: SimDuration) -> Self {
        let idle = SimTime::ZERO;
        Link {
            byte_time: ByteTime::new(rate),
            delay,
            busy_until: idle,
            last_start: idle,
            run_start: idle,
            bucket: None,
        }
    }

    /// Send through a full token bucket `depth` bytes deep from now on,
    /// filling at the line rate (`net::token_bucket`).
    pub fn shape(&mut self, depth: Bytes) {
        self.bucket = Some(TokenBucket::new(self.byte_time.tx_time(depth.get())));
    }

    /// The link sends through a token bucket ([`Link::shape`]).
    pub fn is_shaped(&self) -> bool {
        self.bucket.is_some()
    }

    /// Time a frame of `wire_bytes` takes to leave an idle link: its
    /// serialization, or none through a token bucket, which a full bucket
    /// releases at once.
    pub fn idle_tx_time(&self, wire_bytes: u64) -> SimDuration {
        if self.is_shaped() {
            SimDuration::ZERO
        } else {
            self.byte_time.tx_time(wire_bytes)
        }
    }

    /// [`Link::transmit`], through the token bucket when the link has one: the
    /// frame goes when the bucket releases it (`net::token_bucket`), and its
    /// last bit leaves at that instant, the line behind taking no time.
    pub fn transmit_shaped(&mut self, now: SimTime, wire_bytes: u64) -> SimTime {
        let Some(bucket) = &mut self.bucket else { return self.transmit(now, wire_bytes) };
        let go = bucket.release(now, self.byte_time.tx_time(wire_bytes));
        if now > self.busy_until {
            // Nothing ahead of it: it begins a run, if it waits for tokens too.
            self.run_start = go;
        }
        self.last_start = go;
        self.busy_until = go;
        go
    }

    /// Queue `wire_bytes` for transmission at `now`: the frame starts when the
    /// link is free and its last bit leaves at the returned instant.
    #[inline]
    pub fn transmit(&mut self, now: SimTime, wire_bytes: u64) -> SimTime {
        debug_assert!(self.bucket.is_none(), "a shaped link sends with transmit_shaped");
        let start = now.max(self.busy_until);
        if now > self.busy_until {
            // An idle link: this frame begins a run. One handed over the
            // instant the previous frame ends continues it (ns-2 and ns-3
            // take it from the queue in the event that ends that frame); a
            // new link's first run begins at time zero.
            self.run_start = start;
        }
        self.last_start = start;
        self.busy_until = start + self.byte_time.tx_time(wire_bytes);
        self.busy_until
    }

    /// When the frame given to [`Link::transmit`] last starts onto the wire.
    #[inline]
    pub fn last_start(&self) -> SimTime {
        self.last_start
    }

    /// When the run of back-to-back frames that the frame given to
    /// [`Link::transmit`] belongs to began.
    #[inline]
    pub fn run_start(&self) -> SimTime {
        self.run_start
    }

    /// When the frame given to [`Link::transmit`] last leaves the link.
    #[inline]
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// When a frame whose last bit leaves at `tx_done` reaches the far end.
    #[inline]
    pub fn arrival(&self, tx_done: SimTime) -> SimTime {
        tx_done + self.delay
    }

    /// One-way propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// Line rate.
    pub fn rate(&self) -> BitRate {
        self.byte_time.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Back-to-back frames serialize one after the other, then propagate.
    #[test]
    fn frames_queue_behind_each_other() {
        let mut l = Link::new(BitRate::gbps(1), SimDuration::from_micros(25));
        let d1 = l.transmit(SimTime::ZERO, 1538);
        let d2 = l.transmit(SimTime::ZERO, 1538);
        assert_eq!(d1, SimTime(12_304_000));
        assert_eq!(d2, SimTime(24_608_000));
        assert_eq!(l.arrival(d1), SimTime(12_304_000 + 25_000_000));
        // An idle link starts at once.
        assert_eq!(l.transmit(SimTime(100_000_000), 84), SimTime(100_000_000 + 672_000));
    }

    /// A run of back-to-back frames begins with a frame sent onto an idle
    /// link and goes on while each frame is handed over before, or the
    /// instant, the previous one ends.
    #[test]
    fn a_run_lasts_while_frames_follow_back_to_back() {
        let mut l = Link::new(BitRate::gbps(1), SimDuration::from_micros(25));
        l.transmit(SimTime(1_000), 1538);
        assert_eq!(l.run_start(), SimTime(1_000));
        let end = l.transmit(SimTime(5_000), 1538); // queued behind the first
        assert_eq!((l.last_start(), l.run_start()), (SimTime(1_000 + 12_304_000), SimTime(1_000)));
        l.transmit(end, 1538); // handed over the instant the link frees
        assert_eq!(l.run_start(), SimTime(1_000));
        let later = SimTime(100_000_000);
        l.transmit(later, 84);
        assert_eq!((l.last_start(), l.run_start()), (later, later));
    }

    /// A token-bucket port (`net::token_bucket`) 1538 + 2500 bytes deep at
    /// 200 Mbps: a full frame (61.52 µs of line) and 100 µs more.
    fn tbf_port() -> Link {
        let mut l = Link::new(BitRate::mbps(200), SimDuration::from_micros(25));
        l.shape(Bytes::new(1538 + 2500));
        l
    }

    /// tbf_dequeue: an idle port passes a frame with no serialization time;
    /// it reaches the far end one propagation delay later.
    #[test]
    fn token_bucket_an_idle_port_passes_a_frame_at_once() {
        let mut l = tbf_port();
        let now = SimTime(1_000_000_000);
        let done = l.transmit_shaped(now, 1538);
        assert_eq!(done, now);
        assert_eq!(l.arrival(done), now + SimDuration::from_micros(25));
        assert_eq!(l.idle_tx_time(1538), SimDuration::ZERO);
    }

    /// tbf_dequeue: after an idle moment frames handed over together leave
    /// back to back while the bucket holds them, no more than its depth
    /// (4038 bytes: two full frames), then one frame time (61.52 µs) apart.
    #[test]
    fn token_bucket_a_burst_after_idle_is_at_most_the_depth_then_the_rate() {
        let mut l = tbf_port();
        let now = SimTime(1_000_000_000);
        let out: Vec<SimTime> = (0..6).map(|_| l.transmit_shaped(now, 1538)).collect();
        let frame = SimDuration::from_nanos(61_520);
        // 4038 bytes less two frames leave 962 bytes (38.48 µs) of tokens: the
        // third frame waits for the other 23.04 µs, then each a full frame time.
        let third = now + SimDuration::from_nanos(23_040);
        assert_eq!(&out[..3], &[now, now, third]);
        assert_eq!(out[3], third + frame);
        assert_eq!(out[5], third + frame + frame + frame);
        assert_eq!(l.run_start(), now, "the frames that waited continue the burst's run");
    }

    /// Over a long busy period the bucket passes the link's rate: 10,000 full
    /// frames handed over at once take 10,000 frame times less the depth's.
    #[test]
    fn token_bucket_long_run_throughput_is_the_link_rate() {
        let mut l = tbf_port();
        let now = SimTime(1_000_000_000);
        let last = (0..10_000).map(|_| l.transmit_shaped(now, 1538)).last().unwrap();
        let line = BitRate::mbps(200);
        assert_eq!(last.since(now), line.tx_time(10_000 * 1538) - line.tx_time(1538 + 2500));
        // A steady stream offered at the rate leaves at the rate, no frame kept waiting.
        let mut t = last + SimDuration::from_millis(1);
        for _ in 0..1000 {
            assert_eq!(l.transmit_shaped(t, 1538), t);
            t += line.tx_time(1538);
        }
    }
}
