//! The synchronized-read wire protocol, version 1 (`docs/PROTOCOL.md`).
//!
//! Over one TCP connection the client sends a 24-byte request header and the
//! server answers with exactly the number of bytes it asked for, then waits
//! for the next header. All integers are big-endian:
//!
//! | offset | size | field   | value                                    |
//! |-------:|-----:|---------|------------------------------------------|
//! | 0      | 4    | magic   | `b"INCB"` (`0x494E4342`)                 |
//! | 4      | 2    | version | `1`                                      |
//! | 6      | 2    | flags   | `0` (reserved; a server rejects others)  |
//! | 8      | 8    | block   | block id, chosen by the client           |
//! | 16     | 8    | count   | bytes to send back, at most the server's maximum |
//!
//! The response carries no header: it is `count` bytes of payload (zeros in
//! this implementation; a client must not rely on their value). A server that
//! cannot accept a request closes the connection without answering; the
//! protocol has no error message, the server logs the reason.

use thiserror::Error;

/// The four bytes every request starts with.
pub const MAGIC: [u8; 4] = *b"INCB";
/// The protocol version this crate speaks.
pub const VERSION: u16 = 1;
/// Length of a request header in bytes.
pub const HEADER_LEN: usize = 24;

/// One request: send `count` bytes for block `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Block id, echoed nowhere: it names the block in logs and errors.
    pub block: u64,
    /// Bytes the server must send back.
    pub count: u64,
}

/// Why a request header was rejected; the message names the field.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ProtocolError {
    /// The first four bytes are not [`MAGIC`].
    #[error("magic: got {0:02x?}, expected \"INCB\" (49 4e 43 42)")]
    BadMagic([u8; 4]),
    /// A version this implementation does not speak.
    #[error("version: got {0}, this server speaks version {VERSION}")]
    BadVersion(u16),
    /// Reserved flag bits set.
    #[error("flags: got {0:#06x}, must be 0 in version {VERSION}")]
    BadFlags(u16),
    /// A byte count above the server's limit.
    #[error("count: {count} bytes requested for block {block}, the maximum is {max}")]
    CountTooLarge {
        /// Block id of the request.
        block: u64,
        /// Bytes requested.
        count: u64,
        /// The server's limit.
        max: u64,
    },
}

impl Request {
    /// The header's 24 bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&VERSION.to_be_bytes());
        out[6..8].copy_from_slice(&0u16.to_be_bytes());
        out[8..16].copy_from_slice(&self.block.to_be_bytes());
        out[16..24].copy_from_slice(&self.count.to_be_bytes());
        out
    }

    /// Parse a header, checking magic, version and flags, then that `count`
    /// is at most `max_count`, in that order.
    pub fn decode(bytes: &[u8; HEADER_LEN], max_count: u64) -> Result<Self, ProtocolError> {
        let field = |range: std::ops::Range<usize>| &bytes[range];
        let magic: [u8; 4] = field(0..4).try_into().expect("4 bytes");
        if magic != MAGIC {
            return Err(ProtocolError::BadMagic(magic));
        }
        let version = u16::from_be_bytes(field(4..6).try_into().expect("2 bytes"));
        if version != VERSION {
            return Err(ProtocolError::BadVersion(version));
        }
        let flags = u16::from_be_bytes(field(6..8).try_into().expect("2 bytes"));
        if flags != 0 {
            return Err(ProtocolError::BadFlags(flags));
        }
        let block = u64::from_be_bytes(field(8..16).try_into().expect("8 bytes"));
        let count = u64::from_be_bytes(field(16..24).try_into().expect("8 bytes"));
        if count > max_count {
            return Err(ProtocolError::CountTooLarge { block, count, max: max_count });
        }
        Ok(Request { block, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(magic: &[u8; 4], version: u16, flags: u16, block: u64, count: u64) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..4].copy_from_slice(magic);
        h[4..6].copy_from_slice(&version.to_be_bytes());
        h[6..8].copy_from_slice(&flags.to_be_bytes());
        h[8..16].copy_from_slice(&block.to_be_bytes());
        h[16..24].copy_from_slice(&count.to_be_bytes());
        h
    }

    /// The documented layout, byte for byte.
    #[test]
    fn encode_matches_the_documented_layout() {
        let bytes = Request { block: 0x0102_0304_0506_0708, count: 262_144 }.encode();
        let expected = [b'I', b'N', b'C', b'B', 0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 4, 0, 0];
        assert_eq!(bytes, expected);
    }

    #[test]
    fn decode_inverts_encode() {
        for req in [Request { block: 0, count: 0 }, Request { block: u64::MAX, count: 64 << 20 }] {
            assert_eq!(Request::decode(&req.encode(), 64 << 20), Ok(req));
        }
    }

    #[test]
    fn decode_rejects_bad_magic() {
        let err = Request::decode(&header(b"GET ", 1, 0, 0, 1), 10).unwrap_err();
        assert_eq!(err, ProtocolError::BadMagic(*b"GET "));
        assert!(err.to_string().starts_with("magic: "), "{err}");
    }

    #[test]
    fn decode_rejects_other_versions() {
        for version in [0, 2, u16::MAX] {
            let err = Request::decode(&header(&MAGIC, version, 0, 0, 1), 10).unwrap_err();
            assert_eq!(err, ProtocolError::BadVersion(version));
            assert!(err.to_string().starts_with("version: "), "{err}");
        }
    }

    #[test]
    fn decode_rejects_reserved_flags() {
        let err = Request::decode(&header(&MAGIC, 1, 0x8000, 0, 1), 10).unwrap_err();
        assert_eq!(err, ProtocolError::BadFlags(0x8000));
        assert!(err.to_string().starts_with("flags: "), "{err}");
    }

    #[test]
    fn decode_rejects_a_count_above_the_maximum_and_accepts_the_maximum() {
        assert_eq!(Request::decode(&header(&MAGIC, 1, 0, 7, 10), 10), Ok(Request { block: 7, count: 10 }));
        let err = Request::decode(&header(&MAGIC, 1, 0, 7, 11), 10).unwrap_err();
        assert_eq!(err, ProtocolError::CountTooLarge { block: 7, count: 11, max: 10 });
        assert_eq!(err.to_string(), "count: 11 bytes requested for block 7, the maximum is 10");
    }
}
