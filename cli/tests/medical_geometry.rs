//! One geometry across DICOM and NIfTI, and DICOM written back valid:
//! an oblique CT series generated here goes DICOM → tgm → NIfTI, an
//! oblique NIfTI volume goes NIfTI → tgm → DICOM, and every voxel centre
//! must land where the source put it (corner voxels to 1e-4 mm). The
//! written DICOM is re-read by dicom-rs always, and by pydicom in strict
//! validation mode and nibabel when `TGM_MEDICAL_PYTHON` names a Python
//! with both installed (`.ci/medical.sh` sets it up).
#![cfg(all(feature = "dicom", feature = "nifti"))]

use std::path::{Path, PathBuf};

use dicom_core::header::Header as _;
use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{open_file, FileMetaTableBuilder, InMemDicomObject};
use nifti::NiftiHeader;
use tgm_convert::medical::nifti::{read_nifti, Header, NiftiVolume};
use tgm_convert::medical::nifti_header::{header_from_meta, quaternion_affine, write_header};

mod medical_common;
use medical_common::{convert_then_to_dicom, python, run_python, s, tgm, PYDICOM_STRICT};

const CT_STORAGE: &str = "1.2.840.10008.5.1.4.1.1.2";
const ENHANCED_CT: &str = "1.2.840.10008.5.1.4.1.1.2.1";
const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";

/// The oblique series: rows along (cos a, sin a, 0), columns tilted out of
/// the axial plane, spacing 0.7 x 0.45 mm, 8 slices 2.5 mm apart.
struct Oblique {
    row: [f64; 3],
    col: [f64; 3],
    spacing: [f64; 2],
    origin: [f64; 3],
    step: f64,
    slices: usize,
    rows: u16,
    cols: u16,
}

