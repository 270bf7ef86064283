//! Recovering every intact message from a damaged buffer. See `spec/files.md` §6.

use crate::decode::{Message, Verify};
use crate::limits::Limits;
use crate::wire::scan::{MessageSpan, Scanner};

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
    /// Whether the search for intact messages inside damaged ones ran out
    /// of its work budget (a fixed multiple of the input size in bytes
    /// checked), so that messages inside later damaged ones were
    /// skipped with them. Only crafted input nests that many candidates.
    pub budget_exhausted: bool,
}

/// The search inside damaged messages may check candidates totalling this
/// many times the input size; salvage stays linear in its input.
pub(crate) const SEARCH_BUDGET_FACTOR: usize = 4;

/// Scans `buf` for messages; keeps those whose frames parse, whose
/// descriptors and metadata read, and whose hashes verify.
pub fn salvage(buf: &[u8], limits: &Limits) -> SalvageReport {
    let mut rep = SalvageReport::default();
    let mut sc = Scanner::new(buf, limits);
    let mut budget = buf
        .len()
        .saturating_mul(SEARCH_BUDGET_FACTOR)
        .saturating_add(1 << 20);
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
    while let Some(m) = sc.next_magic(p) {
        let Some(span) = sc.message_at(m) else {
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
                let end = m + span.len as usize;
                let (inner, searched) = intact_within(&mut sc, m + 1, end, &mut budget);
                let stop = inner.map_or(end, |s| s.offset as usize);
                rep.budget_exhausted |= !searched;
                rep.skipped.push(Skipped {
                    offset: span.offset,
                    len: (stop - m) as u64,
                    reason: if searched {
                        format!("damaged message: {e}")
                    } else {
                        format!("damaged message: {e} (not searched for messages inside: work budget exhausted)")
                    },
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

/// The first intact message starting in `from..end`, checking candidates
/// while `budget` (bytes) lasts; the flag is false when candidates were
/// left unchecked because it ran out.
fn intact_within(
    sc: &mut Scanner<'_>,
    from: usize,
    end: usize,
    budget: &mut usize,
) -> (Option<MessageSpan>, bool) {
    let mut q = from;
    while let Some(m) = sc.next_magic(q).filter(|&m| m < end) {
        if let Some(span) = sc.message_at(m) {
            if *budget == 0 {
                return (None, false);
            }
            *budget = budget.saturating_sub(span.len as usize);
            if check(&sc.buf()[span.range()], span.offset, sc.limits()).is_ok() {
                return (Some(span), true);
            }
        }
        q = m + 1;
    }
    (None, true)
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
