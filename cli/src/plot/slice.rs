//! Which 2-D planes of an object are drawn: `--slice AXIS=I` fixes axes,
//! and what remains is one plane, or a volume drawn as three orthogonal
//! planes through its middle (`spec/plot.md` §2).

use std::str::FromStr;

/// One `--slice AXIS=I`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceArg {
    /// Axis of the object's shape, 0 first.
    pub axis: usize,
    /// Index along it.
    pub index: u64,
}

impl FromStr for SliceArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not AXIS=INDEX (two whole numbers, as 0=12)");
        let (a, i) = s.split_once('=').ok_or_else(bad)?;
        Ok(SliceArg {
            axis: a.trim().parse().map_err(|_| bad())?,
            index: i.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// One plane: every axis but `rows` and `cols` fixed at an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plane {
    /// Index of each axis (that of `rows` and `cols` is 0, unused).
    pub at: Vec<u64>,
    /// The axis drawn top to bottom (before any orientation rule).
    pub rows: usize,
    /// The axis drawn left to right.
    pub cols: usize,
}

impl Plane {
    /// Where the plane lies, as `axis=index` of the axes longer than one
    /// that it fixes (empty for a 2-D object).
    pub fn label(&self, shape: &[u64]) -> String {
        (0..shape.len())
            .filter(|&a| a != self.rows && a != self.cols && shape[a] > 1)
            .map(|a| format!("axis {a}={}", self.at[a]))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The planes to draw of an object of `shape` with `slices` fixed.
pub fn planes(shape: &[u64], slices: &[SliceArg]) -> Result<Vec<Plane>, String> {
    let mut at = vec![None; shape.len()];
    for s in slices {
        let Some(n) = shape.get(s.axis) else {
            return Err(format!(
                "--slice {}={}: the object has {} axes (shape {shape:?}), numbered from 0",
                s.axis,
                s.index,
                shape.len()
            ));
        };
        if s.index >= *n {
            return Err(format!(
                "--slice {}={}: axis {} has {n} elements (shape {shape:?})",
                s.axis, s.index, s.axis
            ));
        }
        if at[s.axis].replace(s.index).is_some() {
            return Err(format!("--slice fixes axis {} twice", s.axis));
        }
    }
    let free: Vec<usize> = (0..shape.len())
        .filter(|&a| at[a].is_none() && shape[a] > 1)
        .collect();
    if free.len() < 2 {
        return Err(format!(
            "shape {shape:?}{}: fewer than two axes longer than one remain, nothing 2-D to draw",
            if slices.is_empty() {
                ""
            } else {
                " with --slice"
            }
        ));
    }
    // Axes beyond the last three free ones are fixed at their middle.
    let (extra, vol) = free.split_at(free.len().saturating_sub(3));
    let mid = |a: usize| shape[a] / 2;
    let fixed: Vec<u64> = (0..shape.len())
        .map(|a| at[a].unwrap_or(if extra.contains(&a) { mid(a) } else { 0 }))
        .collect();
    let plane = |through: Option<usize>, rows, cols| {
        let mut at = fixed.clone();
        if let Some(t) = through {
            at[t] = mid(t);
        }
        Plane { at, rows, cols }
    };
    Ok(match *vol {
        [r, c] => vec![plane(None, r, c)],
        [a, b, c] => vec![
            plane(Some(a), b, c),
            plane(Some(b), a, c),
            plane(Some(c), a, b),
        ],
        _ => unreachable!("two or three free axes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(axis: usize, index: u64) -> SliceArg {
        SliceArg { axis, index }
    }

    #[test]
    fn a_field_is_one_plane_and_a_volume_three() {
        let p = planes(&[1, 4, 5], &[]).unwrap();
        assert_eq!(
            p,
            [Plane {
                at: vec![0, 0, 0],
                rows: 1,
                cols: 2
            }]
        );
        let p = planes(&[6, 4, 5], &[]).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].at[0], p[0].rows, p[0].cols), (3, 1, 2));
        assert_eq!((p[1].at[1], p[1].rows, p[1].cols), (2, 0, 2));
        assert_eq!((p[2].at[2], p[2].rows, p[2].cols), (2, 0, 1));
        assert_eq!(p[0].label(&[6, 4, 5]), "axis 0=3");
    }

    #[test]
    fn four_dimensions_fix_the_first_axis_at_its_middle() {
        let p = planes(&[7, 6, 4, 5], &[]).unwrap();
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|q| q.at[0] == 3));
        let p = planes(&[7, 6, 4, 5], &[s(0, 1), s(1, 2)]).unwrap();
        assert_eq!(
            p,
            [Plane {
                at: vec![1, 2, 0, 0],
                rows: 2,
                cols: 3
            }]
        );
    }

    #[test]
    fn bad_slices_and_thin_objects_are_refused() {
        assert!(planes(&[4, 5], &[s(2, 0)]).unwrap_err().contains("2 axes"));
        assert!(planes(&[4, 5], &[s(1, 5)])
            .unwrap_err()
            .contains("5 elements"));
        assert!(planes(&[4, 5, 6], &[s(1, 0), s(1, 1)])
            .unwrap_err()
            .contains("twice"));
        assert!(planes(&[10], &[]).unwrap_err().contains("nothing 2-D"));
        assert!(planes(&[4, 5], &[s(0, 1)]).is_err());
        assert!("x=1".parse::<SliceArg>().is_err());
        assert_eq!("2=7".parse::<SliceArg>(), Ok(s(2, 7)));
    }
}
