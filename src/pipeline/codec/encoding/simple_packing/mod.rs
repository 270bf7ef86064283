//! GRIB-style simple packing: float64 values quantised to `bits`-bit integers
//! `q = round((v - R) * 10^D * 2^-E)`. See `spec/pipeline.md` §2.

pub(crate) mod bits;
mod dequantise;
mod quantise;
mod spectral;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use self::quantise::Quantiser;
use crate::cbor::Value;
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline::codec::entry::{Builder, CodecEntry, Sample};
use crate::pipeline::codec::stage::{
    packed_bytes, CodeSource, EncodingStage, Params, RangeInput, Stage, StageContext, StageKind,
    StagePlan,
};
use crate::pipeline::progress::{Report, Ticks, REPORT_BYTES};
use crate::pipeline::scan::FiniteRange;

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "simple_packing",
    kind: StageKind::Encoding,
    keys: &[
        "sp_bits_per_value",
        "sp_reference_value",
        "sp_binary_scale_factor",
        "sp_decimal_scale_factor",
        "sp_grib_reference_value",
        "sp_spectral_truncation",
        "sp_spectral_subset_truncation",
        "sp_spectral_laplacian",
        "sp_spectral_subset",
        "sp_spectral_subset_last_scaled",
    ],
    feature: None,
    build: Some(Builder::Encoding(build)),
    sample: Some(Sample {
        label: "pipeline       simple_packing(24)",
        pipeline: || crate::pipeline::PipelineBuilder::new().simple_packing(24),
        dtype: Dtype::Float64,
        tolerance: 1e-4,
    }),
};

pub use crate::pipeline_spec::SimplePacking;

impl SimplePacking {
    /// The complete parameters a decoder needs.
    pub fn packing_params(&self) -> Result<PackingParams> {
        let lacks = |k: &str| Error::metadata(format!("simple_packing lacks {k}"));
        let p = PackingParams {
            reference_value: self
                .reference_value
                .ok_or_else(|| lacks("sp_reference_value"))?,
            binary_scale_factor: self
                .binary_scale_factor
                .ok_or_else(|| lacks("sp_binary_scale_factor"))?,
            decimal_scale_factor: self
                .decimal_scale_factor
                .ok_or_else(|| lacks("sp_decimal_scale_factor"))?,
            bits_per_value: self.bits_per_value,
            grib_reference_value: self.grib_reference_value,
        };
        check_params(&p)?;
        Ok(p)
    }
}

