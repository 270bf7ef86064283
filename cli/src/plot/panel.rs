//! A panel: how the points of one plane are laid out on screen, as index
//! arithmetic into the decoded object (no copy of the values).

use super::slice::Plane;

/// Where the values of a panel are, top-left first.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// A regular grid: point (r, c), r from the top and c from the left,
    /// is element `base + r·row_step + c·col_step`.
    Grid {
        /// Element of the top-left point.
        base: i64,
        /// Points top to bottom.
        rows: u64,
        /// Points left to right.
        cols: u64,
        /// Element step one row down.
        row_step: i64,
        /// Element step one column right.
        col_step: i64,
    },
    /// Rows of their own lengths at their own latitudes (reduced Gaussian
    /// grids, `spec/plot.md` §3): each row's points spread across the width.
    Rows {
        /// First element of each row, northernmost row first.
        starts: Vec<u64>,
        /// Points in each row.
        lens: Vec<u64>,
        /// Latitude of each row, decreasing.
        lats: Vec<f64>,
        /// Latitude of the top edge.
        top: f64,
        /// Latitude of the bottom edge.
        bottom: f64,
    },
}

/// How a plane's axes meet the screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Orientation {
    /// The plane's `cols` axis runs top to bottom (and `rows` left to right).
    pub transpose: bool,
    /// Reverse top and bottom (after `transpose`).
    pub flip_v: bool,
    /// Reverse left and right.
    pub flip_h: bool,
    /// Physical size of a step down and a step right (mm, degrees, or 1).
    pub spacing: (f64, f64),
    /// Letters naming the directions at the left, right, top and bottom
    /// edges (patient directions of a medical volume).
    pub edges: Option<[&'static str; 4]>,
    /// Name of the plane (axial, coronal, sagittal).
    pub name: Option<&'static str>,
}

/// One panel of the picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Where the values are.
    pub layout: Layout,
    /// Physical width over height.
    pub aspect: f64,
    /// Caption under the panel.
    pub label: String,
    /// Direction letters at the left, right, top and bottom edges.
    pub edges: Option<[&'static str; 4]>,
}

impl Panel {
    /// A regular panel of `plane` of an object of `shape`, oriented by `o`.
    pub fn grid(shape: &[u64], plane: &Plane, o: &Orientation) -> Panel {
        let strides = strides(shape);
        let base: i64 = plane
            .at
            .iter()
            .zip(&strides)
            .map(|(&i, &s)| i as i64 * s)
            .sum();
        let (mut r_axis, mut c_axis) = (plane.rows, plane.cols);
        if o.transpose {
            std::mem::swap(&mut r_axis, &mut c_axis);
        }
        let (rows, cols) = (shape[r_axis], shape[c_axis]);
        let (mut row_step, mut col_step) = (strides[r_axis], strides[c_axis]);
        let mut base = base;
        if o.flip_v {
            base += (rows as i64 - 1) * row_step;
            row_step = -row_step;
        }
        if o.flip_h {
            base += (cols as i64 - 1) * col_step;
            col_step = -col_step;
        }
        let (sv, sh) = o.spacing;
        let at = plane.label(shape);
        let label = match o.name {
            Some(n) => format!("{n} {at}"),
            None => format!("{at}  axis {r_axis} down, axis {c_axis} across"),
        };
        Panel {
            layout: Layout::Grid {
                base,
                rows,
                cols,
                row_step,
                col_step,
            },
            aspect: (cols as f64 * sh) / (rows as f64 * sv),
            label: label.trim().to_string(),
            edges: o.edges,
        }
    }

    /// The element under pixel (x, y) of a `w` × `h` drawing of the panel.
    pub fn element(&self, x: u32, y: u32, w: u32, h: u32) -> u64 {
        let along = |p: u32, n: u64, len: u32| (u64::from(p) * n / u64::from(len)).min(n - 1);
        match &self.layout {
            Layout::Grid {
                base,
                rows,
                cols,
                row_step,
                col_step,
            } => {
                let r = along(y, *rows, h) as i64;
                let c = along(x, *cols, w) as i64;
                (base + r * row_step + c * col_step) as u64
            }
            Layout::Rows {
                starts,
                lens,
                lats,
                top,
                bottom,
            } => {
                let lat = top + (bottom - top) * (f64::from(y) + 0.5) / f64::from(h);
                let row = nearest_row(lats, lat);
                starts[row] + along(x, lens[row], w)
            }
        }
    }
}

/// The row of decreasing `lats` nearest to `lat`.
fn nearest_row(lats: &[f64], lat: f64) -> usize {
    let i = lats.partition_point(|&l| l > lat);
    if i == 0 {
        return 0;
    }
    if i == lats.len() {
        return i - 1;
    }
    if lats[i - 1] - lat <= lat - lats[i] {
        i - 1
    } else {
        i
    }
}

/// Row-major element strides of `shape`.
pub fn strides(shape: &[u64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1] as i64;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane() -> Plane {
        Plane {
            at: vec![0, 0],
            rows: 0,
            cols: 1,
        }
    }

    fn corners(p: &Panel) -> [u64; 4] {
        [
            p.element(0, 0, 30, 20),
            p.element(29, 0, 30, 20),
            p.element(0, 19, 30, 20),
            p.element(29, 19, 30, 20),
        ]
    }

    #[test]
    fn flips_and_transposition_move_the_corners() {
        let o = Orientation {
            spacing: (1.0, 1.0),
            ..Default::default()
        };
        let shape = [2, 3];
        assert_eq!(corners(&Panel::grid(&shape, &plane(), &o)), [0, 2, 3, 5]);
        let f = Orientation {
            flip_v: true,
            ..o.clone()
        };
        assert_eq!(corners(&Panel::grid(&shape, &plane(), &f)), [3, 5, 0, 2]);
        let t = Orientation {
            transpose: true,
            flip_h: true,
            ..o
        };
        let p = Panel::grid(&shape, &plane(), &t);
        assert_eq!(corners(&p), [3, 0, 5, 2]);
        assert!((p.aspect - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(p.label, "axis 1 down, axis 0 across");
    }

    #[test]
    fn rows_are_found_by_latitude() {
        let p = Panel {
            layout: Layout::Rows {
                starts: vec![0, 2, 6],
                lens: vec![2, 4, 2],
                lats: vec![60.0, 0.0, -60.0],
                top: 90.0,
                bottom: -90.0,
            },
            aspect: 2.0,
            label: String::new(),
            edges: None,
        };
        assert_eq!(p.element(0, 0, 8, 3), 0);
        assert_eq!(p.element(7, 0, 8, 3), 1);
        assert_eq!(p.element(7, 1, 8, 3), 5);
        assert_eq!(p.element(3, 2, 8, 3), 6);
    }
}
