//! `tgm_validate` and `tgm_validate_file`: the library validator's report
//! as JSON (`spec/files.md` §8).

use std::ffi::c_char;

use tgm::validate::{Mode, ValidateOptions};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{status, Failure, Outcome, TgmError};

unsafe fn settings(level: *const c_char, check_canonical: i32) -> Outcome<(Mode, ValidateOptions)> {
    // SAFETY: caller's contract.
    let mode = match unsafe { args::opt_text(level, "level") }? {
        None => Mode::Default,
        Some(s) => s
            .parse::<Mode>()
            .map_err(|e| Failure::invalid(e.detail().to_string()))?,
    };
    Ok((
        mode,
        ValidateOptions::default().canonical(check_canonical != 0),
    ))
}

fn json(report: &impl serde::Serialize) -> Outcome<TgmBytes> {
    serde_json::to_vec(report)
        .map(TgmBytes::from_vec)
        .map_err(|e| Failure::new(TgmError::Encoding, format!("report serialisation: {e}")))
}

/// Validates `buf` as one message at `level` (`quick`, `default`,
/// `checksum`, `full`; NULL is `default`) and writes the report as UTF-8
/// JSON (not NUL-terminated) to `out`. Problems with the message are in
/// the report; the call fails only on bad arguments.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes (NULL with 0); `level` NULL or
/// NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_validate(
    buf: *const u8,
    buf_len: usize,
    level: *const c_char,
    check_canonical: i32,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_validate", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        // SAFETY: caller's contract.
        let (mode, opts) = unsafe { settings(level, check_canonical) }?;
        *out = json(&tgm::validate::validate_message(buf, mode, &opts))?;
        Ok(())
    })
}

/// Validates every message of the file at `path` and the bytes between
/// them; the report (`file_issues`, `messages`) as JSON in `out`.
/// A file that cannot be read is `TGM_ERROR_IO`.
///
/// # Safety
/// `path`/`level` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_validate_file(
    path: *const c_char,
    level: *const c_char,
    check_canonical: i32,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_validate_file", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let path = unsafe { args::text(path, "path") }?;
        // SAFETY: caller's contract.
        let (mode, opts) = unsafe { settings(level, check_canonical) }?;
        let report = tgm::validate_file(path, mode, &opts)?;
        *out = json(&report)?;
        Ok(())
    })
}
