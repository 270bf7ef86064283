//! The few netCDF-C calls the `netcdf` crate does not wrap: element types
//! for `char` and `string` variables, freeing the strings netCDF-C
//! allocates, the deflate/shuffle settings of a NetCDF-4 variable, and the
//! attributes and values of user-defined types.
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
    let result = ptrs.iter().try_for_each(|&p| {
        if p.is_null() {
            return each(&[]);
        }
        // SAFETY: `raw` was filled by netCDF-C's nc_get_vars for a string
        // variable: every non-null element points to a NUL-terminated
        // string it allocated, not freed before the nc_free_string below.
        #[allow(unsafe_code)]
        let s = unsafe { CStr::from_ptr(p) };
        each(s.to_bytes())
    });
    let _g = netcdf_sys::libnetcdf_lock.lock();
    // SAFETY: every pointer came from netCDF-C's allocation for this read
    // (null ones are skipped by nc_free_string) and none is used after.
    #[allow(unsafe_code)]
    unsafe {
        netcdf_sys::nc_free_string(ptrs.len(), ptrs.as_mut_ptr());
    }
    result
}

/// Bytes of one vlen element as read raw: netCDF-C's `nc_vlen_t`.
pub const VLEN_ELEMENT: usize = std::mem::size_of::<netcdf_sys::nc_vlen_t>();

