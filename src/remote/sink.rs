//! Writing an object: the bytes go out in parts of a multipart upload as
//! they are written, completed only by [`ByteSink::finish`] and aborted on
//! any failure or drop (`spec/remote.md` §7).

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use object_store::path::Path;
use object_store::{
    MultipartUpload, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, PutResult,
};
use tokio::task::JoinSet;

use super::blocking::{block_on, runtime};
use super::errors::from_store;
use super::options::{RemoteOptions, MIN_PART_SIZE};
use crate::error::{Error, ErrorKind, Result};
use crate::file::{ByteSink, Existing, Written};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Finished,
    Failed,
}

/// A remote object being written, as a blocking [`ByteSink`].
///
/// Bytes fill a part of [`RemoteOptions::part_size`]; each full part is
/// sent as one part of a multipart upload, started with the first, with
/// at most [`RemoteOptions::parts_in_flight`] parts uploading at once (a
/// write waits for one to complete beyond that), so memory stays at those
/// parts and the one being filled. [`ByteSink::finish`] sends the last
/// part, waits for every part and completes the upload: only then does the
/// object appear. An output that never fills a part is sent by one `PUT`
/// at finish. A failed write or finish, or a drop before finishing, aborts
/// the upload: no object appears and no part is left.
///
/// Under [`Existing::Refuse`], [`RemoteSink::create`] checks with a `HEAD`
/// that no object is at the key; a single `PUT` is then a conditional
/// create (`If-None-Match: *`) where the store supports one, and a
/// multipart upload is completed only after a second `HEAD` finds the key
/// still free (object_store 0.13 offers no conditional completion), so a
/// writer racing between that `HEAD` and the completion can be replaced.
///
/// A store without multipart uploads (`http(s)://`: a WebDAV server taking
/// `PUT`) gets the whole object in one `PUT` at finish: the parts are
/// spooled to an unlinked temporary file (in `TMPDIR`), which is mapped
/// and sent from the mapping, so memory stays at one part however large
/// the object. Such a store has no conditional create: under
/// [`Existing::Refuse`] the `PUT` follows a second `HEAD`.
///
/// A cancel flag ([`RemoteSink::set_cancel`]), once raised, makes the next
/// write, flush or finish abort the upload and fail (a signal handler sets
/// it; the CLI does so on SIGINT and SIGTERM).
pub struct RemoteSink {
    store: Arc<dyn ObjectStore>,
    path: Path,
    url: String,
    existing: Existing,
    part_size: usize,
    parts_in_flight: usize,
    buf: Vec<u8>,
    upload: Option<Box<dyn MultipartUpload>>,
    spool: Option<File>,
    cancel: Option<Arc<AtomicBool>>,
    tasks: JoinSet<object_store::Result<()>>,
    written: u64,
    acknowledged: Arc<AtomicU64>,
    state: State,
    rt: &'static tokio::runtime::Runtime,
}

