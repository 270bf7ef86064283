//! Opening the archives a catalogue file lists (`spec/files.md` §9.5):
//! remote archives with a recorded ETag lazily (nothing fetched until a
//! read, every read pinned to that ETag), the others checked against their
//! catalogue first.

use super::blocking::RemoteSource;
use super::options::RemoteOptions;
use crate::error::{Error, Result};
use crate::file::archive_catalogue::{
    catalogue_concurrently, location_for, read_catalogue_bytes, ArchiveCatalogue,
};
use crate::file::{is_remote_url, Backend, ByteSource, LocalFile, TgmFile};
use crate::limits::Limits;

/// One archive of a catalogue file, opened.
pub struct ListedArchive<S> {
    /// Where it is: the recorded location resolved against the catalogue
    /// file's.
    pub location: String,
    /// The archive, its messages from the catalogue when taken.
    pub file: TgmFile<S>,
    /// Why the catalogue was not taken (the archive was then scanned).
    pub stale: Option<String>,
}

/// The bytes of the catalogue file at `location` (a path or URL), at most
/// [`MAX_CATALOGUE_FILE`](crate::file::archive_catalogue::MAX_CATALOGUE_FILE).
pub fn read_catalogue_file(location: &str, opts: &RemoteOptions) -> Result<Vec<u8>> {
    read_catalogue_bytes(&*source_at(location, opts, Backend::Pread)?)
}

/// The bytes at `location`: a URL opened (its first window read), a local
/// file opened with `local`.
fn source_at(location: &str, opts: &RemoteOptions, local: Backend) -> Result<Box<dyn ByteSource>> {
    if is_remote_url(location) {
        Ok(Box::new(RemoteSource::open(location, opts)?))
    } else {
        Ok(Box::new(LocalFile::open(location, local)?))
    }
}

/// The source of the archive at `location` that `cat` lists: lazy
/// ([`RemoteSource::open_known`]) for a URL whose ETag `cat` records when
/// `lazy`, else opened (a URL's first window; a local file mapped).
pub fn listed_source(
    location: &str,
    cat: &ArchiveCatalogue,
    opts: &RemoteOptions,
    lazy: bool,
) -> Result<Box<dyn ByteSource>> {
    match (&cat.archive.etag, lazy) {
        (Some(etag), true) if is_remote_url(location) => Ok(Box::new(RemoteSource::open_known(
            location,
            opts,
            cat.archive.size,
            etag.clone(),
        )?)),
        _ => source_at(location, opts, Backend::Mmap),
    }
}

/// Every archive the catalogue file at `location` lists, in order, each
/// opened lazily where it can be ([`listed_source`]) and from its
/// catalogue while it matches, its source wrapped by `wrap`.
pub fn open_catalogue_file<S: ByteSource>(
    location: &str,
    opts: &RemoteOptions,
    limits: &Limits,
    wrap: impl Fn(Box<dyn ByteSource>) -> S,
) -> Result<Vec<ListedArchive<S>>> {
    let bytes = read_catalogue_file(location, opts)?;
    let cats = ArchiveCatalogue::read_all(&bytes, limits)
        .map_err(|e| e.with_path(std::path::Path::new(location)))?;
    cats.iter()
        .map(|cat| {
            let loc = cat.archive.resolve(location);
            let named = |e: Error| e.with_path(std::path::Path::new(&loc));
            let src = wrap(listed_source(&loc, cat, opts, true).map_err(named)?);
            let (file, stale) = TgmFile::from_source_catalogued(src, cat, limits).map_err(named)?;
            Ok(ListedArchive {
                location: loc,
                file,
                stale,
            })
        })
        .collect()
}

/// The catalogues of the archives `inputs` name (files, URLs, and
/// object-store folders with a pattern in their last segment, listed by
/// [`expand_patterns`](super::expand_patterns)), in order, each named as
/// the catalogue file at `catalogue` will name it (`spec/files.md` §9.5).
/// Archives are opened many at a time; `done` is called after each. An
/// archive that is not wholly complete messages is an error naming it.
pub fn index_archives(
    inputs: &[String],
    catalogue: &str,
    opts: &RemoteOptions,
    limits: &Limits,
    done: impl Fn() + Sync,
) -> Result<Vec<ArchiveCatalogue>> {
    let archives = super::expand_patterns(inputs, opts)?;
    let one = |k: usize| -> Result<ArchiveCatalogue> {
        let at = &archives[k];
        let named = |e: Error| e.with_path(std::path::Path::new(at));
        let location = location_for(at, catalogue)?;
        let src = source_at(at, opts, Backend::Mmap).map_err(named)?;
        let f = TgmFile::from_source(src, limits).map_err(named)?;
        ArchiveCatalogue::of_file(&f, &location, limits).map_err(named)
    };
    catalogue_concurrently(archives.len(), one, done)
}
