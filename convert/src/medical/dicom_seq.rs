//! Sequences kept item by item under `base[i].dicom.sequences` and written
//! back (spec/convert.md "DICOM written back"): the RT Dose IOD's
//! ReferencedRTPlanSequence (PS3.3 C.8.8.3, Type 1C when the dose is
//! computed from a plan) with its fraction groups, beams, control points
//! and brachytherapy setups, a PET image's
//! RadiopharmaceuticalInformationSequence (C.8.9.2) with its radionuclide
//! code, and an ultrasound image's SequenceOfUltrasoundRegions (C.8.5.5).
//!
//! Each sequence is recorded as an array of items; an item is a map from
//! keyword to the value's text, or to the array of items of a nested
//! sequence. Only the elements of [`KEPT`] are read; de-identification
//! applies the profile's action to each one ([`map_leaves`]), so a
//! ReferencedSOPInstanceUID gets the same keyed hash as every other UID.

use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::InMemDicomObject;
use tgm::cbor::Value;
use tgm::Map;

use super::dicom_conform::Conform;
use super::dicom_vr::binary;
use super::{MedicalError, MedicalResult};

/// An element kept inside a sequence: a text value or a nested sequence.
pub enum Node {
    /// keyword, tag, VR.
    Leaf(&'static str, Tag, VR),
    /// keyword, tag, the elements of its items.
    Seq(&'static str, Tag, &'static [Node]),
}

use Node::{Leaf, Seq};

const CONTROL_POINTS: [Node; 2] = [
    Leaf(
        "ReferencedStartControlPointIndex",
        tags::REFERENCED_START_CONTROL_POINT_INDEX,
        VR::IS,
    ),
    Leaf(
        "ReferencedStopControlPointIndex",
        tags::REFERENCED_STOP_CONTROL_POINT_INDEX,
        VR::IS,
    ),
];

const BEAMS: [Node; 2] = [
    Leaf("ReferencedBeamNumber", tags::REFERENCED_BEAM_NUMBER, VR::IS),
    Seq(
        "ReferencedControlPointSequence",
        tags::REFERENCED_CONTROL_POINT_SEQUENCE,
        &CONTROL_POINTS,
    ),
];

const BRACHY_SETUPS: [Node; 1] = [Leaf(
    "ReferencedBrachyApplicationSetupNumber",
    tags::REFERENCED_BRACHY_APPLICATION_SETUP_NUMBER,
    VR::IS,
)];

const FRACTION_GROUPS: [Node; 3] = [
    Leaf(
        "ReferencedFractionGroupNumber",
        tags::REFERENCED_FRACTION_GROUP_NUMBER,
        VR::IS,
    ),
    Seq(
        "ReferencedBeamSequence",
        tags::REFERENCED_BEAM_SEQUENCE,
        &BEAMS,
    ),
    Seq(
        "ReferencedBrachyApplicationSetupSequence",
        tags::REFERENCED_BRACHY_APPLICATION_SETUP_SEQUENCE,
        &BRACHY_SETUPS,
    ),
];

const RT_PLAN_REFERENCE: [Node; 3] = [
    Leaf(
        "ReferencedSOPClassUID",
        tags::REFERENCED_SOP_CLASS_UID,
        VR::UI,
    ),
    Leaf(
        "ReferencedSOPInstanceUID",
        tags::REFERENCED_SOP_INSTANCE_UID,
        VR::UI,
    ),
    Seq(
        "ReferencedFractionGroupSequence",
        tags::REFERENCED_FRACTION_GROUP_SEQUENCE,
        &FRACTION_GROUPS,
    ),
];

const CODE: [Node; 3] = [
    Leaf("CodeValue", tags::CODE_VALUE, VR::SH),
    Leaf(
        "CodingSchemeDesignator",
        tags::CODING_SCHEME_DESIGNATOR,
        VR::SH,
    ),
    Leaf("CodeMeaning", tags::CODE_MEANING, VR::LO),
];

/// PET Isotope module (PS3.3 C.8.9.2): what SUV is computed from.
const RADIOPHARMACEUTICAL: [Node; 9] = [
    Leaf("Radiopharmaceutical", tags::RADIOPHARMACEUTICAL, VR::LO),
    Leaf(
        "RadiopharmaceuticalVolume",
        tags::RADIOPHARMACEUTICAL_VOLUME,
        VR::DS,
    ),
    Leaf(
        "RadiopharmaceuticalStartTime",
        tags::RADIOPHARMACEUTICAL_START_TIME,
        VR::TM,
    ),
    Leaf(
        "RadiopharmaceuticalStopTime",
        tags::RADIOPHARMACEUTICAL_STOP_TIME,
        VR::TM,
    ),
    Leaf(
        "RadiopharmaceuticalStartDateTime",
        tags::RADIOPHARMACEUTICAL_START_DATE_TIME,
        VR::DT,
    ),
    Leaf(
        "RadionuclideTotalDose",
        tags::RADIONUCLIDE_TOTAL_DOSE,
        VR::DS,
    ),
    Leaf("RadionuclideHalfLife", tags::RADIONUCLIDE_HALF_LIFE, VR::DS),
    Leaf(
        "RadionuclidePositronFraction",
        tags::RADIONUCLIDE_POSITRON_FRACTION,
        VR::DS,
    ),
    Seq(
        "RadionuclideCodeSequence",
        tags::RADIONUCLIDE_CODE_SEQUENCE,
        &CODE,
    ),
];

/// US Region Calibration (PS3.3 C.8.5.5): where each region of an
/// ultrasound image lies and the physical size of its pixels.
const ULTRASOUND_REGION: [Node; 13] = [
    Leaf("RegionSpatialFormat", tags::REGION_SPATIAL_FORMAT, VR::US),
    Leaf("RegionDataType", tags::REGION_DATA_TYPE, VR::US),
    Leaf("RegionFlags", tags::REGION_FLAGS, VR::UL),
    Leaf("RegionLocationMinX0", tags::REGION_LOCATION_MIN_X0, VR::UL),
    Leaf("RegionLocationMinY0", tags::REGION_LOCATION_MIN_Y0, VR::UL),
    Leaf("RegionLocationMaxX1", tags::REGION_LOCATION_MAX_X1, VR::UL),
    Leaf("RegionLocationMaxY1", tags::REGION_LOCATION_MAX_Y1, VR::UL),
    Leaf("ReferencePixelX0", tags::REFERENCE_PIXEL_X0, VR::SL),
    Leaf("ReferencePixelY0", tags::REFERENCE_PIXEL_Y0, VR::SL),
    Leaf(
        "PhysicalUnitsXDirection",
        tags::PHYSICAL_UNITS_X_DIRECTION,
        VR::US,
    ),
    Leaf(
        "PhysicalUnitsYDirection",
        tags::PHYSICAL_UNITS_Y_DIRECTION,
        VR::US,
    ),
    Leaf("PhysicalDeltaX", tags::PHYSICAL_DELTA_X, VR::FD),
    Leaf("PhysicalDeltaY", tags::PHYSICAL_DELTA_Y, VR::FD),
];

/// The top-level sequences kept.
pub const KEPT: [Node; 3] = [
    Seq(
        "SequenceOfUltrasoundRegions",
        tags::SEQUENCE_OF_ULTRASOUND_REGIONS,
        &ULTRASOUND_REGION,
    ),
    Seq(
        "ReferencedRTPlanSequence",
        tags::REFERENCED_RT_PLAN_SEQUENCE,
        &RT_PLAN_REFERENCE,
    ),
    Seq(
        "RadiopharmaceuticalInformationSequence",
        tags::RADIOPHARMACEUTICAL_INFORMATION_SEQUENCE,
        &RADIOPHARMACEUTICAL,
    ),
];

fn text(obj: &InMemDicomObject, tag: Tag) -> Option<String> {
    obj.get(tag)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_end_matches(['\0', ' ']).to_string())
}

