//! Keys that every object of a message holds with the same value, written
//! once in `_extra_._shared_` and put back into every entry on read. See
//! `spec/format.md` §7.3.
//!
//! Two values are the same when their canonical CBOR encodings are: that is
//! what the message would store for each, so `0.0` and `-0.0` differ and
//! maps equal up to key order are equal.

use crate::cbor::{encode_canonical, Value};
use crate::descriptor::Map;

use super::RESERVED_KEY;

/// The key inside `_extra_` that holds the shared keys.
pub(crate) const SHARED_KEY: &str = "_shared_";

/// How `base` is written (`spec/format.md` §7.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum BaseLayout {
    /// Every entry whole, as the reference writes messages.
    #[default]
    PerObject,
    /// The paths that every entry of a message of two or more objects holds
    /// with the same value are written once, in `_extra_._shared_`; a tgm
    /// reader gives every entry back whole. `_reserved_` stays per object.
    SharedOnce,
}

/// Text-keyed entries: a `base` entry, or a CBOR map inside one.
trait Entries {
    fn text_keys(&self) -> Vec<String>;
    fn find(&self, key: &str) -> Option<&Value>;
    fn find_mut(&mut self, key: &str) -> Option<&mut Value>;
    fn take(&mut self, key: &str) -> Option<Value>;
    fn put(&mut self, key: String, value: Value);
}

impl Entries for Map {
    fn text_keys(&self) -> Vec<String> {
        self.keys().cloned().collect()
    }
    fn find(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
    fn find_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.get_mut(key)
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        self.remove(key)
    }
    fn put(&mut self, key: String, value: Value) {
        self.insert(key, value);
    }
}

impl Entries for Vec<(Value, Value)> {
    fn text_keys(&self) -> Vec<String> {
        self.iter()
            .filter_map(|(k, _)| k.as_text().map(str::to_owned))
            .collect()
    }
    fn find(&self, key: &str) -> Option<&Value> {
        self.iter()
            .find(|(k, _)| k.as_text() == Some(key))
            .map(|(_, v)| v)
    }
    fn find_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.iter_mut()
            .find(|(k, _)| k.as_text() == Some(key))
            .map(|(_, v)| v)
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        let at = self.iter().position(|(k, _)| k.as_text() == Some(key))?;
        Some(self.remove(at).1)
    }
    fn put(&mut self, key: String, value: Value) {
        self.push((Value::Text(key), value));
    }
}

/// A map whose keys are all distinct text: one the shared keys may reach
/// into. Any other map is compared whole.
fn plain_map(v: &Value) -> Option<&Vec<(Value, Value)>> {
    let Value::Map(m) = v else { return None };
    let mut seen = std::collections::HashSet::with_capacity(m.len());
    m.iter()
        .all(|(k, _)| k.as_text().is_some_and(|t| seen.insert(t)))
        .then_some(m)
}

/// The paths every one of `entries` holds with the same value, as one map
/// (`top`: the entries are `base` entries, whose `_reserved_` is left out).
fn common<E: Entries>(entries: &[&E], top: bool) -> Vec<(String, Value)> {
    let Some((first, rest)) = entries.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in first.text_keys() {
        if top && key == RESERVED_KEY {
            continue;
        }
        let Some(v0) = first.find(&key) else { continue };
        let Some(others) = rest
            .iter()
            .map(|e| e.find(&key))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let bytes = encode_canonical(v0);
        if others.iter().all(|v| encode_canonical(v) == bytes) {
            out.push((key, v0.clone()));
            continue;
        }
        let maps: Option<Vec<&Vec<(Value, Value)>>> =
            std::iter::once(v0).chain(others).map(plain_map).collect();
        if let Some(maps) = maps {
            let inner = common(&maps, false);
            if !inner.is_empty() {
                let inner = inner.into_iter().map(|(k, v)| (Value::Text(k), v));
                out.push((key, Value::Map(inner.collect())));
            }
        }
    }
    out
}

/// Removes `shared` from `entry`: a key whose value is the shared one goes
/// whole; a map that holds only part of it loses that part, and goes when
/// nothing is left.
fn remove_shared<E: Entries>(entry: &mut E, shared: &[(String, Value)]) {
    for (key, value) in shared {
        let Some(own) = entry.find_mut(key) else {
            continue;
        };
        if encode_canonical(own) == encode_canonical(value) {
            entry.take(key);
            continue;
        }
        if let (Value::Map(own), Value::Map(inner)) = (own, value) {
            let inner: Vec<(String, Value)> = inner
                .iter()
                .filter_map(|(k, v)| Some((k.as_text()?.to_owned(), v.clone())))
                .collect();
            remove_shared(own, &inner);
            if own.is_empty() {
                entry.take(key);
            }
        }
    }
}

