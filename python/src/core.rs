//! The native functions behind the `tgm` Python package. Every call into
//! the tgm library's operations is in this module (value conversions are in
//! [`crate::convert`]); the Python layer (`python/tgm/`) shapes the results
//! into the reference API. The GIL is released around encoding, decoding,
//! hashing and file indexing.

use std::io::Cursor;
use std::sync::Mutex;

use numpy::PyArray1;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyMemoryView};

use tgm::decode::{locate_object, Message};
use tgm::encode::EncodeOptions;
use tgm::pipeline::{MaskOptions, PipelineOptions, ZstdFrameSize};
use tgm::validate::{Mode, ValidateOptions};
use tgm::{ByteOrder, DecodeOptions, Error, GlobalMetadata, Limits, ObjectDescriptor, Verify};

use crate::convert::{
    descriptor_from_py, descriptor_to_py, invalid_argument, metadata_from_py, metadata_to_py,
    py_err, IntoPyResult,
};
use crate::masks::{mask_options, MaskArgs};
use crate::ranges::{element_kind, ranges_to_py, ElementRanges, RangesPy};

/// The bytes of a Python buffer, safe to read after the GIL is released:
/// borrowed when no Python code can change them (a `bytes` object, or a
/// read-only memory map, directly or through memoryviews), copied while
/// the GIL is held otherwise (`bytearray`, NumPy arrays, writable maps,
/// read-only views of writable objects). See docs/src/guide/python.md.
pub(crate) enum Input {
    /// Held export of an immutable object.
    Shared(PyBuffer<u8>),
    /// A private copy.
    Copied(Vec<u8>),
    /// Held export of an object Python code may change, read in place:
    /// only while the GIL is held ([`Input::needs_gil`]), as a copy would
    /// be, so no Python thread writes it meanwhile.
    Mutable(PyBuffer<u8>),
}

impl Input {
    /// Takes the buffer of `obj`, which must be C-contiguous.
    pub(crate) fn of(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(match export(obj)? {
            (b, true) => Input::Shared(b),
            (b, false) => Input::Copied(b.to_vec(obj.py())?),
        })
    }

    /// Takes the buffer of `obj`, which must be C-contiguous, without
    /// copying: [`Input::Shared`] when it is immutable, else
    /// [`Input::Mutable`], whose bytes must be read with the GIL held. For
    /// encoding, where the copy would cost more than releasing the GIL
    /// gains (docs/src/guide/python.md).
    pub(crate) fn in_place(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(match export(obj)? {
            (b, true) => Input::Shared(b),
            (b, false) => Input::Mutable(b),
        })
    }

    /// Whether the bytes may be read only while the GIL is held.
    pub(crate) fn needs_gil(&self) -> bool {
        matches!(self, Input::Mutable(_))
    }

    /// The bytes. Those of an [`Input::Mutable`] are read with the GIL held.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Input::Copied(v) => v,
            Input::Shared(b) | Input::Mutable(b) => {
                let len = b.len_bytes();
                if len == 0 {
                    return &[];
                }
                // SAFETY: the buffer is C-contiguous (checked in `of` and
                // `in_place`), `len` bytes long and stays exported while `b`
                // lives. A `Shared` exporter is immutable, so no thread
                // writes it while we read; a `Mutable` one is read only
                // while the GIL is held (`needs_gil`), so no Python code
                // runs to write it.
                unsafe { std::slice::from_raw_parts(b.buf_ptr() as *const u8, len) }
            }
        }
    }
}

/// The buffer `obj` exports, which must be C-contiguous, and whether it is
/// immutable.
fn export(obj: &Bound<'_, PyAny>) -> PyResult<(PyBuffer<u8>, bool)> {
    let b = PyBuffer::<u8>::get(obj)?;
    if !b.is_c_contiguous() {
        return Err(invalid_argument(obj.py(), "buffer must be C-contiguous"));
    }
    let fixed = b.readonly() && immutable(obj)?;
    Ok((b, fixed))
}

