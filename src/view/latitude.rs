//! Which axis of an object is latitude, for variables with a latitude
//! coordinate object (as `convert-netcdf` writes them): the object's
//! listed dimension names ([`super::listed_dims`]) name an axis whose
//! 1-D coordinate object in the same message is latitude. `tgm plot`
//! draws such a variable north up from it (`spec/plot.md` §3.1).

use crate::descriptor::ObjectDescriptor;
use crate::metadata::GlobalMetadata;

/// Units and standard name of a latitude coordinate (CF conventions).
const LAT_UNITS: &[&str] = &[
    "degrees_north",
    "degree_north",
    "degree_N",
    "degrees_N",
    "degreeN",
    "degreesN",
];

/// Whether object `o` of a message is a latitude coordinate.
fn is_latitude(meta: &GlobalMetadata, o: usize) -> bool {
    let text = |map: &str, key: &str| meta.base.get(o)?.get(map)?.get(key)?.as_text();
    ["cf", "attrs"].iter().any(|m| {
        text(m, "standard_name") == Some("latitude")
            || text(m, "units").is_some_and(|u| LAT_UNITS.contains(&u))
    })
}

/// `(axis, object)`: the axis of object `target` that is latitude and
/// the object holding that coordinate: the axis's `dim_names` entry is
/// the `name` of a 1-D object of the same length whose `cf` or `attrs`
/// give latitude units or standard name.
pub fn latitude_axis(
    meta: &GlobalMetadata,
    descs: &[ObjectDescriptor],
    target: usize,
) -> Option<(usize, usize)> {
    let shape = &descs.get(target)?.shape;
    let dims = super::listed_dims(meta.base.get(target), &meta.extra, shape.len())?;
    dims.iter().enumerate().find_map(|(axis, dim)| {
        let dim = dim.as_str();
        let coord = (0..descs.len()).find(|&o| {
            o != target
                && meta.base.get(o).and_then(|e| e.get("name")?.as_text()) == Some(dim)
                && descs[o].shape == [shape[axis]]
                && is_latitude(meta, o)
        })?;
        Some((axis, coord))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbor::Value;
    use crate::descriptor::Map;
    use crate::dtype::Dtype;

    fn entry(name: &str, dims: &[&str], units: Option<&str>) -> Map {
        let mut e = Map::new();
        e.insert("name".into(), Value::from(name));
        e.insert(
            "dim_names".into(),
            Value::Array(dims.iter().map(|d| Value::from(*d)).collect()),
        );
        if let Some(u) = units {
            e.insert("cf".into(), Value::text_map([("units", Value::from(u))]));
        }
        e
    }

    #[test]
    fn the_latitude_axis_is_found_by_its_coordinate() {
        let meta = GlobalMetadata::with_base(vec![
            entry("lat", &["lat"], Some("degrees_north")),
            entry("lon", &["lon"], Some("degrees_east")),
            entry("t2m", &["time", "lat", "lon"], Some("K")),
        ]);
        let d = |s: &[u64]| ObjectDescriptor::new(Dtype::Float32, s.to_vec());
        let descs = [d(&[3]), d(&[4]), d(&[2, 3, 4])];
        assert_eq!(latitude_axis(&meta, &descs, 2), Some((1, 0)));
        // A coordinate of another length, or without latitude units, is not one.
        let descs = [d(&[5]), d(&[4]), d(&[2, 3, 4])];
        assert_eq!(latitude_axis(&meta, &descs, 2), None);
        let meta = GlobalMetadata::with_base(vec![
            entry("lat", &["lat"], None),
            entry("lon", &["lon"], None),
            entry("t2m", &["time", "lat", "lon"], None),
        ]);
        assert_eq!(
            latitude_axis(&meta, &[d(&[3]), d(&[4]), d(&[2, 3, 4])], 2),
            None
        );
    }
}
