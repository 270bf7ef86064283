//! NIfTI-1 and NIfTI-2 volumes to Tensogram objects and back.
//!
//! Voxels keep their stored dtype and byte order (spec/tensor-model.md): the
//! payload bytes are the file's bytes. NIfTI stores `dim[1]` fastest, so the
//! object's row-major shape is the NIfTI dims reversed, and `dim_names`
//! names each axis of that shape (`["k", "j", "i"]` for a 3-D volume).
//! The header is kept under `base[i].nifti` (see `nifti_header`).
//!
//! Header extensions are kept as `base[i].nifti.extensions` (see
//! `nifti_ext`) and written back by `to-nifti`.
//!
//! Untrusted input (spec/convert.md "NIfTI"): one header check for both
//! versions (`nifti_check`) and a size check against the file, or for a
//! `.nii.gz` against an inflation cap, come before anything past the
//! header is read or any buffer is sized from it; inflation grows with the
//! bytes actually present and stops one byte past the declared data; every
//! gzip member is read (`gz_members`) and bytes after the last one are
//! refused.

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
use super::gz_members::Members;
use super::nifti2::{self, is_nifti2, Nifti2Header, HEADER_LEN2};
use super::nifti_check::{self, Declared, LayoutFields};
use super::nifti_ext::{self, Extension};
use super::nifti_header::{
    header_from_meta, header_to_meta, write_header, AXIS_NAMES, HEADER_LEN, MAX_DIM,
};
pub use super::nifti_voxels::Voxels;
use super::pipeline::PipelineArgs;
use super::Converted;
use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// A parsed NIfTI header of either version.
#[derive(Clone, Debug)]
pub enum Header {
    /// NIfTI-1 (348 bytes, `n+1`).
    V1(Box<NiftiHeader>),
    /// NIfTI-2 (540 bytes, `n+2`).
    V2(Box<Nifti2Header>),
}

/// A NIfTI-1 or NIfTI-2 volume as read: its header and its voxel bytes in
/// stored order (mapped from an uncompressed file).
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
    pub data: Voxels,
    /// Header extensions, as stored.
    pub extensions: Vec<Extension>,
}

/// Which byte order converted volumes are stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ByteOrderChoice {
    /// The input file's byte order.
    #[default]
    Keep,
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

/// An [`MedicalErrorKind::InvalidSource`] error about the file `path`.
fn err_at(path: &Path, msg: impl std::fmt::Display) -> MedicalError {
    MedicalError::at(MedicalErrorKind::InvalidSource, path, msg)
}

/// Reads a single-file NIfTI-1 or NIfTI-2 volume (`.nii`, or gzip-compressed
/// `.nii.gz` of one or more members, recognised by its magic bytes rather
/// than its name). `max_decoded` overrides the inflation budget of a
/// `.nii.gz` ([`nifti_check::inflate_cap`]). The voxels of an uncompressed
/// file are mapped, not read.
pub fn read_nifti(path: &Path, max_decoded: Option<u64>) -> MedicalResult<NiftiVolume> {
    let file = File::open(path).map_err(|e| MedicalError::io(path, "cannot open", e))?;
    let file_len = file
        .metadata()
        .map_err(|e| MedicalError::io(path, "cannot stat", e))?
        .len();
    let (prefix, input) = read_prefix(path, BufReader::new(&file), file_len, max_decoded)?;
    if prefix.gz {
        return read_voxels(path, input, prefix);
    }
    drop(input);
    // check_sizes found the file to end where the voxels do.
    let d = &prefix.parsed.declared;
    let data = super::nifti_voxels::map_at(path, &file, d.vox_offset, d.voxel_bytes)?;
    Ok(prefix.volume(data))
}

/// A parsed header and the layout it declares.
struct Parsed {
    header: Header,
    declared: Declared,
    big: bool,
}

