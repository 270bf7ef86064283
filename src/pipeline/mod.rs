//! The encoding pipeline: encoding → filter → compression, plus NaN/Inf masks.
//! See `spec/format.md` §8 and `spec/pipeline.md`.
//!
//! Stages hand each other `Cow` slices: a stage that changes nothing copies
//! nothing. Every decoder writes into a buffer whose size comes from the
//! descriptor alone, never from a size field inside the compressed stream.

// The chunked, progress-reporting and streamed paths serve szip and lz4;
// a build without both leaves parts of them unused.
#![cfg_attr(not(all(feature = "szip", feature = "lz4")), allow(dead_code))]

pub(crate) mod bitcodec;
pub(crate) mod bitmask_codec;
pub(crate) mod bits;
pub(crate) mod blosc2_codec;
#[cfg(feature = "blosc2")]
pub(crate) mod blosc2_frame;
pub(crate) mod builder;
pub(crate) mod codec;
mod dequantise;
#[cfg(any(feature = "zfp", feature = "sz3"))]
mod float64_stream;
pub(crate) mod lz4_codec;
#[cfg(feature = "lz4")]
pub(crate) mod lz4_stream;
pub(crate) mod masks;
pub(crate) mod none_codec;
mod pieces;
pub(crate) mod plan;
mod progress;
mod quantise;
pub(crate) mod range_plan;
mod range_spans;
pub(crate) mod registry;
pub(crate) mod scan;
pub(crate) mod shuffle;
pub(crate) mod simple_packing;
pub(crate) mod streamed;
pub(crate) mod supply;
pub(crate) mod sz3_codec;
pub(crate) mod szip_stage;
mod unshuffle_pieces;
pub(crate) mod zfp_codec;
#[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
pub(crate) mod zstd_bound;
pub(crate) mod zstd_codec;
#[cfg(feature = "zstd-decode-pure")]
mod zstd_pure;

use std::borrow::Cow;

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
use crate::pipeline_spec::PipelineSpec;
pub use builder::PipelineBuilder;
use codec::CodeSource;
pub(crate) use codec::Stage;
pub(crate) use codec::{PieceRun, StageContext, StageKind};
pub use masks::{MaskMethod, MaskOptions};
pub use pieces::{decode_pieces, decode_streaming, decodes_in_pieces, OnPiece};
use plan::EncodeStages;
pub(crate) use plan::{stages, Stages};
pub use progress::{copy_paging_out, page_out, ProgressHook, Step};
use progress::{Report, Ticks, REPORT_BYTES};
pub use simple_packing::{compute_params as compute_packing_params, PackingParams};
pub use zstd_codec::ZstdFrameSize;

/// Options of the encode side of the pipeline.
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Substitute NaN by zero and record it in a mask instead of failing.
    pub allow_nan: bool,
    /// Substitute ±Inf by zero and record it in masks instead of failing.
    pub allow_inf: bool,
    /// Thread budget for large objects (0 = sequential).
    pub threads: usize,
    /// Mask codecs and the small-mask fallback.
    pub masks: MaskOptions,
    /// Coding choices of the szip stage (default: readable by every decoder).
    #[cfg(feature = "szip")]
    pub szip_profile: crate::szip::SzipProfile,
    /// Whether zstd frames record their content size (default: omitted, as
    /// the reference writes them; `spec/pipeline.md` §4.1).
    pub zstd_frame_size: ZstdFrameSize,
    /// Told how far each object's encode got (`spec/pipeline.md` §6.7).
    pub progress: ProgressHook,
}

/// Options of the decode side of the pipeline.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineDecodeOptions {
    /// Return elements in the host's byte order (default) rather than the stored order.
    pub native_byte_order: bool,
    /// Write NaN/±Inf back at the positions recorded in masks (default true).
    pub restore_non_finite: bool,
    /// Thread budget for large objects (0 = sequential).
    pub threads: usize,
    /// Told how far each object's decode got (`spec/pipeline.md` §6.7).
    pub progress: ProgressHook,
}

impl Default for PipelineDecodeOptions {
    fn default() -> Self {
        PipelineDecodeOptions {
            native_byte_order: true,
            restore_non_finite: true,
            threads: 0,
            progress: ProgressHook::default(),
        }
    }
}

/// What the encode pipeline produced for one object.
#[derive(Debug)]
pub struct EncodedPayload<'a> {
    /// The encoded payload, borrowed from the input when no stage changed it.
    pub payload: Cow<'a, [u8]>,
    /// Mask blobs to append after the payload (already located by `descriptor.masks`).
    pub mask_blobs: Vec<u8>,
}

