//! `GlobalMetadata`: the message-level CBOR map. See `spec/format.md` §7.

use crate::cbor::{self, Value};
use crate::descriptor::{text_keyed_map, Map, ObjectDescriptor};
use crate::error::{Error, Result};
use crate::limits::Limits;

mod access;
mod caller;
mod shared;

pub use access::Scope;
pub use shared::BaseLayout;
use shared::SHARED_KEY;

/// Key of the library-managed provenance section.
pub const RESERVED_KEY: &str = "_reserved_";
/// Key of the free-form message-level section.
pub(crate) const EXTRA_KEY: &str = "_extra_";
/// The alias of [`EXTRA_KEY`] a caller may write (`spec/format.md` §7.1).
pub(crate) const EXTRA_ALIAS: &str = "extra";
/// Key of the per-object metadata array.
pub(crate) const BASE_KEY: &str = "base";

/// Message metadata: one map per object, provenance and free-form extras.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlobalMetadata {
    /// Per-object metadata; entry `i` describes object `i`.
    pub base: Vec<Map>,
    /// Library provenance (`time`, `uuid`, `encoder`). Written by the encoder only.
    pub reserved: Map,
    /// Free-form message-level annotations.
    pub extra: Map,
    /// How `base` is written: whole entries, or the keys they share once
    /// (`spec/format.md` §7.3). Read back as it was written.
    pub layout: BaseLayout,
}

impl GlobalMetadata {
    /// Metadata with the given per-object entries.
    pub fn with_base(base: Vec<Map>) -> Self {
        GlobalMetadata {
            base,
            ..Default::default()
        }
    }

    /// Builds the CBOR map as a message stores it, in [`Self::layout`];
    /// empty sections are omitted.
    pub fn to_value(&self) -> Value {
        self.to_value_in(self.layout)
    }

    /// The CBOR map with `base` in `layout`. The keys the entries share go
    /// to `_extra_._shared_` only when `_extra_` holds no such key.
    fn to_value_in(&self, layout: BaseLayout) -> Value {
        let mut base = self.base.clone();
        let mut extra = self.extra.clone();
        if layout == BaseLayout::SharedOnce && !extra.contains_key(SHARED_KEY) {
            let common = shared::hoist(&mut base);
            if !common.is_empty() {
                extra.insert(SHARED_KEY.into(), Value::text_map(common));
            }
        }
        let mut m = Vec::with_capacity(3);
        if !base.is_empty() {
            let base = base.into_iter().map(Value::text_map).collect();
            m.push((Value::Text(BASE_KEY.into()), Value::Array(base)));
        }
        if !self.reserved.is_empty() {
            m.push((RESERVED_KEY.into(), Value::text_map(self.reserved.clone())));
        }
        if !extra.is_empty() {
            m.push((EXTRA_KEY.into(), Value::text_map(extra)));
        }
        Value::Map(m)
    }

    /// Canonical CBOR bytes.
    pub fn to_cbor(&self) -> Vec<u8> {
        cbor::encode_canonical(&self.to_value())
    }

    /// Parses metadata CBOR that starts at absolute offset `base_offset`.
    pub fn from_cbor(bytes: &[u8], base_offset: u64, limits: &Limits) -> Result<Self> {
        if bytes.len() as u64 > limits.max_cbor_len {
            return Err(
                Error::limit("max_cbor_len", bytes.len() as u64, limits.max_cbor_len)
                    .at(base_offset),
            );
        }
        let (v, _) = cbor::parse_one(bytes, base_offset, limits.cbor())?;
        let meta = Self::from_value_within(&v, limits).map_err(|e| e.at(base_offset))?;
        meta.check_nesting(limits.max_cbor_depth)
            .map_err(|e| e.at(base_offset))?;
        Ok(meta)
    }

