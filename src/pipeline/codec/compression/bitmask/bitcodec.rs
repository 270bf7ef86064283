//! Bit-set codecs: packed bits, run-length (`rle`) and roaring. Used for
//! NaN/Inf masks and, with a 4-byte bit-count prefix, as payload compression
//! of `bitmask` objects. See `spec/pipeline.md` §5.3 and §4.3.

use crate::error::{Error, Result};

/// Tests bit `i` of MSB-first packed bits.
#[inline]
pub fn get_bit(packed: &[u8], i: usize) -> bool {
    packed[i / 8] & (0x80 >> (i % 8)) != 0
}

/// Sets bit `i` of MSB-first packed bits.
#[inline]
pub fn set_bit(packed: &mut [u8], i: usize) {
    packed[i / 8] |= 0x80 >> (i % 8);
}

fn push_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn read_uleb(src: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for k in 0..10 {
        let b = *src
            .get(*pos)
            .ok_or_else(|| Error::codec("rle run truncated").at(*pos as u64))?;
        *pos += 1;
        if k == 9 && b > 1 {
            return Err(Error::codec("rle run overflows 64 bits").at(*pos as u64 - 1));
        }
        v |= ((b & 0x7f) as u64) << (7 * k);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Error::codec("rle run longer than 10 bytes").at(*pos as u64))
}

/// Run-length encodes the first `n` bits of `packed`.
pub fn rle_encode(packed: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let mut cur = get_bit(packed, 0);
    out.push(u8::from(cur));
    let mut run = 0u64;
    for i in 0..n {
        let b = get_bit(packed, i);
        if b == cur {
            run += 1;
        } else {
            push_uleb(&mut out, run);
            cur = b;
            run = 1;
        }
    }
    push_uleb(&mut out, run);
    out
}

/// Decodes an rle stream of exactly `n` bits into `out` (`ceil(n/8)` zeroed bytes).
pub fn rle_decode_into(src: &[u8], n: usize, out: &mut [u8]) -> Result<()> {
    if n == 0 {
        return if src.is_empty() {
            Ok(())
        } else {
            Err(Error::codec("rle stream for zero bits is not empty"))
        };
    }
    let start = *src
        .first()
        .ok_or_else(|| Error::codec("rle stream is empty"))?;
    if start > 1 {
        return Err(Error::codec(format!("rle start bit {start} is not 0 or 1")).at(0));
    }
    let mut bit = start == 1;
    let mut pos = 1usize;
    let mut filled = 0usize;
    while pos < src.len() {
        let at = pos;
        let run = read_uleb(src, &mut pos)?;
        if run == 0 {
            return Err(Error::codec("rle run of length zero").at(at as u64));
        }
        let end = (filled as u64)
            .checked_add(run)
            .filter(|&e| e <= n as u64)
            .ok_or_else(|| {
                Error::codec(format!("rle runs exceed the {n} bits expected")).at(at as u64)
            })? as usize;
        if bit {
            (filled..end).for_each(|i| set_bit(out, i));
        }
        filled = end;
        bit = !bit;
    }
    if filled != n {
        return Err(Error::codec(format!(
            "rle runs cover {filled} bits, expected {n}"
        )));
    }
    Ok(())
}

/// Roaring portable serialisation of the set bits among the first `n`,
/// run-optimised.
pub fn roaring_encode(packed: &[u8], n: usize) -> Result<Vec<u8>> {
    if n as u64 > u32::MAX as u64 + 1 {
        return Err(Error::invalid_input(
            "roaring positions must fit in 32 bits",
        ));
    }
    let set = (0..n).filter(|&i| get_bit(packed, i)).map(|i| i as u32);
    let mut bm = roaring::RoaringBitmap::from_sorted_iter(set)
        .map_err(|e| Error::invalid_input(format!("roaring positions out of order: {e}")))?;
    bm.optimize();
    let mut out = Vec::with_capacity(bm.serialized_size());
    bm.serialize_into(&mut out)
        .map_err(|e| Error::codec(format!("roaring serialisation failed: {e}")))?;
    Ok(out)
}

/// Decodes a roaring blob into `out` (`ceil(n/8)` zeroed bytes); every
/// position must be below `n`.
pub fn roaring_decode_into(src: &[u8], n: usize, out: &mut [u8]) -> Result<()> {
    let bm = roaring::RoaringBitmap::deserialize_from(src)
        .map_err(|e| Error::codec(format!("roaring blob corrupt: {e}")))?;
    if let Some(max) = bm.max() {
        if max as u64 >= n as u64 {
            return Err(Error::codec(format!(
                "roaring position {max} is outside the {n} elements"
            )));
        }
    }
    for p in bm.iter() {
        set_bit(out, p as usize);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rle_examples() {
        let mut m = vec![0u8; 2];
        set_bit(&mut m, 2);
        assert_eq!(rle_encode(&m, 10), vec![0x00, 0x02, 0x01, 0x07]);
        let bits = [0b1010_0000u8, 0b1100_0000];
        assert_eq!(rle_encode(&bits, 16), vec![0x01, 1, 1, 1, 5, 2, 6]);
        let mut back = vec![0u8; 2];
        rle_decode_into(&[0x01, 1, 1, 1, 5, 2, 6], 16, &mut back).unwrap();
        assert_eq!(back, bits);
    }

    #[test]
    fn rle_rejects_bad_streams() {
        let mut out = vec![0u8; 2];
        assert!(rle_decode_into(&[0x02, 16], 16, &mut out).is_err());
        assert!(rle_decode_into(&[0x00, 0], 16, &mut out).is_err());
        assert!(rle_decode_into(&[0x00, 17], 16, &mut out).is_err());
        assert!(rle_decode_into(&[0x00, 15], 16, &mut out).is_err());
        assert!(rle_decode_into(
            &[0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            16,
            &mut out
        )
        .is_err());
    }

    #[test]
    fn roaring_single_bit_bytes() {
        let mut m = vec![0u8; 1];
        set_bit(&mut m, 5);
        let b = roaring_encode(&m, 8).unwrap();
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(hex, "3a3000000100000000000000100000000500");
        let mut back = vec![0u8; 1];
        roaring_decode_into(&b, 8, &mut back).unwrap();
        assert_eq!(back, m);
        let mut small = vec![0u8; 1];
        assert!(roaring_decode_into(&b, 5, &mut small).is_err());
        assert!(roaring_decode_into(&b[..5], 8, &mut small).is_err());
    }
}
