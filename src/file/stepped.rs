//! `SteppedFile`: the sans-I/O reader for callers that fetch bytes
//! themselves and cannot block, such as JavaScript in a browser
//! (`spec/files.md` §7.2, `spec/wasm.md` §2).
//!
//! It runs the same step as [`super::AsyncTgmFile`] ([`super::fetched`]):
//! an operation of the blocking [`TgmFile`] over the bytes supplied so
//! far. When the operation lacks bytes its result is discarded and the
//! caller is given the ranges to fetch; after supplying them it runs the
//! operation again. The located file and its per-message caches are kept
//! across steps (a step that missed keeps nothing), and the supplied
//! bytes are kept until the handle is dropped.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::fetched::{step, step_read_at, step_read_bytes, step_read_ranges, Fetches, Miss};
use super::ranges::coalesce;
use super::source::{out_of_range, ByteSource, SourceHints};
use super::TgmFile;
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;

/// The source a [`SteppedFile`]'s operations read: the bytes supplied to
/// it, inside a step only.
#[derive(Clone)]
pub struct SuppliedBytes {
    size: u64,
    /// The hints of the source the bytes come from, asked at each read as
    /// the source itself would be.
    hints: Arc<dyn Fn() -> SourceHints + Send + Sync>,
}

impl std::fmt::Debug for SuppliedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SuppliedBytes")
            .field("size", &self.size)
            .field("hints", &(self.hints)())
            .finish()
    }
}

impl SuppliedBytes {
    /// `size` bytes of a source whose hints `hints` gives.
    pub(crate) fn new(size: u64, hints: impl Fn() -> SourceHints + Send + Sync + 'static) -> Self {
        SuppliedBytes {
            size,
            hints: Arc::new(hints),
        }
    }

    /// The archive's length.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }
}

impl ByteSource for SuppliedBytes {
    fn len(&self) -> Result<u64> {
        Ok(self.size)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        step_read_at(offset, buf)
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        step_read_bytes(range)
    }
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        step_read_ranges(ranges)
    }
    fn hints(&self) -> SourceHints {
        (self.hints)()
    }
}

/// What one operation of a [`SteppedFile`] gives.
#[derive(Debug)]
pub enum Step<T> {
    /// The answer, or the library's error about the archive.
    Done(Result<T>),
    /// Fetch these byte ranges (sorted, not overlapping), supply them
    /// ([`SteppedFile::supply`]) and run the operation again.
    Need(Vec<Range<u64>>),
}

/// An archive of known length read through bytes its caller fetches and
/// supplies: each [`SteppedFile::run`] answers, or names the ranges it
/// needs first (`spec/files.md` §7.2). The reads, and so the ranges
/// asked for, are [`TgmFile`]'s own.
#[derive(Debug)]
pub struct SteppedFile {
    source: SuppliedBytes,
    fetches: Fetches,
    file: Option<TgmFile<SuppliedBytes>>,
    limits: Limits,
}

impl SteppedFile {
    /// An archive of `size` bytes, none supplied yet, read as a source
    /// with `hints` would be (its readahead while locating messages, and
    /// whether frame digests are checked on reading).
    pub fn new(size: u64, hints: SourceHints, limits: &Limits) -> Self {
        SteppedFile {
            source: SuppliedBytes::new(size, move || hints.clone()),
            fetches: Fetches::default(),
            file: None,
            limits: limits.clone(),
        }
    }

    /// An archive whose bytes are all in `bytes`: every operation answers.
    pub fn in_memory(bytes: Bytes, limits: &Limits) -> Self {
        let mut f = Self::new(bytes.len() as u64, SourceHints::default(), limits);
        f.fetches.supply(0, bytes);
        f
    }

    /// The archive's length.
    pub fn size(&self) -> u64 {
        self.source.size
    }

