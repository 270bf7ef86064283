//! Buffered encoding of one message. See `spec/format.md` §11.

use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};
use crate::hash;
use crate::metadata::{GlobalMetadata, Provenance};
use std::borrow::Cow;
use std::io::Write;

use crate::pipeline::codec::registry;
use crate::pipeline::streamed::Streamed;
use crate::pipeline::{self, Deferral, EncodedPayload, InPlace, PipelineOptions, Planned};
use crate::wire::frame::{data_footer_bytes, header_bytes, padding_after, write_cbor_frame};
use crate::wire::tables::{HashTable, IndexTable};
use crate::wire::{
    align_up, frame_flags, message_flags as mf, FrameType, DATA_FRAME_FOOTER_LEN, END_MAGIC,
    FRAME_FOOTER_LEN, FRAME_HEADER_LEN, MAGIC, POSTAMBLE_LEN, PREAMBLE_LEN, WIRE_VERSION,
};

/// Where the aggregate hash frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashPolicy {
    /// Header for buffered messages, footer for streaming ones.
    #[default]
    Auto,
    /// No aggregate hash frame (inline frame hashes are still written).
    None,
    /// A header hash frame (buffered messages only).
    Header,
    /// A footer hash frame.
    Footer,
    /// Both.
    Both,
}

/// Options of the encoder. [`EncodeOptions::default`] and
/// [`EncodeOptions::new`] are the same: hashing on.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Write xxh3-64 digests in every frame (default true).
    pub hashing: bool,
    /// Where the aggregate hash frame goes.
    pub hash_policy: HashPolicy,
    /// Provenance for `_reserved_`; `None` means the current time and a random UUID.
    pub provenance: Option<Provenance>,
    /// Pipeline options (NaN/Inf policy, threads).
    pub pipeline: PipelineOptions,
}

impl Default for EncodeOptions {
    /// Hashing on, automatic hash frame placement, fresh provenance, the
    /// default pipeline options.
    fn default() -> Self {
        EncodeOptions {
            hashing: true,
            hash_policy: HashPolicy::default(),
            provenance: None,
            pipeline: PipelineOptions::default(),
        }
    }
}

impl EncodeOptions {
    /// The defaults: [`EncodeOptions::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Turns frame hashing on or off.
    pub fn hashing(mut self, on: bool) -> Self {
        self.hashing = on;
        self
    }

    /// Sets the aggregate hash frame placement.
    pub fn hash_policy(mut self, p: HashPolicy) -> Self {
        self.hash_policy = p;
        self
    }

    /// Fixes the provenance, for reproducible output.
    pub fn provenance(mut self, p: Provenance) -> Self {
        self.provenance = Some(p);
        self
    }

    /// Sets the pipeline options.
    pub fn pipeline(mut self, p: PipelineOptions) -> Self {
        self.pipeline = p;
        self
    }

    /// Sets the hook told how far each object's encode got
    /// (`spec/pipeline.md` §6.7).
    pub fn progress(mut self, hook: pipeline::ProgressHook) -> Self {
        self.pipeline.progress = hook;
        self
    }
}

/// One object after the pipeline: its final descriptor and payload.
pub(crate) struct PreparedObject<'a> {
    pub descriptor: ObjectDescriptor,
    pub descriptor_cbor: Vec<u8>,
    pub encoded: EncodedPayload<'a>,
    /// A payload still to be written straight into the message, with the
    /// element bytes it is written from (`spec/pipeline.md` §6.3); its
    /// frame digest is then computed when it is written.
    pub in_place: Option<(InPlace, &'a [u8])>,
    /// A payload still to be coded into the message as it is written
    /// (`spec/pipeline.md` §6.8); its length and digest are known.
    pub streamed: Option<Box<Streamed<'a>>>,
    /// The payload is the element bytes as they are, written step by step
    /// by [`PreparedObject::write_frame_verbatim`], which checks them and
    /// computes the digest (`spec/pipeline.md` §6.10).
    pub verbatim: bool,
    pub hash: u64,
}

