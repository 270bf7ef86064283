//! Decoding part of a stream from the stored RSI offsets
//! (`spec/szip.md` §5): only the RSIs a byte range covers, and of the last
//! of them only the blocks up to the range's end; the rest of that RSI is
//! skipped ([`crate::decode_skip`]), which finds its end as decoding would.

use super::bitreader::BitReader;
use super::decode::decode_samples_at;
use super::decode_skip::{rsi_end, skip_rsi};
use super::SzipParams;
use crate::error::{Error, ErrorKind, Result};

/// The RSI geometry of a stream of `total` decoded bytes.
struct Rsis {
    sample_bytes: u64,
    rsi_bytes: u64,
    total: u64,
}

impl Rsis {
    fn new(p: &SzipParams, total: u64) -> Self {
        let sample_bytes = p.sample_bytes() as u64;
        Rsis {
            sample_bytes,
            rsi_bytes: p.rsi as u64 * p.block_size as u64 * sample_bytes,
            total,
        }
    }

    /// Samples in RSI `k` (the stream's last RSI may be short).
    fn samples(&self, k: u64) -> usize {
        let from = k.saturating_mul(self.rsi_bytes).min(self.total);
        ((self.total - from).min(self.rsi_bytes) / self.sample_bytes) as usize
    }
}

/// Decodes `out`, the decoded bytes from the start of RSI `k` (which
/// starts at bit `start`) up to a point in RSI `last`, and skips the rest
/// of RSI `last`; returns the bit where RSI `last` ends.
fn decode_through(
    input: &[u8],
    p: &SzipParams,
    rsis: &Rsis,
    start: u64,
    out: &mut [u8],
    last: u64,
) -> Result<u64> {
    let (at, used) = decode_samples_at(input, start, p, out)?;
    let mut r = BitReader::new(input, at);
    skip_rsi(&mut r, p, used, rsis.samples(last))?;
    Ok(r.pos())
}

/// Decodes `out.len()` bytes starting at byte `byte_pos` of the decoded
/// stream, decoding only the RSIs that cover them, and of the last one only
/// the blocks up to the range's end. `rsi_offsets_bits[r]` is where RSI `r`
/// starts; `total_len` is the whole decoded size.
///
/// A stored offset is used only once it is confirmed: the RSI read from it
/// must end exactly where the next stored offset begins (for the last
/// stored offset, the RSI before it must end there). Otherwise decoding
/// starts from the nearest earlier offset that is confirmed, or from the
/// stream start, and runs on without jumping (`spec/szip.md` §5). Every RSI
/// the range touches is read to its end, so the result, values or error,
/// is the one decoding those RSIs whole gives.
pub fn decode_range_into(
    input: &[u8],
    p: &SzipParams,
    rsi_offsets_bits: &[u64],
    total_len: u64,
    byte_pos: u64,
    out: &mut [u8],
) -> Result<()> {
    decode_ranges_into(
        input,
        p,
        rsi_offsets_bits,
        total_len,
        &mut [(byte_pos, out)],
    )
}

/// [`decode_range_into`] for several ranges `(byte_pos, out)` at once, in
/// any order, overlapping or not: ranges that share an RSI are decoded
/// together, so each RSI is decoded at most once (§5). The result is each
/// range's [`decode_range_into`]; a range outside the decoded data is an
/// error before anything is decoded.
pub fn decode_ranges_into(
    input: &[u8],
    p: &SzipParams,
    rsi_offsets_bits: &[u64],
    total_len: u64,
    ranges: &mut [(u64, &mut [u8])],
) -> Result<()> {
    p.validate()?;
    let rsis = Rsis::new(p, total_len);
    let (sb, rsi_bytes) = (rsis.sample_bytes, rsis.rsi_bytes);
    let mut order = Vec::with_capacity(ranges.len());
    for (i, (pos, out)) in ranges.iter().enumerate() {
        let end = pos
            .checked_add(out.len() as u64)
            .filter(|&e| e <= total_len)
            .ok_or_else(|| Error::new(ErrorKind::OutOfRange, "range outside the decoded data"))?;
        if !out.is_empty() {
            order.push((*pos, end, i));
        }
    }
    order.sort_unstable();
    let mut buf = Vec::new();
    let mut g = 0;
    while g < order.len() {
        // A group: the ranges from `g` on whose first RSI is one the
        // group already reaches.
        let (mut end, mut h) = (order[g].1, g + 1);
        while h < order.len() && order[h].0 / rsi_bytes <= (end - 1) / rsi_bytes {
            end = end.max(order[h].1);
            h += 1;
        }
        let last = (end - 1) / rsi_bytes;
        let stop = (end.div_ceil(sb) * sb).min(total_len);
        let mut j = order[g].0 / rsi_bytes;
        // RSI 0 is always confirmed, so the search ends there at the
        // latest; a stream of wrong offsets costs at most one pass over it.
        while !decode_from(input, p, rsi_offsets_bits, &rsis, j, (stop, last), &mut buf)? {
            j -= 1;
        }
        for &(pos, _, i) in &order[g..h] {
            let out = &mut ranges[i].1;
            let skip = (pos - j * rsi_bytes) as usize;
            out.copy_from_slice(&buf[skip..skip + out.len()]);
        }
        g = h;
    }
    Ok(())
}

