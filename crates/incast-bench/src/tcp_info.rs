//! Linux `TCP_INFO` (`tcp(7)`, `include/uapi/linux/tcp.h`): the kernel's view
//! of one connection, read before and after a run.
//!
//! Only the fields that speak to incast are kept. The counters
//! (`total_retrans`, `segs_in`, `segs_out`, `bytes_received`) are compared as
//! deltas; the gauges (`retransmits`, `lost`, `rto`, `rtt`, ...) as their value
//! at the end. On a client, `total_retrans` counts the client's own
//! retransmissions (its requests); the servers' losses show in `rto`, the
//! host's TcpExt counters (`netstat`) and on the servers themselves. The
//! sender's rates (`pacing_rate`, `delivery_rate`, `min_rtt_us`) are what
//! the server's [`sampler`](crate::sampler) traces.
//!
//! This module holds the crate's only unsafe code: the `getsockopt` calls
//! ([`TcpInfo::of`], and `tcp_option` for options read as bytes).

use serde::Serialize;
use std::io;
use std::os::fd::AsRawFd;

/// The `TCP_INFO` fields this benchmark reports, at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// `tcpi_retransmits`: consecutive unrecovered retransmission timeouts right now.
    pub retransmits: u8,
    /// `tcpi_lost`: segments the sender considers lost right now.
    pub lost: u32,
    /// `tcpi_total_retrans`: segments this side retransmitted since the connection opened.
    pub total_retrans: u32,
    /// `tcpi_rto`: the current retransmission timeout, microseconds.
    pub rto_us: u32,
    /// `tcpi_ato`: the current delayed-ACK timeout, microseconds.
    pub ato_us: u32,
    /// `tcpi_rtt`: smoothed RTT of this side's data, microseconds.
    pub rtt_us: u32,
    /// `tcpi_rttvar`: RTT variation, microseconds.
    pub rttvar_us: u32,
    /// `tcpi_rcv_rtt`: the receiver's RTT estimate, microseconds.
    pub rcv_rtt_us: u32,
    /// `tcpi_snd_cwnd`: congestion window, segments.
    pub snd_cwnd: u32,
    /// `tcpi_bytes_received`: payload bytes received (Linux 4.1+).
    pub bytes_received: u64,
    /// `tcpi_segs_in`: segments received (Linux 4.2+).
    pub segs_in: u32,
    /// `tcpi_segs_out`: segments sent (Linux 4.2+).
    pub segs_out: u32,
    /// `tcpi_pacing_rate`: the rate the socket paces at, bytes per second (`sk_pacing_rate`; `u64::MAX` unpaced).
    pub pacing_rate: u64,
    /// `tcpi_delivery_rate`: the latest delivery-rate sample, bytes per second (Linux 4.9+).
    pub delivery_rate: u64,
    /// `tcpi_min_rtt`: the windowed minimum RTT the stack keeps (`tcp_min_rtt`), microseconds (Linux 4.6+).
    pub min_rtt_us: u32,
    /// `tcpi_unacked`: segments sent and not yet cumulatively acknowledged.
    pub unacked: u32,
    /// `tcpi_delivered`: segments delivered, SACKed ones included (`tp->delivered`, Linux 4.18+).
    pub delivered: u32,
}

/// One connection over a run: the counters' growth and the gauges at the end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TcpInfoDelta {
    /// Consecutive unrecovered timeouts at the end (`tcpi_retransmits`).
    pub retransmits: u32,
    /// Segments considered lost at the end (`tcpi_lost`).
    pub lost: u32,
    /// Segments this side retransmitted during the run.
    pub total_retrans: u64,
    /// Retransmission timeout at the end, microseconds.
    pub rto_us: u32,
    /// Delayed-ACK timeout at the end, microseconds.
    pub ato_us: u32,
    /// Smoothed RTT at the end, microseconds.
    pub rtt_us: u32,
    /// RTT variation at the end, microseconds.
    pub rttvar_us: u32,
    /// Receiver RTT estimate at the end, microseconds.
    pub rcv_rtt_us: u32,
    /// Congestion window at the end, segments.
    pub snd_cwnd: u32,
    /// Payload bytes received during the run.
    pub bytes_received: u64,
    /// Segments received during the run.
    pub segs_in: u64,
    /// Segments sent during the run.
    pub segs_out: u64,
}

