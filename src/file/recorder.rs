//! Building a file's catalogue from its bytes as they are written, so a
//! writer that cannot read back what it wrote (a streamed upload, a pipe)
//! still ends with one (`spec/files.md` §9.4).
//!
//! The recorder walks the messages frame by frame and keeps only what a
//! catalogue record is made of: preambles, postambles, every frame but a
//! data frame whole, and of a data frame its first [`HEAD_KEPT`] and last
//! [`TAIL_KEPT`] bytes (header, descriptor, footer). A completed message is
//! laid out at its offsets in a zero-filled buffer of its length (whose
//! untouched pages the system never backs) and parsed like a whole one.
//! Memory therefore stays near those kept bytes, whatever the payloads.

use std::io::{Seek, SeekFrom, Write};

use super::catalogue::{is_catalogue_message, Builder, Catalogue};
use crate::error::Result;
use crate::limits::Limits;
use crate::wire::header::{FrameHeader, Postamble, Preamble};
use crate::wire::scan::MessageSpan;
use crate::wire::{
    align_up, frame_flags, FrameType, DATA_FRAME_FOOTER_LEN, FRAME_HEADER_LEN, FRAME_MAGIC, MAGIC,
    POSTAMBLE_LEN, PREAMBLE_LEN,
};

/// Bytes kept from the start of a data frame: its header and a descriptor
/// written before the payload.
pub const HEAD_KEPT: u64 = 64 << 10;
/// Bytes kept from the end of a data frame: a descriptor written after the
/// payload, and the footer.
pub const TAIL_KEPT: u64 = 1 << 20;

/// Where the walk of the current message stands.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Collecting the 24-byte preamble.
    Preamble,
    /// At a frame boundary: collecting a frame header or the postamble.
    Boundary,
    /// Inside the frame that started at `start` and ends at `end`.
    Frame { start: u64, end: u64, whole: bool },
    /// Padding up to `until`, where the postamble starts or, when
    /// `postamble` is false, the next frame boundary.
    Padding { until: u64, postamble: bool },
    /// Collecting the postamble, which ends the message.
    Postamble,
}

/// The message being walked.
struct Walk {
    /// Absolute offset of its first byte.
    start: u64,
    /// Its preamble's declared length (0: streaming).
    declared: u64,
    /// Bytes of it seen.
    rel: u64,
    step: Step,
    /// Bytes gathered at a boundary (a frame header or postamble so far).
    part: Vec<u8>,
    /// The kept pieces: offset in the message, bytes.
    kept: Vec<(u64, Vec<u8>)>,
    /// Frames seen.
    frames: usize,
}

impl Walk {
    /// Drops what was kept of the data frame `start..end` but its header,
    /// its descriptor and its footer, which are all a record is made of,
    /// so that many small objects do not keep their payloads.
    fn trim_data_frame(&mut self, start: u64, end: u64) {
        let Some((flags, cbor_offset)) = self.data_frame(start, end) else {
            return;
        };
        let body_end = end - DATA_FRAME_FOOTER_LEN as u64;
        let cbor = start.saturating_add(cbor_offset);
        let descriptor = if flags & frame_flags::CBOR_AFTER_PAYLOAD != 0 {
            (cbor, body_end)
        } else {
            // Before the payload: up to where the kept piece ends, as the
            // descriptor check parsed it.
            let held = kept_from(&self.kept, cbor, body_end).map_or(0, |p| p.len() as u64);
            (cbor, cbor + held)
        };
        let wanted = [
            (start, start + FRAME_HEADER_LEN as u64),
            descriptor,
            (body_end, end),
        ];
        let mut kept = Vec::with_capacity(self.kept.len() + 2);
        for (at, v) in std::mem::take(&mut self.kept) {
            let piece_end = at + v.len() as u64;
            if piece_end <= start || at >= end {
                kept.push((at, v));
                continue;
            }
            if at < start {
                kept.push((at, v[..(start - at) as usize].to_vec()));
            }
            for (lo, hi) in wanted {
                let (lo, hi) = (lo.max(at).max(start), hi.min(piece_end).min(end));
                if lo < hi {
                    kept.push((lo, v[(lo - at) as usize..(hi - at) as usize].to_vec()));
                }
            }
            if piece_end > end {
                kept.push((end, v[(end - at) as usize..].to_vec()));
            }
        }
        self.kept = kept;
    }

