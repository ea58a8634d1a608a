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
//! same curve in `tcp_cubic.c`'s arithmetic), DCTCP ([`dctcp`], RFC
//! 8257) and BBR ([`bbr`], Linux `tcp_bbr.c`). [`Algorithm`] picks one by [`CcChoice`] (`tcp.cc`, and Cubic's
//! `cubic_flavor`); adding an algorithm is a new module, a variant of each
//! of those two enums and a choice of `tcp.cc`. The window itself — cwnd, ssthresh, slow
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
//! An algorithm that steers by rate provides `cong_control`: it then sets
//! cwnd from each ACK's delivery-rate sample (`tcp::delivery_rate`) in place
//! of `cong_avoid`, and may set the pacing rate (`tcp::pacing`), as Linux's
//! `tcp_cong_control` calls it; `undo_cwnd` gives the window a spurious
//! timeout's undo restores (`tcp::spurious`). Such an algorithm owns the
//! window: slow start, congestion avoidance and the loss-recovery code
//! leave it alone (Linux skips `tcp_cwnd_reduction` and
//! `tcp_end_cwnd_reduction` for it), and `set_state` tells it when loss
//! recovery or a timeout's loss state begins and ends.
//! `min_tso_segs` sets the fewest segments of a paced burst (`tcp::pacing`).
//! **Not modelled:** the hooks none of these algorithms needs here:
//! `sndbuf_expand`; the states Disorder and CWR.

pub mod bbr;
pub mod cubic;
pub mod cubic_linux;
pub mod dctcp;
#[cfg(test)]
pub mod fixed_rate;
pub mod hystart;
pub mod reno;
mod window;

pub use window::{CongestionWindow, SsthreshRule};

use super::delivery_rate::RateSample;
use crate::rng::Rng;
use crate::time::{SimDuration, SimTime};
use bbr::Bbr;
use cubic::{Cubic, CubicFlavor};
use cubic_linux::LinuxCubic;
use dctcp::Dctcp;
use reno::{CaIncrease, Reno};

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

/// The sender's loss-recovery state (Linux `enum tcp_ca_state`), in Linux's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No recovery under way (`TCP_CA_Open`).
    #[default]
    Open,
    /// Fast recovery or RFC 6675 loss recovery (`TCP_CA_Recovery`).
    Recovery,
    /// After a timeout, until the data outstanding then is acknowledged (`TCP_CA_Loss`).
    Loss,
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

    /// The retransmission timer expired, marking `lost` bytes lost
    /// (`tcp_timeout_mark_lost`); called after [`CongestionControl::ssthresh`]
    /// when the timeout cut it (Linux `CA_EVENT_LOSS`).
    fn on_timeout(&mut self, _lost: u64) {}

    /// The window restarts from a small value: after idle (RFC 5681 §4.1) or
    /// at a GIP stripe-unit head (Linux `CA_EVENT_CWND_RESTART`).
    fn on_restart(&mut self) {}

    /// The connection was established at `now`, the handshake's RTT sample
    /// being `rtt`, with a window of `cwnd` bytes (Linux runs `init` with
    /// `srtt_us` and `tcp_min_rtt` taken from the SYN exchange).
    fn on_init(&mut self, _now: SimTime, _rtt: SimDuration, _cwnd: u64) {}

    /// The sender's loss-recovery state is now `state` (Linux `set_state`):
    /// on every timeout, and when recovery or the loss state begins or ends.
    fn set_state(&mut self, _state: CaState) {}

    /// Data goes out at `now` with nothing in flight, the last data having
    /// gone out at `last_send`, the sender application-limited when
    /// `app_limited` (Linux `CA_EVENT_TX_START`, `tp->app_limited`).
    fn on_tx_start(&mut self, _now: SimTime, _last_send: Option<SimTime>, _app_limited: bool) {}

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

    /// True when the algorithm sets cwnd itself from each ACK's rate sample
    /// ([`CongestionControl::cong_control`]), in place of `cong_avoid`.
    fn has_cong_control(&self) -> bool {
        false
    }

    /// The window after an ACK that gave the rate sample `rs`, from `cwnd`
    /// (Linux `cong_control`). Called only when [`CongestionControl::has_cong_control`].
    fn cong_control(&mut self, _rs: &RateSample, cwnd: u64) -> u64 {
        cwnd
    }

    /// The window a spurious timeout's undo restores, from `cwnd` now and
    /// `prior` before the timeout (Linux `undo_cwnd`; `tcp_reno_undo_cwnd`:
    /// the larger).
    fn undo_cwnd(&mut self, cwnd: u64, prior: u64) -> u64 {
        cwnd.max(prior)
    }

    /// The pacing rate the algorithm sets, in bytes per second (Linux's
    /// `sk_pacing_rate` written by the algorithm); `None` leaves it to
    /// `tcp_update_pacing_rate`'s window rule when `tcp.pacing` is on.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// True when [`CongestionControl::pacing_rate`] or
    /// [`CongestionControl::min_tso_segs`] may have moved since the last
    /// call, which clears the mark; the sender reads them again only then.
    /// Without a mark of its own, an algorithm is read after every ACK.
    fn take_pacing_moved(&mut self) -> bool {
        true
    }

    /// True when the data sent from now on must count as
    /// application-limited in the rate samples (Linux's algorithm writing
    /// `tp->app_limited`); read after each `cong_control`.
    fn marks_app_limited(&self) -> bool {
        false
    }

    /// The fewest segments of a paced burst (Linux `min_tso_segs`; without
    /// it, `tcp_tso_segs` reads the sysctl `tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self) -> u32 {
        crate::tcp::pacing::MIN_TSO_SEGS
    }
}

