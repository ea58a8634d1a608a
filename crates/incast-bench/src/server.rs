//! The server side: answers every request with exactly the bytes it asked for.
//!
//! One thread accepts (readiness-polled, so a stop request is noticed within
//! [`POLL_INTERVAL`]); each connection gets a thread doing blocking I/O, which
//! is what a storage server's worker does and keeps every response on the
//! kernel's fast path. Every response is written from one static buffer of
//! zeros ([`CHUNK`] bytes, in the binary's zero-initialized data): no request
//! allocates.
//!
//! Whatever clients do, the server keeps serving the others:
//!
//! - At most `max_connections` connections are open, each holding one thread
//!   and one descriptor; one accepted past that is sent a [`Refusal`] saying
//!   so and closed at once.
//! - A connection that has not sent a whole request header within
//!   `idle_timeout` of being accepted or of its previous answer, and one
//!   whose client takes none of an answer's bytes for that long, are closed
//!   (socket read and write timeouts), so no client holds a thread longer.
//! - An accept that fails (out of descriptors, out of memory) is retried
//!   after a back-off of 10 ms doubling to 1 s; nothing that goes wrong with
//!   one connection (its socket options, its thread) ends the server.
//! - A request the server cannot accept (bad magic, version or flags, a count
//!   above `max_response`) is answered with a [`Refusal`] naming the field,
//!   then its connection is closed.
//!
//! Log lines are rate-limited per kind ([`LOG_WINDOW`]): one line a window
//! for accept errors and for refused connections, [`CONNECTION_LINES`] a
//! window for the lines about single connections (rejected requests, idle
//! timeouts, failed writes); the next line logged says how many were left
//! out, and so does the last line before shutdown. On stop the server closes
//! the listener, shuts every connection down, waits for their threads and
//! logs one line, which counts the segments the server's connections
//! retransmitted.

use crate::config::{invalid, seconds_or_max, ConfigError, MAX_TIMEOUT};
use crate::protocol::{Refusal, Request, HEADER_LEN};
use crate::sockopt::SocketOptions;
use crate::tcp_info::TcpInfo;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, SockRef, Socket, Type};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Size of the shared response buffer: one `write` hands the kernel at most this much.
pub const CHUNK: usize = 256 * 1024;
/// The payload of every response, shared by every connection.
static PAYLOAD: [u8; CHUNK] = [0; CHUNK];
/// How long the accept loop waits before it asks whether to stop.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The default of [`ServerConfig::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// The largest [`ServerConfig::max_connections`] accepted (one thread each).
pub const MAX_CONNECTIONS: usize = 65_536;
/// The default of [`ServerConfig::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The window of the log's rate limits.
pub const LOG_WINDOW: Duration = Duration::from_secs(5);
/// Lines about single connections logged per [`LOG_WINDOW`] at most.
pub const CONNECTION_LINES: u32 = 10;
/// First and last delay before an accept that failed is tried again.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(1));
/// Connections accepted in a row before the loop asks again whether to stop.
const ACCEPT_BATCH: usize = 256;
/// Stack of a connection's thread: it holds a 24-byte header and formats a log line.
const WORKER_STACK: usize = 256 * 1024;

/// Where the server's log lines go (one line per call, no newline).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// Server settings.
///
/// Default values: `max_response` 64 MiB, `max_connections`
/// [`DEFAULT_MAX_CONNECTIONS`], `idle_timeout` [`DEFAULT_IDLE_TIMEOUT`],
/// socket options as [`SocketOptions::default`] (`TCP_NODELAY` on, so a
/// response's last short segment leaves at once). As JSON, `idle_timeout` is
/// a number of seconds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Largest byte count a request may ask for; a larger request is refused
    /// (with a [`Refusal`] saying so) and its connection closed.
    pub max_response: u64,
    /// Connections served at once, each by one thread holding one descriptor
    /// (from 1 to [`MAX_CONNECTIONS`]); a connection accepted past this is sent
    /// a [`Refusal`] and closed. Keep it below the open-file limit (`ulimit -n`).
    pub max_connections: usize,
    /// A connection is closed when it has not sent a whole request header
    /// within this time of being accepted or of its previous answer, or when
    /// its client takes none of an answer's bytes for this long (more than 0,
    /// at most one day).
    #[serde(deserialize_with = "seconds_or_max")]
    pub idle_timeout: Duration,
    /// Options set on the listening socket (buffers, so the handshake can scale
    /// the window) and on every accepted connection.
    pub socket: SocketOptions,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_response: 64 << 20,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            socket: SocketOptions::default(),
        }
    }
}

