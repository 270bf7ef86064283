//! Catalogues kept apart from their archives as inputs (`spec/files.md`
//! §9.5): `--catalogue CAT` for the archives a command names, and catalogue
//! files (`.tgmc`) given as inputs, which stand for every archive they
//! list.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use std::sync::Arc;

use tgm::file::archive_catalogue::{read_catalogue_bytes, ArchiveCatalogue};
use tgm::file::{Backend, ByteSource, LocalFile};
use tgm::Limits;

use crate::error::{CliError, CliResult, WithPath};
use crate::remote_input::is_remote_url;

/// The catalogue option, global to every reading command.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CatalogueArgs {
    /// A catalogue file written by `tgm index`: the archives it lists open
    /// from it, with no scan (one it no longer matches is ignored, with a
    /// note, and the archive scanned).
    #[arg(long = "catalogue", global = true, value_name = "CAT")]
    pub catalogue: Option<PathBuf>,
}

static GIVEN: OnceLock<Option<PathBuf>> = OnceLock::new();
static LOADED: OnceLock<Result<Vec<ArchiveCatalogue>, String>> = OnceLock::new();

/// Records `--catalogue` for every later open.
pub fn configure(a: CatalogueArgs) {
    let _ = GIVEN.set(a.catalogue);
}

/// Whether `path` names a catalogue file by its extension.
pub fn is_catalogue_file(path: &Path) -> bool {
    tgm::file::archive_catalogue::has_catalogue_file_name(&path.to_string_lossy())
}

/// The archive catalogues of the catalogue file at `path` (a local path or
/// URL), each with its archive's location resolved against `path`.
pub fn read(path: &Path) -> CliResult<Vec<(String, ArchiveCatalogue)>> {
    let bytes = read_bytes(path)?;
    let cats = ArchiveCatalogue::read_all(&bytes, &Limits::default()).at(path)?;
    let from = path.to_string_lossy();
    Ok(cats
        .into_iter()
        .map(|c| (c.archive.resolve(&from), c))
        .collect())
}

/// The catalogue file's bytes, at most the library's bound
/// (`archive_catalogue::MAX_CATALOGUE_FILE`).
fn read_bytes(path: &Path) -> CliResult<Vec<u8>> {
    let src: Arc<dyn ByteSource> = match path.to_str().filter(|s| is_remote_url(s)) {
        Some(url) => crate::remote_input::open(url)?,
        None => Arc::new(LocalFile::open(path, Backend::Pread).at(path)?),
    };
    read_catalogue_bytes(&*src).at(path)
}

/// The catalogue `--catalogue` gives for the archive at `path`: the entry
/// whose location is `path`, or the only entry. `Ok(None)` without
/// `--catalogue`; an error when it lists several archives, none at `path`.
pub fn for_archive(path: &Path) -> CliResult<Option<ArchiveCatalogue>> {
    let Some(Some(cat)) = GIVEN.get() else {
        return Ok(None);
    };
    let loaded = LOADED.get_or_init(|| {
        read(cat)
            .map(|v| v.into_iter().map(|(_, c)| c).collect())
            .map_err(|e| e.to_string())
    });
    let all = loaded.as_ref().map_err(|e| CliError::Failed(e.clone()))?;
    let from = cat.to_string_lossy();
    let want = path.to_string_lossy();
    let same = |c: &&ArchiveCatalogue| {
        let loc = c.archive.resolve(&from);
        loc == want || same_file(Path::new(&loc), path)
    };
    if let Some(c) = all.iter().find(same) {
        return Ok(Some(c.clone()));
    }
    if let [only] = all.as_slice() {
        return Ok(Some(only.clone()));
    }
    let listed: Vec<&str> = all.iter().map(|c| c.archive.location.as_str()).collect();
    Err(CliError::Failed(format!(
        "{}: lists no archive at {} (it lists {})",
        cat.display(),
        path.display(),
        listed.join(", ")
    )))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Says on stderr that the catalogue for `path` was not taken, and why.
pub fn note_stale(path: &Path, why: &str) {
    note!(
        "{}: its catalogue was not used ({why}); the archive was scanned",
        path.display()
    );
}
