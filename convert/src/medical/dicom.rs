//! DICOM series to Tensogram objects.
//!
//! Each series (SeriesInstanceUID) becomes one message of one object: `[slice, row,
//! column]`, slices ordered by their position along the slice normal
//! (ImagePositionPatient · (row × column direction of
//! ImageOrientationPatient)), or by InstanceNumber when the geometry is
//! absent; `[frame, row, column]` for one multi-frame image (per-frame
//! positions from the functional groups when present); `[time, slice, row,
//! column]` when positions repeat and TemporalPositionIdentifier,
//! TriggerTime or AcquisitionNumber tells the time points apart. Voxels are
//! stored little-endian with the stored dtype (BitsAllocated,
//! PixelRepresentation); rescale slope/intercept are recorded, never
//! applied. Geometry and identifying attributes are kept under
//! `base[i].dicom`; de-identification applies the DICOM PS3.15 Annex E
//! basic profile to them ([`super::deid`]).
//!
//! Transfer syntaxes: implicit VR little endian, explicit VR little and big
//! endian read natively; deflated, RLE Lossless, JPEG and JPEG 2000 decoded
//! by dicom-pixeldata's pure-Rust codecs, JPEG-LS by CharLS (C++, built
//! from source by its crate), to the stored integers (no rescale, VOI or
//! bit-depth change). Other syntaxes are refused naming
//! the UID and its name. Untrusted input: every declared element length is
//! checked against the file first (`dicom_scan`, which also limits sequence
//! nesting), a compressed image may not claim more than
//! `MAX_DECODE_RATIO` times its file size, each frame's fragment is
//! checked against Rows, Columns, SamplesPerPixel and NumberOfFrames before
//! a codec sees it (`dicom_predecode`), and a codec panic becomes an error
//! naming the file.
//!
//! Memory: the files are read twice (`dicom_pixels`). The first pass keeps
//! every slice's attributes but not its pixels; a series' volume is
//! allocated only when its message is written, and each file's pixels are
//! then read again straight into their place (docs/src/performance/memory.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dicom_core::header::HasLength;
use dicom_core::{Tag, VR};
use dicom_dictionary_std::tags;
use tgm::cbor::Value;
use tgm::{ByteOrder, GlobalMetadata, Map, ObjectDescriptor};

