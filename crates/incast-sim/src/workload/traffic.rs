//! Open-loop traffic (`[traffic]`): flows that arrive at random between the
//! fabric's hosts, with sizes from a published or a user's distribution, and
//! partition/aggregate queries, beside (or instead of) the synchronized reads.
//!
//! **Models:** flows arrive as one Poisson process whose rate makes the
//! average host link carry `load` of its line rate in flow payload bytes:
//! `Λ = load · Σ_h rate_h / (8 · mean size)`. Each flow's sender is drawn in
//! proportion to its link's rate (all-to-all, permutation) or to its row of
//! the traffic matrix, then its receiver: uniformly among the other hosts
//! (all-to-all), the sender's partner in a seeded random permutation without
//! fixed points (permutation), or in proportion to the row's weights
//! (matrix). Its size comes from `flow_sizes`. Its completion time ends when
//! its last byte reaches the receiving application (`fct_end` "delivered")
//! or when the sender has the ACK of that byte ("acked", as HPCC's
//! simulations count it: Li et al., SIGCOMM 2019, and its authors' results
//! page, "Settings"); its ideal ends at the same event. Queries arrive as a second
//! Poisson process at `query_rate`: an aggregator drawn uniformly, and
//! `query_fanin` distinct other hosts, drawn uniformly, each of which sends
//! it `query_response` bytes at once (the request is not modelled; DCTCP §2.1's
//! partition/aggregate pattern). Arrivals stop at the run's `duration`; with
//! `drain`, the run then goes on until every flow and query that arrived is
//! complete, or for `drain` more at most, and those still open are counted
//! unfinished (off: the run ends at `duration`, and flows open then are
//! unfinished, which leaves the longest out of the percentiles).
//! Every host of the fabric takes part: the clients, the servers and the
//! background hosts, in host order.
//! **Deliberately different:** load counts payload bytes, not frames, as the
//! papers' generators do.
//! **Not modelled:** connection setup (each flow is a connection established
//! at its arrival, as the reading connections are at time zero), flows
//! between hosts that are not the fabric's, request traffic of queries.

use super::flow_sizes::{Published, SizeCdf, PUBLISHED};
use crate::rng::Rng;
use crate::settings::{python_repr, Count, Duration, Entry, Number, Setting, Size, Spec, Table};
use crate::time::{BitRate, Bytes, SimDuration, SimTime};
use serde_json::Value as Json;

/// Where a flow's size comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowSizes {
    /// One of the published distributions shipped with the engine.
    Published(Published),
    /// A user's CDF.
    Cdf(SizeCdf),
}

/// Who sends to whom.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Any host to any other, uniformly.
    AllToAll,
    /// Each host to one partner, a seeded permutation without fixed points.
    Permutation,
    /// Row `i`, column `j`: the weight of flows from host `i` to host `j`.
    Matrix(Vec<Vec<f64>>),
}

/// Where a flow's completion time ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FctEnd {
    /// Its last byte reaches the receiving application.
    Delivered,
    /// The sender has the ACK of its last byte.
    Acked,
}

/// The open-loop traffic of a run.
///
/// Default values: off (`load` "off", `query_rate` 0); web-search sizes;
/// all-to-all; queries fan in from 8 hosts, 2 KB each (DCTCP §2.2: responses
/// of 1.6-2 KB).
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficConfig {
    /// Fraction of each host link's rate the flows offer; `None`: no flows.
    pub load: Option<f64>,
    /// The flow-size distribution.
    pub sizes: FlowSizes,
    /// Senders and receivers.
    pub pattern: Pattern,
    /// Partition/aggregate queries per second across the fabric (0: none).
    pub query_rate: f64,
    /// Hosts answering each query.
    pub query_fanin: u32,
    /// Bytes each of them sends.
    pub query_response: Bytes,
    /// Where each flow's completion time ends.
    pub fct_end: FctEnd,
    /// How long the run may go on after the arrivals stop for the open flows
    /// and queries to complete; `None`: it ends with the arrivals.
    pub drain: Option<SimDuration>,
}

// Every float is checked finite when read.
impl Eq for TrafficConfig {}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            load: None,
            sizes: FlowSizes::Published(Published::WebSearch),
            pattern: Pattern::AllToAll,
            query_rate: 0.0,
            query_fanin: 8,
            query_response: Bytes::new(2000),
            fct_end: FctEnd::Delivered,
            drain: None,
        }
    }
}

