//! Decoded messages (`tgm_message_t`): `tgm_decode*`, `tgm_decode_object`,
//! `tgm_decode_range`, and the object accessors (`spec/format.md` §12).

use std::ffi::{c_char, CString};

use tgm::decode::Message;
use tgm::{DecodedObject, GlobalMetadata, ObjectDescriptor};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{query, status, Failure, Outcome, TgmError};
use crate::metadata::TgmMetadata;
use crate::options::{self, TgmDecodeMaskOptions};

/// The wire version every message this library reads carries.
pub const TGM_WIRE_VERSION: u64 = 3;

/// One decoded object and the C strings its accessors return.
struct ObjectView {
    shape: Vec<u64>,
    strides: Vec<u64>,
    data: Vec<u8>,
    dtype: CString,
    obj_type: CString,
    byte_order: CString,
    encoding: CString,
    filter: CString,
    compression: CString,
    /// `("xxh3", hex digest)` when the frame carries a digest.
    hash: Option<(CString, CString)>,
}

fn c(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

impl ObjectView {
    fn new(d: &ObjectDescriptor, data: Vec<u8>, digest: Option<u64>) -> Self {
        ObjectView {
            shape: d.shape.clone(),
            strides: d.strides.clone(),
            data,
            dtype: c(d.dtype.name()),
            obj_type: c(&d.obj_type),
            byte_order: c(d.byte_order.name()),
            encoding: c(d.encoding()),
            filter: c(d.filter()),
            compression: c(d.compression()),
            hash: digest.map(|h| (c("xxh3"), c(&tgm::hash::to_hex(h)))),
        }
    }
}

/// A decoded message (`tgm_message_t`): the message metadata and the
/// decoded objects (all of them, or the one asked for).
pub struct TgmMessage {
    metadata: GlobalMetadata,
    objects: Vec<ObjectView>,
}

/// The digest in each data frame of the first message of `buf`
/// (`None` for a frame without one); empty when it cannot be parsed.
fn digests(buf: &[u8]) -> Vec<Option<u64>> {
    Message::parse(buf).map_or_else(
        |_| Vec::new(),
        |m| {
            m.layout()
                .objects
                .iter()
                .map(|o| o.data.has_hash().then(|| o.data.stored_hash()))
                .collect()
        },
    )
}

impl TgmMessage {
    /// A handle over a whole decoded message read from `buf`.
    pub(crate) fn whole(buf: &[u8], opts: &tgm::DecodeOptions) -> Outcome<TgmMessage> {
        let m = tgm::decode(buf, opts)?;
        let hashes = digests(buf);
        let objects = m
            .objects
            .into_iter()
            .enumerate()
            .map(|(i, o)| ObjectView::new(&o.descriptor, o.data, hashes.get(i).copied().flatten()))
            .collect();
        Ok(TgmMessage {
            metadata: m.metadata,
            objects,
        })
    }

    /// A handle over object `index` of the message in `buf`, with the
    /// message metadata `metadata`.
    pub(crate) fn single(
        buf: &[u8],
        index: usize,
        metadata: GlobalMetadata,
        opts: &tgm::DecodeOptions,
    ) -> Outcome<TgmMessage> {
        let DecodedObject { descriptor, data } = tgm::decode_object(buf, index, opts)?;
        let digest = tgm::decode::locate_object(buf, 0, index, &opts.limits)
            .ok()
            .and_then(|o| o.frame().has_hash().then(|| o.frame().stored_hash()));
        Ok(TgmMessage {
            metadata,
            objects: vec![ObjectView::new(&descriptor, data, digest)],
        })
    }

    fn object(&self, i: usize) -> Option<&ObjectView> {
        self.objects.get(i)
    }
}

/// The number of objects of the first message of `buf`, or an
/// `TGM_ERROR_OBJECT` failure when `index` is not below it.
pub(crate) fn check_object_index(buf: &[u8], index: usize) -> Outcome<GlobalMetadata> {
    let metadata = tgm::decode_metadata(buf, &tgm::DecodeOptions::default())?;
    let n = Message::parse(buf)?.num_objects();
    if index >= n {
        return Err(Failure::new(
            TgmError::Object,
            format!("object index {index} out of range (the message has {n})"),
        ));
    }
    Ok(metadata)
}

/// Decodes the first message of `buf` (metadata and every object).
/// `native_byte_order` non-zero gives host-order elements; `verify_hash`
/// non-zero requires and checks every frame digest. Free `out` with
/// `tgm_message_free`.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_decode(
    buf: *const u8,
    buf_len: usize,
    native_byte_order: i32,
    threads: u32,
    verify_hash: i32,
    out: *mut *mut TgmMessage,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        tgm_decode_with_options(
            buf,
            buf_len,
            native_byte_order,
            threads,
            verify_hash,
            std::ptr::null(),
            out,
        )
    }
}

