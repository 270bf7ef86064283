//! The concurrent scan of a source whose reads cost a round trip (a
//! remote object with a readahead, `spec/remote.md` §3.1): messages are
//! located from both ends of the source at once, each round reading one
//! window at the front and one at the back together; a window doubles
//! while the messages it meets end within the next one, and hops over a
//! message that does not; every byte is read once, and what a listing
//! needs of each message wholly read (its index, head and object
//! envelopes) is kept as the message is located.
//!
//! The sweep is sans-I/O: [`Sweep::reads`] names the ranges of the next
//! round and [`Sweep::take`] takes their bytes, so the blocking and the
//! asynchronous readers drive the same rounds and send the same requests.
//! Whatever a hop of the blocking locator would refuse ends the sweep in
//! that direction: at the front the locator takes over from there
//! (damage, streaming messages and torn tails are its job); at the back
//! the messages found from the back are dropped and the front goes on
//! alone. The front is canonical: the listing is the one the locator
//! gives (`spec/files.md` §2).

use std::ops::Range;

use bytes::Bytes;

use super::gathered::Gathered;
use super::reader::Kept;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::wire::header::{Postamble, Preamble};
use crate::wire::scan::MessageSpan;
use crate::wire::{END_MAGIC, MIN_MESSAGE_LEN, POSTAMBLE_LEN, PREAMBLE_LEN};

/// The largest window one direction reads in one request.
pub(crate) const MAX_WINDOW: u64 = 8 << 20;

/// Bytes copied out of the windows to keep for listings (message heads
/// and object envelopes) across one scan; messages beyond are read again
/// when listed.
pub(crate) const KEEP_BUDGET: u64 = 64 << 20;

/// One message located by the sweep, with what was kept of it.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) span: MessageSpan,
    pub(crate) flags: u16,
    pub(crate) kept: Kept,
}

/// How far the sweep got.
#[derive(Debug)]
pub(crate) struct Swept {
    /// The messages located, in file order.
    pub(crate) found: Vec<Found>,
    /// Where the front stopped on bytes a hop refuses: the locator goes
    /// on from here. `None`: the messages found cover the source.
    pub(crate) resume_at: Option<u64>,
    /// Whole catalogue candidates among the messages (no index frame):
    /// telling catalogues apart reads them from here.
    pub(crate) candidates: Gathered,
}

/// One direction's window: bytes its next contiguous read takes.
#[derive(Debug, Clone, Copy)]
struct Window {
    size: u64,
}

/// The state of a sweep between rounds.
#[derive(Debug)]
pub(crate) struct Sweep {
    size: u64,
    limits: Limits,
    first: u64,
    head_window: u64,
    held: Gathered,
    /// Every message before the front cursor is located.
    front: u64,
    fw: Window,
    /// Every message from the back cursor on is located (the source's
    /// size when the back is stopped).
    back: u64,
    bw: Window,
    back_on: bool,
    front_found: Vec<Found>,
    /// In reverse file order.
    back_found: Vec<Found>,
    candidates: Gathered,
    budget: u64,
    /// Set when the front met bytes a hop refuses.
    broken: Option<u64>,
}

/// What one direction needs next.
enum Need {
    /// Nothing: the cursors met (or the source ended).
    Done,
    /// Bytes from this offset on (contiguous reading).
    From(u64),
    /// The bytes of the message end at this offset (the front hops).
    EndAt(u64),
    /// The preamble of the message at this offset (the back hops).
    StartAt(u64, u64),
}

