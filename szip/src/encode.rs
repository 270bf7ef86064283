//! The AEC encoder, making the same choices as libaec so that its output is
//! bit-identical. See `spec/szip.md` §3 and §7.

use super::bitreader::bits_at;
use super::bitwriter::BitWriter;
use super::{flags, SzipParams};
use crate::error::{Error, Result};

/// Which coding choices the encoder makes (`spec/szip.md` §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SzipProfile {
    /// Exactly libaec's choices: the output is bit-identical to libaec's.
    Libaec,
    /// libaec's choices, except that a block carrying a reference sample is
    /// never coded with the second extension. libaec reads the result like
    /// any other stream; the reference's pure-Rust decoder misreads
    /// reference blocks coded with the second extension, so this is what
    /// Tensogram messages get by default.
    #[default]
    Interoperable,
}

/// Encodes whole sample containers exactly as libaec does; returns the
/// stream and the bit offset at which every reference sample interval starts.
pub fn encode(input: &[u8], p: &SzipParams) -> Result<(Vec<u8>, Vec<u64>)> {
    encode_with(input, p, SzipProfile::Libaec)
}

/// [`encode`] with a choice of [`SzipProfile`].
pub fn encode_with(
    input: &[u8],
    p: &SzipParams,
    profile: SzipProfile,
) -> Result<(Vec<u8>, Vec<u64>)> {
    encode_samples(&Containers::new(input, p)?, p, profile, 1)
}

/// Samples for the encoder, handed over one stretch at a time, so that a
/// caller producing them (simple_packing's quantiser) never builds the
/// whole container stream (`spec/szip.md` §7).
pub trait SampleSource: Sync {
    /// Number of samples.
    fn len(&self) -> usize;

    /// True when there are no samples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes samples `first..first + out.len()` (within [`len`]) into
    /// `out`, each below `2^bits_per_sample`.
    ///
    /// [`len`]: SampleSource::len
    fn fill(&self, first: usize, out: &mut [u32]);
}

/// Sample containers as [`encode`] reads them: 1, 2, 3 or 4 bytes each, in
/// the byte order the flags give, keeping the low `bits_per_sample` bits.
#[derive(Debug, Clone, Copy)]
pub struct Containers<'a> {
    input: &'a [u8],
    sb: usize,
    msb: bool,
    mask: u32,
}

impl<'a> Containers<'a> {
    /// The containers of `input` for `p`, which must be whole ones.
    pub fn new(input: &'a [u8], p: &SzipParams) -> Result<Self> {
        p.validate()?;
        let sb = p.sample_bytes();
        if !input.len().is_multiple_of(sb) {
            return Err(Error::corrupt(format!(
                "{} bytes are not whole {sb}-byte samples",
                input.len()
            )));
        }
        Ok(Containers {
            input,
            sb,
            msb: p.flags & flags::MSB != 0,
            mask: sample_mask(p.bits_per_sample),
        })
    }
}

impl SampleSource for Containers<'_> {
    fn len(&self) -> usize {
        self.input.len() / self.sb
    }

    fn fill(&self, first: usize, out: &mut [u32]) {
        let src = &self.input[first * self.sb..(first + out.len()) * self.sb];
        load(src, self.sb, self.msb, self.mask, out);
    }
}

/// The low `bits` bits set.
fn sample_mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// Encodes the samples of `src` as [`encode_with`] encodes their
/// containers, with the same bytes and offsets; with `threads` > 1 split as
/// [`encode_parallel`] splits (on the current rayon pool).
pub fn encode_samples<S: SampleSource + ?Sized>(
    src: &S,
    p: &SzipParams,
    profile: SzipProfile,
    threads: usize,
) -> Result<(Vec<u8>, Vec<u64>)> {
    encode_samples_from(src, p, profile, threads, 0).map(|(bytes, offsets, _)| (bytes, offsets))
}

/// [`encode_samples`] on one thread.
fn encode_sequential<S: SampleSource + ?Sized>(src: &S, s: &Setup) -> (Vec<u8>, Vec<u64>) {
    let c = s.encode_chunk(src, 0..s.n, 0);
    let mut out = c.bytes;
    if s.n == 0 {
        // libaec flushes one zero byte for empty input.
        out.push(0);
    }
    (out, c.offsets)
}

