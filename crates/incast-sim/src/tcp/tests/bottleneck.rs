//! A sans-IO path for the rate tests: one sender and one receiver, the
//! sender's segments serialized by a bottleneck of a given rate, each
//! direction a fixed one-way delay, no loss.

use super::*;

/// Run `tx`'s transfer of `bytes` to `rx` through a bottleneck serving
/// `rate` bytes a second, `one_way` from each end, until `rx` has them all;
/// `sent` sees each data segment as it reaches the bottleneck, with the
/// bytes queued ahead of it, and `tx` after every event.
pub(super) fn transfer(
    tx: &mut Endpoint,
    rx: &mut Endpoint,
    bytes: u64,
    rate: u64,
    one_way: SimDuration,
    mut sent: impl FnMut(SimTime, &Endpoint, u64),
) {
    // Events: (time, to receiver?, segment); the bottleneck's queue drains at `rate`.
    let mut wire: Vec<(SimTime, bool, Segment)> = Vec::new();
    let (mut now, mut link_free) = (SimTime::ZERO, SimTime::ZERO);
    while rx.delivered() < bytes {
        while let Some(s) = tx.poll_transmit(now) {
            let queued = u128::from(link_free.max(now).since(now).as_ps()) * u128::from(rate) / 1_000_000_000_000;
            if s.len > 0 {
                sent(now, tx, queued as u64);
            }
            let serialization = SimDuration(u64::from(s.len) * 1_000_000_000_000 / rate);
            link_free = link_free.max(now) + serialization;
            wire.push((link_free + one_way, true, s));
        }
        while let Some(s) = rx.poll_transmit(now) {
            wire.push((now + one_way, false, s));
        }
        let next_arrival = wire.iter().map(|w| w.0).min();
        let (pick, at) = match (next_arrival, tx.poll_timeout()) {
            (Some(a), Some(d)) if d < a => (None, d),
            (Some(a), _) => (wire.iter().position(|w| w.0 == a), a),
            (None, Some(d)) => (None, d),
            (None, None) => panic!("the flow stalled at {now}"),
        };
        now = at;
        match pick {
            Some(i) => {
                let (_, to_rx, seg) = wire.swap_remove(i);
                if to_rx {
                    rx.on_segment(now, &seg);
                } else {
                    tx.on_segment(now, &seg);
                }
            }
            None => {
                tx.on_timer(now);
            }
        }
    }
}
