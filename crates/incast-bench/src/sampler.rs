//! The server's sampler: every `interval`, the kernel's view of each open
//! connection's sending side — `TCP_INFO`'s rates and window and, under
//! BBR, `TCP_CC_INFO`'s model ([`BbrInfo`]) — one CSV row per connection.
//!
//! The responses are what a server sends, so the congestion control that
//! shapes them runs on the server's sockets: only there can its state be
//! read. One thread sweeps the open connections (the list the server keeps
//! to shut them down) at a fixed pace, each sweep `interval` after the
//! last one started; a sweep that ends late starts the next at once and the
//! pace goes on from there. Each row has the wall-clock time (seconds since
//! the Unix epoch), so that rows of several servers (processes) on one
//! machine can be set on the client's clock ([`COLUMNS`]).
//!
//! Rates are in bits per second, times in seconds. The BBR columns are
//! empty on a connection whose congestion control is not `bbr`, and
//! `mode` also where the gains name no mode ([`crate::bbr_info::mode_of_gains`]);
//! `pacing_rate_bps` is empty while the socket is not paced.

use crate::bbr_info::{BbrInfo, BBR_UNIT};
use crate::config::{invalid, seconds_or_max, ConfigError};
use crate::tcp_info::TcpInfo;
use serde::Deserialize;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The CSV header: the time, the connection (numbered from 1 in accept order), then the state.
pub const COLUMNS: &str = "unix_s,flow,mode,bw_bps,min_rtt_s,pacing_gain,cwnd_gain,pacing_rate_bps,delivery_rate_bps,\
cwnd_pkts,srtt_s,total_retrans,delivered_pkts,unacked_pkts";
/// The longest interval accepted.
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);

/// What to sample, how often, and where the rows go. As JSON, `interval` is a number of seconds.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleConfig {
    /// Time between the starts of two sweeps (more than 0, at most [`MAX_INTERVAL`]).
    #[serde(deserialize_with = "seconds_or_max")]
    pub interval: Duration,
    /// The CSV file written (created, or truncated).
    pub path: PathBuf,
}

impl SampleConfig {
    /// Check the interval; the error names `sample.interval`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.interval.is_zero() || self.interval > MAX_INTERVAL {
            return Err(invalid("sample.interval", "must be more than 0 and at most 60 s"));
        }
        Ok(())
    }

    /// Create the file; an `InvalidInput` error naming `sample.path` when that fails.
    pub(crate) fn create(&self) -> io::Result<File> {
        File::create(&self.path).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("sample.path: cannot create {:?}: {e}", self.path))
        })
    }
}

/// One connection's row at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Microseconds since the Unix epoch.
    pub unix_us: u64,
    /// The connection's number.
    pub flow: u64,
    /// `TCP_INFO`.
    pub tcp: TcpInfo,
    /// `TCP_CC_INFO` under BBR.
    pub bbr: Option<BbrInfo>,
}

impl Sample {
    /// The row, in [`COLUMNS`]' order, without its newline.
    pub fn row(&self) -> String {
        let t = &self.tcp;
        let mut out = format!("{}.{:06},{}", self.unix_us / 1_000_000, self.unix_us % 1_000_000, self.flow);
        let seconds = |us: u32| format!("{}", f64::from(us) / 1e6);
        match &self.bbr {
            Some(b) => {
                let mode = b.mode().map_or("", |m| m.name());
                // `min_rtt_us` is ~0 until BBR has an RTT sample.
                let min_rtt = if b.min_rtt_us == u32::MAX { String::new() } else { seconds(b.min_rtt_us) };
                let gain = |g: u32| f64::from(g) / BBR_UNIT as f64;
                let _ = write!(out, ",{mode},{},{min_rtt},{},{}", b.bw * 8, gain(b.pacing_gain), gain(b.cwnd_gain));
            }
            None => out.push_str(",,,,,"),
        }
        let pacing =
            if t.pacing_rate == u64::MAX { String::new() } else { (t.pacing_rate.saturating_mul(8)).to_string() };
        let _ = write!(
            out,
            ",{pacing},{},{},{},{},{},{}",
            t.delivery_rate.saturating_mul(8),
            t.snd_cwnd,
            seconds(t.rtt_us),
            t.total_retrans,
            t.delivered,
            t.unacked
        );
        out
    }
}

/// The connections a sweep reads, numbered: the server's list of open ones.
pub(crate) type Connections = Box<dyn Fn() -> Vec<(u64, Arc<TcpStream>)> + Send>;

/// The sampler's thread; [`Sampler::stop`] ends it and returns the rows written.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<io::Result<u64>>,
}

impl Sampler {
    /// Start sweeping `open` every `interval` into `file`, the header first.
    pub(crate) fn spawn(interval: Duration, file: File, open: Connections) -> io::Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("incast-sampler".into())
            .spawn(move || sweep(interval, BufWriter::new(file), &open, &flag))?;
        Ok(Sampler { stop, thread })
    }

    /// Stop after the current sweep, flush the file; the rows written.
    pub(crate) fn stop(self) -> io::Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_else(|_| Err(io::Error::other("sampler thread panicked")))
    }
}

/// Microseconds since the Unix epoch now.
fn unix_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

fn sweep(interval: Duration, mut out: BufWriter<File>, open: &Connections, stop: &AtomicBool) -> io::Result<u64> {
    writeln!(out, "{COLUMNS}")?;
    let mut rows = 0u64;
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        for (flow, stream) in open() {
            // A connection closing under the sweep has nothing more to say.
            let Ok(tcp) = TcpInfo::of(&*stream) else { continue };
            let bbr = BbrInfo::of(&*stream).ok().flatten();
            writeln!(out, "{}", Sample { unix_us: unix_us(), flow, tcp, bbr }.row())?;
            rows += 1;
        }
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    out.flush()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bbr_row_has_every_column_and_a_reno_row_leaves_the_model_empty() {
        let tcp = TcpInfo {
            pacing_rate: 25_000_000,
            delivery_rate: 24_000_000,
            snd_cwnd: 14,
            rtt_us: 250,
            total_retrans: 3,
            delivered: 900,
            unacked: 12,
            ..TcpInfo::default()
        };
        let bbr = BbrInfo { bw: 24_500_000, min_rtt_us: 80, pacing_gain: 320, cwnd_gain: 512 };
        let row = Sample { unix_us: 1_700_000_000_000_042, flow: 2, tcp, bbr: Some(bbr) }.row();
        assert_eq!(
            row,
            "1700000000.000042,2,probe_bw,196000000,0.00008,1.25,2,200000000,192000000,14,0.00025,3,900,12"
        );
        assert_eq!(row.split(',').count(), COLUMNS.split(',').count());
        let unpaced = TcpInfo { pacing_rate: u64::MAX, ..tcp };
        let row = Sample { unix_us: 5_000_000, flow: 1, tcp: unpaced, bbr: None }.row();
        assert_eq!(row, "5.000000,1,,,,,,,192000000,14,0.00025,3,900,12");
    }

    #[test]
    fn the_interval_must_be_more_than_zero_and_at_most_a_minute() {
        let config = |interval| SampleConfig { interval, path: "x.csv".into() };
        assert_eq!(config(Duration::from_micros(100)).validate(), Ok(()));
        for bad in [Duration::ZERO, MAX_INTERVAL + Duration::from_nanos(1)] {
            let err = config(bad).validate().unwrap_err().to_string();
            assert!(err.starts_with("sample.interval: must be more than 0"), "{err}");
        }
    }
}
