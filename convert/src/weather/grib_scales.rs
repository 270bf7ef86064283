//! The source's precision restored on GRIB write-back for the packings
//! whose encoder derives the binary scale factor from a width
//! (`spec/convert.md` "GRIB write-back", step 2).
//!
//! ecCodes' complex packings (`grid_complex`,
//! `grid_complex_spatial_differencing`) and second-order packings take the
//! decimal scale factor D from the message and pick the binary scale factor
//! E as the smallest for which every code `(v·10^D − R)·2^−E` fits in
//! `bitsPerValue` bits. The `bitsPerValue` a complex or second-order message
//! records is a width of the packing's own (group references, first-order
//! values), not that precision: set again, it can give a coarser E than the
//! source's (10 bits: E = −3 where the source had −7). So the width that
//! gives the source's E is found here, and the values set at it.

use tgm::cbor::Value;

use super::ffi::Handle;
use super::field_values::FieldValues;
use super::GribError;

/// Widest width tried (ecCodes codes in an unsigned long).
const MAX_WIDTH: i64 = 60;

/// Repacks tried before the source's scales are given up on.
const ATTEMPTS: usize = 6;

/// Whether ecCodes' `packing` takes D from the message and picks E from
/// `bitsPerValue`, so that the source's E needs a width of its own.
pub(super) fn scales_by_width(packing: &str) -> bool {
    packing.starts_with("grid_complex") || packing.starts_with("grid_second_order")
}

/// The source's binary and decimal scale factors (`base[i].grib`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SourceScales {
    /// E.
    pub binary: i64,
    /// D.
    pub decimal: i64,
}

impl SourceScales {
    /// The scales recorded in `grib` (`binaryScaleFactor`,
    /// `decimalScaleFactor`), when both are integers.
    pub(super) fn of(grib: &[(Value, Value)]) -> Option<Self> {
        let key = |k: &str| {
            grib.iter()
                .find(|(n, _)| n.as_text() == Some(k))
                .and_then(|(_, v)| v.as_i64())
        };
        Some(SourceScales {
            binary: key("binaryScaleFactor")?,
            decimal: key("decimalScaleFactor")?,
        })
    }

    /// The width whose largest code holds `(max − min)·10^D·2^−E`: the
    /// first guess of the width at which ecCodes picks E.
    fn first_width(self, min: f64, max: f64) -> i64 {
        let range = (max - min) * 10f64.powi(self.decimal as i32) * 2f64.powi(-self.binary as i32);
        if !(range.is_finite() && range >= 0.5) {
            return 1;
        }
        let top = range.round().min(2f64.powi(MAX_WIDTH as i32)) as u64;
        i64::from(64 - top.leading_zeros()).clamp(1, MAX_WIDTH)
    }
}

