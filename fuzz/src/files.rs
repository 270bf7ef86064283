//! Files on disk: the index (hops, scanning, torn tails) under both
//! backends, object access through it, and a reader following the file
//! while it grows.

use std::io::Write;
use std::path::PathBuf;

use tgm::__fuzz::scan_with;
use tgm::file::{AppendOptions, Appender, Backend, SourceHints, Step, SteppedFile, SuppliedBytes};
use tgm::wire::{END_MAGIC, MAGIC, MIN_MESSAGE_LEN};
use tgm::{DecodedObject, ErrorKind, Message, Result, TgmFile};

use super::common::{fuzz_limits, options, u16_at};

/// A scratch file private to this process and thread.
fn scratch() -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!(
        "tgm-fuzz-{}-{:?}.tgm",
        std::process::id(),
        std::thread::current().id()
    ))
    .to_path_buf()
}

/// What every index must satisfy, whatever the bytes.
fn check_index(f: &TgmFile, body: &[u8]) {
    let mut end = 0u64;
    for s in f.spans() {
        assert!(
            s.offset >= end,
            "spans overlap or go backwards: {:?}",
            f.spans()
        );
        assert!(s.len >= MIN_MESSAGE_LEN as u64);
        end = s.offset + s.len;
        assert!(end <= body.len() as u64, "span past the end of the file");
        let m = &body[s.range()];
        assert_eq!(&m[..8], MAGIC, "span does not start with the message magic");
        assert_eq!(
            &m[m.len() - 8..],
            END_MAGIC,
            "span does not end with the end magic"
        );
    }
    match f.torn_tail() {
        Some(t) => {
            assert!(t.offset >= end, "torn tail overlaps a message");
            assert_eq!(
                t.offset + t.len,
                body.len() as u64,
                "torn tail must reach the end"
            );
            assert!(t.len > 0);
        }
        None => assert_eq!(
            end,
            body.len() as u64,
            "bytes after the last message unreported"
        ),
    }
}

/// The data of a decode, or its error kind.
fn outcome(r: &Result<DecodedObject>) -> std::result::Result<&[u8], &ErrorKind> {
    r.as_ref().map(|d| &d.data[..]).map_err(|e| e.kind())
}

/// Runs `op` on `f` until it answers, supplying from `body` the ranges
/// each step asks for; a step asking for no new bytes cannot end the loop
/// (the reader refuses a range it was given), and the rounds stay below
/// the bytes of the body.
fn stepped<T>(
    f: &mut SteppedFile,
    body: &[u8],
    mut op: impl FnMut(&TgmFile<SuppliedBytes>) -> Result<T>,
) -> Result<T> {
    for _ in 0..=body.len() + 1 {
        match f.run(&mut op) {
            Step::Done(r) => return r,
            Step::Need(ranges) => {
                assert!(
                    !ranges.is_empty(),
                    "a step needs nothing and does not answer"
                );
                for r in ranges {
                    let b = bytes::Bytes::copy_from_slice(&body[r.start as usize..r.end as usize]);
                    f.supply(r.start, b)
                        .expect("a needed range lies in the file");
                }
            }
        }
    }
    panic!("the sans-I/O reader did not answer after one round per byte");
}

/// Every message of `body` parses, and the forward scan tiles it exactly.
fn clean(body: &[u8]) -> bool {
    let limits = fuzz_limits();
    let spans = scan_with(body, &limits);
    let mut at = 0u64;
    for s in &spans {
        if s.offset != at || Message::parse_with(&body[s.range()], s.offset, &limits).is_err() {
            return false;
        }
        at = s.offset + s.len;
    }
    at == body.len() as u64
}