impl PreparedObject<'_> {
    fn payload_len(&self) -> usize {
        match (&self.in_place, &self.streamed) {
            (Some((plan, _)), _) => plan.len,
            (None, Some(s)) => s.len,
            (None, None) => self.encoded.payload.len(),
        }
    }

    pub fn frame_len(&self) -> u64 {
        (FRAME_HEADER_LEN
            + self.payload_len()
            + self.encoded.mask_blobs.len()
            + self.descriptor_cbor.len()
            + DATA_FRAME_FOOTER_LEN) as u64
    }

    /// Appends the frame (without padding) to `out`, writing an in-place
    /// payload straight into it, and returns the frame's digest.
    fn append_frame(&self, hashing: bool, out: &mut Vec<u8>) -> Result<u64> {
        let Some((plan, data)) = &self.in_place else {
            self.write_frame(hashing, &mut |b| {
                out.extend_from_slice(b);
                Ok(())
            })?;
            return Ok(self.hash);
        };
        out.extend_from_slice(&header_bytes(
            FrameType::DataObject,
            data_frame_flags(hashing),
            self.frame_len(),
        ));
        let start = out.len();
        pipeline::append_in_place(&self.descriptor, data, plan, out)?;
        let hash = if hashing {
            hash::xxh3_parts(&[&out[start..], &self.descriptor_cbor])
        } else {
            0
        };
        out.extend_from_slice(&self.descriptor_cbor);
        out.extend_from_slice(&data_footer_bytes(
            (FRAME_HEADER_LEN + plan.len) as u64,
            hash,
        ));
        Ok(hash)
    }

    /// Writes the frame (without padding) through `sink`.
    pub fn write_frame(
        &self,
        hashing: bool,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        sink(&header_bytes(
            FrameType::DataObject,
            data_frame_flags(hashing),
            self.frame_len(),
        ))?;
        match &self.streamed {
            Some(s) => s.write(sink)?,
            None => sink(&self.encoded.payload)?,
        }
        sink(&self.encoded.mask_blobs)?;
        sink(&self.descriptor_cbor)?;
        let cbor_offset =
            (FRAME_HEADER_LEN + self.payload_len() + self.encoded.mask_blobs.len()) as u64;
        sink(&data_footer_bytes(
            cbor_offset,
            if hashing { self.hash } else { 0 },
        ))
    }
}

/// Bytes of a verbatim payload checked, hashed and written per step.
const VERBATIM_STEP: usize = 8 << 20;

impl PreparedObject<'_> {
    /// Writes the frame of a verbatim payload through `sink` step by
    /// step: each step's elements are checked for non-finite values,
    /// hashed, written, then reported to `progress` as read, so a caller
    /// that mapped the input may release them (`spec/pipeline.md` §6.10).
    /// Returns the frame digest. A non-finite value fails the call with
    /// the frame cut short.
    pub fn write_frame_verbatim(
        &self,
        hashing: bool,
        progress: &pipeline::ProgressHook,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        sink(&header_bytes(
            FrameType::DataObject,
            data_frame_flags(hashing),
            self.frame_len(),
        ))?;
        let d = &self.descriptor;
        let width = d.dtype.width().max(1);
        let step = (VERBATIM_STEP / width).max(1) * width;
        let data: &[u8] = &self.encoded.payload;
        let total = data.len() as u64;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut done = 0u64;
        for chunk in data.chunks(step) {
            crate::pipeline::masks::refuse_non_finite(
                chunk,
                d.dtype,
                d.byte_order,
                done / width as u64,
            )?;
            if hashing {
                h.update(chunk);
            }
            sink(chunk)?;
            done += chunk.len() as u64;
            progress.advance(pipeline::Step {
                done,
                total,
                read: done,
            });
        }
        h.update(&self.descriptor_cbor);
        let hash = if hashing { h.digest() } else { 0 };
        sink(&self.descriptor_cbor)?;
        let cbor_offset = (FRAME_HEADER_LEN + data.len()) as u64;
        sink(&data_footer_bytes(cbor_offset, hash))?;
        Ok(hash)
    }
}

/// Flags of a data frame as this encoder writes it.
fn data_frame_flags(hashing: bool) -> u16 {
    frame_flags::CBOR_AFTER_PAYLOAD
        | if hashing {
            frame_flags::HASH_PRESENT
        } else {
            0
        }
}

/// [`prepare_object`], leaving an object whose pipeline does nothing and
/// whose non-finite values are refused to be written from `data` by
/// [`PreparedObject::write_frame_verbatim`] (`spec/pipeline.md` §6.10).
pub(crate) fn prepare_object_verbatim<'a>(
    descriptor: &ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
    hashing: bool,
) -> Result<PreparedObject<'a>> {
    let defer = Deferral {
        verbatim: true,
        ..Deferral::default()
    };
    prepare_object_planned(descriptor, data, opts, hashing, defer)
}

