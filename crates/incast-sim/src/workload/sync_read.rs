//! Barrier-synchronized reads (FAST08 §3, CMU09 §4).
//!
//! **Models:** a client reads a block striped over N servers. For each block
//! it writes a request of `request` bytes on every connection (in a fixed or
//! per-block shuffled order); a server that has received a whole request
//! writes its response (an SRU, or its share of a fixed block) after a
//! seeded random turnaround in `[0, server_jitter]`; the block completes when the last response byte reaches the client
//! application, and the client immediately starts the next block. Two
//! application-level mitigations used in production shape when requests
//! leave: `max_inflight` K asks only K servers at first and the next one as
//! each response completes, and `stagger` D holds the i-th request of a block
//! until i·D after its start.
//! **Deliberately different:** apart from the turnaround jitter, servers
//! answer instantly: "simulated source nodes serve data as rapidly as the
//! network can handle" (FAST08 §4.1). Set `server_jitter = 0` for exactly that.
//! With several clients (`workload::clients`) each client runs this loop on
//! its own connections, with its own block count and its own seeded request
//! order (client 0's is the single client's); the servers draw their
//! turnarounds from one seeded stream, in the order requests complete.
//! The requests are frames in the client's NIC queue, so the ACKs the
//! client sends after them wait behind them; with `request_path = "apart"`
//! they take their frame time on a link of their own (`net::topology`,
//! `Network::send_requests_apart`) and hold back no ACK, as the ns-2
//! harness's request, a delay, does.
//! **Not modelled:** disk or CPU time at the servers (so a server answering
//! several clients serves them in parallel, its uplink the only thing they
//! share), request pipelining across blocks.

use super::clients::{Layout, ServerSets, SERVER_SETS};
use crate::rng::Rng;
use crate::settings::{Choice, Count, Duration, Entry, OrWord, Setting, Size, Spec, Table};
use crate::time::{Bytes, SimDuration, SimTime};
use serde_json::{Map, Value as Json};

/// How much each server returns per block; its table keys are `sru` and
/// `block`, exactly one of them set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseSize {
    /// Fixed server request unit: every server returns this many bytes, so the
    /// block grows with the number of servers (FAST08 §3, default 256 KiB).
    Sru(Bytes),
    /// Fixed block: the servers share this many bytes, `block / servers` each;
    /// the first `block % servers` servers send one byte more (CMU09 §4, 1 MiB).
    Block(Bytes),
}

impl Default for ResponseSize {
    fn default() -> Self {
        ResponseSize::Sru(Bytes::kib(256))
    }
}

impl ResponseSize {
    /// Exactly one of `sru` and `block` may be given in a table.
    pub fn check_keys(raw: &Map<String, Json>) -> Result<(), String> {
        let given = |k: &str| raw.get(k).is_some_and(|v| !v.is_null());
        if given("sru") && given("block") {
            return Err("set either sru (bytes per server) or block (bytes per block), not both".into());
        }
        Ok(())
    }
}

impl Table for ResponseSize {
    fn read(&mut self, key: &str, raw: &Json) -> Option<Result<(), String>> {
        let size = Size { min: 1 };
        match key {
            "sru" | "block" if raw.is_null() => Some(Ok(())),
            "sru" => Some(size.parse(raw).map(|b| *self = ResponseSize::Sru(b))),
            "block" => Some(size.parse(raw).map(|b| *self = ResponseSize::Block(b))),
            _ => None,
        }
    }

    fn write(&self, out: &mut Vec<Entry>) {
        let size = Size { min: 1 };
        let (key, b) = match self {
            ResponseSize::Sru(b) => ("sru", b),
            ResponseSize::Block(b) => ("block", b),
        };
        out.push(Entry { key, toml: size.toml(b), si: size.si(b) });
    }

    fn describe(out: &mut Vec<Setting>) {
        let size = Size { min: 1 };
        out.push(Setting {
            key: "sru",
            kind: "size",
            default: Json::String("256KiB".into()),
            allowed: size.allowed(),
            none: None,
            doc: "Fixed server request unit: bytes every server returns per block (the default).".into(),
        });
        out.push(Setting {
            key: "block",
            kind: "size",
            default: Json::Null,
            allowed: size.allowed(),
            none: None,
            doc: "Fixed block: bytes the servers share per block, block/servers each (instead of sru).".into(),
        });
    }
}

