//! The compressors built from vendored C/C++ sources (tgm features
//! `blosc2`, `zfp`, `sz3`) given hostile streams and sizes. Each target
//! derives a valid stream from its input, applies hostile edits (byte
//! flips, a cut) and decodes it whole and by range, with sizes that agree
//! with the stream or not: tgm's checks must refuse what the C/C++ decoder
//! cannot take safely. Only the fuzz binaries build these (the fuzz crate
//! turns the features on); `cargo test` does not replay them.

use std::borrow::Cow;

use tgm::pipeline_spec::{Blosc2, Blosc2Codec, Sz3Bound, ZfpMode};

/// A header of `N` bytes, the edits and the rest of an input.
type Parts<'a, const N: usize> = (&'a [u8; N], Vec<(u16, u8)>, &'a [u8]);

/// Splits `data` into a header of `N` bytes, edits (3 bytes each: u16
/// position, xor mask; as many as `data[0] % 8`) and the rest.
fn parts<const N: usize>(data: &[u8]) -> Option<Parts<'_, N>> {
    let (h, rest) = data.split_first_chunk::<N>()?;
    let n = (h[0] % 8) as usize * 3;
    let (e, rest) = rest.split_at(n.min(rest.len()));
    let edits = e
        .chunks_exact(3)
        .map(|c| (u16::from_le_bytes([c[0], c[1]]), c[2]))
        .collect();
    Some((h, edits, rest))
}

/// `stream` with the edits applied and cut to `cut` bytes when that is
/// shorter.
fn mangle(mut stream: Vec<u8>, edits: &[(u16, u8)], cut: u16) -> Vec<u8> {
    if stream.is_empty() {
        return stream;
    }
    for &(at, x) in edits {
        let i = at as usize % stream.len();
        stream[i] ^= x;
    }
    stream.truncate(cut as usize);
    stream
}

/// Reads of `[a, b)` from `bytes`, an error past its end.
fn reader<'a>(bytes: &'a [u8]) -> impl Fn(u64, u64) -> tgm::Result<Cow<'a, [u8]>> + 'a {
    move |a, b| {
        bytes
            .get(a as usize..b as usize)
            .map(Cow::Borrowed)
            .ok_or_else(|| tgm::Error::codec("read past the stream"))
    }
}

fn values(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]) as f64 * 0.37)
        .collect()
}

/// blosc2 frames. Header: edit count and codec (1), type size (1), chunk
/// size (1), cut (2), size skew (1), range start (2).
pub fn blosc2(data: &[u8]) {
    let Some((h, edits, raw)) = parts::<8>(data) else {
        return;
    };
    let p = Blosc2 {
        codec: Blosc2Codec::ALL[(h[0] >> 3) as usize % 5],
        clevel: (h[0] >> 5) as i32,
    };
    let typesize = 1 + h[1] as usize % 16;
    let chunk = 16 + h[2] as usize * 8;
    let Ok(frame) = tgm::__fuzz::compressors::blosc2_compress(raw, p, typesize, 0, chunk) else {
        return;
    };
    let frame = mangle(frame, &edits, u16::from_le_bytes([h[3], h[4]]));
    let len = (raw.len() as isize + (h[5] as i8) as isize).max(0) as usize;
    let mut out = vec![0u8; len];
    let whole = tgm::__fuzz::compressors::blosc2_decompress_into(&frame, 1, &mut out);
    let from = u16::from_le_bytes([h[6], h[7]]) as usize % (len + 1);
    let mut part = vec![0u8; (len - from) / 2];
    let read = reader(&frame);
    let r = tgm::__fuzz::compressors::blosc2_decompress_range(
        &read,
        frame.len() as u64,
        len as u64,
        from as u64,
        &mut part,
    );
    if whole.is_ok() && r.is_ok() {
        assert!(
            part == out[from..from + part.len()],
            "range differs from whole"
        );
    }
    if edits.is_empty() && h[5] == 0 && h[3] == 0xff && h[4] == 0xff {
        assert!(
            whole.is_ok() && out == raw,
            "an untouched frame must round-trip"
        );
    }
}

/// zfp streams. Header: edit count and mode (1), mode parameter (1), cut
/// (2), value count skew (1), range start (2).
pub fn zfp(data: &[u8]) {
    let Some((h, edits, raw)) = parts::<7>(data) else {
        return;
    };
    let mode = match (h[0] >> 3) % 3 {
        0 => ZfpMode::FixedRate(1.0 + (h[1] % 64) as f64 * 0.75),
        1 => ZfpMode::FixedPrecision(1 + (h[1] % 64) as u32),
        _ => ZfpMode::FixedAccuracy(10f64.powi(-((h[1] % 12) as i32))),
    };
    let v = values(raw);
    let Ok(stream) = tgm::__fuzz::compressors::zfp_compress(&v, mode) else {
        return;
    };
    let stream = mangle(stream, &edits, u16::from_le_bytes([h[2], h[3]]));
    let n = (v.len() as isize + (h[4] as i8) as isize).max(0) as usize;
    let mut out = vec![0f64; n];
    let whole = tgm::__fuzz::compressors::zfp_decompress_into(&stream, mode, &mut out);
    let first = u16::from_le_bytes([h[5], h[6]]) as usize % (n + 1);
    let mut part = vec![0f64; (n - first) / 2];
    let read = reader(&stream);
    let r = tgm::__fuzz::compressors::zfp_decompress_range(
        &read,
        stream.len() as u64,
        mode,
        n as u64,
        first as u64,
        &mut part,
    );
    if whole.is_ok() && r.is_ok() {
        let same = part
            .iter()
            .zip(&out[first..])
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "range differs from whole");
    }
}

/// sz3 streams. Header: edit count and mode (1), bound (1), cut (2),
/// value count skew (1).
pub fn sz3(data: &[u8]) {
    let Some((h, edits, raw)) = parts::<5>(data) else {
        return;
    };
    let b = 10f64.powi(-((h[1] % 8) as i32));
    let bound = match (h[0] >> 3) % 3 {
        0 => Sz3Bound::Abs(b),
        1 => Sz3Bound::Rel(b),
        _ => Sz3Bound::Psnr(20.0 + h[1] as f64 / 4.0),
    };
    let v = values(raw);
    let Ok(stream) = tgm::__fuzz::compressors::sz3_compress(&v, bound) else {
        return;
    };
    let stream = mangle(stream, &edits, u16::from_le_bytes([h[2], h[3]]));
    let n = (v.len() as isize + (h[4] as i8) as isize).max(0) as usize;
    let mut out = vec![0f64; n];
    let _ = tgm::__fuzz::compressors::sz3_decompress_into(&stream, &mut out);
}
