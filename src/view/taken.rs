//! Which grid of a dataset names its dimensions: the coordinates of a
//! grid (`latitude`, `longitude`, `values`) go to the first grid holding
//! them; a later field whose grid would give the same names other values
//! or other lengths, or lay them over other dimensions, keeps
//! `<name>_dim_<i>`. Kerchunk references (`tgm refs`) and the Python
//! xarray backend both decide through [`TakenGrids`], so they agree
//! (`spec/kerchunk.md` §2.1). What a dataset's grids may build together
//! is bounded ([`MAX_DATASET_COORDINATE_VALUES`]): a file can name a new
//! grid in every object.

use std::collections::{BTreeMap, BTreeSet};

use super::grid::{grid_coordinates_affordable, GridCoordinate, GridCoordinates};
use crate::cbor::Value;

/// The most coordinate values the grids of one dataset build together:
/// 2^28 (2 GiB of `f64` over its life, each grid's freed unless taken).
/// A field whose grid would pass it keeps `<name>_dim_<i>`.
pub const MAX_DATASET_COORDINATE_VALUES: u64 = 1 << 28;

/// The grid coordinates taken by a dataset's fields so far.
#[derive(Debug)]
pub struct TakenGrids {
    taken: BTreeMap<&'static str, GridCoordinate>,
    /// The length of each dimension a grid named.
    lengths: BTreeMap<&'static str, u64>,
    /// The dimensions a grid without coordinates named: no coordinate
    /// may lie over them, nor may they be named by such a grid once a
    /// coordinate lies over them.
    bare: BTreeSet<&'static str>,
    /// Coordinate values built so far, and the most that may be.
    built: u64,
    budget: u64,
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

impl Default for TakenGrids {
    fn default() -> Self {
        TakenGrids {
            taken: BTreeMap::new(),
            lengths: BTreeMap::new(),
            bare: BTreeSet::new(),
            built: 0,
            budget: MAX_DATASET_COORDINATE_VALUES,
            last: None,
        }
    }
}

impl TakenGrids {
    /// An empty dataset's.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dimension names a field of `shape` with geography `geo` takes
    /// from its grid, taking the grid's coordinates; None when it has no
    /// grid, when one of its dimensions is already named with another
    /// length or one of its coordinates is already taken over another
    /// dimension or with other values (nothing is taken then), or when
    /// building its coordinates would pass the dataset's budget.
    pub fn dims(&mut self, geo: &Value, shape: &[u64]) -> Option<Vec<&'static str>> {
        if let Some(last) = &self.last {
            if last.geo == *geo && last.shape == shape {
                return last.dims.clone();
            }
        }
        let (built, budget) = (&mut self.built, self.budget);
        let afford = |cost: u64| match built.checked_add(cost) {
            Some(b) if b <= budget => {
                *built = b;
                true
            }
            _ => false,
        };
        let dims = grid_coordinates_affordable(geo, shape, afford)
            .filter(|g| self.take(g, shape))
            .map(|g| g.dims);
        self.last = Some(LastField {
            geo: geo.clone(),
            shape: shape.to_vec(),
            dims: dims.clone(),
        });
        dims
    }

