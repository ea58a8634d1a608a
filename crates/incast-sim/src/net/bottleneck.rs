//! The most a set of senders can deliver to one host along the network's
//! routes: the best goodput a run's figures are measured against.
//!
//! **Models:** routes are chosen by destination (each switch has one next
//! hop per host), so the routes from the senders to one host form a tree
//! rooted at it. On a tree the maximum flow is exact by one pass from the
//! leaves: a sender's NIC carries its line rate, and every port beyond
//! carries the smaller of its line rate and what the ports feeding it
//! carry. The result is the max flow (equal to the min cut) from the
//! senders to the host *along their routes*: the receiver's access link
//! when nothing upstream is slower, a slower trunk or a set of slow server
//! links when one is.
//! **Not modelled:** links shared between several receivers' trees (each
//! client's figure is computed alone, and a run's best is their sum);
//! traffic other than the senders' (background flows).

use super::topology::Network;
use crate::error::SimError;
use std::collections::BTreeMap;

/// One port on the routes: its line rate, how many hops it lies from the
/// receiver, the port it feeds (none for the receiver's own link), and
/// what the ports feeding it carry (none yet: a sender's NIC).
struct Hop {
    rate: u64,
    hops: usize,
    feeds: Option<u32>,
    inflow: Option<u128>,
}

/// The bit/s the hosts `senders` can deliver to host `receiver` together,
/// each along its route; the error names a route that breaks.
pub fn deliverable_bps(net: &Network, receiver: u32, senders: &[u32]) -> Result<u64, SimError> {
    let mut ports: BTreeMap<u32, Hop> = BTreeMap::new();
    for &sender in senders {
        let path = net.path(sender, receiver)?;
        for (i, port) in path.iter().enumerate() {
            let feeds = path.get(i + 1).map(|p| p.0);
            let rate = net.port(*port).link.rate().as_bps();
            ports.entry(port.0).or_insert(Hop { rate, hops: path.len() - 1 - i, feeds, inflow: None });
        }
    }
    // Farthest from the receiver first: every port's inflow is whole before it is read.
    let mut order: Vec<u32> = ports.keys().copied().collect();
    order.sort_by_key(|p| std::cmp::Reverse(ports[p].hops));
    let mut total = 0u128;
    for p in order {
        let hop = &ports[&p];
        let carried = hop.inflow.map_or(u128::from(hop.rate), |f| f.min(u128::from(hop.rate)));
        // Every port a route crosses is in `ports`, the one it feeds too.
        match hop.feeds.and_then(|next| ports.get_mut(&next)) {
            Some(next) => next.inflow = Some(next.inflow.unwrap_or(0) + carried),
            None => total += carried,
        }
    }
    Ok(u64::try_from(total).unwrap_or(u64::MAX))
}
