//! New archives written front to back (`tgm_writer_t`, `spec/remote.md`
//! §7): to a local path, or to an `s3://`, `gs://`, `az://` or
//! `http(s)://` URL, whose bytes go straight into the parts of a multipart
//! upload. The archive ends with its catalogue (`spec/files.md` §9.4) and
//! appears only when `tgm_writer_finish` succeeds; a writer freed
//! unfinished, or one whose write failed, leaves nothing at the target
//! (an upload is aborted).

use std::ffi::{c_char, CString};
use std::io::Write;

use tgm::file::{ByteSink, CataloguingWriter, Existing};
use tgm::Limits;

use crate::args;
use crate::encode::EncodeCall;
use crate::error::{query, status, Failure, Outcome, TgmError};

/// A new archive being written (`tgm_writer_t`).
pub struct TgmWriter {
    target: String,
    out: Option<CataloguingWriter<Box<dyn ByteSink>>>,
    etag: Option<CString>,
    bytes: u64,
}

impl TgmWriter {
    fn open_out(&mut self) -> Outcome<&mut CataloguingWriter<Box<dyn ByteSink>>> {
        let target = &self.target;
        self.out
            .as_mut()
            .ok_or_else(|| Failure::invalid(format!("{target}: the writer is already finished")))
    }

    /// Writes one complete message; a failed write abandons the output.
    fn write(&mut self, message: &[u8]) -> Outcome {
        let out = self.open_out()?;
        if let Err(e) = out.write_all(message) {
            self.out = None;
            return Err(io_failure(&self.target, e));
        }
        Ok(())
    }
}

fn io_failure(target: &str, e: std::io::Error) -> Failure {
    Failure::from(tgm::file::write_error(target, e))
}

/// `{"key": value, ...}` as `(key, value)` strings; a value that is not a
/// string, number or boolean is refused.
fn storage_options(json: Option<&str>) -> Outcome<Vec<(String, String)>> {
    let Some(json) = json else {
        return Ok(Vec::new());
    };
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Failure::invalid(format!("storage_options_json: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| Failure::invalid("storage_options_json: expected a JSON object"))?;
    obj.iter()
        .map(|(k, v)| {
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Bool(b) => b.to_string(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => {
                    return Err(Failure::invalid(format!(
                        "storage_options_json: {k:?} must be a string, number or boolean"
                    )))
                }
            };
            Ok((k.clone(), s))
        })
        .collect()
}

#[cfg(feature = "remote")]
fn create_sink(
    target: &str,
    options: Vec<(String, String)>,
    existing: Existing,
) -> Outcome<Box<dyn ByteSink>> {
    let opts = tgm::remote::RemoteOptions::default().with_storage_options(options);
    Ok(tgm::remote::create_sink(target, &opts, existing, None)?)
}

#[cfg(not(feature = "remote"))]
fn create_sink(
    target: &str,
    options: Vec<(String, String)>,
    existing: Existing,
) -> Outcome<Box<dyn ByteSink>> {
    if tgm::file::is_remote_url(target) || !options.is_empty() {
        return Err(Failure::invalid(format!(
            "{target}: this library was built without the `remote` feature"
        )));
    }
    let s = tgm::file::LocalSink::create(std::path::Path::new(target), existing)?;
    Ok(Box::new(s))
}

/// Starts a new archive at `target`: a local path, or an `s3://`,
/// `gs://`, `az://` or `http(s)://` URL whose store is configured from the
/// environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`) and then from
/// `storage_options_json` (NULL, or a JSON object of the store's keys,
/// such as `{"endpoint": "http://127.0.0.1:9000", "allow_http": true}`).
/// An existing target is refused (`TGM_ERROR_IO`, "already exists") unless
/// `overwrite`. Messages appended stream out as they come; nothing appears
/// at `target` before `tgm_writer_finish`. Free with `tgm_writer_free`.
///
/// # Safety
/// `target` is NULL or NUL-terminated; `storage_options_json` NULL or
/// NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_writer_create(
    target: *const c_char,
    storage_options_json: *const c_char,
    overwrite: bool,
    out: *mut *mut TgmWriter,
) -> TgmError {
    status("tgm_writer_create", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let target = unsafe { args::text(target, "target") }?;
        // SAFETY: caller's contract.
        let json = unsafe { args::opt_text(storage_options_json, "storage_options_json") }?;
        let existing = if overwrite {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        let sink = create_sink(target, storage_options(json)?, existing)?;
        *out = args::into_handle(TgmWriter {
            target: target.to_string(),
            out: Some(CataloguingWriter::new(sink, &Limits::default())),
            etag: None,
            bytes: 0,
        });
        Ok(())
    })
}

/// Appends `buf`, which must be exactly one complete message. A failed
/// write abandons the archive (nothing will appear at the target).
///
/// # Safety
/// `writer` is NULL or live; `buf` valid for `buf_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tgm_writer_append_raw(
    writer: *mut TgmWriter,
    buf: *const u8,
    buf_len: usize,
) -> TgmError {
    status("tgm_writer_append_raw", || {
        let w = args::handle_mut(writer, "writer")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        crate::file::one_message(buf, &w.target)?;
        w.write(buf)
    })
}

