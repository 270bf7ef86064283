//! simple_packing's unpack-and-scale in one pass: whole groups of 8 codes
//! (exactly `B` bytes each) are read with shifts fixed at compile time and
//! turned into `R + s · q` by a loop the compiler vectorises
//! (`spec/pipeline.md` §2.2, §6.2, §6.5). GRIB's order
//! `(R + s · q) · 10^−D` (§2.5) takes plain loops.

use crate::dtype::ByteOrder;
use crate::stream_store::StreamingStores;

/// Codes per group: 8 codes of B bits fill exactly B bytes.
const GROUP: usize = 8;

/// Codes unpacked ahead of scaling.
const BLOCK: usize = 256;

/// 2^52: `from_bits(bits(2^52) | q) − 2^52` is `q` exactly for `q < 2^52`.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// The scaling of one object: value = `(reference + scale · q) · decimal`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dequantiser {
    /// Reference value R (GRIB's, in GRIB's order).
    pub reference: f64,
    /// `2^E · 10^−D`, or `2^E` in GRIB's order.
    pub scale: f64,
    /// 1, or `10^−D` as ecCodes forms it in GRIB's order (§2.5); the
    /// product by 1 is exact, so both orders share one definition.
    pub decimal: f64,
    /// Bits per code B.
    pub bits: u32,
    /// Write with streaming stores (`spec/pipeline.md` §6.5).
    pub streaming: bool,
}

impl Dequantiser {
    /// The scaling of `p` (`spec/pipeline.md` §2.2, §2.5).
    pub fn of(p: &super::PackingParams, streaming: bool) -> Self {
        let two_e = super::powi(2.0, p.binary_scale_factor);
        match p.grib_reference_value {
            None => Dequantiser {
                reference: p.reference_value,
                scale: two_e * super::powi(10.0, -p.decimal_scale_factor),
                decimal: 1.0,
                bits: p.bits_per_value,
                streaming,
            },
            Some(r) => Dequantiser {
                reference: r,
                scale: two_e,
                decimal: super::grib_power_of_ten(-p.decimal_scale_factor),
                bits: p.bits_per_value,
                streaming,
            },
        }
    }

    /// The value of code `q`.
    #[inline(always)]
    pub fn value(&self, q: u64) -> f64 {
        (self.reference + self.scale * q as f64) * self.decimal
    }

    /// The value of every element of a zero-bit object: the reference
    /// value itself (in GRIB's order, scaled by `10^−D`).
    pub fn constant(&self) -> f64 {
        if self.decimal == 1.0 {
            self.reference
        } else {
            self.reference * self.decimal
        }
    }

    /// Decodes the leading whole blocks of the `n` codes that start on a byte
    /// boundary at `packed[0]` into float64 bytes in `order` at the front of
    /// `out`, and returns how many values it wrote (a multiple of the block
    /// size; 0 for widths it does not specialise). The caller finishes the
    /// rest. `packed` must hold the `n` codes and `out` `8 · n` bytes.
    pub fn decode_blocks(
        &self,
        packed: &[u8],
        n: usize,
        order: ByteOrder,
        out: &mut [u8],
    ) -> usize {
        decode_dispatch(self, packed, n, order, out)
    }

    /// [`Dequantiser::decode_blocks`] for the instruction set the crate is
    /// compiled for.
    #[inline(always)]
    pub(crate) fn decode_blocks_portable(
        &self,
        packed: &[u8],
        n: usize,
        order: ByteOrder,
        out: &mut [u8],
    ) -> usize {
        match order {
            ByteOrder::Little => self.decode_in(packed, n, ByteOrder::Little, out),
            ByteOrder::Big => self.decode_in(packed, n, ByteOrder::Big, out),
        }
    }

    /// The specialised kernels serve §2.2's order; GRIB's order (§2.5),
    /// which only converters ask for, is left to the caller's generic
    /// unpacker (0 values written), so that these loops stay as they are.
    #[inline(always)]
    fn decode_in(&self, packed: &[u8], n: usize, order: ByteOrder, out: &mut [u8]) -> usize {
        if self.decimal != 1.0 {
            return 0;
        }
        macro_rules! widths {
            ($($b:literal)*) => {
                match self.bits {
                    $($b => self.blocks(packed, n, order, out, get_group::<$b>),)*
                    _ => 0,
                }
            };
        }
        widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
    }

