//! Output safety: stdout that ends quietly on a closed pipe, outputs that
//! never replace an existing file or object without `--force` nor
//! overwrite an input, and outputs that appear only when complete: a local
//! file through a temporary sibling renamed into place, a remote URL
//! (`s3://`, `gs://`, `az://`, `http(s)://`) through a multipart upload
//! completed last and aborted on failure (the library's sinks,
//! `spec/remote.md` §7).

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tgm::file::{ByteSink, CataloguingWriter, Existing, LocalSink, Written};

use crate::error::{usage, CliError, CliResult, WithPath};
use crate::remote_input::is_remote_url;

/// Buffered stdout. Write errors become [`CliError::BrokenPipe`] when the
/// reader has gone away, which `main` turns into a quiet exit 0.
pub fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::new(std::io::stdout().lock())
}

/// Whether `path` means stdin/stdout.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `out` as a URL when it names a remote object.
pub fn remote_url(out: &Path) -> Option<&str> {
    out.to_str().filter(|s| is_remote_url(s))
}

/// Whether two URLs name the same object: the same text, the scheme and
/// host compared without case.
fn same_url(a: &str, b: &str) -> bool {
    let split = |u: &str| -> Option<(String, String)> {
        let (scheme, rest) = u.split_once("://")?;
        let (host, key) = rest.split_once('/').unwrap_or((rest, ""));
        Some((
            format!(
                "{}://{}",
                scheme.to_ascii_lowercase(),
                host.to_ascii_lowercase()
            ),
            key.to_string(),
        ))
    };
    match (split(a), split(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The identity of an existing file: device and inode.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

/// Refuses an output that is one of the inputs, or that exists without
/// `force`. A directory is always refused. A remote URL is refused here
/// only when an input names the same object; whether it exists is asked
/// when its upload starts ([`AtomicFile::create`]).
pub fn check_output(out: &Path, inputs: &[&Path], force: bool) -> CliResult {
    if is_dash(out) {
        return Ok(());
    }
    if let Some(url) = remote_url(out) {
        if inputs
            .iter()
            .any(|i| i.to_str().is_some_and(|i| same_url(i, url)))
        {
            return Err(CliError::Failed(format!(
                "{url}: the output is also an input; refusing to overwrite it"
            )));
        }
        return Ok(());
    }
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

/// Where an [`AtomicFile`] writes.
enum Dest {
    Local(LocalSink),
    #[cfg(feature = "remote")]
    Remote(Box<tgm::remote::RemoteSink>),
}

impl Dest {
    fn sink(&mut self) -> &mut dyn ByteSink {
        match self {
            Dest::Local(s) => s,
            #[cfg(feature = "remote")]
            Dest::Remote(s) => &mut **s,
        }
    }
}

impl Write for Dest {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.sink().write(b)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.sink().flush()
    }
}

/// Seeking is possible in a local output only; a remote one is written
/// front to back.
impl Seek for Dest {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            Dest::Local(s) => s.file_mut().map_err(std::io::Error::other)?.seek(to),
            #[cfg(feature = "remote")]
            Dest::Remote(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a remote output is written front to back",
            )),
        }
    }
}

/// A file or object being written, appearing at `target` only when
/// [`AtomicFile::commit`] succeeds: a local file through a temporary
/// sibling (mode `0666 & !umask`, as a plain `open` would create it)
/// renamed into place, a remote URL through the library's multipart
/// upload. Dropped uncommitted, it disappears (the upload is aborted).
/// An output of whole Tensogram messages ends with their catalogue,
/// recorded as they are written (`spec/files.md` §9.4).
pub struct AtomicFile {
    dest: CataloguingWriter<Dest>,
    target: PathBuf,
    /// The bytes uploaded, on a terminal (remote outputs).
    _progress: Option<crate::progress::UploadBar>,
}

