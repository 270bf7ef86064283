//! The catalogue (`spec/files.md` §9): written by the file writers, read
//! from the tail in one or two reads, ignored whenever it does not match
//! the file (stale, cut, forged, oversized), and invisible to the
//! reference 0.24.0, which reads the file's data objects unchanged.

#[path = "remote_corpus.rs"]
mod corpus;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use corpus::*;
use tgm::cbor::Value;
use tgm::file::catalogue::{end_with_catalogue, Catalogue, CATALOGUE_KEY};
use tgm::file::{AppendOptions, Appender, AsyncByteSource, AsyncTgmFile, SourceHints, TgmFile};
use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, Limits, Map};

/// `n` messages of one float32 object of `elems` values each, with MARS
/// keys and a name in the base entry.
fn fields(n: usize, elems: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|m| {
            let mut entry = Map::new();
            entry.insert(
                "mars".into(),
                Value::text_map([
                    ("param", Value::Text(["2t", "msl"][m % 2].into())),
                    ("step", Value::Uint((m / 2) as u64)),
                ]),
            );
            entry.insert("name".into(), Value::Text(format!("field{}", m % 2)));
            let meta = GlobalMetadata::with_base(vec![entry]);
            let d = desc(Dtype::Float32, elems, None);
            tgm::encode(&meta, &[(&d, &f32s(elems, m)[..])], &EncodeOptions::new()).unwrap()
        })
        .collect()
}

/// `plain` written to a file and ended with its catalogue.
fn catalogued(plain: &[u8]) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.tgm");
    std::fs::write(&path, plain).unwrap();
    let n = end_with_catalogue(&path, &Limits::default()).unwrap();
    assert!(n.is_some(), "a file of complete messages gets a catalogue");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, plain.len() as u64 + n.unwrap());
    assert_eq!(
        &bytes[..plain.len()],
        plain,
        "messages are kept as they are"
    );
    (dir, path, bytes)
}

#[test]
fn a_catalogued_file_lists_exactly_its_messages() {
    let plain = fields(20, 64);
    let (_d, path, bytes) = catalogued(&plain);
    let f = TgmFile::open(&path).unwrap();
    let cat = f.catalogue().expect("opened from its catalogue");
    assert_eq!(cat.covered, plain.len() as u64);
    let scanned = TgmFile::from_source(plain.clone(), &Limits::default()).unwrap();
    assert_eq!(listing(&f), listing(&scanned));
    assert_eq!(f.num_messages(), 20);
    assert_eq!(f.catalogue_spans().len(), 1);
    f.check_intact().unwrap();
    assert!(f.damage().is_empty());
    // Shared values stored once; metadata, descriptors and stored sizes
    // answered from the catalogue equal those read from the messages.
    assert_eq!(cat.descriptors.len(), 1);
    assert_eq!(cat.metadata.len(), 20);
    let o = &cat.messages[3].objects.as_ref().unwrap()[0];
    let meta = cat.metadata_at(f.spans()[3]).unwrap();
    let mars = meta.base[0].get("mars").unwrap();
    assert_eq!(mars.get("param").and_then(Value::as_text), Some("msl"));
    assert_eq!(cat.descriptors[o.desc].shape, vec![64]);
    let opts = DecodeOptions::default();
    for m in 0..20 {
        assert_eq!(
            f.metadata(m, &opts).unwrap(),
            scanned.metadata(m, &opts).unwrap()
        );
        assert_eq!(f.descriptors(m).unwrap(), scanned.descriptors(m).unwrap());
        assert_eq!(f.stored_sizes(m).unwrap(), scanned.stored_sizes(m).unwrap());
    }
    // The payload range is the stored bytes of the frame.
    let s = f.spans()[3];
    let at = (s.offset + o.frame.0 + o.payload.0) as usize;
    assert_eq!(&bytes[at..at + o.payload.1 as usize], &f32s(64, 3)[..]);
    // Memory and pread read it the same way.
    let m = TgmFile::from_source(bytes.clone(), &Limits::default()).unwrap();
    assert!(m.catalogue().is_some());
    assert_eq!(listing(&m), listing(&scanned));
    // The body round-trips.
    let again = Catalogue::from_body(&cat.to_body(), &Limits::default()).unwrap();
    assert_eq!(&again, cat);
}