use super::deid::{Deidentified, Deidentify};
use super::dicom_dir::{gather, Candidate, SkipReason, Skipped, DICOMDIR_SOP_CLASS};
use super::dicom_groups::{frame_attribute, nested};
use super::dicom_pixels::{self, err_at, read_volume, Layout, Obj};
use super::geometry::{self, Geometry, Plane};
use super::nifti_voxels::{releasing, Voxels};
use super::pipeline::PipelineArgs;
use super::Converted;
use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// Attributes kept as text under `base[i].dicom.attributes` (keyword,
/// tag, VR). Nothing else of the data set is recorded; de-identification
/// applies [`super::deid_profile::action`] to each.
const TEXT_ATTRIBUTES: [(&str, Tag, VR); 81] = [
    ("ScanningSequence", tags::SCANNING_SEQUENCE, VR::CS),
    ("SequenceVariant", tags::SEQUENCE_VARIANT, VR::CS),
    ("ScanOptions", tags::SCAN_OPTIONS, VR::CS),
    ("MRAcquisitionType", tags::MR_ACQUISITION_TYPE, VR::CS),
    ("EchoTime", tags::ECHO_TIME, VR::DS),
    ("RepetitionTime", tags::REPETITION_TIME, VR::DS),
    ("InversionTime", tags::INVERSION_TIME, VR::DS),
    ("EchoTrainLength", tags::ECHO_TRAIN_LENGTH, VR::IS),
    ("SeriesNumber", tags::SERIES_NUMBER, VR::IS),
    ("ImageType", tags::IMAGE_TYPE, VR::CS),
    (
        "PositionReferenceIndicator",
        tags::POSITION_REFERENCE_INDICATOR,
        VR::LO,
    ),
    ("KVP", tags::KVP, VR::DS),
    ("WindowCenter", tags::WINDOW_CENTER, VR::DS),
    ("WindowWidth", tags::WINDOW_WIDTH, VR::DS),
    ("BitsStored", tags::BITS_STORED, VR::US),
    ("DoseUnits", tags::DOSE_UNITS, VR::CS),
    ("DoseType", tags::DOSE_TYPE, VR::CS),
    ("DoseSummationType", tags::DOSE_SUMMATION_TYPE, VR::CS),
    ("DoseGridScaling", tags::DOSE_GRID_SCALING, VR::DS),
    (
        "GridFrameOffsetVector",
        tags::GRID_FRAME_OFFSET_VECTOR,
        VR::DS,
    ),
    ("Modality", tags::MODALITY, VR::CS),
    ("Manufacturer", tags::MANUFACTURER, VR::LO),
    ("BodyPartExamined", tags::BODY_PART_EXAMINED, VR::CS),
    ("ViewPosition", tags::VIEW_POSITION, VR::CS),
    // PET Series and PET Image (PS3.3 C.8.9.1, C.8.9.4).
    ("Units", tags::UNITS, VR::CS),
    ("CountsSource", tags::COUNTS_SOURCE, VR::CS),
    ("SeriesType", tags::SERIES_TYPE, VR::CS),
    ("DecayCorrection", tags::DECAY_CORRECTION, VR::CS),
    ("NumberOfSlices", tags::NUMBER_OF_SLICES, VR::US),
    ("CorrectedImage", tags::CORRECTED_IMAGE, VR::CS),
    ("CollimatorType", tags::COLLIMATOR_TYPE, VR::CS),
    (
        "RandomsCorrectionMethod",
        tags::RANDOMS_CORRECTION_METHOD,
        VR::CS,
    ),
    (
        "AttenuationCorrectionMethod",
        tags::ATTENUATION_CORRECTION_METHOD,
        VR::LO,
    ),
    (
        "ScatterCorrectionMethod",
        tags::SCATTER_CORRECTION_METHOD,
        VR::LO,
    ),
    ("FrameReferenceTime", tags::FRAME_REFERENCE_TIME, VR::DS),
    ("ImageIndex", tags::IMAGE_INDEX, VR::US),
    ("AcquisitionDate", tags::ACQUISITION_DATE, VR::DA),
    ("AcquisitionTime", tags::ACQUISITION_TIME, VR::TM),
    ("ActualFrameDuration", tags::ACTUAL_FRAME_DURATION, VR::IS),
    ("DecayFactor", tags::DECAY_FACTOR, VR::DS),
    ("PatientOrientation", tags::PATIENT_ORIENTATION, VR::CS),
    // DX Series, DX Image and DX Detector (PS3.3 C.8.11.1, C.8.11.3,
    // C.8.11.4), DX Anatomy Imaged's ImageLaterality (C.8.11.2) and
    // General Image's LossyImageCompression and BurnedInAnnotation.
    (
        "PresentationIntentType",
        tags::PRESENTATION_INTENT_TYPE,
        VR::CS,
    ),
    ("ImageLaterality", tags::IMAGE_LATERALITY, VR::CS),
    (
        "PixelIntensityRelationship",
        tags::PIXEL_INTENSITY_RELATIONSHIP,
        VR::CS,
    ),
    (
        "PixelIntensityRelationshipSign",
        tags::PIXEL_INTENSITY_RELATIONSHIP_SIGN,
        VR::SS,
    ),
    ("RescaleType", tags::RESCALE_TYPE, VR::LO),
    ("PresentationLUTShape", tags::PRESENTATION_LUT_SHAPE, VR::CS),
    (
        "LossyImageCompression",
        tags::LOSSY_IMAGE_COMPRESSION,
        VR::CS,
    ),
    ("BurnedInAnnotation", tags::BURNED_IN_ANNOTATION, VR::CS),
    ("DetectorType", tags::DETECTOR_TYPE, VR::CS),
    ("ImagerPixelSpacing", tags::IMAGER_PIXEL_SPACING, VR::DS),
    ("SeriesDescription", tags::SERIES_DESCRIPTION, VR::LO),
    ("StudyDescription", tags::STUDY_DESCRIPTION, VR::LO),
    (
        "PhotometricInterpretation",
        tags::PHOTOMETRIC_INTERPRETATION,
        VR::CS,
    ),
    ("SOPClassUID", tags::SOP_CLASS_UID, VR::UI),
    ("PatientSex", tags::PATIENT_SEX, VR::CS),
    ("PatientAge", tags::PATIENT_AGE, VR::AS),
    ("PatientSize", tags::PATIENT_SIZE, VR::DS),
    ("PatientWeight", tags::PATIENT_WEIGHT, VR::DS),
    ("PatientName", tags::PATIENT_NAME, VR::PN),
    ("PatientID", tags::PATIENT_ID, VR::LO),
    ("PatientBirthDate", tags::PATIENT_BIRTH_DATE, VR::DA),
    ("PatientAddress", tags::PATIENT_ADDRESS, VR::LO),
    ("OtherPatientIDs", Tag(0x0010, 0x1000), VR::LO),
    (
        "ReferringPhysicianName",
        tags::REFERRING_PHYSICIAN_NAME,
        VR::PN,
    ),
    (
        "PerformingPhysicianName",
        tags::PERFORMING_PHYSICIAN_NAME,
        VR::PN,
    ),
    ("OperatorsName", tags::OPERATORS_NAME, VR::PN),
    ("InstitutionName", tags::INSTITUTION_NAME, VR::LO),
    ("InstitutionAddress", tags::INSTITUTION_ADDRESS, VR::ST),
    (
        "InstitutionalDepartmentName",
        tags::INSTITUTIONAL_DEPARTMENT_NAME,
        VR::LO,
    ),
    ("AccessionNumber", tags::ACCESSION_NUMBER, VR::SH),
    ("StudyID", tags::STUDY_ID, VR::SH),
    ("StationName", tags::STATION_NAME, VR::SH),
    ("DeviceSerialNumber", tags::DEVICE_SERIAL_NUMBER, VR::LO),
    ("StudyInstanceUID", tags::STUDY_INSTANCE_UID, VR::UI),
    ("SeriesInstanceUID", tags::SERIES_INSTANCE_UID, VR::UI),
    ("FrameOfReferenceUID", tags::FRAME_OF_REFERENCE_UID, VR::UI),
    ("StudyDate", tags::STUDY_DATE, VR::DA),
    ("SeriesDate", tags::SERIES_DATE, VR::DA),
    ("StudyTime", tags::STUDY_TIME, VR::TM),
    ("SeriesTime", tags::SERIES_TIME, VR::TM),
];

