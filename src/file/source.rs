//! Byte sources: "a length, and these byte ranges" over memory, a memory
//! map, or a file. Everything that locates messages and objects reads
//! through [`ByteSource`], so a new store (an object store answering HTTP
//! range requests, say) plugs in by implementing it. See
//! `spec/files.md` §7.

use std::fs::File;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};

/// Random access to an immutable run of bytes.
///
/// Implementations must be cheap to call many times with small ranges, or
/// override [`ByteSource::read_ranges`] to coalesce them (a remote source
/// turns several ranges into few requests there).
pub trait ByteSource: Send + Sync {
    /// The number of bytes the source holds now.
    fn len(&self) -> Result<u64>;

    /// Whether the source holds no bytes.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Fills `buf` from `offset`; an error when the range is not wholly
    /// available.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// The bytes of `range` as an owned, reference-counted buffer that may
    /// outlive the borrow of the source. In-memory sources share their
    /// storage instead of copying.
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        let len = range_len(&range)?;
        if let Some(s) = self.as_slice() {
            return Ok(Bytes::copy_from_slice(slice_range(s, &range)?));
        }
        let mut v = crate::buffer::zeroed(len)?;
        self.read_at(range.start, &mut v)?;
        Ok(Bytes::from(v))
    }

    /// Several ranges at once, in the order asked. The default reads them
    /// one by one; remote sources coalesce nearby ranges.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.read_bytes(r.clone())).collect()
    }

    /// All bytes, when they are in memory: readers then borrow instead of
    /// copying.
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    /// The source's settings for readers: digest checking, the ETag, and
    /// how much to read at once (`spec/files.md` §7). Wrappers answer
    /// their inner source's hints unchanged.
    fn hints(&self) -> SourceHints {
        SourceHints::default()
    }
}

/// What a reader should know about a [`ByteSource`] beyond its bytes: one
/// value, so that a wrapper forwarding it cannot forget a setting
/// (`spec/files.md` §7, `spec/remote.md` §3, §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceHints {
    /// Frame digests must be checked on whole-frame reads even when the
    /// caller's options say [`crate::Verify::Off`]: remote sources say
    /// yes by default (`spec/remote.md` §5).
    pub requires_verification: bool,
    /// A tag naming this version of the source's bytes (a remote object's
    /// ETag), when it has one: a shipped layout records it.
    pub etag: Option<String>,
    /// Bytes [`super::TgmFile::from_source`] reads at once while locating
    /// messages; 0 (the default, right for local sources) reads exactly
    /// what each step needs and leaves each message's index to be read
    /// when an object of it is first asked for. Remote sources answer
    /// their configured readahead (`spec/remote.md` §3).
    pub readahead: u64,
    /// Bytes of a message's start read at once to find its header index
    /// (`spec/remote.md` §3).
    pub head_window: u64,
    /// Bytes at the start of the source that it holds already and serves
    /// without a request (a remote source's first window, fetched at
    /// open): opening looks for the indexes of the messages that begin
    /// inside them.
    pub cached_prefix: u64,
}

impl Default for SourceHints {
    /// A local source's: no forced verification, no ETag, no readahead,
    /// the default head window, nothing cached.
    fn default() -> Self {
        SourceHints {
            requires_verification: false,
            etag: None,
            readahead: 0,
            head_window: super::DEFAULT_HEAD_WINDOW,
            cached_prefix: 0,
        }
    }
}

/// A source made over another: it may serve reads its own way, but its
/// length and [`SourceHints`] are the inner source's, so no wrapper can
/// drop a setting. Every wrapper (`Arc`, `Box`, `&S`, the counting,
/// coalescing and caching ones, the readers' internal windows) is a
/// `Layer`; the one blanket implementation below makes it a
/// [`ByteSource`]. Each `serve_*` method defaults to the inner source's.
pub(crate) trait Layer: Send + Sync {
    /// The source read through.
    type Inner: ByteSource + ?Sized;