/// Whether no Python code can change the bytes `obj` exports: the object
/// at the bottom of its memoryview chain is `bytes`, or a memory map whose
/// own buffer is read-only (`mmap.ACCESS_READ`).
fn immutable(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = obj.py();
    let mut base = obj.clone();
    while base.is_instance_of::<PyMemoryView>() {
        let inner = base.getattr("obj")?;
        if inner.is_none() {
            return Ok(false);
        }
        base = inner;
    }
    if base.is_instance_of::<PyBytes>() {
        return Ok(true);
    }
    let mmap = py.import("mmap")?.getattr("mmap")?;
    if !base.is_instance(&mmap)? {
        return Ok(false);
    }
    Ok(PyBuffer::<u8>::get(&base)?.readonly())
}

/// A byte vector handed to NumPy without copying.
pub(crate) fn array_of(py: Python<'_>, v: Vec<u8>) -> PyObject {
    PyArray1::from_vec(py, v).into_any().unbind()
}

/// Digest policy of the Python API: `verify_hash=True` requires every frame
/// to carry a digest; otherwise digests that are present are still checked.
pub(crate) fn verify_policy(verify_hash: bool) -> Verify {
    if verify_hash {
        Verify::Require
    } else {
        Verify::IfPresent
    }
}

pub(crate) fn decode_options(
    native: bool,
    threads: usize,
    restore: bool,
    verify_hash: bool,
) -> DecodeOptions {
    DecodeOptions::default()
        .native_byte_order(native)
        .threads(threads)
        .restore_non_finite(restore)
        .verify(verify_policy(verify_hash))
}

/// The zstd frame header of the keyword `zstd_content_size`: the content
/// size recorded on request, else omitted as the reference writes it
/// (`spec/pipeline.md` §4.1).
fn zstd_frame_size(zstd_content_size: bool) -> ZstdFrameSize {
    if zstd_content_size {
        ZstdFrameSize::Recorded
    } else {
        ZstdFrameSize::Omitted
    }
}

/// Encode options from the keywords `encode` and `StreamingEncoder` share.
fn encode_options(
    hash: bool,
    threads: usize,
    allow_nan: bool,
    allow_inf: bool,
    masks: MaskOptions,
    zstd_frame_size: ZstdFrameSize,
) -> EncodeOptions {
    let mut p = PipelineOptions::default();
    p.masks = masks;
    p.allow_nan = allow_nan;
    p.allow_inf = allow_inf;
    p.threads = threads;
    p.zstd_frame_size = zstd_frame_size;
    EncodeOptions::new().hashing(hash).pipeline(p)
}

/// Encodes one message. `objects` is a list of `(descriptor dict, buffer)`;
/// each buffer holds the elements in the descriptor's byte order and is
/// read in place, with the GIL held unless every buffer is immutable.
#[pyfunction]
#[pyo3(signature = (base, extra, objects, hash=true, threads=0, allow_nan=false, allow_inf=false, masks=None, zstd_content_size=false))]
#[allow(clippy::too_many_arguments)]
pub fn encode(
    py: Python<'_>,
    base: &Bound<'_, PyAny>,
    extra: &Bound<'_, PyAny>,
    objects: &Bound<'_, PyList>,
    hash: bool,
    threads: usize,
    allow_nan: bool,
    allow_inf: bool,
    masks: Option<MaskArgs>,
    zstd_content_size: bool,
) -> PyResult<Py<PyBytes>> {
    let meta = metadata_from_py(base, extra)?;
    let mut descs = Vec::with_capacity(objects.len());
    let mut bufs = Vec::with_capacity(objects.len());
    for item in objects.iter() {
        let (d, data): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        descs.push(descriptor_from_py(&d)?);
        bufs.push(Input::in_place(&data)?);
    }
    let slices = bufs.iter().map(Input::bytes);
    let pairs: Vec<(&ObjectDescriptor, &[u8])> = descs.iter().zip(slices).collect();
    let masks = mask_options(py, masks.as_ref())?;
    let size = zstd_frame_size(zstd_content_size);
    let opts = encode_options(hash, threads, allow_nan, allow_inf, masks, size);
    let run = || tgm::encode(&meta, &pairs, &opts);
    // Arrays are read where they are: the GIL stays held while any of them
    // may be written by Python code, and is released only when none can.
    let out = if bufs.iter().any(Input::needs_gil) {
        run()
    } else {
        py.allow_threads(run)
    };
    Ok(PyBytes::new(py, &out.py(py)?).unbind())
}

