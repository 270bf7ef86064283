//! `tgm convert-nifti` / `tgm to-nifti` end to end on generated volumes.
//!
//! Inputs are single-file NIfTI-1 images built byte by byte here (an
//! implementation independent of the one under test); outputs are checked
//! with the `nifti` crate's header reader and by exact byte comparison.
#![cfg(feature = "nifti")]
// `common` and `medical_common` both carry tests/common/skip.rs, the one skip rule.
#![allow(clippy::duplicate_mod)]

use std::io::Write;
use std::path::Path;
use std::process::Command;

use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype};

mod common;
mod medical_common;
use medical_common::{s, tgm, tgm_limited};

/// Header fields the tests vary.
#[derive(Clone)]
struct Spec {
    datatype: i16,
    bitpix: i16,
    dims: Vec<u16>,
    big: bool,
    srow: [[f32; 4]; 3],
    quatern: [f32; 6],
    pixdim: [f32; 8],
    scl: (f32, f32),
}

impl Spec {
    fn new(datatype: i16, bitpix: i16, dims: &[u16], big: bool) -> Spec {
        Spec {
            datatype,
            bitpix,
            dims: dims.to_vec(),
            big,
            srow: [
                [-0.9375, 0.0, 0.0, 120.5],
                [0.0, 0.9375, 0.0, -98.25],
                [0.0, 0.0, 1.5, -60.0],
            ],
            quatern: [0.0, 1.0, 0.0, 120.5, -98.25, -60.0],
            pixdim: [-1.0, 0.9375, 0.9375, 1.5, 2.0, 1.0, 1.0, 1.0],
            scl: (0.5, -1024.0),
        }
    }
}

/// A single-file NIfTI-1 image: 348-byte header, empty extension flag, data.
fn build_nii(spec: &Spec, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 352];
    let put = |h: &mut Vec<u8>, off: usize, bytes: &[u8]| {
        let mut b = bytes.to_vec();
        if spec.big {
            b.reverse();
        }
        h[off..off + b.len()].copy_from_slice(&b);
    };
    put(&mut h, 0, &348i32.to_le_bytes());
    put(&mut h, 40, &(spec.dims.len() as i16).to_le_bytes());
    for i in 0..7 {
        let d = spec.dims.get(i).copied().unwrap_or(1);
        put(&mut h, 42 + 2 * i, &d.to_le_bytes());
    }
    put(&mut h, 68, &1002i16.to_le_bytes()); // intent_code: label
    put(&mut h, 70, &spec.datatype.to_le_bytes());
    put(&mut h, 72, &spec.bitpix.to_le_bytes());
    for (i, p) in spec.pixdim.iter().enumerate() {
        put(&mut h, 76 + 4 * i, &p.to_le_bytes());
    }
    put(&mut h, 108, &352f32.to_le_bytes());
    put(&mut h, 112, &spec.scl.0.to_le_bytes());
    put(&mut h, 116, &spec.scl.1.to_le_bytes());
    h[123] = 2 | 8; // mm, s
    h[148..148 + 9].copy_from_slice(b"generated");
    put(&mut h, 252, &1i16.to_le_bytes()); // qform_code
    put(&mut h, 254, &2i16.to_le_bytes()); // sform_code
    for (i, q) in spec.quatern.iter().enumerate() {
        put(&mut h, 256 + 4 * i, &q.to_le_bytes());
    }
    for (r, row) in spec.srow.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            put(&mut h, 280 + 16 * r + 4 * c, &v.to_le_bytes());
        }
    }
    h[328..333].copy_from_slice(b"label");
    h[344..348].copy_from_slice(b"n+1\0");
    h.extend_from_slice(data);
    h
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `n` distinct values of the NIfTI datatype, in the requested byte order.
fn values(datatype: i16, n: usize, big: bool) -> (Dtype, i16, Vec<u8>) {
    macro_rules! gen {
        ($t:ty, $f:expr) => {{
            let mut out = Vec::new();
            for i in 0..n {
                let v: $t = $f(i as i64);
                out.extend(if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                });
            }
            out
        }};
    }
    let sign = |i: i64| if i % 2 == 0 { 1 } else { -1 };
    match datatype {
        2 => (Dtype::Uint8, 8, gen!(u8, |i: i64| (i * 7 % 256) as u8)),
        4 => (
            Dtype::Int16,
            16,
            gen!(i16, |i: i64| (sign(i) * i * 311) as i16),
        ),
        8 => (
            Dtype::Int32,
            32,
            gen!(i32, |i: i64| (sign(i) * i * 70001) as i32),
        ),
        16 => (
            Dtype::Float32,
            32,
            gen!(f32, |i: i64| i as f32 * -0.37 + 1e-3),
        ),
        32 => (
            Dtype::Complex64,
            64,
            gen!(f32, |i: i64| (i / 2) as f32
                * if i % 2 == 0 { 1.5 } else { -2.25 }),
        ),
        64 => (Dtype::Float64, 64, gen!(f64, |i: i64| i as f64 / 3.0 - 7.0)),
        256 => (
            Dtype::Int8,
            8,
            gen!(i8, |i: i64| (sign(i) * (i % 128)) as i8),
        ),
        512 => (
            Dtype::Uint16,
            16,
            gen!(u16, |i: i64| (i * 997 % 65536) as u16),
        ),
        768 => (
            Dtype::Uint32,
            32,
            gen!(u32, |i: i64| (i * 2_654_435) as u32),
        ),
        1024 => (
            Dtype::Int64,
            64,
            gen!(i64, |i: i64| sign(i) * i * 1_000_000_007),
        ),
        1280 => (
            Dtype::Uint64,
            64,
            gen!(u64, |i: i64| i as u64 * 0x1234_5678_9abc),
        ),
        1792 => (
            Dtype::Complex128,
            128,
            gen!(f64, |i: i64| (i / 2) as f64
                * if i % 2 == 0 { 0.1 } else { -9.5 }),
        ),
        _ => unreachable!(),
    }
}

