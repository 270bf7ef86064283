//! The CLI's error: one line naming the path and the cause once.

use std::fmt;
use std::path::Path;

/// A command failure, printed as one line on stderr.
#[derive(Debug)]
pub enum CliError {
    /// The reader of stdout went away; the command stops quietly (exit 0).
    BrokenPipe,
    /// Usage mistakes that clap cannot see (exit 2).
    Usage(String),
    /// Anything else (exit 1).
    Failed(String),
    /// Validation or salvage found problems; the report is already printed (exit 1).
    Reported,
}

/// Result of a command.
pub type CliResult<T = ()> = Result<T, CliError>;

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::BrokenPipe => f.write_str("broken pipe"),
            CliError::Usage(s) | CliError::Failed(s) => f.write_str(s),
            CliError::Reported => f.write_str("problems found"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<String> for CliError {
    fn from(s: String) -> Self {
        CliError::Failed(s)
    }
}

impl From<&str> for CliError {
    fn from(s: &str) -> Self {
        CliError::Failed(s.to_string())
    }
}

impl From<tgm::Error> for CliError {
    fn from(e: tgm::Error) -> Self {
        library_error(&e)
    }
}

/// The library's error `e` as a command failure.
fn library_error(e: &tgm::Error) -> CliError {
    // A write the library made into a closed pipe ends quietly, as the
    // command's own writes do.
    let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
    if io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
        return CliError::BrokenPipe;
    }
    CliError::Failed(with_root_cause(e))
}

/// Whether the library's error `e` is a failed write into the caller's
/// output (its source an I/O error), rather than a refusal of the data.
#[cfg(any(feature = "grib", feature = "netcdf"))]
pub fn is_write_error(e: &tgm::Error) -> bool {
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// `e`'s message, followed by the innermost cause in its source chain when
/// the message does not already say it (a remote read's "error sending
/// request" then ends with "operation timed out", say).
fn with_root_cause(e: &tgm::Error) -> String {
    let text = e.to_string();
    let mut root: Option<&dyn std::error::Error> = None;
    let mut next = std::error::Error::source(e);
    while let Some(cause) = next {
        root = Some(cause);
        next = cause.source();
    }
    match root.map(|r| r.to_string()) {
        Some(cause) if !cause.is_empty() && !text.contains(&cause) => format!("{text}: {cause}"),
        _ => text,
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        io_error(&e)
    }
}

/// The I/O error `e` as a command failure; a closed pipe stays one.
fn io_error(e: &std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return CliError::BrokenPipe;
    }
    // tempfile names its temporary file ("… at path \".tgm-partial-…\""):
    // the cause alone is kept, and the caller names the user's path.
    let text = e.to_string();
    match text.find(" at path \"") {
        Some(at) if e.get_ref().is_some() => CliError::Failed(text[..at].to_string()),
        _ => CliError::Failed(text),
    }
}

/// A medical converter's error (`spec/convert.md`, "Converter errors"):
/// a failed read or write of the caller's stream as an I/O error (a closed
/// pipe stays one), a library error as [`From<tgm::Error>`] words it,
/// anything else by its message.
#[cfg(any(feature = "nifti", feature = "dicom"))]
impl From<tgm_convert::medical::MedicalError> for CliError {
    fn from(e: tgm_convert::medical::MedicalError) -> Self {
        use tgm_convert::medical::MedicalErrorKind;
        let source = std::error::Error::source(&e);
        let text = e.to_string();
        match (e.kind(), source) {
            (MedicalErrorKind::Io, Some(s)) => match s.downcast_ref::<std::io::Error>() {
                Some(io) if io.to_string() == text => io_error(io),
                Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
                _ => CliError::Failed(text),
            },
            (MedicalErrorKind::Archive, Some(s)) => match s.downcast_ref::<tgm::Error>() {
                Some(t) if t.to_string() == text => library_error(t),
                _ => CliError::Failed(text),
            },
            _ => CliError::Failed(text),
        }
    }
}

/// A usage error.
pub fn usage(msg: impl Into<String>) -> CliError {
    CliError::Usage(msg.into())
}

/// `e` as an error of message `message` of `path`; a closed pipe stays one.
pub fn at_message(path: &Path, message: usize, e: CliError) -> CliError {
    match e {
        CliError::BrokenPipe | CliError::Reported => e,
        e => at_path(path, format!("message {message}: {e}")),
    }
}

/// Prefixes an error with the path it concerns, unless it already names it.
pub fn at_path(path: &Path, e: impl Into<CliError>) -> CliError {
    match e.into() {
        CliError::Failed(s) => {
            let p = path.display().to_string();
            if s.contains(&p) {
                CliError::Failed(s)
            } else {
                CliError::Failed(format!("{p}: {s}"))
            }
        }
        CliError::Usage(s) => {
            let p = path.display().to_string();
            if s.contains(&p) {
                CliError::Usage(s)
            } else {
                CliError::Usage(format!("{p}: {s}"))
            }
        }
        other => other,
    }
}

/// Extension: attach a path to any error convertible into [`CliError`].
pub trait WithPath<T> {
    /// Names `path` in the error.
    fn at(self, path: &Path) -> CliResult<T>;
}

impl<T, E: Into<CliError>> WithPath<T> for Result<T, E> {
    fn at(self, path: &Path) -> CliResult<T> {
        self.map_err(|e| at_path(path, e))
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for CliError {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        let e = match e.downcast::<CliError>() {
            Ok(c) => return *c,
            Err(e) => e,
        };
        match e.downcast::<std::io::Error>() {
            Ok(io) => CliError::from(*io),
            Err(e) => CliError::Failed(e.to_string()),
        }
    }
}
