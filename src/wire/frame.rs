//! Frame headers, footers and the borrowed frame view. See `spec/format.md` §3.

use super::{
    be_u16, be_u64, frame_flags, FrameType, DATA_FRAME_FOOTER_LEN, FRAME_END, FRAME_HEADER_LEN,
    FRAME_MAGIC, FRAME_VERSION,
};
use crate::error::{Error, ErrorKind, Result};

/// One frame, borrowed from the message bytes.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Frame type.
    pub ftype: FrameType,
    /// Frame flags.
    pub flags: u16,
    /// Offset of the frame start from the message start.
    pub offset: usize,
    /// The whole frame (`total_length` bytes, padding excluded).
    pub bytes: &'a [u8],
    /// Absolute offset of the message start in the input.
    pub msg_base: u64,
}

impl<'a> Frame<'a> {
    /// Absolute offset of the frame start in the input.
    pub fn abs_offset(&self) -> u64 {
        self.msg_base + self.offset as u64
    }

    /// `total_length` of the frame.
    pub fn total_len(&self) -> usize {
        self.bytes.len()
    }

    /// The hashed bytes: everything between header and footer.
    pub fn body(&self) -> &'a [u8] {
        &self.bytes[FRAME_HEADER_LEN..self.bytes.len() - self.ftype.footer_len()]
    }

    /// Absolute offset of the body.
    pub fn body_abs_offset(&self) -> u64 {
        self.abs_offset() + FRAME_HEADER_LEN as u64
    }

    /// The value in the hash slot, meaningful only when [`Self::has_hash`].
    pub fn stored_hash(&self) -> u64 {
        let n = self.bytes.len();
        be_u64(self.bytes, n - 12).unwrap_or(0)
    }

    /// True when the frame's HASH_PRESENT flag is set.
    pub fn has_hash(&self) -> bool {
        self.flags & frame_flags::HASH_PRESENT != 0
    }

    /// Recomputes the body digest and compares it with the slot.
    pub fn verify_hash(&self) -> Result<()> {
        if !self.has_hash() {
            return Err(
                Error::new(ErrorKind::MissingHash, "frame carries no hash").at(self.abs_offset())
            );
        }
        let computed = crate::hash::xxh3(self.body());
        let stored = self.stored_hash();
        if computed != stored {
            return Err(Error::new(
                ErrorKind::HashMismatch { stored, computed },
                format!(
                    "{:?} frame hash mismatch: stored {stored:016x}, computed {computed:016x}",
                    self.ftype
                ),
            )
            .at(self.abs_offset()));
        }
        Ok(())
    }

    /// The CBOR body of a non-data frame.
    pub fn cbor(&self) -> &'a [u8] {
        self.body()
    }

    /// Splits a data frame into (descriptor CBOR, payload region, region offset in frame).
    /// CBOR-before frames need the descriptor's length, found by parsing it.
    pub fn split_data(&self, limits: &crate::Limits) -> Result<DataParts<'a>> {
        let n = self.bytes.len();
        let cbor_offset = be_u64(self.bytes, n - DATA_FRAME_FOOTER_LEN).unwrap_or(0);
        let end = n - DATA_FRAME_FOOTER_LEN;
        let bad = || {
            Error::framing(format!(
                "data frame cbor_offset {cbor_offset} outside [{FRAME_HEADER_LEN}, {end}]"
            ))
            .at(self.abs_offset() + (n - DATA_FRAME_FOOTER_LEN) as u64)
        };
        if cbor_offset < FRAME_HEADER_LEN as u64 || cbor_offset > end as u64 {
            return Err(bad());
        }
        let co = cbor_offset as usize;
        if self.flags & frame_flags::CBOR_AFTER_PAYLOAD != 0 {
            Ok(DataParts {
                descriptor: &self.bytes[co..end],
                region: &self.bytes[FRAME_HEADER_LEN..co],
                region_offset: FRAME_HEADER_LEN,
            })
        } else {
            let span = &self.bytes[co..end];
            let (_, used) =
                crate::cbor::parse_one(span, self.abs_offset() + co as u64, limits.cbor())?;
            Ok(DataParts {
                descriptor: &span[..used],
                region: &span[used..],
                region_offset: co + used,
            })
        }
    }
}