/// Encodes one message (as `tgm_encode`) and appends it.
///
/// # Safety
/// As `tgm_encode`; `writer` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn tgm_writer_append(
    writer: *mut TgmWriter,
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
) -> TgmError {
    status("tgm_writer_append", || {
        let w = args::handle_mut(writer, "writer")?;
        let call = EncodeCall::unmasked(
            metadata_json,
            data_ptrs,
            data_lens,
            num_objects,
            hash_algo,
            threads,
        );
        // SAFETY: forwarded contract.
        let msg = unsafe { call.message(false) }?;
        w.write(&msg)
    })
}

/// Ends the archive with its catalogue and makes it appear at its target
/// (a multipart upload is completed now). On failure nothing is there.
/// Afterwards `tgm_writer_etag` and `tgm_writer_bytes` say what was
/// written.
///
/// # Safety
/// `writer` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn tgm_writer_finish(writer: *mut TgmWriter) -> TgmError {
    status("tgm_writer_finish", || {
        let w = args::handle_mut(writer, "writer")?;
        let out = w.out.take().ok_or_else(|| {
            Failure::invalid(format!("{}: the writer is already finished", w.target))
        })?;
        let (mut sink, _) = out.finish().map_err(|e| io_failure(&w.target, e))?;
        let written = sink.finish()?;
        w.bytes = written.bytes;
        w.etag = written.etag.and_then(|e| CString::new(e).ok());
        Ok(())
    })
}

/// The entity tag the store gave the finished object, valid until the
/// writer is freed; NULL before `tgm_writer_finish`, for a local file, or
/// when the store sent none.
#[no_mangle]
pub extern "C" fn tgm_writer_etag(writer: *const TgmWriter) -> *const c_char {
    query("tgm_writer_etag", std::ptr::null(), || {
        args::handle(writer, "writer")
            .ok()
            .and_then(|w| w.etag.as_ref())
            .map_or(std::ptr::null(), |e| e.as_ptr())
    })
}

/// Bytes of the finished archive (0 before `tgm_writer_finish`).
#[no_mangle]
pub extern "C" fn tgm_writer_bytes(writer: *const TgmWriter) -> u64 {
    query("tgm_writer_bytes", 0, || {
        args::handle(writer, "writer").map_or(0, |w| w.bytes)
    })
}

/// Frees a writer; NULL is a no-op. An unfinished archive is abandoned:
/// nothing appears at its target (an upload is aborted).
///
/// # Safety
/// `writer` is NULL or came from `tgm_writer_create` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_writer_free(writer: *mut TgmWriter) {
    // SAFETY: caller's contract.
    query("tgm_writer_free", (), || unsafe {
        args::free_handle(writer)
    })
}