/// Runs the pipeline for one object and computes its frame digest.
pub(crate) fn prepare_object<'a>(
    descriptor: &ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
    hashing: bool,
) -> Result<PreparedObject<'a>> {
    prepare_object_planned(descriptor, data, opts, hashing, Deferral::default())
}

/// [`prepare_object`], leaving the payload to be written in place when the
/// pipeline allows and `in_place` is set (`spec/pipeline.md` §6.3).
fn prepare_object_planned<'a>(
    descriptor: &ObjectDescriptor,
    data: &'a [u8],
    opts: &PipelineOptions,
    hashing: bool,
    defer: Deferral,
) -> Result<PreparedObject<'a>> {
    descriptor.validate_for_encode()?;
    let mut d = descriptor.clone();
    let encoded = match pipeline::encode_planned(&mut d, data, opts, defer)? {
        Planned::Encoded(e) => e,
        Planned::Streamed(s) => {
            let descriptor_cbor = d.to_cbor();
            let hash = if hashing {
                s.digest_with(&[&descriptor_cbor])
            } else {
                0
            };
            return Ok(PreparedObject {
                descriptor: d,
                descriptor_cbor,
                encoded: EncodedPayload {
                    payload: Cow::Borrowed(&[]),
                    mask_blobs: Vec::new(),
                },
                in_place: None,
                streamed: Some(s),
                verbatim: false,
                hash,
            });
        }
        Planned::Verbatim => {
            return Ok(PreparedObject {
                descriptor_cbor: d.to_cbor(),
                descriptor: d,
                encoded: EncodedPayload {
                    payload: Cow::Borrowed(data),
                    mask_blobs: Vec::new(),
                },
                in_place: None,
                streamed: None,
                verbatim: true,
                hash: 0,
            })
        }
        Planned::InPlace(plan) => {
            return Ok(PreparedObject {
                descriptor_cbor: d.to_cbor(),
                descriptor: d,
                encoded: EncodedPayload {
                    payload: Cow::Borrowed(&[]),
                    mask_blobs: Vec::new(),
                },
                in_place: Some((plan, data)),
                streamed: None,
                verbatim: false,
                hash: 0,
            })
        }
    };
    let descriptor_cbor = d.to_cbor();
    let hash = if hashing {
        hash::xxh3_parts(&[&encoded.payload, &encoded.mask_blobs, &descriptor_cbor])
    } else {
        0
    };
    Ok(PreparedObject {
        descriptor: d,
        descriptor_cbor,
        encoded,
        in_place: None,
        streamed: None,
        verbatim: false,
        hash,
    })
}

/// Wraps a payload that is already the output of `descriptor`'s pipeline,
/// without running the pipeline (`spec/format.md` §11.5): the descriptor is
/// checked as for [`encode`], a payload without encoding, filter or
/// compression must hold exactly the decoded size, and the frame digest is
/// computed here, never taken from the caller.
pub(crate) fn prepare_pre_encoded<'a>(
    descriptor: &ObjectDescriptor,
    payload: &'a [u8],
    hashing: bool,
) -> Result<PreparedObject<'a>> {
    descriptor.validate_for_encode()?;
    if descriptor.masks.as_ref().is_some_and(|m| !m.is_empty()) {
        return Err(Error::invalid_argument(
            "a pre-encoded object cannot carry NaN/Inf masks",
        ));
    }
    check_pre_encoded_pipeline(descriptor)?;
    if descriptor.is_raw() {
        let want = descriptor.decoded_len()?;
        if payload.len() as u64 != want {
            return Err(Error::invalid_argument(format!(
                "pre-encoded payload of {} bytes does not match expected {want} bytes \
                 (encoding none, shape {:?} of {})",
                payload.len(),
                descriptor.shape,
                descriptor.dtype.name(),
            )));
        }
    }
    let descriptor_cbor = descriptor.to_cbor();
    let hash = if hashing {
        hash::xxh3_parts(&[payload, &descriptor_cbor])
    } else {
        0
    };
    Ok(PreparedObject {
        descriptor: descriptor.clone(),
        descriptor_cbor,
        encoded: EncodedPayload {
            payload: Cow::Borrowed(payload),
            mask_blobs: Vec::new(),
        },
        in_place: None,
        streamed: None,
        verbatim: false,
        hash,
    })
}

