//! Canonical CBOR writer. See `spec/format.md` §4.1.
//!
//! Heads are written by `ciborium-ll`'s encoder, which already picks the
//! shortest argument and the shortest exact float width (one-byte heads are
//! written directly); this layer adds NaN's one spelling and the ordering of
//! map keys by their encoded bytes.

use std::convert::Infallible;

use ciborium_ll::{Encoder, Header};

use super::Value;

/// Encodes `value` canonically into a new buffer.
pub fn encode_canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_canonical(value, &mut out);
    out
}

/// Appends the canonical encoding of `value` to `out`.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    write_value(value, &mut Encoder::from(Sink(out)));
}

/// A growable buffer as an infallible `ciborium-io` writer.
struct Sink<'a>(&'a mut Vec<u8>);

impl ciborium_io::Write for Sink<'_> {
    type Error = Infallible;

    fn write_all(&mut self, data: &[u8]) -> Result<(), Infallible> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

type Enc<'a> = Encoder<Sink<'a>>;

fn push(enc: &mut Enc<'_>, header: Header) {
    // A head whose argument fits in the initial byte is that one byte.
    let short = match header {
        Header::Positive(a) => (0u8, a),
        Header::Negative(a) => (1, a),
        Header::Bytes(Some(n)) => (2, n as u64),
        Header::Text(Some(n)) => (3, n as u64),
        Header::Array(Some(n)) => (4, n as u64),
        Header::Map(Some(n)) => (5, n as u64),
        _ => (0, u64::MAX),
    };
    if short.1 < 24 {
        return raw(enc, &[short.0 << 5 | short.1 as u8]);
    }
    let Ok(()) = enc.push(header);
}

fn raw(enc: &mut Enc<'_>, bytes: &[u8]) {
    let Ok(()) = ciborium_io::Write::write_all(enc, bytes);
}

fn write_value(value: &Value, enc: &mut Enc<'_>) {
    match value {
        Value::Uint(u) => push(enc, Header::Positive(*u)),
        Value::Nint(n) => push(enc, Header::Negative(*n)),
        Value::Bytes(b) => {
            push(enc, Header::Bytes(Some(b.len())));
            raw(enc, b);
        }
        Value::Text(t) => {
            push(enc, Header::Text(Some(t.len())));
            raw(enc, t.as_bytes());
        }
        Value::Array(a) => {
            push(enc, Header::Array(Some(a.len())));
            for v in a {
                write_value(v, enc);
            }
        }
        Value::Map(m) => write_map(m, enc),
        Value::Tag(t, v) => {
            push(enc, Header::Tag(*t));
            write_value(v, enc);
        }
        Value::Bool(false) => push(enc, Header::Simple(20)),
        Value::Bool(true) => push(enc, Header::Simple(21)),
        Value::Null => push(enc, Header::Simple(22)),
        Value::Undefined => push(enc, Header::Simple(23)),
        // Every NaN is written as the one half-precision quiet NaN.
        Value::Float(f) if f.is_nan() => raw(enc, &[0xf9, 0x7e, 0x00]),
        Value::Float(f) => push(enc, Header::Float(*f)),
        Value::Simple(s) => push(enc, Header::Simple(*s)),
    }
}

fn write_map(entries: &[(Value, Value)], enc: &mut Enc<'_>) {
    push(enc, Header::Map(Some(entries.len())));
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
            write_value(k, enc);
            write_value(v, enc);
        }
        return;
    }
    let mut encoded: Vec<(Vec<u8>, &Value)> = entries
        .iter()
        .map(|(k, v)| (encode_canonical(k), v))
        .collect();
    encoded.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, v) in encoded {
        raw(enc, &k);
        write_value(v, enc);
    }
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
