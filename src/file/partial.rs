//! Reading parts of one data frame: its envelope (header, footer and
//! descriptor) and, for `decode_range`, only the payload bytes the ranges
//! need. See `spec/remote.md` §4.
//!
//! The parts read are placed at their offsets in a zero-filled buffer of
//! the frame's length (allocated lazily by the system, so untouched pages
//! cost nothing), which then parses and decodes like a whole frame: the
//! decoders are the ones whole reads use, and they only ever look at the
//! bytes that were read (checked per stage below).

use std::ops::Range;

use bytes::Bytes;

use super::source::ByteSource;
use crate::decode::{DecodeOptions, Object, Verify};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::pipeline::range_plan::{decodes_ranges, plan_range};
use crate::wire::frame::Frame;
use crate::wire::header::Cursor;
use crate::wire::{FrameType, DATA_FRAME_FOOTER_LEN, FRAME_HEADER_LEN};

/// Bytes read from the end of a data frame for its descriptor and footer:
/// a descriptor longer than this (one with many stored codec parameters)
/// costs one more read.
pub(crate) const TAIL_WINDOW: u64 = 64 << 10;

/// One data frame with only some of its bytes read.
pub(crate) struct SparseFrame {
    buf: Vec<u8>,
    /// Absolute offset of the frame in the source.
    at: u64,
    /// Absolute offset of the frame's message.
    msg_base: u64,
}

impl SparseFrame {
    /// Reads the header and the tail of each data frame of `frames`
    /// (absolute offset and length, in the message at `msg_base`) with one
    /// `read_ranges` call, which a remote source coalesces into few
    /// requests; then the rest of a descriptor that a tail did not hold,
    /// one read each. `None` for a frame that keeps its descriptor before
    /// the payload (the parts cannot be told apart without reading on):
    /// the caller reads that frame whole.
    pub(crate) fn envelopes(
        src: &dyn ByteSource,
        frames: &[(u64, u64)],
        msg_base: u64,
        limits: &Limits,
    ) -> Result<Vec<Option<Self>>> {
        let mut ranges = Vec::with_capacity(frames.len() * 2);
        for &(at, len) in frames {
            if len > limits.max_message_len {
                return Err(Error::limit("max_message_len", len, limits.max_message_len).at(at));
            }
            let head = (FRAME_HEADER_LEN as u64).min(len);
            let tail_from = len.saturating_sub(TAIL_WINDOW).max(head);
            let end = at
                .checked_add(len)
                .ok_or_else(|| Error::invalid_argument("frame range overflows").at(at))?;
            ranges.push(at..at + head);
            ranges.push(at + tail_from..end);
        }
        let got = src.read_ranges(&ranges)?;
        let mut out = Vec::with_capacity(frames.len());
        for (k, &(at, len)) in frames.iter().enumerate() {
            let n = super::source::range_len(&(0..len))?;
            let mut me = SparseFrame {
                buf: crate::buffer::zeroed(n)?,
                at,
                msg_base,
            };
            for (r, b) in ranges[2 * k..2 * k + 2].iter().zip(&got[2 * k..2 * k + 2]) {
                check_len(r, b)?;
                let s = (r.start - at) as usize;
                me.buf[s..s + b.len()].copy_from_slice(b);
            }
            let tail_from = ranges[2 * k + 1].start - at;
            out.push(me.finish_envelope(src, tail_from)?);
        }
        Ok(out)
    }

    /// Checks the frame whose header and tail (from `tail_from`) are in
    /// place, and reads the rest of its descriptor if the tail did not
    /// hold it.
    fn finish_envelope(mut self, src: &dyn ByteSource, tail_from: u64) -> Result<Option<Self>> {
        let frame = self.frame()?;
        if frame.ftype() != FrameType::DataObject {
            return Err(Error::framing(format!(
                "{:?} frame where the index lists a data frame",
                frame.ftype()
            ))
            .at(self.at));
        }
        let flags = frame.flags();
        if flags & crate::wire::frame_flags::CBOR_AFTER_PAYLOAD == 0 {
            return Ok(None);
        }
        let footer = crate::wire::header::DataFooter::of_frame(&self.buf);
        let co = footer.cbor_offset;
        if co >= FRAME_HEADER_LEN as u64 && co < tail_from {
            self.fill(src, std::slice::from_ref(&(co..tail_from)))?;
        }
        Ok(Some(self))
    }

