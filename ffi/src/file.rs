//! Files (`tgm_file_t`): open, create, count, read, decode and append
//! (`spec/files.md`). Appends go through the library's locking appender,
//! which refuses a file ending in a torn message rather than writing after
//! it.

use std::ffi::{c_char, CString};
use std::path::PathBuf;

use tgm::file::{AppendOptions, Appender, TornTailPolicy};
use tgm::TgmFile;

use crate::args;
use crate::bytes::TgmBytes;
use crate::encode::EncodeCall;
use crate::error::{query, status, Failure, Outcome, TgmError};
use crate::message::TgmMessage;
use crate::options::{self, TgmEncodeMaskOptions};

/// An open file (`tgm_file_t`).
pub struct TgmFileHandle {
    path: PathBuf,
    path_c: CString,
    reader: TgmFile,
    /// Set by the first append: the catalogue the file had then (if any),
    /// whose entries the catalogue written on close reuses.
    appended: Option<Option<tgm::file::catalogue::Catalogue>>,
}

impl TgmFileHandle {
    fn open(path: &str) -> Outcome<TgmFileHandle> {
        Ok(TgmFileHandle {
            path: PathBuf::from(path),
            path_c: CString::new(path).unwrap_or_default(),
            reader: TgmFile::open(path)?,
            appended: None,
        })
    }

    /// The path the handle was opened with.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Message `index`'s bytes, `TGM_ERROR_OBJECT` naming the path when
    /// the file has fewer messages.
    fn message(&self, index: usize) -> Outcome<tgm::file::MessageBytes<'_>> {
        let n = self.reader.num_messages();
        if index >= n {
            return Err(Failure::new(
                TgmError::Object,
                format!(
                    "{}: message index {index} out of range (the file has {n})",
                    self.path.display()
                ),
            ));
        }
        Ok(self.reader.message_bytes(index)?)
    }

    /// Appends `message` (one complete encoded message) and re-indexes.
    fn append(&mut self, message: &[u8]) -> Outcome {
        let prior = self.reader.catalogue().cloned();
        let mut w = Appender::open(&self.path, &AppendOptions::default())?;
        w.append_bytes(message)
            .map_err(|e| Failure::from(e).context(self.path.display()))?;
        if self.appended.is_none() {
            self.appended = Some(prior);
        }
        self.reader.refresh()?;
        Ok(())
    }
}

/// A file appended to through the handle ends with its catalogue when the
/// handle is closed (`spec/files.md` §9.4): appends stay one write each,
/// and the catalogue is written once. A file that has since grown a torn
/// tail (another writer mid-append) is left as it is: the torn-tail policy
/// refuses rather than cuts. Without a catalogue the file is read by
/// scanning.
impl Drop for TgmFileHandle {
    fn drop(&mut self) {
        if let Some(prior) = self.appended.take() {
            let opts = AppendOptions::default().torn_tail(TornTailPolicy::Refuse);
            let _ = Appender::open(&self.path, &opts).and_then(|w| w.reusing(prior).finish());
        }
    }
}

unsafe fn path_arg<'a>(path: *const c_char) -> Outcome<&'a str> {
    // SAFETY: caller's contract.
    unsafe { args::text(path, "path") }
}

/// Opens an existing file for reading and appending. Free with
/// `tgm_file_close`.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_open(
    path: *const c_char,
    out: *mut *mut TgmFileHandle,
) -> TgmError {
    status("tgm_file_open", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let path = unsafe { path_arg(path) }?;
        *out = args::into_handle(TgmFileHandle::open(path)?);
        Ok(())
    })
}

/// Creates the file at `path`, empty, for appending messages; like the
/// reference, an existing file at `path` is truncated. A URL is refused:
/// a new remote archive is written with `tgm_writer_create`.
///
/// # Safety
/// As [`tgm_file_open`].
#[no_mangle]
pub unsafe extern "C" fn tgm_file_create(
    path: *const c_char,
    out: *mut *mut TgmFileHandle,
) -> TgmError {
    status("tgm_file_create", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let path = unsafe { path_arg(path) }?;
        if tgm::file::is_remote_url(path) {
            return Err(Failure::invalid(format!(
                "{path}: tgm_file_create makes a local file to read and append to; \
                 write a new remote archive with tgm_writer_create"
            )));
        }
        std::fs::File::create(path)
            .map_err(|e| Failure::new(TgmError::Io, format!("{path}: {e}")))?;
        *out = args::into_handle(TgmFileHandle::open(path)?);
        Ok(())
    })
}

/// The number of complete messages, counting those appended since the
/// file was opened.
///
/// # Safety
/// `file` is NULL or live; `out_count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_message_count(
    file: *mut TgmFileHandle,
    out_count: *mut usize,
) -> TgmError {
    status("tgm_file_message_count", || {
        let out = args::out(out_count, "out_count")?;
        let f = args::handle_mut(file, "file")?;
        f.reader
            .refresh()
            .map_err(|e| Failure::from(e).context(f.path.display()))?;
        *out = f.reader.num_messages();
        Ok(())
    })
}

