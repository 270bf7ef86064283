//! Every sample image shipped in the nibabel and pydicom wheels (PyPI),
//! unpacked by `.ci/medical.sh` into `$TGM_MEDICAL_SAMPLES/{nibabel,pydicom}`:
//! supported ones convert with voxels equal to an independent decode,
//! unsupported ones fail with an error naming the file, never a panic.
//! Skips (with a message) when `TGM_MEDICAL_SAMPLES` is unset.
#![cfg(all(feature = "nifti", feature = "dicom"))]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use dicom_pixeldata::PixelDecoder;
use nifti::NiftiObject;
use tgm::{DecodeOptions, Dtype};

mod medical_common;
use medical_common::tgm_limited;

fn samples() -> Option<PathBuf> {
    match std::env::var_os("TGM_MEDICAL_SAMPLES") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            medical_common::skip::skip(
                "TGM_MEDICAL_SAMPLES is unset (bash .ci/medical.sh downloads the \
                 nibabel and pydicom wheels and sets it)",
            );
            None
        }
    }
}

/// Runs tgm: (exit code, stderr).
fn tgm(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|n| n.ends_with(suffix)))
        .collect();
    v.sort();
    v
}

fn decode(path: &Path) -> tgm::DecodedMessage {
    let bytes = std::fs::read(path).unwrap();
    tgm::decode(&bytes, &DecodeOptions::default().native_byte_order(false)).unwrap()
}

/// Equal bytes, except that NaNs of `dtype` compare equal whatever their
/// payload (masks restore a canonical NaN).
fn same_voxels(a: &[u8], b: &[u8], dtype: Dtype, big: bool) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let w = dtype.width();
    if !matches!(dtype, Dtype::Float32 | Dtype::Float64) {
        return a == b;
    }
    a.chunks_exact(w).zip(b.chunks_exact(w)).all(|(x, y)| {
        let nan = |c: &[u8]| {
            let mut c = c.to_vec();
            if big {
                c.reverse();
            }
            if w == 4 {
                f32::from_le_bytes(c[..].try_into().unwrap()).is_nan()
            } else {
                f64::from_le_bytes(c[..].try_into().unwrap()).is_nan()
            }
        };
        x == y || (nan(x) && nan(y))
    })
}

