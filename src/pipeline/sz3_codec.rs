//! The sz3 compression stage (cargo feature `sz3`): error-bounded lossy
//! coding of float64 values as one 1-D array, through the reference's
//! Apache-licensed SZ3 binding. No range decoding. See `spec/pipeline.md`
//! §4.7.

#[cfg(feature = "sz3")]
use std::borrow::Cow;

use super::codec::StageKind;
#[cfg(feature = "sz3")]
use super::codec::{CompressionStage, Params, Stage, StageContext};
#[cfg(feature = "sz3")]
use super::float64_stream;
use super::registry::{Builder, CodecEntry};
#[cfg(feature = "sz3")]
use crate::error::{Error, Result};
#[cfg(feature = "sz3")]
pub use crate::pipeline_spec::{Sz3, Sz3Bound};

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "sz3",
    kind: StageKind::Compression,
    keys: &["sz3_error_bound_mode", "sz3_error_bound"],
    feature: Some("sz3"),
    build: BUILD,
};

#[cfg(feature = "sz3")]
const BUILD: Option<Builder> = Some(Builder::Compression(build));
#[cfg(not(feature = "sz3"))]
const BUILD: Option<Builder> = None;

#[cfg(feature = "sz3")]
fn build(p: &Params<'_>) -> Result<Box<dyn CompressionStage>> {
    Ok(Box::new(Sz3::from_params(p)?))
}

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
/// values. On Linux SZ3 runs in a child process (`child_decode`), because
/// past its header it trusts the stream (`spec/pipeline.md` §4.7).
#[cfg(feature = "sz3")]
pub fn sz3_decompress_into(stream: &[u8], out: &mut [f64]) -> Result<()> {
    let n = out.len();
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
    #[cfg(target_os = "linux")]
    {
        let budget = super::child_decode::Budget::for_output(std::mem::size_of_val(out));
        super::child_decode::decode_in_child("sz3", out, budget, |view: &mut [f64]| {
            decode_in_process(stream, view).map_err(|e| e.detail().to_string())
        })
    }
    #[cfg(not(target_os = "linux"))]
    decode_in_process(stream, out)
}

/// SZ3's own decoder, in this process, after `sz3_decompress_into`'s
/// checks; the reference binding refuses a stream whose dimensions differ
/// from `out`'s before decoding.
#[cfg(feature = "sz3")]
fn decode_in_process(stream: &[u8], out: &mut [f64]) -> Result<()> {
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
        let mut values = float64_stream::with_capacity(n)?;
        values.resize(n, 0.0);
        sz3_decompress_into(input, &mut values)?;
        float64_stream::write(&values, cx.byte_order, out);
        Ok(())
    }
}

#[cfg(feature = "sz3")]
impl CompressionStage for Sz3 {}

#[cfg(all(test, feature = "sz3"))]
mod tests {
    use super::*;

    fn wave(n: usize) -> Vec<f64> {
        (0..n).map(|i| (i as f64 * 0.01).sin() * 100.0).collect()
    }

    #[test]
    fn each_bound_mode_round_trips_within_its_bound() {
        let v = wave(5000);
        for (b, max_err) in [
            (Sz3Bound::Abs(1e-3), 1e-3),
            (Sz3Bound::Rel(1e-4), 1e-4 * 200.0),
            (Sz3Bound::Psnr(80.0), 1.0),
        ] {
            let c = sz3_compress(&v, b).unwrap();
            assert!(c.len() < v.len() * 8, "{b:?}");
            let mut out = vec![0.0; v.len()];
            sz3_decompress_into(&c, &mut out).unwrap();
            let err = v
                .iter()
                .zip(&out)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err <= max_err, "{b:?}: {err}");
        }
    }

    #[test]
    fn a_stream_of_another_length_or_truncated_is_refused() {
        let v = wave(1000);
        let c = sz3_compress(&v, Sz3Bound::Abs(1e-3)).unwrap();
        let mut out = vec![0.0; 999];
        let e = sz3_decompress_into(&c, &mut out).unwrap_err();
        assert!(e.detail().contains("[1000]"), "{e}");
        let mut out = vec![0.0; 1000];
        for cut in [0, 1, 15, 16, 17] {
            assert!(sz3_decompress_into(&c[..cut], &mut out).is_err(), "{cut}");
        }
        // SZ3 itself throws (and the process aborts) on these: the magic
        // number or data version changed.
        for at in [0, 3, 4, 7] {
            let mut bad = c.clone();
            bad[at] ^= 0x20;
            let e = sz3_decompress_into(&bad, &mut out).unwrap_err();
            assert!(e.detail().contains("magic number"), "{at}: {e}");
        }
        assert!(sz3_compress(&[], Sz3Bound::Abs(1.0)).is_err());
        assert!(sz3_compress(&[1.0], Sz3Bound::Abs(1.0)).is_err());
        for n in [0, 1] {
            let e = sz3_decompress_into(&c, &mut vec![0.0; n]).unwrap_err();
            assert!(e.detail().contains("at least 2"), "{e}");
        }
    }

    /// Values SZ3 cannot predict, so it stores them losslessly (zstd).
    fn noise(n: usize) -> Vec<f64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f64::from_bits(x >> 2)
            })
            .collect()
    }

    #[test]
    fn a_lossless_stream_claiming_more_bytes_is_an_error_not_a_crash() {
        let v = noise(512);
        let mut c = sz3_compress(&v, Sz3Bound::Abs(1e-300)).unwrap();
        // Lossless mode: the body starts with the byte count of the values.
        let claimed = u64::from_le_bytes(c[16..24].try_into().unwrap());
        assert_eq!(claimed, 512 * 8, "not a lossless-mode stream");
        let mut out = vec![0.0; 512];
        sz3_decompress_into(&c, &mut out).unwrap();
        assert_eq!(out, v);
        // SZ3 itself writes the claimed bytes into the caller's buffer,
        // then throws (testdata/regress/sz3-lossless-size.bin).
        c[16..24].copy_from_slice(&(512u64 * 8 * 64).to_le_bytes());
        let mut out = vec![0.0; 512];
        let e = sz3_decompress_into(&c, &mut out).unwrap_err();
        assert!(e.detail().contains("sz3"), "{e}");
    }

    #[test]
    fn garbage_past_the_header_is_an_error_or_values_never_a_crash() {
        let v = wave(3000);
        let c = sz3_compress(&v, Sz3Bound::Abs(1e-4)).unwrap();
        let mut crashes = 0;
        for at in (16..c.len()).step_by(c.len() / 40 + 1) {
            for fill in [0x00u8, 0xff, 0x5a] {
                let mut bad = c.clone();
                let end = (at + 24).min(bad.len());
                bad[at..end].fill(fill);
                let mut out = vec![0.0; v.len()];
                if let Err(e) = sz3_decompress_into(&bad, &mut out) {
                    assert!(e.detail().contains("sz3"), "{e}");
                    crashes += usize::from(e.detail().contains("crashed"));
                }
            }
        }
        // SZ3 does crash on some of these: each was contained.
        assert!(crashes > 0, "no edit made SZ3 crash");
    }
}