/// In which order the client sends its per-block requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestOrder {
    /// Server 0 first, every block.
    Fixed,
    /// A fresh seeded permutation each block, so that no server is always the
    /// last to be asked (and the first to lose at a full buffer).
    Shuffled,
}

/// Where the client's requests wait for the client's link (`workload.request_path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestPath {
    /// In the NIC's queue with everything else the client sends, its ACKs too.
    Link,
    /// On a link of their own beside the client's: each takes a frame's time
    /// after the one before it, and no ACK waits behind them.
    Apart,
}

/// The workloads there are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorkloadKind {
    /// Barrier-synchronized reads.
    #[default]
    SyncRead,
    /// No reads: the hosts stay, for open-loop traffic (`workload::traffic`) alone.
    None,
}

crate::settings! {
    /// Barrier-synchronized reads (FAST08 §3, CMU09 §4).
    ///
    /// Default values: 256 KiB SRU (FAST08 Table 1), `request` 100 bytes,
    /// `order` shuffled, `server_jitter` 10 µs; no application-level mitigation
    /// (`max_inflight` all: every server is asked at once; `stagger` 0); one
    /// client (`clients` 1, `server_sets` shared); `priority` 0 (best effort).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct SyncReadConfig {
        /// The workload: synchronized reads ("sync_read"), or "none" (the
        /// clients and servers stay as hosts of the open-loop traffic, `[traffic]`).
        "kind" kind: WorkloadKind = WorkloadKind::SyncRead,
            Choice(&[("sync_read", WorkloadKind::SyncRead), ("none", WorkloadKind::None)]);
        /// Bytes of the request the client sends each server per block.
        "request" request: Bytes = Bytes::new(100), Size { min: 1 };
        /// Order of the requests within a block: "shuffled" (a seeded permutation per block) or "fixed".
        "order" order: RequestOrder = RequestOrder::Shuffled,
            Choice(&[("shuffled", RequestOrder::Shuffled), ("fixed", RequestOrder::Fixed)]);
        /// Each server starts its response a delay drawn uniformly from
        /// `[0, server_jitter]` after the whole request has arrived (its
        /// turnaround: OS scheduling, copying into the socket). Without it,
        /// identical servers on identical links stay phase-locked at a drop-tail
        /// queue and the same flow loses every burst, block after block: the
        /// phase effect of Floyd and Jacobson (1992) that ns-2 users break with
        /// random per-packet overhead and CMU09 §3 with a random timer delay.
        "server_jitter" server_jitter: SimDuration = SimDuration::from_micros(10), Duration::ANY;
        /// At most this many servers answer at once; the client asks the next
        /// server (in request order) as each response completes (Panasas stripes
        /// over about 10 servers; Facebook's memcache clients limit outstanding
        /// requests). "all" asks every server at once.
        "max_inflight" max_inflight: Option<u32> = None,
            OrWord { word: "all", spec: Count::new(1, u32::MAX as u64, "servers"), what: "a count" };
        /// The i-th request of a block (0-based, in request order) leaves
        /// `i × stagger` after the block starts, or later if `max_inflight`
        /// holds it back.
        "stagger" stagger: SimDuration = SimDuration::ZERO, Duration::ANY;
        /// Where the requests wait for the client's link: "link" (in its NIC's
        /// queue, ahead of the ACKs sent after them) or "apart" (on a link of
        /// their own beside it: each still takes a frame's time, but no ACK
        /// waits behind them, as the ns-2 harness's request is a delay).
        "request_path" request_path: RequestPath = RequestPath::Link,
            Choice(&[("link", RequestPath::Link), ("apart", RequestPath::Apart)]);
        /// IEEE 802.1p priority (0-7) of the reads' frames, requests and ACKs included (`net::pfc`).
        "priority" priority: u8 = 0, Count::new(0, 7, "");
        /// Clients reading at once, each its own barrier-synchronized block loop
        /// from time zero (`workload::clients`); the other settings apply to each.
        "clients" clients: u32 = 1, Count::new(1, super::clients::MAX_CLIENTS as u64, "clients");
        /// "shared": every client reads from the same servers; "disjoint": each
        /// client from a group of its own (clients × servers server hosts).
        "server_sets" server_sets: ServerSets = ServerSets::Shared, SERVER_SETS;
    }
    flatten {
        /// Bytes each server returns per block (`sru`), or the block they share (`block`).
        response: ResponseSize,
    }
}