/// Checks that every stage of a pre-encoded object's pipeline is built in
/// and accepts the object, and that every codec key belongs to one of its
/// stages (`spec/format.md` §11.5): nothing is run that would catch it later.
fn check_pre_encoded_pipeline(descriptor: &ObjectDescriptor) -> Result<()> {
    let pipeline = descriptor.pipeline();
    let names = pipeline.names();
    for key in pipeline.params().keys() {
        let Some(codec) = registry::codec_of_key(key) else {
            continue;
        };
        if !names.contains(&codec) {
            let kind = registry::REGISTRY
                .iter()
                .find(|e| e.name == codec)
                .map_or("compression", |e| e.kind.key());
            let current = match kind {
                "encoding" => names[0],
                "filter" => names[1],
                _ => names[2],
            };
            return Err(Error::metadata(format!(
                "{key} provided but {kind} is {current:?}, not {codec:?}"
            )));
        }
    }
    let contexts = pipeline::plan::contexts_of(descriptor)?;
    for (stage, cx) in pipeline::stages(pipeline).all().iter().zip(&contexts) {
        stage.validate(cx)?;
    }
    Ok(())
}

/// Encodes one message from payloads that already went through their
/// descriptors' pipelines (derived parameters already in the descriptors,
/// mask blobs after each payload); the message is
/// otherwise written as [`encode`] writes it.
pub fn encode_pre_encoded(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    metadata.check_caller_owned(objects.len())?;
    let prepared = prepare_all_pre_encoded(objects, opts)?;
    let mut out = Vec::new();
    assemble(metadata, &prepared, opts, &mut out)?;
    Ok(out)
}

/// [`prepare_pre_encoded`] for every object.
fn prepare_all_pre_encoded<'a>(
    objects: &[(&ObjectDescriptor, &'a [u8])],
    opts: &EncodeOptions,
) -> Result<Vec<PreparedObject<'a>>> {
    objects
        .iter()
        .enumerate()
        .map(|(i, (d, payload))| {
            prepare_pre_encoded(d, payload, opts.hashing).map_err(|e| e.in_object(i))
        })
        .collect()
}

/// Aligned on-wire size of a non-data frame with `cbor_len` bytes of CBOR.
fn aligned_cbor_frame(cbor_len: usize) -> u64 {
    align_up((FRAME_HEADER_LEN + cbor_len + FRAME_FOOTER_LEN) as u64)
}

/// Encodes one message holding `objects`, each a descriptor and its raw
/// element bytes (in the descriptor's byte order).
///
/// ```
/// use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
///
/// let desc = ObjectDescriptor::new(Dtype::Uint16, vec![2]);
/// let raw: Vec<u8> = [7u16, 8].iter().flat_map(|v| v.to_ne_bytes()).collect();
/// let msg = tgm::encode(&GlobalMetadata::default(), &[(&desc, &raw)], &EncodeOptions::new())?;
/// assert_eq!(&msg[..8], b"TENSOGRM");
/// # Ok::<(), tgm::Error>(())
/// ```
pub fn encode(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_into(metadata, objects, opts, &mut out)?;
    Ok(out)
}

/// [`encode`] into `out`, which is cleared first and whose capacity is
/// reused: a service encoding a stream of similar messages into one vector
/// writes into memory it already has instead of faulting in fresh pages for
/// every message (`spec/pipeline.md` §6.3). On error `out` is left empty.
pub fn encode_into(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    metadata.check_caller_owned(objects.len())?;
    let defer = Deferral {
        in_place: true,
        ..Deferral::default()
    };
    let prepared = prepare_all(objects, opts, defer)?;
    let written = assemble(metadata, &prepared, opts, out);
    if written.is_err() {
        out.clear();
    }
    written
}

