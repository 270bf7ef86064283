//! Metadata assignments given on the command line (`--meta`, `set -s`) and
//! conversions between CBOR values and JSON. See `spec/format.md` §7.
//!
//! Syntax of one assignment: `[N:]KEY=VALUE` or `[N:]KEY:=TEXT`.
//! - `N:` targets object `N` only (default: every object);
//! - `KEY` is dotted (`mars.param`); `extra.KEY` / `_extra_.KEY` targets the
//!   message-level `_extra_` section; empty segments are rejected;
//! - `VALUE` is JSON when it is an array, object, quoted string, `true`,
//!   `false` or `null`; a number when the text is exactly how that number
//!   is written back (`6`, `-1`, `0.5`), otherwise text (`0001`, `2t`, `1e3`);
//! - `:=` stores the text as is, never as a number.

use tgm::cbor::Value;
use tgm::{GlobalMetadata, Map};

use crate::error::{usage, CliError, CliResult};

/// Which object(s) an assignment targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Every object's base entry.
    AllObjects,
    /// One object's base entry.
    Object(usize),
    /// The message-level `_extra_` section.
    Extra,
}

/// One parsed `KEY=VALUE` assignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// Where it goes.
    pub target: Target,
    /// Key path segments (never empty, no empty segment).
    pub path: Vec<String>,
    /// The value.
    pub value: Value,
}

/// Keys that describe the data itself and may not be set by hand.
const PROTECTED: [&str; 12] = [
    "_reserved_",
    "shape",
    "strides",
    "dtype",
    "ndim",
    "byte_order",
    "encoding",
    "filter",
    "compression",
    "masks",
    "type",
    "tensor",
];

/// Splits `key` into non-empty segments.
pub fn key_path(key: &str) -> CliResult<Vec<String>> {
    if key.is_empty() {
        return Err(usage("empty metadata key"));
    }
    let parts: Vec<String> = key.split('.').map(str::to_string).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(usage(format!("metadata key {key:?} has an empty segment")));
    }
    Ok(parts)
}

/// Parses one assignment.
pub fn parse_assignment(s: &str) -> CliResult<Assignment> {
    let (lhs, rhs, force_text) = match (s.find(":="), s.find('=')) {
        (Some(i), Some(j)) if i + 1 == j => (&s[..i], &s[j + 1..], true),
        (_, Some(j)) => (&s[..j], &s[j + 1..], false),
        _ => return Err(usage(format!("{s:?} is not KEY=VALUE"))),
    };
    let (target, key) = match lhs.split_once(':') {
        Some((n, k)) => {
            let i = n
                .parse::<usize>()
                .map_err(|_| usage(format!("{s:?}: object index {n:?} is not a number")))?;
            (Target::Object(i), k)
        }
        None => (Target::AllObjects, lhs),
    };
    let mut path = key_path(key)?;
    let target = if path[0] == "extra" || path[0] == "_extra_" {
        if target != Target::AllObjects {
            return Err(usage(format!(
                "{s:?}: _extra_ is message-level, not per object"
            )));
        }
        path.remove(0);
        if path.is_empty() {
            return Err(usage(format!("{s:?}: name a key inside extra")));
        }
        Target::Extra
    } else {
        target
    };
    if let Some(p) = path.iter().find(|p| PROTECTED.contains(&p.as_str())) {
        return Err(usage(format!(
            "{s:?}: {p:?} describes the data and cannot be set"
        )));
    }
    let value = if force_text {
        Value::Text(rhs.to_string())
    } else {
        parse_value(rhs)?
    };
    Ok(Assignment {
        target,
        path,
        value,
    })
}

