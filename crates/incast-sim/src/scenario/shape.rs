//! The user's shape of a scenario: reading it (the TOML tables as JSON, with
//! dotted overrides), writing it back in canonical and plain-SI forms, its
//! hash, and the schema of every setting.
//!
//! **Models:** each table is read by the config struct that owns it
//! (`settings`); this module knows only the scenario's own four settings
//! (`servers`, `seed`, `blocks`, `duration`, `memory_budget`), which tables there are, and the
//! two rules that span tables: exactly one of `workload.sru` and
//! `workload.block`, and a 1 s run when neither `blocks` nor `duration` is
//! given.
//! **Units:** a quantity is written with its unit (`"200ms"`); a plain
//! number other than 0 is refused (`settings::quantity`). The one exception
//! is the plain-SI form ([`Written::si`], Python's `Scenario.to_dict`), which
//! says so in its top-level key `units = "si"`: there every plain number of a
//! duration is in seconds, of a rate in bit/s and of a size or buffer in
//! bytes, and reads back to the same scenario.

use super::footprint::DEFAULT_MEMORY_BUDGET;
use super::{invalid, invalid_owned, Scenario, StopConfig, DEFAULT_DURATION, DEFAULT_SEED, MAX_SERVERS};
use crate::error::SimError;
use crate::net::fabric_table;
use crate::net::wan::WanConfig;
use crate::net::{dctcp_paper_k, BufferLimit, LinkConfig, SwitchConfig, DCTCP_K_WORD};
use crate::settings::{self, python_repr, Count, Duration, Entry, Setting, Size, Spec, Table};
use crate::stats::trace::TraceConfig;
use crate::stats::StatsConfig;
use crate::tcp::TcpConfig;
use crate::workload::background::BackgroundConfig;
use crate::workload::traffic::TrafficConfig;
use crate::workload::{ResponseSize, SyncReadConfig, WorkloadKind};
use serde_json::{Map, Value as Json};

/// The setting `"dctcp"` may name: the DCTCP paper's K for the link rate.
const DCTCP_K_KEY: &str = "ecn_threshold";

/// The scenario's single settings, in order.
const TOP: [&str; 5] = ["servers", "seed", "blocks", "duration", "memory_budget"];
/// The scenario's tables, in order.
const TABLES: [&str; 10] =
    ["link", "topology", "switch", "tcp", "workload", "background", "traffic", "wan", "stats", "trace"];

const SERVERS: Count = Count::new(0, MAX_SERVERS as u64, "servers");
const SEED: Count = Count::new(0, u64::MAX, "");
const BLOCKS: Count = Count::new(1, u64::MAX, "blocks");
const MEMORY: Size = Size { min: 1 };
/// The top-level key that marks the plain-SI form, and its one value.
const UNITS: (&str, &str) = ("units", "si");

/// One setting's line in the scenario's schema: its dotted name and the
/// table's line for it.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaEntry {
    /// Dotted name, e.g. `tcp.rto_min`.
    pub name: String,
    /// The setting.
    pub setting: Setting,
}

/// A scenario written out: the canonical TOML shape in human units and the
/// same settings in plain SI numbers, each an ordered JSON object.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    /// Canonical TOML shape (`"200ms"`, `"32KiB"`).
    pub toml: Json,
    /// Plain SI numbers (`0.2`, `32768`), words kept, marked `units = "si"`.
    pub si: Json,
}

impl Scenario {
    /// Read a scenario in the user's shape (the TOML tables as JSON): missing
    /// settings take their defaults, unknown ones are refused, and the result
    /// is validated. Every error names the dotted setting.
    pub fn from_json(raw: &Json) -> Result<Scenario, SimError> {
        let s = Self::read(raw)?;
        s.check()?;
        Ok(s)
    }

