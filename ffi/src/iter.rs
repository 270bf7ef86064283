//! Finding messages and walking them: `tgm_scan`, and the buffer, file and
//! object iterators (`spec/files.md` on scanning).

use tgm::{GlobalMetadata, MessageSpan, TgmFile};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{query, set_last_error, status, Failure, TgmError};
use crate::file::TgmFileHandle;
use crate::message::TgmMessage;
use crate::options;

/// Where one message lies in a scanned buffer (`tgm_scan_entry_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TgmScanEntry {
    /// Offset of the message's first byte.
    pub offset: usize,
    /// Its length in bytes.
    pub length: usize,
}

/// The messages found by `tgm_scan` (`tgm_scan_result_t`).
pub struct TgmScanResult {
    entries: Vec<TgmScanEntry>,
}

fn entry(s: &MessageSpan) -> TgmScanEntry {
    TgmScanEntry {
        offset: s.offset as usize,
        length: s.len as usize,
    }
}

/// Finds the complete messages in `buf` (damaged bytes between them are
/// skipped). Free `out` with `tgm_scan_free`.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_scan(
    buf: *const u8,
    buf_len: usize,
    out: *mut *mut TgmScanResult,
) -> TgmError {
    status("tgm_scan", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        let entries = tgm::scan(buf).iter().map(entry).collect();
        *out = args::into_handle(TgmScanResult { entries });
        Ok(())
    })
}

/// The number of messages found; 0 for a NULL handle.
#[no_mangle]
pub extern "C" fn tgm_scan_count(result: *const TgmScanResult) -> usize {
    query("tgm_scan_count", 0, || {
        args::handle(result, "scan result").map_or(0, |r| r.entries.len())
    })
}

/// Message `index`; out of range (or a NULL handle) gives offset
/// `SIZE_MAX`, length 0, and sets `tgm_last_error`.
#[no_mangle]
pub extern "C" fn tgm_scan_entry(result: *const TgmScanResult, index: usize) -> TgmScanEntry {
    let none = TgmScanEntry {
        offset: usize::MAX,
        length: 0,
    };
    query("tgm_scan_entry", none, || {
        match args::handle(result, "scan result") {
            Ok(r) => r.entries.get(index).copied().unwrap_or_else(|| {
                set_last_error(&format!(
                    "tgm_scan_entry: index {index} out of range ({} messages)",
                    r.entries.len()
                ));
                none
            }),
            Err(e) => {
                set_last_error(&format!("tgm_scan_entry: {}", e.text));
                none
            }
        }
    })
}

/// Frees a scan result; NULL is a no-op.
///
/// # Safety
/// `result` is NULL or came from `tgm_scan` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_scan_free(result: *mut TgmScanResult) {
    // SAFETY: caller's contract.
    query("tgm_scan_free", (), || unsafe { args::free_handle(result) })
}

/// Walks the messages of a caller's buffer (`tgm_buffer_iter_t`); the
/// buffer must stay valid and unchanged until the iterator is freed.
pub struct TgmBufferIter {
    buf: *const u8,
    spans: Vec<MessageSpan>,
    next: usize,
}

/// Scans `buf` once for an iterator over its messages.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes until the iterator is freed; `out`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_buffer_iter_create(
    buf: *const u8,
    buf_len: usize,
    out: *mut *mut TgmBufferIter,
) -> TgmError {
    status("tgm_buffer_iter_create", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let bytes = unsafe { args::bytes(buf, buf_len, "buf") }?;
        *out = args::into_handle(TgmBufferIter {
            buf,
            spans: tgm::scan(bytes),
            next: 0,
        });
        Ok(())
    })
}

/// The number of messages the iterator walks.
#[no_mangle]
pub extern "C" fn tgm_buffer_iter_count(iter: *const TgmBufferIter) -> usize {
    query("tgm_buffer_iter_count", 0, || {
        args::handle(iter, "iterator").map_or(0, |i| i.spans.len())
    })
}

/// The next message, borrowed from the buffer, in `*out_buf`/`*out_len`;
/// `TGM_ERROR_END_OF_ITER` after the last.
///
/// # Safety
/// `iter` is NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_buffer_iter_next(
    iter: *mut TgmBufferIter,
    out_buf: *mut *const u8,
    out_len: *mut usize,
) -> TgmError {
    status("tgm_buffer_iter_next", || {
        let ob = args::out(out_buf, "out_buf")?;
        let ol = args::out(out_len, "out_len")?;
        let it = args::handle_mut(iter, "iterator")?;
        let Some(s) = it.spans.get(it.next) else {
            return Err(Failure::new(TgmError::EndOfIter, "no more messages"));
        };
        it.next += 1;
        // SAFETY: the span lies inside the buffer the iterator was made on.
        *ob = unsafe { it.buf.add(s.offset as usize) };
        *ol = s.len as usize;
        Ok(())
    })
}