impl ServerConfig {
    /// Check every setting; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_CONNECTIONS).contains(&self.max_connections) {
            let why = format!("{} is not from 1 to {MAX_CONNECTIONS}", self.max_connections);
            return Err(invalid("max_connections", why));
        }
        if self.idle_timeout.is_zero() || self.idle_timeout > MAX_TIMEOUT {
            return Err(invalid("idle_timeout", "must be more than 0 and at most one day"));
        }
        self.socket.validate()
    }
}

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
}

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
    bytes: AtomicU64,
    rejected: AtomicU64,
    refused: AtomicU64,
    timed_out: AtomicU64,
    accept_errors: AtomicU64,
    retransmitted_segments: AtomicU64,
    rtt_samples: AtomicU64,
    rtt_us_sum: AtomicU64,
    rttvar_us_sum: AtomicU64,
    rto_us_sum: AtomicU64,
    rto_us_max: AtomicU64,
}

impl Counters {
    /// Take the kernel's RTT and RTO of `stream` as a request arrives on it.
    fn sample_rtt(&self, stream: &TcpStream) {
        if let Ok(info) = TcpInfo::of(stream) {
            self.rtt_samples.fetch_add(1, Ordering::Relaxed);
            self.rtt_us_sum.fetch_add(u64::from(info.rtt_us), Ordering::Relaxed);
            self.rttvar_us_sum.fetch_add(u64::from(info.rttvar_us), Ordering::Relaxed);
            self.rto_us_sum.fetch_add(u64::from(info.rto_us), Ordering::Relaxed);
            self.rto_us_max.fetch_max(u64::from(info.rto_us), Ordering::Relaxed);
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
        }
    }
}

/// A rate limit on one kind of log line: at most `lines` per `window`; the
/// first line after some were dropped says how many.
#[derive(Debug)]
struct Throttle {
    window: Duration,
    lines: u32,
    started: Option<Instant>,
    used: u32,
    dropped: u64,
}

impl Throttle {
    fn new(window: Duration, lines: u32) -> Throttle {
        Throttle { window, lines, started: None, used: 0, dropped: 0 }
    }

    /// `line` as it should be logged at `now`, or `None` when over the limit.
    fn admit(&mut self, now: Instant, line: &str) -> Option<String> {
        let window_over = match self.started {
            Some(t) => now.duration_since(t) >= self.window,
            None => true,
        };
        if window_over {
            (self.started, self.used) = (Some(now), 0);
        }
        if self.used >= self.lines {
            self.dropped += 1;
            return None;
        }
        self.used += 1;
        Some(match std::mem::take(&mut self.dropped) {
            0 => line.to_owned(),
            n => format!("{line} ({n} similar lines not logged before this one)"),
        })
    }
}

/// Lock `mutex` even if a thread panicked while holding it: what it guards
/// (a list of streams, a rate limit) stays usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A bound server, ready to [`run`](Server::run).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    config: ServerConfig,
    log: Log,
}