fn oblique() -> Oblique {
    let (sa, ca) = (0.4f64.sin(), 0.4f64.cos());
    let (sb, cb) = (0.3f64.sin(), 0.3f64.cos());
    Oblique {
        row: [ca, sa, 0.0],
        col: [-sa * cb, ca * cb, -sb],
        spacing: [0.7, 0.45],
        origin: [-179.85504592914114, 101.3333333333333, -33.7777777777777],
        step: 2.5,
        slices: 8,
        rows: 4,
        cols: 6,
    }
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// LPS position of voxel (column i, row j, slice k) of a DICOM slice plane.
fn dicom_voxel(ipp: [f64; 3], iop: [f64; 6], ps: [f64; 2], i: f64, j: f64) -> [f64; 3] {
    [0, 1, 2].map(|r| ipp[r] + i * iop[r] * ps[1] + j * iop[3 + r] * ps[0])
}

impl Oblique {
    fn position(&self, k: usize) -> [f64; 3] {
        let n = cross(self.row, self.col);
        [0, 1, 2].map(|r| self.origin[r] + k as f64 * self.step * n[r])
    }

    /// ImageOrientationPatient: row direction, then column direction.
    fn orientation(&self) -> [f64; 6] {
        let (r, c) = (self.row, self.col);
        [r[0], r[1], r[2], c[0], c[1], c[2]]
    }

    fn voxel(&self, i: f64, j: f64, k: usize) -> [f64; 3] {
        let o = self.orientation();
        dicom_voxel(self.position(k), o, self.spacing, i, j)
    }

    /// The attributes a CT scanner fills in that every image shares:
    /// identifying and Type 2 ones.
    fn common(&self, sop_class: &str, sop: &str) -> Vec<(Tag, VR, String)> {
        vec![
            (tags::SOP_CLASS_UID, VR::UI, sop_class.into()),
            (tags::SOP_INSTANCE_UID, VR::UI, sop.into()),
            (
                tags::STUDY_INSTANCE_UID,
                VR::UI,
                "1.2.826.0.1.3680043.2.1125.1".into(),
            ),
            (
                tags::SERIES_INSTANCE_UID,
                VR::UI,
                "1.2.826.0.1.3680043.2.1125.2".into(),
            ),
            (
                tags::FRAME_OF_REFERENCE_UID,
                VR::UI,
                "1.2.826.0.1.3680043.2.1125.3".into(),
            ),
            (tags::MODALITY, VR::CS, "CT".into()),
            (tags::IMAGE_TYPE, VR::CS, "ORIGINAL\\PRIMARY\\AXIAL".into()),
            (tags::PATIENT_NAME, VR::PN, "Oblique^Olga".into()),
            (tags::PATIENT_ID, VR::LO, "OBL-1".into()),
            (tags::PATIENT_BIRTH_DATE, VR::DA, "19610203".into()),
            (tags::PATIENT_SEX, VR::CS, "F".into()),
            (tags::STUDY_DATE, VR::DA, "20240607".into()),
            (tags::STUDY_TIME, VR::TM, "081530.25".into()),
            (tags::STUDY_ID, VR::SH, "ST7".into()),
            (tags::ACCESSION_NUMBER, VR::SH, "ACC-9".into()),
            (tags::REFERRING_PHYSICIAN_NAME, VR::PN, "Ref^Rita".into()),
            (tags::SERIES_NUMBER, VR::IS, "3".into()),
            (tags::MANUFACTURER, VR::LO, "Acme".into()),
            (tags::KVP, VR::DS, "120".into()),
            (
                tags::PHOTOMETRIC_INTERPRETATION,
                VR::CS,
                "MONOCHROME2".into(),
            ),
        ]
    }

    /// The voxels of every slice, slice after slice.
    fn values(&self) -> Vec<u16> {
        let n = self.slices * self.rows as usize * self.cols as usize;
        (0..n).map(|v| (v * 37 % 4001) as u16).collect()
    }

    /// Writes `text` and `extra`, the pixel module and `pixels` to `path`.
    fn save(
        &self,
        path: &Path,
        text: Vec<(Tag, VR, String)>,
        extra: Vec<DataElement<InMemDicomObject>>,
        pixels: Vec<u16>,
    ) {
        let mut obj = InMemDicomObject::new_empty();
        for (tag, vr, v) in text {
            obj.put(DataElement::new(tag, vr, v.as_str()));
        }
        for e in extra {
            obj.put(e);
        }
        for (tag, v) in [
            (tags::SAMPLES_PER_PIXEL, 1u16),
            (tags::ROWS, self.rows),
            (tags::COLUMNS, self.cols),
            (tags::BITS_ALLOCATED, 16),
            (tags::BITS_STORED, 12),
            (tags::HIGH_BIT, 11),
            (tags::PIXEL_REPRESENTATION, 0),
        ] {
            obj.put(DataElement::new(tag, VR::US, PrimitiveValue::from(v)));
        }
        obj.put(DataElement::new(
            tags::PIXEL_DATA,
            VR::OW,
            PrimitiveValue::U16(pixels.into()),
        ));
        let meta =
            |o: &InMemDicomObject, t: Tag| o.element(t).unwrap().to_str().unwrap().to_string();
        let (class, sop) = (
            meta(&obj, tags::SOP_CLASS_UID),
            meta(&obj, tags::SOP_INSTANCE_UID),
        );
        obj.with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax(EXPLICIT_LE)
                .media_storage_sop_class_uid(class)
                .media_storage_sop_instance_uid(sop),
        )
        .unwrap()
        .write_to_file(path)
        .unwrap();
    }

    /// Writes the slices in reverse order with every identifying and Type 2
    /// attribute a CT scanner fills in.
    fn write(&self, dir: &Path) -> Vec<u16> {
        let per = self.rows as usize * self.cols as usize;
        let values = self.values();
        for k in (0..self.slices).rev() {
            let sop = format!("1.2.826.0.1.3680043.2.1125.7.{k}");
            let mut text = self.common(CT_STORAGE, &sop);
            text.extend([
                (tags::INSTANCE_NUMBER, VR::IS, (k + 1).to_string()),
                (tags::IMAGE_POSITION_PATIENT, VR::DS, ds(&self.position(k))),
                (
                    tags::IMAGE_ORIENTATION_PATIENT,
                    VR::DS,
                    ds(&self.orientation()),
                ),
                (tags::PIXEL_SPACING, VR::DS, ds(&self.spacing)),
                (tags::SLICE_THICKNESS, VR::DS, "2.5".into()),
                (tags::RESCALE_SLOPE, VR::DS, "1".into()),
                (tags::RESCALE_INTERCEPT, VR::DS, "-1024".into()),
            ]);
            let slice = values[k * per..(k + 1) * per].to_vec();
            self.save(&dir.join(format!("s{k}.dcm")), text, Vec::new(), slice);
        }
        values
    }

    /// Writes the series as one Enhanced CT image: orientation, spacing
    /// and rescale in the shared functional groups, each frame's position
    /// in the per-frame ones.
    fn write_enhanced(&self, path: &Path) -> Vec<u16> {
        let item = |e: Vec<(Tag, VR, &str)>| {
            InMemDicomObject::from_element_iter(
                e.into_iter().map(|(t, vr, v)| DataElement::new(t, vr, v)),
            )
        };
        let seq = |t: Tag, items: Vec<InMemDicomObject>| {
            DataElement::new(t, VR::SQ, DataSetSequence::from(items))
        };
        let (o, ps) = (ds(&self.orientation()), ds(&self.spacing));
        let shared = InMemDicomObject::from_element_iter([
            seq(
                tags::PLANE_ORIENTATION_SEQUENCE,
                vec![item(vec![(tags::IMAGE_ORIENTATION_PATIENT, VR::DS, &o)])],
            ),
            seq(
                tags::PIXEL_MEASURES_SEQUENCE,
                vec![item(vec![
                    (tags::PIXEL_SPACING, VR::DS, &ps),
                    (tags::SLICE_THICKNESS, VR::DS, "2.5"),
                ])],
            ),
            seq(
                tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE,
                vec![item(vec![
                    (tags::RESCALE_INTERCEPT, VR::DS, "-1024"),
                    (tags::RESCALE_SLOPE, VR::DS, "1"),
                    (tags::RESCALE_TYPE, VR::LO, "HU"),
                ])],
            ),
        ]);
        let per_frame = (0..self.slices)
            .map(|k| {
                let p = ds(&self.position(k));
                InMemDicomObject::from_element_iter([seq(
                    tags::PLANE_POSITION_SEQUENCE,
                    vec![item(vec![(tags::IMAGE_POSITION_PATIENT, VR::DS, &p)])],
                )])
            })
            .collect();
        let mut text = self.common(ENHANCED_CT, "1.2.826.0.1.3680043.2.1125.8.1");
        text.extend([
            (tags::INSTANCE_NUMBER, VR::IS, "1".into()),
            (tags::NUMBER_OF_FRAMES, VR::IS, self.slices.to_string()),
        ]);
        let groups = vec![
            seq(tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE, vec![shared]),
            seq(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE, per_frame),
        ];
        let values = self.values();
        self.save(path, text, groups, values.clone());
        values
    }
}

