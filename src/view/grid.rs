//! Latitude/longitude coordinates of a field from its `geography` (the
//! keys `convert-grib` copies), as cfgrib shows them (`spec/kerchunk.md`
//! §2):
//!
//! * `regular_ll` and `regular_gg` fields of shape `(Nj, Ni)`: 1-d
//!   `latitude` and `longitude` dimension coordinates, Gaussian rows from
//!   [`crate::geography::gaussian_latitudes`] (ecCodes' own, bit for bit);
//! * global `reduced_gg` fields of shape `(Σ pl,)`: one `values` dimension
//!   with `latitude(values)` and `longitude(values)`, row by row as ecCodes
//!   iterates;
//! * `rotated_ll` fields of shape `(Nj, Ni)`: dimensions `y` and `x` with
//!   2-d `latitude(y, x)` and `longitude(y, x)`, each point unrotated as
//!   ecCodes' geoiterator unrotates it (`latitudes`/`longitudes`, which
//!   cfgrib shows) to the bit;
//! * `rotated_gg` fields of shape `(Nj, Ni)` likewise, Gaussian rows by
//!   the columns of `rotated_ll`, each point unrotated (ecCodes' own
//!   Gaussian geoiterator leaves them in the rotated frame);
//! * global `reduced_rotated_gg` fields as `reduced_gg`, each point
//!   unrotated as ecCodes' reduced Gaussian geoiterator unrotates it;
//! * `polar_stereographic` fields of shape `(Ny, Nx)` on a spherical
//!   earth and `lambert` and `mercator` ones on a sphere or an ellipsoid,
//!   scanned +i +j along rows, and `lambert_azimuthal_equal_area` ones
//!   scanned along rows in either direction: dimensions
//!   `y` and `x` with 2-d `latitude(y, x)` and `longitude(y, x)` as
//!   ecCodes' geoiterators project them ([`super::projection`]), and
//!   `space_view` ones likewise in any direction, NaN off the earth's
//!   disc; other scannings keep `y` and `x` without coordinates (cfgrib
//!   gives Mercator and space view fields one `values` dimension with the
//!   same points, `spec/kerchunk.md` §2.1);
//! * a field of any other grid type of shape `(Nj, Ni)`: `y` and `x`
//!   without coordinates;
//! * any other 1-d field with a geography: the `values` dimension alone.
//!
//! Keys that do not describe the object's shape give no coordinates, so
//! what is allocated is bounded by the shape, never by a key; and the
//! shape is a claim of the file, so a field whose coordinates would take
//! more than [`MAX_GRID_COORDINATE_VALUES`] keeps its grid's dimensions
//! without coordinates, and the dimensions alone are decided without
//! allocating along the shape (`spec/kerchunk.md` §2.1).

use super::object::coordinate_attributes;
use super::projection::Projected;
use crate::cbor::Value;
pub use crate::geography::MAX_GRID_COORDINATE_VALUES;
use crate::geography::{self, Axes, Geography};

/// CF attributes as `(name, value)` pairs.
pub type CfAttrs = Vec<(&'static str, &'static str)>;

/// One coordinate of a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCoordinate {
    /// Its name.
    pub name: &'static str,
    /// Its dimensions: its own name for a dimension coordinate, `values`
    /// for the points of a reduced grid, `y` and `x` for a rotated grid's.
    pub dims: Vec<&'static str>,
    /// Its length along each of `dims`.
    pub shape: Vec<u64>,
    /// Its values, row-major over `dims`.
    pub values: Vec<f64>,
    /// Its CF attributes.
    pub attrs: CfAttrs,
}

/// A field's grid: the field's dimension names and its coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCoordinates {
    /// The field's dimensions.
    pub dims: Vec<&'static str>,
    /// Its coordinates (none for a grid the view only names the
    /// dimension of).
    pub coords: Vec<GridCoordinate>,
}

/// The dimension of the points of a grid that is not a regular product of
/// rows and columns (cfgrib's).
const VALUES: &str = "values";

/// What a geography describes for a field of a given shape, with the
/// rows' latitudes but before any per-point coordinate is built.
enum Grid {
    /// Rows × columns: the rows' latitudes, and the columns' longitudes
    /// as ecCodes' `Regular` geoiterator steps them ([`regular_columns`]:
    /// across the meridian where the last is west of the first).
    Regular { rows: Rows, columns: Steps },
    /// A regular grid whose rows alternate direction
    /// (`alternativeRowScanning` 1): the values of every second row run
    /// from the last column to the first, so each point gets its own
    /// latitude and longitude, `latitude(y, x)` and `longitude(y, x)`
    /// (cfgrib reverses those rows' values instead, which references to
    /// stored bytes cannot do).
    AlternateRows { rows: Rows, columns: Steps },
    /// A global reduced Gaussian grid: its rows' latitudes and lengths,
    /// and the rotation of a rotated one.
    Reduced {
        rows: Rows,
        pl: Vec<u64>,
        points: usize,
        pole: Option<Rotation>,
    },
    /// A rotated latitude/longitude or Gaussian grid: its rotated rows and
    /// columns, and the rotation.
    Rotated {
        rows: Rows,
        columns: Steps,
        pole: Rotation,
    },
    /// A projected grid (polar stereographic, Lambert conformal, Lambert
    /// azimuthal equal-area, Mercator, space view): its points computed
    /// per point as ecCodes computes them.
    Projected(Projected),
    /// A projected grid whose points the view does not compute (another
    /// scanning, an oblate earth where ecCodes projects none, keys that do
    /// not project), or a grid of another type shaped `(Nj, Ni)`:
    /// dimensions `y` and `x` alone.
    ProjectedAxes,
    /// Points the view only names the dimension of.
    Values,
}

/// The latitudes of a grid's rows.
enum Rows {
    /// Stepped as ecCodes' `Latlon` geoiterator steps a latitude/longitude
    /// grid's ([`latlon_rows`]).
    Stepped(Steps),
    /// `count` Gaussian latitudes of `N = n` from the one nearest `first`
    /// towards `last` ([`geography::gaussian_rows`], computed only for
    /// coordinates: the dimensions alone cost no Legendre root).
    Gaussian {
        n: u64,
        first: f64,
        last: f64,
        count: usize,
    },
}

impl Rows {
    fn len(&self) -> usize {
        match self {
            Rows::Stepped(Steps { n, .. }) => *n,
            Rows::Gaussian { count, .. } => *count,
        }
    }

    /// The latitudes; None for Gaussian keys whose rows do not fit the
    /// grid (no row near the first latitude, the last row not near the
    /// last).
    fn values(self) -> Option<Vec<f64>> {
        match self {
            Rows::Stepped(steps) => Some(steps.values()),
            Rows::Gaussian {
                n,
                first,
                last,
                count,
            } => geography::gaussian_rows(n, first, last, count),
        }
    }
}

/// `n` values as ecCodes' geoiterator steps along a rotated grid's axis:
/// from `first` by `step`, the last set to `last`.
#[derive(Debug, Clone, Copy)]
struct Steps {
    first: f64,
    step: f64,
    last: f64,
    n: usize,
}