impl Server {
    /// Bind to `addr` (port 0 picks a free port) with `SO_REUSEADDR`, so a
    /// restarted server binds while old connections linger in TIME_WAIT.
    /// Settings that [`ServerConfig::validate`] or the kernel refuses are an
    /// `InvalidInput` error naming the field.
    pub fn bind(addr: SocketAddr, config: ServerConfig) -> io::Result<Server> {
        config.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        config.socket.apply(&socket)?;
        socket.bind(&addr.into())?;
        socket.listen(1024)?;
        socket.set_nonblocking(true)?;
        let std_listener: std::net::TcpListener = socket.into();
        let addr = std_listener.local_addr()?;
        let log: Log = Arc::new(|line: &str| eprintln!("{line}"));
        Ok(Server { listener: TcpListener::from_std(std_listener), addr, config, log })
    }

    /// Send log lines to `log` instead of standard error.
    pub fn with_log(mut self, log: Log) -> Server {
        self.log = log;
        self
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve until `should_stop` (asked every [`POLL_INTERVAL`]) returns true,
    /// then close every connection and return what was served.
    pub fn run(self, should_stop: &mut dyn FnMut() -> bool) -> io::Result<ServeSummary> {
        self.announce();
        self.serve(should_stop)
    }

    /// Run on a background thread until [`RunningServer::stop`]. The
    /// "listening" line is logged before this returns; an error means the
    /// thread could not be started.
    pub fn spawn(self) -> io::Result<RunningServer> {
        self.announce();
        let addr = self.addr;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("incast-serve".into())
            .spawn(move || self.serve(&mut || flag.load(Ordering::Relaxed)))?;
        Ok(RunningServer { addr, stop, thread: Some(thread) })
    }

    fn announce(&self) {
        let c = &self.config;
        (self.log)(&format!(
            "listening on {}, max response {} bytes, max connections {}, idle timeout {:?}",
            self.addr, c.max_response, c.max_connections, c.idle_timeout
        ));
        if let Some(warning) = descriptor_warning(c.max_connections) {
            (self.log)(&warning);
        }
    }

    fn serve(mut self, should_stop: &mut dyn FnMut() -> bool) -> io::Result<ServeSummary> {
        let mut poll = Poll::new()?;
        poll.registry().register(&mut self.listener, Token(0), Interest::READABLE)?;
        let mut events = Events::with_capacity(16);
        let shared = Arc::new(Shared {
            counters: Counters::default(),
            open: Mutex::new(Vec::new()),
            log: self.log.clone(),
            connection_log: Mutex::new(Throttle::new(LOG_WINDOW, CONNECTION_LINES)),
        });
        let mut accept = Acceptor {
            config: &self.config,
            shared: &shared,
            workers: Vec::new(),
            next_id: 0,
            error_log: Throttle::new(LOG_WINDOW, 1),
            refusal_log: Throttle::new(LOG_WINDOW, 1),
            backoff: Duration::ZERO,
            retry_at: None,
        };
        while !should_stop() {
            let wait = accept.retry_at.map_or(POLL_INTERVAL, |t| t.saturating_duration_since(Instant::now()));
            match poll.poll(&mut events, Some(wait.min(POLL_INTERVAL))) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            }
            // Tried after every wake, event or not: the listener is edge-triggered,
            // and connections left in the backlog by a failed accept raise no new event.
            accept.drain(&self.listener);
        }
        drop(self.listener);
        for (_, stream) in lock(&shared.open).iter() {
            let _ = stream.shutdown(Shutdown::Both); // already closed by the peer: nothing to do
        }
        for worker in std::mem::take(&mut accept.workers) {
            let _ = worker.join(); // a worker only returns; a panic there was already printed
        }
        let not_logged = [
            ("accept error", accept.error_log.dropped),
            ("refused connection", accept.refusal_log.dropped),
            ("connection", lock(&shared.connection_log).dropped),
        ];
        let not_logged: Vec<String> =
            not_logged.iter().filter(|(_, n)| *n > 0).map(|(kind, n)| format!("{n} {kind} lines")).collect();
        if !not_logged.is_empty() {
            (self.log)(&format!("rate limit: {} not logged", not_logged.join(", ")));
        }
        let c = &shared.counters;
        let summary = ServeSummary {
            connections: c.connections.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
            timed_out: c.timed_out.load(Ordering::Relaxed),
            accept_errors: c.accept_errors.load(Ordering::Relaxed),
            retransmitted_segments: c.retransmitted_segments.load(Ordering::Relaxed),
            rtt: c.rtt(),
        };
        (self.log)(&format!(
            "shutdown: {} connections, {} requests, {} bytes served, {} connections rejected, {} refused (too many \
             open), {} closed idle, {} accept errors, {} segments retransmitted; kernel RTT {} us, RTTVAR {} us \
             and RTO {} us on average (RTO at most {} us) over {} requests after a connection's first",
            summary.connections,
            summary.requests,
            summary.bytes,
            summary.rejected,
            summary.refused,
            summary.timed_out,
            summary.accept_errors,
            summary.retransmitted_segments,
            summary.rtt.rtt_us_mean,
            summary.rtt.rttvar_us_mean,
            summary.rtt.rto_us_mean,
            summary.rtt.rto_us_max,
            summary.rtt.samples
        ));
        Ok(summary)
    }
}

