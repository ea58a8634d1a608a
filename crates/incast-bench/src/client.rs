//! The client side: barrier-synchronized reads from N servers (FAST08 §3).
//!
//! The client opens one connection per server and keeps it for the whole
//! run. A block starts by sending each server its request, all at once or as
//! `max_inflight` and `stagger` allow, and ends when every server's bytes
//! have arrived; only then does the next block start. One thread waits on
//! every connection with epoll (mio), reads whatever arrived into one buffer
//! and, with the `quickack` knob, re-arms `TCP_QUICKACK` after every read.
//!
//! A server that refuses the connection, has not answered in full within the
//! timeout, closes its connection or sends more than it was asked for ends
//! the run: the report names it and the block, and keeps the blocks done so
//! far. A server that refuses a request (or the connection) says why in a
//! [`Refusal`] frame at the start of the answer; its reason becomes the
//! report's (`refused: <reason>`). An answer shorter than the frame's
//! four-byte magic is payload whatever its bytes: the client knows its
//! length from its own request, and a refusal in its place arrives as more
//! bytes than asked for. `should_stop` is asked at least every [`POLL_INTERVAL`]; when it says
//! yes the block in progress is dropped and the report is marked interrupted.
//!
//! Deliberately simple: stagger delays shorter than 2 ms are timed by
//! spinning on a zero-timeout poll (epoll's timeout is whole milliseconds).

use crate::config::{ConfigError, Plan, ReadConfig, Stop};
use crate::netstat::Counters;
use crate::protocol::{AnswerStart, Refusal, Request, MAX_REASON_LEN, REFUSAL_HEADER_LEN, REFUSAL_MAGIC};
use crate::report::{BlockRow, ReadFailure, ReadReport, Status};
use crate::server::POLL_INTERVAL;
use crate::sockopt::SocketOptions;
use crate::tcp_info::TcpInfo;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, SockRef, Socket, Type};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bytes read per `read` call at most.
const READ_BUF: usize = 256 * 1024;
/// Below this wait the loop spins instead of sleeping in epoll.
const SPIN_BELOW: Duration = Duration::from_millis(2);

/// Read blocks as `config` says until its stop condition, a failure or
/// `should_stop`. Only a bad `config` is an `Err`; how the run ended is the
/// report's `status`.
pub fn read(config: &ReadConfig, should_stop: &mut dyn FnMut() -> bool) -> Result<ReadReport, ConfigError> {
    let plan = config.validate()?;
    let block_bytes = plan.per_server.iter().sum();
    let mut report = ReadReport::empty(plan.names.clone(), plan.sru, block_bytes, plan.warmup);
    let outcome = Run::connect(&plan, &config.socket).and_then(|mut run| run.blocks(&mut report, should_stop));
    match outcome {
        Ok(()) => {}
        Err(End::Interrupted) => report.status = Status::Interrupted,
        Err(End::Failed(failure)) => {
            report.status = Status::Failed;
            report.error = Some(failure);
        }
    }
    report.finish();
    Ok(report)
}

/// Why the block loop ended early.
enum End {
    Failed(ReadFailure),
    Interrupted,
}

/// Where one connection stands within the current block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Its request has not left yet.
    Waiting,
    /// Its request left; its answer is arriving.
    Answering,
    /// Its answer arrived whole (or no block is in progress).
    Done,
}

struct Conn {
    name: String,
    stream: TcpStream,
    want: u64,
    got: u64,
    phase: Phase,
    /// The first bytes since the last whole answer, while they may still be a [`Refusal`].
    head: Vec<u8>,
    /// The bytes since the last whole answer are payload, not a refusal.
    payload: bool,
}

/// The most bytes a [`Refusal`] frame takes.
const MAX_REFUSAL: usize = REFUSAL_HEADER_LEN + MAX_REASON_LEN;

struct Run<'a> {
    plan: &'a Plan,
    socket: &'a SocketOptions,
    conns: Vec<Conn>,
    poll: Poll,
    buf: Vec<u8>,
    last_stop_check: Instant,
}