    /// Gives `base` exactly one entry per object of a message of `n`
    /// objects, padding with empty entries; more entries than objects is a
    /// metadata error at `frame_offset`, the metadata frame's offset.
    pub(crate) fn fit_base(&mut self, n: usize, frame_offset: u64) -> Result<()> {
        if self.base.len() > n {
            return Err(Error::metadata(format!(
                "metadata base has {} entries but the message has {n} objects",
                self.base.len()
            ))
            .at(frame_offset));
        }
        self.base.resize_with(n, Default::default);
        Ok(())
    }

    /// Checks that the map as written (`to_value`) nests at most `max_depth`
    /// containers deep, so that a reader with that depth limit accepts it.
    /// Only keys moved from the top level into `_extra_` on read can grow
    /// deeper than the bytes they came from. See `spec/format.md` §7.
    pub fn check_nesting(&self, max_depth: usize) -> Result<()> {
        // The top-level map sits at depth 0, `base` at 1, each entry at 2,
        // each entry's values at 3; `_extra_` and `_reserved_` at 1, their
        // values at 2.
        let too_deep = |section: &str, key: &str| {
            Error::metadata(format!(
                "metadata {section}{key:?} nests deeper than the {max_depth} levels a reader accepts"
            ))
        };
        for (i, entry) in self.base.iter().enumerate() {
            for (k, v) in entry {
                if v.nests_deeper_than(max_depth.saturating_sub(3)) {
                    return Err(too_deep(&format!("base[{i}]."), k));
                }
            }
        }
        for (section, map) in [(EXTRA_KEY, &self.extra), (RESERVED_KEY, &self.reserved)] {
            for (k, v) in map {
                if v.nests_deeper_than(max_depth.saturating_sub(2)) {
                    return Err(too_deep(&format!("{section}."), k));
                }
            }
        }
        Ok(())
    }

    /// Interprets a CBOR value: unknown top-level keys move into `_extra_`,
    /// and the keys in `_extra_._shared_` go back into every entry
    /// (§7.3), within the default [`Limits`].
    pub fn from_value(v: &Value) -> Result<Self> {
        Self::from_value_within(v, &Limits::default())
    }

    /// [`Self::from_value`] within `limits`: the entries the shared keys
    /// are copied into may not add up to more than `max_cbor_len` bytes.
    pub fn from_value_within(v: &Value, limits: &Limits) -> Result<Self> {
        let entries = v.as_map().ok_or_else(|| {
            Error::metadata(format!("metadata is a {}, not a map", v.type_name()))
        })?;
        let mut meta = GlobalMetadata::default();
        let mut loose = Vec::new();
        for (k, val) in entries {
            let key = k.as_text().ok_or_else(|| {
                Error::metadata(format!(
                    "metadata top-level key is a {}, not text",
                    k.type_name()
                ))
            })?;
            match key {
                BASE_KEY => {
                    let items = val
                        .as_array()
                        .ok_or_else(|| Error::metadata("metadata base is not an array"))?;
                    meta.base = items
                        .iter()
                        .enumerate()
                        .map(|(i, e)| text_keyed_map(e, &format!("base[{i}]")))
                        .collect::<Result<_>>()?;
                }
                RESERVED_KEY => meta.reserved = text_keyed_map(val, RESERVED_KEY)?,
                EXTRA_KEY => meta.extra = text_keyed_map(val, EXTRA_KEY)?,
                other => loose.push((other.to_string(), val.clone())),
            }
        }
        let shared = meta.extra.remove(SHARED_KEY);
        for (k, v) in loose {
            if k == SHARED_KEY {
                return Err(Error::metadata(
                    "metadata has _shared_ as a top-level key: tgm reads _shared_ only \
                     inside _extra_, as keys stored once, and moving it there as other \
                     top-level keys are moved would change what it means \
                     (spec/format.md §7.3)",
                ));
            }
            if meta.extra.contains_key(&k) {
                return Err(Error::metadata(format!(
                    "ambiguous metadata: key {k:?} appears at top level and in _extra_"
                )));
            }
            meta.extra.insert(k, v);
        }
        if let Some(common) = shared {
            let common = text_keyed_map(&common, "metadata _extra_._shared_")?;
            let copied = (cbor::encode_canonical(&Value::text_map(common.clone())).len() as u64)
                .saturating_mul(meta.base.len() as u64);
            if copied > limits.max_cbor_len {
                return Err(Error::limit("max_cbor_len", copied, limits.max_cbor_len));
            }
            shared::expand(&mut meta.base, &common);
            meta.layout = BaseLayout::SharedOnce;
        }
        Ok(meta)
    }

