//! Every subcommand, success and failure, and the data-loss regressions.

mod common;

use std::process::{Command, Stdio};

use common::{archive, count_messages, f64_npy, fixture, tgm_in};
use tgm::cbor::Value;
use tgm::metadata::{BaseLayout, Scope};
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

#[test]
fn import_never_replaces_an_existing_archive_without_force() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 160);
    let r = tgm_in(d.path(), &["import", "a.npy", "-o", "x.tgm"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.contains("x.tgm") && r.err.contains("--force"),
        "{}",
        r.err
    );
    assert_eq!(count_messages(&d.path().join("x.tgm")), 160);
    assert!(tgm_in(d.path(), &["import", "a.npy", "-o", "x.tgm", "--force"]).ok);
    assert_eq!(count_messages(&d.path().join("x.tgm")), 1);
}

#[test]
fn import_refuses_to_overwrite_its_own_input() {
    let d = fixture();
    let before = std::fs::read(d.path().join("a.npy")).unwrap();
    let r = tgm_in(d.path(), &["import", "a.npy", "-o", "a.npy", "--force"]);
    assert!(!r.ok && r.err.contains("also an input"), "{}", r.err);
    assert_eq!(std::fs::read(d.path().join("a.npy")).unwrap(), before);
    let r = tgm_in(
        d.path(),
        &["set", "-s", "x=1", "a.npy", "./a.npy", "--force"],
    );
    assert!(!r.ok);
    assert_eq!(std::fs::read(d.path().join("a.npy")).unwrap(), before);
}

