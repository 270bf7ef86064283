//! Finding one data frame of a message through its index, reading only
//! the preamble, the frame headers before the index, the index frame, and
//! (by the caller) the data frame itself, from memory or from any source
//! of the file layer that implements [`ReadRange`]. See `spec/files.md` §7.

use std::borrow::Cow;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::wire::frame::Frame;
use crate::wire::header::{Cursor, FrameHeader, Postamble, Preamble};
use crate::wire::tables::IndexTable;
use crate::wire::{
    align_up, FrameType, Phase, FRAME_HEADER_LEN, MIN_MESSAGE_LEN, POSTAMBLE_LEN, PREAMBLE_LEN,
};

/// Bytes of a message's start read at once to find its header index (a
/// byte source's `SourceHints::head_window` by default): its preamble
/// and, usually, every header frame (`spec/remote.md` §3).
pub const DEFAULT_HEAD_WINDOW: u64 = 2048;

/// One message in a source: where it starts in the source, and the absolute
/// offset errors report for its first byte.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageAt {
    /// Offset of the message in the source.
    pub at: u64,
    /// Absolute offset of the message, for error reporting.
    pub base: u64,
    /// Bytes of the source from `at` to its end, as last measured: no
    /// read goes beyond, and the source is not asked for its length again.
    pub avail: u64,
}

impl MessageAt {
    /// The message at `span` of a source of `size` bytes whose offsets are
    /// absolute.
    pub(crate) fn of(span: crate::wire::scan::MessageSpan, size: u64) -> Self {
        MessageAt {
            at: span.offset,
            base: span.offset,
            avail: size.saturating_sub(span.offset),
        }
    }
}

/// Bytes read from a source: borrowed when it is in memory.
pub(crate) type Chunk<'s> = Cow<'s, [u8]>;

/// What the locator reads a message through: memory here, any byte source
/// of the file layer there, which keeps this layer below the file layer.
pub(crate) trait ReadRange {
    /// The bytes of `r`, borrowed when they are in memory; an error when
    /// the range is not wholly available.
    fn read_range(&self, r: Range<u64>) -> Result<Chunk<'_>>;
}

impl ReadRange for [u8] {
    fn read_range(&self, r: Range<u64>) -> Result<Chunk<'_>> {
        usize::try_from(r.start)
            .ok()
            .zip(usize::try_from(r.end).ok())
            .and_then(|(a, b)| self.get(a..b))
            .map(Cow::Borrowed)
            .ok_or_else(|| {
                Error::truncated(format!(
                    "{} bytes at {} lie beyond the {} bytes of the source",
                    r.end.saturating_sub(r.start),
                    r.start,
                    self.len()
                ))
                .at(r.start)
            })
    }
}

fn read<R: ReadRange + ?Sized>(src: &R, r: Range<u64>) -> Result<Chunk<'_>> {
    src.read_range(r)
}

/// Reads frame headers of one message, one small read each, reusing a
/// window over the message start when the header lies inside it.
struct FrameWalker<'s, R: ?Sized> {
    src: &'s R,
    msg: MessageAt,
    head: Chunk<'s>,
    /// Message-relative end of the frame area (start of the postamble).
    frames_end: u64,
}

impl<'s, R: ReadRange + ?Sized> FrameWalker<'s, R> {
    /// Bytes `[rel, rel + len)` of the message (message-relative).
    fn bytes(&self, rel: u64, len: u64) -> Result<Chunk<'s>> {
        let end = rel
            .checked_add(len)
            .filter(|&e| e <= self.frames_end + POSTAMBLE_LEN as u64);
        let Some(end) = end else {
            return Err(
                Error::truncated("read past the end of the message").at(self.msg.base + rel)
            );
        };
        if let Some(b) = usize::try_from(rel)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(a, b)| self.head.get(a..b))
        {
            return Ok(match &self.head {
                Cow::Borrowed(h) => Cow::Borrowed(&h[rel as usize..end as usize]),
                Cow::Owned(_) => Cow::Owned(b.to_vec()),
            });
        }
        read(self.src, self.msg.at + rel..self.msg.at + end)
    }

    /// The frame header at message-relative `rel`, or `None` when no frame
    /// starts there (the frame area ends).
    fn header_at(&self, rel: u64) -> Result<Option<FrameHeader>> {
        if rel.saturating_add(FRAME_HEADER_LEN as u64) > self.frames_end {
            return Ok(None);
        }
        let b = self.bytes(rel, FRAME_HEADER_LEN as u64)?;
        if b[0..2] != crate::wire::FRAME_MAGIC[..] {
            return Ok(None);
        }
        FrameHeader::read(Cursor::new(&b, self.msg.base + rel)).map(Some)
    }

    /// The first frame of type `want` in the run of frames of phase `phase`
    /// starting at `rel`; only the frame headers of the others are read.
    fn find(
        &self,
        mut rel: u64,
        phase: Phase,
        want: FrameType,
        limits: &Limits,
    ) -> Result<Option<(u64, Chunk<'s>)>> {
        for _ in 0..limits.max_frames {
            let Some(h) = self.header_at(rel)? else {
                return Ok(None);
            };
            if h.ftype.phase() != phase {
                return Ok(None);
            }
            let room = self.frames_end - rel;
            if h.total_length > room {
                return Err(Error::framing(format!(
                    "{:?} frame total_length {} exceeds the {room} bytes left in the message",
                    h.ftype, h.total_length
                ))
                .at(self.msg.base + rel + 8));
            }
            if h.ftype == want {
                return Ok(Some((rel, self.bytes(rel, h.total_length)?)));
            }
            rel = align_up(rel + h.total_length);
        }
        Ok(None)
    }
}

