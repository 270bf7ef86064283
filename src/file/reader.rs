//! [`TgmFile`]: the messages of a file or any other byte source, located
//! and read object by object. See `spec/files.md` §2–§4 and §7.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::catalogue::split_catalogues;
use super::index::{index_messages_with, Passes, TornTail};
use super::layout::{from_hex, to_hex, FileLayout, MessageLayout, ObjectLayout, LAYOUT_VERSION};
use super::local::{Backend, LocalFile};
use super::partial::SparseFrame;
use super::ranges::Readahead;
use super::source::ByteSource;
use crate::decode::{DecodeOptions, DecodedObject, Message, Object, Verify};
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::metadata::GlobalMetadata;
use crate::wire::frame::Frame;
use crate::wire::header::Preamble;
use crate::wire::locate::{header_metadata, locate_index, IndexedFrame, MessageAt, MessageIndex};
use crate::wire::scan::MessageSpan;
use crate::wire::{POSTAMBLE_LEN, PREAMBLE_LEN};

/// The messages of a byte source, located, none decoded: a path through
/// [`TgmFile::open`] (a memory map by default, [`LocalFile`]), or memory,
/// a shared mapping, an open file or a remote store through
/// [`TgmFile::from_source`]. Opening reads a few bytes per message; each
/// message's index is kept once read, so that reading object *i* of
/// message *m* parses its preamble, index and frame header once per
/// handle and then reads that object's frame only. A source in memory
/// (a mapping, `Bytes`) is borrowed, not copied ([`TgmFile::object_slice`]).
/// `TgmFile<Box<dyn ByteSource>>` holds any source behind one type.
///
/// `TgmFile` is `Send + Sync` when its source is: threads may decode
/// different objects at once. See `spec/files.md` §7 and `spec/remote.md`.
pub struct TgmFile<S = LocalFile> {
    src: S,
    size: u64,
    spans: Vec<MessageSpan>,
    located: Vec<Located>,
    torn: Option<TornTail>,
    /// Catalogue messages (`spec/files.md` §9.1): complete messages that
    /// listings skip.
    hidden: Vec<MessageSpan>,
    /// The catalogue the file was opened from, if any.
    catalogue: Option<Arc<super::catalogue::Catalogue>>,
    limits: Limits,
    /// Bytes the last footer-indexed message listed needed from its end:
    /// the next one's first read (`spec/remote.md` §3).
    tail_hint: AtomicU64,
    /// The metadata of the messages read last, most recent last.
    metadata_cache: MetadataCache,
}

impl<S: std::fmt::Debug> std::fmt::Debug for TgmFile<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TgmFile")
            .field("source", &self.src)
            .field("size", &self.size)
            .field("messages", &self.spans.len())
            .field("torn", &self.torn)
            .finish()
    }
}

impl TgmFile<LocalFile> {
    /// Opens and indexes `path` through a memory map, with default limits.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, Backend::Mmap, &Limits::default())
    }

    /// Opens with an explicit backend and limits. The cost is proportional to
    /// the number of messages; only damaged or streaming regions are scanned.
    pub fn open_with(path: impl AsRef<Path>, backend: Backend, limits: &Limits) -> Result<Self> {
        Self::from_source(LocalFile::open(path, backend)?, limits)
    }

    /// Re-reads the file's length (mapping it again with
    /// [`Backend::Mmap`]) and locates the messages completed since the
    /// last look, for following a file another writer appends to; what was
    /// learnt of earlier messages is kept. A file that shrank is located
    /// again from its start.
    pub fn refresh(&mut self) -> Result<()> {
        let start = self.spans.last().map_or(0, |s| s.offset + s.len);
        self.src.reopen(start)?;
        self.locate_again()
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        self.src.path()
    }
}

/// Compares a metadata value with its text form (`2t`, `12`, `0.5`, `true`).
pub fn value_matches(v: &crate::cbor::Value, text: &str) -> bool {
    use crate::cbor::Value;
    match v {
        Value::Text(t) => t == text,
        Value::Uint(_) | Value::Nint(_) => {
            v.as_i64().map(|i| i.to_string()) == Some(text.to_string())
                || text.parse::<u64>().ok() == v.as_u64()
        }
        Value::Float(f) => text.parse::<f64>().ok() == Some(*f),
        Value::Bool(b) => text == if *b { "true" } else { "false" },
        _ => false,
    }
}

/// Bytes of a source: borrowed when the source is in memory (a mapping),
/// else the buffer the source read, shared rather than copied
/// ([`TgmFile::message_bytes`]).
#[derive(Debug, Clone)]
pub struct MessageBytes<'a>(Held<'a>);

#[derive(Debug, Clone)]
enum Held<'a> {
    Borrowed(&'a [u8]),
    Read(bytes::Bytes),
}

impl Deref for Held<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Held::Borrowed(b) => b,
            Held::Read(b) => b,
        }
    }
}

impl Deref for MessageBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// Compares the bytes, however they are held.
impl PartialEq for MessageBytes<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for MessageBytes<'_> {}

impl PartialEq<[u8]> for MessageBytes<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl AsRef<[u8]> for MessageBytes<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl<'a> MessageBytes<'a> {
    /// The bytes as a shared buffer: what a source read is handed over
    /// as is; bytes borrowed from memory are copied once.
    pub fn into_bytes(self) -> bytes::Bytes {
        match self.0 {
            Held::Borrowed(b) => bytes::Bytes::copy_from_slice(b),
            Held::Read(b) => b,
        }
    }

    /// The bytes in an owned vector (no copy when the read buffer is not
    /// shared with anything else).
    pub fn into_owned(self) -> Vec<u8> {
        match self.0 {
            Held::Borrowed(b) => b.to_vec(),
            Held::Read(b) => Vec::from(b),
        }
    }

    /// The bytes borrowed from a source in memory, else owned.
    pub fn into_cow(self) -> Cow<'a, [u8]> {
        match self.0 {
            Held::Borrowed(b) => Cow::Borrowed(b),
            read => Cow::Owned(MessageBytes(read).into_owned()),
        }
    }
}

/// Bytes a remote source reads at once while locating messages (its
/// default `RemoteOptions::readahead`): the first window of the
/// concurrent scan from both ends, which doubles while messages turn out
/// small (`spec/remote.md` §3.1). 0 reads exactly what each hop needs,
/// one request per message.
pub const DEFAULT_READAHEAD: u64 = 64 << 10;

/// The messages of `src` (of `size` bytes) from `start`, reading exactly
/// what each hop needs: their spans, what was learnt of each on the way
/// (its preamble flags; its index when it lies in the source's cached
/// prefix), and any torn tail. A source that fails as a whole is an error.
fn locate(src: &dyn ByteSource, size: u64, start: u64, limits: &Limits) -> Result<LocatedAll> {
    let hops = locate_hops(src, size, start, limits, &mut Passes::default());
    if let Some(e) = hops.failure {
        return Err(e);
    }
    let (spans, hidden) = split_catalogues(src, hops.spans, &hops.flags, limits);
    let located = located_of(src, size, &spans, hops.flags, limits);
    Ok(LocatedAll {
        spans,
        located,
        torn: hops.torn,
        hidden,
    })
}

