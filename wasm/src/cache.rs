//! The bytes of a remote archive fetched so far, as a [`ByteSource`]: the
//! first read of bytes not yet fetched fails and is recorded, and every
//! read after it fails until the caller takes the record, so that the
//! caller fetches what the library asked for first (not what it looked
//! for after the failure, such as a scan for the next message) and runs
//! the operation again (`spec/wasm.md` §2).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

use bytes::Bytes;
use tgm::error::{Error, ErrorKind, Result};
use tgm::file::{ByteSource, SourceHints};

/// Fetched chunks of an archive of a known length, and the ranges asked
/// for that were not among them.
#[derive(Debug)]
pub struct RangeCache {
    len: u64,
    readahead: u64,
    chunks: Mutex<BTreeMap<u64, Bytes>>,
    missing: Mutex<Vec<Range<u64>>>,
}

impl RangeCache {
    /// An empty cache of an archive of `len` bytes, whose reader reads
    /// `readahead` bytes at a time while locating messages.
    pub fn new(len: u64, readahead: u64) -> Self {
        RangeCache {
            len,
            readahead,
            chunks: Mutex::new(BTreeMap::new()),
            missing: Mutex::new(Vec::new()),
        }
    }

    /// Keeps `bytes`, fetched from `offset`; an error when they reach past
    /// the archive's end.
    pub fn supply(&self, offset: u64, bytes: Bytes) -> Result<()> {
        let end = offset.checked_add(bytes.len() as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} bytes at offset {offset} reach past the archive's {} bytes",
                    bytes.len(),
                    self.len
                ),
            ));
        }
        if !bytes.is_empty() {
            lock(&self.chunks).insert(offset, bytes);
        }
        Ok(())
    }

    /// The ranges the first failing read asked for (all of a
    /// [`ByteSource::read_ranges`] call's), sorted and merged; reads work
    /// again after this.
    pub fn take_missing(&self) -> Vec<Range<u64>> {
        let mut v = std::mem::take(&mut *lock(&self.missing));
        v.sort_by_key(|r| r.start);
        let mut out: Vec<Range<u64>> = Vec::with_capacity(v.len());
        for r in v {
            match out.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        out
    }

    /// Whether a read has missed since the last [`RangeCache::take_missing`].
    pub fn has_missing(&self) -> bool {
        !lock(&self.missing).is_empty()
    }

    /// Bytes held (overlapping chunks counted twice).
    pub fn held(&self) -> u64 {
        lock(&self.chunks).values().map(|b| b.len() as u64).sum()
    }

    /// Copies `range` into `buf` when every byte of it is held and no
    /// read has missed since the record was last taken.
    fn copy(&self, range: Range<u64>, buf: &mut [u8]) -> bool {
        if self.has_missing() {
            return false;
        }
        let chunks = lock(&self.chunks);
        let mut pos = range.start;
        while pos < range.end {
            // Chunks may overlap: the one holding `pos` furthest is not
            // always the last one starting before it.
            let holder = chunks
                .range(..=pos)
                .map(|(&s, c)| (s, c, s + c.len() as u64))
                .filter(|&(_, _, end)| end > pos)
                .max_by_key(|&(_, _, end)| end);
            let Some((start, chunk, chunk_end)) = holder else {
                return false;
            };
            let take = (chunk_end.min(range.end) - pos) as usize;
            let from = (pos - start) as usize;
            let at = (pos - range.start) as usize;
            buf[at..at + take].copy_from_slice(&chunk[from..from + take]);
            pos += take as u64;
        }
        true
    }

    /// The error of a read that missed; `record` keeps its range.
    fn miss(&self, range: Range<u64>, record: bool) -> Error {
        let e = Error::new(
            ErrorKind::Io,
            format!("bytes {}..{} not fetched yet", range.start, range.end),
        );
        if record {
            lock(&self.missing).push(range);
        }
        e
    }

    /// Fills `buf` from `offset`, or fails; a miss is recorded when
    /// `record` (the first failing call of an operation).
    fn read(&self, offset: u64, buf: &mut [u8], record: bool) -> Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    format!(
                        "{} bytes at offset {offset} reach past the archive's {} bytes",
                        buf.len(),
                        self.len
                    ),
                )
            })?;
        if self.copy(offset..end, buf) {
            Ok(())
        } else {
            Err(self.miss(offset..end, record))
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ByteSource for RangeCache {
    fn len(&self) -> Result<u64> {
        Ok(self.len)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let first = !self.has_missing();
        self.read(offset, buf, first)
    }

    /// When no read has missed before, every range not held is recorded,
    /// so that one round of fetches serves the whole call.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let first = !self.has_missing();
        let mut out = Vec::with_capacity(ranges.len());
        let mut first_err = None;
        for r in ranges {
            // Checked before allocating: the range must lie in the archive.
            let len = r
                .end
                .checked_sub(r.start)
                .filter(|_| r.end <= self.len)
                .and_then(|n| usize::try_from(n).ok());
            let Some(len) = len else {
                return Err(Error::new(
                    ErrorKind::Truncated,
                    format!(
                        "byte range {}..{} is reversed or reaches past the archive's {} bytes",
                        r.start, r.end, self.len
                    ),
                ));
            };
            let mut v = vec![0u8; len];
            match self.read(r.start, &mut v, first) {
                Ok(()) => out.push(Bytes::from(v)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Frame digests are checked on whole-frame reads, as for any remote
    /// source (`spec/remote.md` §5).
    fn hints(&self) -> SourceHints {
        SourceHints {
            requires_verification: true,
            readahead: self.readahead,
            ..SourceHints::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_across_chunks_and_records_misses() {
        let c = RangeCache::new(100, 0);
        c.supply(0, Bytes::from_static(&[1, 2, 3, 4])).unwrap();
        c.supply(2, Bytes::from_static(&[3, 4, 5, 6])).unwrap();
        c.supply(3, Bytes::from_static(&[4])).unwrap();
        let mut buf = [0u8; 6];
        c.read_at(0, &mut buf).unwrap();
        assert_eq!(buf, [1, 2, 3, 4, 5, 6]);
        assert!(!c.has_missing());
        let mut buf = [0u8; 4];
        assert!(c.read_at(4, &mut buf).is_err());
        // After a miss every read fails, held or not, and is not recorded.
        assert!(c.read_at(50, &mut buf).is_err());
        assert!(c.read_at(0, &mut buf).is_err());
        assert_eq!(c.take_missing(), vec![4..8]);
        assert!(c.take_missing().is_empty());
        c.read_at(0, &mut buf).unwrap();
        // One call's ranges are recorded together.
        assert!(c.read_ranges(&[0..2, 50..54, 52..56, 70..71]).is_err());
        assert_eq!(c.take_missing(), vec![50..56, 70..71]);
    }

    #[test]
    fn past_the_end_is_an_error_not_a_miss() {
        let c = RangeCache::new(10, 0);
        let mut buf = [0u8; 4];
        assert!(c.read_at(8, &mut buf).is_err());
        assert!(!c.has_missing());
        assert!(c.supply(8, Bytes::from_static(&[0; 4])).is_err());
        assert!(c.supply(u64::MAX, Bytes::from_static(&[0; 4])).is_err());
    }
}
