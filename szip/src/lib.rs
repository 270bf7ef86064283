//! CCSDS 121.0-B-3 adaptive entropy coding ("szip", AEC) in pure Rust,
//! bit-identical to libaec: [`encode`] writes exactly the bytes libaec's
//! `aec_buffer_encode` writes for the same [`SzipParams`], and the decoders
//! read every stream libaec writes. The rules are in tgm's `spec/szip.md`.
//!
//! Decoding writes into a caller buffer of exactly the expected size; a
//! stream that ends early, or codes more samples than an RSI holds, is an
//! [`Error`] of kind [`ErrorKind::Corrupt`] with the byte offset where
//! decoding stopped. No input makes the coder panic.
//!
//! The encoder also returns the bit offset where every reference sample
//! interval (RSI) starts. With those offsets a stream can be decoded on
//! several threads ([`decode_parallel_into`]) or in part
//! ([`decode_range_into`]), decoding only the RSIs a byte range covers.
//! Parallel work runs on the current rayon pool: wrap the call in
//! `ThreadPool::install` to choose the threads.
//!
//! ```
//! use tgm_szip::{decode_into, decode_range_into, encode, flags, SzipParams};
//!
//! let p = SzipParams {
//!     bits_per_sample: 16,
//!     block_size: 16,
//!     rsi: 4,
//!     flags: flags::PREPROCESS | flags::MSB,
//! };
//! // 1000 big-endian 16-bit samples of a smooth signal.
//! let input: Vec<u8> = (0..1000u16).flat_map(|i| (30_000 + i / 3).to_be_bytes()).collect();
//! let (stream, rsi_offsets) = encode(&input, &p)?;
//! assert!(stream.len() < input.len() / 4);
//!
//! let mut back = vec![0u8; input.len()];
//! decode_into(&stream, &p, &mut back)?;
//! assert_eq!(back, input);
//!
//! // Samples 700..710 only, decoding just the RSI that holds them.
//! let mut part = vec![0u8; 20];
//! decode_range_into(&stream, &p, &rsi_offsets, input.len() as u64, 1400, &mut part)?;
//! assert_eq!(part, input[1400..1420]);
//! # Ok::<(), tgm_szip::Error>(())
//! ```

mod bitreader;
mod bitwriter;
mod decode;
mod decode_range;
mod decode_skip;
mod encode;
mod error;
mod unmap;

pub use decode::{
    decode_codes_from, decode_into, decode_parallel_into, decode_pieces, decode_pieces_from,
    decoded_extent, rsis_per_run, CodeSink, Sink,
};
pub use decode_range::{decode_range_into, decode_ranges_into, rsi_chain_holds};
pub use encode::{
    encode, encode_parallel, encode_samples, encode_with, Containers, SampleSource, SzipProfile,
};
pub use error::{Error, ErrorKind, Result};

/// Flag values as libaec numbers them (and as `szip_flags` stores them).
pub mod flags {
    /// Samples are signed.
    pub const SIGNED: u32 = 1;
    /// 17–24-bit samples use 3-byte containers.
    pub const THREE_BYTE: u32 = 2;
    /// Containers are big-endian.
    pub const MSB: u32 = 4;
    /// Unit-delay prediction and mapping.
    pub const PREPROCESS: u32 = 8;
    /// Restricted option set for 1–4-bit samples.
    pub const RESTRICTED: u32 = 16;
    /// Each RSI starts on a byte boundary.
    pub const PAD_RSI: u32 = 32;
    /// Block sizes other than 8/16/32/64 are allowed.
    pub const NOT_ENFORCE: u32 = 64;
}

/// Whether any of `containers`, two's-complement integers of `width` bytes
/// (big-endian when `msb`), is negative: only then does coding them with
/// [`flags::SIGNED`] pay (`spec/szip.md` §7). A trailing partial
/// container is ignored.
pub fn any_negative(containers: &[u8], width: usize, msb: bool) -> bool {
    if width == 0 {
        return false;
    }
    let top = if msb { 0 } else { width - 1 };
    containers.chunks_exact(width).any(|c| c[top] & 0x80 != 0)
}

/// Coder parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SzipParams {
    /// Bits per sample, 1..=32.
    pub bits_per_sample: u32,
    /// Samples per block: 8, 16, 32 or 64 (any even value with NOT_ENFORCE).
    pub block_size: u32,
    /// Blocks per reference sample interval, 1..=4096.
    pub rsi: u32,
    /// `flags::*` bits.
    pub flags: u32,
}

impl SzipParams {
    /// Checks the parameter ranges.
    pub fn validate(&self) -> Result<()> {
        let p = self;
        if !(1..=32).contains(&p.bits_per_sample) {
            return Err(Error::params(format!(
                "szip bits per sample {} outside 1..=32",
                p.bits_per_sample
            )));
        }
        let ok_block = if p.flags & flags::NOT_ENFORCE != 0 {
            p.block_size >= 2 && p.block_size.is_multiple_of(2) && p.block_size <= 1 << 16
        } else {
            matches!(p.block_size, 8 | 16 | 32 | 64)
        };
        if !ok_block {
            return Err(Error::params(format!(
                "szip block size {} is not allowed",
                p.block_size
            )));
        }
        if !(1..=4096).contains(&p.rsi) {
            return Err(Error::params(format!(
                "szip rsi {} outside 1..=4096",
                p.rsi
            )));
        }
        if p.flags & flags::RESTRICTED != 0 && p.bits_per_sample > 4 {
            return Err(Error::params(
                "szip restricted coding needs at most 4 bits per sample",
            ));
        }
        Ok(())
    }

    /// Bytes per sample container: 1, 2, 3 (17–24 bits with THREE_BYTE) or 4.
    pub fn sample_bytes(&self) -> usize {
        match self.bits_per_sample {
            0..=8 => 1,
            9..=16 => 2,
            17..=24 if self.flags & flags::THREE_BYTE != 0 => 3,
            _ => 4,
        }
    }

    /// Length of the option identifier in bits.
    pub(crate) fn id_len(&self) -> u32 {
        match self.bits_per_sample {
            17.. => 5,
            9..=16 => 4,
            1..=2 if self.flags & flags::RESTRICTED != 0 => 1,
            3..=4 if self.flags & flags::RESTRICTED != 0 => 2,
            _ => 3,
        }
    }
}

#[cfg(test)]
mod sign_tests {
    use super::any_negative;

    #[test]
    fn any_negative_reads_the_sign_bit_in_either_byte_order() {
        let le: Vec<u8> = [3i16, 700, -1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let be: Vec<u8> = [3i16, 700, -1]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert!(any_negative(&le, 2, false));
        assert!(any_negative(&be, 2, true));
        assert!(!any_negative(&le[..4], 2, false));
        assert!(!any_negative(&be[..4], 2, true));
        // 0x0280 little-endian: the high byte is 0x02, not negative.
        assert!(!any_negative(&[0x80, 0x02], 2, false));
        assert!(any_negative(&[0x80, 0x02], 2, true));
        assert!(!any_negative(&[0xff], 0, false));
    }
}
