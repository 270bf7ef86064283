//! The `tgm` command line, end to end.

use std::path::Path;
use std::process::Command;

use tgm::npy::{npy_layout, read_npy, write_npy};
use tgm::{ByteOrder, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

fn tgm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(path: &Path, dtype: Dtype, order: ByteOrder, shape: &[u64], data: &[u8]) {
    std::fs::write(path, write_npy(&npy_layout(dtype, shape, order), data)).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn import_export_round_trip_keeps_values_and_byte_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.npy");
    let b = dir.path().join("b.npy");
    let be: Vec<u8> = [1.5f32, -2.0, 3.25]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let le: Vec<u8> = (0..6i64)
        .flat_map(|v| (v * 1000 - 2500).to_le_bytes())
        .collect();
    write(&a, Dtype::Float32, ByteOrder::Big, &[3], &be);
    write(&b, Dtype::Int64, ByteOrder::Little, &[2, 3], &le);
    let out = dir.path().join("x.tgm");
    let (ok, _, err) = tgm(&[
        "import",
        s(&a),
        s(&b),
        "-o",
        s(&out),
        "--meta",
        "mars.param=2t",
        "--meta",
        "step=6",
    ]);
    assert!(ok, "{err}");

    let bytes = std::fs::read(&out).unwrap();
    let m = tgm::decode(&bytes, &DecodeOptions::default().native_byte_order(false)).unwrap();
    assert_eq!(m.objects[0].descriptor.byte_order, ByteOrder::Big);
    assert_eq!(m.objects[0].data, be);
    assert_eq!(m.objects[1].data, le);
    assert_eq!(m.metadata.lookup(Some(1), "mars.param"), Some(&"2t".into()));
    assert_eq!(
        m.metadata.lookup(Some(0), "step"),
        Some(&tgm::cbor::Value::Uint(6))
    );
    assert_eq!(m.metadata.lookup(Some(0), "name"), Some(&"a".into()));

    let exp = dir.path().join("exp");
    let (ok, _, err) = tgm(&["export", s(&out), "-o", s(&exp)]);
    assert!(ok, "{err}");
    let back = read_npy(&std::fs::read(exp.join("m0_a.npy")).unwrap()).unwrap();
    assert_eq!(back.byte_order, ByteOrder::native());
    let mut expect = be.clone();
    if ByteOrder::native() == ByteOrder::Little {
        tgm::dtype::swap_in_place(&mut expect, 4);
    }
    assert_eq!(back.data, expect);
    assert_eq!(
        read_npy(&std::fs::read(exp.join("m0_b.npy")).unwrap())
            .unwrap()
            .shape,
        vec![2, 3]
    );
}

#[test]
fn append_adds_messages_and_info_ls_report_them() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("t.npy");
    write(
        &a,
        Dtype::Uint16,
        ByteOrder::Little,
        &[4],
        &[1, 0, 2, 0, 3, 0, 4, 0],
    );
    let out = dir.path().join("f.tgm");
    assert!(tgm(&["import", s(&a), "-o", s(&out)]).0);
    assert!(tgm(&["import", s(&a), "-o", s(&out), "--append"]).0);
    assert!(tgm(&["import", s(&a), "-o", s(&out), "--append"]).0);
    let (ok, info, _) = tgm(&["info", s(&out)]);
    assert!(ok);
    assert!(info.contains("Messages: 3"), "{info}");
    let (ok, ls, _) = tgm(&["ls", s(&out)]);
    assert!(ok);
    let rows: Vec<&str> = ls.lines().skip(1).collect();
    assert_eq!(rows.len(), 3);
    // Import names each object after its file: the name tells rows apart.
    assert!(ls.starts_with("file\tmessage\tobject\tname\tdtype"), "{ls}");
    assert!(rows[2].contains("\t2\t0\tt\tuint16\t[4]\tnone\t8"), "{ls}");
    let (ok, json, _) = tgm(&["ls", "-j", s(&out)]);
    assert!(ok);
    assert_eq!(json.lines().count(), 3);
    assert!(json.contains("\"stored_bytes\":8"));
}

