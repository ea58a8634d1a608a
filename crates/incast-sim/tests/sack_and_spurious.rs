//! SACK recovery and spurious-timeout detection in whole runs.

use incast_sim::net::BufferLimit;
use incast_sim::tcp::{DelayedAckConfig, LossRecovery, SpuriousRto};
use incast_sim::time::{Bytes, SimDuration};
use incast_sim::{run, Scenario};

/// FAST08 §5.1.1 (Figure 10: "NewReno outperforms Reno and SACK"; "both TCP
/// NewReno and TCP SACK outperform TCP Reno"), in Table 3's setting: 16
/// servers, a 64-packet port, 256 KiB SRU, 20 s.
#[test]
fn fast08_fig10_newreno_beats_sack_beats_reno() {
    let blocks = |recovery| {
        let mut s = Scenario::fast08(16);
        s.switch.buffer = BufferLimit::Packets(64);
        s.tcp.recovery = recovery;
        s.stop.duration = Some(SimDuration::from_secs(20));
        let r = run(&s).unwrap();
        println!("{recovery:?}: {} blocks, {} timeouts", r.summary.blocks, r.summary.timeouts);
        r.summary.blocks
    };
    let (reno, newreno, sack) = (blocks(LossRecovery::Reno), blocks(LossRecovery::NewReno), blocks(LossRecovery::Sack));
    assert!(newreno > sack && sack > reno, "NewReno {newreno}, SACK {sack}, Reno {reno} blocks");
}

/// 16 servers into a 512 KiB port with RTO_min 200 µs: queueing delay (up to
/// 4 ms) outlasts the RTO, so timeouts fire while the original segments wait
/// in the queue. F-RTO and Eifel find such spurious timeouts and mark their
/// rows; without detection none is marked.
#[test]
fn deep_buffer_fine_rto_timeouts_are_found_spurious() {
    let run_with = |spurious_rto, timestamps| {
        let mut s = Scenario::fast08(16);
        s.switch.buffer = BufferLimit::Bytes(Bytes::kib(512));
        s.tcp.rcv_wnd = Bytes::kib(256);
        s.tcp.rto.min = SimDuration::from_micros(200);
        s.tcp.delayed_ack = DelayedAckConfig::off();
        s.tcp.recovery = LossRecovery::Sack;
        s.tcp.timestamps = timestamps;
        s.tcp.timestamp_tick = SimDuration::from_micros(1);
        s.tcp.spurious_rto = spurious_rto;
        s.stop.duration = Some(SimDuration::from_millis(500));
        let r = run(&s).unwrap();
        let sum = &r.summary;
        println!(
            "{spurious_rto:?}: {} timeouts, {} spurious, {} retransmitted",
            sum.timeouts, sum.spurious_timeouts, sum.retransmitted_packets
        );
        assert_eq!(r.timeouts.iter().filter(|t| t.spurious).count() as u64, sum.spurious_timeouts);
        r
    };
    for timestamps in [false, true] {
        let off = run_with(SpuriousRto::Off, timestamps);
        assert!(off.summary.timeouts > 0 && off.summary.spurious_timeouts == 0);
    }
    for (mode, timestamps) in [(SpuriousRto::Frto, false), (SpuriousRto::Eifel, true)] {
        assert!(run_with(mode, timestamps).summary.spurious_timeouts > 0, "{mode:?} finds spurious timeouts");
    }
}
