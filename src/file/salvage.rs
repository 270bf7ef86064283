//! Recovering every intact message from a damaged buffer. See `spec/files.md` §6.

use crate::decode::{Message, Verify};
use crate::limits::Limits;
use crate::wire::scan::{find_magic, message_at, MessageSpan};

/// A byte range that yielded no intact message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// First byte of the range.
    pub offset: u64,
    /// Length of the range.
    pub len: u64,
    /// Why it was skipped.
    pub reason: String,
}

/// The outcome of [`salvage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SalvageReport {
    /// Intact messages: delimited, structurally valid, and every present hash verified.
    pub messages: Vec<MessageSpan>,
    /// Everything else, in file order.
    pub skipped: Vec<Skipped>,
}

/// Scans `buf` for messages; keeps those whose frames parse, whose
/// descriptors and metadata read, and whose hashes verify.
pub fn salvage(buf: &[u8], limits: &Limits) -> SalvageReport {
    let mut rep = SalvageReport::default();
    let mut p = 0usize;
    let mut gap_start = 0usize;
    let mut gap_reason = String::new();
    let close_gap = |rep: &mut SalvageReport, from: usize, to: usize, why: &str| {
        if to > from {
            rep.skipped.push(Skipped {
                offset: from as u64,
                len: (to - from) as u64,
                reason: if why.is_empty() {
                    "bytes that form no message".into()
                } else {
                    why.to_string()
                },
            });
        }
    };
    while let Some(m) = find_magic(buf, p) {
        let Some(span) = message_at(buf, m, limits) else {
            if gap_reason.is_empty() {
                gap_reason =
                    "a message header whose end cannot be found (truncated or damaged)".into();
            }
            p = m + 1;
            continue;
        };
        match check(&buf[span.range()], span.offset, limits) {
            Ok(()) => {
                close_gap(&mut rep, gap_start, m, &gap_reason);
                rep.messages.push(span);
                p = m + span.len as usize;
                gap_start = p;
                gap_reason.clear();
            }
            Err(e) => {
                close_gap(&mut rep, gap_start, m, &gap_reason);
                // A damaged message may have swallowed intact ones (a
                // length or walk that runs past its real end): the skipped
                // range stops at the first intact message inside it.
                let inner = intact_within(buf, m + 1, m + span.len as usize, limits);
                let stop = inner.map_or(m + span.len as usize, |s| s.offset as usize);
                rep.skipped.push(Skipped {
                    offset: span.offset,
                    len: (stop - m) as u64,
                    reason: format!("damaged message: {e}"),
                });
                p = stop;
                if let Some(s) = inner {
                    rep.messages.push(s);
                    p += s.len as usize;
                }
                gap_start = p;
                gap_reason.clear();
            }
        }
    }
    close_gap(&mut rep, gap_start, buf.len(), &gap_reason);
    rep
}

/// The first intact message starting in `from..end`.
fn intact_within(buf: &[u8], from: usize, end: usize, limits: &Limits) -> Option<MessageSpan> {
    let mut q = from;
    while let Some(m) = find_magic(buf, q).filter(|&m| m < end) {
        if let Some(span) = message_at(buf, m, limits) {
            if check(&buf[span.range()], span.offset, limits).is_ok() {
                return Some(span);
            }
        }
        q = m + 1;
    }
    None
}

fn check(msg: &[u8], base: u64, limits: &Limits) -> crate::Result<()> {
    let m = Message::parse_with(msg, base, limits)?;
    m.verify(Verify::IfPresent)?;
    m.metadata()?;
    for i in 0..m.num_objects() {
        m.object(i)?;
    }
    Ok(())
}
