//! The szip compression stage: parameters and run-time flags around the AEC
//! codec. See `spec/pipeline.md` §4.4.

use super::params::req_uint;
use crate::cbor::Value;
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

/// Encoding szip is not built into this tgm.
pub fn encode(
    d: &ObjectDescriptor,
    data: &[u8],
    simple_packing: bool,
) -> Result<(Vec<u8>, Vec<u64>)> {
    let _ = (params(d, simple_packing)?, data, Value::Null);
    Err(Error::unsupported_codec(
        "writing szip is not supported yet; tgm reads szip objects",
    ))
}

/// Decodes an szip stream into exactly `out.len()` bytes.
pub fn decode(
    d: &ObjectDescriptor,
    src: &[u8],
    simple_packing: bool,
    out: &mut [u8],
) -> Result<()> {
    let p = params(d, simple_packing)?;
    if src.is_empty() && out.is_empty() {
        return Ok(());
    }
    szip::decode_into(src, &p, out)
}