#[test]
fn the_reference_reads_a_catalogued_file_unchanged() {
    let plain = fields(6, 32);
    let (_d, path, bytes) = catalogued(&plain);
    let ours = TgmFile::open(&path).unwrap();
    let theirs = tensogram::TensogramFile::open(&path).unwrap();
    let n = theirs.message_count().unwrap();
    assert_eq!(
        n, 7,
        "the reference lists the catalogue as one more message"
    );
    for m in 0..n {
        let msg = theirs.read_message(m).unwrap();
        let (_, objs) = tensogram::decode(&msg, &Default::default()).unwrap();
        if m == 6 {
            assert!(objs.is_empty(), "the catalogue holds no data object");
            continue;
        }
        assert_eq!(objs.len(), 1);
        let want = ours.decode_object(m, 0, &DecodeOptions::default()).unwrap();
        assert_eq!(objs[0].1, want.data, "message {m}");
    }
    assert_eq!(tensogram::scan(&bytes).len(), 7);
    let report = tensogram::validate_file(&path, &Default::default()).unwrap();
    assert!(report.is_ok(), "{report:?}");
}

#[test]
fn a_plain_append_after_the_catalogue_is_listed() {
    let plain = fields(5, 16);
    let (_d, path, mut bytes) = catalogued(&plain);
    let extra = fields(2, 16);
    bytes.extend_from_slice(&extra);
    std::fs::write(&path, &bytes).unwrap();
    let f = TgmFile::open(&path).unwrap();
    assert!(f.catalogue().is_none(), "a stale catalogue is not used");
    assert_eq!(f.num_messages(), 7);
    assert_eq!(
        f.catalogue_spans().len(),
        1,
        "the old catalogue is not listed"
    );
    f.check_intact().unwrap();
    let mut both = plain.clone();
    both.extend_from_slice(&extra);
    let want: Vec<_> = listing(&TgmFile::from_source(both, &Limits::default()).unwrap())
        .into_iter()
        .map(|(_, _, o)| o)
        .collect();
    let got: Vec<_> = listing(&f).into_iter().map(|(_, _, o)| o).collect();
    assert_eq!(got, want);
}

#[test]
fn a_cut_file_lists_only_its_complete_messages() {
    let plain = fields(8, 16);
    let (_d, _path, bytes) = catalogued(&plain);
    let len = bytes.len();
    let spans = TgmFile::from_source(plain.clone(), &Limits::default())
        .unwrap()
        .spans()
        .to_vec();
    let msg = spans[0].len as usize;
    let cuts = [
        len - 1,
        len - 24,
        len - 40,
        plain.len() + 1,
        plain.len(),
        plain.len() - 1,
        plain.len() - msg / 2,
        3 * msg,
        10,
    ];
    for cut in cuts {
        let part = bytes[..cut].to_vec();
        let f = TgmFile::from_source(part.clone(), &Limits::default()).unwrap();
        assert!(f.catalogue().is_none(), "cut at {cut}");
        let complete: Vec<_> = spans
            .iter()
            .copied()
            .filter(|s| s.offset + s.len <= cut as u64)
            .collect();
        assert_eq!(f.spans(), &complete[..], "cut at {cut}");
    }
}

/// `bytes` with its catalogue message replaced by `cat`'s.
fn with_catalogue(plain: &[u8], cat: &Catalogue) -> Vec<u8> {
    let mut b = plain.to_vec();
    b.extend(cat.to_message().unwrap());
    b
}

