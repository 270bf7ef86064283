//! NaN/Inf companion masks: detection, substitution, mask blobs and
//! restoration. See `spec/pipeline.md` §5.

use super::codec::compression::bitmask::bitcodec::{get_bit, set_bit};
use super::codec::compression::bitmask::BitSet;
use super::codec::registry;
use super::codec::stage::{CompressionStage, MaskStage, Params, StageContext, StageKind};
use crate::descriptor::{Map, MaskInfo, Masks};
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};

/// A mask codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaskMethod {
    /// Packed bits, ⌈n/8⌉ bytes.
    None,
    /// Run lengths.
    Rle,
    /// Roaring bitmap (default).
    #[default]
    Roaring,
    /// lz4 block of the packed bits.
    Lz4,
    /// zstd frame of the packed bits.
    Zstd,
}

impl MaskMethod {
    /// Wire name.
    pub fn name(self) -> &'static str {
        match self {
            MaskMethod::None => "none",
            MaskMethod::Rle => "rle",
            MaskMethod::Roaring => "roaring",
            MaskMethod::Lz4 => "lz4",
            MaskMethod::Zstd => "zstd",
        }
    }

    /// Parses a wire name (`blosc2` is recognised but not built in).
    pub fn from_name(s: &str) -> Result<Self> {
        Ok(match s {
            "none" => MaskMethod::None,
            "rle" => MaskMethod::Rle,
            "roaring" => MaskMethod::Roaring,
            "lz4" => MaskMethod::Lz4,
            "zstd" => MaskMethod::Zstd,
            other => {
                return Err(Error::unsupported_codec(format!(
                    "mask method {other:?} is not supported"
                )))
            }
        })
    }
}

/// Positions of non-finite values, as packed bit sets (empty when none).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NonFinite {
    /// NaN positions.
    pub nan: Option<Vec<u8>>,
    /// +Inf positions.
    pub pos_inf: Option<Vec<u8>>,
    /// -Inf positions.
    pub neg_inf: Option<Vec<u8>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Finite,
    Nan,
    PosInf,
    NegInf,
}

fn classify_component(c: &[u8], order: ByteOrder, dtype: Dtype) -> Kind {
    let word = |n: usize| -> u64 {
        let mut v = 0u64;
        match order {
            ByteOrder::Big => c[..n].iter().for_each(|&b| v = (v << 8) | b as u64),
            ByteOrder::Little => c[..n].iter().rev().for_each(|&b| v = (v << 8) | b as u64),
        }
        v
    };
    let (bits, exp_mask, man_mask, sign) = match dtype {
        Dtype::Float16 => (word(2), 0x7c00u64, 0x03ffu64, 0x8000u64),
        Dtype::Bfloat16 => (word(2), 0x7f80, 0x007f, 0x8000),
        Dtype::Float32 | Dtype::Complex64 => (word(4), 0x7f80_0000, 0x007f_ffff, 0x8000_0000),
        _ => (
            word(8),
            0x7ff0_0000_0000_0000,
            0x000f_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
        ),
    };
    if bits & exp_mask != exp_mask {
        Kind::Finite
    } else if bits & man_mask != 0 {
        Kind::Nan
    } else if bits & sign != 0 {
        Kind::NegInf
    } else {
        Kind::PosInf
    }
}

fn classify(elem: &[u8], order: ByteOrder, dtype: Dtype) -> Kind {
    let unit = dtype.swap_unit();
    if elem.len() == unit {
        return classify_component(elem, order, dtype);
    }
    let (a, b) = (
        classify_component(&elem[..unit], order, dtype),
        classify_component(&elem[unit..], order, dtype),
    );
    if a == Kind::Nan || b == Kind::Nan {
        Kind::Nan
    } else if a == Kind::PosInf || b == Kind::PosInf {
        Kind::PosInf
    } else if a == Kind::NegInf || b == Kind::NegInf {
        Kind::NegInf
    } else {
        Kind::Finite
    }
}

/// Finds non-finite elements. Without `allow_nan` / `allow_inf`, the first
/// offending element is an error naming its index.
pub fn scan(
    data: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    allow_nan: bool,
    allow_inf: bool,
) -> Result<NonFinite> {
    scan_from(data, dtype, order, allow_nan, allow_inf, 0)
}

/// Refuses a non-finite element of `data`, whose first element is element
/// `first` of its array (errors name the array's index), as [`scan`]
/// without `allow_nan` and `allow_inf` does.
pub(crate) fn refuse_non_finite(
    data: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    first: u64,
) -> Result<()> {
    scan_from(data, dtype, order, false, false, first).map(|_| ())
}

