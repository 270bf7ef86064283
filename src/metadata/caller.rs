//! What a caller may hand an encoder, and what a rewriting command keeps:
//! the caller's map read into sections (`_extra_` and its alias `extra`,
//! loose keys, conflicts, `_reserved_` refused), and metadata stripped of
//! the encoder's entries. See `spec/format.md` §7.2.

use super::{GlobalMetadata, BASE_KEY, EXTRA_ALIAS, EXTRA_KEY, RESERVED_KEY};
use crate::cbor::Value;
use crate::descriptor::{text_keyed_map, Map};
use crate::error::{Error, Result};

impl GlobalMetadata {
    /// Metadata from the map a caller gives an encoder (`spec/format.md`
    /// §7.2): `base` is the per-object list; `_extra_`, or its alias
    /// `extra`, the free-form section; every other key joins `_extra_`.
    ///
    /// Fails with [`crate::ErrorKind::Metadata`] when the map is not a
    /// text-keyed map, `base` is not a list of such maps, both `_extra_`
    /// and `extra` are given, a key is given both at top level and in the
    /// section, `_reserved_` is given (at top level or in a `base` entry;
    /// the encoder writes it), or the result nests deeper than a reader
    /// accepts.
    ///
    /// ```
    /// use tgm::GlobalMetadata;
    /// use tgm::cbor::Value;
    ///
    /// let map = |j| Value::from_json_value(&j, 16).unwrap();
    /// let meta = GlobalMetadata::from_caller(&map(serde_json::json!({
    ///     "base": [{"param": "2t"}],
    ///     "extra": {"source": "ifs"},
    ///     "centre": "ecmf",
    /// })))?;
    /// assert_eq!(meta.extra.len(), 2);
    /// let clash = serde_json::json!({"source": "a", "_extra_": {"source": "b"}});
    /// assert!(GlobalMetadata::from_caller(&map(clash)).is_err());
    /// # Ok::<(), tgm::Error>(())
    /// ```
    pub fn from_caller(map: &Value) -> Result<Self> {
        let mut top = text_keyed_map(map, "metadata")?;
        if top.contains_key(RESERVED_KEY) {
            return Err(Error::metadata(
                "metadata gives _reserved_, which the encoder writes; leave it out",
            ));
        }
        let mut meta = GlobalMetadata::default();
        if let Some(base) = top.remove(BASE_KEY) {
            let items = base.as_array().ok_or_else(|| {
                Error::metadata(format!(
                    "metadata base is a {}, not a list",
                    base.type_name()
                ))
            })?;
            meta.base = items
                .iter()
                .enumerate()
                .map(|(i, e)| text_keyed_map(e, &format!("metadata base[{i}]")))
                .collect::<Result<_>>()?;
        }
        meta.extra = match (top.remove(EXTRA_KEY), top.remove(EXTRA_ALIAS)) {
            (Some(_), Some(_)) => {
                return Err(Error::metadata(
                    "metadata gives both _extra_ and its alias extra; give one",
                ))
            }
            (Some(v), None) => text_keyed_map(&v, "metadata _extra_")?,
            (None, Some(v)) if v.as_map().is_none() => {
                // The reference's words, which its users' code matches.
                return Err(Error::metadata(format!(
                    "metadata 'extra' must be a dict (a map: the alias of _extra_), not a {}",
                    v.type_name()
                )));
            }
            (None, Some(v)) => text_keyed_map(&v, "metadata extra (the alias of _extra_)")?,
            (None, None) => Map::new(),
        };
        for (k, v) in top {
            if meta.extra.contains_key(&k) {
                return Err(Error::metadata(format!(
                    "metadata key {k:?} is given both at top level and in _extra_; give it once"
                )));
            }
            meta.extra.insert(k, v);
        }
        meta.check_caller_written()?;
        Ok(meta)
    }

    /// The metadata without the entries the encoder writes (`_reserved_`
    /// at message level and in each `base` entry), as a command that
    /// rewrites a message hands it back to an encoder.
    pub fn caller_owned(&self) -> GlobalMetadata {
        GlobalMetadata {
            base: (0..self.base.len()).map(|i| self.caller_entry(i)).collect(),
            reserved: Map::new(),
            extra: self.extra.clone(),
            layout: self.layout,
        }
    }

    /// Object `i`'s entry without `_reserved_` (empty past the end): its
    /// part of [`Self::caller_owned`].
    pub fn caller_entry(&self, i: usize) -> Map {
        let mut e = self.base.get(i).cloned().unwrap_or_default();
        e.remove(RESERVED_KEY);
        e
    }
}
