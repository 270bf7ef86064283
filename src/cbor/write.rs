//! Canonical CBOR writer. See `spec/format.md` §4.1.

use super::Value;

/// Encodes `value` canonically into a new buffer.
pub fn encode_canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_canonical(value, &mut out);
    out
}

/// Appends the canonical encoding of `value` to `out`.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Uint(u) => write_head(out, 0, *u),
        Value::Nint(n) => write_head(out, 1, *n),
        Value::Bytes(b) => {
            write_head(out, 2, b.len() as u64);
            out.extend_from_slice(b);
        }
        Value::Text(t) => {
            write_head(out, 3, t.len() as u64);
            out.extend_from_slice(t.as_bytes());
        }
        Value::Array(a) => {
            write_head(out, 4, a.len() as u64);
            for v in a {
                write_canonical(v, out);
            }
        }
        Value::Map(m) => write_map(m, out),
        Value::Tag(t, v) => {
            write_head(out, 6, *t);
            write_canonical(v, out);
        }
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Null => out.push(0xf6),
        Value::Undefined => out.push(0xf7),
        Value::Float(f) => write_float(*f, out),
        Value::Simple(s) => {
            if *s < 24 {
                out.push(0xe0 | s);
            } else {
                out.push(0xf8);
                out.push(*s);
            }
        }
    }
}

fn write_map(entries: &[(Value, Value)], out: &mut Vec<u8>) {
    write_head(out, 5, entries.len() as u64);
    // Fast path: all keys are short text strings, whose encoded order is
    // (length, bytes).
    let all_short_text = entries
        .iter()
        .all(|(k, _)| matches!(k, Value::Text(t) if t.len() < 24));
    if all_short_text {
        let mut order: Vec<&(Value, Value)> = entries.iter().collect();
        order.sort_by(|a, b| {
            let (Value::Text(ka), Value::Text(kb)) = (&a.0, &b.0) else {
                return std::cmp::Ordering::Equal;
            };
            ka.len()
                .cmp(&kb.len())
                .then_with(|| ka.as_bytes().cmp(kb.as_bytes()))
        });
        for (k, v) in order {
            write_canonical(k, out);
            write_canonical(v, out);
        }
        return;
    }
    let mut encoded: Vec<(Vec<u8>, &Value)> = entries
        .iter()
        .map(|(k, v)| (encode_canonical(k), v))
        .collect();
    encoded.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, v) in encoded {
        out.extend_from_slice(&k);
        write_canonical(v, out);
    }
}

/// Writes a major-type head with the shortest argument encoding.
pub(crate) fn write_head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let m = major << 5;
    if arg < 24 {
        out.push(m | arg as u8);
    } else if arg <= u8::MAX as u64 {
        out.extend_from_slice(&[m | 24, arg as u8]);
    } else if arg <= u16::MAX as u64 {
        out.push(m | 25);
        out.extend_from_slice(&(arg as u16).to_be_bytes());
    } else if arg <= u32::MAX as u64 {
        out.push(m | 26);
        out.extend_from_slice(&(arg as u32).to_be_bytes());
    } else {
        out.push(m | 27);
        out.extend_from_slice(&arg.to_be_bytes());
    }
}

/// Shortest float form that reproduces the f64 exactly; NaN is `f9 7e00`.
fn write_float(f: f64, out: &mut Vec<u8>) {
    if f.is_nan() {
        out.extend_from_slice(&[0xf9, 0x7e, 0x00]);
        return;
    }
    let h = half::f16::from_f64(f);
    if h.to_f64().to_bits() == f.to_bits() {
        out.push(0xf9);
        out.extend_from_slice(&h.to_bits().to_be_bytes());
        return;
    }
    let s = f as f32;
    if (s as f64).to_bits() == f.to_bits() {
        out.push(0xfa);
        out.extend_from_slice(&s.to_bits().to_be_bytes());
        return;
    }
    out.push(0xfb);
    out.extend_from_slice(&f.to_bits().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(v: &Value) -> String {
        encode_canonical(v)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn floats_use_shortest_exact_width() {
        assert_eq!(hex(&Value::Float(249.5)), "f95bcc");
        assert_eq!(hex(&Value::Float(250.0)), "f95bd0");
        assert_eq!(hex(&Value::Float(5.5)), "f94580");
        assert_eq!(hex(&Value::Float(1.5)), "f93e00");
        assert_eq!(hex(&Value::Float(100000.0)), "fa47c35000");
        assert_eq!(hex(&Value::Float(0.1)), "fb3fb999999999999a");
        assert_eq!(hex(&Value::Float(f64::NAN)), "f97e00");
        assert_eq!(hex(&Value::Float(-0.0)), "f98000");
        assert_eq!(hex(&Value::Float(f64::INFINITY)), "f97c00");
    }

    #[test]
    fn integer_heads_are_shortest() {
        assert_eq!(hex(&Value::Uint(23)), "17");
        assert_eq!(hex(&Value::Uint(24)), "1818");
        assert_eq!(hex(&Value::Uint(256)), "190100");
        assert_eq!(hex(&Value::Uint(65536)), "1a00010000");
        assert_eq!(hex(&Value::Uint(1 << 32)), "1b0000000100000000");
        assert_eq!(hex(&Value::from_i64(-5)), "24");
        assert_eq!(hex(&Value::from_i64(-500)), "3901f3");
    }

    #[test]
    fn map_keys_sort_length_first() {
        let m = Value::text_map([
            ("type", Value::Uint(0)),
            ("ndim", Value::Uint(0)),
            ("compression", Value::Uint(0)),
            ("dtype", Value::Uint(0)),
        ]);
        let bytes = encode_canonical(&m);
        let p = |k: &str| {
            let key = encode_canonical(&Value::Text(k.into()));
            bytes.windows(key.len()).position(|w| w == key).unwrap()
        };
        assert!(p("ndim") < p("type"));
        assert!(p("type") < p("dtype"));
        assert!(p("dtype") < p("compression"));
        let masks = Value::text_map([
            ("inf-", Value::Null),
            ("nan", Value::Null),
            ("inf+", Value::Null),
        ]);
        let b = encode_canonical(&masks);
        assert_eq!(&b[1..5], b"cnan");
        assert_eq!(&b[6..11], b"dinf+");
        assert_eq!(&b[12..17], b"dinf-");
    }

    #[test]
    fn long_and_non_text_keys_sort_by_encoding() {
        let long = "k".repeat(30);
        let m = Value::Map(vec![
            (Value::Text(long.clone()), Value::Null),
            (Value::Uint(7), Value::Null),
            (Value::Text("z".into()), Value::Null),
        ]);
        let b = encode_canonical(&m);
        // uint 7 (0x07) < "z" (0x61..) < long text (0x78 1e ..)
        assert_eq!(b[1], 0x07);
        assert_eq!(&b[3..5], &[0x61, b'z']);
        assert_eq!(&b[6..8], &[0x78, 30]);
    }
}
