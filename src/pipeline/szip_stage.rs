//! The szip compression stage: parameters and run-time flags around the AEC
//! codec. See `spec/pipeline.md` §4.4.

use super::params::req_uint;
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};
use crate::szip::{self, flags, SzipParams};

/// Bits per sample handed to the AEC coder: the packed width after
/// simple_packing, 8 after a shuffle, else the element width.
pub fn bits_per_sample(d: &ObjectDescriptor, simple_packing: bool) -> Result<u32> {
    let bits = if simple_packing {
        req_uint(d, "sp_bits_per_value")?
    } else if d.filter == "shuffle" {
        8
    } else {
        d.dtype.width() as u64 * 8
    };
    if !(1..=32).contains(&bits) {
        return Err(Error::metadata(format!(
            "szip needs 1..=32 bits per sample, not {bits}"
        )));
    }
    Ok(bits as u32)
}

fn u32_param(d: &ObjectDescriptor, key: &str) -> Result<u32> {
    let v = req_uint(d, key)?;
    u32::try_from(v).map_err(|_| Error::metadata(format!("{key} {v} exceeds u32")))
}

/// The coder parameters of an szip object, with the run-time flags added.
pub fn params(d: &ObjectDescriptor, simple_packing: bool) -> Result<SzipParams> {
    let bits = bits_per_sample(d, simple_packing)?;
    let mut f = u32_param(d, "szip_flags")?;
    if simple_packing {
        f |= flags::MSB;
    }
    if (17..=24).contains(&bits) {
        f |= flags::THREE_BYTE;
    }
    let p = SzipParams {
        bits_per_sample: bits,
        block_size: u32_param(d, "szip_block_size")?,
        rsi: u32_param(d, "szip_rsi")?,
        flags: f,
    };
    p.validate()?;
    Ok(p)
}

/// RSI start offsets in bits, from `szip_block_offsets`.
pub fn block_offsets(d: &ObjectDescriptor) -> Result<Vec<u64>> {
    let v = d
        .params
        .get("szip_block_offsets")
        .ok_or_else(|| Error::metadata("range decoding of szip needs szip_block_offsets"))?;
    let items = v
        .as_array()
        .ok_or_else(|| Error::metadata("szip_block_offsets is not an array"))?;
    let offsets: Vec<u64> = items
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| Error::metadata("szip_block_offsets entry is not a uint"))
        })
        .collect::<Result<_>>()?;
    if offsets.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::metadata(
            "szip_block_offsets are not strictly increasing",
        ));
    }
    Ok(offsets)
}

/// Encodes the (packed, shuffled or raw) payload; returns the stream and
/// the bit offset of every RSI for `szip_block_offsets`.
///
/// After simple_packing only whole-byte widths are accepted: the reference
/// hands the packed bit stream to the coder as if it were byte containers,
/// which silently corrupts every other width (`spec/pipeline.md` §4.4).
pub fn encode(
    d: &ObjectDescriptor,
    data: &[u8],
    simple_packing: bool,
    profile: szip::SzipProfile,
) -> Result<(Vec<u8>, Vec<u64>)> {
    if simple_packing {
        let bits = req_uint(d, "sp_bits_per_value")?;
        if !matches!(bits, 8 | 16 | 24 | 32) {
            return Err(Error::unsupported_codec(format!(
                "simple_packing at {bits} bits cannot be combined with szip: the reference \
                 would misread it; use 8, 16, 24 or 32 bits, or another compression"
            )));
        }
    }
    let p = params(d, simple_packing)?;
    if data.is_empty() {
        // As the reference: no stream and no offsets for an empty payload.
        return Ok((Vec::new(), Vec::new()));
    }
    szip::encode_with(data, &p, profile)
}

/// Decodes an szip stream into exactly `out.len()` bytes.
pub fn decode(
    d: &ObjectDescriptor,
    src: &[u8],
    simple_packing: bool,
    out: &mut [u8],
    threads: usize,
) -> Result<()> {
    let p = params(d, simple_packing)?;
    if src.is_empty() && out.is_empty() {
        return Ok(());
    }
    if threads > 1 {
        if let Ok(offsets) = block_offsets(d) {
            return szip::decode_parallel_into(src, &p, &offsets, out, threads);
        }
    }
    szip::decode_into(src, &p, out)
}
