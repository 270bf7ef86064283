//! Latitude/longitude coordinates of a regular latitude/longitude grid
//! from an object's `geography` (the keys `convert-grib` copies), as
//! cfgrib shows them: 1-d `latitude` and `longitude` dimension
//! coordinates of a field of shape `(Nj, Ni)`.

use super::object::coordinate_attributes;
use crate::cbor::Value;

/// CF attributes as `(name, value)` pairs.
pub type CfAttrs = Vec<(&'static str, &'static str)>;

/// One 1-d dimension coordinate of a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCoordinate {
    /// Its name, also its dimension's.
    pub name: &'static str,
    /// Its values.
    pub values: Vec<f64>,
    /// Its CF attributes.
    pub attrs: CfAttrs,
}

/// A field's grid coordinates: the field's dimension names and its
/// coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCoordinates {
    /// The field's dimensions.
    pub dims: Vec<&'static str>,
    /// Its 1-d dimension coordinates.
    pub coords: Vec<GridCoordinate>,
}

fn number(geo: &Value, key: &str) -> Option<f64> {
    match geo.get(key)? {
        Value::Bool(_) => None,
        v => v.as_f64(),
    }
}

/// `n` values from `first` to `last` as NumPy's `linspace` computes them
/// (`i·step + first`, the last exactly `last`).
fn linspace(first: f64, last: f64, n: usize) -> Vec<f64> {
    let step = if n > 1 {
        (last - first) / (n - 1) as f64
    } else {
        0.0
    };
    let mut v: Vec<f64> = (0..n).map(|i| i as f64 * step + first).collect();
    if let Some(end) = v.last_mut().filter(|_| n > 1) {
        *end = last;
    }
    v
}

/// The coordinates of a `regular_ll` field of `shape` whose `geography`
/// section is `geo`; None for any other grid or geography keys that do
/// not describe the shape.
pub fn grid_coordinates(geo: &Value, shape: &[u64]) -> Option<GridCoordinates> {
    if geo.get("gridType").and_then(Value::as_text) != Some("regular_ll") || shape.len() != 2 {
        return None;
    }
    let nj = geo.get("Nj").and_then(Value::as_u64)?;
    let ni = geo.get("Ni").and_then(Value::as_u64)?;
    if [nj, ni] != shape[..] {
        return None;
    }
    let lat = linspace(
        number(geo, "latitudeOfFirstGridPointInDegrees")?,
        number(geo, "latitudeOfLastGridPointInDegrees")?,
        usize::try_from(nj).ok()?,
    );
    let lon = linspace(
        number(geo, "longitudeOfFirstGridPointInDegrees")?,
        number(geo, "longitudeOfLastGridPointInDegrees")?,
        usize::try_from(ni).ok()?,
    );
    let mut lat_attrs = coordinate_attributes("latitude").to_vec();
    if lat.first() > lat.last() {
        lat_attrs.push(("stored_direction", "decreasing"));
    }
    let lon_attrs = coordinate_attributes("longitude").to_vec();
    Some(GridCoordinates {
        dims: vec!["latitude", "longitude"],
        coords: vec![
            GridCoordinate {
                name: "latitude",
                values: lat,
                attrs: lat_attrs,
            },
            GridCoordinate {
                name: "longitude",
                values: lon,
                attrs: lon_attrs,
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_ll_rows_run_from_first_to_last() {
        let e = Value::text_map([
            ("gridType", Value::Text("regular_ll".into())),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(3)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(90.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(-90.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Uint(0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(270.0)),
        ]);
        let g = grid_coordinates(&e, &[3, 4]).expect("a regular_ll grid");
        assert_eq!(g.coords[0].values, [90.0, 0.0, -90.0]);
        assert_eq!(g.coords[1].values, [0.0, 90.0, 180.0, 270.0]);
        assert!(g.coords[0]
            .attrs
            .contains(&("stored_direction", "decreasing")));
        assert_eq!(grid_coordinates(&e, &[4, 3]), None);
    }
}
