//! Running the pipeline forwards over one object's elements: the stages one
//! by one, or fused (`spec/pipeline.md` §6.6), or a payload left to be
//! written in place (§6.3), coded into the message (§6.8) or copied as it
//! is (§6.10).

use std::borrow::Cow;

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::Dtype;
use crate::error::{Error, Result};
use crate::pipeline::codec::stage::{CodeSource, Stage, StageContext};
use crate::pipeline::plan::{self, EncodeStages};
use crate::pipeline::progress::{self, ProgressHook, Report, Ticks};
use crate::pipeline::{base_context, masks, scan, streamed, EncodedPayload, PipelineOptions};

/// Runs the encode pipeline described by `desc` over raw element bytes `data`
/// (in `desc.byte_order`). Replaces `desc`'s pipeline by the stages that
/// ran, with the parameters they derived from the data.
///
/// Stage parameters are checked strictly: a key with a codec prefix that no
/// stage of this pipeline owns is an error naming the valid keys
/// (`spec/pipeline.md` §1).
pub fn encode<'a>(
    desc: &mut ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
) -> Result<EncodedPayload<'a>> {
    match encode_planned(desc, data, opts, Deferral::default())? {
        Planned::Encoded(e) => Ok(e),
        Planned::InPlace(_) | Planned::Streamed(_) | Planned::Verbatim => Err(
            Error::invalid_argument("a payload written later was planned where none was asked for"),
        ),
    }
}

/// An object's payload that its pipeline's only working stage writes
/// straight into the message: its exact length, known before it runs
/// (`spec/pipeline.md` §6.3).
#[derive(Debug, Clone)]
pub(crate) struct InPlace {
    /// Bytes the stage writes.
    pub len: usize,
    cx: StageContext,
    /// Told the element bytes encoded as the chunks are written (§6.7).
    progress: ProgressHook,
}

/// The outcome of [`encode_planned`].
#[derive(Debug)]
pub(crate) enum Planned<'a> {
    /// The payload, encoded.
    Encoded(EncodedPayload<'a>),
    /// The payload is still to be written, by [`append_in_place`].
    InPlace(InPlace),
    /// The payload is still to be coded into the message (§6.8).
    Streamed(Box<streamed::Streamed<'a>>),
    /// The payload is the input as it is, still to be written from it
    /// step by step, its non-finite values refused as it is (§6.10).
    Verbatim,
}

/// Which payloads [`encode_planned`] may leave to be written with the
/// message.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Deferral {
    /// Written into the message's buffer by the encoding (§6.3).
    pub in_place: bool,
    /// Coded again into the message by a streaming compression (§6.8).
    pub streamed: bool,
    /// Written from the input as it is, when no stage works and non-finite
    /// values are refused (§6.10).
    pub verbatim: bool,
}

/// Writes an in-place payload at the end of `out`, chunk by chunk on the
/// thread budget where the stage allows it (`EncodingStage::in_place_chunks`): each
/// chunk is zeroed and written while in cache (`spec/pipeline.md` §6.3).
pub(crate) fn append_in_place(
    desc: &ObjectDescriptor,
    data: &[u8],
    plan: &InPlace,
    out: &mut Vec<u8>,
) -> Result<()> {
    let stage = plan::stages(desc.pipeline()).encoding;
    let total = data.len() as u64;
    let Some((src_chunk, dst_chunk)) = stage
        .in_place_chunks(&plan.cx)
        .filter(|c| c.0 > 0 && c.1 > 0)
    else {
        buffer::append_in_chunks(out, plan.len, plan.len, 1, |_, dst| {
            stage.encode_to_slice(data, &plan.cx, dst)
        })?;
        plan.progress.finished(total, total);
        return Ok(());
    };
    let one = StageContext {
        threads: 1,
        ..plan.cx
    };
    let report = plan.progress.scaled(total, total, true, total);
    let ticks = Ticks::new(&report, 1, total, plan.cx.threads <= 1);
    buffer::append_in_chunks(out, plan.len, dst_chunk, plan.cx.threads, |i, dst| {
        let from = i.saturating_mul(src_chunk);
        let src = data
            .get(from..from.saturating_add(src_chunk).min(data.len()))
            .ok_or_else(|| Error::invalid_argument("in-place chunks do not match the input"))?;
        stage.encode_to_slice(src, &one, dst)?;
        ticks.add(src.len() as u64);
        Ok(())
    })?;
    plan.progress.finished(total, total);
    Ok(())
}