/// [`encode_with`] split for `threads` workers, with the same bytes
/// (`spec/pipeline.md` §6.4). The chunks go to the current rayon pool (the
/// caller's `ThreadPool::install`, or the global pool), so the caller
/// decides how many threads actually run.
///
/// Reference sample intervals are coded one after another into one bit
/// stream; the only state carried from one to the next is the split
/// parameter where the next search starts. Each worker codes a run of whole
/// RSIs starting the search from 0; when the runs are joined in order, a
/// run whose first search, started from the true carried parameter, finds
/// a different result is coded again sequentially, but only up to the first
/// RSI at whose start the two codings carry the same parameter: from there
/// on their bits agree, and the rest of the guessed run is kept. The streams
/// are then concatenated bit by bit and the RSI offsets shifted.
pub fn encode_parallel(
    input: &[u8],
    p: &SzipParams,
    profile: SzipProfile,
    threads: usize,
) -> Result<(Vec<u8>, Vec<u64>)> {
    encode_samples(&Containers::new(input, p)?, p, profile, threads)
}

/// Chunks of a parallel encode coded again, and how many of those joined
/// their guessed run before their end.
type Recoded = (usize, usize);

/// RSIs per worker chunk at least, so that joining costs little.
const MIN_CHUNK_RSIS: usize = 16;

/// [`encode_samples`] with the search start every chunk guesses; also
/// returns how many chunks were coded again and how many of those joined
/// their guessed run before their end.
fn encode_samples_from<S: SampleSource + ?Sized>(
    src: &S,
    p: &SzipParams,
    profile: SzipProfile,
    threads: usize,
    guess: u32,
) -> Result<(Vec<u8>, Vec<u64>, Recoded)> {
    let s = Setup::new(src.len(), p, profile)?;
    let rsis = s.n.div_ceil(s.rsi_samples);
    if threads < 2 || rsis < 2 * MIN_CHUNK_RSIS {
        let (bytes, offsets) = encode_sequential(src, &s);
        return Ok((bytes, offsets, (0, 0)));
    }
    let per_chunk = rsis.div_ceil(threads * 4).max(MIN_CHUNK_RSIS) * s.rsi_samples;
    let chunks: Vec<std::ops::Range<usize>> = (0..s.n)
        .step_by(per_chunk)
        .map(|a| a..(a + per_chunk).min(s.n))
        .collect();
    let coded: Vec<Chunk> = {
        use rayon::prelude::*;
        chunks
            .par_iter()
            .enumerate()
            .map(|(i, c)| s.encode_chunk(src, c.clone(), if i == 0 { 0 } else { guess }))
            .collect()
    };
    let mut out = BitConcat::with_capacity(coded.iter().map(|c| c.bytes.len()).sum::<usize>() + 8);
    let mut offsets = Vec::with_capacity(rsis);
    let mut carried = 0u32;
    let mut again = (0usize, 0usize);
    for (i, c) in coded.into_iter().enumerate() {
        if i > 0 && !c.valid_from(carried, s.kmax, guess) {
            again.0 += 1;
            // Code again from the true parameter only until the coder's
            // state at an RSI start matches the guessed run's; from there
            // the guessed run's bits are the sequential ones.
            let (head, joined_at) =
                s.encode_rsis(src, chunks[i].clone(), carried, |r, k| c.rsi_k[r] == k);
            head.append_from_rsi(0, &mut out, &mut offsets);
            match joined_at {
                Some(r) => {
                    again.1 += 1;
                    c.append_from_rsi(r, &mut out, &mut offsets);
                    carried = c.final_k.unwrap_or(carried);
                }
                None => carried = head.final_k.unwrap_or(carried),
            }
            continue;
        }
        c.append_from_rsi(0, &mut out, &mut offsets);
        carried = c.final_k.unwrap_or(carried);
    }
    Ok((out.finish(), offsets, again))
}

/// What [`encode_with`] derives from the parameters before coding.
struct Setup {
    p: SzipParams,
    profile: SzipProfile,
    j: usize,
    rsi_samples: usize,
    n: usize,
    id_len: u32,
    kmax: u32,
}

/// One run of whole RSIs, coded.
struct Chunk {
    /// The bits, zero-padded to whole bytes.
    bytes: Vec<u8>,
    /// Number of bits coded.
    bits: u64,
    /// Bit offset of each RSI within the chunk.
    offsets: Vec<u64>,
    /// The first block whose split parameter was searched, the start of
    /// that search and its result.
    first_search: Option<(Vec<u32>, u32, u32)>,
    /// The split parameter after the chunk (`None` when no block searched).
    final_k: Option<u32>,
    /// The split parameter at the start of each RSI: with it, the coder's
    /// whole state there (a zero run never spans RSIs).
    rsi_k: Vec<u32>,
}

impl Chunk {
    /// Appends the chunk's bits from the start of its RSI `r` on to `out`,
    /// and those RSIs' offsets, shifted to where they land, to `offsets`.
    fn append_from_rsi(&self, r: usize, out: &mut BitConcat, offsets: &mut Vec<u64>) {
        let from = self.offsets.get(r).copied().unwrap_or(self.bits);
        let base = out.bits;
        offsets.extend(self.offsets.iter().skip(r).map(|o| o - from + base));
        out.append_from(&self.bytes, from, self.bits);
    }