    #[inline(always)]
    fn blocks(
        &self,
        packed: &[u8],
        n: usize,
        order: ByteOrder,
        out: &mut [u8],
        get: impl Fn(&[u8], &mut [u32]),
    ) -> usize {
        let bits = self.bits as usize;
        let (r, s) = (self.reference, self.scale);
        let blocks = n / BLOCK;
        let mut codes = [0u32; BLOCK];
        let mut values = [0u8; 8 * BLOCK];
        let mut writer = StreamingStores::new(self.streaming);
        let src = packed.chunks_exact(BLOCK / GROUP * bits);
        for (src, dst) in src.zip(out.chunks_exact_mut(8 * BLOCK)).take(blocks) {
            for (g, q) in src.chunks_exact(bits).zip(codes.chunks_exact_mut(GROUP)) {
                get(g, q);
            }
            scale(r, s, &codes, order, &mut values);
            writer.copy(dst, &values);
        }
        blocks * BLOCK
    }

    /// Writes the values of `codes` (each below `2^bits`) as float64 bytes
    /// in `order` into `out`, `8 · codes.len()` bytes: the values
    /// [`Dequantiser::decode_blocks`] gives for the same codes packed.
    pub fn decode_codes(&self, codes: &[u32], order: ByteOrder, out: &mut [u8]) {
        codes_dispatch(self, codes, order, out)
    }

    /// [`Dequantiser::decode_codes`] for the instruction set the crate is
    /// compiled for.
    #[inline(always)]
    pub(crate) fn decode_codes_portable(&self, codes: &[u32], order: ByteOrder, out: &mut [u8]) {
        match order {
            ByteOrder::Little => self.codes_in(codes, ByteOrder::Little, out),
            ByteOrder::Big => self.codes_in(codes, ByteOrder::Big, out),
        }
    }

    #[inline(always)]
    fn codes_in(&self, codes: &[u32], order: ByteOrder, out: &mut [u8]) {
        if self.decimal != 1.0 {
            // GRIB's order (§2.5): one plain loop.
            for (&q, o) in codes.iter().zip(out.chunks_exact_mut(8)) {
                o.copy_from_slice(&bytes_in(self.value(u64::from(q)), order));
            }
            return;
        }
        let (r, s) = (self.reference, self.scale);
        if !self.streaming {
            return scale(r, s, codes, order, out);
        }
        let mut values = [0u8; 8 * BLOCK];
        let mut writer = StreamingStores::new(true);
        for (q, dst) in codes.chunks(BLOCK).zip(out.chunks_mut(8 * BLOCK)) {
            let values = &mut values[..dst.len()];
            scale(r, s, q, order, values);
            writer.copy(dst, values);
        }
    }
}

/// `R + s · q` for each code `q` of `codes`, as float64 bytes in `order`
/// into the first `8 · codes.len()` bytes of `out`.
#[inline(always)]
fn scale(r: f64, s: f64, codes: &[u32], order: ByteOrder, out: &mut [u8]) {
    for (&q, o) in codes.iter().zip(out.chunks_exact_mut(8)) {
        let v = r + s * (f64::from_bits(TWO52.to_bits() | q as u64) - TWO52);
        o.copy_from_slice(&bytes_in(v, order));
    }
}

/// `v` as float64 bytes in `order`.
#[inline(always)]
fn bytes_in(v: f64, order: ByteOrder) -> [u8; 8] {
    match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    }
}

/// [`Dequantiser::decode_blocks_portable`] compiled for each listed
/// instruction set and chosen once at run time; every version writes the
/// same bytes.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
))]
fn decode_dispatch(
    d: &Dequantiser,
    packed: &[u8],
    n: usize,
    order: ByteOrder,
    out: &mut [u8],
) -> usize {
    d.decode_blocks_portable(packed, n, order, out)
}

/// [`Dequantiser::decode_codes_portable`] compiled for each listed
/// instruction set and chosen once at run time; every version writes the
/// same bytes.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
))]
fn codes_dispatch(d: &Dequantiser, codes: &[u32], order: ByteOrder, out: &mut [u8]) {
    d.decode_codes_portable(codes, order, out)
}