/// Decodes the first message of `buf` (`spec/format.md` §12)
/// → `(metadata dict, [(descriptor dict, uint8 array)])`.
#[pyfunction]
#[pyo3(signature = (buf, native_byte_order=true, threads=0, restore_non_finite=true, verify_hash=false))]
pub fn decode(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    native_byte_order: bool,
    threads: usize,
    restore_non_finite: bool,
    verify_hash: bool,
) -> PyResult<DecodedPy> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let opts = decode_options(native_byte_order, threads, restore_non_finite, verify_hash);
    let m = py.allow_threads(|| tgm::decode(bytes, &opts)).py(py)?;
    message_to_py(py, m)
}

/// A decoded message → `(metadata dict, [(descriptor dict, uint8 array)])`,
/// each array owning its object's bytes without another copy.
pub(crate) fn message_to_py(py: Python<'_>, m: tgm::DecodedMessage) -> PyResult<DecodedPy> {
    let meta = metadata_to_py(py, &m.metadata)?;
    let objects = m
        .objects
        .into_iter()
        .map(|o| Ok((descriptor_to_py(py, &o.descriptor)?, array_of(py, o.data))))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((meta, objects))
}

/// A decoded message as Python values: metadata and `(descriptor, array)` pairs.
pub(crate) type DecodedPy = (PyObject, Vec<(PyObject, PyObject)>);

/// Metadata of the first message of `buf`; the metadata frame's digest is checked.
#[pyfunction]
pub fn decode_metadata(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let m = py
        .allow_threads(|| tgm::decode_metadata(bytes, &DecodeOptions::default()))
        .py(py)?;
    metadata_to_py(py, &m)
}

/// Metadata and every descriptor of the first message of `buf`.
#[pyfunction]
pub fn decode_descriptors(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
) -> PyResult<(PyObject, Vec<PyObject>)> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let (m, descs) = py
        .allow_threads(|| tgm::decode_descriptors(bytes, &DecodeOptions::default()))
        .py(py)?;
    let descs = descs
        .iter()
        .map(|d| descriptor_to_py(py, d))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((metadata_to_py(py, &m)?, descs))
}

/// Object `index` of the first message of `buf` → `(metadata dict, descriptor dict, uint8 array)`.
#[pyfunction]
#[pyo3(signature = (buf, index, native_byte_order=true, threads=0, restore_non_finite=true, verify_hash=false))]
pub fn decode_object(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    index: usize,
    native_byte_order: bool,
    threads: usize,
    restore_non_finite: bool,
    verify_hash: bool,
) -> PyResult<(PyObject, PyObject, PyObject)> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let opts = decode_options(native_byte_order, threads, restore_non_finite, verify_hash);
    let (meta, obj) = py
        .allow_threads(|| -> tgm::Result<_> {
            let m = Message::parse_with(bytes, 0, &opts.limits)?;
            let meta = m.metadata()?;
            let obj = tgm::decode_object(bytes, index, &opts)?;
            Ok((meta, obj))
        })
        .py(py)?;
    Ok((
        metadata_to_py(py, &meta)?,
        descriptor_to_py(py, &obj.descriptor)?,
        array_of(py, obj.data),
    ))
}

/// Element ranges `(first, count)` of object `index` (`spec/pipeline.md` §7)
/// → `(dtype, byte order, [uint8 array])` ([`RangesPy`]). As a range read
/// of a file (`spec/remote.md` §4), and as in the reference, this checks the
/// frame's structure but not its digest, which covers the whole payload:
/// hashing it would cost more than decoding the ranges.
#[pyfunction]
#[pyo3(signature = (buf, index, ranges, native_byte_order=true, threads=0, restore_non_finite=true))]
pub fn decode_range(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    index: usize,
    ranges: ElementRanges,
    native_byte_order: bool,
    threads: usize,
    restore_non_finite: bool,
) -> PyResult<RangesPy> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let opts =
        decode_options(native_byte_order, threads, restore_non_finite, false).verify(Verify::Off);
    let (desc, parts) = py
        .allow_threads(|| -> tgm::Result<_> {
            let o = locate_object(bytes, 0, index, &opts.limits)?;
            let parts = o.decode_range(&ranges.0, &opts)?;
            Ok((element_kind(o.descriptor()), parts))
        })
        .py(py)?;
    Ok(ranges_to_py(py, desc, parts))
}

