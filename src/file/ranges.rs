//! Few, large reads out of many small ones: coalescing nearby ranges into
//! one request, and a readahead window for walks that read a little at a
//! time. See `spec/remote.md` §2–§3.

use std::ops::Range;
use std::sync::Mutex;

use bytes::Bytes;

use super::source::{ByteSource, Layer};
use crate::error::{Error, Result};

/// Ranges closer than this are fetched as one by [`Coalescing`] and the
/// remote sources unless configured otherwise.
pub const DEFAULT_COALESCE_GAP: u64 = 64 << 10;

/// Sorted, merged ranges covering `ranges`: two ranges whose gap is at most
/// `gap` bytes become one. Empty ranges are dropped; reversed ones are an
/// error.
pub(crate) fn coalesce(ranges: &[Range<u64>], gap: u64) -> Result<Vec<Range<u64>>> {
    let mut sorted: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        if r.start > r.end {
            return Err(Error::invalid_argument(format!(
                "reversed byte range {}..{}",
                r.start, r.end
            )));
        }
        if r.start < r.end {
            sorted.push(r.clone());
        }
    }
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    Ok(out)
}

/// Serves each of `ranges` out of `merged` (the output of [`coalesce`]) and
/// the bytes `got` read for them.
pub(crate) fn split_merged(
    ranges: &[Range<u64>],
    merged: &[Range<u64>],
    got: &[Bytes],
) -> Result<Vec<Bytes>> {
    ranges
        .iter()
        .map(|r| {
            if r.start == r.end {
                return Ok(Bytes::new());
            }
            let i = merged.partition_point(|m| m.end < r.end);
            let (m, b) = merged
                .get(i)
                .zip(got.get(i))
                .filter(|(m, _)| m.start <= r.start && r.end <= m.end)
                .ok_or_else(|| Error::invalid_argument("range not covered by the merged reads"))?;
            let a = (r.start - m.start) as usize;
            let e = (r.end - m.start) as usize;
            if e > b.len() {
                return Err(Error::truncated(format!(
                    "{} bytes served for a {}-byte range",
                    b.len(),
                    m.end - m.start
                ))
                .at(m.start));
            }
            Ok(b.slice(a..e))
        })
        .collect()
}

/// Merges the ranges of each [`ByteSource::read_ranges`] call that lie
/// within `gap` bytes of each other before passing them on: what a remote
/// source does, over any source (to count what a remote reader would
/// request with `CountingSource` underneath).
#[derive(Debug)]
pub struct Coalescing<S> {
    inner: S,
    gap: u64,
}

impl<S: ByteSource> Coalescing<S> {
    /// Wraps `inner`, merging ranges at most `gap` bytes apart.
    pub fn new(inner: S, gap: u64) -> Self {
        Coalescing { inner, gap }
    }

    /// The wrapped source.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: ByteSource> Layer for Coalescing<S> {
    type Inner = S;
    fn inner(&self) -> &S {
        &self.inner
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let merged = coalesce(ranges, self.gap)?;
        let got = self.inner.read_ranges(&merged)?;
        split_merged(ranges, &merged, &got)
    }
}

/// Serves small reads from one window of `window` bytes, fetched from the
/// position of the first read it cannot serve: a walk over frame headers
/// and preambles then costs one request per window instead of one per
/// header. Reads larger than the window go straight through.
pub(crate) struct Readahead<'s> {
    src: &'s dyn ByteSource,
    window: u64,
    size: u64,
    cur: Mutex<(u64, Bytes)>,
    /// The first failure of the source itself (not of the bytes it holds).
    failure: Mutex<Option<Error>>,
}

impl<'s> Readahead<'s> {
    /// A reader over `src` (of `size` bytes) with `window` bytes of
    /// readahead; 0 reads exactly what is asked.
    pub(crate) fn new(src: &'s dyn ByteSource, size: u64, window: u64) -> Self {
        Readahead {
            src,
            window,
            size,
            cur: Mutex::new((0, Bytes::new())),
            failure: Mutex::new(None),
        }
    }

