//! The zstd compression stage (cargo feature `zstd`, libzstd; or
//! `zstd-decode-pure`, the pure-Rust decoder of [`pure`], which
//! decodes only). Decoding writes into a buffer of exactly the size the
//! descriptor implies. See `spec/pipeline.md` §4.1.

#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
pub(crate) mod bound;
#[cfg(feature = "zstd-decode-pure")]
mod pure;

#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
use std::borrow::Cow;

#[cfg(all(feature = "zstd-decode-pure", not(feature = "zstd")))]
use self::pure as imp;
#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
use crate::error::Result;
use crate::pipeline::codec::entry::{compression_build, CodecEntry};
use crate::pipeline::codec::stage::StageKind;
#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
use crate::pipeline::codec::stage::{CompressionStage, Stage, StageContext};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "zstd",
    kind: StageKind::Compression,
    keys: &["zstd_level"],
    feature: Some("zstd"),
    build: BUILD,
    sample: None,
};

compression_build!(any(feature = "zstd", feature = "zstd-decode-pure"), Zstd);

pub use crate::pipeline_spec::{Zstd, ZSTD_DEFAULT_LEVEL};

/// Whether a zstd frame written by the pipeline records its content size
/// in the frame header (`spec/pipeline.md` §4.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ZstdFrameSize {
    /// The frame header omits it, as tensogram 0.24.0 writes frames (the
    /// default: byte identity with the reference).
    #[default]
    Omitted,
    /// The frame header carries the uncompressed size, for readers that
    /// size their output from it (numcodecs' `Zstd` before 0.16.2).
    Recorded,
}

#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
impl Stage for Zstd {
    fn name(&self) -> &str {
        "zstd"
    }

    /// With the `zstdmt` feature and a thread budget above 1, libzstd's own
    /// workers compress (`spec/pipeline.md` §4.1): a valid frame that decodes
    /// to the same bytes, though not the sequential coder's bytes.
    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        self.encode_reporting(input, cx, &|_, _| {})
    }

    /// Feeds the input in 4 MiB pieces, reporting after
    /// each; the frame is the one a single write gives (`spec/pipeline.md`
    /// §6.7).
    fn encode_reporting<'a>(
        &mut self,
        input: Cow<'a, [u8]>,
        cx: &StageContext,
        report: &crate::pipeline::progress::Report<'_>,
    ) -> Result<Cow<'a, [u8]>> {
        #[cfg(feature = "zstd")]
        if let Cow::Owned(v) = input {
            // The input is the earlier stage's result: its pages are given
            // back as the encoder reads it (`spec/pipeline.md` §6.7).
            return Ok(Cow::Owned(imp::zstd_compress_consuming(
                crate::buffer::ReadOnce::new(v),
                self.level,
                cx.threads,
                cx.zstd_frame_size,
                report,
            )?));
        }
        Ok(Cow::Owned(imp::zstd_compress_reporting(
            &input,
            self.level,
            cx.threads,
            cx.zstd_frame_size,
            report,
        )?))
    }

    fn decode_into(&self, input: &[u8], _: &StageContext, out: &mut [u8]) -> Result<()> {
        imp::zstd_decompress_into(input, out)
    }

    /// Streams the frame through a decoder, 4 MiB of input
    /// at a time; a frame the stream decoder refuses (a window above
    /// its limit, damage) is decoded at once, so values and errors are the
    /// one-shot decoder's.
    fn decode_into_reporting(
        &self,
        input: &[u8],
        _: &StageContext,
        out: &mut [u8],
        report: &crate::pipeline::progress::Report<'_>,
    ) -> Result<()> {
        imp::zstd_decompress_reporting(input, out, report)
    }

    /// The frame's recorded content size, or the sum of its blocks
    /// ([`bound`]).
    fn max_decoded_len(&self, input: &[u8], _: &StageContext) -> Option<u64> {
        self::bound::max_decoded_len(input)
    }

    fn decode_vec(&self, input: &[u8], _: &StageContext, len: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        imp::zstd_decompress(input, len, &mut out)?;
        Ok(out)
    }
}

#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
impl CompressionStage for Zstd {}

#[cfg(feature = "zstd")]
pub use imp::{zstd_compress, zstd_decompress, zstd_decompress_into};

/// Decompresses one or more zstd frames into exactly `expected` bytes,
/// with libzstd or, without it, the pure-Rust decoder.
#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
pub(crate) fn decompress_exact(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
    imp::zstd_decompress(src, expected, out)
}

#[cfg(feature = "zstd")]
mod imp {
    use crate::error::{Error, Result};
    use crate::pipeline::ZstdFrameSize;

    /// A standard zstd frame carrying its content size (no checksum), as a
    /// sequential libzstd stream encoder with the size pledged writes it
    /// (`spec/pipeline.md` §4.1).
    pub fn zstd_compress(data: &[u8], level: i32) -> Result<Vec<u8>> {
        zstd_compress_with(data, level, 0, ZstdFrameSize::Recorded)
    }

