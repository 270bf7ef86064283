//! Decoding messages: borrowed views and owned results. See `spec/format.md` §12.

use std::borrow::Cow;

use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;
use crate::metadata::{GlobalMetadata, RESERVED_KEY};
use crate::pipeline::{self, PipelineDecodeOptions};
use crate::wire::frame::Frame;
use crate::wire::layout::{parse_layout, MessageLayout};
use crate::wire::locate::{locate_data_frame, MessageAt};
use crate::wire::tables::{HashTable, IndexTable};
use crate::wire::FrameType;

/// When frame digests are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Never check (salvage, trusted data).
    Off,
    /// Check every frame that carries a digest (default).
    #[default]
    IfPresent,
    /// Check every frame; a frame without a digest is an error.
    Require,
}

/// Options of every decode entry point.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Return elements in the host's byte order (default true).
    pub native_byte_order: bool,
    /// Restore NaN/±Inf from masks (default true).
    pub restore_non_finite: bool,
    /// Digest checking policy (default: whenever present).
    pub verify: Verify,
    /// Thread budget (0 or 1 = sequential).
    pub threads: usize,
    /// Resource limits.
    pub limits: Limits,
    /// Told how far each object's decode got (`spec/pipeline.md` §6.7).
    pub progress: crate::pipeline::ProgressHook,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            native_byte_order: true,
            restore_non_finite: true,
            verify: Verify::IfPresent,
            threads: 0,
            limits: Limits::default(),
            progress: Default::default(),
        }
    }
}

impl DecodeOptions {
    /// Sets the verification policy.
    pub fn verify(mut self, v: Verify) -> Self {
        self.verify = v;
        self
    }

    /// Chooses native (true) or stored (false) byte order for results.
    pub fn native_byte_order(mut self, on: bool) -> Self {
        self.native_byte_order = on;
        self
    }

    /// Sets the limits.
    pub fn limits(mut self, l: Limits) -> Self {
        self.limits = l;
        self
    }

    /// Sets the thread budget.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// Turns NaN/Inf restoration on or off.
    pub fn restore_non_finite(mut self, on: bool) -> Self {
        self.restore_non_finite = on;
        self
    }

    /// Sets the hook told how far each object's decode got
    /// (`spec/pipeline.md` §6.7).
    pub fn progress(mut self, hook: crate::pipeline::ProgressHook) -> Self {
        self.progress = hook;
        self
    }

    #[allow(clippy::field_reassign_with_default)] // the options type is non-exhaustive and grows
    pub(crate) fn pipeline(&self) -> PipelineDecodeOptions {
        let mut p = PipelineDecodeOptions::default();
        p.native_byte_order = self.native_byte_order;
        p.restore_non_finite = self.restore_non_finite;
        p.threads = self.threads;
        p.progress = self.progress.clone();
        p
    }
}

/// A decoded object: its descriptor and element bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedObject {
    /// The object's descriptor as stored.
    pub descriptor: ObjectDescriptor,
    /// Decoded element bytes (native order unless asked otherwise).
    pub data: Vec<u8>,
}

/// A fully decoded message.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedMessage {
    /// Message metadata (preceders merged in).
    pub metadata: GlobalMetadata,
    /// Objects in order.
    pub objects: Vec<DecodedObject>,
}

/// A parsed message, borrowing the input. Parsing walks frame headers and
/// checks the index; payloads and descriptors are read on demand.
#[derive(Debug, Clone)]
pub struct Message<'a> {
    layout: MessageLayout<'a>,
    limits: Limits,
}

impl<'a> Message<'a> {
    /// Parses the message at the start of `buf` with default limits.
    pub fn parse(buf: &'a [u8]) -> Result<Self> {
        Self::parse_with(buf, 0, &Limits::default())
    }

