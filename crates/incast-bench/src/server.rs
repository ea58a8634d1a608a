//! The server side: answers every request with exactly the bytes it asked for.
//!
//! One thread accepts (readiness-polled, so a stop request is noticed within
//! [`POLL_INTERVAL`]); each connection gets a thread doing blocking I/O, which
//! is what a storage server's worker does and keeps every response on the
//! kernel's fast path. Every response is written from one static buffer of
//! zeros ([`CHUNK`] bytes, in the binary's zero-initialized data): no request
//! allocates.
//!
//! A request the server cannot accept (bad magic, version or flags, a count
//! above `max_response`, a truncated header) closes that connection only,
//! with one log line naming the peer and the reason; the other connections
//! and the accept loop carry on. On stop the server closes the listener,
//! shuts every connection down, waits for their threads and logs one line,
//! which counts the segments the server's connections retransmitted.

use crate::protocol::{Request, HEADER_LEN};
use crate::sockopt::SocketOptions;
use crate::tcp_info::TcpInfo;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, SockRef, Socket, Type};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Size of the shared response buffer: one `write` hands the kernel at most this much.
pub const CHUNK: usize = 256 * 1024;
/// The payload of every response, shared by every connection.
static PAYLOAD: [u8; CHUNK] = [0; CHUNK];
/// How long the accept loop waits before it asks whether to stop.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Where the server's log lines go (one line per call, no newline).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// Server settings.
///
/// Default values: `max_response` 64 MiB, socket options as [`SocketOptions::default`]
/// (`TCP_NODELAY` on, so a response's last short segment leaves at once).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Largest byte count a request may ask for; larger requests close their connection.
    pub max_response: u64,
    /// Options set on the listening socket (buffers, so the handshake can scale
    /// the window) and on every accepted connection.
    pub socket: SocketOptions,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { max_response: 64 << 20, socket: SocketOptions::default() }
    }
}

/// What a server did, logged when it stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeSummary {
    /// Connections accepted.
    pub connections: u64,
    /// Requests answered in full.
    pub requests: u64,
    /// Response bytes written.
    pub bytes: u64,
    /// Connections closed because of a malformed request.
    pub rejected: u64,
    /// Segments the server retransmitted, summed over its closed connections
    /// (`TCP_INFO` `tcpi_total_retrans`): the losses incast causes happen on
    /// the servers' side.
    pub retransmitted_segments: u64,
}

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
    bytes: AtomicU64,
    rejected: AtomicU64,
    retransmitted_segments: AtomicU64,
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
    /// Settings the kernel would refuse are an `InvalidInput` error naming the field.
    pub fn bind(addr: SocketAddr, config: ServerConfig) -> io::Result<Server> {
        config.socket.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
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
    /// "listening" line is logged before this returns.
    pub fn spawn(self) -> RunningServer {
        self.announce();
        let addr = self.addr;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || self.serve(&mut || flag.load(Ordering::Relaxed)));
        RunningServer { addr, stop, thread: Some(thread) }
    }

    fn announce(&self) {
        (self.log)(&format!("listening on {}, max response {} bytes", self.addr, self.config.max_response));
    }

    fn serve(mut self, should_stop: &mut dyn FnMut() -> bool) -> io::Result<ServeSummary> {
        let mut poll = Poll::new()?;
        poll.registry().register(&mut self.listener, Token(0), Interest::READABLE)?;
        let mut events = Events::with_capacity(16);
        let shared = Arc::new(Shared { counters: Counters::default(), open: Mutex::new(Vec::new()) });
        let mut workers: Vec<JoinHandle<()>> = Vec::new();
        let mut next_id = 0u64;
        while !should_stop() {
            match poll.poll(&mut events, Some(POLL_INTERVAL)) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            }
            loop {
                let (stream, peer) = match self.listener.accept() {
                    Ok(pair) => pair,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // A connection reset before accept, or out of descriptors: log it, keep serving.
                    Err(e) => {
                        (self.log)(&format!("accept: {e}"));
                        break;
                    }
                };
                let stream: TcpStream = stream.into();
                if let Err(e) =
                    stream.set_nonblocking(false).and_then(|()| self.config.socket.apply(&SockRef::from(&stream)))
                {
                    (self.log)(&format!("{peer}: cannot set up the connection: {e}"));
                    continue;
                }
                next_id += 1;
                let worker = Worker {
                    id: next_id,
                    peer,
                    max: self.config.max_response,
                    shared: shared.clone(),
                    log: self.log.clone(),
                };
                shared.open.lock().expect("lock").push((next_id, stream.try_clone()?));
                shared.counters.connections.fetch_add(1, Ordering::Relaxed);
                workers.retain(|w| !w.is_finished());
                workers.push(std::thread::spawn(move || worker.serve(stream)));
            }
        }
        drop(self.listener);
        for (_, stream) in shared.open.lock().expect("lock").iter() {
            let _ = stream.shutdown(Shutdown::Both); // already closed by the peer: nothing to do
        }
        for worker in workers {
            let _ = worker.join(); // a worker only returns; a panic there was already printed
        }
        let c = &shared.counters;
        let summary = ServeSummary {
            connections: c.connections.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            retransmitted_segments: c.retransmitted_segments.load(Ordering::Relaxed),
        };
        (self.log)(&format!(
            "shutdown: {} connections, {} requests, {} bytes served, {} connections rejected, {} segments retransmitted",
            summary.connections, summary.requests, summary.bytes, summary.rejected, summary.retransmitted_segments
        ));
        Ok(summary)
    }
}

