//! The AEC decoder. See `spec/szip.md` §3–§5.

use super::bitreader::BitReader;
use super::unmap::Unmap;
use super::{flags, SzipParams};
use crate::error::{Error, ErrorKind, Result};

/// Zero-block count code meaning "to the end of the segment or RSI".
const ROS: u32 = 5;
/// Largest second-extension codeword (13 · 14 / 2 − 1).
const SE_MAX: u32 = 90;

/// Decodes a whole stream into `out`, which must be exactly the decoded size
/// (a whole number of sample containers).
pub fn decode_into(input: &[u8], p: &SzipParams, out: &mut [u8]) -> Result<()> {
    p.validate()?;
    let sb = p.sample_bytes();
    if !out.len().is_multiple_of(sb) {
        return Err(Error::corrupt(format!(
            "{} bytes are not whole {sb}-byte samples",
            out.len()
        )));
    }
    decode_samples(input, 0, p, out).map(|_| ())
}

/// How many samples a decoder that stops only where the stream ends
/// (libaec given more room than the data, as imagecodecs' `aec_decode`
/// without an output size) writes for a stream of `samples` samples: the
/// last block whole, and a zero-block run coded as reaching the end of its
/// segment or RSI (ROS) to that end (`spec/szip.md` §3). The bits after
/// the last block are padding that forms no block: every block needs a 1
/// bit a run of zero bits lacks.
pub fn decoded_extent(input: &[u8], p: &SzipParams, samples: usize) -> Result<usize> {
    p.validate()?;
    if samples == 0 {
        return Ok(0);
    }
    let sb = p.sample_bytes();
    let len = samples
        .checked_mul(sb)
        .ok_or_else(|| Error::corrupt(format!("{samples} samples overflow the address space")))?;
    let mut out = zeroed::<u8>(len)?;
    let (_, used) = decode_samples_at(input, 0, p, &mut out)?;
    let rsi_samples = p.rsi as usize * p.block_size as usize;
    Ok((samples - 1) / rsi_samples * rsi_samples + used)
}

/// Receives each decoded piece with its byte offset in the decoded stream.
pub type Sink<'a, E> = dyn FnMut(usize, &[u8]) -> Result<(), E> + 'a;

/// Decodes a whole stream of `total` bytes run of RSIs by run of RSIs
/// through one scratch buffer of about `piece_bytes`, handing each piece and
/// its byte offset in the decoded stream to `sink`. The pieces, in order,
/// are exactly [`decode_into`]'s output: RSIs are coded independently and
/// follow one another without padding (`spec/szip.md` §5). `sink` may fail
/// with its own error type, into which this crate's errors convert.
pub fn decode_pieces<E: From<Error>>(
    input: &[u8],
    p: &SzipParams,
    total: usize,
    piece_bytes: usize,
    sink: &mut Sink<'_, E>,
) -> Result<(), E> {
    decode_pieces_from(input, p, 0, total, piece_bytes, sink).map(|_| ())
}

/// [`decode_pieces`] for `total` decoded bytes starting at bit `start` (an
/// RSI start) of `input`; returns the bit position after the last block.
pub fn decode_pieces_from<E: From<Error>>(
    input: &[u8],
    p: &SzipParams,
    start: u64,
    total: usize,
    piece_bytes: usize,
    sink: &mut Sink<'_, E>,
) -> Result<u64, E> {
    p.validate()?;
    let sb = p.sample_bytes();
    if !total.is_multiple_of(sb) {
        return Err(
            Error::corrupt(format!("{total} bytes are not whole {sb}-byte samples")).into(),
        );
    }
    let rsi_bytes = p.rsi as usize * p.block_size as usize * sb;
    let per = (piece_bytes / rsi_bytes).max(1) * rsi_bytes;
    let mut scratch = zeroed::<u8>(per.min(total))?;
    let (mut bit, mut at) = (start, 0usize);
    while at < total {
        let len = per.min(total - at);
        bit = decode_samples(input, bit, p, &mut scratch[..len])?;
        sink(at, &scratch[..len])?;
        at += len;
    }
    Ok(bit)
}

/// `len` zeros, or an [`ErrorKind::Alloc`] error when the allocation
/// fails.
fn zeroed<T: Copy + Default>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        Error::new(ErrorKind::Alloc, format!("cannot allocate {bytes} bytes"))
    })?;
    v.resize(len, T::default());
    Ok(v)
}

