//! Locating messages in a buffer holding many. See `spec/format.md` §2.4.

use super::header::{FrameHeader, Postamble, Preamble};
use super::{
    align_up, ALIGN, END_MAGIC, FRAME_END, FRAME_HEADER_LEN, FRAME_MAGIC, MAGIC, MIN_MESSAGE_LEN,
    POSTAMBLE_LEN, PREAMBLE_LEN,
};
use crate::limits::Limits;

/// Where one message sits in a larger buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageSpan {
    /// Offset of `TENSOGRM`.
    pub offset: u64,
    /// Message length in bytes.
    pub len: u64,
}

impl MessageSpan {
    /// The byte range of the message.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset as usize..(self.offset + self.len) as usize
    }
}

/// Finds the next occurrence of the message magic at or after `from`.
pub(crate) fn find_magic(buf: &[u8], from: usize) -> Option<usize> {
    let mut p = from;
    while p + MAGIC.len() <= buf.len() {
        let rel = buf[p..].iter().position(|&b| b == MAGIC[0])?;
        p += rel;
        if buf.get(p..p + MAGIC.len()) == Some(&MAGIC[..]) {
            return Some(p);
        }
        p += 1;
    }
    None
}

/// Steps between recorded positions of a frame walk.
const CHECKPOINT: usize = 16;

/// Where a chain of frames that starts at some position stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChainEnd {
    /// The bytes run out: inside a frame that would end at `last_end`
    /// (beyond the buffer), inside a frame header, or exactly between frames
    /// (`last_end` is then the buffer length).
    OutOfBytes { last_end: usize },
    /// No frame starts at `at`: the postamble, if the message is whole.
    NoFrame { at: usize },
    /// Something that starts like a frame but is not a valid one.
    Broken,
}

/// Delimits messages in one buffer (`spec/format.md` §2.4). What it learns
/// is kept between calls: where each chain of frames stops, and where the
/// next end magic is. A pass over the buffer, however many message magics,
/// preambles and frame headers the bytes hold, is therefore linear in its
/// size.
pub struct Scanner<'a> {
    buf: &'a [u8],
    limits: &'a Limits,
    chains: std::collections::HashMap<usize, ChainEnd>,
    /// `(from, first end magic at or after from)` of the last search.
    end_magic: Option<(usize, Option<usize>)>,
    work: u64,
}

impl<'a> Scanner<'a> {
    /// A scanner over `buf`.
    pub fn new(buf: &'a [u8], limits: &'a Limits) -> Self {
        Scanner {
            buf,
            limits,
            chains: std::collections::HashMap::new(),
            end_magic: None,
            work: 0,
        }
    }

