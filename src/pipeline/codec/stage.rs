//! The stage traits, one per stage kind (encoding, filter, compression,
//! mask) over a common [`Stage`], the context stages learn their
//! neighbours through, and typed parameter access. See `spec/pipeline.md`
//! §1 and §9.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use crate::cbor::Value;
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};
pub use crate::pipeline_spec::{Params, StageKind};

/// What a stage knows about the object and about the stream it sees. The
/// pipeline fills it in; stages never read each other's names or keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageContext {
    /// Element type of the object.
    pub dtype: Dtype,
    /// Byte order of the stored elements.
    pub byte_order: ByteOrder,
    /// Byte order the decoder must produce elements in.
    pub out_order: ByteOrder,
    /// Number of elements.
    pub num_elements: u64,
    /// Bits per sample of the stream this stage sees: the element width,
    /// the packed width after simple_packing, 8 after a shuffle.
    pub sample_bits: u32,
    /// The stream holds MSB-first packed integers (after simple_packing).
    pub packed: bool,
    /// Bytes of the stream this stage decodes from (known on decode; for
    /// the compression stage, the stored payload).
    pub input_len: u64,
    /// Bytes this stage decodes to, as the descriptor implies.
    pub decoded_len: u64,
    /// Thread budget (0 = sequential).
    pub threads: usize,
    /// Coding choices of the szip coder on encode.
    #[cfg(feature = "szip")]
    pub szip_profile: crate::szip::SzipProfile,
    /// Whether the zstd stage records the content size on encode.
    pub zstd_frame_size: super::compression::zstd::ZstdFrameSize,
    /// The decode output was freshly allocated for this call: its pages are
    /// faulted in (and zeroed) as it is written, so ordinary stores, which
    /// find those lines in cache, beat streaming ones (`spec/pipeline.md`
    /// §6.5).
    pub fresh_output: bool,
}

/// Reads bytes `[from, to)` of a stage's input, decoding only what the
/// range needs from the stages below it.
pub type RangeInput<'x> = dyn Fn(u64, u64) -> Result<Cow<'x, [u8]>> + 'x;

/// One independently decodable run of a stage's decoded stream
/// ([`CompressionStage::piece_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceRun {
    /// Decoded bytes `from..to`.
    pub from: usize,
    /// See `from`.
    pub to: usize,
    /// Where in the input (in the stage's own unit) its decoding starts.
    pub start: u64,
}

/// A check a stage needs on the stored bytes a [`StagePlan`] read before
/// decoding from them (szip: the stored block offsets chain over the RSIs
/// read). Given the stage's whole input, of which only the planned ranges
/// hold read bytes; false sends the caller to a whole read.
pub type RangeCheck = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// What one stage reads of its input to decode some ranges of its output
/// ([`Stage::plan_range`]).
pub struct StagePlan {
    /// Byte ranges of the stage's input.
    pub ranges: Vec<Range<u64>>,
    /// A check of those bytes before decoding from them, if the stage
    /// needs one.
    pub check: Option<RangeCheck>,
}

impl StagePlan {
    /// A plan reading `ranges` with no check.
    pub fn reading(ranges: Vec<Range<u64>>) -> Self {
        StagePlan {
            ranges,
            check: None,
        }
    }
}

impl fmt::Debug for StagePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagePlan")
            .field("ranges", &self.ranges)
            .field("check", &self.check.is_some())
            .finish()
    }
}

/// What every stage has, whatever its kind: its name, its checks, running
/// it forwards and back, the parameters it derived, and range decoding.
/// The kinds add what only they do: [`EncodingStage`], [`FilterStage`],
/// [`CompressionStage`] (`spec/pipeline.md` §1).
pub(crate) trait Stage: fmt::Debug + Send + Sync {
    /// The stage's wire name (`zstd`, `simple_packing` …).
    fn name(&self) -> &str;

    /// Checks the stage against the object and the stream it will see.
    fn validate(&self, cx: &StageContext) -> Result<()> {
        let _ = cx;
        Ok(())
    }

    /// True for the `none` stage, which the pipeline skips without copying.
    fn is_identity(&self) -> bool {
        false
    }

    /// Runs the stage forwards. May record parameters derived from the data
    /// (see [`Stage::derived_params`]).
    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>>;

