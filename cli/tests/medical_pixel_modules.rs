//! RT Dose, PALETTE COLOR, CR and PET kept through convert-dicom and
//! written back by to-dicom: an RT Dose grid comes back as one multi-frame RT Dose
//! instance with its scaling, units, type and frame offsets; a palette
//! image keeps its lookup tables and `export --apply-lut` gives RGB.
//! Generated files always; pydicom's `rtdose.dcm` and
//! `examples_palette.dcm` when `TGM_MEDICAL_SAMPLES` is set; pydicom's
//! strict re-reading (and its `apply_color_lut`) when
//! `TGM_MEDICAL_PYTHON` is set.
#![cfg(feature = "dicom")]

use std::path::{Path, PathBuf};

use dicom_core::header::Header;
use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{open_file, DefaultDicomObject, FileMetaTableBuilder, InMemDicomObject};

mod medical_common;
use medical_common::{
    convert_then_to_dicom, convert_with_then_to_dicom, pixel_module, python, run_python,
    run_python_with, s, tgm, PYDICOM_STRICT,
};

const RT_DOSE: &str = "1.2.840.10008.5.1.4.1.1.481.2";
const RT_PLAN: &str = "1.2.840.10008.5.1.4.1.1.481.5";
const CR_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.1";
const PET_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.128";
const SECONDARY_CAPTURE: &str = "1.2.840.10008.5.1.4.1.1.7";
const DX_PRESENTATION: &str = "1.2.840.10008.5.1.4.1.1.1.1";
const DX_PROCESSING: &str = "1.2.840.10008.5.1.4.1.1.1.1.1";
const US_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.6.1";
const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";

fn write(
    path: &Path,
    sop_class: &str,
    text: &[(Tag, VR, &str)],
    us: &[(Tag, u16)],
    extra: Vec<DataElement<InMemDicomObject>>,
) {
    let mut obj = InMemDicomObject::new_empty();
    for &(tag, vr, v) in text {
        obj.put(DataElement::new(tag, vr, v));
    }
    for &(tag, v) in us {
        obj.put(DataElement::new(tag, VR::US, PrimitiveValue::from(v)));
    }
    for e in extra {
        obj.put(e);
    }
    obj.with_meta(
        FileMetaTableBuilder::new()
            .transfer_syntax(EXPLICIT_LE)
            .media_storage_sop_class_uid(sop_class)
            .media_storage_sop_instance_uid("1.2.826.0.1.3680043.2.1125.99.1"),
    )
    .unwrap()
    .write_to_file(path)
    .unwrap();
}

/// SOPClassUID and the SOP instance, study and series UIDs of a
/// generated file.
fn instance_uids(sop_class: &'static str, series: &'static str) -> Vec<(Tag, VR, &'static str)> {
    vec![
        (tags::SOP_CLASS_UID, VR::UI, sop_class),
        (
            tags::SOP_INSTANCE_UID,
            VR::UI,
            "1.2.826.0.1.3680043.2.1125.99.1",
        ),
        (
            tags::STUDY_INSTANCE_UID,
            VR::UI,
            "1.2.826.0.1.3680043.2.1125.99.2",
        ),
        (tags::SERIES_INSTANCE_UID, VR::UI, series),
    ]
}

fn text(obj: &InMemDicomObject, tag: Tag) -> String {
    obj.element(tag)
        .unwrap()
        .to_str()
        .unwrap()
        .trim_end_matches(['\0', ' '])
        .to_string()
}

fn floats(obj: &InMemDicomObject, tag: Tag) -> Vec<f64> {
    obj.element(tag).unwrap().to_multi_float64().unwrap()
}

fn strict(files: &[PathBuf], required: &str) {
    let Some(py) = python() else { return };
    let mut args = vec![required];
    args.extend(files.iter().map(|f| s(f)));
    run_python(&py, PYDICOM_STRICT, &args);
}

/// `a` and `b` hold the same text in `texts` and the same numbers (to
/// 1e-12 relative) in `numbers`.
fn assert_same_values(
    a: &InMemDicomObject,
    b: &InMemDicomObject,
    texts: &[Tag],
    numbers: &[Tag],
    what: &str,
) {
    for &tag in texts {
        assert_eq!(text(a, tag), text(b, tag), "{what} {tag:?}");
    }
    for &tag in numbers {
        let (x, y) = (floats(a, tag), floats(b, tag));
        assert_eq!(x.len(), y.len(), "{what} {tag:?}");
        assert!(
            x.iter()
                .zip(&y)
                .all(|(p, q)| (p - q).abs() <= p.abs() * 1e-12 + 1e-9),
            "{what} {tag:?}: {x:?} vs {y:?}"
        );
    }
}

/// Checks that `out` is `src` as one multi-frame RT Dose instance.
fn assert_same_dose(src: &Path, out: &[PathBuf]) {
    assert_eq!(out.len(), 1, "one multi-frame RT Dose instance");
    let (a, b) = (open_file(src).unwrap(), open_file(&out[0]).unwrap());
    assert_eq!(text(&b, tags::SOP_CLASS_UID), RT_DOSE);
    assert_eq!(text(&b, tags::MODALITY), "RTDOSE");
    assert_same_values(
        &a,
        &b,
        &[
            tags::DOSE_UNITS,
            tags::DOSE_TYPE,
            tags::DOSE_SUMMATION_TYPE,
            tags::NUMBER_OF_FRAMES,
            tags::ROWS,
            tags::COLUMNS,
            tags::BITS_ALLOCATED,
            tags::FRAME_OF_REFERENCE_UID,
        ],
        &[
            tags::DOSE_GRID_SCALING,
            tags::GRID_FRAME_OFFSET_VECTOR,
            tags::IMAGE_POSITION_PATIENT,
            tags::IMAGE_ORIENTATION_PATIENT,
            tags::PIXEL_SPACING,
        ],
        "RT Dose",
    );
    let fip = b
        .element(tags::FRAME_INCREMENT_POINTER)
        .unwrap()
        .value()
        .clone();
    assert_eq!(
        fip.primitive(),
        Some(&PrimitiveValue::Tags(
            vec![tags::GRID_FRAME_OFFSET_VECTOR].into()
        ))
    );
    let pixels = |o: &InMemDicomObject| {
        o.element(tags::PIXEL_DATA)
            .unwrap()
            .to_bytes()
            .unwrap()
            .to_vec()
    };
    assert_eq!(pixels(&a), pixels(&b));
}

