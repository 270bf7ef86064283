//! Bytes of a source fetched so far, by offset: what the concurrent scan
//! of a remote source reads its messages from, so that no byte is
//! requested twice (`spec/remote.md` §3.1). Reads of bytes not held fail;
//! [`Overlay`] sends them to the source instead, and [`Recording`] keeps
//! what another reader fetched for the scan to start from.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

use bytes::Bytes;

use super::source::{ByteSource, Layer};
use crate::error::{Error, Result};

/// Disjoint runs of a source's bytes, each at its offset, out of a source
/// of `size` bytes.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    size: u64,
    parts: BTreeMap<u64, Bytes>,
}

impl Gathered {
    /// Nothing held yet of a source of `size` bytes.
    pub(crate) fn new(size: u64) -> Self {
        Gathered {
            size,
            parts: BTreeMap::new(),
        }
    }

    /// The part holding byte `pos`, with its offset.
    fn part_at(&self, pos: u64) -> Option<(u64, &Bytes)> {
        let (&s, b) = self.parts.range(..=pos).next_back()?;
        (s + b.len() as u64 > pos).then_some((s, b))
    }

    /// Keeps the bytes `b` read at `at`, except those held already.
    pub(crate) fn insert(&mut self, at: u64, b: Bytes) {
        let end = at.saturating_add(b.len() as u64).min(self.size);
        let mut pos = at;
        while pos < end {
            if let Some((s, p)) = self.part_at(pos) {
                pos = s + p.len() as u64;
                continue;
            }
            let next = self
                .parts
                .range(pos..)
                .next()
                .map_or(end, |(&s, _)| s.min(end));
            let piece = b.slice((pos - at) as usize..(next - at) as usize);
            self.parts.insert(pos, piece);
            pos = next;
        }
    }

    /// The first byte from `pos` on that is not held (`pos` itself when
    /// it is not held).
    pub(crate) fn run_end(&self, mut pos: u64) -> u64 {
        while let Some((s, p)) = self.part_at(pos) {
            pos = s + p.len() as u64;
        }
        pos
    }

    /// Where the bytes held without a gap up to `end` (excluded) begin
    /// (`end` itself when the byte before it is not held).
    pub(crate) fn run_start(&self, mut end: u64) -> u64 {
        while let Some((s, _)) = end.checked_sub(1).and_then(|e| self.part_at(e)) {
            end = s;
        }
        end
    }

    /// The first held byte at or after `pos`, else the source's size.
    pub(crate) fn next_held(&self, pos: u64) -> u64 {
        if self.part_at(pos).is_some() {
            return pos;
        }
        self.parts
            .range(pos..)
            .next()
            .map_or(self.size, |(&s, _)| s)
    }

    /// The end of the last held part that ends at or before `pos`, else 0.
    pub(crate) fn prev_held_end(&self, pos: u64) -> u64 {
        self.parts
            .range(..pos)
            .rev()
            .map(|(&s, b)| s + b.len() as u64)
            .find(|&e| e <= pos)
            .unwrap_or(0)
    }

    /// The bytes of `r` when every one is held: borrowed from one part, or
    /// copied from the adjacent parts that hold them.
    pub(crate) fn get(&self, r: Range<u64>) -> Option<Cow<'_, [u8]>> {
        if r.start > r.end || r.end > self.size {
            return None;
        }
        let (s, p) = self.part_at(r.start).or_else(|| {
            // An empty range at a held part's end, or anywhere.
            (r.start == r.end).then_some((r.start, &EMPTY))
        })?;
        let pend = s + p.len() as u64;
        if r.end <= pend {
            return Some(Cow::Borrowed(
                &p[(r.start - s) as usize..(r.end - s) as usize],
            ));
        }
        let mut out = p[(r.start - s) as usize..].to_vec();
        let mut pos = pend;
        while pos < r.end {
            let (s, p) = self.part_at(pos)?;
            let take = (r.end.min(s + p.len() as u64) - pos) as usize;
            out.extend_from_slice(&p[(pos - s) as usize..(pos - s) as usize + take]);
            pos += take as u64;
        }
        Some(Cow::Owned(out))
    }

    /// Drops every part that lies wholly before `lo` or wholly from `hi`
    /// on: the bytes no reader of them needs any more.
    pub(crate) fn forget_outside(&mut self, lo: u64, hi: u64) {
        self.parts
            .retain(|&s, b| s + b.len() as u64 > lo && s < hi && !b.is_empty());
    }

    /// Bytes held.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.parts.values().map(|b| b.len() as u64).sum()
    }
}

static EMPTY: Bytes = Bytes::new();

fn not_held(r: &Range<u64>) -> Error {
    Error::truncated(format!(
        "bytes {}..{} were not fetched by the scan",
        r.start, r.end
    ))
    .at(r.start)
}

/// The held bytes as a source of the whole length: reads of bytes not
/// held fail and send no request.
impl ByteSource for Gathered {
    fn len(&self) -> Result<u64> {
        Ok(self.size)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let r = offset..offset.saturating_add(buf.len() as u64);
        let b = self.get(r.clone()).ok_or_else(|| not_held(&r))?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn read_bytes(&self, r: Range<u64>) -> Result<Bytes> {
        super::source::range_len(&r)?;
        if let Some((s, p)) = self.part_at(r.start) {
            if r.end <= s + p.len() as u64 {
                return Ok(p.slice((r.start - s) as usize..(r.end - s) as usize));
            }
        }
        let b = self.get(r.clone()).ok_or_else(|| not_held(&r))?;
        Ok(Bytes::copy_from_slice(&b))
    }
}

/// Reads served from the held bytes where they hold the whole range, from
/// the source otherwise.
pub(crate) struct Overlay<'s> {
    pub(crate) held: &'s Gathered,
    pub(crate) src: &'s dyn ByteSource,
}

