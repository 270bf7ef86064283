//! De-identification of what `convert-dicom` records, by the DICOM PS3.15
//! Annex E Basic Application Level Confidentiality Profile
//! (spec/convert.md "DICOM de-identification"): the table's action for
//! each recorded attribute ([`super::deid_profile`]), UIDs replaced by a
//! keyed hash ([`super::deid_uid`]), the method recorded.

use std::path::Path;

use dicom_core::{Tag, VR};
use tgm::cbor::Value;
use tgm::Map;

use super::deid_profile::{action, Resolved, RetainOptions};
use super::deid_uid::UidKey;
use super::{MedicalError, MedicalResult};

/// What to de-identify with.
pub struct Deidentify {
    /// The retain options chosen.
    pub retain: RetainOptions,
    /// The key of the UID replacement (random per run unless given).
    pub key: UidKey,
    /// Convert images whose BurnedInAnnotation is YES.
    pub allow_burned_in: bool,
}

/// Attribute keywords by what de-identification did to them, each once,
/// in the order met.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deidentified {
    /// Left out (X).
    pub removed: Vec<String>,
    /// Given a zero-length value (Z).
    pub emptied: Vec<String>,
    /// Given a dummy value (D).
    pub dummied: Vec<String>,
    /// UIDs replaced (U).
    pub replaced: Vec<String>,
}

fn note(list: &mut Vec<String>, keyword: &str) {
    if !list.iter().any(|k| k == keyword) {
        list.push(keyword.to_string());
    }
}

/// A dummy value of `vr` (action D): valid for the VR, identifying nothing.
pub fn dummy(vr: VR) -> &'static str {
    match vr {
        VR::DA => "19000101",
        VR::TM => "000000",
        VR::DT => "19000101000000",
        VR::AS => "000D",
        VR::DS | VR::IS => "0",
        _ => "ANONYMIZED",
    }
}

impl Deidentify {
    /// Refuses images that declare text burned into their pixels
    /// (BurnedInAnnotation YES, PS3.15 E.1.1 item 7), unless allowed.
    pub fn check_burned_in(&self, files: &[&Path]) -> MedicalResult {
        if files.is_empty() || self.allow_burned_in {
            return Ok(());
        }
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        Err(MedicalError::refused(format!(
            "BurnedInAnnotation is YES in {}: identifying text in the pixels is not removed \
             by de-identification (--allow-burned-in converts them anyway)",
            names.join(", ")
        )))
    }

    /// The value recorded for attribute `keyword` (`tag`, `vr`) read as
    /// `value`, or `None` when it is left out; `report` notes what was done.
    pub fn apply(
        &self,
        keyword: &str,
        tag: Tag,
        vr: VR,
        value: &str,
        report: &mut Deidentified,
    ) -> Option<String> {
        match action(tag, &self.retain).resolve() {
            Resolved::Keep => Some(value.to_string()),
            Resolved::Remove => {
                note(&mut report.removed, keyword);
                None
            }
            Resolved::Empty => {
                note(&mut report.emptied, keyword);
                Some(String::new())
            }
            Resolved::Dummy if vr == VR::UI => {
                note(&mut report.replaced, keyword);
                Some(self.key.replace(value))
            }
            Resolved::Dummy => {
                note(&mut report.dummied, keyword);
                Some(dummy(vr).to_string())
            }
            Resolved::ReplaceUid => {
                note(&mut report.replaced, keyword);
                Some(self.key.replace(value))
            }
        }
    }

    /// Records PatientIdentityRemoved YES and DeidentificationMethod in
    /// `attributes`, and the CID 7050 codes of the profile and options as
    /// `deidentification_method_codes` (`[{value, scheme, meaning}]`) in
    /// `dicom`, for `to-dicom` to write back.
    pub fn record(&self, attributes: &mut Map, dicom: &mut Map) {
        let codes = self.retain.codes();
        attributes.insert("PatientIdentityRemoved".into(), "YES".into());
        let method: Vec<&str> = codes.iter().map(|c| c.meaning).collect();
        attributes.insert("DeidentificationMethod".into(), method.join("\\").into());
        let items = codes
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("value".into(), c.value.into());
                m.insert("scheme".into(), "DCM".into());
                m.insert("meaning".into(), c.meaning.into());
                Value::from(m)
            })
            .collect();
        dicom.insert("deidentification_method_codes".into(), Value::Array(items));
    }
}
