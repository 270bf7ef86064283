//! The encoding pipeline: encoding → filter → compression, plus NaN/Inf masks.
//! See `spec/format.md` §8 and `spec/pipeline.md`.
//!
//! Stages hand each other `Cow` slices: a stage that changes nothing copies
//! nothing. Every decoder writes into a buffer whose size comes from the
//! descriptor alone, never from a size field inside the compressed stream.

pub mod bitcodec;
pub mod bits;
pub mod compress;
pub mod masks;
mod params;
pub mod shuffle;
pub mod simple_packing;
pub mod szip_stage;

use std::borrow::Cow;

use crate::buffer;
use crate::cbor::Value;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::{swap_in_place, ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
pub use masks::{MaskMethod, MaskOptions};
use params::{opt_int, req_uint};
use simple_packing::PackingParams;

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
    pub szip_profile: crate::szip::SzipProfile,
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

/// The stages named by a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    None,
    SimplePacking,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Zstd,
    Lz4,
    Szip,
    Rle,
    Roaring,
}

struct Stages {
    encoding: Encoding,
    shuffle: bool,
    compression: Compression,
}

fn stages(d: &ObjectDescriptor) -> Result<Stages> {
    let encoding = match d.encoding.as_str() {
        "none" => Encoding::None,
        "simple_packing" => Encoding::SimplePacking,
        other => {
            return Err(Error::unsupported_codec(format!(
                "unknown encoding {other:?}"
            )))
        }
    };
    let shuffle = match d.filter.as_str() {
        "none" => false,
        "shuffle" => true,
        other => {
            return Err(Error::unsupported_codec(format!(
                "unknown filter {other:?}"
            )))
        }
    };
    let compression = match d.compression.as_str() {
        "none" => Compression::None,
        "zstd" => Compression::Zstd,
        "lz4" => Compression::Lz4,
        "szip" => Compression::Szip,
        "rle" => Compression::Rle,
        "roaring" => Compression::Roaring,
        c @ ("blosc2" | "zfp" | "sz3") => {
            return Err(Error::unsupported_codec(format!(
                "compression {c:?} is not built into tgm"
            )))
        }
        other => {
            return Err(Error::unsupported_codec(format!(
                "unknown compression {other:?}"
            )))
        }
    };
    if encoding == Encoding::SimplePacking && d.dtype != Dtype::Float64 {
        return Err(Error::metadata(format!(
            "simple_packing needs dtype float64, not {}",
            d.dtype
        )));
    }
    if matches!(compression, Compression::Rle | Compression::Roaring) && d.dtype != Dtype::Bitmask {
        return Err(Error::metadata(format!(
            "{} compression needs dtype bitmask, not {}",
            d.compression, d.dtype
        )));
    }
    Ok(Stages {
        encoding,
        shuffle,
        compression,
    })
}

/// Reads the simple_packing parameters of a descriptor.
fn packing_params(d: &ObjectDescriptor) -> Result<PackingParams> {
    let bits = req_uint(d, "sp_bits_per_value")?;
    let r = d
        .params
        .get("sp_reference_value")
        .ok_or_else(|| Error::metadata("simple_packing lacks sp_reference_value"))?;
    let reference_value = match r {
        Value::Float(f) => *f,
        Value::Uint(_) | Value::Nint(_) => r
            .as_f64()
            .filter(|f| f.abs() <= (1u64 << 53) as f64)
            .ok_or_else(|| {
                Error::metadata("sp_reference_value integer is not exactly representable")
            })?,
        other => {
            return Err(Error::metadata(format!(
                "sp_reference_value is a {}, not a number",
                other.type_name()
            )))
        }
    };
    let int32 = |key: &str| -> Result<i32> {
        let v = opt_int(d, key)?
            .ok_or_else(|| Error::metadata(format!("simple_packing lacks {key}")))?;
        i32::try_from(v).map_err(|_| Error::metadata(format!("{key} {v} is outside the i32 range")))
    };
    let p = PackingParams {
        reference_value,
        binary_scale_factor: int32("sp_binary_scale_factor")?,
        decimal_scale_factor: int32("sp_decimal_scale_factor")?,
        bits_per_value: u32::try_from(bits)
            .map_err(|_| Error::metadata(format!("sp_bits_per_value {bits} exceeds 64")))?,
    };
    simple_packing::check_params(&p)?;
    Ok(p)
}

