//! Every name in a NetCDF file, checked through netCDF-C before the
//! `netcdf` crate reads the file: that crate panics on a group, dimension,
//! variable or attribute name that is not UTF-8, which a damaged header
//! holds as easily as any other byte (`spec/convert.md` "Hostile files").
//! [`check_names`] holds `netcdf_sys::libnetcdf_lock` throughout.

use std::ffi::{c_char, c_int};

use super::netcdf_ffi::{check, StorageHandle};
use super::netcdf_read::path_name;

/// The name netCDF-C writes through `inq` into a buffer of `NC_MAX_NAME`
/// bytes and a NUL, as UTF-8; `what` names it in errors.
fn name(what: &str, inq: impl FnOnce(*mut c_char) -> c_int) -> Result<String, String> {
    let mut buf = [0u8; netcdf_sys::NC_MAX_NAME as usize + 1];
    check(inq(buf.as_mut_ptr().cast()), what)?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    std::str::from_utf8(&buf[..end])
        .map(str::to_string)
        .map_err(|_| {
            format!(
                "the name of {what} is not UTF-8: {:?}",
                String::from_utf8_lossy(&buf[..end])
            )
        })
}

/// The ids netCDF-C lists through `list(count, ids)`: the count first
/// (`ids` null), then the ids into a buffer of that count.
fn ids(what: &str, list: impl Fn(*mut c_int, *mut c_int) -> c_int) -> Result<Vec<c_int>, String> {
    let mut n: c_int = 0;
    check(list(&mut n, std::ptr::null_mut()), what)?;
    let mut out = vec![0; usize::try_from(n).map_err(|_| format!("{what}: count {n}"))?];
    check(list(&mut n, out.as_mut_ptr()), what)?;
    out.truncate(usize::try_from(n).unwrap_or(0));
    Ok(out)
}

/// Checks the attribute names of variable `varid` (`NC_GLOBAL`: the
/// group's own) of group `ncid`; `owner` names it in errors.
#[allow(unsafe_code)]
fn attributes(ncid: c_int, varid: c_int, owner: &str) -> Result<(), String> {
    let mut n: c_int = 0;
    // SAFETY: `ncid`/`varid` come from netCDF-C for an open file and `n`
    // is a valid out pointer.
    let rc = unsafe { netcdf_sys::nc_inq_varnatts(ncid, varid, &mut n) };
    check(rc, &format!("{owner} attributes"))?;
    for i in 0..n {
        // SAFETY: `name` passes a buffer of NC_MAX_NAME + 1 bytes, the most
        // netCDF-C writes for a name.
        name(&format!("{owner} attribute {i}"), |buf| unsafe {
            netcdf_sys::nc_inq_attname(ncid, varid, i, buf)
        })?;
    }
    Ok(())
}

/// Checks the names in group `ncid` at path `path` (`""`: the root) and,
/// for NetCDF-4, in its sub-groups.
///
/// SAFETY (every `unsafe` below): `ncid` is a group id netCDF-C gave for
/// an open file; `ids` passes buffers as long as the counts netCDF-C gave,
/// and `name` buffers of NC_MAX_NAME + 1 bytes.
#[allow(unsafe_code)]
fn group(ncid: c_int, path: &str, netcdf4: bool) -> Result<(), String> {
    let here = if path.is_empty() { "/" } else { path };
    attributes(ncid, netcdf_sys::NC_GLOBAL, &format!("group {here}"))?;
    let dims = ids("dimensions", |n, p| unsafe {
        netcdf_sys::nc_inq_dimids(ncid, n, p, 0)
    })?;
    for d in dims {
        name(&format!("dimension {d} of group {here}"), |buf| unsafe {
            netcdf_sys::nc_inq_dimname(ncid, d, buf)
        })?;
    }
    let vars = ids("variables", |n, p| unsafe {
        netcdf_sys::nc_inq_varids(ncid, n, p)
    })?;
    for v in vars {
        let short = name(&format!("variable {v} of group {here}"), |buf| unsafe {
            netcdf_sys::nc_inq_varname(ncid, v, buf)
        })?;
        attributes(ncid, v, &format!("variable {}", path_name(path, &short)))?;
    }
    if !netcdf4 {
        return Ok(());
    }
    let subs = ids("groups", |n, p| unsafe {
        netcdf_sys::nc_inq_grps(ncid, n, p)
    })?;
    for g in subs {
        let short = name(&format!("a sub-group of {here}"), |buf| unsafe {
            netcdf_sys::nc_inq_grpname(g, buf)
        })?;
        group(g, &format!("{path}/{short}"), netcdf4)?;
    }
    Ok(())
}

/// Checks that every group, dimension, variable and attribute name of the
/// file open in `handle` is UTF-8; the error names the first that is not.
/// Sub-groups are walked for NetCDF-4 (`netcdf4`) only.
pub fn check_names(handle: &StorageHandle, netcdf4: bool) -> Result<(), String> {
    let _g = netcdf_sys::libnetcdf_lock.lock();
    group(handle.id(), "", netcdf4)
}
