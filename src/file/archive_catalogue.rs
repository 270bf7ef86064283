//! Catalogues kept apart from their archives (`spec/files.md` §9.5): a
//! *catalogue file* of one catalogue message per archive, each naming its
//! archive by location, size, ETag and digests of its first and last bytes,
//! so that archives tgm did not write, or many archives at once, open from
//! one read of the catalogue file.

use std::ops::Range;

use super::catalogue::{Catalogue, TAIL_READ};
use super::source::ByteSource;
use crate::cbor::Value;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::wire::scan::MessageSpan;

/// The key of an archive catalogue's entry naming its archive.
pub const ARCHIVE_KEY: &str = "archive";

/// Bytes at the start of an archive whose digest a catalogue records: a
/// remote source's first read holds them (`spec/remote.md` §3).
pub const HEAD_DIGEST_LEN: u64 = 2 << 10;

/// The largest catalogue file read (a catalogue of ~50 million messages).
pub const MAX_CATALOGUE_FILE: u64 = 4 << 30;

/// The bytes of a catalogue file read from `src` (a local file or a remote
/// object), refused beyond [`MAX_CATALOGUE_FILE`] before anything is read.
pub fn read_catalogue_bytes(src: &dyn ByteSource) -> Result<Vec<u8>> {
    let len = src.len()?;
    if len > MAX_CATALOGUE_FILE {
        return Err(Error::limit("catalogue file", len, MAX_CATALOGUE_FILE));
    }
    Ok(read_exact(src, 0..len)?.to_vec())
}

/// How a catalogue file names the archive one of its catalogues lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveRef {
    /// A URL, or a local path: relative paths are relative to the folder
    /// of the catalogue file ([`ArchiveRef::resolve`]).
    pub location: String,
    /// The archive's length in bytes.
    pub size: u64,
    /// The archive's ETag when catalogued, if its store gave one.
    pub etag: Option<String>,
    /// XXH3-64 of its first `min(size, 2 KiB)` bytes.
    pub head: u64,
    /// XXH3-64 of its last `min(size, 8 KiB)` bytes.
    pub tail: u64,
}

/// One archive's catalogue, kept apart from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveCatalogue {
    /// The archive it lists.
    pub archive: ArchiveRef,
    /// The listing: every message of the archive, `covered` its size.
    pub catalogue: Catalogue,
}

fn bad(detail: impl Into<String>) -> Error {
    Error::metadata(format!("archive catalogue: {}", detail.into()))
}

fn read_exact(src: &dyn ByteSource, r: Range<u64>) -> Result<bytes::Bytes> {
    let want = r.end - r.start;
    let b = src.read_bytes(r.clone())?;
    if b.len() as u64 != want {
        return Err(Error::truncated(format!(
            "read {} of {want} bytes at {}",
            b.len(),
            r.start
        )));
    }
    Ok(b)
}

/// The ranges whose digests name an archive of `size` bytes.
fn digest_ranges(size: u64) -> (Range<u64>, Range<u64>) {
    (
        0..size.min(HEAD_DIGEST_LEN),
        size.saturating_sub(TAIL_READ)..size,
    )
}

impl ArchiveRef {
    /// Names the archive `src` (its length, ETag and the digests of its
    /// first and last bytes), to be found at `location`.
    pub fn of_source(src: &dyn ByteSource, location: &str) -> Result<Self> {
        let size = src.len()?;
        let (h, t) = digest_ranges(size);
        Ok(ArchiveRef {
            location: location.to_string(),
            size,
            etag: src.hints().etag,
            head: crate::hash::xxh3(&read_exact(src, h)?),
            tail: crate::hash::xxh3(&read_exact(src, t)?),
        })
    }

    /// Whether `src` is still the archive named: its length, then its ETag
    /// when both it and the record have one (equal ETags: nothing read),
    /// else the digests of its first and last bytes. `Err` says what
    /// differs.
    pub fn check(&self, src: &dyn ByteSource) -> std::result::Result<(), String> {
        let size = src.len().map_err(|e| e.to_string())?;
        if size != self.size {
            return Err(format!(
                "the archive is {size} bytes, the catalogue lists {}",
                self.size
            ));
        }
        if let (Some(want), Some(got)) = (&self.etag, &src.hints().etag) {
            if want == got {
                return Ok(());
            }
        }
        let (h, t) = digest_ranges(size);
        for (r, want, what) in [(t, self.tail, "last"), (h, self.head, "first")] {
            let got = read_exact(src, r).map_err(|e| e.to_string())?;
            if crate::hash::xxh3(&got) != want {
                return Err(format!(
                    "the archive's {what} bytes differ from those catalogued"
                ));
            }
        }
        Ok(())
    }

