//! NIfTI-1 and NIfTI-2 volumes to Tensogram objects and back.
//!
//! Voxels keep their stored dtype and byte order (spec/tensor-model.md): the
//! payload bytes are the file's bytes. NIfTI stores `dim[1]` fastest, so the
//! object's row-major shape is the NIfTI dims reversed, and `dim_names`
//! names each axis of that shape (`["k", "j", "i"]` for a 3-D volume).
//! The header is kept under `base[i].nifti` (see `nifti_header`).
//!
//! Untrusted input: sizes are computed with checked arithmetic and compared
//! with the file before any allocation; a `.nii.gz` header claiming more
//! than [`DEFLATE_MAX_RATIO`] times the file size is refused before
//! inflating, the stream is read incrementally (memory follows the bytes
//! actually present), and inflation stops one byte past the header's size,
//! so a gzip bomb is never expanded beyond what the header describes.

// NiftiHeader has some fifty fields; headers are built from the default
// field by field.
#![allow(clippy::field_reassign_with_default)]

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use nifti::{Endianness, NiftiHeader};
use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, GlobalMetadata, Map, ObjectDescriptor};

use super::geometry::{self, Geometry};
use super::nifti2::{self, is_nifti2, Nifti2Header, DATA_OFFSET2, HEADER_LEN2};
use super::nifti_header::{
    dtype_of_code, header_from_meta, header_to_meta, unsupported_code_name, write_header,
    AXIS_NAMES, DATA_OFFSET, HEADER_LEN, MAX_DIM,
};
use super::pipeline::PipelineArgs;
use super::{Converted, DEFLATE_MAX_RATIO};
use crate::util::CliResult;

/// A parsed NIfTI header of either version.
#[derive(Clone, Debug)]
pub enum Header {
    /// NIfTI-1 (348 bytes, `n+1`).
    V1(Box<NiftiHeader>),
    /// NIfTI-2 (540 bytes, `n+2`).
    V2(Box<Nifti2Header>),
}

