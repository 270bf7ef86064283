//! The blosc2 compression stage (cargo feature `blosc2`): the stream as a
//! blosc2 super-chunk serialized to a contiguous frame, in chunks of at
//! most 256 MiB, through c-blosc2 built from vendored sources. The frame
//! header, the chunk offsets and every chunk header are read and checked
//! by tgm ([`frame`]) before c-blosc2 decodes a chunk, and a
//! range decodes only the chunks that hold it. See `spec/pipeline.md`
//! §4.5.

#[cfg(feature = "blosc2")]
pub(crate) mod frame;

#[cfg(feature = "blosc2")]
use std::borrow::Cow;

use crate::dtype::Dtype;
#[cfg(feature = "blosc2")]
use crate::error::Result;
use crate::pipeline::codec::entry::{compression_build, CodecEntry, Sample};
use crate::pipeline::codec::stage::StageKind;
#[cfg(feature = "blosc2")]
use crate::pipeline::codec::stage::{CompressionStage, RangeInput, Stage, StageContext};
#[cfg(feature = "blosc2")]
pub use crate::pipeline_spec::{Blosc2, Blosc2Codec};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "blosc2",
    kind: StageKind::Compression,
    keys: &["blosc2_codec", "blosc2_clevel"],
    feature: Some("blosc2"),
    build: BUILD,
    sample: Some(Sample {
        label: "pipeline       blosc2",
        pipeline: || {
            crate::pipeline::PipelineBuilder::new().blosc2(crate::pipeline_spec::Blosc2::default())
        },
        dtype: Dtype::Float64,
        tolerance: 0.0,
    }),
};

compression_build!(feature = "blosc2", Blosc2);

#[cfg(feature = "blosc2")]
/// Decoded bytes per super-chunk chunk at most (floored to whole
/// elements), as the reference writes them.
pub const CHUNK_BYTES: usize = 256 << 20;

/// blosc2's element size for the stream a stage sees: the packed width
/// after simple_packing, 1 after a shuffle, else the element width.
#[cfg(feature = "blosc2")]
fn typesize(cx: &StageContext) -> usize {
    (cx.sample_bits as usize).div_ceil(8)
}

#[cfg(feature = "blosc2")]
pub use imp::{blosc2_compress, blosc2_decompress_into, blosc2_decompress_range};

#[cfg(feature = "blosc2")]
impl Stage for Blosc2 {
    fn name(&self) -> &str {
        "blosc2"
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        imp::check_typesize(typesize(cx))
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        Ok(Cow::Owned(blosc2_compress(
            &input,
            *self,
            typesize(cx),
            cx.threads,
            CHUNK_BYTES,
        )?))
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        blosc2_decompress_into(input, cx.threads, out)
    }

    fn supports_range(&self) -> bool {
        true
    }

    /// Reads the frame header, the offsets chunk and the chunks holding
    /// the range, nothing else.
    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        blosc2_decompress_range(input, cx.input_len, cx.decoded_len, from, out)
    }
}

#[cfg(feature = "blosc2")]
impl CompressionStage for Blosc2 {}

#[cfg(feature = "blosc2")]
// The calls into c-blosc2: each unsafe block states what it relies on.
#[allow(unsafe_code)]
mod imp {
    use std::borrow::Cow;
    use std::mem::MaybeUninit;
    use std::sync::Once;

    use blosc2::chunk::{Decoder, SChunk};
    use blosc2::{CParams, CompressAlgo, DParams};

    use super::frame::{self as frame, FrameHeader, CHUNK_HEADER_LEN};
    use super::{Blosc2, Blosc2Codec};
    use crate::error::{Error, Result};

    /// Reads bytes `[from, to)` of the frame.
    pub type Read<'x> = dyn Fn(u64, u64) -> Result<Cow<'x, [u8]>> + 'x;

    fn init() {
        static INIT: Once = Once::new();
        // SAFETY: blosc2_init has no preconditions; it runs once.
        INIT.call_once(|| unsafe { blosc2_sys::blosc2_init() });
    }

