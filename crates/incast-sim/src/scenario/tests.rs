use super::*;
use crate::time::{BitRate, Bytes};
use serde_json::{json, Map, Value as Json};

#[test]
fn defaults_are_valid_and_follow_fast08_table1() {
    let s = Scenario::fast08(8);
    s.validate().unwrap();
    assert_eq!(s.link.rate, BitRate::gbps(1));
    assert_eq!(s.link.rtt, SimDuration::from_micros(100));
    assert_eq!(s.response_bytes(3), 256 * 1024);
    assert_eq!(s.tcp.rto.min, SimDuration::from_millis(200));
}

#[test]
fn best_goodput_at_one_gigabit_is_949_mbps() {
    let g = Scenario::fast08(1).best_goodput_bps() / 1e6;
    assert!((g - 949.28).abs() < 0.01, "{g}");
}

#[test]
fn fixed_block_spreads_the_remainder_over_the_first_servers() {
    let mut s = Scenario::fast08(3);
    s.workload.response = ResponseSize::Block(Bytes::new(10));
    assert_eq!((0..3).map(|i| s.response_bytes(i)).collect::<Vec<_>>(), vec![4, 3, 3]);
    assert_eq!(s.block_bytes(), 10);
}

fn field_of(s: &Scenario) -> String {
    match s.validate() {
        Err(SimError::InvalidScenario { field, .. }) => field,
        other => panic!("expected a scenario error, got {other:?}"),
    }
}

#[test]
fn validation_names_the_offending_field() {
    let ok = Scenario::fast08(4);
    let mut s = ok.clone();
    s.servers = 0;
    assert_eq!(field_of(&s), "servers");
    let mut s = ok.clone();
    s.switch.buffer = BufferLimit::Bytes(Bytes::new(1000));
    assert_eq!(field_of(&s), "switch.buffer");
    let mut s = ok.clone();
    s.link.rate = BitRate(0);
    assert_eq!(field_of(&s), "link.rate");
    let mut s = ok.clone();
    s.tcp.rto.min = SimDuration::from_secs(500);
    assert_eq!(field_of(&s), "tcp.rto_min");
    let mut s = ok.clone();
    s.stop = StopConfig { blocks: None, duration: None };
    assert_eq!(field_of(&s), "blocks");
    let mut s = ok.clone();
    s.workload.response = ResponseSize::Block(Bytes::new(2));
    assert_eq!(field_of(&s), "workload.block");
    let mut s = ok.clone();
    s.trace.goodput_bin = Some(SimDuration::ZERO);
    assert_eq!(field_of(&s), "trace.goodput_bin");
    let mut s = ok.clone();
    s.workload.clients = 0;
    assert_eq!(
        s.validate().unwrap_err().to_string(),
        "workload.clients: must be a whole number of clients between 1 and 10000, got 0"
    );
    let mut s = ok;
    (s.servers, s.workload.clients) = (20, 10_000);
    assert_eq!(field_of(&s), "workload.clients");
}

#[test]
fn wan_fields_that_disagree_are_named() {
    let ms = SimDuration::from_millis;
    let on = |f: &dyn Fn(&mut WanConfig)| {
        let mut s = Scenario::fast08(1);
        s.wan.delay = Some(ms(20));
        f(&mut s.wan);
        s
    };
    on(&|_| {}).validate().unwrap();
    let mut off = Scenario::fast08(1);
    off.wan.jitter = ms(1);
    assert_eq!(field_of(&off), "wan.jitter");
    assert_eq!(field_of(&on(&|w| w.spike_interval = Some(ms(100)))), "wan.spike_height");
    assert_eq!(
        field_of(&on(&|w| {
            w.spike_interval = Some(ms(100));
            w.spike_height = ms(5);
        })),
        "wan.spike_duration"
    );
    assert_eq!(
        field_of(&on(&|w| {
            w.shift_interval = Some(ms(100));
            w.shift = ms(21);
        })),
        "wan.shift"
    );
    let mut paused = on(&|_| {});
    paused.switch.pause = true;
    assert_eq!(field_of(&paused), "wan.delay");
}

/// A permutation of background flows covers at least the reads' hosts and
/// two, and sends to no one else than each host's partner.
#[test]
fn a_background_permutation_names_what_it_lacks() {
    let mut ok = Scenario::fast08(4);
    ok.background.tcp_flows = 5;
    ok.background.tcp_permutation = true;
    ok.validate().unwrap();
    let mut s = ok.clone();
    s.background.tcp_flows = 4;
    assert_eq!(field_of(&s), "background.tcp_flows", "fewer flows than the reads' five hosts");
    let mut s = ok;
    s.background.tcp_to_server = true;
    assert_eq!(field_of(&s), "background.tcp_permutation");
}