/// A response the server of `flow` writes `after` the request completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// Bytes to write.
    pub bytes: u64,
    /// Turnaround delay before writing them.
    pub after: SimDuration,
}

/// A request the client writes on `flow` at `at` (now, or later: the caller schedules it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// Connection to write the request on.
    pub flow: u32,
    /// When to write it.
    pub at: SimTime,
}

/// A block that just completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockDone {
    /// The client that read it.
    pub client: u32,
    /// Block number, 0-based.
    pub block: u64,
    /// When its first request was written.
    pub started: SimTime,
    /// From the first request to the last response byte.
    pub duration: SimDuration,
}

/// What a delivery to the client means for the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Nothing to do yet.
    Waiting,
    /// A response completed and `max_inflight` lets the next request go.
    Release(Release),
    /// The block completed.
    Done(BlockDone),
}

/// One client's block loop.
struct Reader {
    /// Flows whose response for the current block is incomplete.
    pending: u32,
    /// The client's connections in this block's request order.
    order: Vec<u32>,
    shuffle: Option<Rng>,
    block: u64,
    started: SimTime,
    /// Requests of the current block released so far (an index into `order`).
    released: usize,
    /// The requests released at the start of the current block.
    first: Vec<Release>,
}

/// State of the synchronized-read application on every client and server.
/// Flows are the reading connections, numbered as [`Layout`] says.
pub struct SyncRead {
    request: u64,
    /// Servers each client reads from.
    servers: u32,
    /// Response bytes per block of each client's `j`-th server.
    response: Vec<u64>,
    /// Requests each flow's server has answered so far.
    served: Vec<u64>,
    /// Cumulative response bytes each flow must have delivered to finish its client's current block.
    target: Vec<u64>,
    jitter: SimDuration,
    jitter_rng: Rng,
    /// Most servers answering a client at once (`u32::MAX`: all).
    max_inflight: u32,
    stagger: SimDuration,
    readers: Vec<Reader>,
}

/// The request-order substream of client `c`: client 0 keeps the single client's.
fn order_stream(c: u32) -> String {
    if c == 0 {
        "request_order".into()
    } else {
        format!("request_order/{c}")
    }
}

impl SyncRead {
    /// The application `cfg` on the connections of `reads`, whose server `j`
    /// returns `response[j]` bytes per block of its client; the turnarounds
    /// and request orders draw from substreams of `seed`. No block has started.
    pub fn new(cfg: &SyncReadConfig, reads: Layout, response: Vec<u64>, seed: u64) -> Self {
        let Layout { clients, servers: n, .. } = reads;
        debug_assert_eq!(response.len(), n as usize, "one response size per server of a client");
        let flows = (clients * n) as usize;
        let shuffled = cfg.order == RequestOrder::Shuffled;
        SyncRead {
            request: cfg.request.0,
            servers: n,
            response,
            served: vec![0; flows],
            target: vec![0; flows],
            jitter: cfg.server_jitter,
            jitter_rng: Rng::substream(seed, "server_jitter"),
            max_inflight: cfg.max_inflight.unwrap_or(u32::MAX),
            stagger: cfg.stagger,
            readers: (0..clients)
                .map(|c| Reader {
                    pending: 0,
                    order: (c * n..(c + 1) * n).collect(),
                    shuffle: shuffled.then(|| Rng::substream(seed, &order_stream(c))),
                    block: 0,
                    started: SimTime::ZERO,
                    released: 0,
                    first: Vec::with_capacity(n as usize),
                })
                .collect(),
        }
    }

    /// Client `c` releases the next request of its block in order, no earlier than `now`.
    fn release_next(&mut self, c: usize, now: SimTime) -> Release {
        let r = &mut self.readers[c];
        let i = r.released;
        r.released += 1;
        let at = (r.started + self.stagger.saturating_mul(i as u64)).max(now);
        Release { flow: r.order[i], at }
    }