/// What locating the messages of a source found: the listed messages and
/// what was learnt of each, the torn tail, and the catalogue messages
/// (`spec/files.md` §9.1), which are not listed.
#[derive(Debug)]
pub(super) struct LocatedAll {
    pub(super) spans: Vec<MessageSpan>,
    pub(super) located: Vec<Located>,
    pub(super) torn: Option<TornTail>,
    pub(super) hidden: Vec<MessageSpan>,
}

/// What hopping over the messages of a source found ([`locate_hops`]).
#[derive(Debug, Default)]
pub(super) struct Hops {
    pub(super) spans: Vec<MessageSpan>,
    /// The preamble flags read at each hop, by offset.
    pub(super) flags: Vec<(u64, u16)>,
    pub(super) torn: Option<TornTail>,
    /// The first failure of the source itself.
    pub(super) failure: Option<Error>,
    /// Inside a step over fetched bytes ([`super::fetched`]): the last
    /// hop that began before the step's first miss. Every span before it
    /// was found from fetched bytes alone, and hopping on from it reads
    /// what hopping on from there in one pass would.
    pub(super) clean_until: u64,
}

/// Hops over the messages of `src` from `start`, reading no more than
/// each hop needs (no readahead): spans, flags, torn tail and failure.
/// Frame walks and scans of damage go on from where those of earlier
/// `passes` stopped.
pub(super) fn locate_hops(
    src: &dyn ByteSource,
    size: u64,
    start: u64,
    limits: &Limits,
    passes: &mut Passes,
) -> Hops {
    let ra = Readahead::new(src, size, 0);
    let mut flags = Vec::new();
    let mut clean_until = start;
    let mut at_hop = |p, head: Option<&[u8; PREAMBLE_LEN]>| {
        if !super::fetched::missed() {
            clean_until = p;
        }
        if let Some(pre) = head.and_then(|h| Preamble::peek(h)) {
            flags.push((p, pre.flags));
        }
    };
    let (spans, torn) = index_messages_with(&ra, start, limits, &mut at_hop, passes);
    Hops {
        spans,
        flags,
        torn,
        failure: ra.take_failure(),
        clean_until,
    }
}

/// The messages a concurrent scan located, with what it kept of each,
/// and those the locator found after it ([`super::sweep`]).
#[derive(Debug, Default)]
pub(super) struct SweptParts {
    pub(super) spans: Vec<MessageSpan>,
    pub(super) flags: Vec<(u64, u16)>,
    pub(super) kept: std::collections::BTreeMap<u64, Kept>,
    pub(super) torn: Option<TornTail>,
}

impl SweptParts {
    pub(super) fn of(found: Vec<super::sweep::Found>) -> Self {
        let mut me = SweptParts::default();
        for f in found {
            me.spans.push(f.span);
            me.flags.push((f.span.offset, f.flags));
            me.kept.insert(f.span.offset, f.kept);
        }
        me
    }

    /// Adds what the locator found after the scan.
    pub(super) fn extend(&mut self, hops: Hops) {
        self.spans.extend(hops.spans);
        self.flags.extend(hops.flags);
        self.torn = hops.torn;
    }

    /// The listed messages, what is known of each, and the catalogue
    /// messages, reading `src` for catalogue candidates and prefix
    /// indexes ([`located_of`]); the kept parts are not taken yet.
    pub(super) fn split(
        &self,
        src: &dyn ByteSource,
        size: u64,
        limits: &Limits,
    ) -> (Vec<MessageSpan>, Vec<Located>, Vec<MessageSpan>) {
        let (spans, hidden) = split_catalogues(src, self.spans.clone(), &self.flags, limits);
        let located = located_of(src, size, &spans, self.flags.clone(), limits);
        (spans, located, hidden)
    }

    /// [`Self::split`], each listed message taking what the scan kept.
    pub(super) fn listed(
        &mut self,
        src: &dyn ByteSource,
        size: u64,
        limits: &Limits,
    ) -> (Vec<MessageSpan>, Vec<Located>, Vec<MessageSpan>) {
        let (spans, mut located, hidden) = self.split(src, size, limits);
        self.adopt(&spans, &mut located);
        (spans, located, hidden)
    }

    /// Gives each of `located` (of `spans`) what the scan kept of it.
    pub(super) fn adopt(&mut self, spans: &[MessageSpan], located: &mut [Located]) {
        for (s, l) in spans.iter().zip(located) {
            if let Some(k) = self.kept.remove(&s.offset) {
                l.adopt(k);
            }
        }
    }
}

/// What opening learnt of each of `spans` ([`Located`]): its preamble
/// flags from `flags` (by offset) and its index where the source's cached
/// prefix holds it.
pub(super) fn located_of(
    src: &dyn ByteSource,
    size: u64,
    spans: &[MessageSpan],
    flags: Vec<(u64, u16)>,
    limits: &Limits,
) -> Vec<Located> {
    let mut located = indexes_in_prefix(src, size, spans, limits);
    let mut flags = flags.into_iter().peekable();
    for (s, l) in spans.iter().zip(&mut located) {
        while flags.peek().is_some_and(|(p, _)| *p < s.offset) {
            flags.next();
        }
        l.flags = flags.next_if(|(p, _)| *p == s.offset).map(|(_, f)| f);
    }
    located
}

/// What opening knows of each of `spans`: the index of every message
/// whose header index lies in the bytes the source holds already
/// ([`SourceHints::cached_prefix`](super::SourceHints::cached_prefix)), found without a request; the others'
/// are read when first needed.
fn indexes_in_prefix(
    src: &dyn ByteSource,
    size: u64,
    spans: &[MessageSpan],
    limits: &Limits,
) -> Vec<Located> {
    let end = src.hints().cached_prefix.min(size);
    let only = super::ranges::PrefixOnly { src, end };
    spans
        .iter()
        .map(|s| {
            let l = Located::default();
            if s.offset < end {
                let at = MessageAt::of(*s, size);
                let ix = locate_index(
                    &only as &dyn ByteSource,
                    at,
                    Some(s.len),
                    end - s.offset,
                    limits,
                )
                .ok()
                .flatten()
                .filter(|ix| ix.frames_end + POSTAMBLE_LEN as u64 == s.len);
                if ix.is_some() {
                    let _ = l.index.set(ix);
                }
            }
            l
        })
        .collect()
}

/// What a [`TgmFile`] knows about one message.
#[derive(Debug, Default)]
pub(super) struct Located {
    /// Its index, read while locating (or from a layout), else when an
    /// object of it is first asked for; `None` inside when it has none.
    index: OnceLock<Option<MessageIndex>>,
    /// Each object's descriptor CBOR and stored digest, once read (or from
    /// a layout).
    envelopes: OnceLock<Vec<Envelope>>,
    /// Its preamble flags, when opening read its preamble.
    flags: Option<u16>,
    /// Read from its end once listed (footer-indexed messages of sources
    /// not in memory): its footer metadata frame (absolute offset and
    /// bytes), if any; `None` inside when that read found no footer index.
    footer: OnceLock<Option<Option<(u64, bytes::Bytes)>>>,
    /// The first bytes of the message (its head window), kept by the
    /// concurrent scan that read them (`spec/remote.md` §3.1): its
    /// metadata is read from them without a request.
    head: Option<bytes::Bytes>,
}