/// A warning when `max_connections` connections would not fit in the
/// open-file limit (`/proc/self/limits`) beside the descriptors open now.
fn descriptor_warning(max_connections: usize) -> Option<String> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft: usize = line.split_whitespace().nth(3)?.parse().ok()?;
    let open_now = std::fs::read_dir("/proc/self/fd").ok()?.count();
    // One descriptor per connection, one more for a connection being refused, and a few spare.
    let room = soft.saturating_sub(open_now + 8);
    (max_connections > room).then(|| {
        format!(
            "warning: max connections {max_connections} is more than the open-file limit ({soft}, ulimit -n) leaves \
             room for ({room}); past that, accepts fail and are retried until connections close"
        )
    })
}

/// The accept loop's state.
struct Acceptor<'a> {
    config: &'a ServerConfig,
    shared: &'a Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    next_id: u64,
    error_log: Throttle,
    refusal_log: Throttle,
    /// The delay before the next try after a failed accept (zero after a success).
    backoff: Duration,
    /// When to try again after a failed accept; `None` when not backing off.
    retry_at: Option<Instant>,
}

impl Acceptor<'_> {
    /// Accept what the backlog holds, unless backing off.
    fn drain(&mut self, listener: &TcpListener) {
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        for _ in 0..ACCEPT_BATCH {
            match listener.accept() {
                Ok((stream, peer)) => {
                    self.backoff = Duration::ZERO;
                    self.admit(stream.into(), peer);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // Reset by its client before the accept: nothing to serve.
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted) => {}
                // Out of descriptors or memory: they free up as connections close.
                Err(e) => {
                    self.backoff = (self.backoff * 2).clamp(BACKOFF.0, BACKOFF.1);
                    let now = Instant::now();
                    self.retry_at = Some(now + self.backoff);
                    self.shared.counters.accept_errors.fetch_add(1, Ordering::Relaxed);
                    let line = format!("accept: {e}; retrying in {:?}", self.backoff);
                    if let Some(line) = self.error_log.admit(now, &line) {
                        (self.shared.log)(&line);
                    }
                    return;
                }
            }
        }
        self.retry_at = Some(Instant::now()); // more may wait: go on after asking whether to stop
    }

    /// Serve a new connection on its own thread, or refuse it when the server is full.
    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) {
        let shared = self.shared;
        let max = self.config.max_connections;
        if lock(&shared.open).len() >= max {
            shared.counters.refused.fetch_add(1, Ordering::Relaxed);
            let reason = format!("too many connections: {max} open, the server's maximum (max_connections)");
            // Best effort: the socket is still non-blocking, and its send buffer is empty.
            let _ = (&stream).write(&Refusal::new(&reason).encode());
            drop(stream);
            if let Some(line) = self.refusal_log.admit(Instant::now(), &format!("{peer}: refused: {reason}")) {
                (shared.log)(&line);
            }
            return;
        }
        let idle = Some(self.config.idle_timeout);
        let setup = stream
            .set_nonblocking(false)
            .and_then(|()| self.config.socket.apply(&SockRef::from(&stream)))
            .and_then(|()| stream.set_read_timeout(idle))
            .and_then(|()| stream.set_write_timeout(idle));
        if let Err(e) = setup {
            shared.connection_line(&format!("{peer}: cannot set up the connection: {e}; connection closed"));
            return;
        }
        self.next_id += 1;
        let id = self.next_id;
        let stream = Arc::new(stream);
        lock(&shared.open).push((id, stream.clone()));
        shared.counters.connections.fetch_add(1, Ordering::Relaxed);
        let worker =
            Worker { id, peer, max: self.config.max_response, idle: self.config.idle_timeout, shared: shared.clone() };
        self.workers.retain(|w| !w.is_finished());
        let spawned = std::thread::Builder::new()
            .name(format!("incast-conn-{id}"))
            .stack_size(WORKER_STACK)
            .spawn(move || worker.serve(&stream));
        match spawned {
            Ok(handle) => self.workers.push(handle),
            // The closure, its worker and its stream are dropped: only the list holds the connection now.
            Err(e) => {
                shared.forget(id);
                shared.connection_line(&format!("{peer}: cannot start a thread for the connection: {e}; closed"));
            }
        }
    }
}

