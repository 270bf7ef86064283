//! Medical imaging archives (NIfTI-1, DICOM) to and from Tensogram messages.
//!
//! The conversions here are plain functions over bytes and descriptors; the
//! subcommands in `convert_nifti.rs` only parse flags and move files.

#[cfg(feature = "dicom")]
pub mod dicom;
#[cfg(feature = "dicom")]
pub mod dicom_write;
#[cfg(feature = "nifti")]
pub mod nifti;
#[cfg(feature = "nifti")]
pub mod nifti_header;
pub mod pipeline;

/// The objects (descriptor with pipeline applied, payload) and metadata of
/// one message produced by a converter, ready for `tgm::encode`.
pub type Converted = (Vec<(tgm::ObjectDescriptor, Vec<u8>)>, tgm::GlobalMetadata);
