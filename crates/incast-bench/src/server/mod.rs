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
//!   and one descriptor; one accepted past that is sent a [`Refusal`](crate::protocol::Refusal) saying
//!   so and closed at once.
//! - A connection that has not sent a whole request header within
//!   `idle_timeout` of being accepted or of its previous answer, and one
//!   whose client takes none of an answer's bytes for that long, are closed
//!   (socket read and write timeouts), so no client holds a thread longer.
//! - An accept that fails (out of descriptors, out of memory) is retried
//!   after a back-off of 10 ms doubling to 1 s; nothing that goes wrong with
//!   one connection (its socket options, its thread) ends the server.
//! - A request the server cannot accept (bad magic, version or flags, a count
//!   above `max_response`) is answered with a [`Refusal`](crate::protocol::Refusal) naming the field,
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
//!
//! With `sample` set, a thread of its own traces every open connection's
//! sending state (`TCP_INFO`, and BBR's model from `TCP_CC_INFO`) into a CSV
//! file at a fixed interval ([`crate::sampler`]) and logs, before the stop
//! line, how many rows it wrote.
//!
//! The parts, one module each: the accept loop and its limits
//! (`server::accept`), a connection's thread answering its requests
//! (`server::worker`), reading a request header within the idle timeout
//! (`server::header`), the log's rate limits (`server::throttle`) and the
//! counters the stop line reports (`server::summary`).

mod accept;
mod header;
mod summary;
mod throttle;
mod worker;

pub use summary::{RttSummary, ServeSummary};

use crate::config::{invalid, seconds_or_max, ConfigError, MAX_TIMEOUT};
use crate::sampler::{SampleConfig, Sampler};
use crate::sockopt::SocketOptions;
use accept::{descriptor_warning, Acceptor};
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, Socket, Type};
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use summary::Counters;
use throttle::Throttle;
use worker::Shared;

/// Size of the shared response buffer: one `write` hands the kernel at most this much.
pub const CHUNK: usize = 256 * 1024;
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
    /// (with a [`Refusal`](crate::protocol::Refusal) saying so) and its connection closed.
    pub max_response: u64,
    /// Connections served at once, each by one thread holding one descriptor
    /// (from 1 to [`MAX_CONNECTIONS`]); a connection accepted past this is sent
    /// a [`Refusal`](crate::protocol::Refusal) and closed. Keep it below the open-file limit (`ulimit -n`).
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
    /// Trace every open connection's sending state into a CSV file ([`crate::sampler`]); off when `None`.
    pub sample: Option<SampleConfig>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_response: 64 << 20,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            socket: SocketOptions::default(),
            sample: None,
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
        if let Some(sample) = &self.sample {
            sample.validate()?;
        }
        self.socket.validate()
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
    /// The sampler's file, created at bind.
    samples: Option<std::fs::File>,
}

impl Server {
    /// Bind to `addr` (port 0 picks a free port) with `SO_REUSEADDR`, so a
    /// restarted server binds while old connections linger in TIME_WAIT.
    /// Settings that [`ServerConfig::validate`] or the kernel refuses are an
    /// `InvalidInput` error naming the field.
    pub fn bind(addr: SocketAddr, config: ServerConfig) -> io::Result<Server> {
        config.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let samples = config.sample.as_ref().map(SampleConfig::create).transpose()?;
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        config.socket.apply(&socket)?;
        socket.bind(&addr.into())?;
        socket.listen(1024)?;
        socket.set_nonblocking(true)?;
        let std_listener: std::net::TcpListener = socket.into();
        let addr = std_listener.local_addr()?;
        let log: Log = Arc::new(|line: &str| eprintln!("{line}"));
        Ok(Server { listener: TcpListener::from_std(std_listener), addr, config, log, samples })
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
        let sampler = match (self.samples.take(), &self.config.sample) {
            (Some(file), Some(sample)) => {
                let open = shared.clone();
                Some(Sampler::spawn(sample.interval, file, Box::new(move || lock(&open.open).clone()))?)
            }
            _ => None,
        };
        let mut accept = Acceptor::new(&self.config, &shared);
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
        if let (Some(sampler), Some(sample)) = (sampler, &self.config.sample) {
            match sampler.stop() {
                Ok(rows) => (self.log)(&format!(
                    "sampled the open connections every {:?}: {rows} rows in {}",
                    sample.interval,
                    sample.path.display()
                )),
                Err(e) => (self.log)(&format!("sampling into {} failed: {e}", sample.path.display())),
            }
        }
        for (_, stream) in lock(&shared.open).iter() {
            let _ = stream.shutdown(Shutdown::Both); // already closed by the peer: nothing to do
        }
        for worker in std::mem::take(&mut accept.workers) {
            let _ = worker.join(); // a worker only returns; a panic there was already printed
        }
        let not_logged = [
            ("accept error", accept.error_log.dropped()),
            ("refused connection", accept.refusal_log.dropped()),
            ("connection", lock(&shared.connection_log).dropped()),
        ];
        let not_logged: Vec<String> =
            not_logged.iter().filter(|(_, n)| *n > 0).map(|(kind, n)| format!("{n} {kind} lines")).collect();
        if !not_logged.is_empty() {
            (self.log)(&format!("rate limit: {} not logged", not_logged.join(", ")));
        }
        let summary = shared.counters.summary();
        (self.log)(&summary.shutdown_line());
        Ok(summary)
    }
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
            (
                ServerConfig {
                    sample: Some(SampleConfig { interval: Duration::ZERO, path: "unused.csv".into() }),
                    ..base.clone()
                },
                "sample.interval: must be more than 0",
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
        let sampled: ServerConfig =
            serde_json::from_str(r#"{"sample": {"interval": 0.0005, "path": "/tmp/s.csv"}}"#).unwrap();
        let sample = sampled.sample.unwrap();
        assert_eq!((sample.interval, sample.path), (Duration::from_micros(500), "/tmp/s.csv".into()));
    }
}