    /// [`Stage::encode`], telling `report(done, read)` how many of its
    /// input bytes it has encoded and will not read again
    /// (`spec/pipeline.md` §6.7). Stages that work in chunks override it;
    /// the default reports once, at the end.
    fn encode_reporting<'a>(
        &mut self,
        input: Cow<'a, [u8]>,
        cx: &StageContext,
        report: &crate::pipeline::progress::Report<'_>,
    ) -> Result<Cow<'a, [u8]>> {
        let len = input.len() as u64;
        let out = self.encode(input, cx)?;
        report(len, len);
        Ok(out)
    }

    /// Parameters computed by the last [`Stage::encode`], to be written
    /// into the descriptor.
    fn derived_params(&self) -> Vec<(&'static str, Value)> {
        Vec::new()
    }

    /// Undoes the stage: `out` has exactly the decoded size the descriptor
    /// implies, and anything else the stream would produce is an error.
    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()>;

    /// [`Stage::decode_into`], telling `report(done, read)` how many bytes
    /// of `out` it has written and how many of its input it will not read
    /// again, between chunks (`spec/pipeline.md` §6.7). Stages that decode
    /// in chunks override it; the default only decodes.
    fn decode_into_reporting(
        &self,
        input: &[u8],
        cx: &StageContext,
        out: &mut [u8],
        report: &crate::pipeline::progress::Report<'_>,
    ) -> Result<()> {
        let _ = report;
        self.decode_into(input, cx, out)
    }

    /// The most bytes `input` can decode to through this stage, read from
    /// the stream's own framing without decoding it, or `None` when the
    /// stage knows no bound (`spec/pipeline.md` §6.9). Checked before any
    /// output is reserved.
    fn max_decoded_len(&self, input: &[u8], cx: &StageContext) -> Option<u64> {
        let _ = (input, cx);
        None
    }

    /// [`Stage::decode_into`] into a new buffer of `len` bytes. Codecs that
    /// can fill uninitialised capacity override it to skip the zero fill.
    fn decode_vec(&self, input: &[u8], cx: &StageContext, len: usize) -> Result<Vec<u8>> {
        let mut out = crate::buffer::zeroed(len)?;
        let cx = StageContext {
            fresh_output: true,
            ..*cx
        };
        self.decode_into(input, &cx, &mut out)?;
        Ok(out)
    }

    /// Undoes the stage for decoded bytes `[from, from + out.len())` only,
    /// reading what it needs through `input`. Stages that cannot do this
    /// keep the default, which refuses.
    fn decode_range_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        from: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let _ = (input, cx, from, out);
        Err(Error::new(
            ErrorKind::RangeNotSupported,
            format!("range decoding is not possible through {}", self.name()),
        ))
    }

    /// [`Stage::decode_range_into`] for several ranges `(from, out)` at
    /// once, in any order; a stage whose ranges share work (szip: an RSI)
    /// does it once (`spec/pipeline.md` §7). By default, range by range.
    fn decode_ranges_into(
        &self,
        input: &RangeInput<'_>,
        cx: &StageContext,
        ranges: &mut [(u64, &mut [u8])],
    ) -> Result<()> {
        for (from, out) in ranges.iter_mut() {
            self.decode_range_into(input, cx, *from, out)?;
        }
        Ok(())
    }

    /// True when [`Stage::decode_range_into`] is implemented.
    fn supports_range(&self) -> bool {
        false
    }

    /// The byte ranges of this stage's input that
    /// [`Stage::decode_range_into`] reads to produce the decoded bytes
    /// `wanted` (non-empty, within `cx.decoded_len`), so that a reader can
    /// fetch only those (`spec/pipeline.md` §7.1). `None` when the stage
    /// needs its whole input.
    fn plan_range(&self, wanted: &[Range<u64>], cx: &StageContext) -> Result<Option<StagePlan>> {
        let _ = (wanted, cx);
        Ok(None)
    }
}

/// The encoding stage: element values to a stream whose size the element
/// count fixes (`none`, `simple_packing`). It alone derives parameters from
/// the caller's values, may write straight into the message, and takes the
/// compression stage's output piece by piece.
pub(crate) trait EncodingStage: Stage {
    /// Size of the encoded stream for `input_len` element bytes.
    fn encoded_len(&self, input_len: u64, cx: &StageContext) -> Result<u64>;

    /// The stream form the next stage sees: `(sample_bits, packed)`.
    fn output_form(&self, cx: &StageContext) -> (u32, bool) {
        (cx.sample_bits, cx.packed)
    }

    /// Derives parameters from the caller's element bytes as given, before
    /// NaN/Inf substitution. `range` holds the float64 values' range when
    /// the pipeline's NaN/Inf scan has already found them all finite
    /// (`spec/pipeline.md` §6.2), so the stage need not read them again.
    fn prepare(
        &mut self,
        raw: &[u8],
        range: Option<&crate::pipeline::scan::FiniteRange>,
        cx: &StageContext,
    ) -> Result<()> {
        let _ = (raw, range, cx);
        Ok(())
    }

