//! The one validation of a NIfTI header, shared by NIfTI-1 and NIfTI-2
//! (spec/convert.md "NIfTI", header check).
//!
//! Both versions are widened to NIfTI-2's field widths ([`LayoutFields`]) and
//! checked by [`check`]: rank, extents, datatype and bitpix, voxel sizes
//! and `vox_offset`, giving the layout the file must then match
//! ([`Declared`]). [`check_sizes`] compares that layout with the file (or
//! the gzip stream) before anything is allocated from it.

use tgm::Dtype;

use super::nifti_header::{dtype_of_code, unsupported_code_name};
use super::{MedicalError, DEFLATE_MAX_RATIO};

/// Decoded bytes a `.nii.gz` may claim whatever its size.
pub const FIXED_ALLOWANCE: u64 = 256 << 20;
/// Decoded bytes a `.nii.gz` may claim per compressed byte, on top of
/// [`FIXED_ALLOWANCE`].
pub const PER_INPUT_BYTE: u64 = 64;

/// The header fields that decide where the voxels lie, at NIfTI-2 width.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutFields {
    /// 1 or 2.
    pub version: u8,
    /// `dim[0]` is the rank, `dim[1..=rank]` the extents (NIfTI-1's
    /// signed shorts sign-extended).
    pub dim: [i64; 8],
    /// NIfTI datatype code.
    pub datatype: i16,
    /// Bits per voxel.
    pub bitpix: i16,
    /// `pixdim[0]` is qfac, `pixdim[1..]` the voxel sizes.
    pub pixdim: [f64; 8],
    /// Offset of the voxel data (a float in NIfTI-1).
    pub vox_offset: f64,
}

/// What a checked header declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// Extents in NIfTI order (`dim[1]` first).
    pub dims: Vec<u64>,
    /// Element type.
    pub dtype: Dtype,
    /// Bytes of voxel data.
    pub voxel_bytes: u64,
    /// Offset of the voxel data: the header, the extension flag and the
    /// extensions come before it.
    pub vox_offset: u64,
    /// Header size (348 or 540).
    pub header_len: u64,
}

impl Declared {
    /// Offset one past the last voxel byte: the size of the uncompressed
    /// single-file image.
    pub fn data_end(&self) -> u64 {
        // check() refuses layouts whose end overflows.
        self.vox_offset + self.voxel_bytes
    }
}

/// Header size of NIfTI `version`.
pub fn header_len(version: u8) -> u64 {
    if version == 2 {
        540
    } else {
        348
    }
}

/// Checks a header's layout fields (either version) and returns what it
/// declares. Every refusal names the field and its value.
pub fn check(f: &LayoutFields) -> Result<Declared, String> {
    let ndim = usize::try_from(f.dim[0])
        .ok()
        .filter(|n| (1..=7).contains(n))
        .ok_or_else(|| format!("dim[0] is {}, not 1..=7", f.dim[0]))?;
    let most = if f.version == 2 {
        i64::MAX
    } else {
        i64::from(i16::MAX)
    };
    let mut dims = Vec::with_capacity(ndim);
    for (i, &d) in f.dim[1..=ndim].iter().enumerate() {
        if !(1..=most).contains(&d) {
            return Err(format!("dim[{}] is {d}, not 1..={most}", i + 1));
        }
        dims.push(d as u64);
    }
    let dtype = dtype_of_code(f.datatype).ok_or_else(|| {
        format!(
            "datatype {} ({}) has no Tensogram equivalent",
            f.datatype,
            unsupported_code_name(f.datatype)
        )
    })?;
    if i64::from(f.bitpix) != (dtype.width() * 8) as i64 {
        return Err(format!(
            "bitpix {} disagrees with datatype {} ({})",
            f.bitpix,
            f.datatype,
            dtype.name()
        ));
    }
    // The spatial voxel sizes place every voxel: a NaN or infinite one
    // makes the grid meaningless.
    if let Some(i) = (1..=ndim.min(3)).find(|&i| !f.pixdim[i].is_finite()) {
        return Err(format!(
            "pixdim[{i}] is {}, not a finite voxel size",
            f.pixdim[i]
        ));
    }
    let header_len = header_len(f.version);
    let first = header_len + 4;
    let v = f.vox_offset;
    if !(v.is_finite() && v.fract() == 0.0 && v >= first as f64 && v < 2f64.powi(63)) {
        return Err(format!(
            "vox_offset {v} is not a whole number of at least {first}"
        ));
    }
    let vox_offset = v as u64;
    let voxel_bytes = dims
        .iter()
        .try_fold(dtype.width() as u64, |acc, &d| acc.checked_mul(d))
        .filter(|n| n.checked_add(vox_offset).is_some())
        .ok_or("voxel count overflows")?;
    Ok(Declared {
        dims,
        dtype,
        voxel_bytes,
        vox_offset,
        header_len,
    })
}