    /// Rejects what a caller may not hand an encoder for a message of
    /// `num_objects` objects: see [`Self::check_caller_written`], and more
    /// base entries than objects.
    pub fn check_caller_owned(&self, num_objects: usize) -> Result<()> {
        self.check_caller_written()?;
        if self.base.len() > num_objects {
            return Err(Error::metadata(format!(
                "base has {} entries but the message has {num_objects} objects",
                self.base.len()
            )));
        }
        Ok(())
    }

    /// Rejects caller-written provenance and shared keys, as the encoder
    /// must, and metadata nested deeper than a reader with default limits
    /// accepts.
    pub fn check_caller_written(&self) -> Result<()> {
        self.check_nesting(Limits::default().max_cbor_depth)?;
        if self.extra.contains_key(SHARED_KEY) {
            return Err(Error::metadata(
                "callers must not write _extra_._shared_; the encoder writes it for \
                 layout SharedOnce (spec/format.md §7.3)",
            ));
        }
        if !self.reserved.is_empty() {
            return Err(Error::metadata(
                "callers must not write _reserved_ at message level; the encoder fills it",
            ));
        }
        for (i, e) in self.base.iter().enumerate() {
            if e.contains_key(RESERVED_KEY) {
                return Err(Error::metadata(format!(
                    "callers must not write _reserved_ in base[{i}]; the encoder fills it"
                )));
            }
        }
        Ok(())
    }

    /// Pads `base` to `descriptors.len()` entries and writes
    /// `base[i]._reserved_.tensor` from each descriptor.
    pub(crate) fn fill_tensor_info(&mut self, descriptors: &[&ObjectDescriptor]) {
        self.base.resize_with(descriptors.len(), Map::new);
        for (entry, d) in self.base.iter_mut().zip(descriptors) {
            let uarr = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
            let tensor = Value::text_map([
                ("ndim", Value::Uint(d.shape.len() as u64)),
                ("dtype", d.dtype.name().into()),
                ("shape", uarr(&d.shape)),
                ("strides", uarr(&d.strides)),
            ]);
            entry.insert(RESERVED_KEY.into(), Value::text_map([("tensor", tensor)]));
        }
    }

    /// The value at a dotted key: [`Self::get`] in
    /// [`Scope::ObjectThenExtra`] for `Some(i)`, [`Scope::Message`] for
    /// `None`.
    pub fn lookup(&self, object: Option<usize>, dotted: &str) -> Option<&Value> {
        let scope = object.map_or(Scope::Message, Scope::ObjectThenExtra);
        self.get(scope, dotted)
    }
}

/// Serde access to metadata entries and JSON interchange.
/// See `spec/format.md` §4.3 and §7.
impl GlobalMetadata {
    /// Reads the entry at a dotted key (found as by [`Self::lookup`]) into
    /// any `Deserialize` type.
    ///
    /// Fails with [`crate::ErrorKind::Metadata`] when the key is absent or
    /// the entry does not have the shape of `T`.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use tgm::GlobalMetadata;
    ///
    /// #[derive(Debug, PartialEq, Serialize, Deserialize)]
    /// struct Mars {
    ///     class: String,
    ///     param: String,
    ///     step: u32,
    /// }
    ///
    /// let mut meta = GlobalMetadata::default();
    /// let mars = Mars { class: "od".into(), param: "2t".into(), step: 6 };
    /// meta.set_as(Some(0), "mars", &mars)?;
    /// assert_eq!(meta.get_as::<Mars>(Some(0), "mars")?, mars);
    /// assert_eq!(meta.get_as::<u32>(Some(0), "mars.step")?, 6);
    /// // A missing key or a mismatched shape is an error, not a panic.
    /// assert!(meta.get_as::<Mars>(Some(0), "nope").is_err());
    /// assert!(meta.get_as::<u32>(Some(0), "mars.param").is_err());
    /// # Ok::<(), tgm::Error>(())
    /// ```
    pub fn get_as<T: serde::de::DeserializeOwned>(
        &self,
        object: Option<usize>,
        dotted: &str,
    ) -> Result<T> {
        let v = self
            .lookup(object, dotted)
            .ok_or_else(|| Error::metadata(format!("metadata has no key {dotted:?}")))?;
        let mismatch = |e: &dyn std::fmt::Display| {
            Error::metadata(format!(
                "metadata {dotted:?} does not fit {}: {e}",
                std::any::type_name::<T>()
            ))
        };
        let c = ciborium::Value::try_from(v.clone()).map_err(|e| mismatch(&e))?;
        c.deserialized().map_err(|e| mismatch(&e))
    }