    /// [`zstd_compress`] into an output reserved at the compressed size's
    /// bound up front, so it never grows and copies; with the `zstdmt`
    /// feature and `threads > 1`, on that many libzstd workers; the content
    /// size recorded in the frame header or not, per `size`.
    pub fn zstd_compress_with(
        data: &[u8],
        level: i32,
        threads: usize,
        size: ZstdFrameSize,
    ) -> Result<Vec<u8>> {
        zstd_compress_reporting(data, level, threads, size, &|_, _| {})
    }

    /// Bytes fed to the encoder between two progress reports.
    pub const REPORT_CHUNK: usize = 4 << 20;

    /// [`zstd_compress_with`], feeding `data` to the stream encoder
    /// [`REPORT_CHUNK`] bytes at a time and calling `report(done, read)`
    /// after each: the encoder reads its input once, in order, and the
    /// frame does not depend on how the input was cut.
    pub fn zstd_compress_reporting(
        data: &[u8],
        level: i32,
        threads: usize,
        size: ZstdFrameSize,
        report: &dyn Fn(u64, u64),
    ) -> Result<Vec<u8>> {
        let mut frame = Frame::new(data.len(), level, threads, size)?;
        for chunk in data.chunks(REPORT_CHUNK) {
            frame.put(chunk, report)?;
        }
        frame.finish(report)
    }

    /// [`zstd_compress_reporting`] of a buffer read once: the pages of each
    /// piece are given back once the encoder has taken it (libzstd's stream
    /// encoder copies its input into its own window), so the input and the
    /// frame are not both resident whole. The bytes are the same.
    pub(crate) fn zstd_compress_consuming(
        mut data: crate::buffer::ReadOnce,
        level: i32,
        threads: usize,
        size: ZstdFrameSize,
        report: &dyn Fn(u64, u64),
    ) -> Result<Vec<u8>> {
        let mut frame = Frame::new(data.len(), level, threads, size)?;
        loop {
            let chunk = data.next(REPORT_CHUNK);
            if chunk.is_empty() {
                break;
            }
            frame.put(chunk, report)?;
        }
        frame.finish(report)
    }

    /// One frame of `len` bytes being written by libzstd's stream encoder
    /// into an output reserved at the compressed size's bound.
    struct Frame {
        enc: zstd::stream::Encoder<'static, Vec<u8>>,
        len: u64,
        done: u64,
    }

    fn fail(e: std::io::Error) -> Error {
        Error::codec(format!("zstd compression failed: {e}"))
    }

    impl Frame {
        fn new(len: usize, level: i32, threads: usize, size: ZstdFrameSize) -> Result<Frame> {
            let out = crate::buffer::with_capacity(zstd::zstd_safe::compress_bound(len))?;
            let mut enc = zstd::stream::Encoder::new(out, level).map_err(fail)?;
            if size == ZstdFrameSize::Recorded {
                enc.set_pledged_src_size(Some(len as u64)).map_err(fail)?;
            }
            #[cfg(feature = "zstdmt")]
            if threads > 1 {
                enc.multithread(u32::try_from(threads).unwrap_or(u32::MAX))
                    .map_err(fail)?;
            }
            #[cfg(not(feature = "zstdmt"))]
            let _ = threads;
            Ok(Frame {
                enc,
                len: len as u64,
                done: 0,
            })
        }

        /// Feeds the next bytes, then reports `(done, done)` unless they
        /// were the last.
        fn put(&mut self, chunk: &[u8], report: &dyn Fn(u64, u64)) -> Result<()> {
            use std::io::Write;
            self.enc.write_all(chunk).map_err(fail)?;
            self.done += chunk.len() as u64;
            if self.done < self.len {
                report(self.done, self.done);
            }
            Ok(())
        }

        /// Ends the frame and reports the whole input.
        fn finish(self, report: &dyn Fn(u64, u64)) -> Result<Vec<u8>> {
            let out = self.enc.finish().map_err(fail)?;
            report(self.len, self.len);
            Ok(out)
        }
    }

    thread_local! {
        static DCTX: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> =
            std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
    }

    /// Decompresses one or more zstd frames into exactly `expected` bytes.
    ///
    /// One-shot decoding straight into the output: no window buffer beyond the
    /// output itself, whatever window the frame header declares, and a stream
    /// that would produce more than `expected` bytes stops at the boundary.
    pub fn zstd_decompress(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
        *out = crate::buffer::with_capacity(expected)?;
        let res = DCTX.with(|d| d.borrow_mut().decompress(out, src));
        check(res, expected)
    }

    /// Decompresses into exactly `out.len()` bytes (see [`zstd_decompress`]).
    pub fn zstd_decompress_into(src: &[u8], out: &mut [u8]) -> Result<()> {
        let expected = out.len();
        let res = DCTX.with(|d| d.borrow_mut().decompress(out, src));
        check(res, expected)
    }

