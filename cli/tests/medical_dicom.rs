//! `tgm convert-dicom` end to end on DICOM series generated here with
//! dicom-object (no downloaded data).
#![cfg(feature = "dicom")]
// `common` and `medical_common` both carry tests/common/skip.rs, the one skip rule.
#![allow(clippy::duplicate_mod)]

use std::path::{Path, PathBuf};

use dicom_core::value::{PixelFragmentSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
use tgm::cbor::Value;
use tgm::{ByteOrder, DecodeOptions, Dtype};

#[cfg(target_os = "linux")]
mod common;
mod medical_common;
use medical_common::{s, tgm};

const IMPLICIT_LE: &str = "1.2.840.10008.1.2";
const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";
const EXPLICIT_BE: &str = "1.2.840.10008.1.2.2";
const JPEG_BASELINE: &str = "1.2.840.10008.1.2.4.50";
const RLE_LOSSLESS: &str = "1.2.840.10008.1.2.5";
const DEFLATED_LE: &str = "1.2.840.10008.1.2.1.99";
const JPEG_LS: &str = "1.2.840.10008.1.2.4.80";
const CT_STORAGE: &str = "1.2.840.10008.5.1.4.1.1.2";

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
        if sp.ts == RLE_LOSSLESS {
            let frame = rle_encode_i16(&sp.values);
            obj.put(DataElement::new(
                tags::PIXEL_DATA,
                VR::OB,
                PixelFragmentSequence::new(vec![], vec![frame]),
            ));
        } else if sp.ts == JPEG_BASELINE {
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

/// PackBits of one byte plane (PS3.5 Annex G): runs of 3 or more equal
/// bytes replicated, the rest literal; padded to even length.
fn packbits(plane: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < plane.len() {
        let run = plane[i..]
            .iter()
            .take(128)
            .take_while(|&&b| b == plane[i])
            .count();
        if run >= 3 {
            out.push((257 - run) as u8);
            out.push(plane[i]);
            i += run;
        } else {
            let start = i;
            while i < plane.len() && i - start < 128 {
                let r = plane[i..]
                    .iter()
                    .take(3)
                    .take_while(|&&b| b == plane[i])
                    .count();
                if r >= 3 {
                    break;
                }
                i += 1;
            }
            out.push((i - start - 1) as u8);
            out.extend_from_slice(&plane[start..i]);
        }
    }
    if out.len() % 2 == 1 {
        out.push(0);
    }
    out
}

/// One RLE Lossless frame of 16-bit samples: header, high-byte segment,
/// low-byte segment.
fn rle_encode_i16(values: &[i16]) -> Vec<u8> {
    let hi: Vec<u8> = values.iter().map(|v| v.to_be_bytes()[0]).collect();
    let lo: Vec<u8> = values.iter().map(|v| v.to_be_bytes()[1]).collect();
    let (a, b) = (packbits(&hi), packbits(&lo));
    let mut header = [0u32; 16];
    header[0] = 2;
    header[1] = 64;
    header[2] = 64 + a.len() as u32;
    let mut out: Vec<u8> = header.iter().flat_map(|x| x.to_le_bytes()).collect();
    out.extend(a);
    out.extend(b);
    out
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

/// Attributes added to the slices of the de-identification test, beyond
/// [`IDENTIFYING`]: patient characteristics, device and institution
/// identity, descriptions, and a private attribute with its creator.
const MORE: [(&str, Tag, VR, &str); 10] = [
    ("PatientSex", tags::PATIENT_SEX, VR::CS, "F"),
    ("PatientAge", tags::PATIENT_AGE, VR::AS, "054Y"),
    ("PatientSize", tags::PATIENT_SIZE, VR::DS, "1.68"),
    ("PatientWeight", tags::PATIENT_WEIGHT, VR::DS, "61.5"),
    (
        "DeviceSerialNumber",
        tags::DEVICE_SERIAL_NUMBER,
        VR::LO,
        "SN-998877",
    ),
    (
        "InstitutionalDepartmentName",
        tags::INSTITUTIONAL_DEPARTMENT_NAME,
        VR::LO,
        "Radiology West",
    ),
    (
        "StudyDescription",
        tags::STUDY_DESCRIPTION,
        VR::LO,
        "Chest of Jane",
    ),
    (
        "SeriesDescription",
        tags::SERIES_DESCRIPTION,
        VR::LO,
        "Axial Jane",
    ),
    ("", Tag(0x0009, 0x0010), VR::LO, "ACME PRIVATE"),
    ("", Tag(0x0009, 0x1001), VR::LO, "PRIVATE-SECRET"),
];

/// What becomes of an attribute in the archive.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Gone,
    Empty,
    Kept,
}

/// PS3.15 Table E.1-1 for the attributes the slices carry: (keyword,
/// basic profile, with all four retain options).
const FATES: [(&str, Fate, Fate); 25] = [
    ("PatientName", Fate::Empty, Fate::Empty),
    ("PatientID", Fate::Empty, Fate::Empty),
    ("PatientBirthDate", Fate::Empty, Fate::Empty),
    ("ReferringPhysicianName", Fate::Empty, Fate::Empty),
    ("InstitutionName", Fate::Gone, Fate::Kept),
    ("AccessionNumber", Fate::Empty, Fate::Empty),
    ("StudyID", Fate::Empty, Fate::Empty),
    ("OperatorsName", Fate::Gone, Fate::Gone),
    ("StudyDate", Fate::Empty, Fate::Kept),
    ("StudyTime", Fate::Empty, Fate::Kept),
    ("SeriesDate", Fate::Gone, Fate::Kept),
    ("SeriesTime", Fate::Gone, Fate::Kept),
    ("PatientAddress", Fate::Gone, Fate::Gone),
    ("OtherPatientIDs", Fate::Gone, Fate::Gone),
    ("PerformingPhysicianName", Fate::Gone, Fate::Gone),
    ("InstitutionAddress", Fate::Gone, Fate::Kept),
    ("StationName", Fate::Gone, Fate::Kept),
    ("PatientSex", Fate::Empty, Fate::Kept),
    ("PatientAge", Fate::Gone, Fate::Kept),
    ("PatientSize", Fate::Gone, Fate::Kept),
    ("PatientWeight", Fate::Gone, Fate::Kept),
    ("DeviceSerialNumber", Fate::Gone, Fate::Kept),
    ("InstitutionalDepartmentName", Fate::Gone, Fate::Kept),
    ("StudyDescription", Fate::Gone, Fate::Gone),
    ("SeriesDescription", Fate::Gone, Fate::Gone),
];

const RETAIN_ALL: [&str; 4] = [
    "--retain-patient-characteristics",
    "--retain-full-dates",
    "--retain-device-identity",
    "--retain-institution-identity",
];

/// Two series of one study in `dir`, every slice carrying [`IDENTIFYING`]
/// and [`MORE`].
fn identified_study(dir: &Path) {
    for uid in ["1.2.3.200", "1.2.3.201"] {
        for p in series(dir, uid) {
            edit_file(&p, |o| {
                for (_, tag, vr, v) in MORE {
                    o.put(DataElement::new(tag, vr, v));
                }
            });
        }
    }
}

fn attribute(msg: &tgm::DecodedMessage, name: &str) -> Option<String> {
    msg.metadata.base[0]
        .get("dicom")?
        .get("attributes")?
        .get(name)?
        .as_text()
        .map(str::to_string)
}

fn quoted(v: &str) -> String {
    format!("\"{v}\"")
}

fn value_of(name: &str) -> &'static str {
    IDENTIFYING
        .iter()
        .chain(&MORE)
        .find(|a| a.0 == name)
        .map(|a| a.3)
        .unwrap()
}

#[test]
fn deidentify_applies_the_basic_profile_and_its_retain_options() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    identified_study(&input);
    for (retain, column) in [(&[][..], 1), (&RETAIN_ALL[..], 2)] {
        let out = dir.path().join(format!("anon{column}.tgm"));
        let mut args = vec!["convert-dicom", "--deidentify", s(&input), "-o", s(&out)];
        args.extend(retain);
        let (ok, err) = tgm(&args);
        assert!(ok, "{err}");
        let report = err
            .lines()
            .find(|l| l.starts_with("de-identified"))
            .unwrap();
        let msgs = decode_messages(&out);
        assert_eq!(msgs.len(), 2);
        let json = msgs
            .iter()
            .map(|m| m.metadata.to_string_lossy())
            .collect::<String>();
        for (name, basic, all) in FATES {
            let fate = if column == 1 { basic } else { all };
            let got = attribute(&msgs[0], name);
            match fate {
                Fate::Gone => {
                    assert_eq!(got, None, "{name} {retain:?}");
                    assert!(!json.contains(&quoted(value_of(name))), "{name} leaked");
                    assert!(report.contains(name), "{name}: {report}");
                }
                Fate::Empty => {
                    assert_eq!(got.as_deref(), Some(""), "{name} {retain:?}");
                    assert!(!json.contains(&quoted(value_of(name))), "{name} leaked");
                }
                Fate::Kept => assert_eq!(got.as_deref(), Some(value_of(name)), "{name}"),
            }
        }
        assert!(!json.contains("PRIVATE"), "private attribute kept");
        assert_eq!(attribute(&msgs[0], "Modality").as_deref(), Some("CT"));
        assert_eq!(
            attribute(&msgs[0], "PatientIdentityRemoved").as_deref(),
            Some("YES")
        );
        let codes = msgs[0].metadata.base[0]
            .get("dicom")
            .and_then(|d| d.get("deidentification_method_codes"))
            .unwrap()
            .to_json();
        let want = if column == 1 {
            vec!["113100"]
        } else {
            vec!["113100", "113108", "113106", "113109", "113112"]
        };
        for c in &want {
            assert!(codes.contains(c), "{c}: {codes}");
        }
        assert_eq!(codes.matches("\"value\"").count(), want.len(), "{codes}");
        // UIDs: replaced, linked across the two series of the study.
        for uid in [
            "StudyInstanceUID",
            "SeriesInstanceUID",
            "FrameOfReferenceUID",
        ] {
            let v = attribute(&msgs[0], uid).unwrap();
            assert!(v.starts_with("2.25.") && v.len() <= 64, "{uid} = {v}");
            assert!(report.contains(uid), "{uid}: {report}");
        }
        for uid in ["1.2.3.100", "1.2.3.200", "1.2.3.201", "1.2.3.300"] {
            assert!(!json.contains(&quoted(uid)), "{uid} kept");
        }
        for same in ["StudyInstanceUID", "FrameOfReferenceUID"] {
            assert_eq!(attribute(&msgs[0], same), attribute(&msgs[1], same));
        }
        assert_ne!(
            attribute(&msgs[0], "SeriesInstanceUID"),
            attribute(&msgs[1], "SeriesInstanceUID")
        );
    }

    // to-dicom writes the method back.
    let back = dir.path().join("back");
    let anon = dir.path().join("anon2.tgm");
    let (ok, err) = tgm(&["to-dicom", s(&anon), "-o", s(&back)]);
    assert!(ok, "{err}");
    let f = dicom_object::open_file(back.join("slice_00000.dcm")).unwrap();
    let text = |t: Tag| {
        f.element(t)
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end()
            .to_string()
    };
    assert_eq!(text(tags::PATIENT_IDENTITY_REMOVED), "YES");
    assert!(text(tags::DEIDENTIFICATION_METHOD)
        .starts_with("Basic Application Confidentiality Profile"));
    let items = f
        .element(tags::DEIDENTIFICATION_METHOD_CODE_SEQUENCE)
        .unwrap()
        .items()
        .unwrap();
    let values: Vec<String> = items
        .iter()
        .map(|i| {
            i.element(tags::CODE_VALUE)
                .unwrap()
                .to_str()
                .unwrap()
                .trim_end()
                .to_string()
        })
        .collect();
    assert_eq!(values, ["113100", "113108", "113106", "113109", "113112"]);
    assert!(items.iter().all(|i| i
        .element(tags::CODING_SCHEME_DESIGNATOR)
        .unwrap()
        .to_str()
        .unwrap()
        .trim_end()
        == "DCM"));
}