/// Attributes of [`TEXT_ATTRIBUTES`] kept per slice (`dicom.per_slice`)
/// when they differ between the slices of a series.
const PER_SLICE: [&str; 6] = [
    "ImageIndex",
    "FrameReferenceTime",
    "DecayFactor",
    "ActualFrameDuration",
    "AcquisitionDate",
    "AcquisitionTime",
];

/// One single-frame image of a series.
struct Slice {
    path: PathBuf,
    /// How the pixels are stored (read again when the volume is built).
    layout: Layout,
    position: Option<[f64; 3]>,
    orientation: Option<[f64; 6]>,
    spacing: Option<[f64; 2]>,
    thickness: Option<f64>,
    instance: Option<i64>,
    slope: f64,
    intercept: f64,
    series: String,
    text: BTreeMap<&'static str, String>,
    /// Per-frame ImagePositionPatient of a multi-frame image.
    frame_positions: Option<Vec<[f64; 3]>>,
    /// The value of each temporal attribute present (keyword, value).
    temporal: Vec<(&'static str, f64)>,
    /// BurnedInAnnotation as read ("YES", "NO"), when present.
    burned_in: Option<String>,
    /// Palette colour lookup tables (`dicom_palette`), when present.
    palette: Option<Value>,
    /// Sequences kept item by item (`dicom_seq`), when present.
    sequences: Option<Value>,
}

impl Slice {
    /// Rows of each frame.
    fn rows(&self) -> u64 {
        self.layout.declared.rows
    }

    /// Columns of each frame.
    fn columns(&self) -> u64 {
        self.layout.declared.columns
    }

    /// NumberOfFrames (1 for single-frame images).
    fn frames(&self) -> u64 {
        self.layout.declared.frames
    }
}

/// Attributes that tell the time points of a temporal series apart, in
/// order of preference.
const TEMPORAL_ATTRIBUTES: [(&str, Tag); 3] = [
    (
        "TemporalPositionIdentifier",
        tags::TEMPORAL_POSITION_IDENTIFIER,
    ),
    ("TriggerTime", tags::TRIGGER_TIME),
    ("AcquisitionNumber", tags::ACQUISITION_NUMBER),
];

/// Per-frame functional groups of enhanced multi-frame images.
const PER_FRAME_GROUPS: Tag = tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE;

type Item = dicom_object::InMemDicomObject;

fn text(obj: &Item, tag: Tag) -> Option<String> {
    obj.get(tag)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_end_matches(['\0', ' ']).to_string())
        .filter(|s| !s.is_empty())
}

fn floats<const N: usize>(
    obj: &Item,
    tag: Tag,
    path: &Path,
    name: &str,
) -> MedicalResult<Option<[f64; N]>> {
    let Some(e) = obj.get(tag).filter(|e| !e.is_empty()) else {
        return Ok(None);
    };
    let v = e
        .to_multi_float64()
        .map_err(|e| err_at(path, format!("{name} is not numeric: {e}")))?;
    let arr: [f64; N] = v
        .try_into()
        .map_err(|v: Vec<f64>| err_at(path, format!("{name} has {} values, not {N}", v.len())))?;
    if arr.iter().any(|x| !x.is_finite()) {
        return Err(err_at(path, format!("{name} is not finite")));
    }
    Ok(Some(arr))
}

/// Why a readable DICOM file holds no image: a DICOMDIR or a file
/// without PixelData.
fn not_an_image(obj: &Obj) -> Option<SkipReason> {
    let class = obj
        .meta()
        .media_storage_sop_class_uid()
        .trim_end_matches(['\0', ' '])
        .to_string();
    if class == DICOMDIR_SOP_CLASS {
        return Some(SkipReason::Dicomdir);
    }
    if obj.get(tags::PIXEL_DATA).is_none() {
        return Some(SkipReason::NoPixelData(
            Some(class).filter(|c| !c.is_empty()),
        ));
    }
    None
}

