//! The server and the client on loopback: real sockets, ephemeral ports.

use incast_bench::protocol::{AnswerStart, Refusal, Request, HEADER_LEN, MAGIC};
use incast_bench::server::Log;
use incast_bench::{read, ReadConfig, RunningServer, Server, ServerConfig, Status};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A server on an ephemeral loopback port whose log lines are kept.
fn server(max_response: u64) -> (RunningServer, Arc<Mutex<Vec<String>>>) {
    server_with(ServerConfig { max_response, ..ServerConfig::default() })
}

fn server_with(config: ServerConfig) -> (RunningServer, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let log: Log = Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned()));
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), config).unwrap().with_log(log).spawn().unwrap();
    (server, lines)
}

fn config(servers: &[String]) -> ReadConfig {
    ReadConfig { servers: servers.to_vec(), timeout: Some(Duration::from_secs(5)), ..ReadConfig::default() }
}

fn never_stop() -> impl FnMut() -> bool {
    || false
}

/// A fake server on an ephemeral loopback port: its thread accepts one
/// connection and runs `script` on it.
fn scripted_server(script: impl FnOnce(TcpStream) + Send + 'static) -> (SocketAddr, thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (addr, thread::spawn(move || script(listener.accept().unwrap().0)))
}

/// Read one request header from `s`, as a server does before it answers.
fn next_request(s: &mut TcpStream) {
    s.read_exact(&mut [0u8; HEADER_LEN]).unwrap();
}

/// Ask for `count` bytes of block `block` and read the answer to its end.
fn request(stream: &mut TcpStream, block: u64, count: u64) -> Vec<u8> {
    stream.write_all(&Request { block, count }.encode()).unwrap();
    let mut answer = vec![0xffu8; count as usize];
    stream.read_exact(&mut answer).unwrap();
    answer
}

/// Everything the server sends on `stream` until it closes it (waiting 5 s at most).
fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).expect("the server closes the connection");
    out
}

/// The reason of the refusal the server sent on `stream` before closing it.
fn refusal(stream: &mut TcpStream) -> String {
    match Refusal::decode(&until_closed(stream)) {
        AnswerStart::Refused(r) => r.reason,
        other => panic!("not a refusal: {other:?}"),
    }
}

#[test]
fn protocol_round_trip_returns_exactly_the_bytes_requested() {
    let (server, lines) = server(1 << 20);
    let mut stream = TcpStream::connect(server.local_addr()).unwrap();
    for (block, count) in [(0, 1), (1, 300_000), (2, 0), (3, 1 << 20)] {
        assert_eq!(request(&mut stream, block, count).len(), count as usize);
    }
    // Nothing more than asked for: the next bytes are the next answer's.
    assert_eq!(request(&mut stream, 4, 5), vec![0u8; 5]);
    drop(stream);
    let summary = server.stop().unwrap();
    assert_eq!((summary.connections, summary.requests, summary.rejected), (1, 5, 0));
    assert_eq!(summary.bytes, 1 + 300_000 + (1 << 20) + 5);
    let lines = lines.lock().unwrap();
    assert!(lines[0].starts_with("listening on 127.0.0.1:"), "{lines:?}");
    let rtt = summary.rtt;
    assert_eq!(rtt.samples, 4, "every request after the connection's first");
    assert!(rtt.rto_us_mean >= 200_000 && rtt.rto_us_max >= rtt.rto_us_mean, "{rtt:?}");
    assert!(rtt.min_rtt_us_least > 0, "a connection that answered requests has an RTT sample: {rtt:?}");
    assert_eq!(
        lines.last().unwrap(),
        &format!(
            "shutdown: 1 connections, 5 requests, {} bytes served, 0 connections rejected, 0 refused (too many open), \
             0 closed idle, 0 accept errors, {} segments retransmitted; kernel RTT {} us, RTTVAR {} us and RTO {} us \
             on average (RTO at most {} us, min_rtt at least {} us) over 4 requests after a connection's first",
            summary.bytes,
            summary.retransmitted_segments,
            rtt.rtt_us_mean,
            rtt.rttvar_us_mean,
            rtt.rto_us_mean,
            rtt.rto_us_max,
            rtt.min_rtt_us_least
        )
    );
}

