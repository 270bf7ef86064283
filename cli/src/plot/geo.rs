//! North up: the orientation of fields that carry the `geography` map
//! `convert-grib` writes (`spec/plot.md` §3).

use tgm::cbor::Value;

use super::panel::{Layout, Orientation, Panel};
use super::slice::Plane;

/// Largest N for which Gaussian latitudes are computed (O(N²) work);
/// beyond it rows are drawn equally spaced.
const MAX_GAUSSIAN_N: u64 = 4096;

/// The `geography` keys that place a field.
struct Geography<'a> {
    map: &'a Value,
}

impl Geography<'_> {
    fn num(&self, k: &str) -> Option<f64> {
        self.map.get(k)?.as_f64().filter(|x| x.is_finite())
    }

    fn int(&self, k: &str) -> Option<i64> {
        self.map.get(k)?.as_i64()
    }

    fn grid_type(&self) -> Option<&str> {
        self.map.get("gridType")?.as_text()
    }

    /// Whether the first row is the southernmost: the first latitude below
    /// the last, else `jScansPositively`.
    fn south_first(&self) -> bool {
        match (
            self.num("latitudeOfFirstGridPointInDegrees"),
            self.num("latitudeOfLastGridPointInDegrees"),
        ) {
            (Some(a), Some(b)) => a < b,
            _ => self.int("jScansPositively") == Some(1),
        }
    }

    /// Latitudes of `rows` rows in stored order: Gaussian when the grid is
    /// a whole Gaussian grid of N = rows / 2, else equally spaced from the
    /// first to the last latitude (90 to -90 when they are missing).
    fn row_lats(&self, rows: usize) -> Vec<f64> {
        let gaussian = self.grid_type().is_some_and(|t| t.ends_with("_gg"));
        let n = self.int("N").and_then(|n| u64::try_from(n).ok());
        let mut lats = match n {
            Some(n) if gaussian && n <= MAX_GAUSSIAN_N && 2 * n == rows as u64 => {
                gaussian_latitudes(n as usize)
            }
            _ => {
                let a = self
                    .num("latitudeOfFirstGridPointInDegrees")
                    .unwrap_or(90.0);
                let b = self
                    .num("latitudeOfLastGridPointInDegrees")
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
}

/// The panel of an object of `shape` (with `elements` elements) whose
/// metadata has a `geography` map; `None` when it has none or the
/// object is not a single field.
pub fn panel(
    geography: Option<&Value>,
    shape: &[u64],
    elements: u64,
) -> Result<Option<Panel>, String> {
    let Some(map) = geography.filter(|g| g.as_map().is_some()) else {
        return Ok(None);
    };
    let g = Geography { map };
    if let Some(pl) = map.get("pl").and_then(Value::as_array) {
        if shape.len() == 1 {
            return reduced(&g, pl, elements).map(Some);
        }
    }
    let dims: Vec<u64> = shape.iter().copied().filter(|&n| n > 1).collect();
    if dims.len() != 2 || shape.len() != 2 {
        return Ok(None);
    }
    let transpose = g.int("jPointsAreConsecutive") == Some(1);
    if g.grid_type() == Some("regular_gg") && !transpose {
        return Ok(Some(rows_panel(
            &g,
            vec![shape[1]; shape[0] as usize],
            "regular Gaussian",
        )));
    }
    let step = |k: &str| g.num(k).map(f64::abs).filter(|&s| s > 0.0).unwrap_or(1.0);
    let o = Orientation {
        transpose,
        flip_v: g.south_first(),
        flip_h: g.int("iScansNegatively") == Some(1),
        spacing: (
            step("jDirectionIncrementInDegrees"),
            step("iDirectionIncrementInDegrees"),
        ),
        edges: Some(["W", "E", "N", "S"]),
        name: None,
    };
    let plane = Plane {
        at: vec![0, 0],
        rows: 0,
        cols: 1,
    };
    let mut p = Panel::grid(shape, &plane, &o);
    p.label = format!("{} (north up)", g.grid_type().unwrap_or("grid"));
    Ok(Some(p))
}

/// A reduced grid: `pl` points per row, summing to `elements`.
fn reduced(g: &Geography, pl: &[Value], elements: u64) -> Result<Panel, String> {
    let lens: Option<Vec<u64>> = pl.iter().map(Value::as_u64).collect();
    let lens = lens.ok_or("geography.pl holds a value that is not a count of points")?;
    let total = lens
        .iter()
        .try_fold(0u64, |a, &n| a.checked_add(n))
        .unwrap_or(u64::MAX);
    if total != elements || total == 0 {
        return Err(format!(
            "geography.pl gives {total} points in {} rows, but the object has {elements} values",
            lens.len()
        ));
    }
    Ok(rows_panel(g, lens, "reduced Gaussian"))
}

/// Rows of `lens` points, stored in order, at their latitudes, north up.
fn rows_panel(g: &Geography, lens: Vec<u64>, what: &str) -> Panel {
    let lats = g.row_lats(lens.len());
    let mut rows: Vec<(f64, u64, u64)> = Vec::with_capacity(lens.len());
    let mut start = 0;
    for (&lat, &n) in lats.iter().zip(&lens) {
        if n > 0 {
            rows.push((lat, start, n));
        }
        start += n;
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let lats: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let half = |a: usize, b: usize| match (lats.get(a), lats.get(b)) {
        (Some(x), Some(y)) => (x - y).abs() / 2.0,
        _ => 0.5,
    };
    let k = lats.len();
    let (top, bottom) = (
        lats[0] + half(0, 1),
        lats[k - 1] - half(k.saturating_sub(2), k - 1),
    );
    let widest = lens.iter().copied().max().unwrap_or(1);
    Panel {
        aspect: widest as f64 / k as f64,
        layout: Layout::Rows {
            starts: rows.iter().map(|r| r.1).collect(),
            lens: rows.iter().map(|r| r.2).collect(),
            lats,
            top,
            bottom,
        },
        label: format!("{what}, {k} rows (north up)"),
        edges: Some(["W", "E", "N", "S"]),
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

    fn geo(entries: &[(&str, Value)]) -> Value {
        Value::text_map(entries.iter().cloned())
    }

    #[test]
    fn south_first_fields_are_flipped() {
        let g = geo(&[
            ("gridType", Value::from("regular_ll")),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(-90.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(90.0)),
        ]);
        let p = panel(Some(&g), &[3, 4], 12).unwrap().unwrap();
        assert_eq!(p.element(0, 0, 4, 3), 8);
        let g = geo(&[("jScansPositively", Value::from_i64(0))]);
        let p = panel(Some(&g), &[3, 4], 12).unwrap().unwrap();
        assert_eq!(p.element(0, 0, 4, 3), 0);
    }

    #[test]
    fn reduced_rows_must_cover_the_values() {
        let pl = Value::Array([2, 4, 4, 2].map(Value::from_i64).to_vec());
        let g = geo(&[
            ("gridType", Value::from("reduced_gg")),
            ("N", Value::from_i64(2)),
            ("pl", pl),
        ]);
        let p = panel(Some(&g), &[12], 12).unwrap().unwrap();
        let Layout::Rows { lens, lats, .. } = &p.layout else {
            panic!("rows")
        };
        assert_eq!(lens, &[2, 4, 4, 2]);
        assert_eq!(lats, &gaussian_latitudes(2));
        assert!(panel(Some(&g), &[13], 13)
            .unwrap_err()
            .contains("12 points"));
    }
}