    /// True when coding with the search starting at `carried` instead of
    /// `guess` would give the same bits.
    fn valid_from(&self, carried: u32, kmax: u32, guess: u32) -> bool {
        match &self.first_search {
            None => true,
            Some(_) if carried == guess => true,
            Some((coded, _, found)) => {
                split_search(coded, coded.len() as u64, carried, kmax, false).0 == *found
            }
        }
    }
}

impl Setup {
    fn new(n: usize, p: &SzipParams, profile: SzipProfile) -> Result<Self> {
        p.validate()?;
        if p.flags & flags::PAD_RSI != 0 {
            return Err(Error::unsupported(
                "writing szip streams with PAD_RSI is not supported",
            ));
        }
        let j = p.block_size as usize;
        let id_len = p.id_len();
        // No block codes to more than its identifier plus raw samples.
        (n.div_ceil(j) as u64)
            .checked_mul(id_len as u64 + j as u64 * p.bits_per_sample as u64)
            .ok_or_else(|| Error::corrupt("szip input too large"))?;
        Ok(Setup {
            p: *p,
            profile,
            j,
            rsi_samples: p.rsi as usize * j,
            n,
            id_len,
            kmax: (1u32 << id_len).saturating_sub(3),
        })
    }

    /// Codes samples `range` of `src` (starting an RSI) with the split
    /// search starting at `start_k`.
    fn encode_chunk<S: SampleSource + ?Sized>(
        &self,
        src: &S,
        range: std::ops::Range<usize>,
        start_k: u32,
    ) -> Chunk {
        self.encode_rsis(src, range, start_k, |_, _| false).0
    }

    /// [`Setup::encode_chunk`], stopping before the first RSI `r` > 0 for
    /// which `stop(r, split parameter there)` holds; returns the RSIs coded
    /// and where it stopped.
    fn encode_rsis<S: SampleSource + ?Sized>(
        &self,
        src: &S,
        range: std::ops::Range<usize>,
        start_k: u32,
        stop: impl Fn(usize, u32) -> bool,
    ) -> (Chunk, Option<usize>) {
        let j = self.j;
        let n = range.len();
        let bound_bits =
            n.div_ceil(j) as u64 * (self.id_len as u64 + j as u64 * self.p.bits_per_sample as u64);
        let mut enc = Encoder {
            w: BitWriter::with_capacity(usize::try_from(bound_bits / 8 + 8).unwrap_or(usize::MAX)),
            bits: self.p.bits_per_sample,
            j,
            id_len: self.id_len,
            kmax: self.kmax,
            k: start_k,
            se_with_reference: self.profile == SzipProfile::Libaec,
            zero_blocks: 0,
            zero_ref: None,
            first_search: None,
        };
        let pre = Preprocessor::new(&self.p);
        let mut raw = vec![0u32; self.rsi_samples.min(n.next_multiple_of(j))];
        let mut mapped = vec![0u32; if pre.is_some() { raw.len() } else { 0 }];
        let mut offsets = Vec::with_capacity(n.div_ceil(self.rsi_samples));
        let mut rsi_k = Vec::with_capacity(offsets.capacity());
        let mut stopped = None;
        let starts = range.clone().step_by(self.rsi_samples);
        for (r, first) in starts.enumerate() {
            if r > 0 && stop(r, enc.k) {
                stopped = Some(r);
                break;
            }
            offsets.push(enc.w.bit_pos());
            rsi_k.push(enc.k);
            let count = (range.end - first).min(self.rsi_samples);
            src.fill(first, &mut raw[..count]);
            // A short final RSI is padded to whole blocks by repeating its last
            // sample (whose residuals are then zero), as libaec does.
            let padded = count.next_multiple_of(j);
            let last = raw[count - 1];
            raw[count..padded].fill(last);
            code_rsi(&mut enc, pre.as_ref(), &mut raw[..padded], &mut mapped);
        }
        let bits = enc.w.bit_pos();
        let final_k = enc.first_search.as_ref().map(|_| enc.k);
        let chunk = Chunk {
            bytes: enc.w.finish(),
            bits,
            offsets,
            first_search: enc.first_search,
            final_k,
            rsi_k,
        };
        (chunk, stopped)
    }
}