fn scan_from(
    data: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    allow_nan: bool,
    allow_inf: bool,
    first: u64,
) -> Result<NonFinite> {
    let mut found = NonFinite::default();
    if !dtype.is_float() {
        return Ok(found);
    }
    if !super::scan::any_non_finite(data, dtype, order) {
        return Ok(found);
    }
    let w = dtype.width();
    let n = data.len() / w;
    for (i, e) in data.chunks_exact(w).enumerate() {
        let kind = classify(e, order, dtype);
        let (slot, allowed, what) = match kind {
            Kind::Finite => continue,
            Kind::Nan => (&mut found.nan, allow_nan, "NaN"),
            Kind::PosInf => (&mut found.pos_inf, allow_inf, "+Inf"),
            Kind::NegInf => (&mut found.neg_inf, allow_inf, "-Inf"),
        };
        if !allowed {
            let opt = if kind == Kind::Nan {
                "allow_nan"
            } else {
                "allow_inf"
            };
            return Err(Error::new(
                ErrorKind::NonFinite,
                format!(
                    "{what} at element {} of a {dtype} array; pass {opt} to store it in a mask",
                    first + i as u64
                ),
            ));
        }
        set_bit(slot.get_or_insert_with(|| vec![0u8; n.div_ceil(8)]), i);
    }
    Ok(found)
}

impl NonFinite {
    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.nan.is_none() && self.pos_inf.is_none() && self.neg_inf.is_none()
    }

    /// Zeroes every flagged element of `data`.
    pub fn substitute(&self, data: &mut [u8], width: usize) {
        for bits in [&self.nan, &self.pos_inf, &self.neg_inf]
            .into_iter()
            .flatten()
        {
            for (i, e) in data.chunks_exact_mut(width).enumerate() {
                if get_bit(bits, i) {
                    e.fill(0);
                }
            }
        }
    }
}

/// Per-kind mask methods and the small-mask fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskOptions {
    /// Method for the NaN mask.
    pub nan: MaskMethod,
    /// Method for the +Inf mask.
    pub pos_inf: MaskMethod,
    /// Method for the -Inf mask.
    pub neg_inf: MaskMethod,
    /// Masks of at most this many packed bytes are stored as `none` (0 disables).
    pub small_mask_threshold: usize,
}

impl Default for MaskOptions {
    fn default() -> Self {
        MaskOptions {
            nan: MaskMethod::Roaring,
            pos_inf: MaskMethod::Roaring,
            neg_inf: MaskMethod::Roaring,
            small_mask_threshold: 128,
        }
    }
}

fn encode_blob(bits: &[u8], n: usize, method: MaskMethod) -> Result<Vec<u8>> {
    method.stage()?.encode_bits(bits, n)
}

/// The packed bits stored as they are (method `none`).
#[derive(Debug)]
struct Packed;

impl MaskStage for Packed {
    fn name(&self) -> &str {
        "none"
    }

    fn encode_bits(&mut self, bits: &[u8], _: usize) -> Result<Vec<u8>> {
        Ok(bits.to_vec())
    }

    fn decode_bits(&self, blob: &[u8], _: usize, out: &mut [u8]) -> Result<()> {
        if blob.len() != out.len() {
            return Err(Error::codec(format!(
                "mask of {} bytes, expected {}",
                blob.len(),
                out.len()
            )));
        }
        out.copy_from_slice(blob);
        Ok(())
    }
}

/// A payload compressor coding the packed bits as bytes: masks reuse the
/// payload codecs with their default parameters (`spec/pipeline.md` §5.3).
#[derive(Debug)]
struct Compressed(Box<dyn CompressionStage>);

impl MaskStage for Compressed {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn encode_bits(&mut self, bits: &[u8], _: usize) -> Result<Vec<u8>> {
        let cx = bytes_context(bits.len());
        Ok(self.0.encode(bits.into(), &cx)?.into_owned())
    }

    fn decode_bits(&self, blob: &[u8], _: usize, out: &mut [u8]) -> Result<()> {
        self.0.decode_into(blob, &bytes_context(out.len()), out)
    }
}

impl MaskMethod {
    /// The mask stage coding this method's blobs.
    pub(crate) fn stage(self) -> Result<Box<dyn MaskStage>> {
        Ok(match self {
            MaskMethod::None => Box::new(Packed),
            MaskMethod::Rle => Box::new(BitSet::Rle),
            MaskMethod::Roaring => Box::new(BitSet::Roaring),
            MaskMethod::Lz4 | MaskMethod::Zstd => Box::new(Compressed(compressor(self.name())?)),
        })
    }
}

/// The payload compressor registered under `name`, with its default
/// parameters.
fn compressor(name: &str) -> Result<Box<dyn CompressionStage>> {
    let entry = registry::lookup(StageKind::Compression, name)?;
    entry.compression(&Params::new(&Map::new(), entry.name))
}