/// Priorities are 802.1p's eight; PFC needs its thresholds, a lossless
/// priority and traffic in more than one priority; classes are not
/// modelled in shared memory; a PFC XOFF must fit a `qos:K` partition.
#[test]
fn traffic_classes_and_pfc_name_the_offending_field() {
    let mut ok = Scenario::fast08(4);
    ok.background.tcp_flows = 1;
    ok.workload.priority = 3;
    ok.switch.pfc = true;
    ok.validate().unwrap();
    let mut s = ok.clone();
    s.workload.priority = 8;
    assert_eq!(field_of(&s), "workload.priority");
    let mut s = ok.clone();
    s.background.udp_priority = 9;
    assert_eq!(field_of(&s), "background.udp_priority");
    let mut s = ok.clone();
    s.switch.pause = true;
    assert_eq!(field_of(&s), "switch.pfc", "PFC replaces PAUSE");
    let mut s = ok.clone();
    s.workload.priority = 0;
    assert_eq!(field_of(&s), "switch.pfc", "one class: PFC is PAUSE");
    let mut s = ok.clone();
    s.switch.pfc_priorities = PriorityMask(0);
    assert_eq!(field_of(&s), "switch.pfc_priorities");
    let mut s = ok.clone();
    s.switch.buffer_model = BufferModel::Qos { classes: 4 };
    assert_eq!(field_of(&s), "switch.pause_xoff", "16 KiB XOFF in an 8 KiB partition");
    let mut s = ok;
    s.switch.pfc = false;
    s.switch.buffer_model = BufferModel::Shared { alpha_thousandths: 1000 };
    assert_eq!(field_of(&s), "switch.buffer_model");
}

fn refused(raw: serde_json::Value) -> String {
    Scenario::from_json(&raw).unwrap_err().to_string()
}

/// Settings that contradict each other, or that the engine would keep as
/// something else than what was written, are refused naming the setting.
#[test]
fn contradictions_and_values_kept_otherwise_are_refused() {
    let m = refused(json!({"servers": 4, "switch": {"buffer": "32KiB", "ecn_threshold": "1MiB"}}));
    assert!(m.starts_with("switch.ecn_threshold: must be below switch.buffer (32KiB)"), "{m}");
    let m = refused(json!({"servers": 4, "tcp": {"ictcp_gamma1": 0.9, "ictcp_gamma2": 0.1}}));
    assert_eq!(m, "tcp.ictcp_gamma1: must not exceed tcp.ictcp_gamma2 (0.1), got 0.9");
    let m = refused(json!({"servers": 4, "tcp": {"ictcp": true, "rcv_window": "linux"}}));
    assert!(m.starts_with("tcp.rcv_window: \"linux\" grows the window ICTCP sets"), "{m}");
    let m = refused(json!({"servers": 4, "tcp": {"rude_allowed": true, "rude": true, "rude_servers": 100}}));
    assert_eq!(m, "tcp.rude_servers: must be at most servers (4), or \"all\", got 100");
    let m = refused(json!({"servers": 4, "tcp": {"cubic_c": 5000000}}));
    assert!(m.starts_with("tcp.cubic_c: 5000000 kept in steps of 1/1000 is 5000000000, outside"), "{m}");
    let m = refused(json!({"servers": 4, "tcp": {"cubic_c": 0.0001}}));
    assert!(m.starts_with("tcp.cubic_c: 0.0001 kept in steps of 1/1000 is 0, outside 0.001"), "{m}");
    let m = refused(json!({"servers": 4, "link": {"rtt": "0.1ps"}}));
    assert_eq!(m, "link.rtt: '0.1ps' rounds to 0: durations are kept in whole picoseconds");
    let m = refused(json!({"servers": 4, "link": {"tx_queue": 100}, "switch": {"pause": true}}));
    assert!(m.starts_with("link.tx_queue: a NIC queue limit together with switch.pause"), "{m}");
    let m = refused(json!({"servers": 4, "link": {"host_jitter": "40us"}, "switch": {"pause": true}}));
    assert!(m.starts_with("link.host_jitter: a host's handling time together with PAUSE"), "{m}");
    let graph = json!({"kind": "graph", "nodes": [{"name": "c", "kind": "client"}, {"name": "s", "kind": "server"}],
        "links": [{"a": "c", "b": "s"}]});
    let m = refused(json!({"servers": 1, "link": {"skew": "1ps"}, "topology": graph}));
    assert_eq!(m, "link.skew: 0 only with topology.kind = \"graph\": a graph's links give their own delays");
    let m = refused(json!({"servers": 4, "tcp": {"recovery": "sack", "sack_recovery": "ns2", "prr": true}}));
    assert!(m.starts_with("tcp.sack_recovery: \"ns2\" (ns-2.35's Sack1) has no PRR"), "{m}");
    let m = refused(json!({"servers": 4, "link": {"tx_queue": 0}}));
    assert_eq!(
        m,
        "link.tx_queue: must be \"off\" or a count; must be a whole number of frames between 1 and 2^32-1, got 0"
    );
    let m = refused(json!({"servers": 4, "link": {"loss": 0.9999999999}}));
    assert!(m.starts_with("link.loss: must be a probability from 0 up to 1 (exclusive) once kept in parts"), "{m}");
}