/// Maps one RSI's samples `raw` (whole blocks) if `pre` is given, into
/// `mapped`, and codes them. Compiled for each listed instruction set and
/// chosen once at run time, so that the block loops vectorise; every
/// version writes the same bits.
#[multiversion::multiversion(targets("x86_64+avx2+bmi1+bmi2+lzcnt+popcnt"))]
fn code_rsi(enc: &mut Encoder, pre: Option<&Preprocessor>, raw: &mut [u32], mapped: &mut [u32]) {
    match pre {
        Some(pre) => {
            let mapped = &mut mapped[..raw.len()];
            pre.run(raw, mapped);
            enc.rsi(mapped, Some(raw[0]));
        }
        None => enc.rsi(raw, None),
    }
}

/// Bit streams appended one after another, MSB first.
struct BitConcat {
    out: Vec<u8>,
    /// Bits written.
    bits: u64,
}

impl BitConcat {
    fn with_capacity(cap: usize) -> Self {
        BitConcat {
            out: Vec::with_capacity(cap),
            bits: 0,
        }
    }

    /// Appends bits `from..to` of `src` (which holds them), eight bytes at
    /// a time.
    fn append_from(&mut self, src: &[u8], from: u64, to: u64) {
        if to <= from {
            return;
        }
        let used = (self.bits % 8) as u32;
        let start = (self.bits / 8) as usize;
        let kept = if used > 0 {
            self.out.pop().unwrap_or(0)
        } else {
            0
        };
        let len = to - from;
        let total = (used as u64 + len).div_ceil(8) as usize;
        self.out.resize(start + total, 0);
        let dst = &mut self.out[start..];
        // Output word g holds the last `used` bits of source word g − 1
        // (the kept bits for g = 0) and then the first 64 − used of word g.
        let mut carry = (kept as u64) << 56;
        let mut next = |g: usize| {
            let cur = bits_at(src, from + 64 * g as u64);
            let w = if used == 0 {
                cur
            } else {
                carry | (cur >> used)
            };
            carry = if used == 0 { 0 } else { cur << (64 - used) };
            w.to_be_bytes()
        };
        let mut words = dst.chunks_exact_mut(8);
        let mut g = 0;
        for out in &mut words {
            if let Some(out) = out.first_chunk_mut::<8>() {
                *out = next(g);
            }
            g += 1;
        }
        let rest = words.into_remainder();
        if !rest.is_empty() {
            let n = rest.len();
            rest.copy_from_slice(&next(g)[..n]);
        }
        self.bits += len;
        let tail = (self.bits % 8) as u32;
        if tail > 0 {
            if let Some(last) = dst.last_mut() {
                *last &= 0xff << (8 - tail);
            }
        }
    }

    fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Reads `out.len()` sample containers, keeping the low `mask` bits.
fn load(src: &[u8], sb: usize, msb: bool, mask: u32, out: &mut [u32]) {
    match (sb, msb) {
        (1, _) => {
            for (o, &b) in out.iter_mut().zip(src) {
                *o = b as u32 & mask;
            }
        }
        (2, true) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(2)) {
                *o = u16::from_be_bytes([c[0], c[1]]) as u32 & mask;
            }
        }
        (2, false) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(2)) {
                *o = u16::from_le_bytes([c[0], c[1]]) as u32 & mask;
            }
        }
        (3, true) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(3)) {
                *o = u32::from_be_bytes([0, c[0], c[1], c[2]]) & mask;
            }
        }
        (3, false) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(3)) {
                *o = u32::from_le_bytes([c[0], c[1], c[2], 0]) & mask;
            }
        }
        (_, true) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = u32::from_be_bytes([c[0], c[1], c[2], c[3]]) & mask;
            }
        }
        (_, false) => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) & mask;
            }
        }
    }
}

/// Unit-delay prediction followed by the CCSDS mapping of residuals onto
/// 0..=xmax (`spec/szip.md` §4, run forwards).
struct Preprocessor {
    signed: bool,
    bits: u32,
}

impl Preprocessor {
    fn new(p: &SzipParams) -> Option<Self> {
        (p.flags & flags::PREPROCESS != 0).then_some(Preprocessor {
            signed: p.flags & flags::SIGNED != 0,
            bits: p.bits_per_sample,
        })
    }

    /// Maps one RSI; `d[0]` stands for the reference sample and is 0.
    ///
    /// A signed sample maps as its unsigned offset `x + 2^(n−1)` does (both
    /// the residual and θ shift with it), and that offset is `x` with bit
    /// n − 1 flipped: one unsigned loop of selects, which vectorises, serves
    /// both.
    #[inline(always)]
    fn run(&self, x: &[u32], d: &mut [u32]) {
        d[0] = 0;
        let flip = if self.signed {
            1u32 << (self.bits - 1)
        } else {
            0
        };
        let xmax = sample_mask(self.bits);
        for ((o, &cur), &prev) in d[1..].iter_mut().zip(&x[1..]).zip(x) {
            *o = map_residual(cur ^ flip, prev ^ flip, xmax);
        }
    }
}

