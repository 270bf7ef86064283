//! object_store errors as typed tgm errors naming the URL
//! (`spec/remote.md` §5).

use crate::error::{Error, ErrorKind};

/// Maps a store error for `url` to its [`ErrorKind`].
pub(crate) fn from_store(url: &str, e: object_store::Error) -> Error {
    use object_store::Error as E;
    let (kind, what) = match &e {
        E::NotFound { .. } => (ErrorKind::NotFound, "not found"),
        E::AlreadyExists { .. } => (
            ErrorKind::AlreadyExists,
            "already exists (replacing it was not asked for)",
        ),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            (ErrorKind::Forbidden, "access refused")
        }
        E::Precondition { .. } | E::NotModified { .. } => (
            ErrorKind::ObjectChanged,
            "changed since it was opened (ETag no longer matches)",
        ),
        _ => (ErrorKind::Remote, "request failed"),
    };
    Error::new(kind, format!("{url}: {what}: {e}")).with_source(e)
}

/// A response that does not answer the request.
pub(crate) fn bad_response(url: &str, detail: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Remote, format!("{url}: {detail}"))
}
