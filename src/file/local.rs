//! [`LocalFile`]: a file opened by path, the byte source
//! [`super::TgmFile::open`] reads, memory-mapped or through positioned
//! reads (`spec/files.md` §7).

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use super::source::{ByteSource, FileSource, MmapSource};
use crate::error::{Error, Result};

/// How file bytes are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// A read-only memory map: reads borrow the mapping (default).
    #[default]
    Mmap,
    /// Positioned reads (`pread`): only the bytes asked for are read, into
    /// owned buffers. For network filesystems and files others may shrink.
    Pread,
}

/// Hops longer than this read through the file rather than the mapping:
/// touching one page per message of a large file through the mapping
/// costs a page fault each, a small positioned read does not.
const FAR_HOP: u64 = 256 << 10;

/// A file opened by path, as a [`ByteSource`]: with [`Backend::Mmap`] its
/// bytes are a read-only mapping taken at open (and again at
/// [`super::TgmFile::refresh`]), which readers borrow from; with
/// [`Backend::Pread`] every read is a positioned read of the file as it
/// is now.
///
/// A file truncated by another process while mapped raises SIGBUS on
/// access; use [`Backend::Pread`] for files others may shrink.
#[derive(Debug)]
pub struct LocalFile {
    path: PathBuf,
    file: FileSource,
    backend: Backend,
    /// The mapping ([`Backend::Mmap`] and a non-empty file).
    map: Option<MmapSource>,
    /// Where the last read through the mapping began.
    last: AtomicU64,
}

impl LocalFile {
    /// Opens `path` for reading through `backend`; errors name the path.
    pub fn open(path: impl AsRef<Path>, backend: Backend) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|e| Error::from(e).with_path(&path))?;
        let mut f = LocalFile {
            path,
            file: FileSource::new(file),
            backend,
            map: None,
            last: AtomicU64::new(0),
        };
        f.reopen(0)?;
        Ok(f)
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The backend reads go through.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Maps the file as it is now (with [`Backend::Mmap`]), the next read
    /// expected near `from`.
    pub(super) fn reopen(&mut self, from: u64) -> Result<()> {
        if self.backend == Backend::Mmap {
            let size = self.file.file().metadata()?.len();
            self.map = if size == 0 {
                None
            } else {
                Some(MmapSource::map(self.file.file())?)
            };
        }
        self.last.store(from, Ordering::Relaxed);
        Ok(())
    }

    /// The mapping, and whether a read at `offset` lies far from the last
    /// one (then read through the file instead).
    fn mapped(&self, offset: u64) -> Option<(&MmapSource, bool)> {
        let m = self.map.as_ref()?;
        let far = offset.abs_diff(self.last.swap(offset, Ordering::Relaxed)) > FAR_HOP;
        Some((m, far))
    }
}

impl ByteSource for LocalFile {
    fn len(&self) -> Result<u64> {
        match (&self.map, self.backend) {
            (Some(m), _) => m.len(),
            (None, Backend::Mmap) => Ok(0),
            (None, Backend::Pread) => self.file.len(),
        }
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        match self.mapped(offset) {
            Some((m, far)) => {
                if far && self.file.read_at(offset, buf).is_ok() {
                    return Ok(());
                }
                m.read_at(offset, buf)
            }
            None if self.backend == Backend::Mmap => {
                <[u8] as ByteSource>::read_at(&[], offset, buf)
            }
            None => self.file.read_at(offset, buf),
        }
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        match self.mapped(range.start) {
            Some((m, true)) => {
                let mut v = crate::buffer::zeroed(super::source::range_len(&range)?)?;
                if self.file.read_at(range.start, &mut v).is_ok() {
                    return Ok(Bytes::from(v));
                }
                m.read_bytes(range)
            }
            Some((m, false)) => m.read_bytes(range),
            None if self.backend == Backend::Mmap => <[u8] as ByteSource>::read_bytes(&[], range),
            None => self.file.read_bytes(range),
        }
    }
    fn as_slice(&self) -> Option<&[u8]> {
        match (&self.map, self.backend) {
            (Some(m), _) => m.as_slice(),
            (None, Backend::Mmap) => Some(&[]),
            (None, Backend::Pread) => None,
        }
    }
}
