//! Packet capture (`trace.pcap`): every packet as a host's NIC takes it and
//! as it reaches a host, encoded as classic libpcap files, one per host, with
//! real Ethernet II, IPv4 and TCP headers built from the simulated segments.
//!
//! **Models:** two capture points per host (each client and each server): a
//! packet is recorded when the endpoint hands it to its host's NIC (`tx`) and
//! when its last bit reaches the destination host (`rx`), so a host's file
//! holds what a capture on that host would show. Files are classic libpcap
//! (magic `0xa1b23c4d`: nanosecond timestamps, version 2.4, link type 1
//! Ethernet, snaplen 262144), little-endian. Host `h` (numbered as
//! `workload::clients` says: with one client, 0 the client and `i + 1`
//! server `i`) has MAC `02:00:hh:hh:hh:hh` (`h` big-endian in the last four
//! bytes) and IPv4 address `10.0.0.0 + h + 1` (client 10.0.0.1, server 0
//! 10.0.0.2); these addresses exist only inside the files. IPv4: IHL 5, the
//! ECN field from the segment (Not-ECT, ECT(0), or CE once a switch marked
//! it), DF set, identification 0, TTL 64, protocol 6, header checksum. The
//! rude bit of RUDE §3.1 is the lowest reserved TCP header bit. TCP: the
//! server listens on port 5001, the client's port is `40000 + flow` (modulo
//! 25536; each connection joins its own pair of addresses or has its own
//! client port, so the 4-tuple stays unique);
//! sequence and acknowledgment numbers are the 64-bit stream offsets plus a
//! fixed initial sequence number plus one (the SYN's), modulo 2^32
//! ([`ISN_TO_SERVER`], [`ISN_TO_CLIENT`]); flags ACK, PSH, ECE and CWR from
//! the segment; window `min(wnd, 65535)`; the segment's options laid out as
//! Linux sends them — NOP, NOP, timestamps (kind 8: TSval, TSecr), then NOP,
//! NOP, SACK (kind 5) with each block's edges in the acknowledged stream's
//! sequence space — and the data offset counting them; checksum over the
//! pseudo-header, header, options and (zero) payload.
//! **Deliberately different:** each record is cut to its header bytes
//! (54 plus options: the captured length; the original length adds the
//! payload), which keeps files
//! small; the payload is all zero bytes and the TCP checksum covers it as
//! such. Timestamps are simulated time truncated to nanoseconds, which
//! [`shift`] moves to the date the run was made. The original
//! length counts no Ethernet padding or FCS. A packet the host's own NIC
//! queue drops still appears as sent, as in a capture taken before the queue.
//! **Not modelled:** SYN/FIN (the connections exist before the run and never
//! close, so no window-scale option is ever negotiated and windows above
//! 65535 bytes are clipped), captures at the switch.

use crate::net::Direction;
use crate::tcp::{flags, Segment};
use crate::time::SimTime;
use crate::workload::clients::Layout;

/// Initial sequence number of the client's direction (requests).
pub const ISN_TO_SERVER: u32 = 0x1000_0000;
/// Initial sequence number of the server's direction (responses).
pub const ISN_TO_CLIENT: u32 = 0x2000_0000;
/// TCP port the servers listen on.
pub const SERVER_PORT: u16 = 5001;
/// The client's port for flow 0; flow `f` uses `40000 + f mod 25536`.
pub const CLIENT_PORT_BASE: u16 = 40000;
/// Largest packet a reader must accept, as written in the file header.
pub const SNAPLEN: u32 = 262_144;
/// Bytes of Ethernet II (14), IPv4 (20) and TCP (20) headers without options.
pub const HEADERS: usize = 54;
/// Most bytes kept of a packet: the headers and 40 bytes of TCP options.
pub const MAX_HEADERS: usize = HEADERS + 40;
/// Bytes of the file header.
pub const FILE_HEADER: usize = 24;
/// Bytes of a record header.
pub const RECORD_HEADER: usize = 16;

