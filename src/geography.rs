//! Where a field's values lie on the globe, from the `geography` map that
//! `convert-grib` writes into an object's metadata (`spec/plot.md` §3):
//! which stored row is northernmost, the latitude of each row (Gaussian
//! latitudes for Gaussian grids), and the longitude of each column of a
//! regular grid. `tgm plot` and the viewer (`spec/wasm.md` §4) both place
//! fields by these rules.

use crate::cbor::Value;

/// Largest N for which Gaussian latitudes are computed (O(N²) work);
/// beyond it rows are taken as equally spaced.
pub const MAX_GAUSSIAN_N: u64 = 4096;

/// A `geography` map.
#[derive(Debug, Clone, Copy)]
pub struct Geography<'a> {
    map: &'a Value,
}

/// The latitude of every row and the longitude of every column of a
/// regular 2-D field, in stored order, degrees.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    /// One per row (the object's first axis).
    pub latitudes: Vec<f64>,
    /// One per column (the object's second axis).
    pub longitudes: Vec<f64>,
}

impl<'a> Geography<'a> {
    /// The map `value`, if it is one.
    pub fn new(value: &'a Value) -> Option<Geography<'a>> {
        value.as_map().map(|_| Geography { map: value })
    }

    /// The key's value as a finite number.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.map.get(key)?.as_f64().filter(|x| x.is_finite())
    }

    /// The key's value as an integer.
    pub fn integer(&self, key: &str) -> Option<i64> {
        self.map.get(key)?.as_i64()
    }

    /// `gridType` (`regular_ll`, `regular_gg`, `reduced_gg`, …).
    pub fn grid_type(&self) -> Option<&'a str> {
        self.map.get("gridType")?.as_text()
    }

    /// The key's value.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// Whether the first row is the southernmost: the first latitude below
    /// the last, else `jScansPositively` = 1.
    pub fn south_first(&self) -> bool {
        match (
            self.number("latitudeOfFirstGridPointInDegrees"),
            self.number("latitudeOfLastGridPointInDegrees"),
        ) {
            (Some(a), Some(b)) => a < b,
            _ => self.integer("jScansPositively") == Some(1),
        }
    }

    /// Latitudes of `rows` rows in stored order: the Gaussian latitudes of
    /// N when the grid is Gaussian (`gridType` ending in `_gg`) with 2N
    /// rows and N ≤ [`MAX_GAUSSIAN_N`], else equally spaced from the first
    /// to the last latitude (90 to −90 when they are missing).
    pub fn row_latitudes(&self, rows: usize) -> Vec<f64> {
        let gaussian = self.grid_type().is_some_and(|t| t.ends_with("_gg"));
        let n = self.integer("N").and_then(|n| u64::try_from(n).ok());
        let mut lats = match n {
            Some(n) if gaussian && n <= MAX_GAUSSIAN_N && 2 * n == rows as u64 => {
                gaussian_latitudes(n as usize)
            }
            _ => {
                let a = self
                    .number("latitudeOfFirstGridPointInDegrees")
                    .unwrap_or(90.0);
                let b = self
                    .number("latitudeOfLastGridPointInDegrees")
                    .unwrap_or(-90.0);
                let (hi, lo) = (a.max(b), a.min(b));
                let step = if rows > 1 {
                    (hi - lo) / (rows - 1) as f64
                } else {
                    0.0
                };
                (0..rows).map(|r| hi - step * r as f64).collect()
            }
        };
        if self.south_first() {
            lats.reverse();
        }
        lats
    }

    /// Longitudes of `cols` columns in stored order: from the first
    /// longitude (0 when missing), eastward (westward when
    /// `iScansNegatively` = 1), by `iDirectionIncrementInDegrees`, else by
    /// the span from the first to the last longitude over `cols − 1`
    /// steps, else by 360 / `cols`.
    pub fn column_longitudes(&self, cols: usize) -> Vec<f64> {
        let first = self
            .number("longitudeOfFirstGridPointInDegrees")
            .unwrap_or(0.0);
        let west = self.integer("iScansNegatively") == Some(1);
        let span = self
            .number("longitudeOfLastGridPointInDegrees")
            .filter(|_| cols > 1)
            .map(|last| {
                let d = if west { first - last } else { last - first };
                d.rem_euclid(360.0) / (cols - 1) as f64
            })
            .filter(|&s| s > 0.0);
        let step = self
            .number("iDirectionIncrementInDegrees")
            .map(f64::abs)
            .filter(|&s| s > 0.0)
            .or(span)
            .unwrap_or(360.0 / cols.max(1) as f64);
        let step = if west { -step } else { step };
        (0..cols).map(|j| first + step * j as f64).collect()
    }

    /// Row latitudes and column longitudes of an object of `shape` when
    /// it is a regular grid stored row by row: two axes, `gridType`
    /// missing or `regular_ll` or `regular_gg`, `jPointsAreConsecutive`
    /// not 1. Other grids (reduced, rotated, projected, transposed) are
    /// none.
    pub fn regular_axes(&self, shape: &[u64]) -> Option<Axes> {
        let [rows, cols] = shape else { return None };
        let regular = matches!(self.grid_type(), None | Some("regular_ll" | "regular_gg"));
        if !regular || self.integer("jPointsAreConsecutive") == Some(1) {
            return None;
        }
        let (rows, cols) = (usize::try_from(*rows).ok()?, usize::try_from(*cols).ok()?);
        Some(Axes {
            latitudes: self.row_latitudes(rows),
            longitudes: self.column_longitudes(cols),
        })
    }
}