impl Located {
    /// Takes what the concurrent scan kept of the message.
    pub(super) fn adopt(&mut self, kept: Kept) {
        if let Some(ix) = kept.index {
            let _ = self.index.set(Some(ix));
            if let Some(env) = kept.envelopes {
                let _ = self.envelopes.set(env);
            }
        }
        self.head = kept.head;
    }
}

/// What the concurrent scan kept of one message it read ([`keep`]).
#[derive(Debug, Default)]
pub(crate) struct Kept {
    index: Option<MessageIndex>,
    envelopes: Option<Vec<Envelope>>,
    head: Option<bytes::Bytes>,
}

/// What a listing needs of the message at `span`, from the bytes `held`
/// (reads of bytes not held fail): its index, its first `head_window`
/// bytes and its objects' envelopes, each when held; the bytes copied
/// are taken from `budget`, and nothing is copied beyond it.
pub(crate) fn keep(
    held: &dyn ByteSource,
    span: MessageSpan,
    head_window: u64,
    limits: &Limits,
    budget: &mut u64,
) -> Kept {
    let at = MessageAt::of(span, span.offset + span.len);
    let index = locate_index(held, at, Some(span.len), head_window, limits)
        .ok()
        .flatten()
        .filter(|ix| ix.frames_end + POSTAMBLE_LEN as u64 == span.len);
    let w = head_window.max(PREAMBLE_LEN as u64).min(span.len);
    let mut take = |n: u64| {
        let ok = n <= *budget;
        if ok {
            *budget -= n;
        }
        ok
    };
    let head = held
        .read_bytes(span.offset..span.offset + w)
        .ok()
        .filter(|_| take(w))
        .map(|b| bytes::Bytes::copy_from_slice(&b));
    let envelopes = index
        .as_ref()
        .and_then(|ix| read_envelopes(held, span, ix, limits).ok())
        .filter(|env| {
            let n = env
                .iter()
                .map(|e| e.descriptor.as_ref().map_or(0, Vec::len) as u64);
            take(n.sum::<u64>() + 32 * env.len() as u64)
        });
    Kept {
        index,
        envelopes,
        head,
    }
}

/// A data frame's descriptor CBOR and stored digest.
#[derive(Debug, Clone, Default)]
struct Envelope {
    descriptor: Option<Vec<u8>>,
    hash: Option<u64>,
    /// Bytes of the frame's payload region (payload and mask blobs).
    stored: Option<u64>,
}

/// Messages whose metadata [`TgmFile::metadata`] keeps parsed: reading
/// the objects of one message after another parses each message's
/// metadata once, and memory stays bounded whatever the file holds.
const METADATA_CACHE_LEN: usize = 8;

/// Parsed metadata of recently read messages, keyed by message and digest
/// policy (a digest-requiring read is not served by a lenient one).
#[derive(Debug, Default)]
struct MetadataCache(Mutex<VecDeque<(usize, Verify, Arc<GlobalMetadata>)>>);

impl MetadataCache {
    fn get(&self, m: usize, verify: Verify) -> Option<Arc<GlobalMetadata>> {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let at = q.iter().position(|(i, v, _)| *i == m && *v == verify)?;
        let hit = q.remove(at)?;
        let meta = hit.2.clone();
        q.push_back(hit);
        Some(meta)
    }

    fn put(&self, m: usize, verify: Verify, meta: Arc<GlobalMetadata>) {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= METADATA_CACHE_LEN {
            q.pop_front();
        }
        q.push_back((m, verify, meta));
    }

    fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

impl<S: ByteSource> TgmFile<S> {
    /// Locates the messages of `src` with the source's own readahead
    /// ([`SourceHints::readahead`](super::SourceHints::readahead): 0 for local sources, the configured
    /// window for remote ones).
    pub fn from_source(src: S, limits: &Limits) -> Result<Self> {
        let ra = src.hints().readahead;
        Self::from_source_with_readahead(src, limits, ra)
    }

    /// Locates the messages of `src` reading `readahead` bytes at a time,
    /// after one read of its tail: when that ends with a valid catalogue,
    /// the messages are taken from it and nothing else is read
    /// (`spec/files.md` §9.3).
    /// Unreadable bytes are damage (a torn tail) as for any file, but a
    /// source that fails as a whole (a remote object not found, refused,
    /// changed, or not answering) is an error.
    /// With a readahead, each message's header or footer index is read on
    /// the way (usually from the window that holds its preamble) and kept,
    /// so that reading an object later reads its frame only; with 0,
    /// exactly the bytes each hop needs are read and indexes are read
    /// when objects are asked for.
    pub fn from_source_with_readahead(src: S, limits: &Limits, readahead: u64) -> Result<Self> {
        let size = src.len()?;
        if readahead == 0 {
            if let Some(found) = super::catalogue::find(&src, size, limits) {
                return Ok(Self::from_found(src, size, found, limits));
            }
            return Self::scan_with_readahead(src, size, limits, 0);
        }
        // The tail read looking for a catalogue is where the scan's back
        // starts: kept, not read again.
        let rec = super::gathered::Recording::new(&src, super::sweep::MAX_WINDOW);
        let found = super::catalogue::find(&rec, size, limits);
        let seen = rec.into_seen();
        if let Some(found) = found {
            return Ok(Self::from_found(src, size, found, limits));
        }
        Self::scan_seen(src, size, limits, readahead, seen)
    }

    /// Opens `src` with `cat`, its catalogue kept apart from it
    /// (`spec/files.md` §9.5): when `src` is still the archive `cat` names
    /// (length, then ETag or the digests of its first and last bytes), its
    /// messages are taken from `cat`, reading nothing else; otherwise it is
    /// opened as [`Self::from_source`] does, and the second value says why
    /// `cat` was not taken.
    pub fn from_source_catalogued(
        src: S,
        cat: &super::archive_catalogue::ArchiveCatalogue,
        limits: &Limits,
    ) -> Result<(Self, Option<String>)> {
        match cat.archive.check(&src) {
            Ok(()) => {
                let size = cat.archive.size;
                let f = Self::from_catalogue(src, size, cat.catalogue.clone(), None, limits);
                Ok((f, None))
            }
            Err(why) => Ok((Self::from_source(src, limits)?, Some(why))),
        }
    }

    /// [`Self::from_source_with_readahead`] without looking for a
    /// catalogue: the messages of `src` (`size` bytes) located by hopping
    /// and scanning (`spec/files.md` §2).
    pub(super) fn scan_with_readahead(
        src: S,
        size: u64,
        limits: &Limits,
        readahead: u64,
    ) -> Result<Self> {
        Self::scan_seen(src, size, limits, readahead, Vec::new())
    }