/// Reads one DICOM file as a slice; a file found in a directory that
/// holds no image gives the reason to skip it instead.
fn read_slice(file: &Candidate) -> MedicalResult<Result<Slice, SkipReason>> {
    let path = file.path.as_path();
    let obj = dicom_pixels::open(path)?;
    match not_an_image(&obj) {
        Some(reason) if file.listed => return Ok(Err(reason)),
        Some(reason) => {
            return Err(MedicalError::at(
                MedicalErrorKind::Unsupported,
                path,
                reason,
            ))
        }
        None => {}
    }
    let layout = Layout::of(&obj, path)?;
    layout.check(&obj, path)?;
    let frames = layout.declared.frames;
    let series = text(&obj, tags::SERIES_INSTANCE_UID)
        .ok_or_else(|| err_at(path, "missing SeriesInstanceUID"))?;
    let mut text_attrs = BTreeMap::new();
    for (name, tag, _) in TEXT_ATTRIBUTES {
        if let Some(v) = text(&obj, tag) {
            text_attrs.insert(name, v);
        }
    }
    // Enhanced multi-frame images keep geometry and rescale in functional
    // groups: shared or per-frame ones for orientation, spacing and
    // rescale, per-frame ones for positions.
    let top: &Item = &obj;
    let group = |seq: Tag, tag: Tag, name: &str| -> MedicalResult<&Item> {
        Ok(frame_attribute(top, seq, tag, name)
            .map_err(|e| err_at(path, e))?
            .unwrap_or(top))
    };
    let orientation_src = group(
        tags::PLANE_ORIENTATION_SEQUENCE,
        tags::IMAGE_ORIENTATION_PATIENT,
        "ImageOrientationPatient",
    )?;
    let measures_src = group(
        tags::PIXEL_MEASURES_SEQUENCE,
        tags::PIXEL_SPACING,
        "PixelSpacing",
    )?;
    let rescale_src = group(
        tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE,
        tags::RESCALE_SLOPE,
        "RescaleSlope",
    )?;
    let frame_positions = if frames > 1 {
        per_frame_positions(top, frames, path)?
    } else {
        None
    };
    let frame_positions = match frame_positions {
        None if frames > 1 => grid_frame_positions(top, orientation_src, frames, path)?,
        p => p,
    };
    let palette = super::dicom_palette::read(top).map_err(|e| err_at(path, e))?;
    let mut temporal = Vec::new();
    for (name, tag) in TEMPORAL_ATTRIBUTES {
        if let Some(v) = floats::<1>(top, tag, path, name).ok().flatten() {
            temporal.push((name, v[0]));
        }
    }
    let scalar = |src: &Item, tag: Tag, name: &str| -> MedicalResult<Option<f64>> {
        Ok(floats::<1>(src, tag, path, name)?.map(|[x]| x))
    };
    Ok(Ok(Slice {
        path: path.to_path_buf(),
        position: floats(
            top,
            tags::IMAGE_POSITION_PATIENT,
            path,
            "ImagePositionPatient",
        )?
        .or_else(|| frame_positions.as_ref().map(|p| p[0])),
        orientation: floats(
            orientation_src,
            tags::IMAGE_ORIENTATION_PATIENT,
            path,
            "ImageOrientationPatient",
        )?,
        spacing: floats(measures_src, tags::PIXEL_SPACING, path, "PixelSpacing")?,
        thickness: scalar(measures_src, tags::SLICE_THICKNESS, "SliceThickness")?,
        instance: top
            .get(tags::INSTANCE_NUMBER)
            .and_then(|e| e.to_int::<i64>().ok()),
        slope: scalar(rescale_src, tags::RESCALE_SLOPE, "RescaleSlope")?.unwrap_or(1.0),
        intercept: scalar(rescale_src, tags::RESCALE_INTERCEPT, "RescaleIntercept")?.unwrap_or(0.0),
        series,
        text: text_attrs,
        frame_positions,
        temporal,
        burned_in: text(top, tags::BURNED_IN_ANNOTATION),
        palette,
        sequences: super::dicom_seq::read(top),
        layout,
    }))
}

/// Frame positions of an RT Dose image (PS3.3 C.8.8.3.2): ImagePositionPatient
/// moved along the normal by GridFrameOffsetVector relative to its first
/// value (the relative and the absolute forms agree on this).
fn grid_frame_positions(
    top: &Item,
    orientation_src: &Item,
    frames: u64,
    path: &Path,
) -> MedicalResult<Option<Vec<[f64; 3]>>> {
    let Some(e) = top.get(tags::GRID_FRAME_OFFSET_VECTOR) else {
        return Ok(None);
    };
    let offsets = e
        .to_multi_float64()
        .map_err(|e| err_at(path, format!("GridFrameOffsetVector is not numeric: {e}")))?;
    if offsets.len() as u64 != frames || offsets.iter().any(|x| !x.is_finite()) {
        return Err(err_at(
            path,
            format!(
                "GridFrameOffsetVector has {} finite values for NumberOfFrames {frames}",
                offsets.len()
            ),
        ));
    }
    let position = floats::<3>(
        top,
        tags::IMAGE_POSITION_PATIENT,
        path,
        "ImagePositionPatient",
    )?;
    let orientation = floats::<6>(
        orientation_src,
        tags::IMAGE_ORIENTATION_PATIENT,
        path,
        "ImageOrientationPatient",
    )?;
    let (Some(p), Some(o)) = (position, orientation) else {
        return Ok(None);
    };
    let n = cross([o[0], o[1], o[2]], [o[3], o[4], o[5]]);
    Ok(Some(
        offsets
            .iter()
            .map(|off| {
                let d = off - offsets[0];
                [p[0] + d * n[0], p[1] + d * n[1], p[2] + d * n[2]]
            })
            .collect(),
    ))
}