/// A message of no data objects whose metadata sits at its end: an empty
/// footer index frame, then the footer metadata frame, each padded
/// (flags: footer metadata, footer index and, when hashing, hashes
/// present). The catalogue message's form (`spec/files.md` §9.1): readers
/// that reach a message's layout only through an index, the reference's
/// remote reader among them, find it from the postamble.
pub(crate) fn encode_footer_indexed_empty(
    metadata: &GlobalMetadata,
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    metadata.check_caller_owned(0)?;
    let mut meta = metadata.clone();
    meta.fill_tensor_info(&[]);
    meta.reserved = opts
        .provenance
        .clone()
        .unwrap_or_else(Provenance::now)
        .to_map();
    let hashing = opts.hashing;
    let mut frames = Vec::new();
    let index = IndexTable {
        offsets: Vec::new(),
        lengths: Vec::new(),
    };
    let at = |frames: &Vec<u8>| PREAMBLE_LEN as u64 + frames.len() as u64;
    write_cbor_frame(
        &mut frames,
        FrameType::FooterIndex,
        &index.to_cbor(),
        hashing,
    );
    frames.resize(frames.len() + padding_after(at(&frames)), 0);
    write_cbor_frame(
        &mut frames,
        FrameType::FooterMetadata,
        &meta.to_cbor(),
        hashing,
    );
    frames.resize(frames.len() + padding_after(at(&frames)), 0);
    let total = at(&frames) + POSTAMBLE_LEN as u64;
    let mut flags = mf::FOOTER_METADATA | mf::FOOTER_INDEX;
    if hashing {
        flags |= mf::HASHES_PRESENT;
    }
    let mut out = Vec::with_capacity(total as usize);
    write_preamble(&mut out, flags, total);
    out.extend_from_slice(&frames);
    write_postamble(&mut out, PREAMBLE_LEN as u64, total);
    Ok(out)
}

/// Runs every object's pipeline, on the thread budget when there are
/// several; `defer` leaves payloads to be written into the message where
/// the pipeline allows (`spec/pipeline.md` §6.3, §6.8).
fn prepare_all<'a>(
    objects: &[(&ObjectDescriptor, &'a [u8])],
    opts: &EncodeOptions,
    defer: Deferral,
) -> Result<Vec<PreparedObject<'a>>> {
    let run = |i: usize, (d, data): &(&ObjectDescriptor, &'a [u8])| {
        prepare_object_planned(d, data, &opts.pipeline, opts.hashing, defer)
            .map_err(|e| e.in_object(i))
    };
    if opts.pipeline.threads > 1 && objects.len() > 1 {
        use rayon::prelude::*;
        // The first error in object order, as in the sequential path.
        crate::exec::install(opts.pipeline.threads, || {
            objects
                .par_iter()
                .enumerate()
                .map(|(i, o)| run(i, o))
                .collect::<Vec<_>>()
        })?
        .into_iter()
        .collect()
    } else {
        objects.iter().enumerate().map(|(i, o)| run(i, o)).collect()
    }
}

/// The parts of a message fixed before any data frame is written: flags,
/// total length and the header frames' CBOR (`spec/format.md` §11.2).
struct Head {
    flags: u16,
    total: u64,
    meta_cbor: Vec<u8>,
    index_cbor: Option<Vec<u8>>,
    /// The hash table as known before the frames are written (placeholders
    /// for in-place payloads, whose digests have a fixed-length form).
    hash_cbor: Option<Vec<u8>>,
    header_hash: bool,
    footer_hash: bool,
}

