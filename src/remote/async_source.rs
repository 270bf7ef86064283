//! The asynchronous remote source: a first ranged GET of the object's
//! first bytes gives its length and the ETag to pin (a HEAD only when that
//! response lacks them), then ranged GETs, coalesced, bounded and checked
//! (`spec/remote.md` §1, §2, §5).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use super::errors::{bad_response, from_store};
use super::options::RemoteOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::file::ranges::{coalesce, split_merged as ranges_split};
use crate::file::{AsyncByteSource, SourceHints};

/// Requests sent and body bytes received by one source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Requests sent (HEAD and GET; retries inside one request not counted).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// One remote object, read by ranges. Cheap to clone (clones share the
/// connection pool and the counters).
#[derive(Debug, Clone)]
pub struct AsyncRemoteSource {
    store: Arc<dyn ObjectStore>,
    path: Path,
    url: Arc<str>,
    opts: RemoteOptions,
    len: u64,
    etag: Option<String>,
    /// The object's first bytes, fetched by open: reads inside them cost
    /// no request.
    head: Bytes,
    counters: Arc<Counters>,
}

impl AsyncRemoteSource {
    /// Opens `url` (the schemes of `spec/remote.md` §1): one ranged GET of the
    /// first [`RemoteOptions::head_window`] bytes, whose response gives the
    /// length and the ETag every later read is pinned to, and whose bytes
    /// are kept. A HEAD follows only when that response carries no ETag,
    /// or fails without naming the object missing or refused (an empty
    /// object); a window of 0 opens with a HEAD alone.
    pub async fn open(url: &str, opts: &RemoteOptions) -> Result<Self> {
        let (store, path) = super::store_for_url(url, opts)?;
        Self::open_in(store, path, url, opts.clone()).await
    }

    /// A source for `url` whose length and ETag are known already (from a
    /// catalogue, `spec/files.md` §9.5): no request is sent until a read,
    /// and every read is pinned to `etag` (`If-Match`) and checks that the
    /// object still has `len` bytes, so a changed object is an
    /// `ObjectChanged` error, never other bytes.
    pub fn open_known(url: &str, opts: &RemoteOptions, len: u64, etag: String) -> Result<Self> {
        let (store, path) = super::store_for_url(url, opts)?;
        Ok(AsyncRemoteSource {
            store,
            path,
            url: url.into(),
            opts: opts.clone(),
            len,
            etag: Some(etag),
            head: Bytes::new(),
            counters: Arc::new(Counters::default()),
        })
    }

    /// Opens the object at `path` of `store`; `url` names it in errors.
    pub async fn open_in(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: &str,
        opts: RemoteOptions,
    ) -> Result<Self> {
        let mut me = AsyncRemoteSource {
            store,
            path,
            url: url.into(),
            opts,
            len: 0,
            etag: None,
            head: Bytes::new(),
            counters: Arc::new(Counters::default()),
        };
        let window = me.opts.head_window.min(me.opts.max_response_bytes);
        if window == 0 {
            me.head_request(None).await?;
            return Ok(me);
        }
        match me.first_get(window).await {
            Ok(()) if me.etag.is_some() => Ok(me),
            Ok(()) => {
                let len = me.len;
                me.head_request(Some(len)).await?;
                Ok(me)
            }
            Err(e) if *e.kind() == ErrorKind::Remote => {
                // An unusable first response (an empty object answers 416,
                // a server may ignore `Range`): the HEAD decides, and later
                // reads check their own responses.
                me.head = Bytes::new();
                me.head_request(None).await.map_err(|_| e)?;
                Ok(me)
            }
            Err(e) => Err(e),
        }
    }