    /// Stores any `Serialize` value at a dotted key: in object `i`'s base
    /// entry for `Some(i)` (padding `base` with empty entries up to it), in
    /// `_extra_` for `None` or a key starting `_extra_.`/`extra.`.
    /// Intermediate maps are created as needed; an intermediate that exists
    /// and is not a map is an error, as is any key under `_reserved_`, which
    /// the encoder owns. See [`Self::get_as`] for an example.
    pub fn set_as<T: serde::Serialize + ?Sized>(
        &mut self,
        object: Option<usize>,
        dotted: &str,
        value: &T,
    ) -> Result<()> {
        let c = ciborium::Value::serialized(value)
            .map_err(|e| Error::metadata(format!("metadata {dotted:?} cannot be stored: {e}")))?;
        let value = Value::try_from(c)?;
        let (first, rest) = match dotted.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (dotted, None),
        };
        let (section, first, rest) = match (first, rest) {
            (EXTRA_KEY | EXTRA_ALIAS, Some(rest)) => {
                let (a, b) = rest
                    .split_once('.')
                    .map_or((rest, None), |(a, b)| (a, Some(b)));
                (&mut self.extra, a, b)
            }
            _ => match object {
                Some(i) => {
                    if self.base.len() <= i {
                        self.base.resize_with(i + 1, Map::new);
                    }
                    (&mut self.base[i], first, rest)
                }
                None => (&mut self.extra, first, rest),
            },
        };
        if first == RESERVED_KEY {
            return Err(Error::metadata(
                "callers must not write _reserved_; the encoder fills it",
            ));
        }
        let Some(rest) = rest else {
            section.insert(first.to_string(), value);
            return Ok(());
        };
        let mut cur = section
            .entry(first.to_string())
            .or_insert_with(|| Value::Map(Vec::new()));
        for part in rest.split('.') {
            let Value::Map(entries) = cur else {
                return Err(Error::metadata(format!(
                    "metadata {dotted:?}: the entry above {part:?} is a {}, not a map",
                    cur.type_name()
                )));
            };
            let i = match entries.iter().position(|(k, _)| k.as_text() == Some(part)) {
                Some(i) => i,
                None => {
                    entries.push((Value::Text(part.to_string()), Value::Map(Vec::new())));
                    entries.len() - 1
                }
            };
            cur = &mut entries[i].1;
        }
        *cur = value;
        Ok(())
    }

    /// The metadata as JSON: the map [`Self::to_value`] builds, rendered as
    /// [`Value::to_json_value`] describes. Byte strings, tags, `undefined`,
    /// non-finite floats and non-text keys have no JSON form and come back
    /// from [`Self::from_json_value`] as text, content, null, text and text.
    ///
    /// ```
    /// use tgm::GlobalMetadata;
    ///
    /// let json = serde_json::json!({
    ///     "base": [{"mars": {"param": "2t", "step": 6}}],
    ///     "source": "era5",
    /// });
    /// let meta = GlobalMetadata::from_json_value(&json)?;
    /// assert_eq!(meta.get_as::<String>(Some(0), "mars.param")?, "2t");
    /// // Loose top-level keys move into `_extra_`, as on read.
    /// assert_eq!(meta.to_json_value()["_extra_"]["source"], "era5");
    /// # Ok::<(), tgm::Error>(())
    /// ```
    pub fn to_json_value(&self) -> serde_json::Value {
        self.to_value_in(BaseLayout::PerObject).to_json_value()
    }

    /// Metadata from JSON, read as metadata CBOR is (`spec/format.md` §7):
    /// unknown top-level keys move into `_extra_`, and the result must fit
    /// the default nesting limit. JSON integers become CBOR integers, other
    /// numbers floats. Fails with [`crate::ErrorKind::Metadata`].
    pub fn from_json_value(json: &serde_json::Value) -> Result<Self> {
        let max = Limits::default().max_cbor_depth;
        let v = Value::from_json_value(json, max)?;
        let meta = Self::from_value(&v)?;
        meta.check_nesting(max)?;
        Ok(meta)
    }
}

