//! Rude TCP in whole runs: the hosts' gate, a policing switch, turning off.

use incast_sim::scenario::RudePolicy;
use incast_sim::tcp::RudeOff;
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario, SimError};

fn rude(servers: u32) -> Scenario {
    let mut s = Scenario::fast08(servers);
    s.tcp.rude_allowed = true;
    s.tcp.rude = true;
    s.stop.duration = Some(SimDuration::from_millis(300));
    s
}

/// RUDE §3.1: "Rude flows are by default disabled": asking for them with the
/// gate closed is refused, naming the field.
#[test]
fn rude_3_1_gate_off_refuses_rude_flows() {
    let mut s = rude(4);
    s.tcp.rude_allowed = false;
    match run(&s) {
        Err(SimError::InvalidScenario { field, .. }) => assert_eq!(field, "tcp.rude"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// RUDE §2.3: a policing switch drops every rude packet, so nothing gets
/// through until the flows turn polite (off_now at 100 ms), after which blocks complete.
#[test]
fn rude_2_3_policing_switch_kills_rude_flows_until_they_turn_polite() {
    let mut s = rude(4);
    s.switch.rude_policy = RudePolicy::Drop;
    let killed = run(&s).unwrap().summary;
    assert_eq!((killed.bytes_delivered, killed.blocks), (0, 0));
    assert!(killed.rude_drops > 0 && killed.rude_drops == killed.drops);

    s.tcp.rude_off_at = Some(SimDuration::from_millis(100));
    s.tcp.rude_off = RudeOff::Now;
    s.stop.duration = Some(SimDuration::from_secs(2));
    let recovered = run(&s).unwrap().summary;
    assert!(recovered.blocks > 0, "polite after 100 ms, the flows get through");
    assert!(recovered.rude_drops > 0);
}
