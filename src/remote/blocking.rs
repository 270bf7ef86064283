//! The blocking remote source: [`AsyncRemoteSource`] driven by its own
//! small tokio runtime (`spec/remote.md` §1).

use std::future::Future;
use std::ops::Range;
use std::sync::OnceLock;

use bytes::Bytes;

use super::async_source::{AsyncRemoteSource, RemoteStats};
use super::options::RemoteOptions;
use crate::error::{Error, Result};
use crate::file::{AsyncByteSource, ByteSource, SourceHints};

/// A remote object as a [`ByteSource`]: every read blocks the calling
/// thread until its requests complete.
///
/// The source runs its requests on a runtime shared by every remote
/// source of the process (two worker threads, started on first use and
/// never shut down, so a source may be dropped anywhere). Called from a thread that is inside another tokio runtime
/// (a `spawn_blocking` closure, or an async task, where blocking is
/// discouraged), each read runs on a short-lived helper thread, so it
/// never panics with "cannot start a runtime from within a runtime"; async
/// code should prefer [`AsyncRemoteSource`].
#[derive(Debug)]
pub struct RemoteSource {
    inner: AsyncRemoteSource,
    rt: &'static tokio::runtime::Runtime,
}

impl RemoteSource {
    /// Opens `url` (one ranged GET of its first bytes; see
    /// [`AsyncRemoteSource::open`]).
    pub fn open(url: &str, opts: &RemoteOptions) -> Result<Self> {
        let rt = runtime()?;
        let inner = block_on(rt, AsyncRemoteSource::open(url, opts))?;
        Ok(RemoteSource { inner, rt })
    }

    /// A source whose length and ETag are known (from a catalogue):
    /// no request until a read ([`AsyncRemoteSource::open_known`]).
    pub fn open_known(url: &str, opts: &RemoteOptions, len: u64, etag: String) -> Result<Self> {
        Self::from_async(AsyncRemoteSource::open_known(url, opts, len, etag)?)
    }

    /// Wraps an already opened asynchronous source.
    pub fn from_async(inner: AsyncRemoteSource) -> Result<Self> {
        Ok(RemoteSource {
            inner,
            rt: runtime()?,
        })
    }

    /// The asynchronous source underneath.
    pub fn as_async(&self) -> &AsyncRemoteSource {
        &self.inner
    }

    /// Requests and bytes so far, those of [`RemoteSource::open`] included.
    pub fn stats(&self) -> RemoteStats {
        self.inner.stats()
    }

    fn block<T: Send>(&self, f: impl Future<Output = Result<T>> + Send) -> Result<T> {
        block_on(self.rt, f)
    }
}

pub(super) fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tgm-remote")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| {
        Error::new(
            crate::ErrorKind::Io,
            format!("starting the remote runtime: {e}"),
        )
    })
}

pub(super) fn block_on<T: Send>(
    rt: &tokio::runtime::Runtime,
    f: impl Future<Output = Result<T>> + Send,
) -> Result<T> {
    if tokio::runtime::Handle::try_current().is_err() {
        return rt.block_on(f);
    }
    std::thread::scope(|s| {
        s.spawn(|| rt.block_on(f))
            .join()
            .unwrap_or_else(|_| Err(Error::invalid_argument("remote read thread panicked")))
    })
}

impl ByteSource for RemoteSource {
    fn len(&self) -> Result<u64> {
        Ok(self.inner.len())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or_else(|| Error::invalid_argument("range overflows"))?;
        let b = self.read_bytes(offset..end)?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn read_bytes(&self, range: Range<u64>) -> Result<Bytes> {
        self.block(self.inner.read_range(range))
    }
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.block(self.inner.read_ranges(ranges))
    }
    fn hints(&self) -> SourceHints {
        AsyncByteSource::hints(&self.inner)
    }
}