#[test]
fn replacement_uids_are_keyed_stable_with_a_key_and_fresh_without() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    series(&input, "1.2.3.200");
    let key = dir.path().join("key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef").unwrap();
    let run = |name: &str, key: Option<&Path>| -> String {
        let out = dir.path().join(name);
        let mut args = vec!["convert-dicom", "--deidentify", s(&input), "-o", s(&out)];
        if let Some(k) = key {
            args.extend(["--deid-key", s(k)]);
        }
        let (ok, err) = tgm(&args);
        assert!(ok, "{err}");
        attribute(&decode_file(&out), "SeriesInstanceUID").unwrap()
    };
    let (k1, k2) = (run("k1.tgm", Some(&key)), run("k2.tgm", Some(&key)));
    assert_eq!(k1, k2);
    let (r1, r2) = (run("r1.tgm", None), run("r2.tgm", None));
    assert_ne!(r1, r2);
    assert_ne!(r1, k1);
    std::fs::write(&key, b"short").unwrap();
    let (ok, err) = tgm(&[
        "convert-dicom",
        "--deidentify",
        "--deid-key",
        s(&key),
        s(&input),
        "-o",
        s(&dir.path().join("x.tgm")),
    ]);
    assert!(!ok && err.contains(s(&key)) && err.contains("32"), "{err}");
}