impl AtomicFile {
    /// Starts writing `target` (a local file's directory must exist).
    /// Without `force` an existing target is refused (for a URL: a `HEAD`
    /// now, and a conditional create or a second `HEAD` when finishing).
    /// `-` is refused: it means stdout, which callers handle before, never
    /// a file so named.
    pub fn create(target: &Path, force: bool) -> CliResult<Self> {
        if is_dash(target) {
            return Err(usage(
                "`-` (stdout) cannot be used here: this output must be a file",
            ));
        }
        let existing = if force {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        // Ctrl-C and SIGTERM abort the output from now on.
        let cancel = crate::interrupt::flag();
        let dest = match remote_url(target) {
            Some(url) => remote_dest(url, existing, cancel)?,
            None => {
                let mut s = LocalSink::create(target, existing).map_err(|e| exists(target, e))?;
                s.set_cancel(cancel);
                Dest::Local(s)
            }
        };
        let _progress = match &dest {
            #[cfg(feature = "remote")]
            Dest::Remote(s) => crate::progress::upload_bar(s.url(), s.acknowledged_counter()),
            Dest::Local(_) => None,
        };
        Ok(AtomicFile {
            dest: CataloguingWriter::new(dest, &tgm::Limits::default()),
            target: target.to_path_buf(),
            _progress,
        })
    }

    /// The output being written (its errors do not name it: see [`Named`]).
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.dest
    }

    /// The output of a local file, for writers that seek back; `None` for
    /// a remote one, which is written front to back.
    pub fn seekable(&mut self) -> Option<&mut (impl Write + Seek)> {
        match self.dest.get_mut() {
            Dest::Local(_) => Some(&mut self.dest),
            #[cfg(feature = "remote")]
            Dest::Remote(_) => None,
        }
    }

    /// Completes the output: ends it with its catalogue when it is whole
    /// Tensogram messages, syncs and renames a local file into place,
    /// completes a remote upload (and says so on stderr, with its ETag).
    /// Returns the bytes the output holds, its catalogue included.
    pub fn commit(self) -> CliResult<u64> {
        let target = self.target;
        let (mut dest, _) = self.dest.finish().at(&target)?;
        let written = dest.sink().finish().map_err(|e| exists(&target, e))?;
        drop(self._progress);
        if remote_url(&target).is_some() {
            report_upload(&target, &written);
        }
        record(&target, &written);
        Ok(written.bytes)
    }
}

/// The library's error for `target`, with the CLI's hint when it exists.
fn exists(target: &Path, e: tgm::Error) -> CliError {
    if e.kind() == &tgm::ErrorKind::AlreadyExists {
        return CliError::Failed(format!(
            "{}: already exists (use --force to replace it)",
            target.display()
        ));
    }
    crate::error::at_path(target, e)
}

/// What one committed output was: its path or URL, size and ETag.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The path or URL as given.
    pub target: PathBuf,
    /// Bytes written.
    pub bytes: u64,
    /// The store's entity tag of a remote object.
    pub etag: Option<String>,
}

/// `-j` of a writing command: what was written, reported on stdout when
/// the command succeeds ([`reported`]).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct ReportArgs {
    /// Report what was written as one JSON object on stdout: each output's
    /// path or URL, size and, for an object in a store, its ETag.
    #[arg(short = 'j', long = "json")]
    pub json: bool,
}

/// Whether the running command reports its outputs on stdout (so none of
/// them may be stdout).
static REPORTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Refuses stdout as an output when the `-j` report goes there.
pub fn refuse_stdout_when_reporting() -> CliResult {
    match reporting() {
        true => Err(crate::error::usage(
            "-j reports on stdout: name an output file or URL with -o instead of -",
        )),
        false => Ok(()),
    }
}