    /// The header flags and the footer's descriptor offset (from the frame
    /// start) of the data frame `start..end`, read from its kept header
    /// and footer; `None` for another frame type.
    fn data_frame(&self, start: u64, end: u64) -> Option<(u16, u64)> {
        let head = kept_slice(
            &self.kept,
            start,
            (start + FRAME_HEADER_LEN as u64).min(end),
        )?;
        let h = FrameHeader::peek(head)?;
        if h.ftype != FrameType::DataObject {
            return None;
        }
        let footer = kept_slice(&self.kept, end - DATA_FRAME_FOOTER_LEN as u64, end)?;
        Some((h.flags, u64::from_be_bytes(footer[..8].try_into().ok()?)))
    }

    fn keep(&mut self, rel: u64, b: &[u8]) {
        match self.kept.last_mut() {
            Some((at, v)) if *at + v.len() as u64 == rel => v.extend_from_slice(b),
            _ => self.kept.push((rel, b.to_vec())),
        }
    }

    /// What follows the preamble or a frame ending at `rel`: the next
    /// frame at the next multiple of 8, or the postamble, which a declared
    /// length places at its end and a streaming message at a boundary
    /// (`spec/format.md` §2).
    fn after(&self, rel: u64) -> Step {
        let w = self;
        let next = align_up(rel);
        if w.declared != 0 {
            let frames_end = w.declared - POSTAMBLE_LEN as u64;
            if next >= frames_end {
                return if rel < frames_end {
                    Step::Padding {
                        until: frames_end,
                        postamble: true,
                    }
                } else {
                    Step::Postamble
                };
            }
        }
        if next > rel {
            Step::Padding {
                until: next,
                postamble: false,
            }
        } else {
            Step::Boundary
        }
    }

    /// Takes the fixed-size part just gathered.
    fn gathered(&mut self, limits: &Limits) -> std::result::Result<Gathered, String> {
        let part = std::mem::take(&mut self.part);
        let rel = self.rel;
        self.keep(rel, &part);
        self.rel += part.len() as u64;
        let at = self.start + rel;
        match self.step {
            Step::Preamble => {
                let p = Preamble::peek(&part)
                    .filter(|_| part.starts_with(MAGIC))
                    .ok_or_else(|| format!("no message starts at offset {at}"))?;
                self.declared = p.total_length;
                if self.declared != 0 && self.declared < (PREAMBLE_LEN + POSTAMBLE_LEN) as u64 {
                    return Err(format!(
                        "the message at offset {at} declares a length below the minimum"
                    ));
                }
                if self.declared > limits.max_message_len {
                    return Err(format!(
                        "the message at offset {at} is longer than the limits allow"
                    ));
                }
                self.step = self.after(PREAMBLE_LEN as u64);
                Ok(Gathered::Nothing)
            }
            Step::Boundary if part.len() == FRAME_HEADER_LEN => {
                let h = FrameHeader::peek(&part)
                    .ok_or_else(|| format!("the frame header at offset {at} is invalid"))?;
                let end = rel.saturating_add(h.total_length);
                // A streaming message is bounded here as a scan bounds it:
                // its length and its frames within the limits.
                let over = (self.declared != 0 && end > self.declared - POSTAMBLE_LEN as u64)
                    || end.saturating_add(POSTAMBLE_LEN as u64) > limits.max_message_len;
                if over {
                    return Err(format!("the frame at offset {at} overruns its message"));
                }
                self.frames += 1;
                if self.frames > limits.max_frames {
                    return Err(format!(
                        "the message at offset {} has more frames than the limits allow",
                        self.start
                    ));
                }
                let whole = h.ftype != FrameType::DataObject;
                if whole && h.total_length > limits.max_cbor_len.saturating_add(64) {
                    return Err(format!(
                        "the frame at offset {at} is longer than the limits allow"
                    ));
                }
                self.step = Step::Frame {
                    start: rel,
                    end,
                    whole,
                };
                Ok(if self.rel == end {
                    Gathered::Frame { start: rel, end }
                } else {
                    Gathered::Nothing
                })
            }
            Step::Boundary | Step::Postamble => {
                if Postamble::peek(&part).is_none() {
                    return Err(format!("no frame or postamble at offset {at}"));
                }
                if self.declared != 0 && self.rel != self.declared {
                    return Err(format!(
                        "the postamble at offset {at} is not at its message's declared end"
                    ));
                }
                Ok(Gathered::Message)
            }
            Step::Frame { .. } | Step::Padding { .. } => Ok(Gathered::Nothing),
        }
    }
}