/// State the accept loop shares with the connection threads.
struct Shared {
    counters: Counters,
    /// Every open connection: how many there are, and a handle to shut them down on stop.
    open: Mutex<Vec<(u64, Arc<TcpStream>)>>,
    log: Log,
    /// The rate limit of the lines about single connections.
    connection_log: Mutex<Throttle>,
}

impl Shared {
    /// Log a line about one connection, within the rate limit.
    fn connection_line(&self, line: &str) {
        let admitted = lock(&self.connection_log).admit(Instant::now(), line);
        if let Some(line) = admitted {
            (self.log)(&line);
        }
    }

    /// Take connection `id` off the list of open ones.
    fn forget(&self, id: u64) {
        lock(&self.open).retain(|(i, _)| *i != id);
    }
}

/// One connection's thread.
struct Worker {
    id: u64,
    peer: SocketAddr,
    max: u64,
    idle: Duration,
    shared: Arc<Shared>,
}

/// Takes a connection off the list when its thread ends, even by a panic.
struct Forget<'a>(&'a Shared, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

impl Worker {
    fn serve(self, stream: &TcpStream) {
        let _forget = Forget(&self.shared, self.id);
        if let Some(reason) = self.answer_requests(stream) {
            self.shared.connection_line(&format!("{}: {reason}; connection closed", self.peer));
        }
        if let Ok(info) = TcpInfo::of(stream) {
            let retransmitted = u64::from(info.total_retrans);
            self.shared.counters.retransmitted_segments.fetch_add(retransmitted, Ordering::Relaxed);
        }
    }

