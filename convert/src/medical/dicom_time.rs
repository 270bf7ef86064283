//! The time axis of a volume written back as DICOM (spec/convert.md
//! "Medical geometry"): a 4-D object `[time, slice, row, column]` (an fMRI
//! run from NIfTI, or a temporal DICOM series read by `convert-dicom`)
//! becomes one series of `time × slice` single-frame instances, time
//! outermost. Each instance carries TemporalPositionIdentifier and
//! NumberOfTemporalPositions (PS3.3 C.7.6.1, C.8.3.1) and an
//! AcquisitionNumber, so `convert-dicom` groups the time points again.

use dicom_core::{Tag, VR};
use dicom_dictionary_std::tags;
use tgm::cbor::Value;
use tgm::Map;

use super::dicom_vr::ds;
use super::{MedicalError, MedicalResult};

/// The time points of the object being written.
pub struct TimeAxis {
    /// Number of time points (1 for a 3-D object).
    pub times: u64,
    /// Whether the object is 4-D (has a time axis, even of one point).
    pub temporal: bool,
    /// The temporal attribute `convert-dicom` grouped the source by, and
    /// its value per time point, when the archive recorded them.
    recorded: Option<(String, Vec<f64>)>,
}

/// One attribute of an instance: keyword, tag, VR, value.
pub type Attribute = (&'static str, Tag, VR, String);

fn recorded(entry: &Map, times: u64) -> Option<(String, Vec<f64>)> {
    let dicom = entry.get("dicom")?;
    let name = dicom.get("temporal_attribute")?.as_text()?.to_string();
    let values: Vec<f64> = dicom
        .get("temporal_positions")?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect::<Option<_>>()?;
    (values.len() as u64 == times && values.iter().all(|v| v.is_finite())).then_some((name, values))
}

/// `v` as an IS value when it is an integer IS can hold.
fn integer(v: f64) -> Option<String> {
    (v.fract() == 0.0 && v.abs() < 2_147_483_648.0).then(|| format!("{}", v as i64))
}

impl TimeAxis {
    /// The time axis of `shape` and the shape of one time point
    /// `[slices, rows, columns]`; other ranks are refused by name.
    pub fn of(shape: &[u64], entry: &Map) -> MedicalResult<(TimeAxis, [u64; 3])> {
        let dims = entry
            .get("dim_names")
            .and_then(Value::as_array)
            .map(|n| {
                let names: Vec<&str> = n.iter().filter_map(Value::as_text).collect();
                format!(" ({})", names.join(", "))
            })
            .unwrap_or_default();
        match *shape {
            [n, r, c] => Ok((
                TimeAxis {
                    times: 1,
                    temporal: false,
                    recorded: None,
                },
                [n, r, c],
            )),
            [t, n, r, c] => Ok((
                TimeAxis {
                    times: t,
                    temporal: true,
                    recorded: recorded(entry, t),
                },
                [n, r, c],
            )),
            _ => Err(MedicalError::invalid(format!(
                "a DICOM series holds a 3-D [slice, row, column] or 4-D [time, slice, row, \
                 column] object, not the {}-D shape {shape:?}{dims}",
                shape.len()
            ))),
        }
    }

    fn value(&self, name: &str, t: u64) -> Option<f64> {
        let (n, v) = self.recorded.as_ref()?;
        (n == name).then(|| v[t as usize])
    }

    /// The temporal attributes of the instances of time point `t`.
    pub fn attributes(&self, t: u64) -> MedicalResult<Vec<Attribute>> {
        let index = (t + 1).to_string();
        let tpi = self
            .value("TemporalPositionIdentifier", t)
            .and_then(integer)
            .unwrap_or_else(|| index.clone());
        let acquisition = self
            .value("AcquisitionNumber", t)
            .and_then(integer)
            .unwrap_or(index);
        let mut out = vec![
            (
                "TemporalPositionIdentifier",
                tags::TEMPORAL_POSITION_IDENTIFIER,
                VR::IS,
                tpi,
            ),
            (
                "NumberOfTemporalPositions",
                tags::NUMBER_OF_TEMPORAL_POSITIONS,
                VR::IS,
                self.times.to_string(),
            ),
            (
                "AcquisitionNumber",
                tags::ACQUISITION_NUMBER,
                VR::IS,
                acquisition,
            ),
        ];
        if let Some(v) = self.value("TriggerTime", t) {
            out.push(("TriggerTime", tags::TRIGGER_TIME, VR::DS, ds(v)?));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_other_than_3_and_4_are_refused_naming_the_shape() {
        let mut e = Map::new();
        e.insert(
            "dim_names".into(),
            Value::Array(["e", "t", "k", "j", "i"].map(Value::from).to_vec()),
        );
        let err = TimeAxis::of(&[2, 3, 4, 5, 6], &e)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("5-D shape [2, 3, 4, 5, 6] (e, t, k, j, i)"),
            "{err}"
        );
        assert!(TimeAxis::of(&[4, 5], &Map::new()).is_err());
        let (t, one) = TimeAxis::of(&[3, 4, 5, 6], &Map::new()).unwrap();
        assert_eq!((t.times, one), (3, [4, 5, 6]));
    }

    #[test]
    fn recorded_temporal_values_are_written_back_else_the_index() {
        let (t, _) = TimeAxis::of(&[2, 1, 1, 1], &Map::new()).unwrap();
        let a = t.attributes(1).unwrap();
        let values: Vec<&str> = a.iter().map(|x| x.3.as_str()).collect();
        assert_eq!(values, ["2", "2", "2"]);
        let mut dicom = Map::new();
        dicom.insert("temporal_attribute".into(), "TriggerTime".into());
        dicom.insert(
            "temporal_positions".into(),
            Value::Array(vec![Value::Float(0.0), Value::Float(412.5)]),
        );
        let mut e = Map::new();
        e.insert("dicom".into(), Value::from(dicom));
        let (t, _) = TimeAxis::of(&[2, 1, 1, 1], &e).unwrap();
        let a = t.attributes(1).unwrap();
        assert_eq!(a[3].0, "TriggerTime");
        assert_eq!(a[3].3, "412.5");
        assert_eq!(a[0].3, "2");
    }
}