impl Head {
    fn plan(
        metadata: &GlobalMetadata,
        prepared: &[PreparedObject<'_>],
        opts: &EncodeOptions,
    ) -> Result<Head> {
        let n = prepared.len();
        let mut meta = metadata.clone();
        let descs: Vec<&ObjectDescriptor> = prepared.iter().map(|p| &p.descriptor).collect();
        meta.fill_tensor_info(&descs);
        meta.reserved = opts
            .provenance
            .clone()
            .unwrap_or_else(Provenance::now)
            .to_map();
        let meta_cbor = meta.to_cbor();
        let header_hash = opts.hashing
            && n > 0
            && matches!(
                opts.hash_policy,
                HashPolicy::Auto | HashPolicy::Header | HashPolicy::Both
            );
        let footer_hash = opts.hashing
            && n > 0
            && matches!(opts.hash_policy, HashPolicy::Footer | HashPolicy::Both);
        let hashes: Vec<u64> = prepared.iter().map(|p| p.hash).collect();
        let hash_cbor = (header_hash || footer_hash).then(|| hash_table(&hashes));
        let hash_frame = aligned_cbor_frame(hash_cbor.as_ref().map_or(0, Vec::len));
        let lengths: Vec<u64> = prepared.iter().map(PreparedObject::frame_len).collect();
        let head_without_index = PREAMBLE_LEN as u64
            + aligned_cbor_frame(meta_cbor.len())
            + if header_hash { hash_frame } else { 0 };
        let index_cbor = (n > 0)
            .then(|| index_fixpoint(head_without_index, &lengths))
            .transpose()?;
        let mut flags = mf::HEADER_METADATA;
        for (on, flag) in [
            (index_cbor.is_some(), mf::HEADER_INDEX),
            (header_hash, mf::HEADER_HASHES),
            (footer_hash, mf::FOOTER_HASHES),
            (opts.hashing, mf::HASHES_PRESENT),
        ] {
            if on {
                flags |= flag;
            }
        }
        let body: u64 = lengths.iter().map(|&l| align_up(l)).sum();
        let total = head_without_index
            + index_cbor
                .as_ref()
                .map_or(0, |c| aligned_cbor_frame(c.len()))
            + body
            + if footer_hash { hash_frame } else { 0 }
            + POSTAMBLE_LEN as u64;
        Ok(Head {
            flags,
            total,
            meta_cbor,
            index_cbor,
            hash_cbor,
            header_hash,
            footer_hash,
        })
    }

    /// Appends the preamble and the header frames, each padded; returns
    /// where the header hash frame starts in `out`.
    fn write(&self, out: &mut Vec<u8>, hashing: bool) -> usize {
        write_preamble(out, self.flags, self.total);
        write_cbor_frame(out, FrameType::HeaderMetadata, &self.meta_cbor, hashing);
        pad(out);
        if let Some(c) = &self.index_cbor {
            write_cbor_frame(out, FrameType::HeaderIndex, c, hashing);
            pad(out);
        }
        let header_hash_at = out.len();
        if self.header_hash {
            self.write_hash_frame(out, FrameType::HeaderHash, hashing);
        }
        header_hash_at
    }

    /// Appends a hash frame of `self.hash_cbor`, padded.
    fn write_hash_frame(&self, out: &mut Vec<u8>, t: FrameType, hashing: bool) {
        write_cbor_frame(out, t, self.hash_cbor.as_deref().unwrap_or(&[]), hashing);
        pad(out);
    }

    /// The footer hash frame (when asked) and the postamble, for a message
    /// whose data frames end at `at`.
    fn tail(&self, at: u64, hashing: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if self.footer_hash {
            self.write_hash_frame(&mut out, FrameType::FooterHash, hashing);
        }
        write_postamble(&mut out, at, self.total);
        out
    }
}

/// The CBOR of a hash table of `hashes`.
fn hash_table(hashes: &[u64]) -> Vec<u8> {
    HashTable {
        algorithm: hash::ALGORITHM.into(),
        hashes: hashes.to_vec(),
    }
    .to_cbor()
}

/// Zero bytes up to the next frame boundary of a buffer holding a message
/// from its start.
fn pad(out: &mut Vec<u8>) {
    let p = padding_after(out.len() as u64);
    out.resize(out.len() + p, 0);
}

fn assemble(
    metadata: &GlobalMetadata,
    prepared: &[PreparedObject<'_>],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut head = Head::plan(metadata, prepared, opts)?;
    let total_len = usize::try_from(head.total)
        .map_err(|_| Error::invalid_input(format!("a {}-byte message is too large", head.total)))?;
    crate::buffer::reserve_cleared(out, total_len)?;
    let header_hash_at = head.write(out, opts.hashing);
    let mut hashes = Vec::with_capacity(prepared.len());
    for p in prepared {
        hashes.push(p.append_frame(opts.hashing, out)?);
        pad(out);
    }
    // Digests of in-place payloads are known once they are written; their
    // hex form has a fixed length, so the header table was written with
    // placeholders and is rewritten in place here.
    if let Some(c) = &mut head.hash_cbor {
        let fresh = hash_table(&hashes);
        debug_assert_eq!(fresh.len(), c.len());
        *c = fresh;
    }
    if head.header_hash && prepared.iter().any(|p| p.in_place.is_some()) {
        let mut frame = Vec::new();
        head.write_hash_frame(&mut frame, FrameType::HeaderHash, opts.hashing);
        out[header_hash_at..header_hash_at + frame.len()].copy_from_slice(&frame);
    }
    let tail = head.tail(out.len() as u64, opts.hashing);
    out.extend_from_slice(&tail);
    debug_assert_eq!(out.len() as u64, head.total);
    Ok(())
}

/// What [`encode_to_inspecting`] calls with each object's index, final
/// descriptor and encoded payload before the object's frame is written;
/// the payload is `None` when it is coded straight into the message by a
/// lossless stage and never held (`spec/pipeline.md` §6.8).
pub type Inspect<'a> = dyn FnMut(usize, &ObjectDescriptor, Option<&[u8]>) -> Result<()> + 'a;

/// Writes a message of `prepared` objects (none in place: every digest is
/// known) straight to `sink`, frame by frame, calling `inspect` with each
/// object's final descriptor and payload before its frame is written; the
/// bytes are those [`assemble`] builds. Returns the message length.
fn write_message(
    metadata: &GlobalMetadata,
    prepared: &[PreparedObject<'_>],
    opts: &EncodeOptions,
    sink: &mut dyn Write,
    inspect: &mut Inspect<'_>,
) -> Result<u64> {
    let head = Head::plan(metadata, prepared, opts)?;
    let mut bytes = Vec::new();
    head.write(&mut bytes, opts.hashing);
    sink.write_all(&bytes)?;
    let mut at = bytes.len() as u64;
    for (i, p) in prepared.iter().enumerate() {
        debug_assert!(p.in_place.is_none());
        let payload = p.streamed.is_none().then_some(&p.encoded.payload[..]);
        inspect(i, &p.descriptor, payload).map_err(|e| e.in_object(i))?;
        p.write_frame(opts.hashing, &mut |b| {
            sink.write_all(b)?;
            at += b.len() as u64;
            Ok(())
        })?;
        let padding = padding_after(at);
        sink.write_all(&[0u8; 8][..padding])?;
        at += padding as u64;
    }
    sink.write_all(&head.tail(at, opts.hashing))?;
    Ok(head.total)
}

/// [`encode`] written straight to `sink` instead of built in memory: the
/// frame lengths are known once every object went through its pipeline, so
/// the preamble, header metadata, index and hash frames are written first
/// and each data frame after them, and the bytes are those [`encode`]
/// returns (`spec/format.md` §11.1). Memory holds the encoded payloads (a
/// payload no stage changed stays borrowed from `objects`, and a large one
/// whose only stage is lz4 is coded twice, for its length and digest and
/// then into `sink`, `spec/pipeline.md` §6.8), never the whole message. Returns the message length. On error part of a message may
/// have been written.
pub fn encode_to(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
    sink: &mut dyn Write,
) -> Result<u64> {
    encode_to_inspecting(metadata, objects, opts, sink, &mut |_, _, _| Ok(()))
}

/// [`encode_to`], calling `inspect(i, descriptor, payload)` with each
/// object's final descriptor and encoded payload (without mask blobs;
/// `None` for a payload coded straight into `sink`, which only a lossless
/// stage is) before its frame is written; an error from it stops the message there,
/// and is reported as an error of object `i`. A caller can so measure what
/// a lossy pipeline did (decoding the payload through
/// [`crate::pipeline::decode_range`]) without a copy of the message.
pub fn encode_to_inspecting(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
    sink: &mut dyn Write,
    inspect: &mut Inspect<'_>,
) -> Result<u64> {
    metadata.check_caller_owned(objects.len())?;
    let defer = Deferral {
        streamed: true,
        ..Deferral::default()
    };
    let prepared = prepare_all(objects, opts, defer)?;
    write_message(metadata, &prepared, opts, sink, inspect)
}

/// [`encode_pre_encoded`] written straight to `sink`, as [`encode_to`]
/// writes: the stored payloads are borrowed, so memory holds no copy of
/// them. Returns the message length.
pub fn encode_pre_encoded_to(
    metadata: &GlobalMetadata,
    objects: &[(&ObjectDescriptor, &[u8])],
    opts: &EncodeOptions,
    sink: &mut dyn Write,
) -> Result<u64> {
    metadata.check_caller_owned(objects.len())?;
    let prepared = prepare_all_pre_encoded(objects, opts)?;
    write_message(metadata, &prepared, opts, sink, &mut |_, _, _| Ok(()))
}

/// Computes the header index CBOR whose own size is consistent with the
/// offsets it holds (`spec/format.md` §11.2).
pub(crate) fn index_fixpoint(head_without_index: u64, lengths: &[u64]) -> Result<Vec<u8>> {
    let offsets_for = |index_cbor_len: usize| {
        let mut cursor = head_without_index + aligned_cbor_frame(index_cbor_len);
        lengths
            .iter()
            .map(|&l| {
                let o = cursor;
                cursor = align_up(cursor + l);
                o
            })
            .collect::<Vec<u64>>()
    };
    let table = |offsets: Vec<u64>| IndexTable {
        offsets,
        lengths: lengths.to_vec(),
    };
    let mut cbor = table(vec![0; lengths.len()]).to_cbor();
    for _ in 0..3 {
        let next = table(offsets_for(cbor.len())).to_cbor();
        if aligned_cbor_frame(next.len()) == aligned_cbor_frame(cbor.len()) {
            return Ok(next);
        }
        cbor = next;
    }
    Err(Error::framing("index CBOR size did not converge"))
}

pub(crate) fn write_preamble(out: &mut Vec<u8>, flags: u16, total: u64) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&WIRE_VERSION.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&total.to_be_bytes());
}

pub(crate) fn postamble_bytes(first_footer: u64, total: u64) -> [u8; POSTAMBLE_LEN] {
    let mut p = [0u8; POSTAMBLE_LEN];
    p[0..8].copy_from_slice(&first_footer.to_be_bytes());
    p[8..16].copy_from_slice(&total.to_be_bytes());
    p[16..24].copy_from_slice(END_MAGIC);
    p
}

fn write_postamble(out: &mut Vec<u8>, first_footer: u64, total: u64) {
    out.extend_from_slice(&postamble_bytes(first_footer, total));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{DecodeOptions, Verify};

    #[test]
    fn default_options_hash_like_new() {
        let (d, n) = (EncodeOptions::default(), EncodeOptions::new());
        assert!(d.hashing);
        assert_eq!(format!("{d:?}"), format!("{n:?}"));
        let desc = ObjectDescriptor::new(crate::Dtype::Uint8, vec![3u64]);
        let msg = encode(&GlobalMetadata::default(), &[(&desc, &[1, 2, 3])], &d).unwrap();
        let strict = DecodeOptions::default().verify(Verify::Require);
        crate::decode(&msg, &strict).expect("every frame carries a digest");
        let bare = EncodeOptions::default().hashing(false);
        let msg = encode(&GlobalMetadata::default(), &[(&desc, &[1, 2, 3])], &bare).unwrap();
        assert!(crate::decode(&msg, &strict).is_err(), "no digest, as asked");
    }
}

#[cfg(test)]
mod pre_encoded_tests {
    use super::*;
    use crate::decode::locate_object;
    use crate::dtype::Dtype;
    use crate::limits::Limits;
    use crate::pipeline::PipelineBuilder;