/// Whether a `-j` report will be printed on stdout.
pub fn reporting() -> bool {
    REPORTING.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs a writing command; with `-j`, then prints `{"outputs": [...]}`
/// ([`committed_json`]) on stdout.
pub fn reported(r: ReportArgs, run: impl FnOnce() -> CliResult) -> CliResult {
    reported_with(r, || run().map(|()| serde_json::Map::new()))
}

/// [`reported`] for a command whose report has fields of its own besides
/// `outputs`, which `run` returns.
pub fn reported_with(
    r: ReportArgs,
    run: impl FnOnce() -> CliResult<serde_json::Map<String, serde_json::Value>>,
) -> CliResult {
    REPORTING.store(r.json, std::sync::atomic::Ordering::Relaxed);
    let mut fields = run()?;
    if r.json {
        fields.insert("outputs".into(), committed_json());
        let doc = serde_json::Value::Object(fields);
        let mut out = stdout();
        writeln!(out, "{doc}")?;
        out.flush()?;
    }
    Ok(())
}

/// Every output committed by this process, in order (for `-j` reports).
static COMMITTED: std::sync::Mutex<Vec<Committed>> = std::sync::Mutex::new(Vec::new());

/// The outputs committed so far as JSON: `[{"target", "bytes", "etag"}]`
/// (`etag` null for a local file).
pub fn committed_json() -> serde_json::Value {
    let list = COMMITTED.lock().unwrap_or_else(|p| p.into_inner());
    serde_json::Value::Array(
        list.iter()
            .map(|c| {
                serde_json::json!({
                    "target": c.target.display().to_string(),
                    "bytes": c.bytes,
                    "etag": c.etag,
                })
            })
            .collect(),
    )
}

fn record(target: &Path, w: &Written) {
    COMMITTED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Committed {
            target: target.to_path_buf(),
            bytes: w.bytes,
            etag: w.etag.clone(),
        });
}

/// One line on stderr per remote object written: its URL, size and ETag.
fn report_upload(target: &Path, w: &Written) {
    note!(
        "uploaded {}: {} bytes, ETag {}",
        target.display(),
        w.bytes,
        w.etag.as_deref().unwrap_or("(none sent)")
    );
}

#[cfg(feature = "remote")]
fn remote_dest(
    url: &str,
    existing: Existing,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> CliResult<Dest> {
    let opts = crate::remote_input::remote_options()?;
    let mut sink = tgm::remote::RemoteSink::create(url, &opts, existing)
        .map_err(|e| exists(Path::new(url), e))?;
    sink.set_cancel(cancel);
    Ok(Dest::Remote(Box::new(sink)))
}

/// Without the `remote` feature a URL is refused with the reason.
#[cfg(not(feature = "remote"))]
fn remote_dest(
    url: &str,
    _: Existing,
    _: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> CliResult<Dest> {
    Err(CliError::Failed(format!(
        "{url}: this tgm was built without the `remote` feature; rebuild with --features remote"
    )))
}

#[cfg(feature = "netcdf")]
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
            refuse_stdout_when_reporting()?;
            return Ok(Sink::Stdout(std::io::stdout()));
        }
        check_output(out, inputs, force)?;
        Ok(Sink::File(AtomicFile::create(out, force)?))
    }

    /// Writes bytes.
    pub fn write_all(&mut self, b: &[u8]) -> CliResult {
        match self {
            Sink::File(f) => {
                let target = f.target.clone();
                f.writer().write_all(b).at(&target)
            }
            Sink::Stdout(s) => Ok(s.write_all(b)?),
        }
    }

    /// A writer into this output whose errors name it.
    pub fn writer(&mut self) -> Named<'_> {
        match self {
            Sink::File(f) => Named {
                inner: &mut f.dest,
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
        self.finish_sized().map(drop)
    }

    /// Completes the output; returns the bytes a file holds, its
    /// catalogue included (`None` for stdout, which gets no catalogue).
    pub fn finish_sized(self) -> CliResult<Option<u64>> {
        match self {
            Sink::File(f) => f.commit().map(Some),
            Sink::Stdout(mut s) => {
                s.flush()?;
                Ok(None)
            }
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

/// Several outputs, all written as [`AtomicFile`]s and committed only when
/// every one is complete; on drop without [`FileSet::commit`], none
/// remains. Remote objects are completed one after another: a failure while
/// committing leaves those completed before it.
#[derive(Default)]
pub struct FileSet {
    files: Vec<AtomicFile>,
}

impl FileSet {
    /// Adds `target`, refusing it under the rules of [`check_output`] and
    /// when the set already holds it.
    pub fn create(
        &mut self,
        target: &Path,
        inputs: &[&Path],
        force: bool,
    ) -> CliResult<&mut dyn Write> {
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
        self.files.push(AtomicFile::create(target, force)?);
        Ok(self.files.last_mut().expect("just pushed").writer())
    }

    /// The file for `target` if the set already holds it.
    pub fn get(&mut self, target: &Path) -> Option<&mut dyn Write> {
        self.files
            .iter_mut()
            .find(|f| f.target == target)
            .map(AtomicFile::writer)
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