/// Header: option selector, then a u16 fraction of the file a follower
/// sees first; the rest is the file.
pub fn file(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let (head, body) = data.split_at(3);
    let limits = fuzz_limits();
    let path = scratch();
    std::fs::write(&path, body).expect("scratch file");
    let a = TgmFile::open_with(&path, Backend::Mmap, &limits).expect("open (mmap)");
    let b = TgmFile::open_with(&path, Backend::Pread, &limits).expect("open (pread)");
    assert_eq!(a.spans(), b.spans(), "backends disagree on the index");
    assert_eq!(
        a.torn_tail(),
        b.torn_tail(),
        "backends disagree on the torn tail"
    );
    check_index(&a, body);

    // The sans-I/O reader locates and reads what the blocking one does.
    let mut s = SteppedFile::new(body.len() as u64, SourceHints::default(), &limits);
    let (located, cut_tail) = stepped(&mut s, body, |f| {
        Ok((f.spans().to_vec(), f.torn_tail().cloned()))
    })
    .expect("the sans-I/O reader locates what the blocking one does");
    assert_eq!(located, b.spans(), "the sans-I/O reader's index differs");
    assert_eq!(
        cut_tail.as_ref(),
        b.torn_tail(),
        "the sans-I/O reader's torn tail differs"
    );

    let opts = options(head[0]);
    for m in 0..a.num_messages().min(4) {
        let span = a.spans()[m];
        let bytes = &body[span.range()];
        assert_eq!(a.message_bytes(m).expect("message bytes").as_ref(), bytes);
        for o in 0..3 {
            let x = a.decode_object(m, o, &opts);
            let y = b.decode_object(m, o, &opts);
            let z = tgm::decode_object(bytes, o, &opts);
            assert_eq!(
                outcome(&x),
                outcome(&y),
                "object {m}/{o}: mmap and pread differ"
            );
            let w = stepped(&mut s, body, |f| f.decode_object(m, o, &opts));
            assert_eq!(
                outcome(&w),
                outcome(&y),
                "object {m}/{o}: the sans-I/O reader and pread differ"
            );
            // An indexed object read parses only that object's frame
            // (spec/files.md §3): in a message damaged elsewhere it may
            // succeed, or fail differently, where parsing the bytes whole
            // fails. The damage must then show on a whole-message read.
            let damaged_elsewhere = z.is_err() && a.with_message(m, |_| Ok(())).is_err();
            if !damaged_elsewhere {
                assert_eq!(
                    outcome(&x),
                    outcome(&z),
                    "object {m}/{o}: file and bytes differ"
                );
            }
            let _ = a.object_slice::<f32>(m, o, &opts);
        }
        let _ = a.select("k", "1");
    }

    let (spans, torn) = (a.spans().to_vec(), a.torn_tail().cloned());
    drop((a, b));

    // A follower that looked when only a prefix was written.
    let cut = (u16_at(head, 1) as usize * body.len()) / 65535;
    std::fs::write(&path, &body[..cut]).expect("scratch file");
    let mut f = TgmFile::open_with(&path, Backend::Mmap, &limits).expect("open prefix");
    check_index(&f, &body[..cut]);
    let before = f.spans().to_vec();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut w| w.write_all(&body[cut..]))
        .expect("append");
    f.refresh().expect("refresh");
    assert!(f.spans().starts_with(&before), "refresh dropped spans");
    check_index(&f, body);
    if clean(body) {
        assert_eq!(
            f.spans(),
            spans,
            "a follower indexed a clean file differently"
        );
    }
    drop(f);

    // Repairing the file for appending never loses an intact message: the
    // appender refuses and leaves the file as it was, or cuts exactly the
    // torn tail.
    let intact: Vec<_> = spans
        .iter()
        .filter(|s| {
            Message::parse_with(&body[s.range()], s.offset, &limits).is_ok_and(|m| {
                m.verify(tgm::Verify::IfPresent).is_ok()
                    && m.metadata().is_ok()
                    && (0..m.num_objects()).all(|i| m.object(i).is_ok())
            })
        })
        .copied()
        .collect();
    let mut ao = AppendOptions::default();
    ao.limits = limits.clone();
    match Appender::open(&path, &ao) {
        Ok(app) => {
            drop(app);
            let cut = torn.as_ref().map_or(body.len(), |t| t.offset as usize);
            let now = std::fs::read(&path).expect("read back");
            assert_eq!(
                now,
                &body[..cut],
                "the appender cut more than the torn tail"
            );
            let g = TgmFile::open_with(&path, Backend::Pread, &limits).expect("reopen");
            for s in &intact {
                assert!(
                    g.spans().contains(s),
                    "repair lost the intact message at {}",
                    s.offset
                );
            }
        }
        Err(_) => assert_eq!(
            std::fs::read(&path).expect("read back"),
            body,
            "a refused repair changed the file"
        ),
    }
    let _ = std::fs::remove_file(&path);
}

/// The catalogue parser and the reader rule (`spec/files.md` §9): the
/// first byte picks the input's role. As a body, a catalogue that parses
/// serialises back to itself; as a file, opening never panics, and every
/// message listed lies in the file, in order, delimited by its magics
/// when the catalogue was not used, and the catalogue's own message is
/// never listed.
pub fn catalogue(data: &[u8]) {
    use tgm::file::catalogue::Catalogue;
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = fuzz_limits();
    if mode % 2 == 0 {
        if let Ok(c) = Catalogue::from_body(rest, &limits) {
            let body = c.to_body();
            let again = Catalogue::from_body(&body, &limits).expect("a parsed body re-parses");
            // Bytes, not values: NaN metadata values are not equal to
            // themselves.
            assert_eq!(again.to_body(), body);
            assert_eq!(c.messages.last().map_or(0, |m| m.offset + m.len), c.covered);
        }
        return;
    }
    let Ok(f) = TgmFile::from_source(rest.to_vec(), &limits) else {
        return;
    };
    let mut end = 0u64;
    for s in f.spans() {
        assert!(s.offset >= end && s.len >= MIN_MESSAGE_LEN as u64);
        end = s.offset + s.len;
        assert!(end <= rest.len() as u64, "a span past the end of the file");
    }
    match f.catalogue() {
        Some(c) => {
            assert_eq!(
                c.covered + f.catalogue_spans().last().unwrap().len,
                rest.len() as u64
            );
            assert_eq!(f.num_messages(), c.listed().count());
        }
        None => {
            for s in f.spans() {
                let m = &rest[s.range()];
                assert_eq!(&m[..8], MAGIC);
                assert_eq!(&m[m.len() - 8..], END_MAGIC);
            }
        }
    }
}