    /// Client `client` starts its next block at `now`: returns the requests
    /// to write (in order, each at its release time) and the request size;
    /// more follow from [`SyncRead::on_client_delivered`] when
    /// `max_inflight` holds some back.
    pub fn start_block(&mut self, client: u32, now: SimTime) -> (&[Release], u64) {
        let c = client as usize;
        let n = self.servers as usize;
        let r = &mut self.readers[c];
        debug_assert_eq!(r.pending, 0, "a block starts only after the previous one completed");
        r.started = now;
        r.pending = self.servers;
        for (t, b) in self.target[c * n..(c + 1) * n].iter_mut().zip(&self.response) {
            *t += b;
        }
        if let Some(rng) = &mut r.shuffle {
            rng.shuffle(&mut r.order);
        }
        r.released = 0;
        let mut first = std::mem::take(&mut r.first);
        first.clear();
        for _ in 0..n.min(self.max_inflight as usize) {
            first.push(self.release_next(c, now));
        }
        self.readers[c].first = first;
        (&self.readers[c].first, self.request)
    }

    /// The server of `flow` has now received `delivered` request bytes in
    /// total: returns the response to write, if a request just completed.
    pub fn on_server_delivered(&mut self, flow: u32, delivered: u64) -> Option<Response> {
        let f = flow as usize;
        let complete = delivered / self.request;
        let new = complete.saturating_sub(self.served[f]);
        if new == 0 {
            return None;
        }
        self.served[f] += new;
        let after = match self.jitter.as_ps() {
            0 => SimDuration::ZERO,
            j => SimDuration::from_ps(self.jitter_rng.below(j + 1)),
        };
        Some(Response { bytes: new * self.response[(flow % self.servers) as usize], after })
    }

    /// The client of `flow` has now received `delivered` response bytes on it
    /// in total (`before` until this delivery): the completed block if this
    /// was its last byte, or the next request to release if a response
    /// completed while `max_inflight` held requests back.
    // Inline: the common case (a response not yet complete) returns at once;
    // the rest is out of line.
    #[inline]
    pub fn on_client_delivered(&mut self, now: SimTime, flow: u32, delivered: u64, before: u64) -> Progress {
        let target = self.target[flow as usize];
        debug_assert!(delivered <= target, "flow {flow} delivered beyond what was requested");
        if before >= target || delivered < target {
            return Progress::Waiting;
        }
        self.on_response_complete(now, flow)
    }

    /// The response on `flow` is complete: [`SyncRead::on_client_delivered`]'s
    /// block or request to release.
    #[inline(never)]
    fn on_response_complete(&mut self, now: SimTime, flow: u32) -> Progress {
        let c = (flow / self.servers) as usize;
        let r = &mut self.readers[c];
        r.pending -= 1;
        if r.pending > 0 {
            return if r.released < r.order.len() {
                Progress::Release(self.release_next(c, now))
            } else {
                Progress::Waiting
            };
        }
        let done = BlockDone { client: c as u32, block: r.block, started: r.started, duration: now.since(r.started) };
        r.block += 1;
        Progress::Done(done)
    }

