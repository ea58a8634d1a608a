//! The ideal completion time of a flow: the flow alone on the empty fabric,
//! sent by the run's own TCP settings. Its slowdown is its completion time
//! over this.
//!
//! **Models:** the sender writes all `bytes` at the flow's arrival and sends
//! segments of `segment_payload` bytes while the bytes in flight fit
//! `min(cwnd, rcv_wnd)`; cwnd starts at `init_cwnd` segments and grows in
//! slow start by `min(bytes acked, MSS)` per ACK (RFC 5681 (3.1)), never
//! leaving it (no loss on an empty fabric). Each segment crosses every hop
//! of its path store-and-forward: it leaves a port at `max(its arrival,
//! the port's previous departure) + its frame's serialization`, reaches the
//! next node one propagation later, and the receiving host adds its share of
//! `link.rtt`. The receiver ACKs every segment (`tcp.delayed_ack = "off"`)
//! or, otherwise, once more than one MSS is unacknowledged and else after the
//! delayed-ACK timeout (RFC 1122 (4.2.3.2), as `tcp::delayed_ack` does); an
//! ACK is a minimum frame that takes the reverse path's one-way time. The
//! flow completes when its last byte reaches the receiver, or (`end` acked)
//! when the ACK of that byte reaches the sender.
//! **Deliberately different:** `linux` and `adaptive` delayed ACKs are taken
//! as the fixed rule with their minimum timeout; pacing, HyStart (CUBIC) and
//! a receive window that grows (`tcp.rcv_window = "linux"`) are not followed:
//! with those the engine's lone flow may differ from this.
//! **Not modelled:** the handshake (the engine establishes connections at
//! their arrival without one).

use crate::time::{BitRate, SimDuration, SimTime};
use crate::workload::traffic::FctEnd;
use std::collections::VecDeque;

/// The path of a flow on the empty fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdealPath {
    /// Each hop's rate and propagation, the sender's NIC first.
    pub hops: Vec<(BitRate, SimDuration)>,
    /// What the receiving end adds to a frame's arrival (its share of `link.rtt`, a wide-area delay).
    pub rx_extra: SimDuration,
    /// One-way time of an ACK back to the sender.
    pub ack: SimDuration,
}

/// The sender's and receiver's settings that shape a lone flow.
#[derive(Clone, Copy, Debug)]
pub struct IdealStack {
    /// Link bytes of a frame carrying this many TCP bytes (`net::frame::wire_bytes`).
    pub wire: fn(u32) -> u64,
    /// Payload bytes per full segment.
    pub payload: u32,
    /// TCP option bytes on every data segment.
    pub option_bytes: u32,
    /// Sender's maximum segment size (cwnd counts in it).
    pub mss: u64,
    /// Initial window, segments.
    pub init_cwnd: u32,
    /// The receiver's advertised window, bytes.
    pub rcv_wnd: u64,
    /// The delayed-ACK timeout, or `None` to ACK every segment.
    pub delack: Option<SimDuration>,
    /// Where the completion time ends.
    pub end: FctEnd,
}

