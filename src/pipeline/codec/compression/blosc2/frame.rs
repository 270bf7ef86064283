//! The parts of a blosc2 contiguous frame ("cframe") that tgm reads itself
//! before c-blosc2 sees any byte of it: the frame header's fixed fields
//! and each chunk's header, every size checked against the bytes that
//! hold it. Pure Rust, no C. See `spec/pipeline.md` §4.5.

use crate::error::{Error, Result};

/// Bytes of a blosc2 chunk header (the extended form every blosc2 chunk
/// carries).
pub const CHUNK_HEADER_LEN: usize = 32;

/// Bytes of the frame header's fixed fields tgm reads.
pub const FRAME_FIXED_LEN: usize = 62;

/// The fixed fields of a frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Bytes of the header, metalayers included; chunk offsets count
    /// from here.
    pub header_len: u64,
    /// Bytes of the whole frame.
    pub frame_len: u64,
    /// Bytes of the data once decoded.
    pub nbytes: u64,
    /// Bytes of the data chunks; the offsets chunk follows them.
    pub cbytes: u64,
    /// Element size the chunks were shuffled with.
    pub typesize: u32,
    /// Decoded bytes of every chunk but the last.
    pub chunksize: u64,
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::codec(format!("blosc2 frame: {what}"))
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| (a << 8) | x as u64)
}

/// Reads the header of a frame stored in `len` bytes.
pub fn frame_header(b: &[u8], len: u64) -> Result<FrameHeader> {
    if b.len() < FRAME_FIXED_LEN {
        return Err(bad(format!(
            "{} bytes are too few for a frame header",
            b.len()
        )));
    }
    let tags: [(usize, u8); 9] = [
        (0, 0x9e),
        (1, 0xa8),
        (10, 0xd2),
        (15, 0xcf),
        (24, 0xa4),
        (29, 0xd3),
        (38, 0xd3),
        (47, 0xd2),
        (57, 0xd2),
    ];
    if &b[2..10] != b"b2frame\0" || tags.iter().any(|&(i, t)| b[i] != t) {
        return Err(bad("no frame header (magic \"b2frame\" missing)"));
    }
    let general = b[25];
    if (general >> 4) & 3 != 1 {
        return Err(bad("chunk offsets are not 64-bit"));
    }
    if b[26] & 0x0f != 0 {
        return Err(bad("not a contiguous frame"));
    }
    let h = FrameHeader {
        header_len: be(&b[11..15]),
        frame_len: be(&b[16..24]),
        nbytes: be(&b[30..38]),
        cbytes: be(&b[39..47]),
        typesize: be(&b[48..52]) as u32,
        chunksize: be(&b[58..62]),
    };
    if h.frame_len != len {
        return Err(bad(format!(
            "the frame says it is {} bytes, the payload is {len}",
            h.frame_len
        )));
    }
    let signed = |v: u64| v >> 63 != 0;
    if signed(h.nbytes) || signed(h.cbytes) || h.header_len >> 31 != 0 || h.chunksize >> 31 != 0 {
        return Err(bad("negative size in the header"));
    }
    if h.header_len < FRAME_FIXED_LEN as u64
        || h.header_len
            .checked_add(h.cbytes)
            .and_then(|e| e.checked_add(CHUNK_HEADER_LEN as u64))
            .is_none_or(|e| e > len)
    {
        return Err(bad(format!(
            "header of {} bytes and chunks of {} bytes do not fit in {len}",
            h.header_len, h.cbytes
        )));
    }
    if h.typesize == 0 || h.typesize > 255 {
        return Err(bad(format!("type size {}", h.typesize)));
    }
    Ok(h)
}

/// The sizes a chunk header declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Decoded bytes.
    pub nbytes: u64,
    /// Stored bytes, header included.
    pub cbytes: u64,
}

/// Reads a chunk header from the first [`CHUNK_HEADER_LEN`] bytes of `b`,
/// refusing chunks whose data lies elsewhere (lazy chunks).
pub fn chunk_header(b: &[u8]) -> Result<ChunkHeader> {
    if b.len() < CHUNK_HEADER_LEN {
        return Err(bad("chunk header cut short"));
    }
    let le = |r: std::ops::Range<usize>| {
        let v = u32::from_le_bytes(b[r].try_into().unwrap_or_default());
        if v >> 31 != 0 {
            Err(bad("negative chunk size"))
        } else {
            Ok(v as u64)
        }
    };
    let h = ChunkHeader {
        nbytes: le(4..8)?,
        cbytes: le(12..16)?,
    };
    if b[31] & 0x08 != 0 {
        return Err(bad("lazy chunk (its data is not in the frame)"));
    }
    if h.cbytes < CHUNK_HEADER_LEN as u64 {
        return Err(bad(format!("chunk of {} stored bytes", h.cbytes)));
    }
    Ok(h)
}