#[test]
fn burned_in_annotation_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let files = series(dir.path(), "1.2.3.200");
    edit_file(&files[2], |o| {
        o.put(DataElement::new(tags::BURNED_IN_ANNOTATION, VR::CS, "YES"));
    });
    let out = dir.path().join("b.tgm");
    let run = |extra: &[&str]| {
        let mut args = vec!["convert-dicom", s(dir.path()), "-o", s(&out), "--force"];
        args.extend(extra);
        tgm(&args)
    };
    let (ok, err) = run(&["--deidentify"]);
    assert!(
        !ok && err.contains("BurnedInAnnotation") && err.contains(s(&files[2])),
        "{err}"
    );
    assert!(!out.exists());
    let (ok, err) = run(&["--deidentify", "--allow-burned-in"]);
    assert!(ok, "{err}");
    let (ok, err) = run(&[]);
    assert!(ok, "{err}");
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

/// Every message of a .tgm file, in order (its catalogue, `spec/files.md`
/// §9, is not one).
fn decode_messages(path: &Path) -> Vec<tgm::DecodedMessage> {
    let bytes = std::fs::read(path).unwrap();
    tgm::TgmFile::from_source(bytes.clone(), &tgm::Limits::default())
        .unwrap()
        .spans()
        .iter()
        .map(|m| {
            let b = &bytes[m.offset as usize..(m.offset + m.len) as usize];
            tgm::decode(b, &DecodeOptions::default().native_byte_order(false)).unwrap()
        })
        .collect()
}

fn series_uid(msg: &tgm::DecodedMessage) -> String {
    msg.metadata.base[0]
        .get("dicom")
        .and_then(|d| d.get("attributes"))
        .and_then(|a| a.get("SeriesInstanceUID"))
        .and_then(Value::as_text)
        .unwrap()
        .to_string()
}

#[test]
fn several_series_become_one_message_each() {
    let dir = tempfile::tempdir().unwrap();
    series(dir.path(), "1.2.3.201");
    series(dir.path(), "1.2.3.200");
    let out = dir.path().join("two.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(dir.path()), "-o", s(&out)]);
    assert!(ok, "{err}");
    assert!(err.contains("1.2.3.200, 1.2.3.201"), "{err}");
    let msgs = decode_messages(&out);
    assert_eq!(msgs.len(), 2);
    assert!(msgs.iter().all(|m| m.objects.len() == 1));
    assert_eq!(
        [series_uid(&msgs[0]), series_uid(&msgs[1])],
        ["1.2.3.200", "1.2.3.201"]
    );
    // to-dicom picks the second series by message index.
    let back = dir.path().join("back");
    let (ok, err) = tgm(&["to-dicom", s(&out), "--message", "1", "-o", s(&back)]);
    assert!(ok, "{err}");
    let first = dicom_object::open_file(back.join("slice_00000.dcm")).unwrap();
    let uid = first
        .element(tags::SERIES_INSTANCE_UID)
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(uid.trim_end_matches('\0'), "1.2.3.201");
}

#[test]
fn a_directory_skips_dicomdir_and_non_image_files_with_one_note_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    series(d, "1.2.3.200");
    std::fs::write(d.join("README"), "scanner notes").unwrap();
    std::fs::write(d.join(".DS_Store"), [0u8; 8]).unwrap();
    // A DICOMDIR by its SOP class under another name, and by name.
    let dicomdir = |p: &Path| {
        InMemDicomObject::from_element_iter([DataElement::new(
            Tag(0x0004, 0x1130),
            VR::CS,
            "TGMTEST",
        )])
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax(EXPLICIT_LE)
                .media_storage_sop_class_uid("1.2.840.10008.1.3.10")
                .media_storage_sop_instance_uid("1.2.3.999"),
        )
        .unwrap()
        .write_to_file(p)
        .unwrap();
    };
    dicomdir(&d.join("DICOMDIR"));
    dicomdir(&d.join("index.dcm"));
    std::fs::create_dir(d.join("more")).unwrap();
    series(&d.join("more"), "1.2.3.201");
    let out = d.join("out.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(d), "-o", s(&out)]);
    assert!(ok, "{err}");
    for (name, why) in [
        ("README", "not a DICOM file"),
        (".DS_Store", "hidden file"),
        ("DICOMDIR", "DICOMDIR"),
        ("index.dcm", "DICOMDIR"),
        ("more", "--recursive"),
    ] {
        let line = format!("skipped {}: ", s(&d.join(name)));
        let hits: Vec<_> = err.lines().filter(|l| l.contains(&line)).collect();
        assert!(hits.len() == 1 && hits[0].contains(why), "{name}: {err}");
    }
    assert_eq!(decode_messages(&out).len(), 1);

    // --recursive reads the sub-directory's series too.
    let (ok, err) = tgm(&["convert-dicom", "-r", s(d), "-o", s(&out), "--force"]);
    assert!(ok, "{err}");
    let uids: Vec<_> = decode_messages(&out).iter().map(series_uid).collect();
    assert_eq!(uids, ["1.2.3.200", "1.2.3.201"]);

    // A DICOMDIR named on the command line is an error, not a skip.
    let (ok, err) = tgm(&[
        "convert-dicom",
        s(&d.join("DICOMDIR")),
        "-o",
        s(&d.join("x.tgm")),
    ]);
    assert!(!ok && err.contains("DICOMDIR"), "{err}");
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
    assert_eq!(series_uid(&a), series_uid(&b));
}

