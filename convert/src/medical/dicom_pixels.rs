//! The pixel data of DICOM images, read in two passes so that a series is
//! held once, in its volume, and never also slice by slice (docs/src/performance/
//! memory.md).
//!
//! The first pass ([`Layout::of`], [`Layout::check`]) reads what the
//! Image Pixel module declares and checks the pixel data against it without
//! keeping it: native pixel data must have the declared length; compressed
//! pixel data may not claim more than [`MAX_DECODE_RATIO`] times its file
//! size, its fragments must fit the declared frames (`dicom_predecode`),
//! and it must decode to the declared pixels (so a compressed image is
//! decoded twice, and what cannot be read is refused before any output
//! exists). The second pass ([`read_volume`]) allocates the
//! series' volume, whose size those checks and [`tgm::Limits`] bound, reads
//! each file again and writes its stored integers, little-endian, straight
//! into their place; a file that changed in between is refused.

use std::path::Path;

use dicom_core::value::{PrimitiveValue, Value as DicomValue};
use dicom_dictionary_std::tags;
use dicom_object::{DefaultDicomObject, OpenFileOptions};
use dicom_pixeldata::{DecodedPixelData, PixelDecoder};
use dicom_transfer_syntax_registry::{TransferSyntaxIndex, TransferSyntaxRegistry};
use tgm::Dtype;

use super::dicom_predecode::{check_fragments, Codec, Declared};
use super::dicom_scan::ScanError;
use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// Transfer syntaxes whose pixel data is stored natively.
const NATIVE_SYNTAXES: [(&str, &str); 3] = [
    ("1.2.840.10008.1.2", "Implicit VR Little Endian"),
    ("1.2.840.10008.1.2.1", "Explicit VR Little Endian"),
    ("1.2.840.10008.1.2.2", "Explicit VR Big Endian"),
];

/// The compressed syntaxes decoded through dicom-pixeldata, for messages.
const COMPRESSED_SUPPORTED: &str = "Deflated Explicit VR Little Endian, RLE Lossless, \
     JPEG Baseline/Extended/Lossless, JPEG 2000, JPEG-LS Lossless/Near-Lossless";

/// Most bytes a compressed image may decode to per byte of its file. Far
/// above real codecs' ratios on medical images; bounds what a small
/// hostile file can make the decoder allocate.
const MAX_DECODE_RATIO: u64 = 1100;

/// A parsed DICOM file.
pub(super) type Obj = DefaultDicomObject;

/// An [`MedicalErrorKind::InvalidSource`] error about the file `path`.
pub(super) fn err_at(path: &Path, msg: impl std::fmt::Display) -> MedicalError {
    MedicalError::at(MedicalErrorKind::InvalidSource, path, msg)
}

/// An [`MedicalErrorKind::Unsupported`] error about the file `path`.
fn unsupported_at(path: &Path, msg: impl std::fmt::Display) -> MedicalError {
    MedicalError::at(MedicalErrorKind::Unsupported, path, msg)
}

/// Parses the DICOM file at `path`, after checking every declared element
/// length against the file (`dicom_scan`); a file whose structure the scan
/// refuses is not a DICOM file as tgm reads it, and the error says so.
pub(super) fn open(path: &Path) -> MedicalResult<Obj> {
    super::dicom_scan::check_lengths(path).map_err(|e| match e {
        ScanError::Io(_) => MedicalError::at(MedicalErrorKind::Io, path, e),
        ScanError::NotDicom => MedicalError::at(MedicalErrorKind::NotThisFormat, path, e),
        e => MedicalError::invalid(format!(
            "{} is not a DICOM file tgm can read: {e}",
            path.display()
        ))
        .with_path(path),
    })?;
    OpenFileOptions::new()
        .open_file(path)
        .map_err(|e| err_at(path, format!("not a readable DICOM file: {e}")))
}