#[test]
fn export_writes_raw_storage_for_types_numpy_lacks_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d1 = ObjectDescriptor::new(Dtype::Bfloat16, vec![2]);
    let d2 = ObjectDescriptor::new(Dtype::Bitmask, vec![10]);
    let bytes = tgm::encode(
        &GlobalMetadata::default(),
        &[
            (&d1, &[0x80, 0x3f, 0x00, 0x40][..]),
            (&d2, &[0b1010_0000, 0b1100_0000][..]),
        ],
        &EncodeOptions::new(),
    )
    .unwrap();
    let f = dir.path().join("x.tgm");
    std::fs::write(&f, &bytes).unwrap();
    let exp = dir.path().join("e");
    let (ok, _, err) = tgm(&["export", s(&f), "-o", s(&exp)]);
    assert!(ok, "{err}");
    assert!(err.contains("bfloat16"), "{err}");
    assert!(err.contains("bitmask"), "{err}");
    let bf = read_npy(&std::fs::read(exp.join("m0_o0.npy")).unwrap()).unwrap();
    assert_eq!(bf.dtype, Dtype::Uint16);
    let bm = read_npy(&std::fs::read(exp.join("m0_o1.npy")).unwrap()).unwrap();
    assert_eq!(
        (bm.dtype, bm.shape.clone(), bm.data.clone()),
        (Dtype::Uint8, vec![2], vec![0xa0, 0xc0])
    );
}

#[test]
fn bad_inputs_fail_with_a_message_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.tgm");
    std::fs::write(&junk, b"this is not a tensogram file").unwrap();
    let (ok, _, err) = tgm(&["export", s(&junk), "-o", s(&dir.path().join("o"))]);
    assert!(!ok);
    assert!(err.starts_with("error:"), "{err}");
    let bad_npy = dir.path().join("bad.npy");
    std::fs::write(&bad_npy, b"\x93NUMPY\x01\x00").unwrap();
    let (ok, _, err) = tgm(&["import", s(&bad_npy), "-o", s(&dir.path().join("x.tgm"))]);
    assert!(!ok);
    assert!(err.contains("bad.npy"), "{err}");
    // A flipped payload byte is caught by the default hash verification.
    let a = dir.path().join("a.npy");
    write(&a, Dtype::Uint8, ByteOrder::Little, &[64], &[7; 64]);
    let f = dir.path().join("f.tgm");
    assert!(tgm(&["import", s(&a), "-o", s(&f)]).0);
    let mut bytes = std::fs::read(&f).unwrap();
    let m = tgm::Message::parse(&bytes).unwrap();
    let at = m.object(0).unwrap().payload_offset() as usize;
    bytes[at + 3] ^= 1;
    std::fs::write(&f, &bytes).unwrap();
    let (ok, _, err) = tgm(&["export", s(&f), "-o", s(&dir.path().join("o2"))]);
    assert!(!ok);
    assert!(err.contains("hash mismatch"), "{err}");
    let (ok, _, _) = tgm(&[
        "export",
        s(&f),
        "-o",
        s(&dir.path().join("o3")),
        "--no-verify",
    ]);
    assert!(ok);
}

#[test]
fn demo_runs_and_checks_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = tgm(&["demo", "--dir", s(dir.path())]);
    assert!(ok, "{err}");
    assert!(out.contains("bit-identical"), "{out}");
}

/// szip codes raw signed integers as SIGNED only when one is negative
/// (spec/szip.md §7), both ways lossless.
#[test]
fn szip_signed_flag_only_for_negative_integers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (name, offset, order, flags) in [
        ("positive", 0i16, ByteOrder::Little, 8u64),
        ("negative", -2000, ByteOrder::Little, 9),
        ("positive_be", 0, ByteOrder::Big, 8),
        ("negative_be", -1, ByteOrder::Big, 9),
    ] {
        let vals: Vec<i16> = (0..4096i16).map(|v| (v % 700) + offset).collect();
        let bytes: Vec<u8> = vals
            .iter()
            .flat_map(|v| match order {
                ByteOrder::Little => v.to_le_bytes(),
                ByteOrder::Big => v.to_be_bytes(),
            })
            .collect();
        let npy = dir.join(format!("{name}.npy"));
        write(&npy, Dtype::Int16, order, &[4096], &bytes);
        let out = dir.join(format!("{name}.tgm"));
        let (ok, _, err) = tgm(&["import", s(&npy), "-o", s(&out), "--compression", "szip"]);
        assert!(ok, "{name}: {err}");
        let file = std::fs::read(&out).unwrap();
        let m = tgm::Message::parse(&file).unwrap();
        let o = m.object(0).unwrap();
        let got = o
            .descriptor()
            .pipeline()
            .params()
            .get("szip_flags")
            .cloned();
        assert_eq!(got.and_then(|v| v.as_u64()), Some(flags), "{name}");
        let back = o.decode(&DecodeOptions::default()).unwrap();
        // Decoded in native byte order.
        let want: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert!(back[..] == want[..], "{name}: not lossless");
    }
}

