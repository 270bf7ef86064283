//! What `to-dicom` does with a value the archive holds that its VR's
//! rules reject (spec/convert.md "DICOM written back", "Values written
//! verbatim"): an archive gives back what went in, so by default such a
//! value is written as the source held it and reported; strict output
//! refuses it, naming the attribute, before any file is kept.
//!
//! The VR rules themselves are [`super::dicom_vr::check`]; this module
//! only decides between writing, reporting and refusing.

use std::fmt;

use dicom_core::{Tag, VR};

use super::dicom_vr::check;
use super::{MedicalError, MedicalResult};

/// How a recorded value outside its VR's rules is treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Conformance {
    /// Written as recorded, and reported as a [`Nonconforming`].
    #[default]
    Verbatim,
    /// Refused, naming the attribute: every value written conforms.
    Strict,
}

/// A value written as the source held it although its VR's rules
/// (PS3.5 6.2) reject it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nonconforming {
    /// The element's tag.
    pub tag: Tag,
    /// Its keyword, with the path of sequence items above it
    /// (`ReferencedRTPlanSequence[0].ReferencedSOPInstanceUID`).
    pub attribute: String,
    /// The value as written.
    pub value: String,
    /// The rule it breaks.
    pub reason: String,
}

impl fmt::Display for Nonconforming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:04X},{:04X}) {:?}: {}",
            self.attribute, self.tag.0, self.tag.1, self.value, self.reason
        )
    }
}

/// Applies a [`Conformance`] to the values put into the files of one
/// object, gathering what was written verbatim (each attribute and value
/// once).
#[derive(Debug, Default)]
pub struct Conform {
    mode: Conformance,
    found: Vec<Nonconforming>,
}

impl Conform {
    /// A checker applying `mode`.
    pub fn new(mode: Conformance) -> Self {
        Conform {
            mode,
            found: Vec::new(),
        }
    }

    /// Whether `value` may be written as `attribute` (`tag`, `vr`): `Ok`
    /// when it conforms, or when it does not and the mode is
    /// [`Conformance::Verbatim`] (then it is recorded); an error naming the
    /// attribute, the tag and the rule under [`Conformance::Strict`].
    pub fn admit(&mut self, attribute: &str, tag: Tag, vr: VR, value: &str) -> MedicalResult {
        let Err(reason) = check(vr, value) else {
            return Ok(());
        };
        let found = Nonconforming {
            tag,
            attribute: attribute.to_string(),
            value: value.to_string(),
            reason,
        };
        match self.mode {
            Conformance::Strict => Err(MedicalError::refused(format!(
                "{found} (refused by strict output)"
            ))),
            Conformance::Verbatim => {
                if !self.found.contains(&found) {
                    self.found.push(found);
                }
                Ok(())
            }
        }
    }

    /// A checker of the same mode with nothing found yet.
    pub fn fresh(&self) -> Self {
        Conform::new(self.mode)
    }

    /// Adds what `other` found to what this one found.
    pub fn absorb(&mut self, other: Conform) {
        for f in other.found {
            if !self.found.contains(&f) {
                self.found.push(f);
            }
        }
    }

    /// The values written verbatim, in the order first met.
    pub fn into_found(self) -> Vec<Nonconforming> {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medical::MedicalErrorKind;
    use dicom_dictionary_std::tags;

    #[test]
    fn a_nonconforming_value_is_recorded_once_or_refused_when_strict() {
        let uid = "1.2.123.456.78.9.0123.4567";
        let mut c = Conform::new(Conformance::Verbatim);
        for _ in 0..2 {
            c.admit("SeriesInstanceUID", tags::SERIES_INSTANCE_UID, VR::UI, uid)
                .unwrap();
        }
        c.admit("StudyDate", tags::STUDY_DATE, VR::DA, "20240102")
            .unwrap();
        let found = c.into_found();
        assert_eq!(found.len(), 1, "{found:?}");
        let shown = found[0].to_string();
        assert!(
            shown.starts_with(&format!("SeriesInstanceUID (0020,000E) \"{uid}\": ")),
            "{shown}"
        );

        let mut c = Conform::new(Conformance::Strict);
        let err = c
            .admit("StudyDate", tags::STUDY_DATE, VR::DA, "2024-01-02")
            .unwrap_err();
        assert_eq!(err.kind(), MedicalErrorKind::Refused, "{err}");
        assert!(
            err.to_string()
                .starts_with("StudyDate (0008,0020) \"2024-01-02\": "),
            "{err}"
        );
        assert!(c
            .admit("StudyDate", tags::STUDY_DATE, VR::DA, "20240102")
            .is_ok());
        assert!(c.into_found().is_empty());
    }
}