/// RSIs per run when `total` decoded bytes are split at the stored RSI
/// offsets for `threads` workers, about four runs each; `None` when the
/// offsets cannot serve: fewer than two workers or RSIs, not one offset per
/// RSI, or a first offset other than 0. `p` must be valid.
pub fn rsis_per_run(
    p: &SzipParams,
    offsets: &[u64],
    total: usize,
    threads: usize,
) -> Option<usize> {
    let rsi_bytes = p.rsi as usize * p.block_size as usize * p.sample_bytes();
    let n_rsi = total.div_ceil(rsi_bytes);
    let usable = threads >= 2 && n_rsi >= 2 && offsets.len() == n_rsi && offsets[0] == 0;
    usable.then(|| n_rsi.div_ceil(threads * 4))
}

/// [`decode_into`] split for `threads` workers, each decoding a run of RSIs
/// from its offset in `rsi_offsets_bits` (one entry per RSI). The runs go
/// to the current rayon pool (the caller's `ThreadPool::install`, or the
/// global pool), so the caller decides how many threads actually run. Every run must end
/// exactly where the next one starts; if any run fails or the offsets do
/// not chain, the stream is decoded sequentially instead, so the result
/// (output or error) is always the sequential one.
pub fn decode_parallel_into(
    input: &[u8],
    p: &SzipParams,
    rsi_offsets_bits: &[u64],
    out: &mut [u8],
    threads: usize,
) -> Result<()> {
    use rayon::prelude::*;
    p.validate()?;
    let sb = p.sample_bytes();
    let rsi_bytes = p.rsi as usize * p.block_size as usize * sb;
    let per = match rsis_per_run(p, rsi_offsets_bits, out.len(), threads) {
        Some(per) if out.len().is_multiple_of(sb) => per,
        _ => return decode_into(input, p, out),
    };
    let runs: Vec<Result<u64>> = out
        .par_chunks_mut(per * rsi_bytes)
        .enumerate()
        .map(|(g, chunk)| decode_samples(input, rsi_offsets_bits[g * per], p, chunk))
        .collect();
    let chained = runs.iter().enumerate().all(|(g, r)| match r {
        Ok(end) => rsi_offsets_bits
            .get((g + 1) * per)
            .is_none_or(|&next| next == *end),
        Err(_) => false,
    });
    if chained {
        Ok(())
    } else {
        decode_into(input, p, out)
    }
}

/// Reads the `codes.len()` codewords of a second-extension block that
/// starts at bit `at`, each at most [`SE_MAX`].
pub(crate) fn read_se_codes(r: &mut BitReader<'_>, codes: &mut [u32], at: u64) -> Result<()> {
    r.fs_run(codes, 0)?;
    match codes.iter().find(|&&m| m > SE_MAX) {
        Some(&m) => {
            Err(Error::corrupt(format!("szip second-extension codeword {m} too large")).at(at / 8))
        }
        None => Ok(()),
    }
}

/// Reads the count of a zero-block run that starts at bit `at` after
/// `used` samples of the RSI (the reference sample, if the block has one,
/// included) and returns how many zero samples follow; a run past the RSI
/// is an error (`spec/szip.md` §3).
pub(crate) fn zero_run(
    r: &mut BitReader<'_>,
    p: &SzipParams,
    used: usize,
    reference: bool,
    at: u64,
) -> Result<usize> {
    let j = p.block_size as usize;
    let mut blocks = r.fs()?.saturating_add(1);
    let used_blocks = (used / j) as u32;
    if blocks == ROS {
        blocks = (p.rsi - used_blocks).min(64 - used_blocks % 64);
    } else if blocks > ROS {
        blocks -= 1;
    }
    // In u64: on 32-bit targets a crafted run of blocks × j overflows usize.
    let zeros = (u64::from(blocks) * j as u64).saturating_sub(u64::from(reference));
    if used as u64 + zeros > u64::from(p.rsi) * j as u64 {
        return Err(
            Error::corrupt(format!("szip zero run of {blocks} blocks overruns the RSI")).at(at / 8),
        );
    }
    // At most the RSI's samples, which fit in memory.
    Ok(zeros as usize)
}

/// β for every second-extension codeword `m` ≤ [`SE_MAX`]: the largest
/// integer with β(β+1)/2 ≤ m.
const SE_BETA: [u8; SE_MAX as usize + 1] = {
    let mut t = [0u8; SE_MAX as usize + 1];
    let mut m = 0;
    while m <= SE_MAX as usize {
        let mut beta = 0;
        while (beta + 1) * (beta + 2) / 2 <= m {
            beta += 1;
        }
        t[m] = beta as u8;
        m += 1;
    }
    t
};

