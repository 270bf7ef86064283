//! The stage trait every encoding, filter and compression implements, the
//! context stages learn their neighbours through, and typed parameter
//! access. See `spec/pipeline.md` §1 and §9.

use std::borrow::Cow;
use std::fmt;

use crate::cbor::Value;
use crate::descriptor::Map;
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, ErrorKind, Result};

/// Which of the three descriptor fields names a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageKind {
    /// `encoding`: element values → a byte stream.
    Encoding,
    /// `filter`: a reversible byte permutation.
    Filter,
    /// `compression`: a byte stream → a shorter one.
    Compression,
}

impl StageKind {
    /// The descriptor key naming a stage of this kind.
    pub fn key(self) -> &'static str {
        match self {
            StageKind::Encoding => "encoding",
            StageKind::Filter => "filter",
            StageKind::Compression => "compression",
        }
    }
}

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
/// ([`Codec::piece_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceRun {
    /// Decoded bytes `from..to`.
    pub from: usize,
    /// See `from`.
    pub to: usize,
    /// Where in the input (in the stage's own unit) its decoding starts.
    pub start: u64,
}

/// One pipeline stage with its typed, validated parameters.
pub trait Codec: fmt::Debug + Send + Sync {
    /// The stage's wire name (`zstd`, `simple_packing` …).
    fn name(&self) -> &str;

    /// Size of the stage's output for `input_len` input bytes when the size
    /// is fixed by the input alone (encodings and filters); `None` for
    /// compressors, whose output size depends on the data.
    fn encoded_len(&self, input_len: u64, cx: &StageContext) -> Result<Option<u64>>;

    /// Checks the stage against the object and the stream it will see.
    fn validate(&self, cx: &StageContext) -> Result<()> {
        let _ = cx;
        Ok(())
    }

    /// True for the `none` stage, which the pipeline skips without copying.
    fn is_identity(&self) -> bool {
        false
    }

    /// The stream form the next stage sees: `(sample_bits, packed)`.
    fn output_form(&self, cx: &StageContext) -> (u32, bool) {
        (cx.sample_bits, cx.packed)
    }

    /// Derives parameters from the caller's element bytes as given, before
    /// NaN/Inf substitution (only the encoding stage is asked).
    fn prepare(&mut self, raw: &[u8], cx: &StageContext) -> Result<()> {
        let _ = (raw, cx);
        Ok(())
    }

    /// [`Codec::prepare`] when the pipeline's NaN/Inf scan has already found
    /// the float64 values all finite and measured their range
    /// (`spec/pipeline.md` §6.2), so a stage deriving parameters from the
    /// range need not read the data again. `range` is `None` otherwise.
    fn prepare_with_range(
        &mut self,
        raw: &[u8],
        range: Option<&super::scan::FiniteRange>,
        cx: &StageContext,
    ) -> Result<()> {
        let _ = range;
        self.prepare(raw, cx)
    }