const LOAD: Number = Number::FRACTION;
const QUERY_RATE: Number =
    Number { lo: 0.0, hi: 1e9, lo_closed: true, hi_closed: true, what: "queries per second from 0 to 1e9" };
const FANIN: Count = Count::new(1, 100_000, "hosts");
const RESPONSE: Size = Size { min: 1 };
const PATTERNS: [&str; 2] = ["all_to_all", "permutation"];
const DRAIN: Duration = Duration::POSITIVE;
const FCT_ENDS: [(&str, FctEnd); 2] = [("delivered", FctEnd::Delivered), ("acked", FctEnd::Acked)];

impl TrafficConfig {
    /// Are there flows or queries?
    pub fn is_on(&self) -> bool {
        self.load.is_some() || self.query_rate > 0.0
    }

    /// The size distribution's points.
    pub fn cdf(&self) -> SizeCdf {
        match &self.sizes {
            FlowSizes::Published(p) => SizeCdf::published(*p),
            FlowSizes::Cdf(c) => c.clone(),
        }
    }

    /// The rules that need the fabric's host count `hosts`.
    pub fn check_hosts(&self, hosts: u32) -> Result<(), (&'static str, String)> {
        if hosts < 2 {
            return Err((
                "traffic",
                format!(
                    "needs at least 2 hosts, the fabric has {hosts}; on a star or tree the hosts are the \
                     clients and servers: give servers and set workload.kind = \"none\" to run no reads"
                ),
            ));
        }
        if self.query_rate > 0.0 && self.query_fanin >= hosts {
            return Err(("traffic.query_fanin", format!("must be below the {hosts} hosts, got {}", self.query_fanin)));
        }
        if let Pattern::Matrix(m) = &self.pattern {
            let square = m.len() == hosts as usize && m.iter().all(|r| r.len() == hosts as usize);
            if !square {
                return Err((
                    "traffic.pattern",
                    format!("a matrix must be {hosts} × {hosts} (one row and column per host)"),
                ));
            }
            if m.iter().enumerate().any(|(i, r)| r[i] != 0.0) {
                return Err(("traffic.pattern", "a host cannot send to itself: the diagonal must be 0".into()));
            }
            if m.iter().flatten().all(|&w| w == 0.0) {
                return Err(("traffic.pattern", "a matrix needs at least one weight above 0".into()));
            }
        }
        Ok(())
    }

    fn read_pattern(raw: &Json) -> Result<Pattern, String> {
        match raw {
            Json::String(s) if s == "all_to_all" => Ok(Pattern::AllToAll),
            Json::String(s) if s == "permutation" => Ok(Pattern::Permutation),
            Json::String(s) if s.contains('\n') => matrix_text(s),
            Json::Array(rows) => rows
                .iter()
                .map(|r| {
                    r.as_array()
                        .ok_or(())
                        .and_then(|r| r.iter().map(|w| w.as_f64().ok_or(())).collect::<Result<Vec<f64>, ()>>())
                })
                .collect::<Result<Vec<_>, ()>>()
                .map_err(|()| format!("a matrix is a list of rows of numbers, got {}", python_repr(raw)))
                .and_then(Self::checked_matrix),
            _ => Err(format!(
                "must be \"all_to_all\", \"permutation\", or a traffic matrix (rows of weights), got {}",
                python_repr(raw)
            )),
        }
    }

    fn checked_matrix(m: Vec<Vec<f64>>) -> Result<Pattern, String> {
        if m.iter().flatten().any(|w| !w.is_finite() || *w < 0.0) {
            return Err("matrix weights must be finite and not negative".into());
        }
        Ok(Pattern::Matrix(m))
    }

    fn read_sizes(raw: &Json) -> Result<FlowSizes, String> {
        match raw {
            Json::String(s) => match PUBLISHED.iter().find(|p| p.0 == s) {
                Some(p) => Ok(FlowSizes::Published(p.1)),
                None if s.contains('\n') => SizeCdf::parse_text(s).map(FlowSizes::Cdf),
                None => Err(format!(
                    "must be websearch, datamining, hadoop, or a CDF file's points, got {}",
                    python_repr(raw)
                )),
            },
            Json::Array(_) => SizeCdf::from_json(raw).map(FlowSizes::Cdf),
            _ => Err(format!(
                "must be websearch, datamining, hadoop, or [bytes, fraction] pairs, got {}",
                python_repr(raw)
            )),
        }
    }
}

