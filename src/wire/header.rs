//! The fixed-size wire records — preamble, frame header, frame footers,
//! postamble — each decoded and checked in one place, through a cursor
//! that knows the absolute offset of every byte it reads, so every error
//! carries one. See `spec/format.md` §2–§3 and §14.

use super::{
    be_u16, be_u64, FrameType, DATA_FRAME_FOOTER_LEN, END_MAGIC, FRAME_END, FRAME_HEADER_LEN,
    FRAME_MAGIC, MAGIC, POSTAMBLE_LEN, PREAMBLE_LEN, WIRE_VERSION,
};
use crate::error::{Error, ErrorKind, Result};

/// Bytes of the input together with the absolute offset of the first one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    abs: u64,
}

impl<'a> Cursor<'a> {
    /// `bytes`, whose first byte lies at absolute offset `abs`.
    pub(crate) fn new(bytes: &'a [u8], abs: u64) -> Self {
        Cursor { bytes, abs }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Absolute offset of `rel`.
    pub(crate) fn abs(&self, rel: usize) -> u64 {
        self.abs.saturating_add(rel as u64)
    }

    /// The first `n` bytes; `what` names them in the truncation error.
    pub(crate) fn take(&self, n: usize, what: &str) -> Result<&'a [u8]> {
        self.bytes.get(..n).ok_or_else(|| {
            Error::truncated(format!(
                "{} bytes cannot hold a {n}-byte {what}",
                self.bytes.len()
            ))
            .at(self.abs)
        })
    }
}

/// The fixed 24-byte message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preamble {
    /// Wire version (always 3 once parsed).
    pub version: u16,
    /// Message flags (advisory).
    pub flags: u16,
    /// Declared message length; 0 for a streaming message not back-filled.
    pub total_length: u64,
}

impl Preamble {
    /// Reads the preamble at the cursor: magic, then a supported version.
    pub(crate) fn read(c: Cursor<'_>) -> Result<Self> {
        let b = c.take(PREAMBLE_LEN, "preamble")?;
        if &b[0..8] != MAGIC {
            return Err(
                Error::new(ErrorKind::BadMagic, "expected message magic \"TENSOGRM\"").at(c.abs(0)),
            );
        }
        let version = be_u16(b, 8).unwrap_or(0);
        if version != WIRE_VERSION {
            return Err(Error::new(
                ErrorKind::UnsupportedVersion(version),
                format!("wire version {version} is not supported; tgm reads version 3"),
            )
            .at(c.abs(8)));
        }
        Ok(Preamble {
            version,
            flags: be_u16(b, 10).unwrap_or(0),
            total_length: be_u64(b, 16).unwrap_or(0),
        })
    }

    /// [`Preamble::read`] at the start of `b`, for scanners that only ask
    /// whether one is there.
    pub(crate) fn peek(b: &[u8]) -> Option<Self> {
        let ok = b.len() >= PREAMBLE_LEN && &b[0..8] == MAGIC;
        ok.then(|| Preamble::read(Cursor::new(b, 0)).ok()).flatten()
    }
}

/// The fixed 24-byte message trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Postamble {
    /// Offset of the first footer frame from the message start (advisory).
    pub first_footer_offset: u64,
    /// The mirrored message length; 0 when not back-filled.
    pub total_length: u64,
}

impl Postamble {
    /// Reads the postamble at the cursor; the end magic must be there.
    pub(crate) fn read(c: Cursor<'_>) -> Result<Self> {
        let b = c.take(POSTAMBLE_LEN, "postamble")?;
        if &b[16..24] != END_MAGIC {
            return Err(
                Error::new(ErrorKind::BadMagic, "expected end magic \"39277777\"").at(c.abs(16)),
            );
        }
        Ok(Postamble {
            first_footer_offset: be_u64(b, 0).unwrap_or(0),
            total_length: be_u64(b, 8).unwrap_or(0),
        })
    }

    /// [`Postamble::read`] at the start of `b`, for scanners.
    pub(crate) fn peek(b: &[u8]) -> Option<Self> {
        let ok = b.get(16..POSTAMBLE_LEN) == Some(&END_MAGIC[..]);
        ok.then(|| Postamble::read(Cursor::new(b, 0)).ok())
            .flatten()
    }

    /// Checks the mirrored length against the message's length `len`
    /// (0 mirrors nothing). `pos` is the postamble's absolute offset.
    pub(crate) fn check_length(&self, len: u64, pos: u64) -> Result<()> {
        let m = self.total_length;
        if m != 0 && m != len {
            return Err(Error::framing(format!(
                "postamble total_length {m} does not match the message length {len}"
            ))
            .at(pos + 8));
        }
        Ok(())
    }
}

/// The fixed 16-byte frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Frame type.
    pub ftype: FrameType,
    /// Frame flags.
    pub flags: u16,
    /// `total_length`: header, body and footer, padding excluded.
    pub total_length: u64,
}

