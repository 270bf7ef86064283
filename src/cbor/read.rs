//! Bounded CBOR reader for untrusted bytes. See `spec/format.md` §4.2.

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

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    items: usize,
    limits: CborLimits,
}

enum Head {
    Arg(u64),
    Indefinite,
}

impl Reader<'_> {
    #[cold]
    fn err(&self, at: usize, detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::Cbor, detail).at(self.base + at as u64)
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.err(self.pos, "cbor item truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> Result<&[u8]> {
        let start = self.pos;
        let avail = self.bytes.len() - start;
        if n > avail as u64 {
            return Err(self.err(
                start,
                format!("cbor string of {n} bytes exceeds the {avail} remaining"),
            ));
        }
        self.pos += n as usize;
        Ok(&self.bytes[start..self.pos])
    }

    fn head(&mut self, info: u8) -> Result<Head> {
        let at = self.pos;
        Ok(Head::Arg(match info {
            0..=23 => info as u64,
            24 => self.byte()? as u64,
            25 => u16::from_be_bytes(self.take(2)?.try_into().map_err(|_| self.err(at, "head"))?)
                as u64,
            26 => u32::from_be_bytes(self.take(4)?.try_into().map_err(|_| self.err(at, "head"))?)
                as u64,
            27 => u64::from_be_bytes(self.take(8)?.try_into().map_err(|_| self.err(at, "head"))?),
            31 => return Ok(Head::Indefinite),
            _ => return Err(self.err(at - 1, format!("reserved cbor additional info {info}"))),
        }))
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

    fn item(&mut self, depth: usize) -> Result<Value> {
        let at = self.pos;
        self.count_item(at)?;
        let ib = self.byte()?;
        let major = ib >> 5;
        let info = ib & 0x1f;
        match major {
            0 => match self.head(info)? {
                Head::Arg(a) => Ok(Value::Uint(a)),
                Head::Indefinite => Err(self.err(at, "indefinite-length integer")),
            },
            1 => match self.head(info)? {
                Head::Arg(a) => Ok(Value::Nint(a)),
                Head::Indefinite => Err(self.err(at, "indefinite-length integer")),
            },
            2 | 3 => {
                let raw = self.string(major, info, at)?;
                if major == 2 {
                    Ok(Value::Bytes(raw))
                } else {
                    String::from_utf8(raw)
                        .map(Value::Text)
                        .map_err(|_| self.err(at, "cbor text is not valid utf-8"))
                }
            }
            4 => {
                self.enter(depth, at)?;
                let mut items = Vec::new();
                match self.head(info)? {
                    Head::Arg(n) => {
                        // Every item takes at least one byte: never reserve more than remains.
                        let remaining = (self.bytes.len() - self.pos) as u64;
                        if n > remaining {
                            return Err(self.err(at, format!("cbor array of {n} items exceeds the {remaining} bytes remaining")));
                        }
                        items.reserve(n as usize);
                        for _ in 0..n {
                            items.push(self.item(depth + 1)?);
                        }
                    }
                    Head::Indefinite => loop {
                        if self.peek_break()? {
                            break;
                        }
                        items.push(self.item(depth + 1)?);
                    },
                }
                Ok(Value::Array(items))
            }
            5 => {
                self.enter(depth, at)?;
                let mut entries = Vec::new();
                match self.head(info)? {
                    Head::Arg(n) => {
                        let remaining = (self.bytes.len() - self.pos) as u64;
                        if n > remaining / 2 {
                            return Err(self.err(at, format!("cbor map of {n} entries exceeds the {remaining} bytes remaining")));
                        }
                        entries.reserve(n as usize);
                        for _ in 0..n {
                            let k = self.item(depth + 1)?;
                            let v = self.item(depth + 1)?;
                            entries.push((k, v));
                        }
                    }
                    Head::Indefinite => loop {
                        if self.peek_break()? {
                            break;
                        }
                        let k = self.item(depth + 1)?;
                        let v = self.item(depth + 1)?;
                        entries.push((k, v));
                    },
                }
                self.reject_duplicate_text_keys(&entries, at)?;
                Ok(Value::Map(entries))
            }
            6 => {
                self.enter(depth, at)?;
                match self.head(info)? {
                    Head::Arg(t) => Ok(Value::Tag(t, Box::new(self.item(depth + 1)?))),
                    Head::Indefinite => Err(self.err(at, "indefinite-length tag")),
                }
            }
            _ => self.simple(info, at),
        }
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

    fn peek_break(&mut self) -> Result<bool> {
        match self.bytes.get(self.pos) {
            Some(0xff) => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(self.err(self.pos, "indefinite-length item not terminated")),
        }
    }

    fn string(&mut self, major: u8, info: u8, at: usize) -> Result<Vec<u8>> {
        match self.head(info)? {
            Head::Arg(n) => Ok(self.take(n)?.to_vec()),
            Head::Indefinite => {
                let mut out = Vec::new();
                loop {
                    if self.peek_break()? {
                        return Ok(out);
                    }
                    let cat = self.pos;
                    let ib = self.byte()?;
                    if ib >> 5 != major || ib & 0x1f == 31 {
                        return Err(self.err(cat, "bad chunk in indefinite-length string"));
                    }
                    match self.head(ib & 0x1f)? {
                        Head::Arg(n) => out.extend_from_slice(self.take(n)?),
                        Head::Indefinite => return Err(self.err(at, "nested indefinite string")),
                    }
                }
            }
        }
    }

    fn simple(&mut self, info: u8, at: usize) -> Result<Value> {
        match info {
            20 => Ok(Value::Bool(false)),
            21 => Ok(Value::Bool(true)),
            22 => Ok(Value::Null),
            23 => Ok(Value::Undefined),
            0..=19 => Ok(Value::Simple(info)),
            24 => {
                let s = self.byte()?;
                if s < 32 {
                    return Err(self.err(at, "non-canonical two-byte simple value"));
                }
                Ok(Value::Simple(s))
            }
            25 => {
                let b = self.take(2)?;
                let h = half::f16::from_bits(u16::from_be_bytes([b[0], b[1]]));
                Ok(Value::Float(h.to_f64()))
            }
            26 => {
                let b = self.take(4)?;
                Ok(Value::Float(
                    f32::from_be_bytes([b[0], b[1], b[2], b[3]]) as f64
                ))
            }
            27 => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(Value::Float(f64::from_be_bytes(a)))
            }
            31 => Err(self.err(at, "unexpected cbor break")),
            _ => Err(self.err(at, format!("reserved cbor simple encoding {info}"))),
        }
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
}
