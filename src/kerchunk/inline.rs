//! Data inlined in the references: coordinate arrays as `base64:` chunks
//! (`spec/kerchunk.md` §2).

use crate::view::Coord;

/// The zarr dtype and little-endian bytes of a coordinate array: int64
/// when every value is an integer, a time (seconds) or a duration (hours),
/// float64 when every value is a number,
/// else fixed-width unicode (UTF-32LE).
pub fn coordinate_bytes(values: &[Coord]) -> (String, Vec<u8>) {
    if values
        .iter()
        .all(|v| matches!(v, Coord::Int(_) | Coord::Time(_) | Coord::Span(_)))
    {
        let b = values
            .iter()
            .flat_map(|v| match v {
                Coord::Int(i) | Coord::Time(i) | Coord::Span(i) => i.to_le_bytes(),
                _ => [0; 8],
            })
            .collect();
        return ("<i8".into(), b);
    }
    if values
        .iter()
        .all(|v| matches!(v, Coord::Int(_) | Coord::Float(_)))
    {
        let b = values
            .iter()
            .flat_map(|v| match v {
                Coord::Int(i) => (*i as f64).to_le_bytes(),
                Coord::Float(f) => f.to_le_bytes(),
                _ => [0; 8],
            })
            .collect();
        return ("<f8".into(), b);
    }
    let texts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Coord::Text(t) => t.clone(),
            Coord::Int(i) | Coord::Time(i) | Coord::Span(i) => i.to_string(),
            Coord::Float(f) => f.to_string(),
        })
        .collect();
    let width = texts
        .iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut b = Vec::with_capacity(width * 4 * texts.len());
    for t in &texts {
        let n = t.chars().count();
        b.extend(t.chars().flat_map(|c| u32::from(c).to_le_bytes()));
        b.extend(std::iter::repeat_n(0u8, (width - n) * 4));
    }
    (format!("<U{width}"), b)
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn text_coordinates_are_fixed_width_utf32() {
        let (t, b) = coordinate_bytes(&[Coord::Text("ab".into()), Coord::Text("c".into())]);
        assert_eq!(t, "<U2");
        assert_eq!(b, [97, 0, 0, 0, 98, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0]);
    }
}