#[test]
fn import_with_szip_round_trips_and_refuses_corrupting_widths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a = dir.join("t.npy");
    let vals: Vec<u8> = (0..5000)
        .flat_map(|i| (273.15 + (i as f64 * 0.01).sin() * 10.0).to_le_bytes())
        .collect();
    write(&a, Dtype::Float64, ByteOrder::Little, &[50, 100], &vals);
    let i16s: Vec<u8> = (0..4096i16)
        .flat_map(|v| (v - 2000).to_le_bytes())
        .collect();
    let b = dir.join("i.npy");
    write(&b, Dtype::Int16, ByteOrder::Little, &[4096], &i16s);
    let out = dir.join("o.tgm");
    let (ok, _, err) = tgm(&[
        "import",
        s(&b),
        "-o",
        s(&out),
        "--compression",
        "szip",
        "--szip-rsi",
        "32",
        "--szip-block-size",
        "32",
    ]);
    assert!(ok, "{err}");
    let (ok, _, err) = tgm(&[
        "import",
        s(&a),
        "-o",
        s(&out),
        "--append",
        "--encoding",
        "simple_packing",
        "--bits",
        "24",
        "--compression",
        "szip",
    ]);
    assert!(ok, "{err}");
    let (ok, ls, _) = tgm(&["ls", s(&out)]);
    assert!(ok && ls.contains("szip"), "{ls}");
    let exp = dir.join("exp");
    let (ok, _, err) = tgm(&["export", s(&out), "-o", s(&exp)]);
    assert!(ok, "{err}");
    let back = read_npy(&std::fs::read(exp.join("m0_i.npy")).unwrap()).unwrap();
    assert_eq!(back.data, i16s, "raw int16 through szip is lossless");
    let packed = read_npy(&std::fs::read(exp.join("m1_t.npy")).unwrap()).unwrap();
    for (x, y) in packed.data.chunks_exact(8).zip(vals.chunks_exact(8)) {
        let (x, y) = (
            f64::from_le_bytes(x.try_into().unwrap()),
            f64::from_le_bytes(y.try_into().unwrap()),
        );
        assert!((x - y).abs() < 1e-5, "{x} vs {y}");
    }
    let (ok, _, err) = tgm(&[
        "import",
        s(&a),
        "-o",
        s(&dir.join("bad.tgm")),
        "--encoding",
        "simple_packing",
        "--bits",
        "12",
        "--compression",
        "szip",
    ]);
    assert!(!ok && err.contains("misread"), "{err}");
}

/// A subcommand this build left out names its feature and the install
/// command, and exits 2 as a usage error does.
#[cfg(not(feature = "grib"))]
#[test]
fn a_command_left_out_of_the_build_names_its_feature() {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(["convert-grib", "era5.grib", "out.tgm"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`tgm convert-grib` is not in this build"),
        "{err}"
    );
    assert!(
        err.contains("cargo install --locked --path cli --features grib"),
        "{err}"
    );
    assert!(!err.contains("unrecognized subcommand"), "{err}");
    // A name no build has is still clap's error.
    let (ok, _, err) = tgm(&["convert-gribs"]);
    assert!(!ok && err.contains("unrecognized subcommand"), "{err}");
}

/// `tgm get FILE KEYS` prints what `tgm get -p KEYS FILE` does; a lone
/// file, or a file where the keys should be, is a usage error.
#[test]
fn get_takes_the_keys_after_the_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.tgm");
    let meta = GlobalMetadata::with_base(vec![[(
        "mars".to_string(),
        tgm::cbor::Value::text_map([("param", tgm::cbor::Value::from("130.128"))]),
    )]
    .into_iter()
    .collect()]);
    let desc = ObjectDescriptor::new(Dtype::Uint8, vec![2]);
    let msg = tgm::encode(&meta, &[(&desc, &[1u8, 2][..])], &EncodeOptions::new()).unwrap();
    std::fs::write(&p, msg).unwrap();
    let (ok, out, err) = tgm(&["get", s(&p), "mars.param"]);
    assert!(ok, "{err}");
    assert_eq!(out, format!("{}\t0\t0\t130.128\n", p.display()));
    let (ok, with_p, err) = tgm(&["get", "-p", "mars.param", s(&p)]);
    assert!(ok, "{err}");
    assert_eq!(out, with_p);
    let (ok, two, _) = tgm(&["get", s(&p), s(&p), "mars.param"]);
    assert!(ok);
    assert_eq!(two, format!("{out}{out}"));
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tgm"))
            .args(args)
            .output()
            .unwrap()
    };
    let lone = run(&["get", s(&p)]);
    let err = String::from_utf8_lossy(&lone.stderr);
    assert_eq!(lone.status.code(), Some(2), "{err}");
    assert!(err.contains("tgm get FILE KEY"), "{err}");
    let file_last = run(&["get", s(&p), s(&p)]);
    let err = String::from_utf8_lossy(&file_last.stderr);
    assert_eq!(file_last.status.code(), Some(2), "{err}");
    assert!(err.contains("is a file"), "{err}");
}

