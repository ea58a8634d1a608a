//! Congestion control: one narrow interface, one module per algorithm.
//!
//! **Models:** the hooks by which an algorithm moves the congestion window
//! (Linux `struct tcp_congestion_ops`, smoltcp's `congestion` module):
//! growth in congestion avoidance, the slow-start threshold at a loss
//! event, and the no-op-by-default events it may react to — a timeout, a
//! restart of the window, data sent with nothing in flight, ACKs carrying
//! ECN-Echo. The algorithms are RFC 5681's additive increase and halving
//! ([`reno`]: the window rules of both Reno and NewReno, which differ only
//! in loss recovery), Cubic ([`cubic`], RFC 9438, or [`cubic_linux`], the
//! same curve in `tcp_cubic.c`'s arithmetic) and DCTCP ([`dctcp`], RFC
//! 8257). [`Algorithm`] picks one from `TcpConfig::variant` (and Cubic's
//! `cubic_flavor`); adding an algorithm is a new module
//! and a new variant of that enum. The window itself — cwnd, ssthresh, slow
//! start, the loss and restart windows — is [`CongestionWindow`], shared by
//! every algorithm as Linux keeps it in `tcp_sock`. Loss recovery is not
//! here: Reno and NewReno fast recovery (`tcp::newreno`) and RFC 6675
//! (`tcp::sack`) ask the algorithm for ssthresh and size the window
//! themselves during recovery, as Linux's recovery code calls `ssthresh()`.
//! **Deliberately different:** dispatch is a `match` over [`Algorithm`], not
//! a table of function pointers or a trait object, so that the per-ACK path
//! has no indirect call and the state stays inline in the sender.
//! Per-ACK RTT samples (Linux `pkts_acked`) reach the algorithm too, for
//! Cubic's HyStart ([`hystart`]), which may end slow start.
//! **Not modelled:** the hooks Linux has and none of these algorithms needs
//! here: `undo_cwnd` (a spurious timeout's undo restores cwnd and ssthresh
//! directly, `tcp::spurious`), `cong_control` (rate-based algorithms such as
//! BBR), and pacing.

pub mod cubic;
pub mod cubic_linux;
pub mod dctcp;
pub mod hystart;
pub mod reno;
mod window;

pub use window::{CongestionWindow, SsthreshRule};

use super::{TcpConfig, TcpVariant};
use crate::time::{SimDuration, SimTime};
use cubic::{Cubic, CubicFlavor};
use cubic_linux::LinuxCubic;
use dctcp::Dctcp;
use reno::Reno;

/// What an ACK tells the algorithm with its RTT sample (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug)]
pub struct RttSample {
    /// When the ACK arrived.
    pub now: SimTime,
    /// The RTT of the newest segment it covers (Linux `ca_rtt_us`).
    pub rtt: SimDuration,
    /// SND.UNA after it.
    pub snd_una: u64,
    /// SND.NXT.
    pub snd_nxt: u64,
    /// cwnd in bytes.
    pub cwnd: u64,
    /// cwnd < ssthresh with slow start on.
    pub in_slow_start: bool,
}

/// The hooks of one congestion-control algorithm (Linux `tcp_congestion_ops`).
///
/// The caller owns cwnd and ssthresh ([`CongestionWindow`]); an algorithm
/// computes their new values from what it is handed. Hooks other than
/// [`CongestionControl::cong_avoid`] and [`CongestionControl::ssthresh`]
/// default to doing nothing.
pub trait CongestionControl {
    /// The window after an ACK of `acked` new bytes in congestion avoidance
    /// (Linux `cong_avoid`), from `cwnd` bytes at `now`; `srtt` is the
    /// smoothed RTT, zero before the first sample.
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, now: SimTime, srtt: SimDuration) -> u64;

    /// The slow-start threshold after a loss event (fast retransmit, entry
    /// into SACK recovery, a first timeout) with window `cwnd` and `flight`
    /// bytes outstanding (Linux `ssthresh`).
    fn ssthresh(&mut self, cwnd: u64, flight: u64) -> u64;

    /// The retransmission timer expired; called after
    /// [`CongestionControl::ssthresh`] when the timeout cut it (Linux
    /// `CA_EVENT_LOSS`).
    fn on_timeout(&mut self) {}

    /// The window restarts from a small value: after idle (RFC 5681 §4.1) or
    /// at a GIP stripe-unit head (Linux `CA_EVENT_CWND_RESTART`).
    fn on_restart(&mut self) {}

    /// Data goes out at `now` with nothing in flight, the last data having
    /// gone out at `last_send` (Linux `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _now: SimTime, _last_send: Option<SimTime>) {}

    /// An ACK gave an RTT sample (Linux `pkts_acked`). True when slow start
    /// must end now (ssthresh = cwnd).
    fn on_rtt_sample(&mut self, _sample: &RttSample) -> bool {
        false
    }

    /// True when the algorithm needs ECN: data segments are ECT and
    /// [`CongestionControl::on_ecn_echo`] sees every ACK (Linux
    /// `TCP_CONG_NEEDS_ECN`).
    fn needs_ecn(&self) -> bool {
        false
    }

    /// An ACK newly acknowledged `acked` bytes up to `ack`, with ECN-Echo
    /// `ece`, while SND.NXT is `snd_nxt` and the window `cwnd` (Linux
    /// `in_ack_event`). Returns the reduced window when ECN calls for a cut
    /// now. Called only when [`CongestionControl::needs_ecn`].
    fn on_ecn_echo(&mut self, _acked: u64, _ack: u64, _ece: bool, _snd_nxt: u64, _cwnd: u64) -> Option<u64> {
        None
    }
}