const CODES: [i16; 12] = [2, 4, 8, 16, 32, 64, 256, 512, 768, 1024, 1280, 1792];

fn decode_file(path: &Path) -> tgm::DecodedMessage {
    let bytes = std::fs::read(path).unwrap();
    tgm::decode(&bytes, &DecodeOptions::default().native_byte_order(false)).unwrap()
}

#[test]
fn every_dtype_round_trips_exactly_in_both_byte_orders_and_compressions() {
    let dir = tempfile::tempdir().unwrap();
    let dims = [3u16, 4, 5];
    for code in CODES {
        for big in [false, true] {
            for gzipped in [false, true] {
                let (dtype, bitpix, _) = values(code, 0, big);
                let comps = 60
                    * if matches!(dtype, Dtype::Complex64 | Dtype::Complex128) {
                        2
                    } else {
                        1
                    };
                let (_, _, data) = values(code, comps, big);
                let spec = Spec::new(code, bitpix, &dims, big);
                let nii = build_nii(&spec, &data);
                let tag = format!("{code}_{big}_{gzipped}");
                let input = dir
                    .path()
                    .join(format!("in_{tag}.nii{}", if gzipped { ".gz" } else { "" }));
                std::fs::write(&input, if gzipped { gz(&nii) } else { nii.clone() }).unwrap();
                let tgm_path = dir.path().join(format!("{tag}.tgm"));
                let (ok, err) = tgm(&["convert-nifti", s(&input), "-o", s(&tgm_path)]);
                assert!(ok, "{tag}: {err}");

                let msg = decode_file(&tgm_path);
                let obj = &msg.objects[0];
                assert_eq!(obj.descriptor.dtype, dtype, "{tag}");
                assert_eq!(obj.descriptor.shape, [5, 4, 3], "{tag}");
                let order = if big {
                    ByteOrder::Big
                } else {
                    ByteOrder::Little
                };
                assert_eq!(obj.descriptor.byte_order, order, "{tag}");
                assert_eq!(obj.data, data, "{tag}: stored voxels");
                let base = &msg.metadata.base[0];
                assert_eq!(
                    base.get("dim_names").unwrap().to_json(),
                    r#"["k","j","i"]"#,
                    "{tag}"
                );
                let n = base.get("nifti").unwrap();
                assert_eq!(n.get("datatype").unwrap().as_i64(), Some(code.into()));
                assert_eq!(n.get("scl_slope").unwrap().as_f64(), Some(0.5));
                assert_eq!(n.get("scl_inter").unwrap().as_f64(), Some(-1024.0));
                let affine: Vec<Vec<f64>> = n
                    .get("sform")
                    .unwrap()
                    .get("affine")
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        r.as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap())
                            .collect()
                    })
                    .collect();
                let mut want: Vec<Vec<f64>> = spec
                    .srow
                    .iter()
                    .map(|r| r.iter().map(|&x| x as f64).collect())
                    .collect();
                want.push(vec![0.0, 0.0, 0.0, 1.0]);
                assert_eq!(affine, want, "{tag}");
                assert_eq!(n.get("space_unit").unwrap().as_text(), Some("mm"));

                let out = dir.path().join(format!("out_{tag}.nii"));
                let (ok, err) = tgm(&["to-nifti", s(&tgm_path), "-o", s(&out)]);
                assert!(ok, "{tag}: {err}");
                assert_eq!(std::fs::read(&out).unwrap(), nii, "{tag}: NIfTI bytes");
                let h = nifti::NiftiHeader::from_reader(&nii[..]).unwrap();
                assert_eq!(h.srow_x, spec.srow[0]);
                assert_eq!(h.datatype, code);
            }
        }
    }
}

#[test]
fn gz_output_and_byte_order_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, be) = values(4, 24, true);
    let spec = Spec::new(4, 16, &[2, 3, 4], true);
    let input = dir.path().join("be.nii");
    std::fs::write(&input, build_nii(&spec, &be)).unwrap();
    let t = dir.path().join("le.tgm");
    let (ok, err) = tgm(&[
        "convert-nifti",
        s(&input),
        "-o",
        s(&t),
        "--byte-order",
        "little",
        "--compression",
        "szip",
    ]);
    assert!(ok, "{err}");
    let msg = decode_file(&t);
    assert_eq!(msg.objects[0].descriptor.byte_order, ByteOrder::Little);
    assert_eq!(msg.objects[0].descriptor.compression(), "szip");
    let (_, _, le) = values(4, 24, false);
    assert_eq!(msg.objects[0].data, le);

    let out = dir.path().join("le.nii.gz");
    let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&out)]);
    assert!(ok, "{err}");
    // The note gives the compressed file's size.
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(err.contains(&format!("({size} bytes)")), "{size}: {err}");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&std::fs::read(&out).unwrap()[..]),
        &mut raw,
    )
    .unwrap();
    let mut le_spec = spec.clone();
    le_spec.big = false;
    assert_eq!(raw, build_nii(&le_spec, &le));

    let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&out)]);
    assert!(!ok && err.contains("already exists"), "{err}");
    let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&out), "--force"]);
    assert!(ok, "{err}");
}

