//! MSB-first bit packing of unsigned integers at any width 0..=64, a word at
//! a time. See `spec/pipeline.md` §2.3.

/// Bytes needed for `n` values of `bits` bits.
pub fn packed_len(n: usize, bits: u32) -> Option<usize> {
    n.checked_mul(bits as usize).map(|b| b.div_ceil(8))
}

/// Packs `values` (each already < 2^bits) MSB-first into `out`, which must be
/// exactly `packed_len(values.len(), bits)` bytes. Trailing bits are zero.
pub fn pack_into(values: impl Iterator<Item = u64>, bits: u32, out: &mut [u8]) {
    match bits {
        0 => {}
        8 => out.iter_mut().zip(values).for_each(|(o, v)| *o = v as u8),
        16 => out
            .chunks_exact_mut(2)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&(v as u16).to_be_bytes())),
        24 => out
            .chunks_exact_mut(3)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&(v as u32).to_be_bytes()[1..])),
        32 => out
            .chunks_exact_mut(4)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&(v as u32).to_be_bytes())),
        64 => out
            .chunks_exact_mut(8)
            .zip(values)
            .for_each(|(o, v)| o.copy_from_slice(&v.to_be_bytes())),
        _ => pack_generic(values, bits, out),
    }
}

fn pack_generic(values: impl Iterator<Item = u64>, bits: u32, out: &mut [u8]) {
    // 128-bit accumulator: up to 63 pending bits plus one value of up to 64.
    let mut acc: u128 = 0;
    let mut pending: u32 = 0;
    let mut pos = 0usize;
    for v in values {
        acc = (acc << bits) | v as u128;
        pending += bits;
        if pending >= 64 {
            pending -= 64;
            let word = (acc >> pending) as u64;
            out[pos..pos + 8].copy_from_slice(&word.to_be_bytes());
            pos += 8;
            acc &= (1u128 << pending) - 1;
        }
    }
    if pending > 0 {
        let word = ((acc << (64 - pending)) as u64).to_be_bytes();
        let n = (pending as usize).div_ceil(8);
        out[pos..pos + n].copy_from_slice(&word[..n]);
    }
}

/// Unpacks `count` values of `bits` bits starting at bit `bit_offset` of
/// `src`, calling `sink(i, value)` for each. `src` must hold them all.
pub fn unpack(
    src: &[u8],
    bit_offset: usize,
    count: usize,
    bits: u32,
    mut sink: impl FnMut(usize, u64),
) {
    if bits == 0 {
        (0..count).for_each(|i| sink(i, 0));
        return;
    }
    if bit_offset == 0 {
        match bits {
            8 => {
                return src[..count]
                    .iter()
                    .enumerate()
                    .for_each(|(i, &b)| sink(i, b as u64))
            }
            16 => {
                return src[..count * 2]
                    .chunks_exact(2)
                    .enumerate()
                    .for_each(|(i, c)| sink(i, u16::from_be_bytes([c[0], c[1]]) as u64))
            }
            24 => {
                return src[..count * 3]
                    .chunks_exact(3)
                    .enumerate()
                    .for_each(|(i, c)| sink(i, u32::from_be_bytes([0, c[0], c[1], c[2]]) as u64))
            }
            32 => {
                return src[..count * 4]
                    .chunks_exact(4)
                    .enumerate()
                    .for_each(|(i, c)| {
                        sink(i, u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64)
                    })
            }
            _ => {}
        }
    }
    let mask: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let total_bits = bit_offset + count * bits as usize;
    let end_byte = total_bits.div_ceil(8);
    // Fast region: a 16-byte window can be loaded without bounds trouble.
    if bits <= 56 {
        // An 8-byte window always covers one value plus its bit shift.
        for i in 0..count {
            let p = bit_offset + i * bits as usize;
            let byte = p / 8;
            let shift = (p % 8) as u32;
            let word = if byte + 8 <= src.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&src[byte..byte + 8]);
                u64::from_be_bytes(w)
            } else {
                let mut w = [0u8; 8];
                let avail = end_byte.min(src.len()) - byte;
                w[..avail].copy_from_slice(&src[byte..byte + avail]);
                u64::from_be_bytes(w)
            };
            sink(i, (word << shift) >> (64 - bits));
        }
        return;
    }
    for i in 0..count {
        let p = bit_offset + i * bits as usize;
        let byte = p / 8;
        let shift = (p % 8) as u32;
        let v = if byte + 16 <= src.len() {
            let mut w = [0u8; 16];
            w.copy_from_slice(&src[byte..byte + 16]);
            let word = u128::from_be_bytes(w);
            ((word << shift) >> (128 - bits)) as u64
        } else {
            let mut w = [0u8; 16];
            let avail = end_byte.min(src.len()) - byte;
            w[..avail].copy_from_slice(&src[byte..byte + avail]);
            let word = u128::from_be_bytes(w);
            ((word << shift) >> (128 - bits)) as u64
        };
        sink(i, v & mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_every_width() {
        for bits in 0..=64u32 {
            for n in [0usize, 1, 2, 7, 8, 9, 63, 100] {
                let max = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits).wrapping_sub(1)
                };
                let vals: Vec<u64> = (0..n as u64)
                    .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & max)
                    .collect();
                let mut out = vec![0u8; packed_len(n, bits).unwrap()];
                pack_into(vals.iter().copied(), bits, &mut out);
                let mut back = vec![0u64; n];
                unpack(&out, 0, n, bits, |i, v| back[i] = v);
                assert_eq!(back, vals, "bits {bits} n {n}");
                // Reference bit-by-bit packing.
                let mut naive = vec![0u8; out.len()];
                for (i, v) in vals.iter().enumerate() {
                    for b in 0..bits as usize {
                        if v >> (bits as usize - 1 - b) & 1 == 1 {
                            let p = i * bits as usize + b;
                            naive[p / 8] |= 0x80 >> (p % 8);
                        }
                    }
                }
                assert_eq!(out, naive, "bits {bits} n {n}");
                if n > 3 {
                    let mut mid = vec![0u64; n - 3];
                    unpack(&out, 3 * bits as usize, n - 3, bits, |i, v| mid[i] = v);
                    assert_eq!(mid, vals[3..], "offset bits {bits}");
                }
            }
        }
    }

    #[test]
    fn twelve_bit_example() {
        let q = [0x080u64, 0x1cd, 0x333, 0x000, 0xaa0, 0x580];
        let mut out = vec![0u8; 9];
        pack_into(q.iter().copied(), 12, &mut out);
        assert_eq!(out, [0x08, 0x01, 0xcd, 0x33, 0x30, 0x00, 0xaa, 0x05, 0x80]);
    }
}
