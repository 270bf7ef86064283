//! GRIB2 `grid_simple` fields packed a step at a time (`spec/convert.md`
//! "GRIB write-back", "Memory").
//!
//! `codes_set_double_array` needs every value at once, and while it packs
//! them ecCodes holds its packing buffer and the grown message besides:
//! 1.5 × a float64 field at 16 bits. Here ecCodes still chooses the packing
//! parameters, from the field's extremes (its simple packing reads nothing
//! else of the values), tgm computes the codes with ecCodes' rounding a
//! step at a time ([`FieldValues::each_step`]: values in memory paged out
//! once read, a compressed object decoded a step at a time), and ecCodes
//! stores the codes as they are. The message is byte for byte the
//! one `codes_set_double_array` writes (the tests compare both).

use super::ffi::Handle;
use super::field_values::FieldValues;
use super::GribError;

/// Widest codes packed here; wider fields go through ecCodes.
const MAX_BITS: i64 = 32;

/// Packs `values` into `h` as `codes_set_double_array("values")` does,
/// when `h` is a GRIB2 `grid_simple` message without a bitmap and the
/// values hold no NaN; returns whether it did (`h` is unchanged when not).
pub(super) fn pack_streamed(
    h: &mut Handle,
    values: &(impl FieldValues + ?Sized),
) -> Result<bool, GribError> {
    if values.len() < 2 || !eligible(h)? {
        return Ok(false);
    }
    let Some(extremes) = extremes(values)? else {
        return Ok(false);
    };
    // The parameters ecCodes picks for the extremes alone, found on a copy.
    let mut probe = h.try_clone()?;
    probe.set_double_array("values", &extremes)?;
    let Some(params) = Params::of(&probe)? else {
        return Ok(false);
    };
    drop(probe);
    let points = h.get_long("numberOfDataPoints")?;
    let count = i64::try_from(values.len())
        .map_err(|_| GribError::Invalid(format!("{} values exceed a GRIB count", values.len())))?;
    let codes = params.codes(values)?;
    h.set_double_array("values", &extremes)?;
    h.set_bytes("codedValues", &codes)?;
    drop(codes);
    h.set_long("numberOfValues", count)?;
    // Setting two values set the grid's point count to two.
    h.set_long("numberOfDataPoints", points)?;
    Ok(true)
}

/// Whether `h` packs its values with GRIB2 simple packing, without a bitmap.
fn eligible(h: &Handle) -> Result<bool, GribError> {
    if h.get_long("edition")? != 2 || h.get_string("packingType")? != "grid_simple" {
        return Ok(false);
    }
    let bitmap = h.is_defined("bitmapPresent") && h.get_long("bitmapPresent")? == 1;
    Ok(!bitmap)
}

/// The smallest and largest of `values` (at least one), scanned in order
/// with ecCodes' comparisons (so that of equal zeros the first is kept);
/// `None` when a value is NaN, found without reading further.
fn extremes(values: &(impl FieldValues + ?Sized)) -> Result<Option<[f64; 2]>, GribError> {
    let (mut found, mut nan) = (None, false);
    let scan = values.each_step(&mut |_, step| {
        let [mut min, mut max] = match (found, step.first()) {
            (Some(m), _) => m,
            (None, Some(&v)) => [v, v],
            (None, None) => return Ok(()),
        };
        for &v in step {
            if v.is_nan() {
                nan = true;
                return Err(GribError::Invalid("a value is NaN".into()));
            }
            if v > max {
                max = v;
            } else if v < min {
                min = v;
            }
        }
        found = Some([min, max]);
        Ok(())
    });
    if nan {
        return Ok(None);
    }
    scan?;
    Ok(found)
}

/// The simple-packing parameters ecCodes chose, when tgm packs with them:
/// no decimal scaling, at most [`MAX_BITS`] bits and a binary scale whose
/// power of two is a normal float64.
struct Params {
    reference: f64,
    /// 2^-E, the factor from a value's offset to its code.
    scale: f64,
    bits: u32,
}

impl Params {
    fn of(h: &Handle) -> Result<Option<Self>, GribError> {
        let bits = h.get_long("bitsPerValue")?;
        let decimal = h.get_long("decimalScaleFactor")?;
        let binary = h.get_long("binaryScaleFactor")?;
        if decimal != 0 || !(0..=MAX_BITS).contains(&bits) || !(-1000..=1000).contains(&binary) {
            return Ok(None);
        }
        Ok(Some(Params {
            reference: h.get_double("referenceValue")?,
            scale: f64::from_bits(((1023 - binary) as u64) << 52),
            bits: bits as u32,
        }))
    }

    /// The codes of `values`, most significant bit first, the last byte
    /// padded with zero bits, read a step at a time.
    fn codes(&self, values: &(impl FieldValues + ?Sized)) -> Result<Vec<u8>, GribError> {
        let mask = (1u64 << self.bits) - 1;
        let packed = pack_codes(values, self.bits, |v| {
            // ecCodes' rounding: ((v·10^0 − R)·2^−E + 0.5), truncated.
            Some((((v - self.reference) * self.scale) + 0.5) as u64 & mask)
        })?;
        packed.ok_or_else(|| GribError::Invalid("a value has no code".into()))
    }
}

