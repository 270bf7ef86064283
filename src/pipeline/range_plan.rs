//! Which stored bytes of an object decoding some element ranges reads:
//! each stage maps the ranges of its output to ranges of its input
//! ([`super::Stage::plan_range`]), from the elements down to the stored payload,
//! so that a reader fetches only those bytes. See `spec/pipeline.md` §7.1.

use std::ops::Range;

use super::codec::stage::RangeCheck;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::Dtype;
use crate::error::{Error, Result};

/// What decoding some element ranges of one object reads of its payload
/// region, and the check those bytes must pass before decoding.
pub(crate) struct RangePlan {
    /// Region-relative byte ranges.
    pub ranges: Vec<Range<u64>>,
    check: Option<RangeCheck>,
    payload_len: u64,
}

impl std::fmt::Debug for RangePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangePlan")
            .field("ranges", &self.ranges)
            .field("check", &self.check.is_some())
            .finish()
    }
}

impl RangePlan {
    /// True when the bytes read into `region` (the whole payload region,
    /// holding at least the planned ranges) may be decoded from; false
    /// when the stage that planned them finds them inconsistent and the
    /// caller must read the whole region instead.
    pub(crate) fn holds(&self, region: &[u8]) -> bool {
        let Some(check) = &self.check else {
            return true;
        };
        match region.get(..self.payload_len as usize) {
            Some(payload) => check(payload),
            None => false,
        }
    }
}

/// True when every stage of `desc`'s pipeline decodes ranges.
pub(crate) fn decodes_ranges(desc: &ObjectDescriptor) -> bool {
    desc.dtype != Dtype::Bitmask
        && super::plan::stages(desc.pipeline())
            .all()
            .iter()
            .all(|s| s.supports_range())
}

/// The bytes of `desc`'s payload region (`region_len` bytes) that decoding
/// the element `ranges` `(first, count)` reads, the masks' blobs included
/// when `restore_non_finite`; `None` when a stage needs its whole input.
pub(crate) fn plan_range(
    desc: &ObjectDescriptor,
    region_len: u64,
    ranges: &[(u64, u64)],
    restore_non_finite: bool,
) -> Result<Option<RangePlan>> {
    if !decodes_ranges(desc) {
        return Ok(None);
    }
    let n = desc.num_elements()?;
    let w = desc.dtype.width() as u64;
    let mut wanted = Vec::with_capacity(ranges.len());
    for &(first, count) in ranges {
        let end = super::range_end(first, count, n)?;
        if count > 0 && w > 0 {
            let (Some(a), Some(b)) = (first.checked_mul(w), end.checked_mul(w)) else {
                return Err(Error::invalid_argument("range overflows"));
            };
            wanted.push(a..b);
        }
    }
    let masks = desc.masks.as_ref().filter(|m| !m.is_empty());
    let payload_len = match masks {
        Some(m) => m.iter().map(|(_, i)| i.offset).min().unwrap_or(region_len),
        None => region_len,
    };
    let stages = super::plan::stages(desc.pipeline());
    let base = super::base_context(desc, desc.byte_order, 0)?;
    let cx = super::plan::contexts(stages, base, desc.decoded_len()?, payload_len)?;
    let mut check = None;
    let stages = stages.all();
    for (i, stage) in stages.iter().enumerate() {
        let Some(plan) = stage.plan_range(&wanted, &cx[i])? else {
            return Ok(None);
        };
        if plan.check.is_some() {
            // A check reads the stored payload: only a stage that sees it
            // (every stage after it the identity) can have one.
            if stages[i + 1..].iter().any(|s| !s.is_identity()) {
                return Ok(None);
            }
            check = plan.check;
        }
        wanted = plan.ranges;
    }
    let mut out = Vec::with_capacity(wanted.len() + 3);
    if restore_non_finite {
        for (_, info) in masks.iter().flat_map(|m| m.iter()) {
            let e = info.offset.saturating_add(info.length).min(region_len);
            out.push(info.offset.min(e)..e);
        }
    }
    out.extend(wanted.into_iter().map(|r| {
        let end = r.end.min(payload_len);
        r.start.min(end)..end
    }));
    Ok(Some(RangePlan {
        ranges: out,
        check,
        payload_len,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::PipelineBuilder;

    fn desc(b: PipelineBuilder) -> ObjectDescriptor {
        ObjectDescriptor::new(Dtype::Float64, vec![1000]).with_pipeline(&b)
    }

    #[test]
    fn plain_objects_read_the_elements_bytes() {
        let p = plan_range(
            &desc(PipelineBuilder::new()),
            8000,
            &[(10, 5), (3, 0)],
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.ranges, vec![80..120]);
        assert!(p.holds(&[]));
    }

    #[test]
    fn packed_objects_read_the_packed_bits() {
        let d = desc(
            PipelineBuilder::new().simple_packing_params(
                crate::pipeline::PackingParams {
                    reference_value: 0.0,
                    binary_scale_factor: 0,
                    decimal_scale_factor: 0,
                    bits_per_value: 12,
                    grib_reference_value: None,
                }
                .into(),
            ),
        );
        let p = plan_range(&d, 1500, &[(3, 2)], false).unwrap().unwrap();
        assert_eq!(p.ranges, vec![4..8]);
    }

    #[test]
    fn whole_input_stages_and_bad_ranges() {
        let shuffled = desc(PipelineBuilder::new().shuffle());
        assert!(plan_range(&shuffled, 8000, &[(0, 1)], false)
            .unwrap()
            .is_none());
        let zstd = desc(PipelineBuilder::new().zstd());
        assert!(!decodes_ranges(&zstd));
        let e = plan_range(&desc(PipelineBuilder::new()), 8000, &[(999, 2)], false).unwrap_err();
        assert!(e.detail().contains("exceeds the 1000 elements"), "{e}");
    }
}