/// The time from the flow's arrival until its last byte is at the receiver
/// (or, `end` acked, its ACK at the sender).
pub fn ideal_fct(path: &IdealPath, stack: &IdealStack, bytes: u64) -> SimDuration {
    let payload = u64::from(stack.payload.max(1));
    let mut busy = vec![SimTime::ZERO; path.hops.len()];
    let (mut cwnd, mut snd_una, mut snd_nxt) = (u64::from(stack.init_cwnd) * stack.mss, 0u64, 0u64);
    let (mut rcv_nxt, mut rcv_wup, mut deadline): (u64, u64, Option<SimTime>) = (0, 0, None);
    // Data arrivals at the receiver (time, end) and ACK arrivals at the sender, in order.
    let mut data: VecDeque<(SimTime, u64)> = VecDeque::new();
    let mut acks: VecDeque<(SimTime, u64)> = VecDeque::new();
    let mut send = |now: SimTime, snd_una: u64, snd_nxt: &mut u64, cwnd: u64, data: &mut VecDeque<(SimTime, u64)>| {
        while *snd_nxt < bytes {
            let len = (bytes - *snd_nxt).min(payload);
            if *snd_nxt - snd_una + len > cwnd.min(stack.rcv_wnd) {
                break;
            }
            let wire = (stack.wire)((len + u64::from(stack.option_bytes)) as u32);
            let mut at = now;
            for (h, &(rate, delay)) in path.hops.iter().enumerate() {
                busy[h] = at.max(busy[h]) + rate.tx_time(wire);
                at = busy[h] + delay;
            }
            *snd_nxt += len;
            data.push_back((at + path.rx_extra, *snd_nxt));
        }
    };
    send(SimTime::ZERO, snd_una, &mut snd_nxt, cwnd, &mut data);
    loop {
        let next_data = data.front().map(|d| d.0);
        let next_ack = acks.front().map(|a| a.0);
        let first =
            [next_data, next_ack, deadline].into_iter().flatten().min().expect("a flow in progress has an event");
        if next_data == Some(first) {
            let (at, end) = data.pop_front().expect("a data arrival");
            rcv_nxt = end;
            if rcv_nxt == bytes && stack.end == FctEnd::Delivered {
                return at.since(SimTime::ZERO);
            }
            match stack.delack {
                Some(timeout) if rcv_nxt - rcv_wup <= stack.mss => {
                    deadline.get_or_insert(at + timeout);
                }
                _ => {
                    acks.push_back((at + path.ack, rcv_nxt));
                    (rcv_wup, deadline) = (rcv_nxt, None);
                }
            }
        } else if next_ack == Some(first) {
            let (at, ack) = acks.pop_front().expect("an ACK arrival");
            if ack == bytes {
                return at.since(SimTime::ZERO);
            }
            if ack > snd_una {
                // RFC 5681 (3.1): "cwnd += min (N, SMSS)" (2) during slow start.
                cwnd += (ack - snd_una).min(stack.mss);
                snd_una = ack;
            }
            send(at, snd_una, &mut snd_nxt, cwnd, &mut data);
        } else {
            acks.push_back((first + path.ack, rcv_nxt));
            (rcv_wup, deadline) = (rcv_nxt, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame's link bytes: 58 of headers, 64 at least, 20 of preamble and gap.
    fn wire_bytes(payload: u32) -> u64 {
        (u64::from(payload) + 58).max(64) + 20
    }

    fn star() -> IdealPath {
        let hop = (BitRate::gbps(1), SimDuration::from_micros(5));
        IdealPath { hops: vec![hop, hop], rx_extra: SimDuration::from_micros(20), ack: SimDuration::from_micros(200) }
    }

    fn stack(delack: Option<SimDuration>) -> IdealStack {
        IdealStack {
            wire: wire_bytes,
            payload: 1460,
            option_bytes: 0,
            mss: 1460,
            init_cwnd: 10,
            rcv_wnd: 1 << 20,
            delack,
            end: FctEnd::Delivered,
        }
    }

    /// One segment: two serializations, two propagations and the receiver's share.
    #[test]
    fn one_segment_crosses_each_hop_store_and_forward() {
        let t = ideal_fct(&star(), &stack(None), 1000);
        let tx = BitRate::gbps(1).tx_time(wire_bytes(1000));
        assert_eq!(t, tx + tx + SimDuration::from_micros(30));
    }

    /// Within the initial window the segments pipeline: the last leaves the
    /// NIC after all ten, then crosses the second hop.
    #[test]
    fn the_initial_window_pipelines_at_line_rate() {
        let t = ideal_fct(&star(), &stack(None), 10 * 1460);
        let tx = BitRate::gbps(1).tx_time(wire_bytes(1460));
        assert_eq!(t, tx.saturating_mul(11) + SimDuration::from_micros(30));
    }

    /// The eleventh segment waits for the first ACK: one round trip after the first segment.
    #[test]
    fn past_the_initial_window_the_ack_clock_paces_the_flow() {
        let t = ideal_fct(&star(), &stack(None), 11 * 1460);
        let tx = BitRate::gbps(1).tx_time(wire_bytes(1460));
        let first_ack = tx + tx + SimDuration::from_micros(30) + SimDuration::from_micros(200);
        assert_eq!(t, first_ack + tx + tx + SimDuration::from_micros(30));
    }

    /// With delayed ACKs an odd segment alone waits for the timeout before its ACK opens the window.
    #[test]
    fn a_lone_unacknowledged_segment_waits_for_the_delayed_ack_timeout() {
        let one = IdealStack { init_cwnd: 1, ..stack(Some(SimDuration::from_millis(40))) };
        let t = ideal_fct(&star(), &one, 2 * 1460);
        assert!(t > SimDuration::from_millis(40) && t < SimDuration::from_millis(41), "{t:?}");
    }

    /// Counted to the sender's ACK, one segment takes its crossing and the ACK's way back.
    #[test]
    fn ending_at_the_ack_adds_the_last_acks_way_back() {
        let acked = IdealStack { end: FctEnd::Acked, ..stack(None) };
        for bytes in [1000, 10 * 1460, 11 * 1460] {
            let delivered = ideal_fct(&star(), &stack(None), bytes);
            assert_eq!(ideal_fct(&star(), &acked, bytes), delivered + SimDuration::from_micros(200), "{bytes}");
        }
    }

    /// A last segment that waits for the delayed-ACK timeout is acknowledged only then.
    #[test]
    fn ending_at_the_ack_waits_for_a_delayed_last_ack() {
        let one = IdealStack { init_cwnd: 1, end: FctEnd::Acked, ..stack(Some(SimDuration::from_millis(40))) };
        let t = ideal_fct(&star(), &one, 1000);
        let tx = BitRate::gbps(1).tx_time(wire_bytes(1000));
        assert_eq!(
            t,
            tx + tx + SimDuration::from_micros(30) + SimDuration::from_millis(40) + SimDuration::from_micros(200)
        );
    }
}
