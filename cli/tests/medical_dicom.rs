//! `tgm convert-dicom` end to end on DICOM series generated here with
//! dicom-object (no downloaded data).
#![cfg(feature = "dicom")]

use std::path::{Path, PathBuf};
use std::process::Command;

use dicom_core::value::{PixelFragmentSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype};

const IMPLICIT_LE: &str = "1.2.840.10008.1.2";
const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";
const EXPLICIT_BE: &str = "1.2.840.10008.1.2.2";
const JPEG_BASELINE: &str = "1.2.840.10008.1.2.4.50";
const CT_STORAGE: &str = "1.2.840.10008.5.1.4.1.1.2";

fn tgm(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Identifying attributes written into every generated slice, with the
/// keyword the metadata uses.
const IDENTIFYING: [(&str, Tag, VR, &str); 17] = [
    ("PatientName", tags::PATIENT_NAME, VR::PN, "Doe^Jane"),
    ("PatientID", tags::PATIENT_ID, VR::LO, "MRN-0042"),
    (
        "PatientBirthDate",
        tags::PATIENT_BIRTH_DATE,
        VR::DA,
        "19700101",
    ),
    (
        "ReferringPhysicianName",
        tags::REFERRING_PHYSICIAN_NAME,
        VR::PN,
        "Who^Doctor",
    ),
    (
        "InstitutionName",
        tags::INSTITUTION_NAME,
        VR::LO,
        "General Hospital",
    ),
    ("AccessionNumber", tags::ACCESSION_NUMBER, VR::SH, "ACC123"),
    ("StudyID", tags::STUDY_ID, VR::SH, "S1"),
    ("OperatorsName", tags::OPERATORS_NAME, VR::PN, "Op^Erator"),
    ("StudyDate", tags::STUDY_DATE, VR::DA, "20240102"),
    ("StudyTime", tags::STUDY_TIME, VR::TM, "101112"),
    ("SeriesDate", tags::SERIES_DATE, VR::DA, "20240103"),
    ("SeriesTime", tags::SERIES_TIME, VR::TM, "131415"),
    (
        "PatientAddress",
        tags::PATIENT_ADDRESS,
        VR::LO,
        "1 Main Street",
    ),
    ("OtherPatientIDs", Tag(0x0010, 0x1000), VR::LO, "ALT-77"),
    (
        "PerformingPhysicianName",
        tags::PERFORMING_PHYSICIAN_NAME,
        VR::PN,
        "Per^Former",
    ),
    (
        "InstitutionAddress",
        tags::INSTITUTION_ADDRESS,
        VR::ST,
        "2 Side Road",
    ),
    ("StationName", tags::STATION_NAME, VR::SH, "CT01"),
];

struct SliceSpec {
    series: &'static str,
    rows: u16,
    cols: u16,
    z: f64,
    instance: i32,
    ts: &'static str,
    values: Vec<i16>,
    pixel_data: bool,
}

fn write_slice(path: &Path, sp: &SliceSpec) {
    let ds = |v: &[f64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\\")
    };
    let sop = format!("1.2.3.4.{}.{}", sp.instance, (sp.z * 10.0) as i64);
    let mut elems = vec![
        DataElement::new(tags::SOP_CLASS_UID, VR::UI, CT_STORAGE),
        DataElement::new(tags::SOP_INSTANCE_UID, VR::UI, sop.as_str()),
        DataElement::new(tags::STUDY_INSTANCE_UID, VR::UI, "1.2.3.100"),
        DataElement::new(tags::SERIES_INSTANCE_UID, VR::UI, sp.series),
        DataElement::new(tags::FRAME_OF_REFERENCE_UID, VR::UI, "1.2.3.300"),
        DataElement::new(tags::MODALITY, VR::CS, "CT"),
        DataElement::new(
            tags::INSTANCE_NUMBER,
            VR::IS,
            sp.instance.to_string().as_str(),
        ),
        DataElement::new(
            tags::IMAGE_POSITION_PATIENT,
            VR::DS,
            ds(&[-12.5, 30.0, sp.z]).as_str(),
        ),
        DataElement::new(
            tags::IMAGE_ORIENTATION_PATIENT,
            VR::DS,
            ds(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]).as_str(),
        ),
        DataElement::new(tags::PIXEL_SPACING, VR::DS, "0.75\\0.5"),
        DataElement::new(tags::SLICE_THICKNESS, VR::DS, "2.5"),
        DataElement::new(tags::RESCALE_SLOPE, VR::DS, "1"),
        DataElement::new(tags::RESCALE_INTERCEPT, VR::DS, "-1024"),
        DataElement::new(tags::SAMPLES_PER_PIXEL, VR::US, PrimitiveValue::from(1u16)),
        DataElement::new(tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
        DataElement::new(tags::ROWS, VR::US, PrimitiveValue::from(sp.rows)),
        DataElement::new(tags::COLUMNS, VR::US, PrimitiveValue::from(sp.cols)),
        DataElement::new(tags::BITS_ALLOCATED, VR::US, PrimitiveValue::from(16u16)),
        DataElement::new(tags::BITS_STORED, VR::US, PrimitiveValue::from(16u16)),
        DataElement::new(tags::HIGH_BIT, VR::US, PrimitiveValue::from(15u16)),
        DataElement::new(
            tags::PIXEL_REPRESENTATION,
            VR::US,
            PrimitiveValue::from(1u16),
        ),
    ];
    for (_, tag, vr, v) in IDENTIFYING {
        elems.push(DataElement::new(tag, vr, v));
    }
    let mut obj = InMemDicomObject::from_element_iter(elems);
    if sp.pixel_data {
        if sp.ts == JPEG_BASELINE {
            obj.put(DataElement::new(
                tags::PIXEL_DATA,
                VR::OB,
                PixelFragmentSequence::new(vec![], vec![vec![0xff, 0xd8, 0xff, 0xd9]]),
            ));
        } else {
            let words: Vec<u16> = sp.values.iter().map(|&v| v as u16).collect();
            obj.put(DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U16(words.into()),
            ));
        }
    }
    obj.with_meta(
        FileMetaTableBuilder::new()
            .transfer_syntax(sp.ts)
            .media_storage_sop_class_uid(CT_STORAGE)
            .media_storage_sop_instance_uid(sop.as_str()),
    )
    .unwrap()
    .write_to_file(path)
    .unwrap();
}