/// How one image's pixels are stored, and what they decode to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    /// The file's transfer syntax UID.
    pub transfer_syntax: String,
    /// Rows, Columns, SamplesPerPixel (always 1), BitsAllocated and
    /// NumberOfFrames.
    pub declared: Declared,
    /// The stored integers' type (BitsAllocated, PixelRepresentation).
    pub dtype: Dtype,
    /// Bytes of the decoded pixels: Rows × Columns × NumberOfFrames × the
    /// width of `dtype`.
    pub bytes: u64,
}

impl Layout {
    /// The layout `obj` (the file at `path`) declares; a transfer syntax
    /// without a decoder, colour images and unsupported bit depths are
    /// refused.
    pub fn of(obj: &Obj, path: &Path) -> MedicalResult<Layout> {
        let transfer_syntax = obj
            .meta()
            .transfer_syntax()
            .trim_end_matches('\0')
            .to_string();
        if !is_native(&transfer_syntax) {
            check_decodable(&transfer_syntax).map_err(|e| unsupported_at(path, e))?;
        }
        let rows = required_uint(obj, tags::ROWS, path, "Rows")?;
        let columns = required_uint(obj, tags::COLUMNS, path, "Columns")?;
        let bits = required_uint(obj, tags::BITS_ALLOCATED, path, "BitsAllocated")?;
        let signed = required_uint(obj, tags::PIXEL_REPRESENTATION, path, "PixelRepresentation")?;
        let samples = optional_uint(obj, tags::SAMPLES_PER_PIXEL, path, "SamplesPerPixel")?;
        let samples = samples.unwrap_or(1);
        if samples != 1 {
            return Err(unsupported_at(
                path,
                format!(
                    "SamplesPerPixel {samples}: only single-sample (grey) images are supported"
                ),
            ));
        }
        let frames = optional_uint(obj, tags::NUMBER_OF_FRAMES, path, "NumberOfFrames")?;
        let frames = frames.unwrap_or(1);
        if frames == 0 {
            return Err(err_at(path, "NumberOfFrames is 0"));
        }
        let dtype = match (bits, signed) {
            (8, 0) => Dtype::Uint8,
            (8, 1) => Dtype::Int8,
            (16, 0) => Dtype::Uint16,
            (16, 1) => Dtype::Int16,
            (32, 0) => Dtype::Uint32,
            (32, 1) => Dtype::Int32,
            _ => {
                return Err(unsupported_at(
                    path,
                    format!(
                        "BitsAllocated {bits} with PixelRepresentation {signed} is not supported"
                    ),
                ))
            }
        };
        let bytes = rows
            .checked_mul(columns)
            .and_then(|n| n.checked_mul(frames))
            .and_then(|n| n.checked_mul(dtype.width() as u64))
            .ok_or_else(|| err_at(path, "Rows x Columns x NumberOfFrames overflows"))?;
        Ok(Layout {
            transfer_syntax,
            declared: Declared {
                rows,
                columns,
                samples,
                bits_allocated: bits,
                frames,
            },
            dtype,
            bytes,
        })
    }

    fn native(&self) -> bool {
        is_native(&self.transfer_syntax)
    }

    /// Checks the pixel data of `obj` (the file at `path`) against this
    /// layout without keeping it: the first pass. Native data is measured;
    /// compressed data is checked, then decoded and dropped.
    pub fn check(&self, obj: &Obj, path: &Path) -> MedicalResult {
        let pixel = pixel_data(obj, path)?;
        if self.native() {
            let len = native_primitive(pixel, path).map(native_len)?;
            return self.check_len(len, path);
        }
        self.decoded(obj, path).map(drop)
    }

    /// Writes the pixels of `obj` (the file at `path`), little-endian, into
    /// `out`, [`Layout::bytes`] long: the second pass.
    fn write_into(&self, obj: &Obj, path: &Path, out: &mut [u8]) -> MedicalResult {
        if self.native() {
            let p = native_primitive(pixel_data(obj, path)?, path)?;
            self.check_len(native_len(p), path)?;
            let big_endian = self.transfer_syntax == NATIVE_SYNTAXES[2].0;
            native_into(p, self.dtype.width(), big_endian, out);
            return Ok(());
        }
        out.copy_from_slice(self.decoded(obj, path)?.data());
        let width = self.dtype.width();
        if cfg!(target_endian = "big") && width > 1 {
            for c in out.chunks_exact_mut(width) {
                c.reverse();
            }
        }
        Ok(())
    }