    /// Runs the stage forwards. May record parameters derived from the data
    /// (see [`Codec::derived_params`]).
    fn encode<'a>(&mut self, input: Cow<'a, [u8]>, cx: &StageContext) -> Result<Cow<'a, [u8]>>;

    /// True when [`Codec::encode_to_slice`] can write this stage's output
    /// straight into a caller's buffer.
    fn writes_in_place(&self) -> bool {
        false
    }

    /// Runs the stage forwards (after [`Codec::prepare`]) into `out`, which
    /// is exactly [`Codec::encoded_len`] of `input`: the path by which the
    /// only working stage of a pipeline writes straight into the message
    /// (`spec/pipeline.md` §6.3). Only called when
    /// [`Codec::writes_in_place`] is true.
    fn encode_to_slice(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()> {
        let _ = (input, cx, out);
        Err(Error::invalid_argument(format!(
            "{} cannot encode in place",
            self.name()
        )))
    }

    /// For [`Codec::encode_to_slice`]: input and output chunk sizes such
    /// that chunk `i` of the input encodes on its own, with one thread, to
    /// chunk `i` of the output. `None` when the output is written whole.
    fn in_place_chunks(&self, cx: &StageContext) -> Option<(usize, usize)> {
        let _ = cx;
        None
    }

    /// Parameters computed by the last [`Codec::encode`], to be written
    /// into the descriptor.
    fn derived_params(&self) -> Vec<(&'static str, Value)> {
        Vec::new()
    }

    /// Undoes the stage: `out` has exactly the decoded size the descriptor
    /// implies, and anything else the stream would produce is an error.
    fn decode_into(&self, input: &[u8], cx: &StageContext, out: &mut [u8]) -> Result<()>;

    /// [`Codec::decode_into`] into a new buffer of `len` bytes. Codecs that
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

    /// True when [`Codec::decode_pieces`] can decode this stage's stream
    /// piece by piece.
    fn decodes_in_pieces(&self, cx: &StageContext) -> bool {
        let _ = cx;
        false
    }

    /// Undoes the stage in consecutive pieces of about `piece_bytes`,
    /// handing each with its byte offset in the decoded stream to `sink`,
    /// so that the stage below consumes it while it is still in cache
    /// (`spec/pipeline.md` §6.6). Only called when
    /// [`Codec::decodes_in_pieces`] is true.
    fn decode_pieces(
        &self,
        input: &[u8],
        cx: &StageContext,
        piece_bytes: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let _ = (input, cx, piece_bytes, sink);
        Err(Error::invalid_argument(format!(
            "{} cannot decode in pieces",
            self.name()
        )))
    }

    /// Independent runs of the decoded stream, for decoding in pieces on
    /// `cx.threads` workers: each run is a byte range of the decoded stream
    /// with the place in the input where its decoding starts. `None` when
    /// the stream cannot be split.
    fn piece_runs(&self, input: &[u8], cx: &StageContext) -> Option<Vec<PieceRun>> {
        let _ = (input, cx);
        None
    }

    /// [`Codec::decode_pieces`] for one run from [`Codec::piece_runs`],
    /// with offsets relative to the run's start; returns where in the input
    /// the run's decoding ended, which must be where the next run starts.
    fn decode_run_pieces(
        &self,
        input: &[u8],
        cx: &StageContext,
        run: &PieceRun,
        piece_bytes: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<u64> {
        let _ = (input, cx, run, piece_bytes, sink);
        Err(Error::invalid_argument(format!(
            "{} cannot decode runs",
            self.name()
        )))
    }

    /// True when [`Codec::decode_piece_into`] accepts pieces of whole
    /// samples of the stream this stage decodes from.
    fn accepts_pieces(&self, cx: &StageContext) -> bool {
        let _ = cx;
        false
    }

    /// Undoes the stage for one piece of its input, which starts at byte
    /// `at` of that input, writing the matching part of `out`, the whole
    /// decoded output. Only called when [`Codec::accepts_pieces`] is true.
    fn decode_piece_into(
        &self,
        piece: &[u8],
        at: usize,
        cx: &StageContext,
        out: &mut [u8],
    ) -> Result<()> {
        let _ = (piece, at, cx, out);
        Err(Error::invalid_argument(format!(
            "{} cannot decode pieces",
            self.name()
        )))
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

    /// True when [`Codec::decode_range_into`] is implemented.
    fn supports_range(&self) -> bool {
        false
    }
}

/// Typed read access to the parameter keys of one stage.
#[derive(Debug, Clone, Copy)]
pub struct Params<'m> {
    map: &'m Map,
    stage: &'static str,
}

impl<'m> Params<'m> {
    /// The keys of `map`, read on behalf of `stage`.
    pub fn new(map: &'m Map, stage: &'static str) -> Self {
        Params { map, stage }
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&'m Value> {
        self.map.get(key)
    }

    fn missing(&self, key: &str) -> Error {
        Error::metadata(format!("{} needs parameter {key:?}", self.stage))
    }

    /// An optional signed integer.
    pub fn opt_i64(&self, key: &str) -> Result<Option<i64>> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                Error::metadata(format!("{key} is a {}, not an integer", v.type_name()))
            }),
        }
    }

    /// An optional integer that must fit an `i32`.
    pub fn opt_i32(&self, key: &str) -> Result<Option<i32>> {
        match self.opt_i64(key)? {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| Error::metadata(format!("{key} {v} is outside the i32 range"))),
        }
    }

    /// A required unsigned integer.
    pub fn req_u64(&self, key: &str) -> Result<u64> {
        let v = self.map.get(key).ok_or_else(|| self.missing(key))?;
        v.as_u64().ok_or_else(|| {
            Error::metadata(format!(
                "{key} is a {}, not an unsigned integer",
                v.type_name()
            ))
        })
    }

    /// A required unsigned integer that must fit a `u32`.
    pub fn req_u32(&self, key: &str) -> Result<u32> {
        let v = self.req_u64(key)?;
        u32::try_from(v).map_err(|_| Error::metadata(format!("{key} {v} exceeds u32")))
    }

    /// An optional array of unsigned integers.
    pub fn opt_u64_array(&self, key: &str) -> Result<Option<Vec<u64>>> {
        let Some(v) = self.map.get(key) else {
            return Ok(None);
        };
        let items = v
            .as_array()
            .ok_or_else(|| Error::metadata(format!("{key} is not an array")))?;
        items
            .iter()
            .map(|x| {
                x.as_u64()
                    .ok_or_else(|| Error::metadata(format!("{key} entry is not a uint")))
            })
            .collect::<Result<Vec<u64>>>()
            .map(Some)
    }
}

/// Length of a stream of `n` samples of `bits` bits each, in whole bytes.
pub(crate) fn packed_bytes(n: u64, bits: u32) -> Result<u64> {
    n.checked_mul(bits as u64)
        .map(|b| b.div_ceil(8))
        .ok_or_else(|| Error::metadata("packed size overflows"))
}