/// A traffic-matrix file's text: a row of whitespace-separated weights per
/// line (blank lines and `#` comments skipped).
fn matrix_text(text: &str) -> Result<Pattern, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let row: Result<Vec<f64>, _> = line.split_whitespace().map(str::parse::<f64>).collect();
        rows.push(row.map_err(|_| format!("line {}: expected weights, got {line:?}", n + 1))?);
    }
    TrafficConfig::checked_matrix(rows)
}

impl Table for TrafficConfig {
    fn read(&mut self, key: &str, raw: &Json) -> Option<Result<(), String>> {
        Some(match key {
            "load" if raw.is_null() || raw.as_str() == Some("off") => {
                self.load = None;
                Ok(())
            }
            "load" => LOAD.parse(raw).map(|v| self.load = Some(v)).map_err(|m| format!("{m} (or \"off\")")),
            "sizes" => Self::read_sizes(raw).map(|v| self.sizes = v),
            "pattern" => Self::read_pattern(raw).map(|v| self.pattern = v),
            "query_rate" => QUERY_RATE.parse(raw).map(|v| self.query_rate = v),
            "query_fanin" => FANIN.parse(raw).map(|v| self.query_fanin = v),
            "query_response" => RESPONSE.parse(raw).map(|v| self.query_response = v),
            "fct_end" => match FCT_ENDS.iter().find(|e| raw.as_str() == Some(e.0)) {
                Some(e) => {
                    self.fct_end = e.1;
                    Ok(())
                }
                None => Err(format!("must be \"delivered\" or \"acked\", got {}", python_repr(raw))),
            },
            "drain" if raw.is_null() || raw.as_str() == Some("off") => {
                self.drain = None;
                Ok(())
            }
            "drain" => DRAIN.parse(raw).map(|d| self.drain = Some(d)).map_err(|m| format!("{m} (or \"off\")")),
            _ => return None,
        })
    }

    fn write(&self, out: &mut Vec<Entry>) {
        let same = |key, toml: Json| Entry { key, si: toml.clone(), toml };
        out.push(same("load", self.load.map_or(Json::from("off"), Json::from)));
        out.push(same(
            "sizes",
            match &self.sizes {
                FlowSizes::Published(p) => Json::from(PUBLISHED.iter().find(|q| q.1 == *p).map_or("", |q| q.0)),
                FlowSizes::Cdf(c) => c.to_json(),
            },
        ));
        out.push(same(
            "pattern",
            match &self.pattern {
                Pattern::AllToAll => Json::from(PATTERNS[0]),
                Pattern::Permutation => Json::from(PATTERNS[1]),
                Pattern::Matrix(m) => Json::from(m.clone()),
            },
        ));
        out.push(same("query_rate", Json::from(self.query_rate)));
        out.push(same("query_fanin", Json::from(self.query_fanin)));
        out.push(Entry {
            key: "query_response",
            toml: RESPONSE.toml(&self.query_response),
            si: RESPONSE.si(&self.query_response),
        });
        out.push(same("fct_end", Json::from(FCT_ENDS.iter().find(|e| e.1 == self.fct_end).map_or("", |e| e.0))));
        out.push(match &self.drain {
            None => same("drain", Json::from("off")),
            Some(d) => Entry { key: "drain", toml: DRAIN.toml(d), si: DRAIN.si(d) },
        });
    }

