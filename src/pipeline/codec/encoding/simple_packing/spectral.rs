//! simple_packing over spherical-harmonic coefficients as GRIB's
//! `spectral_complex` packing stores them (`spec/pipeline.md` §2.6, a tgm
//! extension): the codes are simple_packing's in GRIB's order (§2.5); a
//! pass over the float64 output then puts back the unpacked subset and the
//! Laplacian scaling, element by element, so whole, threaded and range
//! decodes share it.

use std::borrow::Cow;
use std::ops::Range;

use super::read_f64;
use crate::cbor::Value;
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, Result};
use crate::pipeline::codec::stage::{EncodingStage, RangeInput, Stage, StageContext, StagePlan};
use crate::pipeline_spec::{subset_bytes, SpectralPacking};

/// What one element of the coefficient order holds (§2.6).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Coefficient {
    /// The `index`-th value of the unpacked subset, of total wavenumber
    /// `n`.
    Subset { index: usize, n: usize },
    /// A packed code of total wavenumber `n`.
    Packed(usize),
    /// The imaginary part of a packed `m = 0` coefficient: always 0.
    Zero,
}

/// The elements of truncation `j` with subset truncation `js` in order:
/// for `m = 0..=j`, for `n = m..=j`, the real then the imaginary part.
struct Order {
    j: usize,
    js: usize,
    m: usize,
    n: usize,
    imaginary: bool,
    subset: usize,
}

impl Order {
    /// The order positioned at element `first` (O(J) to get there).
    fn at(j: usize, js: usize, first: u64) -> Self {
        let mut o = Order {
            j,
            js,
            m: 0,
            n: 0,
            imaginary: false,
            subset: 0,
        };
        let mut left = first;
        while o.m <= j {
            let block = 2 * (j - o.m + 1) as u64;
            if left < block {
                break;
            }
            left -= block;
            o.subset += 2 * (js + 1).saturating_sub(o.m);
            o.m += 1;
        }
        o.n = o.m + (left / 2) as usize;
        o.imaginary = left % 2 == 1;
        o.subset +=
            2 * (js + 1).saturating_sub(o.m).min(o.n - o.m) + usize::from(o.imaginary && o.n <= js);
        o
    }
}

impl Iterator for Order {
    type Item = Coefficient;

    fn next(&mut self) -> Option<Coefficient> {
        if self.m > self.j {
            return None;
        }
        let c = if self.n <= self.js {
            self.subset += 1;
            Coefficient::Subset {
                index: self.subset - 1,
                n: self.n,
            }
        } else if self.m == 0 && self.imaginary {
            Coefficient::Zero
        } else {
            Coefficient::Packed(self.n)
        };
        if self.imaginary {
            self.n += 1;
            if self.n > self.j {
                self.m += 1;
                self.n = self.m;
            }
        }
        self.imaginary = !self.imaginary;
        Some(c)
    }
}

impl SpectralPacking {
    /// `1 / (n(n+1))^P` for `n = 0..=J` as ecCodes forms it (0 for n = 0
    /// and wherever the power is 0).
    fn scales(&self) -> Vec<f64> {
        (0..=self.truncation as usize)
            .map(|n| {
                let power = ((n * (n + 1)) as f64).powf(self.laplacian);
                if n == 0 || power == 0.0 {
                    0.0
                } else {
                    1.0 / power
                }
            })
            .collect()
    }

    /// The elements' order from element `first`.
    fn order(&self, first: u64) -> Order {
        Order::at(
            self.truncation as usize,
            self.subset_truncation as usize,
            first,
        )
    }

    /// Puts the subset, the zero parts and the scaling into `out`, the
    /// float64 values of elements `first..` in `order` that the codes
    /// decoded to in GRIB's order.
    fn rebuild(&self, out: &mut [u8], order: ByteOrder, first: u64) -> Result<()> {
        let subset = self.subset.as_deref().ok_or_else(|| {
            Error::metadata("simple_packing with sp_spectral_* keys lacks sp_spectral_subset")
        })?;
        let scales = self.scales();
        for (c, e) in self.order(first).zip(out.chunks_exact_mut(8)) {
            let v = match c {
                Coefficient::Subset { index, n } => {
                    let v = f64::from(subset.get(index).copied().unwrap_or(0.0));
                    if self.scales_subset_at(n) {
                        v * scales[n]
                    } else {
                        v
                    }
                }
                Coefficient::Zero => 0.0,
                Coefficient::Packed(n) => read_f64(e, order) * scales[n],
            };
            e.copy_from_slice(&write(v, order));
        }
        Ok(())
    }

