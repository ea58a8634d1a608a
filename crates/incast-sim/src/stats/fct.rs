//! Flow and query completion: one row per open-loop flow and per query
//! (`workload::traffic`), and the summary figures they give.
//!
//! Each flow's row also keeps its path: the switches its data crosses, which
//! on a multipath fabric is the route its 5-tuple's hash picks at every
//! switch (`net::ecmp`); none when the switches spray packets.
//!
//! **Models:** a flow's completion time (FCT) runs from its arrival to the
//! moment its last byte reaches the receiving application (`traffic.fct_end`
//! acked: its sender has that byte's ACK); its slowdown is
//! FCT over `ideal_s` (`workload::ideal`: the flow alone on the empty fabric,
//! with the run's TCP settings), so a flow that met no other traffic has
//! slowdown 1. A query completes when the last byte of its last response
//! arrives. Flows and queries still running at the stop are kept, counted as
//! unfinished, and left out of the percentiles. Size buckets follow DCTCP
//! Figure 22's: under 10 KB, 10-100 KB, 100 KB-1 MB, 1-10 MB, over 10 MB
//! (decimal units; a bucket holds sizes above its lower end up to its upper).
//! **Deliberately different:** percentiles are nearest-rank, as the block
//! times' are.
//! **Not modelled:** per-flow retransmission counts (see the ports table
//! and the summary's counters).

use super::columns::Column;
use serde::Serialize;

/// One open-loop flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowRecord {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes.
    pub size_bytes: u64,
    /// Bytes the receiving application had at the stop (all of them once finished).
    pub delivered_bytes: u64,
    /// Arrival, seconds.
    pub start_s: f64,
    /// Completion time, seconds (`None`: unfinished at the stop).
    pub fct_s: Option<f64>,
    /// The flow alone on the empty fabric, seconds.
    pub ideal_s: f64,
    /// The query this flow answers, if it is a response.
    pub query: Option<u32>,
    /// The switches its data crosses, as an index into the run's path labels
    /// (`None`: its packets are sprayed, `topology.ecmp = "packet"`).
    pub path: Option<u32>,
}

/// One partition/aggregate query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryRecord {
    /// The host the responses go to.
    pub aggregator: u32,
    /// Hosts answering.
    pub fanin: u32,
    /// Arrival, seconds.
    pub start_s: f64,
    /// Completion time, seconds (`None`: unfinished at the stop).
    pub time_s: Option<f64>,
    /// A response's sender suffered a retransmission timeout before the
    /// response was complete (DCTCP §4.3 counts the queries that suffer timeouts).
    pub timed_out: bool,
}

/// Percentiles of one sample: p50, p95, p99 (nearest rank) and the mean; `None` when empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Tail {
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Mean.
    pub mean: Option<f64>,
}

