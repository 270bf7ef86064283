//! The asynchronous reader against the blocking one on the same bytes in
//! memory: every method gives the same answer on every corpus file, and
//! every operation reads the byte ranges the blocking reader reads, in
//! the same order, less re-reads of bytes the call holds already
//! (`spec/files.md` §7.1).

#[path = "remote_corpus.rs"]
mod corpus;

#[path = "common/async_summary.rs"]
mod async_summary;

use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_summary::*;
use bytes::Bytes;
use corpus::*;
use tgm::file::{AsyncByteSource, AsyncTgmFile, ByteSource, SourceHints, TgmFile};
use tgm::{DecodeOptions, Limits};

#[test]
fn every_method_answers_as_the_blocking_reader_on_every_corpus_file() {
    let lim = Limits::default();
    for (name, bytes) in corpus() {
        let sync = TgmFile::from_source(Bytes::from(bytes.clone()), &lim).unwrap();
        let (a, b) = block_on(async {
            let f = AsyncTgmFile::open(Bytes::from(bytes.clone()), &lim)
                .await
                .unwrap();
            (async_summary(&f).await, async_extras(&f).await)
        });
        assert_eq!(a, summary(&sync), "{name}");
        assert_eq!(b, sync_extras(&sync), "{name}");
        if !name.starts_with("regress") {
            assert!(a.iter().any(|l| l.starts_with("object 0 0 Ok")), "{name}");
        }
    }
}

/// Bytes in memory read as a remote object is: not as one slice, with
/// the hints given, every read logged. Both a blocking and an
/// asynchronous source.
struct Logged {
    bytes: Bytes,
    hints: SourceHints,
    log: Mutex<Vec<Vec<Range<u64>>>>,
}

impl Logged {
    fn new(bytes: &[u8], readahead: u64) -> Self {
        Logged {
            bytes: Bytes::copy_from_slice(bytes),
            hints: SourceHints {
                requires_verification: true,
                readahead,
                ..SourceHints::default()
            },
            log: Mutex::new(Vec::new()),
        }
    }
    fn take(&self) -> Vec<Vec<Range<u64>>> {
        std::mem::take(&mut self.log.lock().unwrap())
    }
    fn logged(&self, rs: &[Range<u64>]) {
        self.log.lock().unwrap().push(rs.to_vec());
    }
}

impl ByteSource for Logged {
    fn len(&self) -> tgm::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        let b = self.read_bytes(offset..offset + buf.len() as u64)?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn read_bytes(&self, range: Range<u64>) -> tgm::Result<Bytes> {
        self.logged(std::slice::from_ref(&range));
        self.bytes.read_bytes(range)
    }
    fn read_ranges(&self, ranges: &[Range<u64>]) -> tgm::Result<Vec<Bytes>> {
        self.logged(ranges);
        ByteSource::read_ranges(&self.bytes, ranges)
    }
    fn hints(&self) -> SourceHints {
        self.hints.clone()
    }
}

impl AsyncByteSource for Logged {
    async fn len(&self) -> tgm::Result<u64> {
        ByteSource::len(self)
    }
    async fn read_range(&self, range: Range<u64>) -> tgm::Result<Bytes> {
        self.read_bytes(range)
    }
    async fn read_ranges(&self, ranges: &[Range<u64>]) -> tgm::Result<Vec<Bytes>> {
        ByteSource::read_ranges(self, ranges)
    }
    fn hints(&self) -> SourceHints {
        self.hints.clone()
    }
}

/// The reads of one call by the asynchronous reader, `a`, are those of
/// the blocking reader, `s`, in order, less those wholly within bytes the
/// call fetched before (it keeps them until it returns; the blocking
/// reader asks the source again).
fn same_reads(a: Vec<Vec<Range<u64>>>, s: Vec<Vec<Range<u64>>>, what: &str) {
    let mut a = a.into_iter().peekable();
    let mut had: Vec<Range<u64>> = Vec::new();
    for read in &s {
        if a.peek() == Some(read) {
            had.extend(a.next().unwrap());
            continue;
        }
        let held = read
            .iter()
            .all(|r| had.iter().any(|h| h.start <= r.start && r.end <= h.end));
        assert!(held, "{what}: {read:?} not read, nor held; {s:?}");
    }
    let rest: Vec<_> = a.collect();
    assert!(
        rest.is_empty(),
        "{what}: reads beyond the blocking reader's: {rest:?}"
    );
}