    fn fail(what: &str, e: blosc2::Error) -> Error {
        Error::codec(format!("blosc2 {what} failed: {e}"))
    }

    /// blosc2 keeps the element size in one byte and needs it positive.
    pub fn check_typesize(t: usize) -> Result<()> {
        if !(1..=255).contains(&t) {
            return Err(Error::invalid_argument(format!(
                "compression \"blosc2\" cannot code elements of {t} bytes"
            )));
        }
        Ok(())
    }

    fn algo(c: Blosc2Codec) -> CompressAlgo {
        match c {
            Blosc2Codec::Blosclz => CompressAlgo::Blosclz,
            Blosc2Codec::Lz4 => CompressAlgo::Lz4,
            Blosc2Codec::Lz4hc => CompressAlgo::Lz4hc,
            Blosc2Codec::Zlib => CompressAlgo::Zlib,
            Blosc2Codec::Zstd => CompressAlgo::Zstd,
        }
    }

    /// The frame of a super-chunk holding `data` in chunks of at most
    /// `chunk_bytes` (floored to whole elements); c-blosc2 runs on
    /// `threads` workers (at least one), which it records in the frame.
    pub fn blosc2_compress(
        data: &[u8],
        p: Blosc2,
        typesize: usize,
        threads: usize,
        chunk_bytes: usize,
    ) -> Result<Vec<u8>> {
        check_typesize(typesize)?;
        init();
        let threads = threads.max(1);
        let mut cp = CParams::default();
        cp.compressor(algo(p.codec))
            .clevel(p.clevel as u32)
            .typesize(typesize)
            .map_err(|e| fail("setup", e))?;
        cp.nthreads(threads);
        let mut dp = DParams::default();
        dp.nthreads(threads);
        let mut s = SChunk::new(cp, dp).map_err(|e| fail("setup", e))?;
        let step = (chunk_bytes / typesize).max(1) * typesize;
        if data.is_empty() {
            // c-blosc2 cannot append an empty chunk (nor can the reference).
            return Err(Error::invalid_argument(
                "compression \"blosc2\" cannot code an object without values",
            ));
        }
        if data.len() <= step {
            s.append(data).map_err(|e| fail("compression", e))?;
        } else {
            for piece in data.chunks(step) {
                s.append(piece).map_err(|e| fail("compression", e))?;
            }
        }
        let buf = s.to_buffer().map_err(|e| fail("serialization", e))?;
        let mut out = crate::buffer::with_capacity(buf.as_slice().len())?;
        out.extend_from_slice(buf.as_slice());
        Ok(out)
    }

    /// A frame whose header and chunk offsets were read and checked.
    struct Frame<'r, 'x> {
        read: &'r Read<'x>,
        h: FrameHeader,
        offsets: Vec<u64>,
        threads: usize,
    }

    impl<'r, 'x> Frame<'r, 'x> {
        /// Reads the header and the offsets of a frame of `len` bytes that
        /// must decode to `decoded` bytes.
        fn open(read: &'r Read<'x>, len: u64, decoded: u64, threads: usize) -> Result<Self> {
            let head = read(0, (frame::FRAME_FIXED_LEN as u64).min(len))?;
            let h = frame::frame_header(&head, len)?;
            if h.nbytes != decoded {
                return Err(Error::codec(format!(
                    "blosc2 frame decodes to {} bytes, the descriptor implies {decoded}",
                    h.nbytes
                )));
            }
            init();
            let mut f = Frame {
                read,
                h,
                offsets: Vec::new(),
                threads: threads.max(1),
            };
            let at = h.header_len + h.cbytes;
            let (_, index) = f.chunk_at(at, len)?;
            let n = index.len_hint / 8;
            if index.len_hint % 8 != 0 {
                return Err(Error::codec(
                    "blosc2 frame: offsets chunk is not whole offsets",
                ));
            }
            frame::check_chunk_count(&h, n)?;
            let mut raw = crate::buffer::zeroed(index.len_hint as usize)?;
            f.decode(&index.bytes, &mut raw)?;
            for (i, o) in raw.chunks_exact(8).enumerate() {
                let o = i64::from_le_bytes(o.try_into().unwrap_or_default());
                if o < 0 {
                    return Err(Error::codec(format!(
                        "blosc2 frame: chunk {i} is a special-value run, which tgm does not decode"
                    )));
                }
                f.offsets.push(o as u64);
            }
            Ok(f)
        }

