//! The result type and file opener of the format converters (GRIB, NIfTI,
//! DICOM), whose errors come from several libraries; `main` turns their
//! boxed errors into their own one-line messages.

use std::path::Path;

/// Result of a converter step: any error, boxed.
pub type CliResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Opens and indexes a .tgm file, naming it in the error.
pub fn open_file(path: &Path) -> CliResult<tgm::TgmFile> {
    tgm::TgmFile::open(path).map_err(|e| format!("{}: {e}", path.display()).into())
}
