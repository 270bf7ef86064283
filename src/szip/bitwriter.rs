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
    fn empty_is_empty() {
        assert!(BitWriter::with_capacity(0).finish().is_empty());
    }
}