impl Steps {
    fn values(self) -> Vec<f64> {
        let mut at = self.first;
        let mut v: Vec<f64> = (0..self.n)
            .map(|_| {
                let l = at;
                at += self.step;
                l
            })
            .collect();
        if let Some(end) = v.last_mut() {
            *end = self.last;
        }
        v
    }
}

/// A rotated grid's south pole and angle of rotation (degrees).
#[derive(Debug, Clone, Copy)]
struct Rotation {
    south_pole_lat: f64,
    south_pole_lon: f64,
    angle: f64,
}

impl Grid {
    /// The field's dimension names on this grid.
    fn dims(&self) -> Vec<&'static str> {
        match self {
            Grid::Regular { .. } => vec!["latitude", "longitude"],
            Grid::Rotated { .. }
            | Grid::AlternateRows { .. }
            | Grid::Projected(_)
            | Grid::ProjectedAxes => vec!["y", "x"],
            Grid::Reduced { .. } | Grid::Values => vec![VALUES],
        }
    }

    /// How many coordinate values the grid's coordinates hold (None when
    /// the count overflows).
    fn coordinate_values(&self) -> Option<u64> {
        match self {
            Grid::Regular { rows, columns } => (rows.len() as u64).checked_add(columns.n as u64),
            Grid::Rotated { rows, columns, .. } | Grid::AlternateRows { rows, columns } => {
                (rows.len() as u64)
                    .checked_mul(columns.n as u64)?
                    .checked_mul(2)
            }
            Grid::Reduced { points, .. } => (*points as u64).checked_mul(2),
            Grid::Projected(p) => (p.nx as u64).checked_mul(p.ny as u64)?.checked_mul(2),
            Grid::ProjectedAxes | Grid::Values => Some(0),
        }
    }
}

/// The grid of a field of `shape` whose `geography` section is `geo`
/// (see the module's documentation); None for a field the view gives no
/// grid dimensions: no geography map, a grid of more than one dimension
/// not shaped `(Nj, Ni)`, or keys that do not describe the shape (Gaussian rows that
/// do not fit included: a one-axis field then has the `values` dimension
/// alone).
pub fn grid_coordinates(geo: &Value, shape: &[u64]) -> Option<GridCoordinates> {
    grid_coordinates_affordable(geo, shape, |_| true)
}

/// [`grid_coordinates`], built only when `afford(cost)` allows the
/// coordinate values they hold ([`Grid::coordinate_values`], 0 for a grid
/// whose coordinates are not built: `values` alone, or beyond
/// [`MAX_GRID_COORDINATE_VALUES`]); None when it does not. The grid is
/// read from the keys once.
pub(super) fn grid_coordinates_affordable(
    geo: &Value,
    shape: &[u64],
    afford: impl FnOnce(u64) -> bool,
) -> Option<GridCoordinates> {
    let grid = grid_of(geo, shape)?;
    let values = grid.coordinate_values();
    let within = values.is_some_and(|n| n <= MAX_GRID_COORDINATE_VALUES);
    if !afford(values.filter(|_| within).unwrap_or(0)) {
        return None;
    }
    let dims = grid.dims();
    if !within {
        let coords = Vec::new();
        return Some(GridCoordinates { dims, coords });
    }
    let coords = match grid {
        Grid::Regular { rows, columns } => rows
            .values()
            .map(|lat| regular_coordinates(lat, columns.values())),
        Grid::AlternateRows { rows, columns } => rows
            .values()
            .map(|lat| alternate_rows_coordinates(&lat, &columns.values())),
        Grid::Reduced {
            rows,
            pl,
            points,
            pole,
        } => rows
            .values()
            .map(|lat| reduced_coordinates(&lat, &pl, points, pole)),
        Grid::Rotated {
            rows,
            columns,
            pole,
        } => rows
            .values()
            .map(|lat| rotated_coordinates(&lat, &columns.values(), pole)),
        // Points that do not project (a longitude not finite, an oblate
        // latitude that does not settle) leave the grid its dimensions,
        // as for another scanning.
        Grid::Projected(p) => Some(p.points().map_or_else(Vec::new, |(lat, lon)| {
            two_d_coordinates([p.ny, p.nx], lat, lon)
        })),
        Grid::ProjectedAxes | Grid::Values => Some(Vec::new()),
    };
    match coords {
        Some(coords) => Some(GridCoordinates { dims, coords }),
        None => unstructured(geo, shape).then(|| GridCoordinates {
            dims: vec![VALUES],
            coords: Vec::new(),
        }),
    }
}

/// Whether a field with no grid the view knows still has the `values`
/// dimension of cfgrib's unstructured grids: one axis and a geography.
fn unstructured(geo: &Value, shape: &[u64]) -> bool {
    shape.len() == 1 && geo.as_map().is_some_and(|m| !m.is_empty())
}

/// The dimension names [`grid_coordinates`] gives, without building the
/// coordinates (cheap for a grid of millions of points) and so without
/// computing a Gaussian grid's rows: a Gaussian grid whose rows do not fit
/// is named by its grid here, where [`grid_coordinates`] finds no grid.
pub fn grid_dims(geo: &Value, shape: &[u64]) -> Option<Vec<&'static str>> {
    grid_of(geo, shape).map(|g| g.dims())
}

/// The latitude of every row and the longitude of every column of a
/// regular grid of `shape`, in stored order: the dataset view's
/// coordinates (ecCodes' geoiterators, as cfgrib shows them) when the
/// geography describes a `regular_ll` or `regular_gg` grid whole, else the
/// plot's placing ([`Geography::regular_axes`], `spec/plot.md` §3), which
/// also places a grid whose geography lacks keys. None for other grids and
/// beyond [`geography::MAX_REGULAR_AXES_VALUES`] values.
pub fn regular_axes(geo: &Value, shape: &[u64]) -> Option<Axes> {
    if let Some(Grid::Regular { rows, columns }) = grid_of(geo, shape) {
        let count = (rows.len() as u64).checked_add(columns.n as u64)?;
        if count > geography::MAX_REGULAR_AXES_VALUES {
            return None;
        }
        if let Some(latitudes) = rows.values() {
            return Some(Axes {
                latitudes,
                longitudes: columns.values(),
            });
        }
    }
    Geography::new(geo)?.regular_axes(shape)
}

fn grid_of(geo: &Value, shape: &[u64]) -> Option<Grid> {
    let g = Geography::new(geo)?;
    let grid = match g.grid_type() {
        Some("regular_ll") => regular(&g, shape, |n| {
            latlon_rows(&g, n, scanning_flag(&g, "jScansPositively")?)
        }),
        Some("regular_gg") => regular(&g, shape, |n| gaussian_rows(&g, n)),
        Some("reduced_gg") => reduced_gg(&g, shape, None),
        Some("reduced_rotated_gg") => rotation(&g).and_then(|r| reduced_gg(&g, shape, Some(r))),
        Some("rotated_ll") => rotated_ll(&g, shape),
        Some("rotated_gg") => rotated_gg(&g, shape),
        Some(
            "polar_stereographic"
            | "lambert"
            | "lambert_azimuthal_equal_area"
            | "mercator"
            | "space_view",
        ) => projected(&g, shape),
        // Other grids of rows and columns share `y` and `x`.
        Some(_) => rows_and_columns(&g, shape).then_some(Grid::ProjectedAxes),
        None => None,
    };
    grid.or_else(|| unstructured(geo, shape).then_some(Grid::Values))
}