/// The byte range of data chunk `i` (of `n`) in the decoded stream.
pub fn chunk_span(h: &FrameHeader, i: u64, n: u64) -> (u64, u64) {
    let from = i * h.chunksize;
    let to = if i + 1 == n {
        h.nbytes
    } else {
        from + h.chunksize
    };
    (from, to.max(from))
}

/// Checks that `n` chunks of `h.chunksize` bytes, the last shorter or
/// equal, make `h.nbytes`, and that the offsets chunk is no larger than
/// the frame can hold (every chunk takes at least a header).
pub fn check_chunk_count(h: &FrameHeader, n: u64) -> Result<()> {
    if n.saturating_mul(CHUNK_HEADER_LEN as u64) > h.frame_len {
        return Err(bad(format!(
            "{n} chunks cannot fit in {} bytes",
            h.frame_len
        )));
    }
    let fits = match n {
        0 => h.nbytes == 0,
        _ if h.chunksize == 0 => h.nbytes == 0 && n == 1,
        _ => h.nbytes.div_ceil(h.chunksize).max(1) == n,
    };
    if !fits {
        return Err(bad(format!(
            "{n} chunks of {} bytes cannot make {} bytes",
            h.chunksize, h.nbytes
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(nbytes: u64, cbytes: u64, chunksize: u32, len: u64) -> Vec<u8> {
        let mut b = vec![0x9e, 0xa8];
        b.extend(b"b2frame\0");
        b.push(0xd2);
        b.extend(100u32.to_be_bytes());
        b.push(0xcf);
        b.extend(len.to_be_bytes());
        b.extend([0xa4, 0x12, 0, 0, 0, 0xd3]);
        b.extend(nbytes.to_be_bytes());
        b.push(0xd3);
        b.extend(cbytes.to_be_bytes());
        b.push(0xd2);
        b.extend(8u32.to_be_bytes());
        b.push(0xd2);
        b.extend(0u32.to_be_bytes());
        b.push(0xd2);
        b.extend(chunksize.to_be_bytes());
        b
    }

    #[test]
    fn frame_header_fields_and_refusals() {
        let b = header(4000, 500, 4000, 700);
        let h = frame_header(&b, 700).unwrap();
        assert_eq!(
            (h.header_len, h.nbytes, h.cbytes, h.typesize),
            (100, 4000, 500, 8)
        );
        check_chunk_count(&h, 1).unwrap();
        assert!(check_chunk_count(&h, 2).is_err());
        assert_eq!(chunk_span(&h, 0, 1), (0, 4000));
        let e = frame_header(&b, 701).unwrap_err();
        assert!(e.detail().contains("payload is 701"), "{e}");
        let e = frame_header(&header(4000, 600, 4000, 700), 700).unwrap_err();
        assert!(e.detail().contains("do not fit"), "{e}");
        let e = frame_header(&header(1 << 63, 500, 4000, 700), 700).unwrap_err();
        assert!(e.detail().contains("negative"), "{e}");
        let mut m = b.clone();
        m[3] = b'x';
        assert!(frame_header(&m, 700).is_err());
        assert!(frame_header(&b[..61], 700).is_err());
        let h = frame_header(&header(10, 100, 4, 1 << 20), 1 << 20).unwrap();
        check_chunk_count(&h, 3).unwrap();
        assert_eq!(chunk_span(&h, 2, 3), (8, 10));
        assert!(check_chunk_count(&h, 1 << 40).is_err());
    }

    #[test]
    fn chunk_headers_refuse_lazy_and_short_chunks() {
        let mut c = [0u8; 32];
        c[4..8].copy_from_slice(&64u32.to_le_bytes());
        c[12..16].copy_from_slice(&40u32.to_le_bytes());
        assert_eq!(
            chunk_header(&c).unwrap(),
            ChunkHeader {
                nbytes: 64,
                cbytes: 40
            }
        );
        c[31] = 0x08;
        assert!(chunk_header(&c).unwrap_err().detail().contains("lazy"));
        c[31] = 0;
        c[12..16].copy_from_slice(&8u32.to_le_bytes());
        assert!(chunk_header(&c).is_err());
        assert!(chunk_header(&c[..20]).is_err());
    }
}
