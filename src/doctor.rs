//! The self-test of the `doctor` reports (the C library's
//! `tgm_doctor_to_json`, Python's `tgm.doctor()`): each codec built in
//! encodes a small object and decodes it back within its tolerance. The
//! cases are the samples of the registered codecs
//! (`src/pipeline/codec/registry.rs`, `spec/pipeline.md` §9).

use crate::pipeline::codec::entry::Sample;
use crate::pipeline::codec::registry::{self, REGISTRY};
use crate::pipeline::{PipelineBuilder, StageKind};
use crate::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// How one self-test case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The values came back within the tolerance.
    Ok,
    /// They did not, or encoding or decoding failed: why.
    Failed(String),
    /// The codec is not built in: why.
    Skipped(String),
}

impl Outcome {
    /// `"ok"`, `"failed"` or `"skipped"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed(_) => "failed",
            Outcome::Skipped(_) => "skipped",
        }
    }

    /// Why it failed or was skipped.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed(why) | Outcome::Skipped(why) => Some(why),
        }
    }
}

/// One self-test case: its label (`"pipeline       lz4"`, …) and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfTest {
    /// What was round-tripped.
    pub label: &'static str,
    /// How it ended.
    pub outcome: Outcome,
}

/// A backend library and how it is linked (`"ffi"` or `"pure-rust"`).
pub type Backend = (&'static str, &'static str);

/// The codec and runtime features of this build of the library, as
/// `(name, backend)`; `None` for one not built in.
pub fn features() -> Vec<(&'static str, Option<Backend>)> {
    let on = |built: bool, b: Backend| built.then_some(b);
    vec![
        ("szip", None),
        (
            "szip-pure",
            on(cfg!(feature = "szip"), ("tgm-szip", "pure-rust")),
        ),
        ("zstd", on(cfg!(feature = "zstd"), ("libzstd", "ffi"))),
        ("zstd-pure", None),
        ("lz4", on(cfg!(feature = "lz4"), ("lz4_flex", "pure-rust"))),
        ("blosc2", on(cfg!(feature = "blosc2"), ("libblosc2", "ffi"))),
        ("zfp", on(cfg!(feature = "zfp"), ("libzfp", "ffi"))),
        ("sz3", on(cfg!(feature = "sz3"), ("SZ3", "ffi"))),
        ("threads", Some(("rayon", "pure-rust"))),
        (
            "remote",
            on(cfg!(feature = "remote"), ("object_store", "pure-rust")),
        ),
        ("mmap", Some(("memmap2", "pure-rust"))),
    ]
}

/// The kind the reference's report gives a feature row: `threading`,
/// `io`, `converter` or `compression` (its `FeatureKind`), so every
/// door's report (Python's `tgm.doctor()`, C's `tgm_doctor_to_json`)
/// names it alike.
pub fn feature_kind(name: &str) -> &'static str {
    match name {
        "threads" => "threading",
        "remote" | "mmap" | "async" => "io",
        "grib" | "netcdf" | "nifti" | "dicom" => "converter",
        _ => "compression",
    }
}

/// Encodes a 64 × 64 object of `dtype` through `pipeline` and decodes it:
/// `None` when it comes back within `tolerance`, else why not. Float64
/// objects hold a smooth field; bitmask objects runs of set and clear bits.
fn round_trip(pipeline: &PipelineBuilder, dtype: Dtype, tolerance: f64) -> Option<String> {
    let values: Vec<f64> = (0..4096)
        .map(|i| 250.0 + (i as f64 / 50.0).sin() * 30.0)
        .collect();
    let bytes: Vec<u8> = match dtype {
        Dtype::Bitmask => (0..512u32)
            .map(|i| if (i / 37) % 2 == 0 { 0xff } else { 0x0f })
            .collect(),
        _ => values.iter().flat_map(|v| v.to_ne_bytes()).collect(),
    };
    let d = ObjectDescriptor::new(dtype, vec![64, 64]).with_pipeline(pipeline);
    let meta = GlobalMetadata::with_base(vec![Default::default()]);
    let run = || -> crate::Result<Vec<u8>> {
        let msg = crate::encode(&meta, &[(&d, &bytes)], &EncodeOptions::default())?;
        Ok(crate::decode(&msg, &DecodeOptions::default())?
            .objects
            .remove(0)
            .data)
    };
    match run() {
        Err(e) => Some(e.to_string()),
        Ok(back) if back.len() != bytes.len() => {
            Some(format!("{} bytes back, not {}", back.len(), bytes.len()))
        }
        Ok(back) if dtype == Dtype::Bitmask => {
            (back != bytes).then(|| "the bits came back changed".to_string())
        }
        Ok(back) => {
            let worst = back
                .chunks_exact(8)
                .zip(&values)
                .map(|(c, v)| (f64::from_ne_bytes(c.try_into().unwrap_or_default()) - v).abs())
                .fold(0.0, f64::max);
            (worst > tolerance).then(|| format!("error {worst} exceeds {tolerance}"))
        }
    }
}

