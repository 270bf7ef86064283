//! The result type and file opener of the format converters (GRIB, NIfTI,
//! DICOM), whose errors come from several libraries; `main` turns their
//! boxed errors into the one-line [`crate::error::CliError`].

use std::path::Path;

/// Result of a converter step: any error, boxed.
pub type CliResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Opens and indexes a .tgm file (`-` for stdin), naming it in the error;
/// a file with no message, or with bytes outside complete messages, is
/// refused before any output exists.
pub fn open_file(path: &Path) -> CliResult<tgm::TgmFile> {
    Ok(crate::input::Archive::open(path)?.into_local()?)
}
