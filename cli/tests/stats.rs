//! `tgm stats`: values checked against sums computed here, JSON shape,
//! selection, thread budgets and damaged files (`spec/stats.md` §3).

mod common;

use std::path::Path;

use common::tgm_in;
use serde_json::Value as Json;
use tgm::cbor::Value;
use tgm::pipeline::PipelineOptions;
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

const T: [f64; 6] = [1.5, f64::NAN, -2.0, f64::INFINITY, 4.0, f64::NEG_INFINITY];

fn meta(name: Option<&str>, param: &str) -> tgm::Map {
    let mut e = tgm::Map::new();
    if let Some(n) = name {
        e.insert("name".into(), Value::Text(n.into()));
    }
    e.insert(
        "mars".into(),
        Value::text_map([("param", Value::Text(param.into()))]),
    );
    e
}

fn message(objects: &[(ObjectDescriptor, Vec<u8>, tgm::Map)]) -> Vec<u8> {
    let mut p = PipelineOptions::default();
    p.allow_nan = true;
    p.allow_inf = true;
    let base = objects.iter().map(|o| o.2.clone()).collect();
    let data: Vec<_> = objects.iter().map(|o| (&o.0, &o.1[..])).collect();
    let opts = EncodeOptions::new().pipeline(p);
    tgm::encode(&GlobalMetadata::with_base(base), &data, &opts).unwrap()
}

fn ne<const N: usize, T: Copy>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

/// The large field of message 1: several 1 MiB runs of the library.
fn big() -> Vec<f64> {
    (0..300_000)
        .map(|i| 280.0 + 15.0 * (i as f64 * 0.013).sin())
        .collect()
}

/// Message 0: float64 `t` (NaN, ±Inf), int32 `i`, complex64 with only a
/// param, a 10-bit bitmask, an empty float32. Message 1: uint8 `u` and
/// the large float64 `w`.
fn archive(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let d = |dtype, shape: &[u64]| ObjectDescriptor::new(dtype, shape.to_vec());
    let m0 = message(&[
        (
            d(Dtype::Float64, &[2, 3]),
            ne(&T, f64::to_ne_bytes),
            meta(Some("t"), "130"),
        ),
        (
            d(Dtype::Int32, &[4]),
            ne(&[-7, 3, i32::MAX, 0], i32::to_ne_bytes),
            meta(Some("i"), "131"),
        ),
        (
            d(Dtype::Complex64, &[2]),
            ne(&[1.0f32, -1.0, 3.0, 5.0], f32::to_ne_bytes),
            meta(None, "132"),
        ),
        (
            d(Dtype::Bitmask, &[10]),
            vec![0b1100_0000, 0b0111_1111],
            meta(Some("m"), "133"),
        ),
        (d(Dtype::Float32, &[0]), Vec::new(), meta(Some("e"), "134")),
    ]);
    let m1 = message(&[
        (
            d(Dtype::Uint8, &[3]),
            vec![9, 200, 4],
            meta(Some("u"), "135"),
        ),
        (
            d(Dtype::Float64, &[300_000]),
            ne(&big(), f64::to_ne_bytes),
            meta(Some("w"), "136"),
        ),
    ]);
    std::fs::write(dir.join("s.tgm"), [m0.clone(), m1.clone()].concat()).unwrap();
    (m0, m1)
}

fn rows(out: &str) -> Vec<Json> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Mean and population standard deviation, two passes.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (
        mean,
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt(),
    )
}

fn near(j: &Json, want: f64) {
    let got = j.as_f64().unwrap_or_else(|| panic!("not a number: {j}"));
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}

