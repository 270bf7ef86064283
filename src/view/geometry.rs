//! Where the voxels of a medical volume lie: the LPS affine its
//! converter records as `geometry.affine_lps` (`spec/convert.md`,
//! "Medical geometry"), read once for every door. Voxel index `(i, j, k)`
//! runs along the last, second-last and third-last axes of the object.

use serde_json::{json, Value as Json};

use crate::cbor::Value;
use crate::descriptor::Map;

/// A 4×4 affine, row by row.
pub type Affine = [[f64; 4]; 4];

/// `v` as a 4×4 affine: four rows of four finite numbers.
pub fn affine_from_value(v: &Value) -> Option<Affine> {
    let rows = v.as_array().filter(|a| a.len() == 4)?;
    let mut m = [[0.0; 4]; 4];
    for (out, row) in m.iter_mut().zip(rows) {
        let row = row.as_array().filter(|a| a.len() == 4)?;
        for (x, v) in out.iter_mut().zip(row) {
            *x = v.as_f64().filter(|x| x.is_finite())?;
        }
    }
    Some(m)
}

/// A volume's voxel geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct VoxelGeometry {
    /// Voxel index `(i, j, k, 1)` to LPS millimetres `(x, y, z, 1)`.
    pub affine_lps: Affine,
}

impl VoxelGeometry {
    /// The geometry an entry records (`geometry.affine_lps`); None
    /// without one or when it is not a 4×4 array of finite numbers.
    pub fn of(entry: Option<&Map>) -> Option<VoxelGeometry> {
        let g = entry?.get("geometry")?;
        Some(VoxelGeometry {
            affine_lps: affine_from_value(g.get("affine_lps")?)?,
        })
    }

    /// The distance in millimetres between neighbouring voxels along each
    /// axis of an object of `ndim` axes: the lengths of the affine's
    /// columns for the last three axes, None for the axes before them.
    pub fn spacing(&self, ndim: usize) -> Vec<Option<f64>> {
        let column = |c: usize| {
            let a = &self.affine_lps;
            (a[0][c] * a[0][c] + a[1][c] * a[1][c] + a[2][c] * a[2][c]).sqrt()
        };
        (0..ndim)
            .map(|axis| {
                let from_last = ndim - 1 - axis;
                (from_last < 3).then(|| column(from_last))
            })
            .collect()
    }

    /// The LPS position in millimetres of voxel `(i, j, k)`.
    pub fn position(&self, ijk: [f64; 3]) -> [f64; 3] {
        let a = &self.affine_lps;
        let row = |r: usize| a[r][0] * ijk[0] + a[r][1] * ijk[1] + a[r][2] * ijk[2] + a[r][3];
        [row(0), row(1), row(2)]
    }

    /// As JSON for an object of `ndim` axes: `{"frame": "LPS", "affine":
    /// rows, "spacing": per axis (null before the last three), "origin":
    /// voxel (0, 0, 0)}`.
    pub fn to_json(&self, ndim: usize) -> Json {
        json!({
            "frame": "LPS",
            "affine": self.affine_lps,
            "spacing": self.spacing(ndim),
            "origin": self.position([0.0; 3]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn affine_value(m: &Affine) -> Value {
        Value::Array(
            m.iter()
                .map(|r| Value::Array(r.iter().map(|&x| Value::Float(x)).collect()))
                .collect(),
        )
    }

    fn entry_with(affine: Value) -> Map {
        let mut e = Map::new();
        e.insert("geometry".into(), Value::text_map([("affine_lps", affine)]));
        e
    }

    #[test]
    fn spacing_and_positions_follow_the_affine_columns() {
        let a = [
            [0.0, 0.0, 2.5, -10.0],
            [0.5, 0.0, 0.0, 20.0],
            [0.0, -0.75, 0.0, 30.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let g = VoxelGeometry::of(Some(&entry_with(affine_value(&a)))).expect("a geometry");
        assert_eq!(g.spacing(4), [None, Some(2.5), Some(0.75), Some(0.5)]);
        assert_eq!(g.spacing(2), [Some(0.75), Some(0.5)]);
        assert_eq!(g.position([2.0, 4.0, 1.0]), [-7.5, 21.0, 27.0]);
        let j = g.to_json(3);
        assert_eq!(j["origin"], json!([-10.0, 20.0, 30.0]));
        assert_eq!(j["frame"], "LPS");
    }

    #[test]
    fn malformed_affines_give_no_geometry() {
        let short = Value::Array(vec![Value::Array(vec![Value::Float(1.0); 4]); 3]);
        let mut nan = [[0.0; 4]; 4];
        nan[1][2] = f64::NAN;
        let text = Value::Array(vec![Value::Array(vec![Value::from("x"); 4]); 4]);
        for bad in [short, affine_value(&nan), text, Value::Uint(1)] {
            assert_eq!(VoxelGeometry::of(Some(&entry_with(bad))), None);
        }
        assert_eq!(VoxelGeometry::of(None), None);
    }
}