    /// Parses the message at the start of `buf`; `base` is its absolute offset
    /// (for error reporting).
    pub fn parse_with(buf: &'a [u8], base: u64, limits: &Limits) -> Result<Self> {
        let layout = parse_layout(buf, base, limits)?;
        let m = Message {
            layout,
            limits: limits.clone(),
        };
        m.check_index()?;
        Ok(m)
    }

    /// The frame layout.
    pub fn layout(&self) -> &MessageLayout<'a> {
        &self.layout
    }

    /// The message bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.layout.bytes
    }

    /// Number of data objects.
    pub fn num_objects(&self) -> usize {
        self.layout.objects.len()
    }

    /// The index table, if the message has an index frame.
    pub fn index(&self) -> Result<Option<IndexTable>> {
        self.layout
            .index_frame()
            .map(|f| IndexTable::from_cbor(f.cbor(), f.body_abs_offset(), &self.limits))
            .transpose()
    }

    /// The aggregate hash table, if present.
    pub fn hash_table(&self) -> Result<Option<HashTable>> {
        self.layout
            .hash_frame()
            .map(|f| HashTable::from_cbor(f.cbor(), f.body_abs_offset(), &self.limits))
            .transpose()
    }

    /// Every index frame must agree with the data frames actually present.
    fn check_index(&self) -> Result<()> {
        for f in [self.layout.header_index, self.layout.footer_index]
            .into_iter()
            .flatten()
        {
            let t = IndexTable::from_cbor(f.cbor(), f.body_abs_offset(), &self.limits)?;
            let objs = &self.layout.objects;
            if t.offsets.len() != objs.len() {
                return Err(Error::framing(format!(
                    "index lists {} objects but the message has {}",
                    t.offsets.len(),
                    objs.len()
                ))
                .at(f.abs_offset()));
            }
            for (i, o) in objs.iter().enumerate() {
                if t.offsets[i] != o.data.offset() as u64
                    || t.lengths[i] != o.data.total_len() as u64
                {
                    return Err(Error::framing(format!(
                        "index entry {i} ({}, {}) disagrees with the data frame at ({}, {})",
                        t.offsets[i],
                        t.lengths[i],
                        o.data.offset(),
                        o.data.total_len()
                    ))
                    .at(f.abs_offset())
                    .in_object(i));
                }
            }
        }
        Ok(())
    }

    /// Message metadata with preceder entries merged into `base`.
    pub fn metadata(&self) -> Result<GlobalMetadata> {
        let f = self
            .layout
            .metadata_frame()
            .ok_or_else(|| Error::metadata("message has no metadata frame"))?;
        let mut meta = GlobalMetadata::from_cbor(f.cbor(), f.body_abs_offset(), &self.limits)?;
        meta.fit_base(self.num_objects(), f.abs_offset())?;
        for (i, o) in self.layout.objects.iter().enumerate() {
            let Some(p) = o.preceder else { continue };
            let pm = GlobalMetadata::from_cbor(p.cbor(), p.body_abs_offset(), &self.limits)?;
            let [mut entry] = <[_; 1]>::try_from(pm.base).map_err(|b: Vec<_>| {
                Error::metadata(format!(
                    "preceder base has {} entries; exactly 1 is required",
                    b.len()
                ))
                .at(p.abs_offset())
                .in_object(i)
            })?;
            entry.remove(RESERVED_KEY);
            meta.base[i].extend(entry);
        }
        Ok(meta)
    }

    /// Verifies the digests of every frame per `policy`, and that the
    /// aggregate hash table agrees with the data frames.
    pub fn verify(&self, policy: Verify) -> Result<()> {
        if policy == Verify::Off {
            return Ok(());
        }
        let table = self.verify_head(policy)?;
        for i in 0..self.num_objects() {
            self.verify_object(i, policy, table.as_ref())?;
        }
        Ok(())
    }

    /// Verifies every frame but the data frames per `policy`, and that the
    /// hash table lists one digest per object; returns the table when its
    /// algorithm is xxh3, for [`Message::verify_object`].
    pub(crate) fn verify_head(&self, policy: Verify) -> Result<Option<HashTable>> {
        let table = self.hash_table()?;
        let table = table.filter(|t| t.algorithm == crate::hash::ALGORITHM);
        if let Some(t) = &table {
            if t.hashes.len() != self.num_objects() {
                let f = self
                    .layout
                    .hash_frame()
                    .map_or(self.layout.base, |f| f.abs_offset());
                return Err(Error::framing(format!(
                    "hash frame lists {} digests but the message has {} objects",
                    t.hashes.len(),
                    self.num_objects()
                ))
                .at(f));
            }
        }
        for f in self.layout.frames() {
            if f.ftype() == FrameType::DataObject {
                continue;
            }
            verify_frame(&f, policy)?;
        }
        Ok(table)
    }

    /// Verifies data frame `i` per `policy`, and its digest against the
    /// hash table's entry.
    pub(crate) fn verify_object(
        &self,
        i: usize,
        policy: Verify,
        table: Option<&HashTable>,
    ) -> Result<()> {
        let f = self.layout.objects[i].data;
        let listed = table.and_then(|t| t.hashes.get(i).copied());
        if f.has_hash() {
            f.verify_hash().map_err(|e| e.in_object(i))?;
            if let Some(l) = listed.filter(|&l| l != f.stored_hash()) {
                return Err(Error::new(
                    ErrorKind::HashMismatch {
                        stored: l,
                        computed: f.stored_hash(),
                    },
                    "hash frame digest disagrees with the data frame's digest",
                )
                .at(f.abs_offset())
                .in_object(i));
            }
        } else if let Some(l) = listed {
            let computed = crate::hash::xxh3(f.body());
            if computed != l {
                return Err(Error::new(
                    ErrorKind::HashMismatch {
                        stored: l,
                        computed,
                    },
                    "data frame body disagrees with the hash frame digest",
                )
                .at(f.abs_offset())
                .in_object(i));
            }
        } else if policy == Verify::Require {
            return Err(
                Error::new(ErrorKind::MissingHash, "data frame carries no hash")
                    .at(f.abs_offset())
                    .in_object(i),
            );
        }
        Ok(())
    }

    /// Object `i`, with its descriptor parsed.
    pub fn object(&self, i: usize) -> Result<Object<'a>> {
        let o = self.layout.objects.get(i).ok_or_else(|| {
            Error::invalid_argument(format!(
                "object index {i} out of range (the message has {})",
                self.num_objects()
            ))
        })?;
        Object::from_frame(o.data, i, &self.limits)
    }

    /// Decodes everything.
    pub fn decode(&self, opts: &DecodeOptions) -> Result<DecodedMessage> {
        self.verify(opts.verify)?;
        let metadata = self.metadata()?;
        let n = self.num_objects();
        let total: u64 = (0..n)
            .map(|i| {
                self.object(i).and_then(|o| {
                    o.descriptor
                        .decoded_len()
                        .map_err(|e| e.at(o.frame.abs_offset()).in_object(i))
                })
            })
            .try_fold(0u64, |acc, l| l.map(|l| acc.saturating_add(l)))?;
        if total > opts.limits.max_message_bytes {
            return Err(
                Error::limit("max_message_bytes", total, opts.limits.max_message_bytes)
                    .at(self.layout.base),
            );
        }
        let one = |i: usize| -> Result<DecodedObject> {
            let o = self.object(i)?;
            let data = crate::buffer::into_owned(o.decode_unverified(opts)?)?;
            Ok(DecodedObject {
                descriptor: o.descriptor,
                data,
            })
        };
        let objects = if opts.threads > 1 && n > 1 {
            use rayon::prelude::*;
            // Collect every result first so that the error reported is the
            // lowest-numbered object's, as in the sequential path.
            crate::exec::install(opts.threads, || {
                (0..n).into_par_iter().map(one).collect::<Vec<_>>()
            })?
            .into_iter()
            .collect::<Result<Vec<_>>>()?
        } else {
            (0..n).map(one).collect::<Result<Vec<_>>>()?
        };
        Ok(DecodedMessage { metadata, objects })
    }
}

