//! [`Value`] beside the serde ecosystem: conversions to and from
//! `ciborium::Value`, `serde::Serialize`/`Deserialize`, and JSON values.
//! See `spec/format.md` §4.3.

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeMap, SerializeSeq};

use super::Value;
use crate::error::{Error, ErrorKind, Result};

impl TryFrom<ciborium::Value> for Value {
    type Error = Error;

    /// Every `ciborium::Value` has an exact counterpart; integers outside
    /// CBOR's range (−2^64 ..= 2^64 − 1) cannot occur in one.
    fn try_from(v: ciborium::Value) -> Result<Value> {
        Ok(match v {
            ciborium::Value::Integer(i) => {
                let i = i128::from(i);
                match u64::try_from(i) {
                    Ok(u) => Value::Uint(u),
                    Err(_) => {
                        Value::Nint(u64::try_from(-1 - i).map_err(|_| {
                            Error::new(ErrorKind::Cbor, "integer out of cbor range")
                        })?)
                    }
                }
            }
            ciborium::Value::Bytes(b) => Value::Bytes(b),
            ciborium::Value::Float(f) => Value::Float(f),
            ciborium::Value::Text(t) => Value::Text(t),
            ciborium::Value::Bool(b) => Value::Bool(b),
            ciborium::Value::Null => Value::Null,
            ciborium::Value::Tag(t, inner) => Value::Tag(t, Box::new(Value::try_from(*inner)?)),
            ciborium::Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(Value::try_from)
                    .collect::<Result<_>>()?,
            ),
            ciborium::Value::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| Ok((Value::try_from(k)?, Value::try_from(v)?)))
                    .collect::<Result<_>>()?,
            ),
            other => {
                return Err(Error::new(
                    ErrorKind::Cbor,
                    format!("ciborium value {other:?} has no tgm counterpart"),
                ))
            }
        })
    }
}

impl TryFrom<Value> for ciborium::Value {
    type Error = Error;

    /// Fails only for `undefined` and other simple values, which
    /// `ciborium::Value` cannot hold ([`ErrorKind::Cbor`]).
    fn try_from(v: Value) -> Result<ciborium::Value> {
        Ok(match v {
            Value::Uint(u) => ciborium::Value::Integer(u.into()),
            Value::Nint(n) => ciborium::Value::Integer(
                ciborium::value::Integer::try_from(-1 - i128::from(n))
                    .map_err(|_| Error::new(ErrorKind::Cbor, "integer out of cbor range"))?,
            ),
            Value::Bytes(b) => ciborium::Value::Bytes(b),
            Value::Text(t) => ciborium::Value::Text(t),
            Value::Array(items) => ciborium::Value::Array(
                items
                    .into_iter()
                    .map(ciborium::Value::try_from)
                    .collect::<Result<_>>()?,
            ),
            Value::Map(entries) => ciborium::Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| Ok((k.try_into()?, v.try_into()?)))
                    .collect::<Result<_>>()?,
            ),
            Value::Tag(t, inner) => ciborium::Value::Tag(t, Box::new((*inner).try_into()?)),
            Value::Bool(b) => ciborium::Value::Bool(b),
            Value::Null => ciborium::Value::Null,
            Value::Float(f) => ciborium::Value::Float(f),
            Value::Undefined | Value::Simple(_) => {
                return Err(Error::new(
                    ErrorKind::Cbor,
                    format!("a cbor {} has no ciborium counterpart", v.type_name()),
                ))
            }
        })
    }
}

/// Serializes as the serde data model sees CBOR: integers as the narrowest
/// of `u64`/`i64`/`i128`, tags through `ciborium::tag::Captured` (so
/// ciborium's serializer writes them, others see the tag and the content),
/// `undefined` as unit. A simple value other than false, true, null and
/// undefined has no serde form and is an error.
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Value::Uint(u) => s.serialize_u64(*u),
            Value::Nint(n) => match i64::try_from(*n) {
                Ok(n) => s.serialize_i64(-1 - n),
                Err(_) => s.serialize_i128(-1 - i128::from(*n)),
            },
            Value::Bytes(b) => s.serialize_bytes(b),
            Value::Text(t) => s.serialize_str(t),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Value::Tag(t, inner) => ciborium::tag::Captured(Some(*t), &**inner).serialize(s),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Null | Value::Undefined => s.serialize_unit(),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Simple(n) => Err(S::Error::custom(format!(
                "cbor simple value {n} has no serde form"
            ))),
        }
    }
}

/// Deserializes anything the serde data model can express; with ciborium's
/// deserializer this includes tags.
impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = ciborium::Value::deserialize(d)?;
        Value::try_from(v).map_err(D::Error::custom)
    }
}

impl Value {
    /// The JSON value that [`Value::to_json`] renders: byte strings as hex
    /// text, non-finite floats as the text `NaN`, `inf` or `-inf`, tags as
    /// their content, `undefined` as null, other simple values as numbers,
    /// non-text map keys as `cbor:` and the key's canonical CBOR in hex, and
    /// negative integers below −2^63 as floats (as JSON parsers read them).
    pub fn to_json_value(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Uint(u) => J::from(*u),
            Value::Nint(n) => match i64::try_from(*n) {
                Ok(n) => J::from(-1 - n),
                Err(_) => J::from(-1.0 - *n as f64),
            },
            Value::Bytes(b) => J::String(hex(b)),
            Value::Text(t) => J::String(t.clone()),
            Value::Array(items) => J::Array(items.iter().map(Value::to_json_value).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match k {
                            Value::Text(t) => t.clone(),
                            other => format!("cbor:{}", hex(&super::encode_canonical(other))),
                        };
                        (key, v.to_json_value())
                    })
                    .collect(),
            ),
            Value::Tag(_, inner) => inner.to_json_value(),
            Value::Bool(b) => J::Bool(*b),
            Value::Null | Value::Undefined => J::Null,
            Value::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(n) => J::Number(n),
                None => J::String(f.to_string()),
            },
            Value::Simple(s) => J::from(*s),
        }
    }

    /// The CBOR value of a JSON value nesting at most `max_depth` arrays and
    /// objects deep: integers as integers, other numbers as floats.
    ///
    /// ```
    /// use tgm::cbor::Value;
    /// let v = Value::from_json_value(&serde_json::json!({"step": [0, 6]}), 2)?;
    /// assert_eq!(v.get("step").and_then(Value::as_array).map(|a| a.len()), Some(2));
    /// assert!(Value::from_json_value(&serde_json::json!([[[1]]]), 2).is_err());
    /// # Ok::<(), tgm::Error>(())
    /// ```
    pub fn from_json_value(json: &serde_json::Value, max_depth: usize) -> Result<Value> {
        use serde_json::Value as J;
        let deeper = || {
            max_depth
                .checked_sub(1)
                .ok_or_else(|| Error::metadata("json nests deeper than the cbor depth limit"))
        };
        Ok(match json {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Value::Uint(u),
                (None, Some(i)) => Value::from_i64(i),
                _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::Text(s.clone()),
            J::Array(items) => {
                let d = deeper()?;
                Value::Array(
                    items
                        .iter()
                        .map(|v| Value::from_json_value(v, d))
                        .collect::<Result<_>>()?,
                )
            }
            J::Object(entries) => {
                let d = deeper()?;
                Value::Map(
                    entries
                        .iter()
                        .map(|(k, v)| Ok((Value::Text(k.clone()), Value::from_json_value(v, d)?)))
                        .collect::<Result<_>>()?,
                )
            }
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