/// What a gathered part completed.
enum Gathered {
    Nothing,
    Frame { start: u64, end: u64 },
    Message,
}

/// Builds the catalogue of a byte stream of whole messages from the bytes
/// alone (`spec/files.md` §9.4). Bytes that are not a message, a message
/// that does not parse, or a descriptor beyond the kept windows end the
/// recording: [`CatalogueRecorder::finish`] then gives no catalogue, and
/// the file is written without one (readers scan it).
pub struct CatalogueRecorder {
    limits: Limits,
    /// Bytes observed.
    at: u64,
    walk: Option<Walk>,
    built: Builder,
    /// Why the stream has no catalogue.
    stopped: Option<String>,
    /// The span of the last complete message, for back-filled lengths.
    last: Option<MessageSpan>,
}

impl CatalogueRecorder {
    /// A recorder of a stream starting at offset 0.
    pub fn new(limits: &Limits) -> Self {
        CatalogueRecorder {
            limits: limits.clone(),
            at: 0,
            walk: None,
            built: Builder::default(),
            stopped: None,
            last: None,
        }
    }

    /// Why no catalogue will be written, once that is known.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    fn stop(&mut self, why: impl Into<String>) {
        if self.stopped.is_none() {
            self.stopped = Some(why.into());
        }
        self.walk = None;
    }

    /// Takes the next bytes of the stream.
    pub fn observe(&mut self, mut b: &[u8]) {
        while !b.is_empty() && self.stopped.is_none() {
            let used = self.step(b);
            self.at += used as u64;
            b = &b[used..];
        }
        self.at += b.len() as u64;
    }

    /// Takes `b` written at `pos`, before the end of what was observed: only
    /// the back-filled length of the last message (its preamble's or
    /// postamble's `total_length`, which records do not hold) keeps the
    /// recording going.
    pub fn rewrite(&mut self, pos: u64, b: &[u8]) {
        let backfill = self.walk.is_none()
            && b.len() == 8
            && self.last.is_some_and(|s| {
                let v = u64::from_be_bytes(b.try_into().unwrap_or_default());
                v == s.len && (pos == s.offset + 16 || pos == s.offset + s.len - 16)
            });
        if !backfill {
            self.stop(format!("{} bytes were rewritten at offset {pos}", b.len()));
        }
    }

    /// One step of the walk over the start of `b`; returns the bytes used.
    fn step(&mut self, b: &[u8]) -> usize {
        let Some(w) = self.walk.as_mut() else {
            self.walk = Some(Walk {
                start: self.at,
                declared: 0,
                rel: 0,
                step: Step::Preamble,
                part: Vec::with_capacity(PREAMBLE_LEN),
                kept: Vec::new(),
                frames: 0,
            });
            return 0;
        };
        match w.step {
            Step::Preamble | Step::Boundary | Step::Postamble => {
                // At a boundary, two bytes tell a frame ("FR") from the
                // postamble.
                let want = match w.step {
                    Step::Preamble => PREAMBLE_LEN,
                    Step::Postamble => POSTAMBLE_LEN,
                    _ if w.part.len() < 2 => 2,
                    _ if &w.part[..2] == FRAME_MAGIC => FRAME_HEADER_LEN,
                    _ => POSTAMBLE_LEN,
                };
                let n = (want - w.part.len()).min(b.len());
                w.part.extend_from_slice(&b[..n]);
                if w.part.len() == want && want != 2 {
                    self.gathered();
                }
                n
            }
            Step::Frame { start, end, whole } => {
                let n = (end - w.rel).min(b.len() as u64) as usize;
                let (from, to) = (w.rel, w.rel + n as u64);
                let windows = if whole {
                    [(start, end), (end, end)]
                } else {
                    let head = (start + HEAD_KEPT).min(end);
                    [
                        (start, head),
                        (end.saturating_sub(TAIL_KEPT).max(head), end),
                    ]
                };
                for (lo, hi) in windows {
                    let (lo, hi) = (lo.max(from), hi.min(to));
                    if lo < hi {
                        let piece = &b[(lo - from) as usize..(hi - from) as usize];
                        w.keep(lo, piece);
                    }
                }
                w.rel = to;
                if to == end {
                    self.frame_done(start, end);
                }
                n
            }
            Step::Padding { until, postamble } => {
                let n = (until - w.rel).min(b.len() as u64) as usize;
                w.rel += n as u64;
                if w.rel == until {
                    w.step = if postamble {
                        Step::Postamble
                    } else {
                        Step::Boundary
                    };
                }
                n
            }
        }
    }

    /// A fixed-size part is complete: a preamble, a frame header or a
    /// postamble.
    fn gathered(&mut self) {
        let Some(w) = self.walk.as_mut() else { return };
        match w.gathered(&self.limits) {
            Err(why) => self.stop(why),
            Ok(Gathered::Nothing) => {}
            Ok(Gathered::Frame { start, end }) => self.frame_done(start, end),
            Ok(Gathered::Message) => self.message_done(),
        }
    }

    fn frame_done(&mut self, start: u64, end: u64) {
        if let Some(why) = self.descriptor_missing(start, end) {
            return self.stop(why);
        }
        if let Some(w) = self.walk.as_mut() {
            w.trim_data_frame(start, end);
            w.step = w.after(end);
        }
    }

    /// Why the descriptor of the data frame `start..end` lies outside the
    /// bytes kept of it, if it does.
    fn descriptor_missing(&self, start: u64, end: u64) -> Option<String> {
        let w = self.walk.as_ref()?;
        let (flags, cbor_offset) = w.data_frame(start, end)?;
        let missing = || {
            Some(format!(
                "the descriptor of the data frame at offset {} is longer than a catalogue's writer keeps",
                w.start + start
            ))
        };
        let body_end = end - DATA_FRAME_FOOTER_LEN as u64;
        if cbor_offset < FRAME_HEADER_LEN as u64 || cbor_offset > body_end - start {
            // The parse reports it.
            return None;
        }
        let from = start + cbor_offset;
        if flags & frame_flags::CBOR_AFTER_PAYLOAD != 0 {
            return kept_slice(&w.kept, from, body_end)
                .is_none()
                .then(missing)
                .flatten();
        }
        // Before the payload: the descriptor must parse within the piece
        // kept from its start.
        let Some(piece) = kept_from(&w.kept, from, body_end) else {
            return missing();
        };
        if from + piece.len() as u64 == body_end {
            return None;
        }
        match crate::cbor::parse_one(piece, 0, self.limits.cbor()) {
            Ok(_) => None,
            Err(_) => missing(),
        }
    }

    /// The postamble is in: the message is parsed from its kept bytes.
    fn message_done(&mut self) {
        let Some(w) = self.walk.take() else { return };
        let span = MessageSpan {
            offset: w.start,
            len: w.rel,
        };
        let Ok(len) = usize::try_from(w.rel) else {
            return self.stop("a message is larger than this machine's address space");
        };
        if w.rel > self.limits.max_message_len {
            return self.stop("a message is longer than the limits allow");
        }
        let Ok(mut buf) = crate::buffer::zeroed(len) else {
            return self.stop(format!(
                "no memory for the {len}-byte layout of the message at offset {}",
                span.offset
            ));
        };
        for (at, piece) in &w.kept {
            buf[*at as usize..*at as usize + piece.len()].copy_from_slice(piece);
        }
        if is_catalogue_message(&buf, span.offset, &self.limits) {
            let flags = Preamble::peek(&buf).map_or(0, |p| p.flags);
            self.built.push_catalogue(span, flags);
        } else if let Err(e) = self.built.push_message(&buf, span, &self.limits) {
            return self.stop(format!("the message at offset {}: {e}", span.offset));
        }
        self.last = Some(span);
    }

    /// The catalogue of the stream, when it was whole messages, at least
    /// one, each of which parsed.
    pub fn finish(self) -> Result<Option<Catalogue>> {
        if self.stopped.is_some() || self.walk.is_some() || !self.built.lists_any() {
            return Ok(None);
        }
        self.built.finish(self.at).map(Some)
    }
}

