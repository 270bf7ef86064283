//! The catalogue: a trailing zero-object message that lists every message
//! and object of a file, so that a reader opens the file from one read of
//! its tail. Format, reader rule and writers: `spec/files.md` §9.

use std::collections::BTreeMap;
use std::ops::Range;

use super::source::ByteSource;
use crate::cbor::Value;
use crate::decode::{Message, Verify};
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::metadata::{GlobalMetadata, Provenance};
use crate::wire::header::{Postamble, Preamble};
use crate::wire::message_flags as mf;
use crate::wire::scan::MessageSpan;
use crate::wire::{FrameType, END_MAGIC, MAGIC, MIN_MESSAGE_LEN, POSTAMBLE_LEN, PREAMBLE_LEN};

/// The key under `_extra_` that holds a catalogue (`spec/files.md` §9.1).
pub const CATALOGUE_KEY: &str = "_tgm_catalogue_";

/// The catalogue format version written and the only one read.
pub const CATALOGUE_VERSION: u64 = 1;

/// Bytes of a file's tail read at once to find its catalogue; a larger
/// catalogue costs one more read (`spec/files.md` §9.3).
pub const TAIL_READ: u64 = 8 << 10;

/// Bytes of one message record: offset, length, object count (or
/// [`CATALOGUE_ENTRY`]), preamble flags, metadata index, each a big-endian
/// u64.
const MESSAGE_RECORD: usize = 40;
/// Bytes of one object record: nine big-endian u64 (`spec/files.md` §9.2).
const OBJECT_RECORD: usize = 72;
/// The object count of a message that is itself a catalogue.
const CATALOGUE_ENTRY: u64 = u64::MAX;

/// Where a catalogue says one message lies and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogueMessage {
    /// Absolute offset of the message.
    pub offset: u64,
    /// Length of the message.
    pub len: u64,
    /// The message's preamble flags.
    pub flags: u16,
    /// Index into [`Catalogue::metadata`] (0 for a catalogue message).
    pub metadata: usize,
    /// Its objects; `None` for an earlier catalogue message, which
    /// listings skip.
    pub objects: Option<Vec<CatalogueObject>>,
}

impl CatalogueMessage {
    /// The message's byte span.
    pub fn span(&self) -> MessageSpan {
        MessageSpan {
            offset: self.offset,
            len: self.len,
        }
    }
}

/// One data object of a [`CatalogueMessage`]. Offsets of the frame are
/// from the message start; those of the payload and descriptor from the
/// frame start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueObject {
    /// The data frame: offset from the message start and total length.
    pub frame: (u64, u64),
    /// The payload region (payload and mask blobs): offset from the frame
    /// start and length, i.e. the stored bytes.
    pub payload: (u64, u64),
    /// The descriptor CBOR: offset from the frame start and length.
    pub descriptor: (u64, u64),
    /// The frame's stored XXH3-64 digest, when it carries one.
    pub hash: Option<u64>,
    /// Index into [`Catalogue::descriptors`].
    pub desc: usize,
}

/// A file's catalogue (`spec/files.md` §9): every message before it, with
/// each message's metadata and each object's descriptor, distinct values
/// stored once.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    /// Bytes of the file the catalogue lists: the offset of its own message.
    pub covered: u64,
    /// Every message in `0..covered`, in file order, back to back.
    pub messages: Vec<CatalogueMessage>,
    /// Distinct object descriptors.
    pub descriptors: Vec<ObjectDescriptor>,
    /// Distinct message metadata, as a reader of the message gives it
    /// (one base entry per object, preceders merged).
    pub metadata: Vec<GlobalMetadata>,
}

impl Catalogue {
    /// The listed message at `span` (offset and length), when the
    /// catalogue lists one there.
    pub fn message_at(&self, span: MessageSpan) -> Option<&CatalogueMessage> {
        let i = self
            .messages
            .binary_search_by_key(&span.offset, |m| m.offset)
            .ok()?;
        let m = &self.messages[i];
        (m.objects.is_some() && m.len == span.len).then_some(m)
    }

    /// The metadata of the listed message at `span`.
    pub fn metadata_at(&self, span: MessageSpan) -> Option<&GlobalMetadata> {
        self.metadata.get(self.message_at(span)?.metadata)
    }

    /// The descriptors of the objects of the listed message at `span`.
    pub fn descriptors_at(&self, span: MessageSpan) -> Option<Vec<&ObjectDescriptor>> {
        let objs = self.message_at(span)?.objects.as_ref()?;
        objs.iter().map(|o| self.descriptors.get(o.desc)).collect()
    }

