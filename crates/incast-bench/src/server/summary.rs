//! What a server did: the counters its threads keep and the summary its
//! stop line reports, with the kernel's RTT and RTO as `TCP_INFO` gives them
//! (Linux `tcp_get_info`: `tcpi_rtt`, `tcpi_rttvar`, `tcpi_rto`, `tcpi_min_rtt`,
//! `tcpi_total_retrans`).

use crate::tcp_info::TcpInfo;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a server did, logged when it stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeSummary {
    /// Connections accepted and served (refused ones not counted).
    pub connections: u64,
    /// Requests answered in full.
    pub requests: u64,
    /// Response bytes written.
    pub bytes: u64,
    /// Connections closed because of a malformed request.
    pub rejected: u64,
    /// Connections refused at once because `max_connections` were open.
    pub refused: u64,
    /// Connections closed by the idle timeout.
    pub timed_out: u64,
    /// Accepts that failed (out of descriptors, ...).
    pub accept_errors: u64,
    /// Segments the server retransmitted, summed over its closed connections
    /// (`TCP_INFO` `tcpi_total_retrans`): the losses incast causes happen on
    /// the servers' side.
    pub retransmitted_segments: u64,
    /// The kernel's view of the round trip as each request after a
    /// connection's first arrived (`TCP_INFO`, [`RttSummary`]).
    pub rtt: RttSummary,
}

/// The kernel's round-trip estimate and retransmission timeout, taken from
/// `TCP_INFO` as a request arrives on a connection that has answered one
/// before, so that they come from the previous answer's data and ACKs: the
/// RTT the hosts' stacks and scheduling add to the wire's shows here, and
/// with it the RTO the kernel arms (`tcp_set_rto`: SRTT plus the larger of
/// 4·RTTVAR and the RTO floor, in whole jiffies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttSummary {
    /// Requests sampled.
    pub samples: u64,
    /// Mean smoothed RTT (`tcpi_rtt`), microseconds.
    pub rtt_us_mean: u64,
    /// Mean RTT variation (`tcpi_rttvar`, the kernel's `mdev_us / 4`), microseconds.
    pub rttvar_us_mean: u64,
    /// Mean RTO (`tcpi_rto`), microseconds.
    pub rto_us_mean: u64,
    /// Largest RTO, microseconds.
    pub rto_us_max: u64,
    /// Least windowed minimum RTT (`tcpi_min_rtt`, `tcp_min_rtt`), microseconds; 0 when none was
    /// sampled. On an otherwise idle path it is the round trip the hosts and the wire give a
    /// segment that waits in no queue.
    pub min_rtt_us_least: u64,
}

/// What the server's threads count, updated as they go.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) connections: AtomicU64,
    pub(super) requests: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) refused: AtomicU64,
    pub(super) timed_out: AtomicU64,
    pub(super) accept_errors: AtomicU64,
    pub(super) retransmitted_segments: AtomicU64,
    rtt_samples: AtomicU64,
    rtt_us_sum: AtomicU64,
    rttvar_us_sum: AtomicU64,
    rto_us_sum: AtomicU64,
    rto_us_max: AtomicU64,
    /// 0 until a connection has an RTT sample.
    min_rtt_us_least: AtomicU64,
}

impl Counters {
    /// Take the kernel's RTT and RTO of `stream` as a request arrives on it.
    pub(super) fn sample_rtt(&self, stream: &TcpStream) {
        if let Ok(info) = TcpInfo::of(stream) {
            self.rtt_samples.fetch_add(1, Ordering::Relaxed);
            self.rtt_us_sum.fetch_add(u64::from(info.rtt_us), Ordering::Relaxed);
            self.rttvar_us_sum.fetch_add(u64::from(info.rttvar_us), Ordering::Relaxed);
            self.rto_us_sum.fetch_add(u64::from(info.rto_us), Ordering::Relaxed);
            self.rto_us_max.fetch_max(u64::from(info.rto_us), Ordering::Relaxed);
            // `tcp_min_rtt` is ~0U until the connection's first RTT sample.
            if info.min_rtt_us != 0 && info.min_rtt_us != u32::MAX {
                let least = u64::from(info.min_rtt_us);
                let _ = self.min_rtt_us_least.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                    (now == 0 || least < now).then_some(least)
                });
            }
        }
    }

    /// What [`Counters::sample_rtt`] gathered.
    fn rtt(&self) -> RttSummary {
        let samples = self.rtt_samples.load(Ordering::Relaxed);
        let mean = |sum: &AtomicU64| sum.load(Ordering::Relaxed).checked_div(samples).unwrap_or(0);
        RttSummary {
            samples,
            rtt_us_mean: mean(&self.rtt_us_sum),
            rttvar_us_mean: mean(&self.rttvar_us_sum),
            rto_us_mean: mean(&self.rto_us_sum),
            rto_us_max: self.rto_us_max.load(Ordering::Relaxed),
            min_rtt_us_least: self.min_rtt_us_least.load(Ordering::Relaxed),
        }
    }

    /// Everything counted, as the server reports it when it stops.
    pub(super) fn summary(&self) -> ServeSummary {
        ServeSummary {
            connections: self.connections.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            timed_out: self.timed_out.load(Ordering::Relaxed),
            accept_errors: self.accept_errors.load(Ordering::Relaxed),
            retransmitted_segments: self.retransmitted_segments.load(Ordering::Relaxed),
            rtt: self.rtt(),
        }
    }
}

impl ServeSummary {
    /// The line the server logs when it stops.
    pub(super) fn shutdown_line(&self) -> String {
        format!(
            "shutdown: {} connections, {} requests, {} bytes served, {} connections rejected, {} refused (too many \
             open), {} closed idle, {} accept errors, {} segments retransmitted; kernel RTT {} us, RTTVAR {} us \
             and RTO {} us on average (RTO at most {} us, min_rtt at least {} us) over {} requests after a \
             connection's first",
            self.connections,
            self.requests,
            self.bytes,
            self.rejected,
            self.refused,
            self.timed_out,
            self.accept_errors,
            self.retransmitted_segments,
            self.rtt.rtt_us_mean,
            self.rtt.rttvar_us_mean,
            self.rtt.rto_us_mean,
            self.rtt.rto_us_max,
            self.rtt.min_rtt_us_least,
            self.rtt.samples
        )
    }
}