/// The CCSDS mapping of `cur` following `prev`, both in `0..=xmax`
/// (`spec/szip.md` §7). In range, `2δ ≤ xmax`, so nothing overflows.
#[inline(always)]
fn map_residual(cur: u32, prev: u32, xmax: u32) -> u32 {
    if cur >= prev {
        let delta = cur - prev;
        if delta <= prev {
            2 * delta
        } else {
            cur
        }
    } else {
        let delta = prev - cur;
        if delta <= xmax - prev {
            2 * delta - 1
        } else {
            xmax - cur
        }
    }
}

struct Encoder {
    w: BitWriter,
    bits: u32,
    j: usize,
    id_len: u32,
    kmax: u32,
    /// The split parameter of the last assessed block: the next search
    /// starts from it.
    k: u32,
    /// Whether a block carrying a reference sample may use the second extension.
    se_with_reference: bool,
    /// Pending zero blocks not yet written.
    zero_blocks: u32,
    /// Reference sample of the first pending zero block, if it has one.
    zero_ref: Option<u32>,
    /// The first searched block, the search's start and its result.
    first_search: Option<(Vec<u32>, u32, u32)>,
}

impl Encoder {
    /// Codes one RSI of whole blocks (the last may be short). `reference`
    /// is the raw first sample when preprocessing.
    ///
    /// The standard block sizes get a copy of the block loop each, with the
    /// size a constant, so the per-block sums are unrolled into whole
    /// vectors instead of running as scalar loops.
    #[inline(always)]
    fn rsi(&mut self, values: &mut [u32], reference: Option<u32>) {
        let blocks = values.len() / self.j;
        match self.j {
            8 => self.blocks(sized::<8>(values), blocks, reference),
            16 => self.blocks(sized::<16>(values), blocks, reference),
            32 => self.blocks(sized::<32>(values), blocks, reference),
            64 => self.blocks(sized::<64>(values), blocks, reference),
            j => self.blocks(values.chunks_exact_mut(j), blocks, reference),
        }
    }

    /// Codes the `blocks` blocks of an RSI (see [`Encoder::rsi`]).
    #[inline(always)]
    fn blocks<'a>(
        &mut self,
        all: impl Iterator<Item = &'a mut [u32]>,
        blocks: usize,
        reference: Option<u32>,
    ) {
        for (b, block) in all.enumerate() {
            let r = if b == 0 { reference } else { None };
            // A block with a reference holds the placeholder 0 first, so
            // its statistics are those of its coded values.
            let stats = BlockStats::of(block);
            if stats.max == 0 {
                self.zero_blocks += 1;
                if self.zero_blocks == 1 {
                    self.zero_ref = r;
                }
                // A run is written at the end of the RSI or of a 64-block
                // segment; reaching either, a run of five or more is ROS.
                if b + 1 == blocks || (b + 1).is_multiple_of(64) {
                    self.flush_zero_run(self.zero_blocks > 4);
                }
                continue;
            }
            if self.zero_blocks > 0 {
                self.flush_zero_run(false);
            }
            self.code_block(block, r, &stats);
        }
    }

    #[inline(always)]
    fn flush_zero_run(&mut self, ros: bool) {
        self.w.put(0, self.id_len + 1);
        if let Some(s) = self.zero_ref {
            self.w.put(s, self.bits);
        }
        let fs = if ros {
            4
        } else if self.zero_blocks >= 5 {
            self.zero_blocks
        } else {
            self.zero_blocks - 1
        };
        self.w.put_fs(fs as u64);
        self.zero_blocks = 0;
        self.zero_ref = None;
    }

    #[inline(always)]
    fn code_block(&mut self, block: &mut [u32], reference: Option<u32>, stats: &BlockStats) {
        let first = usize::from(reference.is_some());
        let j = block.len();
        let uncomp = (j - first) as u64 * self.bits as u64;
        let split = if self.id_len > 1 {
            self.assess_split(block, first, stats)
        } else {
            u64::MAX
        };
        // The second extension matters only if it could be shorter than
        // split (when split beats raw) or not longer than raw (otherwise);
        // when its lower bound rules that out it counts as unbounded, which
        // makes the same choice.
        let needed_below = if split < uncomp { split } else { uncomp - 1 };
        let se = if reference.is_some() && !self.se_with_reference
            || stats.second_extension_at_least(j) > needed_below
        {
            u64::MAX
        } else {
            assess_second_extension(block, uncomp)
        };
        if split < uncomp {
            if split < se {
                self.put_split(block, reference, split)
            } else {
                self.put_second_extension(block, reference)
            }
        } else if uncomp <= se {
            self.put_uncompressed(block, reference)
        } else {
            self.put_second_extension(block, reference)
        }
    }

    /// Length of the block coded with the best split parameter, searching
    /// from the previous block's parameter as libaec does.
    #[inline(always)]
    fn assess_split(&mut self, block: &[u32], first: usize, stats: &BlockStats) -> u64 {
        let start = self.k;
        let narrow = stats.narrow(block.len());
        // The placeholder 0 of a reference adds nothing to the sums, so
        // they run over the whole block, in full vectors.
        let m = (block.len() - first) as u64;
        let (k, len) = split_search(block, m, start, self.kmax, narrow);
        if self.first_search.is_none() {
            self.first_search = Some((block[first..].to_vec(), start, k));
        }
        self.k = k;
        len
    }

    #[inline(always)]
    fn put_split(&mut self, block: &[u32], reference: Option<u32>, split_len: u64) {
        let k = self.k;
        self.w.put(k + 1, self.id_len);
        let first = self.put_reference(reference);
        let coded = &block[first..];
        // The split length is the FS part plus k + 1 bits per value.
        let fs_bits = split_len - coded.len() as u64 * k as u64;
        self.w.put_fs_block(coded, k, fs_bits);
        if k > 0 {
            self.w.put_bits_run(coded, k);
        }
    }

    #[inline(always)]
    fn put_second_extension(&mut self, block: &[u32], reference: Option<u32>) {
        self.w.put(1, self.id_len + 1);
        self.put_reference(reference);
        self.w.put_fs_run(block.chunks_exact(2).map(|pair| {
            let d = pair[0] as u64 + pair[1] as u64;
            d * (d + 1) / 2 + pair[1] as u64
        }));
    }

    #[inline(always)]
    fn put_uncompressed(&mut self, block: &mut [u32], reference: Option<u32>) {
        self.w.put((1 << self.id_len) - 1, self.id_len);
        if let Some(s) = reference {
            block[0] = s;
        }
        self.w.put_bits_run(block, self.bits);
    }

    #[inline(always)]
    fn put_reference(&mut self, reference: Option<u32>) -> usize {
        match reference {
            Some(s) => {
                self.w.put(s, self.bits);
                1
            }
            None => 0,
        }
    }
}