/// Splits `a=1,b=[1,2]` at top-level commas (not inside brackets or quotes).
pub fn split_list(s: &str) -> Vec<&str> {
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        if quoted {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Parses a value: JSON structures and literals, round-tripping numbers, else text.
pub fn parse_value(s: &str) -> CliResult<Value> {
    let t = s.trim_start();
    if t.starts_with(['[', '{', '"']) || matches!(s, "true" | "false" | "null") {
        let j: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| usage(format!("value {s:?} is not valid JSON: {e}")))?;
        return Ok(from_json(&j));
    }
    if let Ok(i) = s.parse::<i64>() {
        if i.to_string() == s {
            return Ok(Value::from_i64(i));
        }
    }
    if let Ok(u) = s.parse::<u64>() {
        if u.to_string() == s {
            return Ok(Value::Uint(u));
        }
    }
    if let Ok(f) = s.parse::<f64>() {
        if f.is_finite() && format!("{f:?}") == s {
            return Ok(Value::Float(f));
        }
    }
    Ok(Value::Text(s.to_string()))
}

/// JSON to CBOR.
pub fn from_json(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::Uint(u)
            } else if let Some(i) = n.as_i64() {
                Value::from_i64(i)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::Text(s.clone()),
        serde_json::Value::Array(a) => Value::Array(a.iter().map(from_json).collect()),
        serde_json::Value::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| (Value::Text(k.clone()), from_json(v)))
                .collect(),
        ),
    }
}

/// How [`json_with`] writes a CBOR byte string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesAs {
    /// An array of numbers, one per byte (sidecars read back by `import`).
    Numbers,
    /// `{"base64": "…", "bytes": N}`: standard padded base64 (RFC 4648
    /// §4) and the length, for what people read (`dump`, `ls`, `get`).
    Base64,
}

/// CBOR to JSON (byte strings as arrays of numbers, non-text keys as their JSON text).
pub fn to_json(v: &Value) -> serde_json::Value {
    json_with(v, BytesAs::Numbers)
}

/// CBOR to JSON for display: byte strings as [`BytesAs::Base64`].
pub fn to_shown_json(v: &Value) -> serde_json::Value {
    json_with(v, BytesAs::Base64)
}

/// A text-keyed map as a JSON object for display ([`to_shown_json`]).
pub fn map_to_shown_json(m: &Map) -> serde_json::Value {
    serde_json::Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), to_shown_json(v)))
            .collect(),
    )
}