/// Where object `index` of the message in `buf` stores its elements, for
/// reading them in place: `(descriptor dict, offset, length)` when the object
/// is uncompressed, mask-free and in native byte order, else
/// `(descriptor dict, None, None)`. The frame digest is checked first
/// (`verify_hash` as in [`decode`]).
#[pyfunction]
#[pyo3(signature = (buf, index, verify_hash=false))]
pub fn locate_raw(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    index: usize,
    verify_hash: bool,
) -> PyResult<(PyObject, Option<u64>, Option<u64>)> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let (desc, place) = py
        .allow_threads(|| -> tgm::Result<_> {
            let limits = Limits::default();
            let o = locate_object(bytes, 0, index, &limits)?;
            o.verify(verify_policy(verify_hash))?;
            let d = o.descriptor();
            let len = d.decoded_len()?;
            let in_place = d.is_raw()
                && d.masks.as_ref().is_none_or(|m| m.is_empty())
                && d.byte_order == ByteOrder::native()
                && o.payload_region().len() as u64 >= len;
            Ok((d.clone(), in_place.then(|| (o.payload_offset(), len))))
        })
        .py(py)?;
    Ok((
        descriptor_to_py(py, &desc)?,
        place.map(|p| p.0),
        place.map(|p| p.1),
    ))
}

/// Complete messages in `buf` as `(offset, length)` pairs.
#[pyfunction]
pub fn scan(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<Vec<(u64, u64)>> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let spans = py.allow_threads(|| tgm::scan(bytes));
    Ok(spans.iter().map(|s| (s.offset, s.len)).collect())
}

/// xxh3-64 of `buf` as 16 lowercase hex digits.
#[pyfunction]
pub fn compute_hash(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<String> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let h = py.allow_threads(|| tgm::hash::xxh3(bytes));
    Ok(tgm::hash::to_hex(h))
}

/// simple_packing parameters for native-order float64 values
/// (`spec/pipeline.md` §2.1) → `(reference, binary scale, decimal scale, bits)`.
#[pyfunction]
pub fn compute_packing_params(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    bits_per_value: u32,
    decimal_scale_factor: i32,
) -> PyResult<(f64, i32, i32, u32)> {
    let input = Input::of(values)?;
    let bytes = input.bytes();
    if bytes.len() % 8 != 0 {
        return Err(invalid_argument(py, "values must be float64"));
    }
    let p = py
        .allow_threads(|| {
            tgm::pipeline::compute_packing_params(
                bytes,
                ByteOrder::native(),
                bits_per_value,
                decimal_scale_factor,
            )
        })
        .py(py)?;
    Ok((
        p.reference_value,
        p.binary_scale_factor,
        p.decimal_scale_factor,
        p.bits_per_value,
    ))
}

fn validate_options(
    py: Python<'_>,
    level: &str,
    canonical: bool,
) -> PyResult<(Mode, ValidateOptions)> {
    let mode = level.parse::<Mode>().map_err(|e| py_err(py, e))?;
    Ok((mode, ValidateOptions::default().canonical(canonical)))
}

fn to_json(py: Python<'_>, v: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| invalid_argument(py, e.to_string()))
}

/// Validates `buf` as one message with the library validator
/// (`spec/files.md` §8) → the report as JSON, which the Python layer loads
/// into the reference's dict shape.
#[pyfunction]
#[pyo3(signature = (buf, level="default", canonical=false))]
pub fn validate(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    level: &str,
    canonical: bool,
) -> PyResult<String> {
    let (mode, opts) = validate_options(py, level, canonical)?;
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let report = py.allow_threads(|| tgm::validate::validate_message(bytes, mode, &opts));
    to_json(py, &report)
}

/// Validates every message of the file at `path` and the bytes between
/// them → the report as JSON (`{"file_issues", "messages"}`).
#[pyfunction]
#[pyo3(signature = (path, level="default", canonical=false))]
pub fn validate_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    level: &str,
    canonical: bool,
) -> PyResult<String> {
    let (mode, opts) = validate_options(py, level, canonical)?;
    let report = py
        .allow_threads(|| tgm::validate_file(&path, mode, &opts))
        .py(py)?;
    to_json(py, &report)
}