impl From<PackingParams> for SimplePacking {
    /// simple_packing with all four parameters given, none derived.
    fn from(p: PackingParams) -> Self {
        SimplePacking {
            bits_per_value: p.bits_per_value,
            reference_value: Some(p.reference_value),
            binary_scale_factor: Some(p.binary_scale_factor),
            decimal_scale_factor: Some(p.decimal_scale_factor),
            grib_reference_value: p.grib_reference_value,
            derived: false,
        }
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn EncodingStage>> {
    if crate::pipeline_spec::names_spectral_layout(p) {
        return Ok(Box::new(
            crate::pipeline_spec::SpectralPacking::from_params(p)?,
        ));
    }
    Ok(Box::new(SimplePacking::from_params(p)?))
}

impl Stage for SimplePacking {
    fn name(&self) -> &str {
        "simple_packing"
    }

    fn validate(&self, cx: &StageContext) -> Result<()> {
        if cx.dtype != Dtype::Float64 {
            return Err(Error::metadata(format!(
                "simple_packing only supports float64, not {}",
                cx.dtype
            )));
        }
        Ok(())
    }

    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
        let p = self.packing_params()?;
        Ok(Cow::Owned(encode_parallel(
            &input,
            cx.byte_order,
            &p,
            cx.threads,
        )?))
    }

    /// Packs runs of values, reporting every 4 MiB of them
    /// (`spec/pipeline.md` §6.7); bytes and errors are the whole encode's.
    fn encode_reporting<'a>(
        &mut self,
        input: Cow<'a, [u8]>,
        cx: &StageContext,
        report: &Report<'_>,
    ) -> Result<Cow<'a, [u8]>> {
        let p = self.packing_params()?;
        let len = input.len() as u64;
        let bits = p.bits_per_value as usize;
        let n = input.len() / 8;
        let packed = bits::packed_len(n, p.bits_per_value);
        let (Some(packed), true) = (packed, bits > 0 && input.len().is_multiple_of(8)) else {
            let out = self.encode(input, cx)?;
            report(len, len);
            return Ok(out);
        };
        let mut out = crate::buffer::zeroed(packed)?;
        let run = report_run(cx.threads);
        let mut done = 0u64;
        for (src, dst) in input.chunks(run * 8).zip(out.chunks_mut(run * bits / 8)) {
            if encode_parallel_into(src, cx.byte_order, &p, cx.threads, dst).is_err() {
                break;
            }
            done += src.len() as u64;
            if done < len {
                report(done, done);
            }
        }
        if done < len {
            // The whole encode's error, which names the value in the object.
            return self.encode(input, cx);
        }
        report(len, len);
        Ok(Cow::Owned(out))
    }

    fn derived_params(&self) -> Vec<(&'static str, Value)> {
        let mut v = Vec::new();
        if self.derived {
            if let (Some(r), Some(e)) = (self.reference_value, self.binary_scale_factor) {
                v.push(("sp_reference_value", Value::Float(r)));
                v.push(("sp_binary_scale_factor", Value::from_i64(e as i64)));
            }
        }
        if let Some(d) = self.decimal_scale_factor {
            v.push(("sp_decimal_scale_factor", Value::from_i64(d as i64)));
        }
        v
    }

    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let p = self.packing_params()?;
        let n =
            usize::try_from(cx.num_elements).map_err(|_| Error::metadata("too many elements"))?;
        decode_parallel(input, n, &p, cx.out_order, out, cx.threads, cx.fresh_output)
    }

    /// Unpacks runs of values, reporting every 4 MiB of them
    /// (`spec/pipeline.md` §6.7); values and errors are the whole decode's.
    fn decode_into_reporting(
        &self,
        input: &[u8],
        cx: &StageContext,
        out: &mut [u8],
        report: &Report<'_>,
    ) -> Result<()> {
        let p = self.packing_params()?;
        let n = usize::try_from(cx.num_elements).ok();
        let fits = n.is_some_and(|n| {
            bits::packed_len(n, p.bits_per_value).is_some_and(|l| l <= input.len())
                && out.len() / 8 == n
                && out.len().is_multiple_of(8)
        });
        if !fits || p.bits_per_value == 0 {
            return self.decode_into(input, cx, out);
        }
        let ticks = Ticks::new(report, 8, out.len() as u64 / 8, false);
        let streaming = crate::stream_store::StreamingStores::wanted(out.len(), cx.fresh_output);
        let run = report_run(cx.threads);
        for (k, dst) in out.chunks_mut(run * 8).enumerate() {
            let (first, m) = (k * run, dst.len() / 8);
            let src = &input[first * p.bits_per_value as usize / 8..];
            let done = if cx.threads > 1 {
                decode_parallel(src, m, &p, cx.out_order, dst, cx.threads, cx.fresh_output)
            } else {
                decode_into_with(src, 0, m, &p, cx.out_order, dst, streaming)
            };
            if done.is_err() {
                return self.decode_into(input, cx, out);
            }
            ticks.add(m as u64);
        }
        Ok(())
    }

    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let p = self.packing_params()?;
        let bits = p.bits_per_value as u64;
        let (first, count) = (from / 8, out.len() as u64 / 8);
        let (a, b) = (first * bits / 8, ((first + count) * bits).div_ceil(8));
        let bytes = input(a, b)?;
        decode_packed_at(
            &bytes,
            (first * bits % 8) as usize,
            count as usize,
            &p,
            cx.out_order,
            out,
        )
    }

    fn supports_range(&self) -> bool {
        true
    }

    /// The packed bytes holding the elements `wanted` touches.
    fn plan_range(
        &self,
        wanted: &[std::ops::Range<u64>],
        cx: &StageContext,
    ) -> Result<Option<StagePlan>> {
        let bits = self.bits_per_value as u64;
        let w = cx.dtype.width() as u64;
        if bits == 0 || w == 0 {
            return Ok(Some(StagePlan::reading(Vec::new())));
        }
        let packed = |e: u64, up: bool| {
            e.checked_mul(bits)
                .map(|b| if up { b.div_ceil(8) } else { b / 8 })
                .ok_or_else(|| Error::invalid_argument("range overflows"))
        };
        let ranges = wanted
            .iter()
            .map(|r| Ok(packed(r.start / w, false)?..packed(r.end.div_ceil(w), true)?))
            .collect::<Result<_>>()?;
        Ok(Some(StagePlan::reading(ranges)))
    }
}

