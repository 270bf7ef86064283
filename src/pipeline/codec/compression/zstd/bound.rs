//! The most a zstd stream can decode to, read from its frame and block
//! headers without decoding (RFC 8878 §3.1; `spec/pipeline.md` §6.9).
//!
//! A frame that records its content size decodes to exactly that (the
//! decoder refuses anything else); one that does not decodes to at most the
//! sum of its blocks: a raw or RLE block to its stated size, a compressed
//! block to at most 128 KiB. Skippable frames decode to nothing. Anything
//! this walk does not understand gives no bound, so the decoder, not this
//! walk, decides whether such a stream is valid.

/// Magic number of a zstd frame (little-endian on the wire).
const FRAME_MAGIC: u32 = 0xFD2F_B528;
/// Skippable frames have magics `0x184D2A50..=0x184D2A5F`.
const SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The largest a compressed block decodes to (RFC 8878 §3.1.1.2.3).
const BLOCK_MAX: u64 = 128 << 10;

/// The most `stream` (one or more concatenated frames) decodes to, or
/// `None` when its framing is not one this walk reads.
pub(crate) fn max_decoded_len(stream: &[u8]) -> Option<u64> {
    let mut at = 0usize;
    let mut total = 0u64;
    while at < stream.len() {
        let magic = u32::from_le_bytes(stream.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC {
            let size = u32::from_le_bytes(stream.get(at..at + 4)?.try_into().ok()?);
            at = at.checked_add(4)?.checked_add(size as usize)?;
            continue;
        }
        if magic != FRAME_MAGIC {
            return None;
        }
        let (frame_most, end) = frame(stream, at)?;
        total = total.checked_add(frame_most)?;
        at = end;
    }
    Some(total)
}

/// The bound of the frame whose header starts at `at` (after the magic),
/// and where the frame ends.
fn frame(stream: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let descriptor = *stream.get(at)?;
    at += 1;
    if descriptor & 0x08 != 0 {
        return None; // reserved bit
    }
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 0x03)];
    let size_bytes = match descriptor >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    if !single_segment {
        at += 1; // window descriptor
    }
    at = at.checked_add(dict_bytes)?;
    let content_size = match size_bytes {
        0 => None,
        n => {
            let field = stream.get(at..at + n)?;
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(field);
            let v = u64::from_le_bytes(v);
            Some(if n == 2 { v + 256 } else { v })
        }
    };
    at += size_bytes;
    let mut blocks = 0u64;
    loop {
        let h = stream.get(at..at + 3)?;
        let header = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        at += 3;
        let last = header & 1 != 0;
        let size = u64::from(header >> 3);
        let (decodes_to, stored) = match (header >> 1) & 3 {
            0 => (size, size),
            1 => (size, 1),
            2 => (BLOCK_MAX, size),
            _ => return None,
        };
        blocks = blocks.checked_add(decodes_to)?;
        at = at.checked_add(usize::try_from(stored).ok()?)?;
        if at > stream.len() {
            return None;
        }
        if last {
            break;
        }
    }
    if checksum {
        at = at.checked_add(4)?;
    }
    Some((content_size.unwrap_or(blocks), at))
}

#[cfg(all(test, feature = "zstd"))]
mod tests {
    use super::max_decoded_len;

    fn frame(data: &[u8], with_size: bool) -> Vec<u8> {
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        if with_size {
            enc.set_pledged_src_size(Some(data.len() as u64)).unwrap();
        }
        enc.include_contentsize(with_size).unwrap();
        std::io::Write::write_all(&mut enc, data).unwrap();
        enc.finish().unwrap()
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn a_recorded_content_size_is_the_bound() {
        for n in [0usize, 1, 1000, 300_000] {
            assert_eq!(max_decoded_len(&frame(&data(n), true)), Some(n as u64));
        }
    }

    #[test]
    fn without_a_content_size_the_blocks_bound_it() {
        for n in [1usize, 1000, 131_072, 131_073, 1_000_000] {
            let most = max_decoded_len(&frame(&data(n), false)).unwrap();
            assert!(most >= n as u64, "{n}: bound {most}");
            // At most one whole block of slack per 128 KiB block.
            assert!(
                most <= (n as u64).div_ceil(131_072) * 131_072,
                "{n}: bound {most}"
            );
        }
    }

    #[test]
    fn concatenated_and_skippable_frames_add_up() {
        let mut s = frame(&data(5000), true);
        s.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        s.extend(frame(&data(7000), true));
        assert_eq!(max_decoded_len(&s), Some(12_000));
    }

    #[test]
    fn a_stream_this_walk_cannot_read_has_no_bound() {
        let good = frame(&data(100_000), false);
        assert_eq!(max_decoded_len(b"not zstd"), None);
        assert_eq!(max_decoded_len(&good[..good.len() - 1]), None);
        let mut reserved = good.clone();
        reserved[4] |= 0x08;
        assert_eq!(max_decoded_len(&reserved), None);
        for cut in 0..good.len().min(64) {
            let _ = max_decoded_len(&good[..cut]);
        }
    }
}
