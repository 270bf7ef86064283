//! Where written bytes go: the write-side counterpart of
//! [`crate::file::ByteSource`]. A sink's output appears at its target only
//! when [`ByteSink::finish`] succeeds; a sink dropped unfinished, or one
//! whose write failed, leaves nothing there (`spec/remote.md` §7).
//! [`LocalSink`] writes a local file; `remote::RemoteSink` (feature
//! `remote`) an object in a store.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};

/// What to do when the target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Fail with [`ErrorKind::AlreadyExists`], before any byte is written
    /// and again, atomically where the target allows, when finishing.
    #[default]
    Refuse,
    /// Replace it when finishing.
    Replace,
}

/// What a finished sink wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Written {
    /// Bytes written.
    pub bytes: u64,
    /// The entity tag the store gave the new object (remote sinks whose
    /// store sends one; `None` for local files).
    pub etag: Option<String>,
}

/// A destination written front to back, complete only once finished.
///
/// Writes after a failed write, or after [`ByteSink::finish`], fail.
/// Dropping a sink that was not finished abandons its output: nothing
/// appears at the target, and a remote upload is aborted.
pub trait ByteSink: Write + Send {
    /// Completes the output: it appears at its target only now. Returns
    /// the bytes written and, for an object, its ETag.
    fn finish(&mut self) -> Result<Written>;

    /// The path or URL being written, for messages.
    fn target(&self) -> &str;

    /// Bytes the destination has acknowledged so far (for a remote sink,
    /// the parts uploaded; for a local file, the bytes written).
    fn acknowledged(&self) -> u64;
}

/// URL schemes written (and read) through `remote` (`spec/remote.md` §1);
/// any other target is a local path.
pub const REMOTE_SCHEMES: [&str; 7] = [
    "http://", "https://", "s3://", "s3a://", "gs://", "az://", "azure://",
];

/// Whether `target` names a remote object (one of [`REMOTE_SCHEMES`], in
/// any case) rather than a local path.
pub fn is_remote_url(target: &str) -> bool {
    REMOTE_SCHEMES.iter().any(|s| {
        target
            .get(..s.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(s))
    })
}

/// The library's error inside `e` when a sink raised one (a write to a
/// [`ByteSink`] reports it as an `io::Error`), else `e` as an I/O error
/// naming `target`.
pub fn write_error(target: &str, e: std::io::Error) -> Error {
    let text = e.to_string();
    match e.into_inner().map(|inner| inner.downcast::<Error>()) {
        Some(Ok(inner)) => *inner,
        _ => Error::new(ErrorKind::Io, format!("{target}: {text}")),
    }
}

fn already_exists(target: &str) -> Error {
    Error::new(
        ErrorKind::AlreadyExists,
        format!("{target}: already exists (replacing it was not asked for)"),
    )
}

fn io_at(target: &str, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{target}: {e}")).with_source(e)
}

/// A local file written atomically: the bytes go to a temporary sibling
/// (`.tgm-partial-…` in the target's directory, mode `0666 & !umask`),
/// which [`ByteSink::finish`] syncs and moves into place — by a hard link
/// that fails if the target appeared meanwhile under [`Existing::Refuse`]
/// (a rename when links are not supported), by a rename under
/// [`Existing::Replace`]. Dropped unfinished, the temporary file is
/// removed.
#[derive(Debug)]
pub struct LocalSink {
    file: Option<File>,
    tmp: PathBuf,
    target: PathBuf,
    name: String,
    existing: Existing,
    written: u64,
    cancel: Option<Arc<AtomicBool>>,
}

