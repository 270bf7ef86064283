//! A Tensogram volume back to DICOM (docs/src/guide/medical.md, spec/convert.md
//! "Medical geometry"): Explicit VR Little Endian, one single-frame file per
//! slice, or one multi-frame RT Dose instance. The IOD follows the
//! archive's SOPClassUID: CT Image, MR Image (when its Type 1 attributes
//! were recorded), RT Dose, CR Image, PET Image, DX Image (when its Type 1
//! attributes were recorded), single-frame US Image, otherwise Secondary Capture
//! keeping Modality (`OT` when unknown). Geometry comes from
//! `base[i].geometry`, whichever format recorded it. Every value is checked
//! against its VR (`dicom_vr`); one the archive holds outside its VR's
//! rules is written verbatim and reported, or refused under strict output
//! (`dicom_conform`). The IOD's Type 1 attributes are written or
//! the object is refused, Type 2 ones are written empty when the archive
//! has no value. An RT Dose gets back its ReferencedRTPlanSequence
//! (`dicom_seq`).

use dicom_core::value::{DataSetSequence, PrimitiveValue};
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, Map, ObjectDescriptor};

use super::dicom_conform::{Conform, Conformance, Nonconforming};
use super::dicom_time::TimeAxis;
use super::dicom_vr::{ds, ds_multi};
use super::geometry::{cross, Geometry, Plane};
use super::{MedicalError, MedicalErrorKind, MedicalResult};

const EXPLICIT_VR_LE: &str = "1.2.840.10008.1.2.1";
const SECONDARY_CAPTURE: &str = "1.2.840.10008.5.1.4.1.1.7";
const CT_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.2";
const RT_DOSE: &str = "1.2.840.10008.5.1.4.1.1.481.2";
const MR_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.4";
const CR_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.1";
const PET_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.128";
const DX_PRESENTATION: &str = "1.2.840.10008.5.1.4.1.1.1.1";
const DX_PROCESSING: &str = "1.2.840.10008.5.1.4.1.1.1.1.1";
const US_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.6.1";
const ENHANCED_CT: &str = "1.2.840.10008.5.1.4.1.1.2.1";
const ENHANCED_MR: &str = "1.2.840.10008.5.1.4.1.1.4.1";

/// The IOD written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Iod {
    SecondaryCapture,
    Ct,
    Mr,
    RtDose,
    Cr,
    Pet,
    /// Digital X-Ray Image, For Presentation.
    Dx,
    /// Digital X-Ray Image, For Processing: the DX attributes of [`Iod::Dx`].
    DxProcessing,
    /// Ultrasound Image (single-frame).
    Us,
}

impl Iod {
    fn sop_class(self) -> &'static str {
        match self {
            Iod::SecondaryCapture => SECONDARY_CAPTURE,
            Iod::Ct => CT_IMAGE,
            Iod::Mr => MR_IMAGE,
            Iod::RtDose => RT_DOSE,
            Iod::Cr => CR_IMAGE,
            Iod::Pet => PET_IMAGE,
            Iod::Dx => DX_PRESENTATION,
            Iod::DxProcessing => DX_PROCESSING,
            Iod::Us => US_IMAGE,
        }
    }

    /// The IOD whose rows of [`ATTRIBUTES`] apply.
    fn family(self) -> Iod {
        match self {
            Iod::DxProcessing => Iod::Dx,
            other => other,
        }
    }
}

/// Attribute type in an IOD (PS3.3): 1 required with a value, 2 required
/// (may be empty), 3 optional.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    T1,
    T2,
    T3,
}

/// The DX Image IOD's Type 1 attributes a DX archive must have recorded to
/// be written back as DX (PS3.3 C.8.11.1-C.8.11.4).
const DX_TYPE1: [&str; 9] = [
    "ImageType",
    "PresentationIntentType",
    "ImageLaterality",
    "PixelIntensityRelationship",
    "PixelIntensityRelationshipSign",
    "RescaleType",
    "LossyImageCompression",
    "BurnedInAnnotation",
    "ImagerPixelSpacing",
];

