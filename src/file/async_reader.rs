//! `AsyncTgmFile`: the asynchronous twin of [`TgmFile`], over an
//! [`AsyncByteSource`] (`spec/files.md` §7.1).
//!
//! It has no reading logic of its own. Each call runs the blocking
//! reader's own code as a sans-I/O step over the bytes fetched so far for
//! that call ([`super::fetched`]); when the step lacks a range, the range
//! is fetched with `.await` and the step runs again. The reads, their
//! order and so the requests are the blocking reader's; what a message,
//! its index and its frames say is learnt once and kept as it is there.
//!
//! Decoding is CPU work. With the `remote` feature (which brings tokio),
//! inside a tokio runtime, [`AsyncTgmFile::decode_object`] and
//! [`AsyncTgmFile::decode_range`] run their steps on tokio's blocking
//! pool (`spawn_blocking`), so the runtime's workers stay free. Without
//! it, or outside a tokio runtime, they run on the polling thread, and a
//! caller decoding large objects should run them on a blocking thread of
//! its own runtime. The other methods parse only a few headers and run
//! on the polling thread.
//!
//! The book's library guide (docs/src/guide/rust.md, "Async reading")
//! shows it in use (a doc test of the crate).

use std::sync::Arc;

use super::async_source::AsyncByteSource;
use super::catalogue::split_catalogues;
use super::fetched::{drive, fetch_new, step, Fetched, Fetches, Miss};
use super::gathered::{Overlay, Recording};
use super::index::Passes;
use super::reader::{locate_hops, located_of, SweptParts};
use super::sweep::{Sweep, MAX_WINDOW};
use super::{Damage, SuppliedBytes, TgmFile, TornTail};
use crate::decode::{DecodeOptions, DecodedObject};
use crate::descriptor::ObjectDescriptor;
use crate::error::Result;
use crate::limits::Limits;
use crate::metadata::GlobalMetadata;
use crate::wire::scan::MessageSpan;

/// The blocking reader the steps run, over the bytes fetched.
type Inner = TgmFile<SuppliedBytes>;

/// The messages of an [`AsyncByteSource`], located, none decoded: the
/// asynchronous twin of [`TgmFile`], with the same method names and
/// the same results and requests (`spec/files.md` §7.1). Methods that read
/// are `async fn`; those answering from what opening learnt (spans,
/// damage) are plain ones, as on [`TgmFile`].
///
/// Cheap to share: a handle is an `Arc` inside, and calls may run at
/// once.
pub struct AsyncTgmFile<S: AsyncByteSource + ?Sized> {
    file: Arc<Inner>,
    src: Arc<S>,
}

impl<S: AsyncByteSource + ?Sized> Clone for AsyncTgmFile<S> {
    fn clone(&self) -> Self {
        AsyncTgmFile {
            file: Arc::clone(&self.file),
            src: Arc::clone(&self.src),
        }
    }
}

impl<S: AsyncByteSource + ?Sized> std::fmt::Debug for AsyncTgmFile<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncTgmFile")
            .field("size", &self.file.size())
            .field("messages", &self.file.num_messages())
            .field("torn", &self.file.torn_tail())
            .finish()
    }
}

impl<S: AsyncByteSource + 'static> AsyncTgmFile<S> {
    /// Locates the messages of `src` as [`TgmFile::from_source`] does, with
    /// the source's readahead, sending the same requests: the file's tail
    /// first, and when that holds a valid catalogue nothing more
    /// (`spec/files.md` §9.3); else, with a readahead, the concurrent scan
    /// from both ends (`spec/remote.md` §3.1). Its work grows in
    /// proportion to the messages, not to their square.
    pub async fn open(src: S, limits: &Limits) -> Result<Self> {
        let size = src.len().await?;
        let src = Arc::new(src);
        let asked = Arc::clone(&src);
        let fetched = Fetched {
            src,
            bytes: SuppliedBytes::new(size, move || asked.hints()),
        };
        let (found, seen) = drive(&*fetched.src, || {
            let rec = Recording::new(&fetched.bytes, MAX_WINDOW);
            let found = super::catalogue::find(&rec, size, limits);
            Ok((found, rec.into_seen()))
        })
        .await?;
        let ra = fetched.src.hints().readahead;
        let file = if let Some(found) = found {
            TgmFile::from_found(fetched.bytes.clone(), size, found, limits)
        } else if ra == 0 {
            locate_resumably(&fetched, limits).await?
        } else {
            sweep(&fetched, seen, limits, ra).await?
        };
        Ok(AsyncTgmFile {
            file: Arc::new(file),
            src: fetched.src,
        })
    }
}