/// Which congestion control a sender runs (`tcp.cc`, Linux's
/// `net.ipv4.tcp_congestion_control`), whatever its loss recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcChoice {
    /// RFC 5681: additive increase, halving at a loss ([`reno`]; Linux `reno`).
    #[default]
    Reno,
    /// RFC 9438 ([`cubic`], or [`cubic_linux`] by `cubic_flavor`; Linux `cubic`).
    Cubic,
    /// RFC 8257 ([`dctcp`]; Linux `dctcp`): ECN-capable, the window cut by α/2 on marks.
    Dctcp,
    /// BBRv1 ([`bbr`]; Linux `bbr`): paced at its model of the path's bandwidth, the window twice its BDP.
    Bbr,
    /// A fixed rate, in bytes per second, for the tests of `cong_control` and pacing ([`fixed_rate`]).
    #[cfg(test)]
    FixedRate(u64),
}

impl CcChoice {
    /// True when the algorithm steers by rate: the sender takes delivery-rate
    /// samples for it and paces at the rate it sets.
    pub fn needs_rate_samples(self) -> bool {
        match self {
            CcChoice::Reno | CcChoice::Cubic | CcChoice::Dctcp => false,
            CcChoice::Bbr => true,
            #[cfg(test)]
            CcChoice::FixedRate(_) => true,
        }
    }
}

/// The algorithm of one sender, chosen by `tcp.cc`. All but
/// Reno's are boxed, so that a Reno sender's window stays small and the
/// timeout of a connection end the cache has lost (thousands of senders)
/// reads fewer cache lines.
#[derive(Clone, Debug)]
pub enum Algorithm {
    /// RFC 5681 (`tcp.cc = "reno"`).
    Reno(Reno),
    /// RFC 9438 (`tcp.cc = "cubic"`).
    Cubic(Box<Cubic>),
    /// RFC 8257 (`tcp.cc = "dctcp"`).
    Dctcp(Box<Dctcp>),
    /// Linux `tcp_cubic.c` (`tcp.cc = "cubic"`, `cubic_flavor = "linux"`).
    LinuxCubic(Box<LinuxCubic>),
    /// Linux `tcp_bbr.c` (`tcp.cc = "bbr"`).
    Bbr(Box<Bbr>),
    /// The tests' fixed rate.
    #[cfg(test)]
    FixedRate(Box<fixed_rate::FixedRate>),
}

impl Algorithm {
    /// The algorithm `choice` names, for segments of `smss` bytes, with its
    /// constants: Reno's increase rule, Cubic's and DCTCP's, the TCP
    /// clock's granularity (Linux's Cubic counts time in jiffies) and the
    /// initial window (BBR's first pacing rate). BBR draws its random
    /// choices from a substream seeded by `rng`, which stays as it was.
    pub fn new(choice: CcChoice, smss: u64, constants: &Constants, rng: &Rng) -> Self {
        match choice {
            CcChoice::Reno => Algorithm::Reno(Reno::new(smss, constants.ca_increase)),
            CcChoice::Cubic => match constants.cubic.flavor {
                CubicFlavor::Rfc9438 => Algorithm::Cubic(Box::new(Cubic::new(smss, constants.cubic))),
                CubicFlavor::Linux => {
                    Algorithm::LinuxCubic(Box::new(LinuxCubic::new(smss, constants.cubic, constants.granularity)))
                }
            },
            CcChoice::Dctcp => Algorithm::Dctcp(Box::new(Dctcp::new(smss, constants.dctcp))),
            CcChoice::Bbr => {
                let rng = Rng::substream(rng.clone().next_u64(), "bbr");
                Algorithm::Bbr(Box::new(Bbr::new(smss, constants.init_cwnd, rng)))
            }
            #[cfg(test)]
            CcChoice::FixedRate(rate) => Algorithm::FixedRate(Box::new(fixed_rate::FixedRate::new(rate))),
        }
    }
}

