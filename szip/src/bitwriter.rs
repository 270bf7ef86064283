//! MSB-first bit writing into a growing byte vector, 32 bits at a time.
//! See `spec/szip.md` §2.

/// Accumulates bits MSB-first and appends whole 32-bit words to `out`.
pub struct BitWriter {
    out: Vec<u8>,
    /// Pending bits, in the low `n` bits (higher bits are stale).
    acc: u64,
    /// Number of pending bits, always below 32 between calls.
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
    #[inline]
    pub fn bit_pos(&self) -> u64 {
        self.out.len() as u64 * 8 + self.n as u64
    }

    /// Appends the low `bits` bits of `v` (`bits` ≤ 32, `v < 2^bits`).
    #[inline]
    pub fn put(&mut self, v: u32, bits: u32) {
        debug_assert!(bits <= 32 && (bits == 32 || v >> bits == 0));
        self.acc = (self.acc << bits) | v as u64;
        self.n += bits;
        if self.n >= 32 {
            self.n -= 32;
            let word = (self.acc >> self.n) as u32;
            self.out.extend_from_slice(&word.to_be_bytes());
        }
    }

    /// Appends a fundamental-sequence codeword: `count` zeros, then a one.
    #[inline]
    pub fn put_fs(&mut self, mut count: u64) {
        while count >= 32 {
            self.put(0, 32);
            count -= 32;
        }
        self.put(1, count as u32 + 1);
    }

    /// Appends the FS codewords of `values`, several per call to [`put`]
    /// when they are short.
    ///
    /// [`put`]: BitWriter::put
    #[inline]
    pub fn put_fs_run(&mut self, values: impl Iterator<Item = u64>) {
        let mut group = 0u64;
        let mut len = 0u32;
        for q in values {
            if q >= 32 {
                self.put(group as u32, len);
                (group, len) = (0, 0);
                self.put_fs(q);
                continue;
            }
            let l = q as u32 + 1;
            if len + l > 32 {
                self.put(group as u32, len);
                (group, len) = (0, 0);
            }
            group = (group << l) | 1;
            len += l;
        }
        self.put(group as u32, len);
    }

    /// Appends the low `k` bits (1..=32) of each of `values`.
    #[inline]
    pub fn put_bits_run(&mut self, values: &[u32], k: u32) {
        let mask = if k == 32 {
            u32::MAX as u64
        } else {
            (1u64 << k) - 1
        };
        let mut group = 0u64;
        let mut len = 0u32;
        for &v in values {
            if len + k > 32 {
                self.put(group as u32, len);
                (group, len) = (0, 0);
            }
            group = (group << k) | (v as u64 & mask);
            len += k;
        }
        self.put(group as u32, len);
    }

    /// Pads with zeros to a byte boundary and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        let pad = (8 - self.n % 8) % 8;
        let total = self.n + pad;
        let bits = (self.acc << pad) & ((1u64 << total) - 1);
        let bytes = (bits << (64 - total.max(1))).to_be_bytes();
        self.out.extend_from_slice(&bytes[..(total / 8) as usize]);
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

    #[test]
    fn empty_is_empty() {
        assert!(BitWriter::with_capacity(0).finish().is_empty());
    }
}