    /// The stored bytes of each object of the listed message at `span`.
    pub fn stored_sizes_at(&self, span: MessageSpan) -> Option<Vec<u64>> {
        let objs = self.message_at(span)?.objects.as_ref()?;
        Some(objs.iter().map(|o| o.payload.1).collect())
    }
}

fn bad(detail: impl Into<String>) -> Error {
    Error::metadata(format!("catalogue: {}", detail.into()))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i * 8..i * 8 + 8]);
    u64::from_be_bytes(a)
}

fn get<'a>(v: &'a Value, key: &str) -> Result<&'a Value> {
    v.get(key).ok_or_else(|| bad(format!("no `{key}`")))
}

fn uint(v: &Value, key: &str) -> Result<u64> {
    get(v, key)?
        .as_u64()
        .ok_or_else(|| bad(format!("`{key}` is not an unsigned integer")))
}

fn bytes_of<'a>(v: &'a Value, key: &str) -> Result<&'a [u8]> {
    match get(v, key)? {
        Value::Bytes(b) => Ok(b),
        _ => Err(bad(format!("`{key}` is not a byte string"))),
    }
}

/// Interns values by their canonical CBOR.
#[derive(Default)]
struct Table {
    seen: BTreeMap<Vec<u8>, usize>,
    values: Vec<Value>,
}

impl Table {
    fn intern(&mut self, v: Value) -> usize {
        let key = crate::cbor::encode_canonical(&v);
        let next = self.values.len();
        *self.seen.entry(key).or_insert_with(|| {
            self.values.push(v);
            next
        })
    }
}

impl Catalogue {
    /// The messages listings show (earlier catalogue messages skipped).
    pub fn listed(&self) -> impl Iterator<Item = &CatalogueMessage> {
        self.messages.iter().filter(|m| m.objects.is_some())
    }

    /// The catalogue of the file `bytes` (held in memory), reusing a
    /// catalogue at its end for the messages it lists; `None` when the
    /// file is not wholly complete messages or holds none.
    pub fn build_for(bytes: &[u8], limits: &Limits) -> Result<Option<Self>> {
        let f = super::TgmFile::from_source(bytes, limits)?;
        Ok(build_for_file(&f, None, limits)?.map(|(cat, _)| cat))
    }

    /// The body's CBOR (`spec/files.md` §9.2).
    pub fn to_body(&self) -> Vec<u8> {
        let mut msgs = Vec::with_capacity(self.messages.len() * MESSAGE_RECORD);
        let mut objs = Vec::new();
        for m in &self.messages {
            let n = m
                .objects
                .as_ref()
                .map_or(CATALOGUE_ENTRY, |o| o.len() as u64);
            for x in [m.offset, m.len, n, u64::from(m.flags), m.metadata as u64] {
                msgs.extend_from_slice(&x.to_be_bytes());
            }
            for o in m.objects.iter().flatten() {
                let fields = [
                    o.frame.0,
                    o.frame.1,
                    o.payload.0,
                    o.payload.1,
                    o.descriptor.0,
                    o.descriptor.1,
                    o.hash.unwrap_or(0),
                    u64::from(o.hash.is_some()),
                    o.desc as u64,
                ];
                for x in fields {
                    objs.extend_from_slice(&x.to_be_bytes());
                }
            }
        }
        let last = self.messages.last().map_or((0, 0), |m| (m.offset, m.len));
        let body = Value::text_map([
            ("version", Value::Uint(CATALOGUE_VERSION)),
            ("covered", Value::Uint(self.covered)),
            (
                "last",
                Value::Array(vec![Value::Uint(last.0), Value::Uint(last.1)]),
            ),
            ("messages", Value::Bytes(msgs)),
            ("objects", Value::Bytes(objs)),
            (
                "descriptors",
                Value::Array(self.descriptors.iter().map(|d| d.to_value()).collect()),
            ),
            (
                "metadata",
                Value::Array(self.metadata.iter().map(|m| m.to_value()).collect()),
            ),
        ]);
        crate::cbor::encode_canonical(&body)
    }