/// DS values of `v`, ten decimals each.
fn ds(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.10}"))
        .collect::<Vec<_>>()
        .join("\\")
}

fn close(a: [f64; 3], b: [f64; 3], tol: f64, what: &str) {
    assert!(
        (0..3).all(|r| (a[r] - b[r]).abs() <= tol),
        "{what}: {a:?} vs {b:?}"
    );
}

/// RAS affine applied to a voxel index, converted to LPS.
fn ras_voxel(m: &[[f64; 4]; 4], i: f64, j: f64, k: f64) -> [f64; 3] {
    let ras = [0, 1, 2].map(|r| m[r][0] * i + m[r][1] * j + m[r][2] * k + m[r][3]);
    [-ras[0], -ras[1], ras[2]]
}

/// The corner voxels of an `n x rows x cols` volume as (i, j, k).
fn corners(cols: usize, rows: usize, n: usize) -> Vec<(f64, f64, usize)> {
    let mut out = Vec::new();
    for k in [0, n - 1] {
        for j in [0.0, rows as f64 - 1.0] {
            for i in [0.0, cols as f64 - 1.0] {
                out.push((i, j, k));
            }
        }
    }
    out
}

/// convert-dicom of `series` then to-nifti into `dir/NAME.nii`: the file,
/// the volume read back by tgm's reader, its NIfTI-1 header and sform.
fn dicom_to_nifti(
    series: &Path,
    dir: &Path,
    name: &str,
) -> (PathBuf, NiftiVolume, NiftiHeader, [[f64; 4]; 4]) {
    let archive = dir.join(format!("{name}.tgm"));
    let (ok, err) = tgm(&["convert-dicom", s(series), "-o", s(&archive)]);
    assert!(ok, "{err}");
    let nii = dir.join(format!("{name}.nii"));
    let (ok, err) = tgm(&["to-nifti", s(&archive), "-o", s(&nii)]);
    assert!(ok, "{err}");
    let vol = read_nifti(&nii, None).unwrap();
    let Header::V1(h) = &vol.header else {
        panic!("NIfTI-1 expected")
    };
    let h = (**h).clone();
    let r = |v: [f32; 4]| v.map(f64::from);
    let sform = [r(h.srow_x), r(h.srow_y), r(h.srow_z), [0.0, 0.0, 0.0, 1.0]];
    (nii, vol, h, sform)
}