/// The most bytes a `.nii.gz` of `file_len` compressed bytes may inflate
/// to: `max_decoded` when given, else [`FIXED_ALLOWANCE`] +
/// [`PER_INPUT_BYTE`] × `file_len`; never more than deflate can expand to
/// ([`DEFLATE_MAX_RATIO`]) nor than `tgm::Limits`' largest object.
pub fn inflate_cap(file_len: u64, max_decoded: Option<u64>) -> u64 {
    let budget = max_decoded.unwrap_or_else(|| {
        file_len
            .saturating_mul(PER_INPUT_BYTE)
            .saturating_add(FIXED_ALLOWANCE)
    });
    budget
        .min(file_len.saturating_mul(DEFLATE_MAX_RATIO))
        .min(tgm::Limits::default().max_object_bytes)
}

/// Checks the declared layout against the file: an uncompressed image is
/// exactly `data_end` bytes long; a gzip one may not claim more than
/// [`inflate_cap`].
pub fn check_sizes(
    d: &Declared,
    file_len: u64,
    gz: bool,
    max_decoded: Option<u64>,
) -> Result<(), MedicalError> {
    let end = d.data_end();
    let what = format!("header dims {:?} of {}", d.dims, d.dtype.name());
    if !gz {
        if end != file_len {
            let found = if file_len > end {
                format!(
                    "the file has {file_len}: {} bytes after the declared data would be lost",
                    file_len - end
                )
            } else {
                format!("the file has only {file_len}")
            };
            return Err(MedicalError::invalid(format!(
                "{what} need {} bytes of voxel data at offset {} (file size {end}), but {found}",
                d.voxel_bytes, d.vox_offset
            )));
        }
        let most = tgm::Limits::default().max_object_bytes;
        if d.voxel_bytes > most {
            return Err(MedicalError::refused(format!(
                "{what} need {} bytes, more than the largest object ({most} bytes)",
                d.voxel_bytes
            )));
        }
        return Ok(());
    }
    let cap = inflate_cap(file_len, max_decoded);
    if end > cap {
        return Err(MedicalError::refused(format!(
            "{what} need {end} bytes once inflated, more than the {cap} bytes a gzip stream \
             of {file_len} bytes may inflate to (deflate holds at most {DEFLATE_MAX_RATIO} \
             times its size; the default budget is {FIXED_ALLOWANCE} + {PER_INPUT_BYTE} x \
             the compressed size, --max-decoded-bytes changes it)"
        )));
    }
    Ok(())
}