#[test]
fn append_refuses_files_that_are_not_archives() {
    let d = fixture();
    let junk: Vec<u8> = (0..500u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(d.path().join("r.grib"), &junk).unwrap();
    let r = tgm_in(d.path(), &["import", "a.npy", "-o", "r.grib", "--append"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("not a Tensogram file"), "{}", r.err);
    assert_eq!(std::fs::read(d.path().join("r.grib")).unwrap(), junk);
}

#[test]
fn append_after_a_torn_tail_cuts_it_instead_of_burying_it() {
    let d = fixture();
    let x = d.path().join("x.tgm");
    archive(&x, 3);
    let mut bytes = std::fs::read(&x).unwrap();
    let one = tgm::TgmFile::open(&x).unwrap().spans()[0].len as usize;
    let torn = bytes[..one / 2].to_vec();
    bytes.extend_from_slice(&torn);
    std::fs::write(&x, &bytes).unwrap();
    let r = tgm_in(d.path(), &["import", "a.npy", "-o", "x.tgm", "--append"]);
    assert!(r.ok, "{}", r.err);
    let f = tgm::TgmFile::open(&x).unwrap();
    assert_eq!(f.num_messages(), 4);
    assert!(f.torn_tail().is_none());
    assert!(f.catalogue().is_some(), "the append ends with a catalogue");
    let all = f.spans().iter().chain(f.catalogue_spans());
    assert_eq!(all.map(|s| s.len).sum::<u64>(), f.size());
    assert!(tgm_in(d.path(), &["validate", "x.tgm"]).ok);
}

#[test]
fn flags_without_effect_and_destructive_settings_are_usage_errors() {
    let d = fixture();
    for args in [
        &[
            "import",
            "a.npy",
            "-o",
            "y.tgm",
            "--encoding",
            "simple_packing",
            "--bits",
            "0",
        ][..],
        &["import", "a.npy", "-o", "y.tgm", "--bits", "12"],
        &[
            "import",
            "a.npy",
            "-o",
            "y.tgm",
            "--compression",
            "lz4",
            "--level",
            "5",
        ],
        &["import", "a.npy", "-o", "y.tgm", "--szip-rsi", "32"],
        &["import", "a.npy", "-o", "y.tgm", "--encoding", "bogus"],
    ] {
        let r = tgm_in(d.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(!d.path().join("y.tgm").exists(), "{args:?} left an output");
    }
    let r = tgm_in(
        d.path(),
        &[
            "import",
            "k.npy",
            "-o",
            "k.tgm",
            "--encoding",
            "simple_packing",
            "--bits",
            "0",
        ],
    );
    assert!(r.ok, "a constant field may be stored in 0 bits: {}", r.err);
}

/// simple_packing of values with NaN, kept in a mask with --allow-nan:
/// the range comes from the finite values (`spec/pipeline.md` §10), so
/// they keep 16 bits of precision.
#[test]
fn simple_packing_packs_around_nan_kept_in_a_mask() {
    let d = fixture();
    let vals: Vec<f64> = (0..100)
        .map(|i| {
            if i % 7 == 0 {
                f64::NAN
            } else {
                1000.0 + i as f64 / 99.0
            }
        })
        .collect();
    f64_npy(&d.path().join("n.npy"), &vals);
    let pack = ["--encoding", "simple_packing", "--bits", "16"];
    let mut args = vec!["import", "n.npy", "-o", "n.tgm"];
    args.extend(pack);
    let r = tgm_in(d.path(), &args);
    assert_eq!(r.code, 1, "NaN without --allow-nan is refused: {}", r.err);
    args.push("--allow-nan");
    let r = tgm_in(d.path(), &args);
    assert!(r.ok, "{}", r.err);
    let f = tgm::TgmFile::open(d.path().join("n.tgm")).unwrap();
    let obj = f
        .decode_object(0, 0, &tgm::DecodeOptions::default())
        .unwrap();
    let got: Vec<f64> = obj
        .data
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for (g, w) in got.iter().zip(&vals) {
        if w.is_nan() {
            assert!(g.is_nan());
        } else {
            assert!((g - w).abs() <= 1.0 / 65536.0, "{g} vs {w}");
        }
    }
}

#[test]
fn export_that_fails_midway_leaves_no_files() {
    let d = fixture();
    let x = d.path().join("x.tgm");
    archive(&x, 30);
    let mut bytes = std::fs::read(&x).unwrap();
    let f = tgm::TgmFile::open(&x).unwrap();
    let span = f.spans()[28];
    let m = tgm::Message::parse(&bytes[span.range()]).unwrap();
    let at = span.offset as usize + m.object(0).unwrap().payload_offset() as usize;
    drop(f);
    bytes[at] ^= 0xff;
    std::fs::write(&x, &bytes).unwrap();
    let r = tgm_in(d.path(), &["export", "x.tgm", "-o", "out"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("message 28"), "{}", r.err);
    assert!(!d.path().join("out").exists());
    std::fs::create_dir(d.path().join("out2")).unwrap();
    assert!(!tgm_in(d.path(), &["export", "x.tgm", "-o", "out2"]).ok);
    assert_eq!(std::fs::read_dir(d.path().join("out2")).unwrap().count(), 0);
}

#[test]
fn closed_pipe_ends_output_quietly() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3000);
    for cmd in ["ls", "dump"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tgm"))
            .current_dir(d.path())
            .args([cmd, "x.tgm"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {err}");
        assert!(err.is_empty(), "{cmd}: {err}");
    }
}

#[test]
fn export_then_import_keeps_every_metadata_key() {
    let d = fixture();
    let r = tgm_in(
        d.path(),
        &[
            "import",
            "a.npy",
            "b.npy",
            "-o",
            "x.tgm",
            "--meta",
            "mars.class=od",
            "--meta",
            "mars.expver=0001",
            "--meta",
            "1:mars.param=130",
            "--meta",
            "levels=[500,850]",
            "--meta",
            "code:=42",
            "--meta",
            "extra.origin=test",
        ],
    );
    assert!(r.ok, "{}", r.err);
    assert!(tgm_in(d.path(), &["export", "x.tgm", "-o", "e"]).ok);
    assert!(d.path().join("e/m0_a.npy").exists() && d.path().join("e/m0.json").exists());
    let r = tgm_in(d.path(), &["import", "e", "-o", "back.tgm"]);
    assert!(r.ok, "{}", r.err);
    let f = tgm::TgmFile::open(d.path().join("back.tgm")).unwrap();
    let meta = f.with_message(0, |m| m.metadata()).unwrap();
    assert_eq!(
        meta.lookup(Some(0), "mars.expver"),
        Some(&Value::Text("0001".into()))
    );
    assert_eq!(
        meta.lookup(Some(0), "mars.param"),
        None,
        "--meta 1: targets object 1 only"
    );
    assert_eq!(meta.lookup(Some(1), "mars.param"), Some(&Value::Uint(130)));
    assert_eq!(
        meta.lookup(Some(1), "code"),
        Some(&Value::Text("42".into()))
    );
    assert_eq!(
        meta.lookup(Some(0), "levels"),
        Some(&Value::Array(vec![Value::Uint(500), Value::Uint(850)]))
    );
    assert_eq!(meta.extra.get("origin"), Some(&Value::Text("test".into())));
    assert_eq!(meta.lookup(Some(1), "name"), Some(&Value::Text("b".into())));
    let data = f.object_data(0, 1, &tgm::DecodeOptions::default()).unwrap();
    let vals: Vec<f64> = data
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(vals, [280.0, 281.5, 279.25]);
}

#[test]
fn malformed_metadata_keys_are_refused() {
    let d = fixture();
    for bad in ["a..b=1", "=1", "shape=[2]", "9:x=1", "x"] {
        let r = tgm_in(d.path(), &["import", "a.npy", "-o", "y.tgm", "--meta", bad]);
        assert_eq!(r.code, 2, "{bad}: {}", r.err);
    }
}

#[test]
fn ls_json_and_dump_json_carry_metadata() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    let r = tgm_in(d.path(), &["ls", "-j", "x.tgm"]);
    assert!(r.ok);
    let rows: Vec<serde_json::Value> = r
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2]["metadata"]["name"], "f2");
    let r = tgm_in(d.path(), &["dump", "-j", "x.tgm"]);
    let doc: serde_json::Value =
        serde_json::from_str(&r.out).expect("dump -j is one JSON document");
    assert_eq!(doc.as_array().unwrap().len(), 3);
    assert_eq!(doc[1]["objects"][0]["metadata"]["mars"]["param"], "p1");
}

#[test]
fn where_clauses_alternatives_negation_and_several() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 6);
    let names = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["get", "-p", "name"];
        a.extend_from_slice(args);
        a.push("x.tgm");
        let r = tgm_in(d.path(), &a);
        assert!(r.ok, "{}", r.err);
        r.out
            .lines()
            .map(|l| l.rsplit('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&["-w", "mars.param=p0/p2"]), ["f0", "f2", "f3", "f5"]);
    assert_eq!(names(&["-w", "mars.param!=p0"]), ["f1", "f2", "f4", "f5"]);
    assert_eq!(
        names(&["-w", "mars.param!=p0,name!=f1", "-w", "name!=f5"]),
        ["f2", "f4"]
    );
    let r = tgm_in(d.path(), &["ls", "-w", "nokey", "x.tgm"]);
    assert_eq!(r.code, 2);
}

#[test]
fn get_is_strict_about_missing_keys() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 2);
    let r = tgm_in(d.path(), &["get", "-p", "name,nothere", "x.tgm"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("nothere"), "{}", r.err);
}