/// Size of the bytes the filter and compression stages see.
fn encoded_len(d: &ObjectDescriptor, enc: Encoding, decoded: u64) -> Result<u64> {
    match enc {
        Encoding::None => Ok(decoded),
        Encoding::SimplePacking => {
            let bits = req_uint(d, "sp_bits_per_value")?;
            d.num_elements()?
                .checked_mul(bits)
                .map(|b| b.div_ceil(8))
                .ok_or_else(|| Error::metadata("packed size overflows"))
        }
    }
}

/// Runs the encode pipeline described by `desc` over raw element bytes `data`
/// (in `desc.byte_order`). Fills computed parameters into `desc`.
pub fn encode<'a>(
    desc: &mut ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
) -> Result<EncodedPayload<'a>> {
    let expected = desc.decoded_len()?;
    if data.len() as u64 != expected {
        return Err(Error::invalid_input(format!(
            "data is {} bytes but shape {:?} of {} needs {expected}",
            data.len(),
            desc.shape,
            desc.dtype
        )));
    }
    let st = stages(desc)?;
    let found = masks::scan(
        data,
        desc.dtype,
        desc.byte_order,
        opts.allow_nan,
        opts.allow_inf,
    )?;
    let mut values: Cow<'a, [u8]> = Cow::Borrowed(data);
    if !found.is_empty() {
        found.substitute(values.to_mut(), desc.dtype.width());
    }

    let mut payload: Cow<'a, [u8]> = match st.encoding {
        Encoding::None => values,
        Encoding::SimplePacking => {
            let bits = req_uint(desc, "sp_bits_per_value")?;
            let bits = u32::try_from(bits)
                .map_err(|_| Error::metadata(format!("sp_bits_per_value {bits} exceeds 64")))?;
            let has_r = desc.params.contains_key("sp_reference_value");
            let has_e = desc.params.contains_key("sp_binary_scale_factor");
            let decimal = match opt_int(desc, "sp_decimal_scale_factor")? {
                Some(v) => i32::try_from(v).map_err(|_| {
                    Error::metadata("sp_decimal_scale_factor is outside the i32 range")
                })?,
                None => 0,
            };
            if has_r != has_e {
                return Err(Error::metadata(
                    "give both sp_reference_value and sp_binary_scale_factor, or neither",
                ));
            }
            if !has_r {
                let p = simple_packing::compute_params(data, desc.byte_order, bits, decimal)?;
                desc.params
                    .insert("sp_reference_value".into(), Value::Float(p.reference_value));
                desc.params.insert(
                    "sp_binary_scale_factor".into(),
                    Value::from_i64(p.binary_scale_factor as i64),
                );
            }
            desc.params.insert(
                "sp_decimal_scale_factor".into(),
                Value::from_i64(decimal as i64),
            );
            let p = packing_params(desc)?;
            Cow::Owned(simple_packing::encode_parallel(
                &values,
                desc.byte_order,
                &p,
                opts.threads,
            )?)
        }
    };
    if st.shuffle {
        let size = req_uint(desc, "shuffle_element_size")?;
        let size = usize::try_from(size)
            .map_err(|_| Error::metadata("shuffle_element_size is too large"))?;
        payload = Cow::Owned(shuffle::shuffle(&payload, size)?);
    }
    payload = match st.compression {
        Compression::None => payload,
        Compression::Zstd => {
            let level = match opt_int(desc, "zstd_level")? {
                Some(l) => i32::try_from(l)
                    .map_err(|_| Error::metadata("zstd_level is outside the i32 range"))?,
                None => compress::ZSTD_DEFAULT_LEVEL,
            };
            Cow::Owned(compress::zstd_compress(&payload, level)?)
        }
        Compression::Lz4 => Cow::Owned(compress::lz4_compress(&payload)),
        Compression::Rle | Compression::Roaring => {
            let nbits = payload.len() * 8;
            let body = if st.compression == Compression::Rle {
                bitcodec::rle_encode(&payload, nbits)
            } else {
                bitcodec::roaring_encode(&payload, nbits)?
            };
            let prefix = u32::try_from(nbits)
                .map_err(|_| Error::invalid_input("bitmask too large for a 32-bit bit count"))?;
            let mut out = Vec::with_capacity(4 + body.len());
            out.extend_from_slice(&prefix.to_be_bytes());
            out.extend_from_slice(&body);
            Cow::Owned(out)
        }
        Compression::Szip => {
            let (bytes, offsets) = szip_stage::encode(
                desc,
                &payload,
                st.encoding == Encoding::SimplePacking,
                opts.szip_profile,
            )?;
            desc.params.insert(
                "szip_block_offsets".into(),
                Value::Array(offsets.into_iter().map(Value::Uint).collect()),
            );
            Cow::Owned(bytes)
        }
    };
    desc.masks = None;
    let mut mask_blobs = Vec::new();
    if !found.is_empty() {
        let n = usize::try_from(desc.num_elements()?)
            .map_err(|_| Error::invalid_input("too many elements"))?;
        let (blobs, m) = masks::encode_masks(&found, n, payload.len(), &opts.masks)?;
        mask_blobs = blobs;
        desc.masks = Some(m);
    }
    Ok(EncodedPayload {
        payload,
        mask_blobs,
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

/// Undoes the pipeline of one object whose payload region is `region`.
/// `region_base` is the region's absolute offset, used in error offsets.
pub fn decode<'a>(
    desc: &ObjectDescriptor,
    region: &'a [u8],
    region_base: u64,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Cow<'a, [u8]>> {
    decode_inner(desc, region, opts, limits).map_err(|e| e.within(region_base))
}

fn decode_inner<'a>(
    desc: &ObjectDescriptor,
    region: &'a [u8],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Cow<'a, [u8]>> {
    let expected = checked_decoded_len(desc, limits)?;
    let st = stages(desc)?;
    let payload = payload_of(desc, region)?;
    let enc_len = encoded_len(desc, st.encoding, expected)?;
    let enc_len_usize = usize::try_from(enc_len)
        .map_err(|_| Error::limit("max_object_bytes", enc_len, limits.max_object_bytes))?;
    let stage1: Cow<'a, [u8]> = match st.compression {
        Compression::None => {
            if payload.len() != enc_len_usize {
                return Err(Error::framing(format!(
                    "descriptor claims {enc_len} encoded bytes but the frame payload is {} bytes",
                    payload.len()
                )));
            }
            Cow::Borrowed(payload)
        }
        Compression::Zstd => {
            let mut out = Vec::new();
            compress::zstd_decompress(payload, enc_len_usize, &mut out)?;
            Cow::Owned(out)
        }
        Compression::Lz4 => {
            let mut out = Vec::new();
            compress::lz4_decompress(payload, enc_len_usize, &mut out)?;
            Cow::Owned(out)
        }
        Compression::Rle | Compression::Roaring => {
            let prefix = payload
                .get(..4)
                .ok_or_else(|| Error::codec("bitmask payload lacks its 4-byte bit count"))?;
            let nbits = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as u64;
            if nbits != enc_len * 8 {
                return Err(Error::codec(format!(
                    "bitmask payload counts {nbits} bits, descriptor implies {}",
                    enc_len * 8
                )));
            }
            let mut out = buffer::zeroed(enc_len_usize)?;
            if st.compression == Compression::Rle {
                bitcodec::rle_decode_into(&payload[4..], nbits as usize, &mut out)?;
            } else {
                bitcodec::roaring_decode_into(&payload[4..], nbits as usize, &mut out)?;
            }
            Cow::Owned(out)
        }
        Compression::Szip => {
            let mut out = buffer::zeroed(enc_len_usize)?;
            szip_stage::decode(
                desc,
                payload,
                st.encoding == Encoding::SimplePacking,
                &mut out,
                opts.threads,
            )?;
            Cow::Owned(out)
        }
    };
    let stage2: Cow<'a, [u8]> = if st.shuffle {
        let size = usize::try_from(req_uint(desc, "shuffle_element_size")?)
            .map_err(|_| Error::metadata("shuffle_element_size is too large"))?;
        let mut out = buffer::zeroed(stage1.len())?;
        shuffle::unshuffle_into(&stage1, size, &mut out)?;
        Cow::Owned(out)
    } else {
        stage1
    };
    let out_order = if opts.native_byte_order {
        ByteOrder::native()
    } else {
        desc.byte_order
    };
    let mut data: Cow<'a, [u8]> = match st.encoding {
        Encoding::None => to_output_order(stage2, desc.dtype, desc.byte_order, opts)?,
        Encoding::SimplePacking => {
            let p = packing_params(desc)?;
            let n = (expected / 8) as usize;
            let mut out = buffer::zeroed(expected as usize)?;
            simple_packing::decode_parallel(&stage2, n, &p, out_order, &mut out, opts.threads)?;
            Cow::Owned(out)
        }
    };
    if opts.restore_non_finite {
        let decoded = decoded_masks(desc, region)?;
        if !decoded.is_empty() {
            masks::restore(data.to_mut(), desc.dtype, out_order, &decoded, 0);
        }
    }
    Ok(data)
}