/// The context of a byte stream of `len` bytes with no element structure.
fn bytes_context(len: usize) -> StageContext {
    StageContext {
        dtype: Dtype::Uint8,
        byte_order: ByteOrder::native(),
        out_order: ByteOrder::native(),
        num_elements: len as u64,
        sample_bits: 8,
        packed: false,
        input_len: 0,
        decoded_len: len as u64,
        threads: 0,
        #[cfg(feature = "szip")]
        szip_profile: Default::default(),
        // Mask blobs are never read by stock decoders: the reference's bytes.
        zstd_frame_size: super::ZstdFrameSize::Omitted,
        fresh_output: false,
    }
}

/// Writes the mask blobs after a payload of `payload_len` bytes; returns the
/// blobs and their descriptor entries.
pub fn encode_masks(
    found: &NonFinite,
    n: usize,
    payload_len: usize,
    opts: &MaskOptions,
) -> Result<(Vec<u8>, Masks)> {
    let mut blobs = Vec::new();
    let mut masks = Masks::default();
    let small = opts.small_mask_threshold > 0 && n.div_ceil(8) <= opts.small_mask_threshold;
    for (bits, method, slot) in [
        (&found.nan, opts.nan, &mut masks.nan),
        (&found.pos_inf, opts.pos_inf, &mut masks.pos_inf),
        (&found.neg_inf, opts.neg_inf, &mut masks.neg_inf),
    ] {
        let Some(bits) = bits else { continue };
        let method = if small { MaskMethod::None } else { method };
        let blob = encode_blob(bits, n, method)?;
        *slot = Some(MaskInfo {
            method: method.name().into(),
            offset: (payload_len + blobs.len()) as u64,
            length: blob.len() as u64,
            params: Map::new(),
        });
        blobs.extend_from_slice(&blob);
    }
    Ok((blobs, masks))
}

/// Decodes one mask blob to packed bits of `n` elements.
pub fn decode_mask(info: &MaskInfo, region: &[u8], n: usize) -> Result<Vec<u8>> {
    let blob = info
        .offset
        .checked_add(info.length)
        .filter(|&e| e <= region.len() as u64)
        .map(|e| &region[info.offset as usize..e as usize])
        .ok_or_else(|| Error::framing("mask lies outside the payload region"))?;
    let mut bits = vec![0u8; n.div_ceil(8)];
    MaskMethod::from_name(&info.method)?
        .stage()?
        .decode_bits(blob, n, &mut bits)?;
    Ok(bits)
}

fn canonical(dtype: Dtype, kind: Kind) -> u64 {
    match (dtype, kind) {
        (Dtype::Float16, Kind::Nan) => 0x7e00,
        (Dtype::Float16, Kind::PosInf) => 0x7c00,
        (Dtype::Float16, _) => 0xfc00,
        (Dtype::Bfloat16, Kind::Nan) => 0x7fc0,
        (Dtype::Bfloat16, Kind::PosInf) => 0x7f80,
        (Dtype::Bfloat16, _) => 0xff80,
        (Dtype::Float32 | Dtype::Complex64, Kind::Nan) => 0x7fc0_0000,
        (Dtype::Float32 | Dtype::Complex64, Kind::PosInf) => 0x7f80_0000,
        (Dtype::Float32 | Dtype::Complex64, _) => 0xff80_0000,
        (_, Kind::Nan) => 0x7ff8_0000_0000_0000,
        (_, Kind::PosInf) => 0x7ff0_0000_0000_0000,
        _ => 0xfff0_0000_0000_0000,
    }
}

/// Writes the canonical NaN/±Inf pattern (in `order`) at every flagged
/// element of `out`, whose element 0 is element `first` of the tensor.
/// `dtype` is the dtype of the decoded output.
pub fn restore(
    out: &mut [u8],
    dtype: Dtype,
    order: ByteOrder,
    masks: &[(&'static str, Vec<u8>)],
    first: usize,
) {
    if !dtype.is_float() {
        return;
    }
    let unit = dtype.swap_unit();
    let w = dtype.width();
    for (key, bits) in masks {
        let kind = match *key {
            "nan" => Kind::Nan,
            "inf+" => Kind::PosInf,
            _ => Kind::NegInf,
        };
        let pat = canonical(dtype, kind);
        let bytes = match order {
            ByteOrder::Big => pat.to_be_bytes(),
            ByteOrder::Little => pat.to_le_bytes(),
        };
        let comp: &[u8] = match order {
            ByteOrder::Big => &bytes[8 - unit..],
            ByteOrder::Little => &bytes[..unit],
        };
        for (j, e) in out.chunks_exact_mut(w).enumerate() {
            if get_bit(bits, first + j) {
                for part in e.chunks_exact_mut(unit) {
                    part.copy_from_slice(comp);
                }
            }
        }
    }
}
