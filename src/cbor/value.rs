//! The CBOR data model used by tgm. See `spec/format.md` §4.

use std::collections::BTreeMap;

/// A decoded CBOR item.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Major type 0: an unsigned integer.
    Uint(u64),
    /// Major type 1: the integer `-1 - n`.
    Nint(u64),
    /// Major type 2: a byte string.
    Bytes(Vec<u8>),
    /// Major type 3: a UTF-8 text string.
    Text(String),
    /// Major type 4: an array.
    Array(Vec<Value>),
    /// Major type 5: a map, in the order read (or to be canonicalised on write).
    Map(Vec<(Value, Value)>),
    /// Major type 6: a tagged item.
    Tag(u64, Box<Value>),
    /// `true` / `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// `undefined`.
    Undefined,
    /// A float of any width, widened to f64.
    Float(f64),
    /// Another simple value.
    Simple(u8),
}

impl Value {
    /// Whether arrays, maps and tags nest more than `levels` deep inside this
    /// value (a scalar nests 0 deep, `[[1]]` 2 deep). Recurses at most
    /// `levels + 1` calls deep, whatever the value.
    pub fn nests_deeper_than(&self, levels: usize) -> bool {
        let Some(rest) = levels.checked_sub(1) else {
            return matches!(self, Value::Array(_) | Value::Map(_) | Value::Tag(..));
        };
        match self {
            Value::Array(items) => items.iter().any(|c| c.nests_deeper_than(rest)),
            Value::Map(entries) => entries
                .iter()
                .any(|(k, v)| k.nests_deeper_than(rest) || v.nests_deeper_than(rest)),
            Value::Tag(_, inner) => inner.nests_deeper_than(rest),
            _ => false,
        }
    }

    /// The text, if this is a text string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value as u64, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Uint(u) => Some(*u),
            _ => None,
        }
    }

    /// The value as i64, if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Uint(u) => i64::try_from(*u).ok(),
            Value::Nint(n) => i64::try_from(*n).ok().map(|n| -1 - n),
            _ => None,
        }
    }

    /// The value as f64: floats as-is, integers when exactly representable.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            Value::Uint(u) if *u <= (1u64 << 53) => Some(*u as f64),
            Value::Nint(n) if *n < (1u64 << 53) => Some(-1.0 - *n as f64),
            _ => None,
        }
    }

    /// The entries, if this is a map.
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Looks up a text key in a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_text() == Some(key))
            .map(|(_, v)| v)
    }

    /// A signed integer value.
    pub fn from_i64(v: i64) -> Value {
        if v >= 0 {
            Value::Uint(v as u64)
        } else {
            Value::Nint((-1 - v) as u64)
        }
    }

    /// Short name of the CBOR type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Uint(_) => "unsigned integer",
            Value::Nint(_) => "negative integer",
            Value::Bytes(_) => "byte string",
            Value::Text(_) => "text",
            Value::Array(_) => "array",
            Value::Map(_) => "map",
            Value::Tag(..) => "tag",
            Value::Bool(_) => "bool",
            Value::Null => "null",
            Value::Undefined => "undefined",
            Value::Float(_) => "float",
            Value::Simple(_) => "simple value",
        }
    }

    /// Builds a map value from text-keyed entries.
    pub fn text_map<I, K>(entries: I) -> Value
    where
        I: IntoIterator<Item = (K, Value)>,
        K: Into<String>,
    {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Value::Text(k.into()), v))
                .collect(),
        )
    }

    /// Renders the value as JSON text (bytes as hex strings, non-finite floats as strings).
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }

    fn write_json(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Nint(n) => {
                let _ = write!(out, "{}", -1i128 - *n as i128);
            }
            Value::Bytes(b) => {
                out.push('"');
                for byte in b {
                    let _ = write!(out, "{byte:02x}");
                }
                out.push('"');
            }
            Value::Text(t) => json_string(t, out),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    match k {
                        Value::Text(t) => json_string(t, out),
                        // JSON keys are strings: other keys appear as their
                        // canonical CBOR in hex (linear in size at any depth).
                        other => {
                            out.push_str("\"cbor:");
                            for b in crate::cbor::encode_canonical(other) {
                                let _ = write!(out, "{b:02x}");
                            }
                            out.push('"');
                        }
                    }
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
            Value::Tag(_, v) => v.write_json(out),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Null | Value::Undefined => out.push_str("null"),
            Value::Float(f) => {
                if f.is_finite() {
                    let _ = write!(out, "{f:?}");
                } else {
                    let _ = write!(out, "\"{f}\"");
                }
            }
            Value::Simple(s) => {
                let _ = write!(out, "{s}");
            }
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Uint(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::from_i64(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Array(v)
    }
}
impl From<BTreeMap<String, Value>> for Value {
    fn from(m: BTreeMap<String, Value>) -> Self {
        Value::text_map(m)
    }
}