impl EncodingStage for SimplePacking {
    fn encoded_len(&self, _: u64, cx: &StageContext) -> Result<u64> {
        packed_bytes(cx.num_elements, self.bits_per_value)
    }

    fn output_form(&self, _: &StageContext) -> (u32, bool) {
        (self.bits_per_value, true)
    }

    /// Derives R and E from the data as given (spec §2.1) unless both are
    /// set, taking min and max from the pipeline's scan when it measured
    /// them (`spec/pipeline.md` §6.2); D defaults to 0.
    fn prepare(
        &mut self,
        raw: &[u8],
        range: Option<&FiniteRange>,
        cx: &StageContext,
    ) -> Result<()> {
        if self.reference_value.is_some() != self.binary_scale_factor.is_some() {
            let (given, missing) = if self.reference_value.is_some() {
                ("sp_reference_value", "sp_binary_scale_factor")
            } else {
                ("sp_binary_scale_factor", "sp_reference_value")
            };
            return Err(Error::metadata(format!(
                "{given} given without {missing}: give both, or neither"
            )));
        }
        if self.grib_reference_value.is_some() && self.reference_value.is_none() {
            return Err(Error::metadata(
                "sp_grib_reference_value given without sp_reference_value and \
                 sp_binary_scale_factor: GRIB's evaluation order is for codes whose \
                 parameters are known",
            ));
        }
        let decimal = self.decimal_scale_factor.unwrap_or(0);
        self.decimal_scale_factor = Some(decimal);
        if self.reference_value.is_none() {
            let p = match range {
                Some(r) if self.bits_per_value > 0 => {
                    params_from_range(r.min, r.max, self.bits_per_value, decimal)?
                }
                _ => compute_params(raw, cx.byte_order, self.bits_per_value, decimal)?,
            };
            self.reference_value = Some(p.reference_value);
            self.binary_scale_factor = Some(p.binary_scale_factor);
            self.derived = true;
        }
        Ok(())
    }

    fn writes_in_place(&self) -> bool {
        true
    }

    fn encode_to_slice(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let p = self.packing_params()?;
        encode_parallel_into(input, cx.byte_order, &p, cx.threads, out)
    }

    /// Runs of [`CHUNK_VALUES`] values: a multiple of 8, so every output
    /// chunk is whole bytes.
    fn in_place_chunks(&self, _: &StageContext) -> Option<(usize, usize)> {
        let bits = self.bits_per_value as usize;
        (bits > 0).then_some((CHUNK_VALUES * 8, CHUNK_VALUES * bits / 8))
    }

    /// Codes of 1..=32 bits, quantised a stretch at a time.
    fn code_source<'s>(
        &'s self,
        input: &'s [u8],
        cx: &StageContext,
    ) -> Result<Option<Box<dyn CodeSource + 's>>> {
        let p = self.packing_params()?;
        if !(1..=32).contains(&p.bits_per_value) || !input.len().is_multiple_of(8) {
            return Ok(None);
        }
        Ok(Some(Box::new(Codes {
            data: input,
            order: cx.byte_order,
            q: quantiser(&p),
            special: AtomicBool::new(false),
        })))
    }

    fn accepts_codes(&self, _: &StageContext) -> bool {
        self.bits_per_value > 0
            && self.bits_per_value.is_multiple_of(8)
            && self.bits_per_value <= 32
    }

    /// Codes `first..first + codes.len()` decode to the values at those
    /// indices, straight from the integers (`spec/pipeline.md` §6.6).
    fn decode_codes_into(
        &self,
        codes: &[u32],
        first: usize,
        cx: &StageContext,
        out: &mut [u8],
    ) -> Result<()> {
        let p = self.packing_params()?;
        check_params(&p)?;
        let end = first
            .checked_add(codes.len())
            .and_then(|e| e.checked_mul(8));
        if end.is_none_or(|e| e > out.len()) {
            return Err(Error::codec(format!(
                "{} codes from code {first} do not fit the {} values of the output",
                codes.len(),
                out.len() / 8
            )));
        }
        let streaming = crate::stream_store::StreamingStores::wanted(out.len(), cx.fresh_output);
        self::dequantise::Dequantiser::of(&p, streaming).decode_codes(
            codes,
            cx.out_order,
            &mut out[first * 8..first * 8 + codes.len() * 8],
        );
        Ok(())
    }
}