/// Locates the messages of `fetched` as [`TgmFile::from_source`] does
/// without readahead ([`hop_resumably`] from the start), then tells the
/// catalogue messages apart.
async fn locate_resumably<S: AsyncByteSource + ?Sized>(
    fetched: &Fetched<S>,
    limits: &Limits,
) -> Result<Inner> {
    let size = fetched.bytes.size();
    let (spans, flags, torn) = hop_resumably(fetched, 0, limits).await?;
    drive(&*fetched.src, || {
        let src = &fetched.bytes;
        let (spans, hidden) = split_catalogues(src, spans.clone(), &flags, limits);
        let located = located_of(src, size, &spans, flags.clone(), limits);
        Ok(
            TgmFile::assemble(src.clone(), size, spans, located, torn.clone(), limits)
                .with_hidden(hidden),
        )
    })
    .await
}

/// Locates the messages of `fetched` as the blocking reader does with a
/// readahead: the concurrent scan ([`super::sweep`]), each round's ranges
/// fetched together, then the locator from where the scan's front
/// stopped, if it did.
async fn sweep<S: AsyncByteSource + ?Sized>(
    fetched: &Fetched<S>,
    mut seen: Vec<(u64, bytes::Bytes)>,
    limits: &Limits,
    readahead: u64,
) -> Result<Inner> {
    let size = fetched.bytes.size();
    let h = fetched.src.hints();
    let prefix = h.cached_prefix.min(size);
    if prefix > 0 {
        if let Ok(b) = fetched.src.read_range(0..prefix).await {
            seen.push((0, b));
        }
    }
    let mut sweep = Sweep::new(size, limits, readahead, h.head_window, seen);
    loop {
        let reads = sweep.reads();
        if reads.is_empty() {
            break;
        }
        let got = fetched.src.read_ranges(&reads).await;
        sweep.take(&reads, got)?;
    }
    let swept = sweep.finish();
    let mut parts = SweptParts::of(swept.found);
    if let Some(at) = swept.resume_at {
        let (spans, flags, torn) = hop_resumably(fetched, at, limits).await?;
        parts.spans.extend(spans);
        parts.flags.extend(flags);
        parts.torn = torn;
    }
    let (spans, mut located, hidden) = drive(&*fetched.src, || {
        let over = Overlay {
            held: &swept.candidates,
            src: &fetched.bytes,
        };
        Ok(parts.split(&over, size, limits))
    })
    .await?;
    parts.adopt(&spans, &mut located);
    let torn = parts.torn.take();
    Ok(
        TgmFile::assemble(fetched.bytes.clone(), size, spans, located, torn, limits)
            .with_hidden(hidden),
    )
}

