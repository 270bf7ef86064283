//! Encoding: `tgm_encode`, `tgm_encode_with_options`,
//! `tgm_encode_pre_encoded`, and the helpers `tgm_compute_hash` and
//! `tgm_simple_packing_compute_params` (`spec/format.md` §11).

use std::ffi::c_char;

use tgm::{ByteOrder, ObjectDescriptor};

use crate::args;
use crate::bytes::TgmBytes;
use crate::error::{status, Failure, Outcome, TgmError};
use crate::json;
use crate::options::{self, TgmEncodeMaskOptions};

/// The C arguments of an encode call: metadata JSON, `num_objects`
/// buffers, hash algorithm, thread budget and mask options.
#[derive(Clone, Copy)]
pub(crate) struct EncodeCall {
    pub metadata_json: *const c_char,
    pub data_ptrs: *const *const u8,
    pub data_lens: *const usize,
    pub num_objects: usize,
    pub hash_algo: *const c_char,
    pub threads: u32,
    pub masks: *const TgmEncodeMaskOptions,
}

impl EncodeCall {
    /// The arguments of a call without mask options.
    pub(crate) fn unmasked(
        metadata_json: *const c_char,
        data_ptrs: *const *const u8,
        data_lens: *const usize,
        num_objects: usize,
        hash_algo: *const c_char,
        threads: u32,
    ) -> Self {
        EncodeCall {
            metadata_json,
            data_ptrs,
            data_lens,
            num_objects,
            hash_algo,
            threads,
            masks: std::ptr::null(),
        }
    }

    /// Encodes the message: the buffers hold raw elements, or with
    /// `pre_encoded` payloads already through their pipelines.
    ///
    /// # Safety
    /// The pointers satisfy the `tgm_encode` contract.
    pub(crate) unsafe fn message(self, pre_encoded: bool) -> Outcome<Vec<u8>> {
        // SAFETY: caller's contract.
        let text = unsafe { args::text(self.metadata_json, "metadata_json") }?;
        let (metadata, descriptors) = json::encode_metadata(text)?;
        let n = self.num_objects;
        if descriptors.len() != n {
            return Err(Failure::invalid(format!(
                "metadata_json has {} descriptors but num_objects is {n}",
                descriptors.len()
            )));
        }
        // SAFETY: caller's contract.
        let data = unsafe { args::buffers(self.data_ptrs, self.data_lens, n) }?;
        // SAFETY: caller's contract.
        let opts = unsafe { options::encode(self.hash_algo, self.threads, self.masks) }?;
        let objects: Vec<(&ObjectDescriptor, &[u8])> = descriptors.iter().zip(data).collect();
        let encoded = if pre_encoded {
            tgm::encode_pre_encoded(&metadata, &objects, &opts)
        } else {
            tgm::encode(&metadata, &objects, &opts)
        };
        Ok(encoded?)
    }

    /// [`Self::message`] into `out` for export `name`.
    ///
    /// # Safety
    /// As [`Self::message`]; `out` is NULL or writable.
    unsafe fn into(self, name: &str, pre_encoded: bool, out: *mut TgmBytes) -> TgmError {
        status(name, || {
            let out = args::out(out, "out")?;
            // SAFETY: caller's contract.
            *out = TgmBytes::from_vec(unsafe { self.message(pre_encoded) }?);
            Ok(())
        })
    }
}

/// Encodes one message from `metadata_json` (`descriptors`, optional
/// `base`, `_extra_` or its alias `extra`, free-form keys joining
/// `_extra_`) and `num_objects` raw buffers in their descriptors' byte
/// order. `hash_algo` is `"xxh3"` or NULL (no digests). NaN and ±Inf are
/// refused. `TGM_ERROR_METADATA` when a key is given both at top level and
/// in `_extra_` (the reference lets `_extra_` win), when both `_extra_`
/// and `extra` are given, or when `_reserved_` is given anywhere
/// (`spec/format.md` §7.2). Free `out` with `tgm_bytes_free`.
///
/// # Safety
/// Strings are NULL or NUL-terminated; `data_ptrs`/`data_lens` hold
/// `num_objects` entries, each pointer valid for its length; `out` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_encode(
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
    out: *mut TgmBytes,
) -> TgmError {
    // SAFETY: forwarded contract.
    unsafe {
        tgm_encode_with_options(
            metadata_json,
            data_ptrs,
            data_lens,
            num_objects,
            hash_algo,
            threads,
            std::ptr::null(),
            out,
        )
    }
}

