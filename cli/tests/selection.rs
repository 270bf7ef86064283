//! `-w` selects whole messages (the reference's meaning); `--objects`
//! selects single objects inside them, in `set`, `copy`, `export`,
//! `recompress`, and `to-nifti`/`to-dicom` (which write the one object
//! the clauses match; `to-grib` is tested in `grib_roundtrip.rs`).

mod common;

use std::path::Path;

use common::tgm_in;
use tgm::cbor::Value;
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// One message of four float64 fields, levels 500, 850, 500, 850, named
/// f0..f3, each holding its index in every value.
fn one_message(path: &Path) {
    let d = ObjectDescriptor::new(Dtype::Float64, vec![3]);
    let data: Vec<Vec<u8>> = (0..4)
        .map(|i| (0..3).flat_map(|_| (i as f64).to_ne_bytes()).collect())
        .collect();
    let base = (0..4)
        .map(|i| {
            let mut e = tgm::Map::new();
            e.insert("name".into(), Value::Text(format!("f{i}")));
            let level = if i % 2 == 0 { 500u64 } else { 850 };
            e.insert(
                "mars".into(),
                Value::text_map([("levelist", Value::Uint(level))]),
            );
            e
        })
        .collect();
    let objects: Vec<_> = data.iter().map(|x| (&d, &x[..])).collect();
    let msg = tgm::encode(
        &GlobalMetadata::with_base(base),
        &objects,
        &EncodeOptions::new(),
    )
    .unwrap();
    std::fs::write(path, msg).unwrap();
}

fn decoded(path: &Path) -> tgm::DecodedMessage {
    tgm::decode(&std::fs::read(path).unwrap(), &Default::default()).unwrap()
}

fn levels(path: &Path) -> Vec<Value> {
    let m = decoded(path);
    (0..m.objects.len())
        .map(|o| m.metadata.lookup(Some(o), "mars.levelist").unwrap().clone())
        .collect()
}

fn first_values(m: &tgm::DecodedMessage) -> Vec<f64> {
    m.objects
        .iter()
        .map(|o| f64::from_ne_bytes(o.data[..8].try_into().unwrap()))
        .collect()
}

#[test]
fn set_changes_only_the_selected_objects_with_objects_and_whole_messages_with_w() {
    let d = tempfile::tempdir().unwrap();
    one_message(&d.path().join("x.tgm"));
    let sel = ["--objects", "mars.levelist=850"];
    let r = tgm_in(
        d.path(),
        &[
            &["set", "-s", "mars.levelist=700"][..],
            &sel,
            &["x.tgm", "o.tgm"],
        ]
        .concat(),
    );
    assert!(r.ok, "{}", r.err);
    let (a, b) = (Value::Uint(500), Value::Uint(700));
    assert_eq!(
        levels(&d.path().join("o.tgm")),
        [a.clone(), b.clone(), a, b]
    );
    assert_eq!(
        first_values(&decoded(&d.path().join("o.tgm"))),
        [0.0, 1.0, 2.0, 3.0]
    );
    // -w keeps the reference's meaning: the whole message is changed.
    let r = tgm_in(
        d.path(),
        &[
            "set",
            "-s",
            "mars.levelist=700",
            "-w",
            "mars.levelist=850",
            "x.tgm",
            "w.tgm",
        ],
    );
    assert!(r.ok, "{}", r.err);
    assert_eq!(levels(&d.path().join("w.tgm")), vec![Value::Uint(700); 4]);
}

#[test]
fn copy_keeps_only_the_selected_objects() {
    let d = tempfile::tempdir().unwrap();
    one_message(&d.path().join("x.tgm"));
    let r = tgm_in(
        d.path(),
        &["copy", "--objects", "mars.levelist=500", "x.tgm", "c.tgm"],
    );
    assert!(r.ok, "{}", r.err);
    let m = decoded(&d.path().join("c.tgm"));
    assert_eq!(first_values(&m), [0.0, 2.0]);
    assert_eq!(m.metadata.lookup(Some(1), "name"), Some(&"f2".into()));
    // -w copies every object of a matching message.
    assert!(
        tgm_in(
            d.path(),
            &["copy", "-w", "mars.levelist=500", "x.tgm", "w.tgm"]
        )
        .ok
    );
    assert_eq!(decoded(&d.path().join("w.tgm")).objects.len(), 4);
    // Nothing selected: an empty archive, as for -w.
    assert!(
        tgm_in(
            d.path(),
            &["copy", "--objects", "name=none", "x.tgm", "n.tgm"]
        )
        .ok
    );
    assert_eq!(std::fs::metadata(d.path().join("n.tgm")).unwrap().len(), 0);
}