#[test]
fn volume_and_mask_share_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, vol) = values(4, 60, false);
    let (_, _, seg) = values(2, 60, false);
    let vol_path = dir.path().join("ct.nii.gz");
    let seg_path = dir.path().join("seg.nii.gz");
    std::fs::write(
        &vol_path,
        gz(&build_nii(&Spec::new(4, 16, &[3, 4, 5], false), &vol)),
    )
    .unwrap();
    std::fs::write(
        &seg_path,
        gz(&build_nii(&Spec::new(2, 8, &[3, 4, 5], false), &seg)),
    )
    .unwrap();
    let t = dir.path().join("both.tgm");
    let (ok, err) = tgm(&[
        "convert-nifti",
        s(&vol_path),
        "--mask",
        s(&seg_path),
        "-o",
        s(&t),
    ]);
    assert!(ok, "{err}");
    let msg = decode_file(&t);
    assert_eq!(msg.objects.len(), 2);
    assert_eq!(msg.objects[0].data, vol);
    assert_eq!(msg.objects[1].data, seg);
    let role = |i: usize| {
        msg.metadata.base[i]
            .get("role")
            .unwrap()
            .as_text()
            .unwrap()
            .to_string()
    };
    assert_eq!((role(0).as_str(), role(1).as_str()), ("volume", "mask"));
    assert_eq!(
        msg.metadata.base[1].get("name").and_then(Value::as_text),
        Some("seg")
    );
    let out = dir.path().join("seg_out.nii");
    let (ok, err) = tgm(&["to-nifti", s(&t), "--object", "1", "-o", s(&out)]);
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        build_nii(&Spec::new(2, 8, &[3, 4, 5], false), &seg)
    );

    let mut moved = Spec::new(2, 8, &[3, 4, 5], false);
    moved.srow[0][3] = 121.0;
    let bad = dir.path().join("moved.nii");
    std::fs::write(&bad, build_nii(&moved, &seg)).unwrap();
    let (ok, err) = tgm(&[
        "convert-nifti",
        s(&vol_path),
        "--mask",
        s(&bad),
        "-o",
        s(&dir.path().join("x.tgm")),
    ]);
    assert!(!ok);
    assert!(
        err.contains("moved.nii") && err.contains("ct.nii.gz") && err.contains("sform"),
        "{err}"
    );
    let other = dir.path().join("small.nii");
    std::fs::write(
        &other,
        build_nii(&Spec::new(2, 8, &[3, 4, 4], false), &seg[..48]),
    )
    .unwrap();
    let (ok, err) = tgm(&[
        "convert-nifti",
        s(&vol_path),
        "--mask",
        s(&other),
        "-o",
        s(&dir.path().join("x.tgm")),
    ]);
    assert!(!ok && err.contains("spatial dims"), "{err}");
}

/// The medical converters' stage flags are checked by their rules in
/// tgm-convert (`spec/pipeline.md` §10), the same Python's `convert_nifti`
/// keywords meet, before any input is read.
#[test]
fn a_level_without_zstd_or_outside_its_levels_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, data) = values(16, 60, false);
    let nii = dir.path().join("v.nii");
    std::fs::write(
        &nii,
        build_nii(&Spec::new(16, 32, &[3, 4, 5], false), &data),
    )
    .unwrap();
    let out = dir.path().join("o.tgm");
    for (flags, message) in [
        (
            &["--compression", "none", "--level", "3"][..],
            "--level has no effect without --compression zstd",
        ),
        (&["--level", "23"], "--level 23 is outside zstd's levels"),
    ] {
        let mut args = vec!["convert-nifti", s(&nii), "-o", s(&out)];
        args.extend_from_slice(flags);
        let (ok, err) = tgm(&args);
        assert!(!ok && err.contains(message), "{args:?}: {err}");
        assert!(!out.exists());
    }
    let (ok, err) = tgm(&["convert-nifti", s(&nii), "-o", s(&out), "--level", "-3"]);
    assert!(ok, "a fast zstd level: {err}");
}

