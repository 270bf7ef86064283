//! One object's pipeline as a zarr v2 codec chain that numcodecs (and
//! imagecodecs) decode to tgm's values, or the reason it cannot be one.
//! See `spec/kerchunk.md` §3.

use serde_json::{json, Value as Json};

use crate::descriptor::{row_major_strides, ObjectDescriptor};
use crate::dtype::{ByteOrder, Dtype};
use crate::pipeline_spec::{CompressionSpec, EncodingSpec, FilterSpec};

/// The zarr v2 array metadata of one object's chunk: `dtype`, `filters`
/// and `compressor` of its `.zarray`.
#[derive(Debug, Clone, PartialEq)]
pub struct ZarrChain {
    /// The numpy type string of the decoded values (`"<f8"`, `">i2"`, …).
    pub dtype: String,
    /// The filters in encode order (zarr decodes them in reverse).
    pub filters: Vec<Json>,
    /// The compressor, if any.
    pub compressor: Option<Json>,
}

/// Why an object has no zarr v2 codec chain.
pub type Reason = String;

/// The codec chain decoding `payload` (the object's encoded payload, with
/// no mask blobs) to the values tgm decodes for `d`.
pub fn chain_of(d: &ObjectDescriptor, payload: &[u8]) -> Result<ZarrChain, Reason> {
    if d.masks.as_ref().is_some_and(|m| !m.is_empty()) {
        return Err("NaN/Inf masks: zarr v2 has no codec restoring masked values".into());
    }
    if !d.strides.is_empty() && d.strides != row_major_strides(&d.shape) {
        return Err(format!(
            "strides {:?} are not row-major for shape {:?}",
            d.strides, d.shape
        ));
    }
    let p = d.pipeline();
    let mut filters = Vec::new();
    let dtype = match p.encoding() {
        EncodingSpec::None => numpy_type(d.dtype, d.byte_order)?,
        EncodingSpec::SimplePacking(sp) => {
            let pp = sp
                .packing_params()
                .map_err(|e| format!("simple_packing: {}", e.detail()))?;
            let out = numpy_type(d.dtype, d.byte_order)?;
            let elements = d.num_elements().map_err(|e| e.detail().to_string())?;
            filters.extend(fixed_scale_offset(&pp, &out, elements)?);
            out
        }
        EncodingSpec::SpectralPacking(_) => {
            return Err(
                "simple_packing of spherical-harmonic coefficients (sp_spectral_*, a tgm \
                 extension): numcodecs has no Laplacian scaling"
                    .into(),
            )
        }
        EncodingSpec::Unusable(u) => return Err(format!("encoding {:?} is unknown", u.name())),
    };
    match p.filter() {
        FilterSpec::None => {}
        FilterSpec::Shuffle(s) => {
            filters.push(json!({"id": "shuffle", "elementsize": s.element_size}));
        }
        FilterSpec::Unusable(u) => return Err(format!("filter {:?} is unknown", u.name())),
    }
    let decoded = stream_len(d)?;
    let compressor = match p.compression() {
        CompressionSpec::None => None,
        CompressionSpec::Zstd(_) => Some(zstd_compressor(payload, decoded)?),
        CompressionSpec::Lz4 => Some(lz4_compressor(payload, decoded)?),
        CompressionSpec::Szip(_) => {
            let (aec, trim) = aec_compressor(d, payload, decoded)?;
            filters.extend(trim);
            Some(aec)
        }
        // numcodecs' Blosc reads blosc1 chunks, not blosc2 frames; its
        // ZFPY expects the zfp header tgm's headerless streams lack; it has
        // no SZ3 codec.
        CompressionSpec::Rle
        | CompressionSpec::Roaring
        | CompressionSpec::Blosc2(_)
        | CompressionSpec::Zfp(_)
        | CompressionSpec::Sz3(_) => {
            return Err(format!(
                "compression {:?} has no numcodecs codec",
                p.compression().name()
            ))
        }
        CompressionSpec::Unusable(u) => {
            return Err(format!("compression {:?} is unknown", u.name()))
        }
    };
    Ok(ZarrChain {
        dtype,
        filters,
        compressor,
    })
}

/// The numpy type string of `dtype` in `order`; bitmask and bfloat16 have
/// none.
pub fn numpy_type(dtype: Dtype, order: ByteOrder) -> Result<String, Reason> {
    let code = match dtype {
        Dtype::Bfloat16 => return Err("dtype bfloat16 has no numpy (zarr v2) type".into()),
        Dtype::Bitmask => {
            return Err("dtype bitmask is bit-packed with no numcodecs codec for it".into())
        }
        d => d
            .numpy_code()
            .ok_or_else(|| Reason::from(format!("dtype {d} has no numpy type")))?,
    };
    if dtype.width() == 1 {
        return Ok(format!("|{code}"));
    }
    let sign = match order {
        ByteOrder::Little => '<',
        ByteOrder::Big => '>',
    };
    Ok(format!("{sign}{code}"))
}