/// Decodes message `index` (as `tgm_decode`).
///
/// # Safety
/// `file` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_decode_message(
    file: *mut TgmFileHandle,
    index: usize,
    native_byte_order: i32,
    threads: u32,
    verify_hash: i32,
    out: *mut *mut TgmMessage,
) -> TgmError {
    status("tgm_file_decode_message", || {
        let out = args::out(out, "out")?;
        let f = args::handle(file, "file")?;
        let bytes = f.message(index)?;
        let opts = options::decode(native_byte_order, threads, verify_hash);
        let m = TgmMessage::whole(&bytes, &opts)
            .map_err(|e| e.context(format_args!("{} message {index}", f.path.display())))?;
        *out = args::into_handle(m);
        Ok(())
    })
}

/// The dataset view of message `index`'s objects (UTF-8 JSON, not
/// NUL-terminated; free with `tgm_bytes_free`): an array with one entry
/// per object, `{"message", "object", "name", "dims", "shape", "coords",
/// "attrs"}` and `"geometry"` for a medical volume, as `tgm view` and the
/// xarray backend show it (`spec/kerchunk.md` §2.2). Reads metadata and
/// descriptors only.
///
/// # Safety
/// `file` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_view_to_json(
    file: *mut TgmFileHandle,
    index: usize,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_file_view_to_json", || {
        let out = args::out(out, "out")?;
        let f = args::handle(file, "file")?;
        f.message(index)?;
        let at = |e: tgm::Error| {
            Failure::from(e).context(format_args!("{} message {index}", f.path.display()))
        };
        let meta = f
            .reader
            .metadata(index, &tgm::DecodeOptions::default())
            .map_err(at)?;
        let descriptors = f.reader.descriptors(index).map_err(at)?;
        let view = tgm::view::message_view_json(&meta, &descriptors, index);
        *out = TgmBytes::from_vec(view.to_string().into_bytes());
        Ok(())
    })
}

/// A copy of message `index`'s bytes; free with `tgm_bytes_free`.
///
/// # Safety
/// `file` is NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_read_message(
    file: *mut TgmFileHandle,
    index: usize,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_file_read_message", || {
        let out = args::out(out, "out")?;
        let f = args::handle(file, "file")?;
        *out = TgmBytes::from_vec(f.message(index)?.into_owned());
        Ok(())
    })
}

/// Appends `buf`, which must be exactly one complete message.
///
/// # Safety
/// `file` is NULL or live; `buf` valid for `buf_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_append_raw(
    file: *mut TgmFileHandle,
    buf: *const u8,
    buf_len: usize,
) -> TgmError {
    status("tgm_file_append_raw", || {
        let f = args::handle_mut(file, "file")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        one_message(buf, &f.path.display())?;
        f.append(buf)
    })
}

/// Refuses `buf` unless it is exactly one complete message, naming
/// `target`, which nothing was written to.
pub(crate) fn one_message(buf: &[u8], target: &dyn std::fmt::Display) -> Outcome {
    let spans = tgm::scan(buf);
    if spans.len() != 1 || spans[0].offset != 0 || spans[0].len != buf.len() as u64 {
        return Err(Failure::new(
            TgmError::Framing,
            format!(
                "buf ({} bytes) is not exactly one complete message ({} found); nothing was written to {target}",
                buf.len(),
                spans.len(),
            ),
        ));
    }
    Ok(())
}

/// The path the file was opened with, valid until it is closed.
#[no_mangle]
pub extern "C" fn tgm_file_path(file: *const TgmFileHandle) -> *const c_char {
    query("tgm_file_path", std::ptr::null(), || {
        args::handle(file, "file").map_or(std::ptr::null(), |f| f.path_c.as_ptr())
    })
}

/// Encodes one message (as `tgm_encode`) and appends it.
///
/// # Safety
/// As `tgm_encode`; `file` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_append(
    file: *mut TgmFileHandle,
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        tgm_file_append_with_options(
            file,
            metadata_json,
            data_ptrs,
            data_lens,
            num_objects,
            hash_algo,
            threads,
            std::ptr::null(),
        )
    }
}

/// [`tgm_file_append`] with NaN/Inf mask options.
///
/// # Safety
/// As [`tgm_file_append`]; `mask_options` is NULL or valid.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tgm_file_append_with_options(
    file: *mut TgmFileHandle,
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
    mask_options: *const TgmEncodeMaskOptions,
) -> TgmError {
    status("tgm_file_append", || {
        let f = args::handle_mut(file, "file")?;
        let call = EncodeCall {
            metadata_json,
            data_ptrs,
            data_lens,
            num_objects,
            hash_algo,
            threads,
            masks: mask_options,
        };
        // SAFETY: forwarded contract.
        let msg = unsafe { call.message(false) }?;
        f.append(&msg)
    })
}

/// Closes a file handle; NULL is a no-op. A file appended to through the
/// handle is first ended with its catalogue (`spec/files.md` §9.4).
///
/// # Safety
/// `file` is NULL or came from this library and is closed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_file_close(file: *mut TgmFileHandle) {
    // SAFETY: caller's contract.
    query("tgm_file_close", (), || unsafe { args::free_handle(file) })
}