/// The blocks of `values` as slices of the constant length `J`.
#[inline(always)]
fn sized<const J: usize>(values: &mut [u32]) -> impl Iterator<Item = &mut [u32]> {
    values.as_chunks_mut::<J>().0.iter_mut().map(|b| &mut b[..])
}

/// Sum and largest of a block's values, in one pass that vectorises.
struct BlockStats {
    sum: u64,
    max: u32,
}

impl BlockStats {
    #[inline]
    fn of(block: &[u32]) -> Self {
        let max = block.iter().copied().max().unwrap_or(0);
        // In 32-bit lanes when the sum fits them, as it mostly does.
        let sum = if (BlockStats { sum: 0, max }).narrow(block.len()) {
            block.iter().sum::<u32>() as u64
        } else {
            block.iter().map(|&v| v as u64).sum()
        };
        BlockStats { sum, max }
    }

    /// True when sums over the block fit in 32 bits.
    #[inline(always)]
    fn narrow(&self, len: usize) -> bool {
        (self.max as u64) * (len as u64) < 1 << 32
    }

    /// A lower bound of the second extension's length for a block of `j`
    /// values with these statistics: of `1 + Σ (d(d+1)/2 + b + 1)` over
    /// the pairs (d = a + b), `Σ d` is the sum, the pair holding the
    /// largest value adds at least `max(max − 1)/2` more, and `b ≥ 0`.
    #[inline]
    fn second_extension_at_least(&self, j: usize) -> u64 {
        let m = self.max as u64;
        1 + (j / 2) as u64 + self.sum + m * m.saturating_sub(1) / 2
    }
}

/// The best split parameter for `coded` and the block's length with it,
/// searching from `start` as libaec does: the length as a function of k has
/// a single minimum, so the search stops as soon as the length grows, or
/// when the FS part shows that moving on cannot win.
#[inline(always)]
///
/// With `narrow`, the caller knows that the values sum below 2^32, and the
/// sums are taken in 32-bit lanes.
///
/// `values` are the `n` coded values, possibly after zeros, which change
/// no sum.
fn split_search(values: &[u32], n: u64, start: u32, kmax: u32, narrow: bool) -> (u32, u64) {
    let mut k = start;
    let mut k_min = k;
    let mut len_min = u64::MAX;
    let mut no_turn = k == 0;
    let mut up = true;
    loop {
        let fs_len = if narrow {
            values.iter().map(|&v| v >> k).sum::<u32>() as u64
        } else {
            values.iter().map(|&v| (v >> k) as u64).sum()
        };
        let len = fs_len + n * (k as u64 + 1);
        if len < len_min {
            if len_min < u64::MAX {
                no_turn = true;
            }
            len_min = len;
            k_min = k;
            if up {
                if fs_len < n || k >= kmax {
                    if no_turn {
                        break;
                    }
                    k = start - 1;
                    up = false;
                    no_turn = true;
                } else {
                    k += 1;
                }
            } else {
                if fs_len >= n || k == 0 {
                    break;
                }
                k -= 1;
            }
        } else {
            if no_turn {
                break;
            }
            k = start - 1;
            up = false;
            no_turn = true;
        }
    }
    (k_min, len_min)
}