const DOSE_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    FrameOfReferenceUID,Modality,PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,\
    StudyTime,StudyID,ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,\
    NumberOfFrames,FrameIncrementPointer,GridFrameOffsetVector,DoseGridScaling,DoseUnits,\
    DoseType,DoseSummationType,ImagePositionPatient,ImageOrientationPatient,PixelSpacing,\
    ReferencedRTPlanSequence";

/// A generated 3-frame RT Dose grid whose ReferencedRTPlanSequence
/// references plan `plan_uid` (fraction group 1, beam 3).
fn generated_dose(src: &Path, plan_uid: &str) {
    let dose: Vec<u32> = (0..3 * 4 * 5).map(|v| v * 40503 % 90001).collect();
    let beam = InMemDicomObject::from_element_iter([DataElement::new(
        tags::REFERENCED_BEAM_NUMBER,
        VR::IS,
        "3",
    )]);
    let group = InMemDicomObject::from_element_iter([
        DataElement::new(tags::REFERENCED_FRACTION_GROUP_NUMBER, VR::IS, "1"),
        DataElement::new(
            tags::REFERENCED_BEAM_SEQUENCE,
            VR::SQ,
            DataSetSequence::from(vec![beam]),
        ),
    ]);
    let plan = InMemDicomObject::from_element_iter([
        DataElement::new(tags::REFERENCED_SOP_CLASS_UID, VR::UI, RT_PLAN),
        DataElement::new(tags::REFERENCED_SOP_INSTANCE_UID, VR::UI, plan_uid),
        DataElement::new(
            tags::REFERENCED_FRACTION_GROUP_SEQUENCE,
            VR::SQ,
            DataSetSequence::from(vec![group]),
        ),
    ]);
    write(
        src,
        RT_DOSE,
        &[
            instance_uids(RT_DOSE, "1.2.826.0.1.3680043.2.1125.99.3"),
            vec![
                (
                    tags::FRAME_OF_REFERENCE_UID,
                    VR::UI,
                    "1.2.826.0.1.3680043.2.1125.99.4",
                ),
                (tags::MODALITY, VR::CS, "RTDOSE"),
                (tags::PATIENT_NAME, VR::PN, "Dose^Dora"),
                (tags::STUDY_DATE, VR::DA, "20230405"),
                (tags::IMAGE_POSITION_PATIENT, VR::DS, "-12.5\\-30.25\\-7.5"),
                (tags::IMAGE_ORIENTATION_PATIENT, VR::DS, "1\\0\\0\\0\\1\\0"),
                (tags::PIXEL_SPACING, VR::DS, "2.5\\2"),
                (tags::NUMBER_OF_FRAMES, VR::IS, "3"),
                (tags::GRID_FRAME_OFFSET_VECTOR, VR::DS, "0\\3\\6"),
                (tags::DOSE_GRID_SCALING, VR::DS, "1.234567e-05"),
                (tags::DOSE_UNITS, VR::CS, "GY"),
                (tags::DOSE_TYPE, VR::CS, "PHYSICAL"),
                (tags::DOSE_SUMMATION_TYPE, VR::CS, "BEAM"),
                (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
            ],
        ]
        .concat(),
        &pixel_module(4, 5, 32),
        vec![
            DataElement::new(
                tags::FRAME_INCREMENT_POINTER,
                VR::AT,
                PrimitiveValue::Tags(vec![tags::GRID_FRAME_OFFSET_VECTOR].into()),
            ),
            DataElement::new(
                tags::REFERENCED_RT_PLAN_SEQUENCE,
                VR::SQ,
                DataSetSequence::from(vec![plan]),
            ),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U8(dose.iter().flat_map(|v| v.to_le_bytes()).collect()),
            ),
        ],
    );
}

#[test]
fn an_rt_dose_grid_comes_back_as_one_multi_frame_rt_dose() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dose.dcm");
    generated_dose(&src, "1.2.826.0.1.3680043.2.1125.99.5");
    let out = convert_then_to_dicom("convert-dicom", &src, dir.path());
    assert_same_dose(&src, &out);
    assert_same_plan_reference(&src, &out[0], |uid| uid.to_string());
    strict(&out, DOSE_REQUIRED);
}

