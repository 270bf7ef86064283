//! MSB-first bit reading over a byte slice, a 64-bit word at a time.
//! See `spec/szip.md` §2.

use crate::error::{Error, Result};

/// Reads bits MSB-first; every read is bounds-checked.
pub struct BitReader<'a> {
    src: &'a [u8],
    /// Position in bits.
    pos: u64,
    len_bits: u64,
}

impl<'a> BitReader<'a> {
    /// Starts at bit `pos`.
    pub fn new(src: &'a [u8], pos: u64) -> Self {
        BitReader {
            src,
            pos,
            len_bits: src.len() as u64 * 8,
        }
    }

    /// Current position in bits.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    #[cold]
    fn eof(&self) -> Error {
        Error::codec("szip stream ends early").at(self.pos / 8)
    }

    /// The 64 bits starting at the current position (zero past the end).
    #[inline]
    fn peek64(&self) -> u64 {
        let byte = (self.pos / 8) as usize;
        let shift = (self.pos % 8) as u32;
        if let Some(s) = self.src.get(byte..byte + 9) {
            let hi = u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
            return (hi << shift) | ((s[8] as u64) >> (8 - shift));
        }
        let mut w = [0u8; 16];
        let end = (byte + 9).min(self.src.len());
        if byte < end {
            w[..end - byte].copy_from_slice(&self.src[byte..end]);
        }
        let hi = u128::from_be_bytes(w);
        ((hi << shift) >> 64) as u64
    }

    /// Reads `n` (1..=32) bits.
    #[inline]
    pub fn bits(&mut self, n: u32) -> Result<u32> {
        if self.pos + n as u64 > self.len_bits {
            return Err(self.eof());
        }
        let v = (self.peek64() >> (64 - n)) as u32;
        self.pos += n as u64;
        Ok(v)
    }

    /// Reads a fundamental-sequence codeword: the number of 0 bits before a 1.
    #[inline]
    pub fn fs(&mut self) -> Result<u32> {
        let mut count = 0u64;
        loop {
            if self.pos >= self.len_bits {
                return Err(self.eof());
            }
            let w = self.peek64();
            let avail = (self.len_bits - self.pos).min(64);
            let z = w.leading_zeros() as u64;
            if z < avail {
                self.pos += z + 1;
                count += z;
                return u32::try_from(count)
                    .map_err(|_| Error::codec("szip codeword too long").at(self.pos / 8));
            }
            self.pos += avail;
            count += avail;
            if count > 1 << 33 {
                return Err(Error::codec("szip codeword too long").at(self.pos / 8));
            }
        }
    }

    /// Reads `out.len()` FS codewords, storing each value shifted left by `k`
    /// (wrapping), decoding as many as one 64-bit window holds at a time.
    pub fn fs_run(&mut self, out: &mut [u32], k: u32) -> Result<()> {
        let mut i = 0;
        while i < out.len() {
            if self.pos >= self.len_bits {
                return Err(self.eof());
            }
            let avail = (self.len_bits - self.pos).min(64);
            let mut w = self.peek64();
            let mut used = 0u64;
            while i < out.len() {
                let z = w.leading_zeros() as u64;
                if used + z + 1 > avail {
                    break;
                }
                out[i] = (z as u32).wrapping_shl(k);
                i += 1;
                used += z + 1;
                // z ≤ 63 here (z + 1 ≤ avail ≤ 64), so both shifts are in
                // range; together they shift by z + 1 without a branch.
                w = (w << z) << 1;
            }
            if used == 0 {
                // A codeword longer than the window.
                out[i] = self.fs()?.wrapping_shl(k);
                i += 1;
            } else {
                self.pos += used;
            }
        }
        Ok(())
    }

    /// Adds a `k`-bit (1..=32) value read from the stream to each of `out`.
    pub fn add_bits_run(&mut self, out: &mut [u32], k: u32) -> Result<()> {
        let kk = k as u64;
        let mut i = 0;
        while i < out.len() {
            let avail = (self.len_bits - self.pos.min(self.len_bits)).min(64);
            let per = (avail / kk) as usize;
            if per == 0 {
                return Err(self.eof());
            }
            let w = self.peek64();
            let take = per.min(out.len() - i);
            for (j, o) in out[i..i + take].iter_mut().enumerate() {
                *o = o.wrapping_add(((w << (j as u64 * kk)) >> (64 - kk)) as u32);
            }
            self.pos += take as u64 * kk;
            i += take;
        }
        Ok(())
    }
}