    /// The first read that failed because of the source rather than its
    /// bytes (a remote object that vanished, changed, refused access or
    /// did not answer): indexing treats every failed read as damage, and
    /// the opener reports this instead.
    pub(crate) fn take_failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn fetch(&self, range: Range<u64>) -> Result<Bytes> {
        let r = self.src.read_bytes(range);
        if let Err(e) = &r {
            use crate::error::ErrorKind as K;
            if matches!(
                e.kind(),
                K::Remote | K::ObjectChanged | K::NotFound | K::Forbidden
            ) {
                let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
                if f.is_none() {
                    *f = Some(Error::new(e.kind().clone(), e.to_string()));
                }
            }
        }
        r
    }

    fn cached(&self, r: &Range<u64>) -> Option<Bytes> {
        let cur = self.cur.lock().unwrap_or_else(|p| p.into_inner());
        let (at, b) = (&cur.0, &cur.1);
        let end = at + b.len() as u64;
        (r.start >= *at && r.end <= end)
            .then(|| b.slice((r.start - at) as usize..(r.end - at) as usize))
    }
}

impl<'s> Layer for Readahead<'s> {
    type Inner = dyn ByteSource + 's;
    fn inner(&self) -> &Self::Inner {
        self.src
    }
    fn serve_len(&self) -> Result<u64> {
        Ok(self.size)
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let b = self.serve_bytes(offset..end)?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        super::source::range_len(&range)?;
        if let Some(b) = self.cached(&range) {
            return Ok(b);
        }
        let want = range.end - range.start;
        if self.window == 0 || want >= self.window || range.end > self.size {
            return self.fetch(range);
        }
        let end = range.start.saturating_add(self.window).min(self.size);
        let b = self.fetch(range.start..end)?;
        if b.len() as u64 != end - range.start {
            return Err(Error::truncated("short read").at(range.start));
        }
        let out = b.slice(0..want as usize);
        *self.cur.lock().unwrap_or_else(|p| p.into_inner()) = (range.start, b);
        Ok(out)
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.serve_bytes(r.clone())).collect()
    }
}

/// The first bytes of a source, read once, serving the reads that lie
/// inside them: what a remote source does with the bytes of its first
/// request (`spec/remote.md` §3), over any source (to count what a
/// remote reader requests with `CountingSource` underneath).
#[derive(Debug)]
pub struct HeadCached<S> {
    inner: S,
    head: Bytes,
}

impl<S: ByteSource> HeadCached<S> {
    /// Reads the first `window` bytes of `inner` (fewer when it is
    /// shorter) with one read.
    pub fn new(inner: S, window: u64) -> Result<Self> {
        let n = inner.len()?.min(window);
        let head = inner.read_bytes(0..n)?;
        Ok(HeadCached { inner, head })
    }

    /// The wrapped source.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: ByteSource> Layer for HeadCached<S> {
    type Inner = S;
    fn inner(&self) -> &S {
        &self.inner
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        if end <= self.head.len() as u64 {
            buf.copy_from_slice(&self.head[offset as usize..end as usize]);
            return Ok(());
        }
        self.inner.read_at(offset, buf)
    }
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        super::source::range_len(&range)?;
        if range.end <= self.head.len() as u64 {
            return Ok(self.head.slice(range.start as usize..range.end as usize));
        }
        self.inner.read_bytes(range)
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let n = self.head.len() as u64;
        if ranges.iter().all(|r| r.end <= n) {
            return ranges.iter().map(|r| self.serve_bytes(r.clone())).collect();
        }
        self.inner.read_ranges(ranges)
    }
    fn held_prefix(&self) -> u64 {
        self.head.len() as u64
    }
}

/// One window of `src`, read once at construction, serving the reads that
/// lie inside it; other reads go to `src`. Several lookups in one
/// message's head (its index, its metadata frame) then cost one request.
pub(crate) struct WindowAt<'s> {
    src: &'s dyn ByteSource,
    at: u64,
    bytes: Bytes,
}

impl<'s> WindowAt<'s> {
    /// Reads `range` of `src`.
    pub(crate) fn new(src: &'s dyn ByteSource, range: Range<u64>) -> Result<Self> {
        let bytes = src.read_bytes(range.clone())?;
        super::partial::check_len(&range, &bytes)?;
        Ok(WindowAt {
            src,
            at: range.start,
            bytes,
        })
    }

    /// A window of `src` at `at` holding `bytes`, read before.
    pub(crate) fn held(src: &'s dyn ByteSource, at: u64, bytes: Bytes) -> Self {
        WindowAt { src, at, bytes }
    }

