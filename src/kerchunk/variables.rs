//! Objects to zarr arrays: variable names, dimension names, stacking of
//! objects that share a name into one array along the MARS keys that vary
//! between them, and the coordinate arrays of those keys. The rules are the
//! Python xarray backend's (`python/python/tgm/xarray_backend.py`); see
//! `spec/kerchunk.md` §2.

use std::collections::BTreeMap;

use serde_json::{json, Map as JsonMap, Value as Json};

use super::codecs::ZarrChain;
use crate::cbor::Value;
use crate::descriptor::Map;

/// One expressible object.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Message index.
    pub message: usize,
    /// Object index in its message.
    pub object: usize,
    /// Variable name from its metadata.
    pub name: String,
    /// Dimension names.
    pub dims: Vec<String>,
    /// Shape.
    pub shape: Vec<u64>,
    /// MARS keys other than `param`.
    pub mars: BTreeMap<String, Coord>,
    /// Attributes from its metadata ([`attributes`]).
    pub attrs: JsonMap<String, Json>,
    /// Codec chain.
    pub chain: ZarrChain,
    /// Absolute offset and length of its payload in the source.
    pub range: (u64, u64),
}

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

    fn to_json(&self) -> Json {
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

/// The zarr store being built: `refs` keys to values.
pub struct Store<'t> {
    /// The reference map.
    pub refs: JsonMap<String, Json>,
    /// The URL every chunk reference points at.
    pub target: &'t str,
    coords: BTreeMap<String, Vec<Coord>>,
}

impl<'t> Store<'t> {
    /// An empty store whose chunks point at `target`.
    pub fn new(target: &'t str) -> Self {
        Store {
            refs: JsonMap::new(),
            target,
            coords: BTreeMap::new(),
        }
    }

    /// Adds every variable of `entries`: objects sharing a name become one
    /// stacked array when they can, else one array each, named
    /// `<name>_<m>_<o>`.
    pub fn add_all(&mut self, entries: Vec<Entry>) {
        let mut groups: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for e in entries {
            groups.entry(e.name.clone()).or_default().push(e);
        }
        for (name, members) in groups {
            if members.len() == 1 {
                self.add_single(&name, &members[0]);
            } else if !self.add_stacked(&name, &members) {
                for e in &members {
                    self.add_single(&format!("{name}_{}_{}", e.message, e.object), e);
                }
            }
        }
        let coords = std::mem::take(&mut self.coords);
        for (key, values) in coords {
            self.add_coordinate(&key, &values);
        }
    }

    /// One object as its own array, every MARS key an attribute.
    fn add_single(&mut self, name: &str, e: &Entry) {
        let mut attrs = e.attrs.clone();
        for (k, v) in &e.mars {
            attrs.insert(format!("mars.{k}"), v.to_json());
        }
        self.add_array(name, &e.shape, &e.dims, &e.chain, attrs);
        let key = chunk_key(&[], e.shape.len());
        if e.shape.iter().all(|&n| n > 0) {
            self.put_chunk(name, &key, e.range);
        }
    }