/// [`tgm_encode`] with NaN/Inf mask options (NULL: refuse them).
///
/// # Safety
/// As [`tgm_encode`]; `mask_options` is NULL or valid.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tgm_encode_with_options(
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
    mask_options: *const TgmEncodeMaskOptions,
    out: *mut TgmBytes,
) -> TgmError {
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
    unsafe { call.into("tgm_encode", false, out) }
}

/// Encodes one message from payloads that already went through their
/// descriptors' pipelines (codec parameters must be in the descriptors);
/// the bytes are written as given, digests recomputed.
///
/// # Safety
/// As [`tgm_encode`].
#[no_mangle]
pub unsafe extern "C" fn tgm_encode_pre_encoded(
    metadata_json: *const c_char,
    data_ptrs: *const *const u8,
    data_lens: *const usize,
    num_objects: usize,
    hash_algo: *const c_char,
    threads: u32,
    out: *mut TgmBytes,
) -> TgmError {
    let call = EncodeCall::unmasked(
        metadata_json,
        data_ptrs,
        data_lens,
        num_objects,
        hash_algo,
        threads,
    );
    // SAFETY: forwarded contract.
    unsafe { call.into("tgm_encode_pre_encoded", true, out) }
}

/// The digest of `data` as 16 lowercase hex characters (not
/// NUL-terminated) in `out`; `algo` is `"xxh3"` (NULL means xxh3).
///
/// # Safety
/// `data` is valid for `data_len` bytes; `algo` NULL or NUL-terminated;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_compute_hash(
    data: *const u8,
    data_len: usize,
    algo: *const c_char,
    out: *mut TgmBytes,
) -> TgmError {
    status("tgm_compute_hash", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let data = unsafe { args::bytes(data, data_len, "data") }?;
        // SAFETY: caller's contract.
        match unsafe { args::opt_text(algo, "algo") }? {
            None | Some("xxh3") => {}
            Some(other) => {
                return Err(Failure::invalid(format!(
                    "unknown hash algorithm {other:?} (xxh3)"
                )))
            }
        }
        *out = TgmBytes::from_vec(tgm::hash::to_hex(tgm::hash::xxh3(data)).into_bytes());
        Ok(())
    })
}

/// The simple_packing reference value and binary scale factor for
/// `num_values` doubles at `bits_per_value` bits and decimal scale
/// factor `decimal_scale_factor` (`spec/pipeline.md`, simple_packing).
/// NaN or ±Inf among the values is `TGM_ERROR_ENCODING`.
///
/// # Safety
/// `values` is valid for `num_values` doubles; the out-pointers are NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_simple_packing_compute_params(
    values: *const f64,
    num_values: usize,
    bits_per_value: u32,
    decimal_scale_factor: i32,
    out_reference_value: *mut f64,
    out_binary_scale_factor: *mut i32,
) -> TgmError {
    status("tgm_simple_packing_compute_params", || {
        let reference = args::out(out_reference_value, "out_reference_value")?;
        let scale = args::out(out_binary_scale_factor, "out_binary_scale_factor")?;
        // SAFETY: caller's contract.
        let values = unsafe { args::array(values, num_values, "values") }?;
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let p = tgm::pipeline::compute_packing_params(
            &raw,
            ByteOrder::native(),
            bits_per_value,
            decimal_scale_factor,
        )
        .map_err(|e| Failure::new(TgmError::Encoding, e.to_string()))?;
        *reference = p.reference_value;
        *scale = p.binary_scale_factor;
        Ok(())
    })
}
