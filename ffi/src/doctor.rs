//! `tgm_doctor_to_json`: what this build of the library holds and whether
//! its codecs round-trip, as JSON in the shape of the reference's
//! `doctor` report (`build`, `features`, `self_test`).

use serde_json::{json, Value as Json};
use tgm::doctor::{feature_kind, Backend};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{status, Failure, TgmError};

/// `(name, backend)`: the library's features ([`tgm::doctor::features`]),
/// then those of the reference's report that the C library never holds.
fn features() -> Vec<(&'static str, Option<Backend>)> {
    let mut rows = tgm::doctor::features();
    rows.extend([("async", None), ("grib", None), ("netcdf", None)]);
    rows
}

fn feature((name, backend): (&str, Option<Backend>)) -> Json {
    let kind = feature_kind(name);
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
        "features": features().into_iter().map(feature).collect::<Vec<_>>(),
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
