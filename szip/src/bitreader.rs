//! MSB-first bit reading over a byte slice, a 64-bit word at a time.
//! See `spec/szip.md` §2.

use crate::error::{Error, Result};

/// The 64 bits of `src` from bit `pos`, MSB first; bits past the end read
/// as zero.
#[inline(always)]
pub(super) fn bits_at(src: &[u8], pos: u64) -> u64 {
    let byte = (pos / 8) as usize;
    let shift = (pos % 8) as u32;
    if let Some((hi, lo)) = src
        .get(byte..byte + 9)
        .and_then(|s| s.split_first_chunk::<8>())
    {
        let lo = lo.first().copied().unwrap_or(0);
        return (u64::from_be_bytes(*hi) << shift) | ((lo as u64) >> (8 - shift));
    }
    let mut w = [0u8; 16];
    let end = (byte + 9).min(src.len());
    if byte < end {
        w[..end - byte].copy_from_slice(&src[byte..end]);
    }
    let hi = u128::from_be_bytes(w);
    ((hi << shift) >> 64) as u64
}

/// Where the `m`-th (1-based) set bit of `w` lies, counted from the most
/// significant bit (0); `w` must hold at least `m` set bits. Whole bytes
/// are passed over by their counts, so at most 8 + 7 steps.
#[inline]
fn nth_one_from_top(w: u64, mut m: usize) -> u32 {
    for (i, b) in w.to_be_bytes().into_iter().enumerate() {
        let ones = b.count_ones() as usize;
        if m <= ones {
            let mut v = b;
            for _ in 1..m {
                v &= !(0x80 >> v.leading_zeros());
            }
            return i as u32 * 8 + v.leading_zeros();
        }
        m -= ones;
    }
    64
}

/// `PER_LOAD[k][s]`: how many whole `k`-bit values (k ≤ 32) the 64 bits of
/// an 8-byte load hold after its first `s` (< 8) bits, `⌊(64 − s) / k⌋`:
/// a table, so the run of reads divides nothing.
const PER_LOAD: [[u8; 8]; 33] = {
    let mut t = [[0u8; 8]; 33];
    let mut k = 1;
    while k <= 32 {
        let mut s = 0;
        while s < 8 {
            t[k][s] = ((64 - s) / k) as u8;
            s += 1;
        }
        k += 1;
    }
    t
};

/// Reads bits MSB-first; every read is bounds-checked.
pub struct BitReader<'a> {
    src: &'a [u8],
    /// Position in bits.
    pos: u64,
    len_bits: u64,
}

impl<'a> BitReader<'a> {
    /// Starts at bit `pos`; a start past the end is the end (every read
    /// then fails), so positions never overflow whatever `pos` a stream's
    /// metadata claims.
    pub fn new(src: &'a [u8], pos: u64) -> Self {
        let len_bits = src.len() as u64 * 8;
        BitReader {
            src,
            pos: pos.min(len_bits),
            len_bits,
        }
    }

    /// Current position in bits.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    #[cold]
    fn eof(&self) -> Error {
        Error::corrupt("szip stream ends early").at(self.pos / 8)
    }

    /// The 64 bits starting at the current position (zero past the end).
    #[inline(always)]
    fn peek64(&self) -> u64 {
        bits_at(self.src, self.pos)
    }