/// The parts of a data-object frame.
#[derive(Debug, Clone, Copy)]
pub struct DataParts<'a> {
    /// Descriptor CBOR bytes.
    pub descriptor: &'a [u8],
    /// Payload region: encoded payload followed by mask blobs.
    pub region: &'a [u8],
    /// Offset of the region from the frame start.
    pub region_offset: usize,
}

/// Parses the frame starting at `pos` of `msg`; the frame must end at or before `end`.
pub fn parse_frame(msg: &[u8], pos: usize, end: usize, msg_base: u64) -> Result<Frame<'_>> {
    let at = msg_base + pos as u64;
    let head = msg
        .get(pos..pos.saturating_add(FRAME_HEADER_LEN))
        .filter(|_| pos.saturating_add(FRAME_HEADER_LEN) <= end)
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
    let flags = be_u16(head, 6).unwrap_or(0);
    let total = be_u64(head, 8).unwrap_or(0);
    if total < ftype.min_len() as u64 {
        return Err(Error::framing(format!(
            "{ftype:?} frame total_length {total} below minimum {}",
            ftype.min_len()
        ))
        .at(at + 8));
    }
    let avail = (end - pos) as u64;
    if total > avail {
        return Err(Error::framing(format!(
            "{ftype:?} frame total_length {total} exceeds the {avail} bytes left in the message"
        ))
        .at(at + 8));
    }
    let total = total as usize;
    let bytes = &msg[pos..pos + total];
    if &bytes[total - 4..] != FRAME_END {
        return Err(
            Error::new(ErrorKind::BadMagic, "expected frame end magic \"ENDF\"")
                .at(at + total as u64 - 4),
        );
    }
    Ok(Frame {
        ftype,
        flags,
        offset: pos,
        bytes,
        msg_base,
    })
}

/// The 16-byte frame header.
pub fn header_bytes(ftype: FrameType, flags: u16, total_len: u64) -> [u8; FRAME_HEADER_LEN] {
    let mut h = [0u8; FRAME_HEADER_LEN];
    h[0..2].copy_from_slice(FRAME_MAGIC);
    h[2..4].copy_from_slice(&ftype.to_u16().to_be_bytes());
    h[4..6].copy_from_slice(&FRAME_VERSION.to_be_bytes());
    h[6..8].copy_from_slice(&flags.to_be_bytes());
    h[8..16].copy_from_slice(&total_len.to_be_bytes());
    h
}

/// Appends a complete non-data frame (header, CBOR body, footer) to `out`,
/// without padding. Returns the frame's total length.
pub fn write_cbor_frame(out: &mut Vec<u8>, ftype: FrameType, cbor: &[u8], hashing: bool) -> u64 {
    let total = (FRAME_HEADER_LEN + cbor.len() + super::FRAME_FOOTER_LEN) as u64;
    let flags = if hashing {
        frame_flags::HASH_PRESENT
    } else {
        0
    };
    out.extend_from_slice(&header_bytes(ftype, flags, total));
    out.extend_from_slice(cbor);
    let hash = if hashing { crate::hash::xxh3(cbor) } else { 0 };
    out.extend_from_slice(&hash.to_be_bytes());
    out.extend_from_slice(FRAME_END);
    total
}

/// The 20-byte data frame footer.
pub fn data_footer_bytes(cbor_offset: u64, hash: u64) -> [u8; DATA_FRAME_FOOTER_LEN] {
    let mut f = [0u8; DATA_FRAME_FOOTER_LEN];
    f[0..8].copy_from_slice(&cbor_offset.to_be_bytes());
    f[8..16].copy_from_slice(&hash.to_be_bytes());
    f[16..20].copy_from_slice(FRAME_END);
    f
}

/// Zero bytes needed after a frame ending at message-relative `pos`.
pub fn padding_after(pos: u64) -> usize {
    (super::align_up(pos) - pos) as usize
}