#[test]
#[ignore = "needs pydicom and nibabel (TGM_MEDICAL_PYTHON): bash .ci/medical.sh"]
fn dicom_to_nifti_keeps_every_voxel_centre_in_sform_and_qform() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("ct");
    std::fs::create_dir(&series).unwrap();
    let g = oblique();
    g.write(&series);
    let (nii, vol, h, sform) = dicom_to_nifti(&series, dir.path(), "ct");
    assert_eq!((h.sform_code, h.qform_code), (1, 1));
    assert_eq!((h.scl_slope, h.scl_inter), (1.0, -1024.0));
    assert_eq!(
        h.pixdim[0], 1.0,
        "a DICOM series sorted along its normal is right-handed"
    );
    let qform = quaternion_affine(
        [h.quatern_b, h.quatern_c, h.quatern_d].map(f64::from),
        [h.quatern_x, h.quatern_y, h.quatern_z].map(f64::from),
        [h.pixdim[0], h.pixdim[1], h.pixdim[2], h.pixdim[3]].map(f64::from),
    );
    assert_eq!(vol.dims, [6, 4, 8]);
    for (i, j, k) in corners(6, 4, 8) {
        let want = g.voxel(i, j, k);
        close(ras_voxel(&sform, i, j, k as f64), want, 1e-4, "sform");
        close(ras_voxel(&qform, i, j, k as f64), want, 1e-4, "qform");
    }

    let Some(py) = python() else { return };
    let out = run_python(
        &py,
        "import json, sys, nibabel\n\
         img = nibabel.load(sys.argv[1])\n\
         print(json.dumps({'affine': img.affine.tolist(), \
         'sform': int(img.header['sform_code']), 'qform': int(img.header['qform_code']), \
         'q': img.get_qform().tolist()}))",
        &[s(&nii)],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["sform"].as_i64(), v["qform"].as_i64()),
        (Some(1), Some(1))
    );
    for key in ["affine", "q"] {
        let m: Vec<Vec<f64>> = serde_json::from_value(v[key].clone()).unwrap();
        let m: [[f64; 4]; 4] = std::array::from_fn(|r| std::array::from_fn(|c| m[r][c]));
        for (i, j, k) in corners(6, 4, 8) {
            close(ras_voxel(&m, i, j, k as f64), g.voxel(i, j, k), 1e-4, key);
        }
    }
}

/// Every file of `files` is slice `k` of `g`: position, orientation and
/// spacing put its corner voxels where `g` does (1e-4 mm).
fn assert_series_is(files: &[PathBuf], g: &Oblique) {
    assert_eq!(files.len(), g.slices);
    for (k, f) in files.iter().enumerate() {
        let obj = open_file(f).unwrap();
        let ipp: [f64; 3] = ds_values(&obj, tags::IMAGE_POSITION_PATIENT)
            .try_into()
            .unwrap();
        let iop: [f64; 6] = ds_values(&obj, tags::IMAGE_ORIENTATION_PATIENT)
            .try_into()
            .unwrap();
        let ps: [f64; 2] = ds_values(&obj, tags::PIXEL_SPACING).try_into().unwrap();
        for (i, j, _) in corners(g.cols as usize, g.rows as usize, 1) {
            let what = format!("{f:?} voxel ({i}, {j})");
            close(
                dicom_voxel(ipp, iop, ps, i, j),
                g.voxel(i, j, k),
                1e-4,
                &what,
            );
        }
    }
}

/// An Enhanced CT image (one multi-frame file; orientation, spacing and
/// rescale in the shared functional groups, positions in the per-frame
/// ones) goes back to DICOM as classic CT Image slices with each frame's
/// geometry, rescale and voxels; read again, the same geometry.
#[test]
fn an_enhanced_ct_comes_back_as_ct_slices_with_its_functional_group_geometry() {
    let g = oblique();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("enhanced.dcm");
    let values = g.write_enhanced(&src);
    let files = convert_then_to_dicom("convert-dicom", &src, dir.path());
    assert_series_is(&files, &g);
    let per = g.rows as usize * g.cols as usize;
    for (k, f) in files.iter().enumerate() {
        let obj = open_file(f).unwrap();
        let text = |t: Tag| obj.element(t).unwrap().to_str().unwrap().trim().to_string();
        assert_eq!(text(tags::SOP_CLASS_UID).trim_end_matches('\0'), CT_STORAGE);
        assert_eq!(text(tags::RESCALE_INTERCEPT), "-1024");
        assert_eq!(text(tags::RESCALE_SLOPE), "1");
        assert_eq!(text(tags::SLICE_THICKNESS), "2.5");
        let pixels = obj.element(tags::PIXEL_DATA).unwrap().to_bytes().unwrap();
        let want: Vec<u8> = values[k * per..(k + 1) * per]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(&pixels[..], &want[..], "{f:?}");
    }
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let files2 = convert_then_to_dicom("convert-dicom", &dir.path().join("out"), &again);
    assert_series_is(&files2, &g);
    if let Some(py) = python() {
        let mut args = vec![CT_REQUIRED];
        args.extend(files.iter().map(|f| s(f)));
        run_python(&py, PYDICOM_STRICT, &args);
    }
}

