//! ICTCP (Wu et al., CoNEXT 2010) at the client, on FAST08's switch.

use incast_sim::stats::Summary;
use incast_sim::time::SimDuration;
use incast_sim::{run, Scenario};

fn fast08(servers: u32, ictcp: bool) -> Summary {
    let mut s = Scenario::fast08(servers);
    s.tcp.ictcp.on = ictcp;
    s.stop.duration = Some(SimDuration::from_secs(1));
    let sum = run(&s).unwrap().summary;
    println!("{servers} servers, ICTCP {ictcp}: {:.1} Mbps, {} timeouts", sum.goodput_mbps, sum.timeouts);
    sum
}

/// With 4 and 8 servers the summed 2-segment minimum windows fit the 32 KiB
/// port: ICTCP's receive windows keep the bursts inside it and goodput is
/// several times NewReno's; with 64 servers the minimum windows alone
/// overflow it and ICTCP no longer helps (the limit Wu et al. state for large
/// fan-in).
#[test]
fn ictcp_paces_a_few_servers_but_not_sixty_four() {
    for servers in [4, 8] {
        let (plain, ictcp) = (fast08(servers, false), fast08(servers, true));
        assert!(ictcp.goodput_mbps > 3.0 * plain.goodput_mbps);
        assert!(ictcp.timeouts < plain.timeouts);
    }
    let (plain, ictcp) = (fast08(64, false), fast08(64, true));
    assert!(ictcp.goodput_mbps < 2.0 * plain.goodput_mbps);
}