/// The 2N latitudes (degrees, north to south) of the Gaussian grid N: the
/// arcsines of the roots of the Legendre polynomial of degree 2N, found by
/// Newton's method from the usual first guesses.
pub fn gaussian_latitudes(n: usize) -> Vec<f64> {
    let deg = 2 * n;
    let mut north = Vec::with_capacity(n);
    for i in 1..=n {
        let mut z = (std::f64::consts::PI * (i as f64 - 0.25) / (deg as f64 + 0.5)).cos();
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=deg {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let dp = deg as f64 * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-15 {
                break;
            }
        }
        north.push(z.asin().to_degrees());
    }
    let south = north.iter().rev().map(|l| -l);
    north.iter().copied().chain(south).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(entries: &[(&str, Value)]) -> Value {
        Value::text_map(entries.iter().cloned())
    }

    #[test]
    fn gaussian_latitudes_of_n2_and_n32() {
        // Legendre P4 roots: ±sqrt(3/7 ± 2/7·sqrt(6/5)).
        let l = gaussian_latitudes(2);
        let r = |s: f64| (3.0 / 7.0 + s * 2.0 / 7.0 * (6.0f64 / 5.0).sqrt()).sqrt();
        let want = [r(1.0), r(-1.0), -r(-1.0), -r(1.0)].map(|z| z.asin().to_degrees());
        for (a, b) in l.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        // First latitudes of N16 and N32 as ecCodes gives them.
        let l = gaussian_latitudes(32);
        assert!((l[0] - 87.8638).abs() < 1e-4, "{}", l[0]);
        assert!((gaussian_latitudes(16)[0] - 85.7606).abs() < 1e-4);
    }

    #[test]
    fn a_regular_grid_has_its_rows_and_columns_placed() {
        let g = geo(&[
            ("gridType", Value::from("regular_ll")),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(90.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(-90.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(359.0)),
            ("iDirectionIncrementInDegrees", Value::Float(1.0)),
        ]);
        let a = Geography::new(&g)
            .unwrap()
            .regular_axes(&[181, 360])
            .unwrap();
        assert_eq!(a.latitudes[0], 90.0);
        assert_eq!(a.latitudes[90], 0.0);
        assert_eq!(a.latitudes[180], -90.0);
        assert_eq!(a.longitudes[0], 0.0);
        assert_eq!(a.longitudes[359], 359.0);
        // South first, westward, no increment: from the span.
        let g = geo(&[
            ("latitudeOfFirstGridPointInDegrees", Value::Float(-10.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(10.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(20.0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(-20.0)),
            ("iScansNegatively", Value::from_i64(1)),
        ]);
        let a = Geography::new(&g).unwrap().regular_axes(&[3, 5]).unwrap();
        assert_eq!(a.latitudes, [-10.0, 0.0, 10.0]);
        assert_eq!(a.longitudes, [20.0, 10.0, 0.0, -10.0, -20.0]);
    }

    #[test]
    fn a_regular_gaussian_grid_has_gaussian_rows() {
        let g = geo(&[
            ("gridType", Value::from("regular_gg")),
            ("N", Value::from_i64(32)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
        ]);
        let a = Geography::new(&g)
            .unwrap()
            .regular_axes(&[64, 128])
            .unwrap();
        assert_eq!(a.latitudes, gaussian_latitudes(32));
        assert_eq!(a.longitudes[1], 360.0 / 128.0);
        // Other layouts are not regular grids.
        let gg = Geography::new(&g).unwrap();
        assert!(gg.regular_axes(&[64 * 128]).is_none());
        let reduced = geo(&[("gridType", Value::from("reduced_gg"))]);
        assert!(Geography::new(&reduced)
            .unwrap()
            .regular_axes(&[2, 4])
            .is_none());
        let transposed = geo(&[("jPointsAreConsecutive", Value::from_i64(1))]);
        assert!(Geography::new(&transposed)
            .unwrap()
            .regular_axes(&[2, 4])
            .is_none());
        assert!(Geography::new(&Value::from_i64(3)).is_none());
    }
}