/// Attributes copied from `base[i].dicom.attributes`, with the IODs that
/// carry them (None: all).
const ATTRIBUTES: [(&str, Tag, VR, Kind, Option<Iod>); 76] = [
    (
        "ImageType",
        tags::IMAGE_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::Mr),
    ),
    (
        "ScanningSequence",
        tags::SCANNING_SEQUENCE,
        VR::CS,
        Kind::T1,
        Some(Iod::Mr),
    ),
    (
        "SequenceVariant",
        tags::SEQUENCE_VARIANT,
        VR::CS,
        Kind::T1,
        Some(Iod::Mr),
    ),
    (
        "ScanOptions",
        tags::SCAN_OPTIONS,
        VR::CS,
        Kind::T2,
        Some(Iod::Mr),
    ),
    (
        "MRAcquisitionType",
        tags::MR_ACQUISITION_TYPE,
        VR::CS,
        Kind::T2,
        Some(Iod::Mr),
    ),
    ("EchoTime", tags::ECHO_TIME, VR::DS, Kind::T2, Some(Iod::Mr)),
    (
        "RepetitionTime",
        tags::REPETITION_TIME,
        VR::DS,
        Kind::T2,
        Some(Iod::Mr),
    ),
    (
        "EchoTrainLength",
        tags::ECHO_TRAIN_LENGTH,
        VR::IS,
        Kind::T2,
        Some(Iod::Mr),
    ),
    ("PatientName", tags::PATIENT_NAME, VR::PN, Kind::T2, None),
    ("PatientID", tags::PATIENT_ID, VR::LO, Kind::T2, None),
    (
        "PatientBirthDate",
        tags::PATIENT_BIRTH_DATE,
        VR::DA,
        Kind::T2,
        None,
    ),
    ("PatientSex", tags::PATIENT_SEX, VR::CS, Kind::T2, None),
    ("PatientAge", tags::PATIENT_AGE, VR::AS, Kind::T3, None),
    (
        "PatientAddress",
        tags::PATIENT_ADDRESS,
        VR::LO,
        Kind::T3,
        None,
    ),
    (
        "OtherPatientIDs",
        Tag(0x0010, 0x1000),
        VR::LO,
        Kind::T3,
        None,
    ),
    ("StudyDate", tags::STUDY_DATE, VR::DA, Kind::T2, None),
    ("StudyTime", tags::STUDY_TIME, VR::TM, Kind::T2, None),
    (
        "ReferringPhysicianName",
        tags::REFERRING_PHYSICIAN_NAME,
        VR::PN,
        Kind::T2,
        None,
    ),
    ("StudyID", tags::STUDY_ID, VR::SH, Kind::T2, None),
    (
        "AccessionNumber",
        tags::ACCESSION_NUMBER,
        VR::SH,
        Kind::T2,
        None,
    ),
    (
        "StudyDescription",
        tags::STUDY_DESCRIPTION,
        VR::LO,
        Kind::T3,
        None,
    ),
    ("SeriesNumber", tags::SERIES_NUMBER, VR::IS, Kind::T2, None),
    ("SeriesDate", tags::SERIES_DATE, VR::DA, Kind::T3, None),
    ("SeriesTime", tags::SERIES_TIME, VR::TM, Kind::T3, None),
    (
        "SeriesDescription",
        tags::SERIES_DESCRIPTION,
        VR::LO,
        Kind::T3,
        None,
    ),
    (
        "BodyPartExamined",
        tags::BODY_PART_EXAMINED,
        VR::CS,
        Kind::T3,
        None,
    ),
    (
        "PerformingPhysicianName",
        tags::PERFORMING_PHYSICIAN_NAME,
        VR::PN,
        Kind::T3,
        None,
    ),
    (
        "OperatorsName",
        tags::OPERATORS_NAME,
        VR::PN,
        Kind::T3,
        None,
    ),
    ("Manufacturer", tags::MANUFACTURER, VR::LO, Kind::T2, None),
    (
        "InstitutionName",
        tags::INSTITUTION_NAME,
        VR::LO,
        Kind::T3,
        None,
    ),
    (
        "InstitutionAddress",
        tags::INSTITUTION_ADDRESS,
        VR::ST,
        Kind::T3,
        None,
    ),
    ("StationName", tags::STATION_NAME, VR::SH, Kind::T3, None),
    ("KVP", tags::KVP, VR::DS, Kind::T2, Some(Iod::Ct)),
    // PET Series and PET Image (PS3.3 C.8.9.1, C.8.9.4); DecayFactor is
    // checked against DecayCorrection in `Source::shared`.
    (
        "ImageType",
        tags::IMAGE_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "SeriesDate",
        tags::SERIES_DATE,
        VR::DA,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "SeriesTime",
        tags::SERIES_TIME,
        VR::TM,
        Kind::T1,
        Some(Iod::Pet),
    ),
    ("Units", tags::UNITS, VR::CS, Kind::T1, Some(Iod::Pet)),
    (
        "CountsSource",
        tags::COUNTS_SOURCE,
        VR::CS,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "SeriesType",
        tags::SERIES_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "DecayCorrection",
        tags::DECAY_CORRECTION,
        VR::CS,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "NumberOfSlices",
        tags::NUMBER_OF_SLICES,
        VR::US,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "CorrectedImage",
        tags::CORRECTED_IMAGE,
        VR::CS,
        Kind::T2,
        Some(Iod::Pet),
    ),
    (
        "CollimatorType",
        tags::COLLIMATOR_TYPE,
        VR::CS,
        Kind::T2,
        Some(Iod::Pet),
    ),
    (
        "RandomsCorrectionMethod",
        tags::RANDOMS_CORRECTION_METHOD,
        VR::CS,
        Kind::T3,
        Some(Iod::Pet),
    ),
    (
        "AttenuationCorrectionMethod",
        tags::ATTENUATION_CORRECTION_METHOD,
        VR::LO,
        Kind::T3,
        Some(Iod::Pet),
    ),
    (
        "ScatterCorrectionMethod",
        tags::SCATTER_CORRECTION_METHOD,
        VR::LO,
        Kind::T3,
        Some(Iod::Pet),
    ),
    (
        "FrameReferenceTime",
        tags::FRAME_REFERENCE_TIME,
        VR::DS,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "ImageIndex",
        tags::IMAGE_INDEX,
        VR::US,
        Kind::T1,
        Some(Iod::Pet),
    ),
    (
        "AcquisitionDate",
        tags::ACQUISITION_DATE,
        VR::DA,
        Kind::T2,
        Some(Iod::Pet),
    ),
    (
        "AcquisitionTime",
        tags::ACQUISITION_TIME,
        VR::TM,
        Kind::T2,
        Some(Iod::Pet),
    ),
    (
        "ActualFrameDuration",
        tags::ACTUAL_FRAME_DURATION,
        VR::IS,
        Kind::T2,
        Some(Iod::Pet),
    ),
    (
        "DecayFactor",
        tags::DECAY_FACTOR,
        VR::DS,
        Kind::T3,
        Some(Iod::Pet),
    ),
    // CR Series (PS3.3 C.8.1.1) and General Image's PatientOrientation,
    // required in CR, which has no Image Plane module.
    (
        "BodyPartExamined",
        tags::BODY_PART_EXAMINED,
        VR::CS,
        Kind::T2,
        Some(Iod::Cr),
    ),
    (
        "ViewPosition",
        tags::VIEW_POSITION,
        VR::CS,
        Kind::T2,
        Some(Iod::Cr),
    ),
    (
        "PatientOrientation",
        tags::PATIENT_ORIENTATION,
        VR::CS,
        Kind::T2,
        Some(Iod::Cr),
    ),
    // DX Series, DX Image, DX Anatomy Imaged and DX Detector (PS3.3
    // C.8.11.1-C.8.11.4); PresentationLUTShape is checked in `Source::shared`.
    (
        "ImageType",
        tags::IMAGE_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "PresentationIntentType",
        tags::PRESENTATION_INTENT_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "ImageLaterality",
        tags::IMAGE_LATERALITY,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "PixelIntensityRelationship",
        tags::PIXEL_INTENSITY_RELATIONSHIP,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "PixelIntensityRelationshipSign",
        tags::PIXEL_INTENSITY_RELATIONSHIP_SIGN,
        VR::SS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "RescaleType",
        tags::RESCALE_TYPE,
        VR::LO,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "LossyImageCompression",
        tags::LOSSY_IMAGE_COMPRESSION,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "BurnedInAnnotation",
        tags::BURNED_IN_ANNOTATION,
        VR::CS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "ImagerPixelSpacing",
        tags::IMAGER_PIXEL_SPACING,
        VR::DS,
        Kind::T1,
        Some(Iod::Dx),
    ),
    (
        "DetectorType",
        tags::DETECTOR_TYPE,
        VR::CS,
        Kind::T2,
        Some(Iod::Dx),
    ),
    (
        "PresentationLUTShape",
        tags::PRESENTATION_LUT_SHAPE,
        VR::CS,
        Kind::T3,
        Some(Iod::Dx),
    ),
    (
        "BodyPartExamined",
        tags::BODY_PART_EXAMINED,
        VR::CS,
        Kind::T3,
        Some(Iod::Dx),
    ),
    (
        "ViewPosition",
        tags::VIEW_POSITION,
        VR::CS,
        Kind::T3,
        Some(Iod::Dx),
    ),
    (
        "PatientOrientation",
        tags::PATIENT_ORIENTATION,
        VR::CS,
        Kind::T2,
        Some(Iod::Dx),
    ),
    // US Image (C.8.5.6).
    (
        "ImageType",
        tags::IMAGE_TYPE,
        VR::CS,
        Kind::T2,
        Some(Iod::Us),
    ),
    (
        "DoseUnits",
        tags::DOSE_UNITS,
        VR::CS,
        Kind::T1,
        Some(Iod::RtDose),
    ),
    (
        "DoseType",
        tags::DOSE_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::RtDose),
    ),
    (
        "DoseSummationType",
        tags::DOSE_SUMMATION_TYPE,
        VR::CS,
        Kind::T1,
        Some(Iod::RtDose),
    ),
    (
        "DoseGridScaling",
        tags::DOSE_GRID_SCALING,
        VR::DS,
        Kind::T1,
        Some(Iod::RtDose),
    ),
    ("WindowCenter", tags::WINDOW_CENTER, VR::DS, Kind::T3, None),
    (
        "InversionTime",
        tags::INVERSION_TIME,
        VR::DS,
        Kind::T3,
        Some(Iod::Mr),
    ),
];

