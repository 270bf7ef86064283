//! Locating messages in a file in time proportional to their number.
//! See `spec/files.md` §2.

use std::collections::BTreeMap;

use super::source::ByteSource;
use super::walk::{read_array, walk_frames, walk_streaming, Broken, Chain, Walks};
use crate::limits::Limits;
use crate::wire::header::Preamble;
use crate::wire::scan::{find_magic, MessageSpan, Scanner};
use crate::wire::{END_MAGIC, MAGIC, MIN_MESSAGE_LEN, PREAMBLE_LEN};

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

impl TornTail {
    /// Whether the bytes are the start of a message cut short (an
    /// interrupted write or a truncated copy), not bytes of another kind.
    pub fn is_truncation(&self) -> bool {
        self.reason == INCOMPLETE
    }
}

pub(crate) const INCOMPLETE: &str = "a message starts here but is incomplete (interrupted write?)";

/// Bytes of the remainder read at once by the damage scan; a remainder
/// this short or shorter is scanned whole, exactly as [`Scanner`] does.
pub(crate) const SLOW_WINDOW: u64 = 8 << 20;

/// Indexes the messages of a file held in memory, as [`index_messages`]
/// does for any byte source.
pub(crate) fn index_bytes(bytes: &[u8], limits: &Limits) -> (Vec<MessageSpan>, Option<TornTail>) {
    index_messages(&bytes, 0, limits)
}

/// Delimits a message with a declared length at `p` by reading its
/// preamble and its end magic only.
fn hop_at(src: &dyn ByteSource, p: u64, size: u64, limits: &Limits) -> Option<u64> {
    let head = read_array::<PREAMBLE_LEN>(src, p)?;
    hop_from(src, &head, p, size, limits, &mut None)
}

/// [`hop_at`] with the preamble at `p` already read. The end magic is read
/// together with the preamble that follows it, if any, which is left in
/// `next`: one read per message.
fn hop_from(
    src: &dyn ByteSource,
    head: &[u8; PREAMBLE_LEN],
    p: u64,
    size: u64,
    limits: &Limits,
    next: &mut Option<[u8; PREAMBLE_LEN]>,
) -> Option<u64> {
    let t = Preamble::peek(head)?.total_length;
    let end = p.checked_add(t)?;
    if t < MIN_MESSAGE_LEN as u64 || t > limits.max_message_len || end > size {
        return None;
    }
    #[cfg(test)]
    counting::hopped();
    let magic = if end.saturating_add(PREAMBLE_LEN as u64) <= size {
        let w = read_array::<{ 8 + PREAMBLE_LEN }>(src, end - 8)?;
        let mut pre = [0u8; PREAMBLE_LEN];
        pre.copy_from_slice(&w[8..]);
        *next = Some(pre);
        [w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]
    } else {
        read_array::<8>(src, end - 8)?
    };
    (&magic == END_MAGIC).then_some(t)
}

/// Hops from message to message using declared lengths, and follows the
/// frame headers of streaming messages; every read is a few bytes. Where
/// neither delimits a message (damage, an interrupted write) the rest is
/// scanned in windows of [`SLOW_WINDOW`] bytes. Returns the spans and the
/// torn tail, if any.
pub(crate) fn index_messages(
    src: &dyn ByteSource,
    start: u64,
    limits: &Limits,
) -> (Vec<MessageSpan>, Option<TornTail>) {
    index_messages_with(src, start, limits, &mut |_, _| {}, &mut Passes::default())
}

/// What a pass of the locator leaves for the next pass over the same
/// source from the same or a later message, run again with more bytes
/// (the asynchronous reader's steps, `spec/files.md` §7.1): its walks of
/// frames, and how far each scan of damage got.
#[derive(Debug, Default)]
pub(crate) struct Passes {
    walks: Walks,
    /// By where a scan began (the end of the last complete message): the
    /// window it had reached and the offset in that window of the message
    /// magic it was about to try, every magic before it tried from bytes
    /// present. `None`: passes do not resume.
    scans: Option<BTreeMap<u64, (u64, usize)>>,
}

impl Passes {
    /// Passes that resume the walks and scans of the ones before.
    pub(crate) fn resumable() -> Self {
        Passes {
            walks: Walks::resumable(),
            scans: Some(BTreeMap::new()),
        }
    }

    /// Forgets what passes learnt before `start`: a pass from `start`
    /// reads nothing before it.
    pub(crate) fn forget_before(&mut self, start: u64) {
        self.walks.forget_before(start);
        if let Some(s) = &mut self.scans {
            *s = s.split_off(&start);
        }
    }

    /// Where the scan beginning at `from` goes on.
    fn scan_from(&self, from: u64) -> Option<(u64, usize)> {
        self.scans.as_ref()?.get(&from).copied()
    }

