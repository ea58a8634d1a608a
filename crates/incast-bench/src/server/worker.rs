//! A connection's thread: read a request header, answer it with exactly the
//! bytes it asked for (docs/PROTOCOL.md, "Answer"), or refuse it with a
//! frame naming the bad field and close ("Rejections"); when the connection
//! ends, add the segments the kernel retransmitted on it (`TCP_INFO`
//! `tcpi_total_retrans`).

use super::header::{is_timeout, read_header, TimedStream};
use super::summary::Counters;
use super::throttle::Throttle;
use super::{lock, Log, CHUNK};
use crate::protocol::{Refusal, Request, HEADER_LEN};
use crate::tcp_info::TcpInfo;
use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The payload of every response, shared by every connection.
static PAYLOAD: [u8; CHUNK] = [0; CHUNK];

/// State the accept loop shares with the connection threads.
pub(super) struct Shared {
    pub(super) counters: Counters,
    /// Every open connection: how many there are, and a handle to shut them down on stop.
    pub(super) open: Mutex<Vec<(u64, Arc<TcpStream>)>>,
    pub(super) log: Log,
    /// The rate limit of the lines about single connections.
    pub(super) connection_log: Mutex<Throttle>,
}

impl Shared {
    /// Log a line about one connection, within the rate limit.
    pub(super) fn connection_line(&self, line: &str) {
        let admitted = lock(&self.connection_log).admit(Instant::now(), line);
        if let Some(line) = admitted {
            (self.log)(&line);
        }
    }

    /// Take connection `id` off the list of open ones.
    pub(super) fn forget(&self, id: u64) {
        lock(&self.open).retain(|(i, _)| *i != id);
    }
}

/// One connection's thread.
pub(super) struct Worker {
    pub(super) id: u64,
    pub(super) peer: SocketAddr,
    /// The largest byte count a request may ask for (`max_response`).
    pub(super) max: u64,
    /// The idle timeout.
    pub(super) idle: Duration,
    pub(super) shared: Arc<Shared>,
}

/// Takes a connection off the list when its thread ends, even by a panic.
struct Forget<'a>(&'a Shared, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

impl Worker {
    /// Answer the requests on `stream` until it ends, then count its retransmissions.
    pub(super) fn serve(self, stream: &TcpStream) {
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