#[test]
fn a_forged_catalogue_is_ignored() {
    let plain = fields(6, 16);
    let (_d, path, bytes) = catalogued(&plain);
    let cat = TgmFile::open(&path).unwrap().catalogue().unwrap().clone();
    let want = listing(&TgmFile::from_source(plain.clone(), &Limits::default()).unwrap());
    let check = |b: Vec<u8>, what: &str| {
        let f = TgmFile::from_source(b, &Limits::default()).unwrap();
        assert!(f.catalogue().is_none(), "{what}");
        assert_eq!(f.catalogue_spans().len(), 1, "{what}");
        assert!(listing(&f) == want, "{what}");
    };
    // A byte of the body changed: its digest no longer matches. The body
    // is the last byte string of the metadata; find a record byte in it.
    let mut b = bytes.clone();
    let span = TgmFile::open(&path).unwrap().catalogue_spans()[0];
    let stored = tgm::decode_metadata(&bytes[span.range()], &DecodeOptions::default())
        .unwrap()
        .extra[CATALOGUE_KEY]
        .get("body")
        .and_then(|v| match v {
            Value::Bytes(b) => Some(b.clone()),
            _ => None,
        })
        .unwrap();
    let at = b
        .windows(stored.len())
        .position(|w| w == &stored[..])
        .expect("the stored body is in the file");
    b[at + stored.len() / 2] ^= 0x40;
    check(b, "a body byte flipped");
    // A body whose stored digest is not its own, in a message whose frame
    // digests are right.
    let mut entry = tgm::Map::new();
    let body = cat.to_body();
    entry.insert("version".into(), Value::Uint(1));
    entry.insert("compression".into(), Value::Text("none".into()));
    entry.insert("length".into(), Value::Uint(body.len() as u64));
    entry.insert(
        "hash".into(),
        Value::Text(format!("{:016x}", tgm::hash::xxh3(&body) ^ 1)),
    );
    entry.insert("body".into(), Value::Bytes(body));
    let mut meta = GlobalMetadata::default();
    meta.extra
        .insert(CATALOGUE_KEY.into(), Value::text_map(entry));
    let mut b = plain.clone();
    b.extend(tgm::encode(&meta, &[], &EncodeOptions::new()).unwrap());
    check(b, "a body digest that is not its own");
    // Lies with a recomputed digest: each caught by the checks.
    let mut c = cat.clone();
    c.messages[2].len += 8;
    check(with_catalogue(&plain, &c), "a message longer than it is");
    let mut c = cat.clone();
    c.messages.pop();
    c.covered = c.messages.last().map(|m| m.offset + m.len).unwrap();
    check(with_catalogue(&plain, &c), "the last message left out");
    let mut c = cat.clone();
    c.covered += 8;
    check(
        with_catalogue(&plain, &c),
        "a covered length that is not its offset",
    );
    let mut c = cat.clone();
    c.messages[1].objects.as_mut().unwrap()[0].frame.1 = u64::MAX;
    check(with_catalogue(&plain, &c), "an object outside its message");
    // A catalogue moved after other bytes: its offsets are not the file's.
    let mut shifted = fields(1, 16);
    shifted.extend_from_slice(&bytes);
    let f = TgmFile::from_source(shifted, &Limits::default()).unwrap();
    assert!(f.catalogue().is_none());
    assert_eq!(f.num_messages(), 7);
}

#[test]
fn an_oversized_catalogue_is_ignored() {
    let plain = fields(30, 8);
    let (_d, _path, bytes) = catalogued(&plain);
    let scanned = TgmFile::from_source(plain.clone(), &Limits::default())
        .unwrap()
        .spans()
        .to_vec();
    let limit = |f: fn(&mut Limits)| {
        let mut l = Limits::default();
        f(&mut l);
        l
    };
    for limits in [
        limit(|l| l.max_cbor_items = 40),
        limit(|l| l.max_cbor_len = 1000),
        limit(|l| l.max_ndim = 0),
    ] {
        let f = TgmFile::from_source(bytes.clone(), &limits).unwrap();
        assert!(f.catalogue().is_none(), "{limits:?}");
        // Every message is listed; a catalogue message too large for
        // these limits to read cannot be told from any other message.
        let spans = f.spans();
        assert_eq!(&spans[..30], &scanned[..], "{limits:?}");
        match spans.get(30) {
            Some(s) => assert_eq!(s.offset, plain.len() as u64),
            None => assert_eq!(f.catalogue_spans().len(), 1),
        }
    }
}