pub(crate) fn verify_frame(f: &Frame<'_>, policy: Verify) -> Result<()> {
    match policy {
        Verify::Off => Ok(()),
        Verify::IfPresent if !f.has_hash() => Ok(()),
        _ => f.verify_hash(),
    }
}

/// One data object of a message, borrowing the input.
#[derive(Debug, Clone)]
pub struct Object<'a> {
    index: usize,
    frame: Frame<'a>,
    descriptor: ObjectDescriptor,
    region: &'a [u8],
    region_abs: u64,
}

impl<'a> Object<'a> {
    /// Reads the descriptor of a data frame.
    pub fn from_frame(frame: Frame<'a>, index: usize, limits: &Limits) -> Result<Self> {
        let parts = frame.split_data(limits).map_err(|e| e.in_object(index))?;
        let desc_abs = frame.abs_offset()
            + (parts.descriptor.as_ptr() as usize - frame.bytes().as_ptr() as usize) as u64;
        let descriptor = ObjectDescriptor::from_cbor(parts.descriptor, desc_abs, limits)
            .map_err(|e| e.in_object(index))?;
        if let Some(m) = &descriptor.masks {
            for (kind, info) in m.iter() {
                let end = info.offset.checked_add(info.length);
                if end.is_none_or(|e| e > parts.region.len() as u64) {
                    return Err(Error::framing(format!(
                        "{kind} mask ({}, {}) lies outside the {}-byte payload region",
                        info.offset,
                        info.length,
                        parts.region.len()
                    ))
                    .at(desc_abs)
                    .in_object(index));
                }
            }
        }
        Ok(Object {
            index,
            frame,
            descriptor,
            region: parts.region,
            region_abs: frame.abs_offset() + parts.region_offset as u64,
        })
    }