/// [`encode`], or with `in_place`, when the pipeline has exactly one working
/// stage, it can write into a caller's buffer, its output size is fixed by
/// the input, and the data holds no NaN or ±Inf, the descriptor completed
/// and the payload left for [`append_in_place`]; with `streamed`, when the
/// one working stage is a compression with a streaming coder, the data
/// holds no NaN or ±Inf and is at least [`streamed::STREAM_MIN_BYTES`],
/// the payload measured and left to be coded into the message.
pub(crate) fn encode_planned<'a>(
    desc: &mut ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
    defer: Deferral,
) -> Result<Planned<'a>> {
    let expected = desc.decoded_len()?;
    if data.len() as u64 != expected {
        return Err(Error::invalid_input(format!(
            "data length {} bytes does not match shape {:?} of {} ({expected} bytes)",
            data.len(),
            desc.shape,
            desc.dtype
        )));
    }
    let mut stages = EncodeStages::parse_strict(desc.pipeline())?;
    #[allow(unused_mut)]
    let mut base = base_context(desc, desc.byte_order, opts.threads)?;
    #[cfg(feature = "szip")]
    {
        base.szip_profile = opts.szip_profile;
    }
    base.zstd_frame_size = opts.zstd_frame_size;
    let cx = plan::contexts(stages.as_stages(), base, expected, 0)?;
    if defer.verbatim
        && !opts.allow_nan
        && !opts.allow_inf
        && stages.encoding.is_identity()
        && stages.filter.is_identity()
        && stages.compression.is_identity()
    {
        // Nothing to derive, no mask possible: the descriptor is complete.
        let encoded = stages.encoded_spec(desc.pipeline())?;
        desc.replace_pipeline(encoded);
        desc.masks = None;
        return Ok(Planned::Verbatim);
    }
    // One pass finds float64 data all finite and its range (§6.2); only
    // data holding NaN or ±Inf is classified element by element.
    let range = match desc.dtype {
        Dtype::Float64 => scan::finite_range_f64_parallel(data, desc.byte_order, opts.threads),
        _ => None,
    };
    let found = match range {
        Some(_) => masks::NonFinite::default(),
        None => masks::scan(
            data,
            desc.dtype,
            desc.byte_order,
            opts.allow_nan,
            opts.allow_inf,
        )?,
    };
    stages.encoding.prepare(data, range.as_ref(), &cx[0])?;
    // Only an encoding writes in place, and only when it is the one
    // working stage (§6.3).
    if defer.in_place
        && found.is_empty()
        && stages.encoding.writes_in_place()
        && stages.filter.is_identity()
        && stages.compression.is_identity()
    {
        let len = cx[0].input_len;
        let len = usize::try_from(len)
            .map_err(|_| Error::invalid_input(format!("a {len}-byte payload is too large")))?;
        // Written later from the input, chunk by chunk, reported as
        // they are.
        let plan = InPlace {
            len,
            cx: cx[0],
            progress: opts.progress.clone(),
        };
        let encoded = stages.encoded_spec(desc.pipeline())?;
        desc.replace_pipeline(encoded);
        desc.masks = None;
        return Ok(Planned::InPlace(plan));
    }
    if let Some(coder) = stages.compression.streaming_coder().filter(|_| {
        defer.streamed
            && found.is_empty()
            && stages.encoding.is_identity()
            && stages.filter.is_identity()
            && data.len() >= streamed::STREAM_MIN_BYTES
    }) {
        // The stage derives no parameters: the descriptor is complete.
        let s = streamed::Streamed::plan(data, coder, &opts.progress)?;
        let encoded = stages.encoded_spec(desc.pipeline())?;
        desc.replace_pipeline(encoded);
        desc.masks = None;
        return Ok(Planned::Streamed(Box::new(s)));
    }
    let mut payload: Cow<'a, [u8]> = Cow::Borrowed(data);
    if !found.is_empty() {
        found.substitute(payload.to_mut(), desc.dtype.width());
    }
    let report = opts.progress.scaled(expected, expected, true, expected);
    let report = opts.progress.is_set().then_some(&report as &Report<'_>);
    if let Some(fused) = encode_fused(&mut stages, &payload, &cx, report)? {
        payload = Cow::Owned(fused);
        opts.progress.finished(expected, expected);
    } else {
        let EncodeStages {
            encoding,
            filter,
            compression,
        } = &mut stages;
        let in_order: [&mut dyn Stage; 3] = [&mut **encoding, &mut **filter, &mut **compression];
        let first = in_order.iter().position(|s| !s.is_identity());
        let last = in_order.iter().rposition(|s| !s.is_identity());
        for (i, (stage, cx)) in in_order.into_iter().zip(&cx).enumerate() {
            if stage.is_identity() {
                continue;
            }
            payload = if Some(i) == last && !opts.progress.is_set() {
                // Without a hook the stage runs whole, with no counting.
                stage.encode(payload, cx)?
            } else if Some(i) == last {
                let of = payload.len() as u64;
                let report = opts.progress.scaled(expected, of, first == last, expected);
                stage.encode_reporting(payload, cx, &report)?
            } else if Some(i) == first && matches!(payload, Cow::Borrowed(_)) {
                // The first of several working stages reads the input and
                // writes an owned result: what it has read is released
                // before the next stage runs, nothing is done yet (§6.7).
                let read = |_: u64, read: u64| {
                    opts.progress.advance(progress::Step {
                        done: 0,
                        total: expected,
                        read: read.min(expected),
                    })
                };
                stage.encode_reporting(payload, cx, &read)?
            } else {
                stage.encode(payload, cx)?
            };
        }
        if last.is_none() {
            // The payload borrows the input.
            opts.progress.finished(expected, 0);
        }
    }
    let encoded = stages.encoded_spec(desc.pipeline())?;
    desc.replace_pipeline(encoded);
    desc.masks = None;
    let mut mask_blobs = Vec::new();
    if !found.is_empty() {
        let n = usize::try_from(desc.num_elements()?)
            .map_err(|_| Error::invalid_input("too many elements"))?;
        let (blobs, m) = masks::encode_masks(&found, n, payload.len(), &opts.masks)?;
        mask_blobs = blobs;
        desc.masks = Some(m);
    }
    Ok(Planned::Encoded(EncodedPayload {
        payload,
        mask_blobs,
    }))
}

