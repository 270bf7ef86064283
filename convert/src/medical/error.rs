//! The error of the medical converters (NIfTI, DICOM): a kind a caller can
//! act on, a one-line message naming the path and the cause, and the
//! underlying error where there is one (`spec/convert.md`, "Converter errors").

use std::fmt;
use std::path::{Path, PathBuf};

/// Result of a medical converter step.
pub type MedicalResult<T = ()> = Result<T, MedicalError>;

/// What went wrong, grouped by what the caller can do about it
/// (`spec/convert.md`, "Converter errors").
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MedicalErrorKind {
    /// Reading or writing a file failed in the operating system; the
    /// source is the [`std::io::Error`], or the [`tgm::Error`] carrying
    /// it when the Tensogram library read the file.
    Io,
    /// The input is not a file of the format asked for (no NIfTI header,
    /// no DICOM "DICM" marker).
    NotThisFormat,
    /// The input claims the format but is not valid as tgm reads it:
    /// truncated, inconsistent fields, malformed elements; for `to-nifti`
    /// and `to-dicom`, an object whose descriptor or metadata cannot be
    /// written in the format.
    InvalidSource,
    /// A valid input that tgm does not convert without losing data (a
    /// colour image, an unsupported data type or transfer syntax); refused
    /// before any output is written, the message names what would be lost.
    Unsupported,
    /// Refused by policy: strict conformance, a burned-in annotation while
    /// de-identifying, a limit the caller set.
    Refused,
    /// The caller asked for something impossible: a message or object
    /// index out of range, inconsistent options.
    InvalidArgument,
    /// A third-party decoder or encoder (the `nifti` crate, dicom-rs)
    /// failed; its error is the source where it has one.
    Library,
    /// The Tensogram library failed (reading or writing the `.tgm` side);
    /// the source is the [`tgm::Error`].
    Archive,
}

/// A medical converter's failure: [`MedicalErrorKind`], a one-line
/// message naming the path and the cause, and the underlying error.
pub struct MedicalError {
    kind: MedicalErrorKind,
    detail: String,
    path: Option<PathBuf>,
    skippable: bool,
    source: Option<Cause>,
}

/// The underlying error of a [`MedicalError`], where there is one.
#[derive(Debug)]
pub(crate) enum Cause {
    /// An operating-system I/O error.
    Io(std::io::Error),
    /// The Tensogram library's error.
    Archive(tgm::Error),
    /// The `nifti` crate's error.
    #[cfg(feature = "nifti")]
    Nifti(nifti::NiftiError),
    /// Compressed pixel data refused before decoding.
    #[cfg(feature = "dicom")]
    PreDecode(super::dicom_predecode::PreDecodeError),
}

impl From<std::io::Error> for Cause {
    fn from(e: std::io::Error) -> Self {
        Cause::Io(e)
    }
}

impl From<tgm::Error> for Cause {
    fn from(e: tgm::Error) -> Self {
        Cause::Archive(e)
    }
}

#[cfg(feature = "nifti")]
impl From<nifti::NiftiError> for Cause {
    fn from(e: nifti::NiftiError) -> Self {
        Cause::Nifti(e)
    }
}

#[cfg(feature = "dicom")]
impl From<super::dicom_predecode::PreDecodeError> for Cause {
    fn from(e: super::dicom_predecode::PreDecodeError) -> Self {
        Cause::PreDecode(e)
    }
}

impl Cause {
    fn as_error(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            Cause::Io(e) => e,
            Cause::Archive(e) => e,
            #[cfg(feature = "nifti")]
            Cause::Nifti(e) => e,
            #[cfg(feature = "dicom")]
            Cause::PreDecode(e) => e,
        }
    }
}

impl MedicalError {
    /// An error of `kind` whose message is `detail`.
    #[cold]
    pub fn new(kind: MedicalErrorKind, detail: impl Into<String>) -> Self {
        MedicalError {
            kind,
            detail: detail.into(),
            path: None,
            skippable: false,
            source: None,
        }
    }

    /// An error of `kind` about the file `path`: the message is
    /// "PATH: detail".
    #[cold]
    pub fn at(kind: MedicalErrorKind, path: &Path, detail: impl fmt::Display) -> Self {
        Self::new(kind, format!("{}: {detail}", path.display())).with_path(path)
    }

    /// A [`MedicalErrorKind::Io`] error about the file `path`: the
    /// message is "PATH: what: e", the source `e`.
    #[cold]
    pub fn io(path: &Path, what: &str, e: std::io::Error) -> Self {
        Self::at(MedicalErrorKind::Io, path, format!("{what}: {e}")).with_source(e)
    }

    /// Shorthand for [`MedicalErrorKind::InvalidSource`].
    #[cold]
    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(MedicalErrorKind::InvalidSource, detail)
    }

    /// Shorthand for [`MedicalErrorKind::Unsupported`].
    #[cold]
    pub fn unsupported(detail: impl Into<String>) -> Self {
        Self::new(MedicalErrorKind::Unsupported, detail)
    }

    /// Shorthand for [`MedicalErrorKind::Refused`].
    #[cold]
    pub fn refused(detail: impl Into<String>) -> Self {
        Self::new(MedicalErrorKind::Refused, detail)
    }

    /// Shorthand for [`MedicalErrorKind::InvalidArgument`].
    #[cold]
    pub fn invalid_argument(detail: impl Into<String>) -> Self {
        Self::new(MedicalErrorKind::InvalidArgument, detail)
    }

    /// Records the file the error concerns (the message is unchanged).
    pub fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// Attaches the underlying cause.
    pub(crate) fn with_source(mut self, source: impl Into<Cause>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Prefixes the message with `prefix` ("PREFIX: message"), keeping
    /// the kind and the source.
    pub fn context(mut self, prefix: impl fmt::Display) -> Self {
        self.detail = format!("{prefix}: {}", self.detail);
        self
    }

    /// Marks the error as raised by a file found in a directory, which
    /// `Reading::skip_unsupported` would have left out.
    #[cfg(feature = "dicom")]
    pub(crate) fn skippable(mut self, path: &Path) -> Self {
        self.skippable = true;
        self.with_path(path)
    }

    /// What went wrong.
    pub fn kind(&self) -> MedicalErrorKind {
        self.kind
    }

    /// The file the error concerns, where known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the error comes from a file found in a directory that the
    /// conversion would leave out, with the reason recorded, when asked to
    /// skip unsupported files (`dicom::Reading::skip_unsupported`). A door
    /// names its own way of asking after the message.
    pub fn is_skippable(&self) -> bool {
        self.skippable
    }

    /// The message, as [`fmt::Display`] shows it.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for MedicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl fmt::Debug for MedicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MedicalError")
            .field("kind", &self.kind)
            .field("detail", &self.detail)
            .field("path", &self.path)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for MedicalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(Cause::as_error)
    }
}

impl From<std::io::Error> for MedicalError {
    fn from(e: std::io::Error) -> Self {
        MedicalError::new(MedicalErrorKind::Io, e.to_string()).with_source(e)
    }
}

impl From<tgm::Error> for MedicalError {
    fn from(e: tgm::Error) -> Self {
        MedicalError::new(MedicalErrorKind::Archive, e.to_string()).with_source(e)
    }
}
