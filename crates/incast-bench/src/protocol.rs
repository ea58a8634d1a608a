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
//! this implementation; a client must not rely on their value beyond the
//! first four, which never spell `INCE`). An answer of 1 to 3 bytes may be
//! any bytes, `INC` included: the client knows from its own `count` that it
//! cannot be a refusal's start.
//!
//! A server that refuses a request (or, right after accepting it, a whole
//! connection: too many open) sends a [`Refusal`] frame in place of the
//! answer and closes the connection:
//!
//! | offset | size   | field  | value                                   |
//! |-------:|-------:|--------|-----------------------------------------|
//! | 0      | 4      | magic  | `b"INCE"` (`0x494E4345`)                |
//! | 4      | 4      | length | bytes of `reason`, at most [`MAX_REASON_LEN`] |
//! | 8      | length | reason | one line of UTF-8 text                  |
//!
//! A payload never starts with `INCE`, so the first four bytes of an answer
//! of at least four tell a refusal from data; a refusal in place of a
//! shorter answer arrives as more bytes than were asked for, and is whole
//! from the first of them. A client that predates the frame counts it as
//! payload and sees the connection close short of the count, as before.

use thiserror::Error;

/// The four bytes every request starts with.
pub const MAGIC: [u8; 4] = *b"INCB";
/// The protocol version this crate speaks.
pub const VERSION: u16 = 1;
/// Length of a request header in bytes.
pub const HEADER_LEN: usize = 24;
/// The four bytes a [`Refusal`] frame starts with.
pub const REFUSAL_MAGIC: [u8; 4] = *b"INCE";
/// Bytes of a [`Refusal`] frame before its reason: magic and length.
pub const REFUSAL_HEADER_LEN: usize = 8;
/// The longest reason a [`Refusal`] carries, in bytes; a longer one is cut
/// (at a character boundary) by the sender and refused as malformed by the receiver.
pub const MAX_REASON_LEN: usize = 1024;

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

/// Why a server refused a request or a connection: the error frame sent in
/// place of an answer, just before the server closes the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// One line of text, at most [`MAX_REASON_LEN`] bytes.
    pub reason: String,
}

/// What the first bytes of an answer are ([`Refusal::decode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerStart {
    /// Payload: the bytes do not start with [`REFUSAL_MAGIC`].
    Payload,
    /// Too few bytes to tell, or a refusal frame not yet whole: read more.
    Incomplete,
    /// A whole refusal frame.
    Refused(Refusal),
    /// A frame with [`REFUSAL_MAGIC`] that breaks the rules (the message says which).
    Malformed(String),
}

impl Refusal {
    /// A refusal for `reason`: line breaks and other control characters
    /// become spaces, and text past [`MAX_REASON_LEN`] bytes is cut at a
    /// character boundary.
    pub fn new(reason: &str) -> Refusal {
        let mut line = String::with_capacity(reason.len().min(MAX_REASON_LEN));
        for c in reason.chars().map(|c| if c.is_control() { ' ' } else { c }) {
            if line.len() + c.len_utf8() > MAX_REASON_LEN {
                break;
            }
            line.push(c);
        }
        Refusal { reason: line }
    }

    /// The frame: magic, length, reason. A reason longer than
    /// [`MAX_REASON_LEN`] (possible only when built by hand) is cut there.
    pub fn encode(&self) -> Vec<u8> {
        let reason = Refusal::new(&self.reason).reason;
        let mut out = Vec::with_capacity(REFUSAL_HEADER_LEN + reason.len());
        out.extend_from_slice(&REFUSAL_MAGIC);
        out.extend_from_slice(&(reason.len() as u32).to_be_bytes());
        out.extend_from_slice(reason.as_bytes());
        out
    }

