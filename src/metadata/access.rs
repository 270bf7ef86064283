//! Reading metadata by path: which sections a lookup searches, in which
//! order, the `extra` alias and the hidden `_reserved_` key, decided once
//! for every door (Rust, C, Python, the CLI). See `spec/format.md` §7.1.

use super::{GlobalMetadata, EXTRA_ALIAS, EXTRA_KEY, RESERVED_KEY};
use crate::cbor::Value;
use crate::descriptor::Map;

/// Where a lookup searches (`spec/format.md` §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The message: the first `base[i]` holding the path, in object order,
    /// then `_extra_`. The C API's `tgm_metadata_get*` and Python's
    /// `meta[key]` / `get_path` answer this.
    Message,
    /// Object `i`'s entry `base[i]` alone; the path is read as written
    /// there. The C API's `*_at` getters and Python's `get_path_at`
    /// answer this.
    Object(usize),
    /// What applies to object `i`: `base[i]`, then `_extra_`, whose keys
    /// hold for every object. `tgm get`, `tgm ls -p` and `-w` clauses
    /// answer this.
    ObjectThenExtra(usize),
}

impl GlobalMetadata {
    /// The value at dotted `path` (`mars.param`) in `scope`, or `None`.
    ///
    /// `_reserved_` as the first segment is never found (read provenance
    /// from [`Self::reserved`] or the entries themselves); an empty path or
    /// segment finds nothing. In the scopes that include `_extra_`, a path
    /// of two or more segments starting `_extra_` or its alias `extra`
    /// names a key inside `_extra_` and is searched nowhere else.
    ///
    /// ```
    /// use tgm::metadata::Scope;
    /// use tgm::GlobalMetadata;
    ///
    /// let meta = GlobalMetadata::from_json_value(&serde_json::json!({
    ///     "base": [{"step": 0}, {"step": 6, "param": "2t"}],
    ///     "_extra_": {"param": "msl", "source": "ifs"},
    /// }))?;
    /// assert_eq!(meta.get(Scope::Message, "step"), Some(&0u64.into()));
    /// assert_eq!(meta.get(Scope::Message, "param"), Some(&"2t".into()));
    /// assert_eq!(meta.get(Scope::Message, "extra.param"), Some(&"msl".into()));
    /// assert_eq!(meta.get(Scope::Object(0), "source"), None);
    /// assert_eq!(meta.get(Scope::ObjectThenExtra(0), "param"), Some(&"msl".into()));
    /// assert_eq!(meta.get(Scope::Object(1), "_reserved_"), None);
    /// # Ok::<(), tgm::Error>(())
    /// ```
    pub fn get(&self, scope: Scope, path: &str) -> Option<&Value> {
        let segments: Vec<&str> = path.split('.').collect();
        self.get_segments(scope, &segments)
    }

    /// [`Self::get`] for a path already split into segments: a one-segment
    /// path is a single key even when it contains a dot (Python's
    /// `meta["a.b"]`).
    pub fn get_segments(&self, scope: Scope, segments: &[&str]) -> Option<&Value> {
        let (&first, rest) = segments.split_first()?;
        if segments.iter().any(|s| s.is_empty()) || first == RESERVED_KEY {
            return None;
        }
        if !matches!(scope, Scope::Object(_)) {
            if let (EXTRA_KEY | EXTRA_ALIAS, Some((&head, tail))) = (first, rest.split_first()) {
                return descend(self.extra.get(head)?, tail);
            }
        }
        self.sections(scope)
            .find_map(|s| descend(s.get(first)?, rest))
    }

    /// The one-segment keys a lookup in `scope` can find, each once, in the
    /// order [`Self::get`] searches them (`_reserved_` left out).
    pub fn keys(&self, scope: Scope) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.sections(scope)
            .flat_map(|s| s.keys())
            .map(String::as_str)
            .filter(|k| *k != RESERVED_KEY && seen.insert(*k))
            .collect()
    }

    /// The sections `scope` searches, in order.
    fn sections(&self, scope: Scope) -> impl Iterator<Item = &Map> {
        let (entries, extra): (&[Map], bool) = match scope {
            Scope::Message => (&self.base, true),
            Scope::Object(i) => (self.base.get(i..=i).unwrap_or_default(), false),
            Scope::ObjectThenExtra(i) => (self.base.get(i..=i).unwrap_or_default(), true),
        };
        entries.iter().chain(extra.then_some(&self.extra))
    }
}

fn descend<'v>(root: &'v Value, rest: &[&str]) -> Option<&'v Value> {
    rest.iter().try_fold(root, |v, part| v.get(part))
}
