//! One pass over the caller's element bytes before encoding: whether any
//! float component is NaN or ±Inf, and for float64 the minimum and maximum
//! that simple_packing derives its parameters from (`spec/pipeline.md` §6.2).
//!
//! The loops keep independent per-lane accumulators over fixed-size groups
//! of elements so that the compiler turns them into packed SIMD
//! instructions; every result equals the element-by-element definition
//! (`spec/pipeline.md` §2.1, §5.1), which the tests check.

use crate::dtype::{ByteOrder, Dtype};

/// Lanes per group: 8 float64 values, one 64-byte cache line.
const LANES: usize = 8;

/// Minimum and maximum of float64 values that are all finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FiniteRange {
    /// The smallest value; when it is zero, the sign of the first zero in
    /// element order, as a sequential `if v < min { min = v }` finds it.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

/// 0 for a finite `v`, NaN for NaN and ±Inf. Summed per lane, a NaN
/// sticks, so one test after a loop tells whether every value was finite.
#[inline(always)]
pub(crate) fn poison(v: f64) -> f64 {
    v * 0.0
}

#[inline(always)]
fn load_f64(c: &[u8], order: ByteOrder) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(c);
    match order {
        ByteOrder::Little => f64::from_le_bytes(a),
        ByteOrder::Big => f64::from_be_bytes(a),
    }
}

/// Minimum and maximum of the float64 values in `data` (whole 8-byte
/// elements in `order`), or `None` when `data` is empty or holds a NaN or
/// an infinity.
/// Compiled for each listed instruction set and chosen once at run time;
/// every version returns the same result.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
))]
pub fn finite_range_f64(data: &[u8], order: ByteOrder) -> Option<FiniteRange> {
    finite_range_f64_portable(data, order)
}

/// [`finite_range_f64`] on up to `threads` workers, each scanning a run of
/// whole elements; the runs' results fold in element order with the same
/// comparisons, so the result (the sign of a zero minimum included) is the
/// sequential one (`spec/pipeline.md` §6.4).
pub fn finite_range_f64_parallel(
    data: &[u8],
    order: ByteOrder,
    threads: usize,
) -> Option<FiniteRange> {
    /// Bytes per run: a multiple of the element size.
    const RUN: usize = 2 << 20;
    if threads < 2 || data.len() < 2 * RUN {
        return finite_range_f64(data, order);
    }
    let runs = crate::exec::install(threads, || {
        use rayon::prelude::*;
        data.par_chunks(RUN)
            .map(|c| finite_range_f64(c, order))
            .collect::<Vec<_>>()
    });
    let Ok(runs) = runs else {
        return finite_range_f64(data, order);
    };
    runs.into_iter()
        .try_fold(None, |acc: Option<FiniteRange>, r| {
            let r = r?;
            Some(Some(match acc {
                None => r,
                Some(a) => FiniteRange {
                    min: if r.min < a.min { r.min } else { a.min },
                    max: if r.max > a.max { r.max } else { a.max },
                },
            }))
        })?
}

/// [`finite_range_f64`] for the instruction set the crate is compiled for.
#[inline(always)]
pub(crate) fn finite_range_f64_portable(data: &[u8], order: ByteOrder) -> Option<FiniteRange> {
    match order {
        ByteOrder::Little => range_kernel(data, ByteOrder::Little),
        ByteOrder::Big => range_kernel(data, ByteOrder::Big),
    }
}

#[inline(always)]
fn range_kernel(data: &[u8], order: ByteOrder) -> Option<FiniteRange> {
    let mut lo = [f64::INFINITY; LANES];
    let mut hi = [f64::NEG_INFINITY; LANES];
    let mut nonfinite = [0.0f64; LANES];
    let groups = data.chunks_exact(8 * LANES);
    let tail = groups.remainder();
    for g in groups {
        for k in 0..LANES {
            let v = load_f64(&g[8 * k..8 * k + 8], order);
            nonfinite[k] += poison(v);
            lo[k] = if v < lo[k] { v } else { lo[k] };
            hi[k] = if v > hi[k] { v } else { hi[k] };
        }
    }
    // The tail has accumulators of its own: folding it into lane 0 keeps
    // the compiler from holding the lanes in registers.
    let (mut tail_lo, mut tail_hi, mut tail_nf) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for c in tail.chunks_exact(8) {
        let v = load_f64(c, order);
        tail_nf += poison(v);
        tail_lo = if v < tail_lo { v } else { tail_lo };
        tail_hi = if v > tail_hi { v } else { tail_hi };
    }
    if data.len() < 8 || tail_nf.is_nan() || nonfinite.iter().any(|p| p.is_nan()) {
        return None;
    }
    let mut min = lo.iter().fold(tail_lo, |a, &b| if b < a { b } else { a });
    let mut max = hi.iter().fold(tail_hi, |a, &b| if b > a { b } else { a });
    if min == 0.0 || max == 0.0 {
        // Lanes disagree on which zero came first; the first one decides,
        // for the minimum and the maximum alike.
        let first_zero = data
            .chunks_exact(8)
            .map(|c| load_f64(c, order))
            .find(|&v| v == 0.0);
        if let Some(z) = first_zero {
            if min == 0.0 {
                min = z;
            }
            if max == 0.0 {
                max = z;
            }
        }
    }
    Some(FiniteRange { min, max })
}

