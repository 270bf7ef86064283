//! The concurrent scan of a file without a catalogue (`spec/remote.md`
//! §3.1): the same listing as the locator on every file of the corpus
//! (damage, streaming messages and torn tails included) whatever the
//! first window; each byte requested once; a listing afterwards that
//! sends no request; and sources that lie are errors or fall back, never
//! a wrong listing.

#[path = "remote_corpus.rs"]
mod corpus;

use std::ops::Range;
use std::sync::Mutex;

use bytes::Bytes;
use corpus::*;
use tgm::__fuzz::file::{CountingSource, HeadCached, DEFAULT_HEAD_WINDOW};
use tgm::file::{ByteSource, SourceHints, TgmFile};
use tgm::{DecodeOptions, ErrorKind, Limits};

/// Bytes in memory that answer as a remote source with `readahead` would:
/// every range read is logged (one request each), and the first window
/// is held as the remote source holds its first GET.
struct Remote {
    bytes: Bytes,
    readahead: u64,
    log: Mutex<Vec<Range<u64>>>,
}

impl Remote {
    fn new(bytes: &[u8], readahead: u64) -> HeadCached<Remote> {
        let r = Remote {
            bytes: Bytes::copy_from_slice(bytes),
            readahead,
            log: Mutex::new(Vec::new()),
        };
        HeadCached::new(r, DEFAULT_HEAD_WINDOW).unwrap()
    }

    fn take_log(&self) -> Vec<Range<u64>> {
        std::mem::take(&mut self.log.lock().unwrap())
    }
}

impl ByteSource for Remote {
    fn len(&self) -> tgm::Result<u64> {
        ByteSource::len(&self.bytes)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(offset..offset + buf.len() as u64);
        self.bytes.read_at(offset, buf)
    }
    fn read_bytes(&self, r: Range<u64>) -> tgm::Result<Bytes> {
        self.log.lock().unwrap().push(r.clone());
        self.bytes.read_bytes(r)
    }
    fn hints(&self) -> SourceHints {
        SourceHints {
            requires_verification: true,
            etag: Some("\"x\"".into()),
            readahead: self.readahead,
            ..SourceHints::default()
        }
    }
}

/// No byte of the source is in two of `reads`.
fn each_byte_once(reads: &[Range<u64>]) {
    let mut v: Vec<_> = reads.iter().filter(|r| r.start < r.end).cloned().collect();
    v.sort_by_key(|r| r.start);
    for w in v.windows(2) {
        assert!(w[0].end <= w[1].start, "{:?} and {:?} overlap", w[0], w[1]);
    }
}

#[test]
fn every_file_of_the_corpus_lists_as_the_locator_lists_it() {
    let lim = Limits::default();
    for (name, bytes) in corpus() {
        let local = TgmFile::from_source(Bytes::from(bytes.clone()), &lim).unwrap();
        let want = summary(&local);
        for first in [48, 100, 4096, 64 << 10] {
            let src = Remote::new(&bytes, first);
            let f = TgmFile::from_source(&src, &lim).unwrap();
            assert_eq!(summary(&f), want, "{name}, first window {first}");
            assert_eq!(f.damage(), local.damage(), "{name}, first window {first}");
        }
    }
}

#[test]
fn small_messages_come_in_few_growing_windows_each_byte_once_and_list_without_requests() {
    let n = 2000;
    let all = many_messages(n, 500);
    let size = all.len() as u64;
    let src = Remote::new(&all, 64 << 10);
    let lim = Limits::default();
    let f = TgmFile::from_source(&src, &lim).unwrap();
    assert_eq!(f.num_messages(), n);
    let reads = src.inner().take_log();
    each_byte_once(&reads);
    // The first window, then windows doubling from 64 KiB to 8 MiB from
    // both ends: a handful of rounds of two reads.
    assert!(
        reads.len() <= 2 + 2 * 10,
        "{} reads for {size} bytes",
        reads.len()
    );
    let read: u64 = reads.iter().map(|r| r.end - r.start).sum();
    assert!(read <= size, "{read} bytes read of {size}");
    let local = TgmFile::from_source(Bytes::from(all.clone()), &lim).unwrap();
    assert_eq!(f.spans(), local.spans());
    let opts = DecodeOptions::default();
    for m in 0..n {
        assert_eq!(
            f.metadata(m, &opts).unwrap(),
            local.metadata(m, &opts).unwrap()
        );
        assert_eq!(f.descriptors(m).unwrap(), local.descriptors(m).unwrap());
        assert!(f.is_indexed(m));
    }
    assert_eq!(
        src.inner().take_log(),
        vec![],
        "metadata and descriptors of every message, kept from the scan"
    );
    let got = f.decode_object(1500, 2, &opts).unwrap();
    assert_eq!(got.data, f32s(500, 1500 * 3 + 2));
    assert_eq!(src.inner().take_log().len(), 1, "one object: its frame");
}

