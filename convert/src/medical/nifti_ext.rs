//! NIfTI header extensions (spec/convert.md "NIfTI", extensions): the
//! bytes between the header and `vox_offset` of a single-file image.
//!
//! They start with the 4-byte extension flag; when its first byte is not
//! 0, extensions follow, each an `esize` (i32, the whole extension's size),
//! an `ecode` (i32) and `esize - 8` bytes of content, integers in the
//! header's byte order. Each is kept as `{code, data}` (data as a CBOR byte
//! string, byte for byte) in `base[i].nifti.extensions` and written back
//! in the output's byte order. Zero padding after the last extension is
//! layout; any other byte that no extension holds is refused, since it
//! could not be given back.

use tgm::cbor::Value;
use tgm::Map;

use super::{MedicalError, MedicalResult};

/// One header extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    /// `ecode`: who defined the content (2 DICOM, 4 AFNI, 6 comment, …).
    pub code: i32,
    /// The content, `esize - 8` bytes, as stored.
    pub data: Vec<u8>,
}

fn int(bytes: &[u8], big: bool) -> i32 {
    let b: [u8; 4] = bytes[..4].try_into().expect("4 bytes");
    if big {
        i32::from_be_bytes(b)
    } else {
        i32::from_le_bytes(b)
    }
}

/// The extensions in `region`, the bytes from the end of the header to
/// `vox_offset` (the extension flag first); `header_len` is the region's
/// offset in the file, for errors.
pub fn parse(region: &[u8], big: bool, header_len: u64) -> Result<Vec<Extension>, String> {
    let at = |i: usize| header_len + i as u64;
    let zero_from = |i: usize| region[i..].iter().all(|&b| b == 0);
    if region.len() < 4 {
        return Err(format!(
            "vox_offset {} leaves no room for the 4-byte extension flag",
            at(region.len())
        ));
    }
    let mut list = Vec::new();
    let mut pos = 4;
    if region[0] != 0 {
        while !zero_from(pos) {
            let rest = region.len() - pos;
            let esize = if rest >= 8 {
                int(&region[pos..], big)
            } else {
                0
            };
            let size = usize::try_from(esize)
                .ok()
                .filter(|&s| (8..=rest).contains(&s))
                .ok_or_else(|| {
                    format!(
                        "header extension {} at byte {}: esize {esize} does not fit the {rest} \
                         bytes before vox_offset {}",
                        list.len() + 1,
                        at(pos),
                        at(region.len())
                    )
                })?;
            list.push(Extension {
                code: int(&region[pos + 4..], big),
                data: region[pos + 8..pos + size].to_vec(),
            });
            pos += size;
        }
    }
    if let Some(i) = (pos..region.len()).find(|&i| region[i] != 0) {
        return Err(format!(
            "byte {} (before vox_offset {}) is {:#04x} but belongs to no header extension \
             (extension flag {:02x?}); it would be lost",
            at(i),
            at(region.len()),
            region[i],
            &region[..4]
        ));
    }
    Ok(list)
}

/// The extension flag and extensions as written after a header, integers
/// in `big` or little-endian order; empty extensions give the flag alone.
pub fn write(list: &[Extension], big: bool) -> MedicalResult<Vec<u8>> {
    let mut out = vec![u8::from(!list.is_empty()), 0, 0, 0];
    for e in list {
        let esize = i32::try_from(e.data.len() + 8).map_err(|_| {
            MedicalError::invalid(format!(
                "header extension of {} bytes is too large",
                e.data.len()
            ))
        })?;
        for v in [esize, e.code] {
            out.extend_from_slice(&if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        out.extend_from_slice(&e.data);
    }
    Ok(out)
}

/// The extensions as metadata: an array of `{code, size, data}` maps
/// (`size` is `esize`, for readers; `data` the content bytes).
pub fn to_meta(list: &[Extension]) -> Value {
    Value::Array(
        list.iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("code".into(), i64::from(e.code).into());
                m.insert("size".into(), (e.data.len() as u64 + 8).into());
                m.insert("data".into(), Value::Bytes(e.data.clone()));
                Value::from(m)
            })
            .collect(),
    )
}

/// The extensions recorded in `nifti.extensions` (none when absent).
pub fn from_meta(meta: Option<&Value>) -> MedicalResult<Vec<Extension>> {
    let Some(v) = meta.and_then(|m| m.get("extensions")) else {
        return Ok(Vec::new());
    };
    let bad = || -> MedicalError {
        MedicalError::invalid("metadata nifti.extensions is not an array of {code, data} maps")
    };
    let items = v.as_array().ok_or_else(bad)?;
    items
        .iter()
        .map(|item| {
            let code = item
                .get("code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(bad)?;
            let Some(Value::Bytes(data)) = item.get("data") else {
                return Err(bad());
            };
            Ok(Extension {
                code,
                data: data.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Extension> {
        vec![
            Extension {
                code: 6,
                data: b"a comment\0\0\0\0\0\0\0".to_vec(),
            },
            Extension {
                code: 4,
                data: vec![0xff; 24],
            },
        ]
    }

    #[test]
    fn extensions_round_trip_in_both_byte_orders() {
        for big in [false, true] {
            let bytes = write(&sample(), big).unwrap();
            assert_eq!(bytes.len(), 4 + 24 + 32);
            assert_eq!(parse(&bytes, big, 348).unwrap(), sample());
            // Zero padding up to vox_offset is layout.
            let mut padded = bytes.clone();
            padded.extend_from_slice(&[0; 16]);
            assert_eq!(parse(&padded, big, 348).unwrap(), sample());
            let meta = Value::from(Map::from_iter([("extensions".into(), to_meta(&sample()))]));
            assert_eq!(from_meta(Some(&meta)).unwrap(), sample());
        }
        let le = write(&sample(), false).unwrap();
        assert_eq!(&le[..12], &[1, 0, 0, 0, 24, 0, 0, 0, 6, 0, 0, 0]);
        assert_eq!(write(&[], true).unwrap(), [0; 4]);
        assert_eq!(parse(&[0; 4], false, 348).unwrap(), []);
    }

    #[test]
    fn bytes_no_extension_holds_are_refused() {
        let e = parse(&[0, 0, 0, 0, 0, 7, 0, 0], false, 348).unwrap_err();
        assert!(e.contains("byte 353") && e.contains("would be lost"), "{e}");
        let mut b = write(&sample(), false).unwrap();
        b[4] = 200; // esize past vox_offset
        let e = parse(&b, false, 348).unwrap_err();
        assert!(e.contains("extension 1 at byte 352: esize 200"), "{e}");
        b[4] = 4; // esize smaller than its own two integers
        assert!(parse(&b, false, 348).is_err());
        let e = parse(&[1, 0, 0, 0, 9, 9, 9], false, 348).unwrap_err();
        assert!(e.contains("esize 0"), "{e}");
        assert!(parse(&[0, 0], false, 348).is_err());
    }
}
