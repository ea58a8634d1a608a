//! Several clients reading at once: which hosts each connection joins.
//!
//! **Models:** `workload.clients` clients, each running its own
//! barrier-synchronized block loop (`sync_read`) from time zero, as cross
//! traffic to one another. Each client reads every block from `servers`
//! servers.
//! With `shared` server sets every client reads from the same `servers`
//! servers: a server holds one connection per client and answers each
//! client's requests independently, so its uplink carries every client's
//! responses. With `disjoint` sets client `c` reads from its own group of
//! `servers` servers, `clients × servers` server hosts in all.
//! Hosts are numbered clients first (client `c` is host `c`), then the
//! server hosts (server `i` is host `clients + i`), then background hosts;
//! connections client by client: connection `c · servers + j` joins client
//! `c` and its `j`-th server. With one client this is the numbering of the
//! single-client engine (client host 0, server `i` host `i + 1`,
//! connection `i` to server `i`).
//! **Deliberately different:** all clients start their first block at time
//! zero; nothing but the network (and their own seeded request orders)
//! desynchronizes them.
//! **Not modelled:** clients that read from partly overlapping server sets,
//! clients that start at different times or with different workloads.

use crate::settings::Choice;

/// Whether clients read from the same servers or from servers of their own.
///
/// Default value: `shared`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerSets {
    /// Every client reads from the same `servers` servers.
    #[default]
    Shared,
    /// Client `c` reads from servers `c · servers .. (c + 1) · servers`.
    Disjoint,
}

/// How server sets are written: `"shared"` or `"disjoint"`.
pub const SERVER_SETS: Choice<ServerSets> =
    Choice(&[("shared", ServerSets::Shared), ("disjoint", ServerSets::Disjoint)]);

/// Most clients one run may have.
pub const MAX_CLIENTS: u32 = 10_000;

/// Who reads from whom: clients, servers per client and how the server sets relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Clients reading at once.
    pub clients: u32,
    /// Servers each client reads a block from.
    pub servers: u32,
    /// Shared or disjoint server sets.
    pub sets: ServerSets,
}

impl Layout {
    /// One client reading from `servers` servers: the single-client engine.
    pub const fn one_client(servers: u32) -> Self {
        Layout { clients: 1, servers, sets: ServerSets::Shared }
    }

    /// Reading connections: one per (client, server it reads from).
    pub fn connections(&self) -> u32 {
        self.clients * self.servers
    }

    /// Server hosts: `servers` when shared, `clients × servers` when disjoint.
    pub fn server_hosts(&self) -> u32 {
        match self.sets {
            ServerSets::Shared => self.servers,
            ServerSets::Disjoint => self.clients * self.servers,
        }
    }

    /// Hosts the reads use: the clients and the server hosts (background hosts follow).
    pub fn hosts(&self) -> u32 {
        self.clients + self.server_hosts()
    }

    /// The client reading over connection `flow`.
    #[inline]
    pub fn client_of(&self, flow: u32) -> u32 {
        flow / self.servers
    }

    /// The server (0-based, among the server hosts) answering on connection `flow`.
    #[inline]
    pub fn server_of(&self, flow: u32) -> u32 {
        match self.sets {
            ServerSets::Shared => flow % self.servers,
            ServerSets::Disjoint => flow,
        }
    }

    /// Host index of server `i`.
    #[inline]
    pub fn server_host(&self, i: u32) -> u32 {
        self.clients + i
    }

    /// The (client host, server host) of reading connection `flow`.
    #[inline]
    pub fn flow_hosts(&self, flow: u32) -> (u32, u32) {
        (self.client_of(flow), self.server_host(self.server_of(flow)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One client keeps the single-client numbering.
    #[test]
    fn one_client_numbers_hosts_as_before() {
        let l = Layout::one_client(3);
        assert_eq!((0..3).map(|f| l.flow_hosts(f)).collect::<Vec<_>>(), vec![(0, 1), (0, 2), (0, 3)]);
        assert_eq!(l.hosts(), 4);
    }

    /// Shared sets: every client's j-th connection goes to server j.
    #[test]
    fn shared_sets_reuse_the_servers() {
        let l = Layout { clients: 2, servers: 3, sets: ServerSets::Shared };
        assert_eq!(l.connections(), 6);
        assert_eq!(l.flow_hosts(1), (0, 3));
        assert_eq!(l.flow_hosts(4), (1, 3));
        assert_eq!(l.hosts(), 5);
    }

    /// Disjoint sets: client c owns servers c·servers .. (c+1)·servers.
    #[test]
    fn disjoint_sets_give_each_client_its_own_group() {
        let l = Layout { clients: 2, servers: 3, sets: ServerSets::Disjoint };
        assert_eq!(l.flow_hosts(1), (0, 3));
        assert_eq!(l.flow_hosts(4), (1, 6));
        assert_eq!(l.server_hosts(), 6);
        assert_eq!(l.hosts(), 8);
    }
}