/// Which way a captured packet crossed its host's NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// Handed to the NIC by the host's endpoint.
    Tx,
    /// Reached the host.
    Rx,
}

/// One packet seen at one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapturedPacket {
    /// When it was seen.
    pub time: SimTime,
    /// The host that saw it.
    pub host: u32,
    /// The (sending, receiving) hosts.
    pub ends: (u32, u32),
    /// Sent or received by that host.
    pub way: Way,
    /// Connection (numbered as `workload::clients` says).
    pub flow: u32,
    /// Direction on the connection.
    pub dir: Direction,
    /// The segment.
    pub seg: Segment,
}

/// Every packet captured during a run, in the order seen.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    /// Who reads from whom: the hosts captured are its clients and servers.
    pub reads: Layout,
    /// The packets, in time order.
    pub packets: Vec<CapturedPacket>,
}

/// The (sending, receiving) hosts of a segment travelling `dir` on reading connection `flow`.
pub fn ends(reads: &Layout, flow: u32, dir: Direction) -> (u32, u32) {
    let (client, server) = reads.flow_hosts(flow);
    match dir {
        Direction::ToServer => (client, server),
        Direction::ToClient => (server, client),
    }
}

impl Capture {
    /// An empty capture of the clients and servers of `reads`.
    pub fn new(reads: Layout) -> Self {
        Capture { reads, packets: Vec::new() }
    }

    /// `seg`, travelling `dir` on `flow`, was sent (`Tx`, by its sender) or
    /// received (`Rx`, by its receiver) at `now`.
    #[cold]
    #[inline(never)]
    pub fn record(&mut self, now: SimTime, way: Way, flow: u32, dir: Direction, seg: Segment) {
        let ends = ends(&self.reads, flow, dir);
        let host = match way {
            Way::Tx => ends.0,
            Way::Rx => ends.1,
        };
        self.packets.push(CapturedPacket { time: now, host, ends, way, flow, dir, seg });
    }

    /// One pcap file per host, by host index: the clients' first, then the servers'.
    pub fn host_files(&self) -> Vec<Vec<u8>> {
        let mut counts = vec![0usize; self.reads.hosts() as usize];
        for p in &self.packets {
            counts[p.host as usize] += 1;
        }
        let mut files: Vec<Vec<u8>> = counts
            .iter()
            .map(|&n| {
                let mut f = Vec::with_capacity(FILE_HEADER + n * (RECORD_HEADER + MAX_HEADERS));
                f.extend_from_slice(&file_header());
                f
            })
            .collect();
        for p in &self.packets {
            write_record(&mut files[p.host as usize], p.time, p.ends, p.flow, p.dir, &p.seg);
        }
        files
    }
}

/// The 24-byte classic pcap file header: nanosecond magic, version 2.4,
/// snaplen [`SNAPLEN`], link type Ethernet.
pub fn file_header() -> [u8; FILE_HEADER] {
    let mut h = [0u8; FILE_HEADER];
    h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone (8..12) and sigfigs (12..16) stay zero.
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    h
}

/// Append one record: its header (time, captured and original length) and
/// the packet's headers with their options, from host `ends.0` to `ends.1`.
pub fn write_record(out: &mut Vec<u8>, time: SimTime, ends: (u32, u32), flow: u32, dir: Direction, seg: &Segment) {
    let ns = time.0 / 1_000;
    let (h, n) = frame_headers(ends, flow, dir, seg);
    out.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(n as u32 + seg.len).to_le_bytes());
    out.extend_from_slice(&h[..n]);
}