/// What strict re-reading requires of a CT Image written back.
const CT_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,\
    Modality,PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,StudyTime,StudyID,\
    ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,InstanceNumber,\
    ImagePositionPatient,ImageOrientationPatient,PixelSpacing,SliceThickness,ImageType,KVP,\
    AcquisitionNumber,RescaleSlope,RescaleIntercept,FrameOfReferenceUID";

/// A single-file NIfTI-1 int16 volume with this RAS sform (code 1), no qform.
fn write_nifti(path: &Path, dims: &[u64], srow: [[f32; 4]; 3]) {
    let mut h = header_from_meta(None, tgm::Dtype::Int16, dims, tgm::ByteOrder::Little).unwrap();
    h.sform_code = 1;
    [h.srow_x, h.srow_y, h.srow_z] = srow;
    (h.scl_slope, h.scl_inter) = (0.5, -10.0);
    let mut bytes = write_header(&h, &[]).unwrap();
    let n: u64 = dims.iter().product();
    bytes.extend((0..n).flat_map(|v| ((v * 11 % 3000) as i16 - 700).to_le_bytes()));
    std::fs::write(path, bytes).unwrap();
}

fn ds_values(obj: &dicom_object::DefaultDicomObject, tag: Tag) -> Vec<f64> {
    obj.element(tag).unwrap().to_multi_float64().unwrap()
}

/// The corner voxels of a 5 x 3 DICOM slice lie where the NIfTI affine
/// `m` puts slice `k` (1e-4 mm).
fn assert_slice_at(
    obj: &dicom_object::DefaultDicomObject,
    m: &[[f64; 4]; 4],
    k: usize,
    what: &str,
) {
    let ipp: [f64; 3] = ds_values(obj, tags::IMAGE_POSITION_PATIENT)
        .try_into()
        .unwrap();
    let iop: [f64; 6] = ds_values(obj, tags::IMAGE_ORIENTATION_PATIENT)
        .try_into()
        .unwrap();
    let ps: [f64; 2] = ds_values(obj, tags::PIXEL_SPACING).try_into().unwrap();
    for (i, j, _) in corners(5, 3, 1) {
        close(
            dicom_voxel(ipp, iop, ps, i, j),
            ras_voxel(m, i, j, k as f64),
            1e-4,
            &format!("{what} voxel ({i}, {j})"),
        );
    }
}