    /// Answer requests until the peer closes (`None`) or something goes wrong (the reason).
    fn answer_requests(&self, stream: &TcpStream) -> Option<String> {
        let counters = &self.shared.counters;
        let mut header = [0u8; HEADER_LEN];
        let mut source = TimedStream { stream, timeout: self.idle };
        let mut answered = 0u64;
        loop {
            match read_header(&mut source, &mut header, self.idle) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    if e.timed_out {
                        counters.timed_out.fetch_add(1, Ordering::Relaxed);
                    }
                    return Some(e.reason);
                }
            }
            let request = match Request::decode(&header, self.max) {
                Ok(r) => r,
                Err(e) => {
                    counters.rejected.fetch_add(1, Ordering::Relaxed);
                    // Tell the client why, then close: a refusal in place of the answer.
                    let mut writer = stream;
                    let _ = writer.write_all(&Refusal::new(&e.to_string()).encode());
                    let _ = stream.shutdown(Shutdown::Write);
                    return Some(format!("rejected request: {e}"));
                }
            };
            if answered > 0 {
                counters.sample_rtt(stream);
            }
            answered += 1;
            let mut left = request.count;
            let mut writer = stream;
            while left > 0 {
                let n = left.min(CHUNK as u64) as usize;
                if let Err(e) = writer.write_all(&PAYLOAD[..n]) {
                    let done = request.count - left;
                    let (block, count) = (request.block, request.count);
                    if is_timeout(&e) {
                        counters.timed_out.fetch_add(1, Ordering::Relaxed);
                        return Some(format!(
                            "block {block}: the client took none of the answer for {:?} (idle timeout) after {done} \
                             of {count} bytes",
                            self.idle
                        ));
                    }
                    return Some(format!("block {block}: write failed after {done} of {count} bytes: {e}"));
                }
                left -= n as u64;
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            counters.requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A socket read or write timeout (`SO_RCVTIMEO`, `SO_SNDTIMEO`) ran out.
fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// Where request headers come from: a reader whose reads give up after a timeout.
trait HeaderSource: Read {
    /// Make the next reads give up after `timeout` (more than zero).
    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()>;
}

/// A connection's stream, remembering its read timeout so that setting the
/// same one again costs no system call.
struct TimedStream<'a> {
    stream: &'a TcpStream,
    timeout: Duration,
}

impl Read for TimedStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.read(buf)
    }
}

impl HeaderSource for TimedStream<'_> {
    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        if timeout != self.timeout {
            self.stream.set_read_timeout(Some(timeout))?;
            self.timeout = timeout;
        }
        Ok(())
    }
}

/// Why a header could not be read.
#[derive(Debug, PartialEq, Eq)]
struct HeaderError {
    reason: String,
    /// The idle timeout ran out (rather than the peer closing or failing).
    timed_out: bool,
}

/// Read one header within `idle`: `Ok(true)` when whole, `Ok(false)` when
/// the peer closed cleanly before its first byte, `Err` otherwise (the peer
/// closed or failed mid-header, sent nothing for `idle`, or did not complete
/// the header within `idle` of the read's start).
fn read_header(
    source: &mut impl HeaderSource,
    header: &mut [u8; HEADER_LEN],
    idle: Duration,
) -> Result<bool, HeaderError> {
    let fail = |reason: String, timed_out: bool| Err(HeaderError { reason, timed_out });
    let deadline = Instant::now() + idle;
    let mut got = 0;
    while got < HEADER_LEN {
        let left = if got == 0 { idle } else { deadline.saturating_duration_since(Instant::now()) };
        if left.is_zero() {
            return fail(format!("truncated request: {got} of {HEADER_LEN} header bytes within {idle:?}"), true);
        }
        if let Err(e) = source.set_timeout(left) {
            return fail(format!("cannot set the read timeout: {e}"), false);
        }
        match source.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return fail(format!("truncated request: closed after {got} of {HEADER_LEN} header bytes"), false),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && got == 0 => {
                return fail(format!("no request for {idle:?} (idle timeout)"), true)
            }
            Err(e) if is_timeout(&e) => {
                return fail(format!("truncated request: {got} of {HEADER_LEN} header bytes within {idle:?}"), true)
            }
            // Reset by the peer or shut down by a stopping server between requests: a normal end.
            Err(_) if got == 0 => return Ok(false),
            Err(e) => return fail(format!("read failed after {got} of {HEADER_LEN} header bytes: {e}"), false),
        }
    }
    Ok(true)
}

/// A server running on a background thread; stops when dropped.
pub struct RunningServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<ServeSummary>>>,
}