/// Hops over the messages of `fetched` from `start` as the blocking
/// locator does, with the same reads,
/// resuming each step from the last message hop that began before the
/// previous step's miss rather than from the start, and each walk of a
/// message's frames from where the previous step's walk of it stopped:
/// the work grows in proportion to the messages and their frames, not to
/// their square (`spec/files.md` §7.1). The spans, their preamble flags
/// and the torn tail.
async fn hop_resumably<S: AsyncByteSource + ?Sized>(
    fetched: &Fetched<S>,
    start: u64,
    limits: &Limits,
) -> Result<(Vec<MessageSpan>, Vec<(u64, u16)>, Option<TornTail>)> {
    let size = fetched.bytes.size();
    let mut fetches = Fetches::default();
    let (mut spans, mut flags) = (Vec::new(), Vec::new());
    let mut passes = Passes::resumable();
    let mut start = start;
    loop {
        passes.forget_before(start);
        let (hops, miss) = step(&mut fetches, || {
            locate_hops(&fetched.bytes, size, start, limits, &mut passes)
        });
        // A failure of the source itself ends opening as it ends the
        // blocking reader's, even when the step also missed (a miss is
        // never recorded as a failure).
        if let Some(e) = hops.failure {
            return Err(e);
        }
        let Some(miss) = miss else {
            spans.extend(hops.spans);
            flags.extend(hops.flags);
            return Ok((spans, flags, hops.torn));
        };
        let clean = hops.clean_until;
        spans.extend(hops.spans.into_iter().take_while(|s| s.offset < clean));
        flags.extend(hops.flags.into_iter().filter(|(p, _)| *p < clean));
        start = clean;
        fetch_new(&mut fetches, &*fetched.src, miss).await?;
    }
}

