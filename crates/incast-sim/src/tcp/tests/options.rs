//! The SACK and timestamps options on the wire: what a receiver reports, what
//! a sender stamps, and the RTT samples echoed timestamps give.

use super::*;

fn cfg_ts() -> TcpConfig {
    TcpConfig { timestamps: true, ..cfg() }
}

/// RFC 2018 §4: while data waits out of order, every ACK carries SACK blocks,
/// the block of the latest arrival first; RFC 2018 §3: at most three beside
/// the timestamps option.
#[test]
fn rfc2018_4_acks_report_out_of_order_blocks_newest_first() {
    let mut ep = Endpoint::new(&TcpConfig { timestamps: true, ..cfg_sack() }, SimTime::ZERO, None);
    for (i, s) in [1u64, 3, 5, 7].into_iter().enumerate() {
        recv(&mut ep, us(10 + i as u64), data(seg(s), MSS));
    }
    let a = expect_tx(&mut ep, us(20));
    assert_eq!(a.ack, 0);
    assert_eq!(a.sack().collect::<Vec<_>>(), vec![(seg(7), seg(8)), (seg(5), seg(6)), (seg(3), seg(4))]);
    assert_eq!(a.option_bytes(), 12 + 4 + 3 * 8);
    recv(&mut ep, us(30), data(seg(0), MSS));
    let a = expect_tx(&mut ep, us(30));
    assert_eq!(a.ack, seg(2), "segment 0 filled the hole before segment 1");
    assert_eq!(a.sack().count(), 3);
}

/// RFC 2018 §3: four blocks fit without timestamps; `tcp.sack_blocks` = 3
/// sends three, as ns-2.35's sinks do (`maxSackBlocks_ 3`), and the ACK is
/// shorter by a block.
#[test]
fn four_blocks_fit_without_timestamps_and_sack_blocks_caps_them() {
    for (cap, sent) in [(None, 4), (Some(3), 3)] {
        let mut ep = Endpoint::new(&TcpConfig { sack_blocks: cap, ..cfg_sack() }, SimTime::ZERO, None);
        for (i, s) in [1u64, 3, 5, 7, 9].into_iter().enumerate() {
            recv(&mut ep, us(10 + i as u64), data(seg(s), MSS));
        }
        let a = expect_tx(&mut ep, us(20));
        assert_eq!(a.sack().count(), sent);
        assert_eq!(a.sack().next(), Some((seg(9), seg(10))), "the latest arrival's block first");
        assert_eq!(a.option_bytes(), 4 + 8 * sent as u32);
    }
}

/// Without SACK, no ACK carries blocks, however many holes the receiver has.
#[test]
fn no_sack_blocks_when_sack_is_off() {
    let mut ep = Endpoint::new(&cfg(), SimTime::ZERO, None);
    recv(&mut ep, us(10), data(seg(2), MSS));
    let a = expect_tx(&mut ep, us(10));
    assert!(!a.has_sack());
    assert_eq!(a.option_bytes(), 0);
}

/// RFC 7323 §3 with Linux's `mss_cache`: the 12 option bytes come out of the
/// payload, so a full segment carries MSS − 12 bytes; every segment carries
/// TSval (1 ms ticks) and echoes the peer's latest TSval.
#[test]
fn rfc7323_3_timestamps_on_every_segment_and_mss_shrinks_by_12() {
    let mut ep = Endpoint::new(&cfg_ts(), SimTime::ZERO, Some(SimDuration::from_micros(100)));
    ep.send(seg(2));
    let first = expect_data(&mut ep, ms(3), 0, MSS - 12);
    assert_eq!(first.ts(), Some(Timestamps { val: 3, ecr: 0 }));
    let mut a = ack(seg(1) - 12);
    a.set_ts(Some(Timestamps { val: 42, ecr: 3 }));
    recv(&mut ep, ms(4), a);
    let next = expect_tx(&mut ep, ms(4));
    assert_eq!(next.ts(), Some(Timestamps { val: 4, ecr: 42 }));
}

/// Karn's rule leaves no sample from a retransmitted segment; with
/// timestamps the echo gives one, rounded up to one 1 ms tick as Linux
/// `tcp_rtt_tsopt_us` does: SRTT moves from 100 µs toward 1 ms.
#[test]
fn rfc7323_4_echo_gives_rtt_sample_where_karn_gives_none() {
    for (cfg, srtt_after) in [(cfg(), 100u64), (cfg_ts(), 212)] {
        let mut ep = Endpoint::new(&cfg, SimTime::ZERO, Some(SimDuration::from_micros(100)));
        let mss = cfg.segment_payload();
        ep.send(mss as u64);
        expect_data(&mut ep, SimTime::ZERO, 0, mss);
        let t = expire(&mut ep);
        let resent = expect_data(&mut ep, t.snapshot.time, 0, mss);
        let mut a = ack(mss as u64);
        a.set_ts(resent.ts().map(|ts| Timestamps { val: 1, ecr: ts.val }));
        recv(&mut ep, t.snapshot.time + SimDuration::from_micros(100), a);
        assert_eq!(ep.srtt().unwrap().as_ps() / 1_000_000, srtt_after, "timestamps {}", cfg.timestamps);
    }
}