    /// Position of the object in its message.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &ObjectDescriptor {
        &self.descriptor
    }

    /// The payload region as stored (encoded payload plus mask blobs).
    pub fn payload_region(&self) -> &'a [u8] {
        self.region
    }

    /// Absolute offset of the payload region in the input.
    pub fn payload_offset(&self) -> u64 {
        self.region_abs
    }

    /// The data frame.
    pub fn frame(&self) -> &Frame<'a> {
        &self.frame
    }

    /// Checks this object's frame digest.
    pub fn verify(&self, policy: Verify) -> Result<()> {
        verify_frame(&self.frame, policy).map_err(|e| e.in_object(self.index))
    }

    /// Decodes the payload, verifying the frame digest per `opts.verify`.
    /// Borrows the input when the pipeline is the identity and no byte swap
    /// is needed.
    pub fn decode(&self, opts: &DecodeOptions) -> Result<Cow<'a, [u8]>> {
        self.verify(opts.verify)?;
        self.decode_unverified(opts)
    }

    /// Decodes the payload into `out`, a caller-owned buffer of exactly
    /// [`ObjectDescriptor::decoded_len`] bytes, verifying the frame digest
    /// per `opts.verify`. No output buffer is allocated, so a caller
    /// decoding many objects of one size reuses the same memory
    /// (`spec/pipeline.md` §6.3). A buffer of another size is an
    /// invalid-argument error.
    pub fn decode_into(&self, opts: &DecodeOptions, out: &mut [u8]) -> Result<()> {
        self.verify(opts.verify)?;
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        pipeline::decode_into(desc, region, base, popts, limits, out)
            .map_err(|e| e.in_object(self.index))
    }

    /// The decoded size in bytes, once the payload is known to be able to
    /// supply it: a descriptor claiming more than its payload's framing can
    /// decode to is an error here, before a caller reserves a buffer of its
    /// own for [`Object::decode_into`] (`spec/pipeline.md` §6.9).
    pub fn checked_decoded_len(&self, opts: &DecodeOptions) -> Result<usize> {
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        pipeline::check_supply(desc, region, base, popts, limits)
            .map_err(|e| e.in_object(self.index))
    }

    /// Decodes the payload into `buf`, verifying the frame digest per
    /// `opts.verify`: `buf` is resized to the decoded size only once the
    /// payload is known to be able to supply it, reusing its memory when it
    /// is large enough, so a caller decoding object after object keeps one
    /// buffer near the largest object and a descriptor's claim alone never
    /// reserves memory (`spec/pipeline.md` §6.9).
    pub fn decode_reusing(&self, opts: &DecodeOptions, buf: &mut Vec<u8>) -> Result<()> {
        self.verify(opts.verify)?;
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        pipeline::decode_reusing(desc, region, base, popts, limits, buf)
            .map_err(|e| e.in_object(self.index))
    }

    /// Decodes element ranges `(first, count)` without decoding the rest
    /// (encodings none and simple_packing, no filter, no compression).
    pub fn decode_range(
        &self,
        ranges: &[(u64, u64)],
        opts: &DecodeOptions,
    ) -> Result<Vec<Vec<u8>>> {
        self.verify(opts.verify)?;
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        pipeline::decode_range(desc, region, base, ranges, popts, limits)
            .map_err(|e| e.in_object(self.index))
    }

    /// Whether [`Object::decode_range`] decodes part of this object without
    /// the rest: every stage of its pipeline decodes a range
    /// (`spec/pipeline.md` §7).
    pub fn decodes_by_range(&self) -> bool {
        pipeline::decodes_by_range(&self.descriptor)
    }

    /// Whether [`Object::decode_pieces`] decodes this object a piece at a
    /// time: it decodes by range ([`Object::decodes_by_range`]), or its
    /// pipeline is zstd over none or simple_packing with no filter, whose
    /// frame is streamed (`spec/pipeline.md` §7).
    pub fn decodes_in_pieces(&self) -> bool {
        pipeline::decodes_in_pieces(&self.descriptor)
    }

    /// Decodes the object in order, a piece of at most `piece_bytes` at a
    /// time, into `buf` (cleared, then reused for every piece), and runs
    /// `f(first, piece)` on each piece, `first` being its first element;
    /// the frame digest is checked first per `opts.verify`. Memory holds
    /// one piece of the decoded values, not the object, and the pieces are
    /// the bytes of decoding it whole (`spec/pipeline.md` §7). A piece is a
    /// power of two elements (at least one; at least eight through zstd),
    /// so that its encoded bytes start on a boundary of the compression's
    /// units whenever those are a power of two elements, as szip's default
    /// RSI of 128 × 32 samples is for 16-bit codes: no unit is decoded
    /// twice. A zstd frame is streamed through a decoder holding its window
    /// and one piece; a stream decoding to another length than the
    /// descriptor implies is an error, at the latest after the last piece.
    /// An object that decodes in no pieces ([`Object::decodes_in_pieces`])
    /// is a range-not-supported error before `f` runs.
    pub fn decode_pieces(
        &self,
        opts: &DecodeOptions,
        piece_bytes: usize,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        self.in_pieces(pipeline::decode_pieces, opts, piece_bytes, buf, &mut f)
    }

    /// Decodes the object in order and runs `f(first, piece)` on pieces of
    /// about `piece_bytes` in `buf`, whatever its pipeline, the frame
    /// digest checked first per `opts.verify`: a piece at a time as
    /// [`Object::decode_pieces`] when it can; for the byte shuffle over
    /// encoding none with memory for the shuffled bytes and one piece, not
    /// for the shuffled and the decoded object both; else decoded whole
    /// first (`spec/pipeline.md` §7, "Streaming"). The pieces are the bytes
    /// of a whole decode.
    pub fn decode_streaming(
        &self,
        opts: &DecodeOptions,
        piece_bytes: usize,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        self.in_pieces(pipeline::decode_streaming, opts, piece_bytes, buf, &mut f)
    }

    /// Runs `decode` (one of the pipeline's piece decoders) on this
    /// object, its digest checked first per `opts.verify`.
    fn in_pieces(
        &self,
        decode: PieceDecoder,
        opts: &DecodeOptions,
        piece_bytes: usize,
        buf: &mut Vec<u8>,
        f: &mut pipeline::OnPiece<'_>,
    ) -> Result<()> {
        self.verify(opts.verify)?;
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        decode(desc, region, base, piece_bytes, popts, limits, buf, f)
            .map_err(|e| e.in_object(self.index))
    }

    /// The NaN/Inf masks of this object as packed bits (MSB first, one bit
    /// per element), keyed `nan`, `inf+`, `inf-`; empty when there are none.
    /// A mask blob of a few bytes can claim any number of bits, so the
    /// object must be one `limits` let decode (`max_object_bytes`) before
    /// its bits are allocated.
    pub fn masks(&self, limits: &Limits) -> Result<Vec<(&'static str, Vec<u8>)>> {
        if self.descriptor.masks.is_some() {
            pipeline::checked_decoded_len(&self.descriptor, limits)
                .map_err(|e| e.in_object(self.index))?;
        }
        pipeline::decoded_masks(&self.descriptor, self.region)
            .map_err(|e| e.at(self.region_abs).in_object(self.index))
    }

    fn decode_unverified(&self, opts: &DecodeOptions) -> Result<Cow<'a, [u8]>> {
        let (desc, region, base) = (&self.descriptor, self.region, self.region_abs);
        let (popts, limits) = (&opts.pipeline(), &opts.limits);
        pipeline::decode(desc, region, base, popts, limits).map_err(|e| e.in_object(self.index))
    }
}

