//! The accept loop: take connections off the listener's backlog, refuse one
//! past `max_connections` with a refusal frame (docs/PROTOCOL.md, "Limits"
//! and "Refusal frame"), and start a thread for each other. An `accept(2)`
//! that fails with `ECONNABORTED` or `EINTR` is passed over; any other
//! failure (out of descriptors or memory: `EMFILE`, `ENFILE`, `ENOBUFS`,
//! `ENOMEM`) backs the loop off, since those free up only as connections close.

use super::throttle::Throttle;
use super::worker::{Shared, Worker};
use super::{lock, ServerConfig, LOG_WINDOW};
use crate::protocol::Refusal;
use mio::net::TcpListener;
use socket2::SockRef;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// First and last delay before an accept that failed is tried again.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(1));
/// Connections accepted in a row before the loop asks again whether to stop.
const ACCEPT_BATCH: usize = 256;
/// Stack of a connection's thread: it holds a 24-byte header and formats a log line.
const WORKER_STACK: usize = 256 * 1024;

/// A warning when `max_connections` connections would not fit in the
/// open-file limit (`/proc/self/limits`) beside the descriptors open now.
pub(super) fn descriptor_warning(max_connections: usize) -> Option<String> {
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
pub(super) struct Acceptor<'a> {
    config: &'a ServerConfig,
    shared: &'a Arc<Shared>,
    /// The connections' threads, joined on stop.
    pub(super) workers: Vec<JoinHandle<()>>,
    next_id: u64,
    /// The rate limit of the lines about failed accepts.
    pub(super) error_log: Throttle,
    /// The rate limit of the lines about refused connections.
    pub(super) refusal_log: Throttle,
    /// The delay before the next try after a failed accept (zero after a success).
    backoff: Duration,
    /// When to try again after a failed accept; `None` when not backing off.
    pub(super) retry_at: Option<Instant>,
}

impl<'a> Acceptor<'a> {
    /// An accept loop for a server of `config`, sharing `shared` with its connections.
    pub(super) fn new(config: &'a ServerConfig, shared: &'a Arc<Shared>) -> Acceptor<'a> {
        Acceptor {
            config,
            shared,
            workers: Vec::new(),
            next_id: 0,
            error_log: Throttle::new(LOG_WINDOW, 1),
            refusal_log: Throttle::new(LOG_WINDOW, 1),
            backoff: Duration::ZERO,
            retry_at: None,
        }
    }

    /// Accept what the backlog holds, unless backing off.
    pub(super) fn drain(&mut self, listener: &TcpListener) {
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