    /// The buffer scanned.
    pub fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// The limits candidates are delimited under.
    pub fn limits(&self) -> &'a Limits {
        self.limits
    }

    /// Work done so far: frame headers followed plus bytes searched for end
    /// magics. A pass over the buffer keeps it within a small multiple of
    /// the buffer's size.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// The first message magic at or after `from`.
    pub fn next_magic(&self, from: usize) -> Option<usize> {
        find_magic(self.buf, from)
    }

    /// See [`message_at`].
    pub fn message_at(&mut self, p: usize) -> Option<MessageSpan> {
        let buf = self.buf;
        let rest = buf.get(p..)?;
        if rest.len() < MIN_MESSAGE_LEN {
            return None;
        }
        let t = Preamble::peek(rest)?.total_length;
        if t > 0 {
            if t < MIN_MESSAGE_LEN as u64
                || t > rest.len() as u64
                || t > self.limits.max_message_len
            {
                return None;
            }
            let end = t as usize;
            return (&rest[end - 8..end] == END_MAGIC).then_some(MessageSpan {
                offset: p as u64,
                len: t,
            });
        }
        // Either way a streaming message ends with an end magic after its
        // preamble; without one there is nothing to walk.
        let first_end = self.end_magic_from(p + PREAMBLE_LEN)?;
        let fits = |len: usize| len as u64 <= self.limits.max_message_len;
        if let ChainEnd::NoFrame { at } = self.chain_end(p + PREAMBLE_LEN) {
            let len = at + POSTAMBLE_LEN - p;
            let whole = Postamble::peek(&buf[at..])
                .is_some_and(|q| q.check_length(len as u64, at as u64).is_ok());
            if whole && fits(len) {
                return Some(MessageSpan {
                    offset: p as u64,
                    len: len as u64,
                });
            }
        }
        let len = first_end + 8 - p;
        (len >= MIN_MESSAGE_LEN && fits(len)).then_some(MessageSpan {
            offset: p as u64,
            len: len as u64,
        })
    }

    /// [`is_cut_short`] for the bytes from `p` to the end of the buffer.
    pub fn is_cut_short(&mut self, p: usize) -> bool {
        let Some(rest) = self.buf.get(p..) else {
            return false;
        };
        let Some(pre) = Preamble::peek(rest) else {
            return false;
        };
        let declared = pre.total_length;
        let body_end = if declared > 0 {
            if declared < MIN_MESSAGE_LEN as u64
                || declared > self.limits.max_message_len
                || declared <= rest.len() as u64
            {
                return false;
            }
            // declared > rest.len(), so it fits in usize.
            Some(p + declared as usize - POSTAMBLE_LEN)
        } else {
            None
        };
        match self.chain_end(p + PREAMBLE_LEN) {
            // A frame may not run past the message's declared end.
            ChainEnd::OutOfBytes { last_end } => {
                body_end.is_none_or(|e| last_end <= e + POSTAMBLE_LEN)
            }
            ChainEnd::NoFrame { at } => {
                // Cut inside the postamble: what is there must agree with
                // one. With a declared length the postamble starts at the
                // body's end, which the last frame's padding may overrun
                // when that end is not 8-aligned.
                let post = match body_end {
                    None => at,
                    Some(e) if (e..e + ALIGN).contains(&at) => e,
                    Some(_) => return false,
                };
                let tail = &self.buf[post..];
                tail.len() < POSTAMBLE_LEN
                    && tail.get(16..).is_none_or(|m| END_MAGIC.starts_with(m))
            }
            ChainEnd::Broken => false,
        }
    }

    /// The first end magic at or after `from`, remembered so that searches
    /// from increasing positions read each byte once.
    fn end_magic_from(&mut self, from: usize) -> Option<usize> {
        if let Some((f, found)) = self.end_magic {
            if from >= f && found.is_none_or(|e| e >= from) {
                return found;
            }
        }
        let rest = self.buf.get(from..).unwrap_or_default();
        let found = rest
            .windows(8)
            .position(|w| w == END_MAGIC)
            .map(|i| from + i);
        self.work += found.map_or(rest.len(), |e| e - from + 8) as u64;
        self.end_magic = Some((from, found));
        found
    }

    /// Follows frame headers from `start` until no frame follows. Every
    /// [`CHECKPOINT`]th position of the walk records the outcome, so a later
    /// walk that joins this chain takes at most that many steps before it
    /// meets a recorded one: the walks of a whole pass cost at most the
    /// frame positions in the buffer plus `CHECKPOINT` steps per walk, and
    /// the record holds a small fraction of the positions.
    fn chain_end(&mut self, start: usize) -> ChainEnd {
        let buf = self.buf;
        let mut path = Vec::new();
        let mut pos = start;
        let end = loop {
            if pos >= buf.len() {
                break ChainEnd::OutOfBytes {
                    last_end: buf.len(),
                };
            }
            if let Some(&known) = self.chains.get(&pos) {
                break known;
            }
            self.work += 1;
            path.push(pos);
            let rest = &buf[pos..];
            if !FRAME_MAGIC.starts_with(&rest[..rest.len().min(2)]) {
                break ChainEnd::NoFrame { at: pos };
            }
            if rest.len() < FRAME_HEADER_LEN {
                break ChainEnd::OutOfBytes {
                    last_end: buf.len(),
                };
            }
            let Some(h) = FrameHeader::peek(rest) else {
                break ChainEnd::Broken;
            };
            let total = h.total_length;
            let Some(frame_end) = usize::try_from(total).ok().and_then(|t| pos.checked_add(t))
            else {
                break ChainEnd::Broken;
            };
            if frame_end > buf.len() {
                break ChainEnd::OutOfBytes {
                    last_end: frame_end,
                };
            }
            if &buf[frame_end - 4..frame_end] != FRAME_END {
                break ChainEnd::Broken;
            }
            pos = align_up(frame_end as u64) as usize;
        };
        for p in path.into_iter().step_by(CHECKPOINT) {
            self.chains.insert(p, end);
        }
        end
    }
}

/// Forward scan: every message in `buf`, skipping bytes that start none.
pub fn scan(buf: &[u8]) -> Vec<MessageSpan> {
    scan_with(buf, &Limits::default())
}

/// Forward scan with explicit limits; linear in the size of `buf`.
pub fn scan_with(buf: &[u8], limits: &Limits) -> Vec<MessageSpan> {
    let mut sc = Scanner::new(buf, limits);
    let mut out = Vec::new();
    let mut p = 0usize;
    while let Some(q) = sc.next_magic(p) {
        match sc.message_at(q) {
            Some(span) => {
                out.push(span);
                p = q + span.len as usize;
            }
            None => p = q + 1,
        }
    }
    out
}