    /// True when [`EncodingStage::encode_to_slice`] can write this stage's
    /// output straight into a caller's buffer.
    fn writes_in_place(&self) -> bool {
        false
    }

    /// Runs the stage forwards (after [`EncodingStage::prepare`]) into
    /// `out`, which is exactly [`EncodingStage::encoded_len`] of `input`:
    /// the path by which the only working stage of a pipeline writes
    /// straight into the message (`spec/pipeline.md` §6.3). Only called
    /// when [`EncodingStage::writes_in_place`] is true.
    fn encode_to_slice(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let _ = (input, cx, out);
        Err(Error::invalid_argument(format!(
            "{} cannot encode in place",
            self.name()
        )))
    }

    /// For [`EncodingStage::encode_to_slice`]: input and output chunk sizes
    /// such that chunk `i` of the input encodes on its own, with one
    /// thread, to chunk `i` of the output. `None` when the output is
    /// written whole.
    fn in_place_chunks(&self, cx: &StageContext) -> Option<(usize, usize)> {
        let _ = cx;
        None
    }

    /// The stage's output as unsigned integer codes of at most 32 bits,
    /// produced a stretch at a time from `input` (after
    /// [`EncodingStage::prepare`]), for a compression stage that codes
    /// them without the encoded stream ever existing whole
    /// (`spec/pipeline.md` §6.6). `None` when the stage has no such form.
    fn code_source<'s>(
        &'s self,
        input: &'s [u8],
        cx: &StageContext,
    ) -> Result<Option<Box<dyn CodeSource + 's>>> {
        let _ = (input, cx);
        Ok(None)
    }

    /// True when [`EncodingStage::decode_codes_into`] decodes this
    /// stage's output from its codes as integers.
    fn accepts_codes(&self, cx: &StageContext) -> bool {
        let _ = cx;
        false
    }

    /// Undoes the stage for codes `first..first + codes.len()` of its input
    /// as integers (each below `2^bits`, the width of [`Self::output_form`]),
    /// writing the matching part of `out`, the whole decoded output, so
    /// the stream of codes never exists as bytes (`spec/pipeline.md` §6.6).
    /// Only called when [`EncodingStage::accepts_codes`] is true.
    fn decode_codes_into(
        &self,
        codes: &[u32],
        first: usize,
        cx: &StageContext,
        out: &mut [u8],
    ) -> Result<()> {
        let _ = (codes, first, cx, out);
        Err(Error::invalid_argument(format!(
            "{} cannot decode codes",
            self.name()
        )))
    }
}

/// An encoding stage's output as integer codes, one per element, which a
/// compression stage reads a stretch at a time from any thread
/// ([`EncodingStage::code_source`], `spec/pipeline.md` §6.6).
pub(crate) trait CodeSource: Sync {
    /// Number of codes.
    fn len(&self) -> usize;

    /// True when there are no codes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bits per code, 1..=32: every code is below `2^bits`.
    fn bits(&self) -> u32;

    /// Writes codes `first..first + out.len()` (within [`CodeSource::len`]).
    fn fill(&self, first: usize, out: &mut [u32]);

    /// After the last [`CodeSource::fill`]: the error the encoding would
    /// have raised for values it met (simple_packing: a NaN or ±Inf).
    fn finish(&self) -> Result<()>;
}

/// A filter stage: a size-preserving rearrangement of the encoded stream
/// (`none`, `shuffle`).
pub(crate) trait FilterStage: Stage {
    /// Size of the filtered stream for `input_len` bytes.
    fn encoded_len(&self, input_len: u64, cx: &StageContext) -> Result<u64>;

    /// The stream form the compression stage sees: `(sample_bits, packed)`.
    fn output_form(&self, cx: &StageContext) -> (u32, bool) {
        (cx.sample_bits, cx.packed)
    }
}

/// Where a stage that codes piece by piece puts its output
/// ([`CompressionStage::streaming_coder`]), and who hears how far it got.
pub(crate) trait PieceSink {
    /// The next bytes of the stage's output.
    fn put(&mut self, bytes: &[u8]) -> Result<()>;

    /// `done` input bytes were coded; the input below `released` is needed
    /// again only to copy bytes still to be written (read once more then,
    /// never changed), so a caller may release its pages.
    fn progress(&mut self, done: u64, released: u64) {
        let _ = (done, released);
    }
}