/// A data frame listed by an index entry.
#[derive(Debug, Clone)]
pub(crate) struct IndexedFrame {
    /// Offset of the frame from the message start.
    pub offset: u64,
    /// The listed frame length.
    pub len: u64,
    index: usize,
    index_frame_at: u64,
}

impl IndexedFrame {
    /// Parses the frame from `bytes` (exactly the listed range, read from
    /// the message at absolute offset `base`) and checks that it is what
    /// the entry promised: a data frame of the listed length.
    pub(crate) fn frame<'a>(&self, bytes: &'a [u8], base: u64) -> Result<Frame<'a>> {
        let off = self.offset;
        let f = Frame::read(Cursor::new(bytes, base + off), base).map_err(|_| self.bad())?;
        if f.ftype() != FrameType::DataObject || f.total_len() as u64 != self.len {
            return Err(self.bad());
        }
        Ok(f)
    }

    fn bad(&self) -> Error {
        Error::framing(format!(
            "index entry {} ({}, {}) does not point at a data frame",
            self.index, self.offset, self.len
        ))
        .at(self.index_frame_at)
        .in_object(self.index)
    }
}

/// The header or footer index of one message: where each of its data
/// frames lies, checked against the message's frame area.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageIndex {
    /// Message-relative offset of each data frame.
    pub offsets: Vec<u64>,
    /// `total_length` of each data frame.
    pub lengths: Vec<u64>,
    /// Absolute offset of the index frame, for error reporting.
    pub index_frame_at: u64,
    /// Message-relative end of the frame area (start of the postamble).
    pub frames_end: u64,
}

impl MessageIndex {
    /// Number of data frames listed.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len()
    }

    /// The entry of data frame `index`.
    pub(crate) fn entry(&self, index: usize) -> Result<IndexedFrame> {
        let n = self.offsets.len();
        if index >= n {
            return Err(Error::invalid_argument(format!(
                "object index {index} out of range (the message has {n})"
            )));
        }
        let (off, flen) = (self.offsets[index], self.lengths[index]);
        let entry = IndexedFrame {
            offset: off,
            len: flen,
            index,
            index_frame_at: self.index_frame_at,
        };
        let end = self.frames_end;
        if off < PREAMBLE_LEN as u64 || off >= end || flen > end - off {
            return Err(entry.bad());
        }
        Ok(entry)
    }
}

/// Where data frame `index` lies in its message, found through the header
/// index, else the footer index (reached through the postamble's
/// first-footer offset); `None` when the message has neither, or declares
/// no length (a streaming message not back-filled), and a full parse is
/// needed.
pub(crate) fn locate_data_frame<R: ReadRange + ?Sized>(
    src: &R,
    msg: MessageAt,
    index: usize,
    limits: &Limits,
) -> Result<Option<IndexedFrame>> {
    locate_index(src, msg, None, DEFAULT_HEAD_WINDOW, limits)?
        .map(|ix| ix.entry(index))
        .transpose()
}