    /// The scan beginning at `from` is about to search the window
    /// beginning at `window` from its byte `at`; kept unless a read of this
    /// pass lacked bytes (a magic before it may have failed for that alone).
    fn scanning(&mut self, from: u64, window: u64, at: usize) {
        if let Some(s) = self.scans.as_mut().filter(|_| !super::fetched::missed()) {
            s.insert(from, (window, at));
        }
    }
}

/// [`index_messages`], calling `at_hop(p, preamble)` at each position `p`
/// the hop reaches, with the preamble read there, before reading past the
/// message: a reader with readahead still holds that message's head, which
/// `at_hop` may look into (to read its index) without another request.
/// Frame walks and scans of damage go on from where those of earlier
/// `passes` stopped.
pub(crate) fn index_messages_with(
    src: &dyn ByteSource,
    start: u64,
    limits: &Limits,
    at_hop: &mut dyn FnMut(u64, Option<&[u8; PREAMBLE_LEN]>),
    passes: &mut Passes,
) -> (Vec<MessageSpan>, Option<TornTail>) {
    let mut spans = Vec::new();
    let Ok(size) = src.len() else {
        return (spans, None);
    };
    let mut p = start;
    // End of the last complete message: where a torn tail would begin.
    let mut tail_from = start;
    // The preamble at `p`, when the last hop read it already.
    let mut next: Option<[u8; PREAMBLE_LEN]> = None;
    'hop: while p < size {
        let head = next.take().or_else(|| read_array::<PREAMBLE_LEN>(src, p));
        at_hop(p, head.as_ref());
        let hop = head.and_then(|h| hop_from(src, &h, p, size, limits, &mut next));
        if hop.is_none() {
            // Whatever a failed hop read does not start the next message.
            next = None;
        }
        let len = hop.or_else(|| walk_streaming(src, p, size, limits, &mut passes.walks));
        if let Some(len) = len {
            spans.push(MessageSpan { offset: p, len });
            p += len;
            tail_from = p;
            continue;
        }
        // Damage or an interrupted write: look for the next message, from
        // where an earlier pass's scan from here got to.
        let mut resumed = passes.scan_from(tail_from);
        if let Some((window, _)) = resumed {
            p = window;
        }
        loop {
            let rest = size - p;
            if rest <= SLOW_WINDOW {
                let torn = scan_rest(src, p, tail_from, limits, &mut spans);
                return (spans, torn);
            }
            let appended = p == tail_from;
            if appended
                && walk_frames(src, p, size, limits, &mut passes.walks, Broken::Walked)
                    == Chain::RunsOut
            {
                // An interrupted append: nothing in it is looked into.
                let torn = TornTail {
                    offset: p,
                    len: rest,
                    reason: INCOMPLETE.into(),
                };
                return (spans, Some(torn));
            }
            let Ok(w) = src.read_bytes(p..p + SLOW_WINDOW) else {
                return (spans, unreadable(tail_from, size));
            };
            let first = if p == tail_from { 1 } else { 0 };
            let mut q = resumed.take().map_or(first, |(_, m)| m);
            while let Some(m) = find_magic(&w, q) {
                passes.scanning(tail_from, p, m);
                #[cfg(test)]
                counting::magic_tried();
                let at = p + m as u64;
                let len = hop_at(src, at, size, limits)
                    .or_else(|| walk_streaming(src, at, size, limits, &mut passes.walks));
                if let Some(len) = len {
                    spans.push(MessageSpan { offset: at, len });
                    p = at + len;
                    tail_from = p;
                    continue 'hop;
                }
                // A step of the asynchronous reader that lacked a byte is
                // thrown away and run again (§7.1): trying the window's
                // other magics now would be work for nothing.
                if super::fetched::missed() {
                    return (spans, None);
                }
                q = m + 1;
            }
            // A magic may straddle the window's end.
            p += SLOW_WINDOW - (MAGIC.len() as u64 - 1);
            passes.scanning(tail_from, p, 0);
        }
    }
    (spans, None)
}

fn unreadable(from: u64, size: u64) -> Option<TornTail> {
    Some(TornTail {
        offset: from,
        len: size - from,
        reason: "unreadable".into(),
    })
}

