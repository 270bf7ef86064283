//! zstd decoding with the pure-Rust `ruzstd` (cargo feature
//! `zstd-decode-pure`), for builds without libzstd such as
//! `wasm32-unknown-unknown`. It decodes what any zstd encoder writes, with
//! the same output bound as the libzstd path: exactly the bytes the
//! descriptor implies, never more (`spec/pipeline.md` §4.1). Encoding is
//! refused: it needs the cargo feature `zstd`.
#![cfg_attr(feature = "zstd", allow(dead_code))]

use ruzstd::decoding::errors::FrameDecoderError;
use ruzstd::decoding::FrameDecoder;

use crate::error::{Error, Result};

/// Refused: this build has the zstd decoder only.
pub fn zstd_compress_with(_: &[u8], _: i32, _: usize, _: super::ZstdFrameSize) -> Result<Vec<u8>> {
    Err(Error::unsupported_codec(
        "compression \"zstd\" cannot encode in this build of tgm: it has the pure-Rust zstd \
         decoder only (cargo feature \"zstd-decode-pure\"); encoding needs cargo feature \"zstd\"",
    ))
}

/// Refused, as [`zstd_compress_with`].
pub fn zstd_compress_reporting(
    data: &[u8],
    level: i32,
    threads: usize,
    size: super::ZstdFrameSize,
    _: &dyn Fn(u64, u64),
) -> Result<Vec<u8>> {
    zstd_compress_with(data, level, threads, size)
}

/// [`zstd_decompress_into`]; the pipeline reports the end.
pub fn zstd_decompress_reporting(src: &[u8], out: &mut [u8], _: &dyn Fn(u64, u64)) -> Result<()> {
    zstd_decompress_into(src, out)
}

/// Decompresses one or more zstd frames into exactly `expected` bytes.
pub fn zstd_decompress(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
    *out = crate::buffer::zeroed(expected)?;
    zstd_decompress_into(src, out)
}

/// Decompresses into exactly `out.len()` bytes; a stream that would give
/// more stops at the boundary (the decoder drains at most a megabyte past
/// what it has written).
pub fn zstd_decompress_into(src: &[u8], out: &mut [u8]) -> Result<()> {
    let expected = out.len();
    match FrameDecoder::new().decode_all(src, out) {
        Ok(n) if n == expected => Ok(()),
        Ok(n) => Err(Error::codec(format!(
            "zstd stream decoded to {n} bytes, descriptor implies {expected}"
        ))),
        Err(FrameDecoderError::TargetTooSmall) => Err(Error::codec(format!(
            "zstd stream decodes to more than the {expected} bytes the descriptor implies"
        ))),
        Err(e) => Err(Error::codec(format!("zstd stream corrupt: {e}"))),
    }
}

#[cfg(all(test, feature = "zstd"))]
mod tests {
    use super::*;
    use crate::pipeline::codec::compression::zstd as libzstd;

    /// Differential: on valid streams at several levels, size mismatches
    /// both ways, trailing bytes, truncation, skippable and concatenated
    /// frames and a bomb, the pure decoder gives libzstd's bytes or
    /// refuses where libzstd refuses.
    #[test]
    fn agrees_with_libzstd() {
        let data: Vec<u8> = (0..400_000u32)
            .flat_map(|i| (((i as f64 * 1e-3).sin() * 1e4) as i32).to_le_bytes())
            .collect();
        let n = data.len();
        let c = |level| libzstd::zstd_compress(&data, level).unwrap();
        let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9];
        skippable.extend(libzstd::zstd_compress(b"abc", 1).unwrap());
        skippable.extend(libzstd::zstd_compress(b"def", 1).unwrap());
        let bomb = libzstd::zstd_compress(&vec![0u8; 64 << 20], 3).unwrap();
        let mut trailing = c(3);
        trailing.extend_from_slice(&[1, 2, 3]);
        let half = c(3)[..c(3).len() / 2].to_vec();
        let cases: Vec<(Vec<u8>, usize, bool)> = vec![
            (c(1), n, true),
            (c(3), n, true),
            (c(19), n, true),
            (c(3), n - 1, false),
            (c(3), n + 1, false),
            (trailing, n, false),
            (half, n, false),
            (skippable, 6, true),
            (bomb, 16, false),
        ];
        for (i, (src, len, ok)) in cases.iter().enumerate() {
            let (mut pure, mut c_out) = (Vec::new(), Vec::new());
            let p = zstd_decompress(src, *len, &mut pure);
            let l = libzstd::zstd_decompress(src, *len, &mut c_out);
            assert_eq!(p.is_ok(), *ok, "case {i}: {p:?}");
            assert_eq!(l.is_ok(), *ok, "case {i}: {l:?}");
            if *ok {
                assert!(pure == c_out, "case {i}");
            }
        }
    }

    #[test]
    fn errors_say_which_way_and_encoding_names_the_feature() {
        let c = libzstd::zstd_compress(&[5u8; 1000], 3).unwrap();
        let mut out = Vec::new();
        let over = zstd_decompress(&c, 999, &mut out).unwrap_err();
        assert!(over.detail().contains("more than the 999 bytes"), "{over}");
        let under = zstd_decompress(&c, 1001, &mut out).unwrap_err();
        assert!(under.detail().contains("decoded to 1000 bytes"), "{under}");
        let e = zstd_compress_with(&c, 3, 0, Default::default()).unwrap_err();
        assert!(e.detail().contains("cargo feature \"zstd\""), "{e}");
    }
}
