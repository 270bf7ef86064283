//! Streaming encoder: one message written object by object to any
//! `std::io::Write`, with footer index and hash frames.
//! See `spec/format.md` §11.4.

use std::io::{Seek, SeekFrom, Write};

use crate::descriptor::{Map, ObjectDescriptor};
use crate::encode::{
    postamble_bytes, prepare_object, prepare_object_verbatim, prepare_pre_encoded, write_preamble,
    EncodeOptions, HashPolicy, PreparedObject,
};
use crate::error::{Error, Result};
use crate::hash;
use crate::limits::Limits;
use crate::metadata::{GlobalMetadata, Provenance, RESERVED_KEY};
use crate::wire::frame::{padding_after, write_cbor_frame};
use crate::wire::tables::{HashTable, IndexTable};
use crate::wire::{message_flags as mf, FrameType};

/// Writes one message incrementally. Memory stays bounded by one object.
///
/// The preamble's total_length is 0 until [`StreamingEncoder::finish_with_backfill`]
/// patches it on a seekable sink.
///
/// ```
/// use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, StreamingEncoder};
///
/// let mut w = StreamingEncoder::new(Vec::new(), &GlobalMetadata::default(), &EncodeOptions::new())?;
/// for step in 0..3u8 {
///     w.write_object(&ObjectDescriptor::new(Dtype::Uint8, vec![4]), &[step; 4])?;
/// }
/// let (bytes, _len) = w.finish()?;
/// assert_eq!(tgm::decode(&bytes, &Default::default())?.objects.len(), 3);
/// # Ok::<(), tgm::Error>(())
/// ```
pub struct StreamingEncoder<W: Write> {
    sink: W,
    written: u64,
    metadata: GlobalMetadata,
    opts: EncodeOptions,
    offsets: Vec<u64>,
    lengths: Vec<u64>,
    hashes: Vec<u64>,
    descriptors: Vec<ObjectDescriptor>,
    preceders: Vec<Option<Map>>,
    pending_preceder: Option<Map>,
}