/// The ReferencedRTPlanSequence of `out` is that of `src`, with each
/// ReferencedSOPInstanceUID passed through `uid`.
fn assert_same_plan_reference(src: &Path, out: &Path, uid: impl Fn(&str) -> String) {
    let (a, b) = (open_file(src).unwrap(), open_file(out).unwrap());
    let items = |o: &InMemDicomObject, t: Tag| o.element(t).unwrap().items().unwrap().to_vec();
    let (pa, pb) = (
        items(&a, tags::REFERENCED_RT_PLAN_SEQUENCE),
        items(&b, tags::REFERENCED_RT_PLAN_SEQUENCE),
    );
    assert_eq!(pa.len(), pb.len());
    for (x, y) in pa.iter().zip(&pb) {
        assert_eq!(
            text(x, tags::REFERENCED_SOP_CLASS_UID),
            text(y, tags::REFERENCED_SOP_CLASS_UID)
        );
        assert_eq!(
            uid(&text(x, tags::REFERENCED_SOP_INSTANCE_UID)),
            text(y, tags::REFERENCED_SOP_INSTANCE_UID)
        );
        let (gx, gy) = (
            items(x, tags::REFERENCED_FRACTION_GROUP_SEQUENCE),
            items(y, tags::REFERENCED_FRACTION_GROUP_SEQUENCE),
        );
        assert_eq!(gx.len(), gy.len());
        for (g, h) in gx.iter().zip(&gy) {
            assert_eq!(
                text(g, tags::REFERENCED_FRACTION_GROUP_NUMBER),
                text(h, tags::REFERENCED_FRACTION_GROUP_NUMBER)
            );
            let beams = |o: &InMemDicomObject| {
                o.element(tags::REFERENCED_BEAM_SEQUENCE).ok().map(|e| {
                    e.items()
                        .unwrap()
                        .iter()
                        .map(|b| text(b, tags::REFERENCED_BEAM_NUMBER))
                        .collect::<Vec<_>>()
                })
            };
            assert_eq!(beams(g), beams(h));
        }
    }
}

/// `convert-dicom --deidentify` of `src` with a fixed key, then `to-dicom`
/// (in `dir/deid`): the conversion's stderr and the files written.
fn deidentified_to_dicom(src: &Path, dir: &Path) -> (String, Vec<PathBuf>) {
    let key = dir.join("key");
    std::fs::write(&key, [42u8; 32]).unwrap();
    let sub = dir.join("deid");
    std::fs::create_dir(&sub).unwrap();
    convert_with_then_to_dicom(
        &["convert-dicom", "--deidentify", "--deid-key", s(&key)],
        src,
        &sub,
    )
}

/// De-identification replaces the plan reference by the keyed hash of
/// the original UID: a plan UID equal to the dose's FrameOfReferenceUID
/// comes back equal to the replaced FrameOfReferenceUID.
#[test]
fn a_deidentified_plan_reference_gets_the_same_keyed_hash_as_other_uids() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dose.dcm");
    let frame_of_reference = "1.2.826.0.1.3680043.2.1125.99.4";
    generated_dose(&src, frame_of_reference);
    let (err, out) = deidentified_to_dicom(&src, dir.path());
    assert!(err.contains("ReferencedSOPInstanceUID"), "{err}");
    let out = &out[0];
    let b = open_file(out).unwrap();
    let replaced = text(&b, tags::FRAME_OF_REFERENCE_UID);
    assert_ne!(replaced, frame_of_reference);
    assert_same_plan_reference(&src, out, |_| replaced.clone());
    strict(std::slice::from_ref(out), DOSE_REQUIRED);
}

