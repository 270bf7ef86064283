//! The szip compression stage: parameters and run-time flags around the AEC
//! codec. See `spec/pipeline.md` §4.4.

use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};

/// Bits per sample handed to the AEC coder: the packed width after
/// simple_packing, 8 after a shuffle, else the element width.
pub fn bits_per_sample(d: &ObjectDescriptor, simple_packing: bool) -> Result<u32> {
    let bits = if simple_packing {
        super::params::req_uint(d, "sp_bits_per_value")?
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

/// Encodes with szip; returns the stream and the RSI bit offsets.
pub fn encode(
    d: &ObjectDescriptor,
    data: &[u8],
    simple_packing: bool,
) -> Result<(Vec<u8>, Vec<u64>)> {
    let _ = (bits_per_sample(d, simple_packing)?, data);
    Err(Error::unsupported_codec(
        "szip compression is not built into this tgm",
    ))
}

/// Decodes an szip stream into exactly `out.len()` bytes.
pub fn decode(
    d: &ObjectDescriptor,
    src: &[u8],
    simple_packing: bool,
    out: &mut [u8],
) -> Result<()> {
    let _ = (bits_per_sample(d, simple_packing)?, src, out);
    Err(Error::unsupported_codec(
        "szip compression is not built into this tgm",
    ))
}
