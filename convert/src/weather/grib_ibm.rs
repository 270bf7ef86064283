//! IBM System/360 single-precision floats, the form of a GRIB1 field's
//! reference value (WMO FM 92 GRIB edition 1, section 4 octets 7–10;
//! `spec/convert.md` "GRIB write-back", step 2).
//!
//! The 32 bits are a sign bit, a base-16 exponent `c` biased by 64 in 7
//! bits and a 24-bit mantissa `m`: the value `±m·16^(c−70)`. ecCodes
//! decodes them so (`grib_ibm_to_double`, exact powers of 16), and reads
//! `c = 0` with `m ≤ 1` as zero.

/// The IBM single-precision bits of `v` when they hold `v` exactly, as
/// ecCodes decodes them back to the same double: `+0.0` as zero bits, any
/// other value with its mantissa normalised (top hexadecimal digit not
/// zero). `None` for a value that needs more than 24 significant bits at
/// its hexadecimal exponent, lies outside `16^−65 ≤ |v| < 16^63`, is not
/// finite, or is `−0.0` (which ecCodes would read back as `+0.0`).
pub(super) fn ibm_single(v: f64) -> Option<u32> {
    if v == 0.0 {
        return v.is_sign_positive().then_some(0);
    }
    if !v.is_finite() {
        return None;
    }
    let a = v.abs();
    let biased = ((a.to_bits() >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // A subnormal double, far below the smallest IBM single.
        return None;
    }
    // a = f·2^p with 1/2 ≤ f < 1, and a = F·16^q with 1/16 ≤ F < 1.
    let p = biased - 1022;
    let q = p.div_euclid(4) + i32::from(p.rem_euclid(4) != 0);
    let c = q + 64;
    if !(0..=127).contains(&c) {
        return None;
    }
    // m = F·2^24, exact (a product by a power of two within range).
    let m = a * power_of_two(24 - 4 * q);
    if m.fract() != 0.0 || !(f64::from(0x10_0000)..f64::from(0x100_0000)).contains(&m) {
        return None;
    }
    let sign = if v < 0.0 { 0x8000_0000 } else { 0 };
    Some(sign | (c as u32) << 24 | m as u32)
}

/// `2^k` for `k` within the normal exponents of a double (±280 here).
fn power_of_two(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The double ecCodes decodes from IBM bits: `±m·16^(c−70)`, zero for
    /// `c = 0` and `m ≤ 1`.
    fn decoded(bits: u32) -> f64 {
        let (c, m) = ((bits >> 24) & 0x7f, bits & 0xff_ffff);
        if c == 0 && m <= 1 {
            return 0.0;
        }
        let v = f64::from(m) * power_of_two(4 * (c as i32 - 70));
        if bits & 0x8000_0000 != 0 {
            -v
        } else {
            v
        }
    }

    #[test]
    fn exact_values_have_their_textbook_bits() {
        // 1 = 0x1p0: 16^1 · 1/16.
        assert_eq!(ibm_single(1.0), Some(0x4110_0000));
        // 118.625 = 0x76.A: the textbook example, 0x4276A000.
        assert_eq!(ibm_single(118.625), Some(0x4276_A000));
        assert_eq!(ibm_single(0.5), Some(0x4080_0000));
        assert_eq!(ibm_single(16.0), Some(0x4210_0000));
        // The reference value of ecCodes' GRIB1 sample at 16 bits.
        let r = decoded(0x42FA_102D);
        assert_eq!(ibm_single(r), Some(0x42FA_102D));
    }

    #[test]
    fn negative_values_set_the_sign_bit() {
        assert_eq!(ibm_single(-118.625), Some(0xC276_A000));
        assert_eq!(ibm_single(-1.0), Some(0xC110_0000));
    }

    #[test]
    fn zero_is_zero_bits_and_negative_zero_is_refused() {
        assert_eq!(ibm_single(0.0), Some(0));
        assert_eq!(decoded(0), 0.0);
        // ecCodes reads the sign-bit zero back as +0.0.
        assert_eq!(ibm_single(-0.0), None);
    }

    #[test]
    fn values_ibm_cannot_hold_are_refused() {
        // 0.1 needs every bit of a double's mantissa.
        assert_eq!(ibm_single(0.1), None);
        // 2^24 + 1 needs 25 bits. 2^24 + 8 spans 22 bits (an f32 holds
        // it), but its top hexadecimal digit holds 1 bit and 3 zeros, so
        // its mantissa would need 25.
        assert_eq!(ibm_single(16_777_217.0), None);
        assert_eq!(ibm_single(16_777_224.0), None);
        assert!(f64::from(16_777_224f32) == 16_777_224.0);
        assert_eq!(ibm_single(f64::NAN), None);
        assert_eq!(ibm_single(f64::INFINITY), None);
        assert_eq!(ibm_single(f64::MIN_POSITIVE / 4.0), None);
        // Beyond the exponent range: 16^63 and 16^-66.
        assert_eq!(ibm_single(power_of_two(252)), None);
        assert_eq!(ibm_single(power_of_two(-264)), None);
    }

    #[test]
    fn the_extremes_of_the_range_round_trip() {
        // The smallest, 16^-65 (0x00100000), and the largest,
        // (1 - 2^-24)·16^63 (0x7FFFFFFF).
        for v in [
            power_of_two(-260),
            power_of_two(252) * (1.0 - power_of_two(-24)),
            -power_of_two(-260),
        ] {
            let bits = ibm_single(v).unwrap_or_else(|| panic!("{v:e}"));
            assert_eq!(decoded(bits).to_bits(), v.to_bits(), "{v:e} → {bits:#010x}");
        }
        assert_eq!(ibm_single(power_of_two(-260)), Some(0x0010_0000));
        assert_eq!(
            ibm_single(power_of_two(252) * (1.0 - power_of_two(-24))),
            Some(0x7FFF_FFFF)
        );
    }

    #[test]
    fn values_encode_exactly_when_their_bits_fit_the_hexadecimal_mantissa() {
        // Values m·2^k over exponents of every residue mod 4: those whose
        // significant bits fit the mantissa encode, the others are refused,
        // and what encodes decodes to the same double.
        for k in -40..40 {
            for m in [1u32, 3, 0x7f_ffff, 0xff_ffff, 0x1ff_ffff, 0x12_3457] {
                let v = f64::from(m) * power_of_two(k);
                // v's top and lowest set bits.
                let top = 31 - m.leading_zeros() as i32 + k;
                let low = k + m.trailing_zeros() as i32;
                // The mantissa's bits run from 4·⌈(top + 1)/4⌉ − 24 upward.
                let digits = (top + 1).div_euclid(4) + i32::from((top + 1).rem_euclid(4) != 0);
                let fits = low >= 4 * digits - 24;
                match ibm_single(v) {
                    Some(bits) => {
                        assert!(fits, "{v:e} encoded but needs more bits");
                        assert_eq!(decoded(bits).to_bits(), v.to_bits(), "{v:e}");
                    }
                    None => assert!(!fits, "{v:e} refused"),
                }
            }
        }
    }
}