#[test]
fn malformed_requests_close_only_their_connection() {
    let (server, lines) = server(1000);
    let addr = server.local_addr();
    let mut good = TcpStream::connect(addr).unwrap();
    assert_eq!(request(&mut good, 0, 10).len(), 10);

    let mut bad_magic = Request { block: 1, count: 10 }.encode();
    bad_magic[..4].copy_from_slice(b"GET ");
    let mut bad_version = Request { block: 1, count: 10 }.encode();
    bad_version[4..6].copy_from_slice(&2u16.to_be_bytes());
    let mut bad_flags = Request { block: 1, count: 10 }.encode();
    bad_flags[7] = 1;
    let too_large = Request { block: 9, count: 1001 }.encode();
    for (header, field) in
        [(bad_magic, "magic: "), (bad_version, "version: "), (bad_flags, "flags: "), (too_large, "count: ")]
    {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&header).unwrap();
        let reason = refusal(&mut s);
        assert!(reason.starts_with(field), "{reason}");
    }
    let mut truncated = TcpStream::connect(addr).unwrap();
    truncated.write_all(&MAGIC).unwrap();
    truncated.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(until_closed(&mut truncated), b"", "nothing to refuse: no request arrived");

    // The first connection and new ones are still served.
    assert_eq!(request(&mut good, 1, 1000).len(), 1000);
    assert_eq!(request(&mut TcpStream::connect(addr).unwrap(), 0, 7).len(), 7);
    drop(good);
    assert_eq!(server.stop().unwrap().rejected, 4);

    let lines = lines.lock().unwrap();
    let rejected: Vec<&String> = lines.iter().filter(|l| l.contains("connection closed")).collect();
    assert_eq!(rejected.len(), 5, "{lines:?}");
    // One line per bad connection, in whatever order the server's threads logged them.
    let naming = |field: &str| -> &String {
        let named: Vec<&&String> = rejected.iter().filter(|l| l.contains(field)).collect();
        assert_eq!(named.len(), 1, "one line should name {field}: {rejected:?}");
        named[0]
    };
    for field in ["magic: ", "version: ", "flags: ", "count: ", "truncated request: "] {
        let line = naming(field);
        assert!(line.starts_with("127.0.0.1:"), "peer address first: {line}");
    }
    assert!(naming("count: ").contains("count: 1001 bytes requested for block 9, the maximum is 1000"));
    assert!(naming("truncated request: ").contains(&format!("closed after 4 of {HEADER_LEN} header bytes")));
}

#[test]
fn reads_every_block_from_every_server() {
    let servers: Vec<RunningServer> = (0..3).map(|_| server(1 << 20).0).collect();
    let names: Vec<String> = servers.iter().map(|s| s.local_addr().to_string()).collect();
    let cfg = ReadConfig { sru: Some(100_000), blocks: Some(20), warmup: 2, ..config(&names) };
    let report = read(&cfg, &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Complete, "{:?}", report.error);
    assert_eq!((report.blocks, report.bytes_delivered, report.block_bytes), (20, 6_000_000, 300_000));
    assert_eq!(report.block_rows.first().unwrap().block, 2, "warm-up blocks take ids 0 and 1");
    assert_eq!(report.servers, names);
    for c in &report.connections {
        assert_eq!(c.bytes_delivered, 2_000_000);
        assert_eq!(c.tcp_info.unwrap().bytes_received, 2_000_000, "TCP_INFO counts the measured bytes only");
    }
    assert!(report.goodput_mbps.unwrap() > 0.0);
    assert!(report.block_time_ms.p50.unwrap() <= report.block_time_ms.max.unwrap());
    assert!(report.tcpext.contains_key("TCPTimeouts"));
    let served: u64 = servers.into_iter().map(|s| s.stop().unwrap().bytes).sum();
    assert_eq!(served, 22 * 300_000);
}

#[test]
fn max_inflight_and_stagger_still_read_every_byte() {
    let servers: Vec<RunningServer> = (0..4).map(|_| server(1 << 20).0).collect();
    let names: Vec<String> = servers.iter().map(|s| s.local_addr().to_string()).collect();
    let stagger = Duration::from_millis(3);
    let cfg = ReadConfig {
        block: Some(1_000_003),
        blocks: Some(5),
        max_inflight: Some(1),
        stagger: Some(stagger),
        ..config(&names)
    };
    let report = read(&cfg, &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Complete, "{:?}", report.error);
    assert_eq!(report.bytes_delivered, 5 * 1_000_003);
    let per_server: Vec<u64> = report.connections.iter().map(|c| c.bytes_delivered).collect();
    assert_eq!(per_server, [5 * 250_001, 5 * 250_001, 5 * 250_001, 5 * 250_000]);
    // The last request leaves 3 × 3 ms after the block starts, and its answer completes last.
    assert!(report.block_time_ms.p50.unwrap() >= 9.0, "{:?}", report.block_time_ms);
    assert!(report.block_rows.iter().all(|r| r.last_server == 3), "{:?}", report.block_rows);
}

