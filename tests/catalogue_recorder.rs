//! The catalogue built from a byte stream as it is written
//! (`spec/files.md` §9.4) equals the one built by reading the finished
//! file, whatever the chunking of the writes, and a stream that is not
//! whole messages gets none.

#[path = "remote_corpus.rs"]
mod corpus;

use std::io::{Cursor, Write};

use corpus::*;
use tgm::file::catalogue::Catalogue;
use tgm::file::{CatalogueRecorder, CataloguingWriter, TgmFile};
use tgm::{Dtype, EncodeOptions, GlobalMetadata, Limits, Map, PipelineBuilder};

fn record(bytes: &[u8], chunk: usize) -> Option<Catalogue> {
    let mut r = CatalogueRecorder::new(&Limits::default());
    for c in bytes.chunks(chunk) {
        r.observe(c);
    }
    r.finish().unwrap()
}

/// Files whose objects are larger than the windows a recorder keeps, with
/// preceders, footer-only metadata and no hashes.
fn large_and_streamed() -> Vec<(String, Vec<u8>)> {
    let big = 700_000; // 2.8 MB of float32: beyond HEAD_KEPT + TAIL_KEPT.
    let mut out = vec![(
        "large buffered".to_string(),
        message(
            &[
                (desc(Dtype::Float32, big, None), f32s(big, 1)),
                (desc(Dtype::Float32, 10, None), f32s(10, 2)),
            ],
            &EncodeOptions::new(),
        ),
    )];
    let p = PipelineBuilder::new().simple_packing(16).szip();
    out.push((
        "large szip, no hashes".into(),
        message(
            &[(desc(Dtype::Float64, big, Some(p)), f64s(big, 3))],
            &EncodeOptions::new().hashing(false),
        ),
    ));
    let mut s = tgm::StreamingEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        &EncodeOptions::new(),
    )
    .unwrap();
    for k in 0..3 {
        let mut e = Map::new();
        e.insert("name".into(), format!("step{k}").into());
        s.write_preceder(e).unwrap();
        s.write_object(&desc(Dtype::Float32, big / 3, None), &f32s(big / 3, k))
            .unwrap();
    }
    out.push(("streamed with preceders".into(), s.finish().unwrap().0));
    out
}

#[test]
fn recording_a_stream_equals_reading_the_file() {
    let mut files = corpus();
    files.extend(large_and_streamed());
    let all: Vec<u8> = files.iter().flat_map(|(_, b)| b.clone()).collect();
    files.push(("all of them in one file".into(), all));
    let mut compared = 0;
    for (name, bytes) in &files {
        let read = Catalogue::build_for(bytes, &Limits::default()).unwrap_or(None);
        for chunk in [1, 7, 4096, bytes.len().max(1)] {
            if chunk == 1 && bytes.len() > 200_000 {
                continue;
            }
            let recorded = record(bytes, chunk);
            assert_eq!(recorded, read, "{name}, written {chunk} bytes at a time");
        }
        compared += usize::from(read.is_some());
        if read.is_some() {
            same_answers(name, bytes);
        }
    }
    assert!(compared >= 10, "only {compared} files had a catalogue");
}

/// Metadata, descriptors and stored sizes of every message of `plain`
/// ended with its catalogue (answered from it) equal those of `plain`
/// (read from the messages).
fn same_answers(name: &str, plain: &[u8]) {
    let mut w = CataloguingWriter::new(Vec::new(), &Limits::default());
    w.write_all(plain).unwrap();
    let bytes = w.finish().unwrap().0;
    let cat = TgmFile::from_source(&bytes[..], &Limits::default()).unwrap();
    assert!(cat.catalogue().is_some(), "{name}");
    let scan = TgmFile::from_source(plain, &Limits::default()).unwrap();
    assert_eq!(cat.num_messages(), scan.num_messages(), "{name}");
    let opts = tgm::DecodeOptions::default();
    for m in 0..scan.num_messages() {
        assert_eq!(
            cat.metadata(m, &opts).unwrap(),
            scan.metadata(m, &opts).unwrap(),
            "{name} {m}"
        );
        assert_eq!(
            cat.descriptors(m).unwrap(),
            scan.descriptors(m).unwrap(),
            "{name} {m}"
        );
        assert_eq!(
            cat.stored_sizes(m).unwrap(),
            scan.stored_sizes(m).unwrap(),
            "{name} {m}"
        );
    }
}