/// CBOR to JSON, byte strings written as `bytes` says and non-text keys
/// as their JSON text.
pub fn json_with(v: &Value, bytes: BytesAs) -> serde_json::Value {
    use serde_json::Value as J;
    let to_json = |v: &Value| json_with(v, bytes);
    match v {
        Value::Uint(u) => J::from(*u),
        Value::Nint(n) => match i64::try_from(*n) {
            Ok(i) => J::from(-1 - i),
            Err(_) => J::from(-1.0 - *n as f64),
        },
        Value::Bytes(b) if bytes == BytesAs::Base64 => serde_json::json!({
            "base64": tgm::kerchunk::base64(b),
            "bytes": b.len(),
        }),
        Value::Bytes(b) => J::Array(b.iter().map(|&x| J::from(x)).collect()),
        Value::Text(s) => J::String(s.clone()),
        Value::Array(a) => J::Array(a.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Text(s) => s.clone(),
                        other => to_json(other).to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Tag(_, inner) => to_json(inner),
        Value::Bool(b) => J::Bool(*b),
        Value::Null | Value::Undefined => J::Null,
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Simple(s) => J::from(*s),
    }
}

/// A text-keyed map as a JSON object.
pub fn map_to_json(m: &Map) -> serde_json::Value {
    serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
}

/// A JSON object as a text-keyed map.
pub fn map_from_json(j: &serde_json::Value) -> CliResult<Map> {
    let o = j
        .as_object()
        .ok_or_else(|| CliError::Failed("expected a JSON object".into()))?;
    Ok(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
}

/// Inserts `value` at `path` in `map`, creating nested maps.
pub fn insert_path(map: &mut Map, path: &[String], value: Value) -> CliResult {
    let (first, rest) = path
        .split_first()
        .ok_or_else(|| usage("empty metadata key"))?;
    if rest.is_empty() {
        map.insert(first.clone(), value);
        return Ok(());
    }
    let slot = map
        .entry(first.clone())
        .or_insert_with(|| Value::Map(Vec::new()));
    insert_value(slot, rest, value, path)
}

fn insert_value(slot: &mut Value, path: &[String], value: Value, full: &[String]) -> CliResult {
    let Value::Map(entries) = slot else {
        return Err(CliError::Failed(format!(
            "metadata key {:?} descends into a {} value",
            full.join("."),
            slot.type_name()
        )));
    };
    let (head, tail) = (&path[0], &path[1..]);
    let pos = entries
        .iter()
        .position(|(k, _)| k.as_text() == Some(head.as_str()));
    let i = match pos {
        Some(i) => i,
        None => {
            entries.push((Value::Text(head.clone()), Value::Map(Vec::new())));
            entries.len() - 1
        }
    };
    if tail.is_empty() {
        entries[i].1 = value;
        return Ok(());
    }
    insert_value(&mut entries[i].1, tail, value, full)
}

/// Applies assignments to a message's metadata with `num_objects` objects.
pub fn apply(meta: &mut GlobalMetadata, num_objects: usize, list: &[Assignment]) -> CliResult {
    for a in list {
        match a.target {
            Target::Extra => insert_path(&mut meta.extra, &a.path, a.value.clone())?,
            Target::AllObjects => {
                if num_objects == 0 {
                    insert_path(&mut meta.extra, &a.path, a.value.clone())?;
                }
                meta.base
                    .resize_with(num_objects.max(meta.base.len()), Map::new);
                for e in &mut meta.base {
                    insert_path(e, &a.path, a.value.clone())?;
                }
            }
            Target::Object(i) => {
                if i >= num_objects {
                    return Err(usage(format!(
                        "object {i} does not exist (the message has {num_objects})"
                    )));
                }
                meta.base
                    .resize_with(num_objects.max(meta.base.len()), Map::new);
                insert_path(&mut meta.base[i], &a.path, a.value.clone())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_only_when_they_round_trip() {
        assert_eq!(parse_value("0001").unwrap(), Value::Text("0001".into()));
        assert_eq!(parse_value("1").unwrap(), Value::Uint(1));
        assert_eq!(parse_value("-3").unwrap(), Value::Nint(2));
        assert_eq!(parse_value("0.5").unwrap(), Value::Float(0.5));
        assert_eq!(parse_value("1e3").unwrap(), Value::Text("1e3".into()));
        assert_eq!(parse_value("2t").unwrap(), Value::Text("2t".into()));
    }

    #[test]
    fn json_values_and_forced_text() {
        let a = parse_assignment("levels=[1,2]").unwrap();
        assert_eq!(a.value, Value::Array(vec![Value::Uint(1), Value::Uint(2)]));
        let a = parse_assignment("n:=12").unwrap();
        assert_eq!(a.value, Value::Text("12".into()));
        let a = parse_assignment("3:mars.param=130").unwrap();
        assert_eq!(a.target, Target::Object(3));
        assert_eq!(a.path, vec!["mars", "param"]);
        assert_eq!(a.value, Value::Uint(130));
        let a = parse_assignment("x=\"007\"").unwrap();
        assert_eq!(a.value, Value::Text("007".into()));
    }

    #[test]
    fn malformed_and_protected_keys_are_refused() {
        for bad in [
            "a..b=1",
            "=1",
            ".a=1",
            "a.=1",
            "x:a=1",
            "shape=[1]",
            "noequals",
        ] {
            assert!(parse_assignment(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn list_splits_outside_brackets() {
        assert_eq!(
            split_list("a=1,b=[1,2],c=\"x,y\""),
            vec!["a=1", "b=[1,2]", "c=\"x,y\""]
        );
    }
}
