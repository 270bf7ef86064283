//! Objects to zarr arrays: stacking of objects that share a name into one
//! array along the keys that vary between them ([`crate::view`]), the
//! coordinate arrays of those keys, of the grids and of cfgrib's times,
//! and the `.zarray`/`.zattrs`/chunk keys of every array. See
//! `spec/kerchunk.md` §2.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map as JsonMap, Value as Json};

use super::codecs::ZarrChain;
use super::inline::{base64, coordinate_bytes};
use crate::descriptor::Map;
use crate::view::{
    coordinate_attributes, descending, stack_order, valid_times, Coord, GridCoordinate,
    ObjectSummary, TakenGrids, SCALAR_COORDINATE_KEYS,
};

/// One expressible object: its dataset view (with the dimension names
/// the references give it, §2.1), codec chain and payload.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The object in the dataset view.
    pub view: ObjectSummary,
    /// Dataset attributes it gives ([`crate::view::dataset_attributes`]).
    pub dataset_attrs: Map,
    /// Codec chain.
    pub chain: ZarrChain,
    /// Absolute offset and length of its payload in the source.
    pub range: (u64, u64),
}

impl std::ops::Deref for Entry {
    type Target = ObjectSummary;

    fn deref(&self) -> &ObjectSummary {
        &self.view
    }
}

/// An array whose `.zattrs` is written once every variable is known.
struct Pending {
    name: String,
    attrs: JsonMap<String, Json>,
    /// Its keys with one value that may be scalar coordinates.
    scalars: BTreeMap<String, Coord>,
}

/// The zarr store being built: `refs` keys to values.
pub struct Store<'t> {
    /// The reference map.
    pub refs: JsonMap<String, Json>,
    /// The URL every chunk reference points at.
    pub target: &'t str,
    coords: BTreeMap<String, Vec<Coord>>,
    pending: Vec<Pending>,
}

