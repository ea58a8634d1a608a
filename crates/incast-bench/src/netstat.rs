//! The host's TCP counters from `/proc/net/netstat` (TcpExt) and
//! `/proc/net/snmp` (Tcp, RFC 4022's MIB), read before and after a run.
//!
//! Both files hold pairs of lines, `Prefix: name name ...` then
//! `Prefix: value value ...`. The counters are per network namespace and
//! count every connection of it, not only the benchmark's: on loopback they
//! include the servers' retransmissions, in a namespace testbed only the
//! namespace's own.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io;

/// The counters reported, as `(prefix, name)`: timeouts and their kin first.
pub const COUNTERS: [(&str, &str); 14] = [
    ("TcpExt", "TCPTimeouts"),
    ("TcpExt", "TCPSpuriousRTOs"),
    ("TcpExt", "TCPLossProbes"),
    ("TcpExt", "TCPLossProbeRecovery"),
    ("TcpExt", "TCPFastRetrans"),
    ("TcpExt", "TCPSlowStartRetrans"),
    ("TcpExt", "TCPLostRetransmit"),
    ("TcpExt", "TCPSynRetrans"),
    ("TcpExt", "DelayedACKs"),
    ("TcpExt", "ListenOverflows"),
    ("TcpExt", "ListenDrops"),
    ("Tcp", "RetransSegs"),
    ("Tcp", "InSegs"),
    ("Tcp", "OutSegs"),
];

/// One counter before and after a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CounterDelta {
    /// Value before the first measured block.
    pub before: u64,
    /// Value after the last block.
    pub after: u64,
    /// `after - before`.
    pub delta: u64,
}

/// The [`COUNTERS`] present on this host, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub BTreeMap<String, u64>);

impl Counters {
    /// Read the host's counters; empty where `/proc/net` does not exist (not Linux).
    pub fn read() -> io::Result<Counters> {
        let mut text = String::new();
        for path in ["/proc/net/netstat", "/proc/net/snmp"] {
            match std::fs::read_to_string(path) {
                Ok(t) => text.push_str(&t),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io::Error::new(e.kind(), format!("{path}: {e}"))),
            }
        }
        Ok(Counters::parse(&text))
    }

    /// The [`COUNTERS`] found in the text of `/proc/net/netstat` or `/proc/net/snmp`.
    pub fn parse(text: &str) -> Counters {
        let mut found = BTreeMap::new();
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.windows(2) {
            let (Some((prefix, names)), Some((prefix2, values))) = (pair[0].split_once(':'), pair[1].split_once(':'))
            else {
                continue;
            };
            if prefix != prefix2 || !names.split_whitespace().any(|w| w.parse::<i64>().is_err()) {
                continue; // not a header line followed by its values
            }
            for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
                if COUNTERS.contains(&(prefix, name)) {
                    if let Ok(v) = value.parse::<u64>() {
                        found.insert(name.to_owned(), v);
                    }
                }
            }
        }
        Counters(found)
    }

    /// Each counter present in both snapshots, with its growth from `before`.
    pub fn since(&self, before: &Counters) -> BTreeMap<String, CounterDelta> {
        self.0
            .iter()
            .filter_map(|(name, &after)| {
                let &b = before.0.get(name)?;
                Some((name.clone(), CounterDelta { before: b, after, delta: after.wrapping_sub(b) }))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
TcpExt: SyncookiesSent DelayedACKs TCPTimeouts TCPLossProbes
TcpExt: 0 17 3 5
IpExt: InNoRoutes InTruncatedPkts
IpExt: 0 0
Tcp: RtoAlgorithm RtoMin MaxConn InSegs OutSegs RetransSegs
Tcp: 1 200 -1 19409 11184 4
";

    #[test]
    fn parse_picks_the_listed_counters_from_both_files() {
        let c = Counters::parse(SAMPLE);
        let expected = [("DelayedACKs", 17), ("InSegs", 19409), ("OutSegs", 11184), ("RetransSegs", 4)];
        let expected = expected.into_iter().chain([("TCPLossProbes", 5), ("TCPTimeouts", 3)]);
        assert_eq!(c.0, expected.map(|(k, v)| (k.to_owned(), v)).collect());
    }

    #[test]
    fn since_reports_before_after_and_delta() {
        let before = Counters::parse(SAMPLE);
        let after = Counters::parse(&SAMPLE.replace("0 17 3 5", "0 17 9 5"));
        assert_eq!(after.since(&before)["TCPTimeouts"], CounterDelta { before: 3, after: 9, delta: 6 });
        assert_eq!(after.since(&before)["DelayedACKs"].delta, 0);
    }

    #[test]
    fn read_finds_the_hosts_timeout_counter() {
        let c = Counters::read().unwrap();
        assert!(c.0.contains_key("TCPTimeouts") && c.0.contains_key("RetransSegs"), "{c:?}");
    }
}