impl Tail {
    /// The tail of `values` (sorted in place).
    pub fn of(values: &mut [f64]) -> Tail {
        if values.is_empty() {
            return Tail::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |p: f64| Some(values[((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1]);
        let mean = Some(values.iter().sum::<f64>() / n as f64);
        Tail { p50: rank(50.0), p95: rank(95.0), p99: rank(99.0), mean }
    }
}

/// The size buckets: (name, upper end in bytes, inclusive).
pub const BUCKETS: [(&str, u64); 5] = [
    ("under_10kb", 10_000),
    ("10kb_100kb", 100_000),
    ("100kb_1mb", 1_000_000),
    ("1mb_10mb", 10_000_000),
    ("over_10mb", u64::MAX),
];

/// The summary figures of the open-loop traffic, flattened into the run's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TrafficFigures {
    /// Open-loop flows that arrived (query responses left out).
    pub open_flows: u64,
    /// Of them, unfinished at the stop.
    pub open_flows_unfinished: u64,
    /// Payload bytes of the arrived flows over the run, as a fraction of all host links' capacity.
    pub offered_load: f64,
    /// Slowdown of every finished open-loop flow.
    pub slowdown: Tail,
    /// Slowdown of finished flows up to 10 KB.
    pub slowdown_under_10kb: Tail,
    /// ... above 10 KB up to 100 KB.
    pub slowdown_10kb_100kb: Tail,
    /// ... above 100 KB up to 1 MB.
    pub slowdown_100kb_1mb: Tail,
    /// ... above 1 MB up to 10 MB.
    pub slowdown_1mb_10mb: Tail,
    /// ... above 10 MB.
    pub slowdown_over_10mb: Tail,
    /// FCT in milliseconds of finished flows up to 10 KB.
    pub fct_ms_under_10kb: Tail,
    /// ... above 10 KB up to 100 KB.
    pub fct_ms_10kb_100kb: Tail,
    /// ... above 100 KB up to 1 MB.
    pub fct_ms_100kb_1mb: Tail,
    /// ... above 1 MB up to 10 MB.
    pub fct_ms_1mb_10mb: Tail,
    /// ... above 10 MB.
    pub fct_ms_over_10mb: Tail,
    /// Queries that arrived.
    pub queries: u64,
    /// Of them, unfinished at the stop.
    pub queries_unfinished: u64,
    /// Completion time of the finished queries, milliseconds.
    pub query_time_ms: Tail,
    /// Queries one of whose responses suffered a retransmission timeout before it was complete.
    pub queries_timed_out: u64,
    /// Of the queries that arrived, the fraction that did (0 without queries).
    pub query_timeout_fraction: f64,
}

impl TrafficFigures {
    /// The figures of `flows` and `queries` over `elapsed_s` seconds on links of `capacity_bps` in all.
    pub fn of(flows: &[FlowRecord], queries: &[QueryRecord], elapsed_s: f64, capacity_bps: f64) -> Self {
        let open: Vec<&FlowRecord> = flows.iter().filter(|f| f.query.is_none()).collect();
        let finished = || open.iter().filter_map(|f| f.fct_s.map(|t| (f.size_bytes, t, t / f.ideal_s)));
        let bucket = |i: usize| {
            let lo = if i == 0 { 0 } else { BUCKETS[i - 1].1 };
            let mine = || finished().filter(move |f| f.0 > lo && f.0 <= BUCKETS[i].1);
            let mut slow: Vec<f64> = mine().map(|f| f.2).collect();
            let mut fct: Vec<f64> = mine().map(|f| f.1 * 1e3).collect();
            (Tail::of(&mut slow), Tail::of(&mut fct))
        };
        let [b0, b1, b2, b3, b4] = [0, 1, 2, 3, 4].map(bucket);
        let mut all: Vec<f64> = finished().map(|f| f.2).collect();
        let mut qt: Vec<f64> = queries.iter().filter_map(|q| q.time_s.map(|t| t * 1e3)).collect();
        let bytes: u64 = open.iter().map(|f| f.size_bytes).sum();
        let timed_out = queries.iter().filter(|q| q.timed_out).count() as u64;
        TrafficFigures {
            open_flows: open.len() as u64,
            open_flows_unfinished: open.iter().filter(|f| f.fct_s.is_none()).count() as u64,
            offered_load: if elapsed_s > 0.0 { bytes as f64 * 8.0 / (elapsed_s * capacity_bps) } else { 0.0 },
            slowdown: Tail::of(&mut all),
            slowdown_under_10kb: b0.0,
            slowdown_10kb_100kb: b1.0,
            slowdown_100kb_1mb: b2.0,
            slowdown_1mb_10mb: b3.0,
            slowdown_over_10mb: b4.0,
            fct_ms_under_10kb: b0.1,
            fct_ms_10kb_100kb: b1.1,
            fct_ms_100kb_1mb: b2.1,
            fct_ms_1mb_10mb: b3.1,
            fct_ms_over_10mb: b4.1,
            queries: queries.len() as u64,
            queries_unfinished: queries.iter().filter(|q| q.time_s.is_none()).count() as u64,
            query_time_ms: Tail::of(&mut qt),
            queries_timed_out: timed_out,
            query_timeout_fraction: if queries.is_empty() { 0.0 } else { timed_out as f64 / queries.len() as f64 },
        }
    }
}

/// The flow rows as columns: `src`, `dst`, `size_bytes`, `delivered_bytes`, `start_s`,
/// `fct_s` (NaN when unfinished), `ideal_s`, `slowdown` (NaN when
/// unfinished), `finished`, `query` (-1 for an open-loop flow), and `path`
/// coded over `paths` (-1 for a sprayed flow).
pub fn flow_columns(rows: &[FlowRecord], paths: &[String]) -> Vec<Column> {
    let fct = |r: &FlowRecord| r.fct_s.unwrap_or(f64::NAN);
    vec![
        Column::u32s("src", rows.iter().map(|r| r.src)),
        Column::u32s("dst", rows.iter().map(|r| r.dst)),
        Column::u64s("size_bytes", rows.iter().map(|r| r.size_bytes)),
        Column::u64s("delivered_bytes", rows.iter().map(|r| r.delivered_bytes)),
        Column::f64s("start_s", rows.iter().map(|r| r.start_s)),
        Column::f64s("fct_s", rows.iter().map(fct)),
        Column::f64s("ideal_s", rows.iter().map(|r| r.ideal_s)),
        Column::f64s("slowdown", rows.iter().map(|r| fct(r) / r.ideal_s)),
        Column::bools("finished", rows.iter().map(|r| r.fct_s.is_some())),
        Column::i64s("query", rows.iter().map(|r| r.query.map_or(-1, i64::from))),
        Column::labelled("path", paths, rows.iter().map(|r| r.path.map_or(-1, i64::from))),
    ]
}

/// The query rows as columns: `aggregator`, `fanin`, `start_s`, `time_s` (NaN when unfinished), `finished`,
/// `timed_out`.
pub fn query_columns(rows: &[QueryRecord]) -> Vec<Column> {
    vec![
        Column::u32s("aggregator", rows.iter().map(|r| r.aggregator)),
        Column::u32s("fanin", rows.iter().map(|r| r.fanin)),
        Column::f64s("start_s", rows.iter().map(|r| r.start_s)),
        Column::f64s("time_s", rows.iter().map(|r| r.time_s.unwrap_or(f64::NAN))),
        Column::bools("finished", rows.iter().map(|r| r.time_s.is_some())),
        Column::bools("timed_out", rows.iter().map(|r| r.timed_out)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(size_bytes: u64, fct_s: Option<f64>) -> FlowRecord {
        FlowRecord {
            src: 0,
            dst: 1,
            size_bytes,
            delivered_bytes: 0,
            start_s: 0.0,
            fct_s,
            ideal_s: 0.001,
            query: None,
            path: None,
        }
    }

    /// Each finished flow counts in its bucket; an unfinished one is counted, not measured.
    #[test]
    fn flows_fall_in_their_size_bucket_and_unfinished_ones_are_counted() {
        let rows = [flow(10_000, Some(0.002)), flow(10_001, Some(0.004)), flow(50_000, None)];
        let f = TrafficFigures::of(&rows, &[], 1.0, 1e9);
        assert_eq!((f.open_flows, f.open_flows_unfinished), (3, 1));
        assert_eq!(f.slowdown_under_10kb.p99, Some(2.0));
        assert_eq!(f.slowdown_10kb_100kb.p50, Some(4.0));
        assert_eq!(f.slowdown_100kb_1mb, Tail::default());
        assert!((f.offered_load - 70_001.0 * 8.0 / 1e9).abs() < 1e-15);
    }

    #[test]
    fn a_tail_is_nearest_rank_with_the_mean() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let t = Tail::of(&mut v);
        assert_eq!((t.p50, t.p95, t.p99, t.mean), (Some(50.0), Some(95.0), Some(99.0), Some(50.5)));
    }
}