/// Packs the values into `h` (whose packing is one of
/// [`scales_by_width`]) with the source's D and E: D is set, then the
/// values are set by `set_values` at the width that makes ecCodes pick E,
/// found from the present values' extremes `min` and `max` and corrected
/// from the E ecCodes reports. A field whose present values are all equal
/// has no scale to keep (ecCodes writes E = 0). The source's E cannot be
/// kept when no width gives it or a finer one: refused, naming
/// `binaryScaleFactor`.
pub(super) fn pack_at_source_scales(
    h: &mut Handle,
    scales: SourceScales,
    (min, max): (f64, f64),
    mut set_values: impl FnMut(&mut Handle) -> Result<(), GribError>,
) -> Result<(), GribError> {
    // ecCodes' complex packer codes no missing value in the data (code
    // table 5.5): missing points go to the bitmap.
    let managed = h.is_defined("missingValueManagementUsed")
        && h.get_long("missingValueManagementUsed")? != 0;
    if managed {
        h.set_long("missingValueManagementUsed", 0)?;
    }
    let mut width = scales.first_width(min, max);
    let mut tried = Vec::new();
    for _ in 0..ATTEMPTS {
        h.set_long("decimalScaleFactor", scales.decimal)?;
        h.set_long("bitsPerValue", width)?;
        set_values(h)?;
        let (binary, decimal) = (
            h.get_long("binaryScaleFactor")?,
            h.get_long("decimalScaleFactor")?,
        );
        if min == max || (binary == scales.binary && decimal == scales.decimal) {
            return Ok(());
        }
        tried.push((width, binary));
        let next = (width + binary - scales.binary).clamp(1, MAX_WIDTH);
        if decimal != scales.decimal || tried.iter().any(|&(w, _)| w == next) {
            break;
        }
        width = next;
    }
    // The finest E reached is kept when it is at least as fine as the
    // source's: its values are the source's, on a finer quantum.
    let finest = tried.iter().min_by_key(|&&(_, e)| e).copied();
    if let Some((w, e)) = finest.filter(|&(_, e)| e <= scales.binary) {
        h.set_long("decimalScaleFactor", scales.decimal)?;
        h.set_long("bitsPerValue", w)?;
        set_values(h)?;
        if h.get_long("binaryScaleFactor")? == e {
            return Ok(());
        }
    }
    Err(GribError::Invalid(format!(
        "binaryScaleFactor {} and decimalScaleFactor {} of the source cannot be written \
         in packingType {}: ecCodes picks binaryScaleFactor {} at the widths tried",
        scales.binary,
        scales.decimal,
        h.get_string("packingType")?,
        tried
            .iter()
            .map(|(w, e)| format!("{e} ({w} bits)"))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// The smallest and largest present (not NaN) values, read a step at a
/// time; `(0, 0)` when none is present.
pub(super) fn present_extremes(
    values: &(impl FieldValues + ?Sized),
) -> Result<(f64, f64), GribError> {
    let mut found: Option<(f64, f64)> = None;
    values.each_step(&mut |_, step| {
        for &v in step.iter().filter(|v| !v.is_nan()) {
            found = Some(match found {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
        }
        Ok(())
    })?;
    Ok(found.unwrap_or((0.0, 0.0)))
}

/// Half the quantum `2^E·10^−D` of the message `h`: the largest error of a
/// value packed at its scales, the read-back bound of the packings of
/// [`scales_by_width`], for which ecCodes defines no `packingError`.
pub(super) fn half_quantum(h: &Handle) -> Result<f64, GribError> {
    let e = h.get_long("binaryScaleFactor")?;
    let d = h.get_long("decimalScaleFactor")?;
    Ok(0.5 * 2f64.powi(e.clamp(-1100, 1100) as i32) / 10f64.powi(d.clamp(-400, 400) as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ecCodes' regular_ll sample in `packing` at `bits` bits, and a field
    /// of its points 100 wide on the quantum 2^`e` (R + X·2^e, exact).
    fn complex(packing: &str, bits: i64, e: i32) -> (Handle, Vec<f64>) {
        let mut h = Handle::from_sample("regular_ll_sfc_grib2").unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        let q = 2f64.powi(e);
        let steps = (100.0 / q) as usize;
        let values: Vec<f64> = (0..n)
            .map(|i| 250.0 + ((i * 7919) % steps) as f64 * q)
            .collect();
        // As `grib_set -r` repacks: values, packing, values again.
        h.set_double_array("values", &values).unwrap();
        h.set_string("packingType", packing).unwrap();
        h.set_long("bitsPerValue", bits).unwrap();
        h.set_double_array("values", &values).unwrap();
        (h, values)
    }

    #[test]
    fn a_ten_bit_header_keeps_its_binary_scale_of_minus_seven() {
        for packing in ["grid_complex", "grid_complex_spatial_differencing"] {
            let (mut h, values) = complex(packing, 10, -7);
            // At the header's 10 bits ecCodes picks E = -3.
            let mut plain = h.try_clone().unwrap();
            plain.set_double_array("values", &values).unwrap();
            assert_eq!(plain.get_long("binaryScaleFactor").unwrap(), -3);
            let scales = SourceScales {
                binary: -7,
                decimal: 0,
            };
            let extremes = present_extremes(&values[..]).unwrap();
            pack_at_source_scales(&mut h, scales, extremes, |h| {
                h.set_double_array("values", &values)
            })
            .unwrap();
            assert_eq!(h.get_long("binaryScaleFactor").unwrap(), -7, "{packing}");
            let back = h.get_double_array("values").unwrap();
            assert!(back == values, "{packing}: other values");
            let half = half_quantum(&h).unwrap();
            assert_eq!(half, 2f64.powi(-8), "{packing}");
        }
    }

    #[test]
    fn scales_no_width_reaches_are_refused_by_name() {
        let (mut h, values) = complex("grid_complex", 10, -7);
        // E = -80 needs codes wider than any width tried.
        let scales = SourceScales {
            binary: -80,
            decimal: 0,
        };
        let extremes = present_extremes(&values[..]).unwrap();
        let e = pack_at_source_scales(&mut h, scales, extremes, |h| {
            h.set_double_array("values", &values)
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("binaryScaleFactor -80"), "{e}");
    }
}
