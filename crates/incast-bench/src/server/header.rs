//! Reading one request header (docs/PROTOCOL.md, "Request header (24
//! bytes)") within the idle timeout, with the socket's read timeout
//! (`SO_RCVTIMEO`, socket(7)) set to what is left of it before each read.

use crate::protocol::HEADER_LEN;
use std::io::{self, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A socket read or write timeout (`SO_RCVTIMEO`, `SO_SNDTIMEO`) ran out.
pub(super) fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// Where request headers come from: a reader whose reads give up after a timeout.
pub(super) trait HeaderSource: Read {
    /// Make the next reads give up after `timeout` (more than zero).
    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()>;
}

/// A connection's stream, remembering its read timeout so that setting the
/// same one again costs no system call.
pub(super) struct TimedStream<'a> {
    pub(super) stream: &'a TcpStream,
    /// The read timeout set on `stream`.
    pub(super) timeout: Duration,
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
pub(super) struct HeaderError {
    /// What went wrong, for the log.
    pub(super) reason: String,
    /// The idle timeout ran out (rather than the peer closing or failing).
    pub(super) timed_out: bool,
}

/// Read one header within `idle`: `Ok(true)` when whole, `Ok(false)` when
/// the peer closed cleanly before its first byte, `Err` otherwise (the peer
/// closed or failed mid-header, sent nothing for `idle`, or did not complete
/// the header within `idle` of the read's start).
pub(super) fn read_header(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests::XorShift;
    use crate::protocol::Request;

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