#[test]
fn a_catalogued_remote_file_opens_in_two_requests() {
    for (n, reads) in [(30, 2), (2000, 4)] {
        let plain = fields(n, 16);
        let (_d, _p, bytes) = catalogued(&plain);
        let src = remote_like(&bytes);
        let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
        assert_eq!(f.num_messages(), n);
        assert!(f.catalogue().is_some());
        // The first window (a remote source's first GET), then the tail;
        // a catalogue larger than the tail read costs two more: its head,
        // checked before the rest is read.
        assert_eq!(src.inner().inner().calls(), reads, "{n} messages");
        // Reading an object is then one request: its frame.
        src.inner().inner().reset();
        let got = f
            .decode_object(n - 7, 0, &DecodeOptions::default())
            .unwrap();
        assert_eq!(got.data, f32s(16, n - 7));
        assert_eq!(src.inner().inner().calls(), 1);
        // Without the catalogue: one request per message.
        let src = remote_like(&plain);
        let f = TgmFile::from_source(&src, &Limits::default()).unwrap();
        assert_eq!(f.num_messages(), n);
        let plain_calls = src.inner().inner().calls();
        println!("{n} messages: {reads} requests with a catalogue, {plain_calls} without");
        assert!(plain_calls > n as u64 / 2, "{plain_calls}");
    }
}

/// An asynchronous source over memory counting its requests.
struct AsyncCounted {
    bytes: Bytes,
    requests: AtomicU64,
}

impl AsyncByteSource for AsyncCounted {
    async fn len(&self) -> tgm::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    async fn read_range(&self, r: Range<u64>) -> tgm::Result<Bytes> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        Ok(self.bytes.slice(r.start as usize..r.end as usize))
    }
    async fn read_ranges(&self, rs: &[Range<u64>]) -> tgm::Result<Vec<Bytes>> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        Ok(rs
            .iter()
            .map(|r| self.bytes.slice(r.start as usize..r.end as usize))
            .collect())
    }
    fn hints(&self) -> SourceHints {
        SourceHints {
            etag: Some("\"x\"".into()),
            ..SourceHints::default()
        }
    }
}

#[test]
fn the_asynchronous_reader_opens_a_catalogued_file_from_its_tail() {
    let n = 30;
    let plain = fields(n, 16);
    let (_d, _p, bytes) = catalogued(&plain);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let src = AsyncCounted {
        bytes: Bytes::from(bytes),
        requests: AtomicU64::new(0),
    };
    let f = rt
        .block_on(AsyncTgmFile::open(src, &Limits::default()))
        .unwrap();
    assert_eq!(f.num_messages(), n);
    assert_eq!(f.source().requests.load(Ordering::Relaxed), 1);
    let got = rt
        .block_on(f.decode_object(n - 1, 0, &DecodeOptions::default()))
        .unwrap();
    assert_eq!(got.data, f32s(16, n - 1));
}

#[test]
fn appending_replaces_the_catalogue_and_a_crash_loses_no_message() {
    let plain = fields(4, 16);
    let (_d, path, _bytes) = catalogued(&plain);
    let extra = fields(3, 16);
    let parts = TgmFile::from_source(extra.clone(), &Limits::default())
        .unwrap()
        .spans()
        .to_vec();
    let mut app = Appender::open(&path, &AppendOptions::default()).unwrap();
    for s in &parts {
        app.append_bytes(&extra[s.range()]).unwrap();
    }
    let msg = parts[2].len as usize;
    // Before `finish`: the old catalogue was cut, the file is plain.
    let mid = std::fs::read(&path).unwrap();
    let mut both = plain.clone();
    both.extend_from_slice(&extra);
    assert!(mid == both);
    app.finish().unwrap().unwrap();
    let f = TgmFile::open(&path).unwrap();
    assert!(f.catalogue().is_some());
    assert_eq!(f.num_messages(), 7);
    assert_eq!(f.catalogue_spans().len(), 1, "one catalogue, at the end");
    let want = listing(&TgmFile::from_source(both.clone(), &Limits::default()).unwrap());
    assert_eq!(listing(&f), want);
    // A crash at any byte of the new catalogue or of a message being
    // written leaves every complete message listed.
    let done = std::fs::read(&path).unwrap();
    for cut in (both.len() - msg..done.len()).step_by(7) {
        let f = TgmFile::from_source(done[..cut].to_vec(), &Limits::default()).unwrap();
        let complete = if cut >= both.len() { 7 } else { 6 };
        assert_eq!(f.num_messages(), complete, "cut at {cut}");
    }
    // Appending again without a catalogue leaves none.
    let mut app = Appender::open(&path, &AppendOptions::default().catalogue(false)).unwrap();
    app.append_bytes(&extra[parts[0].range()]).unwrap();
    assert_eq!(app.finish().unwrap(), None);
    let f = TgmFile::open(&path).unwrap();
    assert!(f.catalogue().is_none());
    assert!(f.catalogue_spans().is_empty());
    assert_eq!(f.num_messages(), 8);
}

