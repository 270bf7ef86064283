//! The self-test of the `doctor` reports (the C library's
//! `tgm_doctor_to_json`, Python's `tgm.doctor()`): each codec built in
//! encodes a smooth field and decodes it back within its tolerance.

use crate::pipeline::PipelineBuilder;
use crate::pipeline_spec::{Blosc2, Sz3, Sz3Bound, Zfp, ZfpMode};
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

/// Encodes 4096 smooth float64 values through `pipeline` and decodes them:
/// `None` when they come back within `tolerance`, else why not.
fn round_trip(pipeline: &PipelineBuilder, tolerance: f64) -> Option<String> {
    let values: Vec<f64> = (0..4096)
        .map(|i| 250.0 + (i as f64 / 50.0).sin() * 30.0)
        .collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let d = ObjectDescriptor::new(Dtype::Float64, vec![64, 64]).with_pipeline(pipeline);
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

/// Round-trips the core pipeline and each codec of this build.
pub fn self_test() -> Vec<SelfTest> {
    let szip = cfg!(feature = "szip");
    let cases: [(&str, PipelineBuilder, f64, bool); 8] = [
        (
            "encode/decode  none/none/none",
            PipelineBuilder::new(),
            0.0,
            true,
        ),
        (
            "pipeline       shuffle+zstd",
            PipelineBuilder::new().shuffle().zstd(),
            0.0,
            true,
        ),
        (
            "pipeline       lz4",
            PipelineBuilder::new().lz4(),
            0.0,
            true,
        ),
        (
            "pipeline       simple_packing(24)",
            PipelineBuilder::new().simple_packing(24),
            1e-4,
            true,
        ),
        (
            "pipeline       simple_packing(16)+szip",
            PipelineBuilder::new().simple_packing(16).szip(),
            1e-2,
            szip,
        ),
        (
            "pipeline       blosc2",
            PipelineBuilder::new().blosc2(Blosc2::default()),
            0.0,
            cfg!(feature = "blosc2"),
        ),
        (
            "pipeline       zfp (fixed-rate)",
            PipelineBuilder::new().zfp(Zfp {
                mode: ZfpMode::FixedRate(32.0),
            }),
            1e-3,
            cfg!(feature = "zfp"),
        ),
        (
            "pipeline       sz3 (absolute error)",
            PipelineBuilder::new().sz3(Sz3 {
                bound: Sz3Bound::Abs(1e-3),
            }),
            1e-3,
            cfg!(feature = "sz3"),
        ),
    ];
    cases
        .iter()
        .map(|(label, p, tol, built)| SelfTest {
            label,
            outcome: match (built, round_trip(p, *tol)) {
                (false, _) => Outcome::Skipped("not built in".into()),
                (true, None) => Outcome::Ok,
                (true, Some(why)) => Outcome::Failed(why),
            },
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
        let why = round_trip(&PipelineBuilder::new().simple_packing(8), 1e-6);
        assert!(why.is_some_and(|w| w.contains("exceeds")));
    }
}
