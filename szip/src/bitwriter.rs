//! MSB-first bit writing into a growing byte vector, 64 bits at a time.
//! See `spec/szip.md` §2.

/// Accumulates bits MSB-first and appends whole 64-bit words to `out`.
pub struct BitWriter {
    out: Vec<u8>,
    /// Pending bits, in the low `n` bits (higher bits are stale).
    acc: u64,
    /// Number of pending bits, always below 64 between calls.
    n: u32,
}

impl BitWriter {
    /// An empty writer whose buffer can hold `capacity` bytes without growing.
    pub fn with_capacity(capacity: usize) -> Self {
        BitWriter {
            out: Vec::with_capacity(capacity),
            acc: 0,
            n: 0,
        }
    }

    /// Bits written so far.
    #[inline(always)]
    pub fn bit_pos(&self) -> u64 {
        self.out.len() as u64 * 8 + self.n as u64
    }

    /// Appends the low `bits` bits of `v` (`bits` ≤ 32, `v < 2^bits`).
    #[inline(always)]
    pub fn put(&mut self, v: u32, bits: u32) {
        debug_assert!(bits <= 32 && (bits == 32 || v >> bits == 0));
        self.put_wide(v as u64, bits);
    }

    /// Appends the low `bits` bits of `v` (`bits` ≤ 64, `v < 2^bits`); a
    /// full word goes out in one store.
    #[inline(always)]
    pub fn put_wide(&mut self, v: u64, bits: u32) {
        debug_assert!(bits <= 64 && (bits == 64 || v >> bits == 0));
        let total = self.n + bits;
        if total < 64 {
            // bits < 64 here.
            self.acc = (self.acc << bits) | v;
            self.n = total;
            return;
        }
        // The word is the n pending bits, then the first 64 − n bits of v;
        // the last `rest` bits of v stay pending.
        let rest = total - 64;
        let word = self.acc.checked_shl(64 - self.n).unwrap_or(0) | (v >> rest);
        self.out.extend_from_slice(&word.to_be_bytes());
        self.acc = v;
        self.n = rest;
    }

    /// Appends a fundamental-sequence codeword: `count` zeros, then a one.
    #[inline(always)]
    pub fn put_fs(&mut self, mut count: u64) {
        while count >= 64 {
            self.put_wide(0, 64);
            count -= 64;
        }
        self.put_wide(1, count as u32 + 1);
    }

    /// Appends the FS codewords of `values`, as many per call to
    /// [`put_wide`] as fit in 64 bits.
    ///
    /// [`put_wide`]: BitWriter::put_wide
    #[inline(always)]
    pub fn put_fs_run(&mut self, values: impl Iterator<Item = u64>) {
        let mut group = 0u64;
        let mut len = 0u32;
        for q in values {
            if q >= 64 {
                self.put_wide(group, len);
                (group, len) = (0, 0);
                self.put_fs(q);
                continue;
            }
            let l = q as u32 + 1;
            if len + l > 64 {
                self.put_wide(group, len);
                (group, len) = (0, 0);
            }
            // l ≤ 64, and l = 64 only when the group is empty.
            group = group.checked_shl(l).unwrap_or(0) | 1;
            len += l;
        }
        self.put_wide(group, len);
    }

    /// Appends the FS codewords of `values[i] >> k`, whose lengths sum to
    /// `total` bits: in one word when they fit, else as [`put_fs_run`].
    ///
    /// [`put_fs_run`]: BitWriter::put_fs_run
    #[inline(always)]
    pub fn put_fs_block(&mut self, values: &[u32], k: u32, total: u64) {
        if total > 64 || values.is_empty() {
            return self.put_fs_run(values.iter().map(|&v| (v >> k) as u64));
        }
        // Each codeword is shorter than the total unless it is the only one.
        let mut group = 0u64;
        for &v in values {
            group = group.checked_shl((v >> k) + 1).unwrap_or(0) | 1;
        }
        self.put_wide(group, total as u32);
    }

    /// Appends the low `k` bits (1..=32) of each of `values`, as many per
    /// call to [`put_wide`] as fit in 64 bits.
    ///
    /// [`put_wide`]: BitWriter::put_wide
    #[inline(always)]
    pub fn put_bits_run(&mut self, values: &[u32], k: u32) {
        let mask = if k == 32 {
            u32::MAX as u64
        } else {
            (1u64 << k) - 1
        };
        let per_word = (64 / k) as usize;
        for word in values.chunks(per_word) {
            let mut group = 0u64;
            for &v in word {
                group = (group << k) | (v as u64 & mask);
            }
            self.put_wide(group, word.len() as u32 * k);
        }
    }