/// Decodes the first message of `buf` completely: metadata and every
/// object, digests checked as `opts.verify` says ([`Verify`]).
///
/// ```
/// use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
///
/// let desc = ObjectDescriptor::new(Dtype::Int8, vec![3]);
/// let msg = tgm::encode(&GlobalMetadata::default(), &[(&desc, &[1, 2, 3])], &EncodeOptions::new())?;
/// let decoded = tgm::decode(&msg, &DecodeOptions::default())?;
/// assert_eq!(decoded.objects[0].data, [1, 2, 3]);
/// # Ok::<(), tgm::Error>(())
/// ```
pub fn decode(buf: &[u8], opts: &DecodeOptions) -> Result<DecodedMessage> {
    Message::parse_with(buf, 0, &opts.limits)?.decode(opts)
}

/// Decodes only the metadata of the first message of `buf`.
pub fn decode_metadata(buf: &[u8], opts: &DecodeOptions) -> Result<GlobalMetadata> {
    let m = Message::parse_with(buf, 0, &opts.limits)?;
    if let Some(f) = m.layout.metadata_frame() {
        verify_frame(&f, opts.verify)?;
    }
    m.metadata()
}

/// Decodes metadata and every descriptor, no payloads.
pub fn decode_descriptors(
    buf: &[u8],
    opts: &DecodeOptions,
) -> Result<(GlobalMetadata, Vec<ObjectDescriptor>)> {
    let m = Message::parse_with(buf, 0, &opts.limits)?;
    let meta = m.metadata()?;
    let descs = (0..m.num_objects())
        .map(|i| m.object(i).map(|o| o.descriptor))
        .collect::<Result<_>>()?;
    Ok((meta, descs))
}

