//! Replacement UIDs for de-identification (spec/convert.md "DICOM
//! de-identification"): `2.25.` followed by the decimal of the first 128
//! bits of BLAKE3 keyed with a secret [`UidKey`] over the original UID.
//! One key maps a UID to the same replacement wherever it occurs, so
//! Study, Series and FrameOfReference references stay linked; without the
//! key nobody holding an original UID can compute its replacement.

use std::io::Read;
use std::path::Path;

use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// Smallest key file: 32 bytes, the size of the BLAKE3 key.
pub const MIN_KEY_FILE_BYTES: u64 = 32;
/// Largest key file read (a key, not a data file).
pub const MAX_KEY_FILE_BYTES: u64 = 4096;

/// BLAKE3 key-derivation context for key files (a file of any 32 to 4096
/// bytes becomes a 32-byte key).
const KEY_CONTEXT: &str = "tgm convert-dicom 2026 de-identification UID key";

/// The secret key of the UID hash.
pub struct UidKey([u8; 32]);

impl UidKey {
    /// A fresh key from the operating system's random source: the
    /// replacements of one run cannot be linked to another run's.
    pub fn random() -> MedicalResult<Self> {
        let mut k = [0u8; 32];
        getrandom::getrandom(&mut k).map_err(|e| {
            MedicalError::new(
                MedicalErrorKind::Library,
                format!("no random key for the UID replacement: {e}"),
            )
        })?;
        Ok(UidKey(k))
    }

    /// The key held by `path` (32 to 4096 bytes of secret, e.g. `head -c
    /// 32 /dev/urandom`), for replacements that are the same across runs.
    pub fn from_file(path: &Path) -> MedicalResult<Self> {
        let f = std::fs::File::open(path).map_err(|e| {
            MedicalError::at(
                MedicalErrorKind::Io,
                path,
                format!("cannot open the key file: {e}"),
            )
            .with_source(e)
        })?;
        let mut bytes = Vec::new();
        f.take(MAX_KEY_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                MedicalError::at(
                    MedicalErrorKind::Io,
                    path,
                    format!("cannot read the key file: {e}"),
                )
                .with_source(e)
            })?;
        let n = bytes.len() as u64;
        if !(MIN_KEY_FILE_BYTES..=MAX_KEY_FILE_BYTES).contains(&n) {
            return Err(MedicalError::invalid_argument(format!(
                "{}: a key file holds {MIN_KEY_FILE_BYTES} to {MAX_KEY_FILE_BYTES} bytes of \
                 secret, this one {}{n} (make one with `head -c 32 /dev/urandom > FILE`)",
                path.display(),
                if n > MAX_KEY_FILE_BYTES {
                    "more than "
                } else {
                    ""
                },
            ))
            .with_path(path));
        }
        Ok(UidKey(blake3::derive_key(KEY_CONTEXT, &bytes)))
    }

    /// The replacement of `uid`: `2.25.` and at most 39 digits (≤ 44
    /// characters, within UI's 64).
    pub fn replace(&self, uid: &str) -> String {
        let h = blake3::keyed_hash(&self.0, uid.as_bytes());
        let mut first = [0u8; 16];
        first.copy_from_slice(&h.as_bytes()[..16]);
        format!("2.25.{}", u128::from_be_bytes(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_gives_one_replacement_and_keys_differ() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("key");
        std::fs::write(&p, [7u8; 32]).unwrap();
        let (a, b) = (
            UidKey::from_file(&p).unwrap(),
            UidKey::from_file(&p).unwrap(),
        );
        let r = a.replace("1.2.840.113619.2.1");
        assert_eq!(r, b.replace("1.2.840.113619.2.1"));
        assert_ne!(r, a.replace("1.2.840.113619.2.2"));
        assert!(r.starts_with("2.25.") && r.len() <= 44, "{r}");
        assert!(r[5..].bytes().all(|c| c.is_ascii_digit()) && !r[5..].starts_with('0'));
        let (x, y) = (UidKey::random().unwrap(), UidKey::random().unwrap());
        assert_ne!(x.replace("1.2.3"), y.replace("1.2.3"));
    }

    #[test]
    fn short_and_long_key_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("key");
        for n in [0usize, 31, 4097] {
            std::fs::write(&p, vec![1u8; n]).unwrap();
            let e = UidKey::from_file(&p).err().unwrap().to_string();
            assert!(e.contains("key") && e.contains(&format!("{n}")), "{e}");
        }
    }
}