    /// Parses and checks a body on its own: version, records, messages
    /// back to back from offset 0 to `covered`, each object inside its
    /// message and frame, indexes into the tables in range, sizes and
    /// counts under `limits` (`spec/files.md` §9.3).
    pub fn from_body(body: &[u8], limits: &Limits) -> Result<Self> {
        if body.len() as u64 > limits.max_cbor_len {
            return Err(bad("the body is larger than the limits allow"));
        }
        let (v, used) = crate::cbor::parse_one(body, 0, limits.cbor())?;
        if used != body.len() {
            return Err(bad("bytes after the body"));
        }
        let version = uint(&v, "version")?;
        if version != CATALOGUE_VERSION {
            return Err(bad(format!(
                "version {version} (this reader knows {CATALOGUE_VERSION})"
            )));
        }
        let covered = uint(&v, "covered")?;
        let descriptors = get(&v, "descriptors")?
            .as_array()
            .ok_or_else(|| bad("`descriptors` is not an array"))?
            .iter()
            .map(|d| ObjectDescriptor::from_value(d, limits).map_err(|e| bad(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        let metadata = get(&v, "metadata")?
            .as_array()
            .ok_or_else(|| bad("`metadata` is not an array"))?
            .iter()
            .map(|m| {
                let meta = GlobalMetadata::from_value(m).map_err(|e| bad(e.to_string()))?;
                meta.check_nesting(limits.max_cbor_depth)
                    .map_err(|e| bad(e.to_string()))?;
                Ok(meta)
            })
            .collect::<Result<Vec<_>>>()?;
        let last = get(&v, "last")?
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)))
            .ok_or_else(|| bad("`last` is not [offset, length]"))?;
        let recs = bytes_of(&v, "messages")?;
        let orecs = bytes_of(&v, "objects")?;
        if !recs.len().is_multiple_of(MESSAGE_RECORD) || !orecs.len().is_multiple_of(OBJECT_RECORD)
        {
            return Err(bad("records of the wrong size"));
        }
        let mut objects = orecs.chunks_exact(OBJECT_RECORD);
        let mut messages = Vec::with_capacity(recs.len() / MESSAGE_RECORD);
        let mut end = 0u64;
        for (i, r) in recs.chunks_exact(MESSAGE_RECORD).enumerate() {
            let (offset, len, n, flags) = (u64_at(r, 0), u64_at(r, 1), u64_at(r, 2), u64_at(r, 3));
            let meta = usize::try_from(u64_at(r, 4)).unwrap_or(usize::MAX);
            if offset != end {
                return Err(bad(format!("message {i} does not follow the one before")));
            }
            if len < MIN_MESSAGE_LEN as u64 || len > limits.max_message_len {
                return Err(bad(format!("message {i} has a bad length")));
            }
            end = offset
                .checked_add(len)
                .ok_or_else(|| bad(format!("message {i} ends past 2^64")))?;
            let flags = u16::try_from(flags).map_err(|_| bad("flags wider than 16 bits"))?;
            let objs = if n == CATALOGUE_ENTRY {
                None
            } else {
                if n > limits.max_objects as u64 {
                    return Err(bad(format!("message {i} lists too many objects")));
                }
                let frames_end = len - POSTAMBLE_LEN as u64;
                let mut list = Vec::with_capacity((n as usize).min(objects.len()));
                for o in 0..n {
                    let r = objects
                        .next()
                        .ok_or_else(|| bad("fewer object records than listed"))?;
                    let x = |k| u64_at(r, k);
                    let obj = CatalogueObject {
                        frame: (x(0), x(1)),
                        payload: (x(2), x(3)),
                        descriptor: (x(4), x(5)),
                        hash: (x(7) == 1).then_some(x(6)),
                        desc: usize::try_from(x(8)).unwrap_or(usize::MAX),
                    };
                    let inside = |(a, l): (u64, u64), within: u64| {
                        a.checked_add(l).is_some_and(|e| e <= within)
                    };
                    let ok = obj.frame.0 >= PREAMBLE_LEN as u64
                        && inside(obj.frame, frames_end)
                        && inside(obj.payload, obj.frame.1)
                        && inside(obj.descriptor, obj.frame.1)
                        && x(7) <= 1
                        && obj.desc < descriptors.len();
                    if !ok {
                        return Err(bad(format!("object {o} of message {i} is not inside it")));
                    }
                    list.push(obj);
                }
                let fits = metadata
                    .get(meta)
                    .is_some_and(|m| m.base.len() == list.len());
                if !fits {
                    return Err(bad(format!(
                        "message {i} has no metadata of one entry per object"
                    )));
                }
                Some(list)
            };
            messages.push(CatalogueMessage {
                offset,
                len,
                flags,
                metadata: if objs.is_some() { meta } else { 0 },
                objects: objs,
            });
        }
        if objects.next().is_some() {
            return Err(bad("more object records than listed"));
        }
        if end != covered {
            return Err(bad(format!(
                "the messages end at {end}, the catalogue covers {covered}"
            )));
        }
        if messages.last().map_or((0, 0), |m| (m.offset, m.len)) != last {
            return Err(bad("`last` is not the last message listed"));
        }
        Ok(Catalogue {
            covered,
            messages,
            descriptors,
            metadata,
        })
    }