/// Decodes object `index` of the first message of `buf`.
///
/// With a header index the object's frame is reached directly, without
/// walking the other data frames; otherwise the frames are walked.
///
/// ```
/// use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
///
/// let (a, b) = (ObjectDescriptor::new(Dtype::Uint8, vec![2]), ObjectDescriptor::new(Dtype::Uint8, vec![3]));
/// let msg = tgm::encode(&GlobalMetadata::default(), &[(&a, &[1, 2]), (&b, &[3, 4, 5])], &EncodeOptions::new())?;
/// let second = tgm::decode_object(&msg, 1, &DecodeOptions::default())?;
/// assert_eq!(second.data, [3, 4, 5]);
/// # Ok::<(), tgm::Error>(())
/// ```
pub fn decode_object(buf: &[u8], index: usize, opts: &DecodeOptions) -> Result<DecodedObject> {
    let o = locate_object(buf, 0, index, &opts.limits)?;
    let data = crate::buffer::into_owned(o.decode(opts)?)?;
    Ok(DecodedObject {
        descriptor: o.descriptor,
        data,
    })
}

/// Decodes object `index` of the first message of `buf` into `out`, which
/// must be exactly the object's decoded size; returns its descriptor. See
/// [`Object::decode_into`].
pub fn decode_object_into(
    buf: &[u8],
    index: usize,
    opts: &DecodeOptions,
    out: &mut [u8],
) -> Result<ObjectDescriptor> {
    let o = locate_object(buf, 0, index, &opts.limits)?;
    o.decode_into(opts, out)?;
    Ok(o.descriptor)
}