/// The vlen elements netCDF-C wrote into `raw` (what `get_raw_values_into`
/// fills for a vlen variable of values of `width` bytes), each passed to
/// `each` as its values' bytes, then freed, whatever `each` returns.
/// Stops at the first error of `each`.
pub fn take_vlens<E>(
    raw: &[u8],
    width: usize,
    mut each: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut vlens: Vec<netcdf_sys::nc_vlen_t> = raw
        .chunks_exact(VLEN_ELEMENT)
        .map(|c| {
            const W: usize = std::mem::size_of::<usize>();
            let word = |i: usize| usize::from_ne_bytes(c[i..i + W].try_into().expect("word"));
            netcdf_sys::nc_vlen_t {
                len: word(0),
                p: word(W) as *mut std::ffi::c_void,
            }
        })
        .collect();
    let result = vlens
        .iter()
        .try_for_each(|v| match v.len.checked_mul(width) {
            Some(n) if !v.p.is_null() && n > 0 => {
                // SAFETY: `raw` was filled by netCDF-C's nc_get_vars for a vlen
                // variable: every non-null `p` points to the `len` values of
                // `width` bytes it allocated, not freed before the
                // nc_free_vlens below.
                #[allow(unsafe_code)]
                let s = unsafe { std::slice::from_raw_parts(v.p as *const u8, n) };
                each(s)
            }
            _ => each(&[]),
        });
    let _g = netcdf_sys::libnetcdf_lock.lock();
    // SAFETY: every element came from netCDF-C's allocation for this read
    // and none is used after.
    #[allow(unsafe_code)]
    unsafe {
        netcdf_sys::nc_free_vlens(vlens.len(), vlens.as_mut_ptr());
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

/// A second netCDF-C handle on a NetCDF-4 file, to ask and do what the
/// `netcdf` crate does not: a variable's deflate settings, attributes of
/// enum types, and the raw values of variables of user-defined types.
/// Closed on drop unless borrowed ([`StorageHandle::borrow_root`]).
pub struct StorageHandle {
    id: c_int,
    owned: bool,
}

/// An attribute of an enum type as netCDF-C holds it: the type's name, its
/// integer base type (`NC_BYTE` …) and the values' native bytes.
pub struct EnumAttr {
    pub type_name: String,
    pub base: netcdf_sys::nc_type,
    pub bytes: Vec<u8>,
}

fn c_name(s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{s:?} holds a NUL"))
}

/// `Ok` for `NC_NOERR`, else netCDF-C's message for `rc` after `what`.
pub(super) fn check(rc: c_int, what: &str) -> Result<(), String> {
    if rc == netcdf_sys::NC_NOERR {
        return Ok(());
    }
    // SAFETY: nc_strerror returns a pointer to a static NUL-terminated
    // message for every code.
    #[allow(unsafe_code)]
    let msg = unsafe { CStr::from_ptr(netcdf_sys::nc_strerror(rc)) };
    Err(format!("{what}: {}", msg.to_string_lossy()))
}

impl StorageHandle {
    /// Opens `path` read-only, or netCDF-C's reason it cannot.
    pub fn read_only(path: &Path) -> Result<StorageHandle, String> {
        Self::open_mode(path, netcdf_sys::NC_NOWRITE)
    }

    /// The netCDF-C id of the file (its root group).
    pub(super) fn id(&self) -> c_int {
        self.id
    }

    /// The root group of `file`, open in the `netcdf` crate, which keeps
    /// its netCDF-C id private but prints it in a group's `Debug` form
    /// (`Group { ncid: N, .. }`); any other form is an error. The handle
    /// must be dropped before `file` is closed.
    pub fn borrow_root(file: &netcdf::FileMut) -> Result<StorageHandle, String> {
        let root = file.root().ok_or("not a NetCDF-4 file")?;
        let text = format!("{root:?}");
        let id = text
            .strip_prefix("Group { ncid: ")
            .and_then(|t| t.split([',', ' ']).next())
            .and_then(|n| n.parse::<c_int>().ok())
            .ok_or_else(|| format!("no netCDF-C id in {text:?}"))?;
        Ok(StorageHandle { id, owned: false })
    }

    fn open_mode(path: &Path, mode: c_int) -> Result<StorageHandle, String> {
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| "a NUL in the path")?;
        let mut id: c_int = 0;
        let _g = netcdf_sys::libnetcdf_lock.lock();
        // SAFETY: `c` is a NUL-terminated path and `id` a valid out pointer.
        #[allow(unsafe_code)]
        let rc = unsafe { netcdf_sys::nc_open(c.as_ptr(), mode, &mut id) };
        check(rc, "open")?;
        Ok(StorageHandle { id, owned: true })
    }

    /// The group id of `group` (`""` for the root, else `/a/b`) and the
    /// variable id of `var` (`NC_GLOBAL` for `None`). The caller holds the
    /// netCDF-C lock.
    fn ids(&self, group: &str, var: Option<&str>) -> Result<(c_int, c_int), String> {
        let mut ncid = self.id;
        if !group.is_empty() {
            let g = c_name(group)?;
            // SAFETY: `self.id` is an open file id, `g` NUL-terminated, `ncid`
            // a valid out pointer.
            #[allow(unsafe_code)]
            let rc = unsafe { netcdf_sys::nc_inq_grp_full_ncid(self.id, g.as_ptr(), &mut ncid) };
            check(rc, &format!("group {group}"))?;
        }
        let Some(var) = var else {
            return Ok((ncid, netcdf_sys::NC_GLOBAL));
        };
        let name = c_name(var)?;
        let mut varid: c_int = 0;
        // SAFETY: `ncid` is an open group id, `name` NUL-terminated, `varid`
        // a valid out pointer.
        #[allow(unsafe_code)]
        let rc = unsafe { netcdf_sys::nc_inq_varid(ncid, name.as_ptr(), &mut varid) };
        check(rc, &format!("variable {var}"))?;
        Ok((ncid, varid))
    }

    /// The deflate settings of variable `name` in group `group` (`""` for
    /// the root, else `/a/b`); `None` without deflate or on any error.
    pub fn deflate(&self, group: &str, name: &str) -> Option<Deflate> {
        let _g = netcdf_sys::libnetcdf_lock.lock();
        let (ncid, varid) = self.ids(group, Some(name)).ok()?;
        let (mut shuffle, mut deflate, mut level): (c_int, c_int, c_int) = (0, 0, 0);
        // SAFETY: `ncid`/`varid` name an open variable and every out
        // pointer is valid for one c_int.
        #[allow(unsafe_code)]
        let rc = unsafe {
            netcdf_sys::nc_inq_var_deflate(ncid, varid, &mut shuffle, &mut deflate, &mut level)
        };
        (rc == netcdf_sys::NC_NOERR && deflate != 0).then_some(Deflate {
            level,
            shuffle: shuffle != 0,
        })
    }

    /// Attribute `attr` of `var` (global for `None`) in `group`, which must
    /// be of an enum type, refusing one of more than `max_bytes`; `Err`
    /// names the type class of any other.
    pub fn enum_attr(
        &self,
        group: &str,
        var: Option<&str>,
        attr: &str,
        max_bytes: u64,
    ) -> Result<EnumAttr, String> {
        let _g = netcdf_sys::libnetcdf_lock.lock();
        let (ncid, varid) = self.ids(group, var)?;
        let name = c_name(attr)?;
        let (mut xtype, mut len) = (0, 0usize);
        // SAFETY: `ncid`/`varid` are open ids, `name` NUL-terminated, the
        // out pointers valid.
        #[allow(unsafe_code)]
        let rc =
            unsafe { netcdf_sys::nc_inq_att(ncid, varid, name.as_ptr(), &mut xtype, &mut len) };
        check(rc, "inquire")?;
        let UserType {
            name: type_name,
            size,
            base,
            class,
        } = user_type(ncid, xtype)?;
        let kind = match class {
            netcdf_sys::NC_ENUM => "enum",
            netcdf_sys::NC_COMPOUND => "compound",
            netcdf_sys::NC_OPAQUE => "opaque",
            netcdf_sys::NC_VLEN => "vlen",
            _ => "unknown",
        };
        if kind != "enum" {
            return Err(format!(
                "attributes of {kind} type {type_name} are not kept"
            ));
        }
        let bytes = (len as u64)
            .checked_mul(size as u64)
            .filter(|&b| b <= max_bytes && size <= 8)
            .ok_or_else(|| format!("{len} values of {size} bytes exceed {max_bytes} bytes"))?;
        let mut buf = vec![0u8; bytes as usize];
        // SAFETY: netCDF-C writes `len` values of the enum's `size` bytes,
        // exactly `buf.len()`.
        #[allow(unsafe_code)]
        let rc =
            unsafe { netcdf_sys::nc_get_att(ncid, varid, name.as_ptr(), buf.as_mut_ptr().cast()) };
        check(rc, "read")?;
        Ok(EnumAttr {
            type_name,
            base,
            bytes: buf,
        })
    }

    /// The id of type `name` as seen from `group`.
    fn type_id(&self, ncid: c_int, name: &str) -> Result<netcdf_sys::nc_type, String> {
        let c = c_name(name)?;
        let mut id = 0;
        // SAFETY: `ncid` is an open group id, `c` NUL-terminated, `id` valid.
        #[allow(unsafe_code)]
        let rc = unsafe { netcdf_sys::nc_inq_typeid(ncid, c.as_ptr(), &mut id) };
        check(rc, &format!("type {name}"))?;
        Ok(id)
    }

    /// Writes attribute `attr` of `var` (global for `None`) in `group`:
    /// `len` values of type `type_name` (a user-defined type) or of the
    /// basic type `basic`, from `data`, which must hold `len` values of
    /// that type's size (pointers for `NC_STRING`).
    pub fn put_attr(
        &self,
        group: &str,
        var: Option<&str>,
        attr: &str,
        ty: AttrType<'_>,
        len: usize,
        data: &[u8],
    ) -> Result<(), String> {
        let _g = netcdf_sys::libnetcdf_lock.lock();
        let (ncid, varid) = self.ids(group, var)?;
        let (xtype, width) = match ty {
            AttrType::Basic(x, w) => (x, w),
            AttrType::User(n, w) => {
                let id = self.type_id(ncid, n)?;
                // The type the name resolves to from this group must be the
                // enum the values were encoded for: netCDF-C reads
                // `len` × its size bytes from `data`.
                let t = user_type(ncid, id)?;
                if t.class != netcdf_sys::NC_ENUM || t.size != w {
                    return Err(format!(
                        "attribute {attr}: type {n} as seen from group {group} is not an \
                         enum of {w}-byte values"
                    ));
                }
                (id, w)
            }
        };
        if len.checked_mul(width) != Some(data.len()) {
            return Err(format!(
                "attribute {attr}: {} bytes for {len} values",
                data.len()
            ));
        }
        let name = c_name(attr)?;
        // SAFETY: `data` holds `len` values of the type's width, checked
        // above; netCDF-C only reads it.
        #[allow(unsafe_code)]
        let rc = unsafe {
            netcdf_sys::nc_put_att(ncid, varid, name.as_ptr(), xtype, len, data.as_ptr().cast())
        };
        check(rc, &format!("attribute {attr}"))
    }

    /// Writes the slice `start`/`count` of variable `var` of `group` from
    /// `data`, which must hold the slice's elements of `width` bytes.
    pub fn put_slice(
        &self,
        group: &str,
        var: &str,
        start: &[usize],
        count: &[usize],
        width: usize,
        data: &[u8],
    ) -> Result<(), String> {
        let _g = netcdf_sys::libnetcdf_lock.lock();
        let (ncid, varid) = self.ids(group, Some(var))?;
        let mut ndims: c_int = 0;
        // SAFETY: `ncid`/`varid` name an open variable; `ndims` is valid.
        #[allow(unsafe_code)]
        let rc = unsafe { netcdf_sys::nc_inq_varndims(ncid, varid, &mut ndims) };
        check(rc, &format!("variable {var}"))?;
        let n = count.iter().try_fold(width, |a, &c| a.checked_mul(c));
        if start.len() != count.len() || ndims as usize != count.len() || n != Some(data.len()) {
            return Err(format!(
                "variable {var}: {} bytes for a slice {count:?}",
                data.len()
            ));
        }
        // SAFETY: `start`/`count` hold one entry per dimension and `data`
        // the slice's elements, checked above; netCDF-C only reads them.
        #[allow(unsafe_code)]
        let rc = unsafe {
            netcdf_sys::nc_put_vara(
                ncid,
                varid,
                start.as_ptr(),
                count.as_ptr(),
                data.as_ptr().cast(),
            )
        };
        check(rc, &format!("variable {var}"))
    }
}

/// The type of an attribute written by [`StorageHandle::put_attr`]: a
/// basic `nc_type` or a user-defined type's name, with the bytes of one
/// value.
#[derive(Debug, Clone, Copy)]
pub enum AttrType<'a> {
    Basic(netcdf_sys::nc_type, usize),
    User(&'a str, usize),
}

impl Drop for StorageHandle {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let _g = netcdf_sys::libnetcdf_lock.lock();
        // SAFETY: `self.id` was opened by nc_open (owned) and is closed
        // only here.
        #[allow(unsafe_code)]
        unsafe {
            netcdf_sys::nc_close(self.id);
        }
    }
}