/// A projected grid of `shape` = `(Nj, Ni)`: with its points when the
/// view computes them ([`Projected::of`]), else its dimensions alone.
fn projected(g: &Geography<'_>, shape: &[u64]) -> Option<Grid> {
    if !rows_and_columns(g, shape) {
        return None;
    }
    Some(Projected::of(g, shape).map_or(Grid::ProjectedAxes, Grid::Projected))
}

/// Whether `shape` is the `(Nj, Ni)` of the grid's keys, each row's points
/// consecutive ([`Geography::rows_consecutive`]; `spec/kerchunk.md` §2.1).
fn rows_and_columns(g: &Geography<'_>, shape: &[u64]) -> bool {
    g.rows_consecutive()
        && matches!(*shape, [nj, ni] if count(g, "Nj") == Some(nj) && count(g, "Ni") == Some(ni))
}

/// A scanning flag: false when absent, None when it is not a count.
fn scanning_flag(g: &Geography<'_>, key: &str) -> Option<bool> {
    g.get(key)
        .map_or(Some(false), |v| v.as_u64().map(|f| f != 0))
}

/// `key` as a count: a non-negative integer.
fn count(g: &Geography<'_>, key: &str) -> Option<u64> {
    g.get(key)?.as_u64()
}

/// A grid of rows and columns (`Nj` × `Ni` = `shape`): `rows` gives the
/// latitudes of its `Nj` rows, [`regular_columns`] the longitudes of its
/// columns; rows that alternate direction give [`Grid::AlternateRows`].
fn regular(
    g: &Geography<'_>,
    shape: &[u64],
    rows: impl FnOnce(usize) -> Option<Rows>,
) -> Option<Grid> {
    let [nj, ni] = *shape else { return None };
    if !rows_and_columns(g, shape) || ni == 0 {
        return None;
    }
    let flag = |key| scanning_flag(g, key);
    let columns = regular_columns(
        g.number("longitudeOfFirstGridPointInDegrees")?,
        g.number("longitudeOfLastGridPointInDegrees")?,
        usize::try_from(ni).ok()?,
        flag("iScansNegatively")?,
        || g.number("iDirectionIncrementInDegrees"),
    )?;
    let rows = rows(usize::try_from(nj).ok()?)?;
    Some(match flag("alternativeRowScanning")? {
        false => Grid::Regular { rows, columns },
        true => Grid::AlternateRows { rows, columns },
    })
}

/// `latitude(y, x)` and `longitude(y, x)` of a regular grid whose every
/// second row runs from the last column to the first.
fn alternate_rows_coordinates(rows: &[f64], columns: &[f64]) -> Vec<GridCoordinate> {
    let points = rows.len() * columns.len();
    let (mut lat, mut lon) = (Vec::with_capacity(points), Vec::with_capacity(points));
    for (j, &row) in rows.iter().enumerate() {
        lat.extend(std::iter::repeat_n(row, columns.len()));
        match j % 2 {
            0 => lon.extend_from_slice(columns),
            _ => lon.extend(columns.iter().rev()),
        }
    }
    two_d_coordinates([rows.len(), columns.len()], lat, lon)
}

/// The `latitude` and `longitude` dimension coordinates of a regular grid.
fn regular_coordinates(lat: Vec<f64>, lon: Vec<f64>) -> Vec<GridCoordinate> {
    let mut lat_attrs = coordinate_attributes("latitude").to_vec();
    if lat.first() > lat.last() {
        lat_attrs.push(("stored_direction", "decreasing"));
    }
    vec![
        GridCoordinate {
            name: "latitude",
            dims: vec!["latitude"],
            shape: vec![lat.len() as u64],
            values: lat,
            attrs: lat_attrs,
        },
        GridCoordinate {
            name: "longitude",
            dims: vec!["longitude"],
            shape: vec![lon.len() as u64],
            values: lon,
            attrs: coordinate_attributes("longitude").to_vec(),
        },
    ]
}

/// The `nj` rows of a (regular or reduced) Gaussian grid in scanning
/// order ([`crate::geography::gaussian_rows`]), when `N` is one whose
/// latitudes are computed, the grid has that many rows and the first and
/// last latitudes are finite; the latitudes themselves are computed only
/// for coordinates, so a file naming a fine grid per object costs the
/// dimensions nothing.
fn gaussian_rows(g: &Geography<'_>, nj: usize) -> Option<Rows> {
    let first = g.number("latitudeOfFirstGridPointInDegrees")?;
    let last = g.number("latitudeOfLastGridPointInDegrees")?;
    let n = count(g, "N")?;
    let fits = geography::gaussian_rows_possible(n, nj) && first.is_finite() && last.is_finite();
    fits.then_some(Rows::Gaussian {
        n,
        first,
        last,
        count: nj,
    })
}

/// A global reduced Gaussian grid: `pl` holds the `2N` row lengths, the
/// field (`shape` = `(Σ pl,)`) every point, the first longitude is 0;
/// `pole` rotates a `reduced_rotated_gg` grid.
fn reduced_gg(g: &Geography<'_>, shape: &[u64], pole: Option<Rotation>) -> Option<Grid> {
    let [points] = shape else { return None };
    let pl: Vec<u64> = g
        .get("pl")?
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect::<Option<_>>()?;
    let total = pl.iter().try_fold(0u64, |s, &p| s.checked_add(p))?;
    let n = count(g, "N")?;
    if total != *points || Some(pl.len() as u64) != n.checked_mul(2) {
        return None;
    }
    if g.number("longitudeOfFirstGridPointInDegrees")? != 0.0 {
        return None;
    }
    let rows = gaussian_rows(g, pl.len())?;
    let points = usize::try_from(total).ok()?;
    Some(Grid::Reduced {
        rows,
        pl,
        points,
        pole,
    })
}

/// `latitude(values)` and `longitude(values)` of a reduced Gaussian grid,
/// row by row: the `j`-th point of a row of `p` points lies at
/// `j · 360 / p`; on a rotated grid each point is then unrotated, as
/// ecCodes' `GaussianReduced` geoiterator does.
fn reduced_coordinates(
    rows: &[f64],
    pl: &[u64],
    points: usize,
    pole: Option<Rotation>,
) -> Vec<GridCoordinate> {
    let (mut lat, mut lon) = (Vec::with_capacity(points), Vec::with_capacity(points));
    for (&row, &p) in rows.iter().zip(pl) {
        match pole {
            None => {
                lat.extend(std::iter::repeat_n(row, p as usize));
                lon.extend((0..p).map(|j| j as f64 * 360.0 / p as f64));
            }
            Some(pole) => {
                for j in 0..p {
                    let (a, o) = unrotate(row, j as f64 * 360.0 / p as f64, pole);
                    lat.push(a);
                    lon.push(o);
                }
            }
        }
    }
    let coordinate = |name, values| GridCoordinate {
        name,
        dims: vec![VALUES],
        shape: vec![points as u64],
        values,
        attrs: coordinate_attributes(name).to_vec(),
    };
    vec![coordinate("latitude", lat), coordinate("longitude", lon)]
}

/// How many turns beyond 360° a regular or rotated grid's last longitude
/// may lie and still be brought into range as ecCodes does (a turn at a
/// time).
const MAX_TURNS: f64 = 8.0;

