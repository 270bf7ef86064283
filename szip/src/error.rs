//! The crate's one error type: a kind, a human-readable detail and, for a
//! stream that cannot be decoded, the byte offset where decoding stopped.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The [`crate::SzipParams`] are outside the ranges CCSDS 121.0-B-3 and
    /// libaec allow.
    InvalidParams,
    /// The parameters are valid but this coder does not implement them
    /// (`PAD_RSI`).
    Unsupported,
    /// The stream is corrupt, ends early, or the sizes given do not match
    /// whole samples.
    Corrupt,
    /// A decoded range lies outside the decoded data.
    OutOfRange,
    /// A working buffer could not be allocated.
    Alloc,
}

/// An szip error: kind, detail, and where in the stream it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    detail: String,
    offset: Option<u64>,
}

impl Error {
    /// Creates an error of `kind` with a human-readable `detail`.
    #[cold]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            kind,
            detail: detail.into(),
            offset: None,
        }
    }

    #[cold]
    pub(crate) fn params(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, detail)
    }

    #[cold]
    pub(crate) fn unsupported(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, detail)
    }

    #[cold]
    pub(crate) fn corrupt(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, detail)
    }

    /// Sets the byte offset in the stream if none is set yet.
    pub(crate) fn at(mut self, offset: u64) -> Self {
        self.offset.get_or_insert(offset);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable detail, without location.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Byte offset in the compressed stream where decoding stopped.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)?;
        if let Some(o) = self.offset {
            write!(f, " at offset {o} (0x{o:x})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