/// The bytes `from..to` of a message, when one kept piece holds them.
fn kept_slice(kept: &[(u64, Vec<u8>)], from: u64, to: u64) -> Option<&[u8]> {
    kept.iter().find_map(|(at, v)| {
        let end = at + v.len() as u64;
        (*at <= from && to <= end).then(|| &v[(from - at) as usize..(to - at) as usize])
    })
}

/// The bytes of a message from `from` to the end of the kept piece that
/// holds it, or to `to` if that comes first.
fn kept_from(kept: &[(u64, Vec<u8>)], from: u64, to: u64) -> Option<&[u8]> {
    kept.iter().find_map(|(at, v)| {
        let end = (at + v.len() as u64).min(to);
        (*at <= from && from < end).then(|| &v[(from - at) as usize..(end - at) as usize])
    })
}

/// A writer that passes every byte to `inner` and ends the stream with its
/// catalogue ([`CataloguingWriter::finish`], `spec/files.md` §9.4).
/// Seeking is passed on; a write behind the end is a rewrite
/// ([`CatalogueRecorder::rewrite`]).
pub struct CataloguingWriter<W: Write> {
    inner: W,
    recorder: Box<CatalogueRecorder>,
    /// Where the next write lands, and the end of what was written.
    pos: u64,
    end: u64,
}

