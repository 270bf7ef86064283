//! The encoding pipeline: encoding → filter → compression, plus NaN/Inf masks.
//! See `spec/format.md` §8 and `spec/pipeline.md`.
//!
//! Stages hand each other `Cow` slices: a stage that changes nothing copies
//! nothing. Every decoder writes into a buffer whose size comes from the
//! descriptor alone, never from a size field inside the compressed stream.

use std::borrow::Cow;

use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder, Dtype};
use crate::error::{Error, Result};
use crate::limits::Limits;

/// Options of the encode side of the pipeline.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Substitute NaN by zero and record it in a mask instead of failing.
    pub allow_nan: bool,
    /// Substitute ±Inf by zero and record it in masks instead of failing.
    pub allow_inf: bool,
    /// Thread budget for large objects (0 = sequential).
    pub threads: usize,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            allow_nan: false,
            allow_inf: false,
            threads: 0,
        }
    }
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
}

impl Default for PipelineDecodeOptions {
    fn default() -> Self {
        PipelineDecodeOptions {
            native_byte_order: true,
            restore_non_finite: true,
            threads: 0,
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

/// Runs the encode pipeline described by `desc` over raw element bytes `data`
/// (in `desc.byte_order`). Fills computed parameters into `desc`.
pub fn encode<'a>(
    desc: &mut ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
) -> Result<EncodedPayload<'a>> {
    let _ = opts;
    let expected = desc.decoded_len()?;
    if data.len() as u64 != expected {
        return Err(Error::invalid_input(format!(
            "data is {} bytes but shape {:?} of {} needs {expected}",
            data.len(),
            desc.shape,
            desc.dtype
        )));
    }
    if !desc.is_raw() {
        return Err(Error::unsupported_codec(format!(
            "pipeline {}/{}/{} is not supported",
            desc.encoding, desc.filter, desc.compression
        )));
    }
    desc.masks = None;
    Ok(EncodedPayload {
        payload: Cow::Borrowed(data),
        mask_blobs: Vec::new(),
    })
}

/// Undoes the pipeline of one object whose payload region is `region`.
/// `region_base` is the region's absolute offset, used in error offsets.
pub fn decode<'a>(
    desc: &ObjectDescriptor,
    region: &'a [u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Cow<'a, [u8]>> {
    let expected = checked_decoded_len(desc, limits)?;
    if !desc.is_raw() {
        return Err(Error::unsupported_codec(format!(
            "pipeline {}/{}/{} is not supported",
            desc.encoding, desc.filter, desc.compression
        ))
        .at(region_base));
    }
    if region.len() as u64 != expected {
        return Err(Error::framing(format!(
            "descriptor claims {expected} decoded bytes but the frame payload is {} bytes",
            region.len()
        ))
        .at(region_base));
    }
    Ok(to_output_order(Cow::Borrowed(region), desc.dtype, desc.byte_order, opts))
}

/// Decoded size of `desc`, checked against the per-object limit.
pub fn checked_decoded_len(desc: &ObjectDescriptor, limits: &Limits) -> Result<u64> {
    let n = desc.decoded_len()?;
    if n > limits.max_object_bytes {
        return Err(Error::limit("max_object_bytes", n, limits.max_object_bytes));
    }
    Ok(n)
}

/// Byte-swaps `data` into the requested output order when needed.
pub fn to_output_order<'a>(
    data: Cow<'a, [u8]>,
    dtype: Dtype,
    stored: ByteOrder,
    opts: &PipelineDecodeOptions,
) -> Cow<'a, [u8]> {
    if !opts.native_byte_order || stored == ByteOrder::native() || dtype.swap_unit() <= 1 {
        return data;
    }
    let mut owned = data.into_owned();
    swap_in_place(&mut owned, dtype.swap_unit());
    Cow::Owned(owned)
}
