//! The asynchronous reader over HTTP against nginx on loopback
//! (`tests/common/servers.rs`), next to the blocking remote reader on the
//! same URL: every method gives the same answer on every corpus file, and
//! opening, `decode_object` and `decode_range` send the same requests for
//! the same bytes, as nginx's access log confirms (`spec/files.md` §7.1,
//! `spec/remote.md`); skips with a message when nginx is absent. And
//! decoding runs on tokio's blocking pool.
#![cfg(feature = "remote")]

#[path = "common/servers.rs"]
mod servers;

#[path = "remote_corpus.rs"]
mod corpus;

#[path = "common/async_summary.rs"]
mod async_summary;

use std::ops::Range;
use std::sync::Mutex;
use std::thread::ThreadId;

use async_summary::*;
use bytes::Bytes;
use corpus::*;
use tgm::file::{AsyncByteSource, AsyncTgmFile, SourceHints, TgmFile};
use tgm::remote::{AsyncRemoteSource, RemoteOptions, RemoteSource, RemoteStats};
use tgm::{DecodeOptions, Limits};

fn blocking(url: &str, o: &RemoteOptions) -> TgmFile<RemoteSource> {
    let src = RemoteSource::open(url, o).unwrap();
    TgmFile::from_source(src, &Limits::default()).unwrap()
}

async fn asynchronous(url: &str, o: &RemoteOptions) -> AsyncTgmFile<AsyncRemoteSource> {
    let src = AsyncRemoteSource::open(url, o).await.unwrap();
    AsyncTgmFile::open(src, &Limits::default()).await.unwrap()
}

/// Runs `fut` on a runtime with I/O and timers.
fn run<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fut)
}

/// `now - before`.
fn since(now: RemoteStats, before: RemoteStats) -> (u64, u64) {
    (now.requests - before.requests, now.bytes - before.bytes)
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn every_method_over_http_answers_as_the_blocking_reader() {
    let Some(http) = servers::http() else { return };
    let o = RemoteOptions::default();
    for (name, bytes) in corpus() {
        let url = http.put(&format!("async/{name}"), &bytes);
        let sync = blocking(&url, &o);
        let (a, b) = run(async {
            let f = asynchronous(&url, &o).await;
            (async_summary(&f).await, async_extras(&f).await)
        });
        assert_eq!(a, summary(&sync), "{name}");
        assert_eq!(b, sync_extras(&sync), "{name}");
    }
}

#[test]
#[ignore = "needs nginx and s3s-fs on loopback: bash .ci/remote.sh"]
fn open_decode_object_and_decode_range_send_the_blocking_readers_requests() {
    let Some(http) = servers::http() else { return };
    let mut file = many_messages(200, 2048);
    let n = 100_000;
    file.extend(szip_message(n));
    let name = "async/counts.tgm";
    let url = http.put(name, &file);
    let opts = DecodeOptions::default();
    let ranges = [(10, 5), (n as u64 / 2, 100)];
    for readahead in [0, 64 << 10] {
        let o = RemoteOptions::default().with_readahead(readahead);
        let sync = blocking(&url, &o);
        let s = sync.source();
        let s0 = s.stats();
        let sync_obj = sync.decode_object(150, 2, &opts).unwrap();
        let s1 = s.stats();
        let sync_range = sync.decode_range(200, 0, &ranges, &opts).unwrap();
        let s2 = s.stats();

        let mark = http.log_mark();
        let (a0, a1, a2, obj, range) = run(async {
            let f = asynchronous(&url, &o).await;
            let a = f.source();
            let a0 = a.stats();
            let obj = f.decode_object(150, 2, &opts).await.unwrap();
            let a1 = a.stats();
            let range = f.decode_range(200, 0, &ranges, &opts).await.unwrap();
            (a0, a1, a.stats(), obj, range)
        });
        assert_eq!(obj.data, sync_obj.data);
        assert_eq!(obj.data, f32s(2048, 150 * 3 + 2));
        assert_eq!(range, sync_range);
        let what = format!("readahead {readahead}");
        assert_eq!(
            (a0.requests, a0.bytes),
            (s0.requests, s0.bytes),
            "open, {what}"
        );
        assert_eq!(since(a1, a0), since(s1, s0), "decode_object, {what}");
        assert_eq!(since(a2, a1), since(s2, s1), "decode_range, {what}");
        assert_eq!(http.logged(mark, name), (a2.requests, a2.bytes), "{what}");
        assert!(
            since(a2, a1).1 < file.len() as u64 / 10,
            "a range reads a few RSIs, not the object: {what}"
        );
        println!(
            "{what}: open {a0:?}, decode_object {:?}, decode_range {:?}",
            since(a1, a0),
            since(a2, a1)
        );
    }
}

/// Bytes in memory that note the thread of each `hints()` call: the
/// reader's steps ask for the hints, so the notes show where they ran.
struct Threads {
    bytes: Bytes,
    seen: Mutex<Vec<ThreadId>>,
}

impl Threads {
    fn take(&self) -> Vec<ThreadId> {
        std::mem::take(&mut self.seen.lock().unwrap())
    }
}

impl AsyncByteSource for Threads {
    async fn len(&self) -> tgm::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    async fn read_range(&self, range: Range<u64>) -> tgm::Result<Bytes> {
        self.bytes.read_range(range).await
    }
    async fn read_ranges(&self, ranges: &[Range<u64>]) -> tgm::Result<Vec<Bytes>> {
        self.bytes.read_ranges(ranges).await
    }
    fn hints(&self) -> SourceHints {
        self.seen.lock().unwrap().push(std::thread::current().id());
        SourceHints::default()
    }
}

#[test]
fn decoding_runs_on_the_blocking_pool_and_parsing_on_the_polling_thread() {
    let src = Threads {
        bytes: Bytes::from(many_messages(2, 100)),
        seen: Mutex::new(Vec::new()),
    };
    let opts = DecodeOptions::default();
    run(async {
        let f = AsyncTgmFile::open(src, &Limits::default()).await.unwrap();
        let me = std::thread::current().id();
        f.source().take();
        f.metadata(1, &opts).await.unwrap();
        let seen = f.source().take();
        assert!(
            !seen.is_empty() && seen.iter().all(|t| *t == me),
            "{seen:?}"
        );
        let off_the_runtime = |seen: Vec<ThreadId>| {
            assert!(
                !seen.is_empty() && seen.iter().all(|t| *t != me),
                "{seen:?}"
            );
        };
        f.decode_object(1, 0, &opts).await.unwrap();
        off_the_runtime(f.source().take());
        f.decode_range(1, 2, &[(3, 4)], &opts).await.unwrap();
        off_the_runtime(f.source().take());
    });
}