/// Reads and checks the header (either version) from the start of the
/// (inflated) stream.
fn read_header(path: &Path, input: &mut dyn Read) -> MedicalResult<Parsed> {
    let truncated = |e: ReadShort, have: usize, which: &str, total: usize| match e {
        ReadShort::Io(e) => MedicalError::io(path, "cannot read the header", e),
        ReadShort::Eof(n) => err_at(
            path,
            format!(
                "truncated: {} of the {which}'s {total} bytes present",
                have + n
            ),
        ),
    };
    let mut head = [0u8; HEADER_LEN];
    read_fully(input, &mut head).map_err(|e| truncated(e, 0, "header", HEADER_LEN))?;
    let lead: [u8; 4] = head[..4].try_into().expect("4 bytes");
    let (header, fields, big) = if is_nifti2(lead) {
        let mut full = [0u8; HEADER_LEN2];
        full[..HEADER_LEN].copy_from_slice(&head);
        read_fully(input, &mut full[HEADER_LEN..])
            .map_err(|e| truncated(e, HEADER_LEN, "NIfTI-2 header", HEADER_LEN2))?;
        let h = nifti2::parse(&full).map_err(|e| err_at(path, e))?;
        let fields = nifti2::check_fields(&h);
        let big = h.byte_order == ByteOrder::Big;
        (Header::V2(Box::new(h)), fields, big)
    } else {
        let sizeof_hdr = i32::from_le_bytes(lead);
        if sizeof_hdr != HEADER_LEN as i32 && sizeof_hdr.swap_bytes() != HEADER_LEN as i32 {
            return Err(MedicalError::at(
                MedicalErrorKind::NotThisFormat,
                path,
                format!("not a NIfTI file: sizeof_hdr is {sizeof_hdr}, not 348 or 540"),
            ));
        }
        let h = NiftiHeader::from_reader(&head[..])
            .map_err(|e| err_at(path, format!("invalid NIfTI-1 header: {e}")).with_source(e))?;
        if &h.magic != b"n+1\0" {
            return Err(MedicalError::at(
                MedicalErrorKind::Unsupported,
                path,
                "header-only NIfTI (magic \"ni1\", data in a separate .img) is not supported; \
                 convert it to a single .nii file first",
            ));
        }
        let fields = check_fields(&h);
        let big = h.endianness == Endianness::Big;
        (Header::V1(Box::new(h)), fields, big)
    };
    let declared = nifti_check::check(&fields).map_err(|e| err_at(path, e))?;
    Ok(Parsed {
        header,
        declared,
        big,
    })
}

/// [`read_nifti`] of a file of `file_len` bytes read from `raw` (the
/// voxels read into memory); `path` names it in errors.
pub fn read_nifti_from(
    path: &Path,
    raw: impl Read,
    file_len: u64,
    max_decoded: Option<u64>,
) -> MedicalResult<NiftiVolume> {
    let (prefix, input) = read_prefix(path, raw, file_len, max_decoded)?;
    read_voxels(path, input, prefix)
}

/// What comes before the voxels: the checked header and the extensions.
struct Prefix {
    parsed: Parsed,
    extensions: Vec<Extension>,
    /// The file is gzip-compressed.
    gz: bool,
}

impl Prefix {
    fn volume(self, data: Voxels) -> NiftiVolume {
        let Parsed {
            header,
            declared,
            big,
        } = self.parsed;
        NiftiVolume {
            header,
            dims: declared.dims,
            dtype: declared.dtype,
            byte_order: if big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            },
            data,
            extensions: self.extensions,
        }
    }
}

/// Reads and checks everything before the voxels from `raw` (a file of
/// `file_len` bytes); returns it with the (inflated) stream positioned at
/// the first voxel.
fn read_prefix<'r>(
    path: &Path,
    mut raw: impl Read + 'r,
    file_len: u64,
    max_decoded: Option<u64>,
) -> MedicalResult<(Prefix, Box<dyn Read + 'r>)> {
    let mut lead = [0u8; 4];
    raw.read_exact(&mut lead).map_err(|e| {
        let kind = match e.kind() {
            std::io::ErrorKind::UnexpectedEof => MedicalErrorKind::NotThisFormat,
            _ => MedicalErrorKind::Io,
        };
        MedicalError::at(kind, path, "too short to hold a NIfTI header").with_source(e)
    })?;
    let gz = lead[..2] == [0x1f, 0x8b];
    let rest = std::io::Cursor::new(lead).chain(raw);
    let mut input: Box<dyn Read + '_> = if gz {
        Box::new(Members::new(BufReader::new(rest)))
    } else {
        Box::new(rest)
    };
    let parsed = read_header(path, &mut input)?;
    // Nothing past the header is read, nor any buffer sized, before the
    // declared layout is checked against the file (or the inflation cap).
    nifti_check::check_sizes(&parsed.declared, file_len, gz, max_decoded)
        .map_err(|e| e.context(path.display()).with_path(path))?;
    let Declared {
        vox_offset,
        header_len,
        ..
    } = parsed.declared;
    let region = read_up_to(&mut input, vox_offset - header_len, gz)
        .map_err(|e| err_at(path, format!("corrupt or truncated data: {e}")).with_source(e))?;
    if (region.len() as u64) < vox_offset - header_len {
        return Err(err_at(
            path,
            format!("truncated: the stream ends inside the header extensions (before offset {vox_offset})"),
        ));
    }
    let extensions =
        nifti_ext::parse(&region, parsed.big, header_len).map_err(|e| err_at(path, e))?;
    let prefix = Prefix {
        parsed,
        extensions,
        gz,
    };
    Ok((prefix, input))
}

