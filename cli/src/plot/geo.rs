//! North up: the orientation of fields that carry the `geography` map
//! `convert-grib` writes (`spec/plot.md` §3).

use tgm::cbor::Value;
use tgm::geography::Geography;

use super::panel::{Layout, Orientation, Panel};
use super::slice::Plane;

/// The panel of an object of `shape` (with `elements` elements) whose
/// metadata has a `geography` map; `None` when it has none or the
/// object is not a single field.
pub fn panel(
    geography: Option<&Value>,
    shape: &[u64],
    elements: u64,
) -> Result<Option<Panel>, String> {
    let Some(g) = geography.and_then(Geography::new) else {
        return Ok(None);
    };
    if let Some(pl) = g.get("pl").and_then(Value::as_array) {
        if shape.len() == 1 {
            return reduced(&g, pl, elements).map(Some);
        }
    }
    let dims: Vec<u64> = shape.iter().copied().filter(|&n| n > 1).collect();
    if dims.len() != 2 || shape.len() != 2 {
        return Ok(None);
    }
    let transpose = g.integer("jPointsAreConsecutive") == Some(1);
    if g.grid_type() == Some("regular_gg") && !transpose {
        return Ok(Some(rows_panel(
            &g,
            vec![shape[1]; shape[0] as usize],
            "regular Gaussian",
        )));
    }
    let step = |k: &str| {
        g.number(k)
            .map(f64::abs)
            .filter(|&s| s > 0.0)
            .unwrap_or(1.0)
    };
    let o = Orientation {
        transpose,
        flip_v: g.south_first(),
        flip_h: g.integer("iScansNegatively") == Some(1),
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
    let lats = g.row_latitudes(lens.len());
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(lats, &tgm::geography::gaussian_latitudes(2).unwrap());
        assert!(panel(Some(&g), &[13], 13)
            .unwrap_err()
            .contains("12 points"));
    }
}
