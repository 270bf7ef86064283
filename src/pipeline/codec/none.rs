//! The identity stage, registered as `none` for every stage kind.
//! See `spec/pipeline.md` §1.

use std::borrow::Cow;
use std::ops::Range;

use super::entry::{Builder, CodecEntry, Sample};
use super::stage::{
    CompressionStage, EncodingStage, FilterStage, RangeInput, Stage, StageContext, StageKind,
    StagePlan,
};
use crate::dtype::Dtype;
use crate::error::{Error, Result};

/// The `none` encoding.
pub(crate) const ENCODING: CodecEntry = CodecEntry {
    sample: Some(Sample {
        label: "encode/decode  none/none/none",
        pipeline: crate::pipeline::PipelineBuilder::new,
        dtype: Dtype::Float64,
        tolerance: 0.0,
    }),
    ..entry(
        StageKind::Encoding,
        Builder::Encoding(|_| Ok(Box::new(Identity))),
    )
};
/// The `none` filter.
pub(crate) const FILTER: CodecEntry = entry(
    StageKind::Filter,
    Builder::Filter(|_| Ok(Box::new(Identity))),
);
/// The `none` compression.
pub(crate) const COMPRESSION: CodecEntry = entry(
    StageKind::Compression,
    Builder::Compression(|_| Ok(Box::new(Identity))),
);

const fn entry(kind: StageKind, build: Builder) -> CodecEntry {
    CodecEntry {
        name: "none",
        kind,
        keys: &[],
        feature: None,
        build: Some(build),
        sample: None,
    }
}

/// Passes bytes through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity;

impl EncodingStage for Identity {
    fn encoded_len(&self, input_len: u64, _: &StageContext) -> Result<u64> {
        Ok(input_len)
    }
}

impl FilterStage for Identity {
    fn encoded_len(&self, input_len: u64, _: &StageContext) -> Result<u64> {
        Ok(input_len)
    }
}

impl CompressionStage for Identity {}

impl Stage for Identity {
    fn name(&self) -> &str {
        "none"
    }

    fn is_identity(&self) -> bool {
        true
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, _: &StageContext) -> Result<Cow<'a, [u8]>> {
        Ok(input)
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        if input.len() != out.len() {
            return Err(Error::framing(format!(
                "descriptor claims {} encoded bytes but the frame payload is {} bytes",
                out.len(),
                input.len()
            )));
        }
        crate::stream_store::StreamingStores::for_output(out.len(), cx.fresh_output)
            .copy(out, input);
        Ok(())
    }

    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        _: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let to = from
            .checked_add(out.len() as u64)
            .ok_or_else(|| Error::invalid_argument("range overflows"))?;
        out.copy_from_slice(&input(from, to)?);
        Ok(())
    }

    fn supports_range(&self) -> bool {
        true
    }

    fn plan_range(&self, wanted: &[Range<u64>], _: &StageContext) -> Result<Option<StagePlan>> {
        Ok(Some(StagePlan::reading(wanted.to_vec())))
    }
}