#[test]
fn every_operation_reads_the_ranges_the_blocking_reader_reads() {
    let lim = Limits::default();
    let opts = DecodeOptions::default();
    let mut files = corpus();
    files.push(("many.tgm".into(), many_messages(50, 300)));
    for (name, bytes) in files {
        for readahead in [0, 4096] {
            let (s, a) = (
                Logged::new(&bytes, readahead),
                Logged::new(&bytes, readahead),
            );
            let sync = TgmFile::from_source(&s, &lim).unwrap();
            let asy = block_on(AsyncTgmFile::open(Arc::new(a), &lim)).unwrap();
            let a = asy.source();
            let what = format!("{name} readahead {readahead}");
            same_reads(a.take(), s.take(), &format!("open {what}"));
            for m in 0..sync.num_messages() {
                let n = sync.num_objects(m).unwrap_or(0);
                block_on(asy.num_objects(m)).ok();
                same_reads(a.take(), s.take(), &format!("num_objects {m} {what}"));
                let meta = (
                    sync.metadata(m, &opts).ok(),
                    block_on(asy.metadata(m, &opts)).ok(),
                );
                assert_eq!(
                    meta.0.map(|g| format!("{g:?}")),
                    meta.1.map(|g| format!("{g:?}"))
                );
                same_reads(a.take(), s.take(), &format!("metadata {m} {what}"));
                for o in 0..n {
                    let d = sync.decode_object(m, o, &opts).map(|d| d.data);
                    let e = block_on(asy.decode_object(m, o, &opts)).map(|d| d.data);
                    assert_eq!(d.ok(), e.ok(), "object {m} {o} {what}");
                    same_reads(a.take(), s.take(), &format!("decode_object {m} {o} {what}"));
                    let ranges = [(0, 1), (2, 3)];
                    let d = sync.decode_range(m, o, &ranges, &opts);
                    let e = block_on(asy.decode_range(m, o, &ranges, &opts));
                    assert_eq!(d.ok(), e.ok(), "range {m} {o} {what}");
                    same_reads(a.take(), s.take(), &format!("decode_range {m} {o} {what}"));
                }
            }
        }
    }
}

#[test]
fn a_cut_last_message_is_the_same_damage() {
    let lim = Limits::default();
    let mut bytes = many_messages(3, 200);
    bytes.truncate(bytes.len() - 10);
    let sync = TgmFile::from_source(Bytes::from(bytes.clone()), &lim).unwrap();
    let asy = block_on(AsyncTgmFile::open(Bytes::from(bytes), &lim)).unwrap();
    assert_eq!(asy.num_messages(), 2);
    assert_eq!(asy.damage(), sync.damage());
    let (e, f) = (
        asy.check_intact().unwrap_err(),
        sync.check_intact().unwrap_err(),
    );
    assert_eq!(e.kind(), &tgm::ErrorKind::Truncated);
    assert_eq!(e.to_string(), f.to_string());
}

/// Garbage longer than the scanner's window between messages, then a torn
/// tail: opening resumes its hops across the scan and ends with the
/// blocking reader's spans, damage and reads.
#[test]
fn a_long_damaged_stretch_is_located_as_the_blocking_reader_does() {
    let lim = Limits::default();
    let mut bytes = many_messages(3, 300);
    bytes.extend((0..9_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    bytes.extend(many_messages(40, 100));
    let extra = many_messages(1, 500);
    bytes.extend_from_slice(&extra[..extra.len() / 3]);
    let (s, a) = (Logged::new(&bytes, 0), Logged::new(&bytes, 0));
    let sync = TgmFile::from_source(&s, &lim).unwrap();
    let asy = block_on(AsyncTgmFile::open(Arc::new(a), &lim)).unwrap();
    same_reads(asy.source().take(), s.take(), "open");
    assert_eq!(asy.spans(), sync.spans());
    assert_eq!(asy.num_messages(), 43);
    assert_eq!(asy.damage(), sync.damage());
    assert_eq!(asy.damage().len(), 2);
}

/// Bytes in memory whose reads starting past `bad_from` fail as a
/// remote source's do (the source itself, not the bytes it holds).
#[derive(Debug)]
struct FailingFrom {
    bytes: Bytes,
    bad_from: u64,
}

impl ByteSource for FailingFrom {
    fn len(&self) -> tgm::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        let b = self.read_bytes(offset..offset + buf.len() as u64)?;
        buf.copy_from_slice(&b);
        Ok(())
    }
    fn read_bytes(&self, r: Range<u64>) -> tgm::Result<Bytes> {
        if r.start >= self.bad_from {
            return Err(tgm::Error::new(
                tgm::ErrorKind::Remote,
                "503 from the server",
            ));
        }
        ByteSource::read_bytes(&self.bytes, r)
    }
}

impl AsyncByteSource for FailingFrom {
    async fn len(&self) -> tgm::Result<u64> {
        ByteSource::len(self)
    }
    async fn read_range(&self, range: Range<u64>) -> tgm::Result<Bytes> {
        self.read_bytes(range)
    }
    async fn read_ranges(&self, ranges: &[Range<u64>]) -> tgm::Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.read_bytes(r.clone())).collect()
    }
}