/// The context shared by every stage before the pipeline specialises it.
pub(crate) fn base_context(
    desc: &ObjectDescriptor,
    out_order: ByteOrder,
    threads: usize,
) -> Result<StageContext> {
    Ok(StageContext {
        dtype: desc.dtype,
        byte_order: desc.byte_order,
        out_order,
        num_elements: desc.num_elements()?,
        sample_bits: desc.dtype.width() as u32 * 8,
        packed: false,
        input_len: 0,
        decoded_len: 0,
        threads,
        #[cfg(feature = "szip")]
        szip_profile: Default::default(),
        zstd_frame_size: Default::default(),
        fresh_output: false,
    })
}

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

/// Splits a region into the encoded payload and checks the masks' placement.
fn payload_of<'a>(desc: &ObjectDescriptor, region: &'a [u8]) -> Result<&'a [u8]> {
    let Some(m) = desc.masks.as_ref().filter(|m| !m.is_empty()) else {
        return Ok(region);
    };
    let mut first = region.len() as u64;
    for (kind, info) in m.iter() {
        let end = info.offset.checked_add(info.length);
        if end.is_none_or(|e| e > region.len() as u64) {
            return Err(Error::framing(format!(
                "{kind} mask lies outside the payload region"
            )));
        }
        first = first.min(info.offset);
    }
    Ok(&region[..first as usize])
}

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