impl From<&GlobalMetadata> for serde_json::Value {
    fn from(m: &GlobalMetadata) -> Self {
        m.to_json_value()
    }
}

impl TryFrom<&serde_json::Value> for GlobalMetadata {
    type Error = Error;

    fn try_from(json: &serde_json::Value) -> Result<Self> {
        GlobalMetadata::from_json_value(json)
    }
}

/// Provenance written into `_reserved_` by the encoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// UTC time `YYYY-MM-DDThh:mm:ssZ`; omitted when `None`.
    pub time: Option<String>,
    /// RFC 4122 v4 UUID in lowercase hyphenated form; omitted when `None`.
    pub uuid: Option<String>,
    /// Encoder name.
    pub encoder_name: String,
    /// Encoder version.
    pub encoder_version: String,
}

impl Provenance {
    /// Current time and a fresh random UUID.
    pub fn now() -> Self {
        Provenance {
            time: Some(utc_timestamp(std::time::SystemTime::now())),
            uuid: Some(random_uuid_v4()),
            encoder_name: "tgm".into(),
            encoder_version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// Fixed values, for byte-for-byte reproducible output.
    pub fn fixed(time: impl Into<String>, uuid: impl Into<String>) -> Self {
        Provenance {
            time: Some(time.into()),
            uuid: Some(uuid.into()),
            ..Self::now()
        }
    }

    pub(crate) fn to_map(&self) -> Map {
        let mut m = Map::new();
        if let Some(t) = &self.time {
            m.insert("time".into(), Value::Text(t.clone()));
        }
        if let Some(u) = &self.uuid {
            m.insert("uuid".into(), Value::Text(u.clone()));
        }
        m.insert(
            "encoder".into(),
            Value::text_map([
                ("name", Value::Text(self.encoder_name.clone())),
                ("version", Value::Text(self.encoder_version.clone())),
            ]),
        );
        m
    }
}

/// Formats a time as `YYYY-MM-DDThh:mm:ssZ` (UTC, whole seconds).
pub(crate) fn utc_timestamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A random version-4 UUID from the standard library's randomly keyed hasher.
fn random_uuid_v4() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let c = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(c);
        h.write_u64(nanos);
        h.write_u64(salt);
        h.finish()
    };
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&word(1).to_be_bytes());
    b[8..].copy_from_slice(&word(2).to_be_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_format() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        assert_eq!(utc_timestamp(t), "2023-11-14T22:13:20Z");
        assert_eq!(utc_timestamp(std::time::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap = std::time::UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(utc_timestamp(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn uuid_shape() {
        let u = random_uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u, random_uuid_v4());
    }

    fn nested(levels: usize) -> Value {
        (0..levels).fold(Value::Uint(0), |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn nesting_depth_counts_containers() {
        assert!(!Value::Uint(1).nests_deeper_than(0));
        assert!(Value::Array(vec![]).nests_deeper_than(0));
        assert!(!Value::Array(vec![]).nests_deeper_than(1));
        assert!(nested(5).nests_deeper_than(4));
        assert!(!nested(5).nests_deeper_than(5));
        let in_key = Value::Map(vec![(nested(3), Value::Null)]);
        assert!(in_key.nests_deeper_than(3));
        assert!(Value::Tag(1, Box::new(nested(2))).nests_deeper_than(2));
    }

    #[test]
    fn encoder_refuses_metadata_a_reader_would_reject() {
        let max = Limits::default().max_cbor_depth;
        let d = ObjectDescriptor::new(crate::Dtype::Uint8, vec![1u64]);
        let opts = crate::EncodeOptions::default();
        let mut m = GlobalMetadata::default();
        m.extra.insert("x".into(), nested(max - 2));
        let bytes = crate::encode(&m, &[(&d, &[7])], &opts).unwrap();
        assert!(crate::decode(&bytes, &Default::default()).is_ok());
        m.extra.insert("x".into(), nested(max - 1));
        let e = crate::encode(&m, &[(&d, &[7])], &opts).unwrap_err();
        assert!(e.to_string().contains("_extra_.\"x\" nests deeper"), "{e}");

        let mut m = GlobalMetadata::default();
        m.base.push(Map::from([("y".to_string(), nested(max - 3))]));
        let bytes = crate::encode(&m, &[(&d, &[7])], &opts).unwrap();
        assert!(crate::decode(&bytes, &Default::default()).is_ok());
        m.base[0].insert("y".into(), nested(max - 2));
        let e = crate::encode(&m, &[(&d, &[7])], &opts).unwrap_err();
        assert!(e.to_string().contains("base[0].\"y\""), "{e}");
        let mut sink = Vec::new();
        assert!(crate::StreamingEncoder::new(&mut sink, &m, &opts).is_err());
        let mut s =
            crate::StreamingEncoder::new(&mut sink, &GlobalMetadata::default(), &opts).unwrap();
        assert!(s
            .write_preceder(Map::from([("y".to_string(), nested(max - 2))]))
            .is_err());
    }

    #[test]
    fn loose_keys_move_to_extra_and_collisions_fail() {
        let v = Value::text_map([
            ("version", Value::Uint(3)),
            ("_extra_", Value::text_map([("a", Value::Null)])),
        ]);
        let m = GlobalMetadata::from_value(&v).unwrap();
        assert_eq!(m.extra.get("version"), Some(&Value::Uint(3)));
        let v = Value::text_map([
            ("a", Value::Uint(3)),
            ("_extra_", Value::text_map([("a", Value::Null)])),
        ]);
        assert!(GlobalMetadata::from_value(&v).is_err());
        assert!(
            GlobalMetadata::from_value(&Value::Map(vec![(Value::Uint(1), Value::Null)])).is_err()
        );
        // A loose `_shared_` would become the shared layout once written
        // back under `_extra_` (found by the metadata fuzz target).
        let shared = Value::text_map([("a", Value::Uint(1))]);
        let v = Value::text_map([("_shared_", shared.clone())]);
        let e = GlobalMetadata::from_value(&v).unwrap_err();
        assert!(e.to_string().contains("_shared_ as a top-level key"), "{e}");
        let inside = Value::text_map([
            ("base", Value::Array(vec![Value::Map(Vec::new()); 2])),
            ("_extra_", Value::text_map([("_shared_", shared)])),
        ]);
        let m = GlobalMetadata::from_value(&inside).unwrap();
        assert_eq!(m.base[1].get("a"), Some(&Value::Uint(1)));
    }

    #[test]
    fn lookup_dotted() {
        let mut e = Map::new();
        e.insert(
            "mars".into(),
            Value::text_map([("param", Value::from("2t"))]),
        );
        let mut m = GlobalMetadata::with_base(vec![e]);
        m.extra.insert("source".into(), "x".into());
        assert_eq!(m.lookup(Some(0), "mars.param"), Some(&Value::from("2t")));
        assert_eq!(m.lookup(Some(0), "source"), Some(&Value::from("x")));
        assert_eq!(m.lookup(Some(0), "_extra_.source"), Some(&Value::from("x")));
        assert_eq!(m.lookup(Some(0), "mars.nope"), None);
    }
}
