//! Simple-packed fields written back at both of their source's scales
//! (`spec/convert.md` "GRIB write-back", step 2).
//!
//! ecCodes' simple packer never writes a decimal scale factor D and a binary
//! scale factor E together: given D with E = 0 it picks the width, given a
//! width it picks E and sets D to 0. A source coded with both (D = 1,
//! E = −2, say) so came back at another precision, and one with D and a
//! width wider than its range needs came back narrower. Here the message
//! is laid out by ecCodes at the source's width, and the source's reference
//! value, E and D and the codes `⌊(v·10^D − R)·2^−E + 0.5⌋` (computed as
//! ecCodes computes them) are written into it, so that ecCodes decodes the
//! source's values bit for bit.

use tgm::cbor::Value;

use super::ffi::Handle;
use super::field_values::FieldValues;
use super::grib_simple::pack_codes;
use super::GribError;

/// Widest codes written here (ecCodes' simple packing reads at most 32).
const MAX_BITS: i64 = 32;

/// The simple-packing parameters of the source (`base[i].grib`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SourceSimple {
    bits: u32,
    reference: f64,
    binary: i32,
    decimal: i32,
}

impl SourceSimple {
    /// The parameters recorded in `grib`, when its packing is `grid_simple`
    /// with a decimal scale factor.
    pub(super) fn of(grib: &[(Value, Value)]) -> Option<Self> {
        let key = |k: &str| {
            grib.iter()
                .find(|(n, _)| n.as_text() == Some(k))
                .map(|(_, v)| v)
        };
        if key("packingType")?.as_text()? != "grid_simple" {
            return None;
        }
        let int = |k: &str| key(k).and_then(Value::as_i64);
        let bits = int("bitsPerValue").filter(|b| (1..=MAX_BITS).contains(b))?;
        let binary = int("binaryScaleFactor").filter(|e| (-1000..=1000).contains(e))?;
        let decimal = int("decimalScaleFactor").filter(|d| (-30..=30).contains(d))?;
        let reference = key("referenceValue")?.as_f64().filter(|r| r.is_finite())?;
        (decimal != 0).then_some(SourceSimple {
            bits: bits as u32,
            reference,
            binary: binary as i32,
            decimal: decimal as i32,
        })
    }

    /// Whether the source had a binary scale factor besides its decimal one,
    /// which ecCodes' simple packer cannot write.
    pub(super) fn has_binary_scale(self) -> bool {
        self.binary != 0
    }

    /// `10^D` as ecCodes' `codes_power` forms it: a product (or quotient)
    /// of tens, one at a time.
    fn ten_to_d(self) -> f64 {
        let mut p = 1.0f64;
        for _ in 0..self.decimal.unsigned_abs() {
            if self.decimal > 0 {
                p *= 10.0;
            } else {
                p /= 10.0;
            }
        }
        p
    }

    /// `2^−E`, exact (E is within the normal range).
    fn two_to_minus_e(self) -> f64 {
        2f64.powi(-self.binary)
    }

    /// The codes of `values`, most significant bit first, the last byte
    /// padded with zeros; `None` when a value is NaN or its code does not
    /// fit the source's width (the values are not the source's codes).
    fn codes(self, values: &(impl FieldValues + ?Sized)) -> Result<Option<Vec<u8>>, GribError> {
        let (ten, scale) = (self.ten_to_d(), self.two_to_minus_e());
        let top = (1u64 << self.bits) as f64;
        pack_codes(values, self.bits, |v| {
            // ecCodes' rounding: ((v·10^D − R)·2^−E + 0.5), truncated.
            let x = (v * ten - self.reference) * scale + 0.5;
            (0.0..top).contains(&x).then_some(x as u64)
        })
    }
}