/// A rotated latitude/longitude grid of `shape` = `(Nj, Ni)`, its rows and
/// columns laid out as ecCodes' `latlon` geoiterator lays them out
/// (`Regular::init`, `Latlon::init`): longitudes from the first by the
/// increment the first and last longitudes give (the coded one for a
/// single column), the last set to the last longitude; latitudes from the
/// first by the coded increment (from the first and last latitudes when
/// it is absent), the last set to the last latitude. None for points
/// not consecutive along a row, or latitudes that contradict the
/// scanning direction, as ecCodes refuses them.
fn rotated_ll(g: &Geography<'_>, shape: &[u64]) -> Option<Grid> {
    let RotatedAxes {
        nj,
        columns,
        j_positive,
    } = rotated_axes(g, shape)?;
    Some(Grid::Rotated {
        rows: latlon_rows(g, nj, j_positive)?,
        columns,
        pole: rotation(g)?,
    })
}

/// The `nj` latitudes of a latitude/longitude grid's rows, as ecCodes'
/// `Latlon` geoiterator steps them: from the first by the coded increment
/// (or the span over `nj − 1` when it is missing), each the previous minus
/// the step, the last set to the last latitude; None for first and last
/// latitudes against the scanning direction.
fn latlon_rows(g: &Geography<'_>, nj: usize, j_positive: bool) -> Option<Rows> {
    let lat1 = g.number("latitudeOfFirstGridPointInDegrees")?;
    let lat2 = g.number("latitudeOfLastGridPointInDegrees")?;
    let mut jdir = match g.number("jDirectionIncrementInDegrees") {
        Some(d) => d,
        None if nj > 1 => (lat1 - lat2).abs() / (nj - 1) as f64,
        // One row without an increment: ecCodes refuses it; its one
        // latitude is the last, as with an increment.
        None => 0.0,
    };
    let (north, south) = if j_positive {
        (lat2, lat1)
    } else {
        (lat1, lat2)
    };
    if j_positive {
        jdir = -jdir;
    }
    if south > north {
        return None;
    }
    Some(Rows::Stepped(Steps {
        first: lat1,
        step: -jdir,
        last: lat2,
        n: nj,
    }))
}

/// What a rotated latitude/longitude and a rotated Gaussian grid lay out
/// alike: `Nj` rows of `Ni` columns, `shape` = `(Nj, Ni)`, points
/// consecutive along a row.
struct RotatedAxes {
    nj: usize,
    columns: Steps,
    j_positive: bool,
}

/// The rows, columns and scanning of a rotated grid of `shape`: None for
/// counts the shape does not have, points not consecutive along a row,
/// or a scanning flag that is not a count.
fn rotated_axes(g: &Geography<'_>, shape: &[u64]) -> Option<RotatedAxes> {
    let [nj, ni] = *shape else { return None };
    if count(g, "Nj")? != nj || count(g, "Ni")? != ni || nj == 0 || ni == 0 {
        return None;
    }
    if !g.rows_consecutive() {
        return None;
    }
    let flag = |key| scanning_flag(g, key);
    // Rows alternating direction are not laid out as the geoiterator
    // lays out a rotated grid's points.
    if flag("alternativeRowScanning")? {
        return None;
    }
    let (i_negative, j_positive) = (flag("iScansNegatively")?, flag("jScansPositively")?);
    let (nj, ni) = (usize::try_from(nj).ok()?, usize::try_from(ni).ok()?);
    let columns = regular_columns(
        g.number("longitudeOfFirstGridPointInDegrees")?,
        g.number("longitudeOfLastGridPointInDegrees")?,
        ni,
        i_negative,
        || g.number("iDirectionIncrementInDegrees"),
    )?;
    Some(RotatedAxes {
        nj,
        columns,
        j_positive,
    })
}

/// A rotated grid's south pole and angle of rotation (0 when absent).
fn rotation(g: &Geography<'_>) -> Option<Rotation> {
    Some(Rotation {
        south_pole_lat: g.number("latitudeOfSouthernPoleInDegrees")?,
        south_pole_lon: g.number("longitudeOfSouthernPoleInDegrees")?,
        angle: g.number("angleOfRotationInDegrees").unwrap_or(0.0),
    })
}

/// A rotated regular Gaussian grid of `shape` = `(Nj, Ni)`: its columns
/// as a rotated latitude/longitude grid's ([`regular_columns`], ecCodes'
/// `Regular::init`), its rows the Gaussian latitudes ecCodes' `Gaussian`
/// geoiterator takes ([`gaussian_rows`]); each point unrotated as for
/// `rotated_ll`. ecCodes' `Gaussian` geoiterator itself leaves the points
/// in the rotated frame, which cfgrib then shows as latitudes and
/// longitudes (`spec/kerchunk.md` §2.1).
fn rotated_gg(g: &Geography<'_>, shape: &[u64]) -> Option<Grid> {
    let RotatedAxes { nj, columns, .. } = rotated_axes(g, shape)?;
    Some(Grid::Rotated {
        rows: gaussian_rows(g, nj)?,
        columns,
        pole: rotation(g)?,
    })
}

/// The `ni` longitudes of a regular or rotated grid's columns, as ecCodes'
/// `Regular::init` steps them: the span from the first to the last (a turn
/// more when the last lies short of the first in the scanning direction,
/// a grid across the meridian), each longitude the previous plus the
/// step, the last set to the last longitude.
fn regular_columns(
    mut lon1: f64,
    mut lon2: f64,
    ni: usize,
    i_negative: bool,
    coded: impl FnOnce() -> Option<f64>,
) -> Option<Steps> {
    let mut idir = if ni > 1 {
        let span = match (i_negative, lon1 > lon2, lon2 > lon1) {
            (true, true, _) => lon1 - lon2,
            (true, false, _) => lon1 + 360.0 - lon2,
            (false, _, true) => lon2 - lon1,
            (false, _, false) => lon2 + 360.0 - lon1,
        };
        span / (ni - 1) as f64
    } else {
        coded().unwrap_or(0.0)
    };
    if i_negative {
        idir = -idir;
    } else if lon1 + (ni as f64 - 2.0) * idir > 360.0 {
        lon1 -= 360.0;
    }
    if lon2 > 0.0 {
        if lon2 > 360.0 * MAX_TURNS {
            return None;
        }
        while lon2 > 360.0 {
            lon2 -= 360.0;
        }
    }
    Some(Steps {
        first: lon1,
        step: idir,
        last: lon2,
        n: ni,
    })
}

/// `latitude(y, x)` and `longitude(y, x)` of a rotated grid: each point
/// unrotated.
fn rotated_coordinates(rows: &[f64], columns: &[f64], pole: Rotation) -> Vec<GridCoordinate> {
    let points = rows.len() * columns.len();
    let (mut lat, mut lon) = (Vec::with_capacity(points), Vec::with_capacity(points));
    for &row in rows {
        for &column in columns {
            let (a, o) = unrotate(row, column, pole);
            lat.push(a);
            lon.push(o);
        }
    }
    two_d_coordinates([rows.len(), columns.len()], lat, lon)
}

