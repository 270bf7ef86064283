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

use crate::dtype::ByteOrder;

/// Values per group: 8 values of B bits fill exactly B bytes, so every group
/// starts on a byte boundary.
const GROUP: usize = 8;

/// Values quantised ahead of packing in [`Quantiser::pack_const`].
const BLOCK: usize = 256;

/// 2^52: adding it to a value in `[0, 2^52)` rounds to an integer.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// Widest code the float path produces exactly.
const FLOAT_PATH_MAX_BITS: u32 = 52;

/// The quantiser of one object:
/// `q = min(round((v · decimal − R) · scale), 2^B − 1)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantiser {
    /// 1, or `10^D` as ecCodes forms it in GRIB's order
    /// (`spec/pipeline.md` §2.5); the product by 1 is exact.
    pub decimal: f64,
    /// Reference value R (GRIB's, in GRIB's order).
    pub reference: f64,
    /// `10^D · 2^−E`, or `2^−E` in GRIB's order.
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

/// 1 when `v` is NaN or ±Inf (all exponent bits set), else 0; OR-ed over
/// a block, it reduces without ordering constraints, so the loop vectorises.
#[inline(always)]
fn is_special(v: f64) -> u64 {
    const EXPONENT: u64 = 0x7ff0_0000_0000_0000;
    (v.to_bits() & EXPONENT == EXPONENT) as u64
}

/// The code of `x = (v − R) · scale` for `maxf = 2^B − 1 < 2^52`, in float
/// arithmetic only.
///
/// After clamping to `[0, maxf]`, adding 2^52 rounds `c` to the nearest
/// integer with ties to even, and the integer is the low mantissa bits of
/// the sum. `c − q` is exact, so a tie that went down is seen as exactly
/// 0.5 and stepped up: ties round away from zero.
#[inline(always)]
fn code_float(x: f64, maxf: f64) -> u64 {
    // NaN and negative values give 0, values above the largest code give it.
    let c = if x > 0.0 { x } else { 0.0 };
    let c = if c < maxf { c } else { maxf };
    let m = c + TWO52;
    let q = m - TWO52;
    (m.to_bits() - TWO52.to_bits()) + (c - q == 0.5) as u64
}

/// [`Quantiser::pack_portable`] compiled for each listed instruction set
/// and chosen once at run time; every version computes the same bytes
/// (`spec/pipeline.md` §6.2).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
))]
fn pack_dispatch(q: &Quantiser, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
    q.pack_portable(data, order, out)
}

/// [`Quantiser::codes_portable`] compiled for each listed instruction set
/// and chosen once at run time; every version computes the same codes.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
))]
fn codes_dispatch(q: &Quantiser, data: &[u8], order: ByteOrder, out: &mut [u32]) -> bool {
    q.codes_portable(data, order, out)
}

impl Quantiser {
    /// The codes of the float64 values of `data` (whole elements in
    /// `order`, as many as `out` holds), for widths 1..=32: the codes
    /// [`Quantiser::pack`] packs, unpacked, for a coder that takes them as
    /// integers (`spec/pipeline.md` §6.6). Returns false when a value is
    /// NaN or ±Inf, whose code is then unspecified.
    pub fn codes(&self, data: &[u8], order: ByteOrder, out: &mut [u32]) -> bool {
        codes_dispatch(self, data, order, out)
    }

    #[inline(always)]
    fn codes_portable(&self, data: &[u8], order: ByteOrder, out: &mut [u32]) -> bool {
        match order {
            ByteOrder::Little => self.codes_in(data, ByteOrder::Little, out),
            ByteOrder::Big => self.codes_in(data, ByteOrder::Big, out),
        }
    }