    /// The values the codes are quantised from: packed coefficients
    /// divided by their scaling, and the code-0 value `R · 10^−D` where
    /// the subset and the zero parts stand; the subset itself, which must
    /// be binary32 values.
    fn unscaled(&self, input: &[u8], order: ByteOrder) -> Result<(Vec<u8>, Vec<f32>)> {
        let p = self.packing.packing_params()?;
        let code_zero = super::dequantise::Dequantiser::of(&p, false).value(0);
        let scales = self.scales();
        let mut subset =
            Vec::with_capacity(SpectralPacking::values_of(self.subset_truncation) as usize);
        let mut codes = Vec::with_capacity(input.len());
        for (i, (c, e)) in self.order(0).zip(input.chunks_exact(8)).enumerate() {
            let v = read_f64(e, order);
            let u = match c {
                Coefficient::Subset { n, .. } if self.scales_subset_at(n) => {
                    subset.push(unscaled_subset_value(v, scales[n]).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "coefficient {i} ({v}) is within the unpacked subset's row JS, \
                             scaled by sp_spectral_subset_last_scaled, but no binary32 value \
                             scales to it (spec/pipeline.md §2.6)"
                        ))
                    })?);
                    code_zero
                }
                Coefficient::Subset { .. } => {
                    let f = v as f32;
                    if f64::from(f).to_bits() != v.to_bits() {
                        return Err(Error::invalid_argument(format!(
                            "coefficient {i} ({v}) is within the unpacked subset but is not a \
                             binary32 value (spec/pipeline.md §2.6)"
                        )));
                    }
                    subset.push(f);
                    code_zero
                }
                Coefficient::Zero => code_zero,
                Coefficient::Packed(n) if scales[n] != 0.0 => v / scales[n],
                Coefficient::Packed(_) => code_zero,
            };
            codes.extend_from_slice(&u.to_ne_bytes());
        }
        Ok((codes, subset))
    }

    /// Whether a subset coefficient of total wavenumber `n` is scaled
    /// (`sp_spectral_subset_last_scaled` and `n` = JS).
    fn scales_subset_at(&self, n: usize) -> bool {
        self.subset_last_scaled && n == self.subset_truncation as usize
    }

    /// Checks the object: float64 with `(J+1)(J+2)` elements.
    fn check_count(&self, cx: &StageContext) -> Result<()> {
        let want = SpectralPacking::values_of(self.truncation);
        if cx.num_elements != want {
            return Err(Error::metadata(format!(
                "simple_packing with sp_spectral_truncation {} needs {want} values, the object \
                 has {}",
                self.truncation, cx.num_elements
            )));
        }
        Ok(())
    }
}

/// The binary32 value `f` whose product `f · scale` (in float64, as
/// decoding forms it) is `v` to the bit: the quotient rounded to binary32
/// or one of its neighbours; None when none is.
fn unscaled_subset_value(v: f64, scale: f64) -> Option<f32> {
    let near = (v / scale) as f32;
    let candidates = if near.is_finite() {
        [near, near.next_up(), near.next_down()]
    } else {
        // A scale of 0 (n = 0) gives ±0 whatever the value.
        [0.0, -0.0, 0.0]
    };
    candidates
        .into_iter()
        .find(|f| (f64::from(*f) * scale).to_bits() == v.to_bits())
}

fn write(v: f64, order: ByteOrder) -> [u8; 8] {
    match order {
        ByteOrder::Big => v.to_be_bytes(),
        ByteOrder::Little => v.to_le_bytes(),
    }
}