    /// Reads `n` (1..=32) bits.
    #[inline(always)]
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
                    .map_err(|_| Error::corrupt("szip codeword too long").at(self.pos / 8));
            }
            self.pos += avail;
            count += avail;
            if count > 1 << 33 {
                return Err(Error::corrupt("szip codeword too long").at(self.pos / 8));
            }
        }
    }

    /// Reads `out.len()` FS codewords, storing each value shifted left by `k`
    /// (wrapping), decoding every codeword one 64-bit window holds at a time.
    ///
    /// The window is bit-reversed so the stream's first bit is bit 0: each
    /// codeword ends at the lowest set bit, found with a trailing-zero count,
    /// and clearing that bit (`w & (w - 1)`) is the only step one codeword
    /// waits on from the one before.
    #[inline(always)]
    pub fn fs_run(&mut self, out: &mut [u32], k: u32) -> Result<()> {
        let mut i = 0;
        while i < out.len() {
            if self.pos >= self.len_bits {
                return Err(self.eof());
            }
            let avail = (self.len_bits - self.pos).min(64);
            let mut w = self.peek64().reverse_bits();
            if avail < 64 {
                w &= (1u64 << avail) - 1;
            }
            if w == 0 {
                // A codeword longer than the window.
                out[i] = self.fs()?.wrapping_shl(k);
                i += 1;
                continue;
            }
            let take = (w.count_ones() as usize).min(out.len() - i);
            let mut next = 0u32;
            for o in &mut out[i..i + take] {
                let end = w.trailing_zeros();
                *o = (end - next).wrapping_shl(k);
                next = end + 1;
                w &= w - 1;
            }
            i += take;
            self.pos += next as u64;
        }
        Ok(())
    }

    /// Moves past `m` FS codewords without their values: the position and
    /// the error [`Self::fs_run`] would end with, counting a window's
    /// codewords with one popcount.
    pub fn skip_fs(&mut self, mut m: usize) -> Result<()> {
        while m > 0 {
            if self.pos >= self.len_bits {
                return Err(self.eof());
            }
            let avail = (self.len_bits - self.pos).min(64);
            let mut w = self.peek64();
            if avail < 64 {
                w &= !(u64::MAX >> avail);
            }
            if w == 0 {
                // A codeword longer than the window.
                self.fs()?;
                m -= 1;
                continue;
            }
            let ones = w.count_ones() as usize;
            if ones < m {
                self.pos += 64 - w.trailing_zeros() as u64;
                m -= ones;
                continue;
            }
            // The m-th set bit from the top ends the last codeword.
            self.pos += nth_one_from_top(w, m) as u64 + 1;
            m = 0;
        }
        Ok(())
    }

    /// Moves past `n` bits, failing as [`Self::add_bits_run`] over them
    /// would when the stream holds fewer.
    pub fn skip(&mut self, n: u64) -> Result<()> {
        if self.pos + n > self.len_bits {
            return Err(self.eof());
        }
        self.pos += n;
        Ok(())
    }

    /// Adds a `k`-bit (1..=32) value read from the stream to each of `out`.
    #[inline(always)]
    pub fn add_bits_run(&mut self, out: &mut [u32], k: u32) -> Result<()> {
        let kk = k as u64;
        let total = out.len() as u64 * kk;
        if out.is_empty() {
            return Ok(());
        }
        if self.pos + total > self.len_bits {
            return Err(self.eof());
        }
        // The 8 bytes from a value's first byte hold at least 57 bits from
        // it (shift ≤ 7), so ⌊57 / k⌋ ≥ 1 values; when those bytes exist
        // for the last value, each 8-byte load serves every value it
        // holds whole.
        let last_byte = (self.pos + total.saturating_sub(kk)) / 8;
        if last_byte + 8 <= self.src.len() as u64 {
            let src = self.src;
            let mut at = self.pos;
            let mut rest = &mut out[..];
            let per_load = &PER_LOAD[k as usize];
            while !rest.is_empty() {
                let b = (at / 8) as usize;
                let mut word = u64::from_be_bytes(src[b..b + 8].try_into().unwrap_or([0; 8]));
                word <<= at % 8;
                let per = usize::from(per_load[(at % 8) as usize]);
                let (now, later) = rest.split_at_mut(per.min(rest.len()));
                for o in now.iter_mut() {
                    *o = o.wrapping_add((word >> (64 - kk)) as u32);
                    word = word.wrapping_shl(k);
                }
                at += now.len() as u64 * kk;
                rest = later;
            }
            self.pos += total;
            return Ok(());
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `fs_run` against one `fs` call per codeword: same values, same end
    /// position, same error, on any stream (long zero runs included).
    fn fs_run_matches_fs(src: &[u8], start: u64, n: usize, k: u32) {
        let mut one = BitReader::new(src, start);
        let want: Result<Vec<u32>> = (0..n)
            .map(|_| one.fs().map(|v| v.wrapping_shl(k)))
            .collect();
        let mut run = BitReader::new(src, start);
        let mut got = vec![0u32; n];
        let res = run.fs_run(&mut got, k);
        same_reads(want, one.pos(), res, got, run.pos());
    }

    /// A run read gives the values (`got`, `res`) and end position of the
    /// one-at-a-time reads (`want`), or fails where they fail.
    fn same_reads(want: Result<Vec<u32>>, want_pos: u64, res: Result<()>, got: Vec<u32>, pos: u64) {
        match want {
            Ok(want) => {
                res.unwrap();
                assert_eq!(got, want);
                assert_eq!(pos, want_pos);
            }
            Err(_) => assert!(res.is_err()),
        }
    }

    fn add_bits_matches_bits(src: &[u8], start: u64, n: usize, k: u32) {
        let mut one = BitReader::new(src, start);
        let want: Result<Vec<u32>> = (0..n)
            .map(|j| one.bits(k).map(|v| v.wrapping_add(j as u32)))
            .collect();
        let mut run = BitReader::new(src, start);
        let mut got: Vec<u32> = (0..n as u32).collect();
        let res = run.add_bits_run(&mut got, k);
        same_reads(want, one.pos(), res, got, run.pos());
    }

    #[test]
    fn fs_run_reads_codewords_longer_than_a_window() {
        // 100 zero bits, a one, then "1", "01", and the stream's end.
        let mut src = vec![0u8; 12];
        src[12 - 1] = 0b0000_1000; // bit 100
        src.push(0b1010_0000);
        fs_run_matches_fs(&src, 0, 3, 0);
        fs_run_matches_fs(&src, 0, 3, 5);
        fs_run_matches_fs(&src, 0, 4, 0); // runs off the end
        fs_run_matches_fs(&src, 3, 2, 0);
        fs_run_matches_fs(&[], 0, 1, 0);
    }

    /// `skip_fs` ends where `fs_run` ends, and fails where it fails.
    fn skip_fs_matches_fs_run(src: &[u8], start: u64, n: usize) {
        let mut run = BitReader::new(src, start);
        let mut got = vec![0u32; n];
        let want = run.fs_run(&mut got, 0);
        let mut skip = BitReader::new(src, start);
        let res = skip.skip_fs(n);
        assert_eq!(res.is_ok(), want.is_ok());
        if want.is_ok() {
            assert_eq!(skip.pos(), run.pos());
        }
    }

    #[test]
    fn skip_fs_crosses_windows_and_long_codewords() {
        let mut src = vec![0u8; 12];
        src[11] = 0b0000_1000;
        src.extend([0b1010_0000, 0xff, 0x01, 0x80]);
        for start in 0..8 {
            for n in 0..14 {
                skip_fs_matches_fs_run(&src, start, n);
            }
        }
        skip_fs_matches_fs_run(&[], 0, 1);
        skip_fs_matches_fs_run(&[0xff; 9], 3, 64);
    }

    proptest! {
        #[test]
        fn skip_fs_agrees_with_fs_run(
            src in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xffu8), any::<u8>()], 0..80),
            start in 0u64..64,
            n in 0usize..200,
        ) {
            skip_fs_matches_fs_run(&src, start, n);
        }

        #[test]
        fn fs_run_agrees_with_fs(
            src in proptest::collection::vec(prop_oneof![Just(0u8), Just(0x80u8), any::<u8>()], 0..80),
            start in 0u64..64,
            n in 0usize..70,
            k in 0u32..33,
        ) {
            fs_run_matches_fs(&src, start, n, k);
        }

        #[test]
        fn add_bits_run_agrees_with_bits(
            src in proptest::collection::vec(any::<u8>(), 0..80),
            start in 0u64..64,
            n in 0usize..40,
            k in 1u32..33,
        ) {
            add_bits_matches_bits(&src, start, n, k);
        }
    }
}
