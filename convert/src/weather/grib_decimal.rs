//! Simple-packed fields written back at both of their source's scales
//! (`spec/convert.md` "GRIB write-back", step 2).
//!
//! ecCodes' simple packer never writes a decimal scale factor D and a binary
//! scale factor E together: given D with E = 0 it picks the width, given a
//! width it picks E and sets D to 0. Packed by ecCodes alone, a source coded
//! with both (D = 1, E = −2, say) comes back at another precision, and one
//! with D and a width wider than its range needs comes back narrower. Here
//! the message (GRIB1 or GRIB2) is laid out by ecCodes at the source's
//! width, and the source's reference value, E and D and the codes
//! `⌊(v·10^D − R)·2^−E + 0.5⌋` (computed as ecCodes computes them) are
//! written into it, so that ecCodes decodes the source's values bit for bit.

use tgm::cbor::Value;

use super::ffi::Handle;
use super::field_values::FieldValues;
use super::grib_ibm::ibm_single;
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

    /// `10^D` as ecCodes forms it ([`ten_to_the`]).
    fn ten_to_d(self) -> f64 {
        ten_to_the(self.decimal)
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

/// Packs `values` into `h`, a `grid_simple` message without a bitmap
/// (GRIB1 or GRIB2), at the source's width, reference value and both scale
/// factors; returns whether it did. `h` is unchanged when it did not:
/// another edition or packing, a bitmap, no values, a reference value the
/// edition's float cannot hold exactly, or values that are not codes at
/// those parameters (edited values), which then go through ecCodes. A
/// constant field keeps the source's width too (ecCodes' transient
/// `produceLargeConstantFields`), where ecCodes would write no data bits.
///
/// ecCodes computes `referenceValue` and `binaryScaleFactor` and will not
/// set them, so it lays the message out (packed at the source's width
/// without decimal scaling, which gives the data section its length), and
/// the octets of R, E and D and the codes are then written as the source
/// had them ([`Edition::positions`]). The result is parsed again and kept
/// only when ecCodes decodes exactly `values`.
pub(super) fn pack_at_source(
    h: &mut Handle,
    source: SourceSimple,
    values: &(impl FieldValues + ?Sized),
) -> Result<bool, GribError> {
    let bitmap = h.is_defined("bitmapPresent") && h.get_long("bitmapPresent")? == 1;
    let edition = Edition::of(h)?;
    let Some(edition) = edition.filter(|_| values.len() != 0 && !bitmap) else {
        return Ok(false);
    };
    if h.get_string("packingType")? != "grid_simple" {
        return Ok(false);
    }
    let Some(reference) = edition.reference(source.reference) else {
        return Ok(false);
    };
    let Some(codes) = source.codes(values)? else {
        return Ok(false);
    };
    let whole = values.whole()?;
    let mut laid = h.try_clone()?;
    let constant = whole.iter().all(|v| v.to_bits() == whole[0].to_bits());
    if constant {
        laid.set_long("produceLargeConstantFields", 1)?;
    }
    laid.set_long("decimalScaleFactor", 0)?;
    laid.set_long("bitsPerValue", i64::from(source.bits))?;
    laid.set_double_array("values", &whole)?;
    if laid.get_long("bitsPerValue")? != i64::from(source.bits) {
        return Ok(false);
    }
    let Some(at) = edition.positions(&laid)? else {
        return Ok(false);
    };
    let mut msg = laid.message()?;
    drop(laid);
    let end = [
        at.reference + 4,
        at.binary + 2,
        at.decimal + 2,
        at.data + codes.len(),
    ];
    if end.iter().any(|&e| e > msg.len()) {
        return Ok(false);
    }
    msg[at.data..at.data + codes.len()].copy_from_slice(&codes);
    msg[at.reference..at.reference + 4].copy_from_slice(&reference);
    msg[at.binary..at.binary + 2].copy_from_slice(&sign_magnitude(source.binary));
    msg[at.decimal..at.decimal + 2].copy_from_slice(&sign_magnitude(source.decimal));
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

/// The GRIB edition of a simple-packed message: where it keeps R, E, D and
/// the codes, and how it codes R.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Edition {
    /// WMO FM 92 GRIB edition 1: R an IBM single-precision float.
    One,
    /// GRIB edition 2, data representation template 5.0: R an IEEE single.
    Two,
}

/// Byte offsets (from the start of the message) of R (4 octets), E and D
/// (2 octets each, sign and magnitude) and the first code.
#[derive(Debug, Clone, Copy)]
struct Positions {
    reference: usize,
    binary: usize,
    decimal: usize,
    data: usize,
}

impl Edition {
    /// The edition of `h`, when it is one whose simple packing is written
    /// here.
    fn of(h: &Handle) -> Result<Option<Self>, GribError> {
        Ok(match h.get_long("edition")? {
            1 => Some(Edition::One),
            2 => Some(Edition::Two),
            _ => None,
        })
    }

    /// The octets of the reference value `r`, big-endian; `None` when the
    /// edition's float does not hold `r` exactly.
    fn reference(self, r: f64) -> Option<[u8; 4]> {
        match self {
            Edition::One => ibm_single(r).map(u32::to_be_bytes),
            Edition::Two => {
                let f = r as f32;
                (f64::from(f).to_bits() == r.to_bits()).then(|| f.to_bits().to_be_bytes())
            }
        }
    }

    /// Where the edition keeps R, E, D and the first code: the ecCodes key
    /// of the section's byte offset and the octet in the section (1-based).
    fn octets(self) -> [(&'static str, usize); 4] {
        match self {
            // Section 4 (BDS): E at octets 5–6, R at 7–10, the width at 11,
            // the codes from 12; section 1 (PDS): D at octets 27–28.
            Edition::One => [
                ("offsetSection4", 7),
                ("offsetSection4", 5),
                ("offsetSection1", 27),
                ("offsetSection4", 12),
            ],
            // Section 5, template 5.0: R at octet 12, E at 16, D at 18;
            // section 7: length (4), number (1), the codes from 6.
            Edition::Two => [
                ("offsetSection5", 12),
                ("offsetSection5", 16),
                ("offsetSection5", 18),
                ("offsetSection7", 6),
            ],
        }
    }

    /// Where `laid`, the message ecCodes laid out, holds R, E, D and the
    /// codes, found from ecCodes' section offsets; `None` for a GRIB2 data
    /// representation template other than 5.0.
    fn positions(self, laid: &Handle) -> Result<Option<Positions>, GribError> {
        if self == Edition::Two && laid.get_long("dataRepresentationTemplateNumber")? != 0 {
            return Ok(None);
        }
        let mut at = [0; 4];
        for (a, (section, octet)) in at.iter_mut().zip(self.octets()) {
            *a = offset(laid, section)? + octet - 1;
        }
        let [reference, binary, decimal, data] = at;
        Ok(Some(Positions {
            reference,
            binary,
            decimal,
            data,
        }))
    }
}

/// `10^d` as ecCodes' `codes_power` forms it: a product (or quotient) of
/// tens, one at a time, so that the codes computed with it are ecCodes'.
pub(super) fn ten_to_the(d: i32) -> f64 {
    let mut p = 1.0f64;
    for _ in 0..d.unsigned_abs() {
        if d > 0 {
            p *= 10.0;
        } else {
            p /= 10.0;
        }
    }
    p
}

/// A key giving a byte offset (or length) in the message.
pub(super) fn offset(h: &Handle, key: &str) -> Result<usize, GribError> {
    let v = h.get_long(key)?;
    usize::try_from(v).map_err(|_| GribError::Invalid(format!("{key} = {v} is out of range")))
}

/// A GRIB signed 16-bit integer (both editions): the sign in the top
/// bit, then the magnitude (the scale factors are within ±1000, so it fits).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A field of ecCodes' `sample` packed at 16 bits, then given D = 1 over
    /// its header without repacking (as `grib_set -s decimalScaleFactor=1`),
    /// so coded with both scale factors: the message (the template `to-grib`
    /// writes over holds its header), its `base[i].grib` keys and the values
    /// ecCodes decodes from it.
    fn both_scales(sample: &str) -> (Handle, Vec<(Value, Value)>, Vec<f64>) {
        let mut h = Handle::from_sample(sample).unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        let field: Vec<f64> = (0..n)
            .map(|i| 280.0 + 15.0 * (i as f64 * 0.021).sin() + (i % 13) as f64 * 0.01)
            .collect();
        h.set_long("bitsPerValue", 16).unwrap();
        h.set_double_array("values", &field).unwrap();
        h.set_long("decimalScaleFactor", 1).unwrap();
        let long = |k: &str| Value::from(h.get_long(k).unwrap());
        let grib = vec![
            ("packingType".into(), "grid_simple".into()),
            ("bitsPerValue".into(), long("bitsPerValue")),
            ("binaryScaleFactor".into(), long("binaryScaleFactor")),
            ("decimalScaleFactor".into(), long("decimalScaleFactor")),
            (
                "referenceValue".into(),
                h.get_double("referenceValue").unwrap().into(),
            ),
        ];
        let values = h.get_double_array("values").unwrap();
        (h, grib, values)
    }

    fn key(grib: &[(Value, Value)], k: &str) -> Value {
        let found = grib.iter().find(|(n, _)| n.as_text() == Some(k));
        found.map(|(_, v)| v.clone()).unwrap()
    }

    fn same_bits(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    #[test]
    fn a_grib1_field_with_both_scales_is_written_back_bit_for_bit() {
        let (template, grib, values) = both_scales("regular_ll_sfc_grib1");
        let source = SourceSimple::of(&grib).unwrap();
        assert!(source.has_binary_scale(), "{grib:?}");
        // Another message of the same header (the sample at D = 1).
        let mut h = Handle::from_sample("regular_ll_sfc_grib1").unwrap();
        h.set_long("decimalScaleFactor", 1).unwrap();
        assert!(h.message().unwrap() != template.message().unwrap());
        assert!(pack_at_source(&mut h, source, &values[..]).unwrap());
        assert_eq!(h.get_long("edition").unwrap(), 1);
        for k in ["bitsPerValue", "binaryScaleFactor", "decimalScaleFactor"] {
            assert_eq!(Value::from(h.get_long(k).unwrap()), key(&grib, k), "{k}");
        }
        let r = h.get_double("referenceValue").unwrap();
        assert_eq!(
            Some(r.to_bits()),
            key(&grib, "referenceValue").as_f64().map(f64::to_bits)
        );
        assert!(same_bits(&h.get_double_array("values").unwrap(), &values));
    }

    #[test]
    fn a_reference_value_ibm_cannot_hold_is_left_to_the_fallback_within_the_quantum() {
        let (mut h, mut grib, values) = both_scales("regular_ll_sfc_grib1");
        let exact = SourceSimple::of(&grib).unwrap();
        // R + 2^-30 has more significant bits than an IBM single holds.
        let r = exact.reference + 2f64.powi(-30);
        assert_eq!(ibm_single(r), None);
        let at = grib
            .iter()
            .position(|(n, _)| n.as_text() == Some("referenceValue"));
        grib[at.unwrap()].1 = r.into();
        let source = SourceSimple::of(&grib).unwrap();
        let before = h.message().unwrap();
        assert!(!pack_at_source(&mut h, source, &values[..]).unwrap());
        assert!(h.message().unwrap() == before, "the message changed");
        within_the_quantum_after_the_fallback(&mut h, &grib, &values, source);
    }

    #[test]
    fn edited_values_are_left_to_the_fallback_within_the_quantum() {
        for sample in ["regular_ll_sfc_grib1", "regular_ll_sfc_grib2"] {
            let (mut h, grib, mut values) = both_scales(sample);
            let source = SourceSimple::of(&grib).unwrap();
            // A value between two codes of the source.
            values[7] += 2f64.powi(source.binary) / 10.0 / 3.0;
            let before = h.message().unwrap();
            assert!(
                !pack_at_source(&mut h, source, &values[..]).unwrap(),
                "{sample}"
            );
            assert!(
                h.message().unwrap() == before,
                "{sample}: the message changed"
            );
            within_the_quantum_after_the_fallback(&mut h, &grib, &values, source);
        }
    }

    /// What `to-grib` does when [`pack_at_source`] declines a source with
    /// both scales: D dropped at a wider width, the values set by ecCodes,
    /// each read back within half the source's quantum `2^E·10^−D`.
    fn within_the_quantum_after_the_fallback(
        h: &mut Handle,
        grib: &[(Value, Value)],
        values: &[f64],
        source: SourceSimple,
    ) {
        drop_decimal_scaling(h, grib).unwrap();
        h.set_double_array("values", values).unwrap();
        let back = h.get_double_array("values").unwrap();
        let half = 2f64.powi(source.binary) / 10f64.powi(source.decimal) / 2.0;
        let worst = back
            .iter()
            .zip(values)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst <= half, "{worst} > {half}");
    }
}