    fn describe(out: &mut Vec<Setting>) {
        let d = TrafficConfig::default();
        let line = |key, kind, default, allowed: String, none, doc: &str| Setting {
            key,
            kind,
            default,
            allowed,
            none,
            doc: doc.to_owned(),
        };
        out.push(line(
            "load",
            "number",
            Json::from("off"),
            format!("{}, or \"off\"", LOAD.what),
            Some("off"),
            "Open-loop flows offering this fraction of each host link's rate (Poisson arrivals), or \"off\".",
        ));
        out.push(line(
            "sizes",
            "choice",
            Json::from("websearch"),
            "\"websearch\" (DCTCP), \"datamining\" (VL2), \"hadoop\" (Facebook), or a CDF file (lines `bytes fraction`)"
                .into(),
            None,
            "Flow-size distribution of the open-loop flows.",
        ));
        out.push(line(
            "pattern",
            "choice",
            Json::from("all_to_all"),
            "\"all_to_all\", \"permutation\", or a traffic-matrix file (a row of weights per sending host)".into(),
            None,
            "Who sends to whom: any host to any other, a fixed random permutation, or a traffic matrix.",
        ));
        out.push(line(
            "query_rate",
            "number",
            Json::from(d.query_rate),
            QUERY_RATE.what.into(),
            None,
            "Partition/aggregate queries per second across the fabric (Poisson arrivals); 0: none.",
        ));
        out.push(line(
            "query_fanin",
            "count",
            Json::from(d.query_fanin),
            Spec::<u32>::allowed(&FANIN),
            None,
            "Hosts answering each query, drawn at random among the others.",
        ));
        out.push(line(
            "query_response",
            "size",
            RESPONSE.toml(&d.query_response),
            RESPONSE.allowed(),
            None,
            "Bytes each answering host sends the query's aggregator.",
        ));
        out.push(line(
            "fct_end",
            "choice",
            Json::from(FCT_ENDS[0].0),
            "\"delivered\" or \"acked\"".into(),
            None,
            "Where a flow's completion time (and its ideal) ends: \"delivered\" (its last byte reaches the \
             receiving application) or \"acked\" (the sender has that byte's ACK, as HPCC counts it).",
        ));
        out.push(line(
            "drain",
            "duration",
            Json::from("off"),
            format!("{}, or \"off\"", DRAIN.allowed()),
            Some("off"),
            "After the arrivals stop at the duration, run on until every flow and query that arrived is \
             complete, for this long at most; those still open then are unfinished. \"off\": the run ends \
             with the arrivals.",
        ));
    }
}

/// One open-loop flow as it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Arrival (the sender writes all its bytes then).
    pub at: SimTime,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes.
    pub bytes: u64,
}

/// Draws of `k` out of a cumulative weight table.
fn pick(cumulative: &[f64], rng: &mut Rng) -> usize {
    let total = cumulative[cumulative.len() - 1];
    let u = rng.unit() * total;
    cumulative.partition_point(|&c| c <= u).min(cumulative.len() - 1)
}

fn cumulative(weights: impl Iterator<Item = f64>) -> Vec<f64> {
    weights
        .scan(0.0, |sum, w| {
            *sum += w;
            Some(*sum)
        })
        .collect()
}

/// The flows of a run, in arrival order: a pure function of the settings,
/// the hosts' link rates and the seed.
pub struct FlowArrivals {
    gap_ps: u64,
    next: SimTime,
    cdf: SizeCdf,
    senders: Vec<f64>,
    receivers: Receivers,
    rng: Rng,
}

enum Receivers {
    Any(u32),
    Partner(Vec<u32>),
    Rows(Vec<Vec<f64>>),
}

impl FlowArrivals {
    /// The flow arrivals of `cfg` (whose `load` is set) between hosts with link rates `rates`.
    pub fn new(cfg: &TrafficConfig, rates: &[BitRate], seed: u64) -> Self {
        let load = cfg.load.expect("flows are on");
        let cdf = cfg.cdf();
        let hosts = rates.len() as u32;
        let total_bps: f64 = rates.iter().map(|r| r.as_bps() as f64).sum();
        let per_s = load * total_bps / (8.0 * cdf.mean());
        let mut rng = Rng::substream(seed, "traffic/flows");
        let (senders, receivers) = match &cfg.pattern {
            Pattern::AllToAll => (cumulative(rates.iter().map(|r| r.as_bps() as f64)), Receivers::Any(hosts)),
            Pattern::Permutation => {
                (cumulative(rates.iter().map(|r| r.as_bps() as f64)), Receivers::Partner(rng.cycle(hosts)))
            }
            Pattern::Matrix(m) => {
                let rows: Vec<Vec<f64>> = m.iter().map(|r| cumulative(r.iter().copied())).collect();
                (cumulative(m.iter().map(|r| r.iter().sum())), Receivers::Rows(rows))
            }
        };
        let gap_ps = (1e12 / per_s).round().max(1.0) as u64;
        let mut a = FlowArrivals { gap_ps, next: SimTime::ZERO, cdf, senders, receivers, rng };
        a.next = SimTime::ZERO + SimDuration::from_ps(a.rng.exponential(a.gap_ps));
        a
    }