#[test]
fn json_rows_carry_exact_statistics_for_every_kind_of_object() {
    let dir = tempfile::tempdir().unwrap();
    archive(dir.path());
    let r = tgm_in(dir.path(), &["stats", "-j", "s.tgm"]);
    assert!(r.ok, "{}", r.err);
    let rows = rows(&r.out);
    assert_eq!(rows.len(), 7);
    let t = &rows[0];
    assert_eq!(
        (
            t["file"].as_str(),
            t["message"].as_u64(),
            t["object"].as_u64()
        ),
        (Some("s.tgm"), Some(0), Some(0))
    );
    assert_eq!(
        (t["name"].as_str(), t["param"].as_str()),
        (Some("t"), Some("130"))
    );
    assert_eq!(
        (t["dtype"].as_str(), t["shape"].clone()),
        (Some("float64"), serde_json::json!([2, 3]))
    );
    let counts = |r: &Json| ["count", "nan", "pos_inf", "neg_inf"].map(|k| r[k].as_u64().unwrap());
    assert_eq!(counts(t), [6, 1, 1, 1]);
    assert_eq!(
        (t["min"].as_f64(), t["max"].as_f64()),
        (Some(-2.0), Some(4.0))
    );
    let (m, s) = mean_std(&[1.5, -2.0, 4.0]);
    near(&t["mean"], m);
    near(&t["std"], s);

    let i = &rows[1];
    assert_eq!(
        (i["min"].as_i64(), i["max"].as_i64()),
        (Some(-7), Some(i64::from(i32::MAX)))
    );
    let (m, s) = mean_std(&[-7.0, 3.0, f64::from(i32::MAX), 0.0]);
    near(&i["mean"], m);
    near(&i["std"], s);

    let c = &rows[2];
    assert_eq!(
        (c["name"].clone(), c["param"].as_str()),
        (Json::Null, Some("132"))
    );
    assert_eq!(
        (c["real"]["min"].as_f64(), c["real"]["max"].as_f64()),
        (Some(1.0), Some(3.0))
    );
    assert_eq!(
        (c["imag"]["min"].as_f64(), c["imag"]["max"].as_f64()),
        (Some(-1.0), Some(5.0))
    );
    near(&c["real"]["mean"], 2.0);
    near(&c["imag"]["std"], 3.0);

    let b = &rows[3];
    // 1100000001, the padding bits of the second byte ignored.
    assert_eq!(
        (b["true"].as_u64(), b["count"].as_u64()),
        (Some(3), Some(10))
    );
    assert_eq!((b["min"].as_u64(), b["max"].as_u64()), (Some(0), Some(1)));
    near(&b["mean"], 0.3);

    let e = &rows[4];
    assert_eq!(counts(e), [0, 0, 0, 0]);
    for k in ["min", "max", "mean", "std"] {
        assert_eq!(e[k], Json::Null, "{k}");
    }

    let u = &rows[5];
    assert_eq!((u["min"].as_u64(), u["max"].as_u64()), (Some(4), Some(200)));
    let w = &rows[6];
    let (m, s) = mean_std(&big());
    near(&w["mean"], m);
    near(&w["std"], s);
}

#[test]
fn the_table_has_one_row_per_object_and_per_complex_part() {
    let dir = tempfile::tempdir().unwrap();
    archive(dir.path());
    let r = tgm_in(dir.path(), &["stats", "s.tgm"]);
    assert!(r.ok, "{}", r.err);
    let lines: Vec<Vec<&str>> = r.out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines[0][..4], ["file", "message", "object", "field"]);
    assert_eq!(lines.len(), 1 + 8);
    assert!(lines.iter().all(|l| l.len() == 15), "{}", r.out);
    assert_eq!(
        lines[1][..9],
        ["s.tgm", "0", "0", "t", "float64", "[2, 3]", "6", "-2", "4"]
    );
    assert_eq!(lines[1][11..], ["1", "1", "1", "-"]);
    assert_eq!(lines[2][7..9], ["-7", "2147483647"]);
    assert_eq!(lines[3][3..5], ["132", "complex64:real"]);
    assert_eq!(lines[4][4], "complex64:imag");
    assert_eq!((lines[5][4], lines[5][14]), ("bitmask", "3"));
    assert_eq!(lines[6][6..11], ["0", "-", "-", "-", "-"]);
}

#[test]
fn where_selects_messages_and_objects_selects_inside_them() {
    let dir = tempfile::tempdir().unwrap();
    archive(dir.path());
    let names = |args: &[&str]| {
        let r = tgm_in(dir.path(), &[&["stats", "-j"], args, &["s.tgm"]].concat());
        assert!(r.ok, "{}", r.err);
        rows(&r.out)
            .iter()
            .map(|j| format!("{}.{}", j["message"], j["object"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&["-w", "name=u"]), ["1.0", "1.1"]);
    assert_eq!(names(&["--objects", "name=u"]), ["1.0"]);
    assert_eq!(
        names(&["-w", "mars.param=130", "--objects", "name!=t"]),
        ["0.1", "0.2", "0.3", "0.4"]
    );
    assert!(names(&["-w", "name=nothing"]).is_empty());
}

#[test]
fn every_thread_budget_prints_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    archive(dir.path());
    let one = tgm_in(dir.path(), &["stats", "-j", "--threads", "1", "s.tgm"]);
    assert!(one.ok, "{}", one.err);
    for threads in ["2", "4"] {
        let many = tgm_in(dir.path(), &["stats", "-j", "--threads", threads, "s.tgm"]);
        assert_eq!(many.out, one.out, "{threads} threads");
    }
}

#[test]
fn a_damaged_file_shows_the_intact_messages_then_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let (m0, m1) = archive(dir.path());
    let cut = [&m1[..], &m0[..], &m0[..m0.len() / 2]].concat();
    std::fs::write(dir.path().join("cut.tgm"), cut).unwrap();
    let r = tgm_in(dir.path(), &["stats", "-j", "cut.tgm"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(rows(&r.out).len(), 7);
    assert!(
        r.err.contains("cut.tgm") && r.err.contains("truncated"),
        "{}",
        r.err
    );
    let r = tgm_in(dir.path(), &["stats", "missing.tgm"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("missing.tgm"), "{}", r.err);
}