    /// The value stored under `_extra_.`[`CATALOGUE_KEY`]: version,
    /// compression (`zstd` where the library can compress, else `none`),
    /// the body's length, the digest of the stored bytes and those bytes.
    fn to_entry(&self) -> Value {
        let body = self.to_body();
        let len = body.len() as u64;
        let (compression, stored) = match compress(&body) {
            Some(z) if z.len() < body.len() => ("zstd", z),
            _ => ("none", body),
        };
        Value::text_map([
            ("version", Value::Uint(CATALOGUE_VERSION)),
            ("compression", Value::Text(compression.into())),
            ("length", Value::Uint(len)),
            (
                "hash",
                Value::Text(crate::hash::to_hex(crate::hash::xxh3(&stored))),
            ),
            ("body", Value::Bytes(stored)),
        ])
    }

    /// Parses the value stored under `_extra_.`[`CATALOGUE_KEY`], checking
    /// the stored bytes' digest, then the body's length against the limits
    /// and against what a compressed body can decode to, before
    /// decompressing it.
    pub fn from_entry(entry: &Value, limits: &Limits) -> Result<Self> {
        let version = uint(entry, "version")?;
        if version != CATALOGUE_VERSION {
            return Err(bad(format!("entry version {version}")));
        }
        let want = get(entry, "hash")?
            .as_text()
            .and_then(crate::hash::from_hex)
            .ok_or_else(|| bad("`hash` is not 16 hex digits"))?;
        let stored = bytes_of(entry, "body")?;
        if crate::hash::xxh3(stored) != want {
            return Err(bad("the body's digest does not match"));
        }
        let len = uint(entry, "length")?;
        if len > limits.max_cbor_len {
            return Err(bad("the body is larger than the limits allow"));
        }
        match get(entry, "compression")?.as_text() {
            Some("none") if len == stored.len() as u64 => Self::from_body(stored, limits),
            Some("none") => Err(bad("`length` is not the body's length")),
            Some("zstd") => Self::from_body(&decompress(stored, len)?, limits),
            other => Err(bad(format!("compression {other:?} is not known"))),
        }
    }

    /// The catalogue as a message: zero data objects, an empty footer index
    /// and a footer metadata frame whose `_extra_` holds it, fixed
    /// provenance (no time, no UUID), so that the same listing gives the
    /// same bytes (`spec/files.md` §9.1).
    pub fn to_message(&self) -> Result<Vec<u8>> {
        self.to_message_with(&[])
    }

    /// [`Catalogue::to_message`] with `more` keys in the entry beside the
    /// catalogue's own (an archive catalogue's name of its archive,
    /// `spec/files.md` §9.5).
    pub(crate) fn to_message_with(&self, more: &[(&str, Value)]) -> Result<Vec<u8>> {
        let mut entry = self.to_entry();
        if let Value::Map(m) = &mut entry {
            for (k, v) in more {
                m.push((Value::Text((*k).into()), v.clone()));
            }
        }
        let mut meta = GlobalMetadata::default();
        meta.extra.insert(CATALOGUE_KEY.into(), entry);
        let prov = Provenance {
            time: None,
            uuid: None,
            ..Provenance::now()
        };
        crate::encode::encode_footer_indexed_empty(
            &meta,
            &crate::encode::EncodeOptions::new().provenance(prov),
        )
    }
}

/// `body` compressed with zstd, when the library can compress.
fn compress(body: &[u8]) -> Option<Vec<u8>> {
    #[cfg(feature = "zstd")]
    {
        crate::pipeline::codec::compression::zstd::zstd_compress(body, 3).ok()
    }
    #[cfg(not(feature = "zstd"))]
    {
        let _ = body;
        None
    }
}

/// The `len` bytes a zstd body decodes to, refused unless the stream's
/// frame headers allow exactly that length (`spec/pipeline.md` §6.9).
fn decompress(stored: &[u8], len: u64) -> Result<Vec<u8>> {
    #[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
    {
        let most = crate::pipeline::codec::compression::zstd::bound::max_decoded_len(stored)
            .ok_or_else(|| bad("the compressed body is not a zstd stream"))?;
        if most < len {
            return Err(bad("the compressed body cannot hold `length` bytes"));
        }
        let mut out = Vec::new();
        crate::pipeline::codec::compression::zstd::decompress_exact(stored, len as usize, &mut out)
            .map_err(|e| bad(format!("the compressed body: {e}")))?;
        Ok(out)
    }
    #[cfg(not(any(feature = "zstd", feature = "zstd-decode-pure")))]
    {
        let _ = (stored, len);
        Err(bad("this library was built without zstd"))
    }
}