/// The stages a sample's pipeline runs, as `(kind, name)`.
fn stages_of(sample: &Sample) -> [(StageKind, String); 3] {
    let [e, f, c] = (sample.pipeline)()
        .build(sample.dtype)
        .names()
        .map(str::to_string);
    [
        (StageKind::Encoding, e),
        (StageKind::Filter, f),
        (StageKind::Compression, c),
    ]
}

/// Round-trips the sample of each registered codec that has one
/// (`src/pipeline/codec/registry.rs`), in registry order: the core pipeline
/// first, then each codec of this build; one whose stages are not all
/// built in is skipped.
pub fn self_test() -> Vec<SelfTest> {
    REGISTRY
        .iter()
        .filter_map(|e| e.sample)
        .map(|s| {
            let built = stages_of(&s)
                .iter()
                .all(|(kind, name)| registry::lookup(*kind, name).is_ok_and(|e| e.build.is_some()));
            SelfTest {
                label: s.label,
                outcome: match built {
                    false => Outcome::Skipped("not built in".into()),
                    true => match round_trip(&(s.pipeline)(), s.dtype, s.tolerance) {
                        None => Outcome::Ok,
                        Some(why) => Outcome::Failed(why),
                    },
                },
            }
        })
        .collect()
}

/// The test executable as its own SZ3 helper, so the self-test's sz3 row
/// decodes as the `tgm` binary's does (spec/pipeline.md §4.7).
#[cfg(all(test, feature = "sz3", target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
#[path = "../tests/common/sz3_self_helper.rs"]
mod sz3_self_helper;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_built_in_round_trips() {
        #[cfg(all(feature = "sz3", target_os = "linux", target_env = "gnu"))]
        crate::sz3_child::set_host_helper(super::sz3_self_helper::helper());
        let rows = self_test();
        assert_eq!(rows[0].label, "encode/decode  none/none/none");
        for r in &rows {
            assert!(
                !matches!(r.outcome, Outcome::Failed(_)),
                "{}: {:?}",
                r.label,
                r.outcome
            );
        }
    }

    #[test]
    fn the_optional_codecs_are_listed_as_built_or_not() {
        let rows = features();
        for (name, built) in [
            ("blosc2", cfg!(feature = "blosc2")),
            ("zfp", cfg!(feature = "zfp")),
            ("sz3", cfg!(feature = "sz3")),
        ] {
            let row = rows.iter().find(|(n, _)| *n == name).unwrap();
            assert_eq!(row.1.is_some(), built, "{name}");
        }
    }

    #[test]
    fn a_lossy_codec_beyond_its_tolerance_fails() {
        let why = round_trip(
            &PipelineBuilder::new().simple_packing(8),
            Dtype::Float64,
            1e-6,
        );
        assert!(why.is_some_and(|w| w.contains("exceeds")));
    }

    #[test]
    fn bitmask_objects_round_trip_and_a_codec_their_kind_refuses_fails() {
        assert!(round_trip(&PipelineBuilder::new().rle(), Dtype::Bitmask, 0.0).is_none());
        assert!(round_trip(&PipelineBuilder::new().rle(), Dtype::Float64, 0.0).is_some());
    }

    #[test]
    fn the_samples_run_every_registered_codec() {
        let covered: Vec<(StageKind, String)> = REGISTRY
            .iter()
            .filter_map(|e| e.sample)
            .flat_map(|s| stages_of(&s))
            .collect();
        for e in REGISTRY {
            assert!(
                covered.iter().any(|(k, n)| *k == e.kind && n == e.name),
                "no doctor sample runs the {} {}",
                e.kind.key(),
                e.name
            );
        }
    }

    #[test]
    fn there_is_one_row_per_sample_in_registry_order() {
        let labels: Vec<&str> = REGISTRY
            .iter()
            .filter_map(|e| e.sample.map(|s| s.label))
            .collect();
        let rows: Vec<&str> = self_test().iter().map(|r| r.label).collect();
        assert_eq!(rows, labels);
        for (i, l) in labels.iter().enumerate() {
            assert!(!labels[i + 1..].contains(l), "{l} twice");
        }
    }
}