    /// [`Self::scan_with_readahead`], the bytes `seen` read already: with
    /// a readahead, the concurrent scan from both ends
    /// (`spec/remote.md` §3.1), then the locator from where the front
    /// stopped, if it did, reading what each hop needs (as the
    /// asynchronous reader's resumed steps do).
    fn scan_seen(
        src: S,
        size: u64,
        limits: &Limits,
        readahead: u64,
        mut seen: Vec<(u64, bytes::Bytes)>,
    ) -> Result<Self> {
        if readahead == 0 {
            let all = locate(&src, size, 0, limits)?;
            return Ok(
                Self::assemble(src, size, all.spans, all.located, all.torn, limits)
                    .with_hidden(all.hidden),
            );
        }
        let h = src.hints();
        let prefix = h.cached_prefix.min(size);
        if prefix > 0 {
            if let Ok(b) = src.read_bytes(0..prefix) {
                seen.push((0, b));
            }
        }
        let sweep = super::sweep::Sweep::new(size, limits, readahead, h.head_window, seen);
        let swept = super::sweep::run(&src, sweep)?;
        let mut parts = SweptParts::of(swept.found);
        if let Some(at) = swept.resume_at {
            let hops = locate_hops(&src, size, at, limits, &mut Passes::default());
            if let Some(e) = hops.failure {
                return Err(e);
            }
            parts.extend(hops);
        }
        let over = super::gathered::Overlay {
            held: &swept.candidates,
            src: &src,
        };
        let (spans, located, hidden) = parts.listed(&over, size, limits);
        Ok(Self::assemble(src, size, spans, located, parts.torn, limits).with_hidden(hidden))
    }

    /// The file as the catalogue found at its end lists it
    /// ([`Self::from_catalogue`]), that catalogue's own message not listed.
    pub(super) fn from_found(
        src: S,
        size: u64,
        found: super::catalogue::Found,
        limits: &Limits,
    ) -> Self {
        Self::from_catalogue(src, size, found.catalogue, Some(found.span), limits)
    }

    /// The file as its catalogue lists it (`spec/files.md` §9.3): each
    /// message's span, preamble flags and index from the catalogue, its
    /// data frames checked when read; the catalogue message not listed.
    pub(super) fn from_catalogue(
        src: S,
        size: u64,
        cat: super::catalogue::Catalogue,
        own_span: Option<MessageSpan>,
        limits: &Limits,
    ) -> Self {
        let mut spans = Vec::with_capacity(cat.messages.len());
        let mut located = Vec::with_capacity(cat.messages.len());
        let mut hidden = Vec::new();
        for m in &cat.messages {
            let Some(objs) = &m.objects else {
                hidden.push(m.span());
                continue;
            };
            spans.push(m.span());
            let l = Located {
                flags: Some(m.flags),
                ..Located::default()
            };
            let _ = l.index.set(Some(MessageIndex {
                offsets: objs.iter().map(|o| o.frame.0).collect(),
                lengths: objs.iter().map(|o| o.frame.1).collect(),
                index_frame_at: m.offset,
                frames_end: m.len - POSTAMBLE_LEN as u64,
            }));
            located.push(l);
        }
        hidden.extend(own_span);
        let mut f = Self::assemble(src, size, spans, located, None, limits).with_hidden(hidden);
        f.catalogue = Some(Arc::new(cat));
        f
    }

    /// Sets the catalogue messages found while locating.
    pub(super) fn with_hidden(mut self, hidden: Vec<MessageSpan>) -> Self {
        self.hidden = hidden;
        self
    }

    pub(super) fn assemble(
        src: S,
        size: u64,
        spans: Vec<MessageSpan>,
        located: Vec<Located>,
        torn: Option<TornTail>,
        limits: &Limits,
    ) -> Self {
        TgmFile {
            src,
            size,
            spans,
            located,
            torn,
            hidden: Vec::new(),
            catalogue: None,
            limits: limits.clone(),
            tail_hint: AtomicU64::new(0),
            metadata_cache: MetadataCache::default(),
        }
    }

    /// Re-reads the source's length and locates the messages completed
    /// since the last look, for a source that reads the file as it is now
    /// (a file read by positioned reads, [`Backend::Pread`]); what was
    /// learnt of earlier messages is kept, and a source that shrank is
    /// located again from its start. [`TgmFile::refresh`] maps a mapped
    /// file again first.
    pub fn locate_again(&mut self) -> Result<()> {
        let size = self.src.len()?;
        if size < self.size {
            self.spans.clear();
            self.located.clear();
            self.hidden.clear();
            self.metadata_cache.clear();
            // The file was cut or rewritten: its catalogue no longer
            // describes it.
            self.catalogue = None;
        }
        // From the end of the last listed message: a catalogue after it
        // may have been cut by an append since (`spec/files.md` §9.4).
        let start = self.spans.last().map_or(0, |s| s.offset + s.len);
        self.hidden.retain(|h| h.offset < start);
        let all = locate(&self.src, size, start, &self.limits)?;
        self.located.extend(all.located);
        self.spans.extend(all.spans);
        self.hidden.extend(all.hidden);
        self.torn = all.torn;
        self.size = size;
        Ok(())
    }

