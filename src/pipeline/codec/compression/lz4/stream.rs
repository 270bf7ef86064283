//! A streaming lz4 block encoder: the bytes of
//! `lz4_flex::block::compress_prepend_size` (lz4_flex 0.11, which the
//! reference writes, `spec/pipeline.md` §4.2), handed to a sink a piece at
//! a time instead of built in one vector, with progress after each 4 MiB
//! of input scanned (§6.7).
//!
//! The coder is lz4_flex's greedy block coder: a 4096-slot table of the
//! last position of each hashed 4-byte sequence (16-bit slots hashing 4
//! bytes below 65 535 input bytes, 32-bit slots hashing 8 bytes above),
//! a search step growing by one every 32 misses, matches extended backwards
//! to the pending literals and forwards to 6 bytes before the end, the
//! position two bytes before a match's end hashed again, and the last
//! 12 bytes always literals. A sequence is written once its match is known,
//! so only its token and lengths are buffered; the literals are copied
//! from the input as the sequence is written.

use crate::error::{Error, Result};
use crate::pipeline::codec::stage::PieceSink;

const MINMATCH: usize = 4;
/// The last match must start this many bytes before the end.
const MFLIMIT: usize = 12;
/// Matches stop this many bytes before the end.
const END_OFFSET: usize = 6;
const MAX_DISTANCE: usize = 0xFFFF;
/// The search step grows by one every `1 << STEP_SHIFT` misses.
const STEP_SHIFT: usize = 5;
const TABLE_SLOTS: usize = 4096;
/// Input below this many bytes uses the 16-bit table.
const SMALL_INPUT: usize = 0xFFFF;
/// Input scanned between progress reports.
pub(crate) const REPORT_BYTES: usize = 4 << 20;
/// Output gathered before it is handed to the sink.
const FLUSH_BYTES: usize = 256 << 10;
/// Literals longer than this are handed to the sink straight from the
/// input, in pieces of [`REPORT_BYTES`].
const DIRECT_LITERALS: usize = 64 << 10;

/// The size-prefixed lz4 block of `input`, as
/// `lz4_flex::block::compress_prepend_size` writes it, through `sink`.
/// Inputs of 4 GiB or more are refused: the prefix cannot hold their size.
pub(crate) fn compress_prepend_size_to(input: &[u8], sink: &mut dyn PieceSink) -> Result<()> {
    let len = u32::try_from(input.len()).map_err(|_| {
        Error::invalid_input(format!(
            "lz4 cannot code {} bytes: its size prefix holds at most {} bytes",
            input.len(),
            u32::MAX
        ))
    })?;
    let mut out = Out {
        buf: Vec::with_capacity(FLUSH_BYTES + 64),
        sink,
    };
    out.buf.extend_from_slice(&len.to_le_bytes());
    if input.len() < SMALL_INPUT {
        compress::<SmallTable>(input, &mut out)?;
    } else {
        compress::<LargeTable>(input, &mut out)?;
    }
    out.flush()?;
    out.sink.progress(input.len() as u64, input.len() as u64);
    Ok(())
}

/// Output gathered for the sink.
struct Out<'s> {
    buf: Vec<u8>,
    sink: &'s mut dyn PieceSink,
}

impl Out<'_> {
    fn flush(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.sink.put(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// An lz4 length continuation: 255s, then the rest.
    fn length(&mut self, mut n: usize) {
        while n >= 0xFF {
            self.buf.push(0xFF);
            n -= 0xFF;
        }
        self.buf.push(n as u8);
    }

    /// Literals, gathered when short, else handed over from the input.
    fn literals(&mut self, lits: &[u8], scanned: usize, released: usize) -> Result<()> {
        if lits.len() <= DIRECT_LITERALS {
            self.buf.extend_from_slice(lits);
            return Ok(());
        }
        self.flush()?;
        for piece in lits.chunks(REPORT_BYTES) {
            self.sink.put(piece)?;
            self.sink.progress(scanned as u64, released as u64);
        }
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }
}

/// The high nibble of a token for `n` literals (15 meaning "and more").
fn nibble(n: usize) -> u8 {
    n.min(0xF) as u8
}

/// The last literals: a token, its length continuation, the bytes.
fn last_literals(out: &mut Out<'_>, input: &[u8], start: usize) -> Result<()> {
    let n = input.len() - start;
    out.buf.push(nibble(n) << 4);
    if n >= 0xF {
        out.length(n - 0xF);
    }
    out.literals(&input[start..], input.len(), input.len())
}

fn u32_at(input: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&input[at..at + 4]);
    u32::from_ne_bytes(b)
}

