//! NIfTI header floats as metadata in a form JSON keeps (spec/convert.md
//! "NIfTI", non-finite header floats).
//!
//! A finite value is a number (f32 values are exact in f64). A non-finite
//! one, which JSON cannot hold (`dump -j` would print `null`), is text:
//! `"Infinity"`, `"-Infinity"`, `"NaN"` for the quiet NaN Rust and C write
//! (`0x7fc00000` / `0x7ff8000000000000`), and `"NaN:0x…"` with the bits
//! at the header's width for any other NaN, so the header comes back bit
//! for bit.

use tgm::cbor::Value;

/// A NIfTI-1 (f32) header float as metadata.
pub fn f32_value(x: f32) -> Value {
    if x.is_finite() {
        Value::Float(f64::from(x))
    } else if x.is_nan() {
        nan_text(
            x.to_bits() == f32::NAN.to_bits(),
            format!("{:#010x}", x.to_bits()),
        )
    } else {
        infinity_text(x > 0.0)
    }
}

/// A NIfTI-2 (f64) header float, or a derived value, as metadata.
pub fn f64_value(x: f64) -> Value {
    if x.is_finite() {
        Value::Float(x)
    } else if x.is_nan() {
        nan_text(
            x.to_bits() == f64::NAN.to_bits(),
            format!("{:#018x}", x.to_bits()),
        )
    } else {
        infinity_text(x > 0.0)
    }
}

fn nan_text(canonical: bool, bits: String) -> Value {
    if canonical {
        "NaN".into()
    } else {
        format!("NaN:{bits}").into()
    }
}

fn infinity_text(positive: bool) -> Value {
    if positive { "Infinity" } else { "-Infinity" }.into()
}

/// A non-finite value's text form.
enum Special {
    Infinity(bool),
    Nan,
    Bits32(u32),
    Bits64(u64),
}

fn special(text: &str) -> Option<Special> {
    match text {
        "Infinity" => Some(Special::Infinity(true)),
        "-Infinity" => Some(Special::Infinity(false)),
        "NaN" => Some(Special::Nan),
        _ => {
            let hex = text.strip_prefix("NaN:0x")?;
            match hex.len() {
                8 => u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|&b| f32::from_bits(b).is_nan())
                    .map(Special::Bits32),
                16 => u64::from_str_radix(hex, 16)
                    .ok()
                    .filter(|&b| f64::from_bits(b).is_nan())
                    .map(Special::Bits64),
                _ => None,
            }
        }
    }
}

/// The f32 a metadata value records (a number or a text form above).
pub fn to_f32(v: &Value) -> Option<f32> {
    if let Some(x) = v.as_f64() {
        return Some(x as f32);
    }
    Some(match special(v.as_text()?)? {
        Special::Infinity(true) => f32::INFINITY,
        Special::Infinity(false) => f32::NEG_INFINITY,
        Special::Nan => f32::NAN,
        Special::Bits32(b) => f32::from_bits(b),
        Special::Bits64(b) => f64::from_bits(b) as f32,
    })
}

/// The f64 a metadata value records (a number or a text form above).
pub fn to_f64(v: &Value) -> Option<f64> {
    if let Some(x) = v.as_f64() {
        return Some(x);
    }
    Some(match special(v.as_text()?)? {
        Special::Infinity(true) => f64::INFINITY,
        Special::Infinity(false) => f64::NEG_INFINITY,
        Special::Nan => f64::NAN,
        Special::Bits32(b) => f64::from(f32::from_bits(b)),
        Special::Bits64(b) => f64::from_bits(b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_f32_comes_back_bit_for_bit() {
        let odd_nan = f32::from_bits(0xffc0_1234);
        for x in [
            0.5f32,
            -3.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            odd_nan,
        ] {
            let v = f32_value(x);
            assert_eq!(to_f32(&v).unwrap().to_bits(), x.to_bits(), "{x}");
            assert!(!v.to_json().contains("null"), "{}", v.to_json());
        }
        assert_eq!(f32_value(f32::NAN).to_json(), "\"NaN\"");
        assert_eq!(f32_value(odd_nan).to_json(), "\"NaN:0xffc01234\"");
        assert_eq!(f32_value(f32::NEG_INFINITY).to_json(), "\"-Infinity\"");
    }

    #[test]
    fn every_f64_comes_back_bit_for_bit() {
        let odd_nan = f64::from_bits(0x7ff0_0000_0000_0001);
        for x in [
            1.0 / 3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            odd_nan,
        ] {
            let v = f64_value(x);
            assert_eq!(to_f64(&v).unwrap().to_bits(), x.to_bits(), "{x}");
        }
        assert_eq!(f64_value(odd_nan).to_json(), "\"NaN:0x7ff0000000000001\"");
    }

    #[test]
    fn other_text_is_not_a_float() {
        for t in [
            "nan",
            "inf",
            "NaN:0x12",
            "NaN:0x00000001",
            "NaN:0xzzzzzzzz",
            "1.5",
        ] {
            assert!(to_f32(&Value::from(t)).is_none(), "{t}");
            assert!(to_f64(&Value::from(t)).is_none(), "{t}");
        }
    }
}
