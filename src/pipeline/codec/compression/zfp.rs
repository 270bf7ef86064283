//! The zfp compression stage (cargo feature `zfp`): lossy coding of
//! float64 values as one 1-D array, with no zfp header, through libzfp
//! built from vendored sources. In fixed-rate mode every block of 4
//! values takes the same number of bits, so a range decodes block by
//! block. See `spec/pipeline.md` §4.6.

#[cfg(feature = "zfp")]
use std::borrow::Cow;

#[cfg(feature = "zfp")]
use super::float64_stream;
use crate::dtype::Dtype;
#[cfg(feature = "zfp")]
use crate::error::Result;
use crate::pipeline::codec::entry::{compression_build, CodecEntry, Sample};
use crate::pipeline::codec::stage::StageKind;
#[cfg(feature = "zfp")]
use crate::pipeline::codec::stage::{CompressionStage, RangeInput, Stage, StageContext, StagePlan};
pub use crate::pipeline_spec::{Zfp, ZfpMode};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "zfp",
    kind: StageKind::Compression,
    keys: &["zfp_mode", "zfp_rate", "zfp_precision", "zfp_tolerance"],
    feature: Some("zfp"),
    build: BUILD,
    sample: Some(Sample {
        label: "pipeline       zfp (fixed-rate)",
        pipeline: || {
            crate::pipeline::PipelineBuilder::new().zfp(Zfp {
                mode: ZfpMode::FixedRate(32.0),
            })
        },
        dtype: Dtype::Float64,
        tolerance: 1e-3,
    }),
};

compression_build!(feature = "zfp", Zfp);

#[cfg(feature = "zfp")]
pub use imp::{zfp_compress, zfp_decompress_into, zfp_decompress_range};

#[cfg(feature = "zfp")]
impl Stage for Zfp {
    fn name(&self) -> &str {
        "zfp"
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        float64_stream::check("zfp", cx)
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        let values = float64_stream::values(&input, cx.byte_order)?;
        Ok(Cow::Owned(zfp_compress(&values, self.mode)?))
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let n = float64_stream::count("zfp", out)?;
        let mut values = float64_stream::with_capacity(n)?;
        values.resize(n, 0.0);
        zfp_decompress_into(input, self.mode, &mut values)?;
        float64_stream::write(&values, cx.byte_order, out);
        Ok(())
    }

    fn supports_range(&self) -> bool {
        matches!(self.mode, ZfpMode::FixedRate(_))
    }

    /// Reads only the blocks of 4 values covering the range (fixed-rate
    /// mode); other modes are refused by name.
    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let total = cx.decoded_len / 8;
        let (first, end) = (from / 8, (from + out.len() as u64).div_ceil(8));
        let mut values = float64_stream::with_capacity((end - first) as usize)?;
        values.resize((end - first) as usize, 0.0);
        zfp_decompress_range(input, cx.input_len, self.mode, total, first, &mut values)?;
        let mut bytes = crate::buffer::zeroed(values.len() * 8)?;
        float64_stream::write(&values, cx.byte_order, &mut bytes);
        let skip = (from - first * 8) as usize;
        out.copy_from_slice(&bytes[skip..skip + out.len()]);
        Ok(())
    }

    /// In fixed-rate mode, the 64-bit words holding the blocks that cover
    /// each wanted range; `None` in the other modes.
    fn plan_range(
        &self,
        wanted: &[std::ops::Range<u64>],
        cx: &StageContext,
    ) -> Result<Option<StagePlan>> {
        let ZfpMode::FixedRate(rate) = self.mode else {
            return Ok(None);
        };
        if wanted.is_empty() {
            return Ok(None);
        }
        let bits = imp::block_bits(rate)?;
        let ranges = wanted
            .iter()
            .map(|r| imp::stored_words(bits, r.start / 8, r.end.div_ceil(8), cx.input_len))
            .collect();
        Ok(Some(StagePlan::reading(ranges)))
    }
}

