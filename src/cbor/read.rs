//! Bounded CBOR reader for untrusted bytes. See `spec/format.md` §4.2.
//!
//! Heads come from `ciborium-ll`'s decoder, except the definite-length
//! heads of integers, strings, arrays and maps, which are decoded inline
//! because they are most of every descriptor. This layer reads the bodies itself so that
//! it can bound every length by the bytes remaining, count items, cap
//! nesting, reject what §4.2 rejects and give each error the absolute byte
//! offset of the item at fault.

use ciborium_ll::{Decoder, Header};

use super::Value;
use crate::error::{Error, ErrorKind, Result};

/// Structural limits applied while reading one CBOR item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CborLimits {
    /// Maximum nesting depth of arrays, maps and tags.
    pub max_depth: usize,
    /// Maximum number of items (every array element, key, value, tag content).
    pub max_items: usize,
}

impl Default for CborLimits {
    fn default() -> Self {
        CborLimits {
            max_depth: 64,
            max_items: 1 << 20,
        }
    }
}

/// Parses one CBOR item at the start of `bytes`; returns it and the number
/// of bytes consumed. `base` is the absolute offset of `bytes[0]`, used in
/// error offsets.
pub fn parse_one(bytes: &[u8], base: u64, limits: CborLimits) -> Result<(Value, usize)> {
    let mut r = Reader {
        bytes,
        pos: 0,
        base,
        items: 0,
        limits,
    };
    let v = r.item(0)?;
    Ok((v, r.pos))
}

/// The break byte ending indefinite-length items.
const BREAK: u8 = 0xff;

struct Reader<'a> {
    bytes: &'a [u8],
    /// Offset in `bytes` of the next unread byte.
    pos: usize,
    base: u64,
    items: usize,
    limits: CborLimits,
}