    /// Where the archive is, for a catalogue file read from `catalogue`
    /// (a path or URL): URLs and absolute paths as recorded; a relative
    /// path joined to the catalogue's folder, so that a catalogue moved
    /// with its archives still finds them.
    pub fn resolve(&self, catalogue: &str) -> String {
        let loc = &self.location;
        if loc.contains("://") || std::path::Path::new(loc).is_absolute() {
            return loc.clone();
        }
        match catalogue.rfind('/') {
            Some(i) => format!("{}/{loc}", &catalogue[..i]),
            None => loc.clone(),
        }
    }

    fn to_value(&self) -> Value {
        let mut pairs = vec![
            ("location", Value::Text(self.location.clone())),
            ("size", Value::Uint(self.size)),
            ("head", Value::Text(crate::hash::to_hex(self.head))),
            ("tail", Value::Text(crate::hash::to_hex(self.tail))),
        ];
        if let Some(e) = &self.etag {
            pairs.push(("etag", Value::Text(e.clone())));
        }
        Value::text_map(pairs)
    }

    fn from_value(v: &Value) -> Result<Self> {
        let field = |k: &str| v.get(k).ok_or_else(|| bad(format!("`{k}` is missing")));
        let text = |k: &str| {
            field(k)?
                .as_text()
                .map(str::to_string)
                .ok_or_else(|| bad(format!("`{k}` is not text")))
        };
        let digest = |k: &str| {
            crate::hash::from_hex(&text(k)?)
                .ok_or_else(|| bad(format!("`{k}` is not 16 hex digits")))
        };
        let size = match field("size")? {
            Value::Uint(n) => *n,
            _ => return Err(bad("`size` is not an unsigned integer")),
        };
        let etag = match v.get("etag") {
            None => None,
            Some(Value::Text(t)) => Some(t.clone()),
            Some(_) => return Err(bad("`etag` is not text")),
        };
        Ok(ArchiveRef {
            location: text("location")?,
            size,
            etag,
            head: digest("head")?,
            tail: digest("tail")?,
        })
    }
}

impl ArchiveCatalogue {
    /// The catalogue of the opened archive `f`, named by `location`: its
    /// messages (catalogue messages among them) back to back from its
    /// start to its end, entries reused from the catalogue it was opened
    /// with. Refused when `f` is not wholly complete messages.
    pub fn of_file<S: ByteSource>(
        f: &super::TgmFile<S>,
        location: &str,
        limits: &Limits,
    ) -> Result<Self> {
        f.check_intact()?;
        let cat = super::catalogue::build(
            f.source(),
            f.spans(),
            f.catalogue_spans(),
            f.catalogue(),
            limits,
        )?
        .ok_or_else(|| bad(format!("{location}: holds no message to catalogue")))?;
        if cat.covered != f.size() {
            return Err(bad(format!("{location}: its messages do not fill it")));
        }
        Ok(ArchiveCatalogue {
            archive: ArchiveRef::of_source(f.source(), location)?,
            catalogue: cat,
        })
    }

    /// The catalogue message (`spec/files.md` §9.1) carrying this
    /// catalogue and, beside it in its entry, the archive's name.
    pub fn to_message(&self) -> Result<Vec<u8>> {
        self.catalogue
            .to_message_with(&[(ARCHIVE_KEY, self.archive.to_value())])
    }