    /// One loop the compiler vectorises: load, scale, round, narrow.
    #[inline(always)]
    fn codes_in(&self, data: &[u8], order: ByteOrder, out: &mut [u32]) -> bool {
        debug_assert!((1..=32).contains(&self.bits));
        if self.decimal != 1.0 {
            return self.codes_grib_order(data, order, out);
        }
        let (r, scale, maxf) = (self.reference, self.scale, self.max_code() as f64);
        let mut special = 0u64;
        for (c, q) in data.chunks_exact(8).zip(out.iter_mut()) {
            let v = load(c, order);
            special |= is_special(v);
            *q = code_float((v - r) * scale, maxf) as u32;
        }
        special == 0
    }

    /// [`Self::codes`] in GRIB's order (`spec/pipeline.md` §2.5), which only
    /// converters ask for: a plain loop, so that the specialised one stays
    /// as it is.
    fn codes_grib_order(&self, data: &[u8], order: ByteOrder, out: &mut [u32]) -> bool {
        let (d, r, scale, maxq) = (self.decimal, self.reference, self.scale, self.max_code());
        let mut finite = true;
        for (c, q) in data.chunks_exact(8).zip(out.iter_mut()) {
            let v = load(c, order);
            finite &= v.is_finite();
            *q = quantise_u64((v * d - r) * scale).min(maxq) as u32;
        }
        finite
    }

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
        pack_dispatch(self, data, order, out)
    }

    /// [`Quantiser::pack`] for the instruction set the crate is compiled
    /// for.
    #[inline(always)]
    pub(crate) fn pack_portable(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        match order {
            ByteOrder::Little => self.pack_in(data, ByteOrder::Little, out),
            ByteOrder::Big => self.pack_in(data, ByteOrder::Big, out),
        }
    }

    #[inline(always)]
    fn pack_in(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        if self.decimal != 1.0 && self.bits > 0 {
            return self.pack_wide(data, order, out);
        }
        // Widths up to 32 bits, the ones GRIB-style packing uses, get a
        // group packer specialised at compile time.
        macro_rules! widths {
            ($($b:literal)*) => {
                match self.bits {
                    0 => true,
                    $($b => self.pack_blocks(data, order, out, put_group_const::<$b>),)*
                    1..=FLOAT_PATH_MAX_BITS => {
                        let bits = self.bits;
                        self.pack_blocks(data, order, out, |q, d| put_group(q, bits, d))
                    }
                    _ => self.pack_wide(data, order, out),
                }
            };
        }
        widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
    }

    /// Codes of any width up to 52 bits, each group of 8 filling exactly
    /// `bits` bytes: a block of codes is quantised by one loop the compiler
    /// vectorises, then packed group by group by `put`.
    #[inline(always)]
    fn pack_blocks(
        &self,
        data: &[u8],
        order: ByteOrder,
        out: &mut [u8],
        put: impl Fn(&[u64; GROUP], &mut [u8]),
    ) -> bool {
        let (r, scale, maxf) = (self.reference, self.scale, self.max_code() as f64);
        let bits = self.bits as usize;
        let mut special = 0u64;
        let mut codes = [0u64; BLOCK];
        let src = data.chunks_exact(8 * BLOCK);
        let src_tail = src.remainder();
        let block_out = BLOCK / GROUP * bits;
        let (head, d) = out.split_at_mut(data.len() / (8 * BLOCK) * block_out);
        for (s, d) in src.zip(head.chunks_exact_mut(block_out)) {
            for (c, q) in s.chunks_exact(8).zip(codes.iter_mut()) {
                let v = load(c, order);
                special |= is_special(v);
                *q = code_float((v - r) * scale, maxf);
            }
            for (q, d) in codes.chunks_exact(GROUP).zip(d.chunks_exact_mut(bits)) {
                put(q.try_into().expect("a group of codes"), d);
            }
        }
        let tail = src_tail.chunks_exact(8).map(|c| {
            let v = load(c, order);
            special |= is_special(v);
            code_float((v - r) * scale, maxf)
        });
        super::bits::pack_into(tail, self.bits, d);
        special == 0
    }

    /// Codes of 53..=64 bits, through exact integer rounding; also every
    /// width in GRIB's order (`spec/pipeline.md` §2.5), which only
    /// converters ask for, so that the specialised loops stay as they are.
    fn pack_wide(&self, data: &[u8], order: ByteOrder, out: &mut [u8]) -> bool {
        let (d, r, scale, maxq) = (self.decimal, self.reference, self.scale, self.max_code());
        let mut finite = true;
        let codes = data.chunks_exact(8).map(|c| {
            let v = load(c, order);
            finite &= v.is_finite();
            quantise_u64((v * d - r) * scale).min(maxq)
        });
        super::bits::pack_into(codes, self.bits, out);
        finite
    }
}