/// The algorithm of one sender, chosen by `TcpConfig::variant`. All but
/// Reno's are boxed, so that a Reno sender's window stays small and the
/// timeout of a connection end the cache has lost (thousands of senders)
/// reads fewer cache lines.
#[derive(Clone, Debug)]
pub enum Algorithm {
    /// RFC 5681 (variants `reno`, `newreno` and `sack`).
    Reno(Reno),
    /// RFC 9438 (variant `cubic`).
    Cubic(Box<Cubic>),
    /// RFC 8257 (variant `dctcp`).
    Dctcp(Box<Dctcp>),
    /// Linux `tcp_cubic.c` (variant `cubic`, `cubic_flavor = "linux"`).
    LinuxCubic(Box<LinuxCubic>),
}

impl Algorithm {
    /// The algorithm `cfg` selects, for segments of `smss` bytes.
    pub fn new(cfg: &TcpConfig, smss: u64) -> Self {
        match cfg.variant {
            TcpVariant::Reno | TcpVariant::NewReno | TcpVariant::Sack => {
                Algorithm::Reno(Reno::new(smss, cfg.ca_increase))
            }
            TcpVariant::Cubic => match cfg.cubic.flavor {
                CubicFlavor::Rfc9438 => Algorithm::Cubic(Box::new(Cubic::new(smss, cfg.cubic))),
                CubicFlavor::Linux => {
                    Algorithm::LinuxCubic(Box::new(LinuxCubic::new(smss, cfg.cubic, cfg.rto.granularity)))
                }
            },
            TcpVariant::Dctcp => Algorithm::Dctcp(Box::new(Dctcp::new(smss, cfg.dctcp))),
        }
    }
}

/// Call `$call` on the algorithm inside `$self`, bound to `$a`.
macro_rules! dispatch {
    ($self:expr, $a:ident => $call:expr) => {
        match $self {
            Algorithm::Reno($a) => $call,
            Algorithm::Cubic($a) => $call,
            Algorithm::Dctcp($a) => $call,
            Algorithm::LinuxCubic($a) => $call,
        }
    };
}

impl CongestionControl for Algorithm {
    // Inline always: the dispatch runs on every ACK in congestion avoidance,
    // and with `#[inline]` LLVM keeps it out of line.
    #[inline(always)]
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, now: SimTime, srtt: SimDuration) -> u64 {
        dispatch!(self, a => a.cong_avoid(cwnd, acked, now, srtt))
    }
    #[inline]
    fn ssthresh(&mut self, cwnd: u64, flight: u64) -> u64 {
        dispatch!(self, a => a.ssthresh(cwnd, flight))
    }
    #[inline]
    fn on_timeout(&mut self) {
        dispatch!(self, a => a.on_timeout())
    }
    #[inline]
    fn on_restart(&mut self) {
        dispatch!(self, a => a.on_restart())
    }
    #[inline]
    fn on_tx_start(&mut self, now: SimTime, last_send: Option<SimTime>) {
        dispatch!(self, a => a.on_tx_start(now, last_send))
    }
    #[inline]
    fn on_rtt_sample(&mut self, sample: &RttSample) -> bool {
        dispatch!(self, a => a.on_rtt_sample(sample))
    }
    #[inline]
    fn needs_ecn(&self) -> bool {
        dispatch!(self, a => a.needs_ecn())
    }
    #[inline]
    fn on_ecn_echo(&mut self, acked: u64, ack: u64, ece: bool, snd_nxt: u64, cwnd: u64) -> Option<u64> {
        dispatch!(self, a => a.on_ecn_echo(acked, ack, ece, snd_nxt, cwnd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant selects its algorithm; only DCTCP needs ECN.
    #[test]
    fn variant_selects_algorithm() {
        let pick = |variant| Algorithm::new(&TcpConfig { variant, ..TcpConfig::default() }, 1000);
        for v in [TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
            assert!(matches!(pick(v), Algorithm::Reno(_)));
        }
        assert!(matches!(pick(TcpVariant::Cubic), Algorithm::Cubic(_)));
        let linux = TcpConfig {
            variant: TcpVariant::Cubic,
            cubic: cubic::CubicConfig { flavor: CubicFlavor::Linux, ..Default::default() },
            ..TcpConfig::default()
        };
        assert!(matches!(Algorithm::new(&linux, 1000), Algorithm::LinuxCubic(_)));
        assert!(matches!(pick(TcpVariant::Dctcp), Algorithm::Dctcp(_)));
        assert!(pick(TcpVariant::Dctcp).needs_ecn());
        assert!(!pick(TcpVariant::Cubic).needs_ecn() && !pick(TcpVariant::NewReno).needs_ecn());
    }
}
