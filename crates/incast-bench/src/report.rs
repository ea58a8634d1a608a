//! What a read run measured, in the same terms as the simulator's summary.
//!
//! The names follow `incast run --json` where a figure means the same thing
//! (`goodput_mbps`, `blocks`, `bytes_delivered`, `block_time_ms` with nearest-rank
//! `p50`/`p99`/`max`, `wall_s`); what only real sockets have comes in addition:
//! `connections` (per-server `TCP_INFO` over the measured blocks) and
//! `tcpext` (the host's TCP counters before and after). A run that failed or
//! was interrupted still reports every block it completed.

use crate::netstat::CounterDelta;
use crate::tcp_info::TcpInfoDelta;
use incast_sim::stats::Percentiles;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every requested block arrived (or the duration ran out).
    Complete,
    /// A server refused, stalled past the timeout, closed or misbehaved: see `error`.
    Failed,
    /// Asked to stop (Ctrl-C) before the stop condition.
    Interrupted,
}

/// The server and block that ended a run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReadFailure {
    /// `host:port` of the server.
    pub server: String,
    /// The block being read, `None` while connecting.
    pub block: Option<u64>,
    /// What happened.
    pub reason: String,
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.block {
            Some(b) => write!(f, "server {}, block {b}: {}", self.server, self.reason),
            None => write!(f, "server {}: {}", self.server, self.reason),
        }
    }
}

/// One server's connection over the measured blocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnectionReport {
    /// `host:port`.
    pub server: String,
    /// Payload bytes received from it in measured blocks.
    pub bytes_delivered: u64,
    /// The connection's `TCP_INFO` change; absent where it could not be read.
    #[serde(flatten)]
    pub tcp_info: Option<TcpInfoDelta>,
}

/// One measured block.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BlockRow {
    /// Block id as sent to the servers (warm-up blocks come first).
    pub block: u64,
    /// Start, seconds after the first measured block started.
    pub start_s: f64,
    /// From the first request sent to the last byte received, milliseconds.
    pub time_ms: f64,
    /// Index in `servers` of the server whose answer completed last: the one
    /// that held the block up (a block of 200 ms on a 100 µs network names
    /// the server that waited out a retransmission timeout).
    pub last_server: usize,
}

/// The result of one read run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReadReport {
    /// How the run ended.
    pub status: Status,
    /// Why it failed, when `status` is `failed`.
    pub error: Option<ReadFailure>,
    /// `host:port` of each server, in request order.
    pub servers: Vec<String>,
    /// Bytes per server per block, when the SRU is fixed.
    pub sru_bytes: Option<u64>,
    /// Bytes per block, over all servers.
    pub block_bytes: u64,
    /// Warm-up blocks run before the measurement.
    pub warmup_blocks: u64,
    /// Measured blocks completed.
    pub blocks: u64,
    /// Payload bytes of the measured blocks.
    pub bytes_delivered: u64,
    /// From the first measured block's start to the last one's end, seconds.
    pub wall_s: f64,
    /// When the first measured block started, seconds since the Unix epoch: the
    /// origin on which a server's samples ([`crate::sampler`]) are set.
    pub start_unix_s: Option<f64>,
    /// `bytes_delivered` over `wall_s`, in Mbit/s; `None` without a measured block.
    pub goodput_mbps: Option<f64>,
    /// Block time percentiles in milliseconds.
    pub block_time_ms: Percentiles,
    /// One entry per server.
    pub connections: Vec<ConnectionReport>,
    /// The host's TCP counters (`netstat`), by kernel name; empty when not on Linux.
    pub tcpext: BTreeMap<String, CounterDelta>,
    /// One row per measured block.
    pub block_rows: Vec<BlockRow>,
}

impl ReadReport {
    /// A report with no block yet, for `servers` reading `block_bytes` per block.
    pub fn empty(servers: Vec<String>, sru_bytes: Option<u64>, block_bytes: u64, warmup_blocks: u64) -> Self {
        ReadReport {
            status: Status::Complete,
            error: None,
            connections: servers
                .iter()
                .map(|s| ConnectionReport { server: s.clone(), bytes_delivered: 0, tcp_info: None })
                .collect(),
            servers,
            sru_bytes,
            block_bytes,
            warmup_blocks,
            blocks: 0,
            bytes_delivered: 0,
            wall_s: 0.0,
            start_unix_s: None,
            goodput_mbps: None,
            block_time_ms: Percentiles::default(),
            tcpext: BTreeMap::new(),
            block_rows: Vec::new(),
        }
    }

    /// Count one measured block.
    pub fn add_block(&mut self, row: BlockRow) {
        self.block_rows.push(row);
        self.blocks += 1;
        self.bytes_delivered += self.block_bytes;
        self.wall_s = row.start_s + row.time_ms / 1e3;
    }

    /// Fill in the figures derived from the block rows.
    pub fn finish(&mut self) {
        let times: Vec<f64> = self.block_rows.iter().map(|r| r.time_ms).collect();
        self.block_time_ms = Percentiles::of(&times);
        self.goodput_mbps =
            (self.blocks > 0 && self.wall_s > 0.0).then(|| self.bytes_delivered as f64 * 8.0 / self.wall_s / 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_is_measured_bytes_over_measured_time() {
        let mut r = ReadReport::empty(vec!["a:1".into(), "b:1".into()], Some(500_000), 1_000_000, 2);
        r.add_block(BlockRow { block: 2, start_s: 0.0, time_ms: 4.0, last_server: 1 });
        r.add_block(BlockRow { block: 3, start_s: 0.005, time_ms: 5.0, last_server: 0 });
        r.finish();
        assert_eq!((r.blocks, r.bytes_delivered), (2, 2_000_000));
        assert!((r.wall_s - 0.010).abs() < 1e-12);
        assert!((r.goodput_mbps.unwrap() - 1600.0).abs() < 1e-6);
        assert_eq!((r.block_time_ms.p50, r.block_time_ms.max), (Some(4.0), Some(5.0)));
    }

    #[test]
    fn no_block_has_no_goodput() {
        let mut r = ReadReport::empty(vec!["a:1".into()], None, 10, 0);
        r.finish();
        assert_eq!((r.goodput_mbps, r.block_time_ms.p50), (None, None));
    }

    #[test]
    fn a_failure_names_the_server_and_the_block() {
        let f = ReadFailure { server: "10.0.0.2:7470".into(), block: Some(12), reason: "stalled".into() };
        assert_eq!(f.to_string(), "server 10.0.0.2:7470, block 12: stalled");
        let f = ReadFailure { block: None, ..f };
        assert_eq!(f.to_string(), "server 10.0.0.2:7470: stalled");
    }
}