/// Reads the voxels that follow `prefix` into memory, and checks that
/// nothing follows them.
fn read_voxels(
    path: &Path,
    mut input: Box<dyn Read + '_>,
    prefix: Prefix,
) -> MedicalResult<NiftiVolume> {
    let Declared {
        ref dims,
        dtype,
        voxel_bytes,
        ..
    } = prefix.parsed.declared;
    let gz = prefix.gz;
    let data = read_up_to(&mut input, voxel_bytes, gz).map_err(|e| {
        err_at(path, format!("corrupt or truncated gzip stream: {e}")).with_source(e)
    })?;
    if (data.len() as u64) != voxel_bytes {
        return Err(err_at(
            path,
            format!(
                "truncated: header dims {dims:?} of {} need {voxel_bytes} bytes of voxel data, \
                 the stream holds {}",
                dtype.name(),
                data.len()
            ),
        ));
    }
    // Reading on to the end checks the last member's CRC and refuses what
    // follows it; inflation stops one byte past the declared data.
    let mut extra = [0u8; 1];
    let n = read_fully(&mut input, &mut extra).map_or_else(
        |e| match e {
            ReadShort::Eof(n) => Ok(n),
            ReadShort::Io(e) => {
                Err(err_at(path, format!("after the voxel data: {e}")).with_source(e))
            }
        },
        |()| Ok(1),
    )?;
    if n != 0 {
        return Err(err_at(
            path,
            format!(
                "data after the {voxel_bytes} bytes of voxel data that header dims {dims:?} describe"
            ),
        ));
    }
    Ok(prefix.volume(Voxels::Owned(data)))
}

