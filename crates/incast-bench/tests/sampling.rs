//! A server sampling its connections while a client reads from it over loopback with BBR.

use incast_bench::sampler::{SampleConfig, COLUMNS};
use incast_bench::server::Log;
use incast_bench::sockopt::SocketOptions;
use incast_bench::{read, ReadConfig, Server, ServerConfig, Status};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn a_bbr_server_writes_a_row_per_connection_per_sweep_with_its_mode() {
    let path = std::env::temp_dir().join(format!("incast-sampling-{}.csv", std::process::id()));
    let bbr = SocketOptions { congestion: Some("bbr".into()), ..SocketOptions::default() };
    let sample = SampleConfig { interval: Duration::from_millis(1), path: path.clone() };
    let config = ServerConfig { socket: bbr.clone(), sample: Some(sample), ..ServerConfig::default() };
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let log: Log = Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned()));
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), config).unwrap().with_log(log).spawn().unwrap();
    let addr = server.local_addr().to_string();
    let two = ReadConfig {
        servers: vec![addr.clone(), addr],
        sru: Some(4 << 20),
        blocks: Some(20),
        socket: bbr,
        ..ReadConfig::default()
    };
    let report = read(&two, &mut || false).unwrap();
    assert_eq!(report.status, Status::Complete);
    assert!(report.start_unix_s.is_some_and(|t| t > 1.6e9), "{:?}", report.start_unix_s);
    server.stop().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut rows = text.lines();
    assert_eq!(rows.next(), Some(COLUMNS));
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert!(rows.len() >= 2, "{} rows", rows.len());
    let flows: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[1]).collect();
    assert_eq!(flows.into_iter().collect::<Vec<_>>(), ["1", "2"]);
    for row in &rows {
        assert_eq!(row.len(), COLUMNS.split(',').count());
        assert!(["startup", "drain", "probe_bw", "probe_rtt"].contains(&row[2]), "mode in {row:?}");
    }
    let logged = lines.lock().unwrap();
    let n = logged.len();
    assert!(logged[n - 2].starts_with("sampled the open connections every 1ms: "), "{:?}", logged[n - 2]);
    assert!(logged[n - 1].starts_with("shutdown: "), "the stop line stays last");
}

#[test]
fn a_sample_file_that_cannot_be_created_is_named() {
    let sample = SampleConfig { interval: Duration::from_millis(1), path: "/no/such/dir/x.csv".into() };
    let config = ServerConfig { sample: Some(sample), ..ServerConfig::default() };
    let err = Server::bind("127.0.0.1:0".parse().unwrap(), config).err().expect("refused");
    assert!(err.to_string().starts_with("sample.path: cannot create \"/no/such/dir/x.csv\": "), "{err}");
}