impl<'a> Run<'a> {
    /// Connect to every server in order; the first that fails ends the run.
    fn connect(plan: &'a Plan, socket: &'a SocketOptions) -> Result<Run<'a>, End> {
        let poll = Poll::new().map_err(|e| fail(&plan.names[0], None, format!("epoll: {e}")))?;
        let mut conns = Vec::with_capacity(plan.addrs.len());
        for (i, (name, &addr)) in plan.names.iter().zip(&plan.addrs).enumerate() {
            let mut stream = open(addr, socket, plan.timeout).map_err(|e| fail(name, None, e))?;
            poll.registry()
                .register(&mut stream, Token(i), Interest::READABLE)
                .map_err(|e| fail(name, None, format!("epoll: {e}")))?;
            let want = plan.per_server[i];
            conns.push(Conn {
                name: name.clone(),
                stream,
                want,
                got: 0,
                phase: Phase::Done,
                head: Vec::new(),
                payload: false,
            });
        }
        Ok(Run { plan, socket, conns, poll, buf: vec![0; READ_BUF], last_stop_check: Instant::now() })
    }

    /// Warm up, then measure blocks into `report` until the stop condition.
    fn blocks(&mut self, report: &mut ReadReport, should_stop: &mut dyn FnMut() -> bool) -> Result<(), End> {
        for block in 0..self.plan.warmup {
            self.block(block, should_stop)?;
        }
        let info_before: Vec<Option<TcpInfo>> = self.conns.iter().map(|c| TcpInfo::of(&c.stream).ok()).collect();
        let counters_before = Counters::read().unwrap_or_default();
        let start = Instant::now();
        report.start_unix_s = SystemTime::now().duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs_f64());
        let mut block = self.plan.warmup;
        let result = loop {
            let done = match self.plan.stop {
                Stop::Blocks(n) => report.blocks >= n,
                Stop::Duration(d) => start.elapsed() >= d,
            };
            if done {
                break Ok(());
            }
            let block_start = start.elapsed();
            match self.block(block, should_stop) {
                Ok((time, last_server)) => report.add_block(BlockRow {
                    block,
                    start_s: block_start.as_secs_f64(),
                    time_ms: time.as_secs_f64() * 1e3,
                    last_server,
                }),
                Err(end) => break Err(end),
            }
            block += 1;
        };
        for ((conn, before), out) in self.conns.iter().zip(&info_before).zip(&mut report.connections) {
            out.bytes_delivered = conn.want * report.blocks;
            out.tcp_info = before.and_then(|b| TcpInfo::of(&conn.stream).ok().map(|after| after.since(&b)));
        }
        report.tcpext = Counters::read().unwrap_or_default().since(&counters_before);
        result
    }

    /// Read one block; its time from the first request to the last byte, and
    /// the server whose answer completed last.
    fn block(&mut self, block: u64, should_stop: &mut dyn FnMut() -> bool) -> Result<(Duration, usize), End> {
        let start = Instant::now();
        let deadline = start + self.plan.timeout;
        for c in &mut self.conns {
            c.got = 0;
            c.phase = Phase::Waiting;
        }
        let mut events = Events::with_capacity(self.conns.len());
        let (mut next, mut inflight, mut done, mut last, mut last_server) = (0, 0, 0, start, 0);
        while done < self.conns.len() {
            let now = Instant::now();
            while next < self.conns.len() && inflight < self.plan.max_inflight {
                if start + self.plan.stagger * next as u32 > now {
                    break;
                }
                self.send(next, block)?;
                next += 1;
                inflight += 1;
            }
            if now >= deadline {
                return Err(self.stalled(block));
            }
            if now.duration_since(self.last_stop_check) >= POLL_INTERVAL {
                self.last_stop_check = now;
                if should_stop() {
                    return Err(End::Interrupted);
                }
            }
            let mut wait = (deadline - now).min(POLL_INTERVAL);
            if next < self.conns.len() && inflight < self.plan.max_inflight {
                wait = wait.min((start + self.plan.stagger * next as u32).saturating_duration_since(now));
                if wait < SPIN_BELOW {
                    wait = Duration::ZERO;
                }
            }
            match self.poll.poll(&mut events, Some(wait)) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(&self.conns[0].name, Some(block), format!("epoll: {e}"))),
                Ok(()) => {}
            }
            for event in events.iter() {
                let i = event.token().0;
                if self.receive(i, block)? {
                    inflight -= 1;
                    done += 1;
                    (last, last_server) = (Instant::now(), i);
                }
            }
        }
        Ok((last - start, last_server))
    }

    fn send(&mut self, i: usize, block: u64) -> Result<(), End> {
        let c = &mut self.conns[i];
        let header = Request { block, count: c.want }.encode();
        // The socket's send buffer is empty between blocks, so 24 bytes go out in one write.
        match c.stream.write(&header) {
            Ok(n) if n == header.len() => {
                c.phase = Phase::Answering;
                Ok(())
            }
            Ok(n) => Err(fail(&c.name, Some(block), format!("sent only {n} of {} request bytes", header.len()))),
            Err(e) => Err(fail(&c.name, Some(block), format!("sending the request: {e}"))),
        }
    }

    /// Drain connection `i`; true when its answer just became whole.
    fn receive(&mut self, i: usize, block: u64) -> Result<bool, End> {
        let c = &mut self.conns[i];
        loop {
            match c.stream.read(&mut self.buf) {
                Ok(0) => {
                    let why = match (Refusal::decode(&c.head), c.phase) {
                        (AnswerStart::Incomplete, _) if !c.payload && !c.head.is_empty() => {
                            format!("closed the connection in the middle of a refusal ({} bytes of it)", c.head.len())
                        }
                        (_, Phase::Answering) => format!("closed the connection after {} of {} bytes", c.got, c.want),
                        _ => "closed the connection".into(),
                    };
                    return Err(fail(&c.name, Some(block), why));
                }
                Ok(n) => {
                    let data = &self.buf[..n];
                    if !c.payload && c.phase == Phase::Answering && c.want < REFUSAL_MAGIC.len() as u64 {
                        // An answer shorter than the refusal's magic is payload whatever its bytes
                        // ("INC" included): the request said how long it is. A refusal in its place
                        // shows as more bytes than asked for (below).
                        c.payload = true;
                    }
                    if !c.payload {
                        // The answer's first bytes: a refusal, or payload?
                        let room = MAX_REFUSAL - c.head.len();
                        c.head.extend_from_slice(&data[..n.min(room)]);
                        match Refusal::decode(&c.head) {
                            AnswerStart::Refused(r) => {
                                return Err(fail(&c.name, Some(block), format!("refused: {}", r.reason)))
                            }
                            AnswerStart::Malformed(why) => return Err(fail(&c.name, Some(block), why)),
                            AnswerStart::Payload => {
                                c.payload = true;
                                c.head.clear();
                            }
                            // Counted below, but neither complete nor too long until told apart.
                            AnswerStart::Incomplete => {}
                        }
                    }
                    if c.phase != Phase::Answering {
                        if c.payload {
                            return Err(fail(&c.name, Some(block), format!("sent {n} bytes it was not asked for")));
                        }
                        continue; // the start of a refusal, before any request
                    }
                    c.got += n as u64;
                    if c.payload && c.got > c.want && c.want < REFUSAL_MAGIC.len() as u64 && c.got == n as u64 {
                        if let AnswerStart::Refused(r) = Refusal::decode(data) {
                            return Err(fail(&c.name, Some(block), format!("refused: {}", r.reason)));
                        }
                    }
                    if c.payload && c.got > c.want {
                        let why = format!("sent {} bytes more than the {} requested", c.got - c.want, c.want);
                        return Err(fail(&c.name, Some(block), why));
                    }
                    self.socket
                        .rearm_quickack(&SockRef::from(&c.stream))
                        .map_err(|e| fail(&c.name, Some(block), format!("TCP_QUICKACK: {e}")))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(fail(&c.name, Some(block), format!("receive failed after {} bytes: {e}", c.got))),
            }
        }
        if c.phase == Phase::Answering && c.payload && c.got == c.want {
            c.phase = Phase::Done;
            c.payload = false;
            return Ok(true);
        }
        Ok(false)
    }

    /// The failure of a block that timed out: the first server still answering.
    /// (Every request has left by then: validation keeps the last stagger
    /// delay below the timeout.)
    fn stalled(&self, block: u64) -> End {
        let late: Vec<&Conn> = self.conns.iter().filter(|c| c.phase == Phase::Answering).collect();
        let c = late.first().expect("a block past its deadline has an answer in progress");
        let mut why = format!("stalled: {} of {} bytes after the {:?} timeout", c.got, c.want, self.plan.timeout);
        if late.len() > 1 {
            why += &format!(" ({} more servers unfinished)", late.len() - 1);
        }
        fail(&c.name, Some(block), why)
    }
}

fn fail(server: &str, block: Option<u64>, reason: String) -> End {
    End::Failed(ReadFailure { server: server.to_owned(), block, reason })
}

/// A connected, non-blocking stream to `addr` with `options` set before the handshake.
fn open(addr: SocketAddr, options: &SocketOptions, timeout: Duration) -> Result<TcpStream, String> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(|e| format!("socket: {e}"))?;
    options.apply(&socket).map_err(|e| e.to_string())?;
    socket.connect_timeout(&addr.into(), timeout).map_err(|e| format!("connect: {e}"))?;
    socket.set_nonblocking(true).map_err(|e| format!("connect: {e}"))?;
    Ok(TcpStream::from_std(socket.into()))
}