/// Reads up to `n` bytes. Uncompressed input was checked to hold them, so
/// the buffer is sized at once; inflated input grows with the bytes
/// actually present (doubling, never beyond `n`).
fn read_up_to(input: &mut dyn Read, n: u64, inflated: bool) -> std::io::Result<Vec<u8>> {
    let n = usize::try_from(n).map_err(|_| std::io::Error::other("too large for memory"))?;
    let mut data = Vec::new();
    let mut filled = 0;
    while filled < n {
        if filled == data.len() {
            let grow = if inflated {
                filled.max(1 << 16).min(n - filled)
            } else {
                n
            };
            data.try_reserve_exact(grow)
                .map_err(|_| std::io::Error::other(format!("cannot allocate {grow} bytes")))?;
            data.resize(filled + grow, 0);
        }
        match input.read(&mut data[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    data.truncate(filled);
    Ok(data)
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

/// The layout fields of a NIfTI-1 header, widened for
/// [`nifti_check::check`] (`dim[]` is signed on disk).
fn check_fields(h: &NiftiHeader) -> LayoutFields {
    LayoutFields {
        version: 1,
        dim: h.dim.map(|d| i64::from(d as i16)),
        datatype: h.datatype,
        bitpix: h.bitpix,
        pixdim: h.pixdim.map(f64::from),
        vox_offset: f64::from(h.vox_offset),
    }
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
/// and its `base` entry (`name`, `role`, `dim_names`, `nifti`). Mapped
/// voxels stay mapped unless their byte order changes.
pub fn volume_to_object(
    vol: NiftiVolume,
    name: &str,
    role: &str,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
) -> MedicalResult<(ObjectDescriptor, Voxels, Map)> {
    let NiftiVolume {
        header,
        dims,
        dtype,
        byte_order,
        mut data,
        extensions,
    } = vol;
    let target = match order {
        ByteOrderChoice::Keep => byte_order,
        ByteOrderChoice::Little => ByteOrder::Little,
        ByteOrderChoice::Big => ByteOrder::Big,
    };
    if target != byte_order {
        swap_units(data.to_mut()?, dtype.swap_unit());
    }
    let shape: Vec<u64> = dims.iter().rev().copied().collect();
    let mut d = ObjectDescriptor::new(dtype, shape);
    d.byte_order = target;
    pipeline.apply(&mut d, &data)?;
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
        if !extensions.is_empty() {
            entries.push(("extensions".into(), nifti_ext::to_meta(&extensions)));
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
) -> MedicalResult {
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
        Err(MedicalError::at(
            MedicalErrorKind::InvalidArgument,
            mask_path,
            format!(
                "mask {} is not on the grid of {}: {} differ",
                mask_path.display(),
                vol_path.display(),
                diffs.join(", ")
            ),
        ))
    }
}

/// NIfTI files (and an optional segmentation mask for the first) to the
/// objects and metadata of one message: one object per input in order,
/// then the mask, whose geometry must equal the first volume's.
/// `max_decoded` overrides each `.nii.gz`'s inflation budget.
pub fn nifti_to_objects(
    inputs: &[PathBuf],
    mask: Option<&Path>,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
    max_decoded: Option<u64>,
) -> MedicalResult<Converted> {
    let (objects, meta) = nifti_volumes(inputs, mask, pipeline, order, max_decoded)?;
    let objects = objects
        .into_iter()
        .map(|(d, v)| Ok((d, v.into_owned()?)))
        .collect::<MedicalResult<Vec<_>>>()?;
    Ok((objects, meta))
}

/// The message [`nifti_to_objects`] describes, encoded with `opts` straight
/// into `sink`: the bytes `tgm::encode` gives for those objects
/// (`tgm::encode_to`), never the whole message in memory. Uncompressed
/// volumes are mapped and their pages released as the pipeline reads them,
/// so memory holds about one copy of a volume (docs/src/performance/memory.md). Returns
/// the message length and the number of objects. On error part of the
/// message may have been written.
pub fn write_nifti_message(
    inputs: &[PathBuf],
    mask: Option<&Path>,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
    max_decoded: Option<u64>,
    opts: &tgm::EncodeOptions,
    sink: &mut dyn std::io::Write,
) -> MedicalResult<(u64, usize)> {
    let (objects, meta) = nifti_volumes(inputs, mask, pipeline, order, max_decoded)?;
    let refs: Vec<_> = objects.iter().map(|(d, v)| (d, &v[..])).collect();
    // The hook follows objects in order, which holds when they are encoded
    // one after another.
    let sequential = opts.pipeline.threads <= 1 || objects.len() == 1;
    let opts = if sequential {
        let volumes: Vec<&Voxels> = objects.iter().map(|(_, v)| v).collect();
        let caller = opts.pipeline.progress.clone();
        opts.clone()
            .progress(super::nifti_voxels::releasing(&volumes).then(caller))
    } else {
        opts.clone()
    };
    let len = tgm::encode_to(&meta, &refs, &opts, sink)?;
    Ok((len, objects.len()))
}

/// The objects (voxels mapped where the file is uncompressed) and metadata
/// of [`nifti_to_objects`]; each file is read once.
fn nifti_volumes(
    inputs: &[PathBuf],
    mask: Option<&Path>,
    pipeline: &PipelineArgs,
    order: ByteOrderChoice,
    max_decoded: Option<u64>,
) -> MedicalResult<(Vec<(ObjectDescriptor, Voxels)>, GlobalMetadata)> {
    let Some(first) = inputs.first() else {
        return Err(MedicalError::invalid_argument("no NIfTI input given"));
    };
    let mut volumes = Vec::with_capacity(inputs.len() + usize::from(mask.is_some()));
    // The mask is checked against the first volume before the others are read.
    let mut first_vol = Some(read_nifti(first, max_decoded)?);
    let mask_vol = match mask {
        Some(m) => {
            let mv = read_nifti(m, max_decoded)?;
            check_same_geometry(first_vol.as_ref().expect("read above"), first, &mv, m)?;
            Some((mv, m))
        }
        None => None,
    };
    for path in inputs {
        let vol = match first_vol.take() {
            Some(v) => v,
            None => read_nifti(path, max_decoded)?,
        };
        volumes.push((vol, path.as_path(), "volume"));
    }
    volumes.extend(mask_vol.map(|(mv, m)| (mv, m, "mask")));
    let mut objects = Vec::with_capacity(volumes.len());
    let mut base = Vec::with_capacity(volumes.len());
    for (vol, path, role) in volumes {
        let (d, data, entry) = volume_to_object(vol, &stem(path), role, pipeline, order)
            .map_err(|e| e.context(path.display()).with_path(path))?;
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
) -> MedicalResult<Vec<u8>> {
    let mut out = nifti_header_for(d, data.len(), entry, version)?;
    out.reserve(data.len());
    out.extend_from_slice(data);
    Ok(out)
}

/// The bytes [`object_to_nifti`] writes before the voxels of an object
/// whose decoded payload is `data_len` bytes: header and extensions, so a
/// writer can follow them with the voxels without copying them.
pub fn nifti_header_for(
    d: &ObjectDescriptor,
    data_len: usize,
    entry: &Map,
    version: Version,
) -> MedicalResult<Vec<u8>> {
    if d.shape.is_empty() {
        return Err(MedicalError::invalid(
            "a scalar object cannot be a NIfTI volume",
        ));
    }
    let dims: Vec<u64> = d.shape.iter().rev().copied().collect();
    let expected = dims
        .iter()
        .try_fold(d.dtype.width() as u64, |acc, &x| acc.checked_mul(x))
        .ok_or_else(|| MedicalError::invalid("voxel count overflows"))?;
    if data_len as u64 != expected {
        return Err(MedicalError::invalid(format!(
            "decoded payload has {} bytes, shape {:?} of {} needs {expected}",
            data_len,
            d.shape,
            d.dtype.name()
        )));
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
    let extensions = nifti_ext::from_meta(meta)?;
    if version == Version::Nifti2 || recorded_v2 || too_big {
        nifti2::write(
            &nifti2::from_meta(meta, d.dtype, &dims, d.byte_order)?,
            &extensions,
        )
    } else {
        write_header(
            &header_from_meta(meta, d.dtype, &dims, d.byte_order)?,
            &extensions,
        )
    }
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
pub fn gzip(bytes: &[u8]) -> MedicalResult<Vec<u8>> {
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
    fn nifti1_fields_are_widened_for_the_shared_check() {
        let mut h = NiftiHeader::default();
        h.dim = [7, 32767, 32767, 32767, 32767, 32767, 32767, 32767];
        h.datatype = 64;
        h.bitpix = 64;
        h.vox_offset = 352.0;
        let check = |h: &NiftiHeader| nifti_check::check(&check_fields(h));
        let e = check(&h).unwrap_err();
        assert!(e.contains("overflows"), "{e}");
        h.dim = [3, 2, 2, 2, 1, 1, 1, 1];
        h.bitpix = 32;
        let e = check(&h).unwrap_err();
        assert!(e.contains("bitpix"), "{e}");
        h.dim = [3, 2, 0xffff, 2, 1, 1, 1, 1];
        h.bitpix = 64;
        let e = check(&h).unwrap_err();
        assert!(e.contains("dim[2] is -1"), "{e}");
        h.dim = [3, 2, 3, 4, 1, 1, 1, 1];
        assert_eq!(check(&h).unwrap().voxel_bytes, 192);
    }

    /// A 6 x 5 x 4 NIfTI-1 image of `dtype` in `order`, with scaling, an
    /// sform, a description and a comment extension; gzipped when `gz`.
    fn sample_file(dir: &Path, name: &str, dtype: Dtype, order: ByteOrder, gz: bool) -> PathBuf {
        let dims = [6u64, 5, 4];
        let mut h = header_from_meta(None, dtype, &dims, order).unwrap();
        h.scl_slope = 0.5;
        h.scl_inter = -3.0;
        h.sform_code = 1;
        h.srow_x = [2.0, 0.0, 0.0, -10.5];
        h.srow_y = [0.0, 2.5, 0.0, 4.0];
        h.srow_z = [0.0, 0.0, 3.0, 7.25];
        h.descrip = vec![0; 80];
        h.descrip[..8].copy_from_slice(b"streamed");
        let ext = [Extension {
            code: 6,
            data: b"a comment that is kept\0\0".to_vec(),
        }];
        let mut bytes = write_header(&h, &ext).unwrap();
        let n = dims.iter().product::<u64>() as usize;
        for i in 0..n {
            let v = (i as f64 * 0.37).sin() * 300.0 - (i % 7) as f64;
            let mut e = match dtype {
                Dtype::Int16 => (v as i16).to_le_bytes().to_vec(),
                _ => v.to_le_bytes().to_vec(),
            };
            if order == ByteOrder::Big {
                e.reverse();
            }
            bytes.extend(e);
        }
        if gz {
            bytes = gzip(&bytes).unwrap();
        }
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The streamed message is the one `tgm::encode` builds from
    /// [`nifti_to_objects`], byte for byte, for every pipeline and byte
    /// order, mapped or inflated, with a mask; and it keeps the header.
    #[test]
    fn the_streamed_message_is_the_encoded_one() {
        use super::super::pipeline::{encode_options, Compression};
        let dir = tempfile::tempdir().unwrap();
        let opts = encode_options().provenance(tgm::Provenance::fixed("2024-01-01T00:00:00Z", "t"));
        let mut checked = 0;
        for (dtype, order, gz) in [
            (Dtype::Int16, ByteOrder::Little, false),
            (Dtype::Int16, ByteOrder::Big, true),
            (Dtype::Float64, ByteOrder::Little, false),
            (Dtype::Float64, ByteOrder::Big, false),
            (Dtype::Float64, ByteOrder::Little, true),
        ] {
            let name = format!("v{checked}.nii{}", if gz { ".gz" } else { "" });
            let vol = sample_file(dir.path(), &name, dtype, order, gz);
            let mask = sample_file(dir.path(), "m.nii", Dtype::Int16, ByteOrder::Little, false);
            let compressions = if dtype == Dtype::Int16 {
                vec![Compression::None, Compression::Zstd, Compression::Szip]
            } else {
                vec![Compression::None, Compression::Zstd]
            };
            for compression in compressions {
                for byte_order in [
                    ByteOrderChoice::Keep,
                    ByteOrderChoice::Little,
                    ByteOrderChoice::Big,
                ] {
                    for with_mask in [None, Some(mask.as_path())] {
                        let pipeline = PipelineArgs {
                            compression,
                            level: None,
                        };
                        let inputs = [vol.clone()];
                        let (objects, meta) =
                            nifti_to_objects(&inputs, with_mask, &pipeline, byte_order, None)
                                .unwrap();
                        let refs: Vec<_> = objects.iter().map(|(d, b)| (d, &b[..])).collect();
                        let want = tgm::encode(&meta, &refs, &opts).unwrap();
                        let mut got = Vec::new();
                        let (len, n) = write_nifti_message(
                            &inputs, with_mask, &pipeline, byte_order, None, &opts, &mut got,
                        )
                        .unwrap();
                        assert!(
                            got == want,
                            "{name} {compression:?} {byte_order:?} {with_mask:?}"
                        );
                        assert_eq!((len, n), (got.len() as u64, objects.len()));
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 3 * (3 + 3 + 2 + 2 + 2));
        // The header and its extension are in the metadata.
        let vol = sample_file(
            dir.path(),
            "x.nii",
            Dtype::Float64,
            ByteOrder::Little,
            false,
        );
        let mut msg = Vec::new();
        write_nifti_message(
            &[vol],
            None,
            &PipelineArgs::default(),
            ByteOrderChoice::Keep,
            None,
            &opts,
            &mut msg,
        )
        .unwrap();
        let meta = tgm::decode_metadata(&msg, &Default::default()).unwrap();
        let nifti = meta.base[0].get("nifti").unwrap();
        assert_eq!(nifti.get("scl_slope").and_then(Value::as_f64), Some(0.5));
        assert_eq!(nifti.get("scl_inter").and_then(Value::as_f64), Some(-3.0));
        assert_eq!(
            nifti.get("descrip").and_then(Value::as_text),
            Some("streamed")
        );
        let ext = nifti.get("extensions").unwrap().to_json();
        assert!(ext.contains("\"code\":6"), "{ext}");
    }

    #[test]
    fn swap_units_reverses_each_group() {
        let mut v = vec![1, 2, 3, 4, 5, 6, 7, 8];
        swap_units(&mut v, 4);
        assert_eq!(v, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