/// `latitude(y, x)` and `longitude(y, x)` of a grid of `shape` points.
fn two_d_coordinates(shape: [usize; 2], lat: Vec<f64>, lon: Vec<f64>) -> Vec<GridCoordinate> {
    let shape = vec![shape[0] as u64, shape[1] as u64];
    let coordinate = |name, values| GridCoordinate {
        name,
        dims: vec!["y", "x"],
        shape: shape.clone(),
        values,
        attrs: coordinate_attributes(name).to_vec(),
    };
    vec![coordinate("latitude", lat), coordinate("longitude", lon)]
}

/// A rotated grid's point `(lat, lon)` in geographic latitude and
/// longitude, as ecCodes' `unrotate` computes it, arithmetic and order
/// alike: rotated onto the sphere's axes through the south pole, then
/// rounded to six decimals through single precision (ecCodes' `roundf`),
/// and the angle of rotation taken from the longitude.
fn unrotate(lat: f64, lon: f64, pole: Rotation) -> (f64, f64) {
    const DEG2RAD: f64 = std::f64::consts::PI / 180.0;
    const RAD2DEG: f64 = 180.0 / std::f64::consts::PI;
    let (latr, lonr) = (lat * DEG2RAD, lon * DEG2RAD);
    let xd = lonr.cos() * latr.cos();
    let yd = lonr.sin() * latr.cos();
    let zd = latr.sin();
    let t = -(90.0 + pole.south_pole_lat);
    let o = -pole.south_pole_lon;
    let (sin_t, cos_t) = ((DEG2RAD * t).sin(), (DEG2RAD * t).cos());
    let (sin_o, cos_o) = ((DEG2RAD * o).sin(), (DEG2RAD * o).cos());
    let x = cos_t * cos_o * xd + sin_o * yd + sin_t * cos_o * zd;
    let y = -cos_t * sin_o * xd + cos_o * yd - sin_t * sin_o * zd;
    let z = (-sin_t * xd + cos_t * zd).clamp(-1.0, 1.0);
    let round6 = |v: f64| f64::from(((v * 1_000_000.0) as f32).round()) / 1_000_000.0;
    let out_lat = round6(z.asin() * RAD2DEG);
    let out_lon = round6(y.atan2(x) * RAD2DEG) - pole.angle;
    (out_lat, out_lon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geography::gaussian_latitudes;

    fn geo(entries: &[(&str, Value)]) -> Value {
        Value::text_map(entries.iter().cloned())
    }

    fn n2(lat_first: f64, lat_last: f64) -> Vec<(&'static str, Value)> {
        vec![
            ("N", Value::Uint(2)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(lat_first)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(lat_last)),
            ("longitudeOfFirstGridPointInDegrees", Value::Uint(0)),
        ]
    }

    fn with(mut base: Vec<(&'static str, Value)>, more: &[(&'static str, Value)]) -> Value {
        base.extend(more.iter().cloned());
        Value::text_map(base)
    }

    /// A `regular_ll` grid of `ni` × `nj` points from (`lat1`, 0°) to
    /// (`lat2`, `lon2`), with `more` keys.
    fn ll(
        ni: u64,
        nj: u64,
        (lat1, lat2, lon2): (f64, f64, f64),
        more: &[(&'static str, Value)],
    ) -> Value {
        with(
            vec![
                ("gridType", Value::from("regular_ll")),
                ("Ni", Value::Uint(ni)),
                ("Nj", Value::Uint(nj)),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(lat1)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(lat2)),
                ("longitudeOfFirstGridPointInDegrees", Value::Uint(0)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(lon2)),
            ],
            more,
        )
    }

    #[test]
    fn regular_ll_rows_run_from_first_to_last() {
        let e = ll(4, 3, (90.0, -90.0, 270.0), &[]);
        let g = grid_coordinates(&e, &[3, 4]).expect("a regular_ll grid");
        assert_eq!(g.dims, ["latitude", "longitude"]);
        assert_eq!(g.coords[0].values, [90.0, 0.0, -90.0]);
        assert_eq!(g.coords[1].values, [0.0, 90.0, 180.0, 270.0]);
        assert_eq!(
            (g.coords[0].dims[0], g.coords[1].dims[0]),
            ("latitude", "longitude")
        );
        assert!(g.coords[0]
            .attrs
            .contains(&("stored_direction", "decreasing")));
        assert_eq!(grid_coordinates(&e, &[4, 3]), None);
    }

    #[test]
    fn regular_axes_are_the_views_coordinates_or_else_the_plots_placing() {
        // A grid the geography describes whole: the view's longitudes,
        // across the meridian as ecCodes steps them.
        let whole = across_the_meridian(&[]);
        let axes = regular_axes(&whole, &[3, 291]).expect("a regular grid");
        let g = grid_coordinates(&whole, &[3, 291]).unwrap();
        assert_eq!(axes.latitudes, g.coords[0].values);
        assert_eq!(axes.longitudes, g.coords[1].values);
        assert_eq!((axes.longitudes[0], axes.longitudes[290]), (-10.0, 19.0));
        // Keys missing (no Ni, Nj): the plot's placing.
        let partial = geo(&[
            ("gridType", Value::from("regular_ll")),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(350.0)),
            ("iDirectionIncrementInDegrees", Value::Float(10.0)),
        ]);
        assert_eq!(grid_coordinates(&partial, &[3, 4]), None);
        let axes = regular_axes(&partial, &[3, 4]).expect("placed by the plot's rule");
        assert_eq!(axes.longitudes, [350.0, 360.0, 370.0, 380.0]);
        // Neither places a grid scanned by columns.
        let by_columns = ll(
            4,
            3,
            (90.0, -90.0, 270.0),
            &[("jPointsAreConsecutive", Value::Uint(1))],
        );
        assert_eq!(regular_axes(&by_columns, &[4, 3]), None);
    }

    #[test]
    fn a_square_grid_scanned_by_columns_gets_no_coordinates() {
        let square = |consecutive: u64| {
            ll(
                3,
                3,
                (10.0, -10.0, 20.0),
                &[("jPointsAreConsecutive", Value::Uint(consecutive))],
            )
        };
        let rows = grid_coordinates(&square(0), &[3, 3]).expect("a regular grid");
        assert_eq!(rows.dims, ["latitude", "longitude"]);
        // Stored (Ni, Nj): a latitude along the first axis would be wrong.
        assert_eq!(grid_coordinates(&square(1), &[3, 3]), None);
        assert_eq!(grid_dims(&square(1), &[3, 3]), None);
        for grid in ["lambert", "unknown_grid"] {
            let mut g = square(1);
            if let Value::Map(m) = &mut g {
                m.retain(|(k, _)| k.as_text() != Some("gridType"));
                m.push((Value::from("gridType"), Value::from(grid)));
            }
            assert_eq!(grid_dims(&g, &[3, 3]), None, "{grid}");
        }
    }

    /// cfgrib's `alternate-scanning.grib`'s grid: 291 columns from
    /// `first` to `last` (350°, 10° W, to 19° E across the meridian).
    fn across(first: f64, last: f64, more: &[(&'static str, Value)]) -> Value {
        with(
            vec![
                ("gridType", Value::from("regular_ll")),
                ("Ni", Value::Uint(291)),
                ("Nj", Value::Uint(3)),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(51.0)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(50.8)),
                ("longitudeOfFirstGridPointInDegrees", Value::Float(first)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(last)),
                ("iDirectionIncrementInDegrees", Value::Float(0.1)),
            ],
            more,
        )
    }

    fn across_the_meridian(more: &[(&'static str, Value)]) -> Value {
        across(350.0, 19.0, more)
    }

    #[test]
    fn regular_columns_cross_the_meridian_as_eccodes_steps_them() {
        let g = grid_coordinates(&across_the_meridian(&[]), &[3, 291]).expect("a regular grid");
        let lon = &g.coords[1].values;
        // ecCodes' `Regular` geoiterator: from 350 − 360 by (19 + 360 −
        // 350) / 290, each the previous plus the step, the last 19.
        let step = (19.0 + 360.0 - 350.0) / 290.0;
        let mut at = -10.0;
        for (i, &l) in lon.iter().enumerate().take(290) {
            assert_eq!(l.to_bits(), f64::to_bits(at), "[{i}]");
            at += step;
        }
        assert_eq!(lon[290], 19.0);
        assert!(lon.windows(2).all(|w| w[0] < w[1]));
        // Scanned westwards, the same span runs the other way.
        let west = across(19.0, 350.0, &[("iScansNegatively", Value::Uint(1))]);
        let g = grid_coordinates(&west, &[3, 291]).expect("a regular grid");
        let lon = &g.coords[1].values;
        assert_eq!((lon[0], lon[290]), (19.0, 350.0));
        assert!(lon[..290].windows(2).all(|w| w[0] > w[1]));
        assert!((lon[289] - (-9.9)).abs() < 1e-9, "{}", lon[289]);
    }

    #[test]
    fn rows_that_alternate_direction_give_each_point_its_place() {
        let e = across_the_meridian(&[("alternativeRowScanning", Value::Uint(1))]);
        let g = grid_coordinates(&e, &[3, 291]).expect("a grid of alternate rows");
        assert_eq!(g.dims, ["y", "x"]);
        let (lat, lon) = (&g.coords[0], &g.coords[1]);
        assert_eq!((lat.name, lon.name), ("latitude", "longitude"));
        assert_eq!(lat.shape, [3, 291]);
        let plain = grid_coordinates(&across_the_meridian(&[]), &[3, 291]).unwrap();
        let columns = &plain.coords[1].values;
        for j in 0..3 {
            let row = &lon.values[j * 291..(j + 1) * 291];
            let want: Vec<f64> = match j % 2 {
                0 => columns.clone(),
                _ => columns.iter().rev().copied().collect(),
            };
            assert_eq!(row, want, "row {j}");
            let lats = &lat.values[j * 291..(j + 1) * 291];
            assert!(
                lats.iter().all(|&l| l == plain.coords[0].values[j]),
                "row {j}"
            );
        }
        assert_eq!(grid_dims(&e, &[3, 291]).unwrap(), ["y", "x"]);
    }

    #[test]
    fn regular_gg_rows_are_eccodes_gaussian_latitudes() {
        let lats = gaussian_latitudes(2).unwrap();
        let e = with(
            n2(59.444408, -59.444408),
            &[
                ("gridType", Value::from("regular_gg")),
                ("Nj", Value::Uint(4)),
                ("Ni", Value::Uint(8)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(315.0)),
            ],
        );
        let g = grid_coordinates(&e, &[4, 8]).expect("a regular_gg grid");
        assert_eq!(g.dims, ["latitude", "longitude"]);
        assert_eq!(g.coords[0].values, lats);
        let lon: Vec<f64> = (0..8).map(|i| 45.0 * i as f64).collect();
        assert_eq!(g.coords[1].values, lon);
        assert!(g.coords[0]
            .attrs
            .contains(&("stored_direction", "decreasing")));
        assert_eq!(g.coords[1].attrs, coordinate_attributes("longitude"));
        // The shape must be Nj × Ni.
        assert_eq!(grid_coordinates(&e, &[8, 4]), None);
        assert_eq!(grid_coordinates(&e, &[4, 8, 1]), None);
    }

    #[test]
    fn a_regular_gg_sub_area_scanning_northward_takes_its_rows() {
        // Rows 3..=10 of N32, south to north.
        let lats = gaussian_latitudes(32).unwrap();
        let round = |x: f64| (x * 1e6).round() / 1e6;
        let rows = |nj: u64| {
            geo(&[
                ("gridType", Value::from("regular_gg")),
                ("N", Value::Uint(32)),
                ("Nj", Value::Uint(nj)),
                ("Ni", Value::Uint(2)),
                (
                    "latitudeOfFirstGridPointInDegrees",
                    Value::Float(round(lats[10])),
                ),
                (
                    "latitudeOfLastGridPointInDegrees",
                    Value::Float(round(lats[3])),
                ),
                ("longitudeOfFirstGridPointInDegrees", Value::Float(10.0)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(20.0)),
            ])
        };
        let g = grid_coordinates(&rows(8), &[8, 2]).unwrap();
        let want: Vec<f64> = (3..=10).rev().map(|i| lats[i]).collect();
        assert_eq!(g.coords[0].values, want);
        assert_eq!(g.coords[1].values, [10.0, 20.0]);
        assert!(!g.coords[0].attrs.iter().any(|a| a.0 == "stored_direction"));
        // Nine rows from row 10 northward end at row 2, not at the last
        // latitude: no grid; the dimension names alone, decided without
        // computing a latitude, are the grid's.
        let nine = rows(9);
        assert_eq!(grid_coordinates(&nine, &[9, 2]), None);
        let mut cost = None;
        let built = grid_coordinates_affordable(&nine, &[9, 2], |c| cost.replace(c).is_none());
        assert_eq!((built, cost), (None, Some(9 + 2)));
        assert_eq!(
            grid_dims(&nine, &[9, 2]),
            Some(vec!["latitude", "longitude"])
        );
    }

    #[test]
    fn reduced_gg_gives_every_point_its_latitude_and_longitude() {
        let lats = gaussian_latitudes(2).unwrap();
        let pl = Value::Array([2, 4, 4, 2].map(Value::Uint).to_vec());
        let e = with(
            n2(59.444408, -59.444408),
            &[("gridType", Value::from("reduced_gg")), ("pl", pl)],
        );
        let g = grid_coordinates(&e, &[12]).expect("a reduced_gg grid");
        assert_eq!(g.dims, ["values"]);
        let lat: Vec<f64> = [2, 4, 4, 2]
            .iter()
            .zip(&lats)
            .flat_map(|(&p, &l)| std::iter::repeat_n(l, p))
            .collect();
        assert_eq!(g.coords[0].name, "latitude");
        assert_eq!(g.coords[0].values, lat);
        assert_eq!(
            g.coords[1].values,
            [0.0, 180.0, 0.0, 90.0, 180.0, 270.0, 0.0, 90.0, 180.0, 270.0, 0.0, 180.0]
        );
        assert!(g.coords.iter().all(|c| c.dims == ["values"]));
        assert_eq!(g.coords[0].attrs, coordinate_attributes("latitude"));
        // Points that are not Σ pl: the values dimension, no coordinates.
        let bare = GridCoordinates {
            dims: vec!["values"],
            coords: Vec::new(),
        };
        assert_eq!(grid_coordinates(&e, &[13]), Some(bare));
        assert_eq!(grid_coordinates(&e, &[3, 4]), None);
    }

    /// ecCodes' `rotated_ll_sfc_grib2` sample (31 × 16 points from 60°N,
    /// 0°E to 0°, 30°E every 2°) with its south pole moved to 40°S, 10°E.
    fn rotated(more: &[(&'static str, Value)]) -> Value {
        let sample = serde_json::json!({
            "gridType": "rotated_ll", "Ni": 16, "Nj": 31,
            "latitudeOfFirstGridPointInDegrees": 60.0, "latitudeOfLastGridPointInDegrees": 0.0,
            "longitudeOfFirstGridPointInDegrees": 0.0, "longitudeOfLastGridPointInDegrees": 30.0,
            "iDirectionIncrementInDegrees": 2.0, "jDirectionIncrementInDegrees": 2.0,
            "iScansNegatively": 0, "jScansPositively": 0, "jPointsAreConsecutive": 0,
            "latitudeOfSouthernPoleInDegrees": -40.0, "longitudeOfSouthernPoleInDegrees": 10.0,
            "angleOfRotationInDegrees": 0.0,
        });
        let Ok(Value::Map(mut entries)) = Value::from_json_value(&sample, 4) else {
            unreachable!("a JSON object is a map")
        };
        entries.retain(|(k, _)| more.iter().all(|(m, _)| k.as_text() != Some(*m)));
        entries.extend(more.iter().map(|(k, v)| (Value::from(*k), v.clone())));
        Value::Map(entries)
    }

    #[test]
    fn rotated_ll_points_are_unrotated_as_eccodes_unrotates_them() {
        let g = grid_coordinates(&rotated(&[]), &[31, 16]).expect("a rotated_ll grid");
        assert_eq!(g.dims, ["y", "x"]);
        let (lat, lon) = (&g.coords[0], &g.coords[1]);
        assert_eq!((lat.name, lon.name), ("latitude", "longitude"));
        assert!(g
            .coords
            .iter()
            .all(|c| c.dims == ["y", "x"] && c.shape == [31, 16]));
        assert_eq!((lat.values.len(), lon.values.len()), (496, 496));
        // ecCodes 2.50's `latitudes` and `longitudes` (through cfgrib), as
        // bits: (row, column, latitude, longitude).
        let eccodes: [(usize, usize, u64, u64); 5] = [
            (0, 0, 0x4051800000000000, 0xc065400000000000),
            (0, 1, 0x40517d803cd141a7, 0xc0659d6883771865),
            (1, 2, 0x4051f452a411c2a0, 0xc06619b4fe79ee03),
            (30, 15, 0x4044c7c71d606317, 0x4049f70da5daf07c),
            (17, 9, 0x40515f3775b81301, 0x404f3743632c1f43),
        ];
        for (j, i, la, lo) in eccodes {
            let k = j * 16 + i;
            assert_eq!(
                lat.values[k].to_bits(),
                la,
                "latitude ({j}, {i}) = {}",
                lat.values[k]
            );
            assert_eq!(
                lon.values[k].to_bits(),
                lo,
                "longitude ({j}, {i}) = {}",
                lon.values[k]
            );
        }
        // The angle of rotation turns every longitude.
        let turned = grid_coordinates(
            &rotated(&[("angleOfRotationInDegrees", Value::Float(5.0))]),
            &[31, 16],
        )
        .unwrap();
        assert_eq!(turned.coords[1].values[0], -175.0);
        assert_eq!(turned.coords[0].values, lat.values);
    }

    #[test]
    fn rotated_ll_keys_that_eccodes_refuses_give_no_coordinates() {
        let refused = [
            // Latitudes against the scanning direction.
            rotated(&[("jScansPositively", Value::from_i64(1))]),
            // Points consecutive along a column.
            rotated(&[("jPointsAreConsecutive", Value::from_i64(1))]),
            // No south pole.
            rotated(&[("latitudeOfSouthernPoleInDegrees", Value::Text("x".into()))]),
            // A last longitude that would take ecCodes 10^300 turns.
            rotated(&[("longitudeOfLastGridPointInDegrees", Value::Float(1e300))]),
        ];
        for geo in &refused {
            assert_eq!(grid_coordinates(geo, &[31, 16]), None, "{geo:?}");
        }
        assert_eq!(grid_coordinates(&rotated(&[]), &[16, 31]), None);
        assert_eq!(
            grid_coordinates(&rotated(&[]), &[496]),
            Some(GridCoordinates {
                dims: vec!["values"],
                coords: Vec::new(),
            })
        );
    }

    #[test]
    fn inconsistent_or_hostile_keys_give_no_coordinates() {
        let bare = Some(GridCoordinates {
            dims: vec!["values"],
            coords: Vec::new(),
        });
        let pl = |v: &[u64]| Value::Array(v.iter().map(|&p| Value::Uint(p)).collect());
        let reduced = |more: &[(&'static str, Value)]| {
            let mut base = n2(59.444408, -59.444408);
            base.push(("gridType", Value::from("reduced_gg")));
            base.retain(|(k, _)| !more.iter().any(|(m, _)| m == k));
            with(base, more)
        };
        // Row lengths whose sum overflows, or that are not 2N, or negative.
        let hostile = [
            reduced(&[("pl", pl(&[u64::MAX, 2, 1, 1]))]),
            reduced(&[("pl", pl(&[2, 4, 6]))]),
            reduced(&[("pl", Value::Array(vec![Value::from_i64(-1); 4]))]),
            reduced(&[("pl", Value::Text("2 4 4 2".into()))]),
            // N too large to compute, or 0; the first longitude not 0.
            reduced(&[("pl", pl(&[3, 3, 3, 3])), ("N", Value::Uint(u64::MAX))]),
            reduced(&[("pl", pl(&[])), ("N", Value::Uint(0))]),
            reduced(&[
                ("pl", pl(&[3, 3, 3, 3])),
                ("longitudeOfFirstGridPointInDegrees", Value::Float(1.0)),
            ]),
            // A first latitude no row is near the last of.
            reduced(&[
                ("pl", pl(&[3, 3, 3, 3])),
                ("latitudeOfLastGridPointInDegrees", Value::Float(80.0)),
            ]),
            reduced(&[
                ("pl", pl(&[3, 3, 3, 3])),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(f64::NAN)),
            ]),
        ];
        for e in &hostile {
            assert_eq!(grid_coordinates(e, &[12]), bare, "{e:?}");
        }
        // Counts the shape does not have, however large.
        let regular = |grid: &str, nj: u64, ni: u64, n: u64| {
            let mut base = n2(59.444408, -59.444408);
            base.retain(|(k, _)| *k != "N");
            with(
                base,
                &[
                    ("gridType", Value::from(grid)),
                    ("Nj", Value::Uint(nj)),
                    ("Ni", Value::Uint(ni)),
                    ("N", Value::Uint(n)),
                    ("longitudeOfLastGridPointInDegrees", Value::Float(315.0)),
                ],
            )
        };
        for e in [
            regular("regular_gg", 4, u64::MAX, 2),
            regular("regular_gg", u64::MAX, 8, 2),
            regular("regular_gg", 4, 8, u64::MAX),
            regular("regular_gg", 4, 8, 1 << 40),
            regular("regular_gg", 4, 8, 0),
            regular("regular_ll", 4, u64::MAX, 2),
            regular("rotated_ll", 4, 8, 2),
        ] {
            assert_eq!(grid_coordinates(&e, &[4, 8]), None, "{e:?}");
        }
        assert!(grid_coordinates(&regular("regular_gg", 4, 8, 2), &[4, 8]).is_some());
        // More rows than the grid has.
        assert_eq!(
            grid_coordinates(&regular("regular_gg", 5, 8, 2), &[5, 8]),
            None
        );
        // No geography map, or an empty one: no grid dimensions.
        assert_eq!(grid_coordinates(&Value::Uint(3), &[12]), None);
        assert_eq!(grid_coordinates(&geo(&[]), &[12]), None);
        // Any other 1-d field with a geography: the values dimension.
        let other = geo(&[("gridType", Value::from("sh"))]);
        assert_eq!(grid_coordinates(&other, &[12]), bare);
        assert_eq!(grid_coordinates(&other, &[3, 4]), None);
    }

    /// A field whose shape is a claim no payload backs (a few bytes of a
    /// hostile file): its grid's dimensions, and coordinates only within
    /// [`MAX_GRID_COORDINATE_VALUES`]; nothing is allocated along the
    /// shape.
    #[test]
    fn a_claimed_shape_beyond_the_coordinate_budget_keeps_its_dims_without_coordinates() {
        let regular_ll = |nj: u64, ni: u64| {
            geo(&[
                ("gridType", Value::from("regular_ll")),
                ("Nj", Value::Uint(nj)),
                ("Ni", Value::Uint(ni)),
                ("latitudeOfFirstGridPointInDegrees", Value::Float(90.0)),
                ("latitudeOfLastGridPointInDegrees", Value::Float(-90.0)),
                ("longitudeOfFirstGridPointInDegrees", Value::Uint(0)),
                ("longitudeOfLastGridPointInDegrees", Value::Float(359.0)),
            ])
        };
        let dims_only = |dims: &[&'static str]| {
            Some(GridCoordinates {
                dims: dims.to_vec(),
                coords: Vec::new(),
            })
        };
        let huge = 1u64 << 40;
        for shape in [[huge, 2], [2, huge], [huge, huge]] {
            let e = regular_ll(shape[0], shape[1]);
            assert_eq!(grid_dims(&e, &shape), Some(vec!["latitude", "longitude"]));
            assert_eq!(
                grid_coordinates(&e, &shape),
                dims_only(&["latitude", "longitude"])
            );
        }
        // A rotated grid whose two 2-d coordinates would hold just over
        // the budget (2,048 values more), and one of a few points.
        let rows = MAX_GRID_COORDINATE_VALUES / 2 / 1024 + 1;
        let (rotated_rows, ni) = (
            rotated(&[("Nj", Value::Uint(rows)), ("Ni", Value::Uint(1024))]),
            1024,
        );
        assert_eq!(
            grid_coordinates(&rotated_rows, &[rows, ni]),
            dims_only(&["y", "x"])
        );
        let small = grid_coordinates(&rotated(&[]), &[31, 16]).expect("a rotated_ll grid");
        assert_eq!(small.coords.len(), 2);
        let pl = Value::Array(vec![Value::Uint(huge); 4]);
        let mut reduced = n2(59.444408, -59.444408);
        reduced.extend([("gridType", Value::from("reduced_gg")), ("pl", pl)]);
        assert_eq!(
            grid_coordinates(&Value::text_map(reduced), &[4 * huge]),
            dims_only(&["values"])
        );
    }

    /// A grid of rows and columns the view computes no points for (an
    /// Albers, transverse Mercator… grid) shares `y` and `x`, as projected
    /// grids do, when its shape is `(Nj, Ni)`.
    #[test]
    fn other_grids_of_rows_and_columns_get_y_and_x() {
        let albers = geo(&[
            ("gridType", Value::from("albers")),
            ("Nj", Value::Uint(3)),
            ("Ni", Value::Uint(4)),
        ]);
        let dims_only = Some(GridCoordinates {
            dims: vec!["y", "x"],
            coords: Vec::new(),
        });
        assert_eq!(grid_coordinates(&albers, &[3, 4]), dims_only);
        assert_eq!(grid_dims(&albers, &[3, 4]), Some(vec!["y", "x"]));
        // Another shape, or no grid type: no grid dimensions.
        assert_eq!(grid_coordinates(&albers, &[4, 3]), None);
        assert_eq!(
            grid_coordinates(&albers, &[12]).map(|g| g.dims),
            Some(vec!["values"])
        );
        let untyped = geo(&[("Nj", Value::Uint(3)), ("Ni", Value::Uint(4))]);
        assert_eq!(grid_coordinates(&untyped, &[3, 4]), None);
    }

    /// A rotated Gaussian grid: the Gaussian rows of N2 by eight columns,
    /// each point unrotated; its reduced twin, each row's points unrotated.
    #[test]
    fn rotated_gaussian_grids_unrotate_their_gaussian_points() {
        let pole = [
            ("latitudeOfSouthernPoleInDegrees", Value::Float(-30.0)),
            ("longitudeOfSouthernPoleInDegrees", Value::Float(10.0)),
        ];
        let turned = Rotation {
            south_pole_lat: -30.0,
            south_pole_lon: 10.0,
            angle: 0.0,
        };
        let rows = gaussian_latitudes(2).expect("N2");
        let mut keys = n2(rows[0], rows[3]);
        keys.extend([
            ("gridType", Value::from("rotated_gg")),
            ("Nj", Value::Uint(4)),
            ("Ni", Value::Uint(8)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(315.0)),
        ]);
        let g = grid_coordinates(&with(keys, &pole), &[4, 8]).expect("a rotated_gg grid");
        assert_eq!(g.dims, ["y", "x"]);
        assert_eq!(g.coords[0].shape, [4, 8]);
        for (j, &row) in rows.iter().enumerate() {
            for i in 0..8 {
                let (lat, lon) = unrotate(row, 45.0 * i as f64, turned);
                assert_eq!(g.coords[0].values[j * 8 + i], lat, "{j} {i}");
                assert_eq!(g.coords[1].values[j * 8 + i], lon, "{j} {i}");
            }
        }
        // Without its pole it is no grid the view knows.
        let mut keys = n2(rows[0], rows[3]);
        keys.extend([
            ("gridType", Value::from("rotated_gg")),
            ("Nj", Value::Uint(4)),
            ("Ni", Value::Uint(8)),
        ]);
        assert_eq!(grid_coordinates(&Value::text_map(keys), &[4, 8]), None);

        let mut keys = n2(rows[0], rows[3]);
        let pl = Value::Array([2u64, 4, 4, 2].map(Value::Uint).to_vec());
        keys.extend([("gridType", Value::from("reduced_rotated_gg")), ("pl", pl)]);
        let g = grid_coordinates(&with(keys, &pole), &[12]).expect("a reduced_rotated_gg grid");
        assert_eq!(g.dims, ["values"]);
        let (lat, lon) = unrotate(rows[1], 90.0, turned);
        assert_eq!((g.coords[0].values[3], g.coords[1].values[3]), (lat, lon));
    }
}