impl Stage for SpectralPacking {
    fn name(&self) -> &str {
        "simple_packing"
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        self.packing.validate(cx)?;
        if cx.dtype != Dtype::Float64 {
            return Ok(());
        }
        self.check_count(cx)
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        self.check_count(cx)?;
        let (codes, subset) = self.unscaled(&input, cx.byte_order)?;
        let native = StageContext {
            byte_order: ByteOrder::native(),
            ..*cx
        };
        let out = self.packing.encode(Cow::Owned(codes), &native)?;
        self.subset = Some(subset);
        Ok(Cow::Owned(out.into_owned()))
    }

    fn derived_params(&self) -> Vec<(&'static str, Value)> {
        let mut v = self.packing.derived_params();
        if let Some(s) = &self.subset {
            v.push(("sp_spectral_subset", Value::Bytes(subset_bytes(s))));
        }
        v
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        self.check_count(cx)?;
        self.packing.decode_into(input, cx, out)?;
        self.rebuild(out, cx.out_order, 0)
    }

    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        self.check_count(cx)?;
        self.packing.decode_range_into(input, cx, from, out)?;
        self.rebuild(out, cx.out_order, from / 8)
    }

    fn supports_range(&self) -> bool {
        true
    }

    fn plan_range(&self, wanted: &[Range<u64>], cx: &StageContext) -> Result<Option<StagePlan>> {
        self.packing.plan_range(wanted, cx)
    }
}

impl EncodingStage for SpectralPacking {
    fn encoded_len(&self, input_len: u64, cx: &StageContext) -> Result<u64> {
        self.packing.encoded_len(input_len, cx)
    }

    fn output_form(&self, cx: &StageContext) -> (u32, bool) {
        self.packing.output_form(cx)
    }

    /// R, E and `sp_grib_reference_value` must be given (§2.5); D
    /// defaults to 0.
    fn prepare(
        &mut self,
        raw: &[u8],
        range: Option<&crate::pipeline::scan::FiniteRange>,
        cx: &StageContext,
    ) -> Result<()> {
        if self.packing.reference_value.is_none() || self.packing.binary_scale_factor.is_none() {
            return Err(Error::metadata(
                "sp_spectral_* keys need sp_reference_value and sp_binary_scale_factor: the \
                 coefficients' codes are the source's",
            ));
        }
        self.packing.prepare(raw, range, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element's class, walked from 0, equals the walk started at
    /// any element.
    #[test]
    fn order_started_anywhere_matches_the_walk() {
        for (j, js) in [(1usize, 0usize), (5, 2), (8, 7), (63, 20)] {
            let all: Vec<Coefficient> = Order::at(j, js, 0).collect();
            assert_eq!(all.len(), (j + 1) * (j + 2));
            let subset = all
                .iter()
                .filter(|c| matches!(c, Coefficient::Subset { .. }))
                .count();
            assert_eq!(subset, (js + 1) * (js + 2));
            for first in 0..all.len() {
                let tail: Vec<Coefficient> = Order::at(j, js, first as u64).collect();
                assert_eq!(tail, all[first..], "j {j} js {js} first {first}");
            }
        }
    }

    #[test]
    fn order_of_a_small_truncation() {
        use Coefficient::*;
        let got: Vec<Coefficient> = Order::at(2, 0, 0).collect();
        assert_eq!(
            got,
            [
                Subset { index: 0, n: 0 },
                Subset { index: 1, n: 0 },
                Packed(1),
                Zero,
                Packed(2),
                Zero,
                Packed(1),
                Packed(1),
                Packed(2),
                Packed(2),
                Packed(2),
                Packed(2)
            ]
        );
    }

    #[test]
    fn a_scaled_subset_value_is_found_from_its_product() {
        let scale = 1.0 / (20.0f64 * 21.0).powf(1.29);
        for f in [1.5f32, -1234.567, 3.0e-7, 0.0] {
            let v = f64::from(f) * scale;
            let back = unscaled_subset_value(v, scale).unwrap();
            assert_eq!((f64::from(back) * scale).to_bits(), v.to_bits(), "{f}");
        }
        // No binary32 value scales to a float64 between two products.
        let v = f64::from(1.5f32) * scale;
        assert_eq!(
            unscaled_subset_value(f64::from_bits(v.to_bits() + 7), scale),
            None
        );
        assert_eq!(unscaled_subset_value(0.0, 0.0), Some(0.0));
        assert_eq!(unscaled_subset_value(1.0, 0.0), None);
    }
}