#[test]
fn set_changes_metadata_keeps_data_and_refuses_data_keys() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    let r = tgm_in(
        d.path(),
        &[
            "set",
            "-s",
            "step=12,mars.expver=0001",
            "-w",
            "name=f1",
            "x.tgm",
            "y.tgm",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let r = tgm_in(
        d.path(),
        &["get", "-p", "step,mars.expver", "-w", "name=f1", "y.tgm"],
    );
    assert_eq!(r.out, "y.tgm\t1\t0\t12\t0001\n");
    assert!(!tgm_in(d.path(), &["get", "-p", "step", "-w", "name=f0", "y.tgm"]).ok);
    let f = tgm::TgmFile::open(d.path().join("y.tgm")).unwrap();
    assert_eq!(
        &f.object_data(1, 0, &Default::default()).unwrap()[..],
        &[1u8; 4]
    );
    for bad in ["shape=[2]", "dtype=int8", "encoding=none", "_reserved_.x=1"] {
        let r = tgm_in(d.path(), &["set", "-s", bad, "x.tgm", "z.tgm"]);
        assert_eq!(r.code, 2, "{bad}");
    }
    assert!(
        !tgm_in(d.path(), &["set", "-s", "a=1", "x.tgm", "y.tgm"]).ok,
        "y.tgm exists"
    );
}

#[test]
fn copy_splits_by_key_value_and_refuses_existing_outputs() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 6);
    let r = tgm_in(d.path(), &["copy", "x.tgm", "by_[mars.param].tgm"]);
    assert!(r.ok, "{}", r.err);
    for p in ["p0", "p1", "p2"] {
        assert_eq!(count_messages(&d.path().join(format!("by_{p}.tgm"))), 2);
    }
    let r = tgm_in(
        d.path(),
        &["copy", "-w", "mars.param=p1", "x.tgm", "one.tgm"],
    );
    assert!(r.ok);
    assert_eq!(count_messages(&d.path().join("one.tgm")), 2);
    assert!(!tgm_in(d.path(), &["copy", "x.tgm", "by_[mars.param].tgm"]).ok);
    assert!(!tgm_in(d.path(), &["copy", "x.tgm", "by_[nokey].tgm"]).ok);
}