    /// The archive catalogues of a catalogue file's bytes, in order. Every
    /// message must be a catalogue message naming its archive; anything
    /// else is an error naming the message.
    pub fn read_all(bytes: &[u8], limits: &Limits) -> Result<Vec<Self>> {
        let spans = crate::wire::scan::scan(bytes);
        let whole: u64 = spans.iter().map(|s| s.len).sum();
        if spans.is_empty() || whole != bytes.len() as u64 {
            return Err(bad(
                "not a catalogue file: not whole Tensogram messages from its start",
            ));
        }
        spans
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Self::from_message(&bytes[s.range()], *s, limits).map_err(|e| e.in_message(i))
            })
            .collect()
    }

    fn from_message(bytes: &[u8], s: MessageSpan, limits: &Limits) -> Result<Self> {
        let Some(entry) = super::catalogue::catalogue_entry(bytes, s.offset, limits)? else {
            return Err(bad("not a catalogue message"));
        };
        let archive = entry
            .get(ARCHIVE_KEY)
            .ok_or_else(|| bad("the catalogue names no archive"))?;
        let archive = ArchiveRef::from_value(archive)?;
        let catalogue = Catalogue::from_entry(&entry, limits)?;
        if catalogue.covered != archive.size {
            return Err(bad(format!(
                "lists {} bytes of an archive of {}",
                catalogue.covered, archive.size
            )));
        }
        Ok(ArchiveCatalogue { archive, catalogue })
    }
}

/// Archives opened at once by [`catalogue_concurrently`]: each costs a
/// few round trips and almost no CPU, so many overlap (an object store
/// answers them in parallel).
pub const CONCURRENT_OPENS: usize = 16;

/// `one(i)` for every `i < count`, [`CONCURRENT_OPENS`] at a time, in
/// order; `done` is called after each. The first failure in order is the
/// error, and no further archive is started after a failure.
pub fn catalogue_concurrently<E: Send>(
    count: usize,
    one: impl Fn(usize) -> std::result::Result<ArchiveCatalogue, E> + Sync,
    done: impl Fn() + Sync,
) -> std::result::Result<Vec<ArchiveCatalogue>, E> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<std::result::Result<ArchiveCatalogue, E>>>> =
        (0..count).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..count.clamp(1, CONCURRENT_OPENS) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count || failed.load(Ordering::Relaxed) {
                    break;
                }
                let r = one(i);
                failed.fetch_or(r.is_err(), Ordering::Relaxed);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                done();
            });
        }
    });
    let mut out = Vec::with_capacity(count);
    // Indices are taken in order and every one taken finishes, so the
    // slots before the first empty one are filled, and a failure is
    // among them.
    for slot in slots {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(r) => out.push(r?),
            None => break,
        }
    }
    Ok(out)
}

/// How a catalogue file at `catalogue` names the archive at `archive`
/// (`spec/files.md` §9.5): a URL as given; a local path relative to the
/// catalogue's folder when it lies inside it (so the two can move
/// together), else absolute.
pub fn location_for(archive: &str, catalogue: &str) -> Result<String> {
    use std::path::Path;
    if super::is_remote_url(archive) {
        return Ok(archive.to_string());
    }
    let abs = Path::new(archive)
        .canonicalize()
        .map_err(|e| Error::from(e).with_path(Path::new(archive)))?;
    if !super::is_remote_url(catalogue) {
        let folder = Path::new(catalogue)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(dir) = folder.canonicalize() {
            if let Ok(rel) = abs.strip_prefix(&dir) {
                return Ok(rel.to_string_lossy().into_owned());
            }
        }
    }
    Ok(abs.to_string_lossy().into_owned())
}

/// Whether `location` (a path or URL) is named as a catalogue file: its
/// name ends in `.tgmc`, in any case. Readers take a catalogue file by
/// its name, so writers refuse any other (`spec/files.md` §9.5).
pub fn has_catalogue_file_name(location: &str) -> bool {
    const EXT: &str = ".tgmc";
    let name = location.rsplit('/').next().unwrap_or(location);
    name.len() > EXT.len()
        && name
            .get(name.len() - EXT.len()..)
            .is_some_and(|e| e.eq_ignore_ascii_case(EXT))
}

/// Whether `bytes` look like a catalogue file: a first message that is a
/// catalogue naming an archive (`spec/files.md` §9.5).
pub fn is_catalogue_file(bytes: &[u8], limits: &Limits) -> bool {
    let Some(s) = crate::wire::scan::scan(bytes).first().copied() else {
        return false;
    };
    matches!(
        super::catalogue::catalogue_entry(&bytes[s.range()], 0, limits),
        Ok(Some(e)) if e.get(ARCHIVE_KEY).is_some()
    )
}