/// ImagePositionPatient of every frame from the per-frame functional
/// groups, when each frame has one.
fn per_frame_positions(
    obj: &Item,
    frames: u64,
    path: &Path,
) -> MedicalResult<Option<Vec<[f64; 3]>>> {
    let Some(items) = obj.get(PER_FRAME_GROUPS).and_then(|e| e.items()) else {
        return Ok(None);
    };
    if items.len() as u64 != frames {
        return Err(err_at(
            path,
            format!(
                "PerFrameFunctionalGroupsSequence has {} items for NumberOfFrames {frames}",
                items.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Some(plane) = nested(item, &[tags::PLANE_POSITION_SEQUENCE]) else {
            return Ok(None);
        };
        let Some(p) = floats::<3>(
            plane,
            tags::IMAGE_POSITION_PATIENT,
            path,
            "per-frame ImagePositionPatient",
        )?
        else {
            return Ok(None);
        };
        out.push(p);
    }
    Ok(Some(out))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// A series' slices in order along the normal, with its geometry.
struct OrderedSeries<'a> {
    slices: Vec<&'a Slice>,
    /// Signed distance between consecutive slices along the normal.
    step: Option<f64>,
    /// Row direction x column direction.
    normal: Option<[f64; 3]>,
}

/// How two images that must stack into one array differ (size, pixel
/// representation, orientation), naming both files; `None` when they
/// agree.
fn difference(a: &Slice, b: &Slice) -> Option<String> {
    if (a.rows(), a.columns(), a.layout.dtype) != (b.rows(), b.columns(), b.layout.dtype) {
        return Some(format!(
            "size or type: {} is {}x{} {}, {} is {}x{} {}",
            a.path.display(),
            a.rows(),
            a.columns(),
            a.layout.dtype.name(),
            b.path.display(),
            b.rows(),
            b.columns(),
            b.layout.dtype.name()
        ));
    }
    let same_orientation = match (a.orientation, b.orientation) {
        (Some(x), Some(y)) => x.iter().zip(&y).all(|(p, q)| (p - q).abs() <= 1e-4),
        (None, None) => true,
        _ => false,
    };
    if !same_orientation {
        return Some(format!(
            "ImageOrientationPatient: {} and {}",
            a.path.display(),
            b.path.display()
        ));
    }
    None
}

/// Orders a series' slices and checks they form one regular volume.
fn order_series(mut slices: Vec<&Slice>) -> MedicalResult<OrderedSeries<'_>> {
    let first = slices[0];
    for s in &slices[1..] {
        if let Some(what) = difference(first, s) {
            return Err(MedicalError::invalid(format!(
                "series {}: slices differ in {what}",
                first.series
            )));
        }
    }
    let geometry = slices
        .iter()
        .all(|s| s.position.is_some() && s.orientation.is_some());
    if !geometry {
        slices.sort_by_key(|s| s.instance.unwrap_or(i64::MAX));
        return Ok(OrderedSeries {
            slices,
            step: None,
            normal: None,
        });
    }
    let o = first.orientation.expect("checked");
    let normal = cross([o[0], o[1], o[2]], [o[3], o[4], o[5]]);
    let pos = |s: &Slice| dot(s.position.expect("checked"), normal);
    slices.sort_by(|a, b| pos(a).total_cmp(&pos(b)));
    if slices.len() < 2 {
        return Ok(OrderedSeries {
            slices,
            step: first.thickness,
            normal: Some(normal),
        });
    }
    let step = pos(slices[1]) - pos(slices[0]);
    for w in slices.windows(2) {
        let d = pos(w[1]) - pos(w[0]);
        if d.abs() < 1e-6 {
            return Err(MedicalError::invalid(format!(
                "series {}: {} and {} lie at the same position",
                first.series,
                w[0].path.display(),
                w[1].path.display()
            )));
        }
        if (d - step).abs() > 1e-3_f64.max(step.abs() * 1e-3) {
            return Err(MedicalError::invalid(format!(
                "series {}: uneven slice spacing ({d} mm between {} and {}, {step} mm elsewhere); the series has a gap",
                first.series,
                w[0].path.display(),
                w[1].path.display()
            )));
        }
    }
    Ok(OrderedSeries {
        slices,
        step: Some(step),
        normal: Some(normal),
    })
}

/// Slices grouped by time point: (temporal value, slices), by value.
type TimeGroups<'a> = Vec<(f64, Vec<&'a Slice>)>;

/// When slices of a series repeat positions and one temporal attribute
/// (TemporalPositionIdentifier, TriggerTime, AcquisitionNumber, in that
/// preference) is present in all of them with several values: that
/// attribute and the slices grouped by its value, in increasing order.
fn temporal_groups<'a>(slices: &[&'a Slice]) -> Option<(&'static str, TimeGroups<'a>)> {
    let o = slices[0].orientation?;
    let normal = cross([o[0], o[1], o[2]], [o[3], o[4], o[5]]);
    let mut pos = slices
        .iter()
        .map(|s| s.position.map(|p| dot(p, normal)))
        .collect::<Option<Vec<f64>>>()?;
    pos.sort_by(f64::total_cmp);
    if !pos.windows(2).any(|w| (w[1] - w[0]).abs() < 1e-6) {
        return None;
    }
    for (name, _) in TEMPORAL_ATTRIBUTES {
        let values: Option<Vec<f64>> = slices
            .iter()
            .map(|s| s.temporal.iter().find(|(n, _)| *n == name).map(|t| t.1))
            .collect();
        let Some(values) = values else { continue };
        let mut groups: Vec<(f64, Vec<&Slice>)> = Vec::new();
        for (s, v) in slices.iter().zip(values) {
            match groups.iter_mut().find(|(k, _)| *k == v) {
                Some((_, g)) => g.push(s),
                None => groups.push((v, vec![s])),
            }
        }
        if groups.len() > 1 {
            groups.sort_by(|a, b| a.0.total_cmp(&b.0));
            return Some((name, groups));
        }
    }
    None
}

/// A temporal series: slices time-major, each time point ordered along
/// the normal at the same positions.
struct TemporalSeries<'a> {
    slices: Vec<&'a Slice>,
    times: Vec<f64>,
    per_time: usize,
    step: Option<f64>,
    normal: Option<[f64; 3]>,
}

