//! The identity stage, registered as `none` for every stage kind.
//! See `spec/pipeline.md` §1.

use std::borrow::Cow;
use std::ops::Range;

use super::codec::{Codec, Params, RangeInput, StageContext, StageKind, StagePlan};
use super::registry::CodecEntry;
use crate::error::{Error, Result};

/// The `none` encoding.
pub const ENCODING: CodecEntry = entry(StageKind::Encoding);
/// The `none` filter.
pub const FILTER: CodecEntry = entry(StageKind::Filter);
/// The `none` compression.
pub const COMPRESSION: CodecEntry = entry(StageKind::Compression);

const fn entry(kind: StageKind) -> CodecEntry {
    CodecEntry {
        name: "none",
        kind,
        keys: &[],
        feature: None,
        build: Some(build),
    }
}

fn build(_: &Params<'_>) -> Result<Box<dyn Codec>> {
    Ok(Box::new(Identity))
}

/// Passes bytes through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity;

impl Codec for Identity {
    fn name(&self) -> &str {
        "none"
    }

    fn is_identity(&self) -> bool {
        true
    }

    fn encoded_len(&self, input_len: u64, _: &StageContext) -> Result<Option<u64>> {
        Ok(Some(input_len))
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