/// The constants of every algorithm, of which [`Algorithm::new`] reads the chosen one's.
#[derive(Clone, Copy, Debug)]
pub struct Constants {
    /// Reno's window growth per ACK.
    pub ca_increase: CaIncrease,
    /// Cubic's (RFC 9438).
    pub cubic: cubic::CubicConfig,
    /// DCTCP's (RFC 8257).
    pub dctcp: dctcp::DctcpConfig,
    /// The TCP clock's granularity.
    pub granularity: SimDuration,
    /// The initial window, in segments.
    pub init_cwnd: u32,
}

/// Call `$call` on the algorithm inside `$self`, bound to `$a`.
macro_rules! dispatch {
    ($self:expr, $a:ident => $call:expr) => {
        match $self {
            Algorithm::Reno($a) => $call,
            Algorithm::Cubic($a) => $call,
            Algorithm::Dctcp($a) => $call,
            Algorithm::LinuxCubic($a) => $call,
            Algorithm::Bbr($a) => $call,
            #[cfg(test)]
            Algorithm::FixedRate($a) => $call,
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
    fn on_timeout(&mut self, lost: u64) {
        dispatch!(self, a => a.on_timeout(lost))
    }
    #[inline]
    fn on_restart(&mut self) {
        dispatch!(self, a => a.on_restart())
    }
    #[inline]
    fn on_init(&mut self, now: SimTime, rtt: SimDuration, cwnd: u64) {
        dispatch!(self, a => a.on_init(now, rtt, cwnd))
    }
    #[inline]
    fn set_state(&mut self, state: CaState) {
        dispatch!(self, a => a.set_state(state))
    }
    #[inline]
    fn on_tx_start(&mut self, now: SimTime, last_send: Option<SimTime>, app_limited: bool) {
        dispatch!(self, a => a.on_tx_start(now, last_send, app_limited))
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
    #[inline]
    fn has_cong_control(&self) -> bool {
        dispatch!(self, a => a.has_cong_control())
    }
    #[inline]
    fn cong_control(&mut self, rs: &RateSample, cwnd: u64) -> u64 {
        dispatch!(self, a => a.cong_control(rs, cwnd))
    }
    #[inline]
    fn undo_cwnd(&mut self, cwnd: u64, prior: u64) -> u64 {
        dispatch!(self, a => a.undo_cwnd(cwnd, prior))
    }
    #[inline]
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, a => a.pacing_rate())
    }
    #[inline]
    fn take_pacing_moved(&mut self) -> bool {
        dispatch!(self, a => a.take_pacing_moved())
    }
    #[inline]
    fn marks_app_limited(&self) -> bool {
        dispatch!(self, a => a.marks_app_limited())
    }
    #[inline]
    fn min_tso_segs(&self) -> u32 {
        dispatch!(self, a => a.min_tso_segs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constants(flavor: CubicFlavor) -> Constants {
        Constants {
            ca_increase: CaIncrease::Exact,
            cubic: cubic::CubicConfig { flavor, ..Default::default() },
            dctcp: dctcp::DctcpConfig::default(),
            granularity: SimDuration::ZERO,
            init_cwnd: 10,
        }
    }

    /// Each choice selects its algorithm; only DCTCP needs ECN, only BBR steers by rate.
    #[test]
    fn choice_selects_algorithm() {
        let rng = Rng::substream(1, "test");
        let pick = |choice| Algorithm::new(choice, 1000, &constants(CubicFlavor::Rfc9438), &rng);
        assert!(matches!(pick(CcChoice::Reno), Algorithm::Reno(_)));
        assert!(matches!(pick(CcChoice::Cubic), Algorithm::Cubic(_)));
        let linux = Algorithm::new(CcChoice::Cubic, 1000, &constants(CubicFlavor::Linux), &rng);
        assert!(matches!(linux, Algorithm::LinuxCubic(_)));
        assert!(matches!(pick(CcChoice::Dctcp), Algorithm::Dctcp(_)));
        assert!(matches!(pick(CcChoice::Bbr), Algorithm::Bbr(_)));
        assert!(CcChoice::Bbr.needs_rate_samples() && pick(CcChoice::Bbr).has_cong_control());
        assert!(pick(CcChoice::Dctcp).needs_ecn());
        assert!(!pick(CcChoice::Cubic).needs_ecn() && !pick(CcChoice::Reno).needs_ecn());
    }
}
