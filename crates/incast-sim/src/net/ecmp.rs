//! Equal-cost multipath forwarding on hierarchical addresses.
//!
//! **Models:** a switch of a fat tree or leaf-spine (`net::clos`) holds one
//! entry per neighbour: a frame whose destination lies below the switch's
//! prefix goes down the port toward the child its next address digit
//! names; any other frame goes up over one of the switch's uplinks, all of
//! equal cost. Per flow, the uplink is picked by hash-threshold (RFC 2992
//! §2): a seeded 64-bit hash of the frame's 5-tuple (source and destination
//! host, source and destination port, protocol) is split into as many equal
//! regions as there are uplinks, and each switch salts the hash with a
//! number of its own so that switches in different tiers do not pick
//! alike (hash polarization). Per packet (spraying), each switch draws the
//! uplink from its own seeded substream for every frame. A table has as many
//! entries as the switch has ports, whatever the number of hosts or flows.
//! A connection's end that opens it (the client end) uses ephemeral port
//! `32768 + flow mod 28232` (Linux's default `ip_local_port_range`, 32768
//! to 60999), the other end port [`SERVER_PORT`].
//! **Deliberately different:** the hash is a 64-bit mix (splitmix64's
//! finalizer), not a switch ASIC's CRC; it spreads as a uniform draw does.
//! **Not modelled:** weighted ECMP, flowlet switching, adaptive routing,
//! link failures and the tables' reconvergence.

use super::clos::{Address, Spreading};
use super::PortId;
use crate::rng::Rng;

/// The port every connection's server end listens on.
pub const SERVER_PORT: u16 = 5001;

/// IP protocol numbers (RFC 790): TCP.
pub const TCP: u8 = 6;
/// IP protocol numbers (RFC 790): UDP.
pub const UDP: u8 = 17;

/// A frame's 5-tuple, what a switch hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FiveTuple {
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol.
    pub proto: u8,
}

impl FiveTuple {
    /// The 5-tuple of TCP connection `flow` from host `src` to host `dst`;
    /// `from_client` when `src` is the end that opened the connection.
    pub fn tcp(flow: u32, src: u32, dst: u32, from_client: bool) -> Self {
        let ephemeral = 32768 + (flow % 28232) as u16;
        let (sport, dport) = if from_client { (ephemeral, SERVER_PORT) } else { (SERVER_PORT, ephemeral) };
        FiveTuple { src, dst, sport, dport, proto: TCP }
    }

    /// The hash of this tuple under `seed`: what every switch's choice starts from.
    pub fn key(&self, seed: u64) -> u64 {
        let hosts = (u64::from(self.src) << 32) | u64::from(self.dst);
        let ports = (u64::from(self.sport) << 24) | (u64::from(self.dport) << 8) | u64::from(self.proto);
        mix(mix(seed ^ mix(hosts)) ^ ports)
    }
}

/// splitmix64's finalizer: every input bit moves every output bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// RFC 2992 §2 (hash-threshold): "the region ... is determined by the
/// hash": the 64-bit space cut into `n` equal regions.
#[inline]
fn region(hash: u64, n: usize) -> usize {
    ((u128::from(hash) * n as u128) >> 64) as usize
}

/// One switch's forwarding table.
#[derive(Clone, Debug)]
pub struct EcmpTable {
    /// The addresses below the switch start with this.
    prefix: Address,
    /// `down[d]`: the port toward the child whose digit is `d`.
    down: Vec<PortId>,
    /// The equal-cost ports up.
    up: Vec<PortId>,
    /// This switch's salt of the flow hash.
    salt: u64,
    /// Per-packet spraying: this switch's draws.
    spray: Option<Rng>,
}

impl EcmpTable {
    /// The table of switch `name` (its substreams' name) with address
    /// `prefix`, its neighbours' addresses and the ports toward them, under
    /// `seed`.
    pub fn new(
        prefix: Address,
        neighbours: impl IntoIterator<Item = (Address, PortId)>,
        spreading: Spreading,
        seed: u64,
        name: &str,
    ) -> Self {
        let mut down = Vec::new();
        let mut up = Vec::new();
        for (a, port) in neighbours {
            if prefix.covers(&a) {
                let d = usize::from(a.digit(prefix.len()));
                if d >= down.len() {
                    down.resize(d + 1, PortId(u32::MAX));
                }
                down[d] = port;
            } else if a.len() < prefix.len() {
                up.push(port);
            }
        }
        let salt = Rng::substream(seed, &format!("ecmp/{name}")).next_u64();
        let spray = (spreading == Spreading::Packet).then(|| Rng::substream(seed, &format!("spray/{name}")));
        EcmpTable { prefix, down, up, salt, spray }
    }