fn sample(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TGM_MEDICAL_SAMPLES")?;
    let p = PathBuf::from(dir).join("pydicom").join(name);
    if p.exists() {
        Some(p)
    } else {
        medical_common::skip::skip(&format!("{} is absent", p.display()));
        None
    }
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn pydicom_rtdose_comes_back_as_it_went_in_with_a_warning_refused_only_when_strict() {
    let Some(src) = sample("rtdose.dcm") else {
        medical_common::skip::skip(
            "TGM_MEDICAL_SAMPLES is unset or lacks rtdose.dcm (bash .ci/medical.sh)",
        );
        return;
    };
    // The sample references its plan by a UID with a component with a
    // leading zero, which PS3.5 9.1 forbids.
    let plan_uid =
        "ReferencedRTPlanSequence[0].ReferencedSOPInstanceUID (0008,1155) \"1.2.123.456.78.9.0123.";
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("a.tgm");
    let (ok, err) = tgm(&["convert-dicom", s(&src), "-o", s(&archive)]);
    assert!(ok, "{err}");
    // Strict output refuses it, naming it, and leaves nothing.
    let out_dir = dir.path().join("out");
    let (ok, err) = tgm(&["to-dicom", "--strict", s(&archive), "-o", s(&out_dir)]);
    assert!(!ok);
    assert!(err.contains(plan_uid), "{err}");
    assert!(!out_dir.exists(), "{err}");
    // By default it comes back as the source held it, with a warning
    // naming it; DoseGridScaling keeps its text.
    let (ok, err) = tgm(&["to-dicom", s(&archive), "-o", s(&out_dir)]);
    assert!(ok, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with(&format!("warning: {plan_uid}")),
        "{err}"
    );
    let out = out_dir.join("slice_00000.dcm");
    assert_same_plan_reference(&src, &out, str::to_string);
    let (a, b) = (open_file(&src).unwrap(), open_file(&out).unwrap());
    assert_eq!(
        text(&a, tags::DOSE_GRID_SCALING),
        text(&b, tags::DOSE_GRID_SCALING)
    );
    // pydicom reads it; every other value passes its strict checks.
    if let Some(py) = python() {
        let verbatim = [("TGM_VERBATIM_TAGS", "00081155")];
        run_python_with(&py, PYDICOM_STRICT, &[DOSE_REQUIRED, s(&out)], &verbatim);
    }
    // De-identified, its UIDs are replaced and the dose comes back whole.
    let (_, out) = deidentified_to_dicom(&src, dir.path());
    assert_eq!(out.len(), 1);
    assert_same_plan_reference(&src, &out[0], |uid| {
        assert!(uid.starts_with("1.2.123.456."));
        let b = open_file(&out[0]).unwrap();
        let item = &b
            .element(tags::REFERENCED_RT_PLAN_SEQUENCE)
            .unwrap()
            .items()
            .unwrap()[0];
        let replaced = text(item, tags::REFERENCED_SOP_INSTANCE_UID);
        assert!(replaced.starts_with("2.25."), "{replaced}");
        replaced
    });
    strict(&out, DOSE_REQUIRED);
}

/// A 16-bit 256-entry palette: red rises, green falls, blue is index^2.
fn lut(channel: usize) -> Vec<u16> {
    (0..256u32)
        .map(|k| match channel {
            0 => (k * 257) as u16,
            1 => ((255 - k) * 257) as u16,
            _ => ((k * k) % 65536) as u16,
        })
        .collect()
}

const PALETTE_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,Modality,PatientName,PatientID,\
    StudyDate,StudyTime,StudyID,ReferringPhysicianName,AccessionNumber,SeriesNumber,\
    ConversionType,PhotometricInterpretation,RedPaletteColorLookupTableDescriptor,\
    RedPaletteColorLookupTableData,GreenPaletteColorLookupTableData,\
    BluePaletteColorLookupTableData";

/// What strict re-reading requires of an Ultrasound Image in PALETTE COLOR.
const US_PALETTE_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,Modality,PatientName,PatientID,\
    StudyDate,StudyTime,StudyID,ReferringPhysicianName,AccessionNumber,SeriesNumber,\
    ImageType,PhotometricInterpretation,RedPaletteColorLookupTableDescriptor,\
    RedPaletteColorLookupTableData,GreenPaletteColorLookupTableData,\
    BluePaletteColorLookupTableData";

/// `tgm export --apply-lut` of `dir/a.tgm` into `dir/npy`: that directory.
fn export_rgb(dir: &Path) -> PathBuf {
    let npy = dir.join("npy");
    let archive = dir.join("a.tgm");
    let (ok, err) = tgm(&["export", "--apply-lut", s(&archive), "-o", s(&npy)]);
    assert!(ok, "{err}");
    npy
}

/// The RGB samples of an exported `.npy` (header skipped), as u16.
fn npy_u16(path: &Path) -> (String, Vec<u16>) {
    let b = std::fs::read(path).unwrap();
    let n = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = String::from_utf8_lossy(&b[10..10 + n]).into_owned();
    let data = b[10 + n..]
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect();
    (header, data)
}

#[test]
fn a_palette_image_keeps_its_tables_and_exports_as_rgb() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("pal.dcm");
    let indices: Vec<u8> = (0..12u8).map(|v| v * 21).collect();
    let mut extra = Vec::new();
    for (c, (d, t)) in [
        (
            tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
            tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        ),
        (
            tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
            tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        ),
        (
            tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
            tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        extra.push(DataElement::new(
            d,
            VR::US,
            PrimitiveValue::U16(vec![256, 0, 16].into()),
        ));
        extra.push(DataElement::new(
            t,
            VR::OW,
            PrimitiveValue::U16(lut(c).into()),
        ));
    }
    extra.push(DataElement::new(
        tags::PIXEL_DATA,
        VR::OB,
        PrimitiveValue::U8(indices.clone().into()),
    ));
    write(
        &src,
        SECONDARY_CAPTURE,
        &[
            instance_uids(SECONDARY_CAPTURE, "1.2.826.0.1.3680043.2.1125.99.5"),
            vec![
                (tags::MODALITY, VR::CS, "US"),
                (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "PALETTE COLOR"),
            ],
        ]
        .concat(),
        &pixel_module(3, 4, 8),
        extra,
    );
    let out = convert_then_to_dicom("convert-dicom", &src, dir.path());
    assert_eq!(out.len(), 1);
    let (a, b) = (open_file(&src).unwrap(), open_file(&out[0]).unwrap());
    assert_eq!(text(&b, tags::PHOTOMETRIC_INTERPRETATION), "PALETTE COLOR");
    assert_eq!(text(&b, tags::MODALITY), "US");
    for tag in [
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::PIXEL_DATA,
    ] {
        let v = |o: &InMemDicomObject| o.element(tag).unwrap().to_bytes().unwrap().to_vec();
        assert_eq!(v(&a), v(&b), "{tag:?}");
    }
    strict(&out, PALETTE_REQUIRED);

    let npy = export_rgb(dir.path());
    let (header, rgb) = npy_u16(&npy.join("m0_o0.npy"));
    assert!(
        header.contains("(1, 3, 4, 3)") && header.contains("u2"),
        "{header}"
    );
    let want: Vec<u16> = indices
        .iter()
        .flat_map(|&i| (0..3).map(move |c| lut(c)[i as usize]))
        .collect();
    assert_eq!(rgb, want);
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn pydicom_palette_sample_keeps_its_tables_and_matches_apply_color_lut() {
    let Some(src) = sample("examples_palette.dcm") else {
        medical_common::skip::skip(
            "TGM_MEDICAL_SAMPLES is unset or lacks examples_palette.dcm (bash .ci/medical.sh)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = convert_then_to_dicom("convert-dicom", &src, dir.path());
    assert_eq!(out.len(), 1);
    let (a, b) = (open_file(&src).unwrap(), open_file(&out[0]).unwrap());
    for tag in [
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DESCRIPTOR,
        tags::RED_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::GREEN_PALETTE_COLOR_LOOKUP_TABLE_DATA,
        tags::BLUE_PALETTE_COLOR_LOOKUP_TABLE_DATA,
    ] {
        let v = |o: &InMemDicomObject| o.element(tag).unwrap().to_multi_int::<i64>().unwrap();
        assert_eq!(v(&a), v(&b), "{tag:?}");
    }
    // An Ultrasound Image, so it comes back as one, palette and all.
    assert_eq!(text(&b, tags::SOP_CLASS_UID), US_IMAGE);
    assert_eq!(text(&b, tags::MODALITY), "US");
    assert_eq!(text(&b, tags::PHOTOMETRIC_INTERPRETATION), "PALETTE COLOR");
    strict(&out, US_PALETTE_REQUIRED);
    let npy = export_rgb(dir.path());
    let Some(py) = python() else { return };
    run_python(
        &py,
        "import sys, numpy, pydicom\n\
         from pydicom.pixels import apply_color_lut\n\
         ds = pydicom.dcmread(sys.argv[1])\n\
         want = apply_color_lut(ds.pixel_array, ds)\n\
         got = numpy.load(sys.argv[2])\n\
         got = got.reshape(want.shape)\n\
         assert (got == want).all(), 'RGB differs from pydicom apply_color_lut'\n",
        &[s(&src), s(&npy.join("m0_o0.npy"))],
    );
}

#[test]
fn a_window_that_changes_between_slices_comes_back_per_slice() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let windows = [("40", "400"), ("-600", "1500"), ("-600", "1500")];
    for (k, (c, w)) in windows.iter().enumerate() {
        let z = format!("0\\0\\{}", k * 2);
        write(
            &input.join(format!("s{k}.dcm")),
            SECONDARY_CAPTURE,
            &[
                instance_uids(SECONDARY_CAPTURE, "1.2.826.0.1.3680043.2.1125.99.6"),
                vec![
                    (tags::MODALITY, VR::CS, "OT"),
                    (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
                    (tags::IMAGE_POSITION_PATIENT, VR::DS, &z),
                    (tags::IMAGE_ORIENTATION_PATIENT, VR::DS, "1\\0\\0\\0\\1\\0"),
                    (tags::PIXEL_SPACING, VR::DS, "1\\1"),
                    (tags::WINDOW_CENTER, VR::DS, c),
                    (tags::WINDOW_WIDTH, VR::DS, w),
                ],
            ]
            .concat(),
            &pixel_module(2, 2, 8),
            vec![DataElement::new(
                tags::PIXEL_DATA,
                VR::OB,
                PrimitiveValue::U8(vec![k as u8; 4].into()),
            )],
        );
    }
    let out = convert_then_to_dicom("convert-dicom", &input, dir.path());
    assert_eq!(out.len(), 3);
    for (f, (c, w)) in out.iter().zip(windows) {
        let o = open_file(f).unwrap();
        assert_eq!(text(&o, tags::WINDOW_CENTER), c, "{f:?}");
        assert_eq!(text(&o, tags::WINDOW_WIDTH), w, "{f:?}");
    }
}

/// What strict re-reading requires of a CR Image: the common Type 1 and 2
/// attributes, CR Series' BodyPartExamined and ViewPosition, and
/// PatientOrientation.
const CR_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    Modality,PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,StudyTime,StudyID,\
    ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,InstanceNumber,\
    BodyPartExamined,ViewPosition,PatientOrientation,PhotometricInterpretation";

/// A computed radiograph comes back as a CR Image with its body part,
/// view, patient orientation, MONOCHROME1 and voxels.
#[test]
fn a_cr_image_comes_back_as_cr_with_its_series_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cr.dcm");
    let pixels: Vec<u8> = (0..4 * 5u16)
        .flat_map(|v| (v * 197 % 4096).to_le_bytes())
        .collect();
    write(
        &src,
        CR_IMAGE,
        &[
            instance_uids(CR_IMAGE, "1.2.826.0.1.3680043.2.1125.99.6"),
            vec![
                (tags::MODALITY, VR::CS, "CR"),
                (tags::BODY_PART_EXAMINED, VR::CS, "CHEST"),
                (tags::VIEW_POSITION, VR::CS, "PA"),
                (tags::PATIENT_ORIENTATION, VR::CS, "L\\F"),
                (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME1"),
            ],
        ]
        .concat(),
        &pixel_module(4, 5, 16),
        vec![DataElement::new(
            tags::PIXEL_DATA,
            VR::OW,
            PrimitiveValue::U8(pixels.clone().into()),
        )],
    );
    single_file_back(
        &src,
        dir.path(),
        &[
            (tags::SOP_CLASS_UID, CR_IMAGE),
            (tags::MODALITY, "CR"),
            (tags::BODY_PART_EXAMINED, "CHEST"),
            (tags::VIEW_POSITION, "PA"),
            (tags::PATIENT_ORIENTATION, "L\\F"),
            (tags::PHOTOMETRIC_INTERPRETATION, "MONOCHROME1"),
        ],
        &pixels,
        CR_REQUIRED,
    );
}

/// convert-dicom then to-dicom of the single image `src`: one file,
/// holding `want`'s texts and `pixels`, valid for pydicom's strict
/// reading with `required` present; that file.
fn single_file_back(
    src: &Path,
    dir: &Path,
    want: &[(Tag, &str)],
    pixels: &[u8],
    required: &str,
) -> DefaultDicomObject {
    let out = convert_then_to_dicom("convert-dicom", src, dir);
    assert_eq!(out.len(), 1);
    let b = open_file(&out[0]).unwrap();
    for &(tag, want) in want {
        assert_eq!(text(&b, tag), want, "{tag:?}");
    }
    let data = b.element(tags::PIXEL_DATA).unwrap().to_bytes().unwrap();
    assert_eq!(&data[..], pixels);
    strict(&out, required);
    b
}

/// What strict re-reading requires of a DX Image: the common Type 1 and 2
/// attributes, DX Series, DX Image, DX Anatomy Imaged and DX Detector.
const DX_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    Modality,PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,StudyTime,StudyID,\
    ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,InstanceNumber,\
    PresentationIntentType,ImageType,ImageLaterality,PatientOrientation,\
    PixelIntensityRelationship,PixelIntensityRelationshipSign,RescaleIntercept,RescaleSlope,\
    RescaleType,LossyImageCompression,BurnedInAnnotation,DetectorType,ImagerPixelSpacing,\
    PhotometricInterpretation";

/// Writes a 4x5 digital radiograph of `sop_class` with `intent`, with or
/// without its ImageLaterality; its pixels.
fn write_dx(path: &Path, sop_class: &'static str, intent: &str, laterality: bool) -> Vec<u8> {
    let pixels: Vec<u8> = (0..4 * 5u16)
        .flat_map(|v| (v * 173 % 4096).to_le_bytes())
        .collect();
    let mut text = instance_uids(sop_class, "1.2.826.0.1.3680043.2.1125.99.7");
    text.extend([
        (tags::MODALITY, VR::CS, "DX"),
        (tags::IMAGE_TYPE, VR::CS, "ORIGINAL\\PRIMARY"),
        (tags::PRESENTATION_INTENT_TYPE, VR::CS, intent),
        (tags::PATIENT_ORIENTATION, VR::CS, "A\\F"),
        (tags::PIXEL_INTENSITY_RELATIONSHIP, VR::CS, "LIN"),
        (tags::RESCALE_INTERCEPT, VR::DS, "-2"),
        (tags::RESCALE_SLOPE, VR::DS, "0.5"),
        (tags::RESCALE_TYPE, VR::LO, "US"),
        (tags::LOSSY_IMAGE_COMPRESSION, VR::CS, "00"),
        (tags::BURNED_IN_ANNOTATION, VR::CS, "NO"),
        (tags::DETECTOR_TYPE, VR::CS, "SCINTILLATOR"),
        (tags::IMAGER_PIXEL_SPACING, VR::DS, "0.139\\0.14"),
        (tags::BODY_PART_EXAMINED, VR::CS, "HAND"),
        (tags::WINDOW_CENTER, VR::DS, "1000"),
        (tags::WINDOW_WIDTH, VR::DS, "2000"),
        (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
    ]);
    if laterality {
        text.push((tags::IMAGE_LATERALITY, VR::CS, "L"));
    }
    write(
        path,
        sop_class,
        &text,
        &pixel_module(4, 5, 16),
        vec![
            DataElement::new(
                tags::PIXEL_INTENSITY_RELATIONSHIP_SIGN,
                VR::SS,
                PrimitiveValue::from(1i16),
            ),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U8(pixels.clone().into()),
            ),
        ],
    );
    pixels
}

/// A digital radiograph, For Presentation and For Processing, comes back
/// as a DX Image of its own SOP class with its DX attributes, rescale and
/// voxels; For Presentation gains the Presentation LUT Shape it requires.
#[test]
fn a_dx_image_comes_back_as_dx_with_its_detector_and_intent() {
    for (sop_class, intent) in [
        (DX_PRESENTATION, "FOR PRESENTATION"),
        (DX_PROCESSING, "FOR PROCESSING"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("dx.dcm");
        let pixels = write_dx(&src, sop_class, intent, true);
        let b = single_file_back(
            &src,
            dir.path(),
            &[
                (tags::SOP_CLASS_UID, sop_class),
                (tags::MODALITY, "DX"),
                (tags::PRESENTATION_INTENT_TYPE, intent),
                (tags::IMAGE_TYPE, "ORIGINAL\\PRIMARY"),
                (tags::IMAGE_LATERALITY, "L"),
                (tags::PATIENT_ORIENTATION, "A\\F"),
                (tags::PIXEL_INTENSITY_RELATIONSHIP, "LIN"),
                (tags::RESCALE_TYPE, "US"),
                (tags::DETECTOR_TYPE, "SCINTILLATOR"),
                (tags::LOSSY_IMAGE_COMPRESSION, "00"),
                (tags::BURNED_IN_ANNOTATION, "NO"),
            ],
            &pixels,
            DX_REQUIRED,
        );
        let sign = b.element(tags::PIXEL_INTENSITY_RELATIONSHIP_SIGN).unwrap();
        assert_eq!(sign.vr(), VR::SS);
        assert_eq!(sign.to_int::<i16>().unwrap(), 1);
        assert_eq!(floats(&b, tags::IMAGER_PIXEL_SPACING), [0.139, 0.14]);
        assert_eq!(floats(&b, tags::RESCALE_SLOPE), [0.5]);
        assert_eq!(floats(&b, tags::RESCALE_INTERCEPT), [-2.0]);
        let shape = b
            .get(tags::PRESENTATION_LUT_SHAPE)
            .map(|_| text(&b, tags::PRESENTATION_LUT_SHAPE));
        let want_shape = (sop_class == DX_PRESENTATION).then(|| "IDENTITY".to_string());
        assert_eq!(shape, want_shape, "{sop_class}");
    }
}

/// A radiograph whose archive lacks one of DX's Type 1 attributes is
/// written as Secondary Capture rather than as an invalid DX Image.
#[test]
fn a_dx_image_without_its_laterality_falls_back_to_secondary_capture() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dx.dcm");
    let pixels = write_dx(&src, DX_PRESENTATION, "FOR PRESENTATION", false);
    single_file_back(
        &src,
        dir.path(),
        &[
            (tags::SOP_CLASS_UID, SECONDARY_CAPTURE),
            (tags::MODALITY, "DX"),
        ],
        &pixels,
        "SOPClassUID,SOPInstanceUID,Modality,ConversionType,PhotometricInterpretation",
    );
}

/// What strict re-reading requires of a grey Ultrasound Image.
const US_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    Modality,PatientName,PatientID,StudyDate,StudyTime,StudyID,ReferringPhysicianName,\
    AccessionNumber,SeriesNumber,InstanceNumber,ImageType,PhotometricInterpretation";

/// A grey ultrasound image comes back as an Ultrasound Image with its
/// ImageType, its US Region Calibration (binary values unchanged) and
/// voxels.
#[test]
fn a_grey_ultrasound_image_comes_back_as_us() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("us.dcm");
    let pixels: Vec<u8> = (0..6 * 7u8).map(|v| v.wrapping_mul(37)).collect();
    write(
        &src,
        US_IMAGE,
        &[
            instance_uids(US_IMAGE, "1.2.826.0.1.3680043.2.1125.99.8"),
            vec![
                (tags::MODALITY, VR::CS, "US"),
                (tags::IMAGE_TYPE, VR::CS, "ORIGINAL\\PRIMARY\\ABDOMINAL"),
                (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
            ],
        ]
        .concat(),
        &pixel_module(6, 7, 8),
        vec![
            DataElement::new(
                tags::SEQUENCE_OF_ULTRASOUND_REGIONS,
                VR::SQ,
                DataSetSequence::from(vec![ultrasound_region()]),
            ),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OB,
                PrimitiveValue::U8(pixels.clone().into()),
            ),
        ],
    );
    let b = single_file_back(
        &src,
        dir.path(),
        &[
            (tags::SOP_CLASS_UID, US_IMAGE),
            (tags::MODALITY, "US"),
            (tags::IMAGE_TYPE, "ORIGINAL\\PRIMARY\\ABDOMINAL"),
            (tags::PHOTOMETRIC_INTERPRETATION, "MONOCHROME2"),
        ],
        &pixels,
        US_REQUIRED,
    );
    assert!(b.get(tags::CONVERSION_TYPE).is_none());
    let regions = b
        .element(tags::SEQUENCE_OF_ULTRASOUND_REGIONS)
        .unwrap()
        .items()
        .unwrap();
    assert_eq!(regions.len(), 1);
    let want = ultrasound_region();
    for e in want.iter() {
        let got = regions[0].element(e.tag()).unwrap();
        assert_eq!(got.vr(), e.vr(), "{:?}", e.tag());
        assert_eq!(got.value(), e.value(), "{:?}", e.tag());
    }
}

/// One US Region Calibration item (PS3.3 C.8.5.5): a 2-D tissue region
/// of 0.0123456789 cm pixels.
fn ultrasound_region() -> InMemDicomObject {
    let mut item = InMemDicomObject::new_empty();
    for (tag, v) in [
        (tags::REGION_SPATIAL_FORMAT, 1u16),
        (tags::REGION_DATA_TYPE, 1),
        (tags::PHYSICAL_UNITS_X_DIRECTION, 3),
        (tags::PHYSICAL_UNITS_Y_DIRECTION, 3),
    ] {
        item.put(DataElement::new(tag, VR::US, PrimitiveValue::from(v)));
    }
    for (tag, v) in [
        (tags::REGION_FLAGS, 2u32),
        (tags::REGION_LOCATION_MIN_X0, 1),
        (tags::REGION_LOCATION_MIN_Y0, 0),
        (tags::REGION_LOCATION_MAX_X1, 6),
        (tags::REGION_LOCATION_MAX_Y1, 5),
    ] {
        item.put(DataElement::new(tag, VR::UL, PrimitiveValue::from(v)));
    }
    item.put(DataElement::new(
        tags::REFERENCE_PIXEL_X0,
        VR::SL,
        PrimitiveValue::from(-3i32),
    ));
    for tag in [tags::PHYSICAL_DELTA_X, tags::PHYSICAL_DELTA_Y] {
        item.put(DataElement::new(
            tag,
            VR::FD,
            PrimitiveValue::from(0.0123456789f64),
        ));
    }
    item
}

/// What strict re-reading requires of a PET Image: the common Type 1 and
/// 2 attributes, PET Series, PET Isotope, NM/PET Patient Orientation and
/// PET Image.
const PET_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    Modality,PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,StudyTime,StudyID,\
    ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,InstanceNumber,\
    FrameOfReferenceUID,ImagePositionPatient,ImageOrientationPatient,PixelSpacing,\
    SliceThickness,ImageType,SeriesDate,SeriesTime,Units,CountsSource,SeriesType,\
    DecayCorrection,NumberOfSlices,CorrectedImage,CollimatorType,\
    RadiopharmaceuticalInformationSequence,PatientOrientationCodeSequence,\
    PatientGantryRelationshipCodeSequence,RescaleSlope,RescaleIntercept,\
    FrameReferenceTime,ImageIndex,AcquisitionDate,AcquisitionTime,ActualFrameDuration,\
    DecayFactor";

/// Writes slice `k` of a 3-slice PET series: per-slice ImageIndex and
/// RescaleSlope, the radiopharmaceutical and its radionuclide code.
fn write_pet_slice(path: &Path, k: usize) {
    let code = InMemDicomObject::from_element_iter([
        DataElement::new(tags::CODE_VALUE, VR::SH, "C-111A1"),
        DataElement::new(tags::CODING_SCHEME_DESIGNATOR, VR::SH, "SRT"),
        DataElement::new(tags::CODE_MEANING, VR::LO, "^18^Fluorine"),
    ]);
    let drug = InMemDicomObject::from_element_iter([
        DataElement::new(tags::RADIOPHARMACEUTICAL, VR::LO, "Fluorodeoxyglucose"),
        DataElement::new(tags::RADIOPHARMACEUTICAL_START_TIME, VR::TM, "081500"),
        DataElement::new(tags::RADIONUCLIDE_TOTAL_DOSE, VR::DS, "370000000"),
        DataElement::new(tags::RADIONUCLIDE_HALF_LIFE, VR::DS, "6586.2"),
        DataElement::new(
            tags::RADIONUCLIDE_CODE_SEQUENCE,
            VR::SQ,
            DataSetSequence::from(vec![code]),
        ),
    ]);
    let sop = format!("1.2.826.0.1.3680043.2.1125.98.{k}");
    let (z, index, slope) = (
        format!("-10\\20\\{}", k * 4),
        (k + 1).to_string(),
        format!("0.{}5", k + 1),
    );
    write(
        path,
        PET_IMAGE,
        &[
            instance_uids(PET_IMAGE, "1.2.826.0.1.3680043.2.1125.99.7"),
            vec![
                // Each slice its own instance.
                (tags::SOP_INSTANCE_UID, VR::UI, sop.as_str()),
                (
                    tags::FRAME_OF_REFERENCE_UID,
                    VR::UI,
                    "1.2.826.0.1.3680043.2.1125.99.8",
                ),
                (tags::MODALITY, VR::CS, "PT"),
                (tags::IMAGE_TYPE, VR::CS, "ORIGINAL\\PRIMARY"),
                (tags::SERIES_DATE, VR::DA, "20240102"),
                (tags::SERIES_TIME, VR::TM, "090000"),
                (tags::UNITS, VR::CS, "BQML"),
                (tags::COUNTS_SOURCE, VR::CS, "EMISSION"),
                (tags::SERIES_TYPE, VR::CS, "STATIC\\IMAGE"),
                (tags::DECAY_CORRECTION, VR::CS, "START"),
                (tags::CORRECTED_IMAGE, VR::CS, "DECY\\ATTN"),
                (tags::COLLIMATOR_TYPE, VR::CS, "NONE"),
                (tags::FRAME_REFERENCE_TIME, VR::DS, "150000"),
                (tags::ACQUISITION_DATE, VR::DA, "20240102"),
                (tags::ACQUISITION_TIME, VR::TM, "090000"),
                (tags::ACTUAL_FRAME_DURATION, VR::IS, "300000"),
                (tags::DECAY_FACTOR, VR::DS, "1.02"),
                (tags::INSTANCE_NUMBER, VR::IS, index.as_str()),
                (tags::IMAGE_POSITION_PATIENT, VR::DS, z.as_str()),
                (tags::IMAGE_ORIENTATION_PATIENT, VR::DS, "1\\0\\0\\0\\1\\0"),
                (tags::PIXEL_SPACING, VR::DS, "4\\4"),
                (tags::SLICE_THICKNESS, VR::DS, "4"),
                (tags::RESCALE_SLOPE, VR::DS, slope.as_str()),
                (tags::RESCALE_INTERCEPT, VR::DS, "0"),
                (tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2"),
            ],
        ]
        .concat(),
        &pixel_module(2, 3, 16),
        vec![
            DataElement::new(tags::NUMBER_OF_SLICES, VR::US, PrimitiveValue::from(3u16)),
            DataElement::new(
                tags::IMAGE_INDEX,
                VR::US,
                PrimitiveValue::from(k as u16 + 1),
            ),
            DataElement::new(
                tags::RADIOPHARMACEUTICAL_INFORMATION_SEQUENCE,
                VR::SQ,
                DataSetSequence::from(vec![drug]),
            ),
            DataElement::new(
                tags::PIXEL_DATA,
                VR::OW,
                PrimitiveValue::U16((0..6u16).map(|v| v * 1000 + k as u16).collect()),
            ),
        ],
    );
}

/// A PET series comes back as PET Image instances: the PET Series and
/// Image attributes, each slice's ImageIndex and RescaleSlope, the
/// radiopharmaceutical with its dose, half-life and radionuclide code.
#[test]
fn a_pet_series_comes_back_as_pet_with_its_isotope_and_per_slice_values() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("pet");
    std::fs::create_dir(&series).unwrap();
    let sources: Vec<PathBuf> = (0..3)
        .map(|k| {
            let p = series.join(format!("pet{k}.dcm"));
            write_pet_slice(&p, k);
            p
        })
        .collect();
    let out = convert_then_to_dicom("convert-dicom", &series, dir.path());
    assert_eq!(out.len(), 3);
    for (src, back) in sources.iter().zip(&out) {
        let (a, b) = (open_file(src).unwrap(), open_file(back).unwrap());
        assert_eq!(text(&b, tags::SOP_CLASS_UID), PET_IMAGE);
        let what = format!("{back:?}");
        assert_same_values(
            &a,
            &b,
            &[
                tags::MODALITY,
                tags::UNITS,
                tags::COUNTS_SOURCE,
                tags::SERIES_TYPE,
                tags::DECAY_CORRECTION,
                tags::CORRECTED_IMAGE,
                tags::SERIES_DATE,
                tags::ACQUISITION_TIME,
                tags::ACTUAL_FRAME_DURATION,
                tags::NUMBER_OF_SLICES,
                tags::IMAGE_INDEX,
                tags::INSTANCE_NUMBER,
            ],
            &[
                tags::RESCALE_SLOPE,
                tags::FRAME_REFERENCE_TIME,
                tags::DECAY_FACTOR,
                tags::IMAGE_POSITION_PATIENT,
            ],
            &what,
        );
        let drug = |o: &InMemDicomObject| {
            let item = &o
                .element(tags::RADIOPHARMACEUTICAL_INFORMATION_SEQUENCE)
                .unwrap()
                .items()
                .unwrap()[0];
            let code = &item
                .element(tags::RADIONUCLIDE_CODE_SEQUENCE)
                .unwrap()
                .items()
                .unwrap()[0];
            [
                text(item, tags::RADIOPHARMACEUTICAL),
                text(item, tags::RADIONUCLIDE_TOTAL_DOSE),
                text(item, tags::RADIONUCLIDE_HALF_LIFE),
                text(item, tags::RADIOPHARMACEUTICAL_START_TIME),
                text(code, tags::CODE_VALUE),
                text(code, tags::CODE_MEANING),
            ]
        };
        assert_eq!(drug(&a), drug(&b), "{back:?}");
        let pixels = |o: &InMemDicomObject| {
            o.element(tags::PIXEL_DATA)
                .unwrap()
                .to_bytes()
                .unwrap()
                .to_vec()
        };
        assert_eq!(pixels(&a), pixels(&b), "{back:?}");
    }
    strict(&out, PET_REQUIRED);
}