#[test]
fn nifti_to_dicom_puts_every_slice_where_the_affine_does() {
    let dir = tempfile::tempdir().unwrap();
    let nii = dir.path().join("obl.nii");
    // Left-handed (radiological) and oblique: a rotation about z by 0.35
    // rad with the x axis flipped, voxels 0.8 x 0.6 x 3 mm.
    let (s1, c1) = (0.35f32.sin(), 0.35f32.cos());
    let srow = [
        [-0.8 * c1, -0.6 * s1, 0.0, 91.12346],
        [-0.8 * s1, 0.6 * c1, 0.0, -126.9877],
        [0.0, 0.0, 3.0, -72.5],
    ];
    write_nifti(&nii, &[5, 3, 4], srow);
    let files = convert_then_to_dicom("convert-nifti", &nii, dir.path());
    let out = dir.path().join("out");
    assert_eq!(files.len(), 4);
    let m: [[f64; 4]; 4] = std::array::from_fn(|r| {
        if r < 3 {
            srow[r].map(f64::from)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    });
    for (k, f) in files.iter().enumerate() {
        let obj = open_file(f).unwrap();
        assert_slice_at(&obj, &m, k, &format!("slice {k}"));
        let text = |t: Tag| obj.element(t).unwrap().to_str().unwrap().trim().to_string();
        assert_eq!(text(tags::MODALITY), "OT");
        assert_eq!(text(tags::RESCALE_SLOPE), "0.5");
        assert_eq!(text(tags::RESCALE_INTERCEPT), "-10");
        assert!(!text(tags::FRAME_OF_REFERENCE_UID).is_empty());
        assert!((ds_values(&obj, tags::SLICE_THICKNESS)[0] - 3.0).abs() < 1e-6);
        assert!((ds_values(&obj, tags::SPACING_BETWEEN_SLICES)[0] - 3.0).abs() < 1e-6);
    }
    // The same geometry comes back through DICOM into a new archive.
    let (_, vol, _, sform) = dicom_to_nifti(&out, dir.path(), "again");
    // Slices re-read from DICOM are ordered along row x column, which
    // reverses this left-handed volume's k axis.
    let source = read_nifti(&nii, None).unwrap().data;
    let slice = 5 * 3 * 2;
    for (i, j, k) in corners(5, 3, 4) {
        let kb = 3 - k;
        let at = |data: &[u8], k: usize| {
            let o = k * slice + (j as usize * 5 + i as usize) * 2;
            [data[o], data[o + 1]]
        };
        assert_eq!(at(&source, k), at(&vol.data, kb), "voxel ({i}, {j}, {k})");
        close(
            ras_voxel(&sform, i, j, kb as f64),
            ras_voxel(&m, i, j, k as f64),
            1e-4,
            "NIfTI -> DICOM -> NIfTI",
        );
    }
}

/// A 4-D NIfTI (3 time points of 4 slices of 3 x 5 voxels) goes NIfTI →
/// tgm → DICOM → tgm → NIfTI: one series of 12 instances, time outermost,
/// each with its time point, its slice's position, and its voxels; read
/// back, the same voxels and affine.
#[test]
fn a_4d_volume_becomes_one_series_of_time_points_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let nii = dir.path().join("fmri.nii");
    // Right-handed in LPS, so DICOM's slice order is the NIfTI k order.
    let (s1, c1) = (0.2f32.sin(), 0.2f32.cos());
    let srow = [
        [0.8 * c1, -0.6 * s1, 0.0, -40.25],
        [0.8 * s1, 0.6 * c1, 0.0, 17.5],
        [0.0, 0.0, 3.0, -12.0],
    ];
    write_nifti(&nii, &[5, 3, 4, 3], srow);
    let files = convert_then_to_dicom("convert-nifti", &nii, dir.path());
    assert_eq!(files.len(), 12);
    let m: [[f64; 4]; 4] = std::array::from_fn(|r| {
        if r < 3 {
            srow[r].map(f64::from)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        }
    });
    let source = read_nifti(&nii, None).unwrap().data;
    let slice = 5 * 3 * 2;
    let mut series = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let (t, k) = (n / 4, n % 4);
        let obj = open_file(f).unwrap();
        let text = |t: Tag| obj.element(t).unwrap().to_str().unwrap().trim().to_string();
        assert_eq!(
            text(tags::TEMPORAL_POSITION_IDENTIFIER),
            (t + 1).to_string()
        );
        assert_eq!(text(tags::NUMBER_OF_TEMPORAL_POSITIONS), "3");
        assert_eq!(text(tags::ACQUISITION_NUMBER), (t + 1).to_string());
        assert_eq!(text(tags::INSTANCE_NUMBER), (n + 1).to_string());
        series.push(text(tags::SERIES_INSTANCE_UID));
        assert_slice_at(&obj, &m, k, &format!("time {t} slice {k}"));
        let pixels = obj.element(tags::PIXEL_DATA).unwrap().to_bytes().unwrap();
        assert_eq!(&pixels[..], &source[n * slice..(n + 1) * slice], "{f:?}");
    }
    series.dedup();
    assert_eq!(series.len(), 1, "one series");
    let (_, vol, _, sform) = dicom_to_nifti(&dir.path().join("out"), dir.path(), "again");
    assert_eq!(vol.dims, [5, 3, 4, 3]);
    assert!(
        vol.data[..] == source[..],
        "voxels differ after NIfTI -> DICOM -> NIfTI"
    );
    for (i, j, k) in corners(5, 3, 4) {
        close(
            ras_voxel(&sform, i, j, k as f64),
            ras_voxel(&m, i, j, k as f64),
            1e-4,
            "4-D NIfTI -> DICOM -> NIfTI",
        );
    }
    if let Some(py) = python() {
        let mut args = vec![TEMPORAL_REQUIRED];
        args.extend(files.iter().map(|f| s(f)));
        run_python(&py, PYDICOM_STRICT, &args);
    }
}

/// What strict re-reading requires of every instance of a time series.
const TEMPORAL_REQUIRED: &str = "SOPClassUID,SOPInstanceUID,SeriesInstanceUID,Modality,\
    InstanceNumber,ImagePositionPatient,ImageOrientationPatient,PixelSpacing,\
    TemporalPositionIdentifier,NumberOfTemporalPositions,AcquisitionNumber";