fn pixels(k: usize, n: usize) -> Vec<i16> {
    (0..n)
        .map(|i| (k as i16 * 1000 - 1500) + i as i16 * if i % 2 == 0 { 7 } else { -13 })
        .collect()
}

/// Four 3x5 slices at z = 10, 12.5, 15, 17.5 written in scrambled order,
/// with scrambled instance numbers, cycling the native transfer syntaxes.
fn series(dir: &Path, series: &'static str) -> Vec<PathBuf> {
    let order = [2usize, 0, 3, 1];
    let syntaxes = [IMPLICIT_LE, EXPLICIT_LE, EXPLICIT_BE, EXPLICIT_LE];
    let mut paths = Vec::new();
    for (file_no, &k) in order.iter().enumerate() {
        let p = dir.join(format!("{series}_{file_no}.dcm"));
        write_slice(
            &p,
            &SliceSpec {
                series,
                rows: 3,
                cols: 5,
                z: 10.0 + 2.5 * k as f64,
                instance: 40 - k as i32,
                ts: syntaxes[file_no],
                values: pixels(k, 15),
                pixel_data: true,
            },
        );
        paths.push(p);
    }
    paths
}

fn decode_file(path: &Path) -> tgm::DecodedMessage {
    let bytes = std::fs::read(path).unwrap();
    tgm::decode(&bytes, &DecodeOptions::default().native_byte_order(false)).unwrap()
}