/// simple_packing's codes of float64 values, quantised as a coder asks for
/// them ([`EncodingStage::code_source`]).
struct Codes<'a> {
    data: &'a [u8],
    order: ByteOrder,
    q: Quantiser,
    /// A value was NaN or ±Inf.
    special: AtomicBool,
}

impl CodeSource for Codes<'_> {
    fn len(&self) -> usize {
        self.data.len() / 8
    }

    fn bits(&self) -> u32 {
        self.q.bits
    }

    fn fill(&self, first: usize, out: &mut [u32]) {
        let src = &self.data[first * 8..(first + out.len()) * 8];
        if !self.q.codes(src, self.order, out) {
            self.special.store(true, Ordering::Relaxed);
        }
    }

    fn finish(&self) -> Result<()> {
        if self.special.load(Ordering::Relaxed) {
            return Err(first_non_finite(self.data, self.order));
        }
        Ok(())
    }
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
        return decode_into(bytes, 0, count, p, order, out);
    }
    check_params(p)?;
    let need = (skip_bits + count * p.bits_per_value as usize).div_ceil(8);
    if bytes.len() < need || out.len() != count * 8 {
        return Err(Error::codec("packed range shorter than needed"));
    }
    let d = self::dequantise::Dequantiser::of(p, false);
    bits::unpack(bytes, skip_bits, count, p.bits_per_value, |i, q| {
        let v = d.value(q);
        let b = match order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        out[i * 8..i * 8 + 8].copy_from_slice(&b);
    });
    Ok(())
}

/// Quantisation parameters, as stored in the descriptor's `sp_*` keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PackingParams {
    /// Reference value R (the minimum, or the first value when bits = 0).
    pub reference_value: f64,
    /// Binary scale factor E.
    pub binary_scale_factor: i32,
    /// Decimal scale factor D.
    pub decimal_scale_factor: i32,
    /// Bits per packed value, 0..=64.
    pub bits_per_value: u32,
    /// GRIB's reference value, when the values are evaluated in GRIB's
    /// order `(R_grib + q·2^E)·10^−D` (`sp_grib_reference_value`, a tgm
    /// extension: `spec/pipeline.md` §2.5); `None` for `R + q·2^E·10^−D`.
    pub grib_reference_value: Option<f64>,
}