#[test]
fn a_stalled_server_is_named_with_its_block_and_earlier_blocks_are_kept() {
    let (good, _) = server(1 << 20);
    // Answers block 0 of its connection in full, then only half of block 1, then nothing.
    let (stall_addr, staller) = scripted_server(|mut s| {
        next_request(&mut s);
        s.write_all(&[0u8; 1000]).unwrap();
        next_request(&mut s);
        s.write_all(&[0u8; 500]).unwrap();
        thread::sleep(Duration::from_secs(2));
    });
    let names = [good.local_addr().to_string(), stall_addr.to_string()];
    let cfg =
        ReadConfig { sru: Some(1000), blocks: Some(10), timeout: Some(Duration::from_millis(300)), ..config(&names) };
    let report = read(&cfg, &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Failed);
    let error = report.error.clone().unwrap();
    assert_eq!((error.server.as_str(), error.block), (names[1].as_str(), Some(1)));
    assert_eq!(
        error.to_string(),
        format!("server {}, block 1: stalled: 500 of 1000 bytes after the 300ms timeout", names[1])
    );
    assert_eq!((report.blocks, report.bytes_delivered), (1, 2000), "block 0 is kept");
    staller.join().unwrap();
}

#[test]
fn a_server_closing_mid_block_is_named() {
    let (addr, closer) = scripted_server(|mut s| {
        next_request(&mut s);
        s.write_all(&[0u8; 123]).unwrap();
    });
    let report = read(&ReadConfig { sru: Some(1000), ..config(&[addr.to_string()]) }, &mut never_stop()).unwrap();
    closer.join().unwrap();
    assert_eq!(report.status, Status::Failed);
    assert_eq!(
        report.error.unwrap().to_string(),
        format!("server {addr}, block 0: closed the connection after 123 of 1000 bytes")
    );
    assert_eq!(report.blocks, 0);
}

#[test]
fn a_refused_connection_is_named() {
    // Bind then drop: nothing listens on the port any more.
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let report = read(&config(&[addr.to_string()]), &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Failed);
    let error = report.error.unwrap();
    assert_eq!((error.server, error.block), (addr.to_string(), None));
    assert!(error.reason.starts_with("connect: "), "{}", error.reason);
}

#[test]
fn a_stop_request_ends_the_run_with_the_blocks_done_so_far() {
    let (srv, _) = server(1 << 20);
    let cfg = ReadConfig {
        sru: Some(10_000),
        duration: Some(Duration::from_secs(60)),
        ..config(&[srv.local_addr().to_string()])
    };
    let started = std::time::Instant::now();
    let mut stop_after_half_a_second = move || started.elapsed() >= Duration::from_millis(500);
    let report = read(&cfg, &mut stop_after_half_a_second).unwrap();
    assert_eq!(report.status, Status::Interrupted);
    assert!(report.error.is_none());
    assert!(report.blocks > 0);
    assert_eq!(report.bytes_delivered, report.blocks * 10_000);
    assert_eq!(report.block_rows.len() as u64, report.blocks);
}

#[test]
fn a_duration_run_starts_no_block_after_the_duration() {
    let (srv, _) = server(1 << 20);
    let duration = Duration::from_millis(200);
    let cfg = ReadConfig { sru: Some(10_000), duration: Some(duration), ..config(&[srv.local_addr().to_string()]) };
    let called = std::time::Instant::now();
    let report = read(&cfg, &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Complete);
    assert!(report.blocks > 0);
    assert!(report.block_rows.iter().all(|r| r.start_s < duration.as_secs_f64()), "{:?}", report.block_rows.last());
    // The last byte of the last block may come just before the duration is up
    // (the check that ends the run follows it), so the run's own clock is what
    // must have passed the duration.
    assert!(called.elapsed() >= duration, "the run stops only once the duration has passed");
}