    /// Classify the first bytes of an answer (all of them received so far,
    /// or the first [`REFUSAL_HEADER_LEN`] + [`MAX_REASON_LEN`] of them).
    /// Bytes after a whole frame are ignored.
    pub fn decode(bytes: &[u8]) -> AnswerStart {
        let magic_len = bytes.len().min(REFUSAL_MAGIC.len());
        if bytes[..magic_len] != REFUSAL_MAGIC[..magic_len] {
            return AnswerStart::Payload;
        }
        if bytes.len() < REFUSAL_HEADER_LEN {
            return AnswerStart::Incomplete;
        }
        let len = u32::from_be_bytes(bytes[4..8].try_into().expect("4 bytes")) as usize;
        if len > MAX_REASON_LEN {
            return AnswerStart::Malformed(format!(
                "refusal frame: reason of {len} bytes, the maximum is {MAX_REASON_LEN}"
            ));
        }
        let Some(reason) = bytes.get(REFUSAL_HEADER_LEN..REFUSAL_HEADER_LEN + len) else {
            return AnswerStart::Incomplete;
        };
        match std::str::from_utf8(reason) {
            Ok(text) => AnswerStart::Refused(Refusal::new(text)),
            Err(e) => AnswerStart::Malformed(format!("refusal frame: reason is not UTF-8 ({e})")),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
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

    #[test]
    fn a_refusal_has_the_documented_layout() {
        let bytes = Refusal::new("no").encode();
        assert_eq!(bytes, [b'I', b'N', b'C', b'E', 0, 0, 0, 2, b'n', b'o']);
        assert_eq!(Refusal::decode(&bytes), AnswerStart::Refused(Refusal { reason: "no".into() }));
    }

    #[test]
    fn a_refusal_round_trips_and_ignores_what_follows() {
        let refusal = Refusal::new("count: 104857600 bytes requested for block 0, the maximum is 67108864");
        let mut bytes = refusal.encode();
        assert_eq!(Refusal::decode(&bytes), AnswerStart::Refused(refusal.clone()));
        bytes.extend_from_slice(b"trailing");
        assert_eq!(Refusal::decode(&bytes), AnswerStart::Refused(refusal));
        assert_eq!(Refusal::decode(&Refusal::new("").encode()), AnswerStart::Refused(Refusal::new("")));
    }

    #[test]
    fn every_prefix_of_a_refusal_is_incomplete_and_payload_is_told_at_once() {
        let bytes = Refusal::new("busy").encode();
        for end in 0..bytes.len() {
            assert_eq!(Refusal::decode(&bytes[..end]), AnswerStart::Incomplete, "{end} bytes");
        }
        for payload in [&[0u8][..], &[0; 8], b"INCB", b"INCb", b"X", b"IX"] {
            assert_eq!(Refusal::decode(payload), AnswerStart::Payload, "{payload:?}");
        }
    }

    #[test]
    fn a_refusal_reason_is_one_line_of_at_most_the_maximum() {
        assert_eq!(Refusal::new("two\nlines\u{7}").reason, "two lines ");
        let long = "é".repeat(MAX_REASON_LEN); // 2 bytes each
        let cut = Refusal::new(&long);
        assert_eq!(cut.reason.len(), MAX_REASON_LEN);
        let by_hand = Refusal { reason: "x".repeat(MAX_REASON_LEN + 10) };
        assert_eq!(by_hand.encode().len(), REFUSAL_HEADER_LEN + MAX_REASON_LEN);
    }

    #[test]
    fn a_malformed_refusal_says_why() {
        let mut too_long = REFUSAL_MAGIC.to_vec();
        too_long.extend_from_slice(&(MAX_REASON_LEN as u32 + 1).to_be_bytes());
        assert_eq!(
            Refusal::decode(&too_long),
            AnswerStart::Malformed(format!("refusal frame: reason of 1025 bytes, the maximum is {MAX_REASON_LEN}"))
        );
        let mut not_utf8 = REFUSAL_MAGIC.to_vec();
        not_utf8.extend_from_slice(&[0, 0, 0, 2, 0xff, 0xfe]);
        assert!(
            matches!(Refusal::decode(&not_utf8), AnswerStart::Malformed(m) if m.starts_with("refusal frame: reason is not UTF-8"))
        );
    }

    /// xorshift64*: a deterministic source of test bytes (no dependency, same cases every run).
    pub(crate) struct XorShift(pub u64);

    impl XorShift {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        pub(crate) fn bytes(&mut self, out: &mut [u8]) {
            for b in out {
                *b = self.next() as u8;
            }
        }
    }

    /// What `decode` must do, written independently: the well-formed headers and nothing else.
    fn oracle(h: &[u8; HEADER_LEN], max: u64) -> Option<Request> {
        let well_formed = h[0..4] == *b"INCB" && h[4..6] == [0, 1] && h[6..8] == [0, 0];
        let count = h[16..24].iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        let block = h[8..16].iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        (well_formed && count <= max).then_some(Request { block, count })
    }

    /// A header near the accepted ones: a valid one with a few bytes or bits changed.
    fn mutated(rng: &mut XorShift, max: u64) -> [u8; HEADER_LEN] {
        let count = match rng.below(4) {
            0 => max,
            1 => max.saturating_add(1),
            2 => rng.below(max.saturating_add(1).max(1)),
            _ => rng.next(),
        };
        let mut h = Request { block: rng.next(), count }.encode();
        for _ in 0..rng.below(3) {
            let at = rng.below(HEADER_LEN as u64) as usize;
            match rng.below(3) {
                0 => h[at] ^= 1 << rng.below(8),
                1 => h[at] = rng.next() as u8,
                _ => h[at] = 0,
            }
        }
        h
    }

    #[test]
    fn fuzz_decode_accepts_exactly_the_well_formed_headers() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let (mut accepted, mut rejected) = (0u32, 0u32);
        for i in 0..200_000 {
            let max = match rng.below(4) {
                0 => 0,
                1 => u64::MAX,
                2 => 64 << 20,
                _ => rng.next() >> rng.below(64),
            };
            let h = if i % 2 == 0 {
                mutated(&mut rng, max)
            } else {
                let mut h = [0u8; HEADER_LEN];
                rng.bytes(&mut h);
                h
            };
            let got = Request::decode(&h, max);
            assert_eq!(got.as_ref().ok(), oracle(&h, max).as_ref(), "header {h:02x?}, max {max}: {got:?}");
            match got {
                Ok(req) => {
                    accepted += 1;
                    assert_eq!(req.encode(), h, "an accepted header re-encodes to itself");
                }
                Err(e) => {
                    rejected += 1;
                    let text = e.to_string();
                    assert!(
                        ["magic: ", "version: ", "flags: ", "count: "].iter().any(|f| text.starts_with(f)),
                        "{text}"
                    );
                }
            }
        }
        // Both outcomes are exercised in earnest.
        assert!(accepted > 20_000 && rejected > 100_000, "{accepted} accepted, {rejected} rejected");
    }

    #[test]
    fn fuzz_refusal_decode_never_panics_and_round_trips() {
        let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
        for _ in 0..50_000 {
            let len = rng.below(2 * (REFUSAL_HEADER_LEN + MAX_REASON_LEN) as u64) as usize;
            let mut bytes = vec![0u8; len];
            rng.bytes(&mut bytes);
            if rng.below(2) == 0 && len >= 8 {
                bytes[..4].copy_from_slice(&REFUSAL_MAGIC);
                let claimed = rng.below(MAX_REASON_LEN as u64 + 16) as u32;
                bytes[4..8].copy_from_slice(&claimed.to_be_bytes());
            }
            match Refusal::decode(&bytes) {
                AnswerStart::Refused(r) => {
                    assert!(r.reason.len() <= MAX_REASON_LEN);
                    assert!(!r.reason.chars().any(char::is_control));
                }
                AnswerStart::Payload => assert!(!bytes.starts_with(&REFUSAL_MAGIC[..bytes.len().min(4)])),
                AnswerStart::Incomplete | AnswerStart::Malformed(_) => {
                    assert!(bytes.starts_with(&REFUSAL_MAGIC[..bytes.len().min(4)]))
                }
            }
            let text: String =
                (0..rng.below(40)).map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('?')).collect();
            let refusal = Refusal::new(&text);
            assert_eq!(Refusal::decode(&refusal.encode()), AnswerStart::Refused(refusal));
        }
    }
}