/// The bit patterns of one float format's component: its width in bytes
/// and the exponent mask (all ones means NaN or ±Inf).
fn exponent_mask(dtype: Dtype) -> Option<(usize, u64)> {
    Some(match dtype {
        Dtype::Float16 => (2, 0x7c00),
        Dtype::Bfloat16 => (2, 0x7f80),
        Dtype::Float32 | Dtype::Complex64 => (4, 0x7f80_0000),
        Dtype::Float64 | Dtype::Complex128 => (8, 0x7ff0_0000_0000_0000),
        _ => return None,
    })
}

/// True when some float component of `data` is NaN or ±Inf (false for
/// integer dtypes, which have none).
pub fn any_non_finite(data: &[u8], dtype: Dtype, order: ByteOrder) -> bool {
    let Some((w, mask)) = exponent_mask(dtype) else {
        return false;
    };
    match (w, order) {
        (2, ByteOrder::Little) => any_special::<2>(data, mask, u16_le),
        (2, ByteOrder::Big) => any_special::<2>(data, mask, u16_be),
        (4, ByteOrder::Little) => any_special::<4>(data, mask, u32_le),
        (4, ByteOrder::Big) => any_special::<4>(data, mask, u32_be),
        (_, ByteOrder::Little) => any_special::<8>(data, mask, u64_le),
        (_, ByteOrder::Big) => any_special::<8>(data, mask, u64_be),
    }
}

fn u16_le(c: &[u8]) -> u64 {
    u16::from_le_bytes([c[0], c[1]]) as u64
}
fn u16_be(c: &[u8]) -> u64 {
    u16::from_be_bytes([c[0], c[1]]) as u64
}
fn u32_le(c: &[u8]) -> u64 {
    u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64
}
fn u32_be(c: &[u8]) -> u64 {
    u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64
}
fn u64_le(c: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(c);
    u64::from_le_bytes(a)
}
fn u64_be(c: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(c);
    u64::from_be_bytes(a)
}

