//! Converters between Tensogram v3 messages and the formats weather and
//! medical-imaging archives hold: GRIB (through ecCodes) and NetCDF (through
//! netCDF-C) under [`weather`], NIfTI-1/2 and DICOM under [`medical`].
//!
//! Each format is a cargo feature (`grib`, `netcdf`, `nifti`, `dicom`). The
//! functions here take paths or bytes and options structs and return
//! messages ready for `tgm::encode`; they print nothing. Their errors are
//! typed, each with a kind a caller can act on: [`weather::GribError`],
//! [`weather::netcdf::NetcdfError`] and [`medical::MedicalError`]
//! (`spec/convert.md`, "Converter errors"). Command-line parsing belongs to the front end
//! (the `tgm` tool defines its own flags and converts them into the option
//! types here).

#[cfg(any(feature = "nifti", feature = "dicom"))]
pub mod medical;
pub mod weather;