/// Second-extension codeword `m` (≤ [`SE_MAX`]) → (β, β(β+1)/2).
#[inline]
fn se_pair(m: u32) -> (u32, u32) {
    let beta = SE_BETA[m as usize] as u32;
    (beta, beta * (beta + 1) / 2)
}

/// Decodes from bit `start` until `out` is full; returns the bit position
/// after the last block read.
pub(crate) fn decode_samples(
    input: &[u8],
    start: u64,
    p: &SzipParams,
    out: &mut [u8],
) -> Result<u64> {
    decode_samples_at(input, start, p, out).map(|(end, _)| end)
}

/// [`decode_samples`], also returning how many samples of the last RSI it
/// read: whole blocks, so possibly more than `out` holds of it (the rest of
/// that RSI can then be skipped with [`crate::decode_skip::skip_rsi`]).
pub(crate) fn decode_samples_at(
    input: &[u8],
    start: u64,
    p: &SzipParams,
    out: &mut [u8],
) -> Result<(u64, usize)> {
    let sb = p.sample_bytes();
    let n = out.len() / sb;
    let mut rsis = RsiReader::new(input, start, p)?;
    let j = p.block_size as usize;
    let mut buf = zeroed::<u32>(rsis.rsi_samples.min(n.div_ceil(j) * j))?;
    let (mut written, mut used) = (0usize, 0usize);
    while written < n {
        let take = (n - written).min(rsis.rsi_samples);
        used = rsis.next_into(&mut buf, take)?;
        rsis.unmap.rsi_into(
            &mut buf[..take],
            &mut out[written * sb..(written + take) * sb],
        );
        written += take;
    }
    Ok((rsis.r.pos(), used))
}

/// Decodes `total` samples from bit `start` (an RSI start) of `input`
/// through a scratch buffer of whole RSIs, about `piece` samples, handing
/// `sink` each piece with the index of its first sample. Each sample is
/// the unsigned integer of its `bits_per_sample` low bits, as its
/// container holds it: the pieces, in order, are [`decode_into`]'s
/// containers read as unsigned integers. Returns the bit position after
/// the last block.
pub fn decode_codes_from<E: From<Error>>(
    input: &[u8],
    p: &SzipParams,
    start: u64,
    total: usize,
    piece: usize,
    sink: &mut CodeSink<'_, E>,
) -> Result<u64, E> {
    let mut rsis = RsiReader::new(input, start, p)?;
    let rsi = rsis.rsi_samples;
    let per = (piece / rsi).max(1) * rsi;
    let j = p.block_size as usize;
    let mut buf = zeroed::<u32>(per.min(total.div_ceil(j).saturating_mul(j)))?;
    let mut at = 0usize;
    while at < total {
        let len = per.min(total - at);
        for (k, chunk) in buf[..len.div_ceil(j) * j].chunks_mut(rsi).enumerate() {
            let take = (len - k * rsi).min(rsi);
            rsis.next_into(chunk, take)?;
            rsis.unmap.codes_in_place(&mut chunk[..take]);
        }
        sink(at, &buf[..len])?;
        at += len;
    }
    Ok(rsis.r.pos())
}

/// Receives each decoded piece of samples with the index of its first.
pub type CodeSink<'a, E> = dyn FnMut(usize, &[u32]) -> Result<(), E> + 'a;

/// [`RsiReader::next_portable`] compiled for each listed instruction set
/// (population and trailing-zero counts in one instruction each) and
/// chosen once at run time; every version reads the same values.
#[multiversion::multiversion(targets("x86_64+avx2+bmi1+bmi2+lzcnt+popcnt"))]
fn next_dispatch<'a>(rsis: &mut RsiReader<'a>, buf: &mut [u32], want: usize) -> Result<usize> {
    rsis.next_portable(buf, want)
}

/// Reads a stream RSI by RSI (`spec/szip.md` §3, §5).
struct RsiReader<'a> {
    r: BitReader<'a>,
    p: SzipParams,
    unmap: Unmap,
    /// Samples per RSI (`rsi · block_size`).
    rsi_samples: usize,
    /// Second-extension codewords of one block.
    se: Vec<u32>,
}

