//! The extent of a spectral-harmonics data section packed as
//! `spectral_complex` (GRIB1 and GRIB2 template 5.51), checked before
//! ecCodes decodes it (`spec/convert.md` "Hostile files"). ecCodes 2.28
//! reads the unpacked subset, `(JS+1)(JS+2)` floats of 4 or 8 bytes, then
//! the other coefficients at `bitsPerValue` bits each, from the start of
//! the data without comparing either with the section's length; with a
//! subset truncation JS above the field's J it writes more coefficients
//! than its array of `(J+1)(J+2)` holds. Pure, so it is fuzzed with the
//! file scan.

/// The keys that lay out a `spectral_complex` data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpectralLayout {
    /// The pentagonal resolution parameters J, K and M.
    pub truncation: [i64; 3],
    /// The unpacked subset's JS, KS and MS.
    pub subset: [i64; 3],
    /// `bitsPerValue` of the packed coefficients.
    pub bits: i64,
    /// Bytes of each unpacked float (4 for IBM and IEEE singles, 8 for
    /// IEEE doubles).
    pub float_bytes: u64,
    /// The data's bytes (`offsetAfterData − offsetBeforeData`).
    pub held: u64,
}

/// Widest packed coefficient ecCodes decodes into a `long`.
const MAX_BITS: i64 = 63;

/// The coefficients of a triangular truncation `t`: `(t+1)(t+2)` reals.
fn coefficients(t: i64) -> Option<u64> {
    let t = u64::try_from(t).ok()?;
    t.checked_add(1)?.checked_mul(t.checked_add(2)?)
}

/// The bytes ecCodes reads of the section under `l`, or the reason it
/// cannot be read: a truncation other than triangular (J = K = M, JS =
/// KS = MS, as ecCodes asserts), a subset wider than the field, a width
/// beyond 63 bits, or fewer bytes than that.
pub fn check(l: &SpectralLayout) -> Result<u64, String> {
    let [j, k, m] = l.truncation;
    let [js, ks, ms] = l.subset;
    if j != k || j != m {
        return Err(format!(
            "J, K and M are {j}, {k} and {m}, not one triangular truncation"
        ));
    }
    if js != ks || js != ms {
        return Err(format!(
            "JS, KS and MS are {js}, {ks} and {ms}, not one triangular subset"
        ));
    }
    if js > j || js < 0 {
        return Err(format!(
            "the unpacked subset JS = {js} is outside the truncation J = {j}"
        ));
    }
    let too_many = || format!("J = {j} has too many coefficients");
    let all = coefficients(j).ok_or_else(too_many)?;
    let unpacked = coefficients(js).ok_or_else(too_many)?;
    let need = if js == j {
        all.checked_mul(l.float_bytes).ok_or_else(too_many)?
    } else {
        if !(0..=MAX_BITS).contains(&l.bits) {
            return Err(format!("coefficients of {} bits", l.bits));
        }
        let packed_bits = (all - unpacked)
            .checked_mul(l.bits as u64)
            .ok_or_else(too_many)?;
        unpacked
            .checked_mul(l.float_bytes)
            .and_then(|b| b.checked_add(packed_bits.div_ceil(8)))
            .ok_or_else(too_many)?
    };
    if l.held < need {
        return Err(format!(
            "the data section holds {} bytes but a T{j} field with a T{js} unpacked subset \
             at {} bits needs {need}",
            l.held, l.bits
        ));
    }
    Ok(need)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ecCodes' T63 sample: a T20 subset of IEEE singles, 16 bits.
    fn t63() -> SpectralLayout {
        SpectralLayout {
            truncation: [63; 3],
            subset: [20; 3],
            bits: 16,
            float_bytes: 4,
            held: 9244,
        }
    }

    #[test]
    fn a_whole_section_is_exactly_what_ecodes_reads() {
        assert_eq!(check(&t63()), Ok(9244));
        let whole = SpectralLayout {
            subset: [63; 3],
            float_bytes: 8,
            held: 4160 * 8,
            ..t63()
        };
        assert_eq!(check(&whole), Ok(4160 * 8));
    }

    #[test]
    fn short_sections_and_impossible_truncations_are_refused() {
        for (l, reason) in [
            (
                SpectralLayout {
                    held: 9243,
                    ..t63()
                },
                "needs 9244",
            ),
            (SpectralLayout { held: 0, ..t63() }, "holds 0 bytes"),
            (
                SpectralLayout {
                    subset: [64; 3],
                    ..t63()
                },
                "outside the truncation",
            ),
            (
                SpectralLayout {
                    subset: [20, 20, 19],
                    ..t63()
                },
                "not one triangular subset",
            ),
            (
                SpectralLayout {
                    truncation: [63, 63, 62],
                    ..t63()
                },
                "not one triangular",
            ),
            (SpectralLayout { bits: 64, ..t63() }, "64 bits"),
            (
                SpectralLayout {
                    truncation: [i64::MAX; 3],
                    ..t63()
                },
                "too many",
            ),
        ] {
            let e = check(&l).unwrap_err();
            assert!(e.contains(reason), "{l:?}: {e}");
        }
    }
}