/// Decodes into `buf` the bytes from the start of RSI `j` up to `stop`
/// (in RSI `last`) when RSI `j`'s stored offset is confirmed; `false`,
/// with nothing decoded past RSI `j`, when it is not.
fn decode_from(
    input: &[u8],
    p: &SzipParams,
    offsets: &[u64],
    rsis: &Rsis,
    j: u64,
    (stop, last): (u64, u64),
    buf: &mut Vec<u8>,
) -> Result<bool> {
    let from = j * rsis.rsi_bytes;
    // Only RSI `j` is sized before its offset is confirmed: a search over
    // many unconfirmed offsets costs no more than the RSIs it decodes.
    let head_len = rsis.rsi_bytes.min(stop - from) as usize;
    buf.clear();
    buf.resize(head_len, 0);
    let head = &mut buf[..];
    let head_end = if j == 0 {
        decode_through(input, p, rsis, 0, head, j)?
    } else {
        let ju = j as usize;
        let bits = input.len() as u64 * 8;
        let Some(&start) = offsets.get(ju).filter(|&&s| s <= bits) else {
            return Ok(false);
        };
        match offsets.get(ju + 1) {
            Some(&next) => match decode_through(input, p, rsis, start, head, j) {
                Ok(e) if e == next => e,
                _ => return Ok(false),
            },
            None => {
                // The last stored offset: the RSI before it must end there.
                let prev = if j == 1 { 0 } else { offsets[ju - 1] };
                if prev > start {
                    return Ok(false);
                }
                match rsi_end(input, p, prev, rsis.samples(j - 1)) {
                    Ok(e) if e == start => decode_through(input, p, rsis, start, head, j)?,
                    _ => return Ok(false),
                }
            }
        }
    };
    let full = (stop - from) as usize;
    if full > head_len {
        buf.resize(full, 0);
        decode_through(input, p, rsis, head_end, &mut buf[head_len..], last)?;
    }
    Ok(true)
}