    fn check_len(&self, len: u64, path: &Path) -> MedicalResult {
        self.len_mismatch(len)
            .map_or(Ok(()), |e| Err(err_at(path, e)))
    }

    /// Why `len` bytes of pixels do not fit this layout, if they do not.
    fn len_mismatch(&self, len: u64) -> Option<String> {
        let d = &self.declared;
        (len != self.bytes).then(|| {
            format!(
                "PixelData has {len} bytes; Rows {} x Columns {} x NumberOfFrames {} x {} bytes \
                 need {}",
                d.rows,
                d.columns,
                d.frames,
                self.dtype.width(),
                self.bytes
            )
        })
    }

    /// The checks made before a codec sees compressed pixel data: the
    /// decoded size against the file's, and each frame's fragment against
    /// the declared layout ([`super::dicom_predecode`]).
    fn check_compressed(&self, obj: &Obj, path: &Path) -> MedicalResult {
        let uid = self.transfer_syntax.as_str();
        let file_len = std::fs::metadata(path)
            .map_err(|e| {
                MedicalError::new(MedicalErrorKind::Io, format!("cannot stat: {e}")).with_source(e)
            })?
            .len();
        let most = file_len
            .saturating_mul(MAX_DECODE_RATIO)
            .min(tgm::Limits::default().max_object_bytes);
        if self.bytes > most {
            return Err(MedicalError::refused(format!(
                "Rows x Columns x NumberOfFrames claim {} bytes of pixels, more than {most} \
                 (at most {MAX_DECODE_RATIO} times the file's {file_len} bytes)",
                self.bytes
            )));
        }
        let pixel = obj
            .get(tags::PIXEL_DATA)
            .ok_or_else(|| MedicalError::invalid("missing pixel module attribute PixelData"))?;
        if let Some(fragments) = pixel.value().fragments() {
            let codec = Codec::of(uid).ok_or_else(|| {
                MedicalError::unsupported(format!(
                    "transfer syntax {uid} ({}): encapsulated pixel data of this syntax is not \
                     decoded (no check of its fragments before decoding)",
                    syntax_name(uid)
                ))
            })?;
            check_fragments(codec, &self.declared, fragments).map_err(|e| {
                MedicalError::invalid(format!("transfer syntax {uid} ({}): {e}", syntax_name(uid)))
                    .with_source(e)
            })?;
        }
        Ok(())
    }

    /// Compressed pixel data decoded to its stored integers (no rescale,
    /// no VOI LUT, no bit-depth change), in the host's byte order, after
    /// [`Layout::check_compressed`]; a decoder panic becomes an error, and
    /// so does a result of another bit depth or length.
    fn decoded<'a>(&self, obj: &'a Obj, path: &Path) -> MedicalResult<DecodedPixelData<'a>> {
        self.check_compressed(obj, path)
            .and_then(|()| self.decode(obj))
            .map_err(|e| e.context(path.display()).with_path(path))
    }

    fn decode<'a>(&self, obj: &'a Obj) -> MedicalResult<DecodedPixelData<'a>> {
        let uid = self.transfer_syntax.as_str();
        let bits = self.declared.bits_allocated;
        let decoded =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| obj.decode_pixel_data()))
                .map_err(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    MedicalError::new(
                        MedicalErrorKind::Library,
                        format!(
                            "transfer syntax {uid} ({}): the pixel decoder failed on this file \
                             ({what})",
                            syntax_name(uid)
                        ),
                    )
                })?
                .map_err(|e| {
                    let mut msg = e.to_string();
                    let mut cause = std::error::Error::source(&e);
                    while let Some(c) = cause {
                        msg.push_str(": ");
                        msg.push_str(&c.to_string());
                        cause = c.source();
                    }
                    MedicalError::new(
                        MedicalErrorKind::Library,
                        format!(
                            "transfer syntax {uid} ({}): cannot decode PixelData: {msg}",
                            syntax_name(uid)
                        ),
                    )
                })?;
        if u64::from(decoded.bits_allocated()) != bits {
            return Err(MedicalError::new(
                MedicalErrorKind::Library,
                format!(
                "transfer syntax {uid} ({}): decoder produced {}-bit samples for BitsAllocated \
                 {bits}",
                syntax_name(uid),
                decoded.bits_allocated()
            ),
            ));
        }
        match self.len_mismatch(decoded.data().len() as u64) {
            Some(e) => Err(MedicalError::invalid(e)),
            None => Ok(decoded),
        }
    }
}