/// The index of the message at `msg`: its header index, else its footer
/// index; `None` as for [`locate_data_frame`], except that a streaming
/// message whose length `known_len` is known (delimited by its frames
/// when the file was indexed) is looked up like any other. The first read
/// takes `window` bytes of the message's start (at least its preamble);
/// frames beyond them are read one by one. Each entry is checked against
/// the message's frame area when it is taken.
pub(crate) fn locate_index<R: ReadRange + ?Sized>(
    src: &R,
    msg: MessageAt,
    known_len: Option<u64>,
    window: u64,
    limits: &Limits,
) -> Result<Option<MessageIndex>> {
    let avail = msg.avail;
    let window = window.max(PREAMBLE_LEN as u64);
    let head = read(src, msg.at..msg.at + avail.min(window))?;
    let pre = Preamble::read(Cursor::new(&head, msg.base))?;
    // A streaming message's end is found only by walking its frames.
    let len = match (pre.total_length, known_len) {
        (0, None) => return Ok(None),
        (0, Some(k)) => k,
        (t, _) => t,
    };
    if len < MIN_MESSAGE_LEN as u64 || len > avail || len > limits.max_message_len {
        return Ok(None);
    }
    let w = FrameWalker {
        src,
        msg,
        head,
        frames_end: len - POSTAMBLE_LEN as u64,
    };
    let mut found = w.find(
        PREAMBLE_LEN as u64,
        Phase::Header,
        FrameType::HeaderIndex,
        limits,
    )?;
    if found.is_none() {
        let post = w.bytes(w.frames_end, POSTAMBLE_LEN as u64)?;
        let p = Postamble::read(Cursor::new(&post, msg.base + w.frames_end))?;
        let ff = p.first_footer_offset;
        if ff >= PREAMBLE_LEN as u64 && ff < w.frames_end {
            // The first-footer offset is advisory: where it leads nowhere
            // valid, the message is walked instead.
            found = w
                .find(ff, Phase::Footer, FrameType::FooterIndex, limits)
                .unwrap_or(None);
        }
    }
    let Some((rel, bytes)) = found else {
        return Ok(None);
    };
    let f = Frame::read(Cursor::new(&bytes, msg.base + rel), msg.base)?;
    let table = IndexTable::from_cbor(f.cbor(), f.body_abs_offset(), limits)?;
    let ix = MessageIndex {
        offsets: table.offsets,
        lengths: table.lengths,
        index_frame_at: f.abs_offset(),
        frames_end: w.frames_end,
    };
    Ok(Some(ix))
}

/// The header metadata frame of a message, and where its header frames
/// end.
pub(crate) struct HeaderMetadata<'s> {
    /// Offset of the metadata frame from the message start.
    pub rel: u64,
    /// The frame's bytes.
    pub bytes: Chunk<'s>,
    /// Message-relative offset of the first frame after the header frames
    /// (or of the postamble).
    pub header_end: u64,
    /// The preamble's flags (`format.md`: they announce every kind of
    /// frame the message holds).
    pub flags: u16,
}

/// Walks the header frames of the message at `msg`, of `len` bytes,
/// reading its first `window` bytes at once and frame headers beyond them
/// one by one: its header metadata frame (`None` when it has none) and
/// where the header frames end.
pub(crate) fn header_metadata<'s, R: ReadRange + ?Sized>(
    src: &'s R,
    msg: MessageAt,
    len: u64,
    window: u64,
    limits: &Limits,
) -> Result<Option<HeaderMetadata<'s>>> {
    if len < MIN_MESSAGE_LEN as u64 || len > msg.avail {
        return Ok(None);
    }
    let window = window.max(PREAMBLE_LEN as u64).min(len);
    let head = read(src, msg.at..msg.at + window)?;
    let flags = Preamble::read(Cursor::new(&head, msg.base))?.flags;
    let w = FrameWalker {
        src,
        msg,
        head,
        frames_end: len - POSTAMBLE_LEN as u64,
    };
    let mut rel = PREAMBLE_LEN as u64;
    let mut found = None;
    for _ in 0..limits.max_frames {
        let h = match w.header_at(rel)? {
            Some(h) if h.ftype.phase() == Phase::Header => h,
            _ => {
                return Ok(found.map(|(r, bytes)| HeaderMetadata {
                    rel: r,
                    bytes,
                    header_end: rel,
                    flags,
                }))
            }
        };
        let room = w.frames_end - rel;
        if h.total_length > room {
            return Err(Error::framing(format!(
                "{:?} frame total_length {} exceeds the {room} bytes left in the message",
                h.ftype, h.total_length
            ))
            .at(msg.base + rel + 8));
        }
        if h.ftype == FrameType::HeaderMetadata && found.is_none() {
            found = Some((rel, w.bytes(rel, h.total_length)?));
        }
        rel = align_up(rel + h.total_length);
    }
    Ok(None)
}