/// A capture written by [`Capture::host_files`] with every record's timestamp
/// moved `by_ns` nanoseconds later: records carry simulated time (from 0,
/// which capture tools show as 1970-01-01), and a reader wants the date the
/// run was made. `None` if a timestamp would pass the format's last second
/// (2106-02-07, 32-bit seconds) or `file` is not such a capture.
pub fn shift(file: &[u8], by_ns: u64) -> Option<Vec<u8>> {
    let mut out = file.to_vec();
    let mut at = FILE_HEADER;
    while at < out.len() {
        let word = |i: usize| out.get(at + i..at + i + 4).map(|b| u64::from(u32::from_le_bytes(b.try_into().unwrap())));
        let (sec, nsec, incl) = (word(0)?, word(4)?, word(8)?);
        let ns = (sec * 1_000_000_000 + nsec).checked_add(by_ns)?;
        let sec = u32::try_from(ns / 1_000_000_000).ok()?;
        out[at..at + 4].copy_from_slice(&sec.to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        at += 16 + incl as usize;
    }
    (at == out.len() && out.len() >= FILE_HEADER).then_some(out)
}

/// MAC address of host `h`: locally administered, `02:00` then `h`.
pub fn mac(host: u32) -> [u8; 6] {
    let h = host.to_be_bytes();
    [0x02, 0x00, h[0], h[1], h[2], h[3]]
}

/// IPv4 address of host `h`: `10.0.0.0 + h + 1`.
pub fn ipv4(host: u32) -> [u8; 4] {
    (0x0a00_0000u32 + host + 1).to_be_bytes()
}

/// TCP port of the client's end of `flow`.
pub fn client_port(flow: u32) -> u16 {
    CLIENT_PORT_BASE + (flow % (65536 - CLIENT_PORT_BASE as u32)) as u16
}

/// RFC 1071: the one's complement of the one's complement sum of 16-bit
/// big-endian words, starting from the partial sum `sum`.
pub fn checksum(sum: u32, bytes: &[u8]) -> u16 {
    let mut s = sum;
    for w in bytes.chunks(2) {
        s += u32::from(w[0]) << 8 | u32::from(w.get(1).copied().unwrap_or(0));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Ethernet II, IPv4 and TCP headers (options included) of `seg` travelling
/// `dir` on `flow` from host `src` to host `dst`, and how many of the
/// returned bytes they fill.
pub fn frame_headers((src, dst): (u32, u32), flow: u32, dir: Direction, seg: &Segment) -> ([u8; MAX_HEADERS], usize) {
    let (sport, dport, isn, peer_isn) = match dir {
        Direction::ToServer => (client_port(flow), SERVER_PORT, ISN_TO_SERVER, ISN_TO_CLIENT),
        Direction::ToClient => (SERVER_PORT, client_port(flow), ISN_TO_CLIENT, ISN_TO_SERVER),
    };
    let opt_len = seg.option_bytes() as usize;
    let n = HEADERS + opt_len;
    let mut h = [0u8; MAX_HEADERS];
    // Ethernet II.
    h[0..6].copy_from_slice(&mac(dst));
    h[6..12].copy_from_slice(&mac(src));
    h[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    // IPv4 (RFC 791).
    let ip = &mut h[14..34];
    ip[0] = 0x45; // version 4, IHL 5
                  // RFC 3168 (5): the ECN field, ECT(0) = 0b10, CE = 0b11.
    ip[1] = if seg.has(flags::CE) {
        0b11
    } else if seg.has(flags::ECT) {
        0b10
    } else {
        0
    };
    let tcp_len = 20 + opt_len as u32 + seg.len; // at most 65515: the MSS is bounded by tcp::MAX_MSS
    ip[2..4].copy_from_slice(&((20 + tcp_len) as u16).to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
    ip[8] = 64; // TTL
    ip[9] = 6; // TCP
    ip[12..16].copy_from_slice(&ipv4(src));
    ip[16..20].copy_from_slice(&ipv4(dst));
    let ipsum = checksum(0, ip);
    ip[10..12].copy_from_slice(&ipsum.to_be_bytes());
    // TCP (RFC 9293 3.1).
    let seq = isn.wrapping_add(1).wrapping_add(seg.seq as u32);
    let ack = peer_isn.wrapping_add(1).wrapping_add(seg.ack as u32);
    let mut bits = 0u8;
    for (ours, tcp) in [(flags::CWR, 0x80), (flags::ECE, 0x40), (flags::ACK, 0x10), (flags::PSH, 0x08)] {
        if seg.has(ours) {
            bits |= tcp;
        }
    }
    let t = &mut h[34..n];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    // Data offset in 32-bit words; RUDE §3.1's rude bit is the lowest reserved bit.
    t[12] = (((20 + opt_len) / 4) << 4) as u8 | u8::from(seg.has(flags::RUDE));
    t[13] = bits;
    t[14..16].copy_from_slice(&(seg.wnd.min(65535) as u16).to_be_bytes());
    write_options(&mut t[20..], seg, peer_isn);
    // RFC 9293 3.1: the checksum covers the pseudo-header (source, destination,
    // protocol, TCP length), the header and the payload; zero payload bytes add nothing.
    let pseudo = pseudo_sum(&ipv4(src), &ipv4(dst), tcp_len);
    let tsum = checksum(pseudo, t);
    t[16..18].copy_from_slice(&tsum.to_be_bytes());
    (h, n)
}

/// The TCP options of `seg` into `out` (exactly `seg.option_bytes()` long):
/// NOP, NOP, timestamps (RFC 7323 §3), then NOP, NOP, SACK (RFC 2018 §3)
/// with edges in the sequence space whose initial number is `peer_isn`.
fn write_options(out: &mut [u8], seg: &Segment, peer_isn: u32) {
    let mut at = 0;
    if let Some(ts) = seg.ts() {
        out[..4].copy_from_slice(&[1, 1, 8, 10]);
        out[4..8].copy_from_slice(&ts.val.to_be_bytes());
        out[8..12].copy_from_slice(&ts.ecr.to_be_bytes());
        at = 12;
    }
    if seg.has_sack() {
        let blocks = seg.sack().count();
        out[at..at + 4].copy_from_slice(&[1, 1, 5, (2 + 8 * blocks) as u8]);
        at += 4;
        for (start, end) in seg.sack() {
            let edge = |off: u64| peer_isn.wrapping_add(1).wrapping_add(off as u32).to_be_bytes();
            out[at..at + 4].copy_from_slice(&edge(start));
            out[at + 4..at + 8].copy_from_slice(&edge(end));
            at += 8;
        }
    }
    debug_assert_eq!(at, out.len());
}

/// Partial sum of the TCP pseudo-header.
fn pseudo_sum(src: &[u8; 4], dst: &[u8; 4], tcp_len: u32) -> u32 {
    let word = |b: &[u8]| u32::from(b[0]) << 8 | u32::from(b[1]);
    word(&src[0..2]) + word(&src[2..4]) + word(&dst[0..2]) + word(&dst[2..4]) + 6 + tcp_len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two records, at 1.5 s and at 2 s less 1 ns of simulated time.
    fn two_records() -> Vec<u8> {
        let mut f = file_header().to_vec();
        for t in [1_500_000_000_000u64, 1_999_999_999_000] {
            write_record(&mut f, SimTime(t), (0, 1), 0, Direction::ToClient, &data(0, 100));
        }
        f
    }

    fn stamp(f: &[u8], at: usize) -> (u32, u32) {
        (
            u32::from_le_bytes(f[at..at + 4].try_into().unwrap()),
            u32::from_le_bytes(f[at + 4..at + 8].try_into().unwrap()),
        )
    }

    #[test]
    fn shift_moves_every_record_and_carries_nanoseconds_into_seconds() {
        let f = two_records();
        let second =
            FILE_HEADER + 16 + u32::from_le_bytes(f[FILE_HEADER + 8..FILE_HEADER + 12].try_into().unwrap()) as usize;
        let g = shift(&f, 1_700_000_000_000_000_001).unwrap();
        assert_eq!(stamp(&g, FILE_HEADER), (1_700_000_001, 500_000_001));
        assert_eq!(stamp(&g, second), (1_700_000_002, 0));
        assert_eq!(g[..FILE_HEADER], f[..FILE_HEADER]);
        assert_eq!(g[FILE_HEADER + 8..second], f[FILE_HEADER + 8..second], "only the timestamps change");
    }

    #[test]
    fn shift_refuses_dates_past_2106_and_truncated_files() {
        let f = two_records();
        assert!(shift(&f, u64::from(u32::MAX) * 1_000_000_000).is_none());
        assert!(shift(&f[..f.len() - 1], 0).is_none());
        assert!(shift(&f[..10], 0).is_none());
        assert_eq!(shift(&file_header(), 5).unwrap(), file_header());
    }

    /// The headers of `seg` on connection `flow` of a single client.
    fn frame_headers(flow: u32, dir: Direction, seg: &Segment) -> ([u8; MAX_HEADERS], usize) {
        super::frame_headers(ends(&Layout::one_client(1000), flow, dir), flow, dir, seg)
    }

    fn data(seq: u64, len: u32) -> Segment {
        Segment::new(seq, 100, len, 1 << 20, flags::ACK | flags::PSH)
    }

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// RFC 1071 (3): the worked example sums to 0xddf2, so the checksum is its complement.
    #[test]
    fn checksum_matches_the_rfc_1071_example() {
        let bytes = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(0, &bytes), !0xddf2);
    }

    #[test]
    fn file_header_is_nanosecond_pcap_2_4_ethernet() {
        let h = file_header();
        assert_eq!(h[0..4], [0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!((h[4], h[6]), (2, 4));
        assert_eq!(u32::from_le_bytes(h[16..20].try_into().unwrap()), 262_144);
        assert_eq!(u32::from_le_bytes(h[20..24].try_into().unwrap()), 1);
    }

    /// A response segment from server 2 (host 3) to the client: every field at its offset.
    #[test]
    fn response_segment_fields_sit_at_their_offsets() {
        let mut seg = data(2920, 1460);
        seg.flags |= flags::ECE | flags::CWR;
        let (h, n) = frame_headers(2, Direction::ToClient, &seg);
        assert_eq!(n, HEADERS);
        assert_eq!(h[0..6], [2, 0, 0, 0, 0, 0]); // to the client
        assert_eq!(h[6..12], [2, 0, 0, 0, 0, 3]); // from host 3
        assert_eq!(be16(&h, 12), 0x0800);
        assert_eq!((h[14], h[22], h[23]), (0x45, 64, 6));
        assert_eq!(be16(&h, 16), 20 + 20 + 1460);
        assert_eq!(h[26..30], [10, 0, 0, 4]);
        assert_eq!(h[30..34], [10, 0, 0, 1]);
        assert_eq!((be16(&h, 34), be16(&h, 36)), (5001, 40002));
        assert_eq!(be32(&h, 38), ISN_TO_CLIENT + 1 + 2920);
        assert_eq!(be32(&h, 42), ISN_TO_SERVER + 1 + 100);
        assert_eq!(h[46], 0x50);
        assert_eq!(h[47], 0x80 | 0x40 | 0x10 | 0x08);
        assert_eq!(be16(&h, 48), 65535, "a 1 MiB window is clipped: no window scaling");
    }

    /// RFC 791 and RFC 9293 3.1: recomputing a checksum over the header holding it gives zero.
    #[test]
    fn ip_and_tcp_checksums_verify() {
        for (flow, dir, seg) in [
            (0, Direction::ToServer, Segment::new(0, 0, 4, 65535, flags::ACK)),
            (7, Direction::ToClient, data(5_000_000_000, 1460)),
            (300, Direction::ToClient, data(1, 1)),
            (1, Direction::ToServer, sack_ack()),
        ] {
            let (h, n) = frame_headers(flow, dir, &seg);
            assert_eq!(checksum(0, &h[14..34]), 0, "IPv4 header of {seg:?}");
            let (src, dst): ([u8; 4], [u8; 4]) = (h[26..30].try_into().unwrap(), h[30..34].try_into().unwrap());
            // The zero payload is summed explicitly here, to check it adds nothing.
            let mut tcp = h[34..n].to_vec();
            let tcp_len = (n - 34) as u32 + seg.len;
            tcp.resize(tcp_len as usize, 0);
            assert_eq!(checksum(pseudo_sum(&src, &dst, tcp_len), &tcp), 0, "TCP of {seg:?}");
        }
    }

    /// A client ACK with timestamps and two SACK blocks.
    fn sack_ack() -> Segment {
        let mut seg = Segment::new(0, 1000, 0, 65535, flags::ACK);
        seg.set_sack(&[(5000, 6000), (2000, 4000)]);
        seg.set_ts(Some(crate::tcp::Timestamps { val: 7, ecr: 3 }));
        seg
    }

    /// RFC 7323 §3 and RFC 2018 §3 as Linux lays them out: NOP NOP TS, NOP
    /// NOP SACK; the data offset and IPv4 length count them; SACK edges are
    /// sequence numbers of the acknowledged (response) stream.
    #[test]
    fn timestamps_and_sack_options_on_the_wire() {
        let (h, n) = frame_headers(1, Direction::ToServer, &sack_ack());
        assert_eq!(n, HEADERS + 12 + 4 + 16);
        assert_eq!(h[46] >> 4, (20 + 32) / 4);
        assert_eq!(be16(&h, 16), 20 + 20 + 32);
        let o = &h[54..n];
        assert_eq!(o[..4], [1, 1, 8, 10]);
        assert_eq!((be32(o, 4), be32(o, 8)), (7, 3));
        assert_eq!(o[12..16], [1, 1, 5, 18]);
        assert_eq!((be32(o, 16), be32(o, 20)), (ISN_TO_CLIENT + 1 + 5000, ISN_TO_CLIENT + 1 + 6000));
        assert_eq!((be32(o, 24), be32(o, 28)), (ISN_TO_CLIENT + 1 + 2000, ISN_TO_CLIENT + 1 + 4000));
    }

    /// Stream offsets past 2^32 wrap, as 32-bit sequence numbers do.
    #[test]
    fn sequence_numbers_wrap_modulo_2_32() {
        let (h, _) = frame_headers(0, Direction::ToClient, &data((1 << 32) + 5, 10));
        assert_eq!(be32(&h, 38), ISN_TO_CLIENT + 1 + 5);
    }

    /// Each packet lands in the files of the host that sent it and of the one that received it.
    #[test]
    fn host_files_split_by_capturing_host_with_truncated_records() {
        let mut c = Capture::new(Layout::one_client(2));
        let req = Segment::new(0, 0, 4, 65535, flags::ACK);
        c.record(SimTime(1_500_000), Way::Tx, 1, Direction::ToServer, req);
        c.record(SimTime(3_000_000_000_123), Way::Rx, 1, Direction::ToServer, req);
        let f = c.host_files();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].len(), FILE_HEADER + RECORD_HEADER + HEADERS);
        assert_eq!(f[1].len(), FILE_HEADER, "server 0 saw nothing");
        assert_eq!(f[2].len(), FILE_HEADER + RECORD_HEADER + HEADERS);
        let le = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!((le(&f[0], 24), le(&f[0], 28)), (0, 1_500));
        assert_eq!((le(&f[2], 24), le(&f[2], 28)), (3, 0));
        assert_eq!((le(&f[2], 32), le(&f[2], 36)), (54, 58));
        assert_eq!(f[0][40..], f[2][40..], "the same bytes at both ends");
    }

    /// With two clients sharing a server, each client's packets carry its own
    /// address and land in its own file and the shared server's.
    #[test]
    fn two_clients_sharing_a_server_have_their_own_addresses() {
        use crate::workload::clients::ServerSets;
        let mut c = Capture::new(Layout { clients: 2, servers: 1, sets: ServerSets::Shared });
        let req = Segment::new(0, 0, 4, 65535, flags::ACK);
        c.record(SimTime(0), Way::Tx, 1, Direction::ToServer, req);
        let f = c.host_files();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].len(), FILE_HEADER, "client 0 sent nothing");
        let ip = FILE_HEADER + RECORD_HEADER + 14;
        assert_eq!(f[1][ip + 12..ip + 16], [10, 0, 0, 2], "from client 1 (host 1)");
        assert_eq!(f[1][ip + 16..ip + 20], [10, 0, 0, 3], "to server 0 (host 2)");
    }
}