#[test]
fn merge_split_and_reshuffle() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    assert!(tgm_in(d.path(), &["import", "a.npy", "b.npy", "-o", "y.tgm"]).ok);
    let r = tgm_in(d.path(), &["merge", "-o", "m.tgm", "x.tgm", "y.tgm"]);
    assert!(r.ok, "{}", r.err);
    let f = tgm::TgmFile::open(d.path().join("m.tgm")).unwrap();
    assert_eq!(f.num_messages(), 1);
    assert_eq!(f.with_message(0, |m| Ok(m.num_objects())).unwrap(), 5);
    let r = tgm_in(d.path(), &["split", "-o", "part_[index].tgm", "m.tgm"]);
    assert!(r.ok, "{}", r.err);
    assert!(d.path().join("part_4.tgm").exists() && !d.path().join("part_5.tgm").exists());
    assert!(!tgm_in(d.path(), &["split", "-o", "single.tgm", "m.tgm"]).ok);
    assert!(!d.path().join("single.tgm").exists());
    assert!(tgm_in(d.path(), &["reshuffle", "-o", "r.tgm", "y.tgm"]).ok);
    assert!(tgm_in(d.path(), &["validate", "--full", "r.tgm"]).ok);
    let mut e1 = tgm::Map::new();
    e1.insert("k".into(), Value::Uint(1));
    let g1 = GlobalMetadata {
        extra: e1,
        ..Default::default()
    };
    let mut g2 = g1.clone();
    g2.extra.insert("k".into(), Value::Uint(2));
    std::fs::write(
        d.path().join("e1.tgm"),
        tgm::encode(&g1, &[], &EncodeOptions::new()).unwrap(),
    )
    .unwrap();
    std::fs::write(
        d.path().join("e2.tgm"),
        tgm::encode(&g2, &[], &EncodeOptions::new()).unwrap(),
    )
    .unwrap();
    assert!(
        !tgm_in(
            d.path(),
            &["merge", "-o", "c.tgm", "-s", "error", "e1.tgm", "e2.tgm"]
        )
        .ok
    );
    assert!(
        tgm_in(
            d.path(),
            &["merge", "-o", "c.tgm", "-s", "last", "e1.tgm", "e2.tgm"]
        )
        .ok
    );
}