/// The `bits`-wide codes that `code` gives each of `values`, most
/// significant bit first, the last byte padded with zero bits, read a step
/// at a time; `None` as soon as `code` gives none for a value.
pub(super) fn pack_codes(
    values: &(impl FieldValues + ?Sized),
    bits: u32,
    mut code: impl FnMut(f64) -> Option<u64>,
) -> Result<Option<Vec<u8>>, GribError> {
    let bits = u64::from(bits);
    let len = (values.len() as u64)
        .checked_mul(bits)
        .map(|b| b.div_ceil(8))
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| GribError::Invalid(format!("{} codes overflow", values.len())))?;
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| {
        GribError::Invalid(format!("cannot allocate {len} bytes for the packed values"))
    })?;
    // Bits not yet written, the oldest highest; fewer than 8 between codes.
    let (mut acc, mut held, mut coded) = (0u64, 0u64, true);
    let read = values.each_step(&mut |_, step| {
        for &v in step {
            let Some(c) = code(v) else {
                // Stops the reading; told apart from a reader's error below.
                coded = false;
                return Err(GribError::Invalid("a value has no code".into()));
            };
            acc = (acc << bits) | c;
            held += bits;
            while held >= 8 {
                held -= 8;
                out.push((acc >> held) as u8);
            }
            acc &= (1u64 << held) - 1;
        }
        Ok(())
    });
    if !coded {
        return Ok(None);
    }
    read?;
    if held > 0 {
        out.push((acc << (8 - held)) as u8);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample `sample` at `bits` bits per value, and its point count.
    fn sample(name: &str, bits: i64) -> (Handle, usize) {
        let mut h = Handle::from_sample(name).unwrap();
        h.set_long("bitsPerValue", bits).unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        (h, n)
    }

    /// A smooth field with small wiggles, `scale` wide around `centre`.
    fn field(n: usize, centre: f64, scale: f64) -> Vec<f64> {
        (0..n)
            .map(|i| centre + (i as f64 * 0.37).sin() * scale + (i % 7) as f64 * 1e-3 * scale)
            .collect()
    }

    /// Packs `values` on `h` both ways and asserts the same message.
    fn assert_same_message(h: Handle, values: &[f64]) {
        let mut whole = h.try_clone().unwrap();
        whole.set_double_array("values", values).unwrap();
        let mut streamed = h;
        assert!(pack_streamed(&mut streamed, values).unwrap());
        let (a, b) = (
            whole.message_bytes().unwrap(),
            streamed.message_bytes().unwrap(),
        );
        let first = a.iter().zip(b).position(|(x, y)| x != y);
        assert_eq!((a.len(), first), (b.len(), None), "first difference");
    }

    #[test]
    fn every_width_packs_as_eccodes_does() {
        for bits in [1, 2, 7, 8, 12, 16, 17, 24, 31, 32] {
            for (centre, scale) in [(273.15, 40.0), (0.0, 1e-3), (-5e4, 1e5), (1e-20, 3e-21)] {
                let (h, n) = sample("regular_ll_sfc_grib2", bits);
                assert_same_message(h, &field(n, centre, scale));
            }
        }
    }

    #[test]
    fn gaussian_and_reduced_grids_pack_as_eccodes_does() {
        for name in ["regular_gg_sfc_grib2", "reduced_gg_pl_32_grib2"] {
            let (h, n) = sample(name, 16);
            assert_same_message(h, &field(n, 101325.0, 2500.0));
        }
    }

    #[test]
    fn constant_fields_and_signed_zeros_pack_as_eccodes_does() {
        let (h, n) = sample("regular_ll_sfc_grib2", 16);
        assert_same_message(h, &vec![280.5; n]);
        for first in [0.0, -0.0] {
            let (h, n) = sample("regular_ll_sfc_grib2", 12);
            let mut v = field(n, 10.0, 5.0);
            v[0] = first;
            v[1] = -first;
            v[2] = -20.0;
            assert_same_message(h, &v);
            let (h, n) = sample("regular_ll_sfc_grib2", 12);
            let mut zeros = vec![0.0; n];
            zeros[0] = first;
            assert_same_message(h, &zeros);
        }
    }

    #[test]
    fn missing_points_bitmaps_and_grib1_are_left_to_eccodes() {
        let untouched = |h: &mut Handle, values: &[f64]| {
            let before = h.message().unwrap();
            assert!(!pack_streamed(h, values).unwrap());
            assert_eq!(h.message().unwrap(), before);
        };
        let (mut h, n) = sample("regular_ll_sfc_grib2", 16);
        let mut v = field(n, 273.15, 40.0);
        v[n / 2] = f64::NAN;
        untouched(&mut h, &v);
        let (mut h, n) = sample("regular_ll_sfc_grib2", 16);
        h.set_long("bitmapPresent", 1).unwrap();
        untouched(&mut h, &field(n, 273.15, 40.0));
        let (mut h, n) = sample("regular_ll_sfc_grib1", 16);
        untouched(&mut h, &field(n, 273.15, 40.0));
        let (mut h, _) = sample("regular_ll_sfc_grib2", 16);
        untouched(&mut h, &[1.0]);
    }

    #[test]
    fn a_field_eccodes_refuses_is_refused_the_same() {
        let (h, n) = sample("regular_ll_sfc_grib2", 16);
        let mut v = field(n, 273.15, 40.0);
        v[3] = f64::INFINITY;
        let mut whole = h.try_clone().unwrap();
        let expected = whole
            .set_double_array("values", &v)
            .unwrap_err()
            .to_string();
        let mut streamed = h;
        let got = pack_streamed(&mut streamed, &v[..])
            .unwrap_err()
            .to_string();
        assert_eq!(got, expected);
    }
}