#[test]
fn a_slice_in_the_way_leaves_no_slice_behind() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    series(&input, "1.2.3.210");
    let archive = dir.path().join("a.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&input), "-o", s(&archive)]);
    assert!(ok, "{err}");
    // Slices 0 to 2 are written before slice 3 is refused.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let in_the_way = out.join("slice_00003.dcm");
    std::fs::write(&in_the_way, b"mine").unwrap();
    let (ok, err) = tgm(&["to-dicom", s(&archive), "-o", s(&out)]);
    assert!(
        !ok && err.contains("slice_00003.dcm") && err.contains("already exists"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["slice_00003.dcm"]);
    assert_eq!(std::fs::read(&in_the_way).unwrap(), b"mine");
}

/// Issue 46: `to-dicom` of what `convert-dicom` writes by default
/// (shuffle + zstd) writes each slice as its pixels are decoded: within
/// 1.3 × the object + 64 MiB (2.1 × when the shuffled bytes and the
/// decoded volume were both held), the files byte for byte those of the
/// same series stored uncompressed. Slices of 500 × 500 int16 do not
/// divide the decode's 4 MiB pieces, so most are gathered from two.
#[cfg(target_os = "linux")]
#[test]
fn to_dicom_of_a_shuffled_zstd_series_streams_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let (slices, side) = (270usize, 500u16);
    let per = side as usize * side as usize;
    // Written a slice at a time: nothing large is held here while tgm is
    // measured (common::peak_rss).
    for k in 0..slices {
        let values = (0..per)
            .map(|i| (((i as f64) * 1e-3 + k as f64 * 0.1).sin() * 2000.0) as i16 + (i % 61) as i16)
            .collect();
        write_slice(
            &input.join(format!("s{k:03}.dcm")),
            &SliceSpec {
                series: "1.2.3.220",
                rows: side,
                cols: side,
                z: 2.5 * k as f64,
                instance: k as i32 + 1,
                ts: EXPLICIT_LE,
                values,
                pixel_data: true,
            },
        );
    }
    let packed = dir.path().join("packed.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&input), "-o", s(&packed)]);
    assert!(ok, "{err}");
    assert_eq!(
        medical_common::stored_pipeline(&packed),
        ["shuffle", "zstd"]
    );
    let plain = dir.path().join("plain.tgm");
    let args = [
        "convert-dicom",
        s(&input),
        "-o",
        s(&plain),
        "--compression",
        "none",
    ];
    let (ok, err) = tgm(&args);
    assert!(ok, "{err}");

    let object = (slices * per * 2) as u64;
    let bound = object * 13 / 10 + (64 << 20);
    let streamed = dir.path().join("streamed");
    let (peak, status) = common::peak_rss(&["to-dicom", s(&packed), "-o", s(&streamed)], &[]);
    assert_eq!(status, 0, "to-dicom failed");
    assert!(
        peak <= bound,
        "peak {} MiB over {} MiB",
        peak >> 20,
        bound >> 20
    );
    let whole = dir.path().join("whole");
    let (ok, err) = tgm(&["to-dicom", s(&plain), "-o", s(&whole)]);
    assert!(ok, "{err}");
    for k in 0..slices {
        let name = format!("slice_{k:05}.dcm");
        let (a, b) = (
            std::fs::read(streamed.join(&name)).unwrap(),
            std::fs::read(whole.join(&name)).unwrap(),
        );
        assert!(a == b, "{name} differs");
    }
    assert_eq!(std::fs::read_dir(&streamed).unwrap().count(), slices);
}

/// Runs tgm in 1 GiB of address space: (success, stderr).
fn tgm_limited(args: &[&str]) -> (bool, String) {
    let (code, err) = medical_common::tgm_limited(args);
    (code == 0, err)
}

/// One 2x2 Explicit VR LE slice of `series` at `path`.
fn small_slice(path: &Path, series: &'static str) {
    write_slice(
        path,
        &SliceSpec {
            series,
            rows: 2,
            cols: 2,
            z: 0.0,
            instance: 1,
            ts: EXPLICIT_LE,
            values: pixels(0, 4),
            pixel_data: true,
        },
    );
}

/// The file `good` with PixelData's 32-bit length set to 0xFFFFFFF0,
/// written to `bad`: its bytes and the offset of the PixelData header.
fn claiming_4_gib(good: &Path, bad: &Path) -> (Vec<u8>, usize) {
    let mut bytes = std::fs::read(good).unwrap();
    let header = [0xE0, 0x7F, 0x10, 0x00, b'O', b'W', 0, 0];
    let at = bytes
        .windows(8)
        .rposition(|w| w == header)
        .expect("PixelData header");
    bytes[at + 8..at + 12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    std::fs::write(bad, &bytes).unwrap();
    (bytes, at)
}

#[test]
fn a_small_file_claiming_a_4_gib_element_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.tgm");
    let good = dir.path().join("good.dcm");
    small_slice(&good, "1.2.3.66");
    let bad = dir.path().join("bad.dcm");
    let (bytes, _) = claiming_4_gib(&good, &bad);
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

/// A directory holding a series, a colour image and a file whose
/// PixelData claims more bytes than follow it: without
/// `--skip-unsupported` the run stops at the first of the two, naming it
/// and the option; with it the series is converted and both are listed
/// with their reasons on stderr and in the `-j` report. A file named on
/// the command line is never skipped.
#[test]
fn skip_unsupported_converts_the_rest_of_a_directory_and_lists_what_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    series(&input, "1.2.3.200");
    // SamplesPerPixel 3 (colour) in place of 1.
    let colour = input.join("colour.dcm");
    small_slice(&colour, "1.2.3.201");
    let mut bytes = std::fs::read(&colour).unwrap();
    let header = [0x28, 0x00, 0x02, 0x00, b'U', b'S', 2, 0, 1, 0];
    let at = bytes.windows(10).position(|w| w == header).unwrap();
    bytes[at + 8] = 3;
    std::fs::write(&colour, &bytes).unwrap();
    let good = dir.path().join("good.dcm");
    small_slice(&good, "1.2.3.202");
    let bad = input.join("bad.dcm");
    let (bytes, at) = claiming_4_gib(&good, &bad);
    let out = dir.path().join("ct.tgm");

    let (ok, err) = tgm(&["convert-dicom", s(&input), "-o", s(&out)]);
    assert!(!ok);
    let claim = format!(
        "{} is not a DICOM file tgm can read: element (7FE0,0010) at byte {} claims {} bytes, at most {} can follow it",
        bad.display(),
        at,
        0xFFFF_FFF0u32,
        bytes.len() - at - 12
    );
    assert!(err.contains(&claim), "{err}");
    assert!(err.contains("--skip-unsupported"), "{err}");
    assert!(!out.exists());

    let bin = env!("CARGO_BIN_EXE_tgm");
    let run = std::process::Command::new(bin)
        .args([
            "convert-dicom",
            "--skip-unsupported",
            "-j",
            s(&input),
            "-o",
            s(&out),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "skipped {}: not converted: not a DICOM file tgm can read: element (7FE0,0010)",
            bad.display()
        )),
        "{err}"
    );
    let colour_line = format!(
        "skipped {}: not converted: SamplesPerPixel 3",
        colour.display()
    );
    assert!(err.contains(&colour_line), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let skipped: Vec<(String, String)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap().to_string();
            (text("path"), text("reason"))
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{report}");
    assert_eq!(skipped[0].0, s(&bad));
    assert!(skipped[0].1.contains("claims 4294967280 bytes"), "{report}");
    assert_eq!(skipped[1].0, s(&colour));
    assert!(
        skipped[1].1.starts_with("not converted: SamplesPerPixel 3"),
        "{report}"
    );
    assert_eq!(report["outputs"][0]["target"], s(&out));
    let msg = decode_file(&out);
    assert_eq!(msg.objects.len(), 1);
    assert_eq!(msg.objects[0].descriptor.shape, [4, 3, 5]);

    // Named on the command line, it is refused all the same.
    std::fs::remove_file(&out).unwrap();
    let (ok, err) = tgm(&[
        "convert-dicom",
        "--skip-unsupported",
        s(&colour),
        "-o",
        s(&out),
    ]);
    assert!(!ok && err.contains("SamplesPerPixel 3"), "{err}");
    assert!(!out.exists());
}

fn spec_at(
    series: &'static str,
    z: f64,
    instance: i32,
    ts: &'static str,
    values: Vec<i16>,
) -> SliceSpec {
    SliceSpec {
        series,
        rows: 3,
        cols: 5,
        z,
        instance,
        ts,
        values,
        pixel_data: true,
    }
}

/// Rewrites a DICOM file after `edit` changed its data set.
fn edit_file(path: &Path, edit: impl FnOnce(&mut dicom_object::DefaultDicomObject)) {
    let mut obj = dicom_object::open_file(path).unwrap();
    edit(&mut obj);
    obj.write_to_file(path).unwrap();
}

#[test]
fn rle_and_deflated_series_decode_to_the_same_voxels_as_native() {
    let dir = tempfile::tempdir().unwrap();
    // Values with long runs and literal stretches, over the full i16 range.
    let vals = |k: usize| -> Vec<i16> {
        (0..15)
            .map(|i| match i {
                0..=5 => -32768 + k as i16,
                6..=9 => 32767,
                _ => (i as i16 * 977 - 4000) * (k as i16 + 1),
            })
            .collect()
    };
    let mut expected = Vec::new();
    let mut files = Vec::new();
    for (k, ts) in [RLE_LOSSLESS, DEFLATED_LE, RLE_LOSSLESS]
        .into_iter()
        .enumerate()
    {
        let p = dir.path().join(format!("c{k}.dcm"));
        write_slice(
            &p,
            &spec_at("1.2.3.70", 2.0 * k as f64, k as i32 + 1, ts, vals(k)),
        );
        expected.extend(le_bytes(&vals(k)));
        files.push(p);
    }
    let rle = std::fs::read(&files[0]).unwrap();
    assert!(rle.windows(2).any(|w| w == [0xFE, 0xFF]), "encapsulated");
    let deflated = std::fs::read(&files[1]).unwrap();
    assert!(
        !deflated.windows(16).any(|w| w == b"General Hospital"),
        "the data set is deflated"
    );
    let out = dir.path().join("c.tgm");
    let mut args = vec!["convert-dicom"];
    args.extend(files.iter().map(|p| s(p)));
    args.extend(["-o", s(&out)]);
    let (ok, err) = tgm(&args);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    assert_eq!(msg.objects[0].descriptor.shape, [3, 3, 5]);
    assert_eq!(msg.objects[0].descriptor.dtype, Dtype::Int16);
    assert_eq!(msg.objects[0].data, expected);
}

#[test]
fn undecodable_syntaxes_and_oversized_compressed_images_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.tgm");
    let p = dir.path().join("ls.dcm");
    write_slice(
        &p,
        &spec_at("1.2.3.71", 0.0, 1, JPEG_BASELINE, pixels(0, 15)),
    );
    // Same UID length: patch the meta group's TransferSyntaxUID in place.
    let mut bytes = std::fs::read(&p).unwrap();
    let at = bytes
        .windows(JPEG_BASELINE.len())
        .position(|w| w == JPEG_BASELINE.as_bytes())
        .unwrap();
    bytes[at..at + JPEG_LS.len()].copy_from_slice(JPEG_LS.as_bytes());
    std::fs::write(&p, bytes).unwrap();
    let (ok, err) = tgm(&["convert-dicom", s(&p), "-o", s(&out)]);
    assert!(
        !ok && err.contains("ls.dcm") && err.contains(JPEG_LS) && err.contains("JPEG-LS"),
        "{err}"
    );

    // An RLE image claiming 65535 x 65535 pixels in a few hundred bytes.
    let p = dir.path().join("big.dcm");
    write_slice(
        &p,
        &spec_at("1.2.3.72", 0.0, 1, RLE_LOSSLESS, pixels(0, 15)),
    );
    edit_file(&p, |o| {
        o.put(DataElement::new(
            tags::ROWS,
            VR::US,
            PrimitiveValue::from(65535u16),
        ));
        o.put(DataElement::new(
            tags::COLUMNS,
            VR::US,
            PrimitiveValue::from(65535u16),
        ));
    });
    let (ok, err) = tgm(&["convert-dicom", s(&p), "-o", s(&out)]);
    assert!(
        !ok && err.contains("big.dcm") && err.contains("times the file"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn a_multi_frame_image_becomes_frame_row_column_with_frame_positions() {
    use dicom_object::InMemDicomObject;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mf.dcm");
    let values: Vec<i16> = (0..45).map(|i| i * 31 - 700).collect();
    let mut spec = spec_at("1.2.3.73", 0.0, 1, EXPLICIT_LE, values.clone());
    spec.rows = 3;
    spec.cols = 5;
    // write_slice writes the values as given: 3 frames of 3x5.
    write_slice(&p, &spec);
    edit_file(&p, |o| {
        o.put(DataElement::new(tags::NUMBER_OF_FRAMES, VR::IS, "3"));
        o.remove_element(tags::IMAGE_POSITION_PATIENT);
        let frames: Vec<InMemDicomObject> = (0..3)
            .map(|f| {
                let pos = InMemDicomObject::from_element_iter([DataElement::new(
                    tags::IMAGE_POSITION_PATIENT,
                    VR::DS,
                    format!("-12.5\\30\\{}", 4 * f).as_str(),
                )]);
                InMemDicomObject::from_element_iter([DataElement::new(
                    tags::PLANE_POSITION_SEQUENCE,
                    VR::SQ,
                    dicom_core::value::DataSetSequence::from(vec![pos]),
                )])
            })
            .collect();
        o.put(DataElement::new(
            tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE,
            VR::SQ,
            dicom_core::value::DataSetSequence::from(frames),
        ));
    });
    let out = dir.path().join("mf.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&p), "-o", s(&out)]);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    assert_eq!(msg.objects[0].descriptor.shape, [3, 3, 5]);
    assert_eq!(msg.objects[0].data, le_bytes(&values));
    let base = &msg.metadata.base[0];
    assert_eq!(
        base.get("dim_names").unwrap().to_json(),
        r#"["frame","row","column"]"#
    );
    let dicom = base.get("dicom").unwrap();
    assert_eq!(
        dicom.get("frame_positions").unwrap().to_json(),
        "[[-12.5,30.0,0.0],[-12.5,30.0,4.0],[-12.5,30.0,8.0]]"
    );
    assert_eq!(
        dicom.get("image_position_patient").unwrap().to_json(),
        "[-12.5,30.0,0.0]"
    );

    // A multi-frame file cannot share its series with other files.
    let q = dir.path().join("single.dcm");
    write_slice(
        &q,
        &spec_at("1.2.3.73", 20.0, 2, EXPLICIT_LE, pixels(0, 15)),
    );
    let out2 = dir.path().join("mf2.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&p), s(&q), "-o", s(&out2)]);
    assert!(
        !ok && err.contains("mf.dcm") && err.contains("single.dcm"),
        "{err}"
    );
}

#[test]
fn a_temporal_series_becomes_time_slice_row_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut expected = vec![Vec::new(); 2];
    // Written time-interleaved and out of slice order.
    for (n, (t, z)) in [(2, 2.0), (1, 0.0), (2, 0.0), (1, 4.0), (1, 2.0), (2, 4.0)]
        .into_iter()
        .enumerate()
    {
        let p = dir.path().join(format!("t{n}.dcm"));
        let k = t * 10 + z as usize;
        write_slice(
            &p,
            &spec_at("1.2.3.74", z, n as i32, EXPLICIT_LE, pixels(k, 15)),
        );
        edit_file(&p, |o| {
            o.put(DataElement::new(
                tags::TEMPORAL_POSITION_IDENTIFIER,
                VR::IS,
                t.to_string().as_str(),
            ));
        });
        files.push((t, z, p, pixels(k, 15)));
    }
    for t in [1, 2] {
        for z in [0.0, 2.0, 4.0] {
            let (_, _, _, v) = files.iter().find(|f| f.0 == t && f.1 == z).unwrap();
            expected[t - 1].extend(le_bytes(v));
        }
    }
    let out = dir.path().join("t.tgm");
    let mut args = vec!["convert-dicom"];
    args.extend(files.iter().map(|f| s(&f.2)));
    args.extend(["-o", s(&out)]);
    let (ok, err) = tgm(&args);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    assert_eq!(msg.objects[0].descriptor.shape, [2, 3, 3, 5]);
    assert_eq!(msg.objects[0].data, expected.concat());
    let base = &msg.metadata.base[0];
    assert_eq!(
        base.get("dim_names").unwrap().to_json(),
        r#"["time","slice","row","column"]"#
    );
    let dicom = base.get("dicom").unwrap();
    assert_eq!(
        dicom.get("temporal_attribute").unwrap().as_text(),
        Some("TemporalPositionIdentifier")
    );
    assert_eq!(
        dicom.get("temporal_positions").unwrap().to_json(),
        "[1.0,2.0]"
    );
    assert_eq!(dicom.get("slice_spacing").unwrap().as_f64(), Some(2.0));

    // to-dicom writes the time series back, one file per slice per time
    // point, and convert-dicom reads it as the same 4-D array and geometry.
    let back = dir.path().join("back");
    let (ok, err) = tgm(&["to-dicom", s(&out), "-o", s(&back)]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_dir(&back).unwrap().count(), 6);
    let again = dir.path().join("again.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&back), "-o", s(&again)]);
    assert!(ok, "{err}");
    let msg2 = decode_file(&again);
    assert_eq!(msg2.objects[0].descriptor.shape, [2, 3, 3, 5]);
    assert_eq!(msg2.objects[0].data, expected.concat());
    let dicom2 = msg2.metadata.base[0].get("dicom").unwrap();
    for k in [
        "temporal_attribute",
        "temporal_positions",
        "image_position_patient",
        "image_orientation_patient",
        "pixel_spacing",
        "slice_spacing",
    ] {
        assert_eq!(
            dicom.get(k).map(|v| v.to_json()),
            dicom2.get(k).map(|v| v.to_json()),
            "{k}"
        );
    }

    // A time point of another size is refused naming both time points' files.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for (t, z, p, v) in &files {
        let q = other.join(p.file_name().unwrap());
        let mut sp = spec_at("1.2.3.74", *z, 0, EXPLICIT_LE, v.clone());
        if *t == 2 {
            sp.cols = 3;
            sp.values = pixels(0, 9);
        }
        write_slice(&q, &sp);
        edit_file(&q, |o| {
            o.put(DataElement::new(
                tags::TEMPORAL_POSITION_IDENTIFIER,
                VR::IS,
                t.to_string().as_str(),
            ));
        });
    }
    let (ok, err) = tgm(&[
        "convert-dicom",
        s(&other),
        "-o",
        s(&dir.path().join("o.tgm")),
    ]);
    assert!(
        !ok && err.contains("TemporalPositionIdentifier 2")
            && err.contains("size or type")
            && err.contains("3x3"),
        "{err}"
    );

    // A time point missing a slice is an error naming files.
    std::fs::remove_file(&files[5].2).unwrap();
    let mut args = vec!["convert-dicom"];
    args.extend(files[..5].iter().map(|f| s(&f.2)));
    let out2 = dir.path().join("t2.tgm");
    args.extend(["-o", s(&out2)]);
    let (ok, err) = tgm(&args);
    assert!(
        !ok && err.contains("TemporalPositionIdentifier") && err.contains(".dcm"),
        "{err}"
    );
}

/// A JPEG Baseline file of `rows` x `cols` 8-bit pixels, encoded by
/// dicom-pixeldata; returns the pixels before encoding.
fn write_jpeg(p: &Path, rows: u16, cols: u16) -> Vec<u8> {
    use dicom_object::InMemDicomObject;
    use dicom_pixeldata::Transcode;
    let original: Vec<u8> = (0..rows as usize * cols as usize)
        .map(|i| (40 + (i % cols as usize) * 6 + (i / cols as usize) * 2) as u8)
        .collect();
    let obj = InMemDicomObject::from_element_iter([
        DataElement::new(tags::SOP_CLASS_UID, VR::UI, CT_STORAGE),
        DataElement::new(tags::SOP_INSTANCE_UID, VR::UI, "1.2.3.75.1"),
        DataElement::new(tags::SERIES_INSTANCE_UID, VR::UI, "1.2.3.75"),
        DataElement::new(tags::SAMPLES_PER_PIXEL, VR::US, PrimitiveValue::from(1u16)),
        DataElement::new(tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
        DataElement::new(tags::ROWS, VR::US, PrimitiveValue::from(rows)),
        DataElement::new(tags::COLUMNS, VR::US, PrimitiveValue::from(cols)),
        DataElement::new(tags::BITS_ALLOCATED, VR::US, PrimitiveValue::from(8u16)),
        DataElement::new(tags::BITS_STORED, VR::US, PrimitiveValue::from(8u16)),
        DataElement::new(tags::HIGH_BIT, VR::US, PrimitiveValue::from(7u16)),
        DataElement::new(
            tags::PIXEL_REPRESENTATION,
            VR::US,
            PrimitiveValue::from(0u16),
        ),
        DataElement::new(
            tags::PIXEL_DATA,
            VR::OB,
            PrimitiveValue::U8(original.clone().into()),
        ),
    ]);
    let mut file = obj
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax(EXPLICIT_LE)
                .media_storage_sop_class_uid(CT_STORAGE)
                .media_storage_sop_instance_uid("1.2.3.75.1"),
        )
        .unwrap();
    file.transcode(&dicom_transfer_syntax_registry::entries::JPEG_BASELINE.erased())
        .unwrap();
    file.write_to_file(p).unwrap();
    let bytes = std::fs::read(p).unwrap();
    assert!(bytes.windows(2).any(|w| w == [0xFF, 0xD8]), "JPEG stream");
    original
}

#[test]
fn a_jpeg_baseline_image_decodes_through_the_pure_rust_codec() {
    use dicom_pixeldata::PixelDecoder;
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (16u16, 24u16);
    let p = dir.path().join("jpeg.dcm");
    let original = write_jpeg(&p, rows, cols);
    let out = dir.path().join("jpeg.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&p), "-o", s(&out)]);
    assert!(ok, "{err}");
    let msg = decode_file(&out);
    let obj = &msg.objects[0];
    assert_eq!(obj.descriptor.shape, [1, rows as u64, cols as u64]);
    assert_eq!(obj.descriptor.dtype, Dtype::Uint8);
    let reference = dicom_object::open_file(&p).unwrap();
    assert_eq!(obj.data, reference.decode_pixel_data().unwrap().data());
    // Lossy, but close to what was encoded.
    let worst = obj
        .data
        .iter()
        .zip(&original)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(worst <= 16, "JPEG error {worst}");
    assert_eq!(
        msg.metadata.base[0]
            .get("dicom")
            .unwrap()
            .get("transfer_syntax")
            .unwrap()
            .as_text(),
        Some(JPEG_BASELINE)
    );
}

/// The fragments of a file's encapsulated PixelData.
fn fragments(path: &Path) -> Vec<Vec<u8>> {
    let obj = dicom_object::open_file(path).unwrap();
    let pixel = obj.element(tags::PIXEL_DATA).unwrap();
    pixel.value().fragments().unwrap().to_vec()
}

/// Replaces PixelData's fragments (and optionally NumberOfFrames).
fn set_fragments(path: &Path, fragments: Vec<Vec<u8>>, frames: Option<&str>) {
    edit_file(path, |o| {
        o.put(DataElement::new(
            tags::PIXEL_DATA,
            VR::OB,
            PixelFragmentSequence::new(vec![], fragments),
        ));
        if let Some(n) = frames {
            o.put(DataElement::new(tags::NUMBER_OF_FRAMES, VR::IS, n));
        }
    });
}

/// Converts each (name, file) in a memory-limited run and checks it fails
/// cleanly with an error naming the file and containing `why`.
fn assert_refused(dir: &Path, cases: &[(&str, PathBuf, &str)]) {
    for (name, path, why) in cases {
        let out = dir.join(format!("{name}.tgm"));
        let (ok, err) = tgm_limited(&["convert-dicom", s(path), "-o", s(&out)]);
        assert!(!ok, "{name} converted");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            err.contains(path.file_name().unwrap().to_str().unwrap()) && err.contains(why),
            "{name}: expected an error naming the file and {why:?}: {err}"
        );
        assert!(!out.exists(), "{name}: output written");
    }
}

#[test]
fn hostile_rle_fragments_are_refused_before_the_decoder_runs() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.dcm");
    write_slice(
        &good,
        &spec_at("1.2.3.80", 0.0, 1, RLE_LOSSLESS, pixels(0, 15)),
    );
    let frame = fragments(&good).remove(0);
    let variant = |name: &str, frags: Vec<Vec<u8>>, frames: Option<&str>| {
        let p = dir.path().join(format!("{name}.dcm"));
        std::fs::copy(&good, &p).unwrap();
        set_fragments(&p, frags, frames);
        p
    };
    let mut huge = frame.clone();
    huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut outside = frame.clone();
    outside[8..12].copy_from_slice(&10_000u32.to_le_bytes());
    let short = frame[..frame.len() - 6].to_vec();
    let cases = [
        ("count", variant("count", vec![huge], None), "segments"),
        (
            "outside",
            variant("outside", vec![outside], None),
            "inside it",
        ),
        (
            "short",
            variant("short", vec![short], None),
            "RLE segment 1",
        ),
        (
            "tiny",
            variant("tiny", vec![vec![2, 0]], None),
            "64-byte header",
        ),
        (
            "missing",
            variant("missing", vec![frame.clone()], Some("2")),
            "one fragment per frame",
        ),
    ];
    assert_refused(dir.path(), &cases);
}

#[test]
fn hostile_jpeg_frames_are_refused_before_the_decoder_runs() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.dcm");
    write_jpeg(&good, 16, 24);
    let frame = fragments(&good).remove(0);
    let sof = frame
        .windows(2)
        .position(|w| w == [0xFF, 0xC0])
        .expect("baseline frame header");
    let variant = |name: &str, frags: Vec<Vec<u8>>, frames: Option<&str>| {
        let p = dir.path().join(format!("{name}.dcm"));
        std::fs::copy(&good, &p).unwrap();
        set_fragments(&p, frags, frames);
        p
    };
    let mut giant = frame.clone();
    giant[sof + 5..sof + 9].copy_from_slice(&[0xFF, 0xDC, 0xFF, 0xDC]);
    let mut fewer_rows = frame.clone();
    fewer_rows[sof + 5..sof + 7].copy_from_slice(&8u16.to_be_bytes());
    let truncated = frame[..frame.len() / 2].to_vec();
    let cases = [
        (
            "giant",
            variant("giant", vec![giant], None),
            "65500 x 65500",
        ),
        ("fewer", variant("fewer", vec![fewer_rows], None), "8 x 24"),
        (
            "truncated",
            variant("truncated", vec![truncated], None),
            "EOI",
        ),
        (
            "missing",
            variant("missing", vec![frame.clone()], Some("3")),
            "one fragment per frame",
        ),
    ];
    assert_refused(dir.path(), &cases);
    // The untouched file still converts.
    let out = dir.path().join("good.tgm");
    let (ok, err) = tgm_limited(&["convert-dicom", s(&good), "-o", s(&out)]);
    assert!(ok, "{err}");
}

/// `tgm` with `stdin` as its standard input.
fn tgm_stdin(args: &[&str], stdin: &Path) -> (bool, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .stdin(std::fs::File::open(stdin).unwrap())
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// `-` reads one DICOM file from stdin, giving the objects the file gives;
/// errors name `<stdin>`, never the spooled copy.
#[test]
fn a_dicom_file_is_read_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let slice = series(dir.path(), "1.2.3.300").remove(0);
    let (from_file, from_stdin) = (dir.path().join("f.tgm"), dir.path().join("s.tgm"));
    let (ok, err) = tgm(&["convert-dicom", s(&slice), "-o", s(&from_file)]);
    assert!(ok, "{err}");
    let (ok, err) = tgm_stdin(&["convert-dicom", "-", "-o", s(&from_stdin)], &slice);
    assert!(ok, "{err}");
    assert!(!err.contains(".tgm-stdin-"), "{err}");
    let (a, b) = (decode_file(&from_file), decode_file(&from_stdin));
    assert_eq!(a.objects, b.objects);
    assert_eq!(series_uid(&b), "1.2.3.300");

    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, b"not a DICOM file at all").unwrap();
    let (ok, err) = tgm_stdin(
        &["convert-dicom", "-", "-o", s(&dir.path().join("j.tgm"))],
        &junk,
    );
    assert!(!ok);
    assert!(err.contains("<stdin>"), "{err}");
    assert!(!err.contains(".tgm-stdin-"), "{err}");
    assert!(!dir.path().join("j.tgm").exists());
}
