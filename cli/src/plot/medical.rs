//! Medical volumes on screen: the plane each panel shows (axial, coronal,
//! sagittal) and its directions from `geometry.affine_lps`
//! (`spec/convert.md` "Medical geometry"), in the radiological or the
//! neurological convention (`spec/plot.md` §4).

use tgm::cbor::Value;

use super::panel::Orientation;
use super::slice::Plane;

/// Which side of the picture the patient's left is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Convention {
    /// As if facing the patient: the patient's left on the picture's right.
    Radiological,
    /// As if looking from behind: the patient's left on the picture's left.
    Neurological,
}

impl Convention {
    /// The sentence stating the convention in the picture.
    pub fn statement(self) -> &'static str {
        match self {
            Convention::Radiological => "radiological convention: patient's left on the right",
            Convention::Neurological => "neurological convention: patient's left on the left",
        }
    }
}

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The voxel-index columns i, j, k of a 4×4 `affine_lps`, when every
/// entry is a finite number and every column has a length.
fn columns(geometry: &Value) -> Option<[V3; 3]> {
    let rows = geometry.get("affine_lps")?.as_array()?;
    if rows.len() < 3 {
        return None;
    }
    let mut m = [[0.0; 4]; 3];
    for (r, row) in rows.iter().take(3).enumerate() {
        let row = row.as_array()?;
        for (c, x) in m[r].iter_mut().enumerate() {
            *x = row.get(c)?.as_f64().filter(|x| x.is_finite())?;
        }
    }
    let cols = [0, 1, 2].map(|c| [m[0][c], m[1][c], m[2][c]]);
    cols.iter()
        .all(|c| dot(*c, *c).sqrt() > 0.0)
        .then_some(cols)
}

/// The orientation of `plane` of a volume of `shape` with `geometry`, or
/// `None` when the plane's axes are not among the volume's i, j, k or the
/// geometry is unusable.
pub fn orientation(
    geometry: Option<&Value>,
    shape: &[u64],
    plane: &Plane,
    convention: Convention,
) -> Option<Orientation> {
    let cols = columns(geometry?)?;
    let rank = shape.len();
    let column = |axis: usize| (axis + 3 >= rank).then(|| cols[rank - 1 - axis]);
    let (down, right) = (column(plane.rows)?, column(plane.cols)?);
    let normal = cross(down, right);
    let side = if convention == Convention::Radiological {
        1.0
    } else {
        -1.0
    };
    let lr = match convention {
        Convention::Radiological => ("R", "L"),
        Convention::Neurological => ("L", "R"),
    };
    let big = (0..3)
        .max_by(|&a, &b| normal[a].abs().total_cmp(&normal[b].abs()))
        .unwrap_or(2);
    // Screen right and screen down in LPS, and the edge letters.
    let (name, want_r, want_d, edges) = match big {
        0 => (
            "sagittal",
            [0.0, 1.0, 0.0],
            [0.0, 0.0, -1.0],
            ["A", "P", "S", "I"],
        ),
        1 => (
            "coronal",
            [side, 0.0, 0.0],
            [0.0, 0.0, -1.0],
            [lr.0, lr.1, "S", "I"],
        ),
        _ => (
            "axial",
            [side, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [lr.0, lr.1, "A", "P"],
        ),
    };
    let transpose = dot(down, want_r).abs() > dot(right, want_r).abs();
    let (v, h) = if transpose {
        (right, down)
    } else {
        (down, right)
    };
    Some(Orientation {
        transpose,
        flip_v: dot(v, want_d) < 0.0,
        flip_h: dot(h, want_r) < 0.0,
        spacing: (dot(v, v).sqrt(), dot(h, h).sqrt()),
        edges: Some(edges),
        name: Some(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An affine of diagonal `d` (LPS), no translation.
    fn geometry(d: [f64; 3]) -> Value {
        let row = |r: usize| {
            Value::Array(
                (0..4)
                    .map(|c| Value::Float(if c == r { d[r] } else { 0.0 }))
                    .collect(),
            )
        };
        let mut rows: Vec<Value> = (0..3).map(row).collect();
        rows.push(Value::Array(
            [0.0, 0.0, 0.0, 1.0].map(Value::Float).to_vec(),
        ));
        Value::text_map([("affine_lps", Value::Array(rows))])
    }

    fn plane(rows: usize, cols: usize) -> Plane {
        Plane {
            at: vec![0; 3],
            rows,
            cols,
        }
    }

    #[test]
    fn an_ras_volume_is_flipped_to_radiological_and_neurological() {
        // NIfTI RAS voxels: i to the patient's right in LPS (-x), j anterior (-y).
        let g = geometry([-1.0, -2.0, 3.0]);
        let shape = [4, 5, 6];
        let ax = orientation(Some(&g), &shape, &plane(1, 2), Convention::Radiological).unwrap();
        assert_eq!(ax.name, Some("axial"));
        // i runs to the patient's right and j anteriorly: both reversed.
        assert!(ax.flip_h && ax.flip_v && !ax.transpose);
        assert_eq!(ax.spacing, (2.0, 1.0));
        assert_eq!(ax.edges, Some(["R", "L", "A", "P"]));
        let n = orientation(Some(&g), &shape, &plane(1, 2), Convention::Neurological).unwrap();
        assert!(!n.flip_h);
        assert_eq!(n.edges, Some(["L", "R", "A", "P"]));
        let cor = orientation(Some(&g), &shape, &plane(0, 2), Convention::Radiological).unwrap();
        assert_eq!(cor.name, Some("coronal"));
        // k is superior: rows must run inferior-wards down, so k is reversed.
        assert!(cor.flip_v && cor.flip_h);
        let sag = orientation(Some(&g), &shape, &plane(0, 1), Convention::Radiological).unwrap();
        assert_eq!(sag.name, Some("sagittal"));
        // j runs anteriorly, and anterior belongs on the left: reversed.
        assert!(sag.flip_v && sag.flip_h);
        assert_eq!(sag.edges, Some(["A", "P", "S", "I"]));
    }

    #[test]
    fn unusable_geometry_gives_no_orientation() {
        let g = geometry([0.0, 1.0, 1.0]);
        assert!(
            orientation(Some(&g), &[4, 5, 6], &plane(1, 2), Convention::Radiological).is_none()
        );
        assert!(orientation(None, &[4, 5, 6], &plane(1, 2), Convention::Radiological).is_none());
    }
}