/// A NIfTI-1 or NIfTI-2 volume as read: its header and its voxel bytes in
/// stored order.
pub struct NiftiVolume {
    /// The parsed header.
    pub header: Header,
    /// Extents in NIfTI order (`dim[1]` first).
    pub dims: Vec<u64>,
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of `data` (the header's).
    pub byte_order: ByteOrder,
    /// Voxel bytes, `dim[1]` fastest.
    pub data: Vec<u8>,
}

/// Which byte order converted volumes are stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ByteOrderChoice {
    /// The input file's byte order.
    #[default]
    Keep,
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

fn err_at(path: &Path, msg: impl std::fmt::Display) -> Box<dyn std::error::Error + Send + Sync> {
    format!("{}: {msg}", path.display()).into()
}

/// Reads a single-file NIfTI-1 volume (`.nii`, or gzip-compressed `.nii.gz`,
/// recognised by its magic bytes rather than its name).
pub fn read_nifti(path: &Path) -> CliResult<NiftiVolume> {
    let file = File::open(path).map_err(|e| err_at(path, format!("cannot open: {e}")))?;
    let file_len = file
        .metadata()
        .map_err(|e| err_at(path, format!("cannot stat: {e}")))?
        .len();
    read_nifti_from(path, BufReader::new(file), file_len)
}

/// [`read_nifti`] of a file of `file_len` bytes read from `raw`; `path`
/// names it in errors.
pub fn read_nifti_from(path: &Path, mut raw: impl Read, file_len: u64) -> CliResult<NiftiVolume> {
    let mut lead = [0u8; 4];
    raw.read_exact(&mut lead)
        .map_err(|_| err_at(path, "too short to hold a NIfTI header"))?;
    let gz = lead[..2] == [0x1f, 0x8b];
    let rest = std::io::Cursor::new(lead).chain(raw);
    let mut input: Box<dyn Read + '_> = if gz {
        Box::new(flate2::read::GzDecoder::new(rest))
    } else {
        Box::new(rest)
    };
    let mut head = [0u8; HEADER_LEN];
    read_fully(&mut input, &mut head).map_err(|e| match e {
        ReadShort::Io(e) => err_at(path, format!("cannot read the header: {e}")),
        ReadShort::Eof(n) => err_at(
            path,
            format!("truncated: {n} of the header's {HEADER_LEN} bytes present"),
        ),
    })?;
    let lead: [u8; 4] = head[..4].try_into().expect("4 bytes");
    let (header, dims, dtype, nbytes, vox_offset, header_len) = if is_nifti2(lead) {
        let mut rest = [0u8; HEADER_LEN2 - HEADER_LEN];
        read_fully(&mut input, &mut rest).map_err(|e| match e {
            ReadShort::Io(e) => err_at(path, format!("cannot read the header: {e}")),
            ReadShort::Eof(n) => err_at(
                path,
                format!(
                    "truncated: {} of the NIfTI-2 header's {HEADER_LEN2} bytes present",
                    HEADER_LEN + n
                ),
            ),
        })?;
        let mut full = [0u8; HEADER_LEN2];
        full[..HEADER_LEN].copy_from_slice(&head);
        full[HEADER_LEN..].copy_from_slice(&rest);
        let h = nifti2::parse(&full).map_err(|e| err_at(path, e))?;
        let (dims, dtype, nbytes) = volume_layout2(&h).map_err(|e| err_at(path, e))?;
        let vox_offset = u64::try_from(h.vox_offset)
            .ok()
            .filter(|&v| v >= DATA_OFFSET2 as u64)
            .ok_or_else(|| {
                err_at(
                    path,
                    format!("vox_offset {} is less than {DATA_OFFSET2}", h.vox_offset),
                )
            })?;
        let h = Header::V2(Box::new(h));
        (h, dims, dtype, nbytes, vox_offset, HEADER_LEN2)
    } else {
        let sizeof_hdr = i32::from_le_bytes(lead);
        if sizeof_hdr != HEADER_LEN as i32 && sizeof_hdr.swap_bytes() != HEADER_LEN as i32 {
            return Err(err_at(
                path,
                format!("not a NIfTI file: sizeof_hdr is {sizeof_hdr}, not 348 or 540"),
            ));
        }
        let header = NiftiHeader::from_reader(&head[..])
            .map_err(|e| err_at(path, format!("invalid NIfTI-1 header: {e}")))?;
        if &header.magic != b"n+1\0" {
            return Err(err_at(
                path,
                "header-only NIfTI (magic \"ni1\", data in a separate .img) is not supported; \
                 convert it to a single .nii file first",
            ));
        }
        let (dims, dtype, nbytes) = volume_layout(&header).map_err(|e| err_at(path, e))?;
        let vox_offset = header.vox_offset;
        if !(vox_offset.is_finite()
            && vox_offset >= DATA_OFFSET as f32
            && vox_offset.fract() == 0.0)
        {
            return Err(err_at(
                path,
                format!("vox_offset {vox_offset} is not a whole number of at least {DATA_OFFSET}"),
            ));
        }
        let h = Header::V1(Box::new(header));
        (h, dims, dtype, nbytes, vox_offset as u64, HEADER_LEN)
    };
    let data_end = vox_offset
        .checked_add(nbytes)
        .ok_or_else(|| err_at(path, "voxel data size overflows"))?;
    if !gz && data_end != file_len {
        return Err(err_at(
            path,
            format!(
                "header dims {dims:?} of {} need {nbytes} bytes of voxel data at offset \
                 {vox_offset} (file size {data_end}), but the file has {file_len} bytes",
                dtype.name()
            ),
        ));
    }
    // A deflate stream expands at most DEFLATE_MAX_RATIO times: a header
    // claiming more than the compressed file can hold is refused before
    // anything is inflated.
    let most = file_len.saturating_mul(DEFLATE_MAX_RATIO);
    if gz && data_end > most {
        return Err(err_at(
            path,
            format!(
                "header dims {dims:?} of {} need {data_end} bytes, but a gzip stream of \
                 {file_len} bytes holds at most {most}",
                dtype.name()
            ),
        ));
    }
    let skip = vox_offset - header_len as u64;
    let skipped = std::io::copy(&mut (&mut input).take(skip), &mut std::io::sink())
        .map_err(|e| err_at(path, format!("corrupt or truncated data: {e}")))?;
    if skipped != skip {
        return Err(err_at(
            path,
            format!("truncated: the stream ends inside the header extensions (before offset {vox_offset})"),
        ));
    }
    // Uncompressed: the size was checked against the file above. Gzip: grow
    // with the bytes actually decompressed.
    let mut data = if gz {
        Vec::new()
    } else {
        Vec::with_capacity(
            usize::try_from(nbytes).map_err(|_| err_at(path, "volume too large for memory"))?,
        )
    };
    (&mut input)
        .take(nbytes)
        .read_to_end(&mut data)
        .map_err(|e| err_at(path, format!("corrupt or truncated gzip stream: {e}")))?;
    if (data.len() as u64) != nbytes {
        return Err(err_at(
            path,
            format!(
                "truncated: header dims {dims:?} of {} need {nbytes} bytes of voxel data, \
                 the stream holds {}",
                dtype.name(),
                data.len()
            ),
        ));
    }
    let mut extra = [0u8; 1];
    let n = input.read(&mut extra).map_err(|e| {
        err_at(
            path,
            format!("corrupt gzip stream after the voxel data: {e}"),
        )
    })?;
    if n != 0 {
        return Err(err_at(
            path,
            format!(
                "data after the {nbytes} bytes of voxel data that header dims {dims:?} describe"
            ),
        ));
    }
    let byte_order = match &header {
        Header::V1(h) => match h.endianness {
            Endianness::Big => ByteOrder::Big,
            Endianness::Little => ByteOrder::Little,
        },
        Header::V2(h) => h.byte_order,
    };
    Ok(NiftiVolume {
        header,
        dims,
        dtype,
        byte_order,
        data,
    })
}