impl TcpInfo {
    /// Read `TCP_INFO` of a connected TCP socket.
    pub fn of(socket: &impl AsRawFd) -> io::Result<TcpInfo> {
        let mut raw: libc::tcp_info = zeroed_tcp_info();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: `raw` is a plain-old-data struct of `len` writable bytes, and
        // the kernel writes at most `len` bytes into it and updates `len`.
        #[allow(unsafe_code)]
        let rc = unsafe {
            libc::getsockopt(
                socket.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut raw as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TcpInfo {
            retransmits: raw.tcpi_retransmits,
            lost: raw.tcpi_lost,
            total_retrans: raw.tcpi_total_retrans,
            rto_us: raw.tcpi_rto,
            ato_us: raw.tcpi_ato,
            rtt_us: raw.tcpi_rtt,
            rttvar_us: raw.tcpi_rttvar,
            rcv_rtt_us: raw.tcpi_rcv_rtt,
            snd_cwnd: raw.tcpi_snd_cwnd,
            bytes_received: raw.tcpi_bytes_received,
            segs_in: raw.tcpi_segs_in,
            segs_out: raw.tcpi_segs_out,
            pacing_rate: raw.tcpi_pacing_rate,
            delivery_rate: raw.tcpi_delivery_rate,
            min_rtt_us: raw.tcpi_min_rtt,
            unacked: raw.tcpi_unacked,
            delivered: raw.tcpi_delivered,
        })
    }

    /// The change from `before` to `self`: counters as differences (wrapping,
    /// as the kernel's 32-bit counters do), gauges as in `self`.
    pub fn since(&self, before: &TcpInfo) -> TcpInfoDelta {
        TcpInfoDelta {
            retransmits: u32::from(self.retransmits),
            lost: self.lost,
            total_retrans: u64::from(self.total_retrans.wrapping_sub(before.total_retrans)),
            rto_us: self.rto_us,
            ato_us: self.ato_us,
            rtt_us: self.rtt_us,
            rttvar_us: self.rttvar_us,
            rcv_rtt_us: self.rcv_rtt_us,
            snd_cwnd: self.snd_cwnd,
            bytes_received: self.bytes_received.wrapping_sub(before.bytes_received),
            segs_in: u64::from(self.segs_in.wrapping_sub(before.segs_in)),
            segs_out: u64::from(self.segs_out.wrapping_sub(before.segs_out)),
        }
    }
}

/// Read the `IPPROTO_TCP` option `name` of `socket` into `buf`; the bytes the kernel wrote.
pub(crate) fn tcp_option(socket: &impl AsRawFd, name: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = libc::socklen_t::try_from(buf.len()).unwrap_or(libc::socklen_t::MAX);
    // SAFETY: `buf` is `len` writable bytes, any value of which is a valid `u8`; the kernel writes
    // at most `len` bytes into it and updates `len`.
    #[allow(unsafe_code)]
    let rc =
        unsafe { libc::getsockopt(socket.as_raw_fd(), libc::IPPROTO_TCP, name, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}

/// An all-zero `tcp_info`, the buffer `getsockopt` fills.
fn zeroed_tcp_info() -> libc::tcp_info {
    // SAFETY: `tcp_info` is a C struct of integers, for which all-zero bytes are valid.
    #[allow(unsafe_code)]
    unsafe {
        std::mem::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn counts_the_bytes_a_connection_received() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let before = TcpInfo::of(&client).unwrap();
        server.write_all(&[7u8; 10_000]).unwrap();
        let mut buf = vec![0u8; 10_000];
        client.read_exact(&mut buf).unwrap();
        let delta = TcpInfo::of(&client).unwrap().since(&before);
        assert_eq!(delta.bytes_received, 10_000);
        assert!(delta.segs_in >= 1);
        assert!(delta.rto_us >= 200_000, "Linux's RTO floor is 200 ms, got {} us", delta.rto_us);
    }

    #[test]
    fn since_takes_counter_differences_across_wraparound() {
        let before = TcpInfo { total_retrans: u32::MAX, segs_in: u32::MAX - 1, ..TcpInfo::default() };
        let after = TcpInfo { total_retrans: 2, segs_in: 1, rto_us: 204_000, ..TcpInfo::default() };
        let d = after.since(&before);
        assert_eq!((d.total_retrans, d.segs_in, d.rto_us), (3, 3, 204_000));
    }

    #[test]
    fn a_socket_that_is_not_tcp_is_an_error() {
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(TcpInfo::of(&udp).is_err());
    }
}