fn read_maybe_gz(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Voxel bytes, NIfTI-order dims and byte order of a NIfTI file, decoded
/// without tgm: the nifti crate for NIfTI-1, the nifti2.h layout for
/// NIfTI-2.
fn reference_nifti(path: &Path) -> (Vec<u8>, Vec<u64>, bool) {
    let bytes = read_maybe_gz(path);
    let le540 = i32::from_le_bytes(bytes[..4].try_into().unwrap()) == 540;
    let be540 = i32::from_be_bytes(bytes[..4].try_into().unwrap()) == 540;
    if le540 || be540 {
        let i64_at = |o: usize| {
            let b: [u8; 8] = bytes[o..o + 8].try_into().unwrap();
            if be540 {
                i64::from_be_bytes(b)
            } else {
                i64::from_le_bytes(b)
            }
        };
        let i16_at = |o: usize| {
            let b: [u8; 2] = bytes[o..o + 2].try_into().unwrap();
            if be540 {
                i16::from_be_bytes(b)
            } else {
                i16::from_le_bytes(b)
            }
        };
        let rank = i64_at(16) as usize;
        let dims: Vec<u64> = (0..rank).map(|i| i64_at(24 + 8 * i) as u64).collect();
        let width = (i16_at(14) / 8) as u64;
        let n = dims.iter().product::<u64>() * width;
        let off = i64_at(168) as usize;
        return (bytes[off..off + n as usize].to_vec(), dims, be540);
    }
    let obj = nifti::ReaderOptions::new().read_file(path).unwrap();
    let h = obj.header().clone();
    let dims: Vec<u64> = h.dim[1..=h.dim[0] as usize]
        .iter()
        .map(|&d| d as u64)
        .collect();
    let big = h.endianness == nifti::Endianness::Big;
    (obj.into_volume().into_raw_data(), dims, big)
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn nibabel_samples_convert_with_the_same_voxels_and_round_trip() {
    let Some(root) = samples() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut nii = files(&root.join("nibabel"), ".nii");
    nii.extend(files(&root.join("nibabel"), ".nii.gz"));
    assert!(nii.len() >= 8, "{} NIfTI samples", nii.len());
    let mut versions = std::collections::BTreeSet::new();
    for path in &nii {
        let name = path.file_name().unwrap().to_str().unwrap();
        let t = dir.path().join(format!("{name}.tgm"));
        let (code, err) = tgm(&["convert-nifti", s(path), "-o", s(&t)]);
        assert_eq!(code, 0, "{name}: {err}");
        let (want, dims, big) = reference_nifti(path);
        let msg = decode(&t);
        let obj = &msg.objects[0];
        let shape: Vec<u64> = dims.iter().rev().copied().collect();
        assert_eq!(obj.descriptor.shape, shape, "{name}");
        assert!(
            same_voxels(&obj.data, &want, obj.descriptor.dtype, big),
            "{name}: voxels differ from the independent decode"
        );
        let nifti_meta = msg.metadata.base[0].get("nifti").unwrap();
        versions.insert(nifti_meta.get("version").unwrap().as_u64().unwrap());

        // Back to NIfTI and in again: same voxels, same affines.
        let back = dir.path().join(format!("back_{name}"));
        let (code, err) = tgm(&["to-nifti", s(&t), "-o", s(&back)]);
        assert_eq!(code, 0, "{name}: {err}");
        let (again, _, _) = reference_nifti(&back);
        assert!(
            same_voxels(&again, &want, obj.descriptor.dtype, big),
            "{name}: voxels after to-nifti"
        );
        // Header extensions come back byte for byte.
        let (orig, again) = (read_maybe_gz(path), read_maybe_gz(&back));
        let (ra, rb) = (extension_region(&orig), extension_region(&again));
        if ra[0] != 0 {
            assert_eq!(ra, rb, "{name}: header extensions after to-nifti");
        }
        let t2 = dir.path().join(format!("again_{name}.tgm"));
        assert_eq!(tgm(&["convert-nifti", s(&back), "-o", s(&t2)]).0, 0);
        let meta2 = decode(&t2).metadata.base[0].get("nifti").unwrap().clone();
        for key in ["sform", "qform", "pixdim", "dim", "datatype", "version"] {
            assert_eq!(
                nifti_meta.get(key).unwrap().to_json(),
                meta2.get(key).unwrap().to_json(),
                "{name}: {key} after the round trip"
            );
        }
        eprintln!("ok {name}: shape {shape:?} {}", obj.descriptor.dtype.name());
    }
    assert!(
        versions.contains(&1) && versions.contains(&2),
        "{versions:?}"
    );
}

/// The bytes from a single-file NIfTI image's header end to its
/// `vox_offset`: the extension flag and the extensions.
fn extension_region(b: &[u8]) -> &[u8] {
    let lead: [u8; 4] = b[..4].try_into().unwrap();
    let big = i32::from_be_bytes(lead) == 348 || i32::from_be_bytes(lead) == 540;
    let at = |o: usize, n: usize| {
        let mut v = b[o..o + n].to_vec();
        if big {
            v.reverse();
        }
        v
    };
    let (start, end) = if i32::from_le_bytes(lead) == 540 || i32::from_be_bytes(lead) == 540 {
        (
            540,
            i64::from_le_bytes(at(168, 8).try_into().unwrap()) as usize,
        )
    } else {
        (
            348,
            f32::from_le_bytes(at(108, 4).try_into().unwrap()) as usize,
        )
    };
    &b[start..end]
}

/// The Python that runs the nibabel and pydicom checks:
/// `TGM_MEDICAL_PYTHON` (`.ci/medical.sh` sets up a virtual environment)
/// or `python3`; `None`, with a message, when it lacks `modules`.
fn python_with(modules: &str) -> Option<String> {
    let py = std::env::var("TGM_MEDICAL_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&py)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        medical_common::skip::skip(&format!(
            "{py} cannot import {modules} (bash .ci/medical.sh installs them)"
        ));
    }
    ok.then_some(py)
}