/// Packs `values` into `h`, a GRIB2 `grid_simple` message without a bitmap,
/// at the source's width, reference value and both scale factors; returns
/// whether it did. `h` is unchanged when it did not: another edition or
/// packing, a bitmap, fewer than two values, or values that are not codes
/// at those parameters (edited values), which then go through ecCodes.
///
/// ecCodes computes `referenceValue` and `binaryScaleFactor` and will not
/// set them, so it lays the message out (packed at the source's width
/// without decimal scaling, which gives the data section its length), and
/// the octets of section 5 (R, E, D) and the codes of section 7 are then
/// written as the source had them (GRIB2 template 5.0). The result is
/// parsed again and kept only when ecCodes decodes exactly `values`.
pub(super) fn pack_at_source(
    h: &mut Handle,
    source: SourceSimple,
    values: &(impl FieldValues + ?Sized),
) -> Result<bool, GribError> {
    let bitmap = h.is_defined("bitmapPresent") && h.get_long("bitmapPresent")? == 1;
    if values.len() < 2
        || bitmap
        || h.get_long("edition")? != 2
        || h.get_string("packingType")? != "grid_simple"
    {
        return Ok(false);
    }
    let Some(codes) = source.codes(values)? else {
        return Ok(false);
    };
    let reference = source.reference as f32;
    if f64::from(reference) != source.reference {
        return Ok(false);
    }
    let whole = values.whole()?;
    let mut laid = h.try_clone()?;
    laid.set_long("decimalScaleFactor", 0)?;
    laid.set_long("bitsPerValue", i64::from(source.bits))?;
    laid.set_double_array("values", &whole)?;
    if laid.get_long("bitsPerValue")? != i64::from(source.bits)
        || laid.get_long("dataRepresentationTemplateNumber")? != 0
    {
        return Ok(false);
    }
    let s5 = offset(&laid, "offsetSection5")?;
    let s7 = offset(&laid, "offsetSection7")?;
    let mut msg = laid.message()?;
    drop(laid);
    // Section 7: length (4), number (1), then the codes.
    let data = s7 + 5;
    if msg.len() < data + codes.len() || msg.len() < s5 + 20 {
        return Ok(false);
    }
    msg[data..data + codes.len()].copy_from_slice(&codes);
    // Section 5, template 5.0: R at octet 12, E at 16, D at 18 (1-based).
    msg[s5 + 11..s5 + 15].copy_from_slice(&reference.to_bits().to_be_bytes());
    msg[s5 + 15..s5 + 17].copy_from_slice(&sign_magnitude(source.binary));
    msg[s5 + 17..s5 + 19].copy_from_slice(&sign_magnitude(source.decimal));
    let out = Handle::from_message(&msg)?;
    let back = out.get_double_array("values")?;
    let exact = back.len() == whole.len()
        && back
            .iter()
            .zip(whole.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if !exact {
        return Ok(false);
    }
    *h = out;
    Ok(true)
}

/// A key giving a byte offset in the message.
fn offset(h: &Handle, key: &str) -> Result<usize, GribError> {
    let v = h.get_long(key)?;
    usize::try_from(v).map_err(|_| GribError::Invalid(format!("{key} = {v} is out of range")))
}

/// A GRIB2 signed 16-bit integer: the sign in the top bit, then the
/// magnitude (the scale factors are within ±1000, so it fits).
fn sign_magnitude(v: i32) -> [u8; 2] {
    let m = (v.unsigned_abs() & 0x7fff) as u16;
    (if v < 0 { m | 0x8000 } else { m }).to_be_bytes()
}

/// Sets `h` to pack without decimal scaling (D = 0) at a width that keeps
/// the source's quantum: its `bitsPerValue` widened by `⌈D·log2 10⌉` bits
/// (at most 32), so that ecCodes' E is at most the source's `E − D·log2 10`.
pub(super) fn drop_decimal_scaling(
    h: &mut Handle,
    grib: &[(Value, Value)],
) -> Result<(), GribError> {
    let decimal = h.get_long("decimalScaleFactor")?;
    let bits = grib
        .iter()
        .find(|(n, _)| n.as_text() == Some("bitsPerValue"))
        .and_then(|(_, v)| v.as_i64())
        .unwrap_or(h.get_long("bitsPerValue")?);
    let extra = (decimal.max(0) as f64 * std::f64::consts::LOG2_10).ceil() as i64;
    h.set_long("decimalScaleFactor", 0)?;
    h.set_long("bitsPerValue", (bits + extra).clamp(1, MAX_BITS))
}
