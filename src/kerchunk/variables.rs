//! Objects to zarr arrays: stacking of objects that share a name into one
//! array along the MARS keys that vary between them, the coordinate arrays
//! of those keys, and the `.zarray`/`.zattrs`/chunk keys of every array.
//! The rules are the Python xarray backend's
//! (`python/python/tgm/xarray_backend.py`); see `spec/kerchunk.md` §2.

use std::collections::BTreeMap;

use serde_json::{json, Map as JsonMap, Value as Json};

use super::codecs::ZarrChain;
use super::inline::{base64, coordinate_bytes};
use super::meta::Coord;

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

    /// One object as its own array, every MARS key a `MARS_<key>`
    /// attribute (`spec/kerchunk.md` §2).
    fn add_single(&mut self, name: &str, e: &Entry) {
        let mut attrs = e.attrs.clone();
        for (k, v) in &e.mars {
            attrs.insert(format!("MARS_{k}"), v.to_json());
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
                constant.insert(format!("MARS_{k}"), values[0].to_json());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys() {
        assert_eq!(chunk_key(&[], 0), "0");
        assert_eq!(chunk_key(&[], 2), "0.0");
        assert_eq!(chunk_key(&[3, 1], 1), "3.1.0");
    }
}
