//! simple_packing's quantise-and-pack in one pass over the float64 values,
//! with no intermediate buffer of integer codes (`spec/pipeline.md` §2.2,
//! §2.3, §6.2).
//!
//! For widths up to 52 bits every step stays in float64 arithmetic, which
//! the compiler turns into packed SIMD instructions: the value is clamped
//! to `[0, 2^B − 1]`, rounded half away from zero through the 2^52 rounding
//! constant, and its integer read from the low mantissa bits. For codes
//! below 2^52 each of these steps is exact, so the codes equal
//! `min(round_half_away(x) saturated to u64, 2^B − 1)` bit for bit (the
//! tests compare both on random values). Wider codes take the integer path.

use super::scan::poison;
use crate::dtype::ByteOrder;

/// Values per group: 8 values of B bits fill exactly B bytes, so every group
/// starts on a byte boundary.
const GROUP: usize = 8;

/// 2^52: adding it to a value in `[0, 2^52)` rounds to an integer.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// Widest code the float path produces exactly.
const FLOAT_PATH_MAX_BITS: u32 = 52;

/// The quantiser of one object: `q = min(round((v − R) · scale), 2^B − 1)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantiser {
    /// Reference value R.
    pub reference: f64,
    /// `10^D · 2^−E`.
    pub scale: f64,
    /// Bits per code B, 0..=64.
    pub bits: u32,
}

#[inline(always)]
fn load(c: &[u8], order: ByteOrder) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(c);
    match order {
        ByteOrder::Little => f64::from_le_bytes(a),
        ByteOrder::Big => f64::from_be_bytes(a),
    }
}

