//! What an object's metadata entry says about its array: variable name,
//! dimension names, attributes and MARS keys, by the Python xarray
//! backend's rules (`python/python/tgm/xarray_backend.py`). See
//! `spec/kerchunk.md` §2.

use std::collections::BTreeMap;

use serde_json::{json, Map as JsonMap, Value as Json};

use crate::cbor::Value;
use crate::descriptor::Map;

/// A MARS value as a coordinate value.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Coord {
    /// A float (sorts first, as Python's class names `float` < `int` < `str`).
    Float(f64),
    /// An integer.
    Int(i64),
    /// Anything else, as text.
    Text(String),
}

impl Coord {
    /// The coordinate value of a metadata value.
    pub fn of(v: &Value) -> Coord {
        match v {
            Value::Float(f) => Coord::Float(*f),
            Value::Text(t) => Coord::Text(t.clone()),
            Value::Bool(b) => Coord::Text(if *b { "True" } else { "False" }.into()),
            _ => match v.as_i64() {
                Some(i) => Coord::Int(i),
                None => Coord::Text(v.to_json_value().to_string()),
            },
        }
    }

    /// The value as JSON.
    pub fn to_json(&self) -> Json {
        match self {
            Coord::Float(f) => json!(f),
            Coord::Int(i) => json!(i),
            Coord::Text(t) => json!(t),
        }
    }
}

/// The variable name of an object: GRIB's `grib.shortName` when known,
/// else `mars.param`, else `name`, else `object_<m>_<o>`; a `/` (a zarr
/// path separator) becomes `_`, and a leading `.` (zarr's metadata keys)
/// becomes `_`.
pub fn variable_name(entry: Option<&Map>, m: usize, o: usize) -> String {
    let short = entry
        .and_then(|e| e.get("grib"))
        .and_then(|v| v.get("shortName"))
        .and_then(Value::as_text)
        .filter(|s| !matches!(*s, "" | "unknown" | "~"));
    let mars_param = entry
        .and_then(|e| e.get("mars"))
        .and_then(|v| v.get("param"));
    let raw = match (short, mars_param, entry.and_then(|e| e.get("name"))) {
        (Some(s), _, _) => s.to_owned(),
        (None, Some(p), _) => scalar_text(p),
        (None, None, Some(n)) => scalar_text(n),
        (None, None, None) => format!("object_{m}_{o}"),
    };
    let mut s = raw.replace('/', "_");
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Text(t) => t.clone(),
        other => match other.to_json_value() {
            Json::String(s) => s,
            j => j.to_string(),
        },
    }
}

/// Dimension names: the entry's `dim_names`, else the message's, else
/// `<name>_dim_<i>`.
pub fn dim_names(entry: Option<&Map>, extra: &Map, ndim: usize, name: &str) -> Vec<String> {
    let listed = entry
        .and_then(|e| e.get("dim_names"))
        .or_else(|| extra.get("dim_names"))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|v| v.as_text().map(str::to_owned)).collect());
    match listed {
        Some(names) if Vec::len(&names) == ndim => names,
        _ => (0..ndim).map(|i| format!("{name}_dim_{i}")).collect(),
    }
}

/// GRIB keys shown as `GRIB_<key>` attributes (cfgrib's naming), as the
/// Python backend shows them.
const GRIB_ATTRS: [&str; 6] = [
    "shortName",
    "paramId",
    "units",
    "typeOfLevel",
    "edition",
    "centre",
];

/// The attributes of an entry: its `cf` map, GRIB `units` and the
/// `GRIB_<key>` identification keys.
pub fn attributes(entry: Option<&Map>) -> JsonMap<String, Json> {
    let mut out = JsonMap::new();
    let section = |k: &str| entry.and_then(|e| e.get(k)).and_then(Value::as_map);
    for (k, v) in section("cf").unwrap_or_default() {
        if let Some(k) = k.as_text() {
            out.insert(k.to_owned(), v.to_json_value());
        }
    }
    let grib = section("grib").unwrap_or_default();
    for (k, v) in grib {
        let Some(k) = k.as_text() else { continue };
        if k == "units" && !out.contains_key("units") {
            out.insert("units".into(), v.to_json_value());
        }
        if GRIB_ATTRS.contains(&k) {
            out.insert(format!("GRIB_{k}"), v.to_json_value());
        }
    }
    out
}

/// The MARS keys of an entry other than `param`.
pub fn mars_keys(entry: Option<&Map>) -> BTreeMap<String, Coord> {
    entry
        .and_then(|e| e.get("mars"))
        .and_then(Value::as_map)
        .map(|kv| {
            kv.iter()
                .filter_map(|(k, v)| Some((k.as_text()?.to_owned(), Coord::of(v))))
                .filter(|(k, _)| k != "param")
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_zarr_paths() {
        let mut e = Map::new();
        e.insert("name".into(), Value::Text("a/b".into()));
        assert_eq!(variable_name(Some(&e), 0, 0), "a_b");
        e.insert("name".into(), Value::Text(".zarray".into()));
        assert_eq!(variable_name(Some(&e), 0, 0), "_.zarray");
        e.insert(
            "mars".into(),
            Value::text_map([("param", Value::Text("130".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "130");
        e.insert(
            "grib".into(),
            Value::text_map([("shortName", Value::Text("t".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "t");
        e.insert(
            "grib".into(),
            Value::text_map([("shortName", Value::Text("unknown".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "130");
        assert_eq!(variable_name(None, 2, 5), "object_2_5");
    }
}
