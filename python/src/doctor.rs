//! `tgm.doctor()`: what this wheel holds and whether its codecs round-trip,
//! in the shape of the reference's report (`build`, `features`,
//! `self_test`; `python/COMPAT.md`).

use pyo3::prelude::*;
use serde_json::{json, Value as Json};

use tgm::doctor::{feature_kind as kind, Backend};

fn row(name: &str, backend: Option<Backend>) -> Json {
    match backend {
        Some((b, linkage)) => json!({
            "name": name, "kind": kind(name), "state": "on", "backend": b, "linkage": linkage
        }),
        None => json!({"name": name, "kind": kind(name), "state": "off"}),
    }
}

fn report() -> Json {
    let mut features: Vec<Json> = tgm::doctor::features()
        .into_iter()
        .map(|(n, b)| row(n, b))
        .collect();
    for (name, backend) in crate::converters::features() {
        features.push(row(name, backend));
    }
    let self_test: Vec<Json> = tgm::doctor::self_test()
        .into_iter()
        .map(|t| match t.outcome.reason() {
            None => json!({"label": t.label, "outcome": t.outcome.as_str()}),
            Some(why) => json!({"label": t.label, "outcome": t.outcome.as_str(), "reason": why}),
        })
        .collect();
    json!({
        "build": {
            "version": env!("CARGO_PKG_VERSION"),
            "wire_version": tgm::wire::WIRE_VERSION,
            "target": format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        },
        "features": features,
        "self_test": self_test,
    })
}

/// The report as JSON text.
#[pyfunction]
pub fn doctor() -> String {
    report().to_string()
}