/// State the accept loop shares with the connection threads.
struct Shared {
    counters: Counters,
    /// A handle on every open connection, to shut them down on stop.
    open: Mutex<Vec<(u64, TcpStream)>>,
}

/// One connection's thread.
struct Worker {
    id: u64,
    peer: SocketAddr,
    max: u64,
    shared: Arc<Shared>,
    log: Log,
}

impl Worker {
    fn serve(self, mut stream: TcpStream) {
        if let Some(reason) = self.answer_requests(&mut stream) {
            (self.log)(&format!("{}: {reason}; connection closed", self.peer));
        }
        if let Ok(info) = TcpInfo::of(&stream) {
            let retransmitted = u64::from(info.total_retrans);
            self.shared.counters.retransmitted_segments.fetch_add(retransmitted, Ordering::Relaxed);
        }
        self.shared.open.lock().expect("lock").retain(|(id, _)| *id != self.id);
    }

    /// Answer requests until the peer closes (`None`) or something goes wrong (the reason).
    fn answer_requests(&self, stream: &mut TcpStream) -> Option<String> {
        let mut header = [0u8; HEADER_LEN];
        loop {
            match read_header(stream, &mut header) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(e),
            }
            let request = match Request::decode(&header, self.max) {
                Ok(r) => r,
                Err(e) => {
                    self.shared.counters.rejected.fetch_add(1, Ordering::Relaxed);
                    return Some(format!("rejected request: {e}"));
                }
            };
            let mut left = request.count;
            while left > 0 {
                let n = left.min(CHUNK as u64) as usize;
                if let Err(e) = stream.write_all(&PAYLOAD[..n]) {
                    let done = request.count - left;
                    return Some(format!(
                        "block {}: write failed after {done} of {} bytes: {e}",
                        request.block, request.count
                    ));
                }
                left -= n as u64;
                self.shared.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            self.shared.counters.requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Read one header: `Ok(true)` when whole, `Ok(false)` when the peer closed
/// cleanly before its first byte, `Err(reason)` otherwise.
fn read_header(stream: &mut TcpStream, header: &mut [u8; HEADER_LEN]) -> Result<bool, String> {
    let mut got = 0;
    while got < HEADER_LEN {
        match stream.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(format!("truncated request: closed after {got} of {HEADER_LEN} header bytes")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Reset by the peer or shut down by a stopping server between requests: a normal end.
            Err(_) if got == 0 => return Ok(false),
            Err(e) => return Err(format!("read failed after {got} of {HEADER_LEN} header bytes: {e}")),
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
