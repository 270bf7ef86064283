//! Converters between Tensogram v3 messages and the formats weather and
//! medical-imaging archives hold: GRIB (through ecCodes) and NetCDF (through
//! netCDF-C) under [`weather`], NIfTI-1/2 and DICOM under [`medical`].
//!
//! Each format is a cargo feature (`grib`, `netcdf`, `nifti`, `dicom`); the
//! `clap` feature derives command-line parsing for the option types, so a
//! front end such as the `tgm` tool parses flags straight into them. The
//! functions here take paths or bytes and options structs and return
//! messages ready for `tgm::encode`; they print nothing.

#[cfg(any(feature = "nifti", feature = "dicom"))]
pub mod medical;
#[cfg(any(
    feature = "nifti",
    feature = "dicom",
    feature = "grib",
    feature = "netcdf"
))]
pub mod util;
pub mod weather;