enum ReadShort {
    Io(std::io::Error),
    Eof(usize),
}

fn read_fully(r: &mut dyn Read, buf: &mut [u8]) -> Result<(), ReadShort> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => return Err(ReadShort::Eof(got)),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadShort::Io(e)),
        }
    }
    Ok(())
}

/// Dims (NIfTI order), dtype and voxel byte count of a header, checked.
fn volume_layout(h: &NiftiHeader) -> Result<(Vec<u64>, Dtype, u64), String> {
    let ndim = usize::from(h.dim[0]);
    if !(1..=7).contains(&ndim) {
        return Err(format!("dim[0] is {}, not 1..=7", h.dim[0]));
    }
    let dims: Vec<u64> = h.dim[1..=ndim].iter().map(|&d| u64::from(d)).collect();
    if let Some(i) = dims.iter().position(|&d| d == 0 || d > MAX_DIM) {
        return Err(format!(
            "dim[{}] is {}, not 1..={MAX_DIM}",
            i + 1,
            h.dim[i + 1] as i16
        ));
    }
    let dtype = dtype_of_code(h.datatype).ok_or_else(|| {
        format!(
            "datatype {} ({}) has no Tensogram equivalent",
            h.datatype,
            unsupported_code_name(h.datatype)
        )
    })?;
    if i64::from(h.bitpix) != (dtype.width() * 8) as i64 {
        return Err(format!(
            "bitpix {} disagrees with datatype {} ({})",
            h.bitpix,
            h.datatype,
            dtype.name()
        ));
    }
    let nbytes = dims
        .iter()
        .try_fold(dtype.width() as u64, |acc, &d| acc.checked_mul(d))
        .ok_or("voxel count overflows")?;
    Ok((dims, dtype, nbytes))
}