    /// Takes the names of `g`, the grid of a field of `shape` (its
    /// dimensions are the shape's last axes), unless they clash: a
    /// dimension named with another length, a coordinate taken with other
    /// dimensions or values, or a grid without coordinates sharing
    /// dimensions with one that has them (its field would show the other
    /// grid's points).
    fn take(&mut self, g: &GridCoordinates, shape: &[u64]) -> bool {
        let lengths = g.dims.iter().rev().zip(shape.iter().rev());
        let other_length =
            |(d, n): (&&'static str, &u64)| self.lengths.get(*d).is_some_and(|taken| taken != n);
        let clashes = |c: &GridCoordinate| {
            self.taken
                .get(c.name)
                .is_some_and(|h| h.dims != c.dims || h.values != c.values)
        };
        let covered = |d: &&'static str| self.taken.values().any(|c| c.dims.contains(d));
        let mixed = if g.coords.is_empty() {
            g.dims.iter().any(covered)
        } else {
            g.coords
                .iter()
                .flat_map(|c| &c.dims)
                .any(|d| self.bare.contains(d))
        };
        if mixed || lengths.clone().any(other_length) || g.coords.iter().any(clashes) {
            return false;
        }
        for (d, n) in lengths {
            self.lengths.insert(d, *n);
        }
        if g.coords.is_empty() {
            self.bare.extend(g.dims.iter().copied());
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

    #[test]
    fn a_grid_without_coordinates_takes_its_names_only_at_their_lengths() {
        // Points the view only names the dimension of: `values` of 12,
        // then a reduced grid's `values` of 13 keeps names of its own.
        let mut t = TakenGrids::new();
        let unstructured = Value::text_map(vec![("gridType", Value::from("sh"))]);
        assert_eq!(t.dims(&unstructured, &[12]), Some(vec!["values"]));
        assert_eq!(t.dims(&unstructured, &[13]), None);
        assert_eq!(t.dims(&unstructured, &[12]), Some(vec!["values"]));
        // A claimed regular grid beyond the field budget names its
        // dimensions without coordinates; a real one of other lengths
        // does not share them.
        let huge = regular(80.0, 3);
        let mut t = TakenGrids::new();
        assert_eq!(
            t.dims(&huge_shape(&huge), &[1 << 40, 4]),
            Some(vec!["latitude", "longitude"])
        );
        assert_eq!(t.dims(&regular(80.0, 3), &[3, 4]), None);
        assert_eq!(t.coordinates().count(), 0);
    }

    #[test]
    fn a_grid_without_coordinates_never_shows_another_grids_points() {
        let mercator = Value::text_map(vec![
            ("gridType", Value::from("mercator")),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(3)),
            ("jScansPositively", Value::Uint(1)),
            ("radius", Value::Float(6_371_229.0)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(10.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(100.0)),
            ("LaDInDegrees", Value::Float(20.0)),
            ("orientationOfTheGridInDegrees", Value::Float(0.0)),
            ("DiInMetres", Value::Float(100_000.0)),
            ("DjInMetres", Value::Float(100_000.0)),
        ]);
        let albers = Value::text_map(vec![
            ("gridType", Value::from("albers")),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(3)),
        ]);
        // Points over y and x first: a field on a grid without them does
        // not share y and x.
        let mut t = TakenGrids::new();
        assert_eq!(t.dims(&mercator, &[3, 4]), Some(vec!["y", "x"]));
        assert_eq!(t.dims(&albers, &[3, 4]), None);
        assert_eq!(t.dims(&mercator, &[3, 4]), Some(vec!["y", "x"]));
        // The other way round: the points do not come over them.
        let mut t = TakenGrids::new();
        assert_eq!(t.dims(&albers, &[3, 4]), Some(vec!["y", "x"]));
        assert_eq!(t.dims(&mercator, &[3, 4]), None);
        assert_eq!(t.coordinates().count(), 0);
        // Grids without coordinates share their dimensions.
        let other = Value::text_map(vec![
            ("gridType", Value::from("transverse_mercator")),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(3)),
        ]);
        assert_eq!(t.dims(&other, &[3, 4]), Some(vec!["y", "x"]));
    }

    /// `geo` claiming 2^40 rows.
    fn huge_shape(geo: &Value) -> Value {
        let Value::Map(mut entries) = geo.clone() else {
            unreachable!("a map")
        };
        for (k, v) in &mut entries {
            if k.as_text() == Some("Nj") {
                *v = Value::Uint(1 << 40);
            }
        }
        Value::Map(entries)
    }

    #[test]
    fn the_grids_of_a_dataset_build_within_one_budget() {
        // Rotated grids of 2^4 × 2^4 points, each a new grid: two
        // coordinates of 2^8 values, 2^9 a grid, so eight fit a budget
        // of 2^12.
        let rotated = |lat: f64| {
            Value::text_map(vec![
                ("gridType", Value::from("rotated_ll")),
                ("Ni", Value::Uint(1 << 4)),
                ("Nj", Value::Uint(1 << 4)),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(lat)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(lat - 40.0)),
                ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(40.0)),
                ("latitudeOfSouthernPoleInDegrees", Value::Float(-40.0)),
                ("longitudeOfSouthernPoleInDegrees", Value::Float(10.0)),
            ])
        };
        let shape = [1 << 4, 1 << 4];
        let mut cost = 0;
        grid_coordinates_affordable(&rotated(50.0), &shape, |c| {
            cost = c;
            false
        });
        assert_eq!(cost, 1 << 9);
        let mut t = TakenGrids {
            budget: 1 << 12,
            ..TakenGrids::new()
        };
        let named: Vec<bool> = (0..9)
            .map(|i| t.dims(&rotated(50.0 - i as f64), &shape).is_some())
            .collect();
        // The first takes the names, the next seven clash with it (their
        // points differ), and the ninth is not built at all.
        assert_eq!(
            named,
            [true, false, false, false, false, false, false, false, false]
        );
        assert_eq!(t.built, 1 << 12);
    }
}
