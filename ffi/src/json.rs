//! The JSON arguments of the C API: the encode metadata (`descriptors`,
//! `base`, free-form keys), descriptors, streaming metadata and preceders,
//! read into the library's types.

use serde_json::{Map as JsonMap, Value as Json};
use tgm::cbor::Value;
use tgm::{GlobalMetadata, Limits, Map, ObjectDescriptor};

use crate::error::{Failure, Outcome, TgmError};

fn parse_object(text: &str, what: &str) -> Outcome<JsonMap<String, Json>> {
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(other) => Err(metadata_error(format!(
            "{what} is a JSON {}, not an object",
            json_kind(&other)
        ))),
        Err(e) => Err(metadata_error(format!("{what} is not valid JSON: {e}"))),
    }
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn metadata_error(text: String) -> Failure {
    Failure::new(TgmError::Metadata, text)
}

/// A JSON value as CBOR by the library's rule (`Value::from_json_value`):
/// integers become CBOR integers, other numbers floats. The C API counts
/// the root value as one of the `max_cbor_depth` levels, so at most one
/// fewer arrays and objects nest below it.
fn to_cbor(v: &Json) -> Outcome<Value> {
    let levels = Limits::default().max_cbor_depth.saturating_sub(1);
    Ok(Value::from_json_value(v, levels)?)
}

/// Reads a descriptor JSON object (the keys of `spec/format.md` §6:
/// `type`, `ndim`, `shape`, `strides`, `dtype`, `encoding`, `filter`,
/// `compression`, optional `byte_order` and codec parameters). A `hash`
/// key is ignored: digests are always computed by the library.
pub(crate) fn descriptor(v: &Json, what: &str) -> Outcome<ObjectDescriptor> {
    let mut v = v.clone();
    if let Json::Object(m) = &mut v {
        m.remove("hash");
    }
    ObjectDescriptor::from_value(&to_cbor(&v)?, &Limits::default())
        .map_err(|e| Failure::from(e).context(what))
}

/// Reads a descriptor from JSON text.
pub(crate) fn descriptor_text(text: &str) -> Outcome<ObjectDescriptor> {
    descriptor(
        &Json::Object(parse_object(text, "descriptor_json")?),
        "descriptor_json",
    )
}

/// Message metadata from the top-level JSON object, `descriptors` already
/// removed, read by the library's caller rule (`GlobalMetadata::from_caller`,
/// `spec/format.md` §7.2): `base`, `_extra_` or its alias `extra`, loose
/// keys joining `_extra_`; conflicts and `_reserved_` are errors.
fn global_metadata(top: JsonMap<String, Json>) -> Outcome<GlobalMetadata> {
    Ok(GlobalMetadata::from_caller(&to_cbor(&Json::Object(top))?)?)
}

/// The metadata argument of `tgm_encode` and friends: message metadata
/// and one descriptor per object.
pub(crate) fn encode_metadata(text: &str) -> Outcome<(GlobalMetadata, Vec<ObjectDescriptor>)> {
    let mut top = parse_object(text, "metadata_json")?;
    let descriptors = match top.remove("descriptors") {
        Some(Json::Array(d)) => d,
        Some(other) => {
            return Err(metadata_error(format!(
                "\"descriptors\" is a JSON {}, not an array",
                json_kind(&other)
            )))
        }
        None => return Err(metadata_error("metadata_json lacks \"descriptors\"".into())),
    };
    let descriptors = descriptors
        .iter()
        .enumerate()
        .map(|(i, d)| descriptor(d, &format!("descriptors[{i}]")))
        .collect::<Outcome<Vec<_>>>()?;
    Ok((global_metadata(top)?, descriptors))
}

/// The metadata argument of the streaming encoder: like
/// [`encode_metadata`] without `descriptors`, which are refused (objects
/// arrive one at a time).
pub(crate) fn streaming_metadata(text: &str) -> Outcome<GlobalMetadata> {
    let top = parse_object(text, "metadata_json")?;
    if top.contains_key("descriptors") {
        return Err(Failure::invalid(
            "metadata_json of a streaming encoder cannot hold \"descriptors\"; write each object with tgm_streaming_encoder_write",
        ));
    }
    global_metadata(top)
}

/// A preceder's per-object metadata entry.
pub(crate) fn preceder(text: &str) -> Outcome<Map> {
    let top = parse_object(text, "metadata_json")?;
    if top.contains_key("_reserved_") {
        return Err(metadata_error(
            "a preceder cannot hold \"_reserved_\", which the library writes".into(),
        ));
    }
    top.iter()
        .map(|(k, v)| Ok((k.clone(), to_cbor(v)?)))
        .collect()
}