/// Dims (NIfTI order), dtype and voxel byte count of a NIfTI-2 header,
/// checked.
fn volume_layout2(h: &Nifti2Header) -> Result<(Vec<u64>, Dtype, u64), String> {
    let ndim = usize::try_from(h.dim[0])
        .ok()
        .filter(|n| (1..=7).contains(n))
        .ok_or_else(|| format!("dim[0] is {}, not 1..=7", h.dim[0]))?;
    let mut dims = Vec::with_capacity(ndim);
    for (i, &d) in h.dim[1..=ndim].iter().enumerate() {
        let d = u64::try_from(d)
            .ok()
            .filter(|&d| d > 0)
            .ok_or_else(|| format!("dim[{}] is {d}, not positive", i + 1))?;
        dims.push(d);
    }
    let dtype = dtype_of_code(h.datatype).ok_or_else(|| {
        format!(
            "datatype {} ({}) has no Tensogram equivalent",
            h.datatype,
            unsupported_code_name(h.datatype)
        )
    })?;
    if i64::from(h.bitpix) != (dtype.width() * 8) as i64 {
        return Err(format!(
            "bitpix {} disagrees with datatype {} ({})",
            h.bitpix,
            h.datatype,
            dtype.name()
        ));
    }
    let nbytes = dims
        .iter()
        .try_fold(dtype.width() as u64, |acc, &d| acc.checked_mul(d))
        .ok_or("voxel count overflows")?;
    Ok((dims, dtype, nbytes))
}

/// Reverses the bytes of every `unit`-byte group.
fn swap_units(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for chunk in data.chunks_exact_mut(unit) {
            chunk.reverse();
        }
    }
}

/// A volume as one object: descriptor (with the pipeline applied), payload
/// and its `base` entry (`name`, `role`, `dim_names`, `nifti`).
pub fn volume_to_object(
    vol: NiftiVolume,
    name: &str,
    role: &str,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
) -> CliResult<(ObjectDescriptor, Vec<u8>, Map)> {
    let NiftiVolume {
        header,
        dims,
        dtype,
        byte_order,
        mut data,
    } = vol;
    let target = match order {
        ByteOrderChoice::Keep => byte_order,
        ByteOrderChoice::Little => ByteOrder::Little,
        ByteOrderChoice::Big => ByteOrder::Big,
    };
    if target != byte_order {
        swap_units(&mut data, dtype.swap_unit());
    }
    let shape: Vec<u64> = dims.iter().rev().copied().collect();
    let mut d = ObjectDescriptor::new(dtype, shape);
    d.byte_order = target;
    pipeline.apply(&mut d)?;
    let mut entry = Map::new();
    entry.insert("name".into(), name.into());
    entry.insert("role".into(), role.into());
    entry.insert(
        "dim_names".into(),
        Value::Array(
            AXIS_NAMES[..dims.len()]
                .iter()
                .rev()
                .map(|&n| n.into())
                .collect(),
        ),
    );
    let mut meta = match &header {
        Header::V1(h) => header_to_meta(h, &dims),
        Header::V2(h) => nifti2::to_meta(h, &dims),
    };
    if let Value::Map(entries) = &mut meta {
        if let Some(slot) = entries
            .iter_mut()
            .find(|(k, _)| k.as_text() == Some("byte_order"))
        {
            slot.1 = target.name().into();
        }
    }
    if let Some(g) = Geometry::from_nifti_meta(&meta) {
        entry.insert(geometry::KEY.into(), g.to_value());
    }
    entry.insert("nifti".into(), meta);
    Ok((d, data, entry))
}

fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("volume");
    let name = name.strip_suffix(".gz").unwrap_or(name);
    name.strip_suffix(".nii").unwrap_or(name).to_string()
}

/// The grid-defining fields of a header, at NIfTI-2 width.
#[derive(PartialEq)]
struct Grid {
    /// `pixdim[1..4]`.
    voxel: [f64; 3],
    sform_code: i64,
    srow: [[f64; 4]; 3],
    qform_code: i64,
    /// Quaternion, offsets and qfac.
    qform: [f64; 7],
}