/// `2.25.` UID derived from a seed (xxh3-128).
fn derived_uid(seed: &str) -> String {
    format!("2.25.{}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()))
}

fn f64s(v: Option<&Value>, n: usize) -> Option<Vec<f64>> {
    let a = v?.as_array()?;
    let out: Option<Vec<f64>> = a.iter().map(Value::as_f64).collect();
    out.filter(|o| o.len() == n)
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

/// The geometry of an entry: `geometry` when recorded, else rebuilt from
/// the `dicom` keys of archives written before it existed.
fn entry_geometry(entry: &Map) -> MedicalResult<Option<Geometry>> {
    if let Some(g) = Geometry::from_entry(entry)? {
        return Ok(Some(g));
    }
    let meta = entry.get("dicom");
    let get = |k: &str| meta.and_then(|m| m.get(k));
    let (Some(o), Some(p), Some(s)) = (
        f64s(get("image_orientation_patient"), 6),
        f64s(get("image_position_patient"), 3),
        f64s(get("pixel_spacing"), 2),
    ) else {
        return Ok(None);
    };
    let orientation: [f64; 6] = o.try_into().expect("6 values");
    let normal = f64s(get("slice_normal"), 3)
        .map(|n| [n[0], n[1], n[2]])
        .unwrap_or_else(|| {
            cross(
                [orientation[0], orientation[1], orientation[2]],
                [orientation[3], orientation[4], orientation[5]],
            )
        });
    let step = get("slice_spacing").and_then(Value::as_f64).unwrap_or(1.0);
    let plane = Plane {
        orientation,
        pixel_spacing: [s[0], s[1]],
    };
    let mut g = Geometry::from_dicom([p[0], p[1], p[2]], &plane, normal.map(|x| x * step));
    g.slice_thickness = get("slice_thickness").and_then(Value::as_f64);
    Ok(Some(g))
}

/// The data set under construction; every text value is admitted against
/// its VR as it is put ([`Conform`]).
struct Dataset {
    obj: InMemDicomObject,
    non_ascii: bool,
    conform: Conform,
}

impl Dataset {
    /// A copy of the data set, to add one file's own attributes to.
    fn fork(&self) -> Dataset {
        Dataset {
            obj: self.obj.clone(),
            non_ascii: self.non_ascii,
            conform: self.conform.fresh(),
        }
    }

    fn text(&mut self, keyword: &str, tag: Tag, vr: VR, value: &str) -> MedicalResult {
        if let Some(v) = super::dicom_vr::binary(vr, value) {
            let v = v.map_err(|e| MedicalError::invalid(format!("{keyword} {value:?}: {e}")))?;
            self.obj.put(DataElement::new(tag, vr, v));
            return Ok(());
        }
        self.conform.admit(keyword, tag, vr, value)?;
        self.non_ascii |= !value.is_ascii();
        let v = if value.is_empty() {
            PrimitiveValue::Empty
        } else {
            value.into()
        };
        self.obj.put(DataElement::new(tag, vr, v));
        Ok(())
    }

    fn us(&mut self, tag: Tag, v: u16) {
        self.obj
            .put(DataElement::new(tag, VR::US, PrimitiveValue::from(v)));
    }
}

/// What every file of the object shares.
struct Source {
    entry: Map,
    iod: Iod,
    geometry: Option<Geometry>,
    series: String,
    study: String,
    frame_of_reference: Option<String>,
    bits: u16,
    signed: bool,
}

impl Source {
    fn dicom(&self, k: &str) -> Option<&Value> {
        self.entry.get("dicom").and_then(|m| m.get(k))
    }

    fn attr(&self, k: &str) -> Option<String> {
        self.dicom("attributes")
            .and_then(|a| a.get(k))
            .and_then(Value::as_text)
            .map(str::to_string)
    }

    /// A per-slice number recorded either once or per slice.
    fn per_slice(&self, k: &str, i: usize) -> Option<f64> {
        match self.dicom(k)? {
            Value::Array(a) => a.get(i)?.as_f64(),
            v => v.as_f64(),
        }
    }

    /// Slice `i`'s window when it differs between slices
    /// (`window_centers`/`window_widths`, text or null per slice).
    fn slice_window(&self, out: &mut Dataset, i: usize) -> MedicalResult {
        for (key, keyword, tag) in [
            ("window_centers", "WindowCenter", tags::WINDOW_CENTER),
            ("window_widths", "WindowWidth", tags::WINDOW_WIDTH),
        ] {
            let Some(per) = self.dicom(key).and_then(Value::as_array) else {
                continue;
            };
            match per.get(i).and_then(Value::as_text) {
                Some(v) => out.text(keyword, tag, VR::DS, v)?,
                None => {
                    out.obj.remove_element(tag);
                }
            }
        }
        Ok(())
    }

    /// Slice `i`'s value of each attribute recorded per slice
    /// (`dicom.per_slice`: text, or null where the slice had none).
    fn slice_values(&self, out: &mut Dataset, i: usize) -> MedicalResult {
        let Some(per) = self.dicom("per_slice").and_then(Value::as_map) else {
            return Ok(());
        };
        for (key, values) in per {
            let Some(keyword) = key.as_text() else {
                continue;
            };
            let Some((_, tag, vr, _, _)) = ATTRIBUTES.iter().find(|a| a.0 == keyword) else {
                continue;
            };
            match values
                .as_array()
                .and_then(|a| a.get(i))
                .and_then(Value::as_text)
            {
                Some(v) => out.text(keyword, *tag, *vr, v)?,
                None => {
                    out.obj.remove_element(*tag);
                }
            }
        }
        Ok(())
    }

    /// Rescale slope and intercept of slice `i`: DICOM's, else a NIfTI
    /// volume's `scl_slope`/`scl_inter` when the slope is set (non-zero).
    fn rescale(&self, i: usize) -> Option<(f64, f64)> {
        if let Some(slope) = self.per_slice("rescale_slope", i) {
            return Some((slope, self.per_slice("rescale_intercept", i).unwrap_or(0.0)));
        }
        let nifti = |k: &str| self.entry.get("nifti")?.get(k)?.as_f64();
        let slope = nifti("scl_slope").filter(|s| *s != 0.0 && s.is_finite())?;
        Some((
            slope,
            nifti("scl_inter").filter(|x| x.is_finite()).unwrap_or(0.0),
        ))
    }

    /// The attributes shared by every file of the object.
    /// PatientIdentityRemoved, DeidentificationMethod and its code sequence
    /// as convert-dicom's de-identification recorded them (`deid.rs`;
    /// archives from before it carry `dicom.patient_identity_removed`).
    fn deidentification(&self, out: &mut Dataset) -> MedicalResult {
        let legacy = matches!(
            self.dicom("patient_identity_removed"),
            Some(Value::Bool(true))
        );
        let removed = self
            .attr("PatientIdentityRemoved")
            .or_else(|| legacy.then(|| "YES".to_string()));
        if let Some(v) = removed {
            out.text(
                "PatientIdentityRemoved",
                tags::PATIENT_IDENTITY_REMOVED,
                VR::CS,
                &v,
            )?;
        }
        if let Some(v) = self.attr("DeidentificationMethod") {
            out.text(
                "DeidentificationMethod",
                tags::DEIDENTIFICATION_METHOD,
                VR::LO,
                &v,
            )?;
        }
        if let Some(seq) = method_codes(self.dicom("deidentification_method_codes")) {
            out.obj.put(seq);
        }
        Ok(())
    }

    fn shared(&self, out: &mut Dataset) -> MedicalResult {
        let iod = self.iod;
        out.text("SOPClassUID", tags::SOP_CLASS_UID, VR::UI, iod.sop_class())?;
        out.text(
            "StudyInstanceUID",
            tags::STUDY_INSTANCE_UID,
            VR::UI,
            &self.study,
        )?;
        out.text(
            "SeriesInstanceUID",
            tags::SERIES_INSTANCE_UID,
            VR::UI,
            &self.series,
        )?;
        let modality = match iod {
            Iod::RtDose => "RTDOSE".to_string(),
            Iod::Ct => "CT".to_string(),
            Iod::Mr => "MR".to_string(),
            Iod::Cr => "CR".to_string(),
            Iod::Pet => "PT".to_string(),
            Iod::Dx | Iod::DxProcessing => "DX".to_string(),
            Iod::Us => "US".to_string(),
            Iod::SecondaryCapture => self
                .attr("Modality")
                .or_else(|| self.geometry.as_ref().and_then(|g| g.modality.clone()))
                .unwrap_or_else(|| "OT".to_string()),
        };
        out.text("Modality", tags::MODALITY, VR::CS, &modality)?;
        let deidentified = self.attr("PatientIdentityRemoved").as_deref() == Some("YES");
        for (keyword, tag, vr, kind, only) in ATTRIBUTES {
            if only.is_some_and(|o| o != iod.family()) {
                continue;
            }
            match (self.attr(keyword), kind) {
                (Some(v), _) => out.text(keyword, tag, vr, &v)?,
                // A de-identified archive left out what the profile's X/D
                // replaces by a dummy where the IOD needs a value.
                (None, Kind::T1) if deidentified && matches!(vr, VR::DA | VR::TM) => {
                    out.text(keyword, tag, vr, super::deid::dummy(vr))?
                }
                (None, Kind::T1) => {
                    return Err(MedicalError::invalid(format!(
                        "the archive has no {keyword}, which a {iod:?} file requires"
                    )))
                }
                (None, Kind::T2) => out.text(keyword, tag, vr, "")?,
                (None, Kind::T3) => {}
            }
        }
        // WindowCenter was admitted with the attributes above.
        if let Some(c) = self.attr("WindowCenter") {
            let w = self.attr("WindowWidth").ok_or_else(|| {
                MedicalError::invalid(format!("WindowCenter {c:?} without WindowWidth"))
            })?;
            out.text("WindowWidth", tags::WINDOW_WIDTH, VR::DS, &w)?;
        }
        self.deidentification(out)?;
        if let Some(seqs) = self.dicom("sequences") {
            super::dicom_seq::write(&mut out.obj, seqs, &mut out.conform)?;
        }
        match iod {
            Iod::SecondaryCapture => {
                out.text("ConversionType", tags::CONVERSION_TYPE, VR::CS, "WSD")?
            }
            Iod::Ct => {
                let t = self
                    .attr("ImageType")
                    .unwrap_or_else(|| "DERIVED\\SECONDARY\\AXIAL".into());
                out.text("ImageType", tags::IMAGE_TYPE, VR::CS, &t)?;
                out.text("AcquisitionNumber", tags::ACQUISITION_NUMBER, VR::IS, "")?;
            }
            Iod::Pet => {
                // PS3.3 C.8.9.4: DecayFactor is Type 1 unless DecayCorrection is NONE.
                let corrected = self.attr("DecayCorrection").is_some_and(|d| d != "NONE");
                if corrected && self.attr("DecayFactor").is_none() {
                    return Err(MedicalError::invalid(
                        "the archive has no DecayFactor, which a decay-corrected Pet file requires",
                    ));
                }
                // Type 2 sequences the archive does not keep: present, empty.
                for tag in [
                    tags::RADIOPHARMACEUTICAL_INFORMATION_SEQUENCE,
                    tags::PATIENT_ORIENTATION_CODE_SEQUENCE,
                    tags::PATIENT_GANTRY_RELATIONSHIP_CODE_SEQUENCE,
                ] {
                    if out.obj.get(tag).is_none() {
                        out.obj.put(DataElement::new(
                            tag,
                            VR::SQ,
                            DataSetSequence::from(Vec::<InMemDicomObject>::new()),
                        ));
                    }
                }
            }
            Iod::Dx => {
                // PS3.3 C.8.11.3: For Presentation needs its Presentation LUT Shape.
                if self.attr("PresentationLUTShape").is_none() {
                    let shape = match self.attr("PhotometricInterpretation").as_deref() {
                        Some("MONOCHROME1") => "INVERSE",
                        _ => "IDENTITY",
                    };
                    out.text(
                        "PresentationLUTShape",
                        tags::PRESENTATION_LUT_SHAPE,
                        VR::CS,
                        shape,
                    )?;
                }
            }
            Iod::Mr | Iod::RtDose | Iod::Cr | Iod::DxProcessing | Iod::Us => {}
        }
        if let Some(f) = &self.frame_of_reference {
            out.text(
                "FrameOfReferenceUID",
                tags::FRAME_OF_REFERENCE_UID,
                VR::UI,
                f,
            )?;
            let p = self.attr("PositionReferenceIndicator").unwrap_or_default();
            out.text(
                "PositionReferenceIndicator",
                tags::POSITION_REFERENCE_INDICATOR,
                VR::LO,
                &p,
            )?;
        }
        match &self.geometry {
            Some(g) => {
                let plane = g.plane()?;
                out.text(
                    "ImageOrientationPatient",
                    tags::IMAGE_ORIENTATION_PATIENT,
                    VR::DS,
                    &ds_multi(&plane.orientation)?,
                )?;
                out.text(
                    "PixelSpacing",
                    tags::PIXEL_SPACING,
                    VR::DS,
                    &ds_multi(&plane.pixel_spacing)?,
                )?;
                if let Some(s) = g.slice_spacing {
                    let t = g.slice_thickness.unwrap_or(s);
                    out.text("SliceThickness", tags::SLICE_THICKNESS, VR::DS, &ds(t)?)?;
                    out.text(
                        "SpacingBetweenSlices",
                        tags::SPACING_BETWEEN_SLICES,
                        VR::DS,
                        &ds(s)?,
                    )?;
                } else {
                    let t = g.slice_thickness.map(ds).transpose()?.unwrap_or_default();
                    out.text("SliceThickness", tags::SLICE_THICKNESS, VR::DS, &t)?;
                }
            }
            None if iod == Iod::RtDose => {
                return Err(MedicalError::invalid(
                    "an RT Dose file needs the volume's geometry, which the archive lacks",
                ))
            }
            None => {
                let p = self.attr("PatientOrientation").unwrap_or_default();
                out.text("PatientOrientation", tags::PATIENT_ORIENTATION, VR::CS, &p)?
            }
        }
        self.pixel_module(out)
    }

    fn pixel_module(&self, out: &mut Dataset) -> MedicalResult {
        let palette = self.dicom("palette");
        let photometric = match (palette, self.attr("PhotometricInterpretation")) {
            (Some(_), _) => "PALETTE COLOR".to_string(),
            (None, Some(p)) if p == "MONOCHROME1" => p,
            _ => "MONOCHROME2".to_string(),
        };
        out.us(tags::SAMPLES_PER_PIXEL, 1);
        out.text(
            "PhotometricInterpretation",
            tags::PHOTOMETRIC_INTERPRETATION,
            VR::CS,
            &photometric,
        )?;
        if let Some(p) = palette {
            super::dicom_palette::write(&mut out.obj, p).map_err(MedicalError::invalid)?;
        }
        let stored = self
            .attr("BitsStored")
            .and_then(|s| s.trim().parse::<u16>().ok())
            .filter(|&s| (1..=self.bits).contains(&s))
            .unwrap_or(self.bits);
        out.us(tags::BITS_ALLOCATED, self.bits);
        out.us(tags::BITS_STORED, stored);
        out.us(tags::HIGH_BIT, stored - 1);
        out.us(tags::PIXEL_REPRESENTATION, u16::from(self.signed));
        Ok(())
    }
}

/// Little-endian pixel bytes of `chunk` (in `order`), padded to even length.
fn pixel_data(chunk: &[u8], order: ByteOrder, width: usize) -> DataElement<InMemDicomObject> {
    let mut le = chunk.to_vec();
    if order == ByteOrder::Big && width > 1 {
        for c in le.chunks_exact_mut(width) {
            c.reverse();
        }
    }
    if le.len() % 2 == 1 {
        le.push(0);
    }
    let vr = if width == 1 { VR::OB } else { VR::OW };
    DataElement::new(tags::PIXEL_DATA, vr, PrimitiveValue::U8(le.into()))
}

fn encode(
    ds: Dataset,
    sop_class: &str,
    sop: &str,
    what: &str,
    found: &mut Conform,
) -> MedicalResult<Vec<u8>> {
    let Dataset {
        mut obj,
        non_ascii,
        conform,
    } = ds;
    found.absorb(conform);
    if non_ascii {
        obj.put(DataElement::new(
            tags::SPECIFIC_CHARACTER_SET,
            VR::CS,
            "ISO_IR 192",
        ));
    }
    let file = obj
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax(EXPLICIT_VR_LE)
                .media_storage_sop_class_uid(sop_class)
                .media_storage_sop_instance_uid(sop),
        )
        .map_err(|e| {
            MedicalError::new(
                MedicalErrorKind::Library,
                format!("{what}: cannot build the file meta group: {e}"),
            )
        })?;
    let mut bytes = Vec::new();
    file.write_all(&mut bytes).map_err(|e| {
        MedicalError::new(
            MedicalErrorKind::Library,
            format!("{what}: cannot encode: {e}"),
        )
    })?;
    Ok(bytes)
}

/// The DICOM files of one object and the recorded values written in them
/// verbatim although their VR's rules reject them ([`Conformance`]).
#[derive(Debug, Default)]
pub struct DicomFiles {
    /// Each file's bytes.
    pub files: Vec<Vec<u8>>,
    /// Values written as the archive held them, each attribute and value
    /// once.
    pub nonconforming: Vec<Nonconforming>,
}

/// What [`object_to_dicom_each`] wrote.
#[derive(Debug, Default)]
pub struct Emitted {
    /// The number of files.
    pub files: usize,
    /// As [`DicomFiles::nonconforming`].
    pub nonconforming: Vec<Nonconforming>,
}

/// One 3-D integer object (`[slices, rows, columns]`, payload in
/// `d.byte_order`) or 4-D one (`[time, slices, rows, columns]`,
/// [`TimeAxis`]) and its base entry as DICOM files: one per slice and time
/// point, time outermost, or a single multi-frame file for RT Dose. A
/// recorded value outside its VR's rules is treated as `mode` says.
pub fn object_to_dicom(
    d: &ObjectDescriptor,
    data: &[u8],
    entry: &Map,
    mode: Conformance,
) -> MedicalResult<DicomFiles> {
    let mut files = Vec::new();
    let emitted = object_to_dicom_each(d, data, entry, mode, &mut |_, file| {
        files.push(file);
        Ok(())
    })?;
    Ok(DicomFiles {
        files,
        nonconforming: emitted.nonconforming,
    })
}

/// [`object_to_dicom`], handing each file to `emit(index, bytes)` as soon
/// as it is built, so memory holds one file beside the object (docs/src/
/// performance/memory.md); an error from `emit` stops there.
pub fn object_to_dicom_each(
    d: &ObjectDescriptor,
    data: &[u8],
    entry: &Map,
    mode: Conformance,
    emit: &mut dyn FnMut(usize, Vec<u8>) -> MedicalResult,
) -> MedicalResult<Emitted> {
    let mut writer = DicomWriter::new(d, entry.clone(), mode)?;
    if data.len() as u64 != writer.len {
        return Err(MedicalError::invalid(format!(
            "payload has {} bytes, shape {:?} needs {}",
            data.len(),
            d.shape,
            writer.len
        )));
    }
    for (i, pixels) in data.chunks_exact(writer.file_bytes()).enumerate() {
        emit(i, writer.file(i, pixels)?)?;
    }
    Ok(writer.finish())
}

/// The DICOM files of one object (as [`object_to_dicom`]), built one at a
/// time from each file's pixels: everything the files share is checked
/// and built by [`DicomWriter::new`], before any pixel is needed, so the
/// object can be decoded piece by piece as its files are written
/// (`dicom_stream`).
pub struct DicomWriter {
    src: Source,
    shared: Dataset,
    /// The shared attributes' findings, then each file's own.
    found: Conform,
    time: TimeAxis,
    /// Slices per time point.
    n: u64,
    rows: u64,
    cols: u64,
    width: usize,
    order: ByteOrder,
    /// The object's bytes.
    len: u64,
    /// The files built so far.
    built: usize,
}

impl DicomWriter {
    /// The writer of `d`'s files, its base entry `entry`; refuses an
    /// object DICOM cannot hold, or whose recorded values `mode` refuses.
    pub fn new(d: &ObjectDescriptor, entry: Map, mode: Conformance) -> MedicalResult<Self> {
        let (time, [n, rows, cols]) = TimeAxis::of(&d.shape, &entry)?;
        if d.shape.contains(&0) {
            return Err(MedicalError::invalid(format!(
                "shape {:?} holds no voxel",
                d.shape
            )));
        }
        let (bits, signed) = match d.dtype {
            Dtype::Uint8 => (8u16, false),
            Dtype::Int8 => (8, true),
            Dtype::Uint16 => (16, false),
            Dtype::Int16 => (16, true),
            Dtype::Uint32 => (32, false),
            Dtype::Int32 => (32, true),
            other => {
                return Err(MedicalError::unsupported(format!(
                    "dtype {} has no native DICOM pixel format",
                    other.name()
                )))
            }
        };
        if rows > u64::from(u16::MAX) || cols > u64::from(u16::MAX) {
            return Err(MedicalError::unsupported(format!(
                "{rows}x{cols} slices exceed DICOM's 65535 rows/columns"
            )));
        }
        let width = d.dtype.width();
        let len = time.times * n * rows * cols * width as u64;
        let attributes = entry.get("dicom").and_then(|m| m.get("attributes"));
        let attr = |k: &str| attributes.and_then(|a| a.get(k)).and_then(Value::as_text);
        let iod = match attr("SOPClassUID") {
            Some(RT_DOSE) if bits >= 16 => Iod::RtDose,
            // Enhanced CT and MR come back as classic single-frame instances.
            Some(CT_IMAGE | ENHANCED_CT) if bits == 16 => Iod::Ct,
            // MR Image's Type 1 attributes must have been recorded.
            Some(MR_IMAGE | ENHANCED_MR)
                if ["ImageType", "ScanningSequence", "SequenceVariant"]
                    .iter()
                    .all(|k| attr(k).is_some()) =>
            {
                Iod::Mr
            }
            Some(CR_IMAGE) => Iod::Cr,
            Some(PET_IMAGE) if bits >= 16 => Iod::Pet,
            // DX Image: unsigned, at most 16 bits, grey, its Type 1 recorded.
            Some(sop @ (DX_PRESENTATION | DX_PROCESSING))
                if bits <= 16
                    && !signed
                    && attr("PhotometricInterpretation")
                        .is_none_or(|p| p.starts_with("MONOCHROME"))
                    && entry.get("dicom").and_then(|m| m.get("palette")).is_none()
                    && DX_TYPE1.iter().all(|k| attr(k).is_some()) =>
            {
                if sop == DX_PROCESSING {
                    Iod::DxProcessing
                } else {
                    Iod::Dx
                }
            }
            // US Image: one unsigned frame of at most 16 bits, not MONOCHROME1.
            Some(US_IMAGE)
                if n == 1
                    && !time.temporal
                    && bits <= 16
                    && !signed
                    && attr("PhotometricInterpretation") != Some("MONOCHROME1") =>
            {
                Iod::Us
            }
            _ => Iod::SecondaryCapture,
        };
        let geometry = entry_geometry(&entry)?;
        if time.temporal && iod == Iod::RtDose {
            return Err(MedicalError::unsupported(format!(
                "an RT Dose grid is 3-D, not the 4-D shape {:?}",
                d.shape
            )));
        }
        if time.temporal && geometry.is_none() {
            return Err(MedicalError::unsupported(format!(
                "a 4-D object (shape {:?}) is written as DICOM only with its geometry: without \
             ImagePositionPatient a reader cannot tell its time points apart",
                d.shape
            )));
        }
        let series = attr("SeriesInstanceUID")
            .map(str::to_string)
            .unwrap_or_else(|| derived_uid(&format!("{entry:?}")));
        let frame_of_reference = geometry
            .as_ref()
            .and_then(|g| g.frame_of_reference.clone())
            .or_else(|| attr("FrameOfReferenceUID").map(str::to_string))
            .or_else(|| {
                geometry
                    .as_ref()
                    .map(|_| derived_uid(&format!("frame {series}")))
            });
        let study = attr("StudyInstanceUID")
            .map(str::to_string)
            .unwrap_or_else(|| derived_uid(&format!("study {series}")));
        let src = Source {
            entry,
            iod,
            study,
            series,
            frame_of_reference,
            geometry,
            bits,
            signed,
        };
        let mut shared = Dataset {
            obj: InMemDicomObject::new_empty(),
            non_ascii: false,
            conform: Conform::new(mode),
        };
        src.shared(&mut shared)?;
        // What the files are written with: the shared attributes' findings,
        // then each file's own.
        let found = std::mem::replace(&mut shared.conform, Conform::new(mode));
        Ok(DicomWriter {
            src,
            shared,
            found,
            time,
            n,
            rows,
            cols,
            width,
            order: d.byte_order,
            len,
            built: 0,
        })
    }

    /// The bytes of one file's pixels: a slice, or the whole object for
    /// an RT Dose grid.
    pub fn file_bytes(&self) -> usize {
        match self.src.iod {
            Iod::RtDose => self.len as usize,
            _ => (self.rows * self.cols) as usize * self.width,
        }
    }

    /// The object's bytes, [`DicomWriter::file_bytes`] times the number of
    /// files.
    pub fn object_bytes(&self) -> u64 {
        self.len
    }

    /// File `i` (in order from 0), its pixels `pixels`
    /// ([`DicomWriter::file_bytes`] of them, in the object's byte order).
    pub fn file(&mut self, i: usize, pixels: &[u8]) -> MedicalResult<Vec<u8>> {
        if i != self.built || pixels.len() != self.file_bytes() {
            return Err(MedicalError::invalid_argument(format!(
                "file {i} with {} bytes of pixels, expected file {} with {}",
                pixels.len(),
                self.built,
                self.file_bytes()
            )));
        }
        let bytes = match self.src.iod {
            Iod::RtDose => self.dose(pixels)?,
            _ => self.slice(i, pixels)?,
        };
        self.built += 1;
        Ok(bytes)
    }

    /// What was written: the files built and the values written verbatim.
    pub fn finish(self) -> Emitted {
        Emitted {
            files: self.built,
            nonconforming: self.found.into_found(),
        }
    }

    fn instance(&self, i: usize) -> i64 {
        self.src
            .dicom("instance_numbers")
            .and_then(Value::as_array)
            .and_then(|a| a.get(i))
            .and_then(Value::as_i64)
            .unwrap_or(i as i64 + 1)
    }

    /// ImagePositionPatient of slice `k` of a time point: a multi-frame
    /// source's own frame positions, exact where the affine only fits the
    /// first two, else the geometry's.
    fn position(&self, out: &mut Dataset, k: u64) -> MedicalResult {
        let Some(g) = &self.src.geometry else {
            return Ok(());
        };
        let recorded = self
            .src
            .dicom("frame_positions")
            .and_then(Value::as_array)
            .filter(|p| !self.time.temporal && p.len() as u64 == self.n)
            .and_then(|p| f64s(p.get(k as usize), 3));
        let p = ds_multi(&recorded.unwrap_or_else(|| g.slice_position(k).to_vec()))?;
        out.text(
            "ImagePositionPatient",
            tags::IMAGE_POSITION_PATIENT,
            VR::DS,
            &p,
        )
    }

    /// The one multi-frame RT Dose file.
    fn dose(&mut self, pixels: &[u8]) -> MedicalResult<Vec<u8>> {
        let (src, n) = (&self.src, self.n);
        let mut out = self.shared.fork();
        let sop = derived_uid(&format!("{}/dose", src.series));
        out.text("SOPInstanceUID", tags::SOP_INSTANCE_UID, VR::UI, &sop)?;
        out.text(
            "InstanceNumber",
            tags::INSTANCE_NUMBER,
            VR::IS,
            &self.instance(0).to_string(),
        )?;
        self.position(&mut out, 0)?;
        out.text(
            "NumberOfFrames",
            tags::NUMBER_OF_FRAMES,
            VR::IS,
            &n.to_string(),
        )?;
        out.obj.put(DataElement::new(
            tags::FRAME_INCREMENT_POINTER,
            VR::AT,
            PrimitiveValue::Tags(vec![tags::GRID_FRAME_OFFSET_VECTOR].into()),
        ));
        let offsets = match src.attr("GridFrameOffsetVector") {
            Some(v) if v.split('\\').count() as u64 == n => v,
            _ => {
                let g = src.geometry.as_ref().expect("checked in shared");
                let step = g.slice_step();
                let o = g.plane()?.orientation;
                let normal = cross([o[0], o[1], o[2]], [o[3], o[4], o[5]]);
                let along = step[0] * normal[0] + step[1] * normal[1] + step[2] * normal[2];
                ds_multi(&(0..n).map(|k| k as f64 * along).collect::<Vec<_>>())?
            }
        };
        out.text(
            "GridFrameOffsetVector",
            tags::GRID_FRAME_OFFSET_VECTOR,
            VR::DS,
            &offsets,
        )?;
        out.us(tags::ROWS, self.rows as u16);
        out.us(tags::COLUMNS, self.cols as u16);
        out.obj.put(pixel_data(pixels, self.order, self.width));
        encode(out, RT_DOSE, &sop, "RT Dose", &mut self.found)
    }

    /// The single-frame file of slice `i` (time outermost).
    fn slice(&mut self, i: usize, pixels: &[u8]) -> MedicalResult<Vec<u8>> {
        let (src, iod) = (&self.src, self.src.iod);
        let what = format!("slice {i}");
        let mut out = self.shared.fork();
        let sop = derived_uid(&format!("{}/{i}", src.series));
        out.text("SOPInstanceUID", tags::SOP_INSTANCE_UID, VR::UI, &sop)
            .map_err(|e| e.context(&what))?;
        out.text(
            "InstanceNumber",
            tags::INSTANCE_NUMBER,
            VR::IS,
            &self.instance(i).to_string(),
        )
        .map_err(|e| e.context(&what))?;
        let (t, k) = (i as u64 / self.n, i as u64 % self.n);
        self.position(&mut out, k).map_err(|e| e.context(&what))?;
        if self.time.temporal {
            for (keyword, tag, vr, v) in self.time.attributes(t)? {
                out.text(keyword, tag, vr, &v)?;
            }
        }
        src.slice_window(&mut out, i)?;
        src.slice_values(&mut out, i)?;
        // Type 1 in CT and PET images.
        let needed = matches!(iod, Iod::Ct | Iod::Pet | Iod::Dx | Iod::DxProcessing);
        let rescale = src.rescale(i).or(needed.then_some((1.0, 0.0)));
        if let Some((slope, intercept)) = rescale {
            out.text("RescaleSlope", tags::RESCALE_SLOPE, VR::DS, &ds(slope)?)?;
            out.text(
                "RescaleIntercept",
                tags::RESCALE_INTERCEPT,
                VR::DS,
                &ds(intercept)?,
            )?;
        }
        out.us(tags::ROWS, self.rows as u16);
        out.us(tags::COLUMNS, self.cols as u16);
        out.obj.put(pixel_data(pixels, self.order, self.width));
        encode(out, iod.sop_class(), &sop, &what, &mut self.found)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A base entry with DICOM attributes `attrs` and an affine.
    pub(crate) fn entry(attrs: &[(&str, &str)]) -> Map {
        let mut a = Map::new();
        for (k, v) in attrs {
            a.insert(k.to_string(), (*v).into());
        }
        let mut dicom = Map::new();
        dicom.insert("attributes".into(), Value::from(a));
        let mut g = Map::new();
        let affine = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 2.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        g.insert(
            "affine_lps".into(),
            Value::Array(
                affine
                    .iter()
                    .map(|r| Value::Array(r.iter().map(|&x| Value::Float(x)).collect()))
                    .collect(),
            ),
        );
        let mut e = Map::new();
        e.insert("dicom".into(), Value::from(dicom));
        e.insert("geometry".into(), Value::from(g));
        e
    }

    #[test]
    fn an_rt_dose_without_its_type_1_attributes_is_refused() {
        let d = ObjectDescriptor::new(Dtype::Uint32, vec![2, 1, 1]);
        let e = entry(&[
            ("SOPClassUID", RT_DOSE),
            ("DoseType", "PHYSICAL"),
            ("DoseSummationType", "PLAN"),
            ("DoseGridScaling", "0.001"),
        ]);
        let err = object_to_dicom(&d, &[0; 8], &e, Conformance::Verbatim)
            .unwrap_err()
            .to_string();
        assert!(err.contains("DoseUnits"), "{err}");
    }

    #[test]
    fn mr_is_written_as_mr_only_with_its_type_1_attributes() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![1, 1, 1]);
        let sop_class = |attrs: &[(&str, &str)]| {
            let file = object_to_dicom(&d, &[0; 2], &entry(attrs), Conformance::Strict)
                .unwrap()
                .files
                .remove(0);
            let obj = dicom_object::from_reader(&file[128..]).unwrap();
            let class = obj.element(tags::SOP_CLASS_UID).unwrap().to_str().unwrap();
            class.trim_end_matches('\0').to_string()
        };
        let mut mr = vec![
            ("SOPClassUID", MR_IMAGE),
            ("ImageType", "ORIGINAL\\PRIMARY"),
            ("ScanningSequence", "SE"),
            ("SequenceVariant", "NONE"),
        ];
        assert_eq!(sop_class(&mr), MR_IMAGE);
        mr.pop();
        assert_eq!(sop_class(&mr), SECONDARY_CAPTURE);
    }

    #[test]
    fn non_ascii_text_is_written_as_utf_8_and_declared() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![1, 1, 1]);
        let e = entry(&[("PatientName", "Müller^Jörg")]);
        let file = object_to_dicom(&d, &[0; 2], &e, Conformance::Strict)
            .unwrap()
            .files
            .remove(0);
        let obj = dicom_object::from_reader(&file[128..]).unwrap();
        let text = |t| obj.element(t).unwrap().to_str().unwrap().trim().to_string();
        assert_eq!(text(tags::SPECIFIC_CHARACTER_SET), "ISO_IR 192");
        assert_eq!(text(tags::PATIENT_NAME), "Müller^Jörg");
    }

    #[test]
    fn a_value_outside_its_vr_is_written_verbatim_and_named_or_refused_when_strict() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![2, 1, 1]);
        let e = entry(&[("StudyDate", "2024-01-02")]);
        let err = object_to_dicom(&d, &[0; 4], &e, Conformance::Strict)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("StudyDate (0008,0020) \"2024-01-02\""),
            "{err}"
        );
        // Verbatim: in every slice as recorded, named once.
        let out = object_to_dicom(&d, &[0; 4], &e, Conformance::Verbatim).unwrap();
        assert_eq!(out.files.len(), 2);
        for file in &out.files {
            let obj = dicom_object::from_reader(&file[128..]).unwrap();
            let date = obj.element(tags::STUDY_DATE).unwrap().to_str().unwrap();
            assert_eq!(date.trim_end(), "2024-01-02");
        }
        assert_eq!(out.nonconforming.len(), 1, "{:?}", out.nonconforming);
        assert_eq!(out.nonconforming[0].tag, tags::STUDY_DATE);
        assert_eq!(out.nonconforming[0].attribute, "StudyDate");
        let e = entry(&[("StudyDate", "20240102")]);
        let out = object_to_dicom(&d, &[0; 4], &e, Conformance::Strict).unwrap();
        assert_eq!(out.files.len(), 2);
        assert!(out.nonconforming.is_empty());
    }
}