    /// The source read through.
    fn inner(&self) -> &Self::Inner;

    /// [`ByteSource::len`].
    fn serve_len(&self) -> Result<u64> {
        self.inner().len()
    }

    /// [`ByteSource::read_at`].
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner().read_at(offset, buf)
    }

    /// [`ByteSource::read_bytes`].
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        self.inner().read_bytes(range)
    }

    /// [`ByteSource::read_ranges`].
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.inner().read_ranges(ranges)
    }

    /// [`ByteSource::as_slice`].
    fn serve_slice(&self) -> Option<&[u8]> {
        self.inner().as_slice()
    }

    /// Bytes at the start this layer itself holds (added to, never taking
    /// from, the inner source's [`SourceHints::cached_prefix`]).
    fn held_prefix(&self) -> u64 {
        0
    }
}

impl<L: Layer> ByteSource for L {
    fn len(&self) -> Result<u64> {
        self.serve_len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.serve_at(offset, buf)
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        self.serve_bytes(range)
    }
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.serve_ranges(ranges)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        self.serve_slice()
    }
    fn hints(&self) -> SourceHints {
        let mut h = self.inner().hints();
        h.cached_prefix = h.cached_prefix.max(self.held_prefix());
        h
    }
}

/// The locator of the wire layer reads through any source: borrowing
/// when the bytes are in memory.
impl crate::wire::locate::ReadRange for dyn ByteSource + '_ {
    fn read_range(&self, r: Range<u64>) -> Result<std::borrow::Cow<'_, [u8]>> {
        if let Some(b) = self.as_slice().and_then(|s| slice_range(s, &r).ok()) {
            return Ok(std::borrow::Cow::Borrowed(b));
        }
        Ok(std::borrow::Cow::Owned(self.read_bytes(r)?.into()))
    }
}

/// `range`'s length as a buffer size.
pub(crate) fn range_len(range: &Range<u64>) -> Result<usize> {
    let n = range.end.checked_sub(range.start).ok_or_else(|| {
        Error::invalid_argument(format!(
            "reversed byte range {}..{}",
            range.start, range.end
        ))
    })?;
    usize::try_from(n).map_err(|_| Error::limit("read length", n, usize::MAX as u64))
}

/// The error of a read of `len` bytes at `offset` from a source of
/// `size` bytes that does not hold them all.
pub(crate) fn out_of_range(offset: u64, len: u64, size: u64) -> Error {
    Error::truncated(format!(
        "{len} bytes at {offset} lie beyond the {size} bytes of the source"
    ))
    .at(offset)
}

/// `s[range]`, or a truncation error at the range start.
fn slice_range<'s>(s: &'s [u8], range: &Range<u64>) -> Result<&'s [u8]> {
    let len = range.end.saturating_sub(range.start);
    usize::try_from(range.start)
        .ok()
        .zip(usize::try_from(range.end).ok())
        .filter(|(a, b)| a <= b)
        .and_then(|(a, b)| s.get(a..b))
        .ok_or_else(|| out_of_range(range.start, len, s.len() as u64))
}

fn slice_read_at(s: &[u8], offset: u64, buf: &mut [u8]) -> Result<()> {
    let end = offset.saturating_add(buf.len() as u64);
    buf.copy_from_slice(slice_range(s, &(offset..end))?);
    Ok(())
}