impl Header {
    fn grid(&self) -> Grid {
        match self {
            Header::V1(h) => {
                let w = |v: [f32; 4]| v.map(f64::from);
                Grid {
                    voxel: [h.pixdim[1], h.pixdim[2], h.pixdim[3]].map(f64::from),
                    sform_code: i64::from(h.sform_code),
                    srow: [w(h.srow_x), w(h.srow_y), w(h.srow_z)],
                    qform_code: i64::from(h.qform_code),
                    qform: [
                        h.quatern_b,
                        h.quatern_c,
                        h.quatern_d,
                        h.quatern_x,
                        h.quatern_y,
                        h.quatern_z,
                        h.pixdim[0].signum(),
                    ]
                    .map(f64::from),
                }
            }
            Header::V2(h) => Grid {
                voxel: [h.pixdim[1], h.pixdim[2], h.pixdim[3]],
                sform_code: i64::from(h.sform_code),
                srow: h.srow,
                qform_code: i64::from(h.qform_code),
                qform: [
                    h.quatern[0],
                    h.quatern[1],
                    h.quatern[2],
                    h.qoffset[0],
                    h.qoffset[1],
                    h.qoffset[2],
                    h.pixdim[0].signum(),
                ],
            },
        }
    }
}

/// Checks that a mask lies on its volume's grid: same spatial dims, pixdim,
/// transform codes and transforms.
fn check_same_geometry(
    vol: &NiftiVolume,
    vol_path: &Path,
    mask: &NiftiVolume,
    mask_path: &Path,
) -> CliResult {
    let (a, b) = (vol.header.grid(), mask.header.grid());
    let spatial = |v: &NiftiVolume| v.dims.iter().take(3).copied().collect::<Vec<_>>();
    let mut diffs = Vec::new();
    if spatial(vol) != spatial(mask) {
        diffs.push(format!(
            "spatial dims {:?} vs {:?}",
            spatial(vol),
            spatial(mask)
        ));
    }
    if a.voxel != b.voxel {
        diffs.push(format!("voxel sizes {:?} vs {:?}", a.voxel, b.voxel));
    }
    if a.sform_code != b.sform_code || (a.sform_code > 0 && a.srow != b.srow) {
        diffs.push("sform".into());
    }
    if a.qform_code != b.qform_code || (a.qform_code > 0 && a.qform != b.qform) {
        diffs.push("qform".into());
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "mask {} is not on the grid of {}: {} differ",
            mask_path.display(),
            vol_path.display(),
            diffs.join(", ")
        )
        .into())
    }
}

/// NIfTI files (and an optional segmentation mask for the first) to the
/// objects and metadata of one message: one object per input in order,
/// then the mask, whose geometry must equal the first volume's.
pub fn nifti_to_objects(
    inputs: &[PathBuf],
    mask: Option<&Path>,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
) -> CliResult<Converted> {
    if inputs.is_empty() {
        return Err("no NIfTI input given".into());
    }
    let mut objects = Vec::with_capacity(inputs.len() + usize::from(mask.is_some()));
    let mut base = Vec::with_capacity(objects.capacity());
    let mut mask_vol = None;
    if let Some(m) = mask {
        let mv = read_nifti(m)?;
        let first = read_nifti(&inputs[0])?;
        check_same_geometry(&first, &inputs[0], &mv, m)?;
        mask_vol = Some(mv);
    }
    for path in inputs {
        let vol = read_nifti(path)?;
        let (d, data, entry) = volume_to_object(vol, &stem(path), "volume", pipeline, order)
            .map_err(|e| err_at(path, e))?;
        objects.push((d, data));
        base.push(entry);
    }
    if let (Some(mv), Some(m)) = (mask_vol, mask) {
        let (d, data, entry) =
            volume_to_object(mv, &stem(m), "mask", pipeline, order).map_err(|e| err_at(m, e))?;
        objects.push((d, data));
        base.push(entry);
    }
    Ok((objects, GlobalMetadata::with_base(base)))
}

/// Which NIfTI version `to-nifti` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// NIfTI-1, unless the metadata records NIfTI-2 or a dimension exceeds
    /// NIfTI-1's 32767.
    Auto,
    /// Always NIfTI-2.
    Nifti2,
}