/// Decodes element ranges `(first, count)` of object `index` of the first
/// message of `buf`, without decoding the rest of the object: one vector of
/// element bytes per range. Every stage must support ranges (encodings none
/// and simple_packing, no filter, no compression or szip with stored block
/// offsets; `spec/pipeline.md` §7); otherwise the error is
/// [`ErrorKind::RangeNotSupported`].
///
/// ```
/// use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
///
/// let desc = ObjectDescriptor::new(Dtype::Uint8, vec![10]);
/// let raw: Vec<u8> = (0..10).collect();
/// let msg = tgm::encode(&GlobalMetadata::default(), &[(&desc, &raw)], &EncodeOptions::new())?;
/// let parts = tgm::decode_range(&msg, 0, &[(2, 3), (8, 2)], &DecodeOptions::default())?;
/// assert_eq!(parts, [vec![2, 3, 4], vec![8, 9]]);
/// # Ok::<(), tgm::Error>(())
/// ```
pub fn decode_range(
    buf: &[u8],
    index: usize,
    ranges: &[(u64, u64)],
    opts: &DecodeOptions,
) -> Result<Vec<Vec<u8>>> {
    locate_object(buf, 0, index, &opts.limits)?.decode_range(ranges, opts)
}

/// Finds object `index` of the message at the start of `buf`, through the
/// header or footer index when there is one (reading only the frame headers
/// before it and the listed data frame), else by walking every frame.
pub fn locate_object<'a>(
    buf: &'a [u8],
    base: u64,
    index: usize,
    limits: &Limits,
) -> Result<Object<'a>> {
    let at = MessageAt {
        at: 0,
        base,
        avail: buf.len() as u64,
    };
    match locate_data_frame(buf, at, index, limits)? {
        Some(e) => {
            // The locator checked the range against the message length,
            // which fits in `buf`.
            let r = e.offset as usize..(e.offset + e.len) as usize;
            let f = e.frame(&buf[r], base)?;
            Object::from_frame(f, index, limits)
        }
        None => Message::parse_with(buf, base, limits)?.object(index),
    }
}

/// A decoder of an object in pieces ([`pipeline::decode_pieces`],
/// [`pipeline::decode_streaming`]).
type PieceDecoder = fn(
    &ObjectDescriptor,
    &[u8],
    u64,
    usize,
    &pipeline::PipelineDecodeOptions,
    &Limits,
    &mut Vec<u8>,
    &mut pipeline::OnPiece<'_>,
) -> Result<()>;