/// What netCDF-C says of user-defined type `xtype` as seen from `ncid`.
struct UserType {
    name: String,
    size: usize,
    base: netcdf_sys::nc_type,
    class: c_int,
}

fn user_type(ncid: c_int, xtype: netcdf_sys::nc_type) -> Result<UserType, String> {
    let mut tname = [0u8; netcdf_sys::NC_MAX_NAME as usize + 1];
    let (mut size, mut base, mut nfields, mut class) = (0usize, 0, 0usize, 0);
    // SAFETY: `tname` holds NC_MAX_NAME + 1 bytes, the most netCDF-C
    // writes for a name; the other out pointers are valid.
    #[allow(unsafe_code)]
    let rc = unsafe {
        netcdf_sys::nc_inq_user_type(
            ncid,
            xtype,
            tname.as_mut_ptr().cast(),
            &mut size,
            &mut base,
            &mut nfields,
            &mut class,
        )
    };
    check(rc, "its type")?;
    let name = CStr::from_bytes_until_nul(&tname)
        .map_err(|_| "an unterminated type name")?
        .to_string_lossy()
        .into_owned();
    Ok(UserType {
        name,
        size,
        base,
        class,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attribute's values encoded for a 1-byte enum are refused when the
    /// name resolves, from the attribute's group, to an enum of wider
    /// values: netCDF-C would read past the end of the buffer.
    #[test]
    fn an_attribute_of_an_enum_of_another_width_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (cdl, nc) = (dir.path().join("e.cdl"), dir.path().join("e.nc"));
        std::fs::write(
            &cdl,
            "netcdf e { group: y { types: int64 enum E { a = 0, b = 1 } ; \
             variables: int v ; } }",
        )
        .unwrap();
        let made = std::process::Command::new("ncgen")
            .args(["-4", "-o"])
            .arg(&nc)
            .arg(&cdl)
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: ncgen (netcdf-bin) is not installed");
            return;
        }
        let h = StorageHandle::open_mode(&nc, netcdf_sys::NC_WRITE).unwrap();
        let narrow = h.put_attr("/y", Some("v"), "e", AttrType::User("E", 1), 2, &[0, 1]);
        let err = narrow.unwrap_err();
        assert!(err.contains("not an enum of 1-byte values"), "{err}");
        let wide: Vec<u8> = [0i64, 1].iter().flat_map(|v| v.to_ne_bytes()).collect();
        h.put_attr("/y", Some("v"), "e", AttrType::User("E", 8), 2, &wide)
            .unwrap();
    }
}
