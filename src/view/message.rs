//! The dataset view of one message, object by object, as every door that
//! shows an archive displays it (`tgm view` through the WebAssembly
//! reader, the C API): name, dimensions, stacking keys with cfgrib's
//! times and levels, attributes and voxel geometry, from descriptors and
//! metadata alone (no payload is read). See `spec/kerchunk.md` §2.2.

use std::collections::BTreeMap;

use serde_json::{json, Map as JsonMap, Value as Json};

use super::coord::{valid_time, Coord};
use super::dims::object_dims_with_grid;
use super::geometry::VoxelGeometry;
use super::grid::grid_dims;
use super::object::object_view;
use crate::cbor::Value;
use crate::descriptor::{Map, ObjectDescriptor};
use crate::metadata::GlobalMetadata;

/// One object as the dataset view shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSummary {
    /// Message index.
    pub message: usize,
    /// Object index in its message.
    pub object: usize,
    /// Variable name ([`super::variable_name`]).
    pub name: String,
    /// Dimension names ([`super::object_dims`]).
    pub dims: Vec<String>,
    /// Shape.
    pub shape: Vec<u64>,
    /// Stacking keys ([`super::stack_keys`]).
    pub keys: BTreeMap<String, Coord>,
    /// cfgrib's `valid_time` (seconds since 1970) when it has a reference
    /// `time` and a `step` in hours.
    pub valid_time: Option<i64>,
    /// Variable attributes ([`super::attributes`]).
    pub attrs: Map,
    /// Voxel geometry of a medical volume.
    pub geometry: Option<VoxelGeometry>,
}

/// The view of every object of message `m`, whose metadata is `meta` and
/// whose descriptors are `descriptors`.
pub fn message_view(
    meta: &GlobalMetadata,
    descriptors: &[ObjectDescriptor],
    m: usize,
) -> Vec<ObjectSummary> {
    descriptors
        .iter()
        .enumerate()
        .map(|(o, d)| object_summary(meta, d, m, o))
        .collect()
}

/// The view of object `o` of message `m`, whose metadata is `meta`, as
/// described by `d`.
pub fn object_summary(
    meta: &GlobalMetadata,
    d: &ObjectDescriptor,
    m: usize,
    o: usize,
) -> ObjectSummary {
    object_summary_with_grid(meta, d, m, o, grid_dims)
}

/// [`object_summary`] with the grid's dimension names decided by `grid`
/// ([`super::object_dims_with_grid`]).
pub fn object_summary_with_grid(
    meta: &GlobalMetadata,
    d: &ObjectDescriptor,
    m: usize,
    o: usize,
    grid: impl FnOnce(&Value, &[u64]) -> Option<Vec<&'static str>>,
) -> ObjectSummary {
    let entry = meta.base.get(o);
    let v = object_view(entry, m, o);
    let dims = object_dims_with_grid(entry, &meta.extra, &d.shape, &v.name, grid);
    let valid_time = match (v.keys.get("time"), v.keys.get("step")) {
        (Some(Coord::Time(t)), Some(Coord::Span(s))) => Some(valid_time(*t, *s)),
        _ => None,
    };
    ObjectSummary {
        message: m,
        object: o,
        name: v.name,
        dims,
        shape: d.shape.clone(),
        keys: v.keys,
        valid_time,
        attrs: v.attrs,
        geometry: VoxelGeometry::of(entry),
    }
}

impl ObjectSummary {
    /// As JSON: `{"message", "object", "name", "dims", "shape", "keys",
    /// "attrs"}`, with `"valid_time"` and `"geometry"` when it has them;
    /// times as ISO 8601 text, a step in hours (`spec/kerchunk.md` §2.2).
    pub fn to_json(&self) -> Json {
        let keys: JsonMap<String, Json> = self
            .keys
            .iter()
            .map(|(k, c)| (k.clone(), c.to_json()))
            .collect();
        let attrs: JsonMap<String, Json> = self
            .attrs
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json_value()))
            .collect();
        let mut out = json!({
            "message": self.message,
            "object": self.object,
            "name": self.name,
            "dims": self.dims,
            "shape": self.shape,
            "keys": keys,
            "attrs": attrs,
        });
        if let Some(t) = self.valid_time {
            out["valid_time"] = Coord::Time(t).to_json();
        }
        if let Some(g) = &self.geometry {
            out["geometry"] = g.to_json(self.shape.len());
        }
        out
    }
}

