//! The sans-I/O step between the blocking reader and asynchronous
//! sources: [`TgmFile`](super::TgmFile)'s parsing runs over a
//! [`Fetched`] source, which serves only bytes already fetched for the
//! current call and records the first range it lacks. The asynchronous
//! driver ([`super::AsyncTgmFile`]) fetches that range without blocking
//! and runs the step again, until it completes without a miss
//! (`spec/files.md` §7.1).
//!
//! Which bytes are read, and in which order, is decided by the blocking
//! reader's code alone, so the asynchronous reader sends the same
//! requests and gives the same results.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::async_source::AsyncByteSource;
use super::partial::check_len;
use super::SuppliedBytes;
use crate::error::{Error, ErrorKind, Result};

/// The first read of a step that the bytes fetched so far do not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// One range ([`ByteSource::read_bytes`] and `read_at`).
    One(Range<u64>),
    /// Several ranges read together ([`ByteSource::read_ranges`]), fetched
    /// together so that a remote source coalesces them as it would.
    Many(Vec<Range<u64>>),
}

/// What one call has fetched, and the first miss of its current step.
#[derive(Debug, Default)]
pub(crate) struct Fetches {
    /// Each fetched range (start, end) and its bytes or its error.
    have: BTreeMap<(u64, u64), Result<Bytes>>,
    miss: Option<Miss>,
}

/// Ranges held whole by an earlier fetch are looked for among this many
/// fetches starting at or before them.
const CONTAINING_LOOKBACK: usize = 16;

impl Fetches {
    /// The bytes of `r` when fetched: the fetch of exactly `r` (bytes or
    /// error), else a slice of a fetch holding it.
    fn get(&self, r: &Range<u64>) -> Option<Result<Bytes>> {
        if let Some(got) = self.have.get(&(r.start, r.end)) {
            return Some(match got {
                Ok(b) => Ok(b.clone()),
                Err(e) => Err(copy(e)),
            });
        }
        self.have
            .range(..=(r.start, u64::MAX))
            .rev()
            .take(CONTAINING_LOOKBACK)
            .find_map(|(&(s, e), got)| match got {
                Ok(b) if s <= r.start && r.end <= e => {
                    Some(Ok(b.slice((r.start - s) as usize..(r.end - s) as usize)))
                }
                _ => None,
            })
            .or_else(|| self.assembled(r).map(Ok))
    }

    /// The bytes of `r` copied from fetches that together hold it, none
    /// of them whole: each next byte is taken from the fetch holding it
    /// furthest among [`CONTAINING_LOOKBACK`] starting at or before it.
    /// Nothing is allocated unless the fetches hold every byte of `r`.
    fn assembled(&self, r: &Range<u64>) -> Option<Bytes> {
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut pos = r.start;
        while pos < r.end {
            let (s, e, b) = self
                .have
                .range(..=(pos, u64::MAX))
                .rev()
                .take(CONTAINING_LOOKBACK)
                .filter_map(|(&(s, e), got)| got.as_ref().ok().map(|b| (s, e, b)))
                .filter(|&(_, e, _)| e > pos)
                .max_by_key(|&(_, e, _)| e)?;
            let to = e.min(r.end);
            pieces.push(&b[(pos - s) as usize..(to - s) as usize]);
            pos = to;
        }
        Some(Bytes::from(pieces.concat()))
    }

    /// Keeps `bytes`, fetched from `offset` by the caller of a sans-I/O
    /// step ([`super::SteppedFile`]).
    pub(crate) fn supply(&mut self, offset: u64, bytes: Bytes) {
        if !bytes.is_empty() {
            let end = offset + bytes.len() as u64;
            self.have.insert((offset, end), Ok(bytes));
        }
    }

    /// Records that reading `range` fails with `e` (a caller of a sans-I/O
    /// step answering a range its source does not have).
    pub(crate) fn fail(&mut self, range: Range<u64>, e: Error) {
        self.have.insert((range.start, range.end), Err(e));
    }

    /// Bytes held (overlapping fetches counted twice).
    pub(crate) fn held(&self) -> u64 {
        self.have
            .iter()
            .filter(|(_, got)| got.is_ok())
            .map(|(&(s, e), _)| e - s)
            .sum()
    }

    /// Refuses a miss of bytes the step was given: fetching them again
    /// would run the step forever.
    pub(crate) fn check_new(&self, m: &Miss) -> Result<()> {
        if self.holds(m) {
            return Err(Error::new(
                ErrorKind::Io,
                format!("a read step asked again for {m:?}, which it was given"),
            ));
        }
        Ok(())
    }

    /// Whether every range of `m` is fetched already.
    pub(crate) fn holds(&self, m: &Miss) -> bool {
        match m {
            Miss::One(r) => self.get(r).is_some(),
            Miss::Many(rs) => rs.iter().all(|r| self.get(r).is_some()),
        }
    }

    /// Records the first miss of the step.
    fn note(&mut self, m: Miss) {
        self.miss.get_or_insert(m);
    }