/// Whether `flags` allow a message to be a catalogue (`spec/files.md`
/// §9.1): no header index, and either no footer index (the header form) or
/// no header metadata (the footer form, which no data message writer of
/// the reference produces).
pub(crate) fn may_be_catalogue(flags: u16) -> bool {
    flags & mf::HEADER_INDEX == 0
        && (flags & mf::FOOTER_INDEX == 0 || flags & mf::HEADER_METADATA == 0)
}

/// The largest catalogue message the reader takes.
fn max_catalogue_len(limits: &Limits) -> u64 {
    limits.max_cbor_len.saturating_add(4096)
}

/// The catalogue entry of a message, if it is a catalogue message: zero
/// data objects and `_extra_` holding [`CATALOGUE_KEY`] (`spec/files.md`
/// §9.1), its frame digests checked per `verify`. `Ok(None)`: not a
/// catalogue message.
fn entry_of(bytes: &[u8], base: u64, limits: &Limits, verify: Verify) -> Result<Option<Value>> {
    let msg = Message::parse_with(bytes, base, limits)?;
    if msg.num_objects() != 0 {
        return Ok(None);
    }
    msg.verify(verify)?;
    let mut meta = msg.metadata()?;
    Ok(meta.extra.remove(CATALOGUE_KEY))
}

/// The catalogue entry of the message `bytes` (at `base`) when it is a
/// catalogue message ([`is_catalogue_message`]), its frame digests checked
/// where present; `Ok(None)` when it is not one.
pub(crate) fn catalogue_entry(bytes: &[u8], base: u64, limits: &Limits) -> Result<Option<Value>> {
    let fits = Preamble::peek(bytes).is_some_and(|p| may_be_catalogue(p.flags))
        && bytes.len() as u64 <= max_catalogue_len(limits);
    if !fits {
        return Ok(None);
    }
    entry_of(bytes, base, limits, Verify::IfPresent)
}

/// Whether the message `bytes` (at `base`) is a catalogue message, which
/// listings skip whether or not its catalogue is valid (digests are not
/// checked: what the message is does not depend on them): flags that
/// announce no index, no longer than a catalogue may be, zero objects and
/// the catalogue key (`spec/files.md` §9.1). The one rule of scanning,
/// building and recording.
pub fn is_catalogue_message(bytes: &[u8], base: u64, limits: &Limits) -> bool {
    let fits = Preamble::peek(bytes).is_some_and(|p| may_be_catalogue(p.flags))
        && bytes.len() as u64 <= max_catalogue_len(limits);
    fits && matches!(entry_of(bytes, base, limits, Verify::Off), Ok(Some(_)))
}

/// The catalogue messages among `spans` (flags as read while locating, by
/// offset), read to tell: only messages whose flags announce no index and
/// no longer than a catalogue may be are read. Returns the listed spans and
/// the catalogue spans.
pub(crate) fn split_catalogues(
    src: &dyn ByteSource,
    spans: Vec<MessageSpan>,
    flags: &[(u64, u16)],
    limits: &Limits,
) -> (Vec<MessageSpan>, Vec<MessageSpan>) {
    let mut listed = Vec::with_capacity(spans.len());
    let mut hidden = Vec::new();
    for s in spans {
        let f = match flags.binary_search_by_key(&s.offset, |(p, _)| *p) {
            Ok(i) => Some(flags[i].1),
            Err(_) => read(src, s.offset..s.offset + PREAMBLE_LEN as u64)
                .and_then(|b| Preamble::peek(&b))
                .map(|p| p.flags),
        };
        let candidate = f.is_some_and(may_be_catalogue) && s.len <= max_catalogue_len(limits);
        let is_cat = candidate
            && read(src, s.offset..s.offset + s.len)
                .is_some_and(|b| is_catalogue_message(&b, s.offset, limits));
        if is_cat {
            hidden.push(s);
        } else {
            listed.push(s);
        }
    }
    (listed, hidden)
}

fn read(src: &dyn ByteSource, r: Range<u64>) -> Option<bytes::Bytes> {
    let b = src.read_bytes(r.clone()).ok()?;
    (b.len() as u64 == r.end - r.start).then_some(b)
}

