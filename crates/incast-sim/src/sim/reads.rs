//! The engine's side of the synchronized reads (`workload::sync_read`):
//! the application's state, the blocks it has completed and the run's
//! `blocks` stop condition.
//!
//! **Models:** every client starts its first block at time zero; a server
//! writes a response whose turnaround has elapsed; with several clients the
//! `blocks` limit waits for the slowest one, the others reading on. Every
//! retransmission timeout of a reading connection counts toward the current
//! block's unluckiest flow (GIP §III); a completed block also adds its
//! unluckiest server's timeouts (all, FLoss-TOs, LAck-TOs) to the run's
//! [`BlockTimeouts`], and counts as timed out (SIGCOMM09 §2.2) if either end
//! of one of its connections timed out during it.
//! **Deliberately different:** see `workload::sync_read`.
//! **Not modelled:** see `workload::sync_read`.

use crate::scenario::Scenario;
use crate::stats::{BlockRecord, BlockTimeouts, ClientStats, FlowStats, GipClass, Percentiles, RequestRtt};
use crate::tcp::forensics::Timeout;
use crate::workload::clients::Layout;
use crate::workload::{BlockDone, Release, SyncRead};

/// The reads: who reads from whom, the application and its records.
pub(super) struct Reads {
    /// The clients read (`workload.kind` is not "none").
    pub(super) on: bool,
    /// Who reads from whom.
    pub(super) layout: Layout,
    /// Reading connections (`layout.connections()`); background flows follow.
    pub(super) conns: u32,
    /// The application on every client and server.
    pub(super) app: SyncRead,
    /// Request bytes per block on each connection.
    pub(super) request: u64,
    /// Response bytes the client application had seen on each flow.
    pub(super) client_seen: Vec<u64>,
    /// Response bytes each server is preparing (written at its `Respond` event).
    pub(super) preparing: Vec<u64>,
    /// The requests released at the start of the current block (a reused buffer).
    pub(super) first: Vec<Release>,
    /// One row per completed block.
    pub(super) blocks: Vec<BlockRecord>,
    /// Timeouts of each flow (both ends) in the current block.
    block_timeouts: Vec<u64>,
    /// Timeouts of each flow's server in the current block: all, FLoss-TOs, LAck-TOs.
    block_server_timeouts: Vec<[u64; 3]>,
    /// What the completed blocks' timeouts add up to.
    pub(super) block_tallies: BlockTimeouts,
    /// The servers' SRTT and RTO as requests after a connection's first reached them.
    pub(super) request_rtt: RequestRtt,
    /// The run stops once every client has completed this many blocks.
    stop_blocks: Option<u64>,
    /// Clients that have not yet completed `stop_blocks` blocks.
    short: u32,
}

impl Reads {
    /// The reads of `s`; no block has started.
    pub(super) fn new(s: &Scenario) -> Self {
        let layout = s.reads();
        let conns = layout.connections();
        let response = (0..layout.servers).map(|j| s.response_bytes(j)).collect();
        Reads {
            on: s.workload.kind != crate::workload::WorkloadKind::None,
            layout,
            conns,
            app: SyncRead::new(&s.workload, layout, response, s.seed),
            request: s.workload.request.0,
            client_seen: vec![0; conns as usize],
            preparing: vec![0; conns as usize],
            first: Vec::with_capacity(layout.servers as usize),
            blocks: Vec::new(),
            block_timeouts: vec![0; conns as usize],
            block_server_timeouts: vec![[0; 3]; conns as usize],
            block_tallies: BlockTimeouts::default(),
            request_rtt: RequestRtt::default(),
            stop_blocks: s.stop.blocks,
            short: layout.clients,
        }
    }

    /// Count timeout `t` of `flow`'s server end (`server`) or client end
    /// toward the current block; a background flow's counts toward none.
    pub(super) fn on_timeout(&mut self, flow: usize, server: bool, t: &Timeout) {
        let Some(n) = self.block_timeouts.get_mut(flow) else { return };
        *n += 1;
        self.block_tallies.add_timeout(t);
        if server {
            let s = &mut self.block_server_timeouts[flow];
            s[0] += 1;
            match t.gip_class {
                GipClass::Floss => s[1] += 1,
                GipClass::Lack => s[2] += 1,
                GipClass::Other => {}
            }
        }
    }

    /// Record the block `done`. Returns whether the run's `blocks` limit is
    /// now reached: it waits for every client; the ones that reach it first read on.
    pub(super) fn on_block_done(&mut self, done: BlockDone) -> bool {
        let n = self.layout.servers as usize;
        let first = done.client as usize * n;
        let mine = &mut self.block_timeouts[first..][..n];
        let max_flow_timeouts = mine.iter().copied().max().unwrap_or(0);
        mine.fill(0);
        let servers = &mut self.block_server_timeouts[first..][..n];
        let worst = |k: usize| servers.iter().map(|s| s[k]).max().unwrap_or(0);
        self.block_tallies.add_block(max_flow_timeouts > 0, [worst(0), worst(1), worst(2)]);
        servers.fill([0; 3]);
        self.blocks.push(BlockRecord {
            client: done.client,
            block: done.block,
            start_s: done.started.as_secs_f64(),
            time_ms: done.duration.as_millis_f64(),
            max_flow_timeouts,
        });
        if self.stop_blocks == Some(done.block + 1) {
            self.short -= 1;
            return self.short == 0;
        }
        false
    }

    /// One row per client, summed over its connections' rows `flows`.
    pub(super) fn client_stats(&self, flows: &[FlowStats], mbps: &dyn Fn(u64) -> f64) -> Vec<ClientStats> {
        let n = self.layout.servers as usize;
        (0..self.layout.clients)
            .map(|c| {
                let mine = &flows[c as usize * n..][..n];
                let bytes_delivered = mine.iter().map(|f| f.bytes_delivered).sum();
                let times: Vec<f64> = self.blocks.iter().filter(|b| b.client == c).map(|b| b.time_ms).collect();
                let p = Percentiles::of(&times);
                ClientStats {
                    client: c,
                    goodput_mbps: mbps(bytes_delivered),
                    bytes_delivered,
                    blocks: self.app.blocks_completed(c),
                    block_time_p50_ms: p.p50,
                    block_time_max_ms: p.max,
                    timeouts: mine.iter().map(|f| f.timeouts).sum(),
                    drops: mine.iter().map(|f| f.drops).sum(),
                }
            })
            .collect()
    }
}