/// Length of the block coded with the second extension, or `u64::MAX` once
/// it exceeds `limit`. The first pair of a block with a reference sample
/// pairs the placeholder 0 with the first residual.
#[inline(always)]
fn assess_second_extension(block: &[u32], limit: u64) -> u64 {
    let mut len = 1u64;
    for pair in block.chunks_exact(2) {
        let d = pair[0] as u64 + pair[1] as u64;
        len = len.saturating_add(d.saturating_mul(d + 1) / 2 + pair[1] as u64 + 1);
        if len > limit {
            return u64::MAX;
        }
    }
    len
}

#[cfg(test)]
mod parallel_tests {
    use super::*;

    fn containers(v: &[u32], sb: usize) -> Vec<u8> {
        v.iter()
            .flat_map(|x| x.to_be_bytes()[4 - sb..].to_vec())
            .collect()
    }

    /// Smooth stretches, noise, constant runs (zero blocks) and jumps, so
    /// that split parameters vary from RSI to RSI.
    fn samples(n: usize, bits: u32, seed: u32) -> Vec<u32> {
        let max = ((1u64 << bits) - 1) as f64;
        let mut s = seed | 1;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let phase = (i / 3000) % 4;
                let v = match phase {
                    0 => 0.5 + 0.4 * (i as f64 * 1e-3).sin(),
                    1 => (s % 1000) as f64 / 1000.0,
                    2 => 0.25,
                    _ => 0.5 + 0.3 * (i as f64 * 0.05).sin() + (s % 7) as f64 * 1e-3,
                };
                (v.clamp(0.0, 1.0) * max) as u32
            })
            .collect()
    }

    #[test]
    fn parallel_bytes_and_offsets_equal_sequential() {
        let (mut recoded, mut joined) = (0, 0);
        for (bits, flags_extra, rsi, block) in [
            (16u32, flags::MSB | flags::PREPROCESS, 4u32, 16u32),
            (24, flags::MSB | flags::THREE_BYTE | flags::PREPROCESS, 2, 8),
            (8, flags::PREPROCESS, 3, 32),
            (12, flags::MSB, 1, 16),
            (32, flags::MSB | flags::PREPROCESS, 2, 64),
        ] {
            let p = SzipParams {
                bits_per_sample: bits,
                block_size: block,
                rsi,
                flags: flags_extra,
            };
            for n in [100_000usize, 100_003, 40_960] {
                let v = samples(n, bits, n as u32 ^ bits);
                let input = containers(&v, p.sample_bytes());
                let src = Containers::new(&input, &p).unwrap();
                for profile in [SzipProfile::Libaec, SzipProfile::Interoperable] {
                    let want = encode_with(&input, &p, profile).unwrap();
                    for threads in [2usize, 3, 7] {
                        for guess in [0u32, 1, 5, p.id_len().pow(2)] {
                            let (bytes, offsets, again) =
                                encode_samples_from(&src, &p, profile, threads, guess).unwrap();
                            recoded += again.0;
                            joined += again.1;
                            assert!(
                                bytes == want.0,
                                "bits {bits} n {n} threads {threads} guess {guess}"
                            );
                            assert_eq!(offsets, want.1, "bits {bits} n {n}");
                        }
                    }
                }
            }
        }
        assert!(recoded > 0, "some chunk guessed wrong and was coded again");
        // A chunk is coded again only until it joins the guessed run.
        assert!(
            joined > 0 && joined < recoded,
            "{joined} of {recoded} joined"
        );
    }

    /// [`BitConcat`] against bit-by-bit copying, at every alignment.
    #[test]
    fn bit_concatenation_matches_bitwise_copy() {
        let bit = |b: &[u8], i: u64| (b[(i / 8) as usize] >> (7 - i % 8)) & 1;
        let mut x = 0x9e37_79b9u32;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..300 {
            let mut c = BitConcat::with_capacity(0);
            let mut want: Vec<u8> = Vec::new();
            for _ in 0..4 {
                let src: Vec<u8> = (0..rand() % 40).map(|_| rand() as u8).collect();
                let len = src.len() as u64 * 8;
                let from = if len == 0 { 0 } else { rand() as u64 % len };
                let to = from
                    + if len == from {
                        0
                    } else {
                        rand() as u64 % (len - from + 1)
                    };
                c.append_from(&src, from, to);
                want.extend((from..to).map(|i| bit(&src, i)));
            }
            assert_eq!(c.bits, want.len() as u64);
            let got = c.finish();
            assert_eq!(got.len(), want.len().div_ceil(8));
            for (i, &b) in want.iter().enumerate() {
                assert_eq!(bit(&got, i as u64), b, "bit {i}");
            }
            let pad = got.len() as u64 * 8;
            assert!(
                (want.len() as u64..pad).all(|i| bit(&got, i) == 0),
                "padding is zero"
            );
        }
    }

    #[test]
    fn bit_concatenation_shifts_every_stream() {
        let mut c = BitConcat::with_capacity(0);
        c.append_from(&[0b1010_0000], 0, 3);
        c.append_from(&[0b1111_1111, 0b1000_0000], 0, 9);
        c.append_from(&[], 0, 0);
        c.append_from(&[0b0100_0000], 0, 2);
        assert_eq!(c.bits, 14);
        c.append_from(&[0b0001_1011, 0b0100_0000], 3, 10);
        c.append_from(&[0b1100_0000], 0, 2);
        assert_eq!(c.bits, 23);
        assert_eq!(c.finish(), vec![0b1011_1111, 0b1111_0111, 0b0110_1110]);
    }
}