/// [`tgm_decode`] with decode-side mask options (NULL: restore NaN/Inf).
///
/// # Safety
/// As [`tgm_decode`]; `mask_options` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn tgm_decode_with_options(
    buf: *const u8,
    buf_len: usize,
    native_byte_order: i32,
    threads: u32,
    verify_hash: i32,
    mask_options: *const TgmDecodeMaskOptions,
    out: *mut *mut TgmMessage,
) -> TgmError {
    status("tgm_decode", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        // SAFETY: caller's contract.
        let opts =
            unsafe { options::decode_with(native_byte_order, threads, verify_hash, mask_options) };
        *out = args::into_handle(TgmMessage::whole(buf, &opts)?);
        Ok(())
    })
}

/// Decodes object `index` of the first message of `buf`: the handle holds
/// that one object (at index 0) and the whole message's metadata. An
/// index out of range is `TGM_ERROR_OBJECT`.
///
/// # Safety
/// As [`tgm_decode`].
#[no_mangle]
pub unsafe extern "C" fn tgm_decode_object(
    buf: *const u8,
    buf_len: usize,
    index: usize,
    native_byte_order: i32,
    threads: u32,
    verify_hash: i32,
    out: *mut *mut TgmMessage,
) -> TgmError {
    status("tgm_decode_object", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        let opts = options::decode(native_byte_order, threads, verify_hash);
        let metadata = check_object_index(buf, index)?;
        *out = args::into_handle(TgmMessage::single(buf, index, metadata, &opts)?);
        Ok(())
    })
}

/// Decodes element ranges `(ranges_offsets[i], ranges_counts[i])` of
/// object `object_index` without decoding the rest. With `join` non-zero
/// all ranges are concatenated into `out[0]` (`*out_count = 1`); otherwise
/// range `i` goes to `out[i]` (`*out_count = num_ranges`), so `out` must
/// have room for `num_ranges` buffers. Free each with `tgm_bytes_free`.
///
/// # Safety
/// `buf` valid for `buf_len` bytes; the range arrays for `num_ranges`
/// elements; `out` NULL or writable for 1 (join) or `num_ranges` entries;
/// `out_count` NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tgm_decode_range(
    buf: *const u8,
    buf_len: usize,
    object_index: usize,
    ranges_offsets: *const u64,
    ranges_counts: *const u64,
    num_ranges: usize,
    native_byte_order: i32,
    threads: u32,
    join: i32,
    out: *mut TgmBytes,
    out_count: *mut usize,
) -> TgmError {
    status("tgm_decode_range", || {
        let count = args::out(out_count, "out_count")?;
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        // SAFETY: caller's contract.
        let offsets = unsafe { args::array(ranges_offsets, num_ranges, "ranges_offsets") }?;
        // SAFETY: caller's contract.
        let counts = unsafe { args::array(ranges_counts, num_ranges, "ranges_counts") }?;
        check_object_index(buf, object_index)?;
        let ranges: Vec<(u64, u64)> = offsets
            .iter()
            .copied()
            .zip(counts.iter().copied())
            .collect();
        let opts = options::decode(native_byte_order, threads, 0);
        let parts = tgm::decode_range(buf, object_index, &ranges, &opts)?;
        let results: Vec<Vec<u8>> = if join != 0 {
            vec![parts.concat()]
        } else {
            parts
        };
        *count = results.len();
        for (i, part) in results.into_iter().enumerate() {
            // SAFETY: `out` has room for 1 (join) or `num_ranges` entries.
            unsafe { out.add(i).write(TgmBytes::from_vec(part)) };
        }
        Ok(())
    })
}

/// The wire version of the message (3); 0 for a NULL handle.
#[no_mangle]
pub extern "C" fn tgm_message_version(msg: *const TgmMessage) -> u64 {
    query("tgm_message_version", 0, || {
        args::handle(msg, "message").map_or(0, |_| TGM_WIRE_VERSION)
    })
}

/// The number of objects in the handle (1 after `tgm_decode_object`);
/// 0 for a NULL handle.
#[no_mangle]
pub extern "C" fn tgm_message_num_objects(msg: *const TgmMessage) -> usize {
    query("tgm_message_num_objects", 0, || {
        args::handle(msg, "message").map_or(0, |m| m.objects.len())
    })
}

/// The same as [`tgm_message_num_objects`].
#[no_mangle]
pub extern "C" fn tgm_message_num_decoded(msg: *const TgmMessage) -> usize {
    tgm_message_num_objects(msg)
}

/// Runs accessor `name` on object `i` of `msg`; a NULL handle or an index
/// out of range gives `none` and sets `tgm_last_error`.
fn with_object<T: Copy>(
    name: &str,
    msg: *const TgmMessage,
    i: usize,
    none: T,
    f: impl FnOnce(&ObjectView) -> T,
) -> T {
    query(name, none, || {
        let found = args::handle(msg, "message").and_then(|m| {
            m.object(i).ok_or_else(|| {
                Failure::new(
                    TgmError::Object,
                    format!(
                        "object index {i} out of range (the handle has {})",
                        m.objects.len()
                    ),
                )
            })
        });
        match found {
            Ok(o) => f(o),
            Err(e) => {
                crate::error::set_last_error(&format!("{name}: {}", e.text));
                none
            }
        }
    })
}

