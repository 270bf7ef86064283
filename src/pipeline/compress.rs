//! zstd and lz4 stages. Decoders write into buffers of exactly the size the
//! descriptor implies. See `spec/pipeline.md` §4.

use crate::buffer;
use crate::error::{Error, Result};

/// Default zstd level when `zstd_level` is absent.
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// A standard zstd frame (no content size, no checksum), as a sequential
/// libzstd stream encoder writes it.
pub fn zstd_compress(data: &[u8], level: i32) -> Result<Vec<u8>> {
    zstd::stream::encode_all(data, level)
        .map_err(|e| Error::codec(format!("zstd compression failed: {e}")))
}

/// Decompresses one or more zstd frames into exactly `expected` bytes.
///
/// One-shot decoding straight into the output: no window buffer beyond the
/// output itself, whatever window the frame header declares, and a stream
/// that would produce more than `expected` bytes stops at the boundary.
pub fn zstd_decompress(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
    use zstd::zstd_safe;
    thread_local! {
        static DCTX: std::cell::RefCell<zstd_safe::DCtx<'static>> =
            std::cell::RefCell::new(zstd_safe::DCtx::create());
    }
    *out = buffer::with_capacity(expected)?;
    let res = DCTX.with(|d| d.borrow_mut().decompress(out, src));
    match res {
        Ok(n) if n == expected => Ok(()),
        Ok(n) => Err(Error::codec(format!(
            "zstd stream decoded to {n} bytes, descriptor implies {expected}"
        ))),
        Err(code) if zstd_safe::get_error_name(code) == DST_TOO_SMALL => Err(Error::codec(
            format!("zstd stream decodes to more than the {expected} bytes the descriptor implies"),
        )),
        Err(code) => Err(Error::codec(format!(
            "zstd stream corrupt: {}",
            zstd_safe::get_error_name(code)
        ))),
    }
}

/// libzstd's name for `ZSTD_error_dstSize_tooSmall`.
const DST_TOO_SMALL: &str = "Destination buffer is too small";

/// lz4 block with a 4-byte little-endian uncompressed-size prefix.
pub fn lz4_compress(data: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(data)
}

/// Decompresses a size-prefixed lz4 block into exactly `expected` bytes; the
/// prefix must agree with `expected` before anything is allocated.
pub fn lz4_decompress(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
    let prefix = src
        .get(..4)
        .ok_or_else(|| Error::codec("lz4 payload shorter than its 4-byte size prefix"))?;
    let claimed = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
    if claimed != expected {
        return Err(Error::codec(format!(
            "lz4 payload claims {claimed} bytes, descriptor implies {expected}"
        )));
    }
    *out = buffer::zeroed(expected)?;
    let n = lz4_flex::block::decompress_into(&src[4..], out)
        .map_err(|e| Error::codec(format!("lz4 block corrupt: {e}")).at(4))?;
    if n != expected {
        return Err(Error::codec(format!(
            "lz4 block decoded to {n} bytes, descriptor implies {expected}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_roundtrip_and_size_checks() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let c = zstd_compress(&data, 3).unwrap();
        assert_eq!(&c[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
        let mut out = Vec::new();
        zstd_decompress(&c, data.len(), &mut out).unwrap();
        assert_eq!(out, data);
        assert!(zstd_decompress(&c, data.len() - 1, &mut out).is_err());
        assert!(zstd_decompress(&c, data.len() + 1, &mut out).is_err());
        assert!(zstd_decompress(&c[..c.len() / 2], data.len(), &mut out).is_err());
        // Concatenated frames decode as one stream.
        let two = [
            zstd_compress(b"abc", 1).unwrap(),
            zstd_compress(b"def", 1).unwrap(),
        ]
        .concat();
        zstd_decompress(&two, 6, &mut out).unwrap();
        assert_eq!(out, b"abcdef");
    }

    #[test]
    fn zstd_size_errors_say_which_way() {
        let data = vec![5u8; 1000];
        let c = zstd_compress(&data, 3).unwrap();
        let mut out = Vec::new();
        let over = zstd_decompress(&c, 999, &mut out).unwrap_err();
        assert!(over.detail().contains("more than the 999 bytes"), "{over}");
        let under = zstd_decompress(&c, 1001, &mut out).unwrap_err();
        assert!(under.detail().contains("decoded to 1000 bytes"), "{under}");
        let mut trailing = c.clone();
        trailing.extend_from_slice(&[1, 2, 3]);
        let e = zstd_decompress(&trailing, 1000, &mut out).unwrap_err();
        assert!(e.detail().contains("corrupt"), "{e}");
    }

    #[test]
    fn zstd_skippable_frames_are_skipped() {
        // Magic 0x184D2A50, 4-byte length, then that many ignored bytes.
        let mut s = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9];
        s.extend(zstd_compress(b"xyz", 3).unwrap());
        let mut out = Vec::new();
        zstd_decompress(&s, 3, &mut out).unwrap();
        assert_eq!(out, b"xyz");
    }

    #[test]
    fn zstd_bomb_is_bounded() {
        let bomb = zstd_compress(&vec![0u8; 64 << 20], 3).unwrap();
        let mut out = Vec::new();
        assert!(zstd_decompress(&bomb, 16, &mut out).is_err());
        assert!(out.capacity() < 1 << 20);
    }

    #[test]
    fn lz4_format_and_checks() {
        let data = vec![7u8; 256];
        let c = lz4_compress(&data);
        assert_eq!(&c[..4], &[0, 1, 0, 0]);
        let mut out = Vec::new();
        lz4_decompress(&c, 256, &mut out).unwrap();
        assert_eq!(out, data);
        assert!(lz4_decompress(&c, 255, &mut out).is_err());
        let mut lying = c.clone();
        lying[..4].copy_from_slice(&(1u32 << 30).to_le_bytes());
        assert!(lz4_decompress(&lying, 256, &mut out).is_err());
        assert!(lz4_decompress(&c[..10], 256, &mut out).is_err());
    }
}
