//! The last step of decoding an RSI: undoing the unit-delay prediction and
//! mapping (`spec/szip.md` §4) and storing each sample in its container, in
//! one pass from the decoded values to the output bytes.

use super::{flags, SzipParams};

/// A sample container: its width in bytes and byte order.
trait Container {
    const SB: usize;
    /// Stores `vals` in the first `vals.len()` containers of `out`.
    fn put_all(out: &mut [u8], vals: &[u32]);
}

macro_rules! container {
    ($name:ident, $sb:literal, |$v:ident| $bytes:expr) => {
        struct $name;
        impl Container for $name {
            const SB: usize = $sb;
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
    /// preprocessed) into `out`, `values.len()` containers.
    pub(crate) fn rsi_into(&self, values: &[u32], out: &mut [u8]) {
        match (self.sb, self.msb) {
            (1, _) => self.run::<One>(values, out),
            (2, true) => self.run::<TwoBe>(values, out),
            (2, false) => self.run::<TwoLe>(values, out),
            (3, true) => self.run::<ThreeBe>(values, out),
            (3, false) => self.run::<ThreeLe>(values, out),
            (_, true) => self.run::<FourBe>(values, out),
            (_, false) => self.run::<FourLe>(values, out),
        }
    }

    fn run<C: Container>(&self, values: &[u32], out: &mut [u8]) {
        if !self.pp {
            C::put_all(out, values);
            return;
        }
        let Some((&first, rest)) = values.split_first() else {
            return;
        };
        let Some((o, out)) = out.split_at_mut_checked(C::SB) else {
            return;
        };
        if self.signed {
            let m = 1i64 << (self.bits - 1);
            let first = (first as i64 ^ m) - m;
            C::put_all(o, &[first as u32]);
            undo::<C, true>(self.xmax, first, rest, out);
        } else {
            C::put_all(o, &[first]);
            undo::<C, false>(self.xmax, first as i64, rest, out);
        }
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

/// Rebuilds the samples after the first (`data`) from their mapped deltas
/// `rest` into the containers of `out` (`spec/szip.md` §4). A delta `d`
/// moves a sample by at most ⌈d/2⌉, so when a chunk's ⌈d/2⌉ add up to no
/// more than the room of the sample before it, no sample of the chunk can
/// reach an end of the range, and the chunk is a plain running sum. Other
/// chunks take the step sample by sample.
#[inline(never)]
fn undo<C: Container, const SIGNED: bool>(xmax: i64, mut data: i64, rest: &[u32], out: &mut [u8]) {
    let mut samples = [0u32; CHUNK];
    for (vals, o) in rest.chunks(CHUNK).zip(out.chunks_mut(CHUNK * C::SB)) {
        let reach: u64 = vals.iter().map(|&v| (u64::from(v) + 1) >> 1).sum();
        let samples = &mut samples[..vals.len()];
        if reach as i64 <= room::<SIGNED>(xmax, data) {
            for (s, &v) in samples.iter_mut().zip(vals) {
                let d = i64::from(v);
                data += (d >> 1) ^ -(d & 1);
                *s = data as u32;
            }
        } else {
            data = undo_each::<SIGNED>(xmax, data, vals, samples);
        }
        C::put_all(o, samples);
    }
}

/// [`undo`] sample by sample into `samples`: each sample is the previous
/// one plus the decoded delta unless the delta would leave the sample
/// range, where the value counts from an end instead. Returns the last
/// sample.
fn undo_each<const SIGNED: bool>(
    xmax: i64,
    mut data: i64,
    vals: &[u32],
    samples: &mut [u32],
) -> i64 {
    let med = xmax / 2 + 1;
    for (s, &v) in samples.iter_mut().zip(vals) {
        let d = i64::from(v);
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
        *s = data as u32;
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
        let mut chunked = vec![0u8; deltas.len() * 4];
        undo::<FourBe, SIGNED>(xmax, first, deltas, &mut chunked);
        let mut samples = vec![0u32; deltas.len()];
        undo_each::<SIGNED>(xmax, first, deltas, &mut samples);
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
