//! What a located file holds outside its complete messages, reported the
//! same way by [`super::TgmFile`], for a local
//! path as for a URL (`spec/files.md` §2).

use super::index::TornTail;
use crate::error::{Error, Result};
use crate::wire::scan::MessageSpan;

/// Bytes of a file outside every complete message (`spec/files.md` §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Offset of the first such byte.
    pub offset: u64,
    /// Number of such bytes.
    pub len: u64,
    /// Why they form no message.
    pub reason: String,
    /// The bytes start a message cut short (an interrupted write or a
    /// truncated copy): tools call this "truncated".
    pub truncated: bool,
    /// Complete messages before it: the index the damaged one would have.
    pub message: usize,
}

const GAP: &str = "bytes between messages that form none";

/// Every byte range outside the complete messages `spans` (listed) and
/// `hidden` (catalogue messages, `spec/files.md` §9.1) of a source of
/// `size` bytes whose trailing bytes are `torn`, in file order; each
/// damage's message index counts listed messages only.
pub(crate) fn damage_of(
    spans: &[MessageSpan],
    hidden: &[MessageSpan],
    torn: Option<&TornTail>,
    size: u64,
) -> Vec<Damage> {
    let gap = |offset, len, message| Damage {
        offset,
        len,
        reason: GAP.into(),
        truncated: false,
        message,
    };
    let mut out = Vec::new();
    let mut all: Vec<(MessageSpan, bool)> = spans
        .iter()
        .map(|s| (*s, true))
        .chain(hidden.iter().map(|s| (*s, false)))
        .collect();
    all.sort_by_key(|(s, _)| s.offset);
    let mut pos = 0;
    let mut i = 0;
    for (s, listed) in all {
        if s.offset > pos {
            out.push(gap(pos, s.offset - pos, i));
        }
        pos = pos.max(s.offset + s.len);
        i += usize::from(listed);
    }
    match torn {
        Some(t) => out.push(Damage {
            offset: t.offset,
            len: t.len,
            reason: t.reason.clone(),
            truncated: t.is_truncation(),
            message: spans.len(),
        }),
        None if pos < size => out.push(gap(pos, size - pos, spans.len())),
        None => {}
    }
    out
}

/// `Ok` when a source of `size` bytes is wholly complete messages (or
/// empty); otherwise the error for its first damage: `Truncated` for a
/// message cut short, `Framing` for bytes that form none (or for a source
/// with no message at all), at the damage's offset and message index.
pub(crate) fn check_intact(
    spans: &[MessageSpan],
    hidden: &[MessageSpan],
    torn: Option<&TornTail>,
    size: u64,
) -> Result<()> {
    let found = damage_of(spans, hidden, torn, size);
    let Some(d) = found.first() else {
        return Ok(());
    };
    if spans.is_empty() && hidden.is_empty() && !d.truncated {
        return Err(Error::framing(format!(
            "not a Tensogram file (no message found in {size} bytes)"
        ))
        .at(0));
    }
    let e = if d.truncated {
        Error::truncated(format!(
            "truncated: the message starting here is cut short ({} bytes of it remain)",
            d.len
        ))
    } else {
        Error::framing(format!(
            "damaged: {} bytes form no message ({})",
            d.len, d.reason
        ))
    };
    Err(e.at(d.offset).in_message(d.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::file::index::INCOMPLETE;

    fn span(offset: u64, len: u64) -> MessageSpan {
        MessageSpan { offset, len }
    }

    #[test]
    fn gaps_and_tails_are_reported_in_order_and_the_first_is_the_error() {
        let spans = [span(0, 10), span(14, 10)];
        let cut = TornTail {
            offset: 24,
            len: 6,
            reason: INCOMPLETE.into(),
        };
        let d = damage_of(&spans, &[], Some(&cut), 30);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].offset, d[0].len, d[0].message), (10, 4, 1));
        assert!(!d[0].truncated);
        assert_eq!((d[1].offset, d[1].len, d[1].message), (24, 6, 2));
        assert!(d[1].truncated);
        let e = check_intact(&spans, &[], Some(&cut), 30).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (&ErrorKind::Framing, Some(10)));

        let e =
            check_intact(&spans[..1], &[], Some(&TornTail { offset: 10, ..cut }), 16).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (&ErrorKind::Truncated, Some(10)));
        assert!(e.to_string().contains("truncated"), "{e}");

        assert!(check_intact(&spans[..1], &[], None, 10).is_ok());
        assert!(check_intact(&[], &[], None, 0).is_ok());
        let e = check_intact(&[], &[], None, 5).unwrap_err();
        assert!(e.to_string().contains("not a Tensogram file"), "{e}");
    }
}