#[test]
fn large_messages_are_hopped_over_from_both_ends() {
    let n = 40;
    let all = many_messages(n, 100_000);
    let size = all.len() as u64;
    let src = Remote::new(&all, 64 << 10);
    let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
    assert_eq!(f.num_messages(), n);
    let reads = src.inner().take_log();
    each_byte_once(&reads);
    let read: u64 = reads.iter().map(|r| r.end - r.start).sum();
    // A window at each message boundary (its end magic and the next
    // message's head), half of them from each end: far from the file.
    assert!(
        reads.len() as u64 <= 2 + n as u64 + 2,
        "{} reads",
        reads.len()
    );
    assert!(read < size / 10, "{read} bytes of {size}");
}

#[test]
fn a_back_that_lies_is_dropped_and_the_front_lists_the_file() {
    // The last message's postamble claims a length that starts it inside
    // the payload of message 4, where a planted preamble agrees: from the
    // back the file ends with one message where the locator finds two.
    let lim = Limits::default();
    let mut all = many_messages(6, 50);
    let one = all.len() / 6;
    let n = all.len();
    let q = 4 * one + 100;
    let forged = (n - q) as u64;
    all[n - 16..n - 8].copy_from_slice(&forged.to_be_bytes());
    let head: Vec<u8> = all[..24].to_vec();
    all[q..q + 24].copy_from_slice(&head);
    all[q + 16..q + 24].copy_from_slice(&forged.to_be_bytes());
    let local = TgmFile::from_source(Bytes::from(all.clone()), &lim).unwrap();
    assert_eq!(local.num_messages(), 6);
    for first in [48, 200, 64 << 10] {
        let src = Remote::new(&all, first);
        let f = TgmFile::from_source(&src, &lim).unwrap();
        assert_eq!(f.spans(), local.spans(), "first window {first}");
        assert_eq!(f.damage(), local.damage(), "first window {first}");
    }
}

/// A source that answers every read of more than 100 bytes short.
#[derive(Debug)]
struct Short(Bytes);

impl ByteSource for Short {
    fn len(&self) -> tgm::Result<u64> {
        ByteSource::len(&self.0)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn read_bytes(&self, r: Range<u64>) -> tgm::Result<Bytes> {
        let end = if r.end - r.start > 100 {
            r.end - 1
        } else {
            r.end
        };
        self.0.read_bytes(r.start..end)
    }
    fn hints(&self) -> SourceHints {
        SourceHints {
            readahead: 4096,
            ..SourceHints::default()
        }
    }
}

#[test]
fn a_short_answer_is_an_error() {
    let all = many_messages(50, 100);
    let e = TgmFile::from_source(Short(Bytes::from(all)), &Limits::default()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Truncated, "{e}");
}

#[test]
fn the_exact_locator_stays_with_no_readahead() {
    let all = many_messages(100, 100);
    let src = CountingSource::new(Bytes::from(all));
    let f = TgmFile::from_source_with_readahead(&src, &Limits::default(), 0).unwrap();
    assert_eq!(f.num_messages(), 100);
    // The tail read looking for a catalogue, then 32 bytes per message
    // (the last message's end magic and the 24 bytes its start needs).
    let tail = tgm::file::catalogue::TAIL_READ;
    assert_eq!(src.bytes(), tail + 100 * 32, "{} bytes", src.bytes());
}