/// simple_packing as numcodecs' `fixedscaleoffset`: tgm decodes
/// `R + (2^E·10^−D)·q` (`spec/pipeline.md` §2.2), numcodecs `q / scale +
/// offset`; with D = 0 the scale `2^−E` is exact and both give the same
/// float64 bits. The packed integers are big-endian (§2.3): 8, 16 and 32
/// bits are read as such; other widths up to 31 are first unpacked by
/// imagecodecs' `imagecodecs_packints` (MSB first, into native unsigned
/// integers, in one run of the object's `elements` so that the last byte's
/// padding gives no value), which then follows in encode order.
fn fixed_scale_offset(
    p: &crate::pipeline::PackingParams,
    out: &str,
    elements: u64,
) -> Result<Vec<Json>, Reason> {
    let (astype, unpack) = match (p.bits_per_value, elements > 0) {
        (8, _) => ("|u1", None),
        (16, _) => (">u2", None),
        (32, _) => (">u4", None),
        (1..=7, true) => ("|u1", Some("|u1")),
        (9..=15, true) => ("<u2", Some("<u2")),
        (17..=31, true) => ("<u4", Some("<u4")),
        (b, _) => {
            return Err(format!(
                "simple_packing at {b} bits: numcodecs' fixedscaleoffset reads 8, 16 or 32-bit \
                 integers, and imagecodecs' packints unpacks 1 to 31 bits of a non-empty object"
            ))
        }
    };
    if p.grib_reference_value.is_some() {
        return Err(
            "simple_packing in GRIB's evaluation order (sp_grib_reference_value, \
                    a tgm extension): numcodecs evaluates R + q·scale"
                .into(),
        );
    }
    if p.decimal_scale_factor != 0 {
        return Err(format!(
            "simple_packing with decimal scale factor {}: numcodecs divides by a scale, \
             which differs from tgm's product in the last bit",
            p.decimal_scale_factor
        ));
    }
    let scale = crate::pipeline::codec::encoding::simple_packing::powi(2.0, -p.binary_scale_factor);
    if !scale.is_finite() || scale == 0.0 || !p.reference_value.is_finite() {
        return Err("simple_packing parameters outside float64 range".into());
    }
    let mut filters = vec![json!({
        "id": "fixedscaleoffset",
        "scale": scale,
        "offset": p.reference_value,
        "dtype": out,
        "astype": astype,
    })];
    if let Some(items) = unpack {
        filters.push(json!({
            "id": "imagecodecs_packints",
            "dtype": items,
            "bitspersample": p.bits_per_value,
            "runlen": elements,
        }));
    }
    Ok(filters)
}

/// Bytes of the stream the compression stage decodes to: the packed
/// payload after simple_packing, else the raw elements.
fn stream_len(d: &ObjectDescriptor) -> Result<u64, Reason> {
    let n = d.num_elements().map_err(|e| e.detail().to_string())?;
    let len = match d.pipeline().encoding() {
        EncodingSpec::SimplePacking(sp) => n
            .checked_mul(u64::from(sp.bits_per_value))
            .map(|b| b.div_ceil(8)),
        EncodingSpec::SpectralPacking(sp) => n
            .checked_mul(u64::from(sp.packing.bits_per_value))
            .map(|b| b.div_ceil(8)),
        _ => d.decoded_len().ok(),
    };
    len.ok_or_else(|| "the object's size overflows".into())
}

/// numcodecs' `zstd` (0.16.2 and later) decodes one frame, into the
/// content size its header records or, without one, into an output grown
/// as it streams: the payload must be one frame decoding to exactly
/// `decoded` bytes. A recorded size is checked against the descriptor; an
/// omitted one (the default, `spec/pipeline.md` §4.1) by decoding the frame.
#[cfg(feature = "zstd")]
fn zstd_compressor(payload: &[u8], decoded: u64) -> Result<Json, Reason> {
    use zstd::zstd_safe;
    let frame = zstd_safe::find_frame_compressed_size(payload)
        .map_err(|_| "the zstd payload is not a zstd frame".to_string())?;
    if frame != payload.len() {
        return Err("the zstd payload holds several frames; numcodecs decodes one".into());
    }
    match zstd_safe::get_frame_content_size(payload) {
        Ok(Some(n)) if n != decoded => {
            return Err(format!(
                "the zstd frame records {n} bytes, the descriptor implies {decoded}"
            ))
        }
        Ok(Some(_)) => {}
        _ => {
            let n = zstd_frame_len(payload, decoded)
                .map_err(|e| format!("the zstd frame does not decode: {e}"))?;
            if n > decoded {
                return Err(format!(
                    "the zstd frame decodes to more than the {decoded} bytes the descriptor implies"
                ));
            }
            if n < decoded {
                return Err(format!(
                    "the zstd frame decodes to {n} bytes, the descriptor implies {decoded}"
                ));
            }
        }
    }
    Ok(json!({"id": "zstd", "level": 0}))
}

