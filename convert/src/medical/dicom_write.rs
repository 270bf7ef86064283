//! A Tensogram volume back to a DICOM series: one single-frame file per
//! slice, Explicit VR Little Endian, geometry rebuilt from `base[i].dicom`
//! (see `dicom.rs` for what convert-dicom records).

use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, Map, ObjectDescriptor};

use crate::util::CliResult;

const EXPLICIT_VR_LE: &str = "1.2.840.10008.1.2.1";
const SECONDARY_CAPTURE: &str = "1.2.840.10008.5.1.4.1.1.7";

fn f64s(v: Option<&Value>, n: usize) -> Option<Vec<f64>> {
    let a = v?.as_array()?;
    let out: Option<Vec<f64>> = a.iter().map(Value::as_f64).collect();
    out.filter(|o| o.len() == n)
}

fn ds(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x}"))
        .collect::<Vec<_>>()
        .join("\\")
}

/// `2.25.` UID derived from a seed (xxh3-128).
fn derived_uid(seed: &str) -> String {
    format!("2.25.{}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()))
}

/// DeidentificationMethodCodeSequence from the codes convert-dicom
/// recorded (`[{value, scheme, meaning}]`, see `deid.rs`).
fn method_codes(v: Option<&Value>) -> Option<DataElement<InMemDicomObject>> {
    let items: Vec<InMemDicomObject> = v?
        .as_array()?
        .iter()
        .filter_map(|c| {
            let text = |k: &str| c.get(k).and_then(Value::as_text);
            Some(InMemDicomObject::from_element_iter([
                DataElement::new(tags::CODE_VALUE, VR::SH, text("value")?),
                DataElement::new(tags::CODING_SCHEME_DESIGNATOR, VR::SH, text("scheme")?),
                DataElement::new(tags::CODE_MEANING, VR::LO, text("meaning")?),
            ]))
        })
        .collect();
    Some(DataElement::new(
        tags::DEIDENTIFICATION_METHOD_CODE_SEQUENCE,
        VR::SQ,
        DataSetSequence::from(items),
    ))
}

/// One 3-D integer object (`[slices, rows, columns]`, payload in
/// `d.byte_order`) and its base entry as DICOM files, in slice order.
pub fn object_to_dicom(d: &ObjectDescriptor, data: &[u8], entry: &Map) -> CliResult<Vec<Vec<u8>>> {
    let [n, rows, cols] = <[u64; 3]>::try_from(d.shape.as_slice())
        .map_err(|_| format!("a DICOM series needs a 3-D object, not shape {:?}", d.shape))?;
    let (bits, signed) = match d.dtype {
        Dtype::Uint8 => (8u16, 0u16),
        Dtype::Int8 => (8, 1),
        Dtype::Uint16 => (16, 0),
        Dtype::Int16 => (16, 1),
        Dtype::Uint32 => (32, 0),
        Dtype::Int32 => (32, 1),
        other => {
            return Err(format!("dtype {} has no native DICOM pixel format", other.name()).into())
        }
    };
    if rows > u64::from(u16::MAX) || cols > u64::from(u16::MAX) {
        return Err(format!("{rows}x{cols} slices exceed DICOM's 65535 rows/columns").into());
    }
    let width = d.dtype.width();
    let slice_bytes = (rows * cols) as usize * width;
    if data.len() as u64 != n * rows * cols * width as u64 {
        return Err(format!(
            "payload has {} bytes, shape {:?} needs more",
            data.len(),
            d.shape
        )
        .into());
    }
    let meta = entry.get("dicom");
    let get = |k: &str| meta.and_then(|m| m.get(k));
    let attr = |k: &str| {
        meta.and_then(|m| m.get("attributes"))
            .and_then(|a| a.get(k))
            .and_then(Value::as_text)
            .map(str::to_string)
    };
    let orientation = f64s(get("image_orientation_patient"), 6);
    let origin = f64s(get("image_position_patient"), 3);
    let normal = f64s(get("slice_normal"), 3);
    let step = get("slice_spacing").and_then(Value::as_f64);
    let spacing = f64s(get("pixel_spacing"), 2);
    let series = attr("SeriesInstanceUID").unwrap_or_else(|| derived_uid(&format!("{entry:?}")));
    let study = attr("StudyInstanceUID").unwrap_or_else(|| derived_uid(&format!("study {series}")));
    let sop_class = attr("SOPClassUID").unwrap_or_else(|| SECONDARY_CAPTURE.to_string());
    let per_slice = |k: &str, i: usize| -> Option<f64> {
        match get(k)? {
            Value::Array(a) => a.get(i)?.as_f64(),
            v => v.as_f64(),
        }
    };
    let mut files = Vec::with_capacity(n as usize);
    for (i, chunk) in data.chunks_exact(slice_bytes).enumerate() {
        let sop = derived_uid(&format!("{series}/{i}"));
        let mut obj = InMemDicomObject::new_empty();
        let mut put = |tag, vr, v: PrimitiveValue| {
            obj.put(DataElement::new(tag, vr, v));
        };
        put(tags::SOP_CLASS_UID, VR::UI, sop_class.as_str().into());
        put(tags::SOP_INSTANCE_UID, VR::UI, sop.as_str().into());
        put(tags::STUDY_INSTANCE_UID, VR::UI, study.as_str().into());
        put(tags::SERIES_INSTANCE_UID, VR::UI, series.as_str().into());
        if let Some(f) = attr("FrameOfReferenceUID") {
            put(tags::FRAME_OF_REFERENCE_UID, VR::UI, f.as_str().into());
        }
        for (name, tag, vr) in [
            ("Modality", tags::MODALITY, VR::CS),
            ("SeriesDescription", tags::SERIES_DESCRIPTION, VR::LO),
            ("StudyDescription", tags::STUDY_DESCRIPTION, VR::LO),
            ("BodyPartExamined", tags::BODY_PART_EXAMINED, VR::CS),
            ("Manufacturer", tags::MANUFACTURER, VR::LO),
            ("PatientName", tags::PATIENT_NAME, VR::PN),
            ("PatientID", tags::PATIENT_ID, VR::LO),
            ("PatientSex", tags::PATIENT_SEX, VR::CS),
            ("PatientAge", tags::PATIENT_AGE, VR::AS),
            (
                "PatientIdentityRemoved",
                tags::PATIENT_IDENTITY_REMOVED,
                VR::CS,
            ),
            (
                "DeidentificationMethod",
                tags::DEIDENTIFICATION_METHOD,
                VR::LO,
            ),
        ] {
            if let Some(v) = attr(name) {
                put(tag, vr, v.as_str().into());
            }
        }
        if let Some(seq) = method_codes(get("deidentification_method_codes")) {
            obj.put(seq);
        }
        let mut put = |tag, vr, v: PrimitiveValue| {
            obj.put(DataElement::new(tag, vr, v));
        };
        put(
            tags::INSTANCE_NUMBER,
            VR::IS,
            (i + 1).to_string().as_str().into(),
        );
        if let (Some(o), Some(p0)) = (&orientation, &origin) {
            let k = i as f64 * step.unwrap_or(0.0);
            let nv = normal.clone().unwrap_or(vec![0.0; 3]);
            let p = [p0[0] + k * nv[0], p0[1] + k * nv[1], p0[2] + k * nv[2]];
            put(tags::IMAGE_POSITION_PATIENT, VR::DS, ds(&p).as_str().into());
            put(
                tags::IMAGE_ORIENTATION_PATIENT,
                VR::DS,
                ds(o).as_str().into(),
            );
        }
        if let Some(s) = &spacing {
            put(tags::PIXEL_SPACING, VR::DS, ds(s).as_str().into());
        }
        if let Some(t) = get("slice_thickness").and_then(Value::as_f64) {
            put(tags::SLICE_THICKNESS, VR::DS, ds(&[t]).as_str().into());
        }
        if let Some(s) = per_slice("rescale_slope", i) {
            put(tags::RESCALE_SLOPE, VR::DS, ds(&[s]).as_str().into());
        }
        if let Some(s) = per_slice("rescale_intercept", i) {
            put(tags::RESCALE_INTERCEPT, VR::DS, ds(&[s]).as_str().into());
        }
        put(tags::SAMPLES_PER_PIXEL, VR::US, 1u16.into());
        put(
            tags::PHOTOMETRIC_INTERPRETATION,
            VR::CS,
            "MONOCHROME2".into(),
        );
        put(tags::ROWS, VR::US, (rows as u16).into());
        put(tags::COLUMNS, VR::US, (cols as u16).into());
        put(tags::BITS_ALLOCATED, VR::US, bits.into());
        put(tags::BITS_STORED, VR::US, bits.into());
        put(tags::HIGH_BIT, VR::US, (bits - 1).into());
        put(tags::PIXEL_REPRESENTATION, VR::US, signed.into());
        let mut le = chunk.to_vec();
        if d.byte_order == ByteOrder::Big && width > 1 {
            for c in le.chunks_exact_mut(width) {
                c.reverse();
            }
        }
        if le.len() % 2 == 1 {
            le.push(0);
        }
        let vr = if width == 1 { VR::OB } else { VR::OW };
        put(tags::PIXEL_DATA, vr, PrimitiveValue::U8(le.into()));
        let file = obj
            .with_meta(
                FileMetaTableBuilder::new()
                    .transfer_syntax(EXPLICIT_VR_LE)
                    .media_storage_sop_class_uid(sop_class.as_str())
                    .media_storage_sop_instance_uid(sop.as_str()),
            )
            .map_err(|e| format!("slice {i}: cannot build the file meta group: {e}"))?;
        let mut bytes = Vec::new();
        file.write_all(&mut bytes)
            .map_err(|e| format!("slice {i}: cannot encode: {e}"))?;
        files.push(bytes);
    }
    Ok(files)
}