#[inline(always)]
fn any_special<const W: usize>(data: &[u8], mask: u64, word: impl Fn(&[u8]) -> u64) -> bool {
    // Per block, count the components whose exponent bits are all ones;
    // blocks keep the early exit cheap without a branch per element.
    const BLOCK: usize = 4096;
    data.chunks(BLOCK).any(|b| {
        b.chunks_exact(W)
            .map(|c| u64::from(word(c) & mask == mask))
            .sum::<u64>()
            != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_scan_equals_sequential_including_zero_signs_and_non_finite() {
        let n = (5 << 20) / 8 + 3;
        let mut v: Vec<f64> = (0..n).map(|i| ((i as f64) * 1e-3).sin() + 2.0).collect();
        let bytes = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let check = |v: &[f64]| {
            let b = bytes(v);
            let seq = finite_range_f64_portable(&b, ByteOrder::Little);
            let par = finite_range_f64_parallel(&b, ByteOrder::Little, 2);
            assert_eq!(
                seq.map(|r| (r.min.to_bits(), r.max.to_bits())),
                par.map(|r| (r.min.to_bits(), r.max.to_bits()))
            );
            seq
        };
        assert!(check(&v).is_some());
        // Zeros of both signs in different runs: the first one decides.
        let (a, b) = (300_000, 600_000);
        v.iter_mut().for_each(|x| *x = x.abs());
        v[a] = 0.0;
        v[b] = -0.0;
        assert!(check(&v).unwrap().min.is_sign_positive());
        v[a] = -0.0;
        v[b] = 0.0;
        assert!(check(&v).unwrap().min.is_sign_negative());
        v[n - 1] = f64::NAN;
        assert!(check(&v).is_none());
    }
    use proptest::prelude::*;

    fn bytes(v: &[f64], order: ByteOrder) -> Vec<u8> {
        v.iter()
            .flat_map(|x| match order {
                ByteOrder::Little => x.to_le_bytes(),
                ByteOrder::Big => x.to_be_bytes(),
            })
            .collect()
    }

    /// The element-by-element definition.
    fn naive(v: &[f64]) -> Option<FiniteRange> {
        if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for &x in v {
            if x < min {
                min = x;
            }
            if x > max {
                max = x;
            }
        }
        Some(FiniteRange { min, max })
    }

    fn same(a: Option<FiniteRange>, b: Option<FiniteRange>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.min.to_bits() == b.min.to_bits() && a.max.to_bits() == b.max.to_bits()
            }
            _ => false,
        }
    }

    fn special() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => -1e6f64..1e6,
            1 => Just(0.0),
            1 => Just(-0.0),
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(f64::MIN_POSITIVE / 4.0),
            1 => Just(-f64::MIN_POSITIVE / 8.0),
            1 => Just(f64::MAX),
            1 => Just(f64::MIN),
            1 => any::<f64>(),
        ]
    }

    #[test]
    fn a_zero_maximum_takes_the_sign_of_the_first_zero() {
        let sub = -2.78e-309;
        let v = [-0.0, 0.0, f64::MIN, sub, sub, sub, 0.0, f64::MIN, 0.0];
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let got = finite_range_f64(&bytes(&v, order), order);
            assert!(same(got, naive(&v)), "{got:?}");
            assert!(got.unwrap().max.is_sign_negative());
        }
    }

    proptest! {
        #[test]
        fn range_equals_the_sequential_definition(
            v in prop::collection::vec(special(), 0..100),
            finite_only in any::<bool>(),
        ) {
            let v: Vec<f64> = if finite_only {
                v.into_iter().filter(|x| x.is_finite()).collect()
            } else {
                v
            };
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let got = finite_range_f64(&bytes(&v, order), order);
                prop_assert!(same(got, naive(&v)), "{v:?}: {got:?}");
                prop_assert_eq!(
                    any_non_finite(&bytes(&v, order), Dtype::Float64, order),
                    v.iter().any(|x| !x.is_finite())
                );
            }
        }

        #[test]
        fn non_finite_detection_for_every_float_width(
            bits in prop::collection::vec(any::<u64>(), 0..200),
            order_big in any::<bool>(),
        ) {
            let order = if order_big { ByteOrder::Big } else { ByteOrder::Little };
            for (dtype, w, is_special) in [
                (Dtype::Float16, 2usize, (|b: u64| b as u16 & 0x7c00 == 0x7c00) as fn(u64) -> bool),
                (Dtype::Bfloat16, 2, |b| b as u16 & 0x7f80 == 0x7f80),
                (Dtype::Float32, 4, |b| !f32::from_bits(b as u32).is_finite()),
                (Dtype::Float64, 8, |b| !f64::from_bits(b).is_finite()),
            ] {
                let data: Vec<u8> = bits
                    .iter()
                    .flat_map(|&b| {
                        let le = b.to_le_bytes();
                        let be = b.to_be_bytes();
                        match order {
                            ByteOrder::Little => le[..w].to_vec(),
                            ByteOrder::Big => be[8 - w..].to_vec(),
                        }
                    })
                    .collect();
                prop_assert_eq!(
                    any_non_finite(&data, dtype, order),
                    bits.iter().any(|&b| is_special(b)),
                    "{}", dtype
                );
            }
        }
    }

    #[test]
    fn first_zero_decides_the_sign_of_a_zero_minimum() {
        for (v, neg) in [
            (vec![1.0, -0.0, 2.0, 0.0], true),
            (vec![1.0, 0.0, 2.0, -0.0], false),
            // Lane 5 sees -0 before lane 0 sees +0 in a later group.
            (
                (0..40)
                    .map(|i| match i {
                        13 => -0.0,
                        16 => 0.0,
                        _ => 1.0 + i as f64,
                    })
                    .collect(),
                true,
            ),
        ] {
            let r = finite_range_f64(&bytes(&v, ByteOrder::Little), ByteOrder::Little).unwrap();
            assert_eq!(r.min, 0.0);
            assert_eq!(r.min.is_sign_negative(), neg, "{v:?}");
        }
    }

    #[test]
    fn long_inputs_with_one_special_value_anywhere() {
        let n = 10_000;
        let base: Vec<f64> = (0..n).map(|i| (i as f64 * 0.01).sin()).collect();
        let r = finite_range_f64(&bytes(&base, ByteOrder::Little), ByteOrder::Little).unwrap();
        assert!(same(Some(r), naive(&base)));
        for at in [0, 7, 8, 4095, 4096, n - 1] {
            for s in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let mut v = base.clone();
                v[at] = s;
                let b = bytes(&v, ByteOrder::Little);
                assert!(
                    finite_range_f64(&b, ByteOrder::Little).is_none(),
                    "{s} at {at}"
                );
                assert!(any_non_finite(&b, Dtype::Float64, ByteOrder::Little));
            }
        }
    }
}