/// Backward scan: walks postambles from the end of `buf` toward its start.
/// Stops at the first message it cannot delimit this way (a streaming
/// message, or damage); returns the spans found, in file order.
pub fn scan_backward(buf: &[u8], limits: &Limits) -> Vec<MessageSpan> {
    let mut out = Vec::new();
    let mut end = buf.len();
    while end >= MIN_MESSAGE_LEN {
        let post = end - POSTAMBLE_LEN;
        let Some(q) = Postamble::peek(&buf[post..]) else {
            break;
        };
        let t = q.total_length;
        if t == 0 || t > end as u64 || t < MIN_MESSAGE_LEN as u64 || t > limits.max_message_len {
            break;
        }
        let start = end - t as usize;
        if Preamble::peek(&buf[start..]).map(|p| p.total_length) != Some(t) {
            break;
        }
        out.push(MessageSpan {
            offset: start as u64,
            len: t,
        });
        end = start;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, StreamingEncoder};

    fn is_cut_short(buf: &[u8], limits: &Limits) -> bool {
        Scanner::new(buf, limits).is_cut_short(0)
    }

    fn buffered() -> Vec<u8> {
        let d = ObjectDescriptor::new(Dtype::Uint16, vec![3, 5]);
        let x = vec![7u8; 30];
        crate::encode(
            &GlobalMetadata::default(),
            &[(&d, &x), (&d, &x)],
            &EncodeOptions::new(),
        )
        .unwrap()
    }

    fn streaming() -> Vec<u8> {
        let mut s = StreamingEncoder::new(
            Vec::new(),
            &GlobalMetadata::default(),
            &EncodeOptions::new(),
        )
        .unwrap();
        s.write_object(&ObjectDescriptor::new(Dtype::Uint8, vec![9]), &[1; 9])
            .unwrap();
        let (mut m, _) = s.finish().unwrap();
        m[16..24].fill(0);
        m
    }

    #[test]
    fn every_proper_prefix_is_cut_short_and_whole_messages_are_not() {
        let l = Limits::default();
        for m in [buffered(), streaming()] {
            for cut in PREAMBLE_LEN..m.len() {
                assert!(is_cut_short(&m[..cut], &l), "cut {cut} of {}", m.len());
            }
            assert!(!is_cut_short(&m, &l));
            let mut more = m.clone();
            more.extend_from_slice(&m);
            assert!(!is_cut_short(&more, &l));
        }
        assert!(!is_cut_short(&buffered()[..PREAMBLE_LEN - 1], &l));
    }

    #[test]
    fn an_unaligned_body_end_still_reads_as_cut_short() {
        // The postamble straight after a last frame that ends off the
        // 8-byte grid: a layout the parser accepts.
        let l = Limits::default();
        let m = (1..40)
            .map(|n| {
                let d = ObjectDescriptor::new(Dtype::Uint8, vec![n]);
                let x = vec![3u8; n as usize];
                crate::encode(
                    &GlobalMetadata::default(),
                    &[(&d, &x)],
                    &EncodeOptions::new(),
                )
                .unwrap()
            })
            .find_map(|m| {
                let parsed = crate::Message::parse(&m).unwrap();
                let last = *parsed.layout().frames().last().unwrap();
                let end = last.offset() + last.total_len();
                (!end.is_multiple_of(ALIGN)).then(|| {
                    let mut u = [&m[..end], &m[m.len() - POSTAMBLE_LEN..]].concat();
                    let len = (u.len() as u64).to_be_bytes();
                    u[16..24].copy_from_slice(&len);
                    let at = u.len() - 16;
                    u[at..at + 8].copy_from_slice(&len);
                    u
                })
            })
            .expect("a message whose last frame ends unaligned");
        assert!(
            crate::Message::parse(&m).is_ok(),
            "the parser accepts the layout"
        );
        for cut in PREAMBLE_LEN..m.len() {
            assert!(is_cut_short(&m[..cut], &l), "cut {cut} of {}", m.len());
        }
        assert!(!is_cut_short(&m, &l));
    }

    #[test]
    fn a_broken_chain_is_damage_not_an_interrupted_write() {
        let l = Limits::default();
        let m = buffered();
        let cut = m.len() - 30;
        // The first frame's magic, type, length (shifted by 8 so that its end
        // magic is looked for in the wrong place, or made huge).
        for (at, v) in [(24usize, b'X'), (27, 0x63), (39, m[39] ^ 8), (32, 0x7f)] {
            let mut d = m[..cut].to_vec();
            d[at] = v;
            assert!(!is_cut_short(&d, &l), "byte {at}");
        }
        let first_len = crate::wire::be_u64(&m, 24 + 8).unwrap() as usize;
        let mut d = m[..cut].to_vec();
        d[24 + first_len - 1] ^= 1;
        assert!(!is_cut_short(&d, &l), "frame end magic");
        // A declared length within the buffer is not an interrupted write.
        let mut d = m.clone();
        d.truncate(cut);
        d[16..24].copy_from_slice(&(cut as u64).to_be_bytes());
        assert!(!is_cut_short(&d, &l));
    }
}