/// Decodes the masks of an object: `(kind, packed bits)` for each present kind.
pub fn decoded_masks(
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

/// Decodes element ranges `(first, count)` of an object. Supported for
/// encodings none and simple_packing without filter and without compression.
pub fn decode_range(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    ranges: &[(u64, u64)],
    opts: &PipelineDecodeOptions,
    limits: &Limits,
) -> Result<Vec<Vec<u8>>> {
    let run = || -> Result<Vec<Vec<u8>>> {
        let expected = checked_decoded_len(desc, limits)?;
        let st = stages(desc)?;
        let refuse = |why: &str| {
            Err(Error::new(
                ErrorKind::RangeNotSupported,
                format!("range decoding is not possible {why}"),
            ))
        };
        if st.shuffle {
            return refuse("after a shuffle filter");
        }
        if desc.dtype == Dtype::Bitmask {
            return refuse("for bitmask objects");
        }
        if !matches!(st.compression, Compression::None | Compression::Szip) {
            return refuse(&format!("with {} compression", desc.compression));
        }
        let payload = payload_of(desc, region)?;
        let n = expected / desc.dtype.width().max(1) as u64;
        let enc_len = encoded_len(desc, st.encoding, expected)?;
        if st.compression == Compression::None && payload.len() as u64 != enc_len {
            return Err(Error::framing(format!(
                "descriptor claims {enc_len} encoded bytes but the frame payload is {} bytes",
                payload.len()
            )));
        }
        let sp = st.encoding == Encoding::SimplePacking;
        // Bytes [from, to) of the stream before compression, decoding only
        // the szip RSIs that cover them.
        let encoded_bytes = |from: u64, to: u64| -> Result<Cow<'_, [u8]>> {
            if st.compression == Compression::None {
                return Ok(Cow::Borrowed(&payload[from as usize..to as usize]));
            }
            let p = szip_stage::params(desc, sp)?;
            let offsets = szip_stage::block_offsets(desc)?;
            let sb = p.sample_bytes() as u64;
            let (a, b) = (from / sb * sb, (to.div_ceil(sb) * sb).min(enc_len));
            let mut buf = vec![0u8; (b - a) as usize];
            crate::szip::decode_range_into(payload, &p, &offsets, enc_len, a, &mut buf)?;
            buf.drain(..(from - a) as usize);
            buf.truncate((to - from) as usize);
            Ok(Cow::Owned(buf))
        };
        let out_order = if opts.native_byte_order {
            ByteOrder::native()
        } else {
            desc.byte_order
        };
        let decoded = if opts.restore_non_finite {
            decoded_masks(desc, region)?
        } else {
            Vec::new()
        };
        let mut results = Vec::with_capacity(ranges.len());
        for &(first, count) in ranges {
            first
                .checked_add(count)
                .filter(|&e| e <= n)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "range ({first}, {count}) exceeds the {n} elements"
                    ))
                })?;
            let mut out = match st.encoding {
                Encoding::None => {
                    let w = desc.dtype.width() as u64;
                    let slice = encoded_bytes(first * w, (first + count) * w)?;
                    buffer::into_owned(to_output_order(slice, desc.dtype, desc.byte_order, opts)?)?
                }
                Encoding::SimplePacking => {
                    let p = packing_params(desc)?;
                    let bits = p.bits_per_value as u64;
                    let (from, to) = (first * bits / 8, ((first + count) * bits).div_ceil(8));
                    let bytes = encoded_bytes(from, to)?;
                    let skip_bits = (first * bits % 8) as usize;
                    let mut out = buffer::zeroed((count * 8) as usize)?;
                    decode_packed_at(&bytes, skip_bits, count as usize, &p, out_order, &mut out)?;
                    out
                }
            };
            if !decoded.is_empty() {
                masks::restore(&mut out, desc.dtype, out_order, &decoded, first as usize);
            }
            results.push(out);
        }
        Ok(results)
    };
    run().map_err(|e| e.within(region_base))
}