    /// Stacks `members` along their varying MARS keys; false (and nothing
    /// added) when they differ in shape, dims or codec chain, do not fill
    /// the hypercube, or disagree with another variable's coordinates.
    fn add_stacked(&mut self, name: &str, members: &[Entry]) -> bool {
        let first = &members[0];
        if members
            .iter()
            .any(|e| e.shape != first.shape || e.dims != first.dims || e.chain != first.chain)
        {
            return false;
        }
        let keys: std::collections::BTreeSet<&String> =
            members.iter().flat_map(|e| e.mars.keys()).collect();
        let mut varying = Vec::new();
        let mut constant: JsonMap<String, Json> = first
            .attrs
            .iter()
            .filter(|(k, v)| members.iter().all(|e| e.attrs.get(*k) == Some(*v)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for k in keys {
            let mut values: Vec<Coord> = Vec::new();
            for e in members {
                let Some(v) = e.mars.get(k) else { return false };
                if !values.contains(v) {
                    values.push(v.clone());
                }
            }
            if values.len() == 1 {
                constant.insert(format!("mars.{k}"), values[0].to_json());
            } else {
                values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                varying.push((k.clone(), values));
            }
        }
        let cells: u64 = varying.iter().map(|(_, v)| v.len() as u64).product();
        if varying.is_empty() || cells != members.len() as u64 {
            return false;
        }
        if varying
            .iter()
            .any(|(k, v)| self.coords.get(k).is_some_and(|have| have != v))
        {
            return false;
        }
        let mut positions = std::collections::BTreeSet::new();
        let mut chunks = Vec::with_capacity(members.len());
        for e in members {
            let pos: Option<Vec<usize>> = varying
                .iter()
                .map(|(k, values)| values.iter().position(|v| Some(v) == e.mars.get(k)))
                .collect();
            let Some(pos) = pos else { return false };
            if !positions.insert(pos.clone()) {
                return false;
            }
            chunks.push((pos, e.range));
        }
        let mut shape: Vec<u64> = varying.iter().map(|(_, v)| v.len() as u64).collect();
        shape.extend(&first.shape);
        let mut dims: Vec<String> = varying.iter().map(|(k, _)| k.clone()).collect();
        dims.extend(first.dims.iter().cloned());
        let mut chunk_shape = vec![1; varying.len()];
        chunk_shape.extend(first.shape.iter().map(|&n| n.max(1)));
        self.add_array_chunked(name, &shape, &chunk_shape, &dims, &first.chain, constant);
        if first.shape.iter().all(|&n| n > 0) {
            for (pos, range) in chunks {
                self.put_chunk(name, &chunk_key(&pos, first.shape.len()), range);
            }
        }
        for (k, values) in varying {
            self.coords.insert(k, values);
        }
        true
    }

    fn add_array(
        &mut self,
        name: &str,
        shape: &[u64],
        dims: &[String],
        chain: &ZarrChain,
        attrs: JsonMap<String, Json>,
    ) {
        let chunks: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
        self.add_array_chunked(name, shape, &chunks, dims, chain, attrs);
    }

    fn add_array_chunked(
        &mut self,
        name: &str,
        shape: &[u64],
        chunks: &[u64],
        dims: &[String],
        chain: &ZarrChain,
        mut attrs: JsonMap<String, Json>,
    ) {
        let zarray = json!({
            "zarr_format": 2,
            "shape": shape,
            "chunks": chunks,
            "dtype": chain.dtype,
            "compressor": chain.compressor,
            "filters": if chain.filters.is_empty() { Json::Null } else { json!(chain.filters) },
            "fill_value": Json::Null,
            "order": "C",
            "dimension_separator": ".",
        });
        attrs.insert("_ARRAY_DIMENSIONS".into(), json!(dims));
        self.refs
            .insert(format!("{name}/.zarray"), Json::String(zarray.to_string()));
        self.refs.insert(
            format!("{name}/.zattrs"),
            Json::String(Json::Object(attrs).to_string()),
        );
    }

    fn put_chunk(&mut self, name: &str, key: &str, (offset, len): (u64, u64)) {
        self.refs
            .insert(format!("{name}/{key}"), json!([self.target, offset, len]));
    }

    /// A 1-d coordinate array of `values`, inlined in the references: int64
    /// when every value is an integer, float64 when every value is a
    /// number, else fixed-width unicode.
    fn add_coordinate(&mut self, key: &str, values: &[Coord]) {
        let (dtype, bytes) = coordinate_bytes(values);
        let chain = ZarrChain {
            dtype,
            filters: Vec::new(),
            compressor: None,
        };
        let dims = [key.to_owned()];
        self.add_array(key, &[values.len() as u64], &dims, &chain, JsonMap::new());
        self.refs.insert(
            format!("{key}/0"),
            Json::String(format!("base64:{}", base64(&bytes))),
        );
    }
}

fn coordinate_bytes(values: &[Coord]) -> (String, Vec<u8>) {
    if values.iter().all(|v| matches!(v, Coord::Int(_))) {
        let b = values
            .iter()
            .flat_map(|v| match v {
                Coord::Int(i) => i.to_le_bytes(),
                _ => [0; 8],
            })
            .collect();
        return ("<i8".into(), b);
    }
    if values
        .iter()
        .all(|v| matches!(v, Coord::Int(_) | Coord::Float(_)))
    {
        let b = values
            .iter()
            .flat_map(|v| match v {
                Coord::Int(i) => (*i as f64).to_le_bytes(),
                Coord::Float(f) => f.to_le_bytes(),
                Coord::Text(_) => [0; 8],
            })
            .collect();
        return ("<f8".into(), b);
    }
    let texts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Coord::Text(t) => t.clone(),
            Coord::Int(i) => i.to_string(),
            Coord::Float(f) => f.to_string(),
        })
        .collect();
    let width = texts
        .iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut b = Vec::with_capacity(width * 4 * texts.len());
    for t in &texts {
        let n = t.chars().count();
        b.extend(t.chars().flat_map(|c| u32::from(c).to_le_bytes()));
        b.extend(std::iter::repeat_n(0u8, (width - n) * 4));
    }
    (format!("<U{width}"), b)
}

/// The zarr v2 chunk key of grid position `pos` followed by `ndim` zeros
/// (`"0"` for a scalar).
fn chunk_key(pos: &[usize], ndim: usize) -> String {
    let parts: Vec<String> = pos
        .iter()
        .map(usize::to_string)
        .chain(std::iter::repeat_n("0".to_string(), ndim))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(".")
    }
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn chunk_keys() {
        assert_eq!(chunk_key(&[], 0), "0");
        assert_eq!(chunk_key(&[], 2), "0.0");
        assert_eq!(chunk_key(&[3, 1], 1), "3.1.0");
    }

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

    #[test]
    fn text_coordinates_are_fixed_width_utf32() {
        let (t, b) = coordinate_bytes(&[Coord::Text("ab".into()), Coord::Text("c".into())]);
        assert_eq!(t, "<U2");
        assert_eq!(b, [97, 0, 0, 0, 98, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0]);
    }
}