#[cfg(feature = "zfp")]
impl CompressionStage for Zfp {}

#[cfg(feature = "zfp")]
// The calls into libzfp: each unsafe block states what it relies on.
#[allow(unsafe_code)]
mod imp {
    use std::borrow::Cow;
    use std::ffi::c_void;

    use super::ZfpMode;
    use crate::error::{Error, ErrorKind, Result};
    use zfp_sys_cc as z;

    /// Values per 1-D zfp block.
    const BLOCK: u64 = 4;

    /// An open zfp stream over `buf`, closed on drop.
    struct Stream {
        zfp: *mut z::zfp_stream,
        bits: *mut z::bitstream,
    }

    impl Stream {
        /// A stream in `mode` reading from or writing to `buf`, which must
        /// outlive it.
        fn open(mode: ZfpMode, buf: &mut [u8]) -> Result<Self> {
            // SAFETY: plain constructors; a null result is checked.
            let zfp = unsafe { z::zfp_stream_open(std::ptr::null_mut()) };
            if zfp.is_null() {
                return Err(Error::codec("zfp_stream_open failed"));
            }
            // SAFETY: `buf` is valid for `buf.len()` bytes for the stream's
            // life (the caller keeps it alive).
            let bits = unsafe { z::stream_open(buf.as_mut_ptr().cast::<c_void>(), buf.len()) };
            let s = Stream { zfp, bits };
            if bits.is_null() {
                return Err(Error::codec("zfp stream_open failed"));
            }
            // SAFETY: `zfp` and `bits` are live.
            unsafe {
                set_mode(zfp, mode)?;
                z::zfp_stream_set_bit_stream(zfp, bits);
                z::zfp_stream_rewind(zfp);
            }
            Ok(s)
        }
    }

    impl Drop for Stream {
        fn drop(&mut self) {
            // SAFETY: both were opened by `Stream::open` and are closed once.
            unsafe {
                if !self.bits.is_null() {
                    z::stream_close(self.bits);
                }
                z::zfp_stream_close(self.zfp);
            }
        }
    }

    /// A zfp field describing `n` doubles at `ptr`, freed on drop.
    struct Field(*mut z::zfp_field);

    impl Field {
        fn new(ptr: *mut f64, n: usize) -> Result<Self> {
            // SAFETY: only records the pointer and size.
            let f =
                unsafe { z::zfp_field_1d(ptr.cast::<c_void>(), z::zfp_type_zfp_type_double, n) };
            if f.is_null() {
                return Err(Error::codec("zfp_field_1d failed"));
            }
            Ok(Field(f))
        }
    }

    impl Drop for Field {
        fn drop(&mut self) {
            // SAFETY: allocated by `zfp_field_1d`, freed once.
            unsafe { z::zfp_field_free(self.0) }
        }
    }

