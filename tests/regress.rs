//! Inputs that once made a fuzz target fail, each with what it used to do.

use std::path::Path;

fn load(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/regress")
            .join(name),
    )
    .unwrap()
}

/// Map keys that are themselves maps, nested ~40 deep, used to be rendered
/// as JSON by escaping the inner key's JSON at every level: output doubled
/// per level and `tgm dump` hung. Non-text keys now render as their CBOR in
/// hex, linear in size.
#[test]
fn nested_non_text_keys_render_in_linear_time() {
    let data = load("cbor-f03dc3d6.bin");
    let (v, _) = tgm::cbor::parse_one(&data, 0, tgm::cbor::CborLimits::default()).unwrap();
    let json = v.to_json();
    assert!(
        json.len() < 10 * data.len(),
        "json of {} bytes for {} input bytes",
        json.len(),
        data.len()
    );
}

/// With a thread budget, objects were decoded in parallel and the error
/// returned was whichever failing object finished first, so the same bytes
/// gave different errors from run to run. The error is now the
/// lowest-numbered object's, exactly as in the sequential path.
#[test]
fn parallel_decode_reports_the_same_error_as_sequential() {
    for name in [
        "decode-11743a75.bin",
        "decode-2f5531a6.bin",
        "decode-8de0fec4.bin",
    ] {
        let data = load(name);
        let msg = &data[1..];
        let seq = tgm::decode(msg, &tgm::DecodeOptions::default().verify(tgm::Verify::Off));
        for _ in 0..50 {
            let par = tgm::decode(
                msg,
                &tgm::DecodeOptions::default()
                    .verify(tgm::Verify::Off)
                    .threads(2),
            );
            match (&seq, &par) {
                (Err(a), Err(b)) => {
                    assert_eq!(
                        (a.offset(), a.object_index()),
                        (b.offset(), b.object_index()),
                        "{name}: {a} vs {b}"
                    );
                }
                (Ok(a), Ok(b)) => assert_eq!(a.objects.len(), b.objects.len()),
                _ => panic!("{name}: sequential and parallel decoding disagree"),
            }
        }
    }
}

/// A damaged message (an end magic far past its real end) used to be
/// skipped as a whole by salvage, and with it the intact message that sat
/// inside its claimed range at offset 6904. Salvage now stops a damaged
/// range at the first intact message inside it.
#[test]
fn salvage_keeps_an_intact_message_inside_a_damaged_ones_range() {
    let data = load("scan-4ef6b87f.bin");
    let rep = tgm::file::salvage(&data, &tgm::Limits::default());
    assert!(
        rep.messages
            .iter()
            .any(|m| m.offset == 6904 && m.len == 568),
        "{:?}",
        rep.messages
    );
    let damaged = rep.skipped.iter().find(|s| s.offset == 6224).unwrap();
    assert_eq!(damaged.offset + damaged.len, 6904);
}

/// A candidate after garbage (offset 1096) had a chain of frame headers
/// that hopped over an intact message (offset 1496) and broke inside the
/// torn tail. Once the appender cut that tail, the chain ran exactly to the
/// end of the file, the candidate read as an interrupted write, and the
/// intact message vanished from the index. Only a message that starts where
/// the last complete one ends now counts as interrupted, and the appender
/// indexes the file as it would be after the cut and refuses if anything
/// changes.
#[test]
fn cutting_a_torn_tail_never_hides_an_intact_message() {
    let data = load("file-c5e6c75e.bin");
    let body = &data[3..];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.tgm");
    std::fs::write(&path, body).unwrap();
    let f = tgm::TgmFile::open(&path).unwrap();
    let intact = tgm::MessageSpan {
        offset: 1496,
        len: 1320,
    };
    assert_eq!(f.spans(), &[intact]);
    let cut = f.torn_tail().unwrap().offset as usize;
    assert_eq!(cut, 2816);
    drop(f);
    // The bytes as a cut would leave them still read the same.
    std::fs::write(&path, &body[..cut]).unwrap();
    assert_eq!(tgm::TgmFile::open(&path).unwrap().spans(), &[intact]);
    // And the appender's repair keeps the message indexed.
    std::fs::write(&path, body).unwrap();
    if tgm::file::Appender::open(&path, &Default::default()).is_ok() {
        assert_eq!(std::fs::read(&path).unwrap(), &body[..cut]);
    } else {
        assert_eq!(std::fs::read(&path).unwrap(), body);
    }
    assert_eq!(tgm::TgmFile::open(&path).unwrap().spans(), &[intact]);
}

/// Unknown top-level metadata keys move under `_extra_` on read, one level
/// deeper than in the bytes. A key nested to the depth limit was accepted,
/// and the metadata then re-encoded to bytes no reader accepts. Such keys are
/// now rejected on read, and the encoder refuses metadata that nests too deep.
#[test]
fn metadata_that_cannot_be_rewritten_is_rejected_on_read() {
    let limits = tgm::Limits::default();
    let data = load("metadata-033beedf.bin");
    let e = tgm::GlobalMetadata::from_cbor(&data, 0, &limits).unwrap_err();
    assert!(e.to_string().contains("nests deeper"), "{e}");

    // One level shallower is accepted and survives a rewrite.
    let mut ok = vec![0xa1, 0x61, b'x'];
    ok.extend(std::iter::repeat_n(0x81, limits.max_cbor_depth - 2));
    ok.push(0);
    let m = tgm::GlobalMetadata::from_cbor(&ok, 0, &limits).unwrap();
    let again = tgm::GlobalMetadata::from_cbor(&m.to_cbor(), 0, &limits).unwrap();
    assert_eq!(again, m);
    let mut deep = ok.clone();
    deep.insert(3, 0x81);
    assert!(tgm::GlobalMetadata::from_cbor(&deep, 0, &limits).is_err());
}

/// A loose top-level `_shared_` moved under `_extra_` like any loose key,
/// and the rewritten metadata was then read back as keys stored once
/// (`spec/format.md` §7.3): here a map with a non-text key that the shared
/// layout refuses, so what was read could not be read again. A loose
/// `_shared_` is now a metadata error on read.
#[test]
fn a_loose_shared_key_is_refused_on_read() {
    let limits = tgm::Limits::default();
    let data = load("metadata-9a0d5969.bin");
    let e = tgm::GlobalMetadata::from_cbor(&data, 5, &limits).unwrap_err();
    assert_eq!(*e.kind(), tgm::ErrorKind::Metadata);
    assert!(e.to_string().contains("_shared_ as a top-level key"), "{e}");
}