    /// Fetches `m` from `src` and keeps what came back, the error included
    /// (the step then meets it where the blocking reader would).
    async fn fetch<S: AsyncByteSource + ?Sized>(&mut self, src: &S, m: Miss) {
        match m {
            Miss::One(r) => {
                let got = src
                    .read_range(r.clone())
                    .await
                    .and_then(|b| check_len(&r, &b).map(|()| b));
                self.have.insert((r.start, r.end), got);
            }
            Miss::Many(rs) => match src.read_ranges(&rs).await {
                Ok(v) if v.len() == rs.len() => {
                    for (r, b) in rs.iter().zip(v) {
                        self.have
                            .insert((r.start, r.end), check_len(r, &b).map(|()| b));
                    }
                }
                Ok(v) => {
                    let e = Error::invalid_argument(format!(
                        "the byte source answered {} ranges with {} buffers",
                        rs.len(),
                        v.len()
                    ));
                    for r in &rs {
                        self.have.insert((r.start, r.end), Err(copy(&e)));
                    }
                }
                Err(e) => {
                    for r in &rs {
                        self.have.insert((r.start, r.end), Err(copy(&e)));
                    }
                }
            },
        }
    }
}

/// `e` again, for each run of a step that meets it (its underlying
/// cause, if any, is not carried over).
fn copy(e: &Error) -> Error {
    let mut c = Error::new(e.kind().clone(), e.detail());
    if let Some(o) = e.offset() {
        c = c.at(o);
    }
    if let Some(m) = e.message_index() {
        c = c.in_message(m);
    }
    if let Some(o) = e.object_index() {
        c = c.in_object(o);
    }
    c
}

thread_local! {
    /// The fetches of the step running on this thread, if any.
    static STEP: RefCell<Option<Fetches>> = const { RefCell::new(None) };
}

/// Whether the step running on this thread has met a miss: what it
/// computes from then on is thrown away, so the blocking reader must not
/// keep it (its per-message caches check this).
pub(crate) fn missed() -> bool {
    STEP.with(|s| s.borrow().as_ref().is_some_and(|f| f.miss.is_some()))
}

/// The error a read that misses returns; the step's result is then
/// discarded, so it is never seen by a caller.
fn unfetched(r: &Range<u64>) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("bytes {}..{} are not fetched yet", r.start, r.end),
    )
}

/// The error of a step that met a miss, from code that would otherwise
/// keep what it computed; never seen by a caller.
pub(crate) fn discarded() -> Error {
    Error::new(
        ErrorKind::Io,
        "a read step lacked bytes; what it computed is discarded",
    )
}

/// Puts `fetches` back when a step ends, even by unwinding.
struct Restore<'a>(&'a mut Fetches);

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if let Some(f) = STEP.with(|s| s.borrow_mut().take()) {
            *self.0 = f;
        }
    }
}

/// Runs one step `f` over the bytes of `fetches`: its result, and the
/// first range it lacked (`None`: the result stands).
pub(crate) fn step<T>(fetches: &mut Fetches, f: impl FnOnce() -> T) -> (T, Option<Miss>) {
    fetches.miss = None;
    STEP.with(|s| *s.borrow_mut() = Some(std::mem::take(fetches)));
    let guard = Restore(fetches);
    let out = f();
    drop(guard);
    (out, fetches.miss.take())
}

/// Runs the step `f` until it completes without a miss, fetching from
/// `src` the range each run lacked. Every run fetches a range not held
/// before, so the number of runs is bounded by the reads the step makes.
pub(crate) async fn drive<S, T>(src: &S, mut f: impl FnMut() -> Result<T>) -> Result<T>
where
    S: AsyncByteSource + ?Sized,
{
    let mut fetches = Fetches::default();
    loop {
        let (out, miss) = step(&mut fetches, &mut f);
        let Some(miss) = miss else { return out };
        fetch_new(&mut fetches, src, miss).await?;
    }
}

/// Fetches `miss`, which must be new: a step that misses a range it was
/// given would run forever.
pub(crate) async fn fetch_new<S: AsyncByteSource + ?Sized>(
    fetches: &mut Fetches,
    src: &S,
    miss: Miss,
) -> Result<()> {
    fetches.check_new(&miss)?;
    fetches.fetch(src, miss).await;
    Ok(())
}

/// An asynchronous source and the bytes of it a step is given: the
/// blocking reader's parsing inside [`super::AsyncTgmFile`] reads
/// `bytes`, and what it lacks is fetched from `src`.
pub(crate) struct Fetched<S: ?Sized> {
    pub(crate) src: Arc<S>,
    pub(crate) bytes: SuppliedBytes,
}

/// [`ByteSource::read_at`] of a source read inside a step: the bytes the
/// step was given.
pub(crate) fn step_read_at(offset: u64, buf: &mut [u8]) -> Result<()> {
    let end = offset
        .checked_add(buf.len() as u64)
        .ok_or_else(|| Error::invalid_argument("byte range overflows"))?;
    buf.copy_from_slice(&step_read_bytes(offset..end)?);
    Ok(())
}

