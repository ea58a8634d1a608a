//! The kernel's BBR state of one connection: `TCP_CC_INFO`'s `struct
//! tcp_bbr_info` (`include/uapi/linux/inet_diag.h`), as `bbr_get_info` in
//! `net/ipv4/tcp_bbr.c` fills it, and the mode it implies.
//!
//! `tcp_bbr_info` is five `__u32` in host byte order: the bandwidth estimate
//! in bytes per second split in `bbr_bw_lo` and `bbr_bw_hi` (`bbr_bw` scaled
//! by `mss_cache`), `bbr_min_rtt` in microseconds, and `bbr_pacing_gain` and
//! `bbr_cwnd_gain` in 1/256ths (`BBR_UNIT`). Other congestion controls fill
//! other members of `union tcp_cc_info` (Vegas, DCTCP) or none, so the
//! bytes are read as BBR's only when the socket's `TCP_CONGESTION` is `bbr`.
//!
//! The kernel does not export BBR's mode, but `bbr_update_gains` sets the
//! pair of gains from the mode alone, so the pair names it: STARTUP paces and
//! sizes its window at `bbr_high_gain` (739/256 = 2.885), DRAIN paces at
//! `bbr_drain_gain` (88/256 = 0.344) and keeps the window at the high gain,
//! PROBE_BW's window gain is `bbr_cwnd_gain` (512/256 = 2) whatever its
//! phase's pacing gain (1.25, 0.75 or 1), and PROBE_RTT sets both to 1. Before
//! the first ACK both gains are still 0, as `bbr_init` leaves them (it sets the
//! mode to STARTUP; the gains follow on each ACK in `bbr_main`). A pair outside
//! these (another BBR, or changed module constants) is no mode.

use crate::tcp_info::tcp_option;
pub use incast_sim::tcp::cc::bbr::{Mode, CWND_GAIN, DRAIN_GAIN, HIGH_GAIN, UNIT as BBR_UNIT};
use socket2::SockRef;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Bytes of `struct tcp_bbr_info`.
const BBR_INFO_LEN: usize = 5 * 4;
/// Bytes of `union tcp_cc_info` (its largest member is `tcpvegas_info` or `tcp_bbr_info`, 20 bytes).
const CC_INFO_LEN: usize = 20;

/// The mode `bbr_update_gains` sets this pair of gains (in 1/256ths) in, or `None`.
pub fn mode_of_gains(pacing_gain: u32, cwnd_gain: u32) -> Option<Mode> {
    match (u64::from(pacing_gain), u64::from(cwnd_gain)) {
        (HIGH_GAIN, HIGH_GAIN) | (0, 0) => Some(Mode::Startup),
        (DRAIN_GAIN, HIGH_GAIN) => Some(Mode::Drain),
        (_, CWND_GAIN) => Some(Mode::ProbeBw),
        (BBR_UNIT, BBR_UNIT) => Some(Mode::ProbeRtt),
        _ => None,
    }
}

/// One reading of `struct tcp_bbr_info`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BbrInfo {
    /// The bandwidth estimate (`bbr_bw`: the windowed maximum, or the long-term rate when policed), bytes per second.
    pub bw: u64,
    /// The windowed minimum RTT (`min_rtt_us`), microseconds.
    pub min_rtt_us: u32,
    /// The pacing gain, in 1/256ths.
    pub pacing_gain: u32,
    /// The window gain, in 1/256ths.
    pub cwnd_gain: u32,
}

impl BbrInfo {
    /// `struct tcp_bbr_info` from the bytes `TCP_CC_INFO` returned; `None` when they are too few.
    pub fn parse(bytes: &[u8]) -> Option<BbrInfo> {
        let word = |i: usize| Some(u32::from_ne_bytes(bytes.get(4 * i..4 * i + 4)?.try_into().ok()?));
        Some(BbrInfo {
            bw: u64::from(word(0)?) | u64::from(word(1)?) << 32,
            min_rtt_us: word(2)?,
            pacing_gain: word(3)?,
            cwnd_gain: word(4)?,
        })
    }

    /// The BBR state of a connected TCP socket; `None` when its congestion control is not `bbr`.
    pub fn of<S: AsRawFd + AsFd>(socket: &S) -> io::Result<Option<BbrInfo>> {
        let name = SockRef::from(socket).tcp_congestion()?;
        if name.split(|&b| b == 0).next() != Some(b"bbr") {
            return Ok(None);
        }
        let mut buf = [0u8; CC_INFO_LEN];
        let len = tcp_option(socket, libc::TCP_CC_INFO, &mut buf)?;
        Ok(BbrInfo::parse(&buf[..len.min(BBR_INFO_LEN)]))
    }

    /// The mode these gains imply ([`mode_of_gains`]).
    pub fn mode(&self) -> Option<Mode> {
        mode_of_gains(self.pacing_gain, self.cwnd_gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn the_gains_of_bbr_update_gains_name_the_mode() {
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(mode_of_gains(739, 739), Some(Mode::Startup));
        assert_eq!(mode_of_gains(0, 0), Some(Mode::Startup), "bbr_init's mode, before any ACK set the gains");
        assert_eq!(mode_of_gains(88, 739), Some(Mode::Drain));
        for phase_gain in [320, 192, 256] {
            assert_eq!(mode_of_gains(phase_gain, 512), Some(Mode::ProbeBw));
        }
        assert_eq!(mode_of_gains(256, 256), Some(Mode::ProbeRtt));
        assert_eq!(mode_of_gains(256, 739), None);
    }

    #[test]
    fn tcp_bbr_info_is_five_words_with_the_bandwidth_split_low_then_high() {
        let words: [u32; 5] = [0x0000_0010, 0x0000_0002, 87, 739, 739];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let info = BbrInfo::parse(&bytes).unwrap();
        assert_eq!(info, BbrInfo { bw: (2 << 32) | 0x10, min_rtt_us: 87, pacing_gain: 739, cwnd_gain: 739 });
        assert_eq!(info.mode(), Some(Mode::Startup));
        assert_eq!(BbrInfo::parse(&bytes[..16]), None);
    }

    fn connected(congestion: &[u8]) -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        SockRef::from(&server).set_tcp_congestion(congestion).unwrap();
        (server, client)
    }

    #[test]
    fn a_bbr_sender_reports_its_model_and_a_reno_one_none() {
        let (mut server, mut client) = connected(b"bbr");
        server.write_all(&[0u8; 200_000]).unwrap();
        client.read_exact(&mut vec![0u8; 200_000]).unwrap();
        let info = BbrInfo::of(&server).unwrap().expect("a bbr socket has tcp_bbr_info");
        assert!(info.bw > 0 && info.min_rtt_us > 0, "{info:?}");
        assert!(info.mode().is_some(), "{info:?}");
        let (reno, _client) = connected(b"reno");
        assert_eq!(BbrInfo::of(&reno).unwrap(), None);
    }
}