/// Runs `script` with `args` under `py`: its standard output.
fn run_python(py: &str, script: &str, args: &[&str]) -> String {
    let out = Command::new(py)
        .args(["-c", script])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{py} on {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn qform_and_extensions_agree_with_nibabel() {
    let Some(root) = samples() else { return };
    let Some(py) = python_with("nibabel") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = root.join("nibabel/example4d.nii.gz");
    let t = dir.path().join("e.tgm");
    let (code, err) = tgm(&["convert-nifti", s(&path), "-o", s(&t)]);
    assert_eq!(code, 0, "{err}");
    let meta = decode(&t).metadata.base[0].get("nifti").unwrap().clone();
    let script = "import sys, nibabel\n\
        h = nibabel.load(sys.argv[1]).header\n\
        print(' '.join(repr(float(x)) for x in h.get_qform()[:3].ravel()))\n\
        for e in h.extensions: print(e.get_code(), e.get_content().hex())";
    let text = run_python(&py, script, &[s(&path)]);
    let mut lines = text.lines();
    let want: Vec<f64> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let affine = meta.get("qform").unwrap().get("affine").unwrap();
    let got: Vec<f64> = affine.as_array().unwrap()[..3]
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-6, "qform {got:?} vs nibabel {want:?}");
    }
    let exts: Vec<String> = meta
        .get("extensions")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let Some(tgm::cbor::Value::Bytes(d)) = e.get("data") else {
                panic!("{}", e.to_json())
            };
            // nibabel's get_content() drops the NUL padding.
            let end = d.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let hex: String = d[..end].iter().map(|b| format!("{b:02x}")).collect();
            format!("{} {hex}", e.get("code").unwrap().as_i64().unwrap())
        })
        .collect();
    assert_eq!(exts, lines.map(str::to_string).collect::<Vec<_>>());
    assert_eq!(exts.len(), 2);
}

/// Samples that are the same image as another one in a different,
/// lossless transfer syntax.
const LOSSLESS_TWINS: [(&str, &str); 9] = [
    ("MR_small_jpeg_ls_lossless.dcm", "MR_small.dcm"),
    ("MR_small_RLE.dcm", "MR_small.dcm"),
    ("MR_small_bigendian.dcm", "MR_small.dcm"),
    ("MR_small_expb.dcm", "MR_small.dcm"),
    ("MR_small_implicit.dcm", "MR_small.dcm"),
    ("MR_small_jp2klossless.dcm", "MR_small.dcm"),
    ("rtdose_expb.dcm", "rtdose.dcm"),
    ("rtdose_expb_1frame.dcm", "rtdose_1frame.dcm"),
    ("liver_expb_1frame.dcm", "liver_1frame.dcm"),
];

/// JPEG-LS samples (lossless, near-lossless 8 and 16 bits).
const JPEG_LS: [&str; 3] = [
    "MR_small_jpeg_ls_lossless.dcm",
    "JPEGLSNearLossless_08.dcm",
    "JPEGLSNearLossless_16.dcm",
];

/// Samples that must convert (grey images in supported syntaxes).
const MUST_CONVERT: [&str; 16] = [
    "MR_small_jpeg_ls_lossless.dcm",
    "CT_small.dcm",
    "MR_small.dcm",
    "MR_small_RLE.dcm",
    "MR_small_bigendian.dcm",
    "MR_small_expb.dcm",
    "MR_small_implicit.dcm",
    "MR_small_jp2klossless.dcm",
    "JPEG2000.dcm",
    "693_J2KI.dcm",
    "image_dfl.dcm",
    "rtdose.dcm",
    "rtdose_1frame.dcm",
    "rtdose_expb.dcm",
    "examples_palette.dcm",
    "examples_overlay.dcm",
];

/// Samples refused for a stated reason.
const MUST_REFUSE: [(&str, &str); 6] = [
    ("SC_rgb_jls_lossy_line.dcm", "SamplesPerPixel 3"),
    ("MR_truncated.dcm", "claims"),
    ("SC_rgb_rle.dcm", "SamplesPerPixel 3"),
    ("JPGExtended.dcm", "1.2.840.10008.1.2.4.51"),
    ("rtdose_rle.dcm", "1.2.840.10008.1.2.5"),
    ("waveform_ecg.dcm", "without PixelData"),
];

/// A directory of pydicom samples with a non-image DICOM file and notes:
/// the images become one message per series, the rest one note each.
#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn a_directory_of_pydicom_samples_skips_what_is_not_an_image() {
    let Some(root) = samples() else { return };
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("series");
    std::fs::create_dir(&series).unwrap();
    for name in ["CT_small.dcm", "MR_small.dcm", "waveform_ecg.dcm"] {
        std::fs::copy(root.join("pydicom").join(name), series.join(name)).unwrap();
    }
    std::fs::write(series.join("README"), "study notes").unwrap();
    let out = dir.path().join("dir.tgm");
    let (code, err) = tgm(&["convert-dicom", s(&series), "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    for (name, why) in [
        ("waveform_ecg.dcm", "without PixelData"),
        ("README", "not a DICOM file"),
    ] {
        let line = format!("skipped {}: ", s(&series.join(name)));
        assert!(
            err.lines()
                .filter(|l| l.contains(&line) && l.contains(why))
                .count()
                == 1,
            "{name}: {err}"
        );
    }
    let bytes = std::fs::read(&out).unwrap();
    let f = tgm::TgmFile::from_source(bytes, &tgm::Limits::default()).unwrap();
    assert_eq!(f.num_messages(), 2, "{err}");
}