fn out_order(desc: &ObjectDescriptor, opts: &PipelineDecodeOptions) -> ByteOrder {
    if opts.native_byte_order {
        ByteOrder::native()
    } else {
        desc.byte_order
    }
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
    let mut data = match piecewise(stages, &cx, payload.len(), out_len) {
        true => {
            let mut out = buffer::zeroed(out_len)?;
            let fresh = cx.map(|c| StageContext {
                fresh_output: true,
                ..c
            });
            decode_in_pieces(stages, &fresh, payload, &mut out, &opts.progress)?;
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

/// True when the pipeline decodes as one pass: the filter is the identity,
/// the compression decodes into integer codes piece by piece and the
/// encoding decodes from them (`spec/pipeline.md` §6.6).
fn piecewise(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    payload_len: usize,
    out_len: usize,
) -> bool {
    let (encoding, compression) = (stages.encoding, stages.compression);
    let working = !encoding.is_identity() && !compression.is_identity();
    // The identity filter between them sees unchanged lengths.
    let lengths_agree = cx[2].input_len == payload_len as u64
        && cx[2].decoded_len == cx[0].input_len
        && cx[0].decoded_len == out_len as u64;
    working
        && stages.filter.is_identity()
        && lengths_agree
        && compression.decodes_codes(&cx[2])
        && encoding.accepts_codes(&cx[0])
}

/// Runs the compression and the encoding [`piecewise`] found as one pass:
/// the intermediate stream never exists whole. `progress` is told the
/// object's bytes written every 4 MiB of them, nothing read until the end
/// (`spec/pipeline.md` §6.7).
fn decode_in_pieces(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    payload: &[u8],
    out: &mut [u8],
    progress: &ProgressHook,
) -> Result<()> {
    let (lower, lower_cx) = (stages.encoding, &cx[0]);
    let (upper, upper_cx) = (stages.compression, &cx[2]);
    let of = upper_cx.decoded_len;
    let report = progress.scaled(out.len() as u64, of, true, payload.len() as u64);
    // Every 4 MiB of the object, counted in bytes of the stream between.
    let every = u128::from(REPORT_BYTES) * u128::from(of) / (out.len() as u128).max(1);
    let every = u64::try_from(every).unwrap_or(u64::MAX);
    let ticks = progress
        .is_set()
        .then(|| Ticks::new(&report, 1, of, false).every(every));
    // Codes are whole bytes of the stream between (`decodes_codes`).
    let code_bytes = u64::from(upper_cx.sample_bits.div_ceil(8));
    let tick = |codes: &[u32]| {
        if let Some(t) = &ticks {
            t.add(codes.len() as u64 * code_bytes);
        }
    };
    if let Some(runs) = upper.piece_runs(payload, upper_cx) {
        if decode_runs_in_parallel(stages, cx, &runs, payload, out, &tick)? {
            return Ok(());
        }
    }
    upper.decode_codes(payload, upper_cx, &mut |first, codes| {
        lower.decode_codes_into(codes, first, lower_cx, out)?;
        tick(codes);
        Ok(())
    })
}

/// [`decode_in_pieces`] with each of `runs` decoded in pieces on its own
/// worker into its part of `out`. False when the runs do not chain (one
/// fails, or ends where the next does not start): the caller then decodes
/// sequentially, which overwrites all of `out` and gives the sequential
/// result or error (`spec/pipeline.md` §6.4).
fn decode_runs_in_parallel(
    stages: Stages<'_>,
    cx: &[StageContext; 3],
    runs: &[PieceRun],
    payload: &[u8],
    out: &mut [u8],
    tick: &(dyn Fn(&[u32]) + Sync),
) -> Result<bool> {
    use rayon::prelude::*;
    let (upper, lower) = (stages.compression, stages.encoding);
    let (upper_cx, lower_cx) = (&cx[2], &cx[0]);
    let total = upper_cx.decoded_len as u128;
    let out_len = out.len();
    // Where decoded byte `a` of the upper stream lands in `out`, when that
    // is a whole byte.
    let to_out = |a: usize| {
        let v = a as u128 * out_len as u128;
        (total > 0 && v.is_multiple_of(total)).then(|| (v / total) as usize)
    };
    let mut parts = Vec::with_capacity(runs.len());
    let mut rest = out;
    let mut next = 0;
    for run in runs {
        let (Some(a), Some(b)) = (to_out(run.from), to_out(run.to)) else {
            return Ok(false);
        };
        if a != next || b < a || b - a > rest.len() {
            return Ok(false);
        }
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(b - a);
        parts.push(part);
        rest = tail;
        next = b;
    }
    if !rest.is_empty() {
        return Ok(false);
    }
    let ends: Vec<Result<u64>> = crate::exec::install(upper_cx.threads, || {
        runs.par_iter()
            .zip(parts.into_par_iter())
            .map(|(run, part)| {
                upper.decode_run_codes(payload, upper_cx, run, &mut |first, codes| {
                    lower.decode_codes_into(codes, first, lower_cx, part)?;
                    tick(codes);
                    Ok(())
                })
            })
            .collect()
    })?;
    let chained = ends
        .iter()
        .enumerate()
        .all(|(i, end)| match (end, runs.get(i + 1)) {
            (Ok(end), Some(next)) => *end == next.start,
            (Ok(_), None) => true,
            (Err(_), _) => false,
        });
    Ok(chained)
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

fn decode_into_inner(
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
    if piecewise(stages, &cx, payload.len(), out.len()) {
        decode_in_pieces(stages, &cx, payload, out, &opts.progress)?;
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

/// Decodes the masks of an object: `(kind, packed bits)` for each present kind.
pub(crate) fn decoded_masks(
    desc: &ObjectDescriptor,
    region: &[u8],
) -> Result<Vec<(&'static str, Vec<u8>)>> {
    let Some(m) = desc.masks.as_ref() else {
        return Ok(Vec::new());
    };
    let n =
        usize::try_from(desc.num_elements()?).map_err(|_| Error::metadata("too many elements"))?;
    m.iter()
        .map(|(k, info)| masks::decode_mask(info, region, n).map(|b| (k, b)))
        .collect()
}

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

/// The end of the element range `(first, count)`, which must lie within
/// the `n` elements of the object.
pub(crate) fn range_end(first: u64, count: u64, n: u64) -> Result<u64> {
    first.checked_add(count).filter(|&e| e <= n).ok_or_else(|| {
        Error::invalid_argument(format!("range ({first}, {count}) exceeds the {n} elements"))
    })
}

/// Decoded size of `desc`, checked against the per-object limit.
pub(crate) fn checked_decoded_len(desc: &ObjectDescriptor, limits: &Limits) -> Result<u64> {
    let n = desc.decoded_len()?;
    if n > limits.max_object_bytes {
        return Err(Error::limit("max_object_bytes", n, limits.max_object_bytes));
    }
    Ok(n)
}

/// Byte-swaps `data` into the requested output order when needed.
pub(crate) fn to_output_order<'a>(
    data: Cow<'a, [u8]>,
    dtype: Dtype,
    stored: ByteOrder,
    opts: &PipelineDecodeOptions,
) -> Result<Cow<'a, [u8]>> {
    if !opts.native_byte_order || stored == ByteOrder::native() || dtype.swap_unit() <= 1 {
        return Ok(data);
    }
    let mut owned = buffer::into_owned(data)?;
    swap_in_place(&mut owned, dtype.swap_unit());
    Ok(Cow::Owned(owned))
}
