//! The encoding pipeline: encoding → filter → compression, plus NaN/Inf masks.
//! See `spec/format.md` §8 and `spec/pipeline.md`.
//!
//! Stages hand each other `Cow` slices: a stage that changes nothing copies
//! nothing. Every decoder writes into a buffer whose size comes from the
//! descriptor alone, never from a size field inside the compressed stream.

// The chunked, progress-reporting and streamed paths serve szip and lz4;
// a build without both leaves parts of them unused.
#![cfg_attr(not(all(feature = "szip", feature = "lz4")), allow(dead_code))]

pub(crate) mod builder;
pub(crate) mod codec;
pub(crate) mod masks;
pub(crate) mod plan;
mod progress;
pub(crate) mod range_plan;
mod range_spans;
mod request;
pub(crate) mod run;
pub(crate) mod scan;
pub(crate) mod streamed;
pub(crate) mod supply;

use std::borrow::Cow;

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder, Dtype};
use crate::error::{Error, Result};
use crate::limits::Limits;
pub use builder::PipelineBuilder;
pub use codec::compression::zstd::ZstdFrameSize;
pub use codec::encoding::simple_packing::{
    compute_params as compute_packing_params, PackingParams,
};
pub(crate) use codec::stage::{StageContext, StageKind};
pub use masks::{MaskMethod, MaskOptions};
pub(crate) use plan::stages;
pub use progress::{copy_paging_out, page_out, ProgressHook, Step};
pub use request::{StageChoice, StageError, StageOption, StageRequest, CODEC_KEYS, ZSTD_LEVELS};
pub use run::decode::decode;
pub(crate) use run::decode::decode_into_inner;
pub(crate) use run::decode::{check_supply, decode_into, decode_reusing};
pub use run::encode::encode;
pub(crate) use run::encode::{append_in_place, encode_planned, Deferral, InPlace, Planned};
pub(crate) use run::pieces::{decode_pieces, decode_streaming, decodes_in_pieces, OnPiece};
pub use run::range::decode_range;
pub(crate) use run::range::{decode_range_into, decodes_by_range};

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

fn out_order(desc: &ObjectDescriptor, opts: &PipelineDecodeOptions) -> ByteOrder {
    if opts.native_byte_order {
        ByteOrder::native()
    } else {
        desc.byte_order
    }
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
