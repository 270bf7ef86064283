//! Locating messages in a file in time proportional to their number.
//! See `spec/files.md` §2.

use crate::limits::Limits;
use crate::wire::scan::{MessageSpan, Scanner};
use crate::wire::{be_u16, be_u64, END_MAGIC, MAGIC, MIN_MESSAGE_LEN, WIRE_VERSION};

/// Bytes after the last complete message that form no message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Offset of the first byte not belonging to a complete message.
    pub offset: u64,
    /// Number of such bytes (up to the end of the file).
    pub len: u64,
    /// Why they form no message.
    pub reason: String,
}

const INCOMPLETE: &str = "a message starts here but is incomplete (interrupted write?)";

/// Reads `len` bytes at `offset`; `None` when out of range.
pub(crate) trait ReadAt {
    fn size(&self) -> u64;
    fn read_at(&self, offset: u64, len: usize) -> Option<std::borrow::Cow<'_, [u8]>>;
}

/// A byte slice as a source.
struct SliceSource<'b>(&'b [u8]);

impl ReadAt for SliceSource<'_> {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let start = usize::try_from(offset).ok()?;
        self.0
            .get(start..start.checked_add(len)?)
            .map(std::borrow::Cow::Borrowed)
    }
}

/// Indexes the messages of a file held in memory, as [`index_messages`]
/// does for a file on disk.
pub(crate) fn index_bytes(bytes: &[u8], limits: &Limits) -> (Vec<MessageSpan>, Option<TornTail>) {
    index_messages(&SliceSource(bytes), 0, limits, &mut |p| {
        bytes
            .get(usize::try_from(p).ok()?..)
            .map(std::borrow::Cow::Borrowed)
    })
}

/// Hops from preamble to preamble using declared lengths. Where a hop is
/// impossible (a streaming message, damage) the rest is handed to `slow`,
/// which scans it. Returns the spans and the torn tail, if any.
pub(crate) fn index_messages<'a>(
    src: &dyn ReadAt,
    start: u64,
    limits: &Limits,
    slow: &mut dyn FnMut(u64) -> Option<std::borrow::Cow<'a, [u8]>>,
) -> (Vec<MessageSpan>, Option<TornTail>) {
    let mut spans = Vec::new();
    let size = src.size();
    let mut p = start;
    // One read per hop: the end magic of a message together with the
    // preamble of the next one.
    let mut head = if p < size { src.read_at(p, 24) } else { None };
    while let Some(h) = head.take() {
        let ok_head = &h[..8] == MAGIC && be_u16(&h, 8) == Some(WIRE_VERSION);
        let t = be_u64(&h, 16).unwrap_or(0);
        if !(ok_head && t >= MIN_MESSAGE_LEN as u64 && t <= limits.max_message_len && p + t <= size)
        {
            break;
        }
        let next = p + t;
        let window = if next + 24 <= size { 32 } else { 8 };
        let Some(w) = src.read_at(next - 8, window) else {
            break;
        };
        if &w[..8] != END_MAGIC {
            break;
        }
        spans.push(MessageSpan { offset: p, len: t });
        p = next;
        if window == 32 {
            head = Some(match w {
                std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(&b[8..]),
                std::borrow::Cow::Owned(mut v) => {
                    v.drain(..8);
                    std::borrow::Cow::Owned(v)
                }
            });
        }
    }
    if p >= size {
        return (spans, None);
    }
    // Slow path over the remainder: forward scan with resynchronisation.
    let Some(rest) = slow(p) else {
        return (
            spans,
            Some(TornTail {
                offset: p,
                len: size - p,
                reason: "unreadable".into(),
            }),
        );
    };
    let mut sc = Scanner::new(&rest, limits);
    let mut q = 0usize;
    let mut last_end = 0usize;
    let mut cut_short = false;
    while let Some(m) = sc.next_magic(q) {
        // An interrupted append starts where the last complete message
        // ends; it ends the scan before its bytes are looked into, so that
        // nothing carried in its payload is indexed. Elsewhere a chain of
        // frames that runs to the end is damage and scanning goes on.
        if m == last_end && sc.is_cut_short(m) {
            cut_short = true;
            break;
        }
        match sc.message_at(m) {
            Some(s) => {
                spans.push(MessageSpan {
                    offset: p + s.offset,
                    len: s.len,
                });
                q = m + s.len as usize;
                last_end = q;
            }
            None => q = m + 1,
        }
    }
    let torn = (last_end < rest.len()).then(|| {
        let why = if cut_short {
            INCOMPLETE.to_string()
        } else if rest.len() - last_end < MIN_MESSAGE_LEN {
            "fewer bytes than the smallest message".to_string()
        } else if rest[last_end..].starts_with(MAGIC) {
            INCOMPLETE.to_string()
        } else {
            "bytes that form no message".to_string()
        };
        TornTail {
            offset: p + last_end as u64,
            len: (rest.len() - last_end) as u64,
            reason: why,
        }
    });
    (spans, torn)
}
