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

/// One decoded object picked out of a .tgm file by `to-nifti`/`to-dicom`:
/// its descriptor, its element bytes in the stored byte order, and its
/// metadata entry `base[object]` (empty when absent). Hashes are verified.
pub fn decode_selected(
    input: &std::path::Path,
    message: usize,
    object: usize,
) -> crate::util::CliResult<(tgm::ObjectDescriptor, Vec<u8>, tgm::Map)> {
    let file = crate::util::open_file(input)?;
    if message >= file.num_messages() {
        return Err(format!(
            "{}: message {message} requested, the file has {}",
            input.display(),
            file.num_messages()
        )
        .into());
    }
    let opts = tgm::DecodeOptions::default()
        .native_byte_order(false)
        .verify(tgm::Verify::IfPresent);
    file.with_message(message, |m| {
        if object >= m.num_objects() {
            return Err(tgm::Error::metadata(format!(
                "object {object} requested, message {message} has {}",
                m.num_objects()
            )));
        }
        let entry = m.metadata()?.base.get(object).cloned().unwrap_or_default();
        let obj = m.object(object)?;
        let data = obj.decode(&opts)?.into_owned();
        Ok((obj.descriptor().clone(), data, entry))
    })
    .map_err(|e| format!("{}: {e}", input.display()).into())
}