/// Frees a buffer iterator; NULL is a no-op.
///
/// # Safety
/// `iter` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_buffer_iter_free(iter: *mut TgmBufferIter) {
    // SAFETY: caller's contract.
    query("tgm_buffer_iter_free", (), || unsafe {
        args::free_handle(iter)
    })
}

/// Walks the messages of a file (`tgm_file_iter_t`) through its own
/// reader, so the file handle stays usable and may be closed first.
pub struct TgmFileIter {
    reader: TgmFile,
    next: usize,
}

/// An iterator over the messages of `file` as they are now.
///
/// # Safety
/// `file` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_iter_create(
    file: *mut TgmFileHandle,
    out: *mut *mut TgmFileIter,
) -> TgmError {
    status("tgm_file_iter_create", || {
        let out = args::out(out, "out")?;
        let f = args::handle(file, "file")?;
        *out = args::into_handle(TgmFileIter {
            reader: TgmFile::open(f.path())?,
            next: 0,
        });
        Ok(())
    })
}

/// A copy of the next message's bytes in `out` (free with
/// `tgm_bytes_free`); `TGM_ERROR_END_OF_ITER` after the last.
///
/// # Safety
/// `iter` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_iter_next(
    iter: *mut TgmFileIter,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_file_iter_next", || {
        let out = args::out(out, "out")?;
        let it = args::handle_mut(iter, "iterator")?;
        if it.next >= it.reader.num_messages() {
            return Err(Failure::new(TgmError::EndOfIter, "no more messages"));
        }
        let bytes = it.reader.message_bytes(it.next)?.into_owned();
        it.next += 1;
        *out = TgmBytes::from_vec(bytes);
        Ok(())
    })
}

/// Frees a file iterator; NULL is a no-op.
///
/// # Safety
/// `iter` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_iter_free(iter: *mut TgmFileIter) {
    // SAFETY: caller's contract.
    query("tgm_file_iter_free", (), || unsafe {
        args::free_handle(iter)
    })
}

/// Decodes the objects of one message one at a time
/// (`tgm_object_iter_t`); holds its own copy of the message.
pub struct TgmObjectIter {
    message: Vec<u8>,
    metadata: GlobalMetadata,
    count: usize,
    next: usize,
    opts: tgm::DecodeOptions,
}

/// Reads the metadata of the first message of `buf` and copies the
/// message for decoding its objects on demand.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_object_iter_create(
    buf: *const u8,
    buf_len: usize,
    native_byte_order: i32,
    verify_hash: i32,
    out: *mut *mut TgmObjectIter,
) -> TgmError {
    status("tgm_object_iter_create", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        let opts = options::decode(native_byte_order, 0, verify_hash);
        let parsed = tgm::decode::Message::parse(buf)?;
        let message = parsed.bytes().to_vec();
        *out = args::into_handle(TgmObjectIter {
            metadata: tgm::decode_metadata(&message, &opts)?,
            count: parsed.num_objects(),
            message,
            next: 0,
            opts,
        });
        Ok(())
    })
}

/// The next object as a one-object message handle (free it with
/// `tgm_message_free`); `TGM_ERROR_END_OF_ITER` after the last.
///
/// # Safety
/// `iter` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_object_iter_next(
    iter: *mut TgmObjectIter,
    out: *mut *mut TgmMessage,
) -> TgmError {
    status("tgm_object_iter_next", || {
        let out = args::out(out, "out")?;
        let it = args::handle_mut(iter, "iterator")?;
        if it.next >= it.count {
            return Err(Failure::new(TgmError::EndOfIter, "no more objects"));
        }
        let m = TgmMessage::single(&it.message, it.next, it.metadata.clone(), &it.opts)?;
        it.next += 1;
        *out = args::into_handle(m);
        Ok(())
    })
}

/// Frees an object iterator; NULL is a no-op.
///
/// # Safety
/// `iter` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_object_iter_free(iter: *mut TgmObjectIter) {
    // SAFETY: caller's contract.
    query("tgm_object_iter_free", (), || unsafe {
        args::free_handle(iter)
    })
}
