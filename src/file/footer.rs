//! Listing a footer-indexed message from its end: the postamble, the
//! footer frames (index and metadata) and each data frame's descriptor and
//! footer, never a payload byte. See `spec/remote.md` §3 ("Footer-indexed
//! messages").

use std::ops::Range;

use bytes::Bytes;

use super::partial::check_len;
use super::source::ByteSource;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::wire::frame::Frame;
use crate::wire::header::{Cursor, FrameHeader, Postamble};
use crate::wire::locate::MessageIndex;
use crate::wire::scan::MessageSpan;
use crate::wire::tables::IndexTable;
use crate::wire::{
    align_up, FrameType, Phase, DATA_FRAME_FOOTER_LEN, FRAME_HEADER_LEN, MIN_MESSAGE_LEN,
    POSTAMBLE_LEN, PREAMBLE_LEN,
};

/// Bytes read before the first footer frame with the footer frames: the
/// last data frame's footer (20 bytes) and its padding (at most 7).
const FOOTER_SLACK: u64 = 32;

/// Bytes of the first footer-indexed message's end read at once, before
/// any message has told how long its end is: enough for the descriptor,
/// footer frames and postamble of a one-object message, so that it too
/// costs one request (`spec/remote.md` §3).
pub(crate) const FIRST_TAIL: u64 = 512;

/// The largest end window a previous message can make the next read at
/// once ([`FooterRead::tail`]).
pub(crate) const MAX_TAIL_HINT: u64 = 1 << 20;

/// What the end of a footer-indexed message tells about it.
pub(crate) struct FooterRead {
    /// Its footer index.
    pub index: MessageIndex,
    /// Its footer metadata frame: absolute offset and bytes.
    pub metadata: Option<(u64, Bytes)>,
    /// Each data frame's descriptor CBOR, hash slot and payload-region
    /// length.
    pub envelopes: Vec<TailEnvelope>,
    /// Bytes from the last data frame's descriptor (or the first footer
    /// frame) to the message end: what the next message's first read
    /// takes, so that messages alike cost one request each.
    pub tail: u64,
}

/// The descriptor and footer of one data frame.
pub(crate) struct TailEnvelope {
    /// The descriptor CBOR as stored.
    pub descriptor: Bytes,
    /// The footer's hash slot.
    pub hash: u64,
    /// Bytes of the payload region (payload and mask blobs).
    pub stored: u64,
}

/// Byte runs read so far from one message's source.
struct Pieces<'s> {
    src: &'s dyn ByteSource,
    got: Vec<(u64, Bytes)>,
}

impl<'s> Pieces<'s> {
    fn get(&self, r: &Range<u64>) -> Option<Bytes> {
        self.got.iter().find_map(|(at, b)| {
            let end = at + b.len() as u64;
            (r.start >= *at && r.end <= end && r.start <= r.end)
                .then(|| b.slice((r.start - at) as usize..(r.end - at) as usize))
        })
    }

    /// Reads those of `ranges` not held yet, with one `read_ranges` call.
    fn fetch(&mut self, ranges: &[Range<u64>]) -> Result<()> {
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| self.get(r).is_none())
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let got = self.src.read_ranges(&missing)?;
        for (r, b) in missing.into_iter().zip(got) {
            check_len(&r, &b)?;
            self.got.push((r.start, b));
        }
        Ok(())
    }

    fn need(&mut self, r: Range<u64>) -> Result<Bytes> {
        self.fetch(std::slice::from_ref(&r))?;
        Ok(self.get(&r).expect("fetched above"))
    }
}