/// The items of a sequence, each as a map of the `children` present.
fn read_items(items: &[InMemDicomObject], children: &[Node]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|item| {
                let mut m = Map::new();
                read_into(item, children, &mut m);
                Value::from(m)
            })
            .collect(),
    )
}

fn read_into(obj: &InMemDicomObject, nodes: &[Node], out: &mut Map) {
    for node in nodes {
        match node {
            Leaf(k, tag, _) => {
                if let Some(v) = text(obj, *tag) {
                    out.insert(k.to_string(), v.into());
                }
            }
            Seq(k, tag, children) => {
                if let Some(items) = obj.get(*tag).and_then(|e| e.items()) {
                    out.insert(k.to_string(), read_items(items, children));
                }
            }
        }
    }
}

/// The kept sequences present in `obj` (keyword → items), or `None`.
pub fn read(obj: &InMemDicomObject) -> Option<Value> {
    let mut m = Map::new();
    read_into(obj, &KEPT, &mut m);
    (!m.is_empty()).then(|| Value::from(m))
}

/// `f(keyword, tag, vr, value)` gives each leaf's new value, or `None` to
/// leave it out.
pub type LeafFn<'a> = dyn FnMut(&str, Tag, VR, &str) -> Option<String> + 'a;

/// The recorded sequences with every leaf passed through `f`.
pub fn map_leaves(recorded: &Value, f: &mut LeafFn) -> Value {
    map_in(recorded, &KEPT, f)
}