    /// Keeps `bytes`, fetched from `offset`; an error when they reach past
    /// the archive's end.
    pub fn supply(&mut self, offset: u64, bytes: Bytes) -> Result<()> {
        let end = offset.checked_add(bytes.len() as u64);
        if end.is_none_or(|e| e > self.source.size) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} bytes at offset {offset} reach past the archive's {} bytes",
                    bytes.len(),
                    self.source.size
                ),
            ));
        }
        self.fetches.supply(offset, bytes);
        Ok(())
    }

    /// Bytes supplied and kept (overlapping supplies counted twice).
    pub fn held(&self) -> u64 {
        self.fetches.held()
    }

    /// Runs `op` on the archive, locating its messages first if no step
    /// has yet. A step that lacks bytes answers [`Step::Need`]; one that
    /// lacks bytes it was given is an error, so that a caller supplying
    /// what is asked always comes to an answer.
    pub fn run<T>(&mut self, mut op: impl FnMut(&TgmFile<SuppliedBytes>) -> Result<T>) -> Step<T> {
        // Each pass either answers, asks for bytes, or records the error
        // of a read past the end (a range not met before), so the passes
        // are bounded by the step's reads.
        loop {
            if self.file.is_none() {
                let (source, limits) = (self.source.clone(), &self.limits);
                let (opened, miss) =
                    step(&mut self.fetches, || TgmFile::from_source(source, limits));
                if let Some(miss) = miss {
                    match self.need(miss) {
                        Some(need) => return need,
                        None => continue,
                    }
                }
                match opened {
                    Ok(f) => self.file = Some(f),
                    Err(e) => return Step::Done(Err(e)),
                }
            }
            let Some(file) = &self.file else {
                return Step::Done(Err(Error::new(ErrorKind::Io, "the archive is not located")));
            };
            let (out, miss) = step(&mut self.fetches, || op(file));
            let Some(miss) = miss else {
                return Step::Done(out);
            };
            if let Some(need) = self.need(miss) {
                return need;
            }
        }
    }

    /// The answer to a step that missed `miss`: the ranges to fetch, or
    /// `None` when the step can run again at once because every range it
    /// lacked reaches past the archive's end. Such a range is answered as
    /// a source of the archive's length answers it, with an error, which
    /// the step meets when it runs again (as `AsyncTgmFile` meets its
    /// source's).
    fn need<T>(&mut self, miss: Miss) -> Option<Step<T>> {
        if let Err(e) = self.fetches.check_new(&miss) {
            return Some(Step::Done(Err(e)));
        }
        // Of several ranges read together, those held already are not
        // asked for again.
        let ranges = match miss {
            Miss::One(r) => vec![r],
            Miss::Many(rs) => rs
                .into_iter()
                .filter(|r| !self.fetches.holds(&Miss::One(r.clone())))
                .collect(),
        };
        let size = self.source.size;
        let (within, past): (Vec<_>, Vec<_>) = ranges
            .into_iter()
            .partition(|r| r.start <= r.end && r.end <= size);
        for r in past {
            let e = out_of_range(r.start, r.end.saturating_sub(r.start), size);
            self.fetches.fail(r, e);
        }
        // Sorted, overlapping or touching ranges merged (none is reversed).
        let merged = match coalesce(&within, 0) {
            Ok(m) => m,
            Err(e) => return Some(Step::Done(Err(e))),
        };
        if merged.is_empty() {
            return None;
        }
        Some(Step::Need(merged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

    fn archive(messages: usize, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for m in 0..messages {
            let data: Vec<u8> = (0..n)
                .flat_map(|i| ((m * n + i) as f32).to_le_bytes())
                .collect();
            let d = ObjectDescriptor::new(Dtype::Float32, [n as u64]);
            let meta = GlobalMetadata::default();
            out.extend(encode(&meta, &[(&d, &data[..])], &EncodeOptions::default()).unwrap());
        }
        out
    }

    /// Supplies what each step needs until it answers: the answer, the
    /// rounds and the bytes supplied.
    fn drive<T>(
        f: &mut SteppedFile,
        all: &[u8],
        mut op: impl FnMut(&TgmFile<SuppliedBytes>) -> Result<T>,
    ) -> (Result<T>, usize, u64) {
        let (mut rounds, mut bytes) = (0, 0);
        loop {
            match f.run(&mut op) {
                Step::Done(v) => return (v, rounds, bytes),
                Step::Need(ranges) => {
                    rounds += 1;
                    assert!(rounds < 100, "no progress");
                    for r in ranges {
                        bytes += r.end - r.start;
                        let b = Bytes::copy_from_slice(&all[r.start as usize..r.end as usize]);
                        f.supply(r.start, b).unwrap();
                    }
                }
            }
        }
    }

    fn object(f: &TgmFile<SuppliedBytes>, m: usize) -> Result<Vec<u8>> {
        Ok(f.decode_object(m, 0, &DecodeOptions::default())?.data)
    }

    #[test]
    fn a_stepped_file_reads_what_memory_reads_fetching_one_object() {
        let all = archive(3, 50_000);
        let mut mem = SteppedFile::in_memory(Bytes::from(all.clone()), &Limits::default());
        let (want, rounds, _) = drive(&mut mem, &all, |f| object(f, 2));
        assert_eq!(rounds, 0, "memory never needs bytes");
        let hints = SourceHints {
            readahead: 4096,
            requires_verification: true,
            ..SourceHints::default()
        };
        let mut f = SteppedFile::new(all.len() as u64, hints, &Limits::default());
        let (n, _, opened) = drive(&mut f, &all, |f| Ok(f.num_messages()));
        assert_eq!(n.unwrap(), 3);
        assert!(
            opened < all.len() as u64 / 4,
            "locating took {opened} bytes"
        );
        let (got, rounds, bytes) = drive(&mut f, &all, |f| object(f, 2));
        assert_eq!(got.unwrap(), want.unwrap());
        assert!(rounds <= 2, "{rounds} rounds");
        assert!(bytes < all.len() as u64 / 2, "{bytes} bytes");
        let (_, again, _) = drive(&mut f, &all, |f| object(f, 2));
        assert_eq!(again, 0, "what was supplied is kept");
    }

    #[test]
    fn no_byte_is_asked_for_twice() {
        let all = archive(200, 1000);
        let hints = SourceHints {
            readahead: 64 << 10,
            requires_verification: true,
            ..SourceHints::default()
        };
        let mut f = SteppedFile::new(all.len() as u64, hints, &Limits::default());
        let (n, _, bytes) = drive(&mut f, &all, |f| Ok(f.num_messages()));
        assert_eq!(n.unwrap(), 200);
        assert!(bytes <= all.len() as u64, "{bytes} bytes of {}", all.len());
        let mut f = SteppedFile::new(10, SourceHints::default(), &Limits::default());
        f.supply(0, Bytes::from_static(&[0; 4])).unwrap();
        match f.need::<()>(Miss::Many(vec![6..8, 0..2, 7..9])) {
            Some(Step::Need(r)) => assert_eq!(r, vec![6..9], "held ranges left out, others merged"),
            _ => panic!("6..9 is not held"),
        }
    }

    #[test]
    fn a_read_past_the_end_is_an_error_not_a_request() {
        let all = archive(1, 10);
        let mut f = SteppedFile::in_memory(Bytes::from(all.clone()), &Limits::default());
        let end = all.len() as u64;
        match f.run(|file| file.source().read_bytes(end - 4..end + 4)) {
            Step::Done(r) => assert_eq!(r.unwrap_err().kind(), &ErrorKind::Truncated),
            Step::Need(r) => panic!("asked for {r:?}, past the archive's end"),
        }
        match f.run(|file| file.source().read_ranges(&[0..4, end..end + 1])) {
            Step::Done(r) => assert_eq!(r.unwrap_err().kind(), &ErrorKind::Truncated),
            Step::Need(r) => panic!("asked for {r:?}, past the archive's end"),
        }
    }

    #[test]
    fn damage_is_an_error_not_a_request() {
        let mut all = archive(1, 100);
        let n = all.len();
        all[n / 2] ^= 0xff;
        let mut f = SteppedFile::new(n as u64, SourceHints::default(), &Limits::default());
        let (e, _, _) = drive(&mut f, &all, |f| object(f, 0));
        let e = e.unwrap_err();
        assert!(!e.to_string().contains("not fetched"), "{e}");
    }

    #[test]
    fn bytes_past_the_end_are_refused_and_pieces_serve_a_read_together() {
        let mut f = SteppedFile::new(10, SourceHints::default(), &Limits::default());
        assert!(f.supply(8, Bytes::from_static(&[0; 4])).is_err());
        assert!(f.supply(u64::MAX, Bytes::from_static(&[0; 4])).is_err());
        f.supply(0, Bytes::from_static(b"0123")).unwrap();
        f.supply(2, Bytes::from_static(b"23456")).unwrap();
        f.supply(7, Bytes::from_static(b"789")).unwrap();
        assert_eq!(f.held(), 12);
        let mut fetches = std::mem::take(&mut f.fetches);
        let (got, miss) = step(&mut fetches, || f.source.read_bytes(1..9));
        assert_eq!((&got.unwrap()[..], miss), (&b"12345678"[..], None));
    }
}
