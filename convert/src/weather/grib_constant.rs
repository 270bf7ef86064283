//! Constant fields coded at a width, kept whole (`spec/convert.md` "GRIB
//! write-back"). A field whose values are all the same may still be coded
//! with data bits: JPEG 2000 codes of zeros at 14 bits under a decimal
//! scale (ecCodes' `reduced_gg_sfc_jpeg_grib2` sample), a single point at
//! 24 bits. ecCodes packs a constant field at no bits, or with its
//! `produceLargeConstantFields` at the width asked but with E = D = 0, so
//! such a source cannot be packed again as it was. When its data section
//! is small, `convert-grib` keeps the source's message whole as its header
//! ([`kept_whole`]), and `to-grib` writes that message as it stands when it
//! still decodes to the object's values ([`still_holds`]).

use super::budget::DecodeBudget;
use super::ffi::Handle;
use super::field_values::FieldValues;
use super::grib::{checked_data_section, data_range, key_long};
use super::GribError;

/// The most bytes a message kept whole may take beyond its header with
/// the data replaced by zeros.
pub(super) const MAX_KEPT_DATA: usize = 4096;

/// Packings whose coefficients are not one value per point: never kept
/// whole (their templates keep one bit per coefficient).
fn coefficients(packing: &str) -> bool {
    packing.starts_with("spectral") || packing.starts_with("bifourier")
}

/// The source message of `h`, when its field is constant (every value of
/// `values` the same number, none missing), coded with data bits, without
/// a bitmap, and its message at most [`MAX_KEPT_DATA`] bytes longer than
/// `header` (the message with its values replaced by zeros).
pub(super) fn kept_whole(
    h: &Handle,
    values: &[f64],
    header: &[u8],
) -> Result<Option<Vec<u8>>, GribError> {
    let Some(&first) = values.first() else {
        return Ok(None);
    };
    let constant = !first.is_nan() && values.iter().all(|v| v.to_bits() == first.to_bits());
    if !constant
        || h.get_long("bitsPerValue")? <= 0
        || key_long(h, "bitmapPresent").is_some_and(|b| b != 0)
        || coefficients(&h.get_string("packingType")?)
        || h.get_long("totalLength")? > (header.len() + MAX_KEPT_DATA) as i64
    {
        return Ok(None);
    }
    Ok(Some(h.message_bytes()?.to_vec()))
}

/// Whether `h`, a header after its MARS edits, already holds `values`
/// packed as `packing` at `bits` bits per value: a constant field kept
/// whole ([`kept_whole`]) whose object still has its values, bit for bit.
/// Only a header shaped as [`kept_whole`] keeps them is decoded: no bitmap,
/// as many coded values as points, a data section of at most
/// [`MAX_KEPT_DATA`] bytes holding the codes its header announces. The
/// object's values are read first (one pass), the header's only when they
/// are all the same.
pub(super) fn still_holds(
    h: &Handle,
    values: &(impl FieldValues + ?Sized),
    packing: &str,
    bits: Option<i64>,
) -> Result<bool, GribError> {
    let coded = h.get_long("bitsPerValue")?;
    let points = values.len() as i64;
    if coded <= 0
        || bits.is_some_and(|b| b != coded)
        || coefficients(packing)
        || h.get_string("packingType")? != packing
        || h.get_long("numberOfDataPoints")? != points
        || key_long(h, "bitmapPresent").is_some_and(|b| b != 0)
        || key_long(h, "numberOfCodedValues").is_some_and(|n| n != points)
        || h.size("values")? != values.len()
    {
        return Ok(false);
    }
    // A header kept whole carries a small data section, holding its codes:
    // another (an untrusted header's) is packed again rather than decoded
    // here.
    let small = data_range(h).is_some_and(|r| r.len() <= MAX_KEPT_DATA);
    let budget = DecodeBudget::for_input(data_range(h).map_or(0, |r| r.len() as u64));
    if !small || checked_data_section(h, &budget).is_err() {
        return Ok(false);
    }
    let mut first: Option<u64> = None;
    let mut same = true;
    values.each_step(&mut |_, step| {
        for v in step {
            let b = v.to_bits();
            same &= !v.is_nan() && *first.get_or_insert(b) == b;
        }
        Ok(())
    })?;
    let Some(first) = first.filter(|_| same) else {
        return Ok(false);
    };
    let held = h.get_double_array("values")?;
    Ok(held.len() == values.len() && held.iter().all(|v| v.to_bits() == first))
}