/// Unpacks `count` values starting `skip_bits` into `bytes`.
fn decode_packed_at(
    bytes: &[u8],
    skip_bits: usize,
    count: usize,
    p: &PackingParams,
    order: ByteOrder,
    out: &mut [u8],
) -> Result<()> {
    if skip_bits == 0 || p.bits_per_value == 0 {
        return simple_packing::decode_into(bytes, 0, count, p, order, out);
    }
    simple_packing::check_params(p)?;
    let need = (skip_bits + count * p.bits_per_value as usize).div_ceil(8);
    if bytes.len() < need || out.len() != count * 8 {
        return Err(Error::codec("packed range shorter than needed"));
    }
    let inv = simple_packing::powi(2.0, p.binary_scale_factor)
        * simple_packing::powi(10.0, -p.decimal_scale_factor);
    bits::unpack(bytes, skip_bits, count, p.bits_per_value, |i, q| {
        let v = p.reference_value + inv * q as f64;
        let b = match order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        out[i * 8..i * 8 + 8].copy_from_slice(&b);
    });
    Ok(())
}

/// Runs `f` on a pool of `threads` workers. Pools are built once per size
/// and reused, so a thread budget costs no thread creation per call.
pub(crate) fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pool = {
        let mut pools = POOLS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match pools.get(&threads) {
            Some(p) => p.clone(),
            None => {
                let p = Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .map_err(|e| {
                            Error::invalid_argument(format!("cannot build a thread pool: {e}"))
                        })?,
                );
                pools.insert(threads, p.clone());
                p
            }
        }
    };
    Ok(pool.install(f))
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
) -> Result<Cow<'a, [u8]>> {
    if !opts.native_byte_order || stored == ByteOrder::native() || dtype.swap_unit() <= 1 {
        return Ok(data);
    }
    let mut owned = buffer::into_owned(data)?;
    swap_in_place(&mut owned, dtype.swap_unit());
    Ok(Cow::Owned(owned))
}