impl Sweep {
    /// A sweep of a source of `size` bytes whose first windows are
    /// `first` bytes, keeping `head_window` bytes of each message's start;
    /// `seen` are bytes read already (the source's cached prefix, the
    /// catalogue lookup's tail), which are not read again.
    pub(crate) fn new(
        size: u64,
        limits: &Limits,
        first: u64,
        head_window: u64,
        seen: Vec<(u64, Bytes)>,
    ) -> Self {
        let first = first.clamp(MIN_MESSAGE_LEN as u64, MAX_WINDOW);
        let mut held = Gathered::new(size);
        for (at, b) in seen {
            held.insert(at, b);
        }
        Sweep {
            size,
            limits: limits.clone(),
            first,
            head_window: head_window.max(PREAMBLE_LEN as u64),
            held,
            front: 0,
            fw: Window { size: first },
            back: size,
            bw: Window { size: first },
            back_on: true,
            front_found: Vec::new(),
            back_found: Vec::new(),
            candidates: Gathered::new(size),
            budget: KEEP_BUDGET,
            broken: None,
        }
    }

    /// The ranges the next round reads (at most two, disjoint, none held
    /// already); empty when the sweep is over.
    pub(crate) fn reads(&mut self) -> Vec<Range<u64>> {
        self.advance();
        if self.broken.is_some() {
            return Vec::new();
        }
        let f = match self.front_need() {
            Need::Done => return Vec::new(),
            Need::From(p) => self.contiguous_front(p),
            Need::EndAt(e) => self.hop_front(e),
            Need::StartAt(..) => None,
        };
        let b = match self.back_on.then(|| self.back_need()) {
            Some(Need::From(p)) => self.contiguous_back(p),
            Some(Need::StartAt(s, t)) => self.hop_back(s, t),
            _ => None,
        };
        let b = match (&f, b) {
            (Some(f), Some(mut b)) if b.start < f.end && f.start < b.end => {
                // Overlapping windows: the front's bytes are read once, by it.
                if f.start <= b.start {
                    b.start = f.end;
                } else {
                    b.end = f.start;
                }
                (b.start < b.end).then_some(b)
            }
            (_, b) => b,
        };
        let reads: Vec<_> = f.into_iter().chain(b).collect();
        if reads.is_empty() {
            // Nothing left to read, yet the front cannot hop: the bytes
            // it needs are held and refused.
            self.broken = Some(self.front);
        }
        reads
    }

    /// Takes the bytes of a round: each as long as asked, else an error
    /// (a short or long answer is the source's fault, not damage).
    pub(crate) fn take(&mut self, reads: &[Range<u64>], got: Result<Vec<Bytes>>) -> Result<()> {
        let got = got?;
        if got.len() != reads.len() {
            return Err(Error::invalid_argument(format!(
                "the byte source answered {} ranges with {} buffers",
                reads.len(),
                got.len()
            )));
        }
        for (r, b) in reads.iter().zip(got) {
            super::partial::check_len(r, &b)?;
            self.held.insert(r.start, b);
        }
        Ok(())
    }

    /// The messages located, and where the locator takes over.
    pub(crate) fn finish(mut self) -> Swept {
        self.advance();
        let resume_at = self.broken.or_else(|| {
            let met = self.front == self.back || (!self.back_on && self.front >= self.size);
            (!met).then_some(self.front)
        });
        let mut found = self.front_found;
        if resume_at.is_none() {
            found.extend(self.back_found.into_iter().rev());
        }
        Swept {
            found,
            resume_at,
            candidates: self.candidates,
        }
    }

    /// Hops both directions over every message the held bytes delimit.
    fn advance(&mut self) {
        loop {
            let front = self.hop_front_once();
            let back = self.back_on && self.hop_back_once();
            if !front && !back {
                break;
            }
        }
        self.held.forget_outside(self.front, self.back);
    }

    fn bytes(&self, r: Range<u64>) -> Option<Vec<u8>> {
        self.held.get(r).map(|b| b.into_owned())
    }

    /// The end of the message at `p` as its preamble declares it, when
    /// that preamble is held and a hop of the locator takes it; `Err` when
    /// the locator would not hop here.
    fn front_len(&self, p: u64) -> std::result::Result<Option<u64>, ()> {
        if p.saturating_add(MIN_MESSAGE_LEN as u64) > self.size {
            return Err(());
        }
        let Some(head) = self.bytes(p..p + PREAMBLE_LEN as u64) else {
            return Ok(None);
        };
        let t = Preamble::peek(&head).ok_or(())?.total_length;
        let fits = t >= MIN_MESSAGE_LEN as u64
            && t <= self.limits.max_message_len
            && p.checked_add(t).is_some_and(|e| e <= self.size);
        if !fits {
            return Err(());
        }
        Ok(Some(t))
    }