#[test]
fn bad_inputs_are_clear_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    let run = |p: &Path| {
        let (ok, err) = tgm(&["convert-nifti", s(p), "-o", s(&out)]);
        assert!(!ok, "{} was accepted", p.display());
        assert!(err.contains(s(p)), "error does not name the file: {err}");
        assert!(!out.exists());
        err
    };
    let (_, _, data) = values(16, 60, false);
    let good = build_nii(&Spec::new(16, 32, &[3, 4, 5], false), &data);

    let p = dir.path().join("truncated.nii.gz");
    let z = gz(&good);
    std::fs::write(&p, &z[..z.len() / 2]).unwrap();
    let e = run(&p);
    assert!(e.contains("truncated") || e.contains("corrupt"), "{e}");

    let p = dir.path().join("short.nii");
    std::fs::write(&p, &good[..good.len() - 4]).unwrap();
    assert!(run(&p).contains("need 240 bytes"));
    let p = dir.path().join("long.nii");
    let mut long = good.clone();
    long.extend_from_slice(&[0; 8]);
    std::fs::write(&p, &long).unwrap();
    assert!(run(&p).contains("need 240 bytes"));
    let p = dir.path().join("long.nii.gz");
    std::fs::write(&p, gz(&long)).unwrap();
    assert!(run(&p).contains("data after"));

    // 2^40 voxels claimed by a small file, raw and compressed.
    let huge = build_nii(&Spec::new(2, 8, &[1024, 1024, 1024, 1024], false), &[7; 64]);
    let p = dir.path().join("huge.nii");
    std::fs::write(&p, &huge).unwrap();
    assert!(run(&p).contains("1099511627776 bytes"));
    let p = dir.path().join("huge.nii.gz");
    std::fs::write(&p, gz(&huge)).unwrap();
    assert!(run(&p).contains("holds at most"));

    // A gzip bomb: 64 MiB of zeros after a header claiming 240 bytes.
    // Inflation stops one byte past the claim.
    let p = dir.path().join("bomb.nii.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut enc, &good).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        std::io::Write::write_all(&mut enc, &zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    std::fs::write(&p, &bomb).unwrap();
    let started = std::time::Instant::now();
    assert!(run(&p).contains("data after the 240 bytes"));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));

    let p = dir.path().join("rgb.nii");
    std::fs::write(&p, build_nii(&Spec::new(128, 24, &[2, 2], false), &[0; 12])).unwrap();
    assert!(run(&p).contains("RGB24"));

    let p = dir.path().join("nifti2.nii");
    let mut n2 = vec![0u8; 600];
    n2[..4].copy_from_slice(&540i32.to_le_bytes());
    std::fs::write(&p, &n2).unwrap();
    assert!(run(&p).contains("NIfTI-2 magic"));

    let p = dir.path().join("tiny.nii");
    std::fs::write(&p, b"nope").unwrap();
    run(&p);
}

/// A single-file NIfTI-2 image built from the nifti2.h layout: 540-byte
/// header, empty extension flag, data at 544.
fn build_nii2(datatype: i16, bitpix: i16, dims: &[i64], big: bool, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 544];
    let put = |h: &mut Vec<u8>, off: usize, bytes: &[u8]| {
        let mut b = bytes.to_vec();
        if big {
            b.reverse();
        }
        h[off..off + b.len()].copy_from_slice(&b);
    };
    put(&mut h, 0, &540i32.to_le_bytes());
    h[4..12].copy_from_slice(b"n+2\0\r\n\x1a\n");
    put(&mut h, 12, &datatype.to_le_bytes());
    put(&mut h, 14, &bitpix.to_le_bytes());
    put(&mut h, 16, &(dims.len() as i64).to_le_bytes());
    for i in 0..7 {
        put(
            &mut h,
            24 + 8 * i,
            &dims.get(i).copied().unwrap_or(1).to_le_bytes(),
        );
    }
    let pixdim = [-1.0f64, 0.7, 0.8, 1.1, 2.5, 1.0, 1.0, 1.0];
    for (i, p) in pixdim.iter().enumerate() {
        put(&mut h, 104 + 8 * i, &p.to_le_bytes());
    }
    put(&mut h, 168, &544i64.to_le_bytes());
    put(&mut h, 176, &(1.0f64 / 3.0).to_le_bytes()); // scl_slope
    put(&mut h, 184, &(-1024.0f64).to_le_bytes()); // scl_inter
    h[240..247].copy_from_slice(b"nifti-2");
    put(&mut h, 344, &1i32.to_le_bytes()); // qform_code
    put(&mut h, 348, &4i32.to_le_bytes()); // sform_code
    put(&mut h, 368, &1.0f64.to_le_bytes()); // quatern_d
    for (r, row) in SROW2.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            put(&mut h, 400 + 32 * r + 8 * c, &v.to_le_bytes());
        }
    }
    put(&mut h, 500, &(2i32 | 8).to_le_bytes()); // mm, s
    put(&mut h, 504, &1002i32.to_le_bytes()); // intent: label
    h.extend_from_slice(data);
    h
}

/// sform rows with values f32 cannot hold exactly.
const SROW2: [[f64; 4]; 3] = [
    [-0.7, 0.0, 0.0, 90.123456789],
    [0.0, 0.8, 0.0, -126.987654321],
    [0.0, 0.0, 1.1, -72.000000001],
];