    /// The mean gap between arrivals.
    pub fn mean_gap(&self) -> SimDuration {
        SimDuration::from_ps(self.gap_ps)
    }

    /// When the next flow arrives.
    pub fn next_at(&self) -> SimTime {
        self.next
    }

    /// The next flow; the one after it is drawn.
    pub fn take(&mut self) -> FlowSpec {
        let at = self.next;
        let src = pick(&self.senders, &mut self.rng) as u32;
        let dst = match &self.receivers {
            Receivers::Any(n) => {
                let d = self.rng.below(u64::from(n - 1)) as u32;
                d + u32::from(d >= src)
            }
            Receivers::Partner(p) => p[src as usize],
            Receivers::Rows(rows) => pick(&rows[src as usize], &mut self.rng) as u32,
        };
        let bytes = self.cdf.quantile(self.rng.unit());
        self.next = at + SimDuration::from_ps(self.rng.exponential(self.gap_ps));
        FlowSpec { at, src, dst, bytes }
    }
}

/// One partition/aggregate query as it arrives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuerySpec {
    /// Arrival: every worker starts its response then.
    pub at: SimTime,
    /// The host the responses go to.
    pub aggregator: u32,
    /// The hosts that answer.
    pub workers: Vec<u32>,
}

/// The queries of a run, in arrival order.
pub struct QueryArrivals {
    gap_ps: u64,
    next: SimTime,
    hosts: u32,
    fanin: u32,
    rng: Rng,
    scratch: Vec<u32>,
}

impl QueryArrivals {
    /// The query arrivals of `cfg` (whose `query_rate` is above 0) among `hosts` hosts.
    pub fn new(cfg: &TrafficConfig, hosts: u32, seed: u64) -> Self {
        let mut rng = Rng::substream(seed, "traffic/queries");
        let gap_ps = (1e12 / cfg.query_rate).round().max(1.0) as u64;
        let next = SimTime::ZERO + SimDuration::from_ps(rng.exponential(gap_ps));
        QueryArrivals { gap_ps, next, hosts, fanin: cfg.query_fanin, rng, scratch: (0..hosts).collect() }
    }

    /// When the next query arrives.
    pub fn next_at(&self) -> SimTime {
        self.next
    }