/// pydicom's CT_small.dcm de-identified: its patient name and ID emptied,
/// age removed, UIDs replaced, the method recorded.
#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn a_pydicom_sample_is_deidentified_by_the_basic_profile() {
    let Some(root) = samples() else { return };
    let path = root.join("pydicom").join("CT_small.dcm");
    let original = dicom_object::open_file(&path).unwrap();
    let text = |t| {
        original
            .element(t)
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(['\0', ' '])
            .to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("anon.tgm");
    let (code, err) = tgm(&["convert-dicom", "--deidentify", s(&path), "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let msg = decode(&out);
    let attrs = msg.metadata.base[0]
        .get("dicom")
        .and_then(|d| d.get("attributes"))
        .unwrap();
    let get = |k: &str| attrs.get(k).and_then(tgm::cbor::Value::as_text);
    let json = tgm::cbor::Value::from(msg.metadata.base[0].clone()).to_json();
    for (k, tag) in [
        ("PatientName", dicom_dictionary_std::tags::PATIENT_NAME),
        ("PatientID", dicom_dictionary_std::tags::PATIENT_ID),
    ] {
        assert_eq!(get(k), Some(""), "{k}");
        assert!(!json.contains(&text(tag)), "{k} leaked");
    }
    let series = text(dicom_dictionary_std::tags::SERIES_INSTANCE_UID);
    assert!(get("SeriesInstanceUID").unwrap().starts_with("2.25."));
    assert!(!json.contains(&series));
    assert_eq!(get("PatientIdentityRemoved"), Some("YES"));
    assert_eq!(get("Modality"), Some("CT"));
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn pydicom_samples_convert_exactly_or_fail_clearly() {
    let Some(root) = samples() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dcm = files(&root.join("pydicom"), ".dcm");
    assert!(dcm.len() >= 70, "{} DICOM samples", dcm.len());
    let mut converted = std::collections::BTreeMap::new();
    for path in &dcm {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let t = dir.path().join(format!("{name}.tgm"));
        let (code, err) = tgm(&["convert-dicom", s(path), "-o", s(&t)]);
        assert!(
            !err.contains("panicked") && code != 101,
            "{name} panicked: {err}"
        );
        if code != 0 {
            assert!(
                err.contains(&name),
                "{name}: error does not name the file: {err}"
            );
            assert!(!MUST_CONVERT.contains(&name.as_str()), "{name}: {err}");
            if let Some((_, why)) = MUST_REFUSE.iter().find(|(n, _)| *n == name) {
                assert!(err.contains(why), "{name}: {err}");
            }
            eprintln!("refused {name}: {}", err.trim());
            continue;
        }
        assert!(
            !MUST_REFUSE.iter().any(|(n, _)| *n == name),
            "{name} converted but is expected to be refused"
        );
        let msg = decode(&t);
        assert_eq!(msg.objects.len(), 1, "{name}");
        let obj = &msg.objects[0];
        // Independent of tgm's reading: dicom-pixeldata's own decode.
        let reference = dicom_object::open_file(path).unwrap();
        let pixels = reference.decode_pixel_data().unwrap();
        let want = pixels.data();
        let twin_of_be = name.contains("expb") || name.contains("bigendian");
        if !twin_of_be {
            // dicom-pixeldata returns big-endian native data word by word
            // (16-bit words even for 32-bit samples); big-endian samples are
            // checked against their little-endian twins below instead.
            assert!(
                obj.data == want,
                "{name}: voxels differ from dicom-pixeldata's decode"
            );
        }
        let frames = u64::from(pixels.number_of_frames());
        let (rows, cols) = (u64::from(pixels.rows()), u64::from(pixels.columns()));
        assert_eq!(obj.descriptor.shape, [frames, rows, cols], "{name}");
        eprintln!("ok {name}: shape {:?}", obj.descriptor.shape);
        converted.insert(name, obj.data.clone());
    }
    for must in MUST_CONVERT {
        assert!(converted.contains_key(must), "{must} did not convert");
    }
    for (a, b) in LOSSLESS_TWINS {
        if let (Some(x), Some(y)) = (converted.get(a), converted.get(b)) {
            assert!(x == y, "{a} and {b} hold the same image");
        }
    }

    // CT_small back to DICOM and in again: same voxels and geometry.
    let t = dir.path().join("CT_small.dcm.tgm");
    let out = dir.path().join("ct_back");
    let (code, err) = tgm(&["to-dicom", s(&t), "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let t2 = dir.path().join("ct_again.tgm");
    let (code, err) = tgm(&["convert-dicom", s(&out), "-o", s(&t2)]);
    assert_eq!(code, 0, "{err}");
    let (a, b) = (decode(&t), decode(&t2));
    assert!(a.objects[0].data == b.objects[0].data, "CT_small voxels");
    let geo = |m: &tgm::DecodedMessage, k: &str| {
        m.metadata.base[0]
            .get("dicom")
            .unwrap()
            .get(k)
            .map(|v| v.to_json())
    };
    for k in [
        "image_orientation_patient",
        "image_position_patient",
        "pixel_spacing",
    ] {
        assert_eq!(geo(&a, k), geo(&b, k), "CT_small {k}");
    }
}

/// `UN_sequence.dcm` (a sequence of VR UN that dicom-rs reads in the
/// wrong encoding) and 60 seeded 1-8 byte mutations of `MR_small_RLE.dcm`:
/// each converts or fails with an error naming the file, in 1 GiB, never
/// with a panic or an abort.
#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn hostile_variants_of_pydicom_samples_fail_cleanly_in_bounded_memory() {
    let Some(root) = samples() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = vec![root.join("pydicom/UN_sequence.dcm")];
    let rle = std::fs::read(root.join("pydicom/MR_small_RLE.dcm")).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for k in 0..60 {
        let mut b = rle.clone();
        for _ in 0..1 + next() % 8 {
            let at = (next() % b.len() as u64) as usize;
            b[at] = next() as u8;
        }
        let p = dir.path().join(format!("mutant{k}.dcm"));
        std::fs::write(&p, b).unwrap();
        cases.push(p);
    }
    for path in &cases {
        let name = path.file_name().unwrap().to_str().unwrap();
        let out = dir.path().join(format!("{name}.tgm"));
        let (code, err) = tgm_limited(&["convert-dicom", s(path), "-o", s(&out)]);
        assert!(
            (code == 0 || code == 1) && !err.contains("panicked"),
            "{name}: exit {code}: {err}"
        );
        if code != 0 {
            assert!(err.contains(name), "{name}: {err}");
            assert!(!out.exists(), "{name}: output left behind");
        }
    }
}

/// tgm's JPEG-LS decode (CharLS) equals pydicom's through pylibjpeg-libjpeg
/// (Thomas Richter's libjpeg), an independent implementation. The
/// near-lossless samples have no SeriesInstanceUID, which tgm needs to
/// group files: pydicom adds one to a copy (pixel data untouched).
#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn jpeg_ls_samples_match_an_independent_decoder() {
    let Some(root) = samples() else { return };
    let Some(py) = python_with("pydicom, pylibjpeg, libjpeg") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = "import sys, pydicom\n\
        d = pydicom.dcmread(sys.argv[1])\n\
        d.SeriesInstanceUID = d.get('SeriesInstanceUID', '1.2.826.0.1.3680043.2.1143.1')\n\
        d.save_as(sys.argv[2])\n\
        a = d.pixel_array\n\
        open(sys.argv[3], 'wb').write(a.astype(a.dtype.newbyteorder('<')).tobytes())";
    for name in JPEG_LS {
        let path = root.join("pydicom").join(name);
        let copy = dir.path().join(name);
        let raw = dir.path().join(format!("{name}.raw"));
        run_python(&py, script, &[s(&path), s(&copy), s(&raw)]);
        let t = dir.path().join(format!("{name}.tgm"));
        let (code, err) = tgm(&["convert-dicom", s(&copy), "-o", s(&t)]);
        assert_eq!(code, 0, "{name}: {err}");
        let want = std::fs::read(&raw).unwrap();
        let obj = &decode(&t).objects[0];
        assert!(!want.is_empty());
        assert!(
            obj.data == want,
            "{name}: differs from pylibjpeg-libjpeg's decode"
        );
        eprintln!("ok {name}: {} bytes equal", want.len());
    }
}