    /// Reads the tail of the data frame at `at` of `len` bytes, as an
    /// index lists it: its descriptor, footer and end magic, with one read
    /// of its last [`TAIL_WINDOW`] bytes (the whole frame when it is that
    /// short), and the rest of the descriptor with one more when the tail
    /// did not hold it. The frame header is not read unless the tail
    /// covers it: in its place stands the header the index promises (a
    /// data frame of `len` bytes), with the descriptor after the payload,
    /// as the footer's `cbor_offset` shows. The end magic at the listed
    /// end and the footer are checked; a `cbor_offset` that leaves no room
    /// for a payload before the descriptor gives `None`, and the caller
    /// reads the whole frame (`spec/remote.md` §4).
    pub(crate) fn tail(
        src: &dyn ByteSource,
        at: u64,
        len: u64,
        msg_base: u64,
        limits: &Limits,
    ) -> Result<Option<Self>> {
        let min = (FRAME_HEADER_LEN + DATA_FRAME_FOOTER_LEN) as u64;
        if len < min {
            return Err(Error::framing(format!(
                "a {len}-byte data frame is shorter than its header and footer"
            ))
            .at(at));
        }
        if len > limits.max_message_len {
            return Err(Error::limit("max_message_len", len, limits.max_message_len).at(at));
        }
        let n = super::source::range_len(&(0..len))?;
        let mut me = SparseFrame {
            buf: crate::buffer::zeroed(n)?,
            at,
            msg_base,
        };
        let mut tail_from = len.saturating_sub(TAIL_WINDOW);
        if tail_from <= FRAME_HEADER_LEN as u64 {
            tail_from = 0;
        }
        me.fill(src, std::slice::from_ref(&(tail_from..len)))?;
        if tail_from > 0 {
            let co = crate::wire::header::DataFooter::of_frame(&me.buf).cbor_offset;
            let end = len - DATA_FRAME_FOOTER_LEN as u64;
            if co > end {
                return Err(Error::framing(format!(
                    "data frame cbor_offset {co} outside [{FRAME_HEADER_LEN}, {end}]"
                ))
                .at(at + end));
            }
            if co <= FRAME_HEADER_LEN as u64 {
                return Ok(None);
            }
            let h = crate::wire::frame::header_bytes(
                FrameType::DataObject,
                crate::wire::frame_flags::CBOR_AFTER_PAYLOAD,
                len,
            );
            me.buf[..FRAME_HEADER_LEN].copy_from_slice(&h);
        }
        let frame = me.frame()?;
        if frame.ftype() != FrameType::DataObject {
            return Err(Error::framing(format!(
                "{:?} frame where the index lists a data frame",
                frame.ftype()
            ))
            .at(at));
        }
        if frame.flags() & crate::wire::frame_flags::CBOR_AFTER_PAYLOAD == 0 {
            return Ok(None);
        }
        let co = crate::wire::header::DataFooter::of_frame(&me.buf).cbor_offset;
        if co >= FRAME_HEADER_LEN as u64 && co < tail_from {
            me.fill(src, std::slice::from_ref(&(co..tail_from)))?;
        }
        Ok(Some(me))
    }

    /// Reads `ranges` (frame-relative) into place with one `read_ranges`
    /// call.
    pub(crate) fn fill(&mut self, src: &dyn ByteSource, ranges: &[Range<u64>]) -> Result<()> {
        let len = self.buf.len() as u64;
        let abs: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < r.end)
            .map(|r| {
                if r.end > len {
                    return Err(Error::invalid_argument("range outside the frame"));
                }
                Ok(self.at + r.start..self.at + r.end)
            })
            .collect::<Result<_>>()?;
        if abs.is_empty() {
            return Ok(());
        }
        let got = src.read_ranges(&abs)?;
        for (r, b) in abs.iter().zip(&got) {
            check_len(r, b)?;
            let s = (r.start - self.at) as usize;
            self.buf[s..s + b.len()].copy_from_slice(b);
        }
        Ok(())
    }

    /// The frame, parsed: header and end magic checked.
    pub(crate) fn frame(&self) -> Result<Frame<'_>> {
        Frame::read(Cursor::new(&self.buf, self.at), self.msg_base)
    }

    /// The object, with its descriptor parsed.
    pub(crate) fn object(&self, index: usize, limits: &Limits) -> Result<Object<'_>> {
        Object::from_frame(self.frame()?, index, limits)
    }

    /// Absolute offset of the frame.
    pub(crate) fn at(&self) -> u64 {
        self.at
    }
}