/// The encoding and the compression run as one pass when they are the two
/// working stages, the encoding gives its output as integer codes and the
/// compression codes those (`spec/pipeline.md` §6.6): szip over
/// simple_packing. `None` when they cannot, and the stages run one by one.
/// `report`, if any, is told the element bytes coded as the compression
/// takes their codes (`spec/pipeline.md` §6.7).
fn encode_fused(
    stages: &mut EncodeStages,
    data: &[u8],
    cx: &[StageContext; 3],
    report: Option<&Report<'_>>,
) -> Result<Option<Vec<u8>>> {
    let EncodeStages {
        encoding,
        filter,
        compression,
    } = stages;
    if encoding.is_identity() || !filter.is_identity() || compression.is_identity() {
        return Ok(None);
    }
    let Some(codes) = encoding.code_source(data, &cx[0])? else {
        return Ok(None);
    };
    let coded = match report {
        None => compression.encode_codes(&*codes, &cx[2])?,
        Some(r) => {
            let unit = data.len().checked_div(codes.len()).unwrap_or(1) as u64;
            let ticks = Ticks::new(r, unit, codes.len() as u64, cx[2].threads <= 1);
            compression.encode_codes(&CountedCodes(&*codes, &ticks), &cx[2])?
        }
    };
    codes.finish()?;
    Ok(coded)
}

/// Codes counted into [`Ticks`] as the compression takes them.
struct CountedCodes<'s>(&'s dyn CodeSource, &'s Ticks<'s>);

impl CodeSource for CountedCodes<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn bits(&self) -> u32 {
        self.0.bits()
    }

    fn fill(&self, first: usize, out: &mut [u32]) {
        self.0.fill(first, out);
        self.1.add(out.len() as u64);
    }

    fn finish(&self) -> Result<()> {
        self.0.finish()
    }
}
