//! Following the frame headers of a message to its postamble
//! (`spec/files.md` §2), resumably: a walk can start where an earlier
//! walk of the same message stopped, so that the asynchronous reader,
//! which runs the locator again after each fetched range, walks each
//! frame a bounded number of times (§7.1).

use std::collections::{BTreeMap, HashSet};

use super::source::ByteSource;
use crate::limits::Limits;
use crate::wire::header::{FrameHeader, Postamble, Preamble};
use crate::wire::{align_up, ALIGN, END_MAGIC, FRAME_END, FRAME_HEADER_LEN, FRAME_MAGIC};
use crate::wire::{POSTAMBLE_LEN, PREAMBLE_LEN};

/// `N` bytes at `offset`, or `None` when out of range or unreadable.
pub(super) fn read_array<const N: usize>(src: &dyn ByteSource, offset: u64) -> Option<[u8; N]> {
    let mut b = [0u8; N];
    src.read_at(offset, &mut b).ok().map(|()| b)
}

/// Where the frames of a message that follow its preamble lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chain {
    /// To a valid postamble: a whole message of this length.
    Whole(u64),
    /// Past the end of the source: an interrupted write.
    RunsOut,
    /// Anywhere else.
    Broken,
}

/// Every this many positions of a chain that ended in no whole message
/// is remembered: a later walk that joins the chain meets a remembered
/// one within this many frames, and the record stays small.
const MARK_EVERY: usize = 16;

/// How far a walk of the frames of one message got: every frame before
/// `rel` (relative to the message's start) was checked, header and end
/// magic. Any walk of that message passes this state, whatever the walk
/// remembered, so another walk of it may start here.
#[derive(Debug, Default)]
struct Cursor {
    /// Where the next frame, or the postamble, begins.
    rel: u64,
    /// Frames checked.
    frames: usize,
    /// Every [`MARK_EVERY`]th position checked, from the first.
    marks: Vec<u64>,
}

impl Cursor {
    fn start() -> Self {
        Cursor {
            rel: PREAMBLE_LEN as u64,
            ..Cursor::default()
        }
    }

    /// Records the frame checked at `pos`, the next beginning at `rel`.
    fn passed(&mut self, pos: u64, rel: u64) {
        if self.frames.is_multiple_of(MARK_EVERY) {
            self.marks.push(pos);
        }
        self.frames += 1;
        self.rel = rel;
    }
}

/// What walks of frames remember for the walks after them.
///
/// Frame positions, with the alignment of the message they were reached
/// from (frames align relative to their message), whose chain ended in no
/// whole message for a reason in the bytes alone: walks from many
/// candidates over one damaged run of frames stay linear in its frames.
/// And, when made [`Walks::resumable`], where each walk stopped, by the
/// message's offset: a walk of a message walked before starts there.
#[derive(Debug, Default)]
pub(crate) struct Walks {
    failed: HashSet<(u64, u64)>,
    /// `None`: walks are not resumed (one pass over the source).
    cursors: Option<BTreeMap<u64, Cursor>>,
}

impl Walks {
    /// Walks that keep where each one stopped, for passes run again over
    /// more bytes (the asynchronous reader's steps, `spec/files.md` §7.1).
    pub(crate) fn resumable() -> Self {
        Walks {
            failed: HashSet::new(),
            cursors: Some(BTreeMap::new()),
        }
    }

    /// Forgets where the walks of messages before `start` stopped: a pass
    /// from `start` walks none of them.
    pub(crate) fn forget_before(&mut self, start: u64) {
        if let Some(c) = &mut self.cursors {
            *c = c.split_off(&start);
        }
    }
}

/// Whether a walk skips the chains [`Walks`] knows end in no whole
/// message, or walks them to tell one that runs out from one that breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Broken {
    Skipped,
    Walked,
}

/// Follows the frame headers of the message at `p` to its postamble,
/// reading each frame header, each frame end magic and the postamble only,
/// from where `walks` says a walk of it stopped.
pub(super) fn walk_frames(
    src: &dyn ByteSource,
    p: u64,
    size: u64,
    limits: &Limits,
    walks: &mut Walks,
    broken: Broken,
) -> Chain {
    let Walks { failed, cursors } = walks;
    let failed = (broken == Broken::Skipped).then_some(failed);
    walk(src, p, size, limits, failed, cursors.as_mut())
}

/// A whole streaming message at `p`, by [`walk_frames`].
pub(super) fn walk_streaming(
    src: &dyn ByteSource,
    p: u64,
    size: u64,
    limits: &Limits,
    walks: &mut Walks,
) -> Option<u64> {
    let pre = Preamble::peek(&read_array::<PREAMBLE_LEN>(src, p)?)?;
    if pre.total_length != 0 {
        return None;
    }
    match walk_frames(src, p, size, limits, walks, Broken::Skipped) {
        Chain::Whole(len) => Some(len),
        _ => None,
    }
}