impl<'t> Store<'t> {
    /// An empty store whose chunks point at `target`.
    pub fn new(target: &'t str) -> Self {
        Store {
            refs: JsonMap::new(),
            target,
            coords: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// Adds every variable of `entries`: objects sharing a name become one
    /// stacked array when they can, else one array each, named
    /// `<name>_<m>_<o>`; then the coordinates. Returns the dataset
    /// attributes every object that gives any shares.
    pub fn add_all(&mut self, entries: Vec<Entry>, grids: TakenGrids) -> JsonMap<String, Json> {
        let dataset_attrs = shared_dataset_attributes(&entries);
        let objects = entries.len();
        let mut groups: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for e in entries {
            groups.entry(e.name.clone()).or_default().push(e);
        }
        for (name, members) in groups {
            if !self.add_stacked(&name, &members) {
                for e in &members {
                    let single = std::slice::from_ref(e);
                    self.add_stacked(&format!("{name}_{}_{}", e.message, e.object), single);
                }
            }
        }
        let coords = std::mem::take(&mut self.coords);
        let scalars = self.agreed_scalars(&coords);
        let mut extra = self.time_coordinates(&coords, &scalars, objects);
        extra.extend(scalars.keys().cloned());
        // Coordinates over a grid's points, not dimensions of their own.
        let over_points = grids.coordinates().filter(|c| c.dims != [c.name]);
        extra.extend(over_points.map(|c| c.name.to_owned()));
        self.finish_attrs(&scalars, &extra);
        for (key, values) in &coords {
            self.add_coordinate(
                key,
                std::slice::from_ref(key),
                &[values.len() as u64],
                values,
            );
        }
        for (key, value) in &scalars {
            self.add_coordinate(key, &[], &[], std::slice::from_ref(value));
        }
        for GridCoordinate {
            name: k,
            dims,
            shape,
            values,
            attrs,
        } in grids.into_coordinates()
        {
            let attrs = attrs
                .iter()
                .map(|(a, v)| (a.to_string(), json!(v)))
                .collect();
            let chain = ZarrChain {
                dtype: "<f8".into(),
                filters: Vec::new(),
                compressor: None,
            };
            let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            self.add_array(k, &shape, &dims, &chain, attrs);
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.put_inline(k, &chunk_key(&[], shape.len()), &bytes);
        }
        dataset_attrs
    }

    /// The scalar-coordinate keys (`SCALAR_COORDINATE_KEYS`) that every
    /// array holding them agrees on and that no array stacks along.
    fn agreed_scalars(&self, coords: &BTreeMap<String, Vec<Coord>>) -> BTreeMap<String, Coord> {
        let mut out = BTreeMap::new();
        for key in SCALAR_COORDINATE_KEYS {
            let values: Vec<&Coord> = self
                .pending
                .iter()
                .filter_map(|p| p.scalars.get(key))
                .collect();
            if coords.contains_key(key)
                || values.is_empty()
                || values.iter().any(|v| *v != values[0])
            {
                continue;
            }
            out.insert(key.to_owned(), values[0].clone());
        }
        out
    }

    /// cfgrib's `valid_time` (reference time plus step) over the `time`
    /// and `step` dimensions there are, when there is a reference time and
    /// [`valid_times`] builds it for `objects` objects; the names of the
    /// non-dimension coordinates added.
    fn time_coordinates(
        &mut self,
        coords: &BTreeMap<String, Vec<Coord>>,
        scalars: &BTreeMap<String, Coord>,
        objects: usize,
    ) -> Vec<String> {
        let seconds = |key: &str, want: fn(&Coord) -> Option<i64>| {
            let values = coords
                .get(key)
                .map(|v| (true, v.clone()))
                .or_else(|| scalars.get(key).map(|v| (false, vec![v.clone()])))?;
            let s: Option<Vec<i64>> = values.1.iter().map(want).collect();
            Some((values.0, s?))
        };
        let time = |c: &Coord| match c {
            Coord::Time(t) => Some(*t),
            _ => None,
        };
        let span = |c: &Coord| match c {
            Coord::Span(s) => Some(*s),
            _ => None,
        };
        let Some((time_dim, times)) = seconds("time", time) else {
            return Vec::new();
        };
        let (step_dim, steps) = seconds("step", span).unwrap_or((false, vec![0]));
        let mut dims = Vec::new();
        let mut shape = Vec::new();
        if time_dim {
            dims.push("time".to_owned());
            shape.push(times.len() as u64);
        }
        if step_dim {
            dims.push("step".to_owned());
            shape.push(steps.len() as u64);
        }
        let Some(valid) = valid_times(&times, &steps, objects) else {
            return Vec::new();
        };
        let values: Vec<Coord> = valid.into_iter().map(Coord::Time).collect();
        self.add_coordinate("valid_time", &dims, &shape, &values);
        vec!["valid_time".to_owned()]
    }

    /// Writes every array's `.zattrs`: its attributes, `MARS_<key>` for its
    /// keys with one value that are not coordinates, and `coordinates`
    /// naming the non-dimension coordinates `extra`.
    fn finish_attrs(&mut self, scalars: &BTreeMap<String, Coord>, extra: &[String]) {
        for mut p in std::mem::take(&mut self.pending) {
            for (k, v) in &p.scalars {
                if !scalars.contains_key(k) {
                    p.attrs.insert(format!("MARS_{k}"), v.to_json());
                }
            }
            if !extra.is_empty() {
                p.attrs.insert("coordinates".into(), json!(extra.join(" ")));
            }
            self.refs.insert(
                format!("{}/.zattrs", p.name),
                Json::String(Json::Object(p.attrs).to_string()),
            );
        }
    }

    /// Stacks `members` along their varying keys (one object: an array of
    /// its own); false (and nothing added) when they differ in shape, dims
    /// or codec chain, do not fill the hypercube, or disagree with another
    /// variable's coordinates.
    fn add_stacked(&mut self, name: &str, members: &[Entry]) -> bool {
        let first = &members[0];
        if members
            .iter()
            .any(|e| e.shape != first.shape || e.dims != first.dims || e.chain != first.chain)
        {
            return false;
        }
        let keys: BTreeSet<&String> = members.iter().flat_map(|e| e.keys.keys()).collect();
        let mut varying = Vec::new();
        let attrs: JsonMap<String, Json> = first
            .attrs
            .iter()
            .filter(|(k, v)| members.iter().all(|e| e.attrs.get(*k) == Some(*v)))
            .map(|(k, v)| (k.clone(), v.to_json_value()))
            .collect();
        let mut scalars = BTreeMap::new();
        for k in keys {
            let mut values: Vec<Coord> = Vec::new();
            for e in members {
                let Some(v) = e.keys.get(k) else { return false };
                if !values.contains(v) {
                    values.push(v.clone());
                }
            }
            if values.len() == 1 {
                scalars.insert(k.clone(), values.remove(0));
            } else {
                values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                if descending(k) {
                    values.reverse();
                }
                varying.push((k.clone(), values));
            }
        }
        let names: Vec<&str> = varying.iter().map(|(k, _)| k.as_str()).collect();
        let order = stack_order(&names, None);
        varying.sort_by_key(|(k, _)| order.iter().position(|o| o == k));
        let cells: u64 = varying.iter().map(|(_, v)| v.len() as u64).product();
        if cells != members.len() as u64 {
            return false;
        }
        if varying
            .iter()
            .any(|(k, v)| self.coords.get(k).is_some_and(|have| have != v))
        {
            return false;
        }
        let mut positions = BTreeSet::new();
        let mut chunks = Vec::with_capacity(members.len());
        for e in members {
            let pos: Option<Vec<usize>> = varying
                .iter()
                .map(|(k, values)| values.iter().position(|v| Some(v) == e.keys.get(k)))
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
        self.write_zarray(name, &shape, &chunk_shape, &first.chain);
        let mut attrs = attrs;
        attrs.insert("_ARRAY_DIMENSIONS".into(), json!(dims));
        self.pending.push(Pending {
            name: name.to_owned(),
            attrs,
            scalars,
        });
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
        mut attrs: JsonMap<String, Json>,
    ) {
        let chunks: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
        self.write_zarray(name, shape, &chunks, chain);
        attrs.insert("_ARRAY_DIMENSIONS".into(), json!(dims));
        self.refs.insert(
            format!("{name}/.zattrs"),
            Json::String(Json::Object(attrs).to_string()),
        );
    }

    fn write_zarray(&mut self, name: &str, shape: &[u64], chunks: &[u64], chain: &ZarrChain) {
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
        self.refs
            .insert(format!("{name}/.zarray"), Json::String(zarray.to_string()));
    }

    fn put_chunk(&mut self, name: &str, key: &str, (offset, len): (u64, u64)) {
        self.refs
            .insert(format!("{name}/{key}"), json!([self.target, offset, len]));
    }

    fn put_inline(&mut self, name: &str, key: &str, bytes: &[u8]) {
        self.refs.insert(
            format!("{name}/{key}"),
            Json::String(format!("base64:{}", base64(bytes))),
        );
    }

    /// A coordinate array `key` of `shape` over `dims` (one value per cell,
    /// row-major; one for a scalar), inlined in the references: int64 when every
    /// value is an integer, a time (CF seconds since 1970) or a duration
    /// (CF hours), float64 when every value is a number, else fixed-width
    /// unicode; with cfgrib's attributes.
    fn add_coordinate(&mut self, key: &str, dims: &[String], shape: &[u64], values: &[Coord]) {
        let (dtype, bytes) = coordinate_bytes(values);
        let chain = ZarrChain {
            dtype,
            filters: Vec::new(),
            compressor: None,
        };
        let mut attrs: JsonMap<String, Json> = coordinate_attributes(key)
            .iter()
            .map(|(a, v)| (a.to_string(), json!(v)))
            .collect();
        if values.iter().all(|v| matches!(v, Coord::Time(_))) {
            attrs.insert("units".into(), json!("seconds since 1970-01-01T00:00:00"));
            attrs.insert("calendar".into(), json!("proleptic_gregorian"));
        } else if values.iter().all(|v| matches!(v, Coord::Span(_))) {
            attrs.insert("units".into(), json!("hours"));
            // What xarray's encoder writes, so that its decoder makes the
            // hours timedelta64 without being asked (`decode_timedelta`).
            attrs.insert("dtype".into(), json!("timedelta64[ns]"));
        }
        self.add_array(key, shape, dims, &chain, attrs);
        self.put_inline(key, &chunk_key(&[], shape.len()), &bytes);
    }
}

/// The dataset attributes every entry giving any shares, as JSON.
fn shared_dataset_attributes(entries: &[Entry]) -> JsonMap<String, Json> {
    let giving: Vec<&Map> = entries
        .iter()
        .map(|e| &e.dataset_attrs)
        .filter(|a| !a.is_empty())
        .collect();
    let Some(first) = giving.first() else {
        return JsonMap::new();
    };
    first
        .iter()
        .filter(|(k, v)| giving.iter().all(|a| a.get(*k) == Some(*v)))
        .map(|(k, v)| (k.clone(), v.to_json_value()))
        .collect()
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
