//! Locating messages in a buffer holding many. See `spec/format.md` §2.4.

use super::layout::parse_layout;
use super::{be_u16, be_u64, END_MAGIC, MAGIC, MIN_MESSAGE_LEN, POSTAMBLE_LEN, WIRE_VERSION};
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

/// Tries to delimit a message at `p`; `None` when there is none there.
///
/// A declared length must land on the end magic. A streaming message
/// (length 0) is delimited by walking its frames to the postamble; if the
/// walk fails, the first end magic after the preamble is taken, as the
/// reference does.
pub fn message_at(buf: &[u8], p: usize, limits: &Limits) -> Option<MessageSpan> {
    let rest = buf.get(p..)?;
    if rest.len() < MIN_MESSAGE_LEN || &rest[..8] != MAGIC || be_u16(rest, 8)? != WIRE_VERSION {
        return None;
    }
    let t = be_u64(rest, 16)?;
    if t > 0 {
        if t < MIN_MESSAGE_LEN as u64 || t > rest.len() as u64 || t > limits.max_message_len {
            return None;
        }
        let end = t as usize;
        if &rest[end - 8..end] != END_MAGIC {
            return None;
        }
        return Some(MessageSpan {
            offset: p as u64,
            len: t,
        });
    }
    if let Ok(l) = parse_layout(rest, p as u64, limits) {
        return Some(MessageSpan {
            offset: p as u64,
            len: l.bytes.len() as u64,
        });
    }
    let from = 24;
    let rel = rest[from..].windows(8).position(|w| w == END_MAGIC)?;
    let len = from + rel + 8;
    (len >= MIN_MESSAGE_LEN).then_some(MessageSpan {
        offset: p as u64,
        len: len as u64,
    })
}

/// Forward scan: every message in `buf`, skipping bytes that start none.
pub fn scan(buf: &[u8]) -> Vec<MessageSpan> {
    scan_with(buf, &Limits::default())
}

/// Forward scan with explicit limits.
pub fn scan_with(buf: &[u8], limits: &Limits) -> Vec<MessageSpan> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while let Some(q) = find_magic(buf, p) {
        match message_at(buf, q, limits) {
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
        if &buf[end - 8..end] != END_MAGIC {
            break;
        }
        let t = be_u64(buf, post + 8).unwrap_or(0);
        if t == 0 || t > end as u64 || t < MIN_MESSAGE_LEN as u64 || t > limits.max_message_len {
            break;
        }
        let start = end - t as usize;
        if &buf[start..start + 8] != MAGIC || be_u64(buf, start + 16) != Some(t) {
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