    /// Blocks client `client` has completed so far.
    pub fn blocks_completed(&self, client: u32) -> u64 {
        self.readers[client as usize].block
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Bytes;

    /// `cfg` for `clients` clients of `servers` servers each, every server returning 1000 bytes.
    fn with(cfg: SyncReadConfig, clients: u32, servers: u32) -> SyncRead {
        let reads = Layout { clients, ..Layout::one_client(servers) };
        SyncRead::new(&cfg, reads, vec![1000; servers as usize], 0)
    }

    /// Fixed order, no jitter, 10-byte requests.
    fn fixed() -> SyncReadConfig {
        SyncReadConfig {
            request: Bytes::new(10),
            order: RequestOrder::Fixed,
            server_jitter: SimDuration::ZERO,
            ..SyncReadConfig::default()
        }
    }

    fn app(servers: u32) -> SyncRead {
        with(fixed(), 1, servers)
    }

    /// A server answers once per whole request, never for a partial one.
    #[test]
    fn server_answers_each_complete_request_once() {
        let mut a = app(2);
        a.start_block(0, SimTime::ZERO);
        assert_eq!(a.on_server_delivered(1, 5), None);
        assert_eq!(a.on_server_delivered(1, 10), Some(Response { bytes: 1000, after: SimDuration::ZERO }));
        assert_eq!(a.on_server_delivered(1, 10), None);
    }

    /// Turnaround delays are drawn from [0, server_jitter] and differ between requests.
    #[test]
    fn turnaround_is_drawn_within_the_jitter() {
        let cfg = SyncReadConfig {
            request: Bytes::new(1),
            server_jitter: SimDuration::from_micros(10),
            ..SyncReadConfig::default()
        };
        let mut a = with(cfg, 1, 1);
        let delays: Vec<u64> = (1..=50).map(|d| a.on_server_delivered(0, d).unwrap().after.as_ps()).collect();
        assert!(delays.iter().all(|&d| d <= 10_000_000));
        assert!(delays.windows(2).any(|w| w[0] != w[1]));
    }

    /// The block completes on the last byte of the slowest flow, not before.
    #[test]
    fn block_completes_when_every_response_has_arrived() {
        let mut a = app(2);
        a.start_block(0, SimTime(5));
        assert_eq!(a.on_client_delivered(SimTime(10), 0, 1000, 0), Progress::Waiting);
        assert_eq!(a.on_client_delivered(SimTime(20), 1, 600, 0), Progress::Waiting);
        let done = a.on_client_delivered(SimTime(30), 1, 1000, 600);
        assert_eq!(
            done,
            Progress::Done(BlockDone { client: 0, block: 0, started: SimTime(5), duration: SimDuration(25) })
        );
        let (first, req) = a.start_block(0, SimTime(30));
        let flows: Vec<u32> = first.iter().map(|r| r.flow).collect();
        assert_eq!((flows, req), (vec![0, 1], 10));
        assert_eq!(
            a.on_client_delivered(SimTime(40), 0, 2000, 1000),
            Progress::Waiting,
            "second block needs both flows again"
        );
    }

    /// Application-level mitigations: `max_inflight` 2 asks two servers and
    /// the next one as each response completes; `stagger` spaces the requests.
    #[test]
    fn max_inflight_and_stagger_release_requests_in_order() {
        let cfg = SyncReadConfig { max_inflight: Some(2), stagger: SimDuration(100), ..fixed() };
        let mut a = with(cfg, 1, 4);
        let (first, _) = a.start_block(0, SimTime(1000));
        assert_eq!(first, &[Release { flow: 0, at: SimTime(1000) }, Release { flow: 1, at: SimTime(1100) }]);
        // Flow 1 finishes first, early: flow 2 may leave at its stagger slot, 1200.
        assert_eq!(
            a.on_client_delivered(SimTime(1150), 1, 1000, 0),
            Progress::Release(Release { flow: 2, at: SimTime(1200) })
        );
        // Flow 0 finishes late: flow 3 leaves at once.
        assert_eq!(
            a.on_client_delivered(SimTime(5000), 0, 1000, 0),
            Progress::Release(Release { flow: 3, at: SimTime(5000) })
        );
        assert_eq!(a.on_client_delivered(SimTime(6000), 2, 1000, 0), Progress::Waiting);
        assert!(matches!(a.on_client_delivered(SimTime(7000), 3, 1000, 0), Progress::Done(_)));
    }

    /// Two clients run their block loops apart: one client's completed
    /// responses neither complete nor release anything of the other's block.
    #[test]
    fn each_client_completes_its_own_blocks() {
        let mut a = with(fixed(), 2, 2);
        let flows = |a: &mut SyncRead, c| a.start_block(c, SimTime(0)).0.iter().map(|r| r.flow).collect::<Vec<_>>();
        assert_eq!(flows(&mut a, 0), vec![0, 1]);
        assert_eq!(flows(&mut a, 1), vec![2, 3]);
        assert_eq!(a.on_client_delivered(SimTime(10), 2, 1000, 0), Progress::Waiting);
        assert_eq!(a.on_client_delivered(SimTime(20), 0, 1000, 0), Progress::Waiting);
        let done = a.on_client_delivered(SimTime(30), 3, 1000, 0);
        assert_eq!(
            done,
            Progress::Done(BlockDone { client: 1, block: 0, started: SimTime(0), duration: SimDuration(30) })
        );
        assert_eq!((a.blocks_completed(0), a.blocks_completed(1)), (0, 1));
    }
}
