//! Rendering of values, shapes and pipelines for listings.

use tgm::cbor::Value;
use tgm::{GlobalMetadata, ObjectDescriptor};

use crate::meta_args::{map_to_shown_json, to_shown_json};

/// Renders a shape as `[2, 3]`.
pub fn shape_str(shape: &[u64]) -> String {
    let parts: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// `encoding+filter+compression` without `none` stages, or `none`.
pub fn pipeline_str(d: &ObjectDescriptor) -> String {
    let parts: Vec<&str> = d
        .pipeline()
        .names()
        .into_iter()
        .filter(|s| *s != "none")
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("+")
    }
}

/// A value for a table cell: text bare, everything else as JSON.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        other => to_shown_json(other).to_string(),
    }
}

/// Object `o`'s metadata as JSON: its base entry without `_reserved_`.
pub fn object_meta_json(meta: &GlobalMetadata, o: usize) -> serde_json::Value {
    map_to_shown_json(&meta.caller_entry(o))
}

/// A descriptor as JSON.
pub fn descriptor_json(d: &ObjectDescriptor) -> serde_json::Value {
    to_shown_json(&d.to_value())
}