impl std::fmt::Debug for RemoteSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSink")
            .field("url", &self.url)
            .field("written", &self.written)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl RemoteSink {
    /// Starts writing `url` (the schemes and configuration of
    /// `spec/remote.md` §1). Under [`Existing::Refuse`] an object already
    /// at the key is an [`ErrorKind::AlreadyExists`] error, before anything
    /// is sent.
    pub fn create(url: &str, opts: &RemoteOptions, existing: Existing) -> Result<Self> {
        let (store, path) = super::store_for_url(url, opts)?;
        Self::create_in(store, path, url, opts, existing)
    }

    /// [`RemoteSink::create`] for the object at `path` of `store`; `url`
    /// names it in errors.
    pub(crate) fn create_in(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: &str,
        opts: &RemoteOptions,
        existing: Existing,
    ) -> Result<Self> {
        let rt = runtime()?;
        if existing == Existing::Refuse {
            block_on(rt, absent(&*store, &path, url))?;
        }
        Ok(RemoteSink {
            store,
            path,
            url: url.to_string(),
            existing,
            part_size: opts.part_size.max(MIN_PART_SIZE),
            parts_in_flight: opts.parts_in_flight.max(1),
            buf: Vec::new(),
            upload: None,
            spool: None,
            cancel: None,
            tasks: JoinSet::new(),
            written: 0,
            acknowledged: Arc::default(),
            state: State::Open,
            rt,
        })
    }

    /// The URL written.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Bytes written so far (sent or buffered).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// A counter of the bytes the store has acknowledged (as
    /// [`ByteSink::acknowledged`]), readable from another thread while
    /// the sink is written: for progress shown by a separate thread.
    pub fn acknowledged_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.acknowledged)
    }

    /// Makes the sink abort its upload and fail at its next write, flush or
    /// finish once `flag` is true.
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Fails, aborting the upload, when the cancel flag is raised.
    fn check_cancel(&mut self) -> Result<()> {
        if self.state == State::Open
            && self
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::SeqCst))
        {
            self.abort();
            return Err(Error::new(
                ErrorKind::Io,
                format!("{}: interrupted; the upload was aborted", self.url),
            ));
        }
        Ok(())
    }

    fn check_open(&mut self) -> Result<()> {
        self.check_cancel()?;
        match self.state {
            State::Open => Ok(()),
            State::Finished => Err(Error::invalid_argument(format!(
                "{}: the upload is already finished",
                self.url
            ))),
            State::Failed => Err(Error::new(
                ErrorKind::Remote,
                format!("{}: the upload failed and was aborted", self.url),
            )),
        }
    }

    /// Sends the buffered bytes as the next part, starting the upload with
    /// the first, after waiting for room among the parts in flight.
    fn send_part(&mut self) -> Result<()> {
        let (rt, url) = (self.rt, self.url.as_str());
        if self.upload.is_none() && self.spool.is_none() {
            let up = block_on(rt, async {
                match self.store.put_multipart(&self.path).await {
                    Ok(up) => Ok(Some(up)),
                    Err(object_store::Error::NotImplemented { .. }) => Ok(None),
                    Err(e) => Err(from_store(url, e)),
                }
            })?;
            match up {
                Some(up) => self.upload = Some(up),
                None => self.spool = Some(spool_file().map_err(|e| spool_error(url, e))?),
            }
        }
        if let Some(f) = &mut self.spool {
            f.write_all(&self.buf).map_err(|e| spool_error(url, e))?;
            self.buf.clear();
            return Ok(());
        }
        while self.tasks.len() >= self.parts_in_flight {
            self.join_one()?;
        }
        let part = std::mem::take(&mut self.buf);
        let n = part.len() as u64;
        let upload = self.upload.as_mut().expect("started above");
        let put = upload.put_part(PutPayload::from(part));
        let ack = Arc::clone(&self.acknowledged);
        self.tasks.spawn_on(
            async move {
                put.await?;
                ack.fetch_add(n, Ordering::Relaxed);
                Ok(())
            },
            rt.handle(),
        );
        Ok(())
    }

    /// Waits for one part in flight to complete.
    fn join_one(&mut self) -> Result<()> {
        let url = self.url.as_str();
        let tasks = &mut self.tasks;
        block_on(self.rt, async {
            match tasks.join_next().await {
                None | Some(Ok(Ok(()))) => Ok(()),
                Some(Ok(Err(e))) => Err(from_store(url, e)),
                Some(Err(e)) => Err(Error::new(
                    ErrorKind::Remote,
                    format!("{url}: a part upload did not complete: {e}"),
                )),
            }
        })
    }

    /// Sends what remains and makes the object appear.
    fn complete(&mut self) -> Result<PutResult> {
        let (rt, url) = (self.rt, self.url.clone());
        if self.spool.is_some() {
            self.send_part()?;
        }
        let whole = match self.spool.take() {
            Some(f) => Some(map_spool(&f).map_err(|e| spool_error(&url, e))?),
            None if self.upload.is_none() => Some(std::mem::take(&mut self.buf).into()),
            None => None,
        };
        if let Some(bytes) = whole {
            let payload = PutPayload::from(bytes);
            let n = payload.content_length() as u64;
            let r = block_on(
                rt,
                put_whole(&*self.store, &self.path, &url, self.existing, payload),
            )?;
            self.acknowledged.fetch_add(n, Ordering::Relaxed);
            return Ok(r);
        }
        if !self.buf.is_empty() {
            self.send_part()?;
        }
        while !self.tasks.is_empty() {
            self.join_one()?;
        }
        if self.existing == Existing::Refuse {
            block_on(rt, absent(&*self.store, &self.path, &url))?;
        }
        let mut up = self.upload.take().expect("started");
        let r = block_on(rt, async {
            match up.complete().await {
                Ok(r) => Ok(r),
                Err(e) => {
                    let _ = up.abort().await;
                    Err(from_store(&url, e))
                }
            }
        });
        r
    }

    /// Aborts the upload once the parts in flight have ended (a part still
    /// arriving when the abort is sent could outlive it, S3 documents).
    fn abort(&mut self) {
        self.state = State::Failed;
        self.buf = Vec::new();
        self.spool = None;
        let up = self.upload.take();
        let tasks = &mut self.tasks;
        let _ = block_on(self.rt, async move {
            while tasks.join_next().await.is_some() {}
            if let Some(mut up) = up {
                let _ = up.abort().await;
            }
            Ok(())
        });
    }
}