impl<'s> Layer for Overlay<'s> {
    type Inner = dyn ByteSource + 's;
    fn inner(&self) -> &Self::Inner {
        self.src
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let r = offset..offset.saturating_add(buf.len() as u64);
        match self.held.get(r) {
            Some(b) => {
                buf.copy_from_slice(&b);
                Ok(())
            }
            None => self.src.read_at(offset, buf),
        }
    }
    fn serve_bytes(&self, r: Range<u64>) -> Result<Bytes> {
        match self.held.read_bytes(r.clone()) {
            Ok(b) => Ok(b),
            Err(_) => self.src.read_bytes(r),
        }
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        if let Some(v) = ranges
            .iter()
            .map(|r| self.held.read_bytes(r.clone()).ok())
            .collect::<Option<Vec<_>>>()
        {
            return Ok(v);
        }
        self.src.read_ranges(ranges)
    }
}

/// Reads through to the source, keeping a copy of each read no longer
/// than `cap` bytes: the catalogue lookup's tail read, which a scan that
/// follows starts from instead of reading it again.
pub(crate) struct Recording<'s> {
    src: &'s dyn ByteSource,
    cap: u64,
    seen: Mutex<Vec<(u64, Bytes)>>,
}

impl<'s> Recording<'s> {
    pub(crate) fn new(src: &'s dyn ByteSource, cap: u64) -> Self {
        Recording {
            src,
            cap,
            seen: Mutex::new(Vec::new()),
        }
    }

    /// What was read, by offset.
    pub(crate) fn into_seen(self) -> Vec<(u64, Bytes)> {
        self.seen.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    fn keep(&self, at: u64, b: &Bytes) {
        if (b.len() as u64) <= self.cap {
            let mut s = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            s.push((at, b.clone()));
        }
    }
}

impl<'s> Layer for Recording<'s> {
    type Inner = dyn ByteSource + 's;
    fn inner(&self) -> &Self::Inner {
        self.src
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let b = self.serve_bytes(offset..end)?;
        super::partial::check_len(&(offset..end), &b)?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn serve_bytes(&self, r: Range<u64>) -> Result<Bytes> {
        let b = self.src.read_bytes(r.clone())?;
        self.keep(r.start, &b);
        Ok(b)
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let v = self.src.read_ranges(ranges)?;
        for (r, b) in ranges.iter().zip(&v) {
            self.keep(r.start, b);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(r: Range<u64>) -> Bytes {
        r.map(|i| i as u8).collect::<Vec<u8>>().into()
    }

    #[test]
    fn holds_each_byte_once_and_serves_across_parts() {
        let mut g = Gathered::new(1000);
        g.insert(100, bytes(100..200));
        g.insert(150, bytes(150..260));
        g.insert(50, bytes(50..120));
        assert_eq!(g.held(), 210);
        assert_eq!(&g.get(60..250).unwrap()[..], &bytes(60..250)[..]);
        assert!(g.get(40..60).is_none() && g.get(250..270).is_none());
        assert_eq!(
            (g.run_end(70), g.run_end(260), g.run_end(10)),
            (260, 260, 10)
        );
        assert_eq!(
            (g.run_start(260), g.run_start(120), g.run_start(50)),
            (50, 50, 50)
        );
        assert_eq!(
            (g.next_held(0), g.next_held(300), g.next_held(55)),
            (50, 1000, 55)
        );
        assert_eq!(
            (
                g.prev_held_end(300),
                g.prev_held_end(100),
                g.prev_held_end(40)
            ),
            (260, 100, 0)
        );
        assert_eq!(&g.read_bytes(100..110).unwrap()[..], &bytes(100..110)[..]);
        assert!(g.read_bytes(255..265).is_err());
        g.forget_outside(120, 1000);
        assert!(g.get(50..100).is_none());
        assert!(g.get(150..200).is_some());
        g.insert(990, bytes(990..1010));
        assert_eq!(g.run_end(990), 1000, "nothing kept beyond the size");
    }

    #[test]
    fn an_overlay_reads_the_source_for_bytes_not_held() {
        let src = crate::file::source::CountingSource::new(bytes(0..255).to_vec());
        let mut g = Gathered::new(255);
        g.insert(0, bytes(0..100));
        let o = Overlay {
            held: &g,
            src: &src,
        };
        assert_eq!(&o.read_bytes(10..20).unwrap()[..], &bytes(10..20)[..]);
        assert_eq!(src.calls(), 0);
        assert_eq!(&o.read_bytes(90..110).unwrap()[..], &bytes(90..110)[..]);
        assert_eq!(src.calls(), 1);
        let rec = Recording::new(&src, 16);
        rec.read_bytes(0..10).unwrap();
        rec.read_bytes(0..100).unwrap();
        let seen = rec.into_seen();
        assert_eq!(seen.len(), 1, "reads over the cap are not kept");
    }
}
