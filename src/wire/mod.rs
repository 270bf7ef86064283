//! Byte layout of Tensogram v3 messages: constants, frames, messages, scanning.
//! See `spec/format.md` §2–§3.

pub(crate) mod frame;
pub(crate) mod header;
pub(crate) mod layout;
pub(crate) mod locate;
pub(crate) mod scan;
pub(crate) mod tables;

pub use frame::{DataParts, Frame};

/// Message start magic.
pub const MAGIC: &[u8; 8] = b"TENSOGRM";
/// Message end magic (last 8 bytes of the postamble).
pub const END_MAGIC: &[u8; 8] = b"39277777";
/// Frame start magic.
pub const FRAME_MAGIC: &[u8; 2] = b"FR";
/// Frame end magic.
pub const FRAME_END: &[u8; 4] = b"ENDF";
/// The only wire version tgm reads and writes.
pub const WIRE_VERSION: u16 = 3;
/// Version written in every frame header.
pub const FRAME_VERSION: u16 = 1;
/// Preamble length.
pub const PREAMBLE_LEN: usize = 24;
/// Postamble length.
pub const POSTAMBLE_LEN: usize = 24;
/// Smallest possible message (preamble + postamble).
pub const MIN_MESSAGE_LEN: usize = PREAMBLE_LEN + POSTAMBLE_LEN;
/// Frame header length.
pub const FRAME_HEADER_LEN: usize = 16;
/// Footer length of every frame type but 9: hash + `ENDF`.
pub const FRAME_FOOTER_LEN: usize = 12;
/// Footer length of data-object frames: cbor_offset + hash + `ENDF`.
pub const DATA_FRAME_FOOTER_LEN: usize = 20;
/// Alignment of every frame start, relative to the message start.
pub const ALIGN: usize = 8;

/// Message flags (preamble bits). Advisory: parsing never depends on them.
pub mod message_flags {
    /// A header metadata frame is present.
    pub const HEADER_METADATA: u16 = 1 << 0;
    /// A footer metadata frame is present.
    pub const FOOTER_METADATA: u16 = 1 << 1;
    /// A header index frame is present.
    pub const HEADER_INDEX: u16 = 1 << 2;
    /// A footer index frame is present.
    pub const FOOTER_INDEX: u16 = 1 << 3;
    /// A header hash frame is present.
    pub const HEADER_HASHES: u16 = 1 << 4;
    /// A footer hash frame is present.
    pub const FOOTER_HASHES: u16 = 1 << 5;
    /// Preceder metadata frames may be present.
    pub const PRECEDER_METADATA: u16 = 1 << 6;
    /// The encoder hashed every frame.
    pub const HASHES_PRESENT: u16 = 1 << 7;
}

/// Frame flags (frame header bits).
pub mod frame_flags {
    /// Type 9 only: the descriptor CBOR follows the payload region.
    pub const CBOR_AFTER_PAYLOAD: u16 = 1 << 0;
    /// The footer's hash slot holds the xxh3-64 of the frame body.
    pub const HASH_PRESENT: u16 = 1 << 1;
}

/// The frame types of wire version 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    /// 1: message metadata before the objects.
    HeaderMetadata,
    /// 2: object offsets and lengths before the objects.
    HeaderIndex,
    /// 3: object digests before the objects.
    HeaderHash,
    /// 5: object digests after the objects.
    FooterHash,
    /// 6: object offsets and lengths after the objects.
    FooterIndex,
    /// 7: message metadata after the objects.
    FooterMetadata,
    /// 8: per-object metadata directly before one data frame.
    PrecederMetadata,
    /// 9: one data object (payload, masks, descriptor).
    DataObject,
}

/// Where in a message a frame type may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Before any data object.
    Header,
    /// Data objects and their preceders.
    Body,
    /// After every data object.
    Footer,
}

impl FrameType {
    /// Decodes a wire type number; 4 (retired) and unknown numbers give `None`.
    pub fn from_u16(v: u16) -> Option<FrameType> {
        Some(match v {
            1 => FrameType::HeaderMetadata,
            2 => FrameType::HeaderIndex,
            3 => FrameType::HeaderHash,
            5 => FrameType::FooterHash,
            6 => FrameType::FooterIndex,
            7 => FrameType::FooterMetadata,
            8 => FrameType::PrecederMetadata,
            9 => FrameType::DataObject,
            _ => return None,
        })
    }

    /// The wire type number.
    pub fn to_u16(self) -> u16 {
        match self {
            FrameType::HeaderMetadata => 1,
            FrameType::HeaderIndex => 2,
            FrameType::HeaderHash => 3,
            FrameType::FooterHash => 5,
            FrameType::FooterIndex => 6,
            FrameType::FooterMetadata => 7,
            FrameType::PrecederMetadata => 8,
            FrameType::DataObject => 9,
        }
    }

    /// The phase this frame type belongs to.
    pub fn phase(self) -> Phase {
        match self {
            FrameType::HeaderMetadata | FrameType::HeaderIndex | FrameType::HeaderHash => {
                Phase::Header
            }
            FrameType::PrecederMetadata | FrameType::DataObject => Phase::Body,
            FrameType::FooterHash | FrameType::FooterIndex | FrameType::FooterMetadata => {
                Phase::Footer
            }
        }
    }

    /// Footer length of this frame type.
    pub fn footer_len(self) -> usize {
        if self == FrameType::DataObject {
            DATA_FRAME_FOOTER_LEN
        } else {
            FRAME_FOOTER_LEN
        }
    }

    /// Smallest legal `total_length`.
    pub fn min_len(self) -> usize {
        FRAME_HEADER_LEN + self.footer_len()
    }
}

/// Rounds `n` up to the frame alignment.
pub const fn align_up(n: u64) -> u64 {
    (n + (ALIGN as u64 - 1)) & !(ALIGN as u64 - 1)
}

/// Reads a big-endian u16 at `pos`; `None` when out of range.
pub(crate) fn be_u16(b: &[u8], pos: usize) -> Option<u16> {
    let s = b.get(pos..pos.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// Reads a big-endian u64 at `pos`; `None` when out of range.
pub(crate) fn be_u64(b: &[u8], pos: usize) -> Option<u64> {
    let s = b.get(pos..pos.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_be_bytes(a))
}
