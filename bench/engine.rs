//! Engine speed on a fixed heavy incast: 64 servers, 256 KiB SRU, 1 Gbps,
//! 32 KiB switch port, 200 µs RTO_min, 100 blocks (NewReno, delayed ACK 40 ms).
//!
//! Run with `cargo bench -p incast-sim` (release profile, one core). Options
//! after `--`: `--blocks N` (default 100), `--servers N` (default 64),
//! `--repeat K` (default 5), `--delayed-ack-off` (the htsim driver's
//! scenario has none), `--cc NAME` (the congestion control, `tcp.cc`:
//! reno, cubic, dctcp or bbr; default the scenario's), `--json` (one JSON
//! object instead of the text),
//! `--scenario FILE` (run this scenario instead: JSON in the scenario files'
//! shape, as `Scenario.to_json()` writes it; `--blocks` and `--servers` then
//! do not apply, and the timeout rows stay off).
//! Prints simulated data packets and events per wall-clock second (best and
//! median of the repeats) and the process's peak resident memory, so that
//! runs of different lengths show whether memory grows with simulated time.
//! `bench/speed.py` runs it, counts its instructions and sets it beside htsim.

use incast_sim::tcp::CcChoice;
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};
use std::time::Instant;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a whole number, got {v:?}")))
        .unwrap_or(default)
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let blocks = arg("--blocks", 100);
    let servers = arg("--servers", 64) as u32;
    let scenario_file = std::env::args().skip_while(|a| a != "--scenario").nth(1);
    let custom = scenario_file.is_some();
    let repeat = arg("--repeat", 5).max(1);
    let mut s = match scenario_file {
        Some(path) => {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("--scenario {path}: {e}"));
            let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("--scenario {path}: {e}"));
            Scenario::from_json(&json).unwrap_or_else(|e| panic!("--scenario {path}: {e}"))
        }
        None => {
            let mut s = Scenario::fast08(servers);
            s.tcp.rto.min = SimDuration::from_micros(200);
            s.stop.blocks = Some(blocks);
            s.stop.duration = None;
            s
        }
    };
    // The benchmark measures the engine, and its peak-memory figure must not
    // grow with simulated time: keep the timeout counters, not one row per timeout.
    s.stats.timeouts = false;
    if flag("--delayed-ack-off") {
        s.tcp.delayed_ack.mode = incast_sim::tcp::DelayedAckMode::Off;
    }
    if let Some(name) = std::env::args().skip_while(|a| a != "--cc").nth(1) {
        s.tcp.cc = match name.as_str() {
            "reno" => CcChoice::Reno,
            "cubic" => CcChoice::Cubic,
            "dctcp" => CcChoice::Dctcp,
            "bbr" => CcChoice::Bbr,
            _ => panic!("--cc takes reno, cubic, dctcp or bbr, got {name:?}"),
        };
    }

    let mut pkt_rates = Vec::new();
    let mut ev_rates = Vec::new();
    let mut last = None;
    for _ in 0..repeat {
        let t0 = Instant::now();
        let r = run(&s).expect("the benchmark scenario is valid");
        let wall = t0.elapsed().as_secs_f64();
        pkt_rates.push(r.summary.data_packets as f64 / wall);
        ev_rates.push(r.summary.events as f64 / wall);
        last = Some((r.summary, wall));
    }
    let (sum, wall) = last.expect("at least one repeat");
    let (servers, blocks) = (s.servers, sum.blocks);
    pkt_rates.sort_by(f64::total_cmp);
    ev_rates.sort_by(f64::total_cmp);
    let med = |v: &[f64]| v[v.len() / 2];
    if flag("--json") {
        let rss = peak_rss_kib().map_or("null".to_owned(), |k| k.to_string());
        println!(
            "{{\"servers\": {servers}, \"blocks\": {blocks}, \"data_packets\": {}, \"events\": {}, \
             \"median_packets_per_s\": {:.0}, \"median_events_per_s\": {:.0}, \"peak_rss_kib\": {rss}}}",
            sum.data_packets,
            sum.events,
            med(&pkt_rates),
            med(&ev_rates)
        );
        return;
    }
    if custom {
        println!("scenario: {servers} servers, {blocks} blocks");
    } else {
        println!("scenario: {servers} servers, 256KiB SRU, 1Gbps, 32KiB buffer, RTO_min 200us, {blocks} blocks");
    }
    println!(
        "simulated: {:.3} s, goodput {:.1} Mbps, {} data packets, {} events, {} timeouts, {} drops",
        sum.sim_time_s, sum.goodput_mbps, sum.data_packets, sum.events, sum.timeouts, sum.drops
    );
    println!("wall (last run): {wall:.3} s over {repeat} repeats");
    println!(
        "data packets per wall second: best {:.2} M, median {:.2} M",
        pkt_rates[pkt_rates.len() - 1] / 1e6,
        med(&pkt_rates) / 1e6
    );
    println!(
        "events per wall second:       best {:.2} M, median {:.2} M",
        ev_rates[ev_rates.len() - 1] / 1e6,
        med(&ev_rates) / 1e6
    );
    match peak_rss_kib() {
        Some(k) => println!("peak resident memory: {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak resident memory: unavailable (no /proc)"),
    }
}