/// The library's streaming encoder writing into memory.
type InMemoryEncoder = tgm::StreamingEncoder<Cursor<Vec<u8>>>;

/// A message written one object at a time into memory (`spec/format.md` §11.4).
#[pyclass(module = "tgm._native", name = "StreamingEncoder")]
pub struct NativeStreamingEncoder {
    state: Mutex<Option<InMemoryEncoder>>,
    metadata: GlobalMetadata,
    opts: EncodeOptions,
}

#[pymethods]
impl NativeStreamingEncoder {
    #[new]
    #[pyo3(signature = (base, extra, hash=true, threads=0, allow_nan=false, allow_inf=false, masks=None, zstd_content_size=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        base: &Bound<'_, PyAny>,
        extra: &Bound<'_, PyAny>,
        hash: bool,
        threads: usize,
        allow_nan: bool,
        allow_inf: bool,
        masks: Option<MaskArgs>,
        zstd_content_size: bool,
    ) -> PyResult<Self> {
        let metadata = metadata_from_py(base, extra)?;
        let masks = mask_options(py, masks.as_ref())?;
        let size = zstd_frame_size(zstd_content_size);
        let opts = encode_options(hash, threads, allow_nan, allow_inf, masks, size);
        let enc = tgm::StreamingEncoder::new(Cursor::new(Vec::new()), &metadata, &opts).py(py)?;
        Ok(NativeStreamingEncoder {
            state: Mutex::new(Some(enc)),
            metadata,
            opts,
        })
    }

    /// Encodes and writes one data object frame.
    fn write_object(
        &self,
        py: Python<'_>,
        descriptor: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.write(py, descriptor, data, false)
    }

    /// Writes one data object frame around an already encoded payload
    /// (`spec/format.md` §11.5).
    fn write_object_pre_encoded(
        &self,
        py: Python<'_>,
        descriptor: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.write(py, descriptor, payload, true)
    }

    /// Number of objects written to the current message.
    fn num_objects(&self, py: Python<'_>) -> PyResult<usize> {
        let guard = self.lock(py)?;
        Ok(guard.as_ref().map_or(0, |e| e.num_objects()))
    }

    /// Finishes the message (writing its length into the preamble and
    /// postamble when `backfill`); with `reset`, starts the next message.
    #[pyo3(signature = (backfill, reset))]
    fn finish(&self, py: Python<'_>, backfill: bool, reset: bool) -> PyResult<Py<PyBytes>> {
        let mut guard = self.lock(py)?;
        let enc = guard
            .take()
            .ok_or_else(|| invalid_argument(py, "the encoder is finished"))?;
        let (out, _) = py
            .allow_threads(|| {
                if backfill {
                    enc.finish_with_backfill()
                } else {
                    enc.finish()
                }
            })
            .py(py)?;
        if reset {
            *guard = Some(
                tgm::StreamingEncoder::new(Cursor::new(Vec::new()), &self.metadata, &self.opts)
                    .py(py)?,
            );
        }
        Ok(PyBytes::new(py, out.get_ref()).unbind())
    }
}

impl NativeStreamingEncoder {
    /// Writes one object: through the pipeline, or as a pre-encoded payload.
    fn write(
        &self,
        py: Python<'_>,
        descriptor: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        pre_encoded: bool,
    ) -> PyResult<()> {
        let d = descriptor_from_py(descriptor)?;
        let input = Input::of(data)?;
        let bytes = input.bytes();
        let mut guard = self.lock(py)?;
        let enc = guard
            .as_mut()
            .ok_or_else(|| invalid_argument(py, "the encoder is finished"))?;
        py.allow_threads(|| {
            if pre_encoded {
                enc.write_object_pre_encoded(&d, bytes)
            } else {
                enc.write_object(&d, bytes)
            }
        })
        .py(py)
    }

    fn lock(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, Option<InMemoryEncoder>>> {
        self.state.lock().map_err(|_| {
            py_err(
                py,
                Error::invalid_argument("the encoder failed while in use"),
            )
        })
    }
}