/// Orders every time point and checks they share one set of positions.
fn temporal_series<'a>(
    groups: TimeGroups<'a>,
    attribute: &str,
) -> MedicalResult<TemporalSeries<'a>> {
    let mut out = TemporalSeries {
        slices: Vec::new(),
        times: Vec::with_capacity(groups.len()),
        per_time: 0,
        step: None,
        normal: None,
    };
    let mut reference: Option<Vec<&Slice>> = None;
    for (time, group) in groups {
        let o = order_series(group)?;
        if let Some(r) = &reference {
            if let Some(what) = difference(r[0], o.slices[0]) {
                return Err(MedicalError::invalid(format!(
                    "series {}: {attribute} {time} and {attribute} {} differ in {what}; \
                     time points must share size, pixel representation and orientation",
                    r[0].series, out.times[0]
                )));
            }
            let same = r.len() == o.slices.len()
                && r.iter().zip(&o.slices).all(|(a, b)| {
                    let (pa, pb) = (a.position.expect("geometry"), b.position.expect("geometry"));
                    pa.iter().zip(&pb).all(|(x, y)| (x - y).abs() <= 1e-3)
                });
            if !same {
                return Err(MedicalError::invalid(format!(
                    "series {}: {attribute} {time} ({} slices, first {}) does not cover the \
                     positions of {attribute} {} ({} slices, first {})",
                    r[0].series,
                    o.slices.len(),
                    o.slices[0].path.display(),
                    out.times[0],
                    r.len(),
                    r[0].path.display()
                )));
            }
        } else {
            out.per_time = o.slices.len();
            out.step = o.step;
            out.normal = o.normal;
            reference = Some(o.slices.clone());
        }
        out.times.push(time);
        out.slices.extend(o.slices);
    }
    Ok(out)
}

/// One series as a message to be written: the object's plain descriptor
/// (no pipeline yet), its metadata entry, and the files whose pixels make
/// its volume, in order, with their layout as first read.
struct PlannedSeries {
    uid: String,
    descriptor: ObjectDescriptor,
    entry: Map,
    images: Vec<(PathBuf, Layout)>,
}

