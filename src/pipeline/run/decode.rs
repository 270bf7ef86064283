//! Decoding one object whole: into a buffer of the pipeline's own, into a
//! caller's buffer (`spec/pipeline.md` §6.3), or into a reused one once the
//! payload is known to supply it (§6.9).

use std::borrow::Cow;

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::pipeline::codec::stage::{Stage, StageContext};
use crate::pipeline::plan::{self, Stages};
use crate::pipeline::progress::ProgressHook;
use crate::pipeline::{
    base_context, checked_decoded_len, decoded_masks, masks, out_order, payload_of, supply,
    to_output_order, PipelineDecodeOptions,
};
use crate::pipeline_spec::PipelineSpec;

use super::fused;

/// Undoes the pipeline of one object whose payload region is `region`,
/// running the stages the descriptor holds (parsed when it was built).
/// `region_base` is the region's absolute offset, used in error offsets.
pub fn decode<'a>(
    desc: &ObjectDescriptor,
    region: &'a [u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Cow<'a, [u8]>> {
    decode_inner(desc.pipeline(), desc, region, opts, limits).map_err(|e| e.within(region_base))
}

fn decode_inner<'a>(
    pipeline: &PipelineSpec,
    desc: &ObjectDescriptor,
    region: &'a [u8],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Cow<'a, [u8]>> {
    let expected = checked_decoded_len(desc, limits)?;
    let payload = payload_of(desc, region)?;
    let out_order = out_order(desc, opts);
    let base = base_context(desc, out_order, opts.threads)?;
    let stages = plan::stages(pipeline);
    let cx = plan::contexts(stages, base, expected, payload.len() as u64)?;
    supply::check(stages, &cx, payload)?;
    let out_len = usize::try_from(expected)
        .map_err(|_| Error::limit("max_object_bytes", expected, limits.max_object_bytes))?;
    let mut data = match fused::applies(stages, &cx, payload.len(), out_len) {
        true => {
            let mut out = buffer::zeroed(out_len)?;
            let fresh = cx.map(|c| StageContext {
                fresh_output: true,
                ..c
            });
            fused::decode(stages, &fresh, payload, &mut out, &opts.progress)?;
            Cow::Owned(out)
        }
        false => decode_stages(stages, &cx, payload, limits, &opts.progress)?,
    };
    let read = match data {
        Cow::Borrowed(_) => 0,
        Cow::Owned(_) => payload.len() as u64,
    };
    opts.progress.finished(expected, read);
    if stages.encoding.is_identity() {
        data = to_output_order(data, desc.dtype, desc.byte_order, opts)?;
    }
    if opts.restore_non_finite {
        let decoded = decoded_masks(desc, region)?;
        if !decoded.is_empty() {
            masks::restore(data.to_mut(), desc.dtype, out_order, &decoded, 0);
        }
    }
    Ok(data)
}

/// Runs the stages from compression down to encoding, each into a buffer
/// of its own.
fn decode_stages<'a>(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    payload: &'a [u8],
    limits: &Limits,
    progress: &ProgressHook,
) -> Result<Cow<'a, [u8]>> {
    let whole = cx[0].decoded_len;
    // The one working stage, if it writes the object, reports (§6.7).
    let reporting =
        progress.is_set() && single_stage(stages, cx).is_some_and(|(_, c)| c.decoded_len == whole);
    let mut data: Cow<'a, [u8]> = Cow::Borrowed(payload);
    for (stage, cx) in stages.all().into_iter().zip(cx).rev() {
        let len = usize::try_from(cx.decoded_len).map_err(|_| {
            Error::limit("max_object_bytes", cx.decoded_len, limits.max_object_bytes)
        })?;
        if stage.is_identity() {
            if data.len() != len {
                return Err(Error::framing(format!(
                    "descriptor claims {len} encoded bytes but the frame payload is {} bytes",
                    data.len()
                )));
            }
            continue;
        }
        data = Cow::Owned(if reporting {
            let mut out = buffer::zeroed(len)?;
            let read = payload.len() as u64;
            let report = progress.scaled(cx.decoded_len, cx.decoded_len, true, read);
            stage.decode_into_reporting(&data, cx, &mut out, &report)?;
            out
        } else {
            stage.decode_vec(&data, cx, len)?
        });
    }
    Ok(data)
}

/// The one working stage of a pipeline and its context, when it has
/// exactly one: it reads the payload and writes the object, so it can
/// report a decode's progress (`spec/pipeline.md` §6.7).
fn single_stage<'s>(
    stages: Stages<'s>,
    cx: &[StageContext; 3],
) -> Option<(&'s dyn Stage, StageContext)> {
    let mut working = stages
        .all()
        .into_iter()
        .zip(cx)
        .filter(|(s, _)| !s.is_identity());
    let one = working.next()?;
    working.next().is_none().then_some((one.0, *one.1))
}

/// [`decode`] into `out`, a caller-owned buffer of exactly the decoded
/// size (`spec/pipeline.md` §6.3): the last stage to run writes straight
/// into it, so no output buffer is allocated. A buffer of any other size is
/// an invalid-argument error.
pub fn decode_into(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    out: &mut [u8],
) -> Result<()> {
    decode_into_inner(desc.pipeline(), desc, region, opts, limits, out)
        .map_err(|e| e.within(region_base))
}