/// A range read must come back whole: a short or long body is an error,
/// never a misplaced value.
pub(crate) fn check_len(r: &Range<u64>, b: &Bytes) -> Result<()> {
    if b.len() as u64 != r.end - r.start {
        return Err(Error::truncated(format!(
            "{} bytes returned for a {}-byte range",
            b.len(),
            r.end - r.start
        ))
        .at(r.start));
    }
    Ok(())
}

/// Decodes element ranges of the data frame at `at` (absolute, `len`
/// bytes, in the message at `msg_base`) reading only the bytes the
/// ranges need when its pipeline allows; `None` when the whole frame is
/// needed. The frame's digest covers the whole body, so a partial read
/// checks the end magic at the listed length, the footer's descriptor
/// offset, the descriptor, and the check the plan carries (a codec's own
/// consistency check of the bytes read), not the digest; the frame header is read only when
/// the tail covers it ([`SparseFrame::tail`]).
pub(crate) fn decode_range_partial(
    src: &dyn ByteSource,
    frame: FrameAt<'_>,
    index: usize,
    ranges: &[(u64, u64)],
    opts: &DecodeOptions,
) -> Result<Option<Vec<Vec<u8>>>> {
    let FrameAt {
        at, len, msg_base, ..
    } = frame;
    let Some(mut sparse) = SparseFrame::tail(src, at, len, msg_base, &opts.limits)? else {
        return Ok(None);
    };
    frame.check_expected(&sparse, &opts.limits)?;
    let (plan, region_at) = {
        let obj = sparse.object(index, &opts.limits)?;
        let region_len = obj.payload_region().len() as u64;
        let planned = plan_range(
            obj.descriptor(),
            region_len,
            ranges,
            opts.restore_non_finite,
        )?;
        let Some(plan) = planned else {
            return refusal(&obj, ranges, opts);
        };
        (plan, obj.payload_offset() - sparse.at())
    };
    let frame_ranges: Vec<Range<u64>> = plan
        .ranges
        .iter()
        .map(|r| region_at + r.start..region_at + r.end)
        .collect();
    sparse.fill(src, &frame_ranges)?;
    let obj = sparse.object(index, &opts.limits)?;
    if !plan.holds(obj.payload_region()) {
        // The bytes read are inconsistent (a stored offset is wrong): the
        // range decoder would read outside them; read the whole frame.
        return Ok(None);
    }
    let mut o = opts.clone();
    o.verify = Verify::Off;
    obj.decode_range(ranges, &o).map(Some)
}

/// Where a data frame lies, as an index or a layout lists it, and what a
/// layout recorded of it.
#[derive(Clone, Copy)]
pub(crate) struct FrameAt<'e> {
    /// Absolute offset of the frame.
    pub at: u64,
    /// Its listed length.
    pub len: u64,
    /// Absolute offset of its message.
    pub msg_base: u64,
    /// The descriptor CBOR and stored digest a layout recorded, if any.
    pub expected: Option<(Option<&'e [u8]>, Option<u64>)>,
}

impl FrameAt<'_> {
    /// A frame read partially must carry the descriptor and the digest slot
    /// the layout recorded (`spec/remote.md` §6).
    fn check_expected(&self, sparse: &SparseFrame, limits: &Limits) -> Result<()> {
        let Some((descriptor, hash)) = self.expected else {
            return Ok(());
        };
        let frame = sparse.frame()?;
        let lie = |what: &str| {
            Error::framing(format!("the data frame's {what} differs from the layout's"))
                .at(frame.abs_offset())
        };
        if let Some(h) = hash {
            if crate::wire::header::DataFooter::of_frame(frame.bytes()).hash != h {
                return Err(lie("digest"));
            }
        }
        if let Some(d) = descriptor {
            if frame.split_data(limits)?.descriptor != d {
                return Err(lie("descriptor"));
            }
        }
        Ok(())
    }
}

/// For a pipeline that cannot decode ranges at all (a stage without range
/// decoding, or a bitmask object) the refusal, without
/// reading the payload; `None` (read the whole frame) otherwise.
fn refusal(
    obj: &Object<'_>,
    ranges: &[(u64, u64)],
    opts: &DecodeOptions,
) -> Result<Option<Vec<Vec<u8>>>> {
    if decodes_ranges(obj.descriptor()) {
        return Ok(None);
    }
    let mut o = opts.clone();
    o.verify = Verify::Off;
    // The range decoder refuses before it reads the payload; were it to
    // succeed on the unread bytes, its values would be discarded.
    match obj.decode_range(ranges, &o) {
        Err(e) => Err(e),
        Ok(_) => Ok(None),
    }
}