/// Whether RSIs `first..=last` each decode from their stored start (RSI 0
/// from the stream start) to exactly the next stored offset, the stream's
/// last RSI without error. When it holds, [`decode_range_into`] over those
/// RSIs reads only the bits `[start of first, end of last)` and takes the
/// same path as over the whole stream: a remote reader fetches only those
/// bytes (`spec/remote.md` §4). The RSIs are skipped through, not decoded
/// ([`crate::decode_skip`]).
pub fn rsi_chain_holds(
    input: &[u8],
    p: &SzipParams,
    offsets: &[u64],
    total_len: u64,
    first: u64,
    last: u64,
) -> bool {
    if p.validate().is_err() {
        return false;
    }
    let rsis = Rsis::new(p, total_len);
    for k in first..=last {
        let Ok(ku) = usize::try_from(k) else {
            return false;
        };
        let start = if k == 0 {
            0
        } else {
            match offsets.get(ku) {
                Some(&s) if s <= input.len() as u64 * 8 => s,
                _ => return false,
            }
        };
        let from = k.saturating_mul(rsis.rsi_bytes);
        if from >= total_len {
            return false;
        }
        let end = rsi_end(input, p, start, rsis.samples(k));
        let last_of_stream = from + rsis.rsi_bytes >= total_len;
        match (end, offsets.get(ku + 1)) {
            (Ok(e), Some(&next)) if e == next => {}
            (Ok(_), None) if last_of_stream => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_samples;
    use crate::{decode_into, encode_with, flags, SzipProfile};
    use proptest::prelude::*;

    /// Samples whose blocks take every option: constant stretches (zero
    /// runs, ROS), slow ramps (second extension, small k), noise (large k,
    /// raw) and jumps between the range's ends.
    fn samples(n: usize, bits: u32, seed: u32) -> Vec<u32> {
        let max = if bits == 32 {
            u32::MAX
        } else {
            (1 << bits) - 1
        };
        let mut x = seed | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        (0..n)
            .map(|i| match (i / 97) % 5 {
                0 => max / 3,
                1 => (max / 2).wrapping_add((i % 97) as u32 / 4),
                2 => rnd() & max,
                3 => {
                    if i % 2 == 0 {
                        0
                    } else {
                        max
                    }
                }
                _ => (max / 4).wrapping_add(rnd() & 7),
            })
            .collect()
    }

    fn params(bits_per_sample: u32, block_size: u32, rsi: u32, flags: u32) -> SzipParams {
        SzipParams {
            bits_per_sample,
            block_size,
            rsi,
            flags,
        }
    }

    fn containers(values: &[u32], sb: usize) -> Vec<u8> {
        values
            .iter()
            .flat_map(|v| v.to_be_bytes()[4 - sb..].to_vec())
            .collect()
    }

    /// Every range ending anywhere (mid-block, the last block of an RSI,
    /// the last block of the stream, which is partly padding) gives the
    /// bytes of the whole decode, for ranges starting at an RSI start, mid
    /// RSI and in an earlier RSI.
    #[test]
    fn every_range_end_gives_the_whole_decode() {
        for (bits, block_size, rsi) in
            [(16, 32, 4), (8, 8, 3), (24, 16, 2), (32, 8, 5), (12, 16, 1)]
        {
            let three = if bits == 24 { flags::THREE_BYTE } else { 0 };
            let p = params(
                bits,
                block_size,
                rsi,
                flags::PREPROCESS | flags::MSB | three,
            );
            let sb = p.sample_bytes();
            let rsi_samples = (block_size * rsi) as usize;
            // Three whole RSIs and a short one ending mid-block.
            let n = 3 * rsi_samples + block_size as usize + 3;
            let data = containers(&samples(n, bits, bits * 7 + rsi), sb);
            let (stream, offsets) = encode_with(&data, &p, Default::default()).unwrap();
            let mut whole = vec![0u8; data.len()];
            decode_into(&stream, &p, &mut whole).unwrap();
            assert_eq!(whole, data);
            let total = data.len() as u64;
            for from in [0, 5, rsi_samples, rsi_samples + 1, 2 * rsi_samples - 1] {
                for to in from + 1..=n {
                    let (a, b) = (from * sb, to * sb);
                    let mut got = vec![0u8; b - a];
                    decode_range_into(&stream, &p, &offsets, total, a as u64, &mut got).unwrap();
                    assert_eq!(got, whole[a..b], "{p:?} samples {from}..{to}");
                }
            }
        }
    }

    /// With offsets that point into the wrong place, ranges still give the
    /// whole decode: the unconfirmed offsets are not used.
    #[test]
    fn wrong_offsets_fall_back_to_confirmed_ones() {
        let p = params(16, 16, 2, flags::PREPROCESS | flags::MSB);
        let n = 9 * 32 + 7;
        let data = containers(&samples(n, 16, 99), 2);
        let (stream, offsets) = encode_with(&data, &p, Default::default()).unwrap();
        let total = data.len() as u64;
        for bad in 1..offsets.len() {
            for shift in [1i64, -1, 8, 100] {
                let mut o = offsets.clone();
                o[bad] = o[bad].saturating_add_signed(shift);
                for to in (1..=n).step_by(5).chain([n]) {
                    let from = to.saturating_sub(40);
                    let mut got = vec![0u8; (to - from) * 2];
                    decode_range_into(&stream, &p, &o, total, from as u64 * 2, &mut got).unwrap();
                    assert_eq!(got, data[from * 2..to * 2], "offset {bad} moved by {shift}");
                }
            }
        }
    }

    /// Offsets past the stream's end (a hostile descriptor's) are never
    /// used and never overflow a bit position: the chain check says no and
    /// a range falls back to the confirmed start.
    #[test]
    fn offsets_past_the_end_are_not_used() {
        let p = params(16, 16, 2, flags::PREPROCESS | flags::MSB);
        let n = 9 * 32 + 7;
        let data = containers(&samples(n, 16, 5), 2);
        let (stream, offsets) = encode_with(&data, &p, Default::default()).unwrap();
        let total = data.len() as u64;
        let last = offsets.len() as u64 - 1;
        assert!(rsi_chain_holds(&stream, &p, &offsets, total, 1, last));
        for bad in [u64::MAX, u64::MAX - 1, stream.len() as u64 * 8 + 1] {
            let mut o = offsets.clone();
            o[2] = bad;
            assert!(!rsi_chain_holds(&stream, &p, &o, total, 2, 2));
            let mut got = vec![0u8; 64];
            decode_range_into(&stream, &p, &o, total, 2 * 64, &mut got).unwrap();
            assert_eq!(got, data[128..192]);
        }
    }

    proptest! {
        /// Ranges decoded together, in any order and overlapping, give
        /// each range's own decode; one range outside the data fails the
        /// call.
        #[test]
        fn ranges_together_give_each_range_alone(
            seed in any::<u32>(),
            spans in proptest::collection::vec((0usize..2000, 0usize..300), 0..12),
            bad in any::<bool>(),
        ) {
            let p = params(16, 16, 4, flags::PREPROCESS | flags::MSB);
            let n = 1000;
            let data = containers(&samples(n, 16, seed), 2);
            let (stream, offsets) = encode_with(&data, &p, Default::default()).unwrap();
            let total = data.len() as u64;
            let spans: Vec<(usize, usize)> =
                spans.into_iter().map(|(a, l)| (a, l.min(2000 - a))).collect();
            let mut outs: Vec<Vec<u8>> = spans.iter().map(|&(_, l)| vec![0u8; l]).collect();
            let mut ranges: Vec<(u64, &mut [u8])> = spans
                .iter()
                .zip(outs.iter_mut())
                .map(|(&(a, _), o)| (a as u64, &mut o[..]))
                .collect();
            let mut extra = [0u8; 2];
            if bad {
                ranges.push((total - 1, &mut extra[..]));
            }
            let res = decode_ranges_into(&stream, &p, &offsets, total, &mut ranges);
            prop_assert_eq!(res.is_ok(), !bad);
            if !bad {
                for (&(a, l), got) in spans.iter().zip(&outs) {
                    let mut alone = vec![0u8; l];
                    decode_range_into(&stream, &p, &offsets, total, a as u64, &mut alone).unwrap();
                    prop_assert_eq!(got, &alone);
                    prop_assert_eq!(&got[..], &data[a..a + l]);
                }
            }
        }

        /// Skipping an RSI ends where decoding it ends, and fails where
        /// decoding fails, on real streams cut short or with bits flipped.
        #[test]
        fn skipping_an_rsi_agrees_with_decoding_it(
            seed in any::<u32>(),
            bits in 1u32..=32,
            block in prop_oneof![Just(8u32), Just(16), Just(32), Just(64)],
            rsi in 1u32..6,
            n in 1usize..700,
            flips in proptest::collection::vec(any::<u32>(), 0..4),
            cut in any::<u16>(),
        ) {
            let restricted = bits <= 4 && seed % 3 == 0;
            let pp = if seed % 2 == 0 { flags::PREPROCESS } else { 0 };
            let restricted = if restricted { flags::RESTRICTED } else { 0 };
            let p = params(bits, block, rsi, flags::MSB | pp | restricted);
            let sb = p.sample_bytes();
            let data = containers(&samples(n, bits, seed), sb);
            // libaec's own choices put second-extension blocks after a
            // reference sample, which the interoperable profile avoids.
            let profile = if seed % 4 < 2 { SzipProfile::Libaec } else { SzipProfile::Interoperable };
            let (mut stream, offsets) = encode_with(&data, &p, profile).unwrap();
            for f in &flips {
                if !stream.is_empty() {
                    let bit = *f as usize % (stream.len() * 8);
                    stream[bit / 8] ^= 0x80 >> (bit % 8);
                }
            }
            let keep = stream.len() - (cut as usize % 4).min(stream.len());
            stream.truncate(keep);
            let rsis = Rsis::new(&p, data.len() as u64);
            for (k, &start) in offsets.iter().enumerate() {
                let len = rsis.samples(k as u64);
                let mut buf = vec![0u8; len * sb];
                let want = decode_samples(&stream, start, &p, &mut buf);
                let got = rsi_end(&stream, &p, start, len);
                prop_assert_eq!(got.is_ok(), want.is_ok(), "RSI {}", k);
                if let (Ok(g), Ok(w)) = (got, want) {
                    prop_assert_eq!(g, w, "RSI {}", k);
                }
            }
        }
    }
}
