//! The identity corpus: scenarios that together turn on every engine feature,
//! each pinned by a digest of its full result. "Behaviour unchanged" means
//! this test passed.
//!
//! Each `tests/identity/NAME.json` is a scenario in the user's shape (the
//! settings that differ from the defaults, written by
//! `tests/make_identity_corpus.py` from the packaged experiments, the presets
//! and the traces). `tests/identity/digests.txt` holds one line per scenario:
//! its name, the SHA-256 of its `RunResult` as JSON without the event count
//! (and of its pcap files when it captures), and the event count apart, so
//! that a change which runs fewer events for the same results says so. A
//! deliberate change of behaviour re-records the digests with
//!
//! ```sh
//! INCAST_RECORD=1 cargo test -p incast-sim --test identity
//! ```
//!
//! and its commit says what moved and why.

use incast_sim::{run, Scenario};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What one scenario's run is pinned by.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pinned {
    digest: String,
    events: u64,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("identity")
}

/// Every scenario of the corpus, by name, in name order.
fn scenarios() -> BTreeMap<String, Scenario> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(corpus_dir()).expect("tests/identity is readable") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let raw: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let scenario = Scenario::from_json(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.insert(name, scenario);
        }
    }
    out
}

/// Run `scenario` and digest everything it returns.
fn pin(scenario: &Scenario) -> Pinned {
    let result = run(scenario).expect("a corpus scenario runs");
    let events = result.summary.events;
    let mut json = serde_json::to_value(&result).unwrap();
    json["summary"].as_object_mut().unwrap().remove("events");
    let mut hash = Sha256::new();
    hash.update(json.to_string().as_bytes());
    for file in result.capture.iter().flat_map(|c| c.host_files()) {
        hash.update((file.len() as u64).to_le_bytes());
        hash.update(&file);
    }
    let digest = hash.finalize().iter().fold(String::new(), |mut s, b| {
        write!(s, "{b:02x}").unwrap();
        s
    });
    Pinned { digest, events }
}

/// Every scenario's pin, run on all cores.
fn pin_all(scenarios: &BTreeMap<String, Scenario>) -> BTreeMap<String, Pinned> {
    let work: Vec<(&String, &Scenario)> = scenarios.iter().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(work.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, scenario)) = work.get(i) else { break };
                let pinned = pin(scenario);
                done.lock().unwrap().insert((*name).clone(), pinned);
            });
        }
    });
    done.into_inner().unwrap()
}

fn read_digests(path: &Path) -> BTreeMap<String, Pinned> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut parts = line.split_whitespace();
            let (Some(name), Some(digest), Some(events), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                panic!("digests.txt: a line is `NAME DIGEST EVENTS`, got {line:?}");
            };
            (name.to_string(), Pinned { digest: digest.to_string(), events: events.parse().unwrap() })
        })
        .collect()
}

fn write_digests(path: &Path, pins: &BTreeMap<String, Pinned>) {
    let mut text = String::from(
        "# NAME  SHA-256 of the RunResult JSON (without events) and pcap files  EVENTS\n\
         # Re-record deliberately: INCAST_RECORD=1 cargo test -p incast-sim --test identity\n",
    );
    for (name, p) in pins {
        writeln!(text, "{name} {} {}", p.digest, p.events).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// Every scenario of the corpus gives the results it was recorded with.
#[test]
fn every_corpus_scenario_gives_its_recorded_result() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= 100, "the corpus holds {} scenarios", scenarios.len());
    let path = corpus_dir().join("digests.txt");
    let pins = pin_all(&scenarios);
    if std::env::var_os("INCAST_RECORD").is_some() {
        write_digests(&path, &pins);
        return;
    }
    let recorded = read_digests(&path);
    let mut moved = Vec::new();
    for (name, now) in &pins {
        match recorded.get(name) {
            None => moved.push(format!("{name}: not recorded")),
            Some(was) if was.digest != now.digest => moved.push(format!("{name}: results differ")),
            Some(was) if was.events != now.events => {
                moved.push(format!("{name}: same results, events {} -> {}", was.events, now.events))
            }
            Some(_) => {}
        }
    }
    for name in recorded.keys().filter(|n| !pins.contains_key(*n)) {
        moved.push(format!("{name}: recorded, but no scenario file"));
    }
    assert!(
        moved.is_empty(),
        "{} of {} corpus scenarios moved (re-record deliberately with INCAST_RECORD=1):\n{}",
        moved.len(),
        pins.len(),
        moved.join("\n")
    );
}