fn map_in(map: &Value, nodes: &[Node], f: &mut LeafFn) -> Value {
    let mut out = Map::new();
    for node in nodes {
        match node {
            Leaf(k, tag, vr) => {
                let v = map.get(k).and_then(Value::as_text);
                if let Some(new) = v.and_then(|v| f(k, *tag, *vr, v)) {
                    out.insert(k.to_string(), new.into());
                }
            }
            Seq(k, _, children) => {
                if let Some(items) = map.get(k).and_then(Value::as_array) {
                    let items = items.iter().map(|i| map_in(i, children, f)).collect();
                    out.insert(k.to_string(), Value::Array(items));
                }
            }
        }
    }
    Value::from(out)
}

/// Puts the recorded sequences into `obj`, every text value admitted by
/// `conform` against its VR; an error names the element's path.
pub fn write(obj: &mut InMemDicomObject, recorded: &Value, conform: &mut Conform) -> MedicalResult {
    write_in(obj, recorded, &KEPT, "", conform)
}

fn write_in(
    obj: &mut InMemDicomObject,
    map: &Value,
    nodes: &[Node],
    at: &str,
    conform: &mut Conform,
) -> MedicalResult {
    for node in nodes {
        match node {
            Leaf(k, tag, vr) => {
                if let Some(v) = map.get(k).and_then(Value::as_text) {
                    let fail = |e: String| MedicalError::invalid(format!("{at}{k} {v:?}: {e}"));
                    let value = match binary(*vr, v) {
                        Some(parsed) => parsed.map_err(fail)?,
                        None if v.is_empty() => PrimitiveValue::Empty,
                        None => {
                            conform.admit(&format!("{at}{k}"), *tag, *vr, v)?;
                            v.into()
                        }
                    };
                    obj.put(DataElement::new(*tag, *vr, value));
                }
            }
            Seq(k, tag, children) => {
                let Some(items) = map.get(k).and_then(Value::as_array) else {
                    continue;
                };
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let mut o = InMemDicomObject::new_empty();
                    write_in(&mut o, item, children, &format!("{at}{k}[{i}]."), conform)?;
                    out.push(o);
                }
                obj.put(DataElement::new(*tag, VR::SQ, DataSetSequence::from(out)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medical::dicom_conform::Conformance;

    fn map(pairs: Vec<(&str, Value)>) -> Value {
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert(k.to_string(), v);
        }
        Value::from(m)
    }

    /// A recorded ReferencedRTPlanSequence: plan `uid`, fraction group 1,
    /// beam 3.
    fn recorded_plan(uid: &str) -> Value {
        let beam = map(vec![("ReferencedBeamNumber", "3".into())]);
        let group = map(vec![
            ("ReferencedFractionGroupNumber", "1".into()),
            ("ReferencedBeamSequence", Value::Array(vec![beam])),
        ]);
        let item = map(vec![
            (
                "ReferencedSOPClassUID",
                "1.2.840.10008.5.1.4.1.1.481.5".into(),
            ),
            ("ReferencedSOPInstanceUID", uid.into()),
            ("ReferencedFractionGroupSequence", Value::Array(vec![group])),
        ]);
        map(vec![("ReferencedRTPlanSequence", Value::Array(vec![item]))])
    }

    fn plan(uid: &str) -> InMemDicomObject {
        let mut obj = InMemDicomObject::new_empty();
        write(&mut obj, &recorded_plan(uid), &mut Conform::default()).unwrap();
        obj
    }

    #[test]
    fn a_plan_reference_is_read_and_written_back_unchanged() {
        let recorded = read(&plan("1.2.3.4")).unwrap();
        assert_eq!(recorded, recorded_plan("1.2.3.4"));
        let beams = plan("1.2.3.4")
            .element(tags::REFERENCED_RT_PLAN_SEQUENCE)
            .unwrap()
            .items()
            .unwrap()[0]
            .element(tags::REFERENCED_FRACTION_GROUP_SEQUENCE)
            .unwrap()
            .items()
            .unwrap()[0]
            .element(tags::REFERENCED_BEAM_SEQUENCE)
            .unwrap()
            .items()
            .unwrap()
            .len();
        assert_eq!(beams, 1);
        let item = &recorded
            .get("ReferencedRTPlanSequence")
            .unwrap()
            .as_array()
            .unwrap()[0];
        let group = &item
            .get("ReferencedFractionGroupSequence")
            .unwrap()
            .as_array()
            .unwrap()[0];
        let beam = &group
            .get("ReferencedBeamSequence")
            .unwrap()
            .as_array()
            .unwrap()[0];
        assert_eq!(
            beam.get("ReferencedBeamNumber").unwrap().as_text(),
            Some("3")
        );
        assert_eq!(read(&InMemDicomObject::new_empty()), None);
    }

    #[test]
    fn leaves_are_mapped_and_an_invalid_value_is_named_by_path() {
        let recorded = read(&plan("1.2.3.4")).unwrap();
        let mapped = map_leaves(&recorded, &mut |k, _, _, v| {
            (k == "ReferencedSOPInstanceUID").then(|| format!("{v}.9"))
        });
        let item = &mapped
            .get("ReferencedRTPlanSequence")
            .unwrap()
            .as_array()
            .unwrap()[0];
        assert_eq!(
            item.get("ReferencedSOPInstanceUID").unwrap().as_text(),
            Some("1.2.3.4.9")
        );
        assert!(item.get("ReferencedSOPClassUID").is_none());
        let path = "ReferencedRTPlanSequence[0].ReferencedSOPInstanceUID (0008,1155) \"1.2.03\"";
        let mut strict = Conform::new(Conformance::Strict);
        let mut obj = InMemDicomObject::new_empty();
        let err = write(&mut obj, &recorded_plan("1.2.03"), &mut strict).unwrap_err();
        assert!(err.to_string().starts_with(path), "{err}");
        assert_eq!(err.kind(), crate::medical::MedicalErrorKind::Refused);
        // Verbatim: written as recorded, and reported.
        let mut verbatim = Conform::new(Conformance::Verbatim);
        write(&mut obj, &recorded_plan("1.2.03"), &mut verbatim).unwrap();
        let item = &obj
            .element(tags::REFERENCED_RT_PLAN_SEQUENCE)
            .unwrap()
            .items()
            .unwrap()[0];
        assert_eq!(
            text(item, tags::REFERENCED_SOP_INSTANCE_UID).as_deref(),
            Some("1.2.03")
        );
        let found = verbatim.into_found();
        assert_eq!(found.len(), 1);
        assert!(found[0].to_string().starts_with(path), "{}", found[0]);
    }
}
