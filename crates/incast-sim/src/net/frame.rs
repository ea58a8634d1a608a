//! Bytes on the wire for one TCP segment.
//!
//! **Models:** IPv4 (20 bytes) and TCP (20 bytes) headers without options,
//! the Ethernet header (14) and FCS (4), padding to the 64-byte minimum frame,
//! and the preamble with start delimiter (8) and inter-frame gap (12) that
//! occupy the link but never a buffer. A 1460-byte segment is a 1518-byte
//! frame and 1538 bytes of link time, so 1 Gbps carries at most 949.28 Mbps of
//! goodput.
//! **Not modelled:** VLAN tags, TCP options (SACK and timestamps come with the
//! loss-recovery variants), jumbo-frame switch limits.

pub use crate::tcp::{MAX_MSS, TCP_IP_HEADERS};

/// Ethernet header and frame check sequence.
pub const ETHERNET_HEADER_FCS: u32 = 18;
/// Smallest Ethernet frame, header and FCS included.
pub const MIN_FRAME: u32 = 64;
/// Preamble, start-of-frame delimiter and inter-frame gap.
pub const PREAMBLE_IFG: u32 = 20;
/// Bytes of the Ethernet frame carrying `payload` bytes of TCP data: what a
/// switch buffer holds.
#[inline]
pub const fn frame_bytes(payload: u32) -> u64 {
    let f = payload + TCP_IP_HEADERS + ETHERNET_HEADER_FCS;
    (if f < MIN_FRAME { MIN_FRAME } else { f }) as u64
}

/// Bytes of link time the frame occupies: the frame plus preamble and gap.
#[inline]
pub const fn wire_bytes(payload: u32) -> u64 {
    frame_bytes(payload) + PREAMBLE_IFG as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_segment_is_a_1518_byte_frame_and_1538_wire_bytes() {
        assert_eq!(frame_bytes(1460), 1518);
        assert_eq!(wire_bytes(1460), 1538);
    }

    #[test]
    fn pure_ack_is_padded_to_the_minimum_frame() {
        assert_eq!(frame_bytes(0), 64);
        assert_eq!(wire_bytes(0), 84);
    }
}
