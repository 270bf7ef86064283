//! The szip compression stage (cargo feature `szip`): parameters and
//! run-time flags around the AEC codec. See `spec/pipeline.md` §4.4.

#[cfg(feature = "szip")]
use std::borrow::Cow;

#[cfg(feature = "szip")]
use crate::cbor::Value;
use crate::dtype::Dtype;
#[cfg(feature = "szip")]
use crate::error::{Error, Result};
use crate::pipeline::codec::entry::{compression_build, CodecEntry, Sample};
#[cfg(feature = "szip")]
use crate::pipeline::codec::stage::Params;
use crate::pipeline::codec::stage::StageKind;
#[cfg(feature = "szip")]
use crate::pipeline::codec::stage::{
    CodeSink, CodeSource, CompressionStage, PieceRun, RangeInput, Stage, StageContext, StagePlan,
};
#[cfg(feature = "szip")]
pub use coder::coder_params_of;

/// Registry entry.
pub(crate) const ENTRY: CodecEntry = CodecEntry {
    name: "szip",
    kind: StageKind::Compression,
    keys: &[
        "szip_rsi",
        "szip_block_size",
        "szip_flags",
        "szip_block_offsets",
    ],
    feature: Some("szip"),
    build: BUILD,
    sample: Some(Sample {
        label: "pipeline       simple_packing(16)+szip",
        pipeline: || {
            crate::pipeline::PipelineBuilder::new()
                .simple_packing(16)
                .szip()
        },
        dtype: Dtype::Float64,
        tolerance: 1e-2,
    }),
};

compression_build!(feature = "szip", Szip);

pub use crate::pipeline_spec::Szip;
#[cfg(feature = "szip")]
use crate::pipeline_spec::DEFAULT_FLAGS;
#[cfg(feature = "szip")]
const _: () = assert!(DEFAULT_FLAGS == crate::szip::flags::PREPROCESS);

/// The runtime stage: the coder behind the parameters (cargo feature
/// `szip`, the crate `tgm-szip`).
#[cfg(feature = "szip")]
mod coder {
    use super::*;
    use crate::pipeline::progress::{Report, Ticks};
    use crate::szip::{flags, SzipParams};

    /// The coder parameters of an szip object as its descriptor implies them.
    pub fn coder_params_of(d: &crate::descriptor::ObjectDescriptor) -> Result<SzipParams> {
        if d.compression() != "szip" {
            return Err(Error::invalid_argument("the object is not szip-compressed"));
        }
        let cx = crate::pipeline::plan::contexts_of(d)?;
        Szip::from_params(&Params::new(d.pipeline().params(), "szip"))?.coder_params(&cx[2])
    }

    impl Szip {
        /// The coder parameters for the stream described by `cx`: samples of
        /// `cx.sample_bits`, big-endian containers after simple_packing,
        /// 3-byte containers for 17–24 bits.
        pub fn coder_params(&self, cx: &StageContext) -> Result<SzipParams> {
            let bits = cx.sample_bits;
            if !(1..=32).contains(&bits) {
                return Err(Error::metadata(format!(
                    "szip needs 1..=32 bits per sample, not {bits}"
                )));
            }
            let mut f = self.flags;
            if cx.packed {
                f |= flags::MSB;
            }
            if (17..=24).contains(&bits) {
                f |= flags::THREE_BYTE;
            }
            let p = SzipParams {
                bits_per_sample: bits,
                block_size: self.block_size,
                rsi: self.rsi,
                flags: f,
            };
            p.validate()?;
            Ok(p)
        }