#[test]
fn nifti2_round_trips_exactly_in_both_byte_orders() {
    let dir = tempfile::tempdir().unwrap();
    for (code, big) in [
        (4i16, false),
        (4, true),
        (64, false),
        (512, true),
        (2, false),
    ] {
        let (dtype, bitpix, data) = values(code, 2 * 3 * 4 * 5, big);
        let nii = build_nii2(code, bitpix, &[5, 4, 3, 2], big, &data);
        let tag = format!("{code}_{big}");
        let input = dir.path().join(format!("v2_{tag}.nii.gz"));
        std::fs::write(&input, gz(&nii)).unwrap();
        let t = dir.path().join(format!("v2_{tag}.tgm"));
        let (ok, err) = tgm(&["convert-nifti", s(&input), "-o", s(&t)]);
        assert!(ok, "{tag}: {err}");
        let msg = decode_file(&t);
        let obj = &msg.objects[0];
        assert_eq!(obj.descriptor.dtype, dtype, "{tag}");
        assert_eq!(obj.descriptor.shape, [2, 3, 4, 5], "{tag}");
        assert_eq!(obj.data, data, "{tag}");
        let n = msg.metadata.base[0].get("nifti").unwrap();
        assert_eq!(n.get("version").unwrap().as_u64(), Some(2));
        assert_eq!(n.get("scl_slope").unwrap().as_f64(), Some(1.0 / 3.0));
        let sform = n.get("sform").unwrap();
        assert_eq!(sform.get("code_name").unwrap().as_text(), Some("mni_152"));
        let row0: Vec<f64> = sform.get("affine").unwrap().as_array().unwrap()[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(row0, SROW2[0]);
        assert_eq!(n.get("time_unit").unwrap().as_text(), Some("s"));

        let out = dir.path().join(format!("v2_{tag}.nii"));
        let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&out)]);
        assert!(ok, "{tag}: {err}");
        assert_eq!(std::fs::read(&out).unwrap(), nii, "{tag}: NIfTI-2 bytes");
    }
}

#[test]
fn nifti2_is_written_on_request_or_when_a_dim_exceeds_nifti1() {
    let dir = tempfile::tempdir().unwrap();
    // NIfTI-1 in, --nifti2 out, back in: same voxels and affine.
    let (_, _, data) = values(4, 60, false);
    let nii1 = build_nii(&Spec::new(4, 16, &[3, 4, 5], false), &data);
    let p1 = dir.path().join("one.nii");
    std::fs::write(&p1, &nii1).unwrap();
    let t1 = dir.path().join("one.tgm");
    assert!(tgm(&["convert-nifti", s(&p1), "-o", s(&t1)]).0);
    let p2 = dir.path().join("two.nii");
    let (ok, err) = tgm(&["to-nifti", s(&t1), "-o", s(&p2), "--nifti2"]);
    assert!(ok, "{err}");
    let two = std::fs::read(&p2).unwrap();
    assert_eq!(i32::from_le_bytes(two[..4].try_into().unwrap()), 540);
    assert_eq!(&two[544..], &data[..]);
    let t2 = dir.path().join("two.tgm");
    assert!(tgm(&["convert-nifti", s(&p2), "-o", s(&t2)]).0);
    let (m1, m2) = (decode_file(&t1), decode_file(&t2));
    assert_eq!(m1.objects[0].data, m2.objects[0].data);
    let affine = |m: &tgm::DecodedMessage, which: &str| {
        m.metadata.base[0]
            .get("nifti")
            .unwrap()
            .get(which)
            .unwrap()
            .get("affine")
            .unwrap()
            .to_json()
    };
    assert_eq!(affine(&m1, "sform"), affine(&m2, "sform"));
    assert_eq!(affine(&m1, "qform"), affine(&m2, "qform"));

    // An object with an axis of 40000 has no NIfTI-1 form: NIfTI-2.
    let values: Vec<u8> = (0..80000u32).map(|i| (i % 251) as u8).collect();
    let d = tgm::ObjectDescriptor::new(Dtype::Uint8, vec![2, 40000]);
    let meta = tgm::GlobalMetadata::default();
    let msg = tgm::encode(&meta, &[(&d, &values[..])], &tgm::EncodeOptions::new()).unwrap();
    let t = dir.path().join("wide.tgm");
    std::fs::write(&t, msg).unwrap();
    let out = dir.path().join("wide.nii");
    let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&out)]);
    assert!(ok, "{err}");
    let b = std::fs::read(&out).unwrap();
    assert_eq!(i32::from_le_bytes(b[..4].try_into().unwrap()), 540);
    assert_eq!(i64::from_le_bytes(b[24..32].try_into().unwrap()), 40000);
    assert_eq!(&b[544..], &values[..]);
}

#[test]
fn hostile_nifti2_headers_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "huge.nii",
            build_nii2(2, 8, &[1 << 20, 1 << 20, 1 << 20], false, &[0; 16]),
            "1152921504606846976 bytes",
        ),
        (
            "overflow.nii",
            build_nii2(64, 64, &[1 << 40, 1 << 40], true, &[0; 16]),
            "overflows",
        ),
        (
            "negative.nii",
            build_nii2(2, 8, &[4, -1], false, &[0; 16]),
            "dim[2] is -1",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
        assert!(
            !ok && err.contains(name) && err.contains(want),
            "{name}: {err}"
        );
        let pz = dir.path().join(format!("{name}.gz"));
        std::fs::write(&pz, gz(&bytes)).unwrap();
        let (ok, err) = tgm(&["convert-nifti", s(&pz), "-o", s(&out)]);
        assert!(!ok && err.contains(name), "{name}.gz: {err}");
        assert!(!out.exists());
    }
    let p = dir.path().join("short2.nii");
    std::fs::write(&p, &build_nii2(2, 8, &[4], false, &[0; 4])[..400]).unwrap();
    let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert!(!ok && err.contains("NIfTI-2 header"), "{err}");
}

/// One gzip member holding `bytes`.
fn member(bytes: &[u8]) -> Vec<u8> {
    gz(bytes)
}

