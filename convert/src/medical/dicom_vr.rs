//! DICOM value representations as `to-dicom` writes them (PS3.5 6.2):
//! decimal strings formatted to fit 16 characters, and every text value
//! checked against its VR's length and character rules before a file is
//! written, so a strict reader accepts what tgm writes.

use super::{MedicalError, MedicalResult};
use dicom_core::value::PrimitiveValue;
use dicom_core::VR;

/// Longest DS value (PS3.5 Table 6.2-1).
const DS_MAX: usize = 16;

/// Trims trailing fractional zeros (and a bare point) of a fixed-point
/// rendering.
fn trim_fixed(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// Trims trailing zeros of a scientific rendering's mantissa.
fn trim_sci(s: String) -> String {
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// The closest decimal string of at most 16 characters to `x`: Rust's
/// shortest round-trip form when it fits, else fixed-point or scientific
/// notation with the most digits that fit.
pub fn ds(x: f64) -> MedicalResult<String> {
    if !x.is_finite() {
        return Err(MedicalError::invalid(format!(
            "{x} is not a finite decimal string value"
        )));
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let shortest = format!("{x}");
    if shortest.len() <= DS_MAX {
        return Ok(shortest);
    }
    let err = |s: &str| s.parse::<f64>().map_or(f64::INFINITY, |v| (v - x).abs());
    // The most digits that fit, in fixed-point and in scientific notation;
    // then whichever of the two is closer.
    let fixed = (0..DS_MAX)
        .rev()
        .map(|d| trim_fixed(format!("{x:.d$}")))
        .find(|s| s.len() <= DS_MAX);
    let sci = (0..DS_MAX)
        .rev()
        .map(|d| trim_sci(format!("{x:.d$e}")))
        .find(|s| s.len() <= DS_MAX);
    let best = match (fixed, sci) {
        (Some(f), Some(e)) => Some(if err(&e) < err(&f) { e } else { f }),
        (f, e) => f.or(e),
    };
    best.ok_or_else(|| MedicalError::invalid(format!("{x} does not fit a decimal string")))
}

/// Several DS values, backslash-separated.
pub fn ds_multi(v: &[f64]) -> MedicalResult<String> {
    Ok(v.iter()
        .map(|&x| ds(x))
        .collect::<Result<Vec<_>, _>>()?
        .join("\\"))
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A UID: at most 64 characters, dot-separated numeric components without
/// leading zeros (PS3.5 9.1).
fn check_ui(v: &str) -> Result<(), String> {
    if v.len() > 64 {
        return Err(format!("UID of {} characters (at most 64)", v.len()));
    }
    for c in v.split('.') {
        if !is_digits(c) || (c.len() > 1 && c.starts_with('0')) {
            return Err("not a UID (digits separated by dots, no leading zeros)".into());
        }
    }
    Ok(())
}

/// YYYYMMDD with a plausible month and day.
fn check_da(v: &str) -> Result<(), String> {
    let ok = v.len() == 8 && is_digits(v) && {
        let (m, d) = (&v[4..6], &v[6..8]);
        ("01"..="12").contains(&m) && ("01"..="31").contains(&d)
    };
    if ok {
        Ok(())
    } else {
        Err("not a date YYYYMMDD".into())
    }
}

/// HH[MM[SS[.F{1,6}]]].
fn check_tm(v: &str) -> Result<(), String> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let pairs_ok = is_digits(whole)
        && matches!(whole.len(), 2 | 4 | 6)
        && whole[..2] <= *"23"
        && (whole.len() < 4 || whole[2..4] <= *"59")
        && (whole.len() < 6 || whole[4..6] <= *"60");
    let frac_ok = !v.contains('.') || (whole.len() == 6 && frac.len() <= 6 && is_digits(frac));
    if pairs_ok && frac_ok {
        Ok(())
    } else {
        Err("not a time HHMMSS.FFFFFF".into())
    }
}

/// Checks one value (possibly backslash-separated multiple values) against
/// its VR. Empty values are valid (Type 2 attributes are written empty).
pub fn check(vr: VR, v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Ok(());
    }
    let values: Vec<&str> = if matches!(vr, VR::ST | VR::LT | VR::UT) {
        vec![v]
    } else {
        v.split('\\').collect()
    };
    let control = |s: &str| s.chars().any(|c| c.is_control() && c != '\x1b');
    for one in values {
        let fail = |bad: bool, what: &str| if bad { Err(what.to_string()) } else { Ok(()) };
        match vr {
            VR::UI => check_ui(one)?,
            VR::DA => check_da(one)?,
            VR::TM => check_tm(one)?,
            VR::CS => fail(
                one.len() > 16
                    || !one.bytes().all(|b| {
                        b.is_ascii_uppercase() || b.is_ascii_digit() || b" _".contains(&b)
                    }),
                "not a code string (at most 16 of A-Z, 0-9, space, underscore)",
            )?,
            VR::IS => {
                let n = one.trim().parse::<i64>().ok();
                fail(
                    one.len() > 12
                        || !n.is_some_and(|n| (-(1i64 << 31)..(1i64 << 31)).contains(&n)),
                    "not an integer string of at most 12 characters in 32-bit range",
                )?
            }
            VR::DS => fail(
                one.len() > DS_MAX || one.trim().parse::<f64>().is_err(),
                "not a decimal string of at most 16 characters",
            )?,
            VR::AS => {
                let b = one.as_bytes();
                fail(
                    b.len() != 4 || !is_digits(&one[..3]) || !b"DWMY".contains(&b[3]),
                    "not an age string nnnD/W/M/Y",
                )?
            }
            VR::SH | VR::LO => {
                let max = if vr == VR::SH { 16 } else { 64 };
                fail(
                    one.chars().count() > max || control(one),
                    &format!("longer than {max} characters or has control characters"),
                )?
            }
            VR::PN => fail(
                one.split('=').any(|g| g.chars().count() > 64) || control(one),
                "a name component group longer than 64 characters",
            )?,
            VR::ST => fail(one.chars().count() > 1024, "longer than 1024 characters")?,
            _ => {}
        }
    }
    Ok(())
}

/// The backslash-separated numbers of a binary VR's recorded text.
fn numbers<T: std::str::FromStr>(value: &str) -> Option<Vec<T>> {
    value.split('\\').map(|x| x.trim().parse().ok()).collect()
}

/// The recorded text of a binary numeric VR (US, SS, UL, SL, FD) as the
/// value to write, `Some(Err)` when it does not parse; `None` for a
/// text VR.
pub fn binary(vr: VR, value: &str) -> Option<Result<PrimitiveValue, String>> {
    let parsed = match vr {
        VR::US => numbers::<u16>(value).map(|v| PrimitiveValue::U16(v.into())),
        VR::SS => numbers::<i16>(value).map(|v| PrimitiveValue::I16(v.into())),
        VR::UL => numbers::<u32>(value).map(|v| PrimitiveValue::U32(v.into())),
        VR::SL => numbers::<i32>(value).map(|v| PrimitiveValue::I32(v.into())),
        VR::FD => numbers::<f64>(value).map(|v| PrimitiveValue::F64(v.into())),
        _ => return None,
    };
    Some(parsed.ok_or_else(|| format!("not {vr:?} numbers")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_strings_fit_sixteen_characters_and_stay_close() {
        for x in [
            -179.85504592914114,
            0.1 + 0.2,
            1e-20,
            -1.234567890123e200,
            123456789012345678.0,
            2.5,
            -0.0,
            1.0 / 3.0,
        ] {
            let s = ds(x).unwrap();
            assert!(s.len() <= 16, "{s}");
            let back: f64 = s.parse().unwrap();
            assert!(
                (back - x).abs() <= x.abs() * 1e-9,
                "{x} written as {s} reads {back}"
            );
            check(VR::DS, &s).unwrap();
        }
        assert_eq!(ds(2.5).unwrap(), "2.5");
        assert_eq!(ds(-0.0).unwrap(), "0");
        assert_eq!(ds(-179.85504592914114).unwrap(), "-179.85504592914");
        assert!(ds(f64::NAN).is_err());
    }

    #[test]
    fn values_outside_their_vr_are_named() {
        assert!(check(VR::UI, "1.2.840.10008.5.1.4.1.1.7").is_ok());
        assert!(check(VR::UI, &format!("2.25.{}", "1".repeat(60))).is_err());
        assert!(check(VR::UI, "1.02.3").is_err());
        assert!(check(VR::DA, "20240102").is_ok());
        assert!(check(VR::DA, "2024-01-02").is_err());
        assert!(check(VR::TM, "101112.5").is_ok());
        assert!(check(VR::TM, "1011").is_ok());
        assert!(check(VR::TM, "256000").is_err());
        assert!(check(VR::CS, "DERIVED\\SECONDARY").is_ok());
        assert!(check(VR::CS, "lower").is_err());
        assert!(check(VR::IS, "-12").is_ok());
        assert!(check(VR::IS, "99999999999").is_err());
        assert!(check(VR::AS, "045Y").is_ok());
        assert!(check(VR::AS, "45Y").is_err());
        assert!(check(VR::SH, &"x".repeat(17)).is_err());
        assert!(check(VR::LO, &"x".repeat(64)).is_ok());
        assert!(check(VR::PN, "").is_ok());
    }
}