    fn opts() -> EncodeOptions {
        EncodeOptions::new().provenance(Provenance::fixed("2024-01-01T00:00:00Z", "u"))
    }

    #[test]
    fn a_payload_taken_from_a_message_rewraps_to_the_same_bytes() {
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let d = ObjectDescriptor::new(Dtype::Uint32, vec![4000])
            .with_byte_order(crate::ByteOrder::Little)
            .with_pipeline(&PipelineBuilder::new().zstd());
        let meta = GlobalMetadata::default();
        let msg = encode(&meta, &[(&d, &data)], &opts()).unwrap();
        let o = locate_object(&msg, 0, 0, &Limits::default()).unwrap();
        let written = o.descriptor().clone();
        let payload = o.payload_region().to_vec();
        let again = encode_pre_encoded(&meta, &[(&written, &payload)], &opts()).unwrap();
        assert_eq!(again, msg);
    }

    #[test]
    fn wrong_sizes_and_foreign_codec_keys_are_refused() {
        let meta = GlobalMetadata::default();
        let d = ObjectDescriptor::new(Dtype::Float32, vec![4]);
        let e = encode_pre_encoded(&meta, &[(&d, &[0u8; 12])], &opts()).unwrap_err();
        assert!(
            e.to_string().contains("does not match expected 16 bytes"),
            "{e}"
        );
        let d = d
            .with_param("szip_block_offsets", crate::cbor::Value::Array(vec![]))
            .unwrap();
        let e = encode_pre_encoded(&meta, &[(&d, &[0u8; 16])], &opts()).unwrap_err();
        assert!(
            e.to_string()
                .contains("szip_block_offsets provided but compression"),
            "{e}"
        );
    }
}