/// The match table: the last position seen for each hash slot.
trait Table {
    fn new() -> Self;
    fn hash_at(input: &[u8], at: usize) -> usize;
    fn get(&self, hash: usize) -> usize;
    fn put(&mut self, hash: usize, at: usize);
}

/// 16-bit positions and a 4-byte hash, for inputs below 65 535 bytes.
struct SmallTable(Box<[u16; TABLE_SLOTS]>);

impl Table for SmallTable {
    fn new() -> Self {
        SmallTable(Box::new([0; TABLE_SLOTS]))
    }
    fn hash_at(input: &[u8], at: usize) -> usize {
        (u32_at(input, at).wrapping_mul(2_654_435_761) >> 16) as usize
    }
    fn get(&self, hash: usize) -> usize {
        self.0[hash >> 4] as usize
    }
    fn put(&mut self, hash: usize, at: usize) {
        self.0[hash >> 4] = at as u16;
    }
}

/// 32-bit positions, hashing a machine word (8 bytes on 64-bit targets).
struct LargeTable(Box<[u32; TABLE_SLOTS]>);

impl Table for LargeTable {
    fn new() -> Self {
        LargeTable(Box::new([0; TABLE_SLOTS]))
    }
    #[cfg(target_pointer_width = "64")]
    fn hash_at(input: &[u8], at: usize) -> usize {
        let mut b = [0u8; 8];
        b.copy_from_slice(&input[at..at + 8]);
        let word = u64::from_ne_bytes(b);
        let prime: u64 = if cfg!(target_endian = "little") {
            889_523_592_379
        } else {
            11_400_714_785_074_694_791
        };
        ((word << 24).wrapping_mul(prime) >> 48) as usize
    }
    #[cfg(not(target_pointer_width = "64"))]
    fn hash_at(input: &[u8], at: usize) -> usize {
        SmallTable::hash_at(input, at)
    }
    fn get(&self, hash: usize) -> usize {
        self.0[hash >> 4] as usize
    }
    fn put(&mut self, hash: usize, at: usize) {
        self.0[hash >> 4] = at as u32;
    }
}

