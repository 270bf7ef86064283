//! Weather-data converters: GRIB (through ecCodes) to and from Tensogram.
//!
//! The conversion functions here are independent of the command line:
//! [`grib::read_fields`] turns a GRIB file into typed fields,
//! [`convert::fields_to_objects`] turns fields into (descriptor, bytes,
//! metadata) triples ready for `tgm::encode`, and [`export::message_to_grib`]
//! turns a decoded message back into GRIB2 messages.

pub mod convert;
pub mod export;
mod ffi;
pub mod grib;

use std::fmt;

/// Why a GRIB conversion failed.
#[derive(Debug)]
pub enum GribError {
    /// ecCodes refused an operation on a key.
    EcCodes {
        /// The operation (`get`, `set`, `read message`).
        what: String,
        /// The key, empty for whole-message operations.
        key: String,
        /// ecCodes' status code.
        code: i32,
        /// ecCodes' text for the code.
        message: String,
    },
    /// A file could not be opened or written.
    Io(String),
    /// Input that cannot be converted (unsupported grid, inconsistent sizes).
    Invalid(String),
    /// The Tensogram library refused to encode or decode.
    Tgm(tgm::Error),
}

impl fmt::Display for GribError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GribError::EcCodes {
                what,
                key,
                code,
                message,
            } => {
                if key.is_empty() {
                    write!(f, "ecCodes: {what}: {message} ({code})")
                } else {
                    write!(f, "ecCodes: {what} {key}: {message} ({code})")
                }
            }
            GribError::Io(m) | GribError::Invalid(m) => f.write_str(m),
            GribError::Tgm(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GribError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GribError::Tgm(e) => Some(e),
            _ => None,
        }
    }
}

impl From<tgm::Error> for GribError {
    fn from(e: tgm::Error) -> Self {
        GribError::Tgm(e)
    }
}
