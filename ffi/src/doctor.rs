//! `tgm_doctor_to_json`: what this build of the library holds and whether
//! its codecs round-trip, as JSON in the shape of the reference's
//! `doctor` report (`build`, `features`, `self_test`).

use serde_json::{json, Value as Json};
use tgm::pipeline::PipelineBuilder;
use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{status, Failure, TgmError};

/// A backend library and how it is linked (`ffi` or `pure-rust`).
type Backend = Option<(&'static str, &'static str)>;

/// `(name, kind, backend)`; no backend for a feature not built in.
const FEATURES: [(&str, &str, Backend); 14] = [
    ("szip", "compression", None),
    ("szip-pure", "compression", Some(("tgm-szip", "pure-rust"))),
    ("zstd", "compression", Some(("libzstd", "ffi"))),
    ("zstd-pure", "compression", None),
    ("lz4", "compression", Some(("lz4_flex", "pure-rust"))),
    ("blosc2", "compression", None),
    ("zfp", "compression", None),
    ("sz3", "compression", None),
    ("threads", "runtime", Some(("rayon", "pure-rust"))),
    ("remote", "io", None),
    ("mmap", "io", Some(("memmap2", "pure-rust"))),
    ("async", "runtime", None),
    ("grib", "converter", None),
    ("netcdf", "converter", None),
];

fn feature((name, kind, backend): (&str, &str, Backend)) -> Json {
    match backend {
        Some((b, linkage)) => {
            json!({"name": name, "kind": kind, "state": "on", "backend": b, "linkage": linkage})
        }
        None => json!({"name": name, "kind": kind, "state": "off"}),
    }
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
    let run = || -> tgm::Result<Vec<u8>> {
        let msg = tgm::encode(&meta, &[(&d, &bytes)], &EncodeOptions::default())?;
        Ok(tgm::decode(&msg, &DecodeOptions::default())?
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

fn report() -> Json {
    let cases: [(&str, PipelineBuilder, f64); 5] = [
        ("encode/decode  none/none/none", PipelineBuilder::new(), 0.0),
        (
            "pipeline       shuffle+zstd",
            PipelineBuilder::new().shuffle().zstd(),
            0.0,
        ),
        ("pipeline       lz4", PipelineBuilder::new().lz4(), 0.0),
        (
            "pipeline       simple_packing(24)",
            PipelineBuilder::new().simple_packing(24),
            1e-4,
        ),
        (
            "pipeline       simple_packing(16)+szip",
            PipelineBuilder::new().simple_packing(16).szip(),
            1e-2,
        ),
    ];
    let mut self_test: Vec<Json> = cases
        .iter()
        .map(|(label, p, tol)| match round_trip(p, *tol) {
            None => json!({"label": label, "outcome": "ok"}),
            Some(why) => json!({"label": label, "outcome": "failed", "reason": why}),
        })
        .collect();
    for label in ["convert        grib", "convert        netcdf"] {
        self_test.push(json!({"label": label, "outcome": "skipped", "reason": "converters are not part of the C library"}));
    }
    json!({
        "build": {
            "version": env!("CARGO_PKG_VERSION"),
            "wire_version": crate::message::TGM_WIRE_VERSION,
            "target": format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        },
        "features": FEATURES.iter().copied().map(feature).collect::<Vec<_>>(),
        "self_test": self_test,
    })
}

/// Writes the diagnostics report (UTF-8 JSON, not NUL-terminated) to `out`;
/// free it with `tgm_bytes_free`. Failed self-tests are in the report, not
/// in the return code.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_doctor_to_json(out: *mut TgmBytes) -> TgmError {
    status("tgm_doctor_to_json", || {
        let out = args::out(out, "out")?;
        let text = serde_json::to_vec(&report())
            .map_err(|e| Failure::new(TgmError::Encoding, format!("report serialisation: {e}")))?;
        *out = TgmBytes::from_vec(text);
        Ok(())
    })
}