#[test]
fn validate_reports_damage_with_offsets_and_exit_status() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    assert!(tgm_in(d.path(), &["validate", "--canonical", "x.tgm"]).ok);
    let mut b = std::fs::read(d.path().join("x.tgm")).unwrap();
    let n = b.len();
    b.truncate(n - 10);
    std::fs::write(d.path().join("t.tgm"), &b).unwrap();
    let r = tgm_in(d.path(), &["validate", "--json", "x.tgm", "t.tgm"]);
    assert_eq!(r.code, 1);
    let rep: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(rep[0]["status"], "ok");
    assert_eq!(rep[0]["messages"], 3);
    assert_eq!(rep[0]["hash_verified"], true);
    assert_eq!(rep[1]["status"], "failed");
    assert_eq!(rep[1]["messages"], 2);
    let torn = &rep[1]["file_issues"][0];
    // The torn third message starts where the intact file's third does.
    let third = &rep[0]["message_reports"][2]["byte_offset"];
    assert_eq!(torn["byte_offset"], *third, "{rep}");
    assert!(
        torn["description"].as_str().unwrap().contains("trailing"),
        "{rep}"
    );
    let r = tgm_in(d.path(), &["validate", "t.tgm"]);
    assert!(
        r.err.contains("t.tgm: FAILED (1 error, 2 messages"),
        "{}",
        r.err
    );
    let r = tgm_in(d.path(), &["validate", "a.npy"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("with no valid messages"), "{}", r.err);
}