/// One decoded object (payload in `d.byte_order`) and its `base` entry as a
/// single-file NIfTI image (uncompressed bytes): NIfTI-2 when `version`
/// asks for it, when the metadata records `version: 2`, or when a
/// dimension does not fit NIfTI-1; NIfTI-1 otherwise.
pub fn object_to_nifti(
    d: &ObjectDescriptor,
    data: &[u8],
    entry: &Map,
    version: Version,
) -> CliResult<Vec<u8>> {
    if d.shape.is_empty() {
        return Err("a scalar object cannot be a NIfTI volume".into());
    }
    let dims: Vec<u64> = d.shape.iter().rev().copied().collect();
    let expected = dims
        .iter()
        .try_fold(d.dtype.width() as u64, |acc, &x| acc.checked_mul(x))
        .ok_or("voxel count overflows")?;
    if data.len() as u64 != expected {
        return Err(format!(
            "decoded payload has {} bytes, shape {:?} of {} needs {expected}",
            data.len(),
            d.shape,
            d.dtype.name()
        )
        .into());
    }
    // An object without a NIfTI header of its own (from DICOM) gets sform
    // and qform from its recorded geometry.
    let from_geometry = match entry.get("nifti") {
        Some(_) => None,
        None => Geometry::from_entry(entry)?.map(|g| with_dicom_rescale(g.to_nifti_meta(), entry)),
    };
    let meta = entry.get("nifti").or(from_geometry.as_ref());
    let recorded_v2 = meta.and_then(|m| m.get("version")).and_then(Value::as_u64) == Some(2);
    let too_big = dims.iter().any(|&x| x > MAX_DIM);
    let mut out = if version == Version::Nifti2 || recorded_v2 || too_big {
        nifti2::write(&nifti2::from_meta(meta, d.dtype, &dims, d.byte_order)?)
    } else {
        write_header(&header_from_meta(meta, d.dtype, &dims, d.byte_order)?)
    };
    out.reserve(data.len());
    out.extend_from_slice(data);
    Ok(out)
}

/// `meta` with `scl_slope`/`scl_inter` from a DICOM series' rescale slope
/// and intercept, when one pair covers every slice (NIfTI has one).
fn with_dicom_rescale(mut meta: Value, entry: &Map) -> Value {
    let get = |k: &str| entry.get("dicom")?.get(k)?.as_f64();
    if let (Some(slope), Some(inter), Value::Map(m)) =
        (get("rescale_slope"), get("rescale_intercept"), &mut meta)
    {
        m.push(("scl_slope".into(), Value::Float(slope)));
        m.push(("scl_inter".into(), Value::Float(inter)));
    }
    meta
}

/// Gzip-compresses a NIfTI image for `.nii.gz`.
pub fn gzip(bytes: &[u8]) -> CliResult<Vec<u8>> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes)?;
    Ok(enc.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_nifti_suffixes() {
        assert_eq!(stem(Path::new("/a/brain.nii.gz")), "brain");
        assert_eq!(stem(Path::new("brain.nii")), "brain");
        assert_eq!(stem(Path::new("x.img.gz")), "x.img");
    }

    #[test]
    fn layout_rejects_overflow_and_bad_bitpix() {
        let mut h = NiftiHeader::default();
        h.dim = [7, 32767, 32767, 32767, 32767, 32767, 32767, 32767];
        h.datatype = 64;
        h.bitpix = 64;
        let e = volume_layout(&h).unwrap_err();
        assert!(e.contains("overflows"), "{e}");
        h.dim = [3, 2, 2, 2, 1, 1, 1, 1];
        h.bitpix = 32;
        let e = volume_layout(&h).unwrap_err();
        assert!(e.contains("bitpix"), "{e}");
        h.dim = [3, 2, 0xffff, 2, 1, 1, 1, 1];
        h.bitpix = 64;
        let e = volume_layout(&h).unwrap_err();
        assert!(e.contains("dim[2] is -1"), "{e}");
    }

    #[test]
    fn swap_units_reverses_each_group() {
        let mut v = vec![1, 2, 3, 4, 5, 6, 7, 8];
        swap_units(&mut v, 4);
        assert_eq!(v, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
