//! The sz3 compression stage (cargo feature `sz3`): error-bounded lossy
//! coding of float64 values as one 1-D array, through the reference's
//! Apache-licensed SZ3 binding. No range decoding. See `spec/pipeline.md`
//! §4.7.

#[cfg(feature = "sz3")]
use std::borrow::Cow;

#[cfg(feature = "sz3")]
use super::float64_stream;
use crate::dtype::Dtype;
#[cfg(feature = "sz3")]
use crate::error::{Error, Result};
use crate::pipeline::codec::entry::{compression_build, CodecEntry, Sample};
use crate::pipeline::codec::stage::StageKind;
#[cfg(feature = "sz3")]
use crate::pipeline::codec::stage::{CompressionStage, Stage, StageContext};
pub use crate::pipeline_spec::{Sz3, Sz3Bound};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "sz3",
    kind: StageKind::Compression,
    keys: &["sz3_error_bound_mode", "sz3_error_bound"],
    feature: Some("sz3"),
    build: BUILD,
    sample: Some(Sample {
        label: "pipeline       sz3 (absolute error)",
        pipeline: || {
            crate::pipeline::PipelineBuilder::new().sz3(Sz3 {
                bound: Sz3Bound::Abs(1e-3),
            })
        },
        dtype: Dtype::Float64,
        tolerance: 1e-3,
    }),
};

compression_build!(feature = "sz3", Sz3);

#[cfg(feature = "sz3")]
fn fail(what: &str, e: tensogram_sz3::SZ3Error) -> Error {
    Error::codec(format!("sz3 {what} failed: {e}"))
}

/// SZ3's form of the bound.
#[cfg(feature = "sz3")]
fn bound(b: Sz3Bound) -> tensogram_sz3::ErrorBound {
    match b {
        Sz3Bound::Abs(v) => tensogram_sz3::ErrorBound::Absolute(v),
        Sz3Bound::Rel(v) => tensogram_sz3::ErrorBound::Relative(v),
        Sz3Bound::Psnr(v) => tensogram_sz3::ErrorBound::PSNR(v),
    }
}

/// SZ3 stream of `values` as one 1-D array.
#[cfg(feature = "sz3")]
pub fn sz3_compress(values: &[f64], b: Sz3Bound) -> Result<Vec<u8>> {
    if values.len() < 2 {
        return Err(Error::invalid_argument(format!(
            "compression \"sz3\" cannot code an object of {} values (SZ3 needs at least 2)",
            values.len()
        )));
    }
    let data = tensogram_sz3::DimensionedData::<f64, _>::build(&values)
        .dim(values.len())
        .and_then(|d| d.finish())
        .map_err(|e| fail("compression", e))?;
    tensogram_sz3::compress(&data, bound(b)).map_err(|e| fail("compression", e))
}

/// The first 8 bytes (magic number, data version) of every stream this
/// build's SZ3 writes. Its decoder throws a C++ exception on any others,
/// which no caller can catch: the process aborts (`spec/pipeline.md` §4.7).
#[cfg(feature = "sz3")]
fn own_header() -> Option<[u8; 8]> {
    static HEADER: std::sync::LazyLock<Option<[u8; 8]>> = std::sync::LazyLock::new(|| {
        let s = sz3_compress(&[0.0, 1.0], Sz3Bound::Abs(1.0)).ok()?;
        s.get(..8)?.try_into().ok()
    });
    *HEADER
}

/// Decodes an SZ3 stream into exactly `out.len()` values: the stream must
/// start with the magic number and data version this build writes, and its
/// own header must declare one dimension of that length and float64
/// values. On Linux SZ3 runs in a helper process (`crate::sz3_child`),
/// because past its header it trusts the stream (`spec/pipeline.md` §4.7).
#[cfg(feature = "sz3")]
pub fn sz3_decompress_into(stream: &[u8], out: &mut [f64]) -> Result<()> {
    check_stream(stream, out.len())?;
    #[cfg(target_os = "linux")]
    return crate::sz3_child::decode(
        stream,
        crate::dtype::ByteOrder::native(),
        crate::sz3_child::as_bytes_mut(out),
    );
    #[cfg(not(target_os = "linux"))]
    decode_in_process(stream, out)
}

/// What tgm checks before SZ3 sees a stream for `n` values.
#[cfg(feature = "sz3")]
fn check_stream(stream: &[u8], n: usize) -> Result<()> {
    if stream
        .get(..8)
        .is_none_or(|h| Some(h) != own_header().as_ref().map(|o| &o[..]))
    {
        return Err(Error::codec(
            "sz3 stream lacks the SZ3 magic number and data version this build reads",
        ));
    }
    if n < 2 {
        // SZ3 never writes such a stream; its dimension builder cannot
        // even describe one.
        return Err(Error::codec(format!(
            "sz3 stream for an object of {n} values (SZ3 needs at least 2)"
        )));
    }
    Ok(())
}

/// SZ3's own decoder, in this process, after `sz3_decompress_into`'s
/// checks; the reference binding refuses a stream whose dimensions differ
/// from `out`'s before decoding.
#[cfg(feature = "sz3")]
pub(crate) fn decode_in_process(stream: &[u8], out: &mut [f64]) -> Result<()> {
    let n = out.len();
    let mut view = out;
    let mut data = tensogram_sz3::DimensionedData::<f64, _>::build_mut(&mut view)
        .dim(n)
        .and_then(|d| d.finish())
        .map_err(|e| fail("decompression", e))?;
    tensogram_sz3::decompress_into_dimensioned(stream, &mut data)
        .map(|_| ())
        .map_err(|e| match e {
            tensogram_sz3::SZ3Error::DecompressedDimsMismatch { found, .. } => {
                Error::codec(format!(
                    "sz3 stream holds an array of shape {found:?}, the descriptor implies [{n}]"
                ))
            }
            e => fail("decompression", e),
        })
}

#[cfg(feature = "sz3")]
impl Stage for Sz3 {
    fn name(&self) -> &str {
        "sz3"
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        float64_stream::check("sz3", cx)
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        let values = float64_stream::values(&input, cx.byte_order)?;
        Ok(Cow::Owned(sz3_compress(&values, self.bound)?))
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let n = float64_stream::count("sz3", out)?;
        check_stream(input, n)?;
        #[cfg(target_os = "linux")]
        return crate::sz3_child::decode(input, cx.byte_order, out);
        #[cfg(not(target_os = "linux"))]
        {
            let mut values = float64_stream::with_capacity(n)?;
            values.resize(n, 0.0);
            decode_in_process(input, &mut values)?;
            float64_stream::write(&values, cx.byte_order, out);
            Ok(())
        }
    }
}

#[cfg(feature = "sz3")]
impl CompressionStage for Sz3 {}
