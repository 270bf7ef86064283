//! Output safety: stdout that ends quietly on a closed pipe, outputs that
//! never replace an existing file without `--force` nor overwrite an input,
//! and files written to a temporary sibling renamed into place when complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{usage, CliError, CliResult, WithPath};

/// Buffered stdout. Write errors become [`CliError::BrokenPipe`] when the
/// reader has gone away, which `main` turns into a quiet exit 0.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::new(std::io::stdout().lock())
}

/// Whether `path` means stdin/stdout.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The identity of an existing file: device and inode.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

/// Refuses an output that is one of the inputs, or that exists without
/// `force`, or that is a remote URL. A directory is always refused.
pub fn check_output(out: &Path, inputs: &[&Path], force: bool) -> CliResult {
    if is_dash(out) {
        return Ok(());
    }
    crate::input::refuse_remote_output(out)?;
    let Some(id) = identity(out) else {
        return Ok(());
    };
    if inputs
        .iter()
        .any(|i| !is_dash(i) && identity(i) == Some(id))
    {
        return Err(CliError::Failed(format!(
            "{}: the output is also an input; refusing to overwrite it",
            out.display()
        )));
    }
    if out.is_dir() {
        return Err(CliError::Failed(format!(
            "{}: is a directory",
            out.display()
        )));
    }
    if !force {
        return Err(CliError::Failed(format!(
            "{}: already exists (use --force to replace it, or --append where offered)",
            out.display()
        )));
    }
    Ok(())
}

/// A file being written: a temporary sibling of the target, renamed into
/// place by [`AtomicFile::commit`]; dropped uncommitted, it disappears. It is
/// created with mode `0666 & !umask`, as a plain `open` would create it.
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing `target` (its directory must exist). `-` is refused:
    /// it means stdout, which callers handle before, never a file so named.
    pub fn create(target: &Path) -> CliResult<Self> {
        Ok(AtomicFile {
            tmp: temp_sibling(target, "")?,
            target: target.to_path_buf(),
        })
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Syncs and renames into place.
    pub fn commit(self) -> CliResult {
        self.tmp.as_file().sync_all().at(&self.target)?;
        self.tmp
            .persist(&self.target)
            .map_err(|e| e.error)
            .at(&self.target)?;
        Ok(())
    }
}

/// A new empty file next to `target` (named `.tgm-partial-…SUFFIX`), created
/// with mode `0666 & !umask`; errors name `target`. `-` is a usage error.
pub fn temp_sibling(target: &Path, suffix: &str) -> CliResult<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    if is_dash(target) {
        return Err(usage(
            "`-` (stdout) cannot be used here: this output must be a file",
        ));
    }
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".tgm-partial-")
        .suffix(suffix)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .at(target)
}

/// Refuses `-` for an output that is a directory or a set of files.
pub fn refuse_dash_dir(out: &Path) -> CliResult {
    if is_dash(out) {
        return Err(usage(
            "`-` (stdout) cannot be used here: this output is a directory of files",
        ));
    }
    Ok(())
}

/// Writes a whole output: `-` to stdout; a file is refused when it is one
/// of `inputs` or exists without `force`, else written to a temporary
/// sibling and renamed into place.
#[cfg(any(
    feature = "nifti",
    feature = "dicom",
    feature = "grib",
    feature = "netcdf"
))]
pub fn write_file(out: &Path, inputs: &[&Path], bytes: &[u8], force: bool) -> CliResult {
    let mut sink = Sink::open(out, inputs, force)?;
    sink.write_all(bytes)?;
    sink.finish()
}

/// Where a command writes a byte stream: a file (atomically) or stdout.
pub enum Sink {
    /// A regular file.
    File(AtomicFile),
    /// Standard output.
    Stdout(std::io::Stdout),
}

impl Sink {
    /// Opens `-` as stdout, anything else atomically after [`check_output`].
    pub fn open(out: &Path, inputs: &[&Path], force: bool) -> CliResult<Self> {
        if is_dash(out) {
            return Ok(Sink::Stdout(std::io::stdout()));
        }
        check_output(out, inputs, force)?;
        Ok(Sink::File(AtomicFile::create(out)?))
    }

    /// Writes bytes.
    pub fn write_all(&mut self, b: &[u8]) -> CliResult {
        match self {
            Sink::File(f) => f.file().write_all(b).at(&f.target.clone()),
            Sink::Stdout(s) => Ok(s.write_all(b)?),
        }
    }

    /// A writer into this output whose errors name it.
    pub fn writer(&mut self) -> Named<'_> {
        match self {
            Sink::File(f) => Named {
                inner: f.tmp.as_file_mut(),
                path: &f.target,
            },
            Sink::Stdout(s) => Named {
                inner: s,
                path: Path::new("<stdout>"),
            },
        }
    }

    /// Completes the output.
    pub fn finish(self) -> CliResult {
        match self {
            Sink::File(f) => f.commit(),
            Sink::Stdout(mut s) => Ok(s.flush()?),
        }
    }
}

/// A writer whose errors name `path`, the user's output (never the
/// temporary file behind it); the error kind is kept, so a closed pipe is
/// still recognised.
pub struct Named<'a> {
    inner: &'a mut dyn Write,
    path: &'a Path,
}

impl<'a> Named<'a> {
    /// `inner`, writing the output `path`.
    pub fn new(inner: &'a mut dyn Write, path: &'a Path) -> Self {
        Named { inner, path }
    }

    fn name(&self, e: std::io::Error) -> std::io::Error {
        let text = CliError::from(std::io::Error::new(e.kind(), e.to_string()));
        std::io::Error::new(e.kind(), format!("{}: {text}", self.path.display()))
    }
}

impl Write for Named<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.inner.write(b).map_err(|e| self.name(e))
    }

    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(b).map_err(|e| self.name(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.name(e))
    }
}

/// Several output files, all written to temporary siblings and renamed into
/// place only when every one is complete; on drop without
/// [`FileSet::commit`], none remains.
#[derive(Default)]
pub struct FileSet {
    files: Vec<AtomicFile>,
}

impl FileSet {
    /// Adds `target`, refusing it under the rules of [`check_output`] and
    /// when the set already holds it.
    pub fn create(&mut self, target: &Path, inputs: &[&Path], force: bool) -> CliResult<&mut File> {
        if self.files.iter().any(|f| f.target == target) {
            return Err(CliError::Failed(format!(
                "{}: two outputs have the same name",
                target.display()
            )));
        }
        if is_dash(target) {
            return Err(usage(
                "`-` (stdout) cannot be one of several outputs; name a file",
            ));
        }
        check_output(target, inputs, force)?;
        self.files.push(AtomicFile::create(target)?);
        Ok(self.files.last_mut().expect("just pushed").file())
    }

    /// The file for `target` if the set already holds it.
    pub fn get(&mut self, target: &Path) -> Option<&mut File> {
        self.files
            .iter_mut()
            .find(|f| f.target == target)
            .map(AtomicFile::file)
    }

    /// Renames every file into place.
    pub fn commit(self) -> CliResult<usize> {
        let n = self.files.len();
        for f in self.files {
            f.commit()?;
        }
        Ok(n)
    }
}