/// The bytes the zstd frame `payload` decodes to, counted as it streams
/// (never more than `most + 1`), without holding the output.
#[cfg(feature = "zstd")]
fn zstd_frame_len(payload: &[u8], most: u64) -> std::io::Result<u64> {
    use std::io::Read;
    let decoder = zstd::stream::read::Decoder::with_buffer(payload)?.single_frame();
    std::io::copy(
        &mut decoder.take(most.saturating_add(1)),
        &mut std::io::sink(),
    )
}

#[cfg(not(feature = "zstd"))]
fn zstd_compressor(_: &[u8], _: u64) -> Result<Json, Reason> {
    Err("this build of tgm lacks the zstd feature".into())
}

/// numcodecs' `lz4` reads the same 4-byte little-endian size prefix tgm
/// writes before the block (`spec/pipeline.md` §4.2).
fn lz4_compressor(payload: &[u8], decoded: u64) -> Result<Json, Reason> {
    match payload.get(..4) {
        Some(p) if u64::from(u32::from_le_bytes([p[0], p[1], p[2], p[3]])) == decoded => {
            Ok(json!({"id": "lz4", "acceleration": 1}))
        }
        _ => Err(format!(
            "the lz4 payload's size prefix does not give the {decoded} bytes the descriptor implies"
        )),
    }
}

/// szip as imagecodecs' `imagecodecs_aec` with the coder parameters the
/// descriptor implies (`spec/pipeline.md` §4.4: run-time flags added),
/// and the filter that cuts its output to the object, if it needs one.
///
/// Given no output size (zarr passes none), imagecodecs' decoder writes
/// what [`crate::szip::decoded_extent`] counts (the last block whole, a
/// zero-block run coded to the end of its segment or RSI to that end) into
/// a buffer of 8 bytes per payload byte, and fails when that is too small.
/// Past the object's end, imagecodecs' `imagecodecs_packints` with 8-bit
/// items in runs of the object's size keeps whole runs only: exactly the
/// object while the extent is below twice its size (`spec/kerchunk.md` §3).
#[cfg(feature = "szip")]
fn aec_compressor(
    d: &ObjectDescriptor,
    payload: &[u8],
    decoded: u64,
) -> Result<(Json, Option<Json>), Reason> {
    let p = crate::pipeline::codec::compression::szip::coder_params_of(d)
        .map_err(|e| format!("szip: {}", e.detail()))?;
    let sample = p.sample_bytes() as u64;
    let samples = usize::try_from(decoded / sample)
        .ok()
        .filter(|_| decoded.is_multiple_of(sample))
        .ok_or_else(|| format!("szip: {decoded} bytes are not whole {sample}-byte samples"))?;
    let extent = crate::szip::decoded_extent(payload, &p, samples)
        .map_err(|e| format!("szip: {}", e.detail()))? as u64
        * sample;
    // An object with no elements has no chunk for zarr to decode.
    let room = 8 * payload.len() as u64;
    if extent > 0 && extent >= room {
        return Err(format!(
            "szip: the stream decodes to {extent} bytes, more than imagecodecs' decoder, given \
             no output size, makes room for (8 per payload byte, {room})"
        ));
    }
    let trim = if extent == decoded {
        None
    } else if extent < 2 * decoded {
        Some(json!({
            "id": "imagecodecs_packints",
            "dtype": "|u1",
            "bitspersample": 8,
            "runlen": decoded,
        }))
    } else {
        return Err(format!(
            "szip: imagecodecs' decoder, given no output size, decodes {extent} bytes (whole \
             blocks, a zero-block run to the end of its segment or RSI), twice or more the \
             object's {decoded}, which no run-length cut brings back"
        ));
    };
    let aec = json!({
        "id": "imagecodecs_aec",
        "bitspersample": p.bits_per_sample,
        "flags": p.flags,
        "blocksize": p.block_size,
        "rsi": p.rsi,
    });
    Ok((aec, trim))
}

#[cfg(not(feature = "szip"))]
fn aec_compressor(_: &ObjectDescriptor, _: &[u8], _: u64) -> Result<(Json, Option<Json>), Reason> {
    Err("this build of tgm lacks the szip feature".into())
}