/// `nii` with header extensions `(ecode, content)` inserted after the
/// header: extension flag 1, `vox_offset` moved past them.
fn with_extensions(nii: &[u8], big: bool, exts: &[(i32, &[u8])]) -> Vec<u8> {
    let order = |v: [u8; 4]| {
        let mut v = v;
        if big {
            v.reverse();
        }
        v
    };
    let mut region = vec![1u8, 0, 0, 0];
    for (code, data) in exts {
        region.extend(order(((data.len() + 8) as i32).to_le_bytes()));
        region.extend(order(code.to_le_bytes()));
        region.extend_from_slice(data);
    }
    let mut out = nii[..348].to_vec();
    out[108..112].copy_from_slice(&order(((348 + region.len()) as f32).to_le_bytes()));
    out.extend(region);
    out.extend_from_slice(&nii[352..]);
    out
}

fn inflate(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out).unwrap();
    out
}

#[test]
fn every_gzip_member_is_read_and_trailing_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    let (_, _, data) = values(16, 60, false);
    let good = build_nii(&Spec::new(16, 32, &[3, 4, 5], false), &data);

    // bgzip/pigz style: members split anywhere, an empty one at the end.
    let p = dir.path().join("members.nii.gz");
    let mut z = member(&good[..100]);
    z.extend(member(&good[100..400]));
    z.extend(member(&good[400..]));
    z.extend(member(&[]));
    std::fs::write(&p, &z).unwrap();
    let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert!(ok, "{err}");
    assert_eq!(decode_file(&out).objects[0].data, data);
    std::fs::remove_file(&out).unwrap();

    for (name, tail) in [("zeros", &[0u8; 8][..]), ("text", b"trailing")] {
        let p = dir.path().join(format!("{name}.nii.gz"));
        let mut z = gz(&good);
        z.extend_from_slice(tail);
        std::fs::write(&p, &z).unwrap();
        let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
        assert!(!ok && err.contains(s(&p)), "{err}");
        assert!(err.contains("trailing bytes after gzip member 1"), "{err}");
        assert!(!out.exists());
    }
    // A corrupt second member.
    let p = dir.path().join("corrupt.nii.gz");
    let mut z = member(&good[..200]);
    let mut second = member(&good[200..]);
    let n = second.len();
    second[n - 6] ^= 0xff; // its CRC
    z.extend(second);
    std::fs::write(&p, &z).unwrap();
    let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert!(!ok && err.contains(s(&p)), "{err}");
}

/// A `.nii.gz` of about 3 MB holding 3 GiB of zeros in 3072 members:
/// the header claims `claim_mib` MiB of uint8 voxels.
fn bomb(claim_mib: u16) -> Vec<u8> {
    let nii = build_nii(&Spec::new(2, 8, &[1024, 1024, claim_mib], false), &[]);
    let mut z = member(&nii);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![0u8; 1 << 20]).unwrap();
    let zeros = enc.finish().unwrap();
    for _ in 0..3072 {
        z.extend_from_slice(&zeros);
    }
    z
}