impl<W: Write> CataloguingWriter<W> {
    /// Wraps `inner`, which starts empty.
    pub fn new(inner: W, limits: &Limits) -> Self {
        CataloguingWriter {
            inner,
            recorder: Box::new(CatalogueRecorder::new(limits)),
            pos: 0,
            end: 0,
        }
    }

    /// The writer wrapped.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Why no catalogue will end the stream, once that is known.
    pub fn stopped(&self) -> Option<&str> {
        self.recorder.stopped()
    }

    /// Writes the catalogue (when the stream was whole messages) and
    /// returns the writer and the catalogue message's length (0: none).
    /// Nothing is written when the writer is not at the end of what it
    /// wrote (a caller seeked back and stayed), nor when the catalogue
    /// cannot be built or encoded: the stream is then read by scanning.
    pub fn finish(mut self) -> std::io::Result<(W, u64)> {
        let at_end = self.pos == self.end;
        let msg = match self.recorder.finish() {
            Ok(Some(cat)) if at_end => cat.to_message().ok(),
            _ => None,
        };
        let mut n = 0;
        if let Some(msg) = msg {
            self.inner.write_all(&msg)?;
            n = msg.len() as u64;
        }
        self.inner.flush()?;
        Ok((self.inner, n))
    }
}

impl<W: Write> Write for CataloguingWriter<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        let written = &b[..n];
        if self.pos == self.end {
            self.recorder.observe(written);
            self.end += n as u64;
        } else {
            self.recorder.rewrite(self.pos, written);
            self.end = self.end.max(self.pos + n as u64);
        }
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write + Seek> Seek for CataloguingWriter<W> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.inner.seek(to)?;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(bytes: &[u8], chunk: usize) -> Option<Catalogue> {
        let mut r = CatalogueRecorder::new(&Limits::default());
        for c in bytes.chunks(chunk.max(1)) {
            r.observe(c);
        }
        r.finish().unwrap()
    }

    #[test]
    fn a_complete_data_frame_keeps_its_header_descriptor_and_footer_only() {
        let d = crate::descriptor::ObjectDescriptor::new(crate::dtype::Dtype::Uint8, vec![300_000]);
        let x = vec![7u8; 300_000];
        let objs: Vec<_> = (0..20).map(|_| (&d, &x[..])).collect();
        let msg = crate::encode::encode(
            &crate::metadata::GlobalMetadata::default(),
            &objs,
            &crate::encode::EncodeOptions::new(),
        )
        .unwrap();
        let mut r = CatalogueRecorder::new(&Limits::default());
        // All but the postamble: the walk still holds what it kept.
        r.observe(&msg[..msg.len() - POSTAMBLE_LEN]);
        let kept: usize = r
            .walk
            .as_ref()
            .unwrap()
            .kept
            .iter()
            .map(|(_, v)| v.len())
            .sum();
        assert!(
            kept < 20 * 1024,
            "{kept} bytes kept of a {}-byte message",
            msg.len()
        );
        r.observe(&msg[msg.len() - POSTAMBLE_LEN..]);
        let cat = r.finish().unwrap().unwrap();
        assert_eq!(cat.descriptors.len(), 1);
        assert_eq!(cat.messages[0].objects.as_ref().unwrap().len(), 20);
    }

    #[test]
    fn bytes_that_are_not_messages_give_no_catalogue() {
        assert!(record(b"CDF\x01 not a message at all, long enough", 7).is_none());
        assert!(record(b"", 7).is_none());
    }
}