/// Byte strings in metadata come out of `dump -j` as one base64 string
/// with their length, not one number per line.
#[test]
fn dump_json_writes_byte_strings_as_base64() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("b.tgm");
    let template: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 256) as u8).collect();
    let mut e = tgm::Map::new();
    e.insert("template".into(), tgm::cbor::Value::Bytes(template.clone()));
    let desc = ObjectDescriptor::new(Dtype::Uint8, vec![2]);
    let msg = tgm::encode(
        &GlobalMetadata::with_base(vec![e]),
        &[(&desc, &[1u8, 2][..])],
        &EncodeOptions::new(),
    )
    .unwrap();
    std::fs::write(&p, msg).unwrap();
    let (ok, out, err) = tgm(&["dump", "-j", s(&p)]);
    assert!(ok, "{err}");
    assert!(out.lines().count() < 60, "{} lines", out.lines().count());
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &doc[0]["objects"][0]["metadata"]["template"];
    assert_eq!(t["bytes"], 3000, "{t}");
    assert_eq!(decode_base64(t["base64"].as_str().unwrap()), template);
    // The text form and ls -j write them the same way.
    let (_, text, _) = tgm(&["dump", s(&p)]);
    assert!(text.contains("\"base64\":"), "{text}");
    let (_, ls, _) = tgm(&["ls", "-j", s(&p)]);
    assert!(ls.contains("\"base64\":"), "{ls}");
}

/// Standard base64 with padding (RFC 4648 §4), decoded independently of
/// the encoder under test.
fn decode_base64(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert_eq!(text.len() % 4, 0, "{text}");
    let mut out = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let pad = quad.iter().filter(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in quad {
            let v = if c == b'=' {
                0
            } else {
                ALPHABET
                    .iter()
                    .position(|&a| a == c)
                    .expect("base64 letter") as u32
            };
            n = n << 6 | v;
        }
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    out
}

/// `demo -d DIR` keeps its files, refuses to overwrite them without
/// --force, and ends with commands that run on what it left.
#[test]
fn demo_keeps_its_files_and_ends_with_commands_that_run() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    let (ok, out, err) = tgm(&["demo", "-d", s(&kept)]);
    assert!(ok, "{err}");
    for f in ["example.tgm", "input/temperature.npy", "export"] {
        assert!(kept.join(f).exists(), "{f} not kept");
    }
    let before = std::fs::read(kept.join("example.tgm")).unwrap();
    let (ok, _, err) = tgm(&["demo", "-d", s(&kept)]);
    assert!(!ok, "overwrote without --force");
    assert!(
        err.contains("example.tgm") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(kept.join("example.tgm")).unwrap(), before);
    let (ok, _, err) = tgm(&["demo", "-d", s(&kept), "--force"]);
    assert!(ok, "{err}");
    let next: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("Next, try:"))
        .skip(1)
        .map(str::trim)
        .collect();
    assert!(next.len() >= 4, "{out}");
    for line in next {
        let args: Vec<&str> = line.split(' ').collect();
        assert_eq!(args[0], "tgm", "{line}");
        let run = Command::new(env!("CARGO_BIN_EXE_tgm"))
            .current_dir(dir.path())
            .args(&args[1..])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{line}: {err}");
        if args[1] != "plot" {
            assert!(!run.stdout.is_empty(), "{line} printed nothing: {err}");
        }
    }
    assert!(dir.path().join("temperature.png").exists());
}