fn le_bytes(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn a_series_becomes_one_volume_ordered_along_the_normal() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    series(&input, "1.2.3.200");
    let out = dir.path().join("ct.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&input), "-o", s(&out)]);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    assert_eq!(msg.objects.len(), 1);
    let o = &msg.objects[0];
    assert_eq!(o.descriptor.dtype, Dtype::Int16);
    assert_eq!(o.descriptor.shape, [4, 3, 5]);
    assert_eq!(o.descriptor.byte_order, ByteOrder::Little);
    let want: Vec<u8> = (0..4).flat_map(|k| le_bytes(&pixels(k, 15))).collect();
    assert_eq!(o.data, want);
    let d = msg.metadata.base[0].get("dicom").unwrap();
    let f = |k: &str| d.get(k).unwrap().as_f64().unwrap();
    assert_eq!(f("slice_spacing"), 2.5);
    assert_eq!(f("rescale_slope"), 1.0);
    assert_eq!(f("rescale_intercept"), -1024.0);
    let arr = |k: &str| -> Vec<f64> {
        d.get(k)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    assert_eq!(arr("image_position_patient"), [-12.5, 30.0, 10.0]);
    assert_eq!(arr("pixel_spacing"), [0.75, 0.5]);
    assert_eq!(
        arr("image_orientation_patient"),
        [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    );
    let attrs = d.get("attributes").unwrap();
    assert_eq!(attrs.get("Modality").and_then(Value::as_text), Some("CT"));
    assert_eq!(
        attrs.get("SeriesInstanceUID").and_then(Value::as_text),
        Some("1.2.3.200")
    );
    for (name, _, _, v) in IDENTIFYING {
        assert_eq!(attrs.get(name).and_then(Value::as_text), Some(v), "{name}");
    }
}

#[test]
fn deidentify_removes_each_identifying_attribute_and_replaces_uids() {
    let dir = tempfile::tempdir().unwrap();
    let files = series(dir.path(), "1.2.3.200");
    let out = dir.path().join("anon.tgm");
    let mut args = vec!["convert-dicom", "--deidentify", "-o", s(&out)];
    args.extend(files.iter().map(|p| s(p)));
    let (ok, err) = tgm(&args);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    let d = msg.metadata.base[0].get("dicom").unwrap();
    let attrs = d.get("attributes").unwrap();
    let report = err
        .lines()
        .find(|l| l.starts_with("de-identified"))
        .unwrap();
    for (name, _, _, value) in IDENTIFYING {
        assert!(attrs.get(name).is_none(), "{name} kept");
        assert!(report.contains(name), "{name} not reported: {report}");
        assert!(
            !msg.metadata.to_string_lossy().contains(value),
            "{value} leaked"
        );
    }
    for uid in [
        "StudyInstanceUID",
        "SeriesInstanceUID",
        "FrameOfReferenceUID",
    ] {
        let v = attrs.get(uid).and_then(Value::as_text).unwrap();
        assert!(v.starts_with("2.25."), "{uid} = {v}");
        assert!(report.contains(uid), "{uid} not reported: {report}");
    }
    assert_eq!(attrs.get("Modality").and_then(Value::as_text), Some("CT"));
    assert!(d.get("instance_numbers").is_none());
}

trait Lossy {
    fn to_string_lossy(&self) -> String;
}

impl Lossy for tgm::GlobalMetadata {
    fn to_string_lossy(&self) -> String {
        self.base
            .iter()
            .map(|m| Value::from(m.clone()).to_json())
            .collect()
    }
}

#[test]
fn several_series_become_several_objects() {
    let dir = tempfile::tempdir().unwrap();
    series(dir.path(), "1.2.3.201");
    series(dir.path(), "1.2.3.200");
    let out = dir.path().join("two.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(dir.path()), "-o", s(&out)]);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    assert_eq!(msg.objects.len(), 2);
    let uid = |i: usize| {
        msg.metadata.base[i]
            .get("dicom")
            .and_then(|d| d.get("attributes"))
            .and_then(|a| a.get("SeriesInstanceUID"))
            .and_then(Value::as_text)
            .unwrap()
            .to_string()
    };
    assert_eq!([uid(0), uid(1)], ["1.2.3.200", "1.2.3.201"]);
}

#[test]
fn inconsistent_or_unsupported_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.tgm");
    let spec = |z: f64, instance: i32, cols: u16| SliceSpec {
        series: "1.2.3.9",
        rows: 3,
        cols,
        z,
        instance,
        ts: EXPLICIT_LE,
        values: pixels(0, 3 * cols as usize),
        pixel_data: true,
    };
    let a = dir.path().join("a.dcm");
    let b = dir.path().join("b.dcm");
    let c = dir.path().join("c.dcm");
    write_slice(&a, &spec(0.0, 1, 5));
    write_slice(&b, &spec(2.0, 2, 5));

    // Size mismatch.
    write_slice(&c, &spec(4.0, 3, 4));
    let (ok, err) = tgm(&["convert-dicom", s(&a), s(&b), s(&c), "-o", s(&out)]);
    assert!(
        !ok && err.contains("differ in size") && err.contains("c.dcm"),
        "{err}"
    );

    // Gap in the positions.
    write_slice(&c, &spec(8.0, 3, 5));
    let (ok, err) = tgm(&["convert-dicom", s(&a), s(&b), s(&c), "-o", s(&out)]);
    assert!(
        !ok && err.contains("gap") && err.contains("b.dcm") && err.contains("c.dcm"),
        "{err}"
    );

    // Duplicate position.
    write_slice(&c, &spec(2.0, 3, 5));
    let (ok, err) = tgm(&["convert-dicom", s(&a), s(&b), s(&c), "-o", s(&out)]);
    assert!(!ok && err.contains("same position"), "{err}");

    // Missing pixel data.
    let mut no_pixels = spec(4.0, 3, 5);
    no_pixels.pixel_data = false;
    write_slice(&c, &no_pixels);
    let (ok, err) = tgm(&["convert-dicom", s(&a), s(&c), "-o", s(&out)]);
    assert!(
        !ok && err.contains("c.dcm") && err.contains("PixelData"),
        "{err}"
    );

    // Compressed transfer syntax.
    let mut jpeg = spec(4.0, 3, 5);
    jpeg.ts = JPEG_BASELINE;
    write_slice(&c, &jpeg);
    let (ok, err) = tgm(&["convert-dicom", s(&c), "-o", s(&out)]);
    assert!(
        !ok && err.contains("c.dcm") && err.contains(JPEG_BASELINE),
        "{err}"
    );

    // Not DICOM at all.
    std::fs::write(&c, b"plain text").unwrap();
    let (ok, err) = tgm(&["convert-dicom", s(&c), "-o", s(&out)]);
    assert!(!ok && err.contains("c.dcm"), "{err}");
    assert!(!out.exists());
}

#[test]
fn to_dicom_round_trips_voxels_and_geometry() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    series(&input, "1.2.3.200");
    let first = dir.path().join("first.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&input), "-o", s(&first)]);
    assert!(ok, "{err}");
    let slices = dir.path().join("slices");
    let (ok, err) = tgm(&["to-dicom", s(&first), "-o", s(&slices)]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_dir(&slices).unwrap().count(), 4);
    let (ok, err) = tgm(&["to-dicom", s(&first), "-o", s(&slices)]);
    assert!(!ok && err.contains("already exists"), "{err}");

    let second = dir.path().join("second.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&slices), "-o", s(&second)]);
    assert!(ok, "{err}");
    let (a, b) = (decode_file(&first), decode_file(&second));
    assert_eq!(a.objects[0].descriptor.shape, b.objects[0].descriptor.shape);
    assert_eq!(a.objects[0].data, b.objects[0].data);
    let geo = |m: &tgm::DecodedMessage| {
        let d = m.metadata.base[0].get("dicom").unwrap();
        [
            "image_orientation_patient",
            "image_position_patient",
            "pixel_spacing",
            "slice_spacing",
            "slice_thickness",
            "rescale_slope",
            "rescale_intercept",
        ]
        .map(|k| d.get(k).unwrap().to_json())
    };
    assert_eq!(geo(&a), geo(&b));
    let uid = |m: &tgm::DecodedMessage| {
        m.metadata.base[0]
            .get("dicom")
            .and_then(|d| d.get("attributes"))
            .and_then(|a| a.get("SeriesInstanceUID"))
            .and_then(Value::as_text)
            .unwrap()
            .to_string()
    };
    assert_eq!(uid(&a), uid(&b));
}

/// Runs tgm with its address space limited to 1 GiB, so a value
/// allocated from a hostile length fails the run.
fn tgm_limited(args: &[&str]) -> (bool, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_small_file_claiming_a_4_gib_element_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.tgm");
    let good = dir.path().join("good.dcm");
    write_slice(
        &good,
        &SliceSpec {
            series: "1.2.3.66",
            rows: 2,
            cols: 2,
            z: 0.0,
            instance: 1,
            ts: EXPLICIT_LE,
            values: pixels(0, 4),
            pixel_data: true,
        },
    );
    // The same file with PixelData's 32-bit length set to 0xFFFFFFF0.
    let mut bytes = std::fs::read(&good).unwrap();
    let header = [0xE0, 0x7F, 0x10, 0x00, b'O', b'W', 0, 0];
    let at = bytes
        .windows(8)
        .rposition(|w| w == header)
        .expect("PixelData header");
    bytes[at + 8..at + 12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let bad = dir.path().join("bad.dcm");
    std::fs::write(&bad, &bytes).unwrap();
    assert!(bytes.len() < 4096);

    let (ok, err) = tgm_limited(&["convert-dicom", s(&good), "-o", s(&out)]);
    assert!(ok, "the limit leaves room for a normal run: {err}");
    std::fs::remove_file(&out).unwrap();
    let (ok, err) = tgm_limited(&["convert-dicom", s(&bad), "-o", s(&out)]);
    assert!(!ok);
    assert!(
        err.contains("bad.dcm")
            && err.contains("(7FE0,0010)")
            && err.contains(&format!("claims {} bytes", 0xFFFF_FFF0u32)),
        "{err}"
    );
    assert!(!out.exists());
}
