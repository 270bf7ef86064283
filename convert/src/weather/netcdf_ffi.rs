//! The few netCDF-C calls the `netcdf` crate does not wrap: element types
//! for `char` and `string` variables, freeing the strings netCDF-C
//! allocates, and the deflate/shuffle settings of a NetCDF-4 variable.
//! Every call into netCDF-C holds `netcdf_sys::libnetcdf_lock`, the lock
//! the `netcdf` crate takes, since netCDF-C is not thread-safe.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;

use netcdf::types::NcVariableType;
use netcdf::NcTypeDescriptor;

/// One element of a NetCDF `char` variable.
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct NcChar(pub u8);

// SAFETY: `NcChar` is one byte (`repr(transparent)` over `u8`), the size and
// layout of netCDF-C's `NC_CHAR` element.
#[allow(unsafe_code)]
unsafe impl NcTypeDescriptor for NcChar {
    fn type_descriptor() -> NcVariableType {
        NcVariableType::Char
    }
}

/// One element of a NetCDF-4 `string` variable as written: a pointer to a
/// NUL-terminated string owned by the caller.
#[repr(transparent)]
#[derive(Debug)]
pub struct NcStringPtr(*const c_char);

// SAFETY: `NcStringPtr` is one pointer (`repr(transparent)`), the layout of
// netCDF-C's `NC_STRING` element (`char *`); netCDF-C only reads through it
// when writing.
#[allow(unsafe_code)]
unsafe impl NcTypeDescriptor for NcStringPtr {
    fn type_descriptor() -> NcVariableType {
        NcVariableType::String
    }
}

/// The element pointers of `strings`, valid while `strings` lives.
pub fn string_ptrs(strings: &[CString]) -> Vec<NcStringPtr> {
    strings.iter().map(|s| NcStringPtr(s.as_ptr())).collect()
}

/// Bytes of one `string` element as read raw: a pointer.
pub const STRING_ELEMENT: usize = std::mem::size_of::<*mut c_char>();

/// The strings netCDF-C wrote as pointers into `raw` (what
/// `get_raw_values_into` fills for a `string` variable), each passed to
/// `each` as bytes (without its NUL; a null pointer as empty), then freed,
/// whatever `each` returns. Stops at the first error of `each`.
pub fn take_strings<E>(raw: &[u8], mut each: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
    let mut ptrs: Vec<*mut c_char> = raw
        .chunks_exact(STRING_ELEMENT)
        .map(|c| usize::from_ne_bytes(c.try_into().expect("pointer width")) as *mut c_char)
        .collect();
    let mut result = Ok(());
    for &p in &ptrs {
        if p.is_null() {
            result = each(&[]);
        } else {
            // SAFETY: `raw` was filled by netCDF-C's nc_get_vars for a
            // string variable: every non-null element points to a
            // NUL-terminated string it allocated, not freed before the
            // nc_free_string below.
            #[allow(unsafe_code)]
            let s = unsafe { CStr::from_ptr(p) };
            result = each(s.to_bytes());
        }
        if result.is_err() {
            break;
        }
    }
    let _g = netcdf_sys::libnetcdf_lock.lock();
    // SAFETY: every pointer came from netCDF-C's allocation for this read
    // (null ones are skipped by nc_free_string) and none is used after.
    #[allow(unsafe_code)]
    unsafe {
        netcdf_sys::nc_free_string(ptrs.len(), ptrs.as_mut_ptr());
    }
    result
}

/// The deflate level and shuffle flag of a NetCDF-4 variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deflate {
    /// zlib level, 1–9.
    pub level: i32,
    /// Whether the shuffle filter runs before deflate.
    pub shuffle: bool,
}

/// A second, read-only netCDF-C handle on a NetCDF-4 file, to ask what the
/// `netcdf` crate does not: a variable's deflate settings. Closed on drop.
pub struct StorageHandle(c_int);

impl StorageHandle {
    /// Opens `path` read-only; `None` if netCDF-C cannot.
    pub fn open(path: &Path) -> Option<StorageHandle> {
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut id: c_int = 0;
        let _g = netcdf_sys::libnetcdf_lock.lock();
        // SAFETY: `c` is a NUL-terminated path and `id` a valid out pointer.
        #[allow(unsafe_code)]
        let rc = unsafe { netcdf_sys::nc_open(c.as_ptr(), netcdf_sys::NC_NOWRITE, &mut id) };
        (rc == netcdf_sys::NC_NOERR).then_some(StorageHandle(id))
    }

    /// The deflate settings of variable `name` in group `group` (`""` for
    /// the root, else `/a/b`); `None` without deflate or on any error.
    pub fn deflate(&self, group: &str, name: &str) -> Option<Deflate> {
        let name = CString::new(name).ok()?;
        let _g = netcdf_sys::libnetcdf_lock.lock();
        let mut ncid = self.0;
        if !group.is_empty() {
            let g = CString::new(group).ok()?;
            // SAFETY: `self.0` is an open file id, `g` NUL-terminated, `ncid`
            // a valid out pointer.
            #[allow(unsafe_code)]
            let rc = unsafe { netcdf_sys::nc_inq_grp_full_ncid(self.0, g.as_ptr(), &mut ncid) };
            if rc != netcdf_sys::NC_NOERR {
                return None;
            }
        }
        let mut varid: c_int = 0;
        let (mut shuffle, mut deflate, mut level): (c_int, c_int, c_int) = (0, 0, 0);
        // SAFETY: `ncid` is an open group id, `name` NUL-terminated, and
        // every out pointer is valid for one c_int.
        #[allow(unsafe_code)]
        let ok = unsafe {
            netcdf_sys::nc_inq_varid(ncid, name.as_ptr(), &mut varid) == netcdf_sys::NC_NOERR
                && netcdf_sys::nc_inq_var_deflate(
                    ncid,
                    varid,
                    &mut shuffle,
                    &mut deflate,
                    &mut level,
                ) == netcdf_sys::NC_NOERR
        };
        (ok && deflate != 0).then_some(Deflate {
            level,
            shuffle: shuffle != 0,
        })
    }
}

impl Drop for StorageHandle {
    fn drop(&mut self) {
        let _g = netcdf_sys::libnetcdf_lock.lock();
        // SAFETY: `self.0` was opened by nc_open and is closed only here.
        #[allow(unsafe_code)]
        unsafe {
            netcdf_sys::nc_close(self.0);
        }
    }
}