impl<W: Write> StreamingEncoder<W> {
    /// Starts a message: writes the preamble and a header metadata frame
    /// holding `metadata` as given.
    pub fn new(sink: W, metadata: &GlobalMetadata, opts: &EncodeOptions) -> Result<Self> {
        if matches!(opts.hash_policy, HashPolicy::Header | HashPolicy::Both) {
            return Err(Error::invalid_argument(
                "a streaming message cannot carry a header hash frame; use HashPolicy::Footer",
            ));
        }
        metadata.check_caller_written()?;
        let mut enc = StreamingEncoder {
            sink,
            written: 0,
            metadata: metadata.clone(),
            opts: opts.clone(),
            offsets: Vec::new(),
            lengths: Vec::new(),
            hashes: Vec::new(),
            descriptors: Vec::new(),
            preceders: Vec::new(),
            pending_preceder: None,
        };
        let mut flags =
            mf::HEADER_METADATA | mf::FOOTER_METADATA | mf::FOOTER_INDEX | mf::PRECEDER_METADATA;
        if opts.hashing && opts.hash_policy != HashPolicy::None {
            flags |= mf::FOOTER_HASHES;
        }
        if opts.hashing {
            flags |= mf::HASHES_PRESENT;
        }
        let mut head = Vec::with_capacity(64);
        write_preamble(&mut head, flags, 0);
        write_cbor_frame(
            &mut head,
            FrameType::HeaderMetadata,
            &metadata.to_cbor(),
            opts.hashing,
        );
        head.resize(head.len() + padding_after(head.len() as u64), 0);
        enc.put(&head)?;
        Ok(enc)
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.sink.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> Result<()> {
        let p = padding_after(self.written);
        self.put(&[0u8; 8][..p])
    }

    /// Writes per-object metadata for the next object, as a preceder frame.
    pub fn write_preceder(&mut self, entry: Map) -> Result<()> {
        if entry.contains_key(RESERVED_KEY) {
            return Err(Error::metadata("a preceder must not contain _reserved_"));
        }
        if self.pending_preceder.is_some() {
            return Err(Error::invalid_argument(
                "two preceders in a row; write an object between them",
            ));
        }
        let wrapped = GlobalMetadata::with_base(vec![entry.clone()]);
        wrapped.check_nesting(Limits::default().max_cbor_depth)?;
        let cbor = wrapped.to_cbor();
        let mut frame = Vec::with_capacity(cbor.len() + 28);
        write_cbor_frame(
            &mut frame,
            FrameType::PrecederMetadata,
            &cbor,
            self.opts.hashing,
        );
        self.put(&frame)?;
        self.pad()?;
        self.pending_preceder = Some(entry);
        Ok(())
    }

    /// Runs the pipeline on one object and writes its data frame.
    pub fn write_object(&mut self, descriptor: &ObjectDescriptor, data: &[u8]) -> Result<()> {
        let index = self.descriptors.len();
        let p = prepare_object(descriptor, data, &self.opts.pipeline, self.opts.hashing)
            .map_err(|e| e.in_object(index))?;
        self.write_prepared(p)
    }

    /// [`StreamingEncoder::write_object`] for an object too large to hold
    /// twice: when its pipeline does nothing (encoding, filter and
    /// compression `none`) and non-finite values are refused, it is
    /// written from `data` in 8 MiB steps, each checked for non-finite
    /// values, hashed and written before the next is read, then reported
    /// to the progress hook as read, so a caller that mapped `data` may
    /// release it as it goes (`spec/pipeline.md` §6.10). A non-finite
    /// value then fails the call with the frame cut short: the caller must
    /// abandon the output. Other objects are written as by `write_object`.
    pub fn write_object_streaming(
        &mut self,
        descriptor: &ObjectDescriptor,
        data: &[u8],
    ) -> Result<()> {
        let index = self.descriptors.len();
        let p = prepare_object_verbatim(descriptor, data, &self.opts.pipeline, self.opts.hashing)
            .map_err(|e| e.in_object(index))?;
        self.write_prepared(p).map_err(|e| match e.kind() {
            crate::ErrorKind::NonFinite => e.in_object(index),
            _ => e,
        })
    }

    /// Writes a data frame around a payload that already went through the
    /// descriptor's pipeline (`spec/format.md` §11.5).
    pub fn write_object_pre_encoded(
        &mut self,
        descriptor: &ObjectDescriptor,
        payload: &[u8],
    ) -> Result<()> {
        let index = self.descriptors.len();
        let p = prepare_pre_encoded(descriptor, payload, self.opts.hashing)
            .map_err(|e| e.in_object(index))?;
        self.write_prepared(p)
    }

    fn write_prepared(&mut self, p: PreparedObject<'_>) -> Result<()> {
        let offset = self.written;
        let hashing = self.opts.hashing;
        let (sink, written) = (&mut self.sink, &mut self.written);
        let mut put = |b: &[u8]| -> Result<()> {
            sink.write_all(b)?;
            *written += b.len() as u64;
            Ok(())
        };
        let hash = if p.verbatim {
            p.write_frame_verbatim(hashing, &self.opts.pipeline.progress, &mut put)?
        } else {
            p.write_frame(hashing, &mut put)?;
            p.hash
        };
        self.pad()?;
        self.offsets.push(offset);
        self.lengths.push(p.frame_len());
        self.hashes.push(hash);
        self.descriptors.push(p.descriptor);
        self.preceders.push(self.pending_preceder.take());
        Ok(())
    }

    /// Number of objects written so far.
    pub fn num_objects(&self) -> usize {
        self.descriptors.len()
    }

    /// Writes the footer frames and the postamble; returns the sink and the
    /// message length.
    pub fn finish(mut self) -> Result<(W, u64)> {
        self.write_footer()?;
        self.sink.flush()?;
        Ok((self.sink, self.written))
    }

    fn write_footer(&mut self) -> Result<()> {
        if self.pending_preceder.is_some() {
            return Err(Error::invalid_argument(
                "a preceder was written but no object followed it",
            ));
        }
        let n = self.descriptors.len();
        if self.metadata.base.len() > n {
            return Err(Error::metadata(format!(
                "metadata base has {} entries but only {n} objects were written",
                self.metadata.base.len()
            )));
        }
        let mut meta = self.metadata.clone();
        let descs: Vec<&ObjectDescriptor> = self.descriptors.iter().collect();
        meta.fill_tensor_info(&descs);
        for (entry, pre) in meta.base.iter_mut().zip(&self.preceders) {
            if let Some(pre) = pre {
                entry.extend(pre.clone());
            }
        }
        meta.reserved = self
            .opts
            .provenance
            .clone()
            .unwrap_or_else(Provenance::now)
            .to_map();
        let hashing = self.opts.hashing;
        let first_footer = self.written;
        let mut tail = Vec::new();
        let frame = |tail: &mut Vec<u8>, t: FrameType, cbor: &[u8]| {
            write_cbor_frame(tail, t, cbor, hashing);
            let p = padding_after(first_footer + tail.len() as u64);
            tail.resize(tail.len() + p, 0);
        };
        frame(&mut tail, FrameType::FooterMetadata, &meta.to_cbor());
        if hashing && n > 0 && self.opts.hash_policy != HashPolicy::None {
            let t = HashTable {
                algorithm: hash::ALGORITHM.into(),
                hashes: self.hashes.clone(),
            };
            frame(&mut tail, FrameType::FooterHash, &t.to_cbor());
        }
        let idx = IndexTable {
            offsets: self.offsets.clone(),
            lengths: self.lengths.clone(),
        };
        frame(&mut tail, FrameType::FooterIndex, &idx.to_cbor());
        self.put(&tail)?;
        let post = postamble_bytes(first_footer, 0);
        self.put(&post)
    }
}

impl<W: Write + Seek> StreamingEncoder<W> {
    /// Like [`StreamingEncoder::finish`], then writes the message length into
    /// the preamble and postamble so readers can skip the message in O(1).
    pub fn finish_with_backfill(mut self) -> Result<(W, u64)> {
        self.write_footer()?;
        let total = self.written;
        let end = self.sink.stream_position()?;
        let start = end
            .checked_sub(total)
            .ok_or_else(|| Error::invalid_argument("sink position is before the message start"))?;
        self.sink.seek(SeekFrom::Start(start + 16))?;
        self.sink.write_all(&total.to_be_bytes())?;
        self.sink.seek(SeekFrom::Start(end - 16))?;
        self.sink.write_all(&total.to_be_bytes())?;
        self.sink.seek(SeekFrom::Start(end))?;
        self.sink.flush()?;
        Ok((self.sink, total))
    }
}
