//! Cubic (RFC 9438) in the engine: a FAST08 incast runs to completion.

use incast_sim::tcp::CcChoice;
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

/// RFC 9438 (4): FAST08 settings, 16 servers, 1 s of Cubic: blocks complete,
/// every packet is delivered, dropped or in flight, and the run is a pure
/// function of the scenario.
#[test]
fn rfc9438_4_cubic_fast08_16_servers_completes_and_conserves() {
    let mut s = Scenario::fast08(16);
    s.tcp.cc = CcChoice::Cubic;
    s.stop.duration = Some(SimDuration::from_secs(1));
    let r = run(&s).unwrap();
    let sum = &r.summary;
    assert!(sum.blocks > 0, "no block completed");
    assert!(sum.goodput_mbps > 0.0);
    assert_eq!(sum.packets_sent, sum.packets_delivered + sum.drops + sum.packets_in_flight);
    let again = run(&s).unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&again).unwrap());
}