/// A source that fails part way is an error for opening, as for the
/// blocking reader, even when bytes beyond the failure would let the
/// locator hop on (more than the scanner's window after it).
#[test]
fn a_failing_source_is_an_error_as_for_the_blocking_reader() {
    let lim = Limits::default();
    let first = many_messages(1, 100);
    let mut bytes = first.clone();
    bytes.extend(many_messages(1, 100));
    bytes.extend(many_messages(1, 1_000_000));
    let bad_from = first.len() as u64 - 8;
    let src = || FailingFrom {
        bytes: Bytes::from(bytes.clone()),
        bad_from,
    };
    let sync = TgmFile::from_source(src(), &lim).unwrap_err();
    let asy = block_on(AsyncTgmFile::open(Arc::new(src()), &lim)).unwrap_err();
    assert_eq!(sync.kind(), &tgm::ErrorKind::Remote);
    assert_eq!(asy.to_string(), sync.to_string());
}

/// `frames` one-byte objects in one streaming message (declared length
/// 0, as a writer that cannot seek leaves it).
fn long_streaming(frames: usize) -> Vec<u8> {
    let d = desc(tgm::Dtype::Uint8, 1, None);
    let objs: Vec<_> = (0..frames).map(|i| (d.clone(), vec![i as u8])).collect();
    streaming(&objs, false)
}

/// Opening `bytes` without readahead, the asynchronous reader finds the
/// blocking reader's spans and damage with the blocking reader's reads.
fn opens_as_the_blocking_reader(bytes: &[u8], what: &str) -> Vec<tgm::file::Damage> {
    let lim = Limits::default();
    let (s, a) = (Logged::new(bytes, 0), Logged::new(bytes, 0));
    let sync = TgmFile::from_source(&s, &lim).unwrap();
    let asy = block_on(AsyncTgmFile::open(Arc::new(a), &lim)).unwrap();
    same_reads(asy.source().take(), s.take(), what);
    assert_eq!(asy.spans(), sync.spans(), "{what}");
    assert_eq!(asy.damage(), sync.damage(), "{what}");
    sync.damage()
}

/// A streaming message of many frames between buffered ones: each step
/// of opening resumes the frame walk where the last one stopped, with the
/// blocking reader's requests, one per frame header and end magic.
#[test]
fn a_long_streaming_message_is_opened_with_the_blocking_readers_reads() {
    let mut bytes = many_messages(2, 50);
    bytes.extend(long_streaming(1000));
    bytes.extend(many_messages(2, 50));
    assert!(opens_as_the_blocking_reader(&bytes, "streaming").is_empty());
}

/// A long streaming message whose postamble is damaged, before more than
/// the scanner's window of messages: the walk that finds it broken, the
/// walk that tells damage from an interrupted write and the windowed scan
/// after it give the blocking reader's damage and reads.
#[test]
fn a_broken_streaming_message_before_a_long_rest_is_the_same_damage() {
    let first = many_messages(1, 50);
    let mut broken = long_streaming(500);
    let n = broken.len();
    broken[n - 3] ^= 0xff;
    let bytes = [&first[..], &broken, &many_messages(8, 100_000)].concat();
    let damage = opens_as_the_blocking_reader(&bytes, "broken streaming");
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].offset, first.len() as u64);
}

/// Damage twice the scanner's window whose first window holds preambles
/// declaring lengths that end past it, each read with a request of its
/// own: each step resumes the scan at the magic it lacked, with the
/// blocking reader's requests and damage.
#[test]
fn a_scan_of_long_damage_resumes_with_the_blocking_readers_reads() {
    const WINDOW: usize = 8 << 20;
    let msg = many_messages(1, 50);
    let mut bytes = [&msg[..], &vec![0x55u8; 2 * WINDOW + 4096], &msg].concat();
    for at in (msg.len()..msg.len() + WINDOW - 24).step_by(16 << 10) {
        bytes[at..at + 24].copy_from_slice(&msg[..24]);
        bytes[at + 16..at + 24].copy_from_slice(&(WINDOW as u64 + 1).to_be_bytes());
    }
    let damage = opens_as_the_blocking_reader(&bytes, "preambles in damage");
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].offset, msg.len() as u64);
}
