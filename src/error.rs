//! The one error type of the crate.
//!
//! Every failure carries an [`ErrorKind`] saying who is at fault and what
//! went wrong, a human-readable detail, and where known the absolute byte
//! offset in the input, the message index and the object index.
//! See `spec/format.md` §9 for the error model.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, grouped by who is at fault.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input ended before a structure was complete.
    Truncated,
    /// Magic bytes (`TENSOGRM`, `FR`, `ENDF`, `39277777`) are missing.
    BadMagic,
    /// The preamble names a wire version other than 3.
    UnsupportedVersion(u16),
    /// Frames, lengths or offsets are inconsistent.
    Framing,
    /// CBOR bytes are malformed or violate a structural limit.
    Cbor,
    /// Metadata or descriptor content is invalid.
    Metadata,
    /// An encoding, filter, compression or mask method is unknown or not built in.
    UnsupportedCodec,
    /// A compressed or packed payload is corrupt or has the wrong decoded size.
    Codec,
    /// A configured resource limit would be exceeded.
    LimitExceeded {
        /// Name of the limit field in [`crate::Limits`].
        limit: &'static str,
        /// The amount the input asked for.
        requested: u64,
        /// The configured maximum.
        max: u64,
    },
    /// A frame's stored xxh3-64 digest differs from the recomputed one.
    HashMismatch {
        /// Digest stored in the frame footer.
        stored: u64,
        /// Digest recomputed over the frame body.
        computed: u64,
    },
    /// Verification was requested but the frame carries no hash.
    MissingHash,
    /// The data given to the encoder does not fit its description.
    InvalidInput,
    /// NaN or infinity found where it is not allowed.
    NonFinite,
    /// The caller asked for something impossible (index out of range, bad option).
    InvalidArgument,
    /// Partial decoding is not possible for this pipeline.
    RangeNotSupported,
    /// An operating-system I/O error.
    Io,
    /// A remote object does not exist (HTTP 404); the detail names the URL.
    NotFound,
    /// A remote store refused access (HTTP 401/403); the detail names the URL.
    Forbidden,
    /// A remote object changed after it was opened: its ETag differs from
    /// the one pinned by the first response (`spec/remote.md` §5).
    ObjectChanged,
    /// A remote store failed otherwise: timeout, dropped connection, a
    /// response that does not answer the request (`spec/remote.md` §5).
    Remote,
    /// An output already exists and replacing it was not asked for; the
    /// detail names the path or URL (`spec/remote.md` §7).
    AlreadyExists,
}

struct Inner {
    kind: ErrorKind,
    detail: String,
    offset: Option<u64>,
    message: Option<usize>,
    object: Option<usize>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// A tgm error: kind, detail, and where it happened.
pub struct Error(Box<Inner>);

impl Error {
    /// Creates an error of `kind` with a human-readable `detail`.
    #[cold]
    #[inline(never)]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            detail: detail.into(),
            offset: None,
            message: None,
            object: None,
            source: None,
        }))
    }

    /// Shorthand for [`ErrorKind::Framing`].
    #[cold]
    pub fn framing(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Framing, detail)
    }

    /// Shorthand for [`ErrorKind::Metadata`].
    #[cold]
    pub fn metadata(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Metadata, detail)
    }

    /// Shorthand for [`ErrorKind::Codec`].
    #[cold]
    pub fn codec(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Codec, detail)
    }

    /// Shorthand for [`ErrorKind::InvalidInput`].
    #[cold]
    pub fn invalid_input(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, detail)
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    #[cold]
    pub fn invalid_argument(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, detail)
    }

    /// Shorthand for [`ErrorKind::Truncated`].
    #[cold]
    pub fn truncated(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Truncated, detail)
    }

    /// Shorthand for [`ErrorKind::UnsupportedCodec`].
    #[cold]
    pub fn unsupported_codec(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedCodec, detail)
    }

    /// A [`ErrorKind::LimitExceeded`] error.
    #[cold]
    pub fn limit(limit: &'static str, requested: u64, max: u64) -> Self {
        Self::new(
            ErrorKind::LimitExceeded {
                limit,
                requested,
                max,
            },
            format!("limit {limit} exceeded: {requested} > {max}"),
        )
    }

    /// Sets the absolute byte offset if none is set yet (the innermost offset wins).
    pub fn at(mut self, offset: u64) -> Self {
        if self.0.offset.is_none() {
            self.0.offset = Some(offset);
        }
        self
    }

    /// Places an error raised while parsing a sub-slice that starts at
    /// absolute offset `base`: a relative offset is shifted by `base`, a
    /// missing one becomes `base`.
    pub fn within(self, base: u64) -> Self {
        if self.0.offset.is_some() {
            self.rebase(base)
        } else {
            self.at(base)
        }
    }

    /// Shifts a known offset by `base` (used when a sub-slice parser reports
    /// offsets relative to its own start).
    pub fn rebase(mut self, base: u64) -> Self {
        if let Some(o) = self.0.offset {
            self.0.offset = Some(o.saturating_add(base));
        }
        self
    }

    /// Stamps the object index if none is set yet.
    pub fn in_object(mut self, index: usize) -> Self {
        if self.0.object.is_none() {
            self.0.object = Some(index);
        }
        self
    }

    /// Stamps the message index if none is set yet.
    pub fn in_message(mut self, index: usize) -> Self {
        if self.0.message.is_none() {
            self.0.message = Some(index);
        }
        self
    }

    /// Prefixes the detail with a file path.
    pub fn with_path(mut self, path: &std::path::Path) -> Self {
        self.0.detail = format!("{}: {}", path.display(), self.0.detail);
        self
    }

    /// Attaches an underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The human-readable detail, without location.
    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// Absolute byte offset in the input where the problem was found.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// Index of the data object concerned.
    pub fn object_index(&self) -> Option<usize> {
        self.0.object
    }

    /// Index of the message concerned (multi-message files).
    pub fn message_index(&self) -> Option<usize> {
        self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.detail)?;
        if let Some(o) = self.0.offset {
            write!(f, " at offset {o} (0x{o:x})")?;
        }
        match (self.0.message, self.0.object) {
            (Some(m), Some(o)) => write!(f, " (message {m}, object {o})"),
            (Some(m), None) => write!(f, " (message {m})"),
            (None, Some(o)) => write!(f, " (object {o})"),
            (None, None) => Ok(()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("detail", &self.0.detail)
            .field("offset", &self.0.offset)
            .field("message", &self.0.message)
            .field("object", &self.0.object)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Io, e.to_string()).with_source(e)
    }
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}

impl From<crate::exec::PoolError> for Error {
    fn from(e: crate::exec::PoolError) -> Self {
        Error::invalid_argument(e.to_string())
    }
}