impl ByteSource for [u8] {
    fn len(&self) -> Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        slice_read_at(self, offset, buf)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        slice_read_at(self, offset, buf)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl ByteSource for Bytes {
    fn len(&self) -> Result<u64> {
        Ok(Bytes::len(self) as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        slice_read_at(self, offset, buf)
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        slice_range(self, &range)?;
        // In range, so both ends fit in usize.
        Ok(self.slice(range.start as usize..range.end as usize))
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl<S: ByteSource + ?Sized> Layer for Arc<S> {
    type Inner = S;
    fn inner(&self) -> &S {
        self
    }
}

impl<S: ByteSource + ?Sized> Layer for Box<S> {
    type Inner = S;
    fn inner(&self) -> &S {
        self
    }
}

impl<S: ByteSource + ?Sized> Layer for &S {
    type Inner = S;
    fn inner(&self) -> &S {
        self
    }
}

/// A shared read-only memory map. [`ByteSource::read_bytes`] hands out
/// views that keep the mapping alive, without copying.
#[derive(Debug, Clone)]
pub struct MmapSource(Arc<memmap2::Mmap>);

impl MmapSource {
    /// Maps `file` read-only. The caveat of [`crate::file::LocalFile`]'s
    /// mmap backend applies: a file truncated by another process while
    /// mapped raises SIGBUS on access.
    pub fn map(file: &File) -> Result<Self> {
        Ok(MmapSource(Arc::new(super::pod::map_file(file)?)))
    }

    /// Wraps an existing shared mapping.
    pub fn new(map: Arc<memmap2::Mmap>) -> Self {
        MmapSource(map)
    }
}

/// Keeps a mapping alive for the lifetime of the [`Bytes`] viewing it.
struct MapView(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for MapView {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl ByteSource for MmapSource {
    fn len(&self) -> Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        slice_read_at(&self.0, offset, buf)
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        slice_range(&self.0, &range)?;
        let whole = Bytes::from_owner(MapView(Arc::clone(&self.0)));
        Ok(whole.slice(range.start as usize..range.end as usize))
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.0)
    }
}

/// Positioned reads of a file: only the bytes asked for are read. Threads
/// may read at once; no shared file position is involved where the
/// platform offers positioned reads.
#[derive(Debug)]
pub struct FileSource {
    file: PositionedFile,
}

impl FileSource {
    /// Reads through `file`.
    pub fn new(file: File) -> Self {
        FileSource {
            file: PositionedFile::new(file),
        }
    }

    /// The file read.
    pub fn file(&self) -> &File {
        self.file.get()
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> Result<u64> {
        Ok(self.file.get().metadata()?.len())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::from(e).at(offset))
    }
}

#[cfg(unix)]
mod positioned {
    use std::fs::File;
    use std::os::unix::fs::FileExt;

    #[derive(Debug)]
    pub(super) struct PositionedFile(File);

    impl PositionedFile {
        pub(super) fn new(f: File) -> Self {
            PositionedFile(f)
        }
        pub(super) fn get(&self) -> &File {
            &self.0
        }
        pub(super) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            self.0.read_exact_at(buf, offset)
        }
    }
}

#[cfg(windows)]
mod positioned {
    use std::fs::File;
    use std::os::windows::fs::FileExt;

    #[derive(Debug)]
    pub(super) struct PositionedFile(File);

    impl PositionedFile {
        pub(super) fn new(f: File) -> Self {
            PositionedFile(f)
        }
        pub(super) fn get(&self) -> &File {
            &self.0
        }
        /// `seek_read` may return fewer bytes than asked; loop until full.
        pub(super) fn read_exact_at(
            &self,
            mut buf: &mut [u8],
            mut offset: u64,
        ) -> std::io::Result<()> {
            while !buf.is_empty() {
                match self.0.seek_read(buf, offset) {
                    Ok(0) => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "failed to fill whole buffer",
                        ))
                    }
                    Ok(n) => {
                        let rest = buf;
                        buf = &mut rest[n..];
                        offset += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
    }
}

/// Platforms without positioned reads: seek and read under a lock.
#[cfg(not(any(unix, windows)))]
mod positioned {
    use std::fs::File;
    use std::io::{Read, Seek, SeekFrom};
    use std::sync::Mutex;

    #[derive(Debug)]
    pub(super) struct PositionedFile(File, Mutex<()>);

    impl PositionedFile {
        pub(super) fn new(f: File) -> Self {
            PositionedFile(f, Mutex::new(()))
        }
        pub(super) fn get(&self) -> &File {
            &self.0
        }
        pub(super) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            let _guard = self.1.lock().unwrap_or_else(|p| p.into_inner());
            let mut f = &self.0;
            f.seek(SeekFrom::Start(offset))?;
            f.read_exact(buf)
        }
    }
}

use positioned::PositionedFile;

/// Counts the calls made to, and the bytes served by, another source:
/// a measure of how much a reader touches.
#[derive(Debug, Default)]
pub struct CountingSource<S> {
    inner: S,
    calls: AtomicU64,
    bytes: AtomicU64,
}

impl<S: ByteSource> CountingSource<S> {
    /// Wraps `inner` with zeroed counters.
    pub fn new(inner: S) -> Self {
        CountingSource {
            inner,
            calls: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Read requests served so far (one per range).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Bytes served so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Sets both counters back to zero.
    pub fn reset(&self) {
        self.calls.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
    }

    fn count(&self, n: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }
}

impl<S: ByteSource> Layer for CountingSource<S> {
    type Inner = S;
    fn inner(&self) -> &S {
        &self.inner
    }
    fn serve_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.count(buf.len() as u64);
        self.inner.read_at(offset, buf)
    }
    fn serve_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        self.count(range.end.saturating_sub(range.start));
        self.inner.read_bytes(range)
    }
    fn serve_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.serve_bytes(r.clone())).collect()
    }
    /// None: every byte a reader uses is counted.
    fn serve_slice(&self) -> Option<&[u8]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_bytes_serve_ranges_and_refuse_beyond_the_end() {
        let v: Vec<u8> = (0..100).collect();
        let b = Bytes::from(v.clone());
        for s in [&v as &dyn ByteSource, &b as &dyn ByteSource] {
            assert_eq!(s.len().unwrap(), 100);
            let mut buf = [0u8; 4];
            s.read_at(96, &mut buf).unwrap();
            assert_eq!(buf, [96, 97, 98, 99]);
            assert!(s.read_at(97, &mut buf).is_err());
            assert!(s.read_at(u64::MAX - 1, &mut buf).is_err());
            assert_eq!(&s.read_bytes(10..13).unwrap()[..], &[10, 11, 12]);
            assert!(s.read_bytes(99..101).is_err());
            let r = s.read_ranges(&[0..1, 50..52]).unwrap();
            assert_eq!((&r[0][..], &r[1][..]), (&[0u8][..], &[50u8, 51][..]));
        }
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 5..3;
        assert!(b.read_bytes(reversed).is_err());
    }

    #[test]
    fn files_and_maps_read_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        let v: Vec<u8> = (0..=255).cycle().take(5000).collect();
        std::fs::write(&p, &v).unwrap();
        let f = FileSource::new(File::open(&p).unwrap());
        let m = MmapSource::map(&File::open(&p).unwrap()).unwrap();
        for s in [&f as &dyn ByteSource, &m as &dyn ByteSource] {
            assert_eq!(s.len().unwrap(), 5000);
            assert_eq!(&s.read_bytes(4000..4100).unwrap()[..], &v[4000..4100]);
            assert!(s.read_bytes(4990..5001).is_err());
        }
        let view = m.read_bytes(1..3).unwrap();
        drop(m);
        assert_eq!(&view[..], &[1, 2], "a view keeps the mapping alive");
    }

    #[test]
    fn counting_counts_every_range() {
        let c = CountingSource::new(vec![0u8; 64]);
        let mut b = [0u8; 8];
        c.read_at(0, &mut b).unwrap();
        c.read_ranges(&[0..4, 8..24]).unwrap();
        assert_eq!((c.calls(), c.bytes()), (3, 28));
        assert!(c.as_slice().is_none());
        c.reset();
        assert_eq!((c.calls(), c.bytes()), (0, 0));
    }
}