#[test]
fn a_gzip_bomb_is_refused_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    // The header claims the whole 3 GiB: refused before inflating, beyond
    // the default budget (64 x 3 MB + 256 MiB).
    let p = dir.path().join("claims3g.nii.gz");
    let z = bomb(3072);
    assert!(z.len() < 4 << 20, "{}", z.len());
    std::fs::write(&p, &z).unwrap();
    let (code, err) = tgm_limited(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(s(&p)) && err.contains("--max-decoded-bytes"),
        "{err}"
    );
    // Allowed by the option, it still cannot take more memory than the
    // process has: a clean error, not an abort.
    let (code, err) = tgm_limited(&[
        "convert-nifti",
        s(&p),
        "-o",
        s(&out),
        "--max-decoded-bytes",
        "4000000000",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(s(&p)) && err.contains("cannot allocate"),
        "{err}"
    );
    // The header claims 64 MiB: inflation stops one byte past it.
    let p = dir.path().join("claims64m.nii.gz");
    std::fs::write(&p, bomb(64)).unwrap();
    let (code, err) = tgm_limited(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data after the 67108864 bytes"), "{err}");
    assert!(!out.exists());
}

/// A `.nii.gz` of several deflate chunks (`gz_parallel`) is one gzip
/// member: flate2's single-member reader, `gzip -t` and `gzip -dc` (when
/// installed) and nibabel (with `TGM_MEDICAL_PYTHON`) read it as the
/// `.nii` written from the same archive.
#[test]
fn a_gz_output_of_several_chunks_is_one_member_every_reader_reads() {
    let dir = tempfile::tempdir().unwrap();
    // 3.5 MiB of voxels: three whole 1 MiB chunks and a part.
    let dims = [64u16, 112, 128];
    let n = dims.iter().map(|&d| d as usize).product::<usize>();
    let data: Vec<u8> = (0..n)
        .flat_map(|i| (((i as f32) * 0.01).sin() * 300.0 + (i % 13) as f32).to_le_bytes())
        .collect();
    let src = dir.path().join("a.nii");
    std::fs::write(&src, build_nii(&Spec::new(16, 32, &dims, false), &data)).unwrap();
    let archive = dir.path().join("a.tgm");
    assert!(tgm(&["convert-nifti", s(&src), "-o", s(&archive)]).0);
    let (nii, gz) = (dir.path().join("b.nii"), dir.path().join("b.nii.gz"));
    for out in [&nii, &gz] {
        let (ok, err) = tgm(&["to-nifti", s(&archive), "-o", s(out)]);
        assert!(ok, "{err}");
    }
    let plain = std::fs::read(&nii).unwrap();
    let packed = std::fs::read(&gz).unwrap();
    let mut one = flate2::bufread::GzDecoder::new(&packed[..]);
    let mut back = Vec::new();
    std::io::Read::read_to_end(&mut one, &mut back).unwrap();
    assert!(back == plain, "the first member is not the whole file");
    assert!(one.into_inner().is_empty(), "bytes after the first member");
    match Command::new("gzip").arg("-t").arg(&gz).status() {
        Err(_) => medical_common::skip::skip("the gzip checks: gzip is not installed"),
        Ok(status) => {
            assert!(status.success(), "gzip -t refused {}", gz.display());
            let out = Command::new("gzip").arg("-dc").arg(&gz).output().unwrap();
            assert!(out.status.success());
            assert!(out.stdout == plain, "gzip -dc gives other bytes");
        }
    }
    if let Some(py) = medical_common::python() {
        let script = "import sys, nibabel, numpy\n\
            a = numpy.asarray(nibabel.load(sys.argv[1]).dataobj)\n\
            b = numpy.asarray(nibabel.load(sys.argv[2]).dataobj)\n\
            print(a.shape, numpy.array_equal(a, b))";
        let out = medical_common::run_python(&py, script, &[s(&gz), s(&nii)]);
        assert_eq!(out.trim(), "(64, 112, 128) True");
    }
}

const EXT1: &[u8] = b"extcomment1\0\0\0\0\0\0\0\0\0\0\0\0\0";
const EXT2: &[u8] = b"extlongcomment2\0\0\0\0\0\0\0\0\0";

#[test]
#[ignore = "needs pydicom and nibabel (TGM_MEDICAL_PYTHON): bash .ci/medical.sh"]
fn header_extensions_come_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for big in [false, true] {
        let (_, _, data) = values(4, 60, big);
        let plain = build_nii(&Spec::new(4, 16, &[3, 4, 5], big), &data);
        let nii = with_extensions(&plain, big, &[(6, EXT1), (4, EXT2)]);
        let input = dir.path().join(format!("ext_{big}.nii.gz"));
        std::fs::write(&input, gz(&nii)).unwrap();
        let t = dir.path().join(format!("ext_{big}.tgm"));
        let (ok, err) = tgm(&["convert-nifti", s(&input), "-o", s(&t)]);
        assert!(ok, "{err}");
        let msg = decode_file(&t);
        let exts = msg.metadata.base[0]
            .get("nifti")
            .unwrap()
            .get("extensions")
            .unwrap()
            .as_array()
            .unwrap();
        assert_eq!(exts.len(), 2);
        for (e, (code, bytes)) in exts.iter().zip([(6, EXT1), (4, EXT2)]) {
            assert_eq!(e.get("code").unwrap().as_i64(), Some(code));
            assert_eq!(
                e.get("size").unwrap().as_u64(),
                Some(bytes.len() as u64 + 8)
            );
            assert_eq!(e.get("data"), Some(&Value::Bytes(bytes.to_vec())));
        }
        let back = dir.path().join(format!("back_{big}.nii.gz"));
        let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&back)]);
        assert!(ok, "{err}");
        assert_eq!(inflate(&std::fs::read(&back).unwrap()), nii, "big {big}");

        // Stored little-endian: the extensions' integers follow the output.
        let t = dir.path().join(format!("le_{big}.tgm"));
        let args = [
            "convert-nifti",
            s(&input),
            "-o",
            s(&t),
            "--byte-order",
            "little",
        ];
        assert!(tgm(&args).0);
        let back = dir.path().join(format!("le_{big}.nii"));
        assert!(tgm(&["to-nifti", s(&t), "-o", s(&back)]).0);
        let (_, _, le) = values(4, 60, false);
        let want = with_extensions(
            &build_nii(&Spec::new(4, 16, &[3, 4, 5], false), &le),
            false,
            &[(6, EXT1), (4, EXT2)],
        );
        assert_eq!(std::fs::read(&back).unwrap(), want, "big {big} to little");
        nibabel_sees_extensions(&back, &[(6, EXT1), (4, EXT2)]);
    }
}