impl LocalSink {
    /// Starts writing `target`, whose directory must exist.
    pub fn create(target: &Path, existing: Existing) -> Result<Self> {
        let name = target.display().to_string();
        if existing == Existing::Refuse && target.symlink_metadata().is_ok() {
            return Err(already_exists(&name));
        }
        if target.is_dir() {
            return Err(Error::new(ErrorKind::Io, format!("{name}: is a directory")));
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (file, tmp) = temp_in(dir).map_err(|e| io_at(&name, e))?;
        Ok(LocalSink {
            file: Some(file),
            tmp,
            target: target.to_path_buf(),
            name,
            existing,
            written: 0,
            cancel: None,
        })
    }

    /// Makes the sink remove its temporary file and fail at its next
    /// write, flush or finish once `flag` is true (a signal handler sets
    /// it; the CLI does so on SIGINT and SIGTERM).
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Fails, removing the temporary file, when the cancel flag is raised.
    fn check_cancel(&mut self) -> std::io::Result<()> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::SeqCst))
        {
            if self.file.take().is_some() {
                let _ = std::fs::remove_file(&self.tmp);
            }
            return Err(std::io::Error::other(format!(
                "{}: interrupted; the output was not written",
                self.name
            )));
        }
        Ok(())
    }

    /// The open temporary file (for writers that seek back, such as
    /// [`crate::StreamingEncoder::finish_with_backfill`]).
    pub fn file_mut(&mut self) -> Result<&mut File> {
        let name = &self.name;
        self.file
            .as_mut()
            .ok_or_else(|| Error::new(ErrorKind::Io, format!("{name}: already finished")))
    }

    fn open(&mut self) -> std::io::Result<&mut File> {
        self.check_cancel()?;
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other(format!("{}: already finished", self.name)))
    }

    fn publish(&self) -> std::io::Result<()> {
        if self.existing == Existing::Replace {
            return std::fs::rename(&self.tmp, &self.target);
        }
        match std::fs::hard_link(&self.tmp, &self.target) {
            Ok(()) => std::fs::remove_file(&self.tmp),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
            // A file system without hard links: a checked rename.
            Err(_) if self.target.symlink_metadata().is_err() => {
                std::fs::rename(&self.tmp, &self.target)
            }
            Err(_) => Err(std::io::ErrorKind::AlreadyExists.into()),
        }
    }
}

/// A new file `.tgm-partial-<pid>-<n>` in `dir`, never one that existed.
fn temp_in(dir: &Path) -> std::io::Result<(File, PathBuf)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = dir.join(format!(".tgm-partial-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Write for LocalSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.open()?.write(b)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.open()?.flush()
    }
}

/// Seeking stays inside the bytes written ([`ByteSink::acknowledged`]
/// counts writes, so rewriting bytes already counted is not counted again).
impl Seek for LocalSink {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let f = self.open()?;
        let at = f.seek(pos)?;
        let end = f.metadata()?.len();
        self.written = self.written.max(end);
        Ok(at)
    }
}

impl ByteSink for LocalSink {
    fn finish(&mut self) -> Result<Written> {
        self.check_cancel()
            .map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
        // The file is closed at the end of this block, before publishing.
        let len = {
            let f = self.file.take().ok_or_else(|| {
                Error::new(ErrorKind::Io, format!("{}: already finished", self.name))
            })?;
            let len = f.metadata().map_err(|e| io_at(&self.name, e))?.len();
            f.sync_all().map_err(|e| io_at(&self.name, e))?;
            len
        };
        match self.publish() {
            Ok(()) => Ok(Written {
                bytes: len,
                etag: None,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&self.tmp);
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    return Err(already_exists(&self.name));
                }
                Err(io_at(&self.name, e))
            }
        }
    }

    fn target(&self) -> &str {
        &self.name
    }

    fn acknowledged(&self) -> u64 {
        self.written
    }
}

impl Drop for LocalSink {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_sink_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.tgm");
        let mut s = LocalSink::create(&target, Existing::Refuse).unwrap();
        s.write_all(b"hello").unwrap();
        assert!(!target.exists());
        let w = s.finish().unwrap();
        assert_eq!(w.bytes, 5);
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_dropped_local_sink_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.tgm");
        let mut s = LocalSink::create(&target, Existing::Refuse).unwrap();
        s.write_all(b"half").unwrap();
        drop(s);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_existing_file_is_kept_unless_replacing_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.tgm");
        std::fs::write(&target, b"old").unwrap();
        let e = LocalSink::create(&target, Existing::Refuse).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::AlreadyExists);
        // Appearing while the sink was open: still kept.
        std::fs::remove_file(&target).unwrap();
        let mut s = LocalSink::create(&target, Existing::Refuse).unwrap();
        s.write_all(b"new").unwrap();
        std::fs::write(&target, b"raced").unwrap();
        assert_eq!(s.finish().unwrap_err().kind(), &ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&target).unwrap(), b"raced");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut s = LocalSink::create(&target, Existing::Replace).unwrap();
        s.write_all(b"new").unwrap();
        s.finish().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }
}