    /// Read the user's shape, checking each setting alone.
    pub(super) fn read(raw: &Json) -> Result<Scenario, SimError> {
        let Json::Object(raw) = raw else {
            return Err(invalid_owned(
                "scenario".into(),
                format!("must be a table of settings, got {}", python_repr(raw)),
            ));
        };
        let si;
        let raw = match raw.get(UNITS.0) {
            None => raw,
            Some(Json::String(u)) if u == UNITS.1 => {
                si = Self::with_si_units(raw);
                &si
            }
            Some(other) => {
                return Err(invalid(
                    UNITS.0,
                    format!(
                    "must be \"si\" (plain numbers in seconds, bit/s and bytes, as Scenario.to_dict writes), got {}",
                    python_repr(other)
                ),
                ))
            }
        };
        let mut s = Scenario { seed: DEFAULT_SEED, ..Scenario::default() };
        Self::refuse_unknown_keys(raw)?;
        if !raw.contains_key("servers") {
            return Err(invalid("servers", format!("required; {}", Spec::<u32>::allowed(&SERVERS))));
        }
        let at = |key: &str, message: String| invalid_owned(key.to_owned(), message);
        let (mut blocks, mut duration) = (None, None);
        for (key, value) in raw {
            match key.as_str() {
                k if k == UNITS.0 => {}
                "servers" => s.servers = SERVERS.parse(value).map_err(|m| at(key, m))?,
                "seed" => s.seed = SEED.parse(value).map_err(|m| at(key, m))?,
                "blocks" if value.is_null() => {}
                "blocks" => blocks = Some(BLOCKS.parse(value).map_err(|m| at(key, m))?),
                "duration" if value.is_null() => {}
                "duration" => duration = Some(Duration::POSITIVE.parse(value).map_err(|m| at(key, m))?),
                "memory_budget" if value.is_null() => {}
                "memory_budget" => s.memory_budget = Some(MEMORY.parse(value).map_err(|m| at(key, m))?),
                table if TABLES.contains(&table) => {
                    let Json::Object(map) = value else {
                        return Err(at(key, format!("must be a table of settings, got {}", python_repr(value))));
                    };
                    let field = |k: String| if k.is_empty() { table.to_owned() } else { format!("{table}.{k}") };
                    s.read_table(table, map).map_err(|(k, m)| at(&field(k), m))?;
                }
                _ => unreachable!("unknown keys are refused above"),
            }
        }
        let switch = raw.get("switch").and_then(Json::as_object);
        if switch.and_then(|t| t.get(DCTCP_K_KEY)).is_some_and(|v| v == DCTCP_K_WORD) {
            s.switch.ecn_threshold = Some(BufferLimit::Packets(dctcp_paper_k(s.link.rate)));
        }
        s.stop = match (blocks, duration) {
            (None, None) => StopConfig::default(),
            (blocks, duration) => StopConfig { blocks, duration },
        };
        if s.servers == 0 {
            // No servers, no reads: the hosts are the fabric's, for `[traffic]`.
            s.workload.kind = WorkloadKind::None;
        }
        Ok(s)
    }