    fn inside(&self, r: &Range<u64>) -> Option<Bytes> {
        let end = self.at + self.bytes.len() as u64;
        (r.start >= self.at && r.end <= end && r.start <= r.end).then(|| {
            self.bytes
                .slice((r.start - self.at) as usize..(r.end - self.at) as usize)
        })
    }
}

impl<'s> Layer for WindowAt<'s> {
    type Inner = dyn ByteSource + 's;
    fn inner(&self) -> &Self::Inner {
        self.src
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let r = offset..offset.saturating_add(buf.len() as u64);
        match self.inside(&r) {
            Some(b) => {
                buf.copy_from_slice(&b);
                Ok(())
            }
            None => self.src.read_at(offset, buf),
        }
    }
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        match self.inside(&range) {
            Some(b) => Ok(b),
            None => self.src.read_bytes(range),
        }
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.serve_bytes(r.clone())).collect()
    }
}

/// Reads of `src` that lie inside its first `end` bytes; any other read is
/// an error. Looking for indexes in a source's cached prefix through it
/// never sends a request.
pub(crate) struct PrefixOnly<'s> {
    pub(crate) src: &'s dyn ByteSource,
    pub(crate) end: u64,
}

impl PrefixOnly<'_> {
    fn check(&self, r: &Range<u64>) -> Result<()> {
        if r.end > self.end {
            return Err(Error::truncated("beyond the cached prefix").at(r.start));
        }
        Ok(())
    }
}