#[test]
fn every_silent_server_is_counted_and_the_first_is_named() {
    let silent: Vec<TcpListener> = (0..3).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let names: Vec<String> = silent.iter().map(|l| l.local_addr().unwrap().to_string()).collect();
    let cfg = ReadConfig { sru: Some(1), timeout: Some(Duration::from_millis(100)), ..config(&names) };
    let error = read(&cfg, &mut never_stop()).unwrap().error.unwrap();
    let expected = format!(
        "server {}, block 0: stalled: 0 of 1 bytes after the 100ms timeout (2 more servers unfinished)",
        names[0]
    );
    assert_eq!(error.to_string(), expected);
}

#[test]
fn a_request_above_the_maximum_is_refused_with_the_servers_reason() {
    let (srv, _) = server(1000);
    let name = srv.local_addr().to_string();
    let report =
        read(&ReadConfig { sru: Some(2000), ..config(std::slice::from_ref(&name)) }, &mut never_stop()).unwrap();
    assert_eq!(report.status, Status::Failed);
    assert_eq!(
        report.error.unwrap().to_string(),
        format!("server {name}, block 0: refused: count: 2000 bytes requested for block 0, the maximum is 1000")
    );
}

#[test]
fn connections_past_the_maximum_are_refused_at_once_and_the_reader_says_why() {
    let (srv, lines) = server_with(ServerConfig { max_connections: 2, ..ServerConfig::default() });
    let addr = srv.local_addr();
    // Two connections served (a request each proves they were accepted), then held open.
    let mut held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for (i, s) in held.iter_mut().enumerate() {
        assert_eq!(request(s, i as u64, 10).len(), 10);
    }
    let mut third = TcpStream::connect(addr).unwrap();
    let reason = refusal(&mut third);
    assert_eq!(reason, "too many connections: 2 open, the server's maximum (max_connections)");
    let report = read(&config(&[addr.to_string()]), &mut never_stop()).unwrap();
    assert_eq!(report.error.unwrap().to_string(), format!("server {addr}, block 0: refused: {reason}"));

    // One closes: a new connection is served again.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    let served = loop {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&Request { block: 0, count: 3 }.encode()).unwrap();
        let answer = until_closed_or(&mut s, 3);
        if answer == [0, 0, 0] || Instant::now() > deadline {
            break answer;
        }
        thread::sleep(Duration::from_millis(10)); // the closed connection's thread is still ending
    };
    assert_eq!(served, [0, 0, 0]);
    drop(held);
    let summary = srv.stop().unwrap();
    assert!(summary.refused >= 2, "{summary:?}");
    // One line for the refusals of one 5 s window, however many there were.
    let lines = lines.lock().unwrap();
    let refused: Vec<&String> = lines.iter().filter(|l| l.contains(": refused: too many connections")).collect();
    assert_eq!(refused.len(), 1, "{lines:?}");
}

/// `want` bytes from `stream`, or what arrived before it closed.
fn until_closed_or(stream: &mut TcpStream, want: usize) -> Vec<u8> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    let _ = stream.take(want as u64).read_to_end(&mut out);
    out
}

#[test]
fn idle_half_sent_and_non_reading_clients_are_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(300);
    let (srv, lines) = server_with(ServerConfig { idle_timeout: idle, ..ServerConfig::default() });
    let addr = srv.local_addr();
    let started = Instant::now();
    let mut silent = TcpStream::connect(addr).unwrap();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(&Request { block: 0, count: 1 }.encode()[..10]).unwrap();
    // Asks for far more than the socket buffers hold, and never reads it.
    let mut deaf = TcpStream::connect(addr).unwrap();
    deaf.write_all(&Request { block: 7, count: 64 << 20 }.encode()).unwrap();
    assert_eq!(until_closed(&mut silent), b"");
    assert_eq!(until_closed(&mut half), b"");
    assert!(started.elapsed() >= idle);
    // The deaf client's connection is dropped by the server's write timeout: wait for its log line.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lines.lock().unwrap().iter().any(|l| l.contains("block 7: the client took none")) {
        assert!(Instant::now() < deadline, "{:?}", lines.lock().unwrap());
        thread::sleep(Duration::from_millis(20));
    }
    drop(deaf);
    // A client that keeps asking is not cut off.
    let mut busy = TcpStream::connect(addr).unwrap();
    for block in 0..4 {
        assert_eq!(request(&mut busy, block, 100).len(), 100);
        thread::sleep(idle / 3); // 4 gaps: longer than the timeout in all, each well within it
    }
    drop(busy);
    let summary = srv.stop().unwrap();
    assert_eq!(summary.timed_out, 3, "{summary:?}");
    let lines = lines.lock().unwrap();
    assert!(lines.iter().any(|l| l.contains("no request for 300ms (idle timeout); connection closed")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("truncated request: 10 of 24 header bytes within 300ms")), "{lines:?}");
}