/// The longest first frame of a catalogue message of the footer form: an
/// empty footer index frame (`spec/files.md` §9.1).
const EMPTY_INDEX_FRAME_MAX: u64 = 64;

/// Whether `head` (a message's first 40 bytes) can start a catalogue
/// message of `t` bytes: the preamble declares `t` and flags a catalogue
/// may have, and the first frame is either an empty footer index (the
/// footer form) or a header metadata frame that fills the message but for
/// its padding (the header form).
fn catalogue_head(head: &[u8], t: u64) -> bool {
    let Some(pre) = Preamble::peek(head) else {
        return false;
    };
    let frame = &head[PREAMBLE_LEN..];
    let ftype = u16::from_be_bytes([frame[2], frame[3]]);
    let mut len = [0u8; 8];
    len.copy_from_slice(&frame[8..16]);
    let flen = u64::from_be_bytes(len);
    let room = t - (PREAMBLE_LEN + POSTAMBLE_LEN) as u64;
    let header_form = ftype == FrameType::HeaderMetadata.to_u16() && room - flen.min(room) < 8;
    let footer_form = ftype == FrameType::FooterIndex.to_u16() && flen <= EMPTY_INDEX_FRAME_MAX;
    pre.total_length == t
        && may_be_catalogue(pre.flags)
        && &frame[..2] == b"FR"
        && flen <= room
        && (header_form || footer_form)
}

/// A catalogue found at the end of a source, with its message's span.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) catalogue: Catalogue,
    pub(crate) span: MessageSpan,
}

/// Whether reads past those of the tail cost little: sources that report
/// neither an ETag nor a cached prefix (local files, memory).
fn reads_are_cheap(src: &dyn ByteSource) -> bool {
    let h = src.hints();
    h.etag.is_none() && h.cached_prefix == 0
}

/// The reader rule (`spec/files.md` §9.3): reads the last [`TAIL_READ`]
/// bytes of `src` (and, for a larger catalogue, its first 40 bytes, then
/// the rest of it); takes the catalogue when the file ends with a
/// catalogue message whose digest matches, whose body parses within
/// `limits`, whose covered length is its own offset, and whose last
/// listed message is where it says (its end magic and preamble checked
/// where the bytes were read, or cheap to read). Anything else: `None`,
/// and the caller scans.
pub(crate) fn find(src: &dyn ByteSource, size: u64, limits: &Limits) -> Option<Found> {
    if size < 2 * MIN_MESSAGE_LEN as u64 {
        return None;
    }
    let tail_start = size.saturating_sub(TAIL_READ);
    let tail = read(src, tail_start..size)?;
    let post = Postamble::peek(&tail[tail.len() - POSTAMBLE_LEN..])?;
    let t = post.total_length;
    if t < MIN_MESSAGE_LEN as u64 || t > max_catalogue_len(limits) || t >= size {
        return None;
    }
    let at = size - t;
    if at < MIN_MESSAGE_LEN as u64 {
        return None;
    }
    // The catalogue message and the 8 bytes before it (the end magic of
    // the message it follows).
    let from = at - 8;
    let held: bytes::Bytes = if from >= tail_start {
        tail.slice((from - tail_start) as usize..)
    } else {
        // Before reading the rest of a message larger than the tail, its
        // preamble and first frame header must be a catalogue's: one
        // header metadata frame spanning the message (`spec/files.md`
        // §9.3), so that the last message of a file without a catalogue
        // is never read whole.
        if !catalogue_head(&read(src, at..at + (PREAMBLE_LEN + 16) as u64)?, t) {
            return None;
        }
        let head = read(src, from..tail_start)?;
        let mut v = Vec::with_capacity((size - from) as usize);
        v.extend_from_slice(&head);
        v.extend_from_slice(&tail);
        v.into()
    };
    let (before, bytes) = held.split_at(8);
    if Preamble::peek(bytes)?.total_length != t {
        return None;
    }
    let entry = entry_of(bytes, at, limits, Verify::IfPresent).ok()??;
    let catalogue = Catalogue::from_entry(&entry, limits).ok()?;
    if catalogue.covered != at || before != END_MAGIC {
        return None;
    }
    let last = catalogue.messages.last()?;
    let pre = last.offset..last.offset + PREAMBLE_LEN as u64;
    let preamble = if pre.start >= tail_start {
        let s = (pre.start - tail_start) as usize;
        tail.get(s..s + PREAMBLE_LEN)
            .map(bytes::Bytes::copy_from_slice)
    } else if reads_are_cheap(src) {
        read(src, pre)
    } else {
        None
    };
    if let Some(p) = preamble {
        let ok = p.starts_with(MAGIC)
            && Preamble::peek(&p)
                .is_some_and(|p| matches!(p.total_length, 0) || p.total_length == last.len);
        if !ok {
            return None;
        }
    }
    Some(Found {
        span: MessageSpan { offset: at, len: t },
        catalogue,
    })
}

