//! Error codes, the thread-local last-error text, and the guard every
//! export runs its body in, so that no panic crosses the C boundary
//! (`spec/c-abi.md` §1).

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tgm::ErrorKind;

/// Status of every fallible `tgm_*` function (`tgm_error` in C); the values
/// are those of the reference's `tensogram.h` 0.24.0.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TgmError {
    /// Success.
    Ok = 0,
    /// Message framing is damaged or truncated.
    Framing = 1,
    /// Metadata or descriptor content is invalid.
    Metadata = 2,
    /// An encoding stage failed or the data do not fit the description.
    Encoding = 3,
    /// A compression codec failed.
    Compression = 4,
    /// An object index is out of range or an object is unusable.
    Object = 5,
    /// An operating-system I/O error.
    Io = 6,
    /// A stored digest differs from the recomputed one.
    HashMismatch = 7,
    /// A null pointer, a wrong length or an unknown option.
    InvalidArg = 8,
    /// Iteration is over: a `tgm_*_iter_next` call had nothing left to give.
    EndOfIter = 9,
    /// A remote store failed.
    Remote = 10,
    /// Hash verification was requested but the frame carries no digest.
    MissingHash = 11,
    /// An asynchronous task exceeded its deadline (not produced yet: the
    /// asynchronous functions are not implemented).
    Timeout = 12,
    /// An asynchronous task was cancelled (not produced yet).
    Cancelled = 13,
}

/// The raw integer a C caller passes where the header says `tgm_error`;
/// read as an integer so that a value outside the enum is not undefined
/// behaviour. Named `tgm_error` in the header.
/// cbindgen:ignore
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TgmErrorCode(pub i32);

/// A failed call: the code returned and the text `tgm_last_error` gives.
#[derive(Debug)]
pub struct Failure {
    /// The status returned to C.
    pub code: TgmError,
    /// What went wrong, for `tgm_last_error`.
    pub text: String,
}

impl Failure {
    /// A failure with `code` and `text`.
    pub fn new(code: TgmError, text: impl Into<String>) -> Self {
        Failure {
            code,
            text: text.into(),
        }
    }

    /// A null pointer, bad length or unknown option.
    pub fn invalid(text: impl Into<String>) -> Self {
        Self::new(TgmError::InvalidArg, text)
    }

    /// Prefixes the text with `context` (a function or path).
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.text = format!("{context}: {}", self.text);
        self
    }
}

/// The C code for a library error kind (`spec/c-abi.md` §1).
pub fn code_of(kind: &ErrorKind) -> TgmError {
    match kind {
        ErrorKind::Truncated
        | ErrorKind::BadMagic
        | ErrorKind::UnsupportedVersion(_)
        | ErrorKind::Framing => TgmError::Framing,
        ErrorKind::Cbor | ErrorKind::Metadata | ErrorKind::LimitExceeded { .. } => {
            TgmError::Metadata
        }
        ErrorKind::Codec => TgmError::Compression,
        ErrorKind::HashMismatch { .. } => TgmError::HashMismatch,
        ErrorKind::MissingHash => TgmError::MissingHash,
        ErrorKind::InvalidArgument => TgmError::InvalidArg,
        ErrorKind::Io | ErrorKind::AlreadyExists => TgmError::Io,
        ErrorKind::NotFound
        | ErrorKind::Forbidden
        | ErrorKind::ObjectChanged
        | ErrorKind::Remote => TgmError::Remote,
        _ => TgmError::Encoding,
    }
}

impl From<tgm::Error> for Failure {
    fn from(e: tgm::Error) -> Self {
        Failure::new(code_of(e.kind()), e.to_string())
    }
}

/// Result of the body of an export.
pub type Outcome<T = ()> = Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `text` as this thread's last error (interior NULs become spaces).
pub fn set_last_error(text: &str) {
    let c = CString::new(text.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|cell| *cell.borrow_mut() = Some(c));
}

/// This thread's last error text, or NULL when no call on this thread has
/// failed. The text stays valid until the next failing call on the thread.
#[no_mangle]
pub extern "C" fn tgm_last_error() -> *const c_char {
    LAST_ERROR.with(|cell| {
        cell.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

/// A static description of `err`; never NULL, "unknown error" for a value
/// outside the enum.
#[no_mangle]
pub extern "C" fn tgm_error_string(err: TgmErrorCode) -> *const c_char {
    let s: &'static std::ffi::CStr = match err.0 {
        0 => c"ok",
        1 => c"framing error",
        2 => c"metadata error",
        3 => c"encoding error",
        4 => c"compression error",
        5 => c"object error",
        6 => c"I/O error",
        7 => c"hash mismatch",
        8 => c"invalid argument",
        9 => c"end of iteration",
        10 => c"remote error",
        11 => c"missing hash",
        12 => c"async task timed out",
        13 => c"async task cancelled",
        _ => c"unknown error",
    };
    s.as_ptr()
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Runs the body of fallible export `name`: a failure or a panic becomes
/// an error code with `tgm_last_error` text naming `name`.
pub fn status(name: &str, body: impl FnOnce() -> Outcome) -> TgmError {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => TgmError::Ok,
        Ok(Err(f)) => {
            set_last_error(&format!("{name}: {}", f.text));
            f.code
        }
        Err(p) => {
            set_last_error(&format!("{name}: internal error: {}", panic_text(&*p)));
            TgmError::Encoding
        }
    }
}

/// Runs the body of infallible export `name` (an accessor or a free):
/// a panic gives `fallback` and sets `tgm_last_error`.
pub fn query<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| {
        set_last_error(&format!("{name}: internal error: {}", panic_text(&*p)));
        fallback
    })
}