/// Starts writing `target`: a URL ([`crate::file::is_remote_url`]) as a
/// [`RemoteSink`] configured by `opts`, anything else as a local path
/// through [`crate::file::LocalSink`] (`spec/remote.md` §7). Either appears
/// only when finished; `cancel`, once raised, makes it fail and leave
/// nothing.
pub fn create_sink(
    target: &str,
    opts: &RemoteOptions,
    existing: Existing,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<Box<dyn ByteSink>> {
    if crate::file::is_remote_url(target) {
        let mut s = RemoteSink::create(target, opts, existing)?;
        if let Some(c) = cancel {
            s.set_cancel(c);
        }
        return Ok(Box::new(s));
    }
    let mut s = crate::file::LocalSink::create(std::path::Path::new(target), existing)?;
    if let Some(c) = cancel {
        s.set_cancel(c);
    }
    Ok(Box::new(s))
}

/// The whole output in one `PUT`: a conditional create under
/// [`Existing::Refuse`], or, where the store has none, a `PUT` after a
/// second `HEAD` finds the key still free.
async fn put_whole(
    store: &dyn ObjectStore,
    path: &Path,
    url: &str,
    existing: Existing,
    payload: PutPayload,
) -> Result<PutResult> {
    let put = |mode: PutMode, payload: PutPayload| {
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        store.put_opts(path, payload, opts)
    };
    if existing == Existing::Replace {
        return put(PutMode::Overwrite, payload)
            .await
            .map_err(|e| from_store(url, e));
    }
    match put(PutMode::Create, payload.clone()).await {
        Err(object_store::Error::NotImplemented { .. }) => {
            absent(store, path, url).await?;
            put(PutMode::Overwrite, payload)
                .await
                .map_err(|e| from_store(url, e))
        }
        r => r.map_err(|e| from_store(url, e)),
    }
}

/// A new temporary file for the parts of an upload sent whole, already
/// unlinked (on Unix) so that nothing remains however the process ends.
fn spool_file() -> std::io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = dir.join(format!(".tgm-upload-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => {
                if cfg!(unix) {
                    std::fs::remove_file(&p)?;
                }
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The spooled bytes as one buffer backed by a mapping of the file.
fn map_spool(f: &File) -> std::io::Result<bytes::Bytes> {
    // SAFETY: the file is this sink's own, unlinked, and no longer written.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(f) }?;
    Ok(bytes::Bytes::from_owner(map))
}

fn spool_error(url: &str, e: std::io::Error) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("{url}: spooling the object before its PUT: {e}"),
    )
    .with_source(e)
}

/// `Ok` when no object is at `path`; [`ErrorKind::AlreadyExists`] when one
/// is; the `HEAD`'s own failure otherwise.
async fn absent(store: &dyn ObjectStore, path: &Path, url: &str) -> Result<()> {
    match store.head(path).await {
        Ok(_) => Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("{url}: already exists (replacing it was not asked for)"),
        )),
        Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(from_store(url, e)),
    }
}

