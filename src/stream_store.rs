//! Copies into large output buffers with non-temporal (streaming) stores
//! (`spec/pipeline.md` §6.5).
//!
//! A decode writes its output once and does not read it back, and for
//! outputs larger than the caches ordinary stores first read every line
//! they write (read for ownership), which doubles the memory traffic. On
//! x86-64, streaming stores write whole lines without reading them; they
//! are part of SSE2, so every x86-64 CPU has them. Elsewhere, and for small
//! outputs the caller will read soon, [`StreamingStores::copy`] is an
//! ordinary copy. The bytes written are the same either way.
#![allow(unsafe_code)]

/// Outputs at least this large are written with streaming stores: beyond
/// the size of a typical last-level cache share, the output would be
/// evicted before anyone reads it anyway.
pub(crate) const STREAMING_MIN: usize = 8 << 20;

/// A writer that copies with streaming stores and orders them before any
/// later store when dropped (a store fence), so whoever reads the output
/// after this writer is gone sees every byte.
pub(crate) struct StreamingStores {
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    enabled: bool,
}

impl StreamingStores {
    /// A writer for an output of `total` bytes: streaming when the output
    /// is at least [`STREAMING_MIN`] bytes and not `fresh` (freshly
    /// allocated pages are zeroed by the kernel as they are first touched,
    /// which leaves their lines in cache for ordinary stores to hit).
    pub fn for_output(total: usize, fresh: bool) -> Self {
        Self::new(Self::wanted(total, fresh))
    }

    /// Whether an output of `total` bytes, `fresh` or not, is worth
    /// streaming stores (see [`StreamingStores::for_output`]).
    pub fn wanted(total: usize, fresh: bool) -> bool {
        total >= STREAMING_MIN && !fresh
    }

    /// A writer that streams when `streaming` and the CPU has streaming
    /// stores.
    pub fn new(streaming: bool) -> Self {
        StreamingStores {
            enabled: cfg!(target_arch = "x86_64") && streaming,
        }
    }

    /// Copies `src` into `dst`, which has the same length.
    #[inline]
    pub fn copy(&mut self, dst: &mut [u8], src: &[u8]) {
        assert_eq!(dst.len(), src.len(), "streaming copy of unequal lengths");
        #[cfg(target_arch = "x86_64")]
        if self.enabled {
            return copy_nt(dst, src);
        }
        dst.copy_from_slice(src);
    }
}

impl Drop for StreamingStores {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if self.enabled {
            // SAFETY: `sfence` is part of SSE, which every x86-64 CPU has;
            // it only orders earlier stores before later ones.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn copy_nt(dst: &mut [u8], src: &[u8]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    // Bytes before the first 16-byte boundary of `dst`, and the whole
    // 16-byte lanes after it.
    let head = dst.as_ptr().align_offset(16).min(dst.len());
    let lanes = (dst.len() - head) / 16;
    let body = head + lanes * 16;
    dst[..head].copy_from_slice(&src[..head]);
    for i in 0..lanes {
        let at = head + i * 16;
        // SAFETY: `at + 16 <= body <= len` for both slices (equal lengths,
        // checked by the caller); `dst[at..]` is 16-byte aligned by the
        // choice of `head`, which `_mm_stream_si128` requires, and
        // `_mm_loadu_si128` accepts any alignment. SSE2 is part of every
        // x86-64 CPU.
        unsafe {
            let v = _mm_loadu_si128(src.as_ptr().add(at) as *const __m128i);
            _mm_stream_si128(dst.as_mut_ptr().add(at) as *mut __m128i, v);
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_byte_at_every_alignment_and_length() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = vec![0u8; 400];
        for streaming in [false, true] {
            for off in 0..17 {
                for len in [0, 1, 15, 16, 17, 31, 32, 33, 64, 255, 283] {
                    buf.fill(0xee);
                    let mut w = StreamingStores {
                        enabled: streaming && cfg!(target_arch = "x86_64"),
                    };
                    w.copy(&mut buf[off..off + len], &src[..len]);
                    drop(w);
                    assert_eq!(&buf[off..off + len], &src[..len], "off {off} len {len}");
                    assert!(buf[..off].iter().all(|&b| b == 0xee));
                    assert!(buf[off + len..].iter().all(|&b| b == 0xee));
                }
            }
        }
    }

    #[test]
    fn small_and_fresh_outputs_use_ordinary_stores() {
        assert!(!StreamingStores::for_output(STREAMING_MIN - 1, false).enabled);
        assert!(!StreamingStores::for_output(STREAMING_MIN, true).enabled);
        assert_eq!(
            StreamingStores::for_output(STREAMING_MIN, false).enabled,
            cfg!(target_arch = "x86_64")
        );
    }
}