/// The number of dimensions of object `index`; 0 when there is no such
/// object.
#[no_mangle]
pub extern "C" fn tgm_object_ndim(msg: *const TgmMessage, index: usize) -> u64 {
    with_object("tgm_object_ndim", msg, index, 0, |o| o.shape.len() as u64)
}

/// The shape of object `index` (`tgm_object_ndim` entries), valid until
/// the message is freed; NULL when there is no such object.
#[no_mangle]
pub extern "C" fn tgm_object_shape(msg: *const TgmMessage, index: usize) -> *const u64 {
    with_object("tgm_object_shape", msg, index, std::ptr::null(), |o| {
        o.shape.as_ptr()
    })
}

/// The strides of object `index` (`tgm_object_ndim` entries), valid until
/// the message is freed; NULL when there is no such object.
#[no_mangle]
pub extern "C" fn tgm_object_strides(msg: *const TgmMessage, index: usize) -> *const u64 {
    with_object("tgm_object_strides", msg, index, std::ptr::null(), |o| {
        o.strides.as_ptr()
    })
}

fn string_field(
    name: &str,
    msg: *const TgmMessage,
    index: usize,
    field: impl FnOnce(&ObjectView) -> &CString,
) -> *const c_char {
    with_object(name, msg, index, std::ptr::null(), |o| field(o).as_ptr())
}

/// The dtype name of object `index` (`"float32"`, …), valid until the
/// message is freed; NULL when there is no such object.
#[no_mangle]
pub extern "C" fn tgm_object_dtype(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_object_dtype", msg, index, |o| &o.dtype)
}

/// The object type (`"ntensor"`), valid until the message is freed.
#[no_mangle]
pub extern "C" fn tgm_object_type(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_object_type", msg, index, |o| &o.obj_type)
}

/// The stored byte order, `"big"` or `"little"`.
#[no_mangle]
pub extern "C" fn tgm_object_byte_order(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_object_byte_order", msg, index, |o| &o.byte_order)
}

/// The filter name (`"none"`, `"shuffle"`).
#[no_mangle]
pub extern "C" fn tgm_object_filter(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_object_filter", msg, index, |o| &o.filter)
}

/// The compression name (`"none"`, `"zstd"`, `"szip"`, …).
#[no_mangle]
pub extern "C" fn tgm_object_compression(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_object_compression", msg, index, |o| &o.compression)
}

/// The encoding name (`"none"`, `"simple_packing"`).
#[no_mangle]
pub extern "C" fn tgm_payload_encoding(msg: *const TgmMessage, index: usize) -> *const c_char {
    string_field("tgm_payload_encoding", msg, index, |o| &o.encoding)
}

/// The decoded bytes of object `decoded_index` and their length in
/// `*out_len`, valid until the message is freed; NULL (and no write to
/// `out_len`) when there is no such object.
///
/// # Safety
/// `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_object_data(
    msg: *const TgmMessage,
    decoded_index: usize,
    out_len: *mut usize,
) -> *const u8 {
    with_object(
        "tgm_object_data",
        msg,
        decoded_index,
        std::ptr::null(),
        |o| {
            if let Ok(len) = args::out(out_len, "out_len") {
                *len = o.data.len();
            }
            o.data.as_ptr()
        },
    )
}

/// 1 when object `index`'s frame carries a digest, else 0.
#[no_mangle]
pub extern "C" fn tgm_payload_has_hash(msg: *const TgmMessage, index: usize) -> i32 {
    with_object("tgm_payload_has_hash", msg, index, 0, |o| {
        i32::from(o.hash.is_some())
    })
}

/// `"xxh3"` when object `index`'s frame carries a digest, else NULL.
#[no_mangle]
pub extern "C" fn tgm_object_hash_type(msg: *const TgmMessage, index: usize) -> *const c_char {
    with_object("tgm_object_hash_type", msg, index, std::ptr::null(), |o| {
        o.hash
            .as_ref()
            .map_or(std::ptr::null(), |(t, _)| t.as_ptr())
    })
}

/// Object `index`'s digest as 16 hex characters, or NULL without one.
#[no_mangle]
pub extern "C" fn tgm_object_hash_value(msg: *const TgmMessage, index: usize) -> *const c_char {
    with_object("tgm_object_hash_value", msg, index, std::ptr::null(), |o| {
        o.hash
            .as_ref()
            .map_or(std::ptr::null(), |(_, v)| v.as_ptr())
    })
}

/// A metadata handle for the message (independent of it: free it with
/// `tgm_metadata_free`).
///
/// # Safety
/// `msg` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_message_metadata(
    msg: *const TgmMessage,
    out: *mut *mut TgmMetadata,
) -> TgmError {
    status("tgm_message_metadata", || {
        let out = args::out(out, "out")?;
        let m = args::handle(msg, "message")?;
        *out = args::into_handle(TgmMetadata::new(m.metadata.clone()));
        Ok(())
    })
}

/// Frees a message handle; NULL is a no-op.
///
/// # Safety
/// `msg` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_message_free(msg: *mut TgmMessage) {
    // SAFETY: caller's contract.
    query("tgm_message_free", (), || unsafe { args::free_handle(msg) })
}