/// Writes the shared keys back into `entry` where it lacks them; a key it
/// holds keeps its own value. Maps that gain keys are put in canonical key
/// order, the order a message stores them in.
fn fill<E: Entries>(entry: &mut E, shared: &[(Value, Value)]) {
    for (key, value) in shared {
        let Some(key) = key.as_text() else { continue };
        match (entry.find_mut(key), value) {
            (None, _) => entry.put(key.to_owned(), value.clone()),
            (Some(Value::Map(own)), Value::Map(inner)) => {
                fill(own, inner);
                own.sort_by_cached_key(|(k, _)| {
                    let b = encode_canonical(k);
                    (b.len(), b)
                });
            }
            (Some(_), _) => {}
        }
    }
}

/// Moves the paths every entry of `base` holds with the same value out of
/// the entries and returns them; nothing when `base` has fewer than two
/// entries.
pub(super) fn hoist(base: &mut [Map]) -> Map {
    if base.len() < 2 {
        return Map::new();
    }
    let shared = common(&base.iter().collect::<Vec<_>>(), true);
    for entry in base.iter_mut() {
        remove_shared(entry, &shared);
    }
    shared.into_iter().collect()
}

/// Puts `shared` back into every entry of `base`; a `_reserved_` in it is
/// not the encoder's and is left out.
pub(super) fn expand(base: &mut [Map], shared: &Map) {
    let shared: Vec<(Value, Value)> = shared
        .iter()
        .filter(|(k, _)| *k != RESERVED_KEY)
        .map(|(k, v)| (Value::Text(k.clone()), v.clone()))
        .collect();
    for entry in base {
        fill(entry, &shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(json: serde_json::Value) -> Vec<Map> {
        let v = Value::from_json_value(&json, 32).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| crate::descriptor::text_keyed_map(e, "entry").unwrap())
            .collect()
    }

    fn encoded(base: &[Map]) -> Vec<Vec<u8>> {
        base.iter()
            .map(|e| encode_canonical(&Value::text_map(e.clone())))
            .collect()
    }

    #[test]
    fn common_leaves_and_whole_maps_are_stored_once_and_given_back() {
        let before = entries(serde_json::json!([
            {"geography": {"Ni": 120, "Nj": 61}, "mars": {"class": "ea", "param": 129},
             "grib": {"only": 1, "edition": 2}, "_reserved_": {"tensor": {"ndim": 2}}},
            {"geography": {"Nj": 61, "Ni": 120}, "mars": {"class": "ea", "param": 130},
             "grib": {"edition": 2}, "_reserved_": {"tensor": {"ndim": 2}}},
        ]));
        let mut base = before.clone();
        let shared = hoist(&mut base);
        let shared_json = Value::text_map(shared.clone()).to_json_value();
        assert_eq!(
            shared_json,
            serde_json::json!({"geography": {"Ni": 120, "Nj": 61},
                "mars": {"class": "ea"}, "grib": {"edition": 2}})
        );
        assert_eq!(
            Value::text_map(base[1].clone()).to_json_value(),
            serde_json::json!({"mars": {"param": 130}, "_reserved_": {"tensor": {"ndim": 2}}}),
            "a map left empty goes, and _reserved_ stays per object"
        );
        expand(&mut base, &shared);
        assert_eq!(encoded(&base), encoded(&before));
    }

    #[test]
    fn values_that_encode_differently_are_not_shared() {
        let before = entries(serde_json::json!([
            {"a": 0.0, "b": 1, "c": [1, 2]},
            {"a": -0.0, "b": 1.0, "c": [1, 2]},
        ]));
        let mut base = before.clone();
        let shared = hoist(&mut base);
        assert_eq!(shared.keys().collect::<Vec<_>>(), ["c"]);
        expand(&mut base, &shared);
        assert_eq!(encoded(&base), encoded(&before));
    }

    #[test]
    fn a_key_some_entries_lack_stays_with_them() {
        let before = entries(serde_json::json!([
            {"g": {"a": 1, "b": 2}, "x": 1}, {"g": {"a": 1}}, {"g": {"a": 1, "b": 3}, "x": 1},
        ]));
        let mut base = before.clone();
        let shared = hoist(&mut base);
        assert_eq!(
            Value::text_map(shared.clone()).to_json_value(),
            serde_json::json!({"g": {"a": 1}})
        );
        expand(&mut base, &shared);
        assert_eq!(encoded(&base), encoded(&before));
    }

    #[test]
    fn one_entry_shares_nothing_and_an_entry_keeps_its_own_value() {
        let mut one = entries(serde_json::json!([{"a": 1}]));
        assert!(hoist(&mut one).is_empty());
        assert_eq!(one[0].len(), 1);
        let shared: Map = [
            ("a".to_owned(), Value::Uint(2)),
            (RESERVED_KEY.to_owned(), Value::Uint(3)),
        ]
        .into_iter()
        .collect();
        let mut base = entries(serde_json::json!([{"a": 1}, {}]));
        expand(&mut base, &shared);
        assert_eq!(base[0]["a"], Value::Uint(1));
        assert_eq!(base[1]["a"], Value::Uint(2));
        assert!(
            !base[1].contains_key(RESERVED_KEY),
            "only the encoder writes _reserved_"
        );
    }
}