    /// One hop of the front, if the held bytes allow it.
    fn hop_front_once(&mut self) -> bool {
        let p = self.front;
        if self.broken.is_some() || (self.back_on && p == self.back) || p >= self.size {
            return false;
        }
        let t = match self.front_len(p) {
            Ok(Some(t)) => t,
            Ok(None) => return false,
            Err(()) => {
                self.broken = Some(p);
                return false;
            }
        };
        let end = p + t;
        if self.back_on && end > self.back {
            // The front does not land where the back began: the back's
            // messages are not the locator's.
            self.stop_back();
        }
        // A message within reach of the next window is read whole before
        // it is hopped over, so that what a listing needs of it is kept.
        let from = self.held.run_end(p);
        if from < end && !self.front_far(end, from) {
            return false;
        }
        let Some(magic) = self.bytes(end - 8..end) else {
            return false;
        };
        if magic != END_MAGIC {
            self.broken = Some(p);
            return false;
        }
        let span = MessageSpan { offset: p, len: t };
        let found = self.found(span);
        self.front_found.push(found);
        self.front = end;
        #[cfg(test)]
        super::index::counting::hopped();
        true
    }

    /// The message at the back cursor's start and length, when its
    /// postamble and preamble are held; `Err` when the back stops here.
    fn back_span(&self) -> std::result::Result<Option<(u64, u64)>, ()> {
        let b = self.back;
        let post_at = b.checked_sub(POSTAMBLE_LEN as u64).ok_or(())?;
        if post_at < self.front {
            return Err(());
        }
        let Some(post) = self.bytes(post_at..b) else {
            return Ok(None);
        };
        let t = Postamble::peek(&post).ok_or(())?.total_length;
        if t < MIN_MESSAGE_LEN as u64 || t > self.limits.max_message_len {
            return Err(());
        }
        let s = b.checked_sub(t).filter(|&s| s >= self.front).ok_or(())?;
        let Some(head) = self.bytes(s..s + PREAMBLE_LEN as u64) else {
            return Ok(Some((s, t)));
        };
        match Preamble::peek(&head) {
            Some(pre) if pre.total_length == t => Ok(Some((s, t))),
            _ => Err(()),
        }
    }

    /// One hop of the back, if the held bytes allow it.
    fn hop_back_once(&mut self) -> bool {
        if self.back <= self.front {
            return false;
        }
        let (s, t) = match self.back_span() {
            Ok(Some(st)) => st,
            Ok(None) => return false,
            Err(()) => {
                self.stop_back();
                return false;
            }
        };
        if self.held.get(s..s + PREAMBLE_LEN as u64).is_none() {
            return false;
        }
        let from = self.held.run_start(self.back);
        if s < from && !self.back_far(s, from) {
            return false;
        }
        let found = self.found(MessageSpan { offset: s, len: t });
        self.back_found.push(found);
        self.back = s;
        #[cfg(test)]
        super::index::counting::hopped();
        true
    }

    /// Stops the back: its messages are dropped and the front goes on to
    /// the end.
    fn stop_back(&mut self) {
        self.back_on = false;
        self.back_found.clear();
        self.back = self.size;
    }

    /// What is kept of the message at `span`, from the held bytes.
    fn found(&mut self, span: MessageSpan) -> Found {
        let flags = self
            .bytes(span.offset..span.offset + PREAMBLE_LEN as u64)
            .and_then(|h| Preamble::peek(&h))
            .map_or(0, |p| p.flags);
        let kept = super::reader::keep(
            &self.held,
            span,
            self.head_window,
            &self.limits,
            &mut self.budget,
        );
        let whole = span.offset..span.offset + span.len;
        if super::catalogue::may_be_catalogue(flags) && span.len <= self.budget {
            if let Some(b) = self.held.get(whole) {
                self.budget -= span.len;
                self.candidates
                    .insert(span.offset, Bytes::copy_from_slice(&b));
            }
        }
        Found { span, flags, kept }
    }