impl<'a> RsiReader<'a> {
    /// A reader from bit `start` of `input`, coded with `p`.
    fn new(input: &'a [u8], start: u64, p: &SzipParams) -> Result<Self> {
        p.validate()?;
        if p.flags & flags::PAD_RSI != 0 {
            return Err(Error::unsupported(
                "szip streams with PAD_RSI are not supported yet",
            ));
        }
        Ok(RsiReader {
            r: BitReader::new(input, start),
            p: *p,
            unmap: Unmap::new(p),
            rsi_samples: p.rsi as usize * p.block_size as usize,
            se: vec![0u32; p.block_size as usize / 2],
        })
    }

    /// Decodes the blocks of the next RSI into `buf` until at least `want`
    /// (at most the RSI's) samples are read, as stored: mapped deltas after
    /// a reference sample when preprocessed. `buf` holds `want` rounded up
    /// to whole blocks, or more. Returns how many samples were read: whole
    /// blocks (a zero run may end past `buf`), so possibly more than
    /// `want`.
    fn next_into(&mut self, buf: &mut [u32], want: usize) -> Result<usize> {
        next_dispatch(self, buf, want)
    }

    /// [`Self::next_into`] for the instruction set the crate is compiled
    /// for; the bit reader's calls are inlined into it.
    #[inline(always)]
    fn next_portable(&mut self, buf: &mut [u32], want: usize) -> Result<usize> {
        let p = &self.p;
        let r = &mut self.r;
        let j = p.block_size as usize;
        let bits = p.bits_per_sample;
        let id_len = p.id_len();
        let id_max = (1u32 << id_len) - 1;
        let pp = p.flags & flags::PREPROCESS != 0;
        let mut used = 0usize;
        while used < want {
            let at = r.pos();
            let reference = pp && used == 0;
            // Every block fills at most the `j` samples from `used`, a
            // multiple of `j` below the RSI's end.
            let block = &mut buf[used..used + j];
            let id = r.bits(id_len)?;
            if id == 0 {
                let second_extension = r.bits(1)? == 1;
                let mut o = 0;
                if reference {
                    block[0] = r.bits(bits)?;
                    o = 1;
                }
                if !second_extension {
                    // A run may go on past the buffer's end, within the RSI.
                    let zeros = zero_run(r, p, used + o, reference, at)?;
                    let end = (used + o + zeros).min(buf.len());
                    buf[used + o..end].fill(0);
                    used += o + zeros;
                    continue;
                }
                // j/2 codewords, each a pair of samples; with a reference
                // sample the first pair's first half is it.
                let codes = &mut self.se[..j / 2];
                read_se_codes(r, codes, at)?;
                for (i, &m) in codes.iter().enumerate() {
                    let (beta, ms) = se_pair(m);
                    let second = m - ms;
                    if i > 0 || !reference {
                        block[o] = beta - second;
                        o += 1;
                    }
                    block[o] = second;
                    o += 1;
                }
                used += j;
            } else if id == id_max {
                block.fill(0);
                r.add_bits_run(block, bits)?;
                used += j;
            } else {
                let k = id - 1;
                let rest = if reference {
                    block[0] = r.bits(bits)?;
                    &mut block[1..]
                } else {
                    &mut block[..]
                };
                r.fs_run(rest, k)?;
                if k > 0 {
                    r.add_bits_run(rest, k)?;
                }
                used += j;
            }
        }
        Ok(used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Preprocessed big-endian 16-bit samples in 16-sample blocks.
    fn msb16(rsi: u32) -> SzipParams {
        SzipParams {
            bits_per_sample: 16,
            block_size: 16,
            rsi,
            flags: flags::PREPROCESS | flags::MSB,
        }
    }

    #[test]
    fn the_extent_is_whole_blocks_or_a_zero_run_to_its_end() {
        let p = msb16(128);
        let wave = |n: usize| -> Vec<u8> {
            (0..n)
                .flat_map(|i| (((i as f64 * 0.07).sin() * 3000.0 + 30000.0) as u16).to_be_bytes())
                .collect()
        };
        for (n, want) in [(3233, 3248), (3248, 3248), (5, 16), (2048 + 17, 2048 + 32)] {
            let (stream, _) = crate::encode_with(&wave(n), &p, Default::default()).unwrap();
            assert_eq!(decoded_extent(&stream, &p, n).unwrap(), want, "{n} samples");
        }
        // Constant data after the reference sample: zero blocks to the end
        // of the 64-block segment, not only to the last sample's block.
        let flat = vec![0x12u8; 2 * 100];
        let (stream, _) = crate::encode_with(&flat, &p, Default::default()).unwrap();
        assert_eq!(decoded_extent(&stream, &p, 100).unwrap(), 64 * 16);
        assert_eq!(decoded_extent(&stream, &p, 0).unwrap(), 0);
    }

    #[test]
    fn pieces_concatenate_to_the_whole_decode() {
        let p = msb16(4);
        let n = 5000usize;
        let data: Vec<u8> = (0..n)
            .flat_map(|i| (((i as f64 * 0.01).sin() * 3000.0 + 30000.0) as u16).to_be_bytes())
            .collect();
        let (stream, _) = crate::encode_with(&data, &p, Default::default()).unwrap();
        let mut whole = vec![0u8; data.len()];
        decode_into(&stream, &p, &mut whole).unwrap();
        assert_eq!(whole, data);
        for piece in [1, 128, 200, 4096, 1 << 20] {
            let mut got = Vec::new();
            let mut next = 0;
            decode_pieces::<Error>(&stream, &p, data.len(), piece, &mut |at, b| {
                assert_eq!(at, next, "pieces in order");
                next += b.len();
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, whole, "piece size {piece}");
        }
        // A truncated stream is an error, in pieces as whole.
        let cut = &stream[..stream.len() / 2];
        assert!(decode_into(cut, &p, &mut whole).is_err());
        assert!(decode_pieces::<Error>(cut, &p, data.len(), 128, &mut |_, _| Ok(())).is_err());
    }

    /// Samples that jump between the ends of the range take the out-of-line
    /// path of [`Unmap`]; the round trip through the encoder must still
    /// be exact, signed and unsigned, at every container width.
    #[test]
    fn range_edges_round_trip() {
        for bits in [8u32, 12, 16, 24, 32] {
            for signed in [false, true] {
                let sb = match bits {
                    0..=8 => 1,
                    9..=16 => 2,
                    _ => 4,
                };
                let p = SzipParams {
                    bits_per_sample: bits,
                    block_size: 16,
                    rsi: 8,
                    flags: flags::PREPROCESS | flags::MSB | if signed { flags::SIGNED } else { 0 },
                };
                let max = if bits == 32 {
                    u32::MAX
                } else {
                    (1u32 << bits) - 1
                };
                let (lo, hi) = if signed {
                    (1u32 << (bits - 1), max >> 1) // most negative, most positive
                } else {
                    (0, max)
                };
                let mut x = 0x1234_5678u32;
                let samples: Vec<u32> = (0..3000u32)
                    .map(|i| {
                        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        match i % 7 {
                            0 => lo,
                            1 => hi,
                            2 => (x >> (32 - bits)) & max,
                            3 => lo.wrapping_add(1) & max,
                            4 => hi.wrapping_sub(1) & max,
                            _ => (i / 7) & max,
                        }
                    })
                    .collect();
                // Signed samples fill their container sign-extended.
                let shift = 32 - bits;
                let data: Vec<u8> = samples
                    .iter()
                    .map(|&v| {
                        if signed {
                            (((v << shift) as i32) >> shift) as u32
                        } else {
                            v
                        }
                    })
                    .flat_map(|v| v.to_be_bytes()[4 - sb..].to_vec())
                    .collect();
                let (stream, _) = crate::encode_with(&data, &p, Default::default()).unwrap();
                let mut back = vec![0u8; data.len()];
                decode_into(&stream, &p, &mut back).unwrap();
                assert_eq!(back, data, "bits {bits} signed {signed}");
            }
        }
    }

    /// The samples [`decode_codes_from`] hands on are the containers of
    /// [`decode_into`] read as unsigned integers of the sample's bits, in
    /// pieces of any size, for signed and unsigned samples, widths that do
    /// and do not fill their containers, and both byte orders; a cut
    /// stream fails as the whole decode fails.
    #[test]
    fn a_split_value_past_the_sample_bits_is_cut_as_its_container_is() {
        // 16-bit samples, no preprocessing: one block of 8 split with k = 13
        // (option id 14), the first FS codeword 10 and the rest 0, zero low
        // bits. The first value, 10 << 13, needs 17 bits; its container
        // keeps the low 16.
        let p = SzipParams {
            bits_per_sample: 16,
            block_size: 8,
            rsi: 1,
            flags: flags::MSB,
        };
        let bits: String = ["1110", "00000000001", "1111111", &"0".repeat(8 * 13)].concat();
        let stream: Vec<u8> = bits
            .as_bytes()
            .chunks(8)
            .map(|c| {
                let byte = c.iter().fold(0u8, |a, &b| (a << 1) | (b - b'0'));
                byte << (8 - c.len())
            })
            .collect();
        let mut whole = vec![0u8; 16];
        decode_into(&stream, &p, &mut whole).unwrap();
        let containers: Vec<u32> = whole
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .collect();
        assert_eq!(containers, [(10 << 13) & 0xffff, 0, 0, 0, 0, 0, 0, 0]);
        let mut got = Vec::new();
        decode_codes_from::<Error>(&stream, &p, 0, 8, 8, &mut |_, c| {
            got.extend_from_slice(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, containers);
    }

    #[test]
    fn codes_are_the_containers_read_as_unsigned() {
        for bits in [5u32, 12, 16, 20, 24, 32] {
            for extra in [
                0,
                flags::SIGNED,
                flags::MSB,
                flags::SIGNED | flags::THREE_BYTE,
            ] {
                let p = SzipParams {
                    bits_per_sample: bits,
                    block_size: 8,
                    rsi: 5,
                    flags: flags::PREPROCESS | extra,
                };
                let sb = p.sample_bytes();
                let mask = u32::MAX >> (32 - bits);
                let mut x = 0x9e37_79b9u32 ^ bits;
                let data: Vec<u8> = (0..1001u32)
                    .flat_map(|i| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        let v = if i % 97 < 40 { i * 3 } else { x };
                        // Signed samples fill their container sign-extended.
                        let v = if extra & flags::SIGNED != 0 {
                            (((v << (32 - bits)) as i32) >> (32 - bits)) as u32
                        } else {
                            v & mask
                        };
                        if p.flags & flags::MSB != 0 {
                            v.to_be_bytes()[4 - sb..].to_vec()
                        } else {
                            v.to_le_bytes()[..sb].to_vec()
                        }
                    })
                    .collect();
                let (stream, _) = crate::encode_with(&data, &p, Default::default()).unwrap();
                let mut whole = vec![0u8; data.len()];
                decode_into(&stream, &p, &mut whole).unwrap();
                let want: Vec<u32> = whole
                    .chunks_exact(sb)
                    .map(|c| {
                        let be = |a: u32, &b: &u8| (a << 8) | u32::from(b);
                        let v = if p.flags & flags::MSB != 0 {
                            c.iter().fold(0, be)
                        } else {
                            c.iter().rev().fold(0, be)
                        };
                        v & mask
                    })
                    .collect();
                let n = want.len();
                for piece in [1, 40, 41, 4096] {
                    let mut got = Vec::new();
                    let end = decode_codes_from::<Error>(&stream, &p, 0, n, piece, &mut |at, c| {
                        assert_eq!(at, got.len(), "pieces in order");
                        got.extend_from_slice(c);
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!(got, want, "bits {bits} flags {} piece {piece}", p.flags);
                    assert_eq!(end, decode_samples(&stream, 0, &p, &mut whole).unwrap());
                }
                let cut = &stream[..stream.len() / 2];
                let r = decode_codes_from::<Error>(cut, &p, 0, n, 64, &mut |_, _| Ok(()));
                assert!(r.is_err() && decode_into(cut, &p, &mut whole).is_err());
            }
        }
    }

    #[test]
    fn se_table() {
        let mut m = 0;
        for beta in 0..13u32 {
            for d1 in 0..=beta {
                assert_eq!(se_pair(m), (beta, beta * (beta + 1) / 2));
                assert_eq!(m - se_pair(m).1, d1);
                m += 1;
            }
        }
    }

    #[test]
    fn rejects_bad_params_and_truncation() {
        let p = SzipParams {
            bits_per_sample: 16,
            block_size: 16,
            rsi: 128,
            flags: flags::PREPROCESS,
        };
        let mut out = vec![0u8; 64];
        assert!(decode_into(&[], &p, &mut out).is_err());
        assert!(decode_into(&[0xff; 3], &p, &mut out).is_err());
        let bad = SzipParams {
            block_size: 12,
            ..p
        };
        assert!(decode_into(&[0; 100], &bad, &mut out).is_err());
        let bad = SzipParams {
            bits_per_sample: 33,
            ..p
        };
        assert!(decode_into(&[0; 100], &bad, &mut out).is_err());
        assert!(decode_into(&[0; 100], &p, &mut out[..63]).is_err());
    }
}