/// Reads 8 codes of `BITS` (1..=32) bits from `g` (exactly `BITS` bytes,
/// MSB first) into `q`, which has room for 8.
#[inline(always)]
fn get_group<const BITS: u32>(g: &[u8], q: &mut [u32]) {
    let bits = BITS as usize;
    let mut words = [0u64; 4];
    for (i, chunk) in g[..bits].chunks(8).enumerate() {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        words[i] = u64::from_be_bytes(w);
    }
    let mask = (1u64 << bits) - 1;
    for (k, q) in q.iter_mut().enumerate().take(GROUP) {
        let pos = k * bits;
        let (w, off) = (pos / 64, pos % 64);
        *q = (if off + bits <= 64 {
            (words[w] >> (64 - bits - off)) & mask
        } else {
            let spill = off + bits - 64;
            ((words[w] << spill) | (words[w + 1] >> (64 - spill))) & mask
        }) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The element-by-element definition through the generic unpacker.
    fn naive(packed: &[u8], n: usize, d: &Dequantiser, order: ByteOrder) -> Vec<u8> {
        let mut out = vec![0u8; n * 8];
        super::super::bits::unpack(packed, 0, n, d.bits, |i, q| {
            let v = (d.reference + d.scale * q as f64) * d.decimal;
            out[i * 8..i * 8 + 8].copy_from_slice(&match order {
                ByteOrder::Little => v.to_le_bytes(),
                ByteOrder::Big => v.to_be_bytes(),
            });
        });
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Every specialised width, both byte orders, random codes and
        /// scales: the dispatched and the portable kernels write exactly
        /// the definition's bytes for the values they claim.
        #[test]
        fn blocks_equal_the_definition(
            seed in any::<u64>(),
            extra in 0usize..700,
            reference in -1e5f64..1e5,
            log_scale in -40i32..40,
            grib_decimal in -3i32..4,
        ) {
            for bits in 1..=33u32 {
                let n = BLOCK * 2 + extra;
                let len = super::super::bits::packed_len(n, bits).unwrap();
                let mut x = seed | 1;
                let packed: Vec<u8> = (0..len).map(|_| {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    x as u8
                }).collect();
                // GRIB's order, with a decimal scale, for half the seeds.
                let decimal = if seed % 4 < 2 {
                    1.0
                } else {
                    super::super::grib_power_of_ten(-grib_decimal)
                };
                let d = Dequantiser {
                    reference,
                    scale: super::super::powi(2.0, log_scale),
                    decimal,
                    bits,
                    streaming: seed % 2 == 0,
                };
                for order in [ByteOrder::Little, ByteOrder::Big] {
                    let want = naive(&packed, n, &d, order);
                    let mut got = vec![0xa5u8; n * 8];
                    let mut portable = vec![0x5au8; n * 8];
                    let done = d.decode_blocks(&packed, n, order, &mut got);
                    let done_portable = d.decode_blocks_portable(&packed, n, order, &mut portable);
                    prop_assert_eq!(done, done_portable);
                    // Whole blocks of §2.2's order; GRIB's is the caller's.
                    let expect = if bits <= 32 && decimal == 1.0 { n / BLOCK * BLOCK } else { 0 };
                    prop_assert_eq!(done, expect, "bits {}", bits);
                    prop_assert_eq!(&got[..done * 8], &want[..done * 8], "bits {}", bits);
                    prop_assert_eq!(&portable[..done * 8], &want[..done * 8], "bits {}", bits);
                    // Nothing past the claimed values is touched.
                    prop_assert!(got[done * 8..].iter().all(|&b| b == 0xa5));
                    if bits <= 32 {
                        // The same values from the codes as integers.
                        let mut codes = vec![0u32; n];
                        super::super::bits::unpack(&packed, 0, n, bits, |i, q| codes[i] = q as u32);
                        let mut from_codes = vec![0x5au8; n * 8];
                        d.decode_codes(&codes, order, &mut from_codes);
                        prop_assert_eq!(&from_codes, &want, "bits {}", bits);
                        let mut portable = vec![0xa5u8; n * 8];
                        d.decode_codes_portable(&codes, order, &mut portable);
                        prop_assert_eq!(&portable, &want, "bits {}", bits);
                    }
                }
            }
        }
    }
}