/// The catalogue recorder (`spec/files.md` §9.4): the first two bytes give
/// the size of the writes, the rest is the stream. Recording never panics,
/// and a stream ended with the catalogue it recorded lists exactly the
/// messages a scan of the stream finds (catalogue messages left out), each
/// with the metadata, descriptors and stored sizes its bytes hold: the
/// recorder never lists what is not there, nor hides what is.
pub fn catalogue_recorder(data: &[u8]) {
    use tgm::file::catalogue::is_catalogue_message;
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let chunk = usize::from(u16::from_le_bytes(*head)).max(1);
    let limits = fuzz_limits();
    let mut r = tgm::file::CatalogueRecorder::new(&limits);
    for c in rest.chunks(chunk) {
        r.observe(c);
    }
    let Some(recorded) = r.finish().expect("a recorded catalogue builds") else {
        return;
    };
    let msg = recorded.to_message().expect("a recorded catalogue encodes");
    let ended = TgmFile::from_source([rest, &msg[..]].concat(), &limits)
        .expect("a recorded stream ended with its catalogue opens");
    // What the bytes hold, message by message.
    let truth: Vec<_> = tgm::scan(rest)
        .into_iter()
        .map(|s| {
            let m = tgm::Message::parse_with(&rest[s.range()], s.offset, &limits)
                .expect("a recorded message parses");
            let meta = m.metadata().expect("a recorded message has metadata");
            let descs: Vec<_> = (0..m.num_objects())
                .map(|o| {
                    m.object(o)
                        .expect("a recorded object")
                        .descriptor()
                        .to_cbor()
                })
                .collect();
            let sizes: Vec<u64> = (0..m.num_objects())
                .map(|o| {
                    m.object(o)
                        .expect("a recorded object")
                        .payload_region()
                        .len() as u64
                })
                .collect();
            (s, meta, descs, sizes)
        })
        .filter(|(s, ..)| !is_catalogue_message(&rest[s.range()], s.offset, &limits))
        .collect();
    let spans: Vec<_> = truth.iter().map(|t| t.0).collect();
    assert_eq!(ended.spans(), &spans[..], "listings differ");
    let opts = tgm::DecodeOptions::default().verify(tgm::Verify::Off);
    for (m, (_, meta, descs, sizes)) in truth.iter().enumerate() {
        let got = ended.metadata(m, &opts).expect("listed metadata");
        assert_eq!(got.to_cbor(), meta.to_cbor(), "metadata of message {m}");
        let got: Vec<_> = ended
            .descriptors(m)
            .expect("listed descriptors")
            .iter()
            .map(|d| d.to_cbor())
            .collect();
        assert_eq!(&got, descs, "descriptors of message {m}");
        assert_eq!(
            &ended.stored_sizes(m).expect("listed sizes"),
            sizes,
            "stored sizes of message {m}"
        );
    }
}

/// Catalogue files (`spec/files.md` §9.5): the first two bytes give the
/// length of the catalogue file, the rest is it then the archive. Parsing
/// never panics; a parsed catalogue re-encodes to one that parses the same;
/// taken for the archive, it lists only spans inside it, and one not taken
/// leaves the archive listed as a scan lists it.
pub fn archive_catalogue(data: &[u8]) {
    use tgm::file::archive_catalogue::ArchiveCatalogue;
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let n = usize::from(u16::from_le_bytes(*head)).min(rest.len());
    let (cat, archive) = rest.split_at(n);
    let limits = fuzz_limits();
    let Ok(cats) = ArchiveCatalogue::read_all(cat, &limits) else {
        return;
    };
    for c in &cats {
        let again = c.to_message().expect("a parsed catalogue encodes");
        let back =
            ArchiveCatalogue::read_all(&again, &limits).expect("an encoded catalogue parses");
        assert_eq!(back[0].archive, c.archive);
        assert_eq!(back[0].catalogue.to_body(), c.catalogue.to_body());
        let Ok((f, why)) = TgmFile::from_source_catalogued(archive.to_vec(), c, &limits) else {
            continue;
        };
        let mut end = 0u64;
        for s in f.spans() {
            assert!(s.offset >= end, "spans out of order");
            end = s.offset + s.len;
            assert!(
                end <= archive.len() as u64,
                "a span past the end of the archive"
            );
        }
        if why.is_some() {
            let scanned = TgmFile::from_source(archive.to_vec(), &limits).expect("opened once");
            assert_eq!(f.spans(), scanned.spans());
        }
    }
}
