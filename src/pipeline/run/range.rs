//! Decoding element ranges of an object without the rest of it
//! (`spec/pipeline.md` §7).

use std::borrow::Cow;

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
use crate::pipeline::plan::{self};
use crate::pipeline::{
    base_context, checked_decoded_len, decoded_masks, masks, out_order, payload_of, range_end,
    range_spans, PipelineDecodeOptions,
};
use crate::pipeline_spec::PipelineSpec;

/// Decodes element ranges `(first, count)` of an object. Supported when
/// every stage can decode a range: encodings none and simple_packing, no
/// filter, and no compression or szip with stored block offsets.
pub fn decode_range(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    ranges: &[(u64, u64)],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Vec<Vec<u8>>> {
    let w = desc.dtype.width() as u64;
    let n = desc.num_elements()?;
    checked_decoded_len(desc, limits)?;
    refuse_unless_ranged(desc.pipeline(), desc).map_err(|e| e.within(region_base))?;
    let mut results = Vec::with_capacity(ranges.len());
    for &(first, count) in ranges {
        range_end(first, count, n).map_err(|e| e.within(region_base))?;
        let len = usize::try_from(count * w).map_err(|_| Error::metadata("range too large"))?;
        results.push(buffer::zeroed(len)?);
    }
    let mut outs: Vec<&mut [u8]> = results.iter_mut().map(|v| &mut v[..]).collect();
    decode_ranges_to(
        desc.pipeline(),
        desc,
        region,
        ranges,
        opts,
        limits,
        &mut outs,
    )
    .map_err(|e| e.within(region_base))?;
    Ok(results)
}

/// Whether every stage of `desc`'s pipeline decodes a range of its output
/// on its own (`spec/pipeline.md` §7), so that [`decode_range`] and
/// [`decode_range_into`] decode part of the object without the rest.
pub fn decodes_by_range(desc: &ObjectDescriptor) -> bool {
    refuse_unless_ranged(desc.pipeline(), desc).is_ok()
}

/// [`decode_range`] of the one range of `out.len()` bytes starting at
/// element `first`, written into `out` (a caller-owned buffer, reused from
/// call to call): the values are those of decoding the object whole
/// (`spec/pipeline.md` §7). `out` must hold whole elements.
pub fn decode_range_into(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    first: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    out: &mut [u8],
) -> Result<()> {
    let w = desc.dtype.width() as u64;
    if w == 0 || !(out.len() as u64).is_multiple_of(w) {
        return Err(Error::invalid_argument(format!(
            "a buffer of {} bytes holds no whole number of {}-byte elements",
            out.len(),
            w
        )));
    }
    let range = [(first, out.len() as u64 / w)];
    decode_ranges_to(
        desc.pipeline(),
        desc,
        region,
        &range,
        opts,
        limits,
        &mut [out],
    )
    .map_err(|e| e.within(region_base))
}

/// Decodes each of `ranges` into the buffer of `outs` at the same
/// position, `count × width` bytes each.
/// A range-not-supported error naming the first stage of `pipeline` that
/// cannot decode a range (or the bitmask dtype), before anything is
/// decoded or allocated (`spec/pipeline.md` §7).
fn refuse_unless_ranged(pipeline: &PipelineSpec, desc: &ObjectDescriptor) -> Result<()> {
    let refuse = |why: String| {
        Err(Error::new(
            ErrorKind::RangeNotSupported,
            format!("range decoding is not possible {why}"),
        ))
    };
    if desc.dtype == Dtype::Bitmask {
        return refuse("for bitmask objects".into());
    }
    let stages = plan::stages(pipeline);
    for (s, how) in stages.all().into_iter().zip([
        "with {} encoding",
        "after a {} filter",
        "with {} compression",
    ]) {
        if !s.supports_range() {
            return refuse(how.replace("{}", s.name()));
        }
    }
    Ok(())
}

fn decode_ranges_to(
    pipeline: &PipelineSpec,
    desc: &ObjectDescriptor,
    region: &[u8],
    ranges: &[(u64, u64)],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    outs: &mut [&mut [u8]],
) -> Result<()> {
    let expected = checked_decoded_len(desc, limits)?;
    refuse_unless_ranged(pipeline, desc)?;
    let stages = plan::stages(pipeline);
    let payload = payload_of(desc, region)?;
    let out_order = out_order(desc, opts);
    let base = base_context(desc, out_order, 0)?;
    let cx = plan::contexts(stages, base, expected, payload.len() as u64)?;
    if stages.compression.is_identity() && payload.len() as u64 != cx[2].decoded_len {
        return Err(Error::framing(format!(
            "descriptor claims {} encoded bytes but the frame payload is {} bytes",
            cx[2].decoded_len,
            payload.len()
        )));
    }
    let n = cx[0].num_elements;
    let w = desc.dtype.width() as u64;
    let decoded = if opts.restore_non_finite {
        decoded_masks(desc, region)?
    } else {
        Vec::new()
    };
    // Each stage reads its input through the one below it; the compression
    // stage reads the stored payload.
    let read_payload = |a: u64, b: u64| -> Result<Cow<'_, [u8]>> {
        payload
            .get(a as usize..b as usize)
            .map(Cow::Borrowed)
            .ok_or_else(|| Error::codec("range lies outside the payload"))
    };
    for &(first, count) in ranges {
        range_end(first, count, n)?;
    }
    let spans = range_spans::compressed_spans(&read_payload, &stages, &cx, ranges, w)?;
    let read_compressed = |a: u64, b: u64| -> Result<Cow<'_, [u8]>> {
        if let Ok(i) = spans.binary_search_by_key(&(a, b), |s| (s.0, s.1)) {
            return Ok(Cow::Borrowed(&spans[i].2));
        }
        let mut out = buffer::zeroed((b - a) as usize)?;
        stages
            .compression
            .decode_range_into(&read_payload, &cx[2], a, &mut out)?;
        Ok(Cow::Owned(out))
    };
    let read_filtered = |a: u64, b: u64| -> Result<Cow<'_, [u8]>> {
        if stages.compression.is_identity() {
            return read_payload(a, b);
        }
        read_compressed(a, b)
    };
    let read_encoded = |a: u64, b: u64| -> Result<Cow<'_, [u8]>> {
        if stages.filter.is_identity() {
            return read_filtered(a, b);
        }
        let mut out = buffer::zeroed((b - a) as usize)?;
        stages
            .filter
            .decode_range_into(&read_filtered, &cx[1], a, &mut out)?;
        Ok(Cow::Owned(out))
    };
    for (&(first, count), out) in ranges.iter().zip(outs.iter_mut()) {
        if out.len() as u64 != count * w {
            return Err(Error::invalid_argument(format!(
                "range ({first}, {count}) needs {} bytes, not {}",
                count * w,
                out.len()
            )));
        }
        if stages.encoding.is_identity() {
            let slice = read_encoded(first * w, (first + count) * w)?;
            out.copy_from_slice(&slice);
            if opts.native_byte_order
                && desc.byte_order != ByteOrder::native()
                && desc.dtype.swap_unit() > 1
            {
                swap_in_place(out, desc.dtype.swap_unit());
            }
        } else {
            stages
                .encoding
                .decode_range_into(&read_encoded, &cx[0], first * w, out)?;
        }
        if !decoded.is_empty() {
            masks::restore(out, desc.dtype, out_order, &decoded, first as usize);
        }
    }
    Ok(())
}