/// NIfTI's scaling rule: `scl_slope` 0 or not finite means no scaling; a
/// non-finite `scl_inter` with a valid slope counts as 0 (nifti_clib).
/// `Some((slope, inter))` when the stored values are to be scaled.
pub fn scaling(slope: f64, inter: f64) -> Option<(f64, f64)> {
    if slope == 0.0 || !slope.is_finite() {
        return None;
    }
    Some((slope, if inter.is_finite() { inter } else { 0.0 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medical::MedicalErrorKind;

    fn fields(version: u8) -> LayoutFields {
        LayoutFields {
            version,
            dim: [3, 4, 5, 6, 1, 1, 1, 1],
            datatype: 4,
            bitpix: 16,
            pixdim: [1.0, 2.0, 2.0, 3.0, 1.0, 1.0, 1.0, 1.0],
            vox_offset: if version == 2 { 544.0 } else { 352.0 },
        }
    }

    #[test]
    fn both_versions_are_checked_by_the_same_rules() {
        for v in [1, 2] {
            let d = check(&fields(v)).unwrap();
            assert_eq!(d.dims, [4, 5, 6]);
            assert_eq!(d.dtype, Dtype::Int16);
            assert_eq!(d.voxel_bytes, 240);
            assert_eq!(d.data_end(), d.vox_offset + 240);
            let bad = |edit: &dyn Fn(&mut LayoutFields)| {
                let mut f = fields(v);
                edit(&mut f);
                check(&f).unwrap_err()
            };
            assert!(bad(&|f| f.dim[0] = 0).contains("dim[0] is 0"));
            assert!(bad(&|f| f.dim[0] = 8).contains("dim[0] is 8"));
            assert!(bad(&|f| f.dim[2] = -1).contains("dim[2] is -1"));
            assert!(bad(&|f| f.dim[3] = 0).contains("dim[3] is 0"));
            assert!(bad(&|f| f.datatype = 128).contains("RGB24"));
            assert!(bad(&|f| f.bitpix = 32).contains("bitpix 32"));
            assert!(bad(&|f| f.pixdim[2] = f64::NAN).contains("pixdim[2] is NaN"));
            assert!(bad(&|f| f.pixdim[1] = f64::INFINITY).contains("pixdim[1] is inf"));
            assert!(bad(&|f| f.vox_offset = 100.0).contains("vox_offset 100"));
            assert!(bad(&|f| f.vox_offset = 600.5).contains("vox_offset 600.5"));
            assert!(bad(&|f| f.vox_offset = f64::NAN).contains("vox_offset NaN"));
            // pixdim beyond the spatial axes is not a voxel size.
            let mut f = fields(v);
            f.pixdim[4] = f64::NAN;
            assert!(check(&f).is_ok());
        }
        let mut f = fields(2);
        f.dim = [7, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1, 1, 1];
        assert!(check(&f).unwrap_err().contains("overflows"));
        f.dim = [1, 40000, 1, 1, 1, 1, 1, 1];
        assert!(check(&f).is_ok());
        let mut f = fields(1);
        f.dim = [1, 40000, 1, 1, 1, 1, 1, 1];
        assert!(check(&f).unwrap_err().contains("not 1..=32767"));
    }

    #[test]
    fn sizes_are_checked_against_the_file() {
        let d = check(&fields(1)).unwrap();
        assert!(check_sizes(&d, 592, false, None).is_ok());
        let e = check_sizes(&d, 593, false, None).unwrap_err();
        assert_eq!(e.kind(), MedicalErrorKind::InvalidSource);
        assert!(e
            .to_string()
            .contains("the file has 593: 1 bytes after the declared data would be lost"));
        assert!(check_sizes(&d, 591, false, None)
            .unwrap_err()
            .to_string()
            .contains("the file has only 591"));
        assert!(check_sizes(&d, 30, true, None).is_ok());
        // 592 bytes cannot come out of a 1-byte stream.
        let e = check_sizes(&d, 0, true, None).unwrap_err();
        assert_eq!(e.kind(), MedicalErrorKind::Refused);
        assert!(e.to_string().contains("need 592 bytes once inflated"));
        // A budget below the claim refuses it; the default grows with the file.
        let e = check_sizes(&d, 30, true, Some(591)).unwrap_err();
        assert_eq!(e.kind(), MedicalErrorKind::Refused);
        assert_eq!(inflate_cap(1 << 20, None), FIXED_ALLOWANCE + (64 << 20));
        assert_eq!(inflate_cap(10, None), 10 * DEFLATE_MAX_RATIO);
        assert_eq!(
            inflate_cap(u64::MAX, Some(u64::MAX)),
            tgm::Limits::default().max_object_bytes
        );
    }

    #[test]
    fn scaling_follows_the_nifti_rule() {
        assert_eq!(scaling(0.0, 5.0), None);
        assert_eq!(scaling(f64::NAN, 5.0), None);
        assert_eq!(scaling(f64::INFINITY, 0.0), None);
        assert_eq!(scaling(2.0, f64::NAN), Some((2.0, 0.0)));
        assert_eq!(scaling(2.0, -3.0), Some((2.0, -3.0)));
    }
}
