//! Strided views over a byte buffer, DLPack style, and gathering them into
//! row-major order. See `spec/tensor-model.md` §3.

use crate::error::{Error, Result};
use crate::limits::Limits;

/// A view: shape, strides in elements (may be negative), byte offset into
/// `data`, element size in bytes.
#[derive(Debug, Clone, Copy)]
pub struct StridedView<'a> {
    /// The whole buffer the view lies in.
    pub data: &'a [u8],
    /// Extents.
    pub shape: &'a [i64],
    /// Strides in elements; `None` means row-major contiguous.
    pub strides: Option<&'a [i64]>,
    /// Offset of element [0, 0, ...] in bytes.
    pub byte_offset: u64,
    /// Bytes per element.
    pub element_bytes: usize,
}

/// Copies the view's elements in row-major order, after checking that
/// every element lies inside `data`, under the default [`Limits`].
pub fn gather(v: &StridedView<'_>) -> Result<Vec<u8>> {
    gather_with(v, &Limits::default())
}

/// [`gather`] under explicit limits: the result may not exceed
/// `limits.max_object_bytes`, which matters because strides of 0
/// (broadcasting) let a few bytes describe any number of elements. Every
/// check comes before any allocation or copy.
pub fn gather_with(v: &StridedView<'_>, limits: &Limits) -> Result<Vec<u8>> {
    let eb = v.element_bytes as i128;
    if eb == 0 {
        return Err(Error::invalid_argument("element size must be positive"));
    }
    let ndim = v.shape.len();
    let mut n: i128 = 1;
    for &d in v.shape {
        if d < 0 {
            return Err(Error::invalid_argument(format!("negative extent {d}")));
        }
        n = n
            .checked_mul(d as i128)
            .filter(|&x| x <= u64::MAX as i128)
            .ok_or_else(|| {
                Error::invalid_argument(format!("shape {:?} element count overflows", v.shape))
            })?;
    }
    let strides: Vec<i128> = match v.strides {
        Some(s) if s.len() != ndim => {
            return Err(Error::invalid_argument(format!(
                "{} strides for {ndim} dimensions",
                s.len()
            )))
        }
        Some(s) => s.iter().map(|&x| x as i128).collect(),
        None => {
            let mut s = vec![1i128; ndim];
            for i in (0..ndim.saturating_sub(1)).rev() {
                s[i] = s[i + 1] * v.shape[i + 1] as i128;
            }
            s
        }
    };
    let total = n * eb;
    if total > limits.max_object_bytes as i128 || total > isize::MAX as i128 {
        let requested = u64::try_from(total).unwrap_or(u64::MAX);
        return Err(Error::limit(
            "max_object_bytes",
            requested,
            limits.max_object_bytes,
        ));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    // Lowest and highest element reached, in elements relative to the offset.
    let (mut lo, mut hi) = (0i128, 0i128);
    for (d, s) in v.shape.iter().zip(&strides) {
        let reach = (*d as i128 - 1) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let base = v.byte_offset as i128;
    let first = base + lo * eb;
    let last_end = base + (hi + 1) * eb;
    if first < 0 || last_end > v.data.len() as i128 {
        return Err(Error::invalid_argument(format!(
            "view reaches bytes [{first}, {last_end}) outside the {}-byte buffer",
            v.data.len()
        )));
    }
    let contiguous = {
        let mut expect = 1i128;
        let mut ok = true;
        for i in (0..ndim).rev() {
            if v.shape[i] != 1 && strides[i] != expect {
                ok = false;
            }
            expect *= v.shape[i] as i128;
        }
        ok
    };
    if contiguous {
        return crate::buffer::copy_of(&v.data[base as usize..(base + total) as usize]);
    }
    // Walk the index like an odometer, keeping the byte offset of the
    // current element; rows whose elements are adjacent go in one copy.
    let mut out = crate::buffer::with_capacity(total as usize)?;
    let (row_len, row_step) = match (v.shape.last(), strides.last()) {
        (Some(&d), Some(&1)) => (d as usize, d as i128),
        _ => (1, 1),
    };
    let outer = if row_len > 1 { ndim - 1 } else { ndim };
    let row_bytes = row_len * v.element_bytes;
    let mut idx = vec![0i64; outer];
    let mut off = base;
    for _ in 0..n / row_step {
        let at = off as usize;
        out.extend_from_slice(&v.data[at..at + row_bytes]);
        for k in (0..outer).rev() {
            idx[k] += 1;
            off += strides[k] * eb;
            if idx[k] < v.shape[k] {
                break;
            }
            off -= v.shape[k] as i128 * strides[k] * eb;
            idx[k] = 0;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Element by element, straight from the definition.
    fn naive(v: &StridedView<'_>) -> Vec<u8> {
        let n: i64 = v.shape.iter().product();
        let ndim = v.shape.len();
        let strides: Vec<i64> = v.strides.map(<[i64]>::to_vec).unwrap_or_else(|| {
            (0..ndim)
                .map(|i| v.shape[i + 1..].iter().product())
                .collect()
        });
        let mut out = Vec::new();
        for flat in 0..n {
            let (mut rem, mut off) = (flat, v.byte_offset as i64);
            for k in (0..ndim).rev() {
                off += (rem % v.shape[k]) * strides[k] * v.element_bytes as i64;
                rem /= v.shape[k];
            }
            out.extend_from_slice(&v.data[off as usize..off as usize + v.element_bytes]);
        }
        out
    }

    #[test]
    fn strided_gather_equals_the_definition() {
        let data: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % m
        };
        let mut checked = 0;
        while checked < 500 {
            let ndim = 1 + next(4) as usize;
            let eb = [1usize, 2, 4, 8][next(4) as usize];
            let shape: Vec<i64> = (0..ndim).map(|_| 1 + next(5) as i64).collect();
            let strides: Vec<i64> = (0..ndim)
                .map(|k| {
                    if k == ndim - 1 && next(2) == 0 {
                        1
                    } else {
                        next(13) as i64 - 4
                    }
                })
                .collect();
            let v = StridedView {
                data: &data,
                shape: &shape,
                strides: Some(&strides),
                byte_offset: 64 * eb as u64 + next(64),
                element_bytes: eb,
            };
            if let Ok(got) = gather(&v) {
                assert_eq!(got, naive(&v), "{shape:?} {strides:?} eb {eb}");
                checked += 1;
            }
        }
    }

    #[test]
    fn broadcast_bombs_hit_the_object_limit_before_allocating() {
        let data = [0u8; 8];
        let v = StridedView {
            data: &data,
            shape: &[1 << 40],
            strides: Some(&[0]),
            byte_offset: 0,
            element_bytes: 8,
        };
        let e = gather(&v).unwrap_err();
        assert!(matches!(
            e.kind(),
            crate::ErrorKind::LimitExceeded {
                limit: "max_object_bytes",
                ..
            }
        ));
        let l = Limits {
            max_object_bytes: 64,
            ..Limits::default()
        };
        let small = StridedView { shape: &[9], ..v };
        assert!(gather_with(&small, &l).is_err());
        assert_eq!(
            gather_with(&StridedView { shape: &[8], ..v }, &l).unwrap(),
            [0; 64]
        );
    }

    #[test]
    fn transposed_negative_and_offset_views() {
        let data: Vec<u8> = (0..12).collect();
        // 3x4 row-major, viewed transposed (4x3).
        let t = gather(&StridedView {
            data: &data,
            shape: &[4, 3],
            strides: Some(&[1, 4]),
            byte_offset: 0,
            element_bytes: 1,
        })
        .unwrap();
        assert_eq!(t, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        // Reversed row 1: offset to its last element, stride -1.
        let r = gather(&StridedView {
            data: &data,
            shape: &[4],
            strides: Some(&[-1]),
            byte_offset: 7,
            element_bytes: 1,
        })
        .unwrap();
        assert_eq!(r, vec![7, 6, 5, 4]);
        // Outside the buffer, overflowing shapes, wrong stride count: errors.
        assert!(gather(&StridedView {
            data: &data,
            shape: &[4],
            strides: Some(&[-1]),
            byte_offset: 2,
            element_bytes: 1
        })
        .is_err());
        assert!(gather(&StridedView {
            data: &data,
            shape: &[13],
            strides: None,
            byte_offset: 0,
            element_bytes: 1
        })
        .is_err());
        assert!(gather(&StridedView {
            data: &data,
            shape: &[1 << 62, 1 << 62],
            strides: None,
            byte_offset: 0,
            element_bytes: 1
        })
        .is_err());
        assert!(gather(&StridedView {
            data: &data,
            shape: &[2],
            strides: Some(&[1, 1]),
            byte_offset: 0,
            element_bytes: 1
        })
        .is_err());
        assert!(gather(&StridedView {
            data: &data,
            shape: &[2],
            strides: None,
            byte_offset: 20,
            element_bytes: 1
        })
        .is_err());
    }
}