/// The catalogue of the opened file `f` and where its last listed message
/// ends, reusing `prior` (else the catalogue `f` was opened with): the
/// catalogue messages after that end are left out, those before it kept
/// as catalogue entries. `None` when `f` is not wholly complete messages
/// or holds none.
fn build_for_file<S: ByteSource>(
    f: &super::TgmFile<S>,
    prior: Option<&Catalogue>,
    limits: &Limits,
) -> Result<Option<(Catalogue, u64)>> {
    if f.check_intact().is_err() {
        return Ok(None);
    }
    let content_end = f.spans().last().map_or(0, |s| s.offset + s.len);
    let kept: Vec<MessageSpan> = f
        .catalogue_spans()
        .iter()
        .copied()
        .filter(|c| c.offset < content_end)
        .collect();
    let prior = prior.or(f.catalogue());
    let cat = build(f.source(), f.spans(), &kept, prior, limits)?;
    Ok(cat.map(|c| (c, content_end)))
}

/// Builds the catalogue of the messages `spans` of `src` (`hidden`: the
/// catalogue messages among them), reading each message whole except
/// those `prior` lists at the same place. `Err` when a message does not
/// parse; `Ok(None)` when the messages do not lie back to back from the
/// start or there are none.
pub(crate) fn build(
    src: &dyn ByteSource,
    spans: &[MessageSpan],
    hidden: &[MessageSpan],
    prior: Option<&Catalogue>,
    limits: &Limits,
) -> Result<Option<Catalogue>> {
    let mut all: Vec<(MessageSpan, bool)> = spans
        .iter()
        .map(|s| (*s, false))
        .chain(hidden.iter().map(|s| (*s, true)))
        .collect();
    all.sort_by_key(|(s, _)| s.offset);
    let contiguous = all.iter().try_fold(0u64, |end, (s, _)| {
        (s.offset == end).then_some(s.offset + s.len)
    });
    let Some(covered) = contiguous else {
        return Ok(None);
    };
    if spans.is_empty() {
        return Ok(None);
    }
    let reuse: BTreeMap<(u64, u64), &CatalogueMessage> = prior
        .map(|p| p.messages.iter().map(|m| ((m.offset, m.len), m)).collect())
        .unwrap_or_default();
    let mut out = Builder::default();
    for (s, is_cat) in all {
        if is_cat {
            let bytes = read(src, s.offset..s.offset + PREAMBLE_LEN as u64).ok_or_else(|| {
                Error::truncated("a catalogue message is unreadable").at(s.offset)
            })?;
            out.push_catalogue(s, Preamble::peek(&bytes).map_or(0, |p| p.flags));
            continue;
        }
        if let (Some(m), Some(p)) = (reuse.get(&(s.offset, s.len)), prior) {
            if m.objects.is_some() && out.push_reused(m, p) {
                continue;
            }
        }
        let bytes = src.read_bytes(s.offset..s.offset + s.len)?;
        out.push_message(&bytes, s, limits)?;
    }
    out.finish(covered).map(Some)
}

/// The records of a catalogue, added message by message in file order
/// (`spec/files.md` §9.2): descriptors and metadata interned.
#[derive(Default)]
pub(crate) struct Builder {
    messages: Vec<CatalogueMessage>,
    descriptors: Table,
    metadata: Table,
}

impl Builder {
    /// Adds an earlier catalogue message at `s`.
    pub(crate) fn push_catalogue(&mut self, s: MessageSpan, flags: u16) {
        self.messages.push(CatalogueMessage {
            offset: s.offset,
            len: s.len,
            flags,
            metadata: 0,
            objects: None,
        });
    }