#[test]
fn a_refusal_sent_in_pieces_ends_the_run_with_its_reason() {
    // Answers block 0 in full, then refuses block 1 in three writes: inside the magic, inside the reason.
    let (addr, refuser) = scripted_server(|mut s| {
        s.set_nodelay(true).unwrap();
        next_request(&mut s);
        s.write_all(&[0u8; 1000]).unwrap();
        next_request(&mut s);
        let frame = Refusal::new("not today: the disk is full").encode();
        for piece in [&frame[..2], &frame[2..12], &frame[12..]] {
            s.write_all(piece).unwrap();
            thread::sleep(Duration::from_millis(20));
        }
    });
    let report =
        read(&ReadConfig { sru: Some(1000), blocks: Some(3), ..config(&[addr.to_string()]) }, &mut never_stop())
            .unwrap();
    refuser.join().unwrap();
    assert_eq!(report.status, Status::Failed);
    assert_eq!(
        report.error.unwrap().to_string(),
        format!("server {addr}, block 1: refused: not today: the disk is full")
    );
    assert_eq!(report.blocks, 1, "block 0 is kept");
}

#[test]
fn a_refusal_cut_short_is_reported_as_such() {
    let (addr, refuser) = scripted_server(|mut s| {
        next_request(&mut s);
        s.write_all(&Refusal::new("cut").encode()[..9]).unwrap();
    });
    let report = read(&ReadConfig { sru: Some(1000), ..config(&[addr.to_string()]) }, &mut never_stop()).unwrap();
    refuser.join().unwrap();
    assert_eq!(
        report.error.unwrap().to_string(),
        format!("server {addr}, block 0: closed the connection in the middle of a refusal (9 bytes of it)")
    );
}

/// A server that answers every request on its one connection with the
/// first `count` bytes of `payload`, until the client closes it.
fn answering_with(payload: &'static [u8]) -> (SocketAddr, thread::JoinHandle<()>) {
    scripted_server(move |mut s| {
        let mut header = [0u8; HEADER_LEN];
        while s.read_exact(&mut header).is_ok() {
            let count = u64::from_be_bytes(header[16..24].try_into().unwrap()) as usize;
            s.write_all(&payload[..count]).unwrap();
        }
    })
}

/// PROTOCOL.md, Short answers: the client knows an answer's length from its
/// own request, so an answer of 1 to 3 bytes is payload whatever its bytes,
/// the prefixes of the refusal's magic (`I`, `IN`, `INC`) included; from 4
/// bytes on, only `INCE` is reserved.
#[test]
fn answers_of_one_to_four_bytes_are_payload_whatever_their_bytes() {
    for sru in 1..=4u64 {
        let (addr, answerer) = answering_with(b"INCB");
        let cfg = ReadConfig { sru: Some(sru), blocks: Some(5), warmup: 1, ..config(&[addr.to_string()]) };
        let report = read(&cfg, &mut never_stop()).unwrap();
        answerer.join().unwrap();
        assert_eq!(report.status, Status::Complete, "--sru {sru}B: {:?}", report.error);
        assert_eq!((report.blocks, report.bytes_delivered), (5, 5 * sru), "--sru {sru}B");
    }
}

/// A refusal in place of a 3-byte answer arrives as more bytes than were
/// asked for, a whole frame from the first of them: the reader says why.
#[test]
fn a_refusal_in_place_of_a_short_answer_is_told_by_its_length() {
    let (addr, refuser) = scripted_server(|mut s| {
        next_request(&mut s);
        s.write_all(&Refusal::new("no short reads today").encode()).unwrap();
    });
    let report = read(&ReadConfig { sru: Some(3), ..config(&[addr.to_string()]) }, &mut never_stop()).unwrap();
    refuser.join().unwrap();
    assert_eq!(report.error.unwrap().to_string(), format!("server {addr}, block 0: refused: no short reads today"));
}