#[test]
fn a_written_stream_ends_with_its_catalogue_and_opens_from_it() {
    let plain = many_messages(20, 50);
    let mut w = CataloguingWriter::new(Vec::new(), &Limits::default());
    for c in plain.chunks(1000) {
        w.write_all(c).unwrap();
    }
    let (bytes, n) = w.finish().unwrap();
    assert!(n > 0);
    assert_eq!(&bytes[..plain.len()], &plain[..]);
    let f = TgmFile::from_source(&bytes[..], &Limits::default()).unwrap();
    let cat = f.catalogue().expect("the catalogue is taken");
    assert_eq!(cat.covered, plain.len() as u64);
    assert_eq!(f.num_messages(), 20);
}

#[test]
fn a_file_ending_in_a_streaming_message_opens_from_its_catalogue() {
    let mut plain = many_messages(2, 10);
    plain.extend(streaming(
        &[(desc(Dtype::Float32, 100, None), f32s(100, 0))],
        false,
    ));
    let mut w = CataloguingWriter::new(Vec::new(), &Limits::default());
    w.write_all(&plain).unwrap();
    let (bytes, n) = w.finish().unwrap();
    assert!(n > 0);
    let f = TgmFile::from_source(&bytes[..], &Limits::default()).unwrap();
    assert!(
        f.catalogue().is_some(),
        "a streaming last message (length 0) is taken"
    );
    assert_eq!(f.num_messages(), 3);
}

#[test]
fn a_back_filled_streaming_message_keeps_its_catalogue() {
    let w = CataloguingWriter::new(Cursor::new(Vec::new()), &Limits::default());
    let mut s =
        tgm::StreamingEncoder::new(w, &GlobalMetadata::default(), &EncodeOptions::new()).unwrap();
    s.write_object(&desc(Dtype::Float32, 1000, None), &f32s(1000, 0))
        .unwrap();
    let (w, len) = s.finish_with_backfill().unwrap();
    assert!(w.stopped().is_none(), "{:?}", w.stopped());
    let (cur, n) = w.finish().unwrap();
    let bytes = cur.into_inner();
    assert!(n > 0);
    assert_eq!(bytes.len() as u64, len + n);
    let f = TgmFile::from_source(&bytes[..], &Limits::default()).unwrap();
    assert!(f.catalogue().is_some());
    assert_eq!(f.num_messages(), 1);
}

#[test]
fn any_other_rewrite_stops_the_recording() {
    let plain = many_messages(2, 10);
    let mut w = CataloguingWriter::new(Cursor::new(Vec::new()), &Limits::default());
    w.write_all(&plain).unwrap();
    use std::io::{Seek, SeekFrom};
    w.seek(SeekFrom::Start(40)).unwrap();
    w.write_all(&[0; 8]).unwrap();
    w.seek(SeekFrom::End(0)).unwrap();
    assert!(w.stopped().unwrap().contains("rewritten at offset 40"));
    let (cur, n) = w.finish().unwrap();
    assert_eq!((n, cur.into_inner().len()), (0, plain.len()));
}

#[test]
fn streams_that_are_not_whole_messages_get_none() {
    let plain = many_messages(3, 10);
    let cut = &plain[..plain.len() - 5];
    assert!(record(cut, 64).is_none(), "a cut stream");
    let mut tail = plain.clone();
    tail.extend_from_slice(b"trailing bytes");
    assert!(record(&tail, 64).is_none(), "bytes after the messages");
    let mut head = b"NOT A MESSAGE ".to_vec();
    head.extend_from_slice(&plain);
    assert!(record(&head, 64).is_none(), "bytes before the messages");
    assert!(record(b"", 1).is_none(), "nothing");
    let mut bad = plain.clone();
    bad[24] = b'X'; // The first frame's magic.
    assert!(record(&bad, 64).is_none(), "a broken frame");
}