    /// Sets the coding mode of `zfp`.
    ///
    /// # Safety
    /// `zfp` must be a live stream.
    unsafe fn set_mode(zfp: *mut z::zfp_stream, mode: ZfpMode) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            match mode {
                ZfpMode::FixedRate(rate) => {
                    z::zfp_stream_set_rate(zfp, rate, z::zfp_type_zfp_type_double, 1, 0);
                }
                ZfpMode::FixedPrecision(p) => {
                    z::zfp_stream_set_precision(zfp, p);
                }
                ZfpMode::FixedAccuracy(t) => {
                    if z::zfp_stream_set_accuracy(zfp, t) == 0.0 {
                        return Err(Error::codec(format!("zfp refuses zfp_tolerance {t}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// Bits of one block in fixed-rate `rate`, as libzfp rounds it.
    pub(super) fn block_bits(rate: f64) -> Result<u64> {
        let mut none = [0u8; 8];
        let s = Stream::open(ZfpMode::FixedRate(rate), &mut none)?;
        // SAFETY: `s.zfp` is live.
        Ok(unsafe { (*s.zfp).maxbits } as u64)
    }

    /// Bytes of the fixed-rate stream of `n` values: whole 64-bit words
    /// holding `ceil(n / 4)` blocks of [`block_bits`] each.
    pub fn fixed_rate_len(rate: f64, n: u64) -> Result<u64> {
        n.div_ceil(BLOCK)
            .checked_mul(block_bits(rate)?)
            .map(|bits| bits.div_ceil(64) * 8)
            .ok_or_else(|| Error::metadata("zfp stream size overflows"))
    }

    /// The largest stream libzfp can write for `n` values in `mode`.
    fn max_len(mode: ZfpMode, n: usize) -> Result<usize> {
        let mut none = [0u8; 8];
        let s = Stream::open(mode, &mut none)?;
        let f = Field::new(std::ptr::null_mut(), n)?;
        // SAFETY: both are live; the field's data pointer is not read.
        Ok(unsafe { z::zfp_stream_maximum_size(s.zfp, f.0) })
    }

    /// The zfp stream of `values` (1-D, no header), as libzfp writes it.
    pub fn zfp_compress(values: &[f64], mode: ZfpMode) -> Result<Vec<u8>> {
        if values.is_empty() {
            return Ok(Vec::new());
        }
        let cap = max_len(mode, values.len())?;
        let mut out = crate::buffer::zeroed(cap)?;
        let s = Stream::open(mode, &mut out)?;
        // libzfp reads the field, never writes it.
        let f = Field::new(values.as_ptr().cast_mut(), values.len())?;
        // SAFETY: the stream covers `out`, the field `values`.
        let len = unsafe { z::zfp_compress(s.zfp, f.0) };
        drop((s, f));
        if len == 0 || len > cap {
            return Err(Error::codec("zfp compression failed"));
        }
        out.truncate(len);
        Ok(out)
    }

    /// `stream` copied with zeroed room after it, so that libzfp's word
    /// reads past its end (a truncated or hostile stream) stay in bounds.
    fn padded(stream: &[u8], room: usize) -> Result<Vec<u8>> {
        let mut buf = crate::buffer::zeroed(stream.len() + room + 8)?;
        buf[..stream.len()].copy_from_slice(stream);
        Ok(buf)
    }

    /// Checks a stream's length against what `mode` can write for `n`
    /// values: exactly [`fixed_rate_len`] in fixed-rate mode, at most
    /// libzfp's maximum otherwise. Returns that maximum.
    fn check_len(stream: &[u8], mode: ZfpMode, n: usize) -> Result<usize> {
        if n == 0 {
            return if stream.is_empty() {
                Ok(0)
            } else {
                Err(Error::codec(format!(
                    "zfp stream of {} bytes for an object without values",
                    stream.len()
                )))
            };
        }
        let max = max_len(mode, n)?;
        if let ZfpMode::FixedRate(rate) = mode {
            let want = fixed_rate_len(rate, n as u64)?;
            if stream.len() as u64 != want {
                return Err(Error::codec(format!(
                    "zfp fixed-rate stream is {} bytes, {n} values at zfp_rate {rate} take {want}",
                    stream.len()
                )));
            }
        } else if stream.len() > max {
            return Err(Error::codec(format!(
                "zfp stream is {} bytes, more than the {max} that {n} values can take",
                stream.len()
            )));
        }
        Ok(max)
    }

    /// Decodes `stream` into exactly `out.len()` values.
    pub fn zfp_decompress_into(stream: &[u8], mode: ZfpMode, out: &mut [f64]) -> Result<()> {
        let max = check_len(stream, mode, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let mut buf = padded(stream, max.saturating_sub(stream.len()))?;
        let s = Stream::open(mode, &mut buf)?;
        let f = Field::new(out.as_mut_ptr(), out.len())?;
        // SAFETY: the stream covers `buf` (at least libzfp's maximum for
        // this field), the field `out`.
        let done = unsafe { z::zfp_decompress(s.zfp, f.0) };
        if done == 0 {
            return Err(Error::codec("zfp decompression failed"));
        }
        Ok(())
    }

    /// The stored bytes (whole 64-bit words, within `stream_len`) holding
    /// the blocks of values `first..end` at `bits` per block.
    pub(super) fn stored_words(
        bits: u64,
        first: u64,
        end: u64,
        stream_len: u64,
    ) -> std::ops::Range<u64> {
        let (b0, b1) = (first / BLOCK, end.div_ceil(BLOCK));
        let from = b0 * bits / 64 * 8;
        let to = (b1 * bits).div_ceil(64) * 8;
        from.min(stream_len)..to.min(stream_len)
    }

    /// Reads bytes `[from, to)` of the stream.
    pub type Read<'x> = dyn Fn(u64, u64) -> Result<Cow<'x, [u8]>> + 'x;

    /// Decodes values `first..first + out.len()` of a fixed-rate stream of
    /// `stream_len` bytes holding `total` values, reading only the 64-bit
    /// words that hold their blocks.
    pub fn zfp_decompress_range(
        read: &Read<'_>,
        stream_len: u64,
        mode: ZfpMode,
        total: u64,
        first: u64,
        out: &mut [f64],
    ) -> Result<()> {
        let ZfpMode::FixedRate(rate) = mode else {
            return Err(Error::new(
                ErrorKind::RangeNotSupported,
                "range decoding of zfp needs zfp_mode \"fixed_rate\"",
            ));
        };
        let end = first + out.len() as u64;
        if end > total {
            return Err(Error::invalid_argument(format!(
                "values {first}..{end} are past the {total} values of the object"
            )));
        }
        let want = fixed_rate_len(rate, total)?;
        if stream_len != want {
            return Err(Error::codec(format!(
                "zfp fixed-rate stream is {stream_len} bytes, {total} values at zfp_rate {rate} take {want}"
            )));
        }
        if out.is_empty() {
            return Ok(());
        }
        let bits = block_bits(rate)?;
        let (b0, b1) = (first / BLOCK, end.div_ceil(BLOCK));
        let words = stored_words(bits, first, end, stream_len);
        let bytes = read(words.start, words.end)?;
        if bytes.len() as u64 != words.end - words.start {
            return Err(Error::codec("zfp range read came back short"));
        }
        let mut buf = padded(&bytes, 8)?;
        let s = Stream::open(mode, &mut buf)?;
        // SAFETY: the stream is live; the offset lies inside `buf`.
        unsafe { z::stream_rseek(z::zfp_stream_bit_stream(s.zfp), b0 * bits - words.start * 8) };
        let mut block = [0f64; BLOCK as usize];
        for b in b0..b1 {
            let lo = b * BLOCK;
            let n = (total - lo).min(BLOCK);
            // SAFETY: `block` holds 4 values; a partial block writes `n`
            // with stride 1; each reads `bits` bits inside `buf`.
            unsafe {
                if n == BLOCK {
                    z::zfp_decode_block_double_1(s.zfp, block.as_mut_ptr());
                } else {
                    z::zfp_decode_partial_block_strided_double_1(
                        s.zfp,
                        block.as_mut_ptr(),
                        n as usize,
                        1,
                    );
                }
            }
            for (i, v) in block.iter().take(n as usize).enumerate() {
                let at = lo + i as u64;
                if (first..end).contains(&at) {
                    out[(at - first) as usize] = *v;
                }
            }
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn field(n: usize) -> Vec<f64> {
            (0..n)
                .map(|i| 250.0 + 30.0 * (i as f64 * 0.003).sin() + (i % 7) as f64 * 0.1)
                .collect()
        }

        #[test]
        fn each_mode_round_trips_and_fixed_rate_has_the_computed_size() {
            let v = field(10_001);
            for (mode, tol) in [
                (ZfpMode::FixedRate(24.0), 1e-2),
                (ZfpMode::FixedPrecision(40), 1e-6),
                (ZfpMode::FixedAccuracy(1e-4), 1e-4),
            ] {
                let c = zfp_compress(&v, mode).unwrap();
                if let ZfpMode::FixedRate(r) = mode {
                    assert_eq!(c.len() as u64, fixed_rate_len(r, v.len() as u64).unwrap());
                }
                let mut out = vec![0.0; v.len()];
                zfp_decompress_into(&c, mode, &mut out).unwrap();
                let err = v
                    .iter()
                    .zip(&out)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(err <= tol && err > 0.0, "{mode:?}: {err}");
            }
        }

        #[test]
        fn ranges_decode_to_the_whole_decode_values() {
            let v = field(1003);
            let mode = ZfpMode::FixedRate(16.0);
            let c = zfp_compress(&v, mode).unwrap();
            let mut all = vec![0.0; v.len()];
            zfp_decompress_into(&c, mode, &mut all).unwrap();
            let reads = std::cell::Cell::new(0u64);
            let read = |a: u64, b: u64| {
                reads.set(reads.get() + (b - a));
                Ok(Cow::Borrowed(&c[a as usize..b as usize]))
            };
            for (first, n) in [
                (0, 1),
                (1, 6),
                (3, 200),
                (500, 1),
                (996, 7),
                (1002, 1),
                (0, 1003),
            ] {
                let mut out = vec![0.0; n];
                zfp_decompress_range(&read, c.len() as u64, mode, 1003, first, &mut out).unwrap();
                assert_eq!(out, all[first as usize..first as usize + n], "{first}+{n}");
            }
            reads.set(0);
            let mut out = vec![0.0; 4];
            zfp_decompress_range(&read, c.len() as u64, mode, 1003, 400, &mut out).unwrap();
            assert!(reads.get() <= 24, "{}", reads.get());
            let e = zfp_decompress_range(
                &read,
                c.len() as u64,
                ZfpMode::FixedPrecision(8),
                1003,
                0,
                &mut out,
            );
            assert_eq!(*e.unwrap_err().kind(), ErrorKind::RangeNotSupported);
        }

        #[test]
        fn lengths_that_do_not_fit_the_descriptor_are_refused_before_decoding() {
            let v = field(100);
            let mode = ZfpMode::FixedRate(8.0);
            let c = zfp_compress(&v, mode).unwrap();
            let mut out = vec![0.0; 100];
            for bad in [&c[..c.len() - 8], &[] as &[u8], &[0u8; 1]] {
                let e = zfp_decompress_into(bad, mode, &mut out).unwrap_err();
                assert!(e.detail().contains("zfp_rate 8"), "{e}");
            }
            zfp_decompress_into(&c, mode, &mut out).unwrap();
            // 99 values take the same 25 blocks as 100; 96 take 24.
            let mut same_blocks = vec![0.0; 99];
            zfp_decompress_into(&c, mode, &mut same_blocks).unwrap();
            assert_eq!(same_blocks, out[..99]);
            let mut short = vec![0.0; 96];
            assert!(zfp_decompress_into(&c, mode, &mut short).is_err());
            let acc = ZfpMode::FixedAccuracy(1e-3);
            let c = zfp_compress(&v, acc).unwrap();
            // A truncated variable-size stream decodes from zero padding,
            // in bounds; an over-long one is refused.
            let _ = zfp_decompress_into(&c[..3], acc, &mut out);
            let long = vec![0u8; 100 * 8 + 4096];
            let e = zfp_decompress_into(&long, acc, &mut out).unwrap_err();
            assert!(e.detail().contains("more than"), "{e}");
            assert!(zfp_decompress_into(&[1], acc, &mut []).is_err());
            zfp_decompress_into(&[], acc, &mut []).unwrap();
        }
    }
}
