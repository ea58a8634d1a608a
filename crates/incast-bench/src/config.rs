//! What one benchmark read does: servers, sizes, stop condition, mitigations.
//!
//! The same settings arrive from Rust, from the Python API and, as JSON, from
//! the `incast._core` glue; [`ReadConfig::validate`] checks them once for all
//! and names the offending field, in the words of the `incast read` options.

use crate::sockopt::SocketOptions;
use serde::{Deserialize, Deserializer, Serialize};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;
use thiserror::Error;

/// The port `incast serve` listens on, and the one a server named without a port is reached on.
pub const DEFAULT_PORT: u16 = 7470;

/// A setting that cannot be used: the field, then what is allowed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The setting's name (`sru`, `max_inflight`, `servers`, ...).
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError { field, message: message.into() }
}

/// Settings of one synchronized-read run.
///
/// Default values: no servers (which is invalid), 256 KiB per server per
/// block (FAST08's SRU), 100 blocks, no warm-up, a 10 s timeout per block,
/// every server answering at once (no `max_inflight`), no stagger, socket
/// options as [`SocketOptions::default`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadConfig {
    /// `HOST[:PORT]` of each server (port [`DEFAULT_PORT`] when left out;
    /// IPv6 literals as `[::1]:7470` or bare `::1`).
    pub servers: Vec<String>,
    /// Bytes each server returns per block (the SRU); exclusive with `block`.
    pub sru: Option<u64>,
    /// Bytes per block, split over the servers (the first `block % n` servers
    /// return one byte more); exclusive with `sru`.
    pub block: Option<u64>,
    /// Stop after this many measured blocks; exclusive with `duration`.
    pub blocks: Option<u64>,
    /// Start no new block once this much time has been measured; exclusive with `blocks`.
    #[serde(deserialize_with = "seconds", serialize_with = "as_seconds")]
    pub duration: Option<Duration>,
    /// Blocks run first and left out of every figure (connections warm up their windows).
    pub warmup: u64,
    /// A block that has not arrived whole this long after it started fails the run.
    #[serde(deserialize_with = "seconds", serialize_with = "as_seconds")]
    pub timeout: Option<Duration>,
    /// At most this many servers answer at once; the next request leaves when an answer completes.
    pub max_inflight: Option<usize>,
    /// The request to the i-th server leaves `i × stagger` after the block starts.
    #[serde(deserialize_with = "seconds", serialize_with = "as_seconds")]
    pub stagger: Option<Duration>,
    /// Options of every client connection.
    pub socket: SocketOptions,
}

/// The default SRU, when neither `sru` nor `block` is set: 256 KiB (FAST08 §3).
pub const DEFAULT_SRU: u64 = 256 * 1024;
/// The default run length, when neither `blocks` nor `duration` is set.
pub const DEFAULT_BLOCKS: u64 = 100;
/// The default per-block timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest per-block timeout accepted.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After this many measured blocks.
    Blocks(u64),
    /// At the first block boundary after this much measured time.
    Duration(Duration),
}

/// A [`ReadConfig`] checked and resolved: addresses looked up, defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// `host:port` of each server, as reported.
    pub names: Vec<String>,
    /// The address each name resolved to.
    pub addrs: Vec<SocketAddr>,
    /// Bytes requested from each server per block.
    pub per_server: Vec<u64>,
    /// Bytes per server when the SRU is fixed.
    pub sru: Option<u64>,
    /// When to stop.
    pub stop: Stop,
    /// Warm-up blocks.
    pub warmup: u64,
    /// Per-block timeout (also the connect timeout).
    pub timeout: Duration,
    /// Servers answering at once.
    pub max_inflight: usize,
    /// Delay between successive requests of a block.
    pub stagger: Duration,
}