/// Packs 8 codes of `BITS` (1..=52) bits into `out`, exactly `BITS` bytes:
/// with the width a constant, every code's word and shift are constants.
#[inline(always)]
fn put_group_const<const BITS: u32>(q: &[u64; GROUP], out: &mut [u8]) {
    let bits = BITS as usize;
    let mut words = [0u64; 7];
    for (k, &v) in q.iter().enumerate() {
        let pos = k * bits;
        let (w, off) = (pos / 64, pos % 64);
        if off + bits <= 64 {
            words[w] |= v << (64 - bits - off);
        } else {
            let spill = off + bits - 64;
            words[w] |= v >> spill;
            words[w + 1] |= v << (64 - spill);
        }
    }
    for (i, chunk) in out[..bits].chunks_mut(8).enumerate() {
        let n = chunk.len();
        chunk.copy_from_slice(&words[i].to_be_bytes()[..n]);
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
            .map(|&v| quantise_u64((v * q.decimal - q.reference) * q.scale).min(maxq))
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
            grib_decimal in prop_oneof![Just(None), (-3i32..4).prop_map(Some)],
        ) {
            let vals: Vec<f64> = if constant {
                vec![vals.first().copied().unwrap_or(1.5); vals.len()]
            } else {
                vals
            };
            for bits in 1..=64u32 {
                let scale = super::super::powi(2.0, log_scale)
                    * if half { 1.5 } else { 1.0 };
                let decimal = grib_decimal.map_or(1.0, super::super::grib_power_of_ten);
                let q = Quantiser { decimal, reference, scale, bits };
                let (want, finite) = naive(&vals, &q);
                for order in [ByteOrder::Little, ByteOrder::Big] {
                    let mut got = vec![0xa5u8; want.len()];
                    let mut portable = vec![0x5au8; want.len()];
                    let ok = q.pack(&bytes(&vals, order), order, &mut got);
                    let ok_portable = q.pack_portable(&bytes(&vals, order), order, &mut portable);
                    prop_assert_eq!(ok, finite, "bits {}", bits);
                    prop_assert_eq!(ok_portable, finite, "bits {}", bits);
                    if finite {
                        prop_assert_eq!(&got, &want, "bits {} scale {} ref {}", bits, scale, reference);
                        prop_assert_eq!(&portable, &want, "bits {} scale {} ref {}", bits, scale, reference);
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
            let q = Quantiser { decimal: 1.0, reference: 0.0, scale: 1.0, bits };
            let (want, _) = naive(&vals, &q);
            let mut got = vec![0u8; want.len()];
            let mut portable = vec![0u8; want.len()];
            prop_assert!(q.pack(&bytes(&vals, ByteOrder::Little), ByteOrder::Little, &mut got));
            prop_assert!(q.pack_portable(&bytes(&vals, ByteOrder::Little), ByteOrder::Little, &mut portable));
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(portable, want);
        }
    }

    #[test]
    fn long_inputs_every_width_and_tail() {
        let n = 8 * 37 + 5;
        let vals: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 1e4).collect();
        for bits in 1..=64u32 {
            let scale = (1u64 << bits.min(52)) as f64 / 2.1e4;
            let q = Quantiser {
                decimal: 1.0,
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
