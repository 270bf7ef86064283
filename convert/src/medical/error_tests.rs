//! The kinds of the medical converters' errors on inputs each kind is for
//! (`spec/convert.md`, "Converter errors").

use std::path::Path;

use tgm::{Dtype, ObjectDescriptor};

use super::{MedicalError, MedicalErrorKind};

/// The error of `r`, which must have failed.
fn failure<T>(r: Result<T, MedicalError>) -> MedicalError {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[cfg(feature = "nifti")]
mod nifti {
    use super::*;
    use crate::medical::nifti::{object_to_nifti, read_nifti, Version};
    use crate::medical::ObjectPick;

    /// A 2 x 3 x 4 int16 volume as NIfTI-1 bytes.
    fn volume() -> Vec<u8> {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![2, 3, 4]);
        let data: Vec<u8> = (0..48u8).collect();
        object_to_nifti(&d, &data, &tgm::Map::new(), Version::Auto).unwrap()
    }

    #[test]
    fn a_file_that_is_not_nifti_is_not_this_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.nii");
        std::fs::write(
            &path,
            "plain text, long enough to hold a header ".repeat(12),
        )
        .unwrap();
        let e = failure(read_nifti(&path, None));
        assert_eq!(e.kind(), MedicalErrorKind::NotThisFormat, "{e}");
        assert!(e
            .to_string()
            .starts_with(&format!("{}: not a NIfTI file", path.display())));
        assert_eq!(e.path(), Some(path.as_path()));
        std::fs::write(&path, b"ab").unwrap();
        let e = failure(read_nifti(&path, None));
        assert_eq!(e.kind(), MedicalErrorKind::NotThisFormat, "{e}");
    }

    #[test]
    fn a_truncated_nifti_is_an_invalid_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.nii");
        let whole = volume();
        std::fs::write(&path, &whole).unwrap();
        assert_eq!(read_nifti(&path, None).unwrap().dims, [4, 3, 2]);
        for cut in [whole.len() - 10, 200] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            let e = failure(read_nifti(&path, None));
            assert_eq!(e.kind(), MedicalErrorKind::InvalidSource, "{e}");
            assert!(
                e.to_string().starts_with(&path.display().to_string()),
                "{e}"
            );
        }
    }

    #[test]
    fn a_missing_file_is_an_io_error_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.nii");
        let e = failure(read_nifti(&path, None));
        assert_eq!(e.kind(), MedicalErrorKind::Io, "{e}");
        let io = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .expect("an io::Error source");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn an_index_beyond_the_file_is_an_invalid_argument_and_a_damaged_file_an_archive_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.tgm");
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![4]);
        let msg = tgm::encode(
            &tgm::GlobalMetadata::default(),
            &[(&d, &[1u8, 2, 3, 4][..])],
            &tgm::EncodeOptions::default(),
        )
        .unwrap();
        std::fs::write(&path, &msg).unwrap();
        let pick = |message, object| ObjectPick {
            input: path.clone(),
            message,
            object,
        };
        assert_eq!(pick(0, 0).decode().unwrap().1, [1, 2, 3, 4]);
        for (m, o) in [(1, 0), (0, 1)] {
            let e = failure(pick(m, o).decode());
            assert_eq!(e.kind(), MedicalErrorKind::InvalidArgument, "{e}");
            assert!(
                e.to_string().starts_with(&path.display().to_string()),
                "{e}"
            );
        }
        // The payload changed after its digest was taken.
        let at = msg.windows(4).position(|w| w == [1, 2, 3, 4]).unwrap();
        let mut damaged = msg.clone();
        damaged[at] = 9;
        std::fs::write(&path, &damaged).unwrap();
        let e = failure(pick(0, 0).decode());
        assert_eq!(e.kind(), MedicalErrorKind::Archive, "{e}");
        let source = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<tgm::Error>())
            .expect("the library's error");
        assert!(
            matches!(source.kind(), tgm::ErrorKind::HashMismatch { .. }),
            "{source:?}"
        );
    }
}