impl ReadConfig {
    /// Check every field and resolve the server names; the error names the first bad field.
    pub fn validate(&self) -> Result<Plan, ConfigError> {
        if self.servers.is_empty() {
            return Err(invalid("servers", "required; give at least one HOST[:PORT]"));
        }
        let (names, addrs): (Vec<String>, Vec<SocketAddr>) =
            self.servers.iter().map(|s| resolve(s)).collect::<Result<Vec<_>, _>>()?.into_iter().unzip();
        let n = names.len() as u64;
        let per_server = match (self.sru, self.block) {
            (Some(_), Some(_)) => {
                return Err(invalid("sru", "give sru (bytes per server) or block (bytes per block), not both"))
            }
            (Some(0), None) => return Err(invalid("sru", "must be at least 1 byte")),
            (Some(sru), None) => vec![sru; names.len()],
            (None, Some(block)) if block < n => {
                return Err(invalid(
                    "block",
                    format!("{block} bytes cannot give each of {n} servers at least one byte"),
                ))
            }
            (None, Some(block)) => (0..n).map(|i| block / n + u64::from(i < block % n)).collect(),
            (None, None) => vec![DEFAULT_SRU; names.len()],
        };
        let stop = match (self.blocks, self.duration) {
            (Some(_), Some(_)) => return Err(invalid("blocks", "give blocks or duration, not both")),
            (Some(0), None) => return Err(invalid("blocks", "must be at least 1")),
            (Some(b), None) => Stop::Blocks(b),
            (None, Some(d)) if d.is_zero() => return Err(invalid("duration", "must be more than 0")),
            (None, Some(d)) => Stop::Duration(d),
            (None, None) => Stop::Blocks(DEFAULT_BLOCKS),
        };
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT);
        if timeout.is_zero() || timeout > MAX_TIMEOUT {
            return Err(invalid("timeout", "must be more than 0 and at most one day"));
        }
        let stagger = self.stagger.unwrap_or_default();
        let last_request = stagger.checked_mul(n.saturating_sub(1).try_into().unwrap_or(u32::MAX));
        if !matches!(last_request, Some(t) if t < timeout) {
            let why = format!(
                "the last of {n} requests would leave at or after the {timeout:?} timeout; give less than timeout / {}",
                n - 1
            );
            return Err(invalid("stagger", why));
        }
        let max_inflight = match self.max_inflight {
            Some(0) => return Err(invalid("max_inflight", "must be at least 1")),
            Some(k) => k.min(names.len()),
            None => names.len(),
        };
        self.socket.validate()?;
        Ok(Plan {
            names,
            addrs,
            per_server,
            sru: self.block.is_none().then(|| self.sru.unwrap_or(DEFAULT_SRU)),
            stop,
            warmup: self.warmup,
            timeout,
            max_inflight,
            stagger,
        })
    }
}

/// `"host"`, `"host:port"`, `"1.2.3.4:5"`, `"[::1]:5"` or `"::1"` -> (`host:port`, first address).
fn resolve(server: &str) -> Result<(String, SocketAddr), ConfigError> {
    let text = server.trim();
    let bad =
        |why: String| invalid("servers", format!("{text:?}: {why}; give HOST[:PORT] like 10.0.0.2:{DEFAULT_PORT}"));
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok((addr.to_string(), addr));
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        let addr = SocketAddr::new(ip, DEFAULT_PORT);
        return Ok((addr.to_string(), addr));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => {
            (host, port.parse::<u16>().map_err(|_| bad(format!("port {port:?} is not a number from 0 to 65535")))?)
        }
        None => (text, DEFAULT_PORT),
    };
    if host.is_empty() {
        return Err(bad("no host".into()));
    }
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| bad(format!("cannot resolve {host:?} ({e})")))?
        .next()
        .ok_or_else(|| bad(format!("{host:?} has no address")))?;
    Ok((format!("{host}:{port}"), addr))
}

/// An optional duration given as a number of seconds (finite, not negative).
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let value: Option<f64> = Option::deserialize(d)?;
    value
        .map(|s| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| serde::de::Error::custom(format!("{s} is not a number of seconds from 0 up")))
        })
        .transpose()
}

/// A duration given as a number of seconds, not negative; one too long for a
/// `Duration` becomes `Duration::MAX`, so that validation names its field.
pub(crate) fn seconds_or_max<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = f64::deserialize(d)?;
    if s.is_nan() || s < 0.0 {
        return Err(serde::de::Error::custom(format!("{s} is not a number of seconds from 0 up")));
    }
    Ok(Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
}