/// [`ByteSource::read_bytes`] inside a step: the bytes given, else the
/// step's first miss is recorded and the read fails.
pub(crate) fn step_read_bytes(range: Range<u64>) -> Result<Bytes> {
    super::source::range_len(&range)?;
    STEP.with(|s| {
        let mut s = s.borrow_mut();
        let Some(f) = s.as_mut() else {
            return Err(unfetched(&range));
        };
        f.get(&range).unwrap_or_else(|| {
            f.note(Miss::One(range.clone()));
            Err(unfetched(&range))
        })
    })
}

/// [`ByteSource::read_ranges`] inside a step: all of them given, else
/// they are recorded together as the step's first miss.
pub(crate) fn step_read_ranges(ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
    STEP.with(|s| {
        let mut s = s.borrow_mut();
        let Some(f) = s.as_mut() else {
            return Err(unfetched(&(0..0)));
        };
        let got: Option<Vec<Result<Bytes>>> = ranges.iter().map(|r| f.get(r)).collect();
        match got {
            Some(v) => v.into_iter().collect(),
            None => {
                f.note(Miss::Many(ranges.to_vec()));
                Err(unfetched(ranges.first().unwrap_or(&(0..0))))
            }
        }
    })
}

/// Runs `f` to completion on a runtime of the calling thread.
#[cfg(test)]
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::ByteSource;

    fn src() -> Fetched<Bytes> {
        Fetched {
            src: Arc::new(Bytes::from_static(b"0123456789")),
            bytes: SuppliedBytes::new(10, crate::file::SourceHints::default),
        }
    }

    #[test]
    fn a_step_sees_only_what_was_fetched_and_names_its_first_miss() {
        let s = src();
        let mut fetches = Fetches::default();
        let (out, miss) = step(&mut fetches, || {
            let a = s.bytes.read_bytes(2..4);
            let b = s.bytes.read_bytes(6..8);
            (a.is_err(), b.is_err(), missed())
        });
        assert_eq!(out, (true, true, true));
        assert_eq!(miss, Some(Miss::One(2..4)), "the first miss only");
        assert!(!missed(), "no step runs outside `step`");
        block_on(fetch_new(&mut fetches, &*s.src, Miss::One(2..6))).unwrap();
        let (out, miss) = step(&mut fetches, || s.bytes.read_bytes(3..5).unwrap());
        assert_eq!(
            (&out[..], miss),
            (&b"34"[..], None),
            "served from a wider fetch"
        );
        let again = block_on(fetch_new(&mut fetches, &*s.src, Miss::One(2..4)));
        assert!(
            again.is_err(),
            "a range held already is refused, not refetched"
        );
    }

    /// A source that answers one byte short, and one buffer short.
    struct Liar(Bytes);

    impl AsyncByteSource for Liar {
        fn len(&self) -> impl std::future::Future<Output = Result<u64>> + Send {
            std::future::ready(Ok(self.0.len() as u64))
        }
        fn read_range(
            &self,
            r: Range<u64>,
        ) -> impl std::future::Future<Output = Result<Bytes>> + Send {
            std::future::ready(Ok(self.0.slice(r.start as usize..r.end as usize - 1)))
        }
        fn read_ranges(
            &self,
            rs: &[Range<u64>],
        ) -> impl std::future::Future<Output = Result<Vec<Bytes>>> + Send {
            let v = rs[1..]
                .iter()
                .map(|r| self.0.slice(r.start as usize..r.end as usize))
                .collect();
            std::future::ready(Ok(v))
        }
    }

    #[test]
    fn a_source_answering_the_wrong_bytes_is_an_error() {
        let s = Fetched {
            src: Arc::new(Liar(Bytes::from_static(b"0123456789"))),
            bytes: SuppliedBytes::new(10, crate::file::SourceHints::default),
        };
        let short = block_on(drive(&*s.src, || s.bytes.read_bytes(2..6)));
        assert_eq!(short.unwrap_err().kind(), &ErrorKind::Truncated);
        let few = block_on(drive(&*s.src, || s.bytes.read_ranges(&[0..2, 8..10])));
        assert!(few.is_err());
    }

    #[test]
    fn driving_a_step_fetches_until_it_completes() {
        let s = src();
        let got = block_on(drive(&*s.src, || {
            let v = s.bytes.read_ranges(&[0..2, 8..10])?;
            let one = s.bytes.read_bytes(4..5)?;
            Ok([&v[0][..], &v[1][..], &one[..]].concat())
        }))
        .unwrap();
        assert_eq!(got, b"01894");
        let beyond = block_on(drive(&*s.src, || s.bytes.read_bytes(8..12)));
        assert_eq!(beyond.unwrap_err().kind(), &ErrorKind::Truncated);
    }
}
