//! `rle` and `roaring` as payload compression of bitmask objects: a 4-byte
//! big-endian bit count, then the bit-set codec's body. See
//! `spec/pipeline.md` §4.3.

pub(crate) mod bitcodec;

use std::borrow::Cow;

use crate::dtype::Dtype;
use crate::error::{Error, Result};
use crate::pipeline::codec::entry::{Builder, CodecEntry, Sample};
use crate::pipeline::codec::stage::{
    CompressionStage, MaskStage, Params, Stage, StageContext, StageKind,
};

/// Registry entry of `rle`.
pub const RLE: CodecEntry = CodecEntry {
    name: "rle",
    kind: StageKind::Compression,
    keys: &[],
    feature: None,
    build: Some(Builder::Compression(build_rle)),
    sample: Some(Sample {
        label: "bitmask        rle",
        pipeline: || crate::pipeline::PipelineBuilder::new().rle(),
        dtype: Dtype::Bitmask,
        tolerance: 0.0,
    }),
};

/// Registry entry of `roaring`.
pub const ROARING: CodecEntry = CodecEntry {
    name: "roaring",
    kind: StageKind::Compression,
    keys: &[],
    feature: None,
    build: Some(Builder::Compression(build_roaring)),
    sample: Some(Sample {
        label: "bitmask        roaring",
        pipeline: || crate::pipeline::PipelineBuilder::new().roaring(),
        dtype: Dtype::Bitmask,
        tolerance: 0.0,
    }),
};

fn build_rle(_: &Params<'_>) -> Result<Box<dyn CompressionStage>> {
    Ok(Box::new(BitSet::Rle))
}

fn build_roaring(_: &Params<'_>) -> Result<Box<dyn CompressionStage>> {
    Ok(Box::new(BitSet::Roaring))
}

/// A bit-set codec over a bitmask object's packed bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitSet {
    /// Run lengths.
    Rle,
    /// A roaring bitmap.
    Roaring,
}

impl Stage for BitSet {
    fn name(&self) -> &str {
        MaskStage::name(self)
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        if cx.dtype != Dtype::Bitmask {
            return Err(Error::metadata(format!(
                "{} compression needs dtype bitmask, not {}",
                Stage::name(self),
                cx.dtype
            )));
        }
        Ok(())
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, _: &StageContext) -> Result<Cow<'a, [u8]>> {
        let nbits = input.len() * 8;
        let prefix = u32::try_from(nbits)
            .map_err(|_| Error::invalid_input("bitmask too large for a 32-bit bit count"))?;
        let body = self.encode_bits(&input, nbits)?;
        let mut out = Vec::with_capacity(4 + body.len());
        out.extend_from_slice(&prefix.to_be_bytes());
        out.extend_from_slice(&body);
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, input: &[u8], _: &StageContext, out: &mut [u8]) -> Result<()> {
        let prefix = input
            .get(..4)
            .ok_or_else(|| Error::codec("bitmask payload lacks its 4-byte bit count"))?;
        let nbits = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as u64;
        let expected = out.len() as u64 * 8;
        if nbits != expected {
            return Err(Error::codec(format!(
                "bitmask payload counts {nbits} bits, descriptor implies {expected}"
            )));
        }
        self.decode_bits(&input[4..], nbits as usize, out)
    }
}

impl CompressionStage for BitSet {}

/// The bit-set codecs code NaN/Inf masks too, without the bit count.
impl MaskStage for BitSet {
    fn name(&self) -> &str {
        match self {
            BitSet::Rle => "rle",
            BitSet::Roaring => "roaring",
        }
    }

    fn encode_bits(&mut self, bits: &[u8], nbits: usize) -> Result<Vec<u8>> {
        match self {
            BitSet::Rle => Ok(bitcodec::rle_encode(bits, nbits)),
            BitSet::Roaring => bitcodec::roaring_encode(bits, nbits),
        }
    }

    fn decode_bits(&self, blob: &[u8], nbits: usize, out: &mut [u8]) -> Result<()> {
        match self {
            BitSet::Rle => bitcodec::rle_decode_into(blob, nbits, out),
            BitSet::Roaring => bitcodec::roaring_decode_into(blob, nbits, out),
        }
    }
}