/// The walk itself: from where `cursors` says a walk of `p` stopped (else
/// its first frame), checking `failed`, if given, at each position and
/// adding the positions of a chain that broke to it; where it stopped
/// goes back to `cursors`.
fn walk(
    src: &dyn ByteSource,
    p: u64,
    size: u64,
    limits: &Limits,
    mut failed: Option<&mut HashSet<(u64, u64)>>,
    mut cursors: Option<&mut BTreeMap<u64, Cursor>>,
) -> Chain {
    let Some(pre) = read_array::<PREAMBLE_LEN>(src, p).and_then(|b| Preamble::peek(&b)) else {
        return Chain::Broken;
    };
    let declared_end = (pre.total_length != 0).then(|| p.saturating_add(pre.total_length));
    let class = p % ALIGN as u64;
    let mut cur = cursors
        .as_mut()
        .and_then(|c| c.remove(&p))
        .unwrap_or_else(Cursor::start);
    // The position where the chain ended, when it ended at a frame or
    // postamble it read, and whether for a reason in the bytes alone (not
    // in this candidate's declared length or the limits): only then does
    // any walk that reaches the same positions end the same way.
    let (end, last, intrinsic) = loop {
        let pos = p.saturating_add(cur.rel);
        if failed.as_ref().is_some_and(|f| f.contains(&(pos, class))) {
            break (Chain::Broken, None, true);
        }
        if cur.rel > limits.max_message_len || cur.frames > limits.max_frames {
            break (Chain::Broken, None, false);
        }
        match frame_at(src, p, pos, size, declared_end, limits) {
            Ok(rel) => cur.passed(pos, rel),
            Err((end, intrinsic)) => break (end, Some(pos), intrinsic),
        }
    };
    // With a declared length inside the source, the message is not cut
    // short by the end of the source.
    let end = match end {
        Chain::RunsOut if declared_end.is_some_and(|e| e <= size) => Chain::Broken,
        e => e,
    };
    let broken = !matches!(end, Chain::Whole(_)) && intrinsic && declared_end.is_none();
    // A step of the asynchronous reader that lacked a byte may have broken
    // the chain there: only a walk over bytes all present is remembered.
    if let Some(f) = failed
        .as_mut()
        .filter(|_| broken && !super::fetched::missed())
    {
        let tail = last.filter(|_| cur.frames.is_multiple_of(MARK_EVERY));
        f.extend(cur.marks.iter().copied().chain(tail).map(|q| (q, class)));
    }
    // A walk that checked no frame leaves nothing to start from.
    if let Some(c) = cursors.filter(|_| cur.frames > 0) {
        c.insert(p, cur);
    }
    end
}

/// Checks the frame at `pos` of the message at `p` (header and end
/// magic, within `declared_end` and the limits): where the next frame begins, relative
/// to `p`; or, when the chain ends here, how and whether for a reason in
/// the bytes alone.
fn frame_at(
    src: &dyn ByteSource,
    p: u64,
    pos: u64,
    size: u64,
    declared_end: Option<u64>,
    limits: &Limits,
) -> Result<u64, (Chain, bool)> {
    let Some(b) = read_array::<FRAME_HEADER_LEN>(src, pos) else {
        return Err((runs_out_or_broken(src, pos, size), true));
    };
    #[cfg(test)]
    super::index::counting::frame_header_read();
    if b[..2] != FRAME_MAGIC[..] {
        let Some(post) = read_array::<POSTAMBLE_LEN>(src, pos) else {
            return Err((runs_out_or_broken(src, pos, size), true));
        };
        let Some(q) = Postamble::peek(&post) else {
            return Err((Chain::Broken, true));
        };
        let len = pos - p + POSTAMBLE_LEN as u64;
        let whole = q.check_length(len, pos).is_ok();
        let fits = len <= limits.max_message_len && declared_end.is_none_or(|e| e == p + len);
        return Err((
            if whole && fits {
                Chain::Whole(len)
            } else {
                Chain::Broken
            },
            false,
        ));
    }
    let Some(h) = FrameHeader::peek(&b) else {
        return Err((Chain::Broken, true));
    };
    let end = pos.saturating_add(h.total_length);
    if declared_end.is_some_and(|e| end > e) {
        return Err((Chain::Broken, false));
    }
    if end > size {
        return Err((Chain::RunsOut, true));
    }
    if read_array::<4>(src, end - 4).as_ref() != Some(FRAME_END) {
        return Err((Chain::Broken, true));
    }
    Ok(align_up(end - p))
}

/// Fewer bytes than a frame header or a postamble remain at `pos`: they are
/// a message cut short if they begin like one of the two.
fn runs_out_or_broken(src: &dyn ByteSource, pos: u64, size: u64) -> Chain {
    let n = size.saturating_sub(pos).min(POSTAMBLE_LEN as u64) as usize;
    let mut b = [0u8; POSTAMBLE_LEN];
    if src.read_at(pos, &mut b[..n]).is_err() {
        return Chain::Broken;
    }
    let b = &b[..n];
    let frame = FRAME_MAGIC.starts_with(&b[..n.min(2)]);
    let post = b.get(16..).is_none_or(|m| END_MAGIC.starts_with(m));
    if frame || post {
        Chain::RunsOut
    } else {
        Chain::Broken
    }
}
