//! Decoding the compressed spans of many element ranges in one call to
//! the compression stage, before the encoding stage reads them range by
//! range (`spec/pipeline.md` §7).

use super::codec::stage::{RangeInput, StageContext};
use super::plan::Stages;
use crate::buffer;
use crate::error::Result;

/// The compressed stream's decoded spans `(from, to, bytes)` that the
/// element `ranges` read through the encoding stage, sorted, decoded by
/// the compression stage in one call so that ranges sharing a unit of it
/// (an szip RSI) decode that unit once (`spec/pipeline.md` §7); empty when
/// there is no compression to undo or the encoding plans no single span
/// per range. Ranges must be valid.
pub(super) fn compressed_spans(
    read_payload: &RangeInput<'_>,
    stages: &Stages<'_>,
    cx: &[StageContext],
    ranges: &[(u64, u64)],
    w: u64,
) -> Result<Vec<(u64, u64, Vec<u8>)>> {
    if stages.compression.is_identity() || !stages.filter.is_identity() {
        return Ok(Vec::new());
    }
    let mut spans = Vec::with_capacity(ranges.len());
    for &(first, count) in ranges.iter().filter(|r| r.1 > 0 && w > 0) {
        let wanted = first * w..(first + count) * w;
        let span = if stages.encoding.is_identity() {
            Some(wanted)
        } else {
            match stages
                .encoding
                .plan_range(std::slice::from_ref(&wanted), &cx[0])?
            {
                Some(p) if p.ranges.len() == 1 => Some(p.ranges[0].clone()),
                _ => None,
            }
        };
        if let Some(r) = span.filter(|r| r.start < r.end) {
            spans.push((r.start, r.end, buffer::zeroed((r.end - r.start) as usize)?));
        }
    }
    spans.sort_unstable_by_key(|s| (s.0, s.1));
    spans.dedup_by_key(|s| (s.0, s.1));
    let mut parts: Vec<(u64, &mut [u8])> = spans.iter_mut().map(|s| (s.0, &mut s.2[..])).collect();
    stages
        .compression
        .decode_ranges_into(read_payload, &cx[2], &mut parts)?;
    Ok(spans)
}