#[test]
fn export_writes_only_the_selected_objects() {
    let d = tempfile::tempdir().unwrap();
    one_message(&d.path().join("x.tgm"));
    let r = tgm_in(
        d.path(),
        &[
            "export",
            "--objects",
            "mars.levelist=850",
            "x.tgm",
            "-o",
            "e",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let e = d.path().join("e");
    assert!(e.join("m0_f1.npy").exists() && e.join("m0_f3.npy").exists());
    assert!(!e.join("m0_f0.npy").exists() && !e.join("m0_f2.npy").exists());
    let r = tgm_in(
        d.path(),
        &["export", "--objects", "name=none", "x.tgm", "-o", "none"],
    );
    assert_eq!(r.code, 1);
    assert!(r.err.contains("no object is selected"), "{}", r.err);
    assert!(!d.path().join("none").exists());
}

#[test]
fn recompress_rewrites_only_the_selected_objects() {
    let d = tempfile::tempdir().unwrap();
    one_message(&d.path().join("x.tgm"));
    let r = tgm_in(
        d.path(),
        &[
            "recompress",
            "--objects",
            "mars.levelist=850",
            "x.tgm",
            "r.tgm",
            "--compression",
            "zstd",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let m = decoded(&d.path().join("r.tgm"));
    let zstd: Vec<bool> = m
        .objects
        .iter()
        .map(|o| o.descriptor.pipeline().names().contains(&"zstd"))
        .collect();
    assert_eq!(zstd, [false, true, false, true]);
    assert_eq!(first_values(&m), [0.0, 1.0, 2.0, 3.0]);
}

/// Two messages of two uint16 [2, 3, 4] volumes named v<message><object>,
/// element k of v<m><o> holding 1000·m + 100·o + k.
fn volumes(path: &Path) {
    let d = ObjectDescriptor::new(Dtype::Uint16, vec![2, 3, 4]);
    let mut out = Vec::new();
    for m in 0..2u16 {
        let data: Vec<Vec<u8>> = (0..2u16)
            .map(|o| {
                (0..24u16)
                    .flat_map(|k| (1000 * m + 100 * o + k).to_ne_bytes())
                    .collect()
            })
            .collect();
        let base = (0..2)
            .map(|o| {
                let mut e = tgm::Map::new();
                e.insert("name".into(), Value::Text(format!("v{m}{o}")));
                e
            })
            .collect();
        out.extend(message(base, &d, &data));
    }
    std::fs::write(path, out).unwrap();
}

/// One message of objects described by `d`, with `base` and payloads `data`.
fn message(base: Vec<tgm::Map>, d: &ObjectDescriptor, data: &[Vec<u8>]) -> Vec<u8> {
    let objects: Vec<_> = data.iter().map(|x| (d, &x[..])).collect();
    tgm::encode(
        &GlobalMetadata::with_base(base),
        &objects,
        &EncodeOptions::new(),
    )
    .unwrap()
}

#[test]
fn to_nifti_and_to_dicom_write_the_one_object_the_clauses_match() {
    let d = tempfile::tempdir().unwrap();
    volumes(&d.path().join("v.tgm"));
    let run = |args: &[&str]| {
        let r = tgm_in(d.path(), args);
        assert!(r.ok, "{args:?}: {}", r.err);
    };
    run(&[
        "to-nifti",
        "v.tgm",
        "--objects",
        "name=v11",
        "-o",
        "sel.nii",
    ]);
    run(&[
        "to-nifti",
        "v.tgm",
        "--message",
        "1",
        "--object",
        "1",
        "-o",
        "idx.nii",
    ]);
    run(&["to-nifti", "v.tgm", "-o", "first.nii"]);
    let read = |f: &str| std::fs::read(d.path().join(f)).unwrap();
    assert_eq!(read("sel.nii"), read("idx.nii"));
    assert_ne!(read("sel.nii"), read("first.nii"));
    // -w picks message 0, --objects its object 1.
    run(&[
        "to-dicom",
        "v.tgm",
        "-w",
        "name=v00",
        "--objects",
        "name!=v00",
        "-o",
        "dcm",
    ]);
    let f = dicom_object::open_file(d.path().join("dcm/slice_00001.dcm")).unwrap();
    let px = f
        .element(dicom_dictionary_std::tags::PIXEL_DATA)
        .unwrap()
        .to_bytes()
        .unwrap();
    let want: Vec<u8> = (12..24u16).flat_map(|k| (100 + k).to_le_bytes()).collect();
    assert_eq!(&px[..24], &want[..]);
    for (args, code, want) in [
        (&["--objects", "name=v2"][..], 1, "no object matches"),
        (&["-w", "name=v00"][..], 1, "matches 2 objects"),
        (
            &["--objects", "name=v00", "--object", "1"][..],
            2,
            "give one of them",
        ),
    ] {
        let mut a = vec!["to-nifti", "v.tgm", "-o", "x.nii"];
        a.extend_from_slice(args);
        let r = tgm_in(d.path(), &a);
        assert_eq!(r.code, code, "{args:?}: {}", r.err);
        assert!(r.err.contains(want), "{args:?}: {}", r.err);
        assert!(!d.path().join("x.nii").exists());
    }
}

/// A weather archive with MARS and GRIB keys as convert-grib writes them
/// (GRIB1 tables: `mars.param` is `130.128`): message 0 holds temperature
/// at 500 and 850 hPa, message 1 the 2 m temperature and temperature at
/// 500 hPa of the next step.
fn weather(path: &Path) {
    let field =
        |param: &str, id: u64, short: &str, levtype: &str, level: Option<u64>, step: u64| {
            let mut mars = vec![
                ("class", Value::from("ea")),
                ("date", Value::Uint(20240101)),
                ("param", Value::from(param)),
                ("levtype", Value::from(levtype)),
                ("step", Value::Uint(step)),
            ];
            if let Some(l) = level {
                mars.push(("levelist", Value::Uint(l)));
            }
            let mut e = tgm::Map::new();
            e.insert("mars".into(), Value::text_map(mars));
            e.insert(
                "grib".into(),
                Value::text_map([
                    ("paramId", Value::Uint(id)),
                    ("shortName", Value::from(short)),
                ]),
            );
            e
        };
    let d = ObjectDescriptor::new(Dtype::Float32, vec![2]);
    let messages = [
        vec![
            field("130.128", 130, "t", "pl", Some(500), 0),
            field("130.128", 130, "t", "pl", Some(850), 0),
        ],
        vec![
            field("167.128", 167, "2t", "sfc", None, 6),
            field("130.128", 130, "t", "pl", Some(500), 6),
        ],
    ];
    let mut out = Vec::new();
    for base in messages {
        let data = vec![vec![0u8; 8]; base.len()];
        out.extend(message(base, &d, &data));
    }
    std::fs::write(path, out).unwrap();
}

/// The (message, object) of each row of a `tgm ls` table.
fn rows(listing: &str) -> Vec<(String, String)> {
    listing
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[1].to_string(), c[2].to_string())
        })
        .collect()
}

#[test]
fn a_parameter_is_found_by_every_name_a_user_types() {
    let d = tempfile::tempdir().unwrap();
    weather(&d.path().join("wx.tgm"));
    let t = [("0", "0"), ("0", "1"), ("1", "1")].map(|(a, b)| (a.to_string(), b.to_string()));
    for clause in [
        "mars.param=130",
        "mars.param=130.128",
        "param=t",
        "param=130",
        "mars.param=t",
        "shortName=t",
        "grib.shortName=t",
        "paramId=130",
        "mars.param=130/999",
    ] {
        let r = tgm_in(d.path(), &["ls", "-w", clause, "wx.tgm"]);
        assert!(r.ok, "{clause}: {}", r.err);
        assert_eq!(rows(&r.out), t, "{clause}: {}", r.out);
        assert!(r.err.is_empty(), "{clause}: {}", r.err);
    }
    let r = tgm_in(d.path(), &["ls", "-w", "mars.param!=130", "wx.tgm"]);
    assert_eq!(
        rows(&r.out),
        [("1".to_string(), "0".to_string())],
        "{}",
        r.out
    );
    let r = tgm_in(d.path(), &["get", "-w", "param=2t", "wx.tgm", "mars.param"]);
    assert!(r.ok, "{}", r.err);
    assert_eq!(r.out, "wx.tgm\t1\t0\t167.128\n");
}

#[test]
fn a_selection_that_matches_nothing_says_so_and_what_it_searched() {
    let d = tempfile::tempdir().unwrap();
    weather(&d.path().join("wx.tgm"));
    for cmd in ["ls", "stats", "dump"] {
        let r = tgm_in(d.path(), &[cmd, "-w", "mars.param=131", "wx.tgm"]);
        assert!(r.ok, "{cmd}: {}", r.err);
        assert!(
            r.err.contains(&format!(
                "tgm {cmd}: no object matched mars.param=131 (searched 2 messages, 4 objects)"
            )),
            "{cmd}: {}",
            r.err
        );
    }
    let r = tgm_in(d.path(), &["get", "-w", "shortName=q", "wx.tgm", "name"]);
    assert!(r.ok && r.out.is_empty(), "{} {}", r.out, r.err);
    assert!(
        r.err.contains("tgm get: no object matched shortName=q"),
        "{}",
        r.err
    );
}

#[test]
fn objects_brought_along_by_w_are_named_and_objects_pointed_to() {
    let d = tempfile::tempdir().unwrap();
    weather(&d.path().join("wx.tgm"));
    let r = tgm_in(d.path(), &["stats", "-w", "param=2t", "wx.tgm"]);
    assert!(r.ok, "{}", r.err);
    // Message 1 is selected whole: the temperature at 500 hPa comes along.
    assert_eq!(r.out.lines().count(), 3, "{}", r.out);
    assert!(
        r.err
            .contains("so 1 object that does not match param=2t came along with its message")
            && r.err
                .contains("--objects param=2t keeps only the matching objects"),
        "{}",
        r.err
    );
    let r = tgm_in(d.path(), &["stats", "--objects", "param=2t", "wx.tgm"]);
    assert!(r.ok, "{}", r.err);
    assert_eq!(r.out.lines().count(), 2, "{}", r.out);
    assert!(r.err.is_empty(), "{}", r.err);
    let r = tgm_in(
        d.path(),
        &["copy", "-w", "mars.levelist=850", "wx.tgm", "o.tgm"],
    );
    assert!(r.ok, "{}", r.err);
    assert!(
        r.err.contains("so 1 object that does not match"),
        "{}",
        r.err
    );
}

#[test]
fn ls_shows_the_keys_that_tell_fields_apart() {
    let d = tempfile::tempdir().unwrap();
    weather(&d.path().join("wx.tgm"));
    let r = tgm_in(d.path(), &["ls", "wx.tgm"]);
    assert!(r.ok, "{}", r.err);
    let mut lines = r.out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "file\tmessage\tobject\tmars.param\tmars.levtype\tmars.levelist\tmars.date\tmars.step\t\
         dtype\tshape\tpipeline\tstored_bytes"
    );
    let keys: Vec<String> = lines
        .map(|l| l.split('\t').skip(3).take(5).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        keys,
        [
            "130.128 pl 500 20240101 0",
            "130.128 pl 850 20240101 0",
            "167.128 sfc - 20240101 6",
            "130.128 pl 500 20240101 6",
        ]
    );
    // Another archive shows the ones it has.
    one_message(&d.path().join("x.tgm"));
    let r = tgm_in(d.path(), &["ls", "x.tgm"]);
    assert_eq!(
        r.out.lines().next().unwrap(),
        "file\tmessage\tobject\tname\tmars.levelist\tdtype\tshape\tpipeline\tstored_bytes"
    );
}