    /// The port toward host address `dst` for a flow of hash `key`, by the
    /// hash alone (what per-flow spreading does; a sprayed frame may take another uplink).
    #[inline]
    pub fn route(&self, dst: &Address, key: u64) -> PortId {
        if self.prefix.covers(dst) {
            return self.down[usize::from(dst.digit(self.prefix.len()))];
        }
        self.up[region(mix(key ^ self.salt), self.up.len())]
    }

    /// The port this frame, toward `dst` with flow hash `key`, takes.
    #[inline(always)]
    pub fn next_hop(&mut self, dst: &Address, key: u64) -> PortId {
        if self.prefix.covers(dst) {
            return self.down[usize::from(dst.digit(self.prefix.len()))];
        }
        let up = match &mut self.spray {
            None => region(mix(key ^ self.salt), self.up.len()),
            Some(rng) => rng.below(self.up.len() as u64) as usize,
        };
        self.up[up]
    }

    /// Entries the table holds: one per port down, one per port up.
    pub fn entries(&self) -> usize {
        self.down.len() + self.up.len()
    }

    /// The equal-cost ports up.
    pub fn uplinks(&self) -> &[PortId] {
        &self.up
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(spreading: Spreading) -> EcmpTable {
        // An edge switch (pod 1, edge 0) of a k = 4 fat tree: hosts (1,0,0) and
        // (1,0,1) on ports 0 and 1, aggregation switches (1) on ports 2 and 3.
        let neighbours = [
            (Address::new(&[1, 0, 0]), PortId(0)),
            (Address::new(&[1, 0, 1]), PortId(1)),
            (Address::new(&[1]), PortId(2)),
            (Address::new(&[1]), PortId(3)),
        ];
        EcmpTable::new(Address::new(&[1, 0]), neighbours, spreading, 7, "pod1.edge0")
    }

    #[test]
    fn a_host_below_goes_down_and_the_rest_goes_up() {
        let t = edge(Spreading::Flow);
        assert_eq!(t.entries(), 4);
        assert_eq!(t.route(&Address::new(&[1, 0, 1]), 99), PortId(1));
        let up = t.route(&Address::new(&[2, 1, 0]), 99);
        assert!(up == PortId(2) || up == PortId(3));
        assert_eq!(t.route(&Address::new(&[1, 1, 0]), 99), up, "one flow keeps one uplink");
    }

    /// A flow's frames all take one uplink; spraying spreads one flow's frames over both.
    #[test]
    fn per_flow_keeps_a_path_and_spraying_spreads_one_flow() {
        let dst = Address::new(&[3, 0, 0]);
        let mut flow = edge(Spreading::Flow);
        let first = flow.next_hop(&dst, 5);
        assert!((0..100).all(|_| flow.next_hop(&dst, 5) == first));
        let mut spray = edge(Spreading::Packet);
        let twos = (0..1000).filter(|_| spray.next_hop(&dst, 5) == PortId(2)).count();
        assert!((400..600).contains(&twos), "{twos} of 1000 frames on port 2");
    }

    #[test]
    fn the_two_directions_of_a_connection_hash_apart() {
        let there = FiveTuple::tcp(3, 0, 9, true);
        let back = FiveTuple::tcp(3, 9, 0, false);
        assert_eq!((there.sport, there.dport), (32771, SERVER_PORT));
        assert_eq!((back.sport, back.dport), (SERVER_PORT, 32771));
        assert_ne!(there.key(1), back.key(1));
        assert_ne!(there.key(1), there.key(2), "the seed changes every choice");
    }

    #[test]
    fn hash_threshold_cuts_the_hash_space_into_equal_regions() {
        assert_eq!(region(0, 3), 0);
        assert_eq!(region(u64::MAX / 3, 3), 0);
        assert_eq!(region(u64::MAX / 3 + 1, 3), 1);
        assert_eq!(region(u64::MAX, 3), 2);
    }
}