/// Forward scan of the last bytes, from `p` to the end, with
/// resynchronisation; `tail_from` is where the last complete message ended.
fn scan_rest(
    src: &dyn ByteSource,
    p: u64,
    tail_from: u64,
    limits: &Limits,
    spans: &mut Vec<MessageSpan>,
) -> Option<TornTail> {
    let size = src.len().ok()?;
    let rest: std::borrow::Cow<'_, [u8]> = match src.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s.get(usize::try_from(p).ok()?..)?),
        None => match src.read_bytes(p..size) {
            Ok(b) => std::borrow::Cow::Owned(b.into()),
            Err(_) => return unreadable(tail_from, size),
        },
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
        if m == last_end && (last_end > 0 || p == tail_from) && sc.is_cut_short(m) {
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
    let from = if last_end > 0 || p == tail_from {
        p + last_end as u64
    } else {
        tail_from
    };
    // Bytes that form no message lie between `from` and `p`.
    let junk_before = from < p;
    (from < size).then(|| {
        let why = if cut_short {
            INCOMPLETE.to_string()
        } else if size - from < MIN_MESSAGE_LEN as u64 {
            "fewer bytes than the smallest message".to_string()
        } else if !junk_before && rest[last_end..].starts_with(MAGIC) {
            INCOMPLETE.to_string()
        } else {
            "bytes that form no message".to_string()
        };
        TornTail {
            offset: from,
            len: size - from,
            reason: why,
        }
    })
}

/// The locator's work on this thread, for tests that count it: frame
/// headers read by walks, message magics tried by scans of damage, and
/// messages hopped over by their declared length (by the locator or the
/// concurrent scan, [`super::sweep`]).
#[cfg(test)]
pub(crate) mod counting {
    use std::cell::Cell;

    thread_local! {
        static WORK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        static HOPS: Cell<u64> = const { Cell::new(0) };
    }

    pub(crate) fn hopped() {
        HOPS.with(|h| h.set(h.get() + 1));
    }

    /// Messages hopped over on this thread since the last call.
    pub(crate) fn take_hops() -> u64 {
        HOPS.with(|h| h.replace(0))
    }

    pub(crate) fn frame_header_read() {
        WORK.with(|w| w.set((w.get().0 + 1, w.get().1)));
    }

    pub(super) fn magic_tried() {
        WORK.with(|w| w.set((w.get().0, w.get().1 + 1)));
    }

    /// Frame headers read and magics tried on this thread since the last
    /// call.
    pub(crate) fn take() -> (u64, u64) {
        WORK.with(|w| w.replace((0, 0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::source::CountingSource;
    use crate::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

    fn message_with(payload: &[u8]) -> Vec<u8> {
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![payload.len() as u64]);
        crate::encode(
            &GlobalMetadata::default(),
            &[(&d, payload)],
            &EncodeOptions::new(),
        )
        .unwrap()
    }

    fn sized(n: usize, fill: u8) -> Vec<u8> {
        message_with(&vec![fill; n])
    }

    #[test]
    fn damage_before_a_long_remainder_is_scanned_in_windows() {
        let mut file = sized(1000, 1);
        file.extend_from_slice(&[0x55; 100]);
        for i in 0..10 {
            file.extend(sized(1 << 20, i));
        }
        let cut = sized(3000, 9);
        file.extend_from_slice(&cut[..2000]);
        assert!(file.len() as u64 > SLOW_WINDOW + (1 << 20));
        let src = CountingSource::new(file.clone());
        let (spans, torn) = index_messages(&src, 0, &Limits::default());
        assert_eq!(spans, crate::wire::scan::scan(&file));
        assert_eq!(spans.len(), 11);
        let end = spans.last().map(|s| s.offset + s.len).unwrap();
        let torn = torn.unwrap();
        assert_eq!((torn.offset, torn.len), (end, 2000));
        assert_eq!(torn.reason, INCOMPLETE);
        // One window over the damage, then hops; never the whole file.
        assert!(src.bytes() <= SLOW_WINDOW + (1 << 16), "{}", src.bytes());
    }

    #[test]
    fn a_long_interrupted_write_is_not_looked_into() {
        let inner = sized(64, 7);
        let mut payload = vec![0u8; 12 << 20];
        payload[5 << 20..(5 << 20) + inner.len()].copy_from_slice(&inner);
        let first = sized(1000, 1);
        let outer = message_with(&payload);
        let mut file = first.clone();
        file.extend_from_slice(&outer[..10 << 20]);
        let src = CountingSource::new(file.clone());
        let (spans, torn) = index_messages(&src, 0, &Limits::default());
        assert_eq!(
            spans.len(),
            1,
            "the message inside the payload is not indexed"
        );
        let torn = torn.unwrap();
        assert_eq!(torn.offset, first.len() as u64);
        assert_eq!(torn.reason, INCOMPLETE);
        assert!(src.bytes() < 1 << 16, "{}", src.bytes());
    }

    #[test]
    fn junk_after_the_last_message_starts_the_torn_tail_where_it_ends() {
        let mut file = sized(100, 1);
        let end = file.len() as u64;
        file.extend(std::iter::repeat_n(0x33u8, (SLOW_WINDOW + 5000) as usize));
        let (spans, torn) = index_messages(&file, 0, &Limits::default());
        assert_eq!(spans.len(), 1);
        let torn = torn.unwrap();
        assert_eq!((torn.offset, torn.len), (end, file.len() as u64 - end));
        assert_eq!(torn.reason, "bytes that form no message");
    }
}