        /// The whole chunk stored at frame byte `at`, which must end by
        /// `limit`.
        fn chunk_at(&self, at: u64, limit: u64) -> Result<(u64, Stored<'x>)> {
            let end = at.saturating_add(CHUNK_HEADER_LEN as u64);
            if end > limit {
                return Err(Error::codec(format!(
                    "blosc2 frame: a chunk at byte {at} would pass byte {limit}"
                )));
            }
            let ch = frame::chunk_header(&(self.read)(at, end)?)?;
            if at + ch.cbytes > limit {
                return Err(Error::codec(format!(
                    "blosc2 frame: the chunk at byte {at} of {} bytes passes byte {limit}",
                    ch.cbytes
                )));
            }
            let bytes = (self.read)(at, at + ch.cbytes)?;
            Ok((
                at,
                Stored {
                    bytes,
                    len_hint: ch.nbytes,
                },
            ))
        }

        /// Decodes stored chunk `src` into exactly `out`.
        fn decode(&self, src: &[u8], out: &mut [u8]) -> Result<()> {
            let mut dp = DParams::default();
            dp.nthreads(self.threads);
            let mut d = Decoder::new(dp).map_err(|e| fail("setup", e))?;
            // SAFETY: `u8` and `MaybeUninit<u8>` share a layout, and the
            // decoder only writes initialised bytes.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(
                    out.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                    out.len(),
                )
            };
            let n = d
                .decompress_into(src, dst)
                .map_err(|e| fail("decompression", e))?;
            if n != out.len() {
                return Err(Error::codec(format!(
                    "blosc2 chunk decoded to {n} bytes, {} expected",
                    out.len()
                )));
            }
            Ok(())
        }

        /// Decodes data chunk `i` into `out`, exactly its decoded span.
        fn decode_chunk(&self, i: usize, out: &mut [u8]) -> Result<()> {
            let at = self.h.header_len.saturating_add(self.offsets[i]);
            let (_, c) = self.chunk_at(at, self.h.header_len + self.h.cbytes)?;
            if c.len_hint != out.len() as u64 {
                return Err(Error::codec(format!(
                    "blosc2 chunk {i} holds {} bytes, the frame implies {}",
                    c.len_hint,
                    out.len()
                )));
            }
            self.decode(&c.bytes, out)
        }

        fn span(&self, i: usize) -> (u64, u64) {
            frame::chunk_span(&self.h, i as u64, self.offsets.len() as u64)
        }
    }

    /// A stored chunk with the decoded size its header declares.
    struct Stored<'x> {
        bytes: Cow<'x, [u8]>,
        len_hint: u64,
    }

    /// Decodes a whole frame into exactly `out.len()` bytes.
    pub fn blosc2_decompress_into(frame: &[u8], threads: usize, out: &mut [u8]) -> Result<()> {
        let read = |a: u64, b: u64| Ok(Cow::Borrowed(&frame[a as usize..b as usize]));
        let f = Frame::open(&read, frame.len() as u64, out.len() as u64, threads)?;
        for i in 0..f.offsets.len() {
            let (a, b) = f.span(i);
            f.decode_chunk(i, &mut out[a as usize..b as usize])?;
        }
        Ok(())
    }

    /// Decodes bytes `from..from + out.len()` of a frame of `len` bytes
    /// that decodes to `decoded` bytes, reading only the header, the
    /// offsets and the chunks holding them.
    pub fn blosc2_decompress_range(
        read: &Read<'_>,
        len: u64,
        decoded: u64,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let to = from + out.len() as u64;
        if to > decoded {
            return Err(Error::invalid_argument(format!(
                "bytes {from}..{to} are past the {decoded} decoded bytes"
            )));
        }
        let f = Frame::open(read, len, decoded, 1)?;
        let mut scratch = Vec::new();
        for i in 0..f.offsets.len() {
            let (a, b) = f.span(i);
            if b <= from || a >= to || a == b {
                continue;
            }
            let (lo, hi) = (from.max(a), to.min(b));
            let dst = &mut out[(lo - from) as usize..(hi - from) as usize];
            if lo == a && hi == b {
                f.decode_chunk(i, dst)?;
            } else {
                scratch.resize((b - a) as usize, 0);
                f.decode_chunk(i, &mut scratch)?;
                dst.copy_from_slice(&scratch[(lo - a) as usize..(hi - a) as usize]);
            }
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn data(n: usize) -> Vec<u8> {
            (0..n as u32)
                .flat_map(|i| ((i as f64 * 0.01).sin() * 1e3).round().to_le_bytes())
                .collect()
        }

        #[test]
        fn every_inner_codec_round_trips_in_one_and_many_chunks() {
            let d = data(10_000);
            for codec in Blosc2Codec::ALL {
                let p = Blosc2 { codec, clevel: 5 };
                for chunk in [super::super::CHUNK_BYTES, 8 * 1000, 8 * 999] {
                    let c = blosc2_compress(&d, p, 8, 0, chunk).unwrap();
                    assert!(c.len() < d.len(), "{codec:?}");
                    let mut out = vec![0u8; d.len()];
                    blosc2_decompress_into(&c, 1, &mut out).unwrap();
                    assert!(out == d, "{codec:?} {chunk}");
                }
            }
            let e = blosc2_compress(&[], Blosc2::default(), 4, 0, 1 << 20).unwrap_err();
            assert!(e.detail().contains("without values"), "{e}");
        }

        #[test]
        fn ranges_read_only_the_chunks_that_hold_them() {
            let d = data(10_000);
            let c = blosc2_compress(&d, Blosc2::default(), 8, 0, 8 * 1000).unwrap();
            let read_bytes = std::cell::Cell::new(0u64);
            let read = |a: u64, b: u64| {
                read_bytes.set(read_bytes.get() + (b - a));
                Ok(Cow::Borrowed(&c[a as usize..b as usize]))
            };
            for (from, n) in [
                (0, 1),
                (7999, 2),
                (8000, 8000),
                (12_345, 40_000),
                (79_999, 1),
            ] {
                let mut out = vec![0u8; n];
                blosc2_decompress_range(&read, c.len() as u64, d.len() as u64, from, &mut out)
                    .unwrap();
                assert!(out == d[from as usize..from as usize + n], "{from}+{n}");
            }
            read_bytes.set(0);
            let mut out = vec![0u8; 16];
            blosc2_decompress_range(&read, c.len() as u64, d.len() as u64, 40_000, &mut out)
                .unwrap();
            assert!(
                read_bytes.get() < c.len() as u64 / 3,
                "{} of {}",
                read_bytes.get(),
                c.len()
            );
        }

        #[test]
        fn frames_that_disagree_with_the_descriptor_or_themselves_are_refused() {
            let d = data(5000);
            let c = blosc2_compress(&d, Blosc2::default(), 8, 0, 8 * 1000).unwrap();
            let mut out = vec![0u8; d.len() - 8];
            let e = blosc2_decompress_into(&c, 1, &mut out).unwrap_err();
            assert!(e.detail().contains("descriptor implies"), "{e}");
            let mut out = vec![0u8; d.len()];
            for cut in [0, 10, 61, 62, 100, c.len() - 1] {
                assert!(
                    blosc2_decompress_into(&c[..cut], 1, &mut out).is_err(),
                    "{cut}"
                );
            }
            // Every single-byte change either fails cleanly or decodes;
            // none may read outside the frame.
            for i in 0..c.len() {
                let mut m = c.clone();
                m[i] ^= 0x5a;
                let _ = blosc2_decompress_into(&m, 1, &mut out);
            }
        }
    }
}
