//! Frame digests: xxh3-64, seed 0. See `spec/format.md` §3.3.

/// The algorithm name written in hash frames.
pub(crate) const ALGORITHM: &str = "xxh3";

/// xxh3-64 of `data`.
pub fn xxh3(data: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(data)
}

/// xxh3-64 of the concatenation of `parts`, without concatenating them.
pub(crate) fn xxh3_parts(parts: &[&[u8]]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p);
    }
    h.digest()
}

/// Lowercase 16-digit hex form used in hash frames.
pub fn to_hex(h: u64) -> String {
    format!("{h:016x}")
}

/// Parses the hex form; `None` unless exactly 16 hex digits.
pub(crate) fn from_hex(s: &str) -> Option<u64> {
    if s.len() != 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_equal_whole() {
        let a = b"hello ";
        let b = b"world";
        assert_eq!(super::xxh3_parts(&[a, b]), super::xxh3(b"hello world"));
        assert_eq!(
            super::from_hex(&super::to_hex(0x3aea_c860_3f51_9c1d)),
            Some(0x3aea_c860_3f51_9c1d)
        );
        assert_eq!(super::from_hex("3aeac8603f519c1"), None);
    }
}