/// nibabel reads the extensions `to-nifti` wrote (`TGM_MEDICAL_PYTHON` or
/// python3; skipped when nibabel is not installed).
fn nibabel_sees_extensions(path: &Path, want: &[(i32, &[u8])]) {
    let script = "import sys, nibabel\n\
        h = nibabel.load(sys.argv[1]).header\n\
        for e in h.extensions: print(e.get_code(), e.get_content().hex())";
    let py = std::env::var("TGM_MEDICAL_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = match Command::new(&py).args(["-c", script, s(path)]).output() {
        Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap(),
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'nibabel'") => {
            medical_common::skip::skip("the nibabel check: nibabel is not installed");
            return;
        }
        other => panic!("nibabel failed on {}: {other:?}", path.display()),
    };
    let got: Vec<String> = out.lines().map(str::to_string).collect();
    let want: Vec<String> = want
        .iter()
        .map(|(c, d)| {
            // nibabel's get_content() drops the NUL padding.
            let end = d.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let hex: String = d[..end].iter().map(|b| format!("{b:02x}")).collect();
            format!("{c} {hex}")
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn bytes_outside_any_extension_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    let (_, _, data) = values(4, 60, false);
    let plain = build_nii(&Spec::new(4, 16, &[3, 4, 5], false), &data);
    // Flag 0 but a non-zero byte before vox_offset.
    let mut nii = with_extensions(&plain, false, &[(6, EXT1)]);
    nii[348] = 0;
    let p = dir.path().join("stray.nii");
    std::fs::write(&p, &nii).unwrap();
    let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert!(
        !ok && err.contains(s(&p)) && err.contains("would be lost"),
        "{err}"
    );
    // An esize running past vox_offset.
    let mut nii = with_extensions(&plain, false, &[(6, EXT1)]);
    nii[352] = 64;
    let p = dir.path().join("esize.nii");
    std::fs::write(&p, &nii).unwrap();
    let (ok, err) = tgm(&["convert-nifti", s(&p), "-o", s(&out)]);
    assert!(!ok && err.contains("esize 64"), "{err}");
    assert!(!out.exists());
}

#[test]
fn non_finite_scaling_is_kept_and_shown_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, data) = values(4, 60, false);
    let odd_nan = f32::from_bits(0x7fc0_0001);
    for (slope, inter, slope_json, inter_json, applies) in [
        (f32::NAN, f32::INFINITY, "\"NaN\"", "\"Infinity\"", false),
        (
            odd_nan,
            f32::NEG_INFINITY,
            "\"NaN:0x7fc00001\"",
            "\"-Infinity\"",
            false,
        ),
        (0.0, 7.0, "0.0", "7.0", false),
        (2.0, f32::NAN, "2.0", "\"NaN\"", true),
    ] {
        let mut spec = Spec::new(4, 16, &[3, 4, 5], false);
        spec.scl = (slope, inter);
        let nii = build_nii(&spec, &data);
        let input = dir.path().join(format!("scl_{slope_json}.nii"));
        std::fs::write(&input, &nii).unwrap();
        let t = dir.path().join("scl.tgm");
        let (ok, err) = tgm(&["convert-nifti", s(&input), "-o", s(&t), "--force"]);
        assert!(ok, "{err}");
        let dump = Command::new(env!("CARGO_BIN_EXE_tgm"))
            .args(["dump", "-j", s(&t)])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
        let text = json.to_string();
        let nifti = find_key(&json, "nifti").unwrap_or_else(|| panic!("{text}"));
        assert_eq!(nifti["scl_slope"].to_string(), slope_json, "{text}");
        assert_eq!(nifti["scl_inter"].to_string(), inter_json, "{text}");
        assert_eq!(nifti["scl_applies"], serde_json::Value::Bool(applies));
        let back = dir.path().join("scl_back.nii");
        let (ok, err) = tgm(&["to-nifti", s(&t), "-o", s(&back), "--force"]);
        assert!(ok, "{err}");
        assert_eq!(
            std::fs::read(&back).unwrap(),
            nii,
            "{slope_json} {inter_json}"
        );
    }
}

/// The first value under `key` anywhere in a JSON document.
fn find_key<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// Issue 46: `to-nifti` of what `convert-nifti` writes by default
/// (shuffle + zstd) holds the volume once: within 1.3 × the object +
/// 64 MiB for `.nii` and `.nii.gz` (2.3 × when the shuffled bytes and the
/// decoded volume were both held), and gives back the same voxels.
#[cfg(target_os = "linux")]
#[test]
fn to_nifti_of_a_shuffled_zstd_volume_holds_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let dims = [512u16, 512, 96];
    let n = dims.iter().map(|&d| d as u64).product::<u64>();
    // Written a slice at a time: a child started by this process counts
    // its peak (a vfork shares its memory until tgm executes), so the
    // volume is never held here before the runs measured.
    let src = dir.path().join("a.nii");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&src).unwrap());
    f.write_all(&build_nii(&Spec::new(16, 32, &dims, false), &[]))
        .unwrap();
    for i in 0..n {
        let v = ((i as f32) * 0.37).sin() * 1000.0 + (i % 7) as f32;
        f.write_all(&v.to_le_bytes()).unwrap();
    }
    f.into_inner().unwrap().sync_all().unwrap();
    let bound = n * 4 * 13 / 10 + (64 << 20);
    let archive = dir.path().join("a.tgm");
    let (ok, err) = tgm(&["convert-nifti", s(&src), "-o", s(&archive)]);
    assert!(ok, "{err}");
    assert_eq!(
        medical_common::stored_pipeline(&archive),
        ["shuffle", "zstd"]
    );
    let outputs = ["b.nii", "b.nii.gz"].map(|name| dir.path().join(name));
    for out in &outputs {
        let (peak, status) = common::peak_rss(&["to-nifti", s(&archive), "-o", s(out)], &[]);
        assert_eq!(status, 0, "to-nifti {} failed", out.display());
        assert!(
            peak <= bound,
            "{}: peak {} MiB over {} MiB",
            out.display(),
            peak >> 20,
            bound >> 20
        );
    }
    let data = std::fs::read(&src).unwrap();
    for out in &outputs {
        let mut bytes = std::fs::read(out).unwrap();
        if s(out).ends_with(".gz") {
            bytes = inflate(&bytes);
        }
        assert!(
            bytes[352..] == data[352..],
            "{}: voxels differ",
            out.display()
        );
    }
}