fn is_native(uid: &str) -> bool {
    NATIVE_SYNTAXES.iter().any(|(u, _)| *u == uid)
}

fn required_uint(obj: &Obj, tag: dicom_core::Tag, path: &Path, name: &str) -> MedicalResult<u64> {
    optional_uint(obj, tag, path, name)?
        .ok_or_else(|| err_at(path, format!("missing pixel module attribute {name}")))
}

fn optional_uint(
    obj: &Obj,
    tag: dicom_core::Tag,
    path: &Path,
    name: &str,
) -> MedicalResult<Option<u64>> {
    obj.get(tag)
        .map(|e| e.to_int::<u64>())
        .transpose()
        .map_err(|e| err_at(path, format!("{name} is not an unsigned integer: {e}")))
}

fn pixel_data<'a>(obj: &'a Obj, path: &Path) -> MedicalResult<&'a dicom_object::mem::InMemElement> {
    obj.get(tags::PIXEL_DATA)
        .ok_or_else(|| err_at(path, "missing pixel module attribute PixelData"))
}

/// The value of native pixel data: words of the element's VR.
fn native_primitive<'a>(
    pixel: &'a dicom_object::mem::InMemElement,
    path: &Path,
) -> MedicalResult<&'a PrimitiveValue> {
    match pixel.value() {
        DicomValue::Primitive(
            p @ (PrimitiveValue::U8(_)
            | PrimitiveValue::U16(_)
            | PrimitiveValue::I16(_)
            | PrimitiveValue::U32(_)
            | PrimitiveValue::I32(_)),
        ) => Ok(p),
        _ => Err(err_at(
            path,
            "PixelData is encapsulated or of an unexpected type",
        )),
    }
}

/// Bytes of a value [`native_primitive`] accepted.
fn native_len(p: &PrimitiveValue) -> u64 {
    let (n, width) = match p {
        PrimitiveValue::U8(v) => (v.len(), 1),
        PrimitiveValue::U16(v) => (v.len(), 2),
        PrimitiveValue::I16(v) => (v.len(), 2),
        PrimitiveValue::U32(v) => (v.len(), 4),
        PrimitiveValue::I32(v) => (v.len(), 4),
        _ => (0, 0),
    };
    n as u64 * width
}

/// Native pixel values into `out` ([`native_len`] bytes) as little-endian
/// samples `width` bytes wide. The parser hands words of the element's VR
/// (OB bytes, OW 16-bit words) whatever BitsAllocated says, so the file's
/// byte sequence is rebuilt first and then swapped per sample when the
/// file is big-endian.
fn native_into(p: &PrimitiveValue, width: usize, big_endian_file: bool, out: &mut [u8]) {
    macro_rules! file_order {
        ($v:expr, $n:expr) => {
            for (c, x) in out.chunks_exact_mut($n).zip($v.iter()) {
                c.copy_from_slice(&if big_endian_file {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                });
            }
        };
    }
    match p {
        PrimitiveValue::U8(v) => out.copy_from_slice(v),
        PrimitiveValue::U16(v) => file_order!(v, 2),
        PrimitiveValue::I16(v) => file_order!(v, 2),
        PrimitiveValue::U32(v) => file_order!(v, 4),
        PrimitiveValue::I32(v) => file_order!(v, 4),
        _ => {}
    }
    if big_endian_file && width > 1 {
        for c in out.chunks_exact_mut(width) {
            c.reverse();
        }
    }
}

