//! Strided views over a byte buffer, DLPack style, and gathering them into
//! row-major order. See `spec/tensor-model.md` §3.

use crate::error::{Error, Result};

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
/// every element lies inside `data`. Errors come before any copy.
pub fn gather(v: &StridedView<'_>) -> Result<Vec<u8>> {
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
    if total > isize::MAX as i128 {
        return Err(Error::invalid_argument("tensor too large"));
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
        return Ok(v.data[base as usize..(base + total) as usize].to_vec());
    }
    let mut out = Vec::with_capacity(total as usize);
    let mut idx = vec![0i64; ndim];
    let e = v.element_bytes;
    for _ in 0..n {
        let off: i128 = idx
            .iter()
            .zip(&strides)
            .map(|(&i, &s)| i as i128 * s)
            .sum::<i128>()
            * eb
            + base;
        out.extend_from_slice(&v.data[off as usize..off as usize + e]);
        for k in (0..ndim).rev() {
            idx[k] += 1;
            if idx[k] < v.shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