impl FrameHeader {
    /// Reads a frame header at the cursor: magic, a known type, and a
    /// length no smaller than the type's minimum.
    pub(crate) fn read(c: Cursor<'_>) -> Result<Self> {
        let at = c.abs(0);
        let head = c
            .bytes()
            .get(..FRAME_HEADER_LEN)
            .ok_or_else(|| Error::truncated("frame header truncated").at(at))?;
        if &head[0..2] != FRAME_MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, "expected frame magic \"FR\"").at(at));
        }
        let tnum = be_u16(head, 2).unwrap_or(0);
        let ftype = match FrameType::from_u16(tnum) {
            Some(t) => t,
            None if tnum == 4 => {
                return Err(Error::framing(
                    "frame type 4 is retired (v2 data object); re-encode with a v3 writer",
                )
                .at(at))
            }
            None => return Err(Error::framing(format!("unknown frame type {tnum}")).at(at)),
        };
        let total_length = be_u64(head, 8).unwrap_or(0);
        if total_length < ftype.min_len() as u64 {
            return Err(Error::framing(format!(
                "{ftype:?} frame total_length {total_length} below minimum {}",
                ftype.min_len()
            ))
            .at(at + 8));
        }
        Ok(FrameHeader {
            ftype,
            flags: be_u16(head, 6).unwrap_or(0),
            total_length,
        })
    }

    /// [`FrameHeader::read`] at the start of `b`, for scanners.
    pub(crate) fn peek(b: &[u8]) -> Option<Self> {
        let ok = b.len() >= FRAME_HEADER_LEN && &b[0..2] == FRAME_MAGIC;
        ok.then(|| FrameHeader::read(Cursor::new(b, 0)).ok())
            .flatten()
    }

    /// Checks the end magic that closes a frame; `tail` is its last 4 bytes
    /// and `at` their absolute offset.
    pub(crate) fn check_end(tail: &[u8], at: u64) -> Result<()> {
        if tail != FRAME_END {
            return Err(
                Error::new(ErrorKind::BadMagic, "expected frame end magic \"ENDF\"").at(at),
            );
        }
        Ok(())
    }
}

/// The footer of a data-object frame, before its end magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFooter {
    /// Offset of the descriptor CBOR from the frame start.
    pub cbor_offset: u64,
    /// The hash slot.
    pub hash: u64,
}

impl DataFooter {
    /// Reads the footer of the whole data frame `frame`.
    pub(crate) fn of_frame(frame: &[u8]) -> Self {
        let at = frame.len().saturating_sub(DATA_FRAME_FOOTER_LEN);
        DataFooter {
            cbor_offset: be_u64(frame, at).unwrap_or(0),
            hash: be_u64(frame, at + 8).unwrap_or(0),
        }
    }
}

/// The hash slot of any whole frame: the 8 bytes before its end magic.
pub(crate) fn frame_hash_slot(frame: &[u8]) -> u64 {
    be_u64(frame, frame.len().saturating_sub(12)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preamble(version: u16, len: u64) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&version.to_be_bytes());
        b.extend_from_slice(&[0, 5, 0, 0, 0, 0]);
        b.extend_from_slice(&len.to_be_bytes());
        b
    }

    #[test]
    fn preamble_errors_carry_absolute_offsets() {
        let p = Preamble::read(Cursor::new(&preamble(3, 96), 1000)).unwrap();
        assert_eq!((p.version, p.flags, p.total_length), (3, 5, 96));
        let e = Preamble::read(Cursor::new(&preamble(2, 96), 1000)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::UnsupportedVersion(2));
        assert_eq!(e.offset(), Some(1008));
        let e = Preamble::read(Cursor::new(&preamble(3, 96)[..23], 1000)).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (&ErrorKind::Truncated, Some(1000)));
        assert!(Preamble::peek(&preamble(2, 0)).is_none());
        assert_eq!(
            Preamble::peek(&preamble(3, 0)).map(|p| p.total_length),
            Some(0)
        );
    }

    #[test]
    fn frame_headers_below_their_minimum_length_are_refused() {
        let head = |t: u16, len: u64| {
            let mut b = FRAME_MAGIC.to_vec();
            b.extend_from_slice(&t.to_be_bytes());
            b.extend_from_slice(&[0, 1, 0, 2]);
            b.extend_from_slice(&len.to_be_bytes());
            b
        };
        let h = FrameHeader::read(Cursor::new(&head(9, 36), 8)).unwrap();
        assert_eq!(
            (h.ftype, h.flags, h.total_length),
            (FrameType::DataObject, 2, 36)
        );
        let e = FrameHeader::read(Cursor::new(&head(9, 35), 8)).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (&ErrorKind::Framing, Some(16)));
        assert!(FrameHeader::peek(&head(4, 100)).is_none());
        assert!(FrameHeader::peek(&head(1, 28)).is_some());
        assert!(FrameHeader::peek(&head(1, 27)).is_none());
    }

    #[test]
    fn postambles_need_the_end_magic_and_a_matching_length() {
        let mut b = 40u64.to_be_bytes().to_vec();
        b.extend_from_slice(&96u64.to_be_bytes());
        b.extend_from_slice(END_MAGIC);
        let p = Postamble::read(Cursor::new(&b, 72)).unwrap();
        assert_eq!((p.first_footer_offset, p.total_length), (40, 96));
        assert!(p.check_length(96, 72).is_ok());
        assert_eq!(p.check_length(104, 72).unwrap_err().offset(), Some(80));
        b[23] ^= 1;
        assert_eq!(
            Postamble::read(Cursor::new(&b, 72)).unwrap_err().offset(),
            Some(88)
        );
        assert!(Postamble::peek(&b).is_none());
    }
}
