//! DICOM series to Tensogram objects.
//!
//! Each series (SeriesInstanceUID) becomes one 3-D object, shape
//! `[slices, rows, columns]`, slices ordered by their position along the
//! slice normal (ImagePositionPatient · (row × column direction of
//! ImageOrientationPatient)), or by InstanceNumber when the geometry is
//! absent. Voxels are stored little-endian with the stored dtype
//! (BitsAllocated, PixelRepresentation); rescale slope/intercept are
//! recorded, never applied. Geometry and identifying attributes are kept
//! under `base[i].dicom`; `deidentify` drops or replaces the identifying
//! ones (a subset of the DICOM PS3.15 basic de-identification profile).
//!
//! Transfer syntaxes: implicit VR little endian, explicit VR little endian
//! and explicit VR big endian. Encapsulated (compressed) pixel data is
//! refused with the syntax named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dicom_core::value::{PrimitiveValue, Value as DicomValue};
use dicom_core::Tag;
use dicom_dictionary_std::tags;
use dicom_object::{DefaultDicomObject, OpenFileOptions};
use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, GlobalMetadata, Map, ObjectDescriptor};

use super::pipeline::PipelineArgs;
use super::Converted;
use crate::util::CliResult;

/// Transfer syntaxes whose pixel data is stored natively.
const NATIVE_SYNTAXES: [(&str, &str); 3] = [
    ("1.2.840.10008.1.2", "Implicit VR Little Endian"),
    ("1.2.840.10008.1.2.1", "Explicit VR Little Endian"),
    ("1.2.840.10008.1.2.2", "Explicit VR Big Endian"),
];

/// Attributes kept as text under `base[i].dicom.attributes` (keyword, tag,
/// identifying?). Identifying ones are what `deidentify` removes.
const TEXT_ATTRIBUTES: [(&str, Tag, bool); 22] = [
    ("Modality", tags::MODALITY, false),
    ("Manufacturer", tags::MANUFACTURER, false),
    ("BodyPartExamined", tags::BODY_PART_EXAMINED, false),
    ("SeriesDescription", tags::SERIES_DESCRIPTION, false),
    ("StudyDescription", tags::STUDY_DESCRIPTION, false),
    (
        "PhotometricInterpretation",
        tags::PHOTOMETRIC_INTERPRETATION,
        false,
    ),
    ("SOPClassUID", tags::SOP_CLASS_UID, false),
    ("PatientSex", tags::PATIENT_SEX, false),
    ("PatientAge", tags::PATIENT_AGE, false),
    ("PatientName", tags::PATIENT_NAME, true),
    ("PatientID", tags::PATIENT_ID, true),
    ("PatientBirthDate", tags::PATIENT_BIRTH_DATE, true),
    ("PatientAddress", tags::PATIENT_ADDRESS, true),
    ("OtherPatientIDs", Tag(0x0010, 0x1000), true),
    (
        "ReferringPhysicianName",
        tags::REFERRING_PHYSICIAN_NAME,
        true,
    ),
    (
        "PerformingPhysicianName",
        tags::PERFORMING_PHYSICIAN_NAME,
        true,
    ),
    ("OperatorsName", tags::OPERATORS_NAME, true),
    ("InstitutionName", tags::INSTITUTION_NAME, true),
    ("InstitutionAddress", tags::INSTITUTION_ADDRESS, true),
    ("AccessionNumber", tags::ACCESSION_NUMBER, true),
    ("StudyID", tags::STUDY_ID, true),
    ("StationName", tags::STATION_NAME, true),
];

/// UIDs kept under `base[i].dicom`; `deidentify` replaces them with
/// `2.25.` UIDs derived from the originals (consistent within a run).
const UID_ATTRIBUTES: [(&str, Tag); 3] = [
    ("StudyInstanceUID", tags::STUDY_INSTANCE_UID),
    ("SeriesInstanceUID", tags::SERIES_INSTANCE_UID),
    ("FrameOfReferenceUID", tags::FRAME_OF_REFERENCE_UID),
];

/// Dates and times the basic profile blanks; `deidentify` removes them.
const DATE_ATTRIBUTES: [(&str, Tag); 4] = [
    ("StudyDate", tags::STUDY_DATE),
    ("SeriesDate", tags::SERIES_DATE),
    ("StudyTime", tags::STUDY_TIME),
    ("SeriesTime", tags::SERIES_TIME),
];

