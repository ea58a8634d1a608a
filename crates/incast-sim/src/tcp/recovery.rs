//! Which loss recovery a sender runs, chosen apart from its congestion control.
//!
//! **Models:** the three recoveries, as Linux keeps them apart from
//! `net.ipv4.tcp_congestion_control` (the algorithm, `tcp::cc`): Reno's
//! fast recovery (RFC 5681 §3.2, any ACK of new data ends it) and NewReno's
//! (RFC 6582, partial ACKs retransmit the next hole; Linux's recovery
//! without SACK), both run by `tcp::newreno`; and SACK-based recovery (RFC
//! 2018 blocks, the RFC 6675 scoreboard of `tcp::sack`; Linux's with
//! `net.ipv4.tcp_sack = 1`, its default), on which RACK-TLP
//! (`tcp::rack_tlp`) and PRR with SACK (`tcp::prr`) build.
//! **Deliberately different:** nothing; with SACK the receiver sends SACK
//! blocks too (both ends share the configuration, as if negotiated).
//! **Not modelled:** SACK negotiated on one end only.

/// The loss recovery of a connection (`tcp.recovery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LossRecovery {
    /// RFC 5681 §3.2 only: any ACK of new data ends fast recovery.
    Reno,
    /// RFC 6582: partial ACKs retransmit the next hole; `recover` guards
    /// against spurious fast retransmits.
    #[default]
    NewReno,
    /// RFC 2018 SACK blocks and RFC 6675 recovery (`tcp::sack`).
    Sack,
}