/// A token-bucket port must pass a full frame, and runs only where each
/// frame's departure is known when it is queued.
#[test]
fn a_token_bucket_that_cannot_pass_a_frame_or_meets_pause_is_refused() {
    let m = refused(json!({"servers": 4, "link": {"token_bucket": "1000B"}}));
    assert_eq!(m, "link.token_bucket: 1000 bytes cannot pass one full frame (1538 bytes on the wire for MSS 1460)");
    let m = refused(json!({"servers": 4, "link": {"token_bucket": "14KiB"}, "switch": {"pause": true}}));
    assert!(m.starts_with("link.token_bucket: together with switch.pause"), "{m}");
    let m = refused(json!({"servers": 4, "link": {"token_bucket": "14KiB", "arrival_order": "ns2"}}));
    assert!(m.starts_with("link.token_bucket: together with link.arrival_order \"ns2\""), "{m}");
    assert!(Scenario::from_json(&json!({"servers": 4, "link": {"token_bucket": "14KiB"}})).is_ok());
}

/// A scenario file names only what it changes; the rest takes the defaults.
#[test]
fn missing_keys_take_the_defaults() {
    let s = Scenario::from_json(&json!({"servers": 4, "tcp": {"rto_min": "1us"}})).unwrap();
    let mut expected = Scenario { seed: DEFAULT_SEED, ..Scenario::fast08(4) };
    expected.tcp.rto.min = SimDuration::from_micros(1);
    assert_eq!(s, expected);
}

/// The settings the congestion control and loss recovery replaced name what replaced them.
#[test]
fn retired_tcp_settings_name_their_replacements() {
    for raw in [json!({"servers": 2, "tcp": {"variant": "cubic"}}), json!({"servers": 2, "tcp": {"sack": true}})] {
        let m = refused(raw);
        assert!(m.contains("replaced by tcp.") && m.contains("tcp.recovery"), "{m}");
    }
    let mut raw = serde_json::Map::new();
    let m = Scenario::apply_override(&mut raw, "tcp.variant", json!("sack")).unwrap_err().to_string();
    assert!(m.starts_with("tcp.variant: replaced by tcp.cc"), "{m}");
}

/// DCTCP without a marking switch would run as Reno under DCTCP's name.
#[test]
fn dctcp_without_an_ecn_threshold_is_refused() {
    let m = refused(json!({"servers": 4, "tcp": {"cc": "dctcp"}}));
    assert!(m.starts_with("tcp.cc: \"dctcp\" needs ECN marks: set switch.ecn_threshold"), "{m}");
    let ok = json!({"servers": 4, "tcp": {"cc": "dctcp"}, "switch": {"ecn_threshold": "20pkt"}});
    assert!(Scenario::from_json(&ok).is_ok());
}

#[test]
fn unknown_keys_are_refused_naming_the_table_and_what_it_has() {
    let err = Scenario::from_json(&json!({"servers": 2, "link": {"speed": 5}})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "link.speed: unknown setting; [link] has rate, rtt, propagation, loss, arrival_order, tx_queue, host_jitter, skew, token_bucket"
    );
}

/// Every unknown key is named at once, not only the first, each with the
/// setting it is a slip for where there is one.
#[test]
fn every_unknown_key_is_named_with_a_close_name() {
    let raw = json!({"server": 2, "link": {"rtt": "100us", "rat": "1Gbps", "speed": 5},
        "tcp": {"rto_mn": "1ms"}, "swich": {}});
    assert_eq!(
        Scenario::from_json(&raw).unwrap_err().to_string(),
        "server: unknown setting; did you mean servers?; also unknown: link.rat (did you mean rate), \
         link.speed, tcp.rto_mn (did you mean rto_min), swich (did you mean switch)"
    );
    let mut raw = Map::new();
    let err = Scenario::apply_override(&mut raw, "tcp.rto_mn", json!("1ms")).unwrap_err();
    assert_eq!(err.to_string(), "tcp.rto_mn: unknown setting; did you mean rto_min?");
}