    /// The next query; the one after it is drawn.
    pub fn take(&mut self) -> QuerySpec {
        let at = self.next;
        let aggregator = self.rng.below(u64::from(self.hosts)) as u32;
        // A partial Fisher–Yates shuffle of the other hosts draws the workers.
        let others = &mut self.scratch;
        let last = others.len() - 1;
        others.swap(aggregator as usize, last);
        for i in 0..self.fanin as usize {
            let j = i + self.rng.below((last - i) as u64) as usize;
            others.swap(i, j);
        }
        let workers = others[..self.fanin as usize].to_vec();
        others.sort_unstable();
        self.next = at + SimDuration::from_ps(self.rng.exponential(self.gap_ps));
        QuerySpec { at, aggregator, workers }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(load: f64, sizes: FlowSizes, hosts: u32) -> FlowArrivals {
        let cfg = TrafficConfig { load: Some(load), sizes, ..Default::default() };
        FlowArrivals::new(&cfg, &vec![BitRate::gbps(1); hosts as usize], 7)
    }

    /// Over 10^5 flows the bytes offered are `load` of the hosts' links,
    /// within 2 %, for each published distribution.
    #[test]
    fn the_realized_load_is_the_setting_within_two_percent() {
        for (_, which, _) in PUBLISHED {
            let mut a = flows(0.5, FlowSizes::Published(which), 16);
            let (mut bytes, mut last) = (0u64, SimTime::ZERO);
            for _ in 0..100_000 {
                let f = a.take();
                bytes += f.bytes;
                last = f.at;
            }
            let offered = bytes as f64 * 8.0 / (16.0 * 1e9 * last.since(SimTime::ZERO).as_secs_f64());
            // Data mining's heaviest 2 % reach 1 GB: its sum over 10^5 flows
            // wanders more, so its bound is wider (the KS test checks the sizes).
            let tol = if which == Published::DataMining { 0.10 } else { 0.02 };
            assert!((offered - 0.5).abs() <= tol * 0.5, "{which:?}: realized load {offered}");
        }
    }

    /// The sampled sizes pass a Kolmogorov–Smirnov test against their CDF at
    /// the 1 % level (critical value 1.628 / √n).
    #[test]
    fn sampled_sizes_match_the_cdf_kolmogorov_smirnov_at_one_percent() {
        let n = 20_000;
        for (_, which, _) in PUBLISHED {
            let mut a = flows(0.3, FlowSizes::Published(which), 8);
            let cdf = SizeCdf::published(which);
            let mut sizes: Vec<u64> = (0..n).map(|_| a.take().bytes).collect();
            sizes.sort_unstable();
            let d = sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let f = cdf.cdf(s as f64);
                    (f - i as f64 / n as f64).abs().max(((i + 1) as f64 / n as f64 - f).abs())
                })
                .fold(0.0, f64::max);
            // Sizes are whole bytes: allow the CDF's rise over one byte at the smallest sizes.
            let critical = 1.628 / (n as f64).sqrt() + 0.005;
            assert!(d < critical, "{which:?}: D = {d}, critical {critical}");
        }
    }

    #[test]
    fn all_to_all_never_sends_to_itself_and_a_permutation_keeps_partners() {
        let mut a = flows(0.5, FlowSizes::Published(Published::Hadoop), 5);
        assert!((0..1000).map(|_| a.take()).all(|f| f.src != f.dst && f.dst < 5));
        let cfg = TrafficConfig { load: Some(0.5), pattern: Pattern::Permutation, ..Default::default() };
        let mut p = FlowArrivals::new(&cfg, &[BitRate::gbps(1); 6], 3);
        let mut partner = [None; 6];
        for f in (0..1000).map(|_| p.take()) {
            assert_ne!(f.src, f.dst);
            assert_eq!(*partner[f.src as usize].get_or_insert(f.dst), f.dst);
        }
    }

    #[test]
    fn a_matrix_sends_only_where_it_has_weight() {
        let m = vec![vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 0.0], vec![3.0, 0.0, 0.0]];
        let cfg = TrafficConfig { load: Some(0.2), pattern: Pattern::Matrix(m), ..Default::default() };
        let mut a = FlowArrivals::new(&cfg, &[BitRate::gbps(1); 3], 1);
        let pairs: Vec<(u32, u32)> = (0..400).map(|_| a.take()).map(|f| (f.src, f.dst)).collect();
        assert!(pairs.iter().all(|p| *p == (0, 1) || *p == (2, 0)));
        let from_2 = pairs.iter().filter(|p| p.0 == 2).count();
        assert!((250..350).contains(&from_2), "{from_2} of 400 from host 2 (weight 3 of 4)");
    }

    #[test]
    fn a_query_draws_distinct_workers_other_than_its_aggregator() {
        let cfg = TrafficConfig { query_rate: 1000.0, query_fanin: 4, ..Default::default() };
        let mut q = QueryArrivals::new(&cfg, 6, 2);
        for _ in 0..200 {
            let s = q.take();
            let mut w = s.workers.clone();
            w.sort_unstable();
            w.dedup();
            assert_eq!(w.len(), 4);
            assert!(!w.contains(&s.aggregator) && w.iter().all(|&h| h < 6));
        }
    }

    #[test]
    fn bad_settings_are_refused_in_one_line() {
        let mut t = TrafficConfig::default();
        assert_eq!(
            t.read("load", &Json::from(1.0)).unwrap().unwrap_err(),
            "must be a number between 0 and 1 (exclusive), got 1.0 (or \"off\")"
        );
        let err = t.read("sizes", &Json::from("100 0.5\n50 1\n")).unwrap().unwrap_err();
        assert_eq!(err, "not monotone: size 50 after 100 at point 2");
        assert!(t.read("pattern", &Json::from("ring")).unwrap().unwrap_err().starts_with("must be \"all_to_all\""));
        let cfg = TrafficConfig { pattern: Pattern::Matrix(vec![vec![0.0, 1.0]]), ..Default::default() };
        assert_eq!(cfg.check_hosts(2).unwrap_err().1, "a matrix must be 2 × 2 (one row and column per host)");
    }
}
