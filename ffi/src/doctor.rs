//! `tgm_doctor_to_json`: what this build of the library holds and whether
//! its codecs round-trip, as JSON in the shape of the reference's
//! `doctor` report (`build`, `features`, `self_test`).

use serde_json::{json, Value as Json};

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

fn report() -> Json {
    let mut self_test: Vec<Json> = tgm::doctor::self_test()
        .into_iter()
        .map(|t| match t.outcome.reason() {
            None => json!({"label": t.label, "outcome": t.outcome.as_str()}),
            Some(why) => json!({"label": t.label, "outcome": t.outcome.as_str(), "reason": why}),
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