/// Bytes equal from `cur` and `cand` (`cand < cur`), stopping
/// [`END_OFFSET`] bytes before the end of `input`.
fn common_length(input: &[u8], cur: usize, cand: usize) -> usize {
    let end = input.len() - END_OFFSET;
    let (a, b) = (&input[cur..end], &input[cand..cand + (end - cur)]);
    let mut n = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = u64::from_le_bytes(x.try_into().unwrap_or_default())
            ^ u64::from_le_bytes(y.try_into().unwrap_or_default());
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + a[n..]
        .iter()
        .zip(&b[n..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The block (after the prefix) of `input`.
fn compress<T: Table>(input: &[u8], out: &mut Out<'_>) -> Result<()> {
    if input.len() <= MFLIMIT {
        return last_literals(out, input, 0);
    }
    let mut table = T::new();
    let end_check = input.len() - MFLIMIT;
    let mut next_report = REPORT_BYTES;
    let mut literal_start = 0;
    table.put(T::hash_at(input, 0), 0);
    let mut cur = 1;
    loop {
        let mut misses = 1 << STEP_SHIFT;
        let mut next = cur;
        // Search for a match; a report is due when `cur` passes `limit`.
        let mut limit = end_check.min(next_report);
        let mut cand;
        loop {
            let step = misses >> STEP_SHIFT;
            misses += 1;
            cur = next;
            next += step;
            if cur > limit {
                if cur > end_check {
                    return last_literals(out, input, literal_start);
                }
                out.sink
                    .progress(cur as u64, cur.saturating_sub(MAX_DISTANCE + 1) as u64);
                next_report = cur + REPORT_BYTES;
                limit = end_check.min(next_report);
            }
            let hash = T::hash_at(input, cur);
            cand = table.get(hash);
            table.put(hash, cur);
            if cur - cand <= MAX_DISTANCE && u32_at(input, cand) == u32_at(input, cur) {
                break;
            }
        }
        while cand > 0 && cur > literal_start && input[cur - 1] == input[cand - 1] {
            cur -= 1;
            cand -= 1;
        }
        let lit_len = cur - literal_start;
        let offset = (cur - cand) as u16;
        let dup = common_length(input, cur + MINMATCH, cand + MINMATCH);
        let lits = literal_start..cur;
        cur += MINMATCH + dup;
        table.put(T::hash_at(input, cur - 2), cur - 2);
        out.buf.push(nibble(lit_len) << 4 | nibble(dup));
        if lit_len >= 0xF {
            out.length(lit_len - 0xF);
        }
        out.literals(&input[lits], cur, cur.saturating_sub(MAX_DISTANCE + 1))?;
        out.buf.extend_from_slice(&offset.to_le_bytes());
        if dup >= 0xF {
            out.length(dup - 0xF);
        }
        out.maybe_flush()?;
        literal_start = cur;
    }
}

#[cfg(all(test, feature = "lz4"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Gathers the output and the reports.
    #[derive(Default)]
    struct Gather {
        out: Vec<u8>,
        reports: Vec<(u64, u64)>,
    }

    impl PieceSink for Gather {
        fn put(&mut self, bytes: &[u8]) -> Result<()> {
            self.out.extend_from_slice(bytes);
            Ok(())
        }
        fn progress(&mut self, scanned: u64, released: u64) {
            self.reports.push((scanned, released));
        }
    }

    fn streamed(input: &[u8]) -> Gather {
        let mut g = Gather::default();
        compress_prepend_size_to(input, &mut g).unwrap();
        g
    }

    fn assert_same(input: &[u8]) {
        let want = lz4_flex::block::compress_prepend_size(input);
        let got = streamed(input).out;
        assert_eq!(
            got.len(),
            want.len(),
            "length for {} input bytes",
            input.len()
        );
        assert!(got == want, "bytes differ for {} input bytes", input.len());
    }

    /// Data shapes: zeros, noise, a repeated phrase, a smooth float64
    /// field, and float64 with noisy low bytes.
    fn shapes(n: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut x = seed | 1;
        let mut noise = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let random: Vec<u8> = (0..n).map(|_| noise() as u8).collect();
        let phrase = b"temperature at 850 hPa; ";
        let repeated: Vec<u8> = (0..n).map(|i| phrase[i % phrase.len()]).collect();
        let field: Vec<u8> = (0..n.div_ceil(8))
            .flat_map(|i| (280.0 + (i as f64 / 300.0).sin() * 15.0).to_le_bytes())
            .take(n)
            .collect();
        let noisy: Vec<u8> = (0..n.div_ceil(8))
            .flat_map(|i| {
                let v = 280.0 + (i as f64 / 300.0).sin() * 15.0;
                f64::from_bits(v.to_bits() ^ (noise() & 0xFFFF_FFFF)).to_le_bytes()
            })
            .take(n)
            .collect();
        vec![vec![0; n], random, repeated, field, noisy]
    }

    #[test]
    fn the_bytes_of_lz4_flex_at_the_edges() {
        let sizes = [
            0,
            1,
            4,
            12,
            13,
            14,
            100,
            65_534,
            65_535,
            65_536,
            65_537,
            131_072,
            (1 << 20) + 3,
        ];
        for n in sizes {
            let noise = shapes(n, 99).swap_remove(1);
            for data in shapes(n, n as u64 + 7) {
                assert_same(&data);
                // A long run of literals written straight from the input,
                // then matches.
                let mut mixed = noise.clone();
                mixed.extend_from_slice(&data);
                assert_same(&mixed);
            }
        }
    }

    #[test]
    fn progress_reports_each_stretch_scanned_and_ends_at_the_input() {
        let n = 3 * REPORT_BYTES + 5;
        let data = &shapes(n, 5)[4];
        let g = streamed(data);
        assert!(g.reports.len() >= 3, "{:?}", g.reports);
        assert!(g
            .reports
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(g.reports.iter().all(|&(s, r)| r <= s && s <= n as u64));
        assert_eq!(g.reports.last(), Some(&(n as u64, n as u64)));
    }

    #[test]
    fn a_sink_error_stops_the_encode() {
        struct Full;
        impl PieceSink for Full {
            fn put(&mut self, _: &[u8]) -> Result<()> {
                Err(Error::invalid_input("disk full"))
            }
        }
        let e = compress_prepend_size_to(&[1; 100_000], &mut Full).unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn the_bytes_of_lz4_flex(
            n in 0usize..200_000,
            shape in 0usize..5,
            seed in any::<u64>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut data = shapes(n, seed).swap_remove(shape);
            // A pasted piece of noise, so matches and literals interleave.
            let at = cut.index(n + 1);
            data.splice(at..at, shapes(n / 7, seed ^ 1)[1].iter().copied());
            let want = lz4_flex::block::compress_prepend_size(&data);
            prop_assert!(streamed(&data).out == want);
        }

        #[test]
        fn the_bytes_of_lz4_flex_on_any_bytes(data in prop::collection::vec(any::<u8>(), 0..5000)) {
            prop_assert!(streamed(&data).out == lz4_flex::block::compress_prepend_size(&data));
        }

        #[test]
        fn the_bytes_of_lz4_flex_on_few_symbols(data in prop::collection::vec(0u8..3, 0..100_000)) {
            prop_assert!(streamed(&data).out == lz4_flex::block::compress_prepend_size(&data));
        }
    }
}
