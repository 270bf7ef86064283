//! The last step of decoding an RSI: undoing the unit-delay prediction and
//! mapping (`spec/szip.md` §4) in place, then storing each sample in its
//! container, or handing the samples on as integers.

use super::{flags, SzipParams};

/// A sample container: its width in bytes and byte order.
trait Container {
    /// Stores `vals` in the first `vals.len()` containers of `out`.
    fn put_all(out: &mut [u8], vals: &[u32]);
}

macro_rules! container {
    ($name:ident, $sb:literal, |$v:ident| $bytes:expr) => {
        struct $name;
        impl Container for $name {
            #[inline(always)]
            fn put_all(out: &mut [u8], vals: &[u32]) {
                for (o, &$v) in out.as_chunks_mut::<$sb>().0.iter_mut().zip(vals) {
                    *o = $bytes;
                }
            }
        }
    };
}

container!(One, 1, |v| [v as u8]);
container!(TwoBe, 2, |v| (v as u16).to_be_bytes());
container!(TwoLe, 2, |v| (v as u16).to_le_bytes());
container!(ThreeBe, 3, |v| {
    let b = v.to_be_bytes();
    [b[1], b[2], b[3]]
});
container!(ThreeLe, 3, |v| {
    let b = v.to_le_bytes();
    [b[0], b[1], b[2]]
});
container!(FourBe, 4, |v| v.to_be_bytes());
container!(FourLe, 4, |v| v.to_le_bytes());

/// How an RSI's decoded values become output bytes.
pub(crate) struct Unmap {
    pp: bool,
    signed: bool,
    bits: u32,
    xmax: i64,
    sb: usize,
    msb: bool,
}

impl Unmap {
    /// The step for streams coded with `p`.
    pub(crate) fn new(p: &SzipParams) -> Self {
        let signed = p.flags & flags::SIGNED != 0;
        let bits = p.bits_per_sample;
        Unmap {
            pp: p.flags & flags::PREPROCESS != 0,
            signed,
            bits,
            xmax: if signed {
                (1i64 << (bits - 1)) - 1
            } else {
                (1i64 << bits) - 1
            },
            sb: p.sample_bytes(),
            msb: p.flags & flags::MSB != 0,
        }
    }

    /// Writes the samples of the RSI whose first decoded values are
    /// `values` (as stored: mapped deltas after the reference sample when
    /// preprocessed) into `out`, `values.len()` containers; `values` is
    /// left holding the samples (signed ones sign-extended to 32 bits).
    pub(crate) fn rsi_into(&self, values: &mut [u32], out: &mut [u8]) {
        self.samples_in_place(values);
        match (self.sb, self.msb) {
            (1, _) => One::put_all(out, values),
            (2, true) => TwoBe::put_all(out, values),
            (2, false) => TwoLe::put_all(out, values),
            (3, true) => ThreeBe::put_all(out, values),
            (3, false) => ThreeLe::put_all(out, values),
            (_, true) => FourBe::put_all(out, values),
            (_, false) => FourLe::put_all(out, values),
        }
    }

    /// Turns the decoded values of an RSI (as [`Unmap::rsi_into`] takes
    /// them) into its samples, each the unsigned integer of its
    /// `bits_per_sample` low bits: what its container holds.
    pub(crate) fn codes_in_place(&self, values: &mut [u32]) {
        self.samples_in_place(values);
        // Unsigned values too: a crafted split or edge value may exceed
        // the sample's bits, and its container keeps only those.
        if self.bits < 32 {
            let mask = (1u32 << self.bits) - 1;
            values.iter_mut().for_each(|v| *v &= mask);
        }
    }

    /// Undoes the preprocessing in place, signed samples sign-extended to
    /// 32 bits; without preprocessing the values are the samples.
    fn samples_in_place(&self, values: &mut [u32]) {
        if !self.pp {
            return;
        }
        let Some((first, rest)) = values.split_first_mut() else {
            return;
        };
        if self.signed {
            let m = 1i64 << (self.bits - 1);
            let data = (*first as i64 ^ m) - m;
            *first = data as u32;
            undo_dispatch(true, self.xmax, data, rest);
        } else {
            undo_dispatch(false, self.xmax, *first as i64, rest);
        }
    }
}

/// [`undo`] compiled for each listed instruction set and chosen once at
/// run time; every version rebuilds the same samples.
#[multiversion::multiversion(targets("x86_64+avx2+bmi1+bmi2+lzcnt+popcnt"))]
fn undo_dispatch(signed: bool, xmax: i64, data: i64, rest: &mut [u32]) {
    if signed {
        undo::<true>(xmax, data, rest);
    } else {
        undo::<false>(xmax, data, rest);
    }
}

/// Samples handled at a time by [`undo`].
const CHUNK: usize = 32;

