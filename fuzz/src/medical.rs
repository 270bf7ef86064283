//! Fuzz target bodies for the medical converters of `tgm-convert`: the
//! checks run on encapsulated DICOM pixel data before any codec, the DICOM
//! length pre-scan, the NIfTI reader (header checks and gzip), and the
//! NIfTI and DICOM writers reading an archive's metadata. Kept
//! outside `lib.rs` because the main crate's replay test includes that file
//! and does not depend on `tgm-convert`; `convert/tests/fuzz_replay.rs`
//! replays these corpora.

use std::path::Path;

use tgm_convert::medical::dicom_conform::Conformance;
use tgm_convert::medical::dicom_predecode::{check_fragments, Codec, Declared};
use tgm_convert::medical::{dicom_scan, dicom_write, nifti};

/// The medical targets by name, as their binaries and corpora name them.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "medical_predecode" => predecode,
        "medical_dicom_scan" => dicom_scan,
        "medical_nifti" => nifti,
        "medical_export" => export,
        _ => return None,
    })
}

/// The names accepted by [`target`].
pub const TARGETS: [&str; 4] = [
    "medical_predecode",
    "medical_dicom_scan",
    "medical_nifti",
    "medical_export",
];

/// How [`predecode`] reads its input: byte 0 picks the codec, bytes 1..9
/// the declared rows, columns, samples, bits and frames (small), byte 9
/// how many fragments the rest is cut into.
pub fn predecode_input(data: &[u8]) -> Option<(Codec, Declared, Vec<&[u8]>)> {
    if data.len() < 10 {
        return None;
    }
    let codec = [Codec::Rle, Codec::Jpeg, Codec::Jpeg2000, Codec::JpegLs][usize::from(data[0] % 4)];
    let declared = Declared {
        rows: u64::from(u16::from_le_bytes([data[1], data[2]])),
        columns: u64::from(u16::from_le_bytes([data[3], data[4]])),
        samples: u64::from(data[5] % 4),
        bits_allocated: u64::from(data[6] % 40),
        frames: u64::from(data[7] % 8),
    };
    let rest = &data[10..];
    let parts = usize::from(data[9] % 8).max(1);
    let step = rest.len().div_ceil(parts).max(1);
    Some((codec, declared, rest.chunks(step).collect()))
}

/// The pre-decode checks of encapsulated pixel data.
pub fn predecode(data: &[u8]) {
    if let Some((codec, declared, fragments)) = predecode_input(data) {
        let _ = check_fragments(codec, &declared, &fragments);
    }
}

/// The whole input as a DICOM file.
pub fn dicom_scan(data: &[u8]) {
    let _ = dicom_scan::check_reader(data, data.len() as u64);
}

/// The whole input as a `.nii` or `.nii.gz` file.
pub fn nifti(data: &[u8]) {
    let _ = nifti::read_nifti_from(Path::new("fuzz.nii"), data, data.len() as u64, None);
}

/// The whole input as a Tensogram message written back as NIfTI and as
/// DICOM (`tgm to-nifti`, `tgm to-dicom`, `tgm.to_nifti`, `tgm.to_dicom`):
/// each object, in its stored byte order, with its `base` entry.
pub fn export(data: &[u8]) {
    let opts = tgm::DecodeOptions::default().native_byte_order(false);
    let Ok(msg) = tgm::decode(data, &opts) else {
        return;
    };
    for (i, obj) in msg.objects.iter().enumerate() {
        let entry = msg.metadata.base.get(i).cloned().unwrap_or_default();
        let d = &obj.descriptor;
        let _ = nifti::object_to_nifti(d, &obj.data, &entry, nifti::Version::Auto);
        for mode in [Conformance::Verbatim, Conformance::Strict] {
            let _ = dicom_write::object_to_dicom(d, &obj.data, &entry, mode);
        }
    }
}
