//! `tgm index` and catalogue files (`spec/files.md` §9.5): a catalogue
//! file lists archives tgm did not write, opens them without a scan,
//! moves with them, stands for all of them as an input, and one that no
//! longer matches its archive is ignored with a note, never a wrong
//! listing. Refusals leave no output.

use std::path::Path;
use std::process::Command;

use tgm::{ByteOrder, Dtype};

struct Run {
    ok: bool,
    out: String,
    err: String,
}

fn tgm(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    Run {
        ok: out.status.success(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `n` plain messages (no catalogue: written as the reference writes),
/// one float32 object of 50 values each, with a MARS param.
fn plain(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|m| {
            let mut mars = tgm::Map::new();
            mars.insert("param".into(), ["2t", "msl"][m % 2].into());
            let mut entry = tgm::Map::new();
            entry.insert("mars".into(), tgm::cbor::Value::text_map(mars));
            let meta = tgm::GlobalMetadata::with_base(vec![entry]);
            let d = tgm::ObjectDescriptor::new(Dtype::Float32, vec![50])
                .with_byte_order(ByteOrder::native());
            let x: Vec<u8> = (0..50u32)
                .flat_map(|k| ((seed + m as u32 * 7 + k) as f32).to_ne_bytes())
                .collect();
            tgm::encode(&meta, &[(&d, &x[..])], &tgm::EncodeOptions::new()).unwrap()
        })
        .collect()
}

/// `tgm ls` rows without the file column.
fn rows(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .map(|l| l.split_once('\t').unwrap().1.to_string())
        .collect()
}

#[test]
fn a_catalogue_file_stands_for_its_archives_and_moves_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (a, b) = (data.join("a.tgm"), data.join("b.tgm"));
    std::fs::write(&a, plain(6, 0)).unwrap();
    std::fs::write(&b, plain(3, 1000)).unwrap();
    let cat = data.join("all.tgmc");
    let r = tgm(&["index", s(&a), s(&b), "-o", s(&cat)]);
    assert!(r.ok, "{}", r.err);
    assert!(
        r.err
            .contains("catalogued 2 archive(s), 9 message(s), 9 object(s)"),
        "{}",
        r.err
    );
    let want = tgm(&["ls", "-p", "mars.param", s(&a), s(&b)]);
    let got = tgm(&["ls", "-p", "mars.param", s(&cat)]);
    assert!(got.ok, "{}", got.err);
    assert_eq!(rows(&got.out), rows(&want.out));
    assert!(got.out.contains("a.tgm\t0\t0\t2t"), "{}", got.out);
    // The folder moved: the catalogue names its archives relative to itself.
    let moved = dir.path().join("moved");
    std::fs::rename(&data, &moved).unwrap();
    let got = tgm(&["ls", "-p", "mars.param", s(&moved.join("all.tgmc"))]);
    assert!(got.ok, "{}", got.err);
    assert_eq!(rows(&got.out), rows(&want.out));
    assert!(got.err.is_empty(), "{}", got.err);
    // Values come from the archives.
    let dump = tgm(&["stats", s(&moved.join("all.tgmc"))]);
    let direct = tgm(&["stats", s(&moved.join("a.tgm")), s(&moved.join("b.tgm"))]);
    assert!(dump.ok && direct.ok, "{}{}", dump.err, direct.err);
    assert_eq!(rows(&dump.out), rows(&direct.out));
}

#[test]
fn with_catalogue_a_changed_archive_is_scanned_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tgm");
    std::fs::write(&a, plain(4, 0)).unwrap();
    let cat = dir.path().join("a.tgmc");
    assert!(tgm(&["index", s(&a), "-o", s(&cat)]).ok);
    let r = tgm(&["--catalogue", s(&cat), "ls", s(&a)]);
    assert!(r.ok && r.err.is_empty(), "{}", r.err);
    assert_eq!(r.out, tgm(&["ls", s(&a)]).out);
    // A writer that knows no catalogue appends two messages.
    let mut bytes = std::fs::read(&a).unwrap();
    bytes.extend(plain(2, 500));
    std::fs::write(&a, &bytes).unwrap();
    let r = tgm(&["--catalogue", s(&cat), "ls", s(&a)]);
    assert!(r.ok, "{}", r.err);
    assert!(r.err.contains("its catalogue was not used"), "{}", r.err);
    assert_eq!(r.out.lines().count(), 1 + 6, "{}", r.out);
    assert_eq!(r.out, tgm(&["ls", s(&a)]).out);
    // As an input, too.
    let r = tgm(&["ls", s(&cat)]);
    assert!(r.ok, "{}", r.err);
    assert!(r.err.contains("its catalogue was not used"), "{}", r.err);
    assert_eq!(r.out.lines().count(), 1 + 6);
}

#[test]
fn refusals_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tgm");
    std::fs::write(&a, plain(3, 0)).unwrap();
    // Not named .tgmc.
    let out = dir.path().join("a.idx");
    let r = tgm(&["index", s(&a), "-o", s(&out)]);
    assert!(!r.ok && r.err.contains(".tgmc"), "{}", r.err);
    assert!(!out.exists());
    // A torn archive: refused, naming it.
    let torn = dir.path().join("torn.tgm");
    let bytes = std::fs::read(&a).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 9]).unwrap();
    let cat = dir.path().join("c.tgmc");
    let r = tgm(&["index", s(&a), s(&torn), "-o", s(&cat)]);
    assert!(!r.ok && r.err.contains("torn.tgm"), "{}", r.err);
    assert!(!cat.exists());
    // An existing catalogue is kept without --force.
    assert!(tgm(&["index", s(&a), "-o", s(&cat)]).ok);
    let before = std::fs::read(&cat).unwrap();
    let r = tgm(&["index", s(&a), s(&a), "-o", s(&cat)]);
    assert!(!r.ok && r.err.contains("--force"), "{}", r.err);
    assert_eq!(std::fs::read(&cat).unwrap(), before);
    assert!(tgm(&["index", s(&a), s(&a), "-o", s(&cat), "--force"]).ok);
    // A .tgmc that is not a catalogue file.
    let fake = dir.path().join("fake.tgmc");
    std::fs::copy(&a, &fake).unwrap();
    let r = tgm(&["ls", s(&fake)]);
    assert!(!r.ok && r.err.contains("fake.tgmc"), "{}", r.err);
    // --catalogue listing other archives only.
    let b = dir.path().join("b.tgm");
    std::fs::write(&b, plain(2, 9)).unwrap();
    let two = dir.path().join("two.tgmc");
    assert!(tgm(&["index", s(&a), s(&b), "-o", s(&two)]).ok);
    let other = dir.path().join("other.tgm");
    std::fs::write(&other, plain(1, 3)).unwrap();
    let r = tgm(&["--catalogue", s(&two), "ls", s(&other)]);
    assert!(!r.ok && r.err.contains("lists no archive at"), "{}", r.err);
}

#[test]
fn the_catalogue_file_adds_no_catalogue_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tgm");
    std::fs::write(&a, plain(3, 0)).unwrap();
    let cat = dir.path().join("a.tgmc");
    assert!(tgm(&["index", s(&a), "-o", s(&cat)]).ok);
    let bytes = std::fs::read(&cat).unwrap();
    assert_eq!(
        tgm::scan(&bytes).len(),
        1,
        "one catalogue message per archive"
    );
}