/// A coder writing exactly [`Stage::encode`]'s bytes for its input, piece
/// by piece, and the same bytes every time it runs on the same input.
pub(crate) type StreamingCoder = fn(&[u8], &mut dyn PieceSink) -> Result<()>;

/// The compression stage: bytes to stored bytes of a size only the data
/// decides (`none`, `zstd`, `lz4`, `szip`, `blosc2`, `zfp`, `sz3`, and
/// `rle`/`roaring` for bitmask objects). It alone may decode in pieces for
/// the encoding stage to consume while they are in cache.
pub(crate) trait CompressionStage: Stage {
    /// True when [`CompressionStage::decode_codes`] can decode this
    /// stage's stream piece by piece into integer codes.
    fn decodes_codes(&self, cx: &StageContext) -> bool {
        let _ = cx;
        false
    }

    /// Undoes the stage in consecutive pieces of its decoded stream read as
    /// codes (unsigned integers of `cx.sample_bits` bits, one per sample),
    /// handing each with the index of its first code to `sink`, so that the
    /// encoding stage below consumes them while they are in cache
    /// (`spec/pipeline.md` §6.6). Only called when
    /// [`CompressionStage::decodes_codes`] is true.
    fn decode_codes(&self, input: &[u8], cx: &StageContext, sink: &mut CodeSink<'_>) -> Result<()> {
        let _ = (input, cx, sink);
        Err(Error::invalid_argument(format!(
            "{} cannot decode codes",
            self.name()
        )))
    }

    /// Codes `codes`, an encoding stage's output as integers, as
    /// [`Stage::encode`] would code their encoded stream, with the same
    /// bytes and derived parameters, without that stream existing whole
    /// (`spec/pipeline.md` §6.6). `None` when this stage cannot, and the
    /// pipeline then runs the two stages one after the other.
    fn encode_codes(
        &mut self,
        codes: &dyn CodeSource,
        cx: &StageContext,
    ) -> Result<Option<Vec<u8>>> {
        let _ = (codes, cx);
        Ok(None)
    }

    /// The coder that writes this stage's output piece by piece, when it
    /// has one: a message writer can then code the payload once for its
    /// length and digest and again straight into the message
    /// (`spec/pipeline.md` §6.9).
    fn streaming_coder(&self) -> Option<StreamingCoder> {
        None
    }

    /// Independent runs of the decoded stream, for decoding in pieces on
    /// `cx.threads` workers: each run is a byte range of the decoded stream
    /// with the place in the input where its decoding starts. `None` when
    /// the stream cannot be split.
    fn piece_runs(&self, input: &[u8], cx: &StageContext) -> Option<Vec<PieceRun>> {
        let _ = (input, cx);
        None
    }

    /// [`CompressionStage::decode_codes`] for one run from
    /// [`CompressionStage::piece_runs`], with code indices relative to the
    /// run's start; returns where in the input the run's decoding ended,
    /// which must be where the next run starts.
    fn decode_run_codes(
        &self,
        input: &[u8],
        cx: &StageContext,
        run: &PieceRun,
        sink: &mut CodeSink<'_>,
    ) -> Result<u64> {
        let _ = (input, cx, run, sink);
        Err(Error::invalid_argument(format!(
            "{} cannot decode runs",
            self.name()
        )))
    }
}

/// Receives a piece of decoded codes with the index of its first
/// ([`CompressionStage::decode_codes`]).
pub(crate) type CodeSink<'a> = dyn FnMut(usize, &[u32]) -> Result<()> + 'a;

/// The mask stage: a codec of a packed set of `nbits` bits, as NaN/Inf
/// masks are stored (`spec/pipeline.md` §5.3).
pub(crate) trait MaskStage: fmt::Debug + Send + Sync {
    /// The method's wire name.
    fn name(&self) -> &str;

    /// The blob of the `nbits` bits packed MSB-first in `bits`.
    fn encode_bits(&mut self, bits: &[u8], nbits: usize) -> Result<Vec<u8>>;

    /// Decodes `blob` into `out`, the `nbits` bits packed MSB-first.
    fn decode_bits(&self, blob: &[u8], nbits: usize, out: &mut [u8]) -> Result<()>;
}

/// Length of a stream of `n` samples of `bits` bits each, in whole bytes.
pub(crate) fn packed_bytes(n: u64, bits: u32) -> Result<u64> {
    n.checked_mul(bits as u64)
        .map(|b| b.div_ceil(8))
        .ok_or_else(|| Error::metadata("packed size overflows"))
}
