//! `FileLayout`: where the messages and data frames of a source lie, with
//! each object's descriptor, serialisable (JSON or CBOR) so that another
//! process reads an object with one request and no rescan. Untrusted on
//! the way in: [`FileLayout::validate`] bounds every number against the
//! source, and each frame is re-checked when read. See `spec/remote.md` §6.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
use crate::wire::{MIN_MESSAGE_LEN, POSTAMBLE_LEN, PREAMBLE_LEN};

/// The layout format version written and the only one read.
pub const LAYOUT_VERSION: u32 = 1;

/// The located layout of a source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLayout {
    /// [`LAYOUT_VERSION`].
    pub version: u32,
    /// Length of the source in bytes when the layout was made.
    pub source_len: u64,
    /// The source's ETag when it has one (remote objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Every complete message, in file order.
    pub messages: Vec<MessageLayout>,
}

/// One message of a [`FileLayout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageLayout {
    /// Absolute offset of the message.
    pub offset: u64,
    /// Length of the message.
    pub len: u64,
    /// Its data frames, when the message carries an index; `None` when
    /// reading an object needs the whole message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<ObjectLayout>>,
}

/// One data frame of a [`MessageLayout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectLayout {
    /// Offset of the data frame from its message's start.
    pub offset: u64,
    /// The frame's total length.
    pub len: u64,
    /// The descriptor's canonical CBOR, lowercase hex; checked against the
    /// frame when the object is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<String>,
    /// The frame's stored XXH3-64 digest when it carries one; checked
    /// against the frame when the object is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<u64>,
}

fn bad(detail: impl Into<String>) -> Error {
    Error::invalid_argument(format!("layout: {}", detail.into()))
}

impl FileLayout {
    /// Serialises as JSON.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| bad(e.to_string()))
    }

    /// Parses JSON (not yet validated against a source).
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| bad(e.to_string()))
    }

    /// Serialises as CBOR.
    pub fn to_cbor(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        ciborium::into_writer(self, &mut out).map_err(|e| bad(e.to_string()))?;
        Ok(out)
    }

    /// Parses CBOR (not yet validated against a source). Input nesting and
    /// sizes are bounded by `ciborium`'s recursion limit and the input's
    /// own length.
    pub fn from_cbor(bytes: &[u8]) -> Result<Self> {
        ciborium::from_reader(bytes).map_err(|e| bad(e.to_string()))
    }

    /// Checks the layout against a source of `len` bytes with `etag`:
    /// version, source identity, messages in order without overlap inside
    /// the source, frames inside their message's frame area, counts under
    /// `limits`.
    pub fn validate(&self, len: u64, etag: Option<&str>, limits: &Limits) -> Result<()> {
        if self.version != LAYOUT_VERSION {
            return Err(bad(format!(
                "version {} (this reader knows {LAYOUT_VERSION})",
                self.version
            )));
        }
        if self.source_len != len {
            return Err(Error::new(
                ErrorKind::ObjectChanged,
                format!(
                    "layout made for a {}-byte source, the source holds {len}",
                    self.source_len
                ),
            ));
        }
        if let (Some(want), Some(have)) = (self.etag.as_deref(), etag) {
            if want != have {
                return Err(Error::new(
                    ErrorKind::ObjectChanged,
                    format!("layout made for ETag {want}, the source has {have}"),
                ));
            }
        }
        let mut end = 0u64;
        for (i, m) in self.messages.iter().enumerate() {
            let stop = m.offset.checked_add(m.len).filter(|&e| e <= len);
            let Some(stop) = stop else {
                return Err(bad(format!("message {i} lies outside the source")));
            };
            if m.offset < end || m.len < MIN_MESSAGE_LEN as u64 || m.len > limits.max_message_len {
                return Err(bad(format!("message {i} overlaps or has a bad length")));
            }
            end = stop;
            let Some(objs) = &m.objects else { continue };
            if objs.len() > limits.max_frames {
                return Err(bad(format!("message {i} lists too many objects")));
            }
            let frames_end = m.len - POSTAMBLE_LEN as u64;
            for (o, f) in objs.iter().enumerate() {
                let inside = f.offset >= PREAMBLE_LEN as u64
                    && f.offset < frames_end
                    && f.len <= frames_end - f.offset;
                if !inside {
                    return Err(bad(format!(
                        "object {o} of message {i} lies outside its message"
                    )));
                }
                if let Some(d) = &f.descriptor {
                    if d.len() as u64 > 2 * limits.max_message_len {
                        return Err(bad(format!("descriptor {o} of message {i} too long")));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Lowercase hex of `b`.
pub(crate) fn to_hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

/// Bytes of lowercase or uppercase hex.
pub(crate) fn from_hex(s: &str) -> Result<Vec<u8>> {
    let digit = |c: u8| -> Result<u8> {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| bad("descriptor is not hex"))
    };
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return Err(bad("descriptor hex has an odd length"));
    }
    b.chunks_exact(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FileLayout {
        FileLayout {
            version: LAYOUT_VERSION,
            source_len: 1000,
            etag: Some("\"abc\"".into()),
            messages: vec![MessageLayout {
                offset: 0,
                len: 500,
                objects: Some(vec![ObjectLayout {
                    offset: 100,
                    len: 200,
                    descriptor: Some(to_hex(&[0xa0, 0x01])),
                    hash: Some(7),
                }]),
            }],
        }
    }

    #[test]
    fn round_trips_through_json_and_cbor() {
        let l = sample();
        assert_eq!(FileLayout::from_json(&l.to_json().unwrap()).unwrap(), l);
        assert_eq!(FileLayout::from_cbor(&l.to_cbor().unwrap()).unwrap(), l);
        assert_eq!(from_hex(&to_hex(&[0, 255, 16])).unwrap(), vec![0, 255, 16]);
        assert!(from_hex("abc").is_err() && from_hex("zz").is_err());
    }

    #[test]
    fn validation_refuses_lies() {
        let lim = Limits::default();
        let l = sample();
        l.validate(1000, Some("\"abc\""), &lim).unwrap();
        let kind = |r: Result<()>| r.unwrap_err().kind().clone();
        assert_eq!(kind(l.validate(999, None, &lim)), ErrorKind::ObjectChanged);
        assert_eq!(
            kind(l.validate(1000, Some("\"x\""), &lim)),
            ErrorKind::ObjectChanged
        );
        let mut m = l.clone();
        m.version = 2;
        assert!(m.validate(1000, None, &lim).is_err());
        let mut m = l.clone();
        m.messages[0].len = 1001;
        assert!(m.validate(1000, None, &lim).is_err());
        let mut m = l.clone();
        m.messages[0].offset = u64::MAX;
        assert!(m.validate(1000, None, &lim).is_err());
        let mut m = l.clone();
        m.messages[0].objects.as_mut().unwrap()[0].len = 400;
        assert!(m.validate(1000, None, &lim).is_err());
        let mut m = l.clone();
        m.messages.push(m.messages[0].clone());
        assert!(m.validate(1000, None, &lim).is_err(), "overlap");
        assert!(FileLayout::from_json("{\"version\":1}").is_err());
    }
}