    /// Opens `src` from a shipped layout, without reading it: the layout is
    /// checked against the source's length and ETag and bounded by
    /// `limits`, and each frame is checked against it when read.
    pub fn from_layout(src: S, layout: &FileLayout, limits: &Limits) -> Result<Self> {
        let size = src.len()?;
        layout.validate(size, src.hints().etag.as_deref(), limits)?;
        let mut spans = Vec::with_capacity(layout.messages.len());
        let mut located = Vec::with_capacity(layout.messages.len());
        for m in &layout.messages {
            spans.push(MessageSpan {
                offset: m.offset,
                len: m.len,
            });
            let l = Located::default();
            if let Some(objs) = &m.objects {
                let _ = l.index.set(Some(MessageIndex {
                    offsets: objs.iter().map(|o| o.offset).collect(),
                    lengths: objs.iter().map(|o| o.len).collect(),
                    index_frame_at: m.offset,
                    frames_end: m.len - POSTAMBLE_LEN as u64,
                }));
                if objs.iter().all(|o| o.descriptor.is_some()) {
                    let env = objs
                        .iter()
                        .map(|o| {
                            Ok(Envelope {
                                descriptor: o.descriptor.as_deref().map(from_hex).transpose()?,
                                hash: o.hash,
                                stored: None,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let _ = l.envelopes.set(env);
                }
            }
            located.push(l);
        }
        Ok(Self::assemble(src, size, spans, located, None, limits))
    }

    /// The layout located: message spans, each indexed message's data
    /// frames with their descriptors and digests (read once, one request
    /// per object not read before), the source's length and ETag.
    pub fn layout(&self) -> Result<FileLayout> {
        let mut messages = Vec::with_capacity(self.spans.len());
        for (m, s) in self.spans.iter().enumerate() {
            let objects = match self.index(m) {
                Some(ix) => {
                    let env = self.envelopes(m)?;
                    Some(
                        (0..ix.len())
                            .map(|o| ObjectLayout {
                                offset: ix.offsets[o],
                                len: ix.lengths[o],
                                descriptor: env[o].descriptor.as_deref().map(to_hex),
                                hash: env[o].hash,
                            })
                            .collect(),
                    )
                }
                None => None,
            };
            messages.push(MessageLayout {
                offset: s.offset,
                len: s.len,
                objects,
            });
        }
        Ok(FileLayout {
            version: LAYOUT_VERSION,
            source_len: self.size,
            etag: self.src.hints().etag,
            messages,
        })
    }

    /// The source read.
    pub fn source(&self) -> &S {
        &self.src
    }

    /// Length of the source when it was located.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        &self.spans
    }

    /// Number of complete messages.
    pub fn num_messages(&self) -> usize {
        self.spans.len()
    }

    /// The catalogue messages of the file (`spec/files.md` §9.1):
    /// complete messages that are not listed.
    pub fn catalogue_spans(&self) -> &[MessageSpan] {
        &self.hidden
    }

    /// The catalogue the file was opened from, when its tail held a valid
    /// one (`spec/files.md` §9.3).
    pub fn catalogue(&self) -> Option<&super::catalogue::Catalogue> {
        self.catalogue.as_deref()
    }

    /// Trailing bytes that form no complete message.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// The catalogue and message `m`'s offset, when the file was opened
    /// from a catalogue: metadata, descriptors and stored sizes are then
    /// answered from it without reading the message (`spec/files.md` §9.3).
    fn listed(&self, m: usize) -> Option<(&super::catalogue::Catalogue, MessageSpan)> {
        let c = self.catalogue.as_deref()?;
        Some((c, *self.spans.get(m)?))
    }

    /// Every byte range outside the complete messages, in file order:
    /// gaps between messages and the torn tail (`spec/files.md` §2).
    pub fn damage(&self) -> Vec<super::Damage> {
        super::damage::damage_of(&self.spans, &self.hidden, self.torn.as_ref(), self.size)
    }

    /// `Ok` when the file is wholly complete messages (or empty); else the
    /// error for its first damage: `Truncated` when its bytes are a message
    /// cut short, `Framing` otherwise, at that offset and message index.
    /// Opening is lenient (the intact messages stay readable); this is
    /// the check for callers that want the whole file.
    pub fn check_intact(&self) -> Result<()> {
        super::damage::check_intact(&self.spans, &self.hidden, self.torn.as_ref(), self.size)
    }

    /// Whether message `m`'s index was read (objects of it are then read
    /// without reading the rest of the message).
    pub fn is_indexed(&self, m: usize) -> bool {
        self.located
            .get(m)
            .is_some_and(|l| l.index.get().is_some_and(Option::is_some))
    }

    /// Message `m`'s index (`m` in range): kept from opening, or read now
    /// through the message's header or footer index and kept. A message
    /// whose index cannot be read has none; reading its objects then
    /// parses it whole, which reports what is wrong.
    fn index(&self, m: usize) -> Option<&MessageIndex> {
        self.index_via(m, &self.src)
    }

    /// [`Self::index`], reading through `src` (the source, or a window
    /// over it).
    fn index_via(&self, m: usize, src: &dyn ByteSource) -> Option<&MessageIndex> {
        let span = self.spans[m];
        let cell = &self.located[m].index;
        if let Some(ix) = cell.get() {
            return ix.as_ref();
        }
        let at = MessageAt::of(span, span.offset + span.len);
        let w = src.hints().head_window;
        let ix = locate_index(src, at, Some(span.len), w, &self.limits)
            .ok()
            .flatten()
            .filter(|ix| ix.frames_end + POSTAMBLE_LEN as u64 == span.len);
        if super::fetched::missed() {
            return None;
        }
        cell.get_or_init(|| ix).as_ref()
    }

    /// The bytes of `r`, borrowed from a source in memory, else read
    /// (and checked to be whole).
    fn read(&self, r: Range<u64>) -> Result<Held<'_>> {
        if let Some(all) = self.src.as_slice() {
            let (start, end) = (usize::try_from(r.start), usize::try_from(r.end));
            return match (start, end) {
                (Ok(s), Ok(e)) => all.get(s..e).map(Held::Borrowed),
                _ => None,
            }
            .ok_or_else(|| Error::truncated("the source is shorter than located").at(r.start));
        }
        let b = self.src.read_bytes(r.clone())?;
        super::partial::check_len(&r, &b)?;
        Ok(Held::Read(b))
    }

    /// The bytes of message `i`: borrowed from a source in memory (a
    /// mapping), else the buffer read, handed over without a copy.
    pub fn message_bytes(&self, i: usize) -> Result<MessageBytes<'_>> {
        let s = span_of(&self.spans, i)?;
        Ok(MessageBytes(self.read(s.offset..s.offset + s.len)?))
    }

    /// Writes the listed messages, in order, to `out`, reading at most
    /// `chunk` bytes at a time, so memory stays at one chunk however large
    /// a message; catalogue messages are left out (a writer ending the
    /// copy with its own catalogue makes it whole again). This is how a
    /// remote archive is appended to: a new object holding the old one's
    /// messages, then the new ones (`spec/remote.md` §7.3). Returns the
    /// bytes written.
    pub fn copy_messages_to(&self, out: &mut dyn std::io::Write, chunk: u64) -> Result<u64> {
        let chunk = chunk.max(1);
        let mut n = 0;
        for s in &self.spans {
            let end = s.offset + s.len;
            let mut at = s.offset;
            while at < end {
                let to = end.min(at + chunk);
                let b = self.read(at..to)?;
                out.write_all(&b)?;
                at = to;
            }
            n += s.len;
        }
        Ok(n)
    }

    /// Runs `f` on the parsed message `i`.
    pub fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> Result<R>,
    ) -> Result<R> {
        let s = span_of(&self.spans, i)?;
        let bytes = self.read(s.offset..s.offset + s.len)?;
        let m = Message::parse_with(&bytes, s.offset, &self.limits).map_err(|e| e.in_message(i))?;
        f(&m).map_err(|e| e.in_message(i))
    }