#[test]
#[ignore = "needs pydicom and nibabel (TGM_MEDICAL_PYTHON): bash .ci/medical.sh"]
fn written_dicom_is_valid_for_strict_readers() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("ct");
    std::fs::create_dir(&series).unwrap();
    let g = oblique();
    let values = g.write(&series);
    let files = convert_then_to_dicom("convert-dicom", &series, dir.path());
    assert_eq!(files.len(), 8);
    let per = 24;
    for (k, f) in files.iter().enumerate() {
        let obj = open_file(f).unwrap();
        for e in obj.iter() {
            if e.vr() == VR::DS {
                for v in e.to_str().unwrap().split('\\') {
                    assert!(v.len() <= 16, "{f:?} {:?} has DS {v:?}", e.tag());
                }
            }
        }
        let text = |t: Tag| obj.element(t).unwrap().to_str().unwrap().trim().to_string();
        assert_eq!(text(tags::SOP_CLASS_UID), CT_STORAGE);
        assert_eq!(text(tags::STUDY_DATE), "20240607");
        assert_eq!(text(tags::STUDY_TIME), "081530.25");
        assert_eq!(text(tags::STUDY_ID), "ST7");
        assert_eq!(text(tags::ACCESSION_NUMBER), "ACC-9");
        assert_eq!(text(tags::REFERRING_PHYSICIAN_NAME), "Ref^Rita");
        assert_eq!(text(tags::PATIENT_BIRTH_DATE), "19610203");
        assert_eq!(text(tags::PATIENT_SEX), "F");
        assert_eq!(text(tags::SERIES_NUMBER), "3");
        assert_eq!(text(tags::IMAGE_TYPE), "ORIGINAL\\PRIMARY\\AXIAL");
        assert_eq!(text(tags::INSTANCE_NUMBER), (k + 1).to_string());
        assert_eq!(text(tags::BITS_STORED), "12");
        let ipp: [f64; 3] = ds_values(&obj, tags::IMAGE_POSITION_PATIENT)
            .try_into()
            .unwrap();
        close(ipp, g.position(k), 1e-4, "ImagePositionPatient");
        let px = obj.element(tags::PIXEL_DATA).unwrap().to_bytes().unwrap();
        let want: Vec<u8> = values[k * per..(k + 1) * per]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(&px[..], &want[..], "slice {k} pixels");
    }

    let Some(py) = python() else { return };
    let mut args = vec![
        "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,FrameOfReferenceUID,\
         PositionReferenceIndicator,Modality,PatientName,PatientID,PatientBirthDate,PatientSex,\
         StudyDate,StudyTime,StudyID,ReferringPhysicianName,AccessionNumber,SeriesNumber,\
         Manufacturer,InstanceNumber,ImagePositionPatient,ImageOrientationPatient,PixelSpacing,\
         SliceThickness,ImageType,KVP,AcquisitionNumber,RescaleSlope,RescaleIntercept",
    ];
    args.extend(files.iter().map(|f| s(f)));
    run_python(&py, PYDICOM_STRICT, &args);
}

/// NIfTI sample (argv[1], 3-D or 4-D) and the DICOM slices written from
/// it (argv[2], time outermost): corner voxel centres within 1e-4 mm,
/// equal voxels, and each instance's time point.
const NIFTI_VS_DICOM: &str = r#"
import sys, glob, numpy, nibabel, pydicom
img = nibabel.load(sys.argv[1])
files = sorted(glob.glob(sys.argv[2] + "/*.dcm"))
nz = img.shape[2]
nt = img.shape[3] if img.ndim == 4 else 1
assert len(files) == nz * nt, (len(files), img.shape)
stored = numpy.asanyarray(img.dataobj.get_unscaled()).reshape(img.shape[:3] + (nt,))
for n, f in enumerate(files):
    t, k = divmod(n, nz)
    ds = pydicom.dcmread(f)
    if img.ndim == 4:
        assert int(ds.TemporalPositionIdentifier) == t + 1, f
        assert int(ds.NumberOfTemporalPositions) == nt, f
        assert int(ds.InstanceNumber) == n + 1, f
    ipp = numpy.array([float(x) for x in ds.ImagePositionPatient])
    iop = numpy.array([float(x) for x in ds.ImageOrientationPatient])
    ps = [float(x) for x in ds.PixelSpacing]
    for i in (0, img.shape[0] - 1):
        for j in (0, img.shape[1] - 1):
            lps = ipp + i * iop[:3] * ps[1] + j * iop[3:] * ps[0]
            ras = img.affine @ [i, j, k, 1]
            want = numpy.array([-ras[0], -ras[1], ras[2]])
            assert abs(lps - want).max() < 1e-4, (f, i, j, lps, want)
    assert (ds.pixel_array.T == stored[:, :, k, t]).all(), f"{f}: voxels differ"
