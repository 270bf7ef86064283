//! What the float64-only compressors (zfp, sz3) share: the check that they
//! see the object's own float64 elements, and the conversion between the
//! stored bytes and native `f64` values. See `spec/pipeline.md` §4.6–§4.7.

use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, Result};
use crate::pipeline::codec::stage::StageContext;

/// Refuses unless the stage sees float64 elements as stored, that is
/// `encoding` and `filter` are both `none`.
pub(crate) fn check(codec: &str, cx: &StageContext) -> Result<()> {
    if cx.dtype != Dtype::Float64 {
        return Err(Error::invalid_argument(format!(
            "compression {codec:?} codes float64 values only, not {}",
            cx.dtype
        )));
    }
    if cx.sample_bits != 64 || cx.packed {
        return Err(Error::invalid_argument(format!(
            "compression {codec:?} needs encoding \"none\" and filter \"none\": it codes the float64 values themselves"
        )));
    }
    Ok(())
}

/// The values of `bytes`, 8 per value in `order`.
pub(crate) fn values(bytes: &[u8], order: ByteOrder) -> Result<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::invalid_argument(format!(
            "{} bytes are not whole float64 values",
            bytes.len()
        )));
    }
    let mut v = with_capacity(bytes.len() / 8)?;
    v.extend(bytes.chunks_exact(8).map(|c| {
        let a: [u8; 8] = c.try_into().unwrap_or_default();
        match order {
            ByteOrder::Big => f64::from_be_bytes(a),
            ByteOrder::Little => f64::from_le_bytes(a),
        }
    }));
    Ok(v)
}

/// Writes `vals` into `out` (exactly 8 bytes per value) in `order`. (On
/// Linux sz3's child writes its own bytes.)
#[cfg(any(feature = "zfp", not(target_os = "linux")))]
pub(crate) fn write(vals: &[f64], order: ByteOrder, out: &mut [u8]) {
    for (v, o) in vals.iter().zip(out.chunks_exact_mut(8)) {
        o.copy_from_slice(&match order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        });
    }
}

/// The number of float64 values in `out`, which must hold whole values.
pub(crate) fn count(codec: &str, out: &[u8]) -> Result<usize> {
    if !out.len().is_multiple_of(8) {
        return Err(Error::metadata(format!(
            "{codec} decodes whole float64 values, not {} bytes",
            out.len()
        )));
    }
    Ok(out.len() / 8)
}

/// An empty vector with room for `n` values, or an error when the
/// allocation fails.
pub(crate) fn with_capacity(n: usize) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::invalid_input(format!("cannot allocate {n} float64 values")))?;
    Ok(v)
}
