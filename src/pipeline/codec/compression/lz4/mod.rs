//! The lz4 compression stage (cargo feature `lz4`): an lz4 block with a
//! 4-byte little-endian size prefix. See `spec/pipeline.md` §4.2.

#[cfg(feature = "lz4")]
pub(crate) mod stream;

#[cfg(feature = "lz4")]
use std::borrow::Cow;

use crate::dtype::Dtype;
#[cfg(feature = "lz4")]
use crate::error::Result;
use crate::pipeline::codec::entry::{compression_build, CodecEntry, Sample};
use crate::pipeline::codec::stage::StageKind;
#[cfg(feature = "lz4")]
use crate::pipeline::codec::stage::{CompressionStage, Stage, StageContext};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "lz4",
    kind: StageKind::Compression,
    keys: &[],
    feature: Some("lz4"),
    build: BUILD,
    sample: Some(Sample {
        label: "pipeline       lz4",
        pipeline: || crate::pipeline::PipelineBuilder::new().lz4(),
        dtype: Dtype::Float64,
        tolerance: 0.0,
    }),
};

compression_build!(feature = "lz4", fn |_| Ok(Box::new(Lz4)));

/// lz4; it has no parameters.
#[cfg(feature = "lz4")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lz4;

#[cfg(feature = "lz4")]
impl Stage for Lz4 {
    fn name(&self) -> &str {
        "lz4"
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        self.encode_reporting(input, cx, &|_, _| {})
    }

    /// Reports after each 4 MiB of input scanned; `read` trails the scan by
    /// the 64 KiB match window (`spec/pipeline.md` §6.7).
    fn encode_reporting<'a>(
        &mut self,
        input: Cow<'a, [u8]>,
        _: &StageContext,
        report: &crate::pipeline::progress::Report<'_>,
    ) -> Result<Cow<'a, [u8]>> {
        let mut sink = ToVec {
            out: crate::buffer::with_capacity(max_block_len(input.len()))?,
            report,
        };
        self::stream::compress_prepend_size_to(&input, &mut sink)?;
        Ok(Cow::Owned(sink.out))
    }

    fn decode_into(&self, input: &[u8], _: &StageContext, out: &mut [u8]) -> Result<()> {
        imp::lz4_decompress_into(input, out)
    }

    /// The block's size prefix, and never more than an lz4 block of its
    /// length can expand to (each input byte at most 255 output bytes, a
    /// sequence's fixed part a few more): `spec/pipeline.md` §6.9.
    fn max_decoded_len(&self, input: &[u8], _: &StageContext) -> Option<u64> {
        let prefix = input.get(..4)?;
        let claimed = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        let expands_to = (input.len() as u64 - 4)
            .saturating_mul(256)
            .saturating_add(16);
        Some(u64::from(claimed).min(expands_to))
    }

    /// Checks the size prefix before allocating.
    fn decode_vec(&self, input: &[u8], _: &StageContext, len: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        imp::lz4_decompress(input, len, &mut out)?;
        Ok(out)
    }
}

#[cfg(feature = "lz4")]
impl CompressionStage for Lz4 {
    fn streaming_coder(&self) -> Option<crate::pipeline::codec::stage::StreamingCoder> {
        Some(self::stream::compress_prepend_size_to)
    }
}

/// The largest size-prefixed block of `len` input bytes (lz4_flex's bound).
#[cfg(feature = "lz4")]
fn max_block_len(len: usize) -> usize {
    4 + lz4_flex::block::get_maximum_output_size(len)
}

/// The stage's output vector, and its progress hook.
#[cfg(feature = "lz4")]
struct ToVec<'r> {
    out: Vec<u8>,
    report: &'r dyn Fn(u64, u64),
}

#[cfg(feature = "lz4")]
impl crate::pipeline::codec::stage::PieceSink for ToVec<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.extend_from_slice(bytes);
        Ok(())
    }
    fn progress(&mut self, scanned: u64, released: u64) {
        (self.report)(scanned, released);
    }
}

#[cfg(feature = "lz4")]
pub use imp::{lz4_compress, lz4_decompress, lz4_decompress_into};

#[cfg(feature = "lz4")]
mod imp {
    use crate::error::{Error, Result};

    /// lz4 block with a 4-byte little-endian uncompressed-size prefix.
    pub fn lz4_compress(data: &[u8]) -> Vec<u8> {
        lz4_flex::block::compress_prepend_size(data)
    }

    /// Decompresses a size-prefixed lz4 block into exactly `expected` bytes; the
    /// prefix must agree with `expected` before anything is allocated.
    pub fn lz4_decompress(src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<()> {
        check_prefix(src, expected)?;
        *out = crate::buffer::zeroed(expected)?;
        lz4_decompress_into(src, out)
    }

    fn check_prefix(src: &[u8], expected: usize) -> Result<()> {
        let prefix = src
            .get(..4)
            .ok_or_else(|| Error::codec("lz4 payload shorter than its 4-byte size prefix"))?;
        let claimed = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        if claimed != expected {
            return Err(Error::codec(format!(
                "lz4 payload claims {claimed} bytes, descriptor implies {expected}"
            )));
        }
        Ok(())
    }

    /// Decompresses a size-prefixed lz4 block into exactly `out.len()` bytes.
    pub fn lz4_decompress_into(src: &[u8], out: &mut [u8]) -> Result<()> {
        let expected = out.len();
        check_prefix(src, expected)?;
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
}