/// The plain-SI form says so (`units = "si"`) and reads back to the same
/// scenario; without the mark its plain numbers are refused, never guessed.
#[test]
fn the_plain_si_form_reads_back_only_when_marked() {
    let graph = json!({"kind": "graph", "nodes": [{"name": "c", "kind": "client"}, {"name": "x", "kind": "switch"},
        {"name": "s", "kind": "server"}], "links": [{"a": "c", "b": "x", "rate": "100Mbps"}, {"a": "x", "b": "s",
        "delay": "3us"}]});
    let raw = json!({"servers": 1, "duration": "20ms", "memory_budget": "1GiB", "topology": graph,
        "tcp": {"rto_min": "1ms", "delayed_ack": "40ms"}, "switch": {"buffer": "64KiB"}});
    let s = Scenario::from_json(&raw).unwrap();
    let si = s.written().si;
    assert_eq!(si["units"], json!("si"));
    assert_eq!(Scenario::from_json(&si).unwrap(), s);
    let mut unmarked = si.clone();
    unmarked.as_object_mut().unwrap().remove("units");
    assert_eq!(
        Scenario::from_json(&unmarked).unwrap_err().to_string(),
        "duration: 0.02 needs a unit, e.g. \"1s\" or \"200ms\""
    );
    let mut other = si;
    other["units"] = json!("ms");
    assert!(Scenario::from_json(&other).unwrap_err().to_string().starts_with("units: must be \"si\""));
}

/// The canonical form reads back to the same scenario, and the SI form
/// keeps plain numbers.
#[test]
fn the_written_form_reads_back() {
    let raw = json!({"servers": 8, "blocks": 3, "switch": {"buffer": "64pkt", "pause": true},
        "tcp": {"delayed_ack": "off", "cc": "cubic", "recovery": "sack"},
        "topology": {"kind": "tree", "edge_switches": 2}, "workload": {"block": "1MiB"}});
    let s = Scenario::from_json(&raw).unwrap();
    let w = s.written();
    assert_eq!(Scenario::from_json(&w.toml).unwrap(), s);
    assert_eq!(Scenario::from_json(&w.si).unwrap().hash(), s.hash(), "the SI form holds the budget that applies");
    assert_eq!(w.toml["tcp"]["rto_min"], json!("200ms"));
    assert_eq!(w.si["tcp"]["rto_min"], json!(0.2));
    assert_eq!(w.si["switch"]["buffer"], json!("64pkt"));
    assert_eq!(w.si["workload"]["block"], json!(1_048_576));
    assert!(w.si.get("duration").is_none() && w.toml["workload"].get("sru").is_none());
}

#[test]
fn overrides_take_dotted_paths_and_replace_sru_with_block() {
    let mut raw = Map::new();
    Scenario::apply_override(&mut raw, "servers", json!(4)).unwrap();
    Scenario::apply_override(&mut raw, "workload.sru", json!("1KiB")).unwrap();
    Scenario::apply_override(&mut raw, "workload.block", json!("1MiB")).unwrap();
    Scenario::apply_override(&mut raw, "tcp", json!({"rto_min": "1ms"})).unwrap();
    assert_eq!(Json::Object(raw), json!({"servers": 4, "workload": {"block": "1MiB"}, "tcp": {"rto_min": "1ms"}}));
    let err = Scenario::apply_override(&mut Map::new(), "servers.x", json!(1)).unwrap_err();
    assert_eq!(err.to_string(), "servers.x: unknown setting; servers is a single value, not a table");
}

/// Every setting in the schema is dotted, documented and has a default
/// that reads back (except `servers` and `blocks`, which have none).
#[test]
fn the_schema_documents_every_setting() {
    let schema = Scenario::schema();
    assert!(schema.iter().any(|e| e.name == "tcp.rto_min" && e.setting.kind == "duration"));
    for e in &schema {
        assert!(!e.setting.doc.is_empty(), "{} has no doc", e.name);
    }
    let names: Vec<&str> = schema.iter().map(|e| e.name.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len());
}

/// `switch.ecn_threshold = "dctcp"` is the DCTCP paper's K for the link rate, written as packets.
#[test]
fn ecn_threshold_dctcp_follows_the_link_rate() {
    let k = |rate: &str| {
        let raw = json!({"servers": 4, "link": {"rate": rate}, "switch": {"ecn_threshold": "dctcp", "buffer": "1MiB"}});
        let s = Scenario::from_json(&raw).unwrap();
        s.written().toml["switch"]["ecn_threshold"].clone()
    };
    assert_eq!((k("1Gbps"), k("10Gbps")), (json!("20pkt"), json!("65pkt")));
    let m = refused(json!({"servers": 4, "switch": {"ecn_threshold": "dctcpp"}}));
    assert!(m.starts_with("switch.ecn_threshold: "), "{m}");
}