impl<S: AsyncByteSource + ?Sized + 'static> AsyncTgmFile<S> {
    /// The source read.
    pub fn source(&self) -> &S {
        &self.src
    }

    /// Length of the source when it was located.
    pub fn size(&self) -> u64 {
        self.file.size()
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        self.file.spans()
    }

    /// Number of complete messages.
    pub fn num_messages(&self) -> usize {
        self.file.num_messages()
    }

    /// Trailing bytes that form no complete message.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.file.torn_tail()
    }

    /// [`TgmFile::damage`].
    pub fn damage(&self) -> Vec<Damage> {
        self.file.damage()
    }

    /// [`TgmFile::check_intact`].
    pub fn check_intact(&self) -> Result<()> {
        self.file.check_intact()
    }

    /// Whether message `m`'s index was read ([`TgmFile::is_indexed`]).
    pub fn is_indexed(&self, m: usize) -> bool {
        self.file.is_indexed(m)
    }

    /// [`TgmFile::message_bytes`].
    pub async fn message_bytes(&self, i: usize) -> Result<bytes::Bytes> {
        self.read(
            move |f| f.message_bytes(i).map(super::MessageBytes::into_bytes),
            false,
        )
        .await
    }

    /// [`TgmFile::metadata`].
    pub async fn metadata(&self, m: usize, opts: &DecodeOptions) -> Result<GlobalMetadata> {
        let opts = opts.clone();
        self.read(move |f| f.metadata(m, &opts), false).await
    }

    /// [`TgmFile::descriptors`].
    pub async fn descriptors(&self, m: usize) -> Result<Vec<ObjectDescriptor>> {
        self.read(move |f| f.descriptors(m), false).await
    }

    /// [`TgmFile::descriptor`].
    pub async fn descriptor(&self, m: usize, o: usize) -> Result<ObjectDescriptor> {
        self.read(move |f| f.descriptor(m, o), false).await
    }

    /// [`TgmFile::num_objects`].
    pub async fn num_objects(&self, m: usize) -> Result<usize> {
        self.read(move |f| f.num_objects(m), false).await
    }

    /// [`TgmFile::decode_object`]; decoding runs as the module docs say.
    pub async fn decode_object(
        &self,
        m: usize,
        o: usize,
        opts: &DecodeOptions,
    ) -> Result<DecodedObject> {
        let opts = opts.clone();
        self.read(move |f| f.decode_object(m, o, &opts), true).await
    }

    /// [`TgmFile::decode_range`]; decoding runs as the module docs say.
    pub async fn decode_range(
        &self,
        m: usize,
        o: usize,
        ranges: &[(u64, u64)],
        opts: &DecodeOptions,
    ) -> Result<Vec<Vec<u8>>> {
        let (ranges, opts) = (ranges.to_vec(), opts.clone());
        self.read(move |f| f.decode_range(m, o, &ranges, &opts), true)
            .await
    }

    /// Runs `f` on the blocking reader until it has every byte it reads,
    /// fetching the range each run lacked; on the blocking pool when
    /// `cpu` and the runtime allows (module docs).
    async fn read<T, F>(&self, f: F, cpu: bool) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Inner) -> Result<T> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let mut fetches = Fetches::default();
        loop {
            let (out, miss, back) = self.step(fetches, &f, cpu).await?;
            fetches = back;
            let Some(miss) = miss else { return out };
            fetch_new(&mut fetches, self.source(), miss).await?;
        }
    }

    /// One run of `f` over `fetches`.
    async fn step<T, F>(
        &self,
        mut fetches: Fetches,
        f: &Arc<F>,
        cpu: bool,
    ) -> Result<(Result<T>, Option<Miss>, Fetches)>
    where
        T: Send + 'static,
        F: Fn(&Inner) -> Result<T> + Send + Sync + 'static,
    {
        #[cfg(feature = "remote")]
        if cpu && tokio::runtime::Handle::try_current().is_ok() {
            let (file, f) = (Arc::clone(&self.file), Arc::clone(f));
            return tokio::task::spawn_blocking(move || {
                let (out, miss) = super::fetched::step(&mut fetches, || f(&file));
                (out, miss, fetches)
            })
            .await
            .map_err(|e| {
                crate::error::Error::new(
                    crate::error::ErrorKind::Io,
                    format!("decoding task failed: {e}"),
                )
            });
        }
        let _ = cpu;
        let (out, miss) = super::fetched::step(&mut fetches, || f(&self.file));
        Ok((out, miss, fetches))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::fetched::block_on;
    use crate::file::index::counting;
    use crate::{Dtype, EncodeOptions, ObjectDescriptor, StreamingEncoder};
    use bytes::Bytes;

    /// A buffered message, one streaming message (declared length 0) of
    /// `frames` one-byte objects, and another buffered message.
    fn file_with_streaming(frames: usize) -> Bytes {
        let meta = GlobalMetadata::default();
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
        let buffered = crate::encode(&meta, &[(&d, &[7u8][..])], &EncodeOptions::new()).unwrap();
        let mut s = StreamingEncoder::new(Vec::new(), &meta, &EncodeOptions::new()).unwrap();
        for i in 0..frames {
            s.write_object(&d, &[i as u8]).unwrap();
        }
        let mut streaming = s.finish().unwrap().0;
        streaming[16..24].fill(0);
        let n = streaming.len();
        streaming[n - 16..n - 8].fill(0);
        Bytes::from([&buffered[..], &streaming, &buffered].concat())
    }

    /// Opens `file` with the blocking reader, then the asynchronous one:
    /// the same spans and damage, and the locator's work for each
    /// ([`counting::take`]: frame headers read, magics tried).
    fn work_of_opening(file: Bytes) -> ((u64, u64), (u64, u64)) {
        let lim = Limits::default();
        counting::take();
        let sync = TgmFile::from_source(file.clone(), &lim).unwrap();
        let blocking = counting::take();
        let asy = block_on(AsyncTgmFile::open(file, &lim)).unwrap();
        let stepped = counting::take();
        assert_eq!(asy.spans(), sync.spans());
        assert_eq!(asy.damage(), sync.damage());
        (blocking, stepped)
    }

    /// Bytes in memory answering as a remote source with a readahead,
    /// counting the reads (each a request) and the ranges they ask for.
    struct Ahead(Bytes, std::sync::atomic::AtomicU64);

    impl AsyncByteSource for Ahead {
        fn len(&self) -> impl std::future::Future<Output = Result<u64>> + Send {
            AsyncByteSource::len(&self.0)
        }
        fn read_range(
            &self,
            r: std::ops::Range<u64>,
        ) -> impl std::future::Future<Output = Result<Bytes>> + Send {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            AsyncByteSource::read_range(&self.0, r)
        }
        fn read_ranges(
            &self,
            rs: &[std::ops::Range<u64>],
        ) -> impl std::future::Future<Output = Result<Vec<Bytes>>> + Send {
            self.1
                .fetch_add(rs.len() as u64, std::sync::atomic::Ordering::Relaxed);
            AsyncByteSource::read_ranges(&self.0, rs)
        }
        fn hints(&self) -> crate::file::SourceHints {
            crate::file::SourceHints {
                readahead: 4096,
                ..Default::default()
            }
        }
    }

    /// Opening with a readahead hops over each message once, not once per
    /// request (re-running the locator from the start after each fetched
    /// window hopped over about messages² / messages-per-window), and
    /// sends few requests: windows double while messages are small.
    #[test]
    fn opening_with_a_readahead_hops_over_each_message_once() {
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![16]);
        let msg = crate::encode(
            &GlobalMetadata::default(),
            &[(&d, &[7u8; 16][..])],
            &EncodeOptions::new(),
        )
        .unwrap();
        let n = 5000;
        let file = Bytes::from(msg.repeat(n));
        let lim = Limits::default();
        counting::take_hops();
        let src = Ahead(file.clone(), Default::default());
        let asy = block_on(AsyncTgmFile::open(src, &lim)).unwrap();
        let hops = counting::take_hops();
        assert_eq!(asy.num_messages(), n);
        assert!(hops <= n as u64 + 2, "{hops} hops over {n} messages");
        let requests = asy.source().1.load(std::sync::atomic::Ordering::Relaxed);
        assert!(requests <= 40, "{requests} requests");
        let sync = TgmFile::from_source(file, &lim).unwrap();
        assert_eq!(asy.spans(), sync.spans());
    }

    /// Each of the message's frames is fetched by two requests (its
    /// header, then its end magic), and each step resumes the walk at the
    /// frame it lacked: the walk reads each frame header twice (the
    /// postamble once more, in the step that fetches the next message's
    /// preamble), where walking the message again from its start after
    /// each request read about frames² headers.
    #[test]
    fn opening_reads_each_frame_header_of_a_streaming_message_twice() {
        let frames = 4000;
        let ((blocking, _), (walked, _)) = work_of_opening(file_with_streaming(frames));
        assert!(blocking > frames as u64, "{blocking}");
        assert!(
            walked <= 2 * blocking + 1,
            "{walked} frame headers read for {frames} frames ({blocking} by the blocking reader)"
        );
    }

    /// Damage twice the scanner's window, holding every 4 KiB of its first
    /// window a preamble whose declared length ends past that window in no
    /// end magic, then a message: each such preamble costs a request (for its
    /// end magic), and each step resumes the scan at the magic it lacked,
    /// so each is tried twice, where scanning the window again from its
    /// start after each request tried about magics² / 2.
    #[test]
    fn opening_tries_each_magic_in_a_long_damaged_stretch_twice() {
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![1]);
        let msg = crate::encode(
            &GlobalMetadata::default(),
            &[(&d, &[7u8][..])],
            &EncodeOptions::new(),
        )
        .unwrap();
        let window = super::super::index::SLOW_WINDOW as usize;
        let mut file = [&msg[..], &vec![0x55u8; 2 * window + 4096], &msg].concat();
        for at in (msg.len()..msg.len() + window - 24).step_by(4096) {
            file[at..at + 24].copy_from_slice(&msg[..24]);
            let past = window as u64 + 1;
            file[at + 16..at + 24].copy_from_slice(&past.to_be_bytes());
        }
        let file = Bytes::from(file);
        let ((_, blocking), (_, tried)) = work_of_opening(file);
        assert!(blocking > 2000, "{blocking}");
        assert!(
            tried <= 2 * blocking,
            "{tried} magics tried ({blocking} by the blocking reader)"
        );
    }
}
