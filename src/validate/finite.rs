//! The fidelity scan: NaN and infinities in decoded float elements
//! (`spec/files.md` §8.1, level 4). Objects are decoded without restoring
//! masked values, so what this finds is not declared by a mask.

use crate::Dtype;

/// First position and number of NaN and of infinite elements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NonFinite {
    /// `(first element index, count)` of NaN elements.
    pub nan: Option<(u64, u64)>,
    /// `(first element index, count)` of infinite elements.
    pub inf: Option<(u64, u64)>,
}

impl NonFinite {
    fn note(&mut self, i: usize, is_nan: bool, is_inf: bool) {
        let slot = if is_nan {
            &mut self.nan
        } else if is_inf {
            &mut self.inf
        } else {
            return;
        };
        match slot {
            Some((_, n)) => *n += 1,
            None => *slot = Some((i as u64, 1)),
        }
    }
}

/// Scans `data`, native-order elements of `dtype`; integer and bitmask
/// dtypes hold no non-finite values. A complex element counts once, as NaN
/// when either part is NaN, else as infinite when either part is.
pub(crate) fn scan(dtype: Dtype, data: &[u8]) -> NonFinite {
    let mut out = NonFinite::default();
    match dtype {
        Dtype::Float16 => each::<2>(data, &mut out, |c| {
            let v = half::f16::from_ne_bytes(*c);
            (v.is_nan(), v.is_infinite())
        }),
        Dtype::Bfloat16 => each::<2>(data, &mut out, |c| {
            let v = half::bf16::from_ne_bytes(*c);
            (v.is_nan(), v.is_infinite())
        }),
        Dtype::Float32 => each::<4>(data, &mut out, |c| {
            let v = f32::from_ne_bytes(*c);
            (v.is_nan(), v.is_infinite())
        }),
        Dtype::Complex64 => each::<8>(data, &mut out, |c| {
            let [a, b] = [0, 4].map(|o| f32::from_ne_bytes([c[o], c[o + 1], c[o + 2], c[o + 3]]));
            (a.is_nan() || b.is_nan(), a.is_infinite() || b.is_infinite())
        }),
        Dtype::Float64 => each::<8>(data, &mut out, |c| {
            let v = f64::from_ne_bytes(*c);
            (v.is_nan(), v.is_infinite())
        }),
        Dtype::Complex128 => each::<16>(data, &mut out, |c| {
            let [a, b] = [0, 8].map(|o| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&c[o..o + 8]);
                f64::from_ne_bytes(w)
            });
            (a.is_nan() || b.is_nan(), a.is_infinite() || b.is_infinite())
        }),
        _ => {}
    }
    out
}

fn each<const N: usize>(
    data: &[u8],
    out: &mut NonFinite,
    classify: impl Fn(&[u8; N]) -> (bool, bool),
) {
    for (i, c) in data.chunks_exact(N).enumerate() {
        let c: &[u8; N] = c.try_into().unwrap_or(&[0; N]);
        let (nan, inf) = classify(c);
        out.note(i, nan, inf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }

    #[test]
    fn finds_the_first_nan_and_inf_and_counts_them() {
        let d = bytes(
            &[1.0f64, f64::NAN, f64::INFINITY, f64::NAN, -f64::INFINITY],
            f64::to_ne_bytes,
        );
        let r = scan(Dtype::Float64, &d);
        assert_eq!(r.nan, Some((1, 2)));
        assert_eq!(r.inf, Some((2, 2)));
        let d = bytes(&[0.5f32, f32::INFINITY], f32::to_ne_bytes);
        assert_eq!(
            scan(Dtype::Float32, &d),
            NonFinite {
                nan: None,
                inf: Some((1, 1))
            }
        );
    }

    #[test]
    fn half_and_complex_widths() {
        let d = bytes(&[half::f16::ONE, half::f16::NAN], half::f16::to_ne_bytes);
        assert_eq!(scan(Dtype::Float16, &d).nan, Some((1, 1)));
        let d = bytes(&[half::bf16::INFINITY], half::bf16::to_ne_bytes);
        assert_eq!(scan(Dtype::Bfloat16, &d).inf, Some((0, 1)));
        // Two complex64 elements: (1, 2) and (3, inf).
        let d = bytes(&[1.0f32, 2.0, 3.0, f32::INFINITY], f32::to_ne_bytes);
        assert_eq!(scan(Dtype::Complex64, &d).inf, Some((1, 1)));
        let d = bytes(&[f64::NAN, 0.0], f64::to_ne_bytes);
        assert_eq!(scan(Dtype::Complex128, &d).nan, Some((0, 1)));
        assert_eq!(scan(Dtype::Int32, &[0xff; 8]), NonFinite::default());
    }
}
