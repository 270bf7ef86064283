//! Medical imaging archives (NIfTI-1, DICOM) to and from Tensogram messages.
//!
//! The conversions here are plain functions over bytes and descriptors; the
//! subcommands in `convert_nifti.rs` only parse flags and move files.

#[cfg(feature = "dicom")]
pub mod deid;
#[cfg(feature = "dicom")]
pub mod deid_profile;
#[cfg(feature = "dicom")]
pub mod deid_uid;
#[cfg(feature = "dicom")]
pub mod dicom;
#[cfg(feature = "dicom")]
pub mod dicom_conform;
#[cfg(feature = "dicom")]
pub mod dicom_dir;
#[cfg(feature = "dicom")]
pub mod dicom_groups;
#[cfg(feature = "dicom")]
pub mod dicom_palette;
#[cfg(feature = "dicom")]
mod dicom_pixels;
#[cfg(feature = "dicom")]
pub mod dicom_predecode;
#[cfg(feature = "dicom")]
pub mod dicom_scan;
#[cfg(feature = "dicom")]
pub mod dicom_seq;
#[cfg(feature = "dicom")]
pub mod dicom_stream;
#[cfg(feature = "dicom")]
pub mod dicom_time;
#[cfg(feature = "dicom")]
pub mod dicom_vr;
#[cfg(feature = "dicom")]
pub mod dicom_write;
mod error;
#[cfg(test)]
mod error_tests;
pub mod geometry;
#[cfg(feature = "nifti")]
pub mod gz_members;
#[cfg(feature = "nifti")]
pub mod gz_parallel;
#[cfg(feature = "nifti")]
pub mod nifti;
#[cfg(feature = "nifti")]
pub mod nifti2;
#[cfg(feature = "nifti")]
pub mod nifti_check;
#[cfg(feature = "nifti")]
pub mod nifti_ext;
#[cfg(feature = "nifti")]
pub mod nifti_float;
#[cfg(feature = "nifti")]
pub mod nifti_header;
#[cfg(feature = "nifti")]
pub mod nifti_stream;
#[cfg(any(feature = "nifti", feature = "dicom"))]
pub mod nifti_voxels;
pub mod pipeline;

pub use error::{MedicalError, MedicalErrorKind, MedicalResult};

/// Largest expansion of a deflate stream (RFC 1951: 258 bytes per 2 bits,
/// rounded up): bounds what a `.nii.gz` or a deflated DICOM data set of a
/// given size can hold.
pub const DEFLATE_MAX_RATIO: u64 = 1032;

/// The objects (descriptor with pipeline applied, payload) and metadata of
/// one message produced by a converter, ready for `tgm::encode`.
pub type Converted = (Vec<(tgm::ObjectDescriptor, Vec<u8>)>, tgm::GlobalMetadata);

/// Which object of which .tgm file `to-nifti`/`to-dicom` write out.
pub struct ObjectPick {
    /// Input .tgm file.
    pub input: std::path::PathBuf,
    /// Message index in the file.
    pub message: usize,
    /// Object index in the message.
    pub object: usize,
}

impl ObjectPick {
    /// "PATH: message M object O", the prefix of errors about this object.
    pub fn describe(&self) -> String {
        format!(
            "{}: message {} object {}",
            self.input.display(),
            self.message,
            self.object
        )
    }

    /// The picked object: its descriptor, its element bytes in the stored
    /// byte order, and its metadata entry `base[object]` (empty when
    /// absent). Hashes are verified.
    pub fn decode(&self) -> MedicalResult<(tgm::ObjectDescriptor, Vec<u8>, tgm::Map)> {
        let file = tgm::TgmFile::open(&self.input).map_err(|e| archive_at(&self.input, e))?;
        self.decode_from(&file)
    }

    /// [`ObjectPick::decode`] from `file`, already opened from
    /// [`ObjectPick::input`] (errors name that path).
    pub fn decode_from<S: tgm::file::ByteSource>(
        &self,
        file: &tgm::TgmFile<S>,
    ) -> MedicalResult<(tgm::ObjectDescriptor, Vec<u8>, tgm::Map)> {
        self.decode_reporting(file, tgm::pipeline::ProgressHook::default())
    }