impl Reader<'_> {
    #[cold]
    fn err(&self, at: usize, detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Cbor, detail).at(self.base + at as u64)
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The initial byte of the next item, without consuming it.
    fn peek(&mut self) -> Result<u8> {
        let at = self.pos;
        match self.bytes.get(at) {
            Some(&b) => Ok(b),
            None => Err(self.err(at, "cbor item truncated")),
        }
    }

    /// Reads the head of the item starting at the current position.
    #[inline]
    fn pull(&mut self) -> Result<Header> {
        let at = self.pos;
        // Heads of integers, strings, arrays and maps (the bulk of
        // descriptor and metadata items, such as the thousands of
        // `szip_block_offsets`) are decoded here; every other head, and a
        // truncated one, goes through `ciborium-ll`'s decoder.
        if let Some((head, len)) = self.definite_head(at) {
            self.pos = at + len;
            return Ok(head);
        }
        self.pull_decoded(at)
    }

    /// The head at `at` and its length in bytes when it is an integer,
    /// string, array or map head with its argument in the initial byte or
    /// in the 1, 2, 4 or 8 bytes after it, all present; `None` otherwise.
    /// Gives what `ciborium-ll`'s decoder gives for the same bytes.
    #[inline]
    fn definite_head(&self, at: usize) -> Option<(Header, usize)> {
        let &ib = self.bytes.get(at)?;
        let major = ib >> 5;
        if major > 5 {
            return None;
        }
        let (arg, len) = match ib & 0x1f {
            a @ 0..=23 => (u64::from(a), 1),
            24 => (u64::from(*self.bytes.get(at + 1)?), 2),
            25 => (u64::from(u16::from_be_bytes(self.arg_bytes(at)?)), 3),
            26 => (u64::from(u32::from_be_bytes(self.arg_bytes(at)?)), 5),
            27 => (u64::from_be_bytes(self.arg_bytes(at)?), 9),
            _ => return None,
        };
        let head = match major {
            0 => Header::Positive(arg),
            1 => Header::Negative(arg),
            m => {
                let n = Some(usize::try_from(arg).ok()?);
                match m {
                    2 => Header::Bytes(n),
                    3 => Header::Text(n),
                    4 => Header::Array(n),
                    _ => Header::Map(n),
                }
            }
        };
        Some((head, len))
    }

    /// The `N` argument bytes after the initial byte at `at`, when present.
    #[inline]
    fn arg_bytes<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        self.bytes.get(at + 1..at + 1 + N)?.try_into().ok()
    }

    /// Reads the head at `at` with the decoder.
    fn pull_decoded(&mut self, at: usize) -> Result<Header> {
        let mut dec = Decoder::from(&self.bytes[at..]);
        match dec.pull() {
            Ok(h) => {
                self.pos = at + dec.offset();
                Ok(h)
            }
            // The decoder stops at the first byte it could not read.
            Err(ciborium_ll::Error::Io(_)) => {
                Err(self.err(at + dec.offset(), "cbor item truncated"))
            }
            Err(ciborium_ll::Error::Syntax(_)) => {
                let ib = self.bytes.get(at).copied().unwrap_or(0);
                let detail = match ib & 0x1f {
                    info @ 28..=30 => format!("reserved cbor additional info {info}"),
                    _ if ib >> 5 == 6 => "indefinite-length tag".to_string(),
                    _ => "indefinite-length integer".to_string(),
                };
                Err(self.err(at, detail))
            }
        }
    }

    /// The next `n` body bytes, after checking that they exist.
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let start = self.pos;
        let avail = self.remaining();
        if n > avail {
            return Err(self.err(
                start,
                format!("cbor string of {n} bytes exceeds the {avail} remaining"),
            ));
        }
        self.pos += n;
        Ok(&self.bytes[start..self.pos])
    }

    fn count_item(&mut self, at: usize) -> Result<()> {
        self.items += 1;
        if self.items > self.limits.max_items {
            return Err(Error::limit(
                "max_cbor_items",
                self.items as u64,
                self.limits.max_items as u64,
            )
            .at(self.base + at as u64));
        }
        Ok(())
    }

    fn enter(&self, depth: usize, at: usize) -> Result<()> {
        if depth >= self.limits.max_depth {
            return Err(Error::limit(
                "max_cbor_depth",
                depth as u64 + 1,
                self.limits.max_depth as u64,
            )
            .at(self.base + at as u64));
        }
        Ok(())
    }

    /// Inside an indefinite-length item: consumes a break and returns true,
    /// or returns false before anything else.
    fn at_break(&mut self) -> Result<bool> {
        let at = self.pos;
        match self.bytes.get(at) {
            Some(&BREAK) => {
                self.pull()?;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(self.err(at, "indefinite-length item not terminated")),
        }
    }

    fn item(&mut self, depth: usize) -> Result<Value> {
        let at = self.pos;
        self.count_item(at)?;
        let ib = self.peek()?;
        if matches!(ib >> 5, 4..=6) {
            self.enter(depth, at)?;
        }
        match self.pull()? {
            Header::Positive(u) => Ok(Value::Uint(u)),
            Header::Negative(n) => Ok(Value::Nint(n)),
            Header::Bytes(len) => Ok(Value::Bytes(self.string(2, len)?)),
            Header::Text(len) => {
                let raw = self.string(3, len)?;
                String::from_utf8(raw)
                    .map(Value::Text)
                    .map_err(|_| self.err(at, "cbor text is not valid utf-8"))
            }
            Header::Array(len) => self.array(len, depth, at),
            Header::Map(len) => self.map(len, depth, at),
            Header::Tag(t) => Ok(Value::Tag(t, Box::new(self.item(depth + 1)?))),
            Header::Float(f) => Ok(Value::Float(f)),
            Header::Simple(s) => self.simple(s, ib, at),
            Header::Break => Err(self.err(at, "unexpected cbor break")),
        }
    }

    fn array(&mut self, len: Option<usize>, depth: usize, at: usize) -> Result<Value> {
        let mut items = Vec::new();
        match len {
            Some(n) => {
                // Every item takes at least one byte: never reserve more than remains.
                let remaining = self.remaining();
                if n > remaining {
                    return Err(self.err(
                        at,
                        format!("cbor array of {n} items exceeds the {remaining} bytes remaining"),
                    ));
                }
                items.reserve(n);
                for _ in 0..n {
                    items.push(self.item(depth + 1)?);
                }
            }
            None => {
                while !self.at_break()? {
                    items.push(self.item(depth + 1)?);
                }
            }
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, len: Option<usize>, depth: usize, at: usize) -> Result<Value> {
        let mut entries = Vec::new();
        match len {
            Some(n) => {
                let remaining = self.remaining();
                if n > remaining / 2 {
                    return Err(self.err(
                        at,
                        format!("cbor map of {n} entries exceeds the {remaining} bytes remaining"),
                    ));
                }
                entries.reserve(n);
                for _ in 0..n {
                    let k = self.item(depth + 1)?;
                    let v = self.item(depth + 1)?;
                    entries.push((k, v));
                }
            }
            None => {
                while !self.at_break()? {
                    let k = self.item(depth + 1)?;
                    let v = self.item(depth + 1)?;
                    entries.push((k, v));
                }
            }
        }
        self.reject_duplicate_text_keys(&entries, at)?;
        Ok(Value::Map(entries))
    }

    /// The body of a byte (`major` 2) or text (3) string whose head gave
    /// `len`; an indefinite one is the concatenation of definite chunks of
    /// the same major type.
    fn string(&mut self, major: u8, len: Option<usize>) -> Result<Vec<u8>> {
        if let Some(n) = len {
            return Ok(self.take(n)?.to_vec());
        }
        let mut out = Vec::new();
        while !self.at_break()? {
            let cat = self.pos;
            let ib = self.peek()?;
            if ib >> 5 != major || ib & 0x1f == 31 {
                return Err(self.err(cat, "bad chunk in indefinite-length string"));
            }
            match self.pull()? {
                Header::Bytes(Some(n)) | Header::Text(Some(n)) => {
                    out.extend_from_slice(self.take(n)?)
                }
                _ => return Err(self.err(cat, "bad chunk in indefinite-length string")),
            }
        }
        Ok(out)
    }

    /// A simple value `s` whose item began with initial byte `ib`.
    fn simple(&self, s: u8, ib: u8, at: usize) -> Result<Value> {
        // The two-byte form (0xf8) is only for values 32 and up.
        if ib == 0xf8 && s < 32 {
            return Err(self.err(at, "non-canonical two-byte simple value"));
        }
        Ok(match s {
            20 => Value::Bool(false),
            21 => Value::Bool(true),
            22 => Value::Null,
            23 => Value::Undefined,
            other => Value::Simple(other),
        })
    }

    fn reject_duplicate_text_keys(&self, entries: &[(Value, Value)], at: usize) -> Result<()> {
        if entries.len() < 2 {
            return Ok(());
        }
        let mut keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_text()).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(self.err(at, format!("duplicate map key {:?}", w[0])));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbor::encode_canonical;

    fn parse(b: &[u8]) -> Result<Value> {
        parse_one(b, 100, CborLimits::default()).map(|(v, _)| v)
    }

    #[test]
    fn roundtrips_canonical_values() {
        let v = Value::text_map([
            (
                "a",
                Value::Array(vec![
                    Value::Uint(1),
                    Value::from_i64(-300),
                    Value::Float(0.5),
                ]),
            ),
            ("c", Value::Tag(1, Box::new(Value::Null))),
            ("bb", Value::Bytes(vec![1, 2, 3])),
        ]);
        let b = encode_canonical(&v);
        assert_eq!(parse(&b).unwrap(), v);
    }

    #[test]
    fn rejects_nesting_bomb_with_offset() {
        let bomb = vec![0x81u8; 10_000];
        let e = parse(&bomb).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::LimitExceeded {
                limit: "max_cbor_depth",
                ..
            }
        ));
        assert_eq!(e.offset(), Some(164));
    }

    #[test]
    fn rejects_huge_declared_lengths_without_allocating() {
        let e = parse(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Cbor);
        let e = parse(&[0x7b, 0, 0, 0, 1, 0, 0, 0, 0, b'a']).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Cbor);
        assert_eq!(e.offset(), Some(109));
    }

    #[test]
    fn rejects_invalid_utf8_and_duplicate_keys() {
        assert!(parse(&[0x62, 0xff, 0xfe]).is_err());
        let dup = [0xa2, 0x61, b'k', 0x01, 0x61, b'k', 0x02];
        let e = parse(&dup).unwrap_err();
        assert!(e.detail().contains("duplicate"));
    }

    #[test]
    fn accepts_indefinite_lengths() {
        let b = [0x9f, 0x01, 0x7f, 0x61, b'a', 0x61, b'b', 0xff, 0xff];
        assert_eq!(
            parse(&b).unwrap(),
            Value::Array(vec![Value::Uint(1), Value::Text("ab".into())])
        );
        assert!(parse(&[0x9f, 0x01]).is_err());
    }

    #[test]
    fn truncated_inputs_error() {
        let v = encode_canonical(&Value::text_map([("key", Value::Float(0.1))]));
        for n in 0..v.len() {
            assert!(parse(&v[..n]).is_err(), "prefix {n}");
        }
    }

    /// Every initial byte, with argument bytes of every width present or
    /// cut short: the inline heads are the decoder's, and where the
    /// decoder is needed (other majors, reserved or indefinite arguments,
    /// missing bytes) none is claimed.
    #[test]
    fn inline_heads_are_the_decoders() {
        let tails: [&[u8]; 4] = [
            &[],
            &[0x12],
            &[0x80, 0x00, 0x00, 0x00],
            &[0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7],
        ];
        for ib in 0..=u8::MAX {
            for tail in tails {
                let bytes = [&[ib][..], tail].concat();
                let r = Reader {
                    bytes: &bytes,
                    pos: 0,
                    base: 0,
                    items: 0,
                    limits: CborLimits::default(),
                };
                let mut dec = Decoder::from(&bytes[..]);
                let want = dec.pull().ok().map(|h| (h, dec.offset()));
                match r.definite_head(0) {
                    Some(got) => assert_eq!(Some(got), want, "{bytes:02x?}"),
                    None => assert!(
                        ib >> 5 > 5 || ib & 0x1f > 27 || want.is_none(),
                        "{bytes:02x?} left to the decoder"
                    ),
                }
            }
        }
    }
}
