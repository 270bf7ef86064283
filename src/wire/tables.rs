//! Index and hash frame contents. See `spec/format.md` §3.5–§3.6.

use crate::cbor::{self, Value};
use crate::error::{Error, Result};
use crate::limits::Limits;

/// Object offsets (message-relative) and frame lengths, from an index frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexTable {
    /// Offset of each data frame from the message start.
    pub offsets: Vec<u64>,
    /// `total_length` of each data frame.
    pub lengths: Vec<u64>,
}

impl IndexTable {
    /// Canonical CBOR: `{"lengths": [...], "offsets": [...]}`.
    pub fn to_cbor(&self) -> Vec<u8> {
        let arr = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
        cbor::encode_canonical(&Value::text_map([
            ("offsets", arr(&self.offsets)),
            ("lengths", arr(&self.lengths)),
        ]))
    }

    /// Parses index CBOR found at absolute offset `base`.
    pub fn from_cbor(bytes: &[u8], base: u64, limits: &Limits) -> Result<Self> {
        let (v, _) = cbor::parse_one(bytes, base, limits.cbor())?;
        let map = v
            .as_map()
            .ok_or_else(|| Error::metadata("index frame is not a map").at(base))?;
        let mut t = IndexTable::default();
        for (k, val) in map {
            let key = k
                .as_text()
                .ok_or_else(|| Error::metadata("index frame key is not text").at(base))?;
            let target = match key {
                "offsets" => &mut t.offsets,
                "lengths" => &mut t.lengths,
                _ => continue,
            };
            let items = val
                .as_array()
                .ok_or_else(|| Error::metadata(format!("index {key} is not an array")).at(base))?;
            *target = items
                .iter()
                .map(|x| {
                    x.as_u64().ok_or_else(|| {
                        Error::metadata(format!("index {key} entry is not a uint")).at(base)
                    })
                })
                .collect::<Result<_>>()?;
        }
        if t.offsets.len() != t.lengths.len() {
            return Err(Error::metadata(format!(
                "index has {} offsets but {} lengths",
                t.offsets.len(),
                t.lengths.len()
            ))
            .at(base));
        }
        Ok(t)
    }
}

/// Per-object digests from a hash frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HashTable {
    /// Algorithm name; tgm understands `xxh3`.
    pub algorithm: String,
    /// One digest per data object, in object order.
    pub hashes: Vec<u64>,
}

impl HashTable {
    /// Canonical CBOR: `{"hashes": [hex...], "algorithm": "xxh3"}`.
    pub fn to_cbor(&self) -> Vec<u8> {
        cbor::encode_canonical(&Value::text_map([
            (
                "hashes",
                Value::Array(
                    self.hashes
                        .iter()
                        .map(|&h| Value::Text(crate::hash::to_hex(h)))
                        .collect(),
                ),
            ),
            ("algorithm", Value::Text(self.algorithm.clone())),
        ]))
    }

    /// Parses hash-frame CBOR found at absolute offset `base`. Digests that are
    /// not 16 hex digits are an error for `xxh3`; other algorithms keep no digests.
    pub fn from_cbor(bytes: &[u8], base: u64, limits: &Limits) -> Result<Self> {
        let (v, _) = cbor::parse_one(bytes, base, limits.cbor())?;
        let algorithm = v
            .get("algorithm")
            .and_then(Value::as_text)
            .ok_or_else(|| Error::metadata("hash frame lacks a text algorithm").at(base))?
            .to_string();
        let items = v
            .get("hashes")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::metadata("hash frame lacks a hashes array").at(base))?;
        let mut hashes = Vec::with_capacity(items.len());
        for it in items {
            let s = it
                .as_text()
                .ok_or_else(|| Error::metadata("hash frame entry is not text").at(base))?;
            if algorithm == crate::hash::ALGORITHM {
                hashes.push(crate::hash::from_hex(s).ok_or_else(|| {
                    Error::metadata(format!("hash frame entry {s:?} is not 16 hex digits")).at(base)
                })?);
            }
        }
        Ok(HashTable { algorithm, hashes })
    }
}