"#;

/// DICOM sample (argv[1], one slice) and the NIfTI written from it
/// (argv[2]): nibabel's affine puts the corner voxels where the DICOM
/// plane does.
const DICOM_VS_NIFTI: &str = r#"
import sys, numpy, nibabel, pydicom
ds = pydicom.dcmread(sys.argv[1])
img = nibabel.load(sys.argv[2])
ipp = numpy.array([float(x) for x in ds.ImagePositionPatient])
iop = numpy.array([float(x) for x in ds.ImageOrientationPatient])
ps = [float(x) for x in ds.PixelSpacing]
for i in (0, ds.Columns - 1):
    for j in (0, ds.Rows - 1):
        lps = ipp + i * iop[:3] * ps[1] + j * iop[3:] * ps[0]
        ras = img.affine @ [i, j, 0, 1]
        assert abs(numpy.array([-ras[0], -ras[1], ras[2]]) - lps).max() < 1e-4, (i, j)
assert int(img.header["sform_code"]) == 1 and int(img.header["qform_code"]) == 1
"#;

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn nibabel_and_pydicom_samples_keep_their_geometry_across_formats() {
    let Some(samples) = std::env::var_os("TGM_MEDICAL_SAMPLES").map(PathBuf::from) else {
        medical_common::skip::skip("TGM_MEDICAL_SAMPLES is unset (bash .ci/medical.sh)");
        return;
    };
    let Some(py) = python() else { return };
    for name in ["anatomical.nii", "standard.nii.gz", "example4d.nii.gz"] {
        let src = samples.join("nibabel").join(name);
        let dir = tempfile::tempdir().unwrap();
        let files = convert_then_to_dicom("convert-nifti", &src, dir.path());
        let out = dir.path().join("out");
        run_python(&py, NIFTI_VS_DICOM, &[s(&src), s(&out)]);
        if name == "example4d.nii.gz" {
            let mut args = vec![TEMPORAL_REQUIRED];
            args.extend(files.iter().map(|f| s(f)));
            run_python(&py, PYDICOM_STRICT, &args);
        }
    }
    for name in ["CT_small.dcm", "MR_small.dcm"] {
        let src = samples.join("pydicom").join(name);
        let dir = tempfile::tempdir().unwrap();
        let (nii, ..) = dicom_to_nifti(&src, dir.path(), "s");
        run_python(&py, DICOM_VS_NIFTI, &[s(&src), s(&nii)]);
    }
}

#[test]
#[ignore = "needs the medical sample files (TGM_MEDICAL_SAMPLES): bash .ci/medical.sh"]
fn pydicom_ct_and_mr_samples_keep_their_iod_and_pass_strict_validation() {
    let Some(samples) = std::env::var_os("TGM_MEDICAL_SAMPLES").map(PathBuf::from) else {
        medical_common::skip::skip("TGM_MEDICAL_SAMPLES is unset (bash .ci/medical.sh)");
        return;
    };
    let common = "SOPClassUID,SOPInstanceUID,StudyInstanceUID,SeriesInstanceUID,Modality,\
        PatientName,PatientID,PatientBirthDate,PatientSex,StudyDate,StudyTime,StudyID,\
        ReferringPhysicianName,AccessionNumber,SeriesNumber,Manufacturer,InstanceNumber,\
        ImagePositionPatient,ImageOrientationPatient,PixelSpacing,SliceThickness,ImageType";
    for (name, extra) in [
        (
            "CT_small.dcm",
            ",KVP,AcquisitionNumber,RescaleSlope,RescaleIntercept",
        ),
        (
            "MR_small.dcm",
            ",ScanningSequence,SequenceVariant,ScanOptions,MRAcquisitionType,EchoTime,\
             EchoTrainLength",
        ),
    ] {
        let src = samples.join("pydicom").join(name);
        let dir = tempfile::tempdir().unwrap();
        let files = convert_then_to_dicom("convert-dicom", &src, dir.path());
        let class = |p: &Path| {
            let o = open_file(p).unwrap();
            let v = o.element(tags::SOP_CLASS_UID).unwrap().to_str().unwrap();
            v.trim_end_matches('\0').to_string()
        };
        assert_eq!(class(&files[0]), class(&src), "{name}");
        if let Some(py) = python() {
            let required = format!("{common}{extra}");
            let mut args = vec![required.as_str()];
            args.extend(files.iter().map(|f| s(f)));
            run_python(&py, PYDICOM_STRICT, &args);
        }
    }
}