/// `x` rounded half away from zero and converted to u64 with saturation
/// (negative and NaN give 0): `x.round() as u64` without a libm call.
#[inline(always)]
pub(crate) fn quantise_u64(x: f64) -> u64 {
    let t = x as u64;
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

/// The code of `x = (v − R) · scale` for `maxf = 2^B − 1 < 2^52`, in float
/// arithmetic only.
#[inline(always)]
fn code_float(x: f64, maxf: f64) -> u64 {
    // NaN and negative values give 0, values above the largest code give it.
    let c = if x > 0.0 { x } else { 0.0 };
    let c = if c < maxf { c } else { maxf };
    // Round to nearest even, then step back to the truncation.
    let even = (c + TWO52) - TWO52;
    let t = if even > c { even - 1.0 } else { even };
    let q = if c - t >= 0.5 { t + 1.0 } else { t };
    (q + TWO52).to_bits() - TWO52.to_bits()
}

impl Quantiser {
    fn max_code(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// Quantises the float64 values of `data` (whole elements in `order`)
    /// and packs the codes MSB-first into `out`, exactly
    /// `ceil(n · B / 8)` bytes. Returns false when a value is NaN or ±Inf,
    /// in which case the codes written for those values are unspecified.
    pub fn pack(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        match order {
            ByteOrder::Little => self.pack_in(data, ByteOrder::Little, out),
            ByteOrder::Big => self.pack_in(data, ByteOrder::Big, out),
        }
    }

    #[inline(always)]
    fn pack_in(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        match self.bits {
            0 => true,
            8 => self.pack_bytes::<1>(data, order, out),
            16 => self.pack_bytes::<2>(data, order, out),
            24 => self.pack_bytes::<3>(data, order, out),
            32 => self.pack_bytes::<4>(data, order, out),
            1..=FLOAT_PATH_MAX_BITS => self.pack_bits(data, order, out),
            _ => self.pack_wide(data, order, out),
        }
    }

    /// Codes of whole-byte width `W` (1..=4), each a big-endian integer.
    #[inline(always)]
    fn pack_bytes<const W: usize>(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        let (r, scale, maxf) = (self.reference, self.scale, self.max_code() as f64);
        let mut nonfinite = [0.0f64; GROUP];
        let src = data.chunks_exact(8 * GROUP);
        let src_tail = src.remainder();
        let mut dst = out.chunks_exact_mut(W * GROUP);
        for (s, d) in src.zip(&mut dst) {
            let mut q = [0u64; GROUP];
            for k in 0..GROUP {
                let v = load(&s[8 * k..8 * k + 8], order);
                nonfinite[k] += poison(v);
                q[k] = code_float((v - r) * scale, maxf);
            }
            for k in 0..GROUP {
                d[W * k..W * k + W].copy_from_slice(&q[k].to_be_bytes()[8 - W..]);
            }
        }
        let d = dst.into_remainder();
        // A separate tail accumulator keeps the lanes in registers.
        let mut tail_nf = 0.0f64;
        for (s, d) in src_tail.chunks_exact(8).zip(d.chunks_exact_mut(W)) {
            let v = load(s, order);
            tail_nf += poison(v);
            d.copy_from_slice(&code_float((v - r) * scale, maxf).to_be_bytes()[8 - W..]);
        }
        !tail_nf.is_nan() && nonfinite.iter().all(|p| !p.is_nan())
    }

    /// Codes of any width up to 52 bits: each group of 8 codes fills B bytes.
    fn pack_bits(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        let (r, scale, maxf) = (self.reference, self.scale, self.max_code() as f64);
        let bits = self.bits as usize;
        let mut nonfinite = [0.0f64; GROUP];
        let src = data.chunks_exact(8 * GROUP);
        let src_tail = src.remainder();
        let (head, d) = out.split_at_mut(data.len() / (8 * GROUP) * bits);
        for (s, d) in src.zip(head.chunks_exact_mut(bits)) {
            let mut q = [0u64; GROUP];
            for k in 0..GROUP {
                let v = load(&s[8 * k..8 * k + 8], order);
                nonfinite[k] += poison(v);
                q[k] = code_float((v - r) * scale, maxf);
            }
            put_group(&q, self.bits, d);
        }
        let mut tail_nf = 0.0f64;
        let tail = src_tail.chunks_exact(8).map(|c| {
            let v = load(c, order);
            tail_nf += poison(v);
            code_float((v - r) * scale, maxf)
        });
        super::bits::pack_into(tail, self.bits, d);
        !tail_nf.is_nan() && nonfinite.iter().all(|p| !p.is_nan())
    }

    /// Codes of 53..=64 bits, through exact integer rounding.
    fn pack_wide(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        let (r, scale, maxq) = (self.reference, self.scale, self.max_code());
        let mut finite = true;
        let codes = data.chunks_exact(8).map(|c| {
            let v = load(c, order);
            finite &= v.is_finite();
            quantise_u64((v - r) * scale).min(maxq)
        });
        super::bits::pack_into(codes, self.bits, out);
        finite
    }
}

/// Packs 8 codes of `bits` (< 64) bits into `out`, exactly `bits` bytes.
#[inline(always)]
fn put_group(q: &[u64; GROUP], bits: u32, out: &mut [u8]) {
    let mut acc: u128 = 0;
    let mut pending: u32 = 0;
    let mut pos = 0usize;
    for &v in q {
        acc = (acc << bits) | v as u128;
        pending += bits;
        if pending >= 64 {
            pending -= 64;
            out[pos..pos + 8].copy_from_slice(&((acc >> pending) as u64).to_be_bytes());
            pos += 8;
        }
    }
    // 8 · bits is a multiple of 8, so whole bytes remain.
    let word = ((acc << (64 - pending)) as u64).to_be_bytes();
    let n = pending as usize / 8;
    out[pos..pos + n].copy_from_slice(&word[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The element-by-element definition: round, saturate, clamp, then
    /// pack with the generic packer.
    fn naive(vals: &[f64], q: &Quantiser) -> (Vec<u8>, bool) {
        let maxq = q.max_code();
        let codes: Vec<u64> = vals
            .iter()
            .map(|&v| quantise_u64((v - q.reference) * q.scale).min(maxq))
            .collect();
        let mut out = vec![0u8; super::super::bits::packed_len(vals.len(), q.bits).unwrap()];
        super::super::bits::pack_into(codes.into_iter(), q.bits, &mut out);
        (out, vals.iter().all(|v| v.is_finite()))
    }

    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            6 => -1e3f64..1e3,
            1 => Just(0.0),
            1 => Just(-0.0),
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(f64::MIN_POSITIVE / 16.0),
            1 => Just(-f64::MIN_POSITIVE / 16.0),
            1 => Just(f64::MAX),
            1 => any::<f64>(),
        ]
    }

    fn bytes(v: &[f64], order: ByteOrder) -> Vec<u8> {
        v.iter()
            .flat_map(|x| match order {
                ByteOrder::Little => x.to_le_bytes(),
                ByteOrder::Big => x.to_be_bytes(),
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every width 1..=64, scales that put codes inside, at and beyond
        /// the code range, constant fields, NaN/±Inf and subnormals.
        #[test]
        fn fused_kernel_equals_the_definition(
            vals in prop::collection::vec(value(), 0..80),
            constant in any::<bool>(),
            reference in prop_oneof![Just(0.0), -1e3f64..1e3, Just(-0.0)],
            log_scale in -70i32..70,
            half in any::<bool>(),
        ) {
            let vals: Vec<f64> = if constant {
                vec![vals.first().copied().unwrap_or(1.5); vals.len()]
            } else {
                vals
            };
            for bits in 1..=64u32 {
                let scale = super::super::simple_packing::powi(2.0, log_scale)
                    * if half { 1.5 } else { 1.0 };
                let q = Quantiser { reference, scale, bits };
                let (want, finite) = naive(&vals, &q);
                for order in [ByteOrder::Little, ByteOrder::Big] {
                    let mut got = vec![0xa5u8; want.len()];
                    let ok = q.pack(&bytes(&vals, order), order, &mut got);
                    prop_assert_eq!(ok, finite, "bits {}", bits);
                    if finite {
                        prop_assert_eq!(&got, &want, "bits {} scale {} ref {}", bits, scale, reference);
                    }
                }
            }
        }

        /// Values exactly halfway between codes, and just either side.
        #[test]
        fn ties_round_away_from_zero(k in 0u64..(1 << 20), bits in 1u32..=52) {
            let maxq = (1u64 << bits) - 1;
            let k = k % (maxq + 1);
            let vals = [k as f64 + 0.5, k as f64 + 0.49999999999999994, k as f64 - 0.5,
                        (k as f64 + 0.5).next_up(), (k as f64 + 0.5).next_down()];
            let q = Quantiser { reference: 0.0, scale: 1.0, bits };
            let (want, _) = naive(&vals, &q);
            let mut got = vec![0u8; want.len()];
            prop_assert!(q.pack(&bytes(&vals, ByteOrder::Little), ByteOrder::Little, &mut got));
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn long_inputs_every_width_and_tail() {
        let n = 8 * 37 + 5;
        let vals: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 1e4).collect();
        for bits in 1..=64u32 {
            let scale = (1u64 << bits.min(52)) as f64 / 2.1e4;
            let q = Quantiser {
                reference: -1e4,
                scale,
                bits,
            };
            let (want, _) = naive(&vals, &q);
            let mut got = vec![0u8; want.len()];
            assert!(q.pack(
                &bytes(&vals, ByteOrder::Little),
                ByteOrder::Little,
                &mut got
            ));
            assert_eq!(got, want, "bits {bits}");
        }
    }
}
