//! Frame headers, footers and the borrowed frame view. See `spec/format.md` §3.

use super::header::{frame_hash_slot, Cursor, DataFooter, FrameHeader};
use super::{
    frame_flags, FrameType, DATA_FRAME_FOOTER_LEN, FRAME_END, FRAME_HEADER_LEN, FRAME_MAGIC,
    FRAME_VERSION,
};
use crate::error::{Error, ErrorKind, Result};

/// One frame, borrowed from the input: built only by parsing, so its
/// length always covers its header and footer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    header: FrameHeader,
    offset: usize,
    bytes: &'a [u8],
    msg_base: u64,
}

impl<'a> Frame<'a> {
    /// Reads the frame at the cursor, which starts at the frame and holds at
    /// most the bytes the frame may span. `msg_base` is the absolute offset
    /// of its message.
    pub(crate) fn read(c: Cursor<'a>, msg_base: u64) -> Result<Self> {
        let at = c.abs(0);
        let header = FrameHeader::read(c)?;
        let (ftype, total) = (header.ftype, header.total_length);
        let avail = c.bytes().len() as u64;
        if total > avail {
            return Err(Error::framing(format!(
                "{ftype:?} frame total_length {total} exceeds the {avail} bytes left in the message"
            ))
            .at(at + 8));
        }
        // total <= avail, a slice length.
        let total = total as usize;
        let bytes = &c.bytes()[..total];
        FrameHeader::check_end(&bytes[total - 4..], at + total as u64 - 4)?;
        let offset = at
            .checked_sub(msg_base)
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| Error::framing("frame before its message").at(at))?;
        Ok(Frame {
            header,
            offset,
            bytes,
            msg_base,
        })
    }

    /// Frame type.
    pub fn ftype(&self) -> FrameType {
        self.header.ftype
    }

    /// Frame flags.
    pub fn flags(&self) -> u16 {
        self.header.flags
    }

    /// The decoded frame header.
    pub fn header(&self) -> FrameHeader {
        self.header
    }

    /// Offset of the frame start from the message start.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The whole frame (`total_length` bytes, padding excluded).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Absolute offset of the message start in the input.
    pub fn msg_base(&self) -> u64 {
        self.msg_base
    }

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
        // Parsing guarantees total_length >= header + footer.
        &self.bytes[FRAME_HEADER_LEN..self.bytes.len() - self.header.ftype.footer_len()]
    }

    /// Absolute offset of the body.
    pub fn body_abs_offset(&self) -> u64 {
        self.abs_offset() + FRAME_HEADER_LEN as u64
    }

    /// The value in the hash slot, meaningful only when [`Self::has_hash`].
    pub fn stored_hash(&self) -> u64 {
        frame_hash_slot(self.bytes)
    }

    /// True when the frame's HASH_PRESENT flag is set.
    pub fn has_hash(&self) -> bool {
        self.header.flags & frame_flags::HASH_PRESENT != 0
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
                    self.header.ftype
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
        let cbor_offset = DataFooter::of_frame(self.bytes).cbor_offset;
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
        if self.header.flags & frame_flags::CBOR_AFTER_PAYLOAD != 0 {
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
    let room = msg
        .get(pos..end.min(msg.len()))
        .ok_or_else(|| Error::truncated("frame header truncated").at(at))?;
    Frame::read(Cursor::new(room, at), msg_base)
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
