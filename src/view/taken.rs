//! Which grid of a dataset names its dimensions: the coordinates of a
//! grid (`latitude`, `longitude`, `values`) go to the first grid holding
//! them; a later field whose grid would give the same names other values,
//! or lay them over other dimensions, keeps `<name>_dim_<i>`. Kerchunk
//! references (`tgm refs`) and the Python xarray backend both decide
//! through [`TakenGrids`], so they agree (`spec/kerchunk.md` §2.1).

use std::collections::BTreeMap;

use super::grid::{grid_coordinates, GridCoordinate, GridCoordinates};
use crate::cbor::Value;

/// The grid coordinates taken by a dataset's fields so far.
#[derive(Debug, Default)]
pub struct TakenGrids {
    taken: BTreeMap<&'static str, GridCoordinate>,
    /// The last field's geography, shape and answer: the fields of an
    /// archive mostly share one grid, whose coordinates are then built
    /// once.
    last: Option<LastField>,
}

/// A field's geography and shape, and the dimensions its grid took.
#[derive(Debug)]
struct LastField {
    geo: Value,
    shape: Vec<u64>,
    dims: Option<Vec<&'static str>>,
}

impl TakenGrids {
    /// An empty dataset's.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dimension names a field of `shape` with geography `geo` takes
    /// from its grid, taking the grid's coordinates; None when it has no
    /// grid, or when one of its coordinates is already taken over another
    /// dimension or with other values (nothing is taken then).
    pub fn dims(&mut self, geo: &Value, shape: &[u64]) -> Option<Vec<&'static str>> {
        if let Some(last) = &self.last {
            if last.geo == *geo && last.shape == shape {
                return last.dims.clone();
            }
        }
        let dims = grid_coordinates(geo, shape)
            .filter(|g| self.take(g))
            .map(|g| g.dims);
        self.last = Some(LastField {
            geo: geo.clone(),
            shape: shape.to_vec(),
            dims: dims.clone(),
        });
        dims
    }

    fn take(&mut self, g: &GridCoordinates) -> bool {
        let clashes = |c: &GridCoordinate| {
            self.taken
                .get(c.name)
                .is_some_and(|h| h.dims != c.dims || h.values != c.values)
        };
        if g.coords.iter().any(clashes) {
            return false;
        }
        for c in &g.coords {
            self.taken.entry(c.name).or_insert_with(|| c.clone());
        }
        true
    }

    /// The coordinates taken, by name.
    pub fn coordinates(&self) -> impl Iterator<Item = &GridCoordinate> {
        self.taken.values()
    }

    /// The coordinates taken, by name, given up.
    pub fn into_coordinates(self) -> impl Iterator<Item = GridCoordinate> {
        self.taken.into_values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regular(first_lat: f64, nj: u64) -> Value {
        let last_lat = first_lat - 10.0 * (nj - 1) as f64;
        Value::text_map(vec![
            ("gridType", Value::Text("regular_ll".into())),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(nj)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(first_lat)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(last_lat)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(30.0)),
        ])
    }

    #[test]
    fn the_first_grid_takes_the_names_and_a_clashing_one_does_not() {
        let mut t = TakenGrids::new();
        let a = regular(80.0, 3);
        assert_eq!(t.dims(&a, &[3, 4]), Some(vec!["latitude", "longitude"]));
        assert_eq!(t.dims(&a, &[3, 4]), Some(vec!["latitude", "longitude"]));
        // Other latitudes under the same name: not taken.
        let b = regular(70.0, 3);
        assert_eq!(t.dims(&b, &[3, 4]), None);
        let names: Vec<_> = t.coordinates().map(|c| c.name).collect();
        assert_eq!(names, ["latitude", "longitude"]);
        let lat = t.into_coordinates().next().unwrap();
        assert_eq!(lat.values, [80.0, 70.0, 60.0]);
        // No geography the view knows: no grid.
        assert_eq!(TakenGrids::new().dims(&Value::Uint(1), &[3]), None);
    }
}