/// `x^n` by square-and-multiply with a final reciprocal for negative `n`:
/// the exact evaluation order of the platform's `powi`, so that scale
/// factors are bit-identical to other implementations.
pub fn powi(x: f64, n: i32) -> f64 {
    let mut base = x;
    let mut e = n.unsigned_abs();
    let mut r = 1.0f64;
    loop {
        if e & 1 == 1 {
            r *= base;
        }
        e /= 2;
        if e == 0 {
            break;
        }
        base *= base;
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

fn max_code(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Reads element `i` of f64 `data` stored in `order`.
#[inline(always)]
pub(crate) fn read_f64(chunk: &[u8], order: ByteOrder) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(chunk);
    match order {
        ByteOrder::Big => f64::from_be_bytes(a),
        ByteOrder::Little => f64::from_le_bytes(a),
    }
}

/// Derives parameters from the data (spec §2.1).
pub fn compute_params(
    data: &[u8],
    order: ByteOrder,
    bits: u32,
    decimal: i32,
) -> Result<PackingParams> {
    if bits > 64 {
        return Err(Error::metadata(format!(
            "sp_bits_per_value {bits} exceeds 64"
        )));
    }
    let mut values = data.chunks_exact(8).map(|c| read_f64(c, order));
    if data.is_empty() || bits == 0 {
        return Ok(PackingParams {
            reference_value: values.next().unwrap_or(0.0),
            binary_scale_factor: 0,
            decimal_scale_factor: decimal,
            bits_per_value: bits,
            grib_reference_value: None,
        });
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, v) in values.enumerate() {
        if !v.is_finite() {
            return Err(non_finite(v, i));
        }
        // Strict comparisons: of +0 and -0 the first one seen is the minimum.
        if v < lo {
            lo = v;
        }
        if v > hi {
            hi = v;
        }
    }
    params_from_range(lo, hi, bits, decimal)
}

/// The parameters for finite values whose minimum is `lo` and maximum `hi`,
/// for `bits` in 1..=64 (spec §2.1).
pub fn params_from_range(lo: f64, hi: f64, bits: u32, decimal: i32) -> Result<PackingParams> {
    if !(1..=64).contains(&bits) {
        return Err(Error::metadata(format!(
            "sp_bits_per_value {bits} is outside 1..=64"
        )));
    }
    let range = (hi - lo) * powi(10.0, decimal);
    let maxp = if bits >= 64 {
        u64::MAX as f64
    } else {
        max_code(bits) as f64
    };
    let e = if range == 0.0 {
        0
    } else {
        (range / maxp).log2().ceil() as i32
    };
    Ok(PackingParams {
        reference_value: lo,
        binary_scale_factor: e,
        decimal_scale_factor: decimal,
        bits_per_value: bits,
        grib_reference_value: None,
    })
}

fn non_finite(v: f64, i: usize) -> Error {
    Error::new(
        ErrorKind::NonFinite,
        format!("simple_packing cannot encode {v} at element {i}; pass explicit parameters with allow_nan/allow_inf"),
    )
}

/// `10^n` as ecCodes forms it (`codes_power`): a product, or a quotient,
/// of tens taken one at a time (`spec/pipeline.md` §2.5).
pub(crate) fn grib_power_of_ten(n: i32) -> f64 {
    let mut p = 1.0f64;
    for _ in 0..n.unsigned_abs() {
        if n > 0 {
            p *= 10.0;
        } else {
            p /= 10.0;
        }
    }
    p
}

/// Checks the parameters the encoder and decoder both require.
pub fn check_params(p: &PackingParams) -> Result<()> {
    if p.bits_per_value > 64 {
        return Err(Error::metadata(format!(
            "sp_bits_per_value {} exceeds 64",
            p.bits_per_value
        )));
    }
    if !p.reference_value.is_finite() {
        return Err(Error::metadata(format!(
            "sp_reference_value {} is not finite",
            p.reference_value
        )));
    }
    if let Some(r) = p.grib_reference_value.filter(|r| !r.is_finite()) {
        return Err(Error::metadata(format!(
            "sp_grib_reference_value {r} is not finite"
        )));
    }
    if p.grib_reference_value.is_some() && p.decimal_scale_factor.unsigned_abs() > 400 {
        return Err(Error::metadata(format!(
            "sp_decimal_scale_factor {} is outside -400..=400",
            p.decimal_scale_factor
        )));
    }
    if p.binary_scale_factor.unsigned_abs() > 256 {
        return Err(Error::metadata(format!(
            "sp_binary_scale_factor {} is outside -256..=256",
            p.binary_scale_factor
        )));
    }
    Ok(())
}

/// Packs f64 `data` (in `order`) into `ceil(n * bits / 8)` bytes.
pub fn encode(data: &[u8], order: ByteOrder, p: &PackingParams) -> Result<Vec<u8>> {
    check_params(p)?;
    let n = data.len() / 8;
    let len = bits::packed_len(n, p.bits_per_value)
        .ok_or_else(|| Error::invalid_input("packed size overflows"))?;
    let mut out = crate::buffer::zeroed(len)?;
    encode_into(data, order, p, &mut out)?;
    Ok(out)
}

/// Packs f64 `data` into `out` (exactly `ceil(n * bits / 8)` bytes), using up
/// to `threads` workers on chunks whose bit streams start on byte boundaries;
/// the bytes are identical to the sequential result.
pub fn encode_parallel(
    data: &[u8],
    order: ByteOrder,
    p: &PackingParams,
    threads: usize,
) -> Result<Vec<u8>> {
    check_params(p)?;
    let n = data.len() / 8;
    let len = bits::packed_len(n, p.bits_per_value)
        .ok_or_else(|| Error::invalid_input("packed size overflows"))?;
    let mut out = crate::buffer::zeroed(len)?;
    encode_parallel_into(data, order, p, threads, &mut out)?;
    Ok(out)
}

/// Values coded between two progress reports: 4 MiB of them, or one
/// chunk per worker if more (a multiple of 8, so runs are whole bytes).
fn report_run(threads: usize) -> usize {
    (REPORT_BYTES as usize / 8).max(CHUNK_VALUES * threads)
}

/// Values per chunk of a parallel or in-place encode (768 KiB at 24 bits:
/// a chunk stays in the second-level cache while it is zeroed and packed).
const CHUNK_VALUES: usize = 1 << 18;

/// [`encode_parallel`] into `out`, which must be exactly
/// `ceil(n * bits / 8)` bytes.
pub fn encode_parallel_into(
    data: &[u8],
    order: ByteOrder,
    p: &PackingParams,
    threads: usize,
    out: &mut [u8],
) -> Result<()> {
    check_params(p)?;
    let n = data.len() / 8;
    let len = bits::packed_len(n, p.bits_per_value)
        .ok_or_else(|| Error::invalid_input("packed size overflows"))?;
    if out.len() != len || !data.len().is_multiple_of(8) {
        return Err(Error::invalid_argument(format!(
            "{} packed bytes cannot hold {} bytes of float64 values at {} bits",
            out.len(),
            data.len(),
            p.bits_per_value
        )));
    }
    if threads < 2 || n < 2 * CHUNK_VALUES || p.bits_per_value == 0 {
        return encode_into(data, order, p, out);
    }
    // CHUNK_VALUES is a multiple of 8, so every chunk starts on a byte boundary.
    let out_chunk = CHUNK_VALUES * p.bits_per_value as usize / 8;
    crate::exec::install(threads, || {
        use rayon::prelude::*;
        data.par_chunks(CHUNK_VALUES * 8)
            .zip(out.par_chunks_mut(out_chunk))
            .try_for_each(|(src, dst)| encode_into(src, order, p, dst))
    })?
}

/// Quantises and packs in one pass (`spec/pipeline.md` §6.2); a NaN or
/// ±Inf value is an error naming the first one.
fn encode_into(data: &[u8], order: ByteOrder, p: &PackingParams, out: &mut [u8]) -> Result<()> {
    if !quantiser(p).pack(data, order, out) {
        return Err(first_non_finite(data, order));
    }
    Ok(())
}

/// The quantiser of `p` (spec §2.2, §2.5).
fn quantiser(p: &PackingParams) -> Quantiser {
    match p.grib_reference_value {
        None => Quantiser {
            decimal: 1.0,
            reference: p.reference_value,
            scale: powi(10.0, p.decimal_scale_factor) * powi(2.0, -p.binary_scale_factor),
            bits: p.bits_per_value,
        },
        Some(r) => Quantiser {
            decimal: grib_power_of_ten(p.decimal_scale_factor),
            reference: r,
            scale: powi(2.0, -p.binary_scale_factor),
            bits: p.bits_per_value,
        },
    }
}

/// The error for the first NaN or ±Inf of `data`.
fn first_non_finite(data: &[u8], order: ByteOrder) -> Error {
    let (i, v) = data
        .chunks_exact(8)
        .map(|c| read_f64(c, order))
        .enumerate()
        .find(|(_, v)| !v.is_finite())
        .unwrap_or((0, f64::NAN));
    non_finite(v, i)
}

/// Unpacks `n` values starting at element `first` of `packed` into f64
/// bytes in `out_order`; `out` must be exactly `8 * n` bytes.
pub fn decode_into(
    packed: &[u8],
    first: usize,
    n: usize,
    p: &PackingParams,
    out_order: ByteOrder,
    out: &mut [u8],
) -> Result<()> {
    decode_into_with(packed, first, n, p, out_order, out, false)
}

/// [`decode_into`], writing whole blocks with streaming stores when
/// `streaming` (`spec/pipeline.md` §6.5).
fn decode_into_with(
    packed: &[u8],
    first: usize,
    n: usize,
    p: &PackingParams,
    out_order: ByteOrder,
    out: &mut [u8],
    streaming: bool,
) -> Result<()> {
    check_params(p)?;
    let bits = p.bits_per_value;
    let need_bits = first
        .checked_add(n)
        .and_then(|e| e.checked_mul(bits as usize))
        .ok_or_else(|| Error::codec("packed range overflows"))?;
    if need_bits.div_ceil(8) > packed.len() || out.len() != n * 8 {
        return Err(Error::codec(format!(
            "packed payload of {} bytes cannot hold {n} values of {bits} bits",
            packed.len()
        )));
    }
    let d = self::dequantise::Dequantiser::of(p, streaming);
    let put = |out: &mut [u8], i: usize, v: f64| {
        let b = match out_order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        out[i * 8..i * 8 + 8].copy_from_slice(&b);
    };
    if bits == 0 {
        (0..n).for_each(|i| put(out, i, d.constant()));
        return Ok(());
    }
    // Whole blocks from a byte-aligned start take the specialised kernel
    // (`spec/pipeline.md` §6.2); the rest the generic unpacker.
    let done = if first.is_multiple_of(8) {
        let start = first / 8 * bits as usize;
        d.decode_blocks(&packed[start..], n, out_order, out)
    } else {
        0
    };
    let out = &mut out[done * 8..];
    bits::unpack(
        packed,
        (first + done) * bits as usize,
        n - done,
        bits,
        |i, q| put(out, i, d.value(q)),
    );
    Ok(())
}

/// [`decode_into`] over the whole payload on up to `threads` workers,
/// with streaming stores when `fresh_output` is false and the output is
/// large (`spec/pipeline.md` §6.5).
pub fn decode_parallel(
    packed: &[u8],
    n: usize,
    p: &PackingParams,
    out_order: ByteOrder,
    out: &mut [u8],
    threads: usize,
    fresh_output: bool,
) -> Result<()> {
    const CHUNK_VALUES: usize = 1 << 18;
    let streaming = crate::stream_store::StreamingStores::wanted(out.len(), fresh_output);
    if threads < 2 || n < 2 * CHUNK_VALUES {
        return decode_into_with(packed, 0, n, p, out_order, out, streaming);
    }
    if out.len() != n * 8 {
        return Err(Error::codec("decoded buffer has the wrong size"));
    }
    crate::exec::install(threads, || {
        use rayon::prelude::*;
        out.par_chunks_mut(CHUNK_VALUES * 8)
            .enumerate()
            .try_for_each(|(k, dst)| {
                let n = dst.len() / 8;
                decode_into_with(packed, k * CHUNK_VALUES, n, p, out_order, dst, streaming)
            })
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(vals: &[f64]) -> Vec<u8> {
        vals.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn powi_matches_std_for_runtime_exponents() {
        for n in -40..=40 {
            let x = std::hint::black_box(10.0f64);
            assert_eq!(
                powi(10.0, n).to_bits(),
                x.powi(std::hint::black_box(n)).to_bits(),
                "10^{n}"
            );
        }
    }

    #[test]
    fn quantise_equals_round_then_saturating_cast() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.4,
            -0.6,
            0.49999999999999994,
            4503599627370495.5,
            9007199254740993.0,
            1.8446744073709552e19,
            3e19,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            65534.5,
        ];
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs.push(f64::from_bits(s) % 1e6);
            xs.push((s >> 11) as f64 / (1u64 << 20) as f64);
        }
        for x in xs {
            assert_eq!(super::quantise::quantise_u64(x), x.round() as u64, "{x}");
        }
    }

    #[test]
    fn twelve_bit_example() {
        let v = le(&[250.0, 251.3, 252.7, 249.5, 260.125, 255.0]);
        let p = compute_params(&v, ByteOrder::Little, 12, 0).unwrap();
        assert_eq!((p.reference_value, p.binary_scale_factor), (249.5, -8));
        let packed = encode(&v, ByteOrder::Little, &p).unwrap();
        assert_eq!(
            packed,
            [0x08, 0x01, 0xcd, 0x33, 0x30, 0x00, 0xaa, 0x05, 0x80]
        );
        let p2 = compute_params(&v, ByteOrder::Little, 12, 2).unwrap();
        assert_eq!(p2.binary_scale_factor, -1);
    }

    #[test]
    fn roundtrip_within_half_quantum() {
        for bits in [1u32, 3, 7, 8, 12, 16, 24, 32, 40, 64] {
            let vals: Vec<f64> = (0..257)
                .map(|i| (i as f64 * 0.37).sin() * 50.0 - 3.0)
                .collect();
            let data = le(&vals);
            let p = compute_params(&data, ByteOrder::Little, bits, 0).unwrap();
            let packed = encode(&data, ByteOrder::Little, &p).unwrap();
            let mut out = vec![0u8; data.len()];
            decode_into(&packed, 0, vals.len(), &p, ByteOrder::Little, &mut out).unwrap();
            let q = powi(2.0, p.binary_scale_factor);
            for (a, b) in vals
                .iter()
                .zip(out.chunks_exact(8).map(|c| read_f64(c, ByteOrder::Little)))
            {
                assert!(
                    (a - b).abs() <= q / 2.0 + 1e-9 * a.abs(),
                    "bits {bits}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn parallel_paths_are_byte_identical() {
        let n = (1 << 19) + 12_345;
        let data = le(&(0..n)
            .map(|i| (i as f64 * 1e-3).sin() * 100.0)
            .collect::<Vec<_>>());
        for bits in [0u32, 5, 12, 16, 24, 33] {
            let p = compute_params(&data, ByteOrder::Little, bits, 0).unwrap();
            let seq = encode(&data, ByteOrder::Little, &p).unwrap();
            assert_eq!(
                encode_parallel(&data, ByteOrder::Little, &p, 2).unwrap(),
                seq,
                "bits {bits}"
            );
            let mut a = vec![0u8; n * 8];
            decode_into(&seq, 0, n, &p, ByteOrder::Big, &mut a).unwrap();
            for (threads, fresh) in [(2, false), (2, true), (1, false)] {
                let mut b = vec![1u8; n * 8];
                decode_parallel(&seq, n, &p, ByteOrder::Big, &mut b, threads, fresh).unwrap();
                assert_eq!(a, b, "bits {bits} threads {threads} fresh {fresh}");
            }
        }
    }

    #[test]
    fn constant_zero_bits_and_single_element() {
        let data = le(&[5.5; 10]);
        let p = compute_params(&data, ByteOrder::Little, 16, 0).unwrap();
        assert_eq!((p.reference_value, p.binary_scale_factor), (5.5, 0));
        let p0 = compute_params(&le(&[3.0, 1.0]), ByteOrder::Little, 0, 0).unwrap();
        assert_eq!(p0.reference_value, 3.0, "bits 0 takes the first value");
        assert!(encode(&le(&[3.0, 1.0]), ByteOrder::Little, &p0)
            .unwrap()
            .is_empty());
        let mut out = vec![0u8; 16];
        decode_into(&[], 0, 2, &p0, ByteOrder::Little, &mut out).unwrap();
        assert_eq!(out, le(&[3.0, 3.0]));
        assert!(compute_params(&le(&[1.0, f64::NAN]), ByteOrder::Little, 8, 0).is_err());
        assert!(compute_params(&le(&[1.0]), ByteOrder::Little, 65, 0).is_err());
    }

    #[test]
    fn rejects_short_payloads_and_bad_params() {
        let p = PackingParams {
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
            bits_per_value: 12,
            grib_reference_value: None,
        };
        let mut out = vec![0u8; 80];
        assert!(decode_into(&[0u8; 14], 0, 10, &p, ByteOrder::Little, &mut out).is_err());
        let bad = PackingParams {
            binary_scale_factor: 300,
            ..p
        };
        assert!(decode_into(&[0u8; 15], 0, 10, &bad, ByteOrder::Little, &mut out).is_err());
        let nan = PackingParams {
            reference_value: f64::NAN,
            ..p
        };
        assert!(encode(&le(&[1.0]), ByteOrder::Little, &nan).is_err());
    }
}
