//! The library validator (`spec/files.md` §8): each kind of damage gives
//! its code, level, object and offset, and every intact message around it
//! is still reported.

use tgm::validate::{
    validate, validate_message, IssueCode, Level, Mode, Report, Severity, ValidateOptions,
};
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// A message of two float64 objects [1, 2, 3] and [4, 5, 6].
fn message(hash: bool) -> Vec<u8> {
    let d = ObjectDescriptor::new(Dtype::Float64, vec![3]);
    let a: Vec<u8> = [1.0f64, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let b: Vec<u8> = [4.0f64, 5.0, 6.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let meta = GlobalMetadata::default();
    let opts = EncodeOptions::new().hashing(hash);
    tgm::encode(&meta, &[(&d, &a[..]), (&d, &b[..])], &opts).unwrap()
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

fn run(bytes: &[u8], mode: Mode) -> Report {
    validate(bytes, mode, &ValidateOptions::default()).unwrap()
}

fn codes(r: &Report) -> Vec<IssueCode> {
    r.issues().map(|i| i.code).collect()
}

#[test]
fn an_intact_message_passes_every_mode_with_its_hashes_verified() {
    let m = message(true);
    for mode in [Mode::Quick, Mode::Default, Mode::Checksum, Mode::Full] {
        let r = run(&m, mode);
        assert!(r.is_ok() && r.file_issues.is_empty(), "{mode:?}: {r:?}");
        assert_eq!(codes(&r), vec![], "{mode:?}");
        assert_eq!(r.total_objects(), 2);
        assert_eq!(r.hash_verified(), mode != Mode::Quick, "{mode:?}");
    }
}

#[test]
fn a_flipped_payload_byte_is_a_hash_mismatch_in_its_object() {
    let mut m = message(true);
    let at = find(&m, &5.0f64.to_ne_bytes());
    m[at] ^= 0x40;
    let r = run(&m, Mode::Checksum);
    let i = r.issues().next().unwrap();
    assert_eq!(
        (i.code, i.level, i.severity, i.object_index, i.message_index),
        (
            IssueCode::HashMismatch,
            Level::Integrity,
            Severity::Error,
            Some(1),
            0
        )
    );
    assert!(i.offset.is_some_and(|o| o < at as u64), "{i:?}");
    assert!(!r.is_ok() && !r.hash_verified());
    // Quick mode reads no payload.
    assert!(run(&m, Mode::Quick).is_ok());
}

#[test]
fn nan_and_inf_are_fidelity_errors_only_in_full_mode() {
    let mut m = message(false);
    let at = find(&m, &2.0f64.to_ne_bytes());
    m[at..at + 8].copy_from_slice(&f64::NAN.to_ne_bytes());
    let at = find(&m, &6.0f64.to_ne_bytes());
    m[at..at + 8].copy_from_slice(&f64::NEG_INFINITY.to_ne_bytes());
    let r = run(&m, Mode::Full);
    let fid: Vec<_> = r
        .issues()
        .filter(|i| i.level == Level::Fidelity)
        .map(|i| (i.code, i.object_index, i.severity))
        .collect();
    assert_eq!(
        fid,
        vec![
            (IssueCode::NanDetected, Some(0), Severity::Error),
            (IssueCode::InfDetected, Some(1), Severity::Error)
        ]
    );
    assert!(r
        .issues()
        .any(|i| i.code == IssueCode::NoHashAvailable && i.severity == Severity::Warning));
    let r = run(&m, Mode::Default);
    assert!(r.is_ok(), "{r:?}");
    assert!(!r.hash_verified());
}

#[test]
fn masked_nan_is_declared_and_not_reported() {
    let d = ObjectDescriptor::new(Dtype::Float64, vec![2]);
    let v: Vec<u8> = [1.0f64, f64::NAN]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let mut p = tgm::pipeline::PipelineOptions::default();
    p.allow_nan = true;
    let opts = EncodeOptions::new().pipeline(p);
    let m = tgm::encode(&GlobalMetadata::default(), &[(&d, &v[..])], &opts).unwrap();
    let r = run(&m, Mode::Full);
    assert!(r.is_ok() && codes(&r).is_empty(), "{r:?}");
}

#[test]
fn damage_between_and_after_messages_is_reported_and_every_message_checked() {
    let m = message(true);
    let mut file = m.clone();
    file.extend_from_slice(b"garbage!");
    file.extend_from_slice(&m);
    file.extend_from_slice(&m[..m.len() - 10]);
    let r = run(&file, Mode::Default);
    assert_eq!(r.messages.len(), 2);
    assert!(r.messages.iter().all(|m| m.is_ok() && m.hash_verified));
    assert_eq!(r.messages[1].offset, m.len() as u64 + 8);
    let f: Vec<_> = r
        .file_issues
        .iter()
        .map(|f| (f.byte_offset, f.length))
        .collect();
    let tail = 2 * m.len() as u64 + 8;
    assert_eq!(f, vec![(m.len() as u64, 8), (tail, m.len() as u64 - 10)]);
    assert!(r.file_issues[1].description.contains("trailing"), "{r:?}");
    assert!(!r.is_ok());

    let r = run(b"no message here", Mode::Default);
    assert!(r.messages.is_empty());
    assert!(r.file_issues[0].description.contains("no valid messages"));
}

#[test]
fn one_damaged_message_reports_its_structure_code() {
    let m = message(true);
    let opts = ValidateOptions::default();
    let code = |b: &[u8]| validate_message(b, Mode::Default, &opts).issues[0].code;
    assert_eq!(code(b""), IssueCode::BufferTooShort);
    let mut bad = m.clone();
    bad[0..8].copy_from_slice(b"WRONGMAG");
    assert_eq!(code(&bad), IssueCode::InvalidMagic);
    assert_eq!(code(&m[..23]), IssueCode::BufferTooShort);
    assert_eq!(code(&m[..30]), IssueCode::TotalLengthExceedsBuffer);
    assert_eq!(code(&m[..m.len() - 1]), IssueCode::TotalLengthExceedsBuffer);
    let r = validate_message(&bad, Mode::Default, &opts);
    assert_eq!(
        (r.object_count, r.hash_verified, r.is_ok()),
        (0, false, false)
    );
    assert_eq!(r.issues[0].object_index, None);
}

#[test]
fn canonical_key_order_is_a_warning_with_the_frame_offset() {
    let mut meta = GlobalMetadata::default();
    meta.extra.insert("aa".into(), tgm::cbor::Value::Uint(1));
    meta.extra.insert("ab".into(), tgm::cbor::Value::Uint(2));
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
    let opts = EncodeOptions::new().hashing(false);
    let mut m = tgm::encode(&meta, &[(&d, &[7u8][..])], &opts).unwrap();
    let at = find(&m, b"\x62aa\x01\x62ab\x02");
    m[at..at + 8].copy_from_slice(b"\x62ab\x02\x62aa\x01");
    let canon = ValidateOptions::default().canonical(true);
    let r = validate(&m[..], Mode::Quick, &canon).unwrap();
    let i = r.issues().next().unwrap();
    assert_eq!(
        (i.code, i.severity),
        (IssueCode::MetadataCborNonCanonical, Severity::Warning)
    );
    assert!(r.is_ok());
    assert!(run(&m, Mode::Quick).issues().next().is_none());
}

#[test]
fn json_has_the_reference_shape() {
    let mut m = message(true);
    let at = find(&m, &5.0f64.to_ne_bytes());
    m[at] ^= 1;
    let j = run(&m, Mode::Default).to_json("x.tgm");
    assert_eq!(j["status"], "failed");
    assert_eq!(j["messages"], 1);
    assert_eq!(j["objects"], 2);
    assert_eq!(j["hash_verified"], false);
    let issue = &j["message_reports"][0]["issues"][0];
    assert_eq!(issue["code"], "hash_mismatch");
    assert_eq!(issue["level"], "integrity");
    assert_eq!(issue["severity"], "error");
    assert_eq!(issue["object_index"], 1);
    assert!(issue["byte_offset"].as_u64().is_some_and(|o| o < at as u64));
    assert!(issue.get("message_index").is_none());
}

#[test]
fn a_file_is_validated_through_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.tgm");
    let mut bytes = message(true);
    bytes.extend_from_slice(b"tail");
    std::fs::write(&p, &bytes).unwrap();
    let r = tgm::validate_file(&p, Mode::Full, &ValidateOptions::default()).unwrap();
    assert_eq!(r, run(&bytes, Mode::Full));
    let e = tgm::validate_file(dir.path().join("none.tgm"), Mode::Full, &Default::default());
    assert!(e.unwrap_err().to_string().contains("none.tgm"));
}