impl RunningServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop serving, close every connection and return what was served.
    pub fn stop(mut self) -> io::Result<ServeSummary> {
        self.finish()
    }

    fn finish(&mut self) -> io::Result<ServeSummary> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(io::Error::other("server thread panicked"))),
            None => Ok(ServeSummary::default()),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.finish(); // errors were logged by the server itself
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests::XorShift;

    #[test]
    fn defaults_are_valid_and_every_bad_setting_names_its_field() {
        assert_eq!(ServerConfig::default().validate(), Ok(()));
        let base = ServerConfig::default();
        let cases = [
            (ServerConfig { max_connections: 0, ..base.clone() }, "max_connections: 0 is not from 1 to 65536"),
            (ServerConfig { max_connections: 65_537, ..base.clone() }, "max_connections: 65537 is not from 1 to 65536"),
            (ServerConfig { idle_timeout: Duration::ZERO, ..base.clone() }, "idle_timeout: must be more than 0"),
            (ServerConfig { idle_timeout: MAX_TIMEOUT + Duration::from_nanos(1), ..base.clone() }, "idle_timeout: "),
            (ServerConfig { idle_timeout: Duration::MAX, ..base.clone() }, "idle_timeout: "),
            (
                ServerConfig { socket: SocketOptions { rcvbuf: Some(0), ..SocketOptions::default() }, ..base.clone() },
                "rcvbuf: ",
            ),
        ];
        for (config, expected) in cases {
            let err = config.validate().unwrap_err().to_string();
            assert!(err.starts_with(expected), "{err:?} should start with {expected:?}");
            let bound = Server::bind("127.0.0.1:0".parse().unwrap(), config).err().expect("refused");
            assert_eq!(bound.kind(), io::ErrorKind::InvalidInput);
            assert_eq!(bound.to_string(), err);
        }
        let edges = [
            ServerConfig { max_connections: 1, ..base.clone() },
            ServerConfig { max_connections: MAX_CONNECTIONS, ..base.clone() },
            ServerConfig { idle_timeout: MAX_TIMEOUT, ..base.clone() },
            ServerConfig { idle_timeout: Duration::from_nanos(1), ..base },
        ];
        for config in edges {
            assert_eq!(config.validate(), Ok(()), "{config:?}");
        }
    }

    #[test]
    fn json_settings_use_seconds_and_an_overlong_timeout_is_named_by_validation() {
        let config: ServerConfig =
            serde_json::from_str(r#"{"max_connections": 8, "idle_timeout": 1.5, "max_response": 10}"#).unwrap();
        assert_eq!((config.max_connections, config.idle_timeout), (8, Duration::from_millis(1500)));
        let huge: ServerConfig = serde_json::from_str(r#"{"idle_timeout": 1e300}"#).unwrap();
        assert!(huge.validate().unwrap_err().to_string().starts_with("idle_timeout: "));
        let err = serde_json::from_str::<ServerConfig>(r#"{"idle_timeout": -1}"#).unwrap_err();
        assert!(err.to_string().contains("-1 is not a number of seconds"), "{err}");
        assert!(serde_json::from_str::<ServerConfig>(r#"{"max_connection": 8}"#).is_err(), "unknown fields refused");
    }

    #[test]
    fn the_throttle_logs_so_many_lines_a_window_then_counts_the_rest() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut throttle = Throttle::new(Duration::from_secs(5), 2);
        assert_eq!(throttle.admit(at(0), "a").as_deref(), Some("a"));
        assert_eq!(throttle.admit(at(1), "b").as_deref(), Some("b"));
        assert_eq!(throttle.admit(at(2), "c"), None);
        assert_eq!(throttle.admit(at(4), "d"), None);
        assert_eq!(throttle.dropped, 2);
        assert_eq!(throttle.admit(at(5), "e").as_deref(), Some("e (2 similar lines not logged before this one)"));
        assert_eq!(throttle.admit(at(6), "f").as_deref(), Some("f"));
        assert_eq!(throttle.admit(at(7), "g"), None);
        assert_eq!(throttle.dropped, 1, "left for the shutdown line");
    }

    /// How a fuzzed stream ends after its bytes.
    #[derive(Clone, Copy, Debug)]
    enum End {
        Eof,
        Reset,
        Timeout,
    }

    /// A reader handing out `data` in random pieces, with spurious `EINTR`s, then ending as `end` says.
    struct Chunky<'a> {
        data: &'a [u8],
        at: usize,
        end: End,
        rng: XorShift,
    }

    impl Read for Chunky<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            assert!(!buf.is_empty());
            if self.rng.below(16) == 0 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let left = self.data.len() - self.at;
            if left == 0 {
                return match self.end {
                    End::Eof => Ok(0),
                    End::Reset => Err(io::ErrorKind::ConnectionReset.into()),
                    End::Timeout => Err(io::ErrorKind::WouldBlock.into()),
                };
            }
            let n = 1 + self.rng.below(left.min(buf.len()) as u64) as usize;
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    impl HeaderSource for Chunky<'_> {
        fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
            assert!(!timeout.is_zero() && timeout <= Duration::from_secs(60), "{timeout:?}");
            Ok(())
        }
    }

    /// What the worker's loop does with a connection's bytes: the requests it
    /// would answer, then why it stops (`None`: a normal end).
    fn serve_stream(source: &mut Chunky, max: u64) -> (Vec<Request>, Option<HeaderError>, bool) {
        let mut header = [0u8; HEADER_LEN];
        let mut answered = Vec::new();
        loop {
            match read_header(source, &mut header, Duration::from_secs(60)) {
                Ok(true) => match Request::decode(&header, max) {
                    Ok(r) => answered.push(r),
                    Err(_) => return (answered, None, true),
                },
                Ok(false) => return (answered, None, false),
                Err(e) => return (answered, Some(e), false),
            }
        }
    }

    #[test]
    fn fuzz_the_header_reader_never_panics_and_answers_exactly_the_well_formed_requests() {
        let mut rng = XorShift(0x0123_4567_89AB_CDEF);
        for case in 0..20_000 {
            let max = if rng.below(2) == 0 { 64 << 20 } else { rng.next() };
            let headers = rng.below(6) as usize;
            let mut data = Vec::new();
            for _ in 0..headers {
                let mut h = Request { block: rng.next(), count: rng.below(max.saturating_add(1).max(1)) }.encode();
                match rng.below(8) {
                    0 => rng.bytes(&mut h),
                    1 => h[rng.below(HEADER_LEN as u64) as usize] ^= 1 << rng.below(8),
                    2 => h[16..24].copy_from_slice(&rng.next().to_be_bytes()),
                    _ => {}
                }
                data.extend_from_slice(&h);
            }
            let tail = rng.below(HEADER_LEN as u64) as usize;
            let start = data.len();
            data.resize(start + tail, 0);
            rng.bytes(&mut data[start..]);
            let end = [End::Eof, End::Reset, End::Timeout][rng.below(3) as usize];
            let mut source = Chunky { data: &data, at: 0, end, rng: XorShift(rng.next() | 1) };
            let (answered, error, rejected) = serve_stream(&mut source, max);

            // The expected outcome, header by header.
            let mut expected = Vec::new();
            let mut expect_rejected = false;
            for chunk in data.chunks_exact(HEADER_LEN) {
                match Request::decode(chunk.try_into().unwrap(), max) {
                    Ok(r) => expected.push(r),
                    Err(_) => {
                        expect_rejected = true;
                        break;
                    }
                }
            }
            let ctx = format!("case {case}: {data:02x?} then {end:?}");
            assert_eq!(answered, expected, "{ctx}");
            assert_eq!(rejected, expect_rejected, "{ctx}");
            if expect_rejected {
                continue;
            }
            let expected_error = match (tail, end) {
                (0, End::Eof | End::Reset) => None,
                (0, End::Timeout) => Some(("no request for 60s (idle timeout)".to_owned(), true)),
                (n, End::Eof) => Some((format!("truncated request: closed after {n} of 24 header bytes"), false)),
                (n, End::Reset) => Some((format!("read failed after {n} of 24 header bytes: connection reset"), false)),
                (n, End::Timeout) => Some((format!("truncated request: {n} of 24 header bytes within 60s"), true)),
            };
            assert_eq!(error.map(|e| (e.reason, e.timed_out)), expected_error, "{ctx}");
        }
    }
}
