//! The `--canonical` check: CBOR map keys in RFC 8949 §4.2.1 order, the
//! order every writer of the format uses (`spec/format.md` §4.1).

use crate::cbor::{encode_canonical, parse_one, CborLimits, Value};

/// Why `bytes` is not canonical CBOR, or `None` when it is (or does not
/// parse: a parse failure is reported by the level that parses it).
pub(crate) fn non_canonical(bytes: &[u8], base: u64) -> Option<String> {
    let (v, _) = parse_one(bytes, base, CborLimits::default()).ok()?;
    (!keys_canonical(&v)).then(|| "CBOR map keys are not in canonical (bytewise) order".into())
}

/// Whether every map in `v` has its keys in canonical (bytewise) order.
fn keys_canonical(v: &Value) -> bool {
    match v {
        Value::Map(entries) => {
            let enc: Vec<Vec<u8>> = entries.iter().map(|(k, _)| encode_canonical(k)).collect();
            enc.windows(2).all(|w| w[0] < w[1])
                && entries
                    .iter()
                    .all(|(k, v)| keys_canonical(k) && keys_canonical(v))
        }
        Value::Array(items) => items.iter().all(keys_canonical),
        Value::Tag(_, inner) => keys_canonical(inner),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_is_checked_at_every_depth() {
        // {"a": 1, "b": 1} and {"b": 1, "a": 1}
        assert_eq!(
            non_canonical(&[0xa2, 0x61, b'a', 1, 0x61, b'b', 1], 0),
            None
        );
        assert!(non_canonical(&[0xa2, 0x61, b'b', 1, 0x61, b'a', 1], 0).is_some());
        // [{"b": 1, "a": 1}]
        assert!(non_canonical(&[0x81, 0xa2, 0x61, b'b', 1, 0x61, b'a', 1], 0).is_some());
        // Shorter keys sort first: {"b": 1, "aa": 1} is canonical.
        assert_eq!(
            non_canonical(&[0xa2, 0x61, b'b', 1, 0x62, b'a', b'a', 1], 0),
            None
        );
    }
}