    /// What the front needs to hop on.
    fn front_need(&self) -> Need {
        let p = self.front;
        if (self.back_on && p >= self.back) || p >= self.size {
            return Need::Done;
        }
        match self.front_len(p) {
            Ok(Some(t)) => {
                let e = p + t;
                let from = self.held.run_end(p);
                if self.front_far(e, from) {
                    Need::EndAt(e)
                } else {
                    Need::From(from)
                }
            }
            _ => Need::From(self.held.run_end(p)),
        }
    }

    /// What the back needs to hop on.
    fn back_need(&self) -> Need {
        if self.back <= self.front {
            return Need::Done;
        }
        let from = self.held.run_start(self.back);
        match self.back_span() {
            Ok(Some((s, t))) if self.back_far(s, from) => Need::StartAt(s, t),
            _ => Need::From(from),
        }
    }

    /// Whether the front hops to the end of a message ending at `e`
    /// rather than reading on from `from`: its end magic lies beyond the
    /// next window.
    fn front_far(&self, e: u64, from: u64) -> bool {
        e - 8 >= from.saturating_add(self.fw.size)
    }

    /// Whether the back hops to the preamble of a message starting at `s`
    /// rather than reading on down to it from `from`: it lies before the
    /// next window.
    fn back_far(&self, s: u64, from: u64) -> bool {
        s + (PREAMBLE_LEN as u64) < from.saturating_sub(self.bw.size)
    }

    /// The front's next window from `from`, doubling the window.
    fn contiguous_front(&mut self, from: u64) -> Option<Range<u64>> {
        let end = from
            .saturating_add(self.fw.size)
            .min(self.held.next_held(from))
            .min(self.size);
        self.fw.size = (self.fw.size * 2).min(MAX_WINDOW);
        (from < end).then_some(from..end)
    }

    /// The front hops to the end magic of a message ending at `e`, reading
    /// with it the head of what follows (its preamble, header frames and
    /// index): large messages cost a head window each.
    fn hop_front(&mut self, e: u64) -> Option<Range<u64>> {
        self.fw.size = self.first;
        let from = self.held.run_end(e - 8);
        let end = e
            .saturating_add(self.head_window)
            .min(self.held.next_held(from))
            .min(self.size);
        (from < end).then_some(from..end)
    }

    /// The back's next window, ending at `to`, doubling the window.
    fn contiguous_back(&mut self, to: u64) -> Option<Range<u64>> {
        let floor = self.held.prev_held_end(to);
        let start = to.saturating_sub(self.bw.size).max(floor);
        self.bw.size = (self.bw.size * 2).min(MAX_WINDOW);
        (start < to).then_some(start..to)
    }

    /// The back hops to the preamble of the message at `s` (of `t`
    /// bytes), reading its head and the postamble before it.
    fn hop_back(&mut self, s: u64, t: u64) -> Option<Range<u64>> {
        self.bw.size = self.first;
        let to = s + self.head_window.min(t);
        let to = to.min(self.held.run_start(self.back));
        let floor = self.held.prev_held_end(s + PREAMBLE_LEN as u64);
        let start = s.saturating_sub(POSTAMBLE_LEN as u64).max(floor);
        let to = to.min(self.held.next_held(start));
        (start < to).then_some(start..to)
    }
}

/// Runs a sweep over a blocking source to its end.
pub(crate) fn run(src: &dyn super::ByteSource, mut sweep: Sweep) -> Result<Swept> {
    loop {
        let reads = sweep.reads();
        if reads.is_empty() {
            return Ok(sweep.finish());
        }
        let got = src.read_ranges(&reads);
        sweep.take(&reads, got)?;
    }
}