    /// Pads with zeros to a byte boundary and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        let bytes = (self.n as usize).div_ceil(8);
        // The pending bits moved to the top of the word; the rest is zero.
        let top = self.acc.checked_shl(64 - self.n).unwrap_or(0);
        self.out.extend_from_slice(&top.to_be_bytes()[..bytes]);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_come_out_msb_first() {
        let mut w = BitWriter::with_capacity(0);
        w.put(1, 1);
        w.put(0, 2);
        w.put(0b11111, 5);
        w.put(0xabcd, 16);
        w.put_fs(3);
        assert_eq!(w.bit_pos(), 28);
        assert_eq!(w.finish(), vec![0b1001_1111, 0xab, 0xcd, 0b0001_0000]);
    }

    #[test]
    fn long_fs_and_full_words() {
        let mut w = BitWriter::with_capacity(0);
        w.put_fs(70);
        w.put(0xffff_ffff, 32);
        let out = w.finish();
        assert_eq!(out.len(), 13);
        assert_eq!(&out[..8], &[0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(out[8], 0b0000_0011);
        assert_eq!(&out[9..], &[0xff, 0xff, 0xff, 0xfe]);
    }

    #[test]
    fn runs_equal_single_puts() {
        let fs = [0u64, 3, 31, 32, 40, 1, 0, 7, 100, 2];
        let bits = [5u32, 0, 31, 17, 1, 30];
        for k in [1u32, 5, 16, 31, 32] {
            let mut a = BitWriter::with_capacity(0);
            let mut b = BitWriter::with_capacity(0);
            a.put_fs_run(fs.iter().copied());
            a.put_bits_run(&bits, k);
            for &q in &fs {
                b.put_fs(q);
            }
            for &v in &bits {
                let m = if k == 32 { v } else { v & ((1 << k) - 1) };
                b.put(m, k);
            }
            assert_eq!(a.bit_pos(), b.bit_pos());
            assert_eq!(a.finish(), b.finish(), "k={k}");
        }
    }

    /// Every way of writing, mixed at random, against bits kept one by one.
    #[test]
    fn mixed_writes_match_bitwise() {
        let mut x = 0x2545_f491u32;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..200 {
            let mut w = BitWriter::with_capacity(0);
            let mut want: Vec<bool> = Vec::new();
            let push = |want: &mut Vec<bool>, v: u64, bits: u32| {
                want.extend((0..bits).rev().map(|i| i < 64 && (v >> i) & 1 == 1));
            };
            for _ in 0..40 {
                match rand() % 5 {
                    0 => {
                        let bits = rand() % 65;
                        let v = ((rand() as u64) << 32 | rand() as u64)
                            & u64::MAX.checked_shr(64 - bits).unwrap_or(0);
                        w.put_wide(v, bits);
                        push(&mut want, v, bits);
                    }
                    1 => {
                        let q = (rand() % 150) as u64;
                        w.put_fs(q);
                        push(&mut want, 1, q as u32 + 1);
                    }
                    2 | 3 => {
                        let k = rand() % 12;
                        let vals: Vec<u32> = (0..rand() % 20).map(|_| rand() % 5000).collect();
                        let fs: u64 = vals.iter().map(|&v| (v >> k) as u64 + 1).sum();
                        w.put_fs_block(&vals, k, fs);
                        for &v in &vals {
                            push(&mut want, 1, (v >> k) + 1);
                        }
                    }
                    _ => {
                        let k = 1 + rand() % 32;
                        let vals: Vec<u32> = (0..rand() % 20).map(|_| rand()).collect();
                        w.put_bits_run(&vals, k);
                        for &v in &vals {
                            push(&mut want, v as u64 & ((1u64 << k) - 1), k);
                        }
                    }
                }
                assert_eq!(w.bit_pos(), want.len() as u64);
            }
            let got = w.finish();
            assert_eq!(got.len(), want.len().div_ceil(8));
            for (i, &b) in want.iter().enumerate() {
                assert_eq!((got[i / 8] >> (7 - i % 8)) & 1 == 1, b, "bit {i}");
            }
            let pad = (want.len()..got.len() * 8).all(|i| (got[i / 8] >> (7 - i % 8)) & 1 == 0);
            assert!(pad, "padding is zero");
        }
    }

    #[test]
    fn empty_is_empty() {
        assert!(BitWriter::with_capacity(0).finish().is_empty());
    }
}
