//! Weather-data converters: GRIB (through ecCodes) and NetCDF (through
//! netCDF-C) to and from Tensogram.
//!
//! The conversion functions here are independent of the command line:
//! [`grib::read_fields`] turns a GRIB file into typed fields,
//! [`convert::fields_to_objects`] turns fields into (descriptor, bytes,
//! metadata) triples ready for `tgm::encode`, and [`export::message_to_grib`]
//! turns a decoded message back into GRIB messages on each field's source
//! header. [`netcdf`] does the
//! same for NetCDF-3 and NetCDF-4 files.
//!
//! [`grib_scan`] and [`netcdf_classic`], the pure-Rust structure checks run
//! before ecCodes or netCDF-C read a file, need no feature, so that they
//! are fuzzed without those libraries.

#[cfg(any(feature = "grib", feature = "netcdf"))]
pub mod budget;
#[cfg(feature = "grib")]
pub mod convert;
#[cfg(feature = "grib")]
mod eccodes_assertion;
#[cfg(feature = "grib")]
pub mod export;
#[cfg(feature = "grib")]
mod ffi;
#[cfg(feature = "grib")]
mod field_values;
#[cfg(feature = "grib")]
pub mod grib;
#[cfg(feature = "grib")]
mod grib1_unused_bits;
pub mod grib_complex_extent;
#[cfg(feature = "grib")]
mod grib_complex_pack;
#[cfg(feature = "grib")]
mod grib_constant;
#[cfg(feature = "grib")]
mod grib_decimal;
mod grib_grid;
#[cfg(feature = "grib")]
mod grib_ibm;
#[cfg(all(test, feature = "grib"))]
mod grib_layout_tests;
#[cfg(feature = "grib")]
mod grib_pl;
#[cfg(feature = "grib")]
mod grib_scales;
pub mod grib_scan;
pub mod grib_second_order_extent;
#[cfg(feature = "grib")]
pub mod grib_shared;
#[cfg(feature = "grib")]
mod grib_simple;
pub mod grib_spectral_extent;
#[cfg(feature = "grib")]
mod grib_zeros;
#[cfg(feature = "netcdf")]
pub mod netcdf;
#[cfg(feature = "netcdf")]
mod netcdf_attrs;
pub mod netcdf_classic;
#[cfg(feature = "netcdf")]
mod netcdf_encode;
#[cfg(feature = "netcdf")]
mod netcdf_ffi;
#[cfg(feature = "netcdf")]
mod netcdf_names;
#[cfg(feature = "netcdf")]
mod netcdf_read;
#[cfg(feature = "netcdf")]
mod netcdf_udt;
#[cfg(feature = "netcdf")]
mod netcdf_write;
#[cfg(feature = "netcdf")]
mod netcdf_write_udt;

#[cfg(feature = "grib")]
use std::fmt;

/// Why a GRIB conversion failed.
#[cfg(feature = "grib")]
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
    /// An assertion inside ecCodes failed during an operation on a key
    /// (`spec/convert.md` "Hostile files"): the call was abandoned where
    /// the assertion failed, instead of ecCodes aborting the process.
    EcCodesAssertion {
        /// The operation (`get`, `set`, `read message`).
        what: String,
        /// The key, empty for whole-message operations.
        key: String,
        /// ecCodes' text of the assertion.
        message: String,
    },
    /// A file could not be opened or written.
    Io(String),
    /// Writing the caller's output failed (the error kind is kept, so that
    /// a closed pipe is recognised).
    Write(std::io::Error),
    /// Input that cannot be converted (unsupported grid, inconsistent sizes).
    Invalid(String),
    /// The Tensogram library refused to encode or decode.
    Tgm(tgm::Error),
}

#[cfg(feature = "grib")]
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
            GribError::EcCodesAssertion { what, key, message } => {
                let on = if key.is_empty() {
                    String::new()
                } else {
                    format!(" {key}")
                };
                write!(f, "ecCodes: {what}{on}: {message}")
            }
            GribError::Io(m) | GribError::Invalid(m) => f.write_str(m),
            GribError::Write(e) => write!(f, "{e}"),
            GribError::Tgm(e) => write!(f, "{e}"),
        }
    }
}

#[cfg(feature = "grib")]
impl std::error::Error for GribError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GribError::Tgm(e) => Some(e),
            GribError::Write(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "grib")]
impl From<budget::BudgetExceeded> for GribError {
    fn from(e: budget::BudgetExceeded) -> Self {
        GribError::Invalid(e.to_string())
    }
}

#[cfg(feature = "grib")]
impl From<tgm::Error> for GribError {
    fn from(e: tgm::Error) -> Self {
        GribError::Tgm(e)
    }
}