#[test]
fn a_catalogue_in_the_middle_is_listed_as_one_and_kept() {
    let a = fields(3, 8);
    let (_d, path, mut bytes) = catalogued(&a);
    bytes.extend(fields(2, 8));
    std::fs::write(&path, &bytes).unwrap();
    end_with_catalogue(&path, &Limits::default())
        .unwrap()
        .unwrap();
    let f = TgmFile::open(&path).unwrap();
    let cat = f.catalogue().expect("the new catalogue is used");
    assert_eq!(f.num_messages(), 5);
    assert_eq!(f.catalogue_spans().len(), 2);
    assert_eq!(cat.messages.len(), 6);
    assert!(cat.messages[3].objects.is_none());
    f.check_intact().unwrap();
}

#[test]
fn files_that_are_not_whole_messages_get_no_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x");
    std::fs::write(&p, b"GRIB and more bytes than a message").unwrap();
    assert_eq!(end_with_catalogue(&p, &Limits::default()).unwrap(), None);
    let mut torn = fields(2, 8);
    torn.truncate(torn.len() - 5);
    std::fs::write(&p, &torn).unwrap();
    assert_eq!(end_with_catalogue(&p, &Limits::default()).unwrap(), None);
    assert_eq!(std::fs::read(&p).unwrap(), torn);
}

/// The catalogue message is footer-indexed; a catalogue in the header form
/// (one header metadata frame, no index) is taken too, locally and from
/// the tail of a remote-like source (`spec/files.md` §9.1).
#[test]
fn both_forms_of_the_catalogue_message_are_taken() {
    use tgm::wire::message_flags as mf;
    for n in [30, 2000] {
        let plain = fields(n, 16);
        let (_d, path, bytes) = catalogued(&plain);
        let f = TgmFile::open(&path).unwrap();
        let span = f.catalogue_spans()[0];
        let footer_form = &bytes[span.range()];
        let flags = u16::from_be_bytes([footer_form[10], footer_form[11]]);
        assert_eq!(flags & (mf::HEADER_METADATA | mf::HEADER_INDEX), 0);
        assert_ne!(flags & mf::FOOTER_METADATA, 0);
        assert_ne!(flags & mf::FOOTER_INDEX, 0);

        let meta = tgm::decode_metadata(footer_form, &DecodeOptions::default()).unwrap();
        let header_meta = GlobalMetadata {
            extra: meta.extra.clone(),
            ..Default::default()
        };
        let header_form = tgm::encode(&header_meta, &[], &EncodeOptions::new()).unwrap();
        let h = u16::from_be_bytes([header_form[10], header_form[11]]);
        assert_eq!(
            h & (mf::FOOTER_INDEX | mf::HEADER_INDEX),
            0,
            "the header form"
        );
        let mut b = plain.clone();
        b.extend_from_slice(&header_form);
        let src = remote_like(&b);
        let g = TgmFile::from_source(&src, &Limits::default()).unwrap();
        assert_eq!(g.catalogue(), f.catalogue(), "{n} messages");
        assert_eq!(listing(&g), listing(&f), "{n} messages");
    }
}