    /// The largest window the stream decoder accepts (libzstd's default
    /// limit, 128 MiB); a frame asking more is decoded at once.
    const WINDOW_LOG_MAX: u32 = 27;

    /// [`zstd_decompress_into`] through the stream decoder, fed
    /// [`REPORT_CHUNK`] bytes at a time, calling `report(written, read)`
    /// after each but the last; on any failure of the stream decoder, the one-shot
    /// decoder's result.
    pub fn zstd_decompress_reporting(
        src: &[u8],
        out: &mut [u8],
        report: &dyn Fn(u64, u64),
    ) -> Result<()> {
        if streamed(src, out, report).is_some() {
            return Ok(());
        }
        zstd_decompress_into(src, out)
    }

    /// The stream decode of [`zstd_decompress_reporting`]; `None` when it
    /// did not give exactly `out.len()` bytes from whole frames.
    fn streamed(src: &[u8], out: &mut [u8], report: &dyn Fn(u64, u64)) -> Option<()> {
        use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};
        let expected = out.len();
        let mut d = DCtx::create();
        d.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX))
            .ok()?;
        let mut ob = OutBuffer::around(out);
        let mut hint = 0;
        let mut read = 0u64;
        for chunk in src.chunks(REPORT_CHUNK) {
            let mut ib = InBuffer::around(chunk);
            while ib.pos() < chunk.len() {
                let before = (ib.pos(), ob.pos());
                hint = d.decompress_stream(&mut ob, &mut ib).ok()?;
                if (ib.pos(), ob.pos()) == before {
                    // Output full with input left: more than expected.
                    return None;
                }
            }
            read += chunk.len() as u64;
            if read < src.len() as u64 {
                // The pipeline reports the end.
                report(ob.pos() as u64, read);
            }
        }
        (hint == 0 && ob.pos() == expected).then_some(())
    }

    fn check(
        res: std::result::Result<usize, zstd::zstd_safe::ErrorCode>,
        expected: usize,
    ) -> Result<()> {
        use zstd::zstd_safe;
        match res {
            Ok(n) if n == expected => Ok(()),
            Ok(n) => Err(Error::codec(format!(
                "zstd stream decoded to {n} bytes, descriptor implies {expected}"
            ))),
            Err(code) if zstd_safe::get_error_name(code) == DST_TOO_SMALL => {
                Err(Error::codec(format!(
                    "zstd stream decodes to more than the {expected} bytes the descriptor implies"
                )))
            }
            Err(code) => Err(Error::codec(format!(
                "zstd stream corrupt: {}",
                zstd_safe::get_error_name(code)
            ))),
        }
    }

    /// libzstd's name for `ZSTD_error_dstSize_tooSmall`.
    const DST_TOO_SMALL: &str = "Destination buffer is too small";

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn zstd_roundtrip_and_size_checks() {
            let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
            let c = zstd_compress(&data, 3).unwrap();
            assert_eq!(&c[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
            assert_eq!(content_size(&c), Some(data.len() as u64));
            assert_eq!(content_size(&zstd_compress(&[], 3).unwrap()), Some(0));
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

        /// The frame content size of a single-frame stream, as libzstd reads
        /// it from the frame header.
        fn content_size(frame: &[u8]) -> Option<u64> {
            zstd::zstd_safe::get_frame_content_size(frame).unwrap()
        }

        /// The single-write encoder gives the bytes of a chunked stream
        /// encoder with the same size pledged, over many blocks, and its
        /// frame carries the content size; libzstd's workers give a frame
        /// that decodes to the same data and carries it too.
        #[test]
        fn one_write_equals_the_chunked_stream_and_workers_decode_alike() {
            use std::io::Write;
            let data: Vec<u8> = (0..3_000_000u32)
                .flat_map(|i| (((i as f64 * 1e-3).sin() * 1e4) as i32).to_le_bytes())
                .collect();
            for level in [1, 3] {
                let mut want = Vec::new();
                let mut enc = zstd::stream::Encoder::new(&mut want, level).unwrap();
                enc.set_pledged_src_size(Some(data.len() as u64)).unwrap();
                for piece in data.chunks(100_000) {
                    enc.write_all(piece).unwrap();
                }
                enc.finish().unwrap();
                let one = zstd_compress_with(&data, level, 0, ZstdFrameSize::Recorded).unwrap();
                assert_eq!(one, want);
                assert_eq!(content_size(&one), Some(data.len() as u64));
                let bare = zstd::stream::encode_all(&data[..], level).unwrap();
                let omitted = zstd_compress_with(&data, level, 0, ZstdFrameSize::Omitted).unwrap();
                assert_eq!(omitted, bare);
                assert_eq!(content_size(&omitted), None);
                let mt = zstd_compress_with(&data, level, 2, ZstdFrameSize::Recorded).unwrap();
                assert_eq!(content_size(&mt), Some(data.len() as u64));
                let mut out = Vec::new();
                zstd_decompress(&mt, data.len(), &mut out).unwrap();
                assert!(out == data, "level {level}");
            }
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
    }
}