/// The registry's name of a transfer syntax UID, or "unknown".
pub(super) fn syntax_name(uid: &str) -> &'static str {
    TransferSyntaxRegistry
        .get(uid)
        .map(|ts| ts.name())
        .unwrap_or("unknown transfer syntax")
}

/// Refuses a transfer syntax whose pixel data no built-in decoder reads.
fn check_decodable(uid: &str) -> Result<(), String> {
    match TransferSyntaxRegistry.get(uid) {
        Some(ts) if ts.can_decode_all() => Ok(()),
        _ => Err(format!(
            "transfer syntax {uid} ({}) is not supported: no built-in decoder for its pixel \
             data (supported: {}, {})",
            syntax_name(uid),
            NATIVE_SYNTAXES
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", "),
            COMPRESSED_SUPPORTED
        )),
    }
}

/// The pixels of `images` (each file with its layout as the first pass
/// read it), one after another, images outermost: the volume of `series`.
/// Its size is checked against [`tgm::Limits`] before it is allocated;
/// each file is read again and its pixels written straight into their
/// place, so no image is held beside the volume longer than it is read.
pub(super) fn read_volume(series: &str, images: &[(&Path, &Layout)]) -> MedicalResult<Vec<u8>> {
    let total = images
        .iter()
        .try_fold(0u64, |n, (_, l)| n.checked_add(l.bytes))
        .ok_or_else(|| {
            MedicalError::invalid(format!("series {series}: the volume's size overflows"))
        })?;
    let limit = tgm::Limits::default().max_object_bytes;
    let len = usize::try_from(total)
        .ok()
        .filter(|_| total <= limit)
        .ok_or_else(|| {
            MedicalError::refused(format!(
                "series {series}: the volume would be {total} bytes, more than the limit of {limit}"
            ))
        })?;
    let mut volume = Vec::new();
    volume.try_reserve_exact(len).map_err(|_| {
        MedicalError::refused(format!(
            "series {series}: cannot allocate {len} bytes for the volume"
        ))
    })?;
    volume.resize(len, 0);
    let mut rest = &mut volume[..];
    for (path, layout) in images {
        let (slot, after) = rest.split_at_mut(layout.bytes as usize);
        rest = after;
        let obj = open(path)?;
        if Layout::of(&obj, path)? != **layout {
            return Err(err_at(
                path,
                "changed while it was being converted (its pixel layout is not the one first read)",
            ));
        }
        layout.write_into(&obj, path, slot)?;
    }
    Ok(volume)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use tgm::cbor::Value;
    use tgm::{Map, ObjectDescriptor};

    use super::*;
    use crate::medical::dicom::{dicom_to_messages, Reading};
    use crate::medical::dicom_conform::Conformance;
    use crate::medical::dicom_write::object_to_dicom;
    use crate::medical::pipeline::{Compression, PipelineArgs};

    /// A base entry placing slice k at z = 2k mm.
    fn entry() -> Map {
        let affine = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 2.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let rows = affine
            .iter()
            .map(|r| Value::Array(r.iter().map(|&x| Value::Float(x)).collect()));
        let mut g = Map::new();
        g.insert("affine_lps".into(), Value::Array(rows.collect()));
        let mut attrs = Map::new();
        attrs.insert("SeriesInstanceUID".into(), "1.2.3.4".into());
        let mut dicom = Map::new();
        dicom.insert("attributes".into(), Value::from(attrs));
        let mut e = Map::new();
        e.insert("dicom".into(), Value::from(dicom));
        e.insert("geometry".into(), Value::from(g));
        e
    }

    /// An int16 volume of `shape` written as one file per slice, named so
    /// that the files' order is the reverse of the slices'.
    fn write_series(dir: &Path, shape: [u64; 3], data: &[u8]) -> Vec<PathBuf> {
        let d = ObjectDescriptor::new(Dtype::Int16, shape.to_vec());
        let files = object_to_dicom(&d, data, &entry(), Conformance::Strict)
            .unwrap()
            .files;
        let n = files.len();
        files
            .into_iter()
            .enumerate()
            .map(|(k, bytes)| {
                let p = dir.join(format!("{}.dcm", n - k));
                std::fs::write(&p, bytes).unwrap();
                p
            })
            .collect()
    }

    fn raw() -> PipelineArgs {
        PipelineArgs {
            compression: Compression::None,
            level: None,
        }
    }

    /// The directory's series as `convert-dicom` reads them by default.
    fn convert_dir(dir: &Path) -> crate::medical::dicom::DicomConversion {
        dicom_to_messages(&[dir.to_path_buf()], Reading::default(), &raw(), None).unwrap()
    }

    fn int16s(n: usize) -> Vec<u8> {
        (0..n as i16)
            .flat_map(|v| (v * 37 - 500).to_le_bytes())
            .collect()
    }

    #[test]
    fn the_volume_is_each_slice_read_again_into_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let data = int16s(4 * 3 * 5);
        write_series(dir.path(), [4, 3, 5], &data);
        let conv = convert_dir(dir.path());
        assert_eq!(conv.len(), 1);
        let (objects, _) = conv.message(0).unwrap();
        assert_eq!(objects[0].0.shape, vec![4, 3, 5]);
        assert_eq!(objects[0].1, data);
        assert!(conv.message(1).is_err());
    }

    #[test]
    fn a_file_changed_after_the_first_pass_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_series(dir.path(), [3, 3, 5], &int16s(3 * 3 * 5));
        let conv = convert_dir(dir.path());
        let other = ObjectDescriptor::new(Dtype::Int16, vec![1, 3, 4]);
        let file = object_to_dicom(&other, &int16s(12), &entry(), Conformance::Strict)
            .unwrap()
            .files;
        std::fs::write(&files[1], &file[0]).unwrap();
        let err = conv.message(0).unwrap_err().to_string();
        assert!(err.contains(&files[1].display().to_string()), "{err}");
        assert!(err.contains("changed"), "{err}");
    }

    #[test]
    fn a_volume_over_the_object_limit_is_refused_before_any_file_is_read() {
        let half = Layout {
            transfer_syntax: NATIVE_SYNTAXES[1].0.into(),
            declared: Declared {
                rows: 1 << 20,
                columns: 1 << 12,
                samples: 1,
                bits_allocated: 16,
                frames: 1,
            },
            dtype: Dtype::Int16,
            bytes: tgm::Limits::default().max_object_bytes / 2 + 1,
        };
        let missing = Path::new("/nonexistent/a.dcm");
        let err = read_volume("1.2", &[(missing, &half), (missing, &half)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("series 1.2") && err.contains("limit"), "{err}");
    }

    #[test]
    fn native_words_are_rebuilt_in_file_order_then_swapped_per_sample() {
        let mut out = [0u8; 4];
        // OW words of a big-endian file holding 16-bit samples 0x0102, 0x0304.
        native_into(
            &PrimitiveValue::U16(vec![0x0102, 0x0304].into()),
            2,
            true,
            &mut out,
        );
        assert_eq!(out, [0x02, 0x01, 0x04, 0x03]);
        // OB bytes of a big-endian file holding one 32-bit sample.
        native_into(
            &PrimitiveValue::U8(vec![1, 2, 3, 4].into()),
            4,
            true,
            &mut out,
        );
        assert_eq!(out, [4, 3, 2, 1]);
        // OW words of a little-endian file holding 8-bit samples.
        native_into(
            &PrimitiveValue::U16(vec![0x0201, 0x0403].into()),
            1,
            false,
            &mut out,
        );
        assert_eq!(out, [1, 2, 3, 4]);
        assert_eq!(native_len(&PrimitiveValue::I32(vec![1, 2].into())), 8);
    }
}
