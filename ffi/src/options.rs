//! Option arguments: the hash algorithm name, the NaN/Inf mask option
//! structs and the decode flags, read into `EncodeOptions` and
//! `DecodeOptions`.

use std::ffi::c_char;

use tgm::pipeline::{MaskMethod, PipelineOptions};
use tgm::{DecodeOptions, EncodeOptions, Verify};

use crate::args;
use crate::error::{Failure, Outcome};

/// NaN/±Inf substitution for the `*_with_options` encode functions
/// (`TgmEncodeMaskOptions` in C; `spec/pipeline.md` on masks). A NULL
/// method name keeps the default (`roaring`); a negative
/// `small_mask_threshold_bytes` keeps the default (128), 0 disables the
/// fallback to uncompressed masks.
#[repr(C)]
pub struct TgmEncodeMaskOptions {
    /// Substitute NaN and record it in a mask instead of failing.
    pub allow_nan: bool,
    /// Substitute ±Inf and record them in masks instead of failing.
    pub allow_inf: bool,
    /// Mask codec for NaN: `none`, `rle`, `roaring`, `lz4` or `zstd`.
    pub nan_mask_method: *const c_char,
    /// Mask codec for +Inf.
    pub pos_inf_mask_method: *const c_char,
    /// Mask codec for -Inf.
    pub neg_inf_mask_method: *const c_char,
    /// Masks of at most this many bytes are stored uncompressed.
    pub small_mask_threshold_bytes: isize,
}

/// Decode-side options (`TgmDecodeMaskOptions` in C): whether NaN/±Inf
/// recorded in masks are written back (NULL options: yes).
#[repr(C)]
pub struct TgmDecodeMaskOptions {
    /// Restore the non-finite values recorded in masks.
    pub restore_non_finite: bool,
}

/// Whether to write frame digests: NULL or `"none"` no, `"xxh3"` yes.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn hashing(p: *const c_char) -> Outcome<bool> {
    // SAFETY: forwarded contract.
    match unsafe { args::opt_text(p, "hash_algo") }? {
        None | Some("none") => Ok(false),
        Some("xxh3") => Ok(true),
        Some(other) => Err(Failure::invalid(format!(
            "unknown hash algorithm {other:?} (xxh3, none or NULL)"
        ))),
    }
}

unsafe fn mask_method(p: *const c_char, what: &str, default: MaskMethod) -> Outcome<MaskMethod> {
    // SAFETY: forwarded contract.
    match unsafe { args::opt_text(p, what) }? {
        None => Ok(default),
        Some(name) => MaskMethod::from_name(name)
            .map_err(|e| Failure::invalid(format!("{what}: {}", e.detail()))),
    }
}

/// Encode options from the C arguments; `masks` NULL refuses NaN/Inf.
///
/// # Safety
/// `hash_algo` is NULL or a NUL-terminated string; `masks` is NULL or
/// points to a valid struct whose strings are NULL or NUL-terminated.
pub(crate) unsafe fn encode(
    hash_algo: *const c_char,
    threads: u32,
    masks: *const TgmEncodeMaskOptions,
) -> Outcome<EncodeOptions> {
    let mut p = PipelineOptions::default();
    p.threads = threads as usize;
    // SAFETY: caller's contract.
    if let Some(m) = unsafe { masks.as_ref() } {
        p.allow_nan = m.allow_nan;
        p.allow_inf = m.allow_inf;
        let d = p.masks;
        // SAFETY: caller's contract for the strings.
        unsafe {
            p.masks.nan = mask_method(m.nan_mask_method, "nan_mask_method", d.nan)?;
            p.masks.pos_inf = mask_method(m.pos_inf_mask_method, "pos_inf_mask_method", d.pos_inf)?;
            p.masks.neg_inf = mask_method(m.neg_inf_mask_method, "neg_inf_mask_method", d.neg_inf)?;
        }
        if m.small_mask_threshold_bytes >= 0 {
            p.masks.small_mask_threshold = m.small_mask_threshold_bytes as usize;
        }
    }
    // SAFETY: caller's contract.
    let hashing = unsafe { hashing(hash_algo) }?;
    Ok(EncodeOptions::new().hashing(hashing).pipeline(p))
}

/// Decode options from the C flags: `verify_hash` non-zero requires a
/// digest on every frame (a frame without one is `TGM_ERROR_MISSING_HASH`);
/// zero checks the digests that are present.
pub(crate) fn decode(native_byte_order: i32, threads: u32, verify_hash: i32) -> DecodeOptions {
    let verify = if verify_hash != 0 {
        Verify::Require
    } else {
        Verify::IfPresent
    };
    DecodeOptions::default()
        .native_byte_order(native_byte_order != 0)
        .threads(threads as usize)
        .verify(verify)
}

/// [`decode`] with the optional decode-side mask options.
///
/// # Safety
/// `masks` is NULL or points to a valid struct.
pub(crate) unsafe fn decode_with(
    native_byte_order: i32,
    threads: u32,
    verify_hash: i32,
    masks: *const TgmDecodeMaskOptions,
) -> DecodeOptions {
    let opts = decode(native_byte_order, threads, verify_hash);
    // SAFETY: caller's contract.
    match unsafe { masks.as_ref() } {
        Some(m) => opts.restore_non_finite(m.restore_non_finite),
        None => opts,
    }
}