/// How far a sample `data` may move before the next delta could leave the
/// sample range (`xmax` the largest sample): the distance to the nearer
/// end; negative for a sample outside the range.
#[inline(always)]
fn room<const SIGNED: bool>(xmax: i64, data: i64) -> i64 {
    if SIGNED {
        if data < 0 {
            xmax + data + 1
        } else {
            xmax - data
        }
    } else {
        data.min(xmax - data)
    }
}

/// Rebuilds in place the samples after the first (`data`) from their
/// mapped deltas `rest` (`spec/szip.md` §4). A delta `d` moves a sample by
/// at most ⌈d/2⌉, so when a chunk's ⌈d/2⌉ add up to no more than the room
/// of the sample before it, no sample of the chunk can reach an end of the
/// range, and the chunk is a plain running sum, here in 32-bit wrapping
/// arithmetic (every sample fits, as the sample's bits). Other chunks take
/// the step sample by sample.
#[inline(always)]
fn undo<const SIGNED: bool>(xmax: i64, mut data: i64, rest: &mut [u32]) {
    for vals in rest.chunks_mut(CHUNK) {
        let reach: u64 = vals.iter().map(|&v| (u64::from(v) + 1) >> 1).sum();
        if reach as i64 <= room::<SIGNED>(xmax, data) {
            // The deltas first, a loop that vectorises, then their sum.
            for v in vals.iter_mut() {
                *v = (*v >> 1) ^ (*v & 1).wrapping_neg();
            }
            let mut s = data as u32;
            for v in vals.iter_mut() {
                s = s.wrapping_add(*v);
                *v = s;
            }
            data = if SIGNED {
                i64::from(s as i32)
            } else {
                i64::from(s)
            };
        } else {
            data = undo_each::<SIGNED>(xmax, data, vals);
        }
    }
}

/// [`undo`] sample by sample: each sample is the previous one plus the
/// decoded delta unless the delta would leave the sample range, where the
/// value counts from an end instead. Returns the last sample.
fn undo_each<const SIGNED: bool>(xmax: i64, mut data: i64, vals: &mut [u32]) -> i64 {
    let med = xmax / 2 + 1;
    for v in vals.iter_mut() {
        let d = i64::from(*v);
        let half = (d >> 1) + (d & 1);
        data = if SIGNED {
            let room = if data < 0 {
                xmax + data + 1
            } else {
                xmax - data
            };
            if half <= room {
                data + ((d >> 1) ^ -(d & 1))
            } else {
                signed_edge(xmax, data, d)
            }
        } else {
            let mask = if data & med != 0 { xmax } else { 0 };
            if half <= (mask ^ data) {
                data + ((d >> 1) ^ -(d & 1))
            } else {
                unsigned_edge(mask, d)
            }
        };
        *v = data as u32;
    }
    data
}

/// A signed sample whose delta leaves the range: the value counts from the
/// nearer end.
#[cold]
#[inline(never)]
fn signed_edge(xmax: i64, data: i64, d: i64) -> i64 {
    if data < 0 {
        d - xmax - 1
    } else {
        xmax - d
    }
}

/// An unsigned sample whose delta leaves the range (`mask` is 0 below the
/// middle of the range, all ones above it).
#[cold]
#[inline(never)]
fn unsigned_edge(mask: i64, d: i64) -> i64 {
    mask ^ d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Rebuilds with [`undo`] (chunks as running sums where they fit) and
    /// with [`undo_each`] alone, as big-endian 4-byte containers.
    fn both<const SIGNED: bool>(xmax: i64, first: i64, deltas: &[u32]) -> (Vec<u8>, Vec<u8>) {
        let mut samples = deltas.to_vec();
        undo::<SIGNED>(xmax, first, &mut samples);
        let mut chunked = vec![0u8; deltas.len() * 4];
        FourBe::put_all(&mut chunked, &samples);
        let mut samples = deltas.to_vec();
        undo_each::<SIGNED>(xmax, first, &mut samples);
        let mut each = vec![0u8; deltas.len() * 4];
        FourBe::put_all(&mut each, &samples);
        (chunked, each)
    }

    proptest! {
        /// The chunked rebuild equals the sample-by-sample one for any
        /// deltas: small ones that stay inside the range, ones that reach
        /// its ends, and values no valid stream holds.
        #[test]
        fn chunks_rebuild_as_sample_by_sample(
            bits in 1u32..=32,
            first in any::<u32>(),
            deltas in proptest::collection::vec(
                prop_oneof![0u32..8, 0u32..70_000, any::<u32>()],
                0..200,
            ),
        ) {
            let xmax = (1i64 << bits) - 1;
            let unsigned_first = i64::from(first) & xmax;
            let (a, b) = both::<false>(xmax, unsigned_first, &deltas);
            prop_assert_eq!(a, b);
            let sxmax = (1i64 << (bits - 1)) - 1;
            let signed_first = unsigned_first - if unsigned_first > sxmax { xmax + 1 } else { 0 };
            let (a, b) = both::<true>(sxmax, signed_first, &deltas);
            prop_assert_eq!(a, b);
        }
    }
}