    /// Adds the record `prior` holds for a message at the same place;
    /// false (nothing added) when its indexes do not fit `prior`'s tables.
    pub(crate) fn push_reused(&mut self, m: &CatalogueMessage, prior: &Catalogue) -> bool {
        let Some(objs) = &m.objects else {
            return false;
        };
        let fits = prior.metadata.get(m.metadata).is_some()
            && objs.iter().all(|o| prior.descriptors.get(o.desc).is_some());
        if !fits {
            return false;
        }
        let objects = objs
            .iter()
            .map(|o| CatalogueObject {
                desc: self
                    .descriptors
                    .intern(prior.descriptors[o.desc].to_value()),
                ..o.clone()
            })
            .collect();
        let metadata = self.metadata.intern(prior.metadata[m.metadata].to_value());
        self.messages.push(CatalogueMessage {
            objects: Some(objects),
            metadata,
            ..m.clone()
        });
        true
    }

    /// Adds the message `bytes` at `s`, parsed; only its frames other
    /// than payloads are read, so the payload bytes may be absent (zero).
    pub(crate) fn push_message(
        &mut self,
        bytes: &[u8],
        s: MessageSpan,
        limits: &Limits,
    ) -> Result<()> {
        let msg = Message::parse_with(bytes, s.offset, limits)?;
        let flags = Preamble::peek(bytes).map_or(0, |p| p.flags);
        let mut objects = Vec::with_capacity(msg.num_objects());
        for o in 0..msg.num_objects() {
            let obj = msg.object(o)?;
            let f = obj.frame();
            let frame_abs = f.abs_offset();
            let parts = f.split_data(limits)?;
            let desc_rel =
                (parts.descriptor.as_ptr() as usize - f.bytes().as_ptr() as usize) as u64;
            objects.push(CatalogueObject {
                frame: (frame_abs - s.offset, f.total_len() as u64),
                payload: (obj.payload_offset() - frame_abs, parts.region.len() as u64),
                descriptor: (desc_rel, parts.descriptor.len() as u64),
                hash: f.has_hash().then(|| f.stored_hash()),
                desc: self.descriptors.intern(obj.descriptor().to_value()),
            });
        }
        let metadata = self.metadata.intern(msg.metadata()?.to_value());
        self.messages.push(CatalogueMessage {
            offset: s.offset,
            len: s.len,
            flags,
            metadata,
            objects: Some(objects),
        });
        Ok(())
    }

    /// Whether a message that is not a catalogue was added.
    pub(crate) fn lists_any(&self) -> bool {
        self.messages.iter().any(|m| m.objects.is_some())
    }

    /// The catalogue of the messages added, which cover `0..covered`.
    pub(crate) fn finish(self, covered: u64) -> Result<Catalogue> {
        let descriptors = self
            .descriptors
            .values
            .iter()
            .map(|v| ObjectDescriptor::from_value(v, &Limits::unlimited()))
            .collect::<Result<_>>()?;
        let metadata = self
            .metadata
            .values
            .iter()
            .map(GlobalMetadata::from_value)
            .collect::<Result<_>>()?;
        Ok(Catalogue {
            covered,
            messages: self.messages,
            descriptors,
            metadata,
        })
    }
}

/// Ends the Tensogram file at `path` with a catalogue of its messages
/// (`spec/files.md` §9.4), replacing catalogue messages after its last
/// listed message; returns the catalogue's length. Nothing is written
/// (`None`) to a file that does not start with a message, is not wholly
/// complete messages, or holds none.
pub fn end_with_catalogue(path: &std::path::Path, limits: &Limits) -> Result<Option<u64>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::from(e).with_path(path))?;
    // Appenders hold this lock while they write (`spec/files.md` §5).
    file.lock().map_err(|e| Error::from(e).with_path(path))?;
    end_with_catalogue_in(&file, path, None, limits)
}

/// [`end_with_catalogue`] through `file` (open for writing at `path`),
/// reusing the entries of `prior` for messages it lists at the same place.
pub(crate) fn end_with_catalogue_in(
    file: &std::fs::File,
    path: &std::path::Path,
    prior: Option<&Catalogue>,
    limits: &Limits,
) -> Result<Option<u64>> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut magic = [0u8; 8];
    let mut r = file;
    r.seek(SeekFrom::Start(0))?;
    if r.read_exact(&mut magic).is_err() || &magic != MAGIC {
        return Ok(None);
    }
    // Mapped: parsing a message touches its frame headers, metadata and
    // descriptors, not its payloads.
    let f = super::TgmFile::open_with(path, super::Backend::Mmap, limits)?;
    let Some((cat, content_end)) = build_for_file(&f, prior, limits)? else {
        return Ok(None);
    };
    let msg = cat.to_message()?;
    drop(f);
    let mut w = file;
    w.set_len(content_end)?;
    w.seek(SeekFrom::Start(content_end))?;
    w.write_all(&msg)?;
    w.sync_data()?;
    Ok(Some(msg.len() as u64))
}