fn as_seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    d.map(|d| d.as_secs_f64()).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(servers: &[&str]) -> ReadConfig {
        ReadConfig { servers: servers.iter().map(|s| s.to_string()).collect(), ..ReadConfig::default() }
    }

    #[test]
    fn defaults_read_256kib_from_each_server_for_100_blocks() {
        let plan = config(&["127.0.0.1", "127.0.0.1:9000"]).validate().unwrap();
        assert_eq!(plan.names, ["127.0.0.1:7470", "127.0.0.1:9000"]);
        assert_eq!(plan.per_server, [262_144, 262_144]);
        assert_eq!((plan.sru, plan.stop, plan.max_inflight), (Some(262_144), Stop::Blocks(100), 2));
        assert_eq!(plan.timeout, Duration::from_secs(10));
    }

    #[test]
    fn a_block_is_split_with_the_remainder_on_the_first_servers() {
        let plan = ReadConfig { block: Some(10), ..config(&["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]) }
            .validate()
            .unwrap();
        assert_eq!(plan.per_server, [4, 3, 3]);
        assert_eq!(plan.sru, None);
    }

    #[test]
    fn ipv6_and_host_names_resolve() {
        let plan = config(&["[::1]:5", "::1", "localhost:6"]).validate().unwrap();
        assert_eq!(plan.names, ["[::1]:5", "[::1]:7470", "localhost:6"]);
        assert_eq!(plan.addrs[2].port(), 6);
    }

    #[test]
    fn every_bad_setting_names_its_field() {
        let base = config(&["127.0.0.1"]);
        let cases = [
            (config(&[]), "servers: required"),
            (config(&["127.0.0.1:http"]), "servers: \"127.0.0.1:http\": port \"http\""),
            (config(&[":80"]), "servers: \":80\": no host"),
            (ReadConfig { sru: Some(1), block: Some(1), ..base.clone() }, "sru: give sru"),
            (ReadConfig { sru: Some(0), ..base.clone() }, "sru: must be at least 1 byte"),
            (ReadConfig { block: Some(1), ..config(&["127.0.0.1:1", "127.0.0.1:2"]) }, "block: 1 bytes cannot"),
            (ReadConfig { blocks: Some(1), duration: Some(Duration::from_secs(1)), ..base.clone() }, "blocks: give"),
            (ReadConfig { blocks: Some(0), ..base.clone() }, "blocks: must be at least 1"),
            (ReadConfig { duration: Some(Duration::ZERO), ..base.clone() }, "duration: must be more than 0"),
            (ReadConfig { timeout: Some(Duration::ZERO), ..base.clone() }, "timeout: must be more than 0"),
            (ReadConfig { timeout: Some(Duration::from_secs(86_401)), ..base.clone() }, "timeout: must be more than 0"),
            (
                ReadConfig {
                    stagger: Some(Duration::from_secs(5)),
                    ..config(&["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"])
                },
                "stagger: the last of 3 requests would leave at or after the 10s timeout; give less than timeout / 2",
            ),
            (
                ReadConfig { stagger: Some(Duration::MAX), ..config(&["127.0.0.1:1", "127.0.0.1:2"]) },
                "stagger: the last of 2 requests",
            ),
            (ReadConfig { max_inflight: Some(0), ..base.clone() }, "max_inflight: must be at least 1"),
            (
                ReadConfig { socket: SocketOptions { rcvbuf: Some(0), ..SocketOptions::default() }, ..base.clone() },
                "rcvbuf: ",
            ),
            (
                ReadConfig {
                    socket: SocketOptions { sndbuf: Some(1 << 31), ..SocketOptions::default() },
                    ..base.clone()
                },
                "sndbuf: ",
            ),
            (
                ReadConfig {
                    socket: SocketOptions { congestion: Some(String::new()), ..SocketOptions::default() },
                    ..base
                },
                "congestion: ",
            ),
        ];
        for (cfg, expected) in cases {
            let err = cfg.validate().unwrap_err().to_string();
            assert!(err.starts_with(expected), "{err:?} should start with {expected:?}");
        }
    }

    #[test]
    fn max_inflight_above_the_server_count_means_all_at_once() {
        let plan = ReadConfig { max_inflight: Some(64), ..config(&["127.0.0.1"]) }.validate().unwrap();
        assert_eq!(plan.max_inflight, 1);
    }

    #[test]
    fn json_durations_are_seconds() {
        let cfg: ReadConfig =
            serde_json::from_str(r#"{"servers": ["127.0.0.1"], "stagger": 0.0001, "timeout": 2}"#).unwrap();
        assert_eq!((cfg.stagger, cfg.timeout), (Some(Duration::from_micros(100)), Some(Duration::from_secs(2))));
        let err = serde_json::from_str::<ReadConfig>(r#"{"timeout": -1}"#).unwrap_err();
        assert!(err.to_string().contains("-1 is not a number of seconds"), "{err}");
    }
}