    /// The plain-SI form with every plain number of a quantity given its SI
    /// unit (`0.2` seconds → `"0.2s"`), so that it reads as the TOML shape does.
    fn with_si_units(raw: &Map<String, Json>) -> Map<String, Json> {
        fn unit_of(kind: &str) -> Option<&'static str> {
            match kind {
                "duration" | "delayed ack" => Some("s"),
                "rate" => Some("bps"),
                "size" | "buffer" => Some("B"),
                _ => None,
            }
        }
        fn give(value: &mut Json, unit: &str) {
            if let Json::Number(n) = value {
                *value = Json::String(format!("{n}{unit}"));
            }
        }
        let mut out = raw.clone();
        out.remove(UNITS.0);
        for (key, kind) in [("duration", "duration"), ("memory_budget", "size")] {
            if let (Some(v), Some(unit)) = (out.get_mut(key), unit_of(kind)) {
                give(v, unit);
            }
        }
        for table in TABLES {
            let Some(Json::Object(map)) = out.get_mut(table) else { continue };
            let mut settings = Vec::new();
            Self::describe_table(table, &mut settings);
            for setting in settings {
                if let (Some(v), Some(unit)) = (map.get_mut(setting.key), unit_of(setting.kind)) {
                    give(v, unit);
                }
            }
            // A graph's links carry their own rates and delays.
            if let Some(Json::Array(links)) = map.get_mut("links").filter(|_| table == "topology") {
                for link in links.iter_mut().filter_map(Json::as_object_mut) {
                    for (key, unit) in [("rate", "bps"), ("rate_ba", "bps"), ("delay", "s"), ("delay_ba", "s")] {
                        if let Some(v) = link.get_mut(key) {
                            give(v, unit);
                        }
                    }
                }
            }
        }
        out
    }

    /// "unknown setting; did you mean servers?", or what a scenario has.
    fn unknown_top(key: &str) -> String {
        if let Some(near) = settings::closest(key, TOP.into_iter().chain(TABLES)) {
            return format!("unknown setting; did you mean {near}?");
        }
        let tables: Vec<String> = TABLES.iter().map(|t| format!("[{t}]")).collect();
        format!("unknown setting; a scenario has {} and the tables {}", TOP.join(", "), tables.join(", "))
    }

    /// Every unknown key of `raw`, as one error: the first names its dotted
    /// key and says what it may have meant (or, retired, what replaced it);
    /// the others follow, each with a close name where there is one.
    fn refuse_unknown_keys(raw: &Map<String, Json>) -> Result<(), SimError> {
        let mut unknown: Vec<(String, String)> = Vec::new();
        for (key, value) in raw {
            if TOP.contains(&key.as_str()) || key == UNITS.0 {
                continue;
            }
            if !TABLES.contains(&key.as_str()) {
                unknown.push((key.clone(), Self::unknown_top(key)));
                continue;
            }
            let Json::Object(map) = value else { continue };
            let keys = Self::table_keys(key);
            for k in map.keys().filter(|k| !keys.contains(&k.as_str())) {
                // A setting that was retired names what replaced it.
                let message = match TcpConfig::retired(k).filter(|_| key == "tcp") {
                    Some(why) => why.to_owned(),
                    None => settings::unknown(key, &keys, k),
                };
                unknown.push((format!("{key}.{k}"), message));
            }
        }
        let Some((field, message)) = unknown.first().cloned() else { return Ok(()) };
        if unknown.len() == 1 {
            return Err(invalid_owned(field, message));
        }
        let others: Vec<String> = unknown[1..]
            .iter()
            .map(|(k, m)| match m.strip_prefix("unknown setting; did you mean ") {
                Some(near) => format!("{k} (did you mean {})", near.trim_end_matches('?')),
                None => k.clone(),
            })
            .collect();
        Err(invalid_owned(field, format!("{message}; also unknown: {}", others.join(", "))))
    }

    fn read_table(&mut self, table: &str, map: &Map<String, Json>) -> Result<(), (String, String)> {
        match table {
            "link" => self.link = settings::read_table(table, map)?,
            "topology" => self.topology = fabric_table::read(map)?,
            "switch" => {
                // `ecn_threshold = "dctcp"` waits for the link rate (`Scenario::read`).
                let mut map = map.clone();
                if map.get(DCTCP_K_KEY).is_some_and(|v| v == DCTCP_K_WORD) {
                    map.remove(DCTCP_K_KEY);
                }
                self.switch = settings::read_table(table, &map)?;
            }
            "tcp" => self.tcp = settings::read_table(table, map)?,
            "workload" => {
                ResponseSize::check_keys(map).map_err(|m| (String::new(), m))?;
                self.workload = settings::read_table(table, map)?;
            }
            "background" => self.background = settings::read_table(table, map)?,
            "traffic" => self.traffic = settings::read_table(table, map)?,
            "wan" => self.wan = settings::read_table(table, map)?,
            "stats" => self.stats = settings::read_table(table, map)?,
            "trace" => self.trace = settings::read_table(table, map)?,
            _ => unreachable!("TABLES lists every table"),
        }
        Ok(())
    }

    /// Apply a dotted override (`"tcp.rto_min"`, `"servers"`) to a scenario
    /// in the user's shape; a nested table (`{"tcp": {"rto_min": "1ms"}}`)
    /// applies each of its settings. Setting `workload.sru` removes
    /// `workload.block` and the reverse. An unknown path is refused naming it.
    pub fn apply_override(raw: &mut Map<String, Json>, path: &str, value: Json) -> Result<(), SimError> {
        if let (true, Json::Object(inner)) = (TABLES.contains(&path), &value) {
            for (k, v) in inner.clone() {
                Self::apply_override(raw, &format!("{path}.{k}"), v)?;
            }
            return Ok(());
        }
        let fail = |m: String| Err(invalid_owned(path.to_owned(), m));
        let parts: Vec<&str> = path.split('.').collect();
        match parts.as_slice() {
            [top] if TOP.contains(top) => {
                raw.insert((*top).to_owned(), value);
                Ok(())
            }
            [table, key] if TABLES.contains(table) => {
                let keys = Self::table_keys(table);
                if let Some(why) = TcpConfig::retired(key).filter(|_| *table == "tcp") {
                    return fail(why.to_owned());
                }
                if !keys.contains(key) {
                    return fail(settings::unknown(table, &keys, key));
                }
                let entry = raw.entry((*table).to_owned()).or_insert_with(|| Json::Object(Map::new()));
                let Json::Object(map) = entry else {
                    return Err(invalid_owned(
                        (*table).to_owned(),
                        format!("must be a table, got {}", python_repr(entry)),
                    ));
                };
                if *table == "workload" && (*key == "sru" || *key == "block") {
                    map.remove(if *key == "sru" { "block" } else { "sru" });
                }
                map.insert((*key).to_owned(), value);
                Ok(())
            }
            [table, rest @ ..] if TABLES.contains(table) => {
                fail(settings::unknown(table, &Self::table_keys(table), &rest.join(".")))
            }
            [top, ..] if TOP.contains(top) => fail(format!("unknown setting; {top} is a single value, not a table")),
            [top, ..] => fail(Self::unknown_top(top)),
            [] => fail(Self::unknown_top("")),
        }
    }

    /// The keys of one table, in order.
    fn table_keys(table: &str) -> Vec<&'static str> {
        let mut out = Vec::new();
        Self::describe_table(table, &mut out);
        out.into_iter().map(|s| s.key).collect()
    }

    fn describe_table(table: &str, out: &mut Vec<Setting>) {
        match table {
            "link" => LinkConfig::describe(out),
            "topology" => fabric_table::describe(out),
            "switch" => SwitchConfig::describe(out),
            "tcp" => TcpConfig::describe(out),
            "workload" => SyncReadConfig::describe(out),
            "background" => BackgroundConfig::describe(out),
            "traffic" => TrafficConfig::describe(out),
            "wan" => WanConfig::describe(out),
            "stats" => StatsConfig::describe(out),
            "trace" => TraceConfig::describe(out),
            _ => {}
        }
    }

    /// Every setting of a scenario, dotted, in order: the schema the command
    /// line, `--set` help and the docs are built from.
    pub fn schema() -> Vec<SchemaEntry> {
        let top = [
            (
                "servers",
                "count",
                Json::Null,
                Spec::<u32>::allowed(&SERVERS),
                None,
                "Number of servers answering each block (of each client); 0: no reads (workload.kind \"none\"), the hosts run only [traffic] or [background].",
            ),
            (
                "seed",
                "count",
                Json::from(1),
                Spec::<u64>::allowed(&SEED),
                None,
                "Master seed; every random choice derives from it.",
            ),
            (
                "blocks",
                "count",
                Json::Null,
                Spec::<u64>::allowed(&BLOCKS),
                None,
                "Stop once every client has completed this many blocks (without a duration, a run that \
                 has not done so in 10^9 events stops with an error).",
            ),
            (
                "duration",
                "duration",
                Json::String(Duration::format(DEFAULT_DURATION)),
                Duration::POSITIVE.allowed(),
                None,
                "Stop at this simulated time (1s if neither blocks nor duration is given).",
            ),
            (
                "memory_budget",
                "size",
                Json::String(Size::format(DEFAULT_MEMORY_BUDGET.get())),
                MEMORY.allowed(),
                None,
                "Refuse a run whose memory, estimated before it starts (endpoints, packets in flight, \
                 route tables, result rows: scenario::footprint), would exceed this, and stop one whose \
                 records or packets in flight grow past it as it runs (sim::record).",
            ),
        ];
        let mut out: Vec<SchemaEntry> = top
            .into_iter()
            .map(|(key, kind, default, allowed, none, doc)| SchemaEntry {
                name: key.to_owned(),
                setting: Setting { key, kind, default, allowed, none, doc: doc.to_owned() },
            })
            .collect();
        for table in TABLES {
            let mut settings = Vec::new();
            Self::describe_table(table, &mut settings);
            out.extend(settings.into_iter().map(|s| SchemaEntry { name: format!("{table}.{}", s.key), setting: s }));
        }
        out
    }

    /// Content hash of the canonical form: SHA-256 of its compact JSON, in hex.
    /// Two scenarios that run alike (the same settings, however written)
    /// have the same hash; it keys the sweep cache.
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.written().toml.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The canonical TOML shape and the plain-SI form of the scenario.
    pub fn written(&self) -> Written {
        let (mut toml, mut si) = (Map::new(), Map::new());
        si.insert(UNITS.0.to_owned(), Json::from(UNITS.1));
        fn put(e: Entry, toml: &mut Map<String, Json>, si: &mut Map<String, Json>) {
            if !e.toml.is_null() {
                toml.insert(e.key.to_owned(), e.toml);
            }
            si.insert(e.key.to_owned(), e.si);
        }
        let servers = Entry { key: "servers", toml: Json::from(self.servers), si: Json::from(self.servers) };
        put(servers, &mut toml, &mut si);
        put(Entry { key: "seed", toml: Json::from(self.seed), si: Json::from(self.seed) }, &mut toml, &mut si);
        if let Some(b) = self.stop.blocks {
            put(Entry { key: "blocks", toml: Json::from(b), si: Json::from(b) }, &mut toml, &mut si);
        }
        if let Some(d) = self.stop.duration {
            let e = Entry { key: "duration", toml: Duration::POSITIVE.toml(&d), si: Duration::POSITIVE.si(&d) };
            put(e, &mut toml, &mut si);
        }
        // In the canonical form only when not the default, so a scenario
        // without one keeps its hash (and its plain-SI form, which holds the
        // budget that applies, reads back to the same hash).
        let budget = self.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET);
        let toml_budget = if budget != DEFAULT_MEMORY_BUDGET { MEMORY.toml(&budget) } else { Json::Null };
        put(Entry { key: "memory_budget", toml: toml_budget, si: MEMORY.si(&budget) }, &mut toml, &mut si);
        for table in TABLES {
            let mut entries = Vec::new();
            match table {
                "link" => self.link.write(&mut entries),
                "topology" => fabric_table::write(&self.topology, &mut entries),
                "switch" => self.switch.write(&mut entries),
                "tcp" => self.tcp.write(&mut entries),
                "workload" => self.workload.write(&mut entries),
                "background" => self.background.write(&mut entries),
                "traffic" => self.traffic.write(&mut entries),
                "wan" => self.wan.write(&mut entries),
                "stats" => self.stats.write(&mut entries),
                "trace" => self.trace.write(&mut entries),
                _ => unreachable!("TABLES lists every table"),
            }
            let (mut t, mut s) = (Map::new(), Map::new());
            for e in entries {
                put(e, &mut t, &mut s);
            }
            // [traffic] is in the canonical form only when on, so a scenario without it keeps its hash.
            if table != "traffic" || self.traffic != TrafficConfig::default() {
                toml.insert(table.to_owned(), Json::Object(t));
            }
            si.insert(table.to_owned(), Json::Object(s));
        }
        Written { toml: Json::Object(toml), si: Json::Object(si) }
    }
}