/// The decoded size of the object whose payload region is `region`, once
/// the payload is known to be able to supply it (`spec/pipeline.md` §6.9):
/// what a caller checks before reserving a buffer of its own to decode
/// into.
pub fn check_supply(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<usize> {
    let checked = || -> Result<usize> {
        let expected = checked_decoded_len(desc, limits)?;
        let payload = payload_of(desc, region)?;
        let base = base_context(desc, out_order(desc, opts), opts.threads)?;
        let stages = plan::stages(desc.pipeline());
        let cx = plan::contexts(stages, base, expected, payload.len() as u64)?;
        supply::check(stages, &cx, payload)?;
        usize::try_from(expected)
            .map_err(|_| Error::limit("max_object_bytes", expected, limits.max_object_bytes))
    };
    checked().map_err(|e| e.within(region_base))
}

/// [`decode_into`] into `buf`, resized to the decoded size once the payload
/// is known to be able to supply it (`spec/pipeline.md` §6.9): a buffer
/// whose capacity holds the object is reused, a smaller one is replaced by
/// a fresh zeroed allocation whose pages are faulted in only as the decoder
/// writes them. Nothing is reserved for a claim the payload cannot meet.
pub fn decode_reusing(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let len = check_supply(desc, region, region_base, opts, limits)?;
    if buf.capacity() >= len {
        buf.clear();
        buf.resize(len, 0);
    } else {
        *buf = Vec::new();
        *buf = buffer::zeroed(len)?;
    }
    decode_into(desc, region, region_base, opts, limits, buf)
}

pub(crate) fn decode_into_inner(
    pipeline: &PipelineSpec,
    desc: &ObjectDescriptor,
    region: &[u8],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    out: &mut [u8],
) -> Result<()> {
    let expected = checked_decoded_len(desc, limits)?;
    if out.len() as u64 != expected {
        return Err(Error::invalid_argument(format!(
            "the output buffer is {} bytes but the object decodes to {expected}",
            out.len()
        )));
    }
    let payload = payload_of(desc, region)?;
    let out_order = out_order(desc, opts);
    let base = base_context(desc, out_order, opts.threads)?;
    let stages = plan::stages(pipeline);
    let cx = plan::contexts(stages, base, expected, payload.len() as u64)?;
    supply::check(stages, &cx, payload)?;
    if fused::applies(stages, &cx, payload.len(), out.len()) {
        fused::decode(stages, &cx, payload, out, &opts.progress)?;
        opts.progress.finished(expected, payload.len() as u64);
        return finish_into(pipeline, desc, region, opts, out_order, out);
    }
    // Stages run from compression down to encoding; the lowest one that is
    // not the identity is the last to run and writes into `out`.
    let all = stages.all();
    let last = all.iter().position(|s| !s.is_identity());
    let mut data: Cow<'_, [u8]> = Cow::Borrowed(payload);
    for (i, (stage, cx)) in all.into_iter().zip(&cx).enumerate().rev() {
        let len = usize::try_from(cx.decoded_len).map_err(|_| {
            Error::limit("max_object_bytes", cx.decoded_len, limits.max_object_bytes)
        })?;
        if stage.is_identity() {
            if data.len() != len {
                return Err(Error::framing(format!(
                    "descriptor claims {len} encoded bytes but the frame payload is {} bytes",
                    data.len()
                )));
            }
            continue;
        }
        if Some(i) == last {
            if len != out.len() {
                return Err(Error::framing(format!(
                    "{} decodes to {len} bytes, not the {} the descriptor implies",
                    stage.name(),
                    out.len()
                )));
            }
            if opts.progress.is_set() && matches!(data, Cow::Borrowed(_)) {
                // The one working stage reads the payload (§6.7).
                let (total, read) = (out.len() as u64, payload.len() as u64);
                let report = opts.progress.scaled(total, total, true, read);
                stage.decode_into_reporting(&data, cx, out, &report)?;
            } else {
                stage.decode_into(&data, cx, out)?;
            }
            break;
        }
        data = Cow::Owned(stage.decode_vec(&data, cx, len)?);
    }
    if last.is_none() {
        // Identity pipeline: the payload is the data (its length checked
        // above), copied with streaming stores when large (§6.5).
        crate::stream_store::StreamingStores::for_output(out.len(), false).copy(out, &data);
    }
    opts.progress.finished(expected, payload.len() as u64);
    finish_into(pipeline, desc, region, opts, out_order, out)
}

/// Byte-order conversion and NaN/Inf restoration of a decoded `out`.
fn finish_into(
    pipeline: &PipelineSpec,
    desc: &ObjectDescriptor,
    region: &[u8],
    opts: &PipelineDecodeOptions,
    out_order: ByteOrder,
    out: &mut [u8],
) -> Result<()> {
    if plan::stages(pipeline).encoding.is_identity()
        && opts.native_byte_order
        && desc.byte_order != ByteOrder::native()
        && desc.dtype.swap_unit() > 1
    {
        swap_in_place(out, desc.dtype.swap_unit());
    }
    if opts.restore_non_finite {
        let decoded = decoded_masks(desc, region)?;
        if !decoded.is_empty() {
            masks::restore(out, desc.dtype, out_order, &decoded, 0);
        }
    }
    Ok(())
}
