//! The streaming encoder (`tgm_streaming_encoder_t`): a message written to
//! a file one object at a time, its footer written by `finish`
//! (`spec/format.md` §11.4). Output that is never finished is removed, so
//! no half-written message is left behind.

use std::ffi::c_char;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use tgm::StreamingEncoder;

use crate::args;
use crate::error::{query, status, Failure, Outcome, TgmError};
use crate::json;
use crate::options::{self, TgmEncodeMaskOptions};

type FileEncoder = StreamingEncoder<BufWriter<File>>;

/// A streaming encoder writing to a file.
pub struct TgmStreamingEncoder {
    path: PathBuf,
    encoder: Option<FileEncoder>,
}

impl TgmStreamingEncoder {
    fn encoder(&mut self) -> Outcome<&mut FileEncoder> {
        self.encoder.as_mut().ok_or_else(|| {
            Failure::invalid(format!(
                "the encoder of {} is already finished",
                self.path.display()
            ))
        })
    }

    fn context(&self, e: tgm::Error) -> Failure {
        Failure::from(e).context(self.path.display())
    }
}

impl Drop for TgmStreamingEncoder {
    fn drop(&mut self) {
        if self.encoder.take().is_some() {
            // Never finished: the file holds no complete message.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Creates `path` (truncating an existing file, as the reference does) and
/// starts a message whose metadata is `metadata_json` (as `tgm_encode`'s,
/// without `descriptors`). `hash_algo` is `"xxh3"` or NULL.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_create(
    path: *const c_char,
    metadata_json: *const c_char,
    hash_algo: *const c_char,
    threads: u32,
    out: *mut *mut TgmStreamingEncoder,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        tgm_streaming_encoder_create_with_options(
            path,
            metadata_json,
            hash_algo,
            threads,
            std::ptr::null(),
            out,
        )
    }
}

/// [`tgm_streaming_encoder_create`] with NaN/Inf mask options.
///
/// # Safety
/// As [`tgm_streaming_encoder_create`]; `mask_options` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_create_with_options(
    path: *const c_char,
    metadata_json: *const c_char,
    hash_algo: *const c_char,
    threads: u32,
    mask_options: *const TgmEncodeMaskOptions,
    out: *mut *mut TgmStreamingEncoder,
) -> TgmError {
    status("tgm_streaming_encoder_create", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let path = PathBuf::from(unsafe { args::text(path, "path") }?);
        // SAFETY: caller's contract.
        let metadata =
            json::streaming_metadata(unsafe { args::text(metadata_json, "metadata_json") }?)?;
        // SAFETY: caller's contract.
        let opts = unsafe { options::encode(hash_algo, threads, mask_options) }?;
        let file = File::create(&path)
            .map_err(|e| Failure::new(TgmError::Io, format!("{}: {e}", path.display())))?;
        let mut handle = TgmStreamingEncoder {
            path,
            encoder: None,
        };
        match StreamingEncoder::new(BufWriter::new(file), &metadata, &opts) {
            Ok(enc) => handle.encoder = Some(enc),
            Err(e) => {
                let _ = std::fs::remove_file(&handle.path);
                return Err(handle.context(e));
            }
        }
        *out = args::into_handle(handle);
        Ok(())
    })
}

/// Writes per-object metadata (a JSON object) for the next object.
///
/// # Safety
/// `enc` is NULL or live; `metadata_json` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_write_preceder(
    enc: *mut TgmStreamingEncoder,
    metadata_json: *const c_char,
) -> TgmError {
    status("tgm_streaming_encoder_write_preceder", || {
        let h = args::handle_mut(enc, "streaming encoder")?;
        // SAFETY: caller's contract.
        let entry = json::preceder(unsafe { args::text(metadata_json, "metadata_json") }?)?;
        h.encoder()?.write_preceder(entry).map_err(|e| {
            // Preceders out of order break the message's frame sequence:
            // the reference's code for that is a framing error.
            let mut f = h.context(e);
            if f.code == TgmError::InvalidArg {
                f.code = TgmError::Framing;
            }
            f
        })
    })
}

unsafe fn write(
    name: &str,
    enc: *mut TgmStreamingEncoder,
    descriptor_json: *const c_char,
    data: *const u8,
    data_len: usize,
    pre_encoded: bool,
) -> TgmError {
    status(name, || {
        let h = args::handle_mut(enc, "streaming encoder")?;
        // SAFETY: caller's contract.
        let d = json::descriptor_text(unsafe { args::text(descriptor_json, "descriptor_json") }?)?;
        // SAFETY: caller's contract.
        let data = unsafe { args::bytes(data, data_len, "data") }?;
        let e = h.encoder()?;
        let written = if pre_encoded {
            e.write_object_pre_encoded(&d, data)
        } else {
            e.write_object(&d, data)
        };
        written.map_err(|e| h.context(e))
    })
}

/// Encodes and writes one object described by `descriptor_json`.
///
/// # Safety
/// `enc` NULL or live; `descriptor_json` NULL or NUL-terminated; `data`
/// valid for `data_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_write(
    enc: *mut TgmStreamingEncoder,
    descriptor_json: *const c_char,
    data: *const u8,
    data_len: usize,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        write(
            "tgm_streaming_encoder_write",
            enc,
            descriptor_json,
            data,
            data_len,
            false,
        )
    }
}

/// Writes one object whose payload already went through its pipeline.
///
/// # Safety
/// As [`tgm_streaming_encoder_write`].
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_write_pre_encoded(
    enc: *mut TgmStreamingEncoder,
    descriptor_json: *const c_char,
    data: *const u8,
    data_len: usize,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        write(
            "tgm_streaming_encoder_write_pre_encoded",
            enc,
            descriptor_json,
            data,
            data_len,
            true,
        )
    }
}

/// The number of objects written so far (0 once finished or for NULL).
#[no_mangle]
pub extern "C" fn tgm_streaming_encoder_count(enc: *const TgmStreamingEncoder) -> usize {
    query("tgm_streaming_encoder_count", 0, || {
        args::handle(enc, "streaming encoder")
            .ok()
            .and_then(|h| h.encoder.as_ref().map(|e| e.num_objects()))
            .unwrap_or(0)
    })
}

/// Writes the footer and closes the file; the handle must still be freed.
/// A second call is `TGM_ERROR_INVALID_ARG`. A failure removes the file.
///
/// # Safety
/// `enc` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_finish(enc: *mut TgmStreamingEncoder) -> TgmError {
    status("tgm_streaming_encoder_finish", || {
        let h = args::handle_mut(enc, "streaming encoder")?;
        h.encoder()?;
        let e = h
            .encoder
            .take()
            .ok_or_else(|| Failure::invalid("already finished"))?;
        let done = e
            .finish()
            .and_then(|(mut w, _)| Ok(w.flush()?))
            .map_err(|e| h.context(e));
        if done.is_err() {
            let _ = std::fs::remove_file(&h.path);
        }
        done
    })
}

/// Frees the encoder; an unfinished message's file is removed. NULL is a
/// no-op.
///
/// # Safety
/// `enc` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_streaming_encoder_free(enc: *mut TgmStreamingEncoder) {
    // SAFETY: caller's contract.
    query("tgm_streaming_encoder_free", (), || unsafe {
        args::free_handle(enc)
    })
}