    /// The HEAD of open: length and ETag; `expect` is the length the first
    /// GET reported, which the HEAD must repeat.
    async fn head_request(&mut self, expect: Option<u64>) -> Result<()> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let meta = self
            .store
            .head(&self.path)
            .await
            .map_err(|e| from_store(&self.url, e))?;
        if let Some(n) = expect.filter(|&n| n != meta.size) {
            return Err(Error::new(
                ErrorKind::ObjectChanged,
                format!(
                    "{}: {} bytes by HEAD, {n} by the GET before it",
                    self.url, meta.size
                ),
            ));
        }
        self.len = meta.size;
        self.etag = meta.e_tag;
        Ok(())
    }

    /// The first GET: bytes `0..window` (fewer when the object is shorter),
    /// its length from `Content-Range`, its ETag, kept as the head.
    async fn first_get(&mut self, window: u64) -> Result<()> {
        let (got, size, etag) = self.get(0..window, |size| 0..window.min(size)).await?;
        self.len = size;
        self.etag = etag;
        self.head = got;
        Ok(())
    }

    /// The one ranged GET every read goes through, the first included:
    /// asks for `asked` (pinned to the ETag once one is known), checks the
    /// answer against the pinned ETag and against `want(object length)`,
    /// the range the answer must carry, and returns exactly that body with
    /// the object's length and ETag (`spec/remote.md` §1, §5).
    async fn get(
        &self,
        asked: Range<u64>,
        want: impl FnOnce(u64) -> Range<u64>,
    ) -> Result<(Bytes, u64, Option<String>)> {
        let go = GetOptions {
            range: Some(GetRange::Bounded(asked.clone())),
            if_match: self.etag.clone(),
            ..Default::default()
        };
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let res = self
            .store
            .get_opts(&self.path, go)
            .await
            .map_err(|e| from_store(&self.url, e))?;
        if let (Some(pinned), Some(now)) = (&self.etag, &res.meta.e_tag) {
            if pinned != now {
                return Err(Error::new(
                    ErrorKind::ObjectChanged,
                    format!(
                        "{}: ETag {now} differs from {pinned} pinned at open",
                        self.url
                    ),
                ));
            }
        }
        let (size, etag) = (res.meta.size, res.meta.e_tag.clone());
        let want = want(size);
        if res.range != want {
            return Err(bad_response(
                &self.url,
                format!("asked for bytes {want:?}, the server sent {:?}", res.range),
            )
            .at(want.start));
        }
        Ok((self.body(res, &want).await?, size, etag))
    }

    /// The object's length at open.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ETag pinned at open, if the server sent one (on the first GET,
    /// or else on the HEAD).
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// The URL opened.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The options in force.
    pub fn options(&self) -> &RemoteOptions {
        &self.opts
    }

    /// Requests and bytes so far.
    pub fn stats(&self) -> RemoteStats {
        RemoteStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
        }
    }

    /// The bytes of `range`: one GET.
    pub async fn read_range(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start >= range.end {
            if range.start > range.end {
                return Err(Error::invalid_argument("reversed byte range"));
            }
            return Ok(Bytes::new());
        }
        if range.end > self.len {
            return Err(Error::truncated(format!(
                "{}: {} bytes at {} lie beyond the {} bytes of the object",
                self.url,
                range.end - range.start,
                range.start,
                self.len
            ))
            .at(range.start));
        }
        if range.end <= self.head.len() as u64 {
            return Ok(self.head.slice(range.start as usize..range.end as usize));
        }
        let want = range.end - range.start;
        if want > self.opts.max_response_bytes {
            return Err(
                Error::limit("max_response_bytes", want, self.opts.max_response_bytes)
                    .at(range.start),
            );
        }
        let (got, size, _) = self.get(range.clone(), |_| range).await?;
        if size != self.len {
            return Err(Error::new(
                ErrorKind::ObjectChanged,
                format!("{}: {size} bytes now, {} at open", self.url, self.len),
            ));
        }
        Ok(got)
    }

    /// The body of `res`, the answer to a GET of `range` (at most
    /// `max_response_bytes` long, checked by the caller): exactly that many
    /// bytes, else an error.
    async fn body(&self, res: object_store::GetResult, range: &Range<u64>) -> Result<Bytes> {
        let want = range.end - range.start;
        let mut out = BytesMut::with_capacity(want as usize);
        let mut body = res.into_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| from_store(&self.url, e))?;
            self.counters
                .bytes
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            if out.len() as u64 + chunk.len() as u64 > want {
                return Err(bad_response(
                    &self.url,
                    format!("the server sent more than the {want} bytes asked for"),
                )
                .at(range.start));
            }
            out.extend_from_slice(&chunk);
        }
        if out.len() as u64 != want {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "{}: short body: {} of {want} bytes asked for",
                    self.url,
                    out.len()
                ),
            )
            .at(range.start));
        }
        Ok(out.freeze())
    }

    /// Bytes at the start of the object that open fetched and keeps: reads
    /// inside them send no request.
    pub fn cached_prefix(&self) -> u64 {
        self.head.len() as u64
    }

    /// Several ranges, in the order asked: ranges closer than the
    /// coalescing gap are fetched by one GET, and up to `concurrency` GETs
    /// are in flight at once.
    pub async fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let merged = coalesce(ranges, self.opts.coalesce_gap)?;
        let got: Vec<Bytes> = stream::iter(merged.iter().cloned().map(|r| self.read_range(r)))
            .buffered(self.opts.concurrency.max(1))
            .try_collect()
            .await?;
        ranges_split(ranges, &merged, &got)
    }
}

/// What [`crate::file::AsyncTgmFile`] reads through: the same ranged GETs.
impl AsyncByteSource for AsyncRemoteSource {
    fn len(&self) -> impl std::future::Future<Output = Result<u64>> + Send {
        std::future::ready(Ok(AsyncRemoteSource::len(self)))
    }
    fn read_range(
        &self,
        range: Range<u64>,
    ) -> impl std::future::Future<Output = Result<Bytes>> + Send {
        AsyncRemoteSource::read_range(self, range)
    }
    fn read_ranges(
        &self,
        ranges: &[Range<u64>],
    ) -> impl std::future::Future<Output = Result<Vec<Bytes>>> + Send {
        AsyncRemoteSource::read_ranges(self, ranges)
    }
    /// Digest checking, readahead and head window from the options; the
    /// ETag pinned and the first window kept by open (`spec/remote.md` §3, §5).
    fn hints(&self) -> SourceHints {
        let o = self.options();
        SourceHints {
            requires_verification: o.verify_hashes,
            etag: self.etag().map(str::to_string),
            readahead: o.readahead,
            head_window: o.head_window,
            cached_prefix: self.cached_prefix(),
        }
    }
}