/// One single-frame image of a series.
struct Slice {
    path: PathBuf,
    rows: u64,
    columns: u64,
    dtype: Dtype,
    position: Option<[f64; 3]>,
    orientation: Option<[f64; 6]>,
    spacing: Option<[f64; 2]>,
    thickness: Option<f64>,
    instance: Option<i64>,
    slope: f64,
    intercept: f64,
    series: String,
    text: BTreeMap<&'static str, String>,
    transfer_syntax: String,
    /// Voxels, little-endian.
    data: Vec<u8>,
}

fn err_at(path: &Path, msg: impl std::fmt::Display) -> Box<dyn std::error::Error + Send + Sync> {
    format!("{}: {msg}", path.display()).into()
}

type Obj = DefaultDicomObject;

fn text(obj: &Obj, tag: Tag) -> Option<String> {
    obj.get(tag)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_end_matches(['\0', ' ']).to_string())
        .filter(|s| !s.is_empty())
}

fn floats<const N: usize>(
    obj: &Obj,
    tag: Tag,
    path: &Path,
    name: &str,
) -> CliResult<Option<[f64; N]>> {
    let Some(e) = obj.get(tag) else {
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

fn required_uint(obj: &Obj, tag: Tag, path: &Path, name: &str) -> CliResult<u64> {
    obj.get(tag)
        .ok_or_else(|| err_at(path, format!("missing pixel module attribute {name}")))?
        .to_int::<u64>()
        .map_err(|e| err_at(path, format!("{name} is not an unsigned integer: {e}")))
}

/// Reads one DICOM file as a slice.
fn read_slice(path: &Path) -> CliResult<Slice> {
    super::dicom_scan::check_lengths(path).map_err(|e| err_at(path, e))?;
    let obj = OpenFileOptions::new()
        .open_file(path)
        .map_err(|e| err_at(path, format!("not a readable DICOM file: {e}")))?;
    let ts = obj
        .meta()
        .transfer_syntax()
        .trim_end_matches('\0')
        .to_string();
    let Some((_, _)) = NATIVE_SYNTAXES.iter().find(|(uid, _)| *uid == ts) else {
        return Err(err_at(
            path,
            format!(
                "transfer syntax {ts} is not supported (only native pixel data: {})",
                NATIVE_SYNTAXES
                    .iter()
                    .map(|(_, n)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    let rows = required_uint(&obj, tags::ROWS, path, "Rows")?;
    let columns = required_uint(&obj, tags::COLUMNS, path, "Columns")?;
    let bits = required_uint(&obj, tags::BITS_ALLOCATED, path, "BitsAllocated")?;
    let signed = required_uint(
        &obj,
        tags::PIXEL_REPRESENTATION,
        path,
        "PixelRepresentation",
    )?;
    let samples = obj
        .get(tags::SAMPLES_PER_PIXEL)
        .map(|e| e.to_int::<u64>())
        .transpose()
        .map_err(|e| err_at(path, format!("SamplesPerPixel: {e}")))?
        .unwrap_or(1);
    if samples != 1 {
        return Err(err_at(
            path,
            format!("SamplesPerPixel {samples}: only single-sample (grey) images are supported"),
        ));
    }
    let frames = obj
        .get(tags::NUMBER_OF_FRAMES)
        .map(|e| e.to_int::<u64>())
        .transpose()
        .map_err(|e| err_at(path, format!("NumberOfFrames: {e}")))?
        .unwrap_or(1);
    if frames != 1 {
        return Err(err_at(
            path,
            format!("NumberOfFrames {frames}: only single-frame images are supported"),
        ));
    }
    let dtype = match (bits, signed) {
        (8, 0) => Dtype::Uint8,
        (8, 1) => Dtype::Int8,
        (16, 0) => Dtype::Uint16,
        (16, 1) => Dtype::Int16,
        (32, 0) => Dtype::Uint32,
        (32, 1) => Dtype::Int32,
        _ => {
            return Err(err_at(
                path,
                format!("BitsAllocated {bits} with PixelRepresentation {signed} is not supported"),
            ))
        }
    };
    let expected = rows
        .checked_mul(columns)
        .and_then(|n| n.checked_mul(dtype.width() as u64))
        .ok_or_else(|| err_at(path, "Rows x Columns overflows"))?;
    let pixel = obj
        .get(tags::PIXEL_DATA)
        .ok_or_else(|| err_at(path, "missing pixel module attribute PixelData"))?;
    let data = match pixel.value() {
        DicomValue::Primitive(p) => pixel_bytes(p, dtype, ts == NATIVE_SYNTAXES[2].0),
        _ => None,
    }
    .ok_or_else(|| err_at(path, "PixelData is encapsulated or of an unexpected type"))?;
    if data.len() as u64 != expected {
        return Err(err_at(
            path,
            format!(
                "PixelData has {} bytes; Rows {rows} x Columns {columns} x {} bytes need {expected}",
                data.len(),
                dtype.width()
            ),
        ));
    }
    let series = text(&obj, tags::SERIES_INSTANCE_UID)
        .ok_or_else(|| err_at(path, "missing SeriesInstanceUID"))?;
    let mut text_attrs = BTreeMap::new();
    for (name, tag, _) in TEXT_ATTRIBUTES {
        if let Some(v) = text(&obj, tag) {
            text_attrs.insert(name, v);
        }
    }
    for (name, tag) in UID_ATTRIBUTES.iter().chain(&DATE_ATTRIBUTES) {
        if let Some(v) = text(&obj, *tag) {
            text_attrs.insert(*name, v);
        }
    }
    let scalar = |tag: Tag, name: &str| -> CliResult<Option<f64>> {
        Ok(floats::<1>(&obj, tag, path, name)?.map(|[x]| x))
    };
    Ok(Slice {
        path: path.to_path_buf(),
        rows,
        columns,
        dtype,
        position: floats(
            &obj,
            tags::IMAGE_POSITION_PATIENT,
            path,
            "ImagePositionPatient",
        )?,
        orientation: floats(
            &obj,
            tags::IMAGE_ORIENTATION_PATIENT,
            path,
            "ImageOrientationPatient",
        )?,
        spacing: floats(&obj, tags::PIXEL_SPACING, path, "PixelSpacing")?,
        thickness: scalar(tags::SLICE_THICKNESS, "SliceThickness")?,
        instance: obj
            .get(tags::INSTANCE_NUMBER)
            .and_then(|e| e.to_int::<i64>().ok()),
        slope: scalar(tags::RESCALE_SLOPE, "RescaleSlope")?.unwrap_or(1.0),
        intercept: scalar(tags::RESCALE_INTERCEPT, "RescaleIntercept")?.unwrap_or(0.0),
        series,
        text: text_attrs,
        transfer_syntax: ts,
        data,
    })
}

/// Native pixel values as little-endian bytes.
fn pixel_bytes(p: &PrimitiveValue, dtype: Dtype, big_endian_file: bool) -> Option<Vec<u8>> {
    Some(match p {
        PrimitiveValue::U8(v) => {
            let mut b = v.to_vec();
            if big_endian_file && dtype.width() > 1 {
                for c in b.chunks_exact_mut(dtype.width()) {
                    c.reverse();
                }
            }
            b
        }
        PrimitiveValue::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        PrimitiveValue::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        PrimitiveValue::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        PrimitiveValue::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        _ => return None,
    })
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

/// Orders a series' slices and checks they form one regular volume.
fn order_series(mut slices: Vec<&Slice>) -> CliResult<OrderedSeries<'_>> {
    let first = slices[0];
    for s in &slices[1..] {
        if (s.rows, s.columns, s.dtype) != (first.rows, first.columns, first.dtype) {
            return Err(format!(
                "series {}: slices differ in size or type: {} is {}x{} {}, {} is {}x{} {}",
                first.series,
                first.path.display(),
                first.rows,
                first.columns,
                first.dtype.name(),
                s.path.display(),
                s.rows,
                s.columns,
                s.dtype.name()
            )
            .into());
        }
        let same_orientation = match (first.orientation, s.orientation) {
            (Some(a), Some(b)) => a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-4),
            (None, None) => true,
            _ => false,
        };
        if !same_orientation {
            return Err(format!(
                "series {}: ImageOrientationPatient differs between {} and {}",
                first.series,
                first.path.display(),
                s.path.display()
            )
            .into());
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
            return Err(format!(
                "series {}: {} and {} lie at the same position",
                first.series,
                w[0].path.display(),
                w[1].path.display()
            )
            .into());
        }
        if (d - step).abs() > 1e-3_f64.max(step.abs() * 1e-3) {
            return Err(format!(
                "series {}: uneven slice spacing ({d} mm between {} and {}, {step} mm elsewhere); the series has a gap",
                first.series,
                w[0].path.display(),
                w[1].path.display()
            )
            .into());
        }
    }
    Ok(OrderedSeries {
        slices,
        step: Some(step),
        normal: Some(normal),
    })
}

/// Ids removed and replaced by de-identification, in metadata order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deidentified {
    /// Attribute keywords removed.
    pub removed: Vec<String>,
    /// Attribute keywords whose values were replaced.
    pub replaced: Vec<String>,
}

/// A `2.25.` UID derived from `uid` (xxh3-128, so the same input UID maps
/// to the same replacement within and across runs).
fn replacement_uid(uid: &str) -> String {
    let h = xxhash_rust::xxh3::xxh3_128(uid.as_bytes());
    format!("2.25.{h}")
}

fn series_object(
    slices: Vec<&Slice>,
    pipeline: &PipelineArgs,
    deidentify: bool,
    report: &mut Deidentified,
) -> CliResult<(ObjectDescriptor, Vec<u8>, Map)> {
    let OrderedSeries {
        slices: ordered,
        step,
        normal,
    } = order_series(slices)?;
    let first = ordered[0];
    let n = ordered.len() as u64;
    let mut data = Vec::with_capacity(first.data.len() * ordered.len());
    for s in &ordered {
        data.extend_from_slice(&s.data);
    }
    let mut d = ObjectDescriptor::new(first.dtype, vec![n, first.rows, first.columns]);
    d.byte_order = ByteOrder::Little;
    pipeline.apply(&mut d)?;
    let mut dicom = Map::new();
    let floats = |v: &[f64]| Value::Array(v.iter().map(|&x| Value::Float(x)).collect());
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
    let slopes: Vec<f64> = ordered.iter().map(|s| s.slope).collect();
    let inters: Vec<f64> = ordered.iter().map(|s| s.intercept).collect();
    if slopes.iter().all(|&x| x == slopes[0]) && inters.iter().all(|&x| x == inters[0]) {
        dicom.insert("rescale_slope".into(), Value::Float(slopes[0]));
        dicom.insert("rescale_intercept".into(), Value::Float(inters[0]));
    } else {
        dicom.insert("rescale_slope".into(), floats(&slopes));
        dicom.insert("rescale_intercept".into(), floats(&inters));
    }
    dicom.insert(
        "transfer_syntax".into(),
        first.transfer_syntax.clone().into(),
    );
    let mut attrs = Map::new();
    for (k, v) in &first.text {
        let identifying = TEXT_ATTRIBUTES.iter().any(|(name, _, id)| name == k && *id)
            || DATE_ATTRIBUTES.iter().any(|(name, _)| name == k);
        let uid = UID_ATTRIBUTES.iter().any(|(name, _)| name == k);
        if deidentify && identifying {
            if !report.removed.iter().any(|r| r == k) {
                report.removed.push(k.to_string());
            }
            continue;
        }
        if deidentify && uid {
            if !report.replaced.iter().any(|r| r == k) {
                report.replaced.push(k.to_string());
            }
            attrs.insert(k.to_string(), replacement_uid(v).into());
            continue;
        }
        attrs.insert(k.to_string(), v.clone().into());
    }
    dicom.insert("attributes".into(), Value::from(attrs));
    if deidentify {
        dicom.insert("patient_identity_removed".into(), true.into());
    } else {
        dicom.insert(
            "instance_numbers".into(),
            Value::Array(
                ordered
                    .iter()
                    .map(|s| s.instance.map(Value::from_i64).unwrap_or(Value::Null))
                    .collect(),
            ),
        );
    }
    let mut entry = Map::new();
    entry.insert(
        "dim_names".into(),
        Value::Array(vec!["slice".into(), "row".into(), "column".into()]),
    );
    entry.insert("dicom".into(), Value::from(dicom));
    Ok((d, data, entry))
}

/// Expands directories (one level, sorted) into their files.
fn expand(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| err_at(p, format!("cannot list: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    if out.is_empty() {
        return Err("no DICOM files given".into());
    }
    Ok(out)
}

/// DICOM files and directories to the objects of one message: one 3-D
/// object per series, in SeriesInstanceUID order. Also returns what
/// de-identification removed and replaced.
pub fn dicom_to_objects(
    inputs: &[PathBuf],
    pipeline: &PipelineArgs,
    deidentify: bool,
) -> CliResult<(Converted, Deidentified)> {
    let files = expand(inputs)?;
    let slices = files
        .iter()
        .map(|p| read_slice(p))
        .collect::<CliResult<Vec<_>>>()?;
    let mut series: BTreeMap<&str, Vec<&Slice>> = BTreeMap::new();
    for s in &slices {
        series.entry(&s.series).or_default().push(s);
    }
    let mut objects = Vec::with_capacity(series.len());
    let mut base = Vec::with_capacity(series.len());
    let mut report = Deidentified::default();
    for members in series.into_values() {
        let (d, data, entry) = series_object(members, pipeline, deidentify, &mut report)?;
        objects.push((d, data));
        base.push(entry);
    }
    Ok(((objects, GlobalMetadata::with_base(base)), report))
}