impl Write for RemoteSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.check_open().map_err(std::io::Error::other)?;
        if b.is_empty() {
            return Ok(0);
        }
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(self.part_size);
        }
        let n = b.len().min(self.part_size - self.buf.len());
        self.buf.extend_from_slice(&b[..n]);
        self.written += n as u64;
        if self.buf.len() == self.part_size {
            if let Err(e) = self.send_part() {
                self.abort();
                return Err(std::io::Error::other(e));
            }
        }
        Ok(n)
    }

    /// Parts are sent as they fill; flushing sends nothing early (a part
    /// shorter than the minimum may only be the last).
    fn flush(&mut self) -> std::io::Result<()> {
        self.check_open().map_err(std::io::Error::other)
    }
}

impl ByteSink for RemoteSink {
    fn finish(&mut self) -> Result<Written> {
        self.check_open()?;
        match self.complete() {
            Ok(r) => {
                self.state = State::Finished;
                Ok(Written {
                    bytes: self.written,
                    etag: r.e_tag,
                })
            }
            Err(e) => {
                self.abort();
                Err(e)
            }
        }
    }

    fn target(&self) -> &str {
        &self.url
    }

    fn acknowledged(&self) -> u64 {
        self.acknowledged.load(Ordering::Relaxed)
    }
}

impl Drop for RemoteSink {
    fn drop(&mut self) {
        if self.state == State::Open && (self.upload.is_some() || self.spool.is_some()) {
            self.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn sink(store: &Arc<InMemory>, existing: Existing) -> Result<RemoteSink> {
        let opts = RemoteOptions::default().with_part_size(MIN_PART_SIZE);
        let s: Arc<dyn ObjectStore> = store.clone();
        RemoteSink::create_in(s, Path::from("k.tgm"), "mem://b/k.tgm", &opts, existing)
    }

    fn stored(store: &InMemory) -> Option<Vec<u8>> {
        block_on(runtime().unwrap(), async {
            Ok(match store.get(&Path::from("k.tgm")).await {
                Ok(g) => Some(g.bytes().await.unwrap().to_vec()),
                Err(_) => None,
            })
        })
        .unwrap()
    }

    #[test]
    fn small_and_multipart_outputs_appear_only_when_finished() {
        for len in [0usize, 10, MIN_PART_SIZE, 3 * MIN_PART_SIZE + 7] {
            let store = Arc::new(InMemory::new());
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut s = sink(&store, Existing::Refuse).unwrap();
            for chunk in data.chunks(1 << 20) {
                s.write_all(chunk).unwrap();
            }
            assert_eq!(stored(&store), None, "{len}");
            let w = s.finish().unwrap();
            assert_eq!(w.bytes, len as u64);
            assert!(w.etag.is_some());
            assert_eq!(s.acknowledged(), len as u64);
            assert_eq!(stored(&store).unwrap(), data, "{len}");
        }
    }

    #[test]
    fn a_dropped_upload_leaves_nothing() {
        let store = Arc::new(InMemory::new());
        let mut s = sink(&store, Existing::Refuse).unwrap();
        s.write_all(&vec![7u8; 2 * MIN_PART_SIZE + 1]).unwrap();
        drop(s);
        assert_eq!(stored(&store), None);
    }

    #[test]
    fn an_existing_object_is_kept_unless_replacing_is_asked() {
        let store = Arc::new(InMemory::new());
        let mut s = sink(&store, Existing::Refuse).unwrap();
        s.write_all(b"old").unwrap();
        s.finish().unwrap();
        let e = sink(&store, Existing::Refuse).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::AlreadyExists);
        assert!(e.to_string().contains("mem://b/k.tgm"), "{e}");
        let mut s = sink(&store, Existing::Replace).unwrap();
        s.write_all(b"new").unwrap();
        s.finish().unwrap();
        assert_eq!(stored(&store).unwrap(), b"new");
    }

    #[test]
    fn an_object_created_meanwhile_is_kept() {
        for len in [3, 2 * MIN_PART_SIZE] {
            let store = Arc::new(InMemory::new());
            let mut s = sink(&store, Existing::Refuse).unwrap();
            s.write_all(&vec![1u8; len]).unwrap();
            let mut other = sink(&store, Existing::Refuse).unwrap();
            other.write_all(b"first").unwrap();
            other.finish().unwrap();
            assert_eq!(s.finish().unwrap_err().kind(), &ErrorKind::AlreadyExists);
            assert_eq!(stored(&store).unwrap(), b"first");
            assert!(s.write_all(b"x").is_err());
        }
    }
}