#[cfg(feature = "dicom")]
mod dicom {
    use super::*;
    use crate::medical::dicom::{dicom_to_messages, Reading};
    use crate::medical::dicom_conform::Conformance;
    use crate::medical::dicom_dir::SkipReason;
    use crate::medical::dicom_write::{object_to_dicom, tests::entry};
    use crate::medical::pipeline::PipelineArgs;
    use dicom_core::{DataElement, PrimitiveValue, VR};
    use dicom_dictionary_std::tags;

    /// Writes a one-slice 2 x 2 int16 DICOM file at `path`, with
    /// SamplesPerPixel `samples` (3: a colour image as tgm reads it).
    fn slice(path: &Path, samples: u16) {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![1, 2, 2]);
        let file = object_to_dicom(&d, &[0; 8], &entry(&[]), Conformance::Strict)
            .unwrap()
            .files
            .remove(0);
        let mut obj = dicom_object::OpenFileOptions::new()
            .from_reader(&file[128..])
            .unwrap();
        obj.put(DataElement::new(
            tags::SAMPLES_PER_PIXEL,
            VR::US,
            PrimitiveValue::from(samples),
        ));
        obj.write_to_file(path).unwrap();
    }

    fn read(
        inputs: &[std::path::PathBuf],
        skip_unsupported: bool,
    ) -> crate::medical::MedicalResult<crate::medical::dicom::DicomConversion> {
        let reading = Reading {
            recursive: false,
            skip_unsupported,
        };
        dicom_to_messages(inputs, reading, &PipelineArgs::default(), None)
    }

    #[test]
    fn a_colour_file_is_unsupported_and_skippable_only_when_found_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (grey, colour) = (dir.path().join("a.dcm"), dir.path().join("b.dcm"));
        slice(&grey, 1);
        slice(&colour, 3);
        assert_eq!(read(std::slice::from_ref(&grey), false).unwrap().len(), 1);

        let e = failure(read(&[dir.path().to_path_buf()], false));
        assert_eq!(e.kind(), MedicalErrorKind::Unsupported, "{e}");
        assert!(e.is_skippable(), "{e}");
        assert_eq!(e.path(), Some(colour.as_path()));
        assert!(e.to_string().contains("SamplesPerPixel 3"), "{e}");

        let e = failure(read(std::slice::from_ref(&colour), false));
        assert_eq!(e.kind(), MedicalErrorKind::Unsupported, "{e}");
        assert!(!e.is_skippable(), "{e}");

        let conv = read(&[dir.path().to_path_buf()], true).unwrap();
        assert_eq!(conv.len(), 1);
        assert_eq!(conv.skipped.len(), 1);
        assert_eq!(conv.skipped[0].path, colour);
        assert!(
            matches!(&conv.skipped[0].reason, SkipReason::Unsupported(why) if why.starts_with("SamplesPerPixel 3")),
            "{:?}",
            conv.skipped[0].reason
        );
    }

    #[test]
    fn a_file_that_is_not_dicom_is_not_this_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.dcm");
        std::fs::write(&path, "plain text ".repeat(40)).unwrap();
        let e = failure(read(std::slice::from_ref(&path), false));
        assert_eq!(e.kind(), MedicalErrorKind::NotThisFormat, "{e}");
        assert_eq!(e.path(), Some(path.as_path()));
    }

    #[test]
    fn strict_output_refuses_a_value_outside_its_vr() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![1, 1, 1]);
        let e = entry(&[("StudyDate", "2024-01-02")]);
        assert!(object_to_dicom(&d, &[0; 2], &e, Conformance::Verbatim).is_ok());
        let err = failure(object_to_dicom(&d, &[0; 2], &e, Conformance::Strict));
        assert_eq!(err.kind(), MedicalErrorKind::Refused, "{err}");
        assert!(
            err.to_string().contains("refused by strict output"),
            "{err}"
        );
    }

    #[test]
    fn a_grid_dicom_cannot_hold_is_unsupported() {
        let d = ObjectDescriptor::new(Dtype::Float32, vec![1, 1, 1]);
        let err = failure(object_to_dicom(
            &d,
            &[0; 4],
            &entry(&[]),
            Conformance::Verbatim,
        ));
        assert_eq!(err.kind(), MedicalErrorKind::Unsupported, "{err}");
    }
}