/// Reads what listing the message at `span` needs from its end: the first
/// read takes its last `hint` bytes ([`FIRST_TAIL`] when 0; at least the
/// postamble); the footer
/// frames, then the data frames' footers, then their descriptors are read
/// where that did not hold them, one `read_ranges` call each. `None` when
/// the message has no footer index to be read this way (no footer frames,
/// an index that does not fit the message, a descriptor before its
/// payload): the caller reads the message as before.
pub(crate) fn read_footer(
    src: &dyn ByteSource,
    span: MessageSpan,
    hint: u64,
    limits: &Limits,
) -> Result<Option<FooterRead>> {
    if span.len < MIN_MESSAGE_LEN as u64 || span.len > limits.max_message_len {
        return Ok(None);
    }
    let base = span.offset;
    let end = base + span.len;
    let frames_end = span.len - POSTAMBLE_LEN as u64;
    let mut p = Pieces {
        src,
        got: Vec::new(),
    };
    let hint = if hint == 0 { FIRST_TAIL } else { hint };
    let first = hint.clamp(POSTAMBLE_LEN as u64, span.len - PREAMBLE_LEN as u64);
    p.need(end - first..end)?;
    let post = p.need(base + frames_end..end)?;
    let ff = Postamble::read(Cursor::new(&post, base + frames_end))?.first_footer_offset;
    if ff < PREAMBLE_LEN as u64 || ff >= frames_end {
        return Ok(None);
    }
    let from = (base + ff)
        .saturating_sub(FOOTER_SLACK)
        .max(base + PREAMBLE_LEN as u64);
    let foot = p.need(from..end)?;
    let Some((meta, index_frame)) = footer_frames(&foot, from, base, ff, frames_end, limits)?
    else {
        return Ok(None);
    };
    let f = Frame::read(Cursor::new(&index_frame.1, index_frame.0), base)?;
    let table = IndexTable::from_cbor(f.cbor(), f.body_abs_offset(), limits)?;
    let index = MessageIndex {
        offsets: table.offsets,
        lengths: table.lengths,
        index_frame_at: f.abs_offset(),
        frames_end,
    };
    let min = (FRAME_HEADER_LEN + DATA_FRAME_FOOTER_LEN) as u64;
    let mut frames = Vec::with_capacity(index.len());
    for k in 0..index.len() {
        let e = index.entry(k)?;
        if e.len < min || e.offset + e.len > ff {
            return Ok(None);
        }
        frames.push((base + e.offset, e.len));
    }
    let footers: Vec<Range<u64>> = frames
        .iter()
        .map(|&(at, len)| at + len - DATA_FRAME_FOOTER_LEN as u64..at + len)
        .collect();
    p.fetch(&footers)?;
    let mut descs = Vec::with_capacity(frames.len());
    for (&(at, len), r) in frames.iter().zip(&footers) {
        let b = p.get(r).expect("fetched above");
        let co = u64::from_be_bytes(b[0..8].try_into().expect("8 bytes"));
        let hash = u64::from_be_bytes(b[8..16].try_into().expect("8 bytes"));
        FrameHeader::check_end(&b[16..20], r.start + 16)?;
        let stop = len - DATA_FRAME_FOOTER_LEN as u64;
        if co > stop {
            return Err(Error::framing(format!(
                "data frame cbor_offset {co} outside [{FRAME_HEADER_LEN}, {stop}]"
            ))
            .at(r.start));
        }
        if co <= FRAME_HEADER_LEN as u64 {
            // The descriptor may precede the payload: not told apart here.
            return Ok(None);
        }
        descs.push((at + co..at + stop, hash, co - FRAME_HEADER_LEN as u64));
    }
    let ranges: Vec<Range<u64>> = descs.iter().map(|d| d.0.clone()).collect();
    p.fetch(&ranges)?;
    let tail = end - descs.last().map_or(base + ff, |d| d.0.start.min(base + ff));
    let envelopes = descs
        .into_iter()
        .map(|(r, hash, stored)| TailEnvelope {
            descriptor: p.get(&r).expect("fetched above"),
            hash,
            stored,
        })
        .collect();
    Ok(Some(FooterRead {
        index,
        metadata: meta,
        envelopes,
        tail: tail.min(MAX_TAIL_HINT),
    }))
}

/// An absolute offset and the bytes of one frame.
type FrameBytes = (u64, Bytes);

/// Walks the footer frames held in `foot` (read from absolute `from`) from
/// message-relative `ff` to `frames_end`: the metadata frame, if any, and
/// the index frame; `None` when there is no index frame or the frames do
/// not end at the postamble.
fn footer_frames(
    foot: &Bytes,
    from: u64,
    base: u64,
    ff: u64,
    frames_end: u64,
    limits: &Limits,
) -> Result<Option<(Option<FrameBytes>, FrameBytes)>> {
    let (mut meta, mut index) = (None, None);
    let mut rel = ff;
    for _ in 0..limits.max_frames {
        if rel + FRAME_HEADER_LEN as u64 > frames_end {
            break;
        }
        let i = (base + rel - from) as usize;
        let h = &foot[i..i + FRAME_HEADER_LEN];
        if h[..2] != crate::wire::FRAME_MAGIC[..] {
            break;
        }
        let h = FrameHeader::read(Cursor::new(h, base + rel))?;
        if h.ftype.phase() != Phase::Footer {
            return Ok(None);
        }
        let room = frames_end - rel;
        if h.total_length > room {
            return Err(Error::framing(format!(
                "{:?} frame total_length {} exceeds the {room} bytes left in the message",
                h.ftype, h.total_length
            ))
            .at(base + rel + 8));
        }
        let bytes = || (base + rel, foot.slice(i..i + h.total_length as usize));
        match h.ftype {
            FrameType::FooterMetadata if meta.is_none() => meta = Some(bytes()),
            FrameType::FooterIndex if index.is_none() => index = Some(bytes()),
            _ => {}
        }
        rel = align_up(rel + h.total_length).min(frames_end);
    }
    if rel != frames_end {
        return Ok(None);
    }
    Ok(index.map(|ix| (meta, ix)))
}