    /// [`ObjectPick::decode_from`], telling `progress` the decode's steps
    /// (`spec/pipeline.md` §6.7).
    pub fn decode_reporting<S: tgm::file::ByteSource>(
        &self,
        file: &tgm::TgmFile<S>,
        progress: tgm::pipeline::ProgressHook,
    ) -> MedicalResult<(tgm::ObjectDescriptor, Vec<u8>, tgm::Map)> {
        let (input, message, object) = (&self.input, self.message, self.object);
        self.check_message(file)?;
        let opts = Self::options();
        file.with_message(message, |m| {
            if object >= m.num_objects() {
                return Err(tgm::Error::invalid_argument(format!(
                    "object {object} requested, message {message} has {}",
                    m.num_objects()
                )));
            }
            let entry = m.metadata()?.base.get(object).cloned().unwrap_or_default();
            let obj = m.object(object)?;
            // The read part of a mapped payload is paged out as it is
            // decoded or copied, so the file and the volume are not both
            // resident whole (`spec/pipeline.md` §6.7).
            let region = obj.payload_region();
            let paging = tgm::pipeline::ProgressHook::paging_out(region).then(progress.clone());
            let data = match obj.decode(&opts.clone().progress(paging))? {
                std::borrow::Cow::Borrowed(b) => tgm::pipeline::copy_paging_out(b)?,
                std::borrow::Cow::Owned(v) => v,
            };
            Ok((obj.descriptor().clone(), data, entry))
        })
        .map_err(|e| archive_at(input, e))
    }

    /// Refuses a message index beyond `file`'s messages.
    fn check_message<S: tgm::file::ByteSource>(&self, file: &tgm::TgmFile<S>) -> MedicalResult {
        if self.message >= file.num_messages() {
            return Err(MedicalError::at(
                MedicalErrorKind::InvalidArgument,
                &self.input,
                format!(
                    "message {} requested, the file has {}",
                    self.message,
                    file.num_messages()
                ),
            ));
        }
        Ok(())
    }

    /// How a picked object is decoded: in its stored byte order, its
    /// digest checked when present.
    fn options() -> tgm::DecodeOptions {
        tgm::DecodeOptions::default()
            .native_byte_order(false)
            .verify(tgm::Verify::IfPresent)
    }

    /// [`ObjectPick::decode_reporting`] handing the decoded bytes on in
    /// order, in pieces of about [`STREAM_PIECE_BYTES`]
    /// (`tgm::Object::decode_streaming`): `start(descriptor, entry)` makes
    /// what the pieces go to, `piece` takes each in turn; that is returned.
    /// Memory holds no decoded copy of the object beside what the pipeline
    /// needs (README, Memory). An error from `start` or `piece` is
    /// returned as it is.
    pub fn stream_reporting<S: tgm::file::ByteSource, W>(
        &self,
        file: &tgm::TgmFile<S>,
        progress: tgm::pipeline::ProgressHook,
        start: impl FnOnce(&tgm::ObjectDescriptor, &tgm::Map) -> MedicalResult<W>,
        mut piece: impl FnMut(&mut W, &[u8]) -> MedicalResult,
    ) -> MedicalResult<W> {
        let (input, message, object) = (&self.input, self.message, self.object);
        self.check_message(file)?;
        let opts = Self::options();
        // The caller's own error, kept whole while the decode stops.
        let mut failed: Option<MedicalError> = None;
        let stopped = || tgm::Error::new(tgm::ErrorKind::InvalidInput, "stopped");
        let streamed = file.with_message(message, |m| {
            if object >= m.num_objects() {
                return Err(tgm::Error::invalid_argument(format!(
                    "object {object} requested, message {message} has {}",
                    m.num_objects()
                )));
            }
            let entry = m.metadata()?.base.get(object).cloned().unwrap_or_default();
            let obj = m.object(object)?;
            let mut sink = match start(obj.descriptor(), &entry) {
                Ok(s) => s,
                Err(e) => {
                    failed = Some(e);
                    return Err(stopped());
                }
            };
            // The read part of a mapped payload is paged out as it is
            // decoded (`spec/pipeline.md` §6.7).
            let paging = tgm::pipeline::ProgressHook::paging_out(obj.payload_region())
                .then(progress.clone());
            let mut buf = Vec::new();
            obj.decode_streaming(
                &opts.clone().progress(paging),
                STREAM_PIECE_BYTES,
                &mut buf,
                |_, bytes| {
                    piece(&mut sink, bytes).map_err(|e| {
                        failed = Some(e);
                        stopped()
                    })
                },
            )?;
            Ok(sink)
        });
        match (streamed, failed) {
            (Ok(sink), _) => Ok(sink),
            (Err(_), Some(e)) => Err(e),
            (Err(e), None) => Err(archive_at(input, e)),
        }
    }
}

/// The size of the pieces [`ObjectPick::stream_reporting`] hands on.
pub const STREAM_PIECE_BYTES: usize = 4 << 20;

/// The Tensogram library's error `e` about the file `path`, as an
/// [`MedicalErrorKind::Archive`] error naming the path; an object index
/// out of range stays the caller's mistake, a failed read an I/O error.
fn archive_at(path: &std::path::Path, e: tgm::Error) -> MedicalError {
    let kind = match e.kind() {
        tgm::ErrorKind::InvalidArgument => MedicalErrorKind::InvalidArgument,
        tgm::ErrorKind::Io => MedicalErrorKind::Io,
        _ => MedicalErrorKind::Archive,
    };
    MedicalError::at(kind, path, &e).with_source(e)
}