        /// [`Stage::encode`], telling `report`, if any, the samples coded
        /// as the coder takes them.
        fn encode_counted<'a>(
            &mut self,
            input: Cow<'a, [u8]>,
            cx: &StageContext,
            report: Option<&Report<'_>>,
        ) -> Result<Cow<'a, [u8]>> {
            // After simple_packing only whole-byte widths are accepted: the
            // reference hands the packed bit stream to the coder as if it were
            // byte containers, which silently corrupts every other width.
            if cx.packed && !matches!(cx.sample_bits, 8 | 16 | 24 | 32) {
                return Err(Error::unsupported_codec(format!(
                    "simple_packing at {} bits cannot be combined with szip: the reference \
                     would misread it; use 8, 16, 24 or 32 bits, or another compression",
                    cx.sample_bits
                )));
            }
            let p = self.coder_params(cx)?;
            if input.is_empty() {
                // As the reference: no stream and no offsets for an empty payload.
                self.offsets = Some(Vec::new());
                return Ok(Cow::Owned(Vec::new()));
            }
            let (bytes, offsets) = match report {
                None if cx.threads > 1 => crate::exec::install(cx.threads, || {
                    crate::szip::encode_parallel(&input, &p, cx.szip_profile, cx.threads)
                })??,
                None => crate::szip::encode_with(&input, &p, cx.szip_profile)?,
                Some(r) => {
                    // The same samples the coder reads from the containers.
                    let containers = crate::szip::Containers::new(&input, &p)?;
                    let unit = p.sample_bytes() as u64;
                    let ticks = Ticks::new(
                        r,
                        unit,
                        crate::szip::SampleSource::len(&containers) as u64,
                        cx.threads <= 1,
                    );
                    code(&Counted(&containers, &ticks), &p, cx)?
                }
            };
            self.offsets = Some(offsets);
            Ok(Cow::Owned(bytes))
        }
    }

    /// Codes decoded into one piece for the encoding stage (16 KiB of
    /// them, whole RSIs, at least one): the piece is still in the
    /// first-level cache when the encoding reads it (`spec/pipeline.md`
    /// §6.6).
    const DECODE_CODES: usize = 4096;

    /// Bytes of the scratch piece a reporting decode goes through.
    const DECODE_PIECE: usize = 1 << 20;

    /// The samples of `src` coded on `cx`'s thread budget.
    fn code<S: crate::szip::SampleSource + ?Sized>(
        src: &S,
        p: &SzipParams,
        cx: &StageContext,
    ) -> Result<(Vec<u8>, Vec<u64>)> {
        if cx.threads > 1 {
            Ok(crate::exec::install(cx.threads, || {
                crate::szip::encode_samples(src, p, cx.szip_profile, cx.threads)
            })??)
        } else {
            Ok(crate::szip::encode_samples(src, p, cx.szip_profile, 1)?)
        }
    }

    /// Samples counted into [`Ticks`] as the coder takes them.
    struct Counted<'s, S: ?Sized>(&'s S, &'s Ticks<'s>);

    impl<S: crate::szip::SampleSource + ?Sized> crate::szip::SampleSource for Counted<'_, S> {
        fn len(&self) -> usize {
            self.0.len()
        }

        fn fill(&self, first: usize, out: &mut [u32]) {
            self.0.fill(first, out);
            self.1.add(out.len() as u64);
        }
    }

    /// An encoding's codes as the coder's samples.
    struct AsSamples<'a>(&'a dyn CodeSource);

    impl crate::szip::SampleSource for AsSamples<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }

        fn fill(&self, first: usize, out: &mut [u32]) {
            self.0.fill(first, out)
        }
    }

    impl Stage for Szip {
        fn name(&self) -> &str {
            "szip"
        }

        fn validate(&self, cx: &StageContext) -> Result<()> {
            self.coder_params(cx).map(|_| ())
        }

        fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>> {
            self.encode_counted(input, cx, None)
        }

        /// Counts the samples the coder takes, RSI by RSI, and reports
        /// every 4 MiB of them (`spec/pipeline.md` §6.7).
        fn encode_reporting<'a>(
            &mut self,
            input: Cow<'a, [u8]>,
            cx: &StageContext,
            report: &Report<'_>,
        ) -> Result<Cow<'a, [u8]>> {
            let len = input.len() as u64;
            let out = self.encode_counted(input, cx, Some(report))?;
            report(len, len);
            Ok(out)
        }

        fn derived_params(&self) -> Vec<(&'static str, Value)> {
            let offsets = self.offsets.iter().flatten().map(|&o| Value::Uint(o));
            vec![("szip_block_offsets", Value::Array(offsets.collect()))]
        }

        fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
            let p = self.coder_params(cx)?;
            if input.is_empty() && out.is_empty() {
                return Ok(());
            }
            match &self.offsets {
                Some(o) if cx.threads > 1 => crate::exec::install(cx.threads, || {
                    crate::szip::decode_parallel_into(input, &p, o, out, cx.threads)
                })?
                .map_err(Error::from),
                _ => Ok(crate::szip::decode_into(input, &p, out)?),
            }
        }

        /// A sequential decode, RSIs at a time through a scratch piece
        /// copied into `out`, reporting every 4 MiB written
        /// (`spec/pipeline.md` §6.7); the pieces are the whole decode's
        /// bytes, and its errors. With workers, reported at the end.
        fn decode_into_reporting(
            &self,
            input: &[u8],
            cx: &StageContext,
            out: &mut [u8],
            report: &Report<'_>,
        ) -> Result<()> {
            let p = self.coder_params(cx)?;
            if cx.threads > 1 || out.is_empty() {
                return self.decode_into(input, cx, out);
            }
            let ticks = Ticks::new(report, 1, out.len() as u64, false);
            let total = out.len();
            let pieces =
                crate::szip::decode_pieces(input, &p, total, DECODE_PIECE, &mut |at, piece| {
                    let dst = out.get_mut(at..at + piece.len()).ok_or_else(|| {
                        Error::codec(format!("szip decoded past the {total} bytes expected"))
                    })?;
                    dst.copy_from_slice(piece);
                    ticks.add(piece.len() as u64);
                    Ok::<(), Error>(())
                });
            match pieces {
                Ok(()) => Ok(()),
                // The whole decode's error.
                Err(_) => self.decode_into(input, cx, out),
            }
        }

        /// Decodes only the RSIs covering the range; stored offsets are
        /// checked as they are used (`spec/szip.md` §5).
        fn decode_range_into(
            &self,
            input: &RangeInput<'_>,
            cx: &StageContext,
            from: u64,
            out: &mut [u8],
        ) -> Result<()> {
            self.decode_ranges_into(input, cx, &mut [(from, out)])
        }

        /// Ranges sharing an RSI decode it once (`spec/szip.md` §5).
        fn decode_ranges_into(
            &self,
            input: &RangeInput<'_>,
            cx: &StageContext,
            ranges: &mut [(u64, &mut [u8])],
        ) -> Result<()> {
            let p = self.coder_params(cx)?;
            let offsets = self.offsets.as_deref().ok_or_else(|| {
                Error::metadata("range decoding of szip needs szip_block_offsets")
            })?;
            let stream = input(0, cx.input_len)?;
            Ok(crate::szip::decode_ranges_into(
                &stream,
                &p,
                offsets,
                cx.decoded_len,
                ranges,
            )?)
        }

        fn supports_range(&self) -> bool {
            self.offsets.is_some()
        }

        /// The stored bytes from the first covering RSI's start to the last
        /// one's end, with the check that the stored offsets chain over
        /// them (`spec/szip.md` §5); `None` without stored offsets.
        fn plan_range(
            &self,
            wanted: &[std::ops::Range<u64>],
            cx: &StageContext,
        ) -> Result<Option<StagePlan>> {
            let Some(offsets) = self.offsets.clone() else {
                return Ok(None);
            };
            if wanted.is_empty() {
                return Ok(None);
            }
            let params = self.coder_params(cx)?;
            let (total, payload_len) = (cx.decoded_len, cx.input_len);
            let sb = params.sample_bytes() as u64;
            let rsi_bytes = params.rsi as u64 * params.block_size as u64 * sb;
            let lo = wanted.iter().map(|r| r.start).min().unwrap_or(0) / rsi_bytes;
            let hi = wanted.iter().map(|r| r.end).max().unwrap_or(0);
            let hi = (hi.div_ceil(sb) * sb).min(total).saturating_sub(1) / rsi_bytes;
            // The last stored offset is confirmed by the RSI before it.
            let first = if lo > 0 && offsets.get(lo as usize + 1).is_none() {
                lo - 1
            } else {
                lo
            };
            let start_bit = if first == 0 {
                0
            } else {
                match offsets.get(first as usize) {
                    Some(&s) => s,
                    None => return Ok(None),
                }
            };
            let end_byte = match offsets.get(hi as usize + 1) {
                // A few bytes more than the last bit: bit readers load whole words.
                Some(&e) => e.div_ceil(8).saturating_add(8).min(payload_len),
                None => payload_len,
            };
            let start_byte = (start_bit / 8).min(end_byte);
            let check: crate::pipeline::codec::stage::RangeCheck =
                Box::new(move |payload: &[u8]| {
                    crate::szip::rsi_chain_holds(payload, &params, &offsets, total, first, hi)
                });
            Ok(Some(StagePlan {
                ranges: std::iter::once(start_byte..end_byte).collect(),
                check: Some(check),
            }))
        }
    }

    impl CompressionStage for Szip {
        /// Codes of 8, 16, 24 or 32 bits are the samples [`Stage::encode`]
        /// reads from their packed stream: each RSI's codes go straight to
        /// the coder, on the thread budget, with the same bytes and block
        /// offsets (`spec/pipeline.md` §6.6).
        fn encode_codes(
            &mut self,
            codes: &dyn CodeSource,
            cx: &StageContext,
        ) -> Result<Option<Vec<u8>>> {
            let whole_bytes = matches!(cx.sample_bits, 8 | 16 | 24 | 32);
            if !cx.packed || !whole_bytes || codes.bits() != cx.sample_bits || codes.is_empty() {
                return Ok(None);
            }
            let p = self.coder_params(cx)?;
            let (bytes, offsets) = code(&AsSamples(codes), &p, cx)?;
            self.offsets = Some(offsets);
            Ok(Some(bytes))
        }

        /// Whole-byte samples after simple_packing, as [`Self::encode_codes`]
        /// takes them: each container holds one code.
        fn decodes_codes(&self, cx: &StageContext) -> bool {
            cx.packed && matches!(cx.sample_bits, 8 | 16 | 24 | 32)
        }

        /// Runs of whole RSIs from the stored block offsets, about four per
        /// worker.
        fn piece_runs(&self, input: &[u8], cx: &StageContext) -> Option<Vec<PieceRun>> {
            let p = self.coder_params(cx).ok()?;
            let offsets = self.offsets.as_deref()?;
            let total = usize::try_from(cx.decoded_len).ok()?;
            let per = crate::szip::rsis_per_run(&p, offsets, total, cx.threads)?;
            let bits = input.len() as u64 * 8;
            if offsets.iter().any(|&o| o > bits) {
                return None;
            }
            let rsi_bytes = p.rsi as usize * p.block_size as usize * p.sample_bytes();
            let runs = (0..offsets.len()).step_by(per).map(|g| PieceRun {
                from: g * rsi_bytes,
                to: ((g + per) * rsi_bytes).min(total),
                start: offsets[g],
            });
            Some(runs.collect())
        }

        fn decode_run_codes(
            &self,
            input: &[u8],
            cx: &StageContext,
            run: &PieceRun,
            sink: &mut CodeSink<'_>,
        ) -> Result<u64> {
            let p = self.coder_params(cx)?;
            let len = run
                .to
                .checked_sub(run.from)
                .ok_or_else(|| Error::invalid_argument("a run ends before it starts"))?;
            let n = whole_samples(len, &p)?;
            crate::szip::decode_codes_from(input, &p, run.start, n, DECODE_CODES, sink)
        }

        fn decode_codes(
            &self,
            input: &[u8],
            cx: &StageContext,
            sink: &mut CodeSink<'_>,
        ) -> Result<()> {
            let p = self.coder_params(cx)?;
            let total = usize::try_from(cx.decoded_len)
                .map_err(|_| Error::metadata("szip stream too large"))?;
            if input.is_empty() && total == 0 {
                return Ok(());
            }
            let n = whole_samples(total, &p)?;
            crate::szip::decode_codes_from(input, &p, 0, n, DECODE_CODES, sink).map(|_| ())
        }
    }

    /// Samples in `len` decoded bytes, which must be whole samples.
    fn whole_samples(len: usize, p: &SzipParams) -> Result<usize> {
        let sb = p.sample_bytes();
        if !len.is_multiple_of(sb) {
            return Err(Error::codec(format!(
                "{len} bytes are not whole {sb}-byte samples"
            )));
        }
        Ok(len / sb)
    }
}