#[test]
fn damaged_and_foreign_inputs_are_errors_naming_the_path_once() {
    let d = fixture();
    let r = tgm_in(d.path(), &["ls", "a.npy"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("a.npy") && r.err.contains("not a Tensogram file"),
        "{}",
        r.err
    );
    let r = tgm_in(d.path(), &["info", "missing.tgm"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert_eq!(r.err.matches("No such file").count(), 1, "{}", r.err);
    assert!(r.err.contains("missing.tgm"));
    let r = tgm_in(d.path(), &["dump", "."]);
    assert!(r.err.contains(". ") || r.err.contains(".:"), "{}", r.err);
    assert!(r.err.contains("directory"), "{}", r.err);
}

#[test]
fn salvage_exits_non_zero_when_it_skipped_bytes() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    assert!(tgm_in(d.path(), &["salvage", "x.tgm"]).ok);
    let mut b = std::fs::read(d.path().join("x.tgm")).unwrap();
    b.extend_from_slice(b"garbage garbage garbage");
    std::fs::write(d.path().join("d.tgm"), &b).unwrap();
    let r = tgm_in(d.path(), &["salvage", "d.tgm", "-o", "good.tgm"]);
    assert_eq!(r.code, 1);
    assert!(r.out.contains("skipped"));
    assert_eq!(count_messages(&d.path().join("good.tgm")), 3);
    assert!(tgm_in(d.path(), &["validate", "good.tgm"]).ok);
}

#[test]
fn recompress_reports_sizes_and_error() {
    let d = fixture();
    let vals: Vec<f64> = (0..4000).map(|i| 280.0 + (i as f64 * 0.01).sin()).collect();
    f64_npy(&d.path().join("big.npy"), &vals);
    assert!(tgm_in(d.path(), &["import", "big.npy", "-o", "x.tgm"]).ok);
    let r = tgm_in(
        d.path(),
        &[
            "recompress",
            "x.tgm",
            "y.tgm",
            "--encoding",
            "simple_packing",
            "--bits",
            "12",
            "--compression",
            "zstd",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let get = |k: &str| -> f64 {
        r.out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}\t")))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(get("bytes_after") < get("bytes_before") / 3.0, "{}", r.out);
    let e = get("max_abs_error");
    assert!(e > 0.0 && e < 1e-3, "{e}");
    let r = tgm_in(
        d.path(),
        &[
            "recompress",
            "x.tgm",
            "z.tgm",
            "--compression",
            "lz4",
            "--level",
            "3",
        ],
    );
    assert_eq!(r.code, 2);
}

#[test]
fn stdin_and_stdout_as_dash() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 2);
    let o = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .current_dir(d.path())
        .args(["ls", "-"])
        .stdin(std::fs::File::open(d.path().join("x.tgm")).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 3);
    let o = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .current_dir(d.path())
        .args(["copy", "x.tgm", "-"])
        .output()
        .unwrap();
    assert_eq!(o.stdout, std::fs::read(d.path().join("x.tgm")).unwrap());
}

#[test]
fn help_has_examples_and_completions_work() {
    let d = fixture();
    // The examples of the archive commands run in `help_examples.rs`.
    for sub in ["demo", "completions"] {
        let r = tgm_in(d.path(), &[sub, "--help"]);
        assert!(r.ok && r.out.contains("tgm "), "{sub}: {}", r.out);
    }
    for sh in ["bash", "zsh", "fish"] {
        let r = tgm_in(d.path(), &["completions", sh]);
        assert!(r.ok && r.out.contains("tgm"), "{sh}");
    }
}

#[test]
fn files_written_by_the_reference_are_read() {
    let d = fixture();
    let desc = tensogram::DataObjectDescriptor {
        obj_type: "ntensor".into(),
        ndim: 1,
        shape: vec![3],
        strides: vec![1],
        dtype: tensogram::Dtype::Float32,
        byte_order: tensogram::ByteOrder::Little,
        encoding: "none".into(),
        filter: "none".into(),
        compression: "zstd".into(),
        masks: None,
        params: Default::default(),
    };
    let data: Vec<u8> = [1.0f32, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let msg = tensogram::encode(
        &tensogram::GlobalMetadata::default(),
        &[(&desc, &data[..])],
        &Default::default(),
    )
    .unwrap();
    let mut file = msg.clone();
    file.extend_from_slice(&msg);
    std::fs::write(d.path().join("ref.tgm"), &file).unwrap();
    assert!(tgm_in(d.path(), &["validate", "--full", "ref.tgm"]).ok);
    let r = tgm_in(d.path(), &["ls", "ref.tgm"]);
    assert!(r.ok && r.out.contains("zstd"), "{}", r.out);
    let r = tgm_in(
        d.path(),
        &["set", "-s", "mars.param=2t", "ref.tgm", "s.tgm"],
    );
    assert!(r.ok, "{}", r.err);
    let (_, objs) = tensogram::decode(
        &std::fs::read(d.path().join("s.tgm")).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(objs.len(), 1);
    assert!(tgm_in(d.path(), &["export", "ref.tgm", "-o", "e"]).ok);
    assert!(d.path().join("e/m1_o0.npy").exists());
}

/// zstd without --level writes `zstd_level: 3`, as the reference's pipeline
/// helper does, so the same request gives the same descriptor bytes.
#[test]
fn zstd_without_level_writes_the_reference_default_level() {
    let d = fixture();
    for (args, want) in [
        (
            &["import", "a.npy", "-o", "z.tgm", "--compression", "zstd"][..],
            3,
        ),
        (
            &[
                "import",
                "a.npy",
                "-o",
                "z9.tgm",
                "--compression",
                "zstd",
                "--level",
                "9",
            ][..],
            9,
        ),
    ] {
        let r = tgm_in(d.path(), args);
        assert!(r.ok, "{}", r.err);
        let f = tgm::TgmFile::open(d.path().join(args[3])).unwrap();
        let level = f
            .with_message(0, |m| {
                Ok(m.object(0)?
                    .descriptor()
                    .pipeline()
                    .param("zstd_level")
                    .cloned())
            })
            .unwrap();
        assert_eq!(level, Some(Value::Uint(want)), "{args:?}");
    }
}

/// Every object's decoded bytes, message by message, and the stored payload
/// of each unmasked object.
fn objects_of(path: &std::path::Path) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let f = tgm::TgmFile::open(path).unwrap();
    let (mut decoded, mut payloads) = (Vec::new(), Vec::new());
    for mi in 0..f.num_messages() {
        f.with_message(mi, |m| {
            for o in 0..m.num_objects() {
                let obj = m.object(o)?;
                decoded.push(obj.decode(&Default::default())?.into_owned());
                if obj.descriptor().masks.is_none() {
                    payloads.push(obj.payload_region().to_vec());
                }
            }
            Ok(())
        })
        .unwrap();
    }
    (decoded, payloads)
}

#[test]
fn rewrites_keep_compressed_and_masked_objects_exactly() {
    use tgm::pipeline::PipelineOptions;
    let d = fixture();
    let vals: Vec<f64> = (0..4000).map(|i| (i as f64 * 0.01).sin() * 40.0).collect();
    let mut with_nan = vals.clone();
    with_nan[17] = f64::NAN;
    let bytes = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
    let mut zstd = tgm::ObjectDescriptor::new(tgm::Dtype::Float64, vec![4000]);
    zstd.set_pipeline(
        &tgm::PipelineBuilder::new()
            .shuffle_element_size(8)
            .zstd_level(3),
    );
    let plain = tgm::ObjectDescriptor::new(tgm::Dtype::Float64, vec![4000]);
    let mut p = PipelineOptions::default();
    p.allow_nan = true;
    let opts = EncodeOptions::new().pipeline(p);
    let meta = |names: &[&str]| {
        let entry =
            |n: &&str| tgm::Map::from_iter([("name".to_string(), Value::Text(n.to_string()))]);
        GlobalMetadata::with_base(names.iter().map(entry).collect())
    };
    let (a, b) = (bytes(&vals), bytes(&with_nan));
    // One message of stored payloads only, one with a NaN mask.
    let mut file = tgm::encode(&meta(&["a0"]), &[(&zstd, &a[..])], &opts).unwrap();
    let masked = [(&zstd, &a[..]), (&plain, &b[..])];
    file.extend(tgm::encode(&meta(&["a1", "n1"]), &masked, &opts).unwrap());
    std::fs::write(d.path().join("x.tgm"), &file).unwrap();
    let (want, payloads) = objects_of(&d.path().join("x.tgm"));
    assert_eq!(want.len(), 3);
    assert_eq!(payloads.len(), 2, "the NaN object carries a mask");

    let runs: [&[&str]; 6] = [
        &["set", "-s", "k=1", "x.tgm", "set.tgm"],
        &["reshuffle", "x.tgm", "-o", "reshuffle.tgm"],
        &["merge", "x.tgm", "-o", "merge.tgm"],
        &["split", "x.tgm", "-o", "split_[index].tgm"],
        &["copy", "--objects", "name=a1", "x.tgm", "copy_a1.tgm"],
        &["copy", "--objects", "name=n1", "x.tgm", "copy_n1.tgm"],
    ];
    for args in runs {
        let r = tgm_in(d.path(), args);
        assert!(r.ok, "{args:?}: {}", r.err);
    }
    for out in ["set", "reshuffle", "merge"] {
        let (got, got_payloads) = objects_of(&d.path().join(format!("{out}.tgm")));
        assert_eq!(got, want, "{out}: decoded values");
        assert_eq!(got_payloads, payloads, "{out}: stored payloads");
    }
    for (i, w) in want.iter().enumerate() {
        let (got, _) = objects_of(&d.path().join(format!("split_{i}.tgm")));
        assert_eq!(&got, std::slice::from_ref(w), "split part {i}");
    }
    let (got, got_payloads) = objects_of(&d.path().join("copy_a1.tgm"));
    assert_eq!(
        (got, got_payloads),
        (vec![want[1].clone()], vec![payloads[1].clone()])
    );
    let (got, _) = objects_of(&d.path().join("copy_n1.tgm"));
    assert_eq!(got, vec![want[2].clone()]);
}

/// The largest error `recompress` reports is the one its output holds: on
/// an object of more than one measuring step, through the ranged decode
/// (simple_packing alone, szip) and the whole decode (lz4); a lossless
/// rewrite reports 0.
#[test]
fn recompress_reports_the_error_its_output_holds() {
    let d = fixture();
    let n = (1 << 20) + 4321;
    let vals: Vec<f64> = (0..n)
        .map(|i| 280.0 + (i as f64 * 1e-4).sin() * 40.0)
        .collect();
    f64_npy(&d.path().join("big.npy"), &vals);
    assert!(tgm_in(d.path(), &["import", "big.npy", "-o", "x.tgm"]).ok);
    let sp = ["--encoding", "simple_packing", "--bits", "16"];
    for (name, extra) in [
        ("sp", &[][..]),
        ("sp_szip", &["--compression", "szip"][..]),
        ("sp_lz4", &["--compression", "lz4"][..]),
        ("none", &[][..]),
    ] {
        let out = format!("{name}.tgm");
        let mut args = vec!["recompress", "x.tgm", &out];
        if name != "none" {
            args.extend(sp);
        }
        args.extend(extra);
        let r = tgm_in(d.path(), &args);
        assert!(r.ok, "{name}: {}", r.err);
        let reported: f64 = r
            .out
            .lines()
            .find_map(|l| l.strip_prefix("max_abs_error\t"))
            .unwrap()
            .parse()
            .unwrap();
        let (got, _) = objects_of(&d.path().join(&out));
        let want = got[0]
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .zip(&vals)
            .map(|(a, b)| (a - b).abs())
            .fold(0f64, f64::max);
        assert_eq!(reported, want, "{name}");
        assert_eq!(name == "none", want == 0.0, "{name}: {want}");
    }
}

/// A message of `n` objects whose entries share `mars.class` and `grid`,
/// written with the keys stored once (`spec/format.md` §7.3).
fn shared_layout_archive(path: &std::path::Path, n: usize) {
    let d = ObjectDescriptor::new(Dtype::Uint8, vec![4]);
    let base = (0..n)
        .map(|i| {
            let mut e = tgm::Map::new();
            e.insert("name".into(), Value::Text(format!("f{i}")));
            e.insert(
                "mars".into(),
                Value::text_map([
                    ("class", Value::Text("ea".into())),
                    ("step", Value::Uint(i as u64)),
                ]),
            );
            e.insert("grid".into(), Value::Text("regular_ll 3x3 degrees".into()));
            e
        })
        .collect();
    let mut meta = GlobalMetadata::with_base(base);
    meta.layout = BaseLayout::SharedOnce;
    let data: Vec<[u8; 4]> = (0..n).map(|i| [i as u8; 4]).collect();
    let pairs: Vec<_> = data.iter().map(|b| (&d, &b[..])).collect();
    std::fs::write(
        path,
        tgm::encode(&meta, &pairs, &EncodeOptions::new()).unwrap(),
    )
    .unwrap();
}

#[test]
fn rewriting_commands_keep_keys_stored_once() {
    let d = fixture();
    shared_layout_archive(&d.path().join("x.tgm"), 3);
    let runs: [&[&str]; 4] = [
        &["set", "-s", "mars.expver=0001", "x.tgm", "set.tgm"],
        &["copy", "--objects", "name!=f0", "x.tgm", "copy.tgm"],
        &["merge", "-o", "merge.tgm", "x.tgm", "x.tgm"],
        &[
            "recompress",
            "--compression",
            "zstd",
            "x.tgm",
            "recompress.tgm",
        ],
    ];
    for args in runs {
        let r = tgm_in(d.path(), args);
        assert!(r.ok, "{args:?}: {}", r.err);
        let out = d.path().join(
            args.iter()
                .find(|a| a.ends_with(".tgm") && **a != "x.tgm")
                .unwrap(),
        );
        let f = tgm::TgmFile::open(&out).unwrap();
        let meta = f.metadata(0, &tgm::DecodeOptions::default()).unwrap();
        assert_eq!(meta.layout, BaseLayout::SharedOnce, "{args:?}");
        for i in 0..meta.base.len() {
            assert_eq!(
                meta.get(Scope::Object(i), "mars.class"),
                Some(&Value::Text("ea".into())),
                "{args:?}: object {i}"
            );
            assert!(meta.get(Scope::Object(i), "grid").is_some(), "{args:?}");
        }
        let r = tgm_in(d.path(), &["dump", "-j", out.to_str().unwrap()]);
        assert!(
            !r.out.contains("_shared_"),
            "{args:?}: dump shows whole entries"
        );
    }
    let set = tgm_in(
        d.path(),
        &["get", "-p", "mars.expver,mars.class,mars.step", "set.tgm"],
    );
    assert!(set.out.contains("\t0001\tea\t2\n"), "{}", set.out);
}