/// Orders a series' slices and makes its metadata; the pixels are read
/// later ([`DicomConversion::message`]).
fn plan_series(
    slices: Vec<&Slice>,
    deidentify: Option<&Deidentify>,
    report: &mut Deidentified,
) -> MedicalResult<PlannedSeries> {
    if let Some(deid) = deidentify {
        let burned: Vec<&Path> = slices
            .iter()
            .filter(|s| s.burned_in.as_deref() == Some("YES"))
            .map(|s| s.path.as_path())
            .collect();
        deid.check_burned_in(&burned)?;
    }
    let floats = |v: &[f64]| Value::Array(v.iter().map(|&x| Value::Float(x)).collect());
    let mut dicom = Map::new();
    let (ordered, step, normal, shape, dim_names, step_vec) =
        if let Some(m) = slices.iter().copied().find(|s| s.frames() > 1) {
            if slices.len() > 1 {
                let other = slices
                    .iter()
                    .find(|s| s.path != m.path)
                    .expect("two slices");
                return Err(MedicalError::invalid(format!(
                    "series {}: multi-frame file {} shares its series with {}; \
                     a multi-frame series must be one file",
                    m.series,
                    m.path.display(),
                    other.path.display()
                )));
            }
            let normal = m
                .orientation
                .map(|o| cross([o[0], o[1], o[2]], [o[3], o[4], o[5]]));
            if let Some(p) = &m.frame_positions {
                dicom.insert(
                    "frame_positions".into(),
                    Value::Array(p.iter().map(|x| floats(x)).collect()),
                );
            }
            let step_vec = m
                .frame_positions
                .as_ref()
                .filter(|p| p.len() >= 2)
                .map(|p| [0, 1, 2].map(|r| p[1][r] - p[0][r]));
            (
                vec![m],
                None,
                normal,
                vec![m.frames(), m.rows(), m.columns()],
                &["frame", "row", "column"][..],
                step_vec,
            )
        } else if let Some((attribute, groups)) = temporal_groups(&slices) {
            let t = temporal_series(groups, attribute)?;
            dicom.insert("temporal_attribute".into(), attribute.into());
            dicom.insert("temporal_positions".into(), floats(&t.times));
            let first = t.slices[0];
            let shape = vec![
                t.times.len() as u64,
                t.per_time as u64,
                first.rows(),
                first.columns(),
            ];
            (
                t.slices,
                t.step,
                t.normal,
                shape,
                &["time", "slice", "row", "column"][..],
                None,
            )
        } else {
            let o = order_series(slices)?;
            let first = o.slices[0];
            let shape = vec![o.slices.len() as u64, first.rows(), first.columns()];
            (
                o.slices,
                o.step,
                o.normal,
                shape,
                &["slice", "row", "column"][..],
                None,
            )
        };
    // One slice (or one time point of one slice): any step along the
    // normal places it; the thickness when known, else 1 mm.
    let step_vec = step_vec.or_else(|| {
        let n = normal?;
        let single = shape[shape.len() - 3] == 1;
        let along = step.or(single.then_some(1.0))?;
        Some(n.map(|x| x * along))
    });
    let first = ordered[0];
    let mut descriptor = ObjectDescriptor::new(first.layout.dtype, shape);
    descriptor.byte_order = ByteOrder::Little;
    if let Some(o) = first.orientation {
        dicom.insert("image_orientation_patient".into(), floats(&o));
    }
    if let Some(p) = first.position {
        dicom.insert("image_position_patient".into(), floats(&p));
    }
    if let Some(nv) = normal {
        dicom.insert("slice_normal".into(), floats(&nv));
    }
    if let Some(s) = first.spacing {
        dicom.insert("pixel_spacing".into(), floats(&s));
    }
    if let Some(s) = step {
        dicom.insert("slice_spacing".into(), Value::Float(s));
    }
    if let Some(t) = first.thickness {
        dicom.insert("slice_thickness".into(), Value::Float(t));
    }
    // A window that changes from slice to slice is kept per slice.
    for (key, name) in [
        ("window_centers", "WindowCenter"),
        ("window_widths", "WindowWidth"),
    ] {
        let per: Vec<Option<&String>> = ordered.iter().map(|s| s.text.get(name)).collect();
        if per.iter().any(|v| *v != per[0]) {
            let values = per
                .iter()
                .map(|v| v.map_or(Value::Null, |t| t.clone().into()))
                .collect();
            dicom.insert(key.into(), Value::Array(values));
        }
    }
    let mut per_slice = Map::new();
    for name in PER_SLICE {
        let per: Vec<Option<&String>> = ordered.iter().map(|s| s.text.get(name)).collect();
        if per.iter().all(|v| *v == per[0]) {
            continue;
        }
        let (_, tag, vr) = TEXT_ATTRIBUTES
            .iter()
            .find(|(n, _, _)| *n == name)
            .expect("PER_SLICE names come from TEXT_ATTRIBUTES");
        let values = per
            .iter()
            .map(|v| {
                let kept = match (v, deidentify) {
                    (Some(t), Some(deid)) => deid.apply(name, *tag, *vr, t, report),
                    (v, _) => v.cloned(),
                };
                kept.map_or(Value::Null, Value::from)
            })
            .collect();
        per_slice.insert(name.to_string(), Value::Array(values));
    }
    if !per_slice.is_empty() {
        dicom.insert("per_slice".into(), Value::from(per_slice));
    }
    let slopes: Vec<f64> = ordered.iter().map(|s| s.slope).collect();
    let inters: Vec<f64> = ordered.iter().map(|s| s.intercept).collect();
    if slopes.iter().all(|&x| x == slopes[0]) && inters.iter().all(|&x| x == inters[0]) {
        dicom.insert("rescale_slope".into(), Value::Float(slopes[0]));
        dicom.insert("rescale_intercept".into(), Value::Float(inters[0]));
    } else {
        dicom.insert("rescale_slope".into(), floats(&slopes));
        dicom.insert("rescale_intercept".into(), floats(&inters));
    }
    if let Some(p) = &first.palette {
        dicom.insert("palette".into(), p.clone());
    }
    if let Some(seqs) = &first.sequences {
        let kept = match deidentify {
            Some(deid) => super::dicom_seq::map_leaves(seqs, &mut |k, tag, vr, v| {
                deid.apply(k, tag, vr, v, report)
            }),
            None => seqs.clone(),
        };
        dicom.insert("sequences".into(), kept);
    }
    dicom.insert(
        "transfer_syntax".into(),
        first.layout.transfer_syntax.clone().into(),
    );
    let instance_numbers = Value::Array(
        ordered
            .iter()
            .map(|s| s.instance.map(Value::from_i64).unwrap_or(Value::Null))
            .collect(),
    );
    dicom.insert("instance_numbers".into(), instance_numbers);
    let mut attrs = Map::new();
    for (k, v) in &first.text {
        let (_, tag, vr) = TEXT_ATTRIBUTES
            .iter()
            .find(|(name, _, _)| name == k)
            .expect("recorded attributes come from TEXT_ATTRIBUTES");
        let value = match deidentify {
            Some(deid) => deid.apply(k, *tag, *vr, v, report),
            None => Some(v.clone()),
        };
        if let Some(value) = value {
            attrs.insert(k.to_string(), value.into());
        }
    }
    if let Some(deid) = deidentify {
        deid.record(&mut attrs, &mut dicom);
    }
    let attr = |k: &str| attrs.get(k).and_then(Value::as_text).map(str::to_string);
    let geometry = match (first.position, first.orientation, first.spacing, step_vec) {
        (Some(p), Some(orientation), Some(pixel_spacing), Some(sv)) => {
            let plane = Plane {
                orientation,
                pixel_spacing,
            };
            let mut g = Geometry::from_dicom(p, &plane, sv);
            g.frame_of_reference = attr("FrameOfReferenceUID");
            g.slice_thickness = first.thickness;
            g.modality = attr("Modality");
            Some(g)
        }
        _ => None,
    };
    dicom.insert("attributes".into(), Value::from(attrs));
    let mut entry = Map::new();
    entry.insert(
        "dim_names".into(),
        Value::Array(dim_names.iter().map(|&n| n.into()).collect()),
    );
    entry.insert("dicom".into(), Value::from(dicom));
    if let Some(g) = geometry {
        entry.insert(geometry::KEY.into(), g.to_value());
    }
    Ok(PlannedSeries {
        uid: first.series.clone(),
        descriptor,
        entry,
        images: ordered
            .iter()
            .map(|s| (s.path.clone(), s.layout.clone()))
            .collect(),
    })
}