    /// Messages whose object metadata matches `key = value` (dotted keys look
    /// in the object's base entry, then `_extra_`), as (message, object)
    /// pairs; payloads are not decoded.
    pub fn select(&self, key: &str, value: &str) -> Result<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        for i in 0..self.spans.len() {
            self.with_message(i, |msg| {
                let meta = msg.metadata()?;
                for o in 0..msg.num_objects() {
                    if meta
                        .lookup(Some(o), key)
                        .is_some_and(|v| value_matches(v, value))
                    {
                        out.push((i, o));
                    }
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Message metadata of message `m`, its metadata frame's digest
    /// checked per `opts.verify`. From a source not in memory, when the
    /// message has a header metadata frame, its preamble announces no
    /// footer or per-object metadata, and its index lists data frames that
    /// follow the header frames and each other with no frame between, only
    /// the message's head window is read (one request, none when open
    /// kept it; more when its header frames are longer) and the rest of
    /// the message is not parsed; otherwise the whole message is read and
    /// parsed (`spec/remote.md` §3).
    /// The last 8 messages' metadata are kept parsed
    /// ([`TgmFile::shared_metadata`]).
    pub fn metadata(&self, m: usize, opts: &DecodeOptions) -> Result<GlobalMetadata> {
        Ok(GlobalMetadata::clone(&*self.shared_metadata(m, opts)?))
    }

    /// [`TgmFile::metadata`], shared: parsed once while the message is
    /// among the last few asked for.
    pub fn shared_metadata(&self, m: usize, opts: &DecodeOptions) -> Result<Arc<GlobalMetadata>> {
        span_of(&self.spans, m)?;
        let verify = self.effective(opts).verify;
        if let Some(meta) = self.metadata_cache.get(m, verify) {
            return Ok(meta);
        }
        let meta = Arc::new(self.read_metadata(m, opts)?);
        if !super::fetched::missed() {
            self.metadata_cache.put(m, verify, meta.clone());
        }
        Ok(meta)
    }

    fn read_metadata(&self, m: usize, opts: &DecodeOptions) -> Result<GlobalMetadata> {
        let mut o = self.effective(opts);
        o.limits = self.limits.clone();
        if o.verify != crate::decode::Verify::Require {
            if let Some(meta) = self.listed(m).and_then(|(c, at)| c.metadata_at(at)) {
                return Ok(meta.clone());
            }
        }
        if let Some(meta) = self.footer_metadata(m, &o).map_err(|e| e.in_message(m))? {
            return Ok(meta);
        }
        if self.src.as_slice().is_none() {
            if let Some(meta) = self
                .header_only_metadata(m, &o)
                .map_err(|e| e.in_message(m))?
            {
                return Ok(meta);
            }
        }
        let span = self.spans[m];
        let bytes = self.read(span.offset..span.offset + span.len)?;
        crate::decode::decode_metadata(&bytes, &o).map_err(|e| e.rebase(span.offset).in_message(m))
    }

    /// Whether message `m` is listed from its end: a source not in memory,
    /// and a preamble that announces a footer index and no header index.
    fn footer_indexed(&self, m: usize) -> bool {
        use crate::wire::message_flags as mf;
        let flags = self.located[m].flags.unwrap_or(0);
        self.src.as_slice().is_none()
            && flags & mf::FOOTER_INDEX != 0
            && flags & mf::HEADER_INDEX == 0
    }

    /// Reads message `m`'s end once when it is footer-indexed
    /// ([`super::footer::read_footer`]), keeping its index, envelopes and
    /// footer metadata frame; `None` when it is not, or that read failed
    /// (the message is then read as before, which reports what is wrong).
    fn footer(&self, m: usize) -> Option<&Option<(u64, bytes::Bytes)>> {
        if !self.footer_indexed(m) {
            return None;
        }
        let l = &self.located[m];
        if let Some(f) = l.footer.get() {
            return f.as_ref();
        }
        let hint = self.tail_hint.load(Ordering::Relaxed);
        let read = super::footer::read_footer(&self.src, self.spans[m], hint, &self.limits);
        if super::fetched::missed() {
            return None;
        }
        l.footer
            .get_or_init(|| {
                let r = read.ok().flatten()?;
                self.tail_hint.store(r.tail, Ordering::Relaxed);
                use crate::wire::message_flags as mf;
                let hashed = l.flags.is_some_and(|f| f & mf::HASHES_PRESENT != 0);
                let env = r
                    .envelopes
                    .iter()
                    .map(|e| Envelope {
                        descriptor: Some(e.descriptor.to_vec()),
                        hash: hashed.then_some(e.hash),
                        stored: Some(e.stored),
                    })
                    .collect();
                let contiguous = contiguous(&r.index);
                let _ = l.index.set(Some(r.index));
                let _ = l.envelopes.set(env);
                // Frames between data frames (preceders) add to the
                // metadata: then the message is parsed whole.
                Some(r.metadata.filter(|_| contiguous))
            })
            .as_ref()
    }

    /// Message `m`'s metadata from its footer metadata frame, which for a
    /// footer-indexed message is the complete copy (`format.md`: preceder
    /// entries merged), when its data frames follow each other with no
    /// frame between; `None` otherwise.
    fn footer_metadata(&self, m: usize, o: &DecodeOptions) -> Result<Option<GlobalMetadata>> {
        let Some(Some((at, bytes))) = self.footer(m) else {
            return Ok(None);
        };
        let n = self.located[m]
            .index
            .get()
            .and_then(Option::as_ref)
            .map_or(0, MessageIndex::len);
        let f = Frame::read(
            crate::wire::header::Cursor::new(bytes, *at),
            self.spans[m].offset,
        )?;
        crate::decode::verify_frame(&f, o.verify)?;
        let mut meta = GlobalMetadata::from_cbor(f.cbor(), f.body_abs_offset(), &o.limits)?;
        meta.fit_base(n, f.abs_offset())?;
        Ok(Some(meta))
    }

    /// Message `m`'s metadata from its header metadata frame alone, when
    /// nothing else contributes to it (see [`Self::metadata`]); `None`
    /// otherwise.
    fn header_only_metadata(&self, m: usize, o: &DecodeOptions) -> Result<Option<GlobalMetadata>> {
        let span = self.spans[m];
        let w = self
            .src
            .hints()
            .head_window
            .max(PREAMBLE_LEN as u64)
            .min(span.len);
        let win = match &self.located[m].head {
            Some(h) if h.len() as u64 == w => {
                super::ranges::WindowAt::held(&self.src, span.offset, h.clone())
            }
            _ => super::ranges::WindowAt::new(&self.src, span.offset..span.offset + w)?,
        };
        let Some(ix) = self.index_via(m, &win) else {
            return Ok(None);
        };
        if !contiguous(ix) {
            return Ok(None);
        }
        let at = MessageAt::of(span, span.offset + span.len);
        let Some(hm) = header_metadata(&win as &dyn ByteSource, at, span.len, w, &o.limits)? else {
            return Ok(None);
        };
        let data_start = ix.offsets.first().copied().unwrap_or(ix.frames_end);
        // A footer metadata frame would take precedence, and per-object
        // metadata frames add to it: the preamble announces both.
        use crate::wire::message_flags as mf;
        let others = mf::FOOTER_METADATA | mf::PRECEDER_METADATA;
        if hm.header_end != data_start || hm.flags & others != 0 {
            return Ok(None);
        }
        let f = Frame::read(
            crate::wire::header::Cursor::new(&hm.bytes, span.offset + hm.rel),
            span.offset,
        )?;
        crate::decode::verify_frame(&f, o.verify)?;
        let mut meta = GlobalMetadata::from_cbor(f.cbor(), f.body_abs_offset(), &o.limits)?;
        meta.fit_base(ix.len(), f.abs_offset())?;
        Ok(Some(meta))
    }

    /// The descriptors of message `m`'s objects: for an indexed message
    /// read from each data frame's header and tail only (once; then
    /// cached), otherwise parsed from the whole message.
    pub fn descriptors(&self, m: usize) -> Result<Vec<ObjectDescriptor>> {
        span_of(&self.spans, m)?;
        if let Some(d) = self.listed(m).and_then(|(c, at)| c.descriptors_at(at)) {
            return Ok(d.into_iter().cloned().collect());
        }
        self.footer(m);
        if self.index(m).is_none() {
            return self.with_message(m, |msg| {
                (0..msg.num_objects())
                    .map(|i| msg.object(i).map(|o| o.descriptor().clone()))
                    .collect()
            });
        }
        let env = self.envelopes(m)?;
        env.iter()
            .enumerate()
            .map(|(o, e)| match &e.descriptor {
                Some(d) => ObjectDescriptor::from_cbor(d, 0, &self.limits)
                    .map_err(|e| e.in_object(o).in_message(m)),
                None => self.with_message(m, |msg| Ok(msg.object(o)?.descriptor().clone())),
            })
            .collect()
    }

    /// The descriptor of object `o` of message `m`: for an indexed message
    /// from its frame envelope (read once with the others'), otherwise
    /// parsed from the whole message.
    pub fn descriptor(&self, m: usize, o: usize) -> Result<ObjectDescriptor> {
        span_of(&self.spans, m)?;
        if let Some(d) = self.listed(m).and_then(|(c, at)| c.descriptors_at(at)) {
            if let Some(d) = d.get(o) {
                return Ok((*d).clone());
            }
        }
        self.footer(m);
        if self.index(m).is_some() {
            let env = self.envelopes(m)?;
            if let Some(d) = env.get(o).and_then(|e| e.descriptor.as_deref()) {
                return ObjectDescriptor::from_cbor(d, 0, &self.limits)
                    .map_err(|e| e.in_object(o).in_message(m));
            }
        }
        self.with_message(m, |msg| Ok(msg.object(o)?.descriptor().clone()))
    }

    /// Number of objects of message `m`: its index's length, else parsed
    /// from the whole message.
    pub fn num_objects(&self, m: usize) -> Result<usize> {
        span_of(&self.spans, m)?;
        self.footer(m);
        match self.index(m) {
            Some(ix) => Ok(ix.len()),
            None => self.with_message(m, |msg| Ok(msg.num_objects())),
        }
    }

    /// Bytes stored for each object of message `m` (its payload region:
    /// encoded payload and mask blobs): for an indexed message from the
    /// same frame envelopes as [`TgmFile::descriptors`], otherwise from
    /// the whole message.
    pub fn stored_sizes(&self, m: usize) -> Result<Vec<u64>> {
        span_of(&self.spans, m)?;
        if let Some(v) = self.listed(m).and_then(|(c, at)| c.stored_sizes_at(at)) {
            return Ok(v);
        }
        self.footer(m);
        if self.index(m).is_some() {
            let env = self.envelopes(m)?;
            if let Some(v) = env.iter().map(|e| e.stored).collect::<Option<Vec<_>>>() {
                return Ok(v);
            }
        }
        self.with_message(m, |msg| {
            (0..msg.num_objects())
                .map(|i| msg.object(i).map(|o| o.payload_region().len() as u64))
                .collect()
        })
    }

    /// Object `o` of message `m` with its descriptor, owned. For an indexed
    /// message this reads that object's frame only.
    pub fn decode_object(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<DecodedObject> {
        let opts = &self.effective(opts);
        self.with_object(m, o, opts, |obj| {
            Ok(DecodedObject {
                descriptor: obj.descriptor().clone(),
                data: crate::buffer::into_owned(obj.decode(opts)?)?,
            })
        })
    }

    /// Element ranges `(first, count)` of object `o` of message `m`. For
    /// an indexed message whose pipeline plans ranges (every stage says
    /// which stored bytes cover them, `spec/pipeline.md` §7.1) only the
    /// frame's tail (descriptor, footer, end magic) and
    /// the bytes covering the ranges are read, two requests of a remote
    /// source, and the frame digest (which covers the whole body) is not
    /// checked; otherwise the frame is read whole and checked per
    /// `opts.verify` (`spec/remote.md` §4).
    pub fn decode_range(
        &self,
        m: usize,
        o: usize,
        ranges: &[(u64, u64)],
        opts: &DecodeOptions,
    ) -> Result<Vec<Vec<u8>>> {
        let opts = &self.effective(opts);
        let span = span_of(&self.spans, m)?;
        // A source in memory serves the whole frame without copying.
        let partial = self.src.as_slice().is_none();
        if let Some(ix) = self.index(m).filter(|_| partial) {
            let run = || {
                let e = ix.entry(o)?;
                let at = span.offset + e.offset;
                let expected = self.located[m]
                    .envelopes
                    .get()
                    .and_then(|v| v.get(o))
                    .map(|env| (env.descriptor.as_deref(), env.hash));
                let frame = super::partial::FrameAt {
                    at,
                    len: e.len,
                    msg_base: span.offset,
                    expected,
                };
                let part = super::partial::decode_range_partial(&self.src, frame, o, ranges, opts)?;
                if let Some(r) = part {
                    return Ok(Some(r));
                }
                Ok(None)
            };
            if let Some(r) = run().map_err(|e: Error| e.in_message(m))? {
                return Ok(r);
            }
        }
        self.with_object(m, o, opts, |obj| obj.decode_range(ranges, opts))
    }

    /// Object `o` of message `m`, decoded. From a source in memory (a
    /// mapping), an object whose pipeline leaves its bytes unchanged, in
    /// native byte order, is borrowed, not copied.
    pub fn object_data(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<Cow<'_, [u8]>> {
        let opts = &self.effective(opts);
        let run = || match self.object_bytes(m, o)? {
            (Held::Borrowed(b), e) => self
                .parse_object(m, o, b, e.as_ref(), &opts.limits)?
                .decode(opts),
            (held, e) => {
                let obj = self.parse_object(m, o, &held, e.as_ref(), &opts.limits)?;
                Ok(Cow::Owned(crate::buffer::into_owned(obj.decode(opts)?)?))
            }
        };
        run().map_err(|e| e.in_message(m))
    }

    /// Object `o` of message `m` as a typed slice of a source in memory
    /// (a mapping), when the object is uncompressed, in native byte order,
    /// of element type `T`, and aligned; `None` when a copy is needed (use
    /// [`TgmFile::object_data`]).
    pub fn object_slice<T: super::Pod>(
        &self,
        m: usize,
        o: usize,
        opts: &DecodeOptions,
    ) -> Result<Option<&[T]>> {
        match self.object_data(m, o, opts)? {
            Cow::Borrowed(b) => Ok(super::try_cast::<T>(b)),
            Cow::Owned(_) => Ok(None),
        }
    }

    /// Runs `f` on object `o` of message `m` ([`Self::object_bytes`]).
    fn with_object<R>(
        &self,
        m: usize,
        o: usize,
        opts: &DecodeOptions,
        f: impl FnOnce(&Object<'_>) -> Result<R>,
    ) -> Result<R> {
        let run = || {
            let (bytes, e) = self.object_bytes(m, o)?;
            f(&self.parse_object(m, o, &bytes, e.as_ref(), &opts.limits)?)
        };
        run().map_err(|e| e.in_message(m))
    }

    /// The bytes holding object `o` of message `m`: through the kept
    /// index (read once per message) its data frame, with the index entry
    /// listing it; without an index the whole message.
    fn object_bytes(&self, m: usize, o: usize) -> Result<(Held<'_>, Option<IndexedFrame>)> {
        let span = span_of(&self.spans, m)?;
        let Some(ix) = self.index(m) else {
            return Ok((self.read(span.offset..span.offset + span.len)?, None));
        };
        let e = ix.entry(o)?;
        let start = span.offset + e.offset;
        Ok((self.read(start..start + e.len)?, Some(e)))
    }

    /// Object `o` of message `m` parsed from `bytes` ([`Self::object_bytes`]):
    /// its data frame listed by `e`, checked against any layout entry or
    /// cached envelope, or else the whole message.
    fn parse_object<'b>(
        &self,
        m: usize,
        o: usize,
        bytes: &'b [u8],
        e: Option<&IndexedFrame>,
        limits: &Limits,
    ) -> Result<Object<'b>> {
        let base = self.spans[m].offset;
        let Some(e) = e else {
            return Message::parse_with(bytes, base, limits)?.object(o);
        };
        let frame = e.frame(bytes, base)?;
        let obj = Object::from_frame(frame, o, limits)?;
        if let Some(env) = self.located[m].envelopes.get().and_then(|v| v.get(o)) {
            check_envelope(env, &frame, limits).map_err(|e| e.in_object(o))?;
        }
        Ok(obj)
    }

    /// Object `o` of message `m` decoded into one owned buffer: an object
    /// stored as is (its pipeline leaves the bytes unchanged) is the frame
    /// read once, its elements at [`ObjectBuffer::range`], not copied
    /// again; any other object is decoded straight into the buffer.
    pub fn decode_object_buffer(
        &self,
        m: usize,
        o: usize,
        opts: &DecodeOptions,
    ) -> Result<ObjectBuffer> {
        let opts = &self.effective(opts);
        span_of(&self.spans, m)?;
        if self.index(m).is_none() {
            return self
                .decode_object(m, o, opts)
                .map(|d| ObjectBuffer::owned(d.descriptor, d.data));
        }
        let run = || {
            let (bytes, e) = self.object_bytes(m, o)?;
            let (descriptor, range) = {
                let obj = self.parse_object(m, o, &bytes, e.as_ref(), &opts.limits)?;
                let descriptor = obj.descriptor().clone();
                match obj.decode(opts)? {
                    Cow::Owned(v) => return Ok(ObjectBuffer::owned(descriptor, v)),
                    Cow::Borrowed(s) => {
                        let at = (s.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
                        (descriptor, at..at + s.len())
                    }
                }
            };
            if bytes.get(range.clone()).is_none() {
                return Err(Error::framing("decoded elements lie outside their frame"));
            }
            Ok(ObjectBuffer {
                descriptor,
                data: MessageBytes(bytes).into_owned(),
                range,
            })
        };
        run().map_err(|e: Error| e.in_message(m))
    }

    /// The envelopes of message `m`'s objects, read once.
    fn envelopes(&self, m: usize) -> Result<&Vec<Envelope>> {
        let l = &self.located[m];
        if let Some(v) = l.envelopes.get() {
            return Ok(v);
        }
        let span = self.spans[m];
        let ix = self
            .index(m)
            .ok_or_else(|| Error::invalid_argument("message has no index"))?;
        let v = read_envelopes(&self.src, span, ix, &self.limits).map_err(|e| e.in_message(m))?;
        if super::fetched::missed() {
            return Err(super::fetched::discarded());
        }
        let _ = l.envelopes.set(v);
        Ok(l.envelopes.get().expect("set above"))
    }

    /// `opts`, with digest checking on when the source requires it.
    fn effective(&self, opts: &DecodeOptions) -> DecodeOptions {
        let mut o = opts.clone();
        if self.src.hints().requires_verification && o.verify == Verify::Off {
            o.verify = Verify::IfPresent;
        }
        o
    }
}

/// One object decoded into an owned buffer
/// ([`TgmFile::decode_object_buffer`]).
#[derive(Debug, Clone)]
pub struct ObjectBuffer {
    /// Its descriptor as stored.
    pub descriptor: ObjectDescriptor,
    /// The buffer: the decoded elements, or the frame holding them.
    pub data: Vec<u8>,
    /// Where the elements lie in `data`.
    pub range: std::ops::Range<usize>,
}

impl ObjectBuffer {
    fn owned(descriptor: ObjectDescriptor, data: Vec<u8>) -> Self {
        let range = 0..data.len();
        ObjectBuffer {
            descriptor,
            data,
            range,
        }
    }
}

/// The envelopes of the objects `ix` lists in the message at `span`,
/// read from `src` ([`SparseFrame::envelopes`]).
fn read_envelopes(
    src: &dyn ByteSource,
    span: MessageSpan,
    ix: &MessageIndex,
    limits: &Limits,
) -> Result<Vec<Envelope>> {
    let frames = (0..ix.len())
        .map(|o| {
            let e = ix.entry(o)?;
            Ok((span.offset + e.offset, e.len))
        })
        .collect::<Result<Vec<_>>>()?;
    let sparse = SparseFrame::envelopes(src, &frames, span.offset, limits)?;
    let mut v = Vec::with_capacity(ix.len());
    for (o, sparse) in sparse.into_iter().enumerate() {
        let env = match sparse {
            Some(sp) => {
                let obj = sp.object(o, limits).map_err(|e| e.in_object(o))?;
                let f = obj.frame();
                let parts = f.split_data(limits)?;
                Envelope {
                    descriptor: Some(parts.descriptor.to_vec()),
                    hash: f.has_hash().then(|| f.stored_hash()),
                    stored: Some(parts.region.len() as u64),
                }
            }
            None => Envelope::default(),
        };
        v.push(env);
    }
    Ok(v)
}

/// Checks a frame read through a layout or cached envelope against what
/// was recorded: the same stored digest and the same descriptor.
fn check_envelope(env: &Envelope, frame: &Frame<'_>, limits: &Limits) -> Result<()> {
    let lie = |what: &str| {
        Error::framing(format!("the data frame's {what} differs from the layout's"))
            .at(frame.abs_offset())
    };
    if let Some(h) = env.hash {
        if !frame.has_hash() || frame.stored_hash() != h {
            return Err(lie("digest"));
        }
    }
    if let Some(d) = &env.descriptor {
        let parts = frame.split_data(limits)?;
        if parts.descriptor != &d[..] {
            return Err(lie("descriptor"));
        }
    }
    Ok(())
}

/// Whether the data frames `ix` lists follow each other with no frame
/// between.
fn contiguous(ix: &MessageIndex) -> bool {
    (1..ix.len()).all(|k| {
        ix.offsets[k - 1]
            .checked_add(ix.lengths[k - 1])
            .map(crate::wire::align_up)
            == Some(ix.offsets[k])
    })
}

fn span_of(spans: &[MessageSpan], i: usize) -> Result<MessageSpan> {
    spans.get(i).copied().ok_or_else(|| {
        Error::invalid_argument(format!(
            "message index {i} out of range (the file has {})",
            spans.len()
        ))
    })
}