/// [`message_view`] as a JSON array of [`ObjectSummary::to_json`].
pub fn message_view_json(
    meta: &GlobalMetadata,
    descriptors: &[ObjectDescriptor],
    m: usize,
) -> Json {
    Json::Array(
        message_view(meta, descriptors, m)
            .iter()
            .map(ObjectSummary::to_json)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbor::Value;
    use crate::Dtype;

    fn grib_entry() -> Map {
        let mut e = Map::new();
        e.insert(
            "mars".into(),
            Value::text_map([
                ("param", Value::from("167.128")),
                ("date", Value::Uint(20170102)),
                ("time", Value::Uint(1200)),
                ("step", Value::Uint(6)),
                ("levelist", Value::Uint(500)),
            ]),
        );
        e.insert(
            "grib".into(),
            Value::text_map([
                ("cfVarName", Value::from("t")),
                ("shortName", Value::from("t")),
                ("typeOfLevel", Value::from("isobaricInhPa")),
                ("units", Value::from("K")),
            ]),
        );
        e.insert(
            "geography".into(),
            Value::text_map([
                ("gridType", Value::from("regular_ll")),
                ("Ni", Value::Uint(4)),
                ("Nj", Value::Uint(3)),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(90.0)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(-90.0)),
                ("longitudeOfFirstGridPointInDegrees", Value::Uint(0)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(270.0)),
            ]),
        );
        e
    }

    #[test]
    fn a_grib_field_has_cfgrib_times_levels_and_grid_dims() {
        let meta = GlobalMetadata::with_base(vec![grib_entry()]);
        let d = [ObjectDescriptor::new(Dtype::Float64, vec![3, 4])];
        let v = message_view_json(&meta, &d, 7);
        let o = &v[0];
        assert_eq!(o["message"], 7);
        assert_eq!(o["name"], "t");
        assert_eq!(o["dims"], json!(["latitude", "longitude"]));
        assert_eq!(o["keys"]["time"], "2017-01-02T12:00:00");
        assert_eq!(o["keys"]["step"], 6);
        assert_eq!(o["keys"]["isobaricInhPa"], 500.0);
        assert_eq!(o["valid_time"], "2017-01-02T18:00:00");
        assert_eq!(o["attrs"]["units"], "K");
        assert!(o.get("geometry").is_none());
    }

    #[test]
    fn an_object_without_metadata_is_named_by_its_place() {
        let meta = GlobalMetadata::default();
        let d = [ObjectDescriptor::new(Dtype::Uint8, vec![2, 5])];
        let v = message_view(&meta, &d, 1);
        assert_eq!(v[0].name, "object_1_0");
        assert_eq!(v[0].dims, ["object_1_0_dim_0", "object_1_0_dim_1"]);
        assert!(v[0].keys.is_empty());
        assert_eq!(v[0].valid_time, None);
    }

    #[test]
    fn a_volume_shows_its_listed_dims_and_voxel_spacing() {
        let mut e = Map::new();
        e.insert("name".into(), Value::from("brain"));
        e.insert(
            "dim_names".into(),
            Value::Array(vec!["k".into(), "j".into(), "i".into()]),
        );
        let diag = |x: f64, y: f64, z: f64| {
            Value::Array(
                [
                    [x, 0.0, 0.0, 1.0],
                    [0.0, y, 0.0, 2.0],
                    [0.0, 0.0, z, 3.0],
                    [0.0, 0.0, 0.0, 1.0],
                ]
                .iter()
                .map(|r| Value::Array(r.iter().map(|&v| Value::Float(v)).collect()))
                .collect(),
            )
        };
        e.insert(
            "geometry".into(),
            Value::text_map([("affine_lps", diag(0.5, 0.75, 3.0))]),
        );
        let meta = GlobalMetadata::with_base(vec![e]);
        let d = [ObjectDescriptor::new(Dtype::Int16, vec![4, 5, 6])];
        let o = &message_view_json(&meta, &d, 0)[0];
        assert_eq!(o["name"], "brain");
        assert_eq!(o["dims"], json!(["k", "j", "i"]));
        assert_eq!(o["geometry"]["spacing"], json!([3.0, 0.75, 0.5]));
        assert_eq!(o["geometry"]["origin"], json!([1.0, 2.0, 3.0]));
    }
}