/// What [`dicom_to_messages`] made of its inputs: one message per series,
/// whose volume is read from the files when it is asked for, so one
/// series' volume is in memory at a time.
pub struct DicomConversion {
    /// The SeriesInstanceUID of each message, in SeriesInstanceUID order.
    pub series: Vec<String>,
    /// Files and directories left out, with the reason.
    pub skipped: Vec<Skipped>,
    /// What de-identification removed and replaced.
    pub deidentified: Deidentified,
    planned: Vec<PlannedSeries>,
    pipeline: PipelineArgs,
}

impl DicomConversion {
    /// The number of messages (series).
    pub fn len(&self) -> usize {
        self.planned.len()
    }

    /// Whether there is no message (never, for a conversion that
    /// succeeded).
    pub fn is_empty(&self) -> bool {
        self.planned.is_empty()
    }

    /// Message `index`: one object, its volume read now from the series'
    /// files (each read again and checked unchanged), with the pipeline
    /// applied to its descriptor.
    pub fn message(&self, index: usize) -> MedicalResult<Converted> {
        let planned = self.planned.get(index).ok_or_else(|| {
            MedicalError::invalid_argument(format!(
                "message {index} requested, there are {}",
                self.len()
            ))
        })?;
        let images: Vec<(&Path, &Layout)> = planned
            .images
            .iter()
            .map(|(p, l)| (p.as_path(), l))
            .collect();
        let volume = read_volume(&planned.uid, &images)?;
        let mut d = planned.descriptor.clone();
        self.pipeline.apply(&mut d, &volume)?;
        let meta = GlobalMetadata::with_base(vec![planned.entry.clone()]);
        Ok((vec![(d, volume)], meta))
    }

    /// Message `index` encoded with `opts` straight into `sink`: the bytes
    /// `tgm::encode` gives for [`DicomConversion::message`]
    /// (`tgm::encode_to`). The volume's pages are given back as the
    /// pipeline reads them, so memory holds about one copy of it (docs/src/performance/
    /// memory.md). Returns the message length; on error part of the message
    /// may have been written.
    pub fn write_message(
        &self,
        index: usize,
        opts: &tgm::EncodeOptions,
        sink: &mut dyn std::io::Write,
    ) -> MedicalResult<u64> {
        let (mut objects, meta) = self.message(index)?;
        let (d, volume) = objects.pop().expect("one object per series");
        let volume = Voxels::Owned(volume);
        let caller = opts.pipeline.progress.clone();
        let opts = opts.clone().progress(releasing(&[&volume]).then(caller));
        Ok(tgm::encode_to(&meta, &[(&d, &volume[..])], &opts, sink)?)
    }
}

/// Which files [`dicom_to_messages`] reads and which it leaves out
/// (spec/convert.md "DICOM directories").
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    /// Also read the sub-directories of directories given.
    pub recursive: bool,
    /// Leave out a file found in a directory that cannot be converted,
    /// listing it with the reason, instead of stopping at it with an
    /// error whose [`MedicalError::is_skippable`] is true.
    pub skip_unsupported: bool,
}

/// DICOM files and directories to one message per series (each holding
/// one object), in SeriesInstanceUID order. Directories are expanded by
/// [`gather`] (`reading.recursive` descends into sub-directories); a file
/// found in a directory that is no image is skipped and listed, as is one
/// that cannot be converted when `reading.skip_unsupported`. Every file is
/// read and checked here, and every series ordered, but the pixels are
/// not kept: [`DicomConversion::message`] reads them into the volume.
pub fn dicom_to_messages(
    inputs: &[PathBuf],
    reading: Reading,
    pipeline: &PipelineArgs,
    deidentify: Option<&Deidentify>,
) -> MedicalResult<DicomConversion> {
    let gathered = gather(inputs, reading.recursive)?;
    let mut skipped = gathered.skipped;
    let mut slices = Vec::with_capacity(gathered.files.len());
    for file in &gathered.files {
        let reason = match read_slice(file) {
            Ok(Ok(slice)) => {
                slices.push(slice);
                continue;
            }
            Ok(Err(reason)) => reason,
            Err(e) if !file.listed => return Err(e),
            Err(e) if !reading.skip_unsupported => return Err(e.skippable(&file.path)),
            Err(e) => SkipReason::unsupported(&file.path, &e),
        };
        skipped.push(Skipped {
            path: file.path.clone(),
            reason,
        });
    }
    if slices.is_empty() {
        return Err(MedicalError::new(
            MedicalErrorKind::NotThisFormat,
            "no DICOM images among the inputs (every file was skipped)",
        ));
    }
    let mut by_series: BTreeMap<&str, Vec<&Slice>> = BTreeMap::new();
    for s in &slices {
        by_series.entry(&s.series).or_default().push(s);
    }
    let mut out = DicomConversion {
        series: Vec::with_capacity(by_series.len()),
        skipped,
        deidentified: Deidentified::default(),
        planned: Vec::with_capacity(by_series.len()),
        pipeline: pipeline.clone(),
    };
    for (uid, members) in by_series {
        out.planned
            .push(plan_series(members, deidentify, &mut out.deidentified)?);
        out.series.push(uid.to_string());
    }
    Ok(out)
}