impl<'s> Layer for PrefixOnly<'s> {
    type Inner = dyn ByteSource + 's;
    fn inner(&self) -> &Self::Inner {
        self.src
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.check(&(offset..offset.saturating_add(buf.len() as u64)))?;
        self.src.read_at(offset, buf)
    }
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        self.check(&range)?;
        self.src.read_bytes(range)
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.serve_bytes(r.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::source::CountingSource;
    use crate::file::SourceHints;
    use std::sync::Arc;

    /// Bytes in memory with the hints a remote source would give.
    struct Tagged(Vec<u8>, SourceHints);

    impl ByteSource for Tagged {
        fn len(&self) -> Result<u64> {
            ByteSource::len(&self.0)
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.0.read_at(offset, buf)
        }
        fn hints(&self) -> SourceHints {
            self.1.clone()
        }
    }

    fn remote_like() -> Tagged {
        let hints = SourceHints {
            requires_verification: true,
            etag: Some("\"v1\"".into()),
            readahead: 12_345,
            head_window: 678,
            cached_prefix: 40,
        };
        Tagged((0..=255).cycle().take(1000).collect(), hints)
    }

    #[test]
    fn no_wrapper_drops_a_hint() {
        let t = remote_like();
        let want = t.hints();
        assert_ne!(want, SourceHints::default());
        let d: &dyn ByteSource = &t;
        let ra = Readahead::new(d, 1000, 64);
        let ra0 = Readahead::new(d, 1000, 0);
        let win = WindowAt::new(d, 10..20).unwrap();
        let pre = PrefixOnly { src: d, end: 30 };
        let wrapped: Vec<(&str, Box<dyn ByteSource + '_>)> = vec![
            ("&", Box::new(&t)),
            ("Arc", Box::new(Arc::new(remote_like()))),
            ("Box", Box::new(Box::new(remote_like()))),
            (
                "Box<dyn>",
                Box::new(Box::new(remote_like()) as Box<dyn ByteSource>),
            ),
            ("CountingSource", Box::new(CountingSource::new(&t))),
            ("Coalescing", Box::new(Coalescing::new(&t, 16))),
            ("HeadCached", Box::new(HeadCached::new(&t, 8).unwrap())),
            ("Readahead", Box::new(&ra)),
            ("Readahead(0)", Box::new(&ra0)),
            ("WindowAt", Box::new(&win)),
            ("PrefixOnly", Box::new(&pre)),
            (
                "nested",
                Box::new(Coalescing::new(
                    HeadCached::new(CountingSource::new(Arc::new(&t)), 16).unwrap(),
                    8,
                )),
            ),
        ];
        for (name, w) in &wrapped {
            assert_eq!(w.hints(), want, "{name}");
        }
        let ra_nested = Readahead::new(&wrapped[11].1, 1000, 64);
        let win_nested = WindowAt::new(&ra_nested, 0..100).unwrap();
        assert_eq!(
            win_nested.hints(),
            want,
            "WindowAt over Readahead over nested"
        );

        // A wrapper holding more of the start than its source says so,
        // and keeps every other hint.
        let h = HeadCached::new(&t, 100).unwrap();
        let mut more = want.clone();
        more.cached_prefix = 100;
        assert_eq!(h.hints(), more);
        assert_eq!(Coalescing::new(&h, 0).hints(), more);
    }

    #[test]
    fn coalescing_merges_under_the_gap_only() {
        let m = coalesce(&[20..30, 0..10, 12..14, 100..110, 5..6, 7..7], 2).unwrap();
        assert_eq!(m, vec![0..14, 20..30, 100..110]);
        assert_eq!(coalesce(&[0..10, 11..12], 0).unwrap(), vec![0..10, 11..12]);
        assert_eq!(coalesce(&[0..10, 10..12], 0).unwrap(), vec![0..12]);
        #[allow(clippy::reversed_empty_ranges)]
        let bad = vec![0..1, 5..3];
        assert!(coalesce(&bad, 0).is_err());
    }

    #[test]
    fn coalesced_reads_return_each_range_in_order() {
        let v: Vec<u8> = (0..=255).collect();
        let c = Coalescing::new(CountingSource::new(v), 16);
        let got = c.read_ranges(&[200..210, 0..4, 10..12, 3..5]).unwrap();
        assert_eq!(&got[0][..], &(200..210).collect::<Vec<u8>>()[..]);
        assert_eq!(&got[1][..], &[0, 1, 2, 3]);
        assert_eq!(&got[2][..], &[10, 11]);
        assert_eq!(&got[3][..], &[3, 4]);
        assert_eq!(c.inner().calls(), 2);
        assert_eq!(c.inner().bytes(), 12 + 10);
    }

    #[test]
    fn head_cached_windows_and_prefixes_serve_only_what_they_hold() {
        let v: Vec<u8> = (0..=255).cycle().take(10_000).collect();
        let c = CountingSource::new(v.clone());
        let h = HeadCached::new(&c, 100).unwrap();
        assert_eq!((c.calls(), h.hints().cached_prefix), (1, 100));
        assert_eq!(&h.read_bytes(10..20).unwrap()[..], &v[10..20]);
        let mut b = [0u8; 4];
        h.read_at(96, &mut b).unwrap();
        assert_eq!(c.calls(), 1, "inside the head: no read");
        assert_eq!(&h.read_bytes(98..102).unwrap()[..], &v[98..102]);
        assert_eq!(c.calls(), 2, "across its end: one read");
        let short = HeadCached::new(vec![1u8, 2, 3], 100).unwrap();
        assert_eq!(short.hints().cached_prefix, 3);

        c.reset();
        let w = WindowAt::new(&c, 5000..5100).unwrap();
        assert_eq!(&w.read_bytes(5050..5060).unwrap()[..], &v[5050..5060]);
        assert_eq!(&w.read_bytes(4990..5010).unwrap()[..], &v[4990..5010]);
        assert_eq!(c.calls(), 2, "the window, then one read outside it");
        assert!(WindowAt::new(&c, 9990..10_010).is_err());

        let p = PrefixOnly { src: &c, end: 64 };
        assert_eq!(&p.read_bytes(0..64).unwrap()[..], &v[..64]);
        let e = p.read_bytes(60..65).unwrap_err();
        assert_eq!(e.kind(), &crate::ErrorKind::Truncated);
        assert!(p.read_at(64, &mut b).is_err());
    }

    #[test]
    fn readahead_serves_small_reads_from_one_window() {
        let v: Vec<u8> = (0..=255).cycle().take(10_000).collect();
        let c = CountingSource::new(v.clone());
        let r = Readahead::new(&c, 10_000, 1000);
        let mut b = [0u8; 8];
        for off in [0u64, 100, 900, 992] {
            r.read_at(off, &mut b).unwrap();
            assert_eq!(&b[..], &v[off as usize..off as usize + 8]);
        }
        assert_eq!(c.calls(), 1);
        r.read_at(995, &mut b).unwrap();
        assert_eq!(&b[..], &v[995..1003]);
        assert_eq!(c.calls(), 2);
        r.read_at(9_996, &mut [0u8; 4]).unwrap();
        assert!(r.read_at(9_997, &mut [0u8; 4]).is_err());
        let big = r.read_bytes(0..5000).unwrap();
        assert_eq!(&big[..], &v[..5000]);
    }
}