#[cfg(test)]
mod source_tests {
    use super::*;

    /// Samples held as integers: what a fused producer hands the coder.
    struct Samples<'a>(&'a [u32]);

    impl SampleSource for Samples<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }

        fn fill(&self, first: usize, out: &mut [u32]) {
            out.copy_from_slice(&self.0[first..first + out.len()]);
        }
    }

    /// Containers of `v` as `p` lays them out.
    fn containers(v: &[u32], p: &SzipParams) -> Vec<u8> {
        let sb = p.sample_bytes();
        let msb = p.flags & flags::MSB != 0;
        v.iter()
            .flat_map(|x| {
                let b = if msb {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                };
                if msb {
                    b[4 - sb..].to_vec()
                } else {
                    b[..sb].to_vec()
                }
            })
            .collect()
    }

    /// Smooth stretches, jumps and constant runs within `bits` bits.
    fn samples(n: usize, bits: u32, seed: u32) -> Vec<u32> {
        let mask = sample_mask(bits);
        let mut s = seed | 1;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let v = match (i / 700) % 3 {
                    0 => (i as u32).wrapping_mul(3) / 7 + (s % 3),
                    1 => s,
                    _ => 5,
                };
                v & mask
            })
            .collect()
    }

    #[test]
    fn samples_code_as_their_containers_do() {
        let mut cases = 0;
        for bits in 1..=32u32 {
            let mut flag_sets = vec![
                0,
                flags::MSB,
                flags::PREPROCESS,
                flags::PREPROCESS | flags::MSB,
                flags::PREPROCESS | flags::SIGNED,
                flags::PREPROCESS | flags::SIGNED | flags::MSB | flags::NOT_ENFORCE,
            ];
            if (17..=24).contains(&bits) {
                flag_sets.push(flags::THREE_BYTE | flags::MSB | flags::PREPROCESS);
                flag_sets.push(flags::THREE_BYTE | flags::PREPROCESS | flags::SIGNED);
            }
            if bits <= 4 {
                flag_sets.push(flags::RESTRICTED | flags::PREPROCESS);
            }
            for f in flag_sets {
                let (block, rsi) = if f & flags::NOT_ENFORCE != 0 {
                    (10, 3)
                } else {
                    (8 << (bits % 4), 1 + bits % 3)
                };
                let p = SzipParams {
                    bits_per_sample: bits,
                    block_size: block,
                    rsi,
                    flags: f,
                };
                let rsi_samples = (block * rsi) as usize;
                let many = 40 * rsi_samples + 3;
                for n in [
                    0,
                    1,
                    7,
                    rsi_samples - 1,
                    rsi_samples + 1,
                    3 * rsi_samples,
                    many,
                ] {
                    let v = samples(n, bits, bits * 31 + n as u32);
                    let input = containers(&v, &p);
                    for profile in [SzipProfile::Libaec, SzipProfile::Interoperable] {
                        let want = encode_with(&input, &p, profile).unwrap();
                        for threads in [1, 3] {
                            let got = encode_samples(&Samples(&v), &p, profile, threads).unwrap();
                            assert!(got == want, "bits {bits} flags {f} n {n} threads {threads}");
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cases > 2000, "{cases} cases");
    }
}
