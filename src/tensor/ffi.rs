//! DLPack exchange through the C ABI (`DLManagedTensorVersioned`, DLPack 1.x).
//! The only `unsafe` of the tensor layer. See `spec/tensor-model.md` §6.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::Arc;

use super::dlpack::DLDataType;
use super::view::{gather, StridedView};
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};

/// `kDLCPU`.
pub const DL_CPU: i32 = 1;
/// The tensor must not be written.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// The data was copied for the exchange.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 2;

/// `DLDevice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct DLDevice {
    /// Device type (`kDLCPU` = 1).
    pub device_type: i32,
    /// Device ordinal.
    pub device_id: i32,
}

/// `DLTensor`.
#[derive(Debug)]
#[repr(C)]
pub struct DLTensor {
    /// Base pointer of the data.
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or null for row-major.
    pub strides: *mut i64,
    /// Offset of the first element from `data`, in bytes.
    pub byte_offset: u64,
}

/// `DLPackVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct DLPackVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned`.
#[derive(Debug)]
#[repr(C)]
pub struct DLManagedTensorVersioned {
    /// ABI version.
    pub version: DLPackVersion,
    /// Producer's context.
    pub manager_ctx: *mut c_void,
    /// Called exactly once by the consumer when done.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// Flags (`DLPACK_FLAG_BITMASK_*`).
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

enum Storage {
    Owned(#[allow(dead_code)] Vec<u8>),
    Shared(#[allow(dead_code)] Arc<dyn AsRef<[u8]> + Send + Sync>),
}

struct Context {
    _storage: Storage,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_exported(p: *mut DLManagedTensorVersioned) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` and its context were created by `make` with Box::into_raw
    // and the DLPack contract calls the deleter exactly once.
    let managed = unsafe { Box::from_raw(p) };
    drop(unsafe { Box::from_raw(managed.manager_ctx as *mut Context) });
}

fn make(
    d: &ObjectDescriptor,
    data_ptr: *mut u8,
    len: usize,
    storage: Storage,
    flags: u64,
) -> Result<*mut DLManagedTensorVersioned> {
    let (dtype, shape) = DLDataType::of_descriptor(d)?;
    if dtype.size_of(&shape)? != len as u64 {
        return Err(Error::invalid_argument(
            "bytes do not match the tensor size",
        ));
    }
    let shape: Vec<i64> = shape
        .iter()
        .map(|&x| i64::try_from(x).map_err(|_| Error::invalid_argument("extent exceeds i64")))
        .collect::<Result<_>>()?;
    let ndim =
        i32::try_from(shape.len()).map_err(|_| Error::invalid_argument("too many dimensions"))?;
    let mut ctx = Box::new(Context {
        _storage: storage,
        shape,
    });
    let shape_ptr = ctx.shape.as_mut_ptr();
    let managed = Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 1 },
        manager_ctx: Box::into_raw(ctx) as *mut c_void,
        deleter: Some(delete_exported),
        flags,
        dl_tensor: DLTensor {
            data: data_ptr as *mut c_void,
            device: DLDevice {
                device_type: DL_CPU,
                device_id: 0,
            },
            ndim,
            dtype,
            shape: shape_ptr,
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        },
    });
    Ok(Box::into_raw(managed))
}

/// Exports decoded native-order bytes of an object as a DLPack tensor that
/// owns them. The consumer must call its deleter once.
pub fn export_dlpack(
    d: &ObjectDescriptor,
    mut data: Vec<u8>,
) -> Result<*mut DLManagedTensorVersioned> {
    let (ptr, len) = (data.as_mut_ptr(), data.len());
    make(
        d,
        ptr,
        len,
        Storage::Owned(data),
        DLPACK_FLAG_BITMASK_IS_COPIED,
    )
}

/// Exports a read-only, zero-copy view of `range` of `owner`'s bytes (for
/// example an object of a mapped file), keeping `owner` alive until the
/// deleter runs.
pub fn export_dlpack_shared(
    d: &ObjectDescriptor,
    owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
    range: std::ops::Range<usize>,
) -> Result<*mut DLManagedTensorVersioned> {
    let bytes = (*owner).as_ref();
    let slice = bytes
        .get(range.clone())
        .ok_or_else(|| Error::invalid_argument("range outside the owner's bytes"))?;
    let ptr = slice.as_ptr() as *mut u8;
    make(
        d,
        ptr,
        slice.len(),
        Storage::Shared(owner),
        DLPACK_FLAG_BITMASK_READ_ONLY,
    )
}

/// Takes ownership of a DLPack tensor: copies its (possibly strided) elements
/// into row-major bytes with a matching descriptor, then calls its deleter
/// exactly once, also on error.
///
/// # Safety
/// `p` must be null or a valid `DLManagedTensorVersioned` whose `data`,
/// `shape` and `strides` are valid for the extents they describe, not used by
/// the caller afterwards.
pub unsafe fn import_dlpack(
    p: *mut DLManagedTensorVersioned,
) -> Result<(ObjectDescriptor, Vec<u8>)> {
    if p.is_null() {
        return Err(Error::invalid_argument("null DLPack tensor"));
    }
    struct CallDeleter(*mut DLManagedTensorVersioned);
    impl Drop for CallDeleter {
        fn drop(&mut self) {
            // SAFETY: the producer's deleter, called once for this pointer.
            unsafe {
                if let Some(del) = (*self.0).deleter {
                    del(self.0);
                }
            }
        }
    }
    let _guard = CallDeleter(p);
    // SAFETY: `p` is valid per the function contract.
    let m = unsafe { &*p };
    if m.version.major != 1 {
        return Err(Error::invalid_argument(format!(
            "DLPack major version {} is not supported",
            m.version.major
        )));
    }
    let t = &m.dl_tensor;
    if t.device.device_type != DL_CPU {
        return Err(Error::invalid_argument(
            "only CPU DLPack tensors can be imported",
        ));
    }
    t.dtype.validate()?;
    let ndim = usize::try_from(t.ndim).map_err(|_| Error::invalid_argument("negative ndim"))?;
    if ndim > 0 && t.shape.is_null() {
        return Err(Error::invalid_argument("null shape"));
    }
    // SAFETY: shape/strides hold `ndim` values per the contract.
    let shape: &[i64] = if ndim == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }
    };
    let strides: Option<&[i64]> = if t.strides.is_null() || ndim == 0 {
        None
    } else {
        Some(unsafe { std::slice::from_raw_parts(t.strides, ndim) })
    };
    let eb = t.dtype.element_bytes() as i128;
    // Extent of memory reached, relative to data + byte_offset.
    let (mut lo, mut hi) = (0i128, 0i128);
    let mut empty = false;
    let row_major = {
        let mut s = vec![1i64; ndim];
        for i in (0..ndim.saturating_sub(1)).rev() {
            s[i] = s[i + 1].saturating_mul(shape[i + 1]);
        }
        s
    };
    for (i, &d) in shape.iter().enumerate() {
        if d < 0 {
            return Err(Error::invalid_argument("negative extent"));
        }
        if d == 0 {
            empty = true;
        }
        let s = strides.map_or(row_major[i], |s| s[i]) as i128;
        let reach = (d as i128 - 1).max(0) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let logical: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let d = t.dtype.descriptor(&logical)?;
    if empty {
        return Ok((d, Vec::new()));
    }
    if t.data.is_null() {
        return Err(Error::invalid_argument("null data"));
    }
    let span = ((hi - lo + 1) * eb) as usize;
    let start = t.byte_offset as i128 + lo * eb;
    // SAFETY: the contract guarantees every element the view reaches is
    // readable; `start`/`span` cover exactly those bytes.
    let window =
        unsafe { std::slice::from_raw_parts((t.data as *const u8).offset(start as isize), span) };
    let view = StridedView {
        data: window,
        shape,
        strides: Some(strides.unwrap_or(&row_major)),
        byte_offset: (-lo * eb) as u64,
        element_bytes: eb as usize,
    };
    let bytes = gather(&view)?;
    Ok((d, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;

    struct Counted(Vec<u8>, Arc<std::sync::atomic::AtomicUsize>);
    impl AsRef<[u8]> for Counted {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn export_import_roundtrip_frees_exactly_once() {
        let d = ObjectDescriptor::new(Dtype::Int16, vec![2, 3]);
        let data: Vec<u8> = (0..6i16).flat_map(|v| v.to_ne_bytes()).collect();
        let p = export_dlpack(&d, data.clone()).unwrap();
        let (d2, back) = unsafe { import_dlpack(p) }.unwrap();
        assert_eq!(d2.dtype, Dtype::Int16);
        assert_eq!(d2.shape, vec![2, 3]);
        assert_eq!(back, data);

        let drops = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let owner: Arc<dyn AsRef<[u8]> + Send + Sync> = Arc::new(Counted(
            [vec![9u8; 4], data.clone()].concat(),
            drops.clone(),
        ));
        let p = export_dlpack_shared(&d, owner.clone(), 4..16).unwrap();
        drop(owner);
        assert_eq!(
            drops.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "the export keeps the owner alive"
        );
        let (_, back) = unsafe { import_dlpack(p) }.unwrap();
        assert_eq!(back, data);
        assert_eq!(
            drops.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the deleter released the owner once"
        );
    }

    #[test]
    fn import_gathers_strided_views_and_rejects_bad_tensors() {
        let d = ObjectDescriptor::new(Dtype::Uint8, vec![3, 4]);
        let data: Vec<u8> = (0..12).collect();
        let p = export_dlpack(&d, data).unwrap();
        // Present it transposed: shape [4, 3], strides [1, 4].
        let mut tshape = [4i64, 3];
        let mut tstrides = [1i64, 4];
        unsafe {
            (*p).dl_tensor.shape = tshape.as_mut_ptr();
            (*p).dl_tensor.strides = tstrides.as_mut_ptr();
        }
        let (d2, back) = unsafe { import_dlpack(p) }.unwrap();
        assert_eq!(d2.shape, vec![4, 3]);
        assert_eq!(back, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        let p = export_dlpack(&d, vec![0; 12]).unwrap();
        unsafe { (*p).dl_tensor.dtype.lanes = 0 };
        assert!(unsafe { import_dlpack(p) }.is_err());
        assert!(unsafe { import_dlpack(std::ptr::null_mut()) }.is_err());
    }
}
