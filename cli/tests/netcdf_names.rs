//! NetCDF files whose names are not UTF-8: `tgm convert-netcdf` refuses
//! each with an error naming the file and the name, never a panic
//! (`spec/convert.md` "Hostile files"). The files are hand-built NetCDF-3
//! classic headers that netCDF-C opens as they are.
//! Compiled only with the `netcdf` feature (`.ci/weather.sh`).
#![cfg(feature = "netcdf")]

mod common;

use common::tgm_in;

/// A NetCDF-3 name: its length, its bytes, padded to 4.
fn name(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as u32).to_be_bytes());
    b.extend_from_slice(s);
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
}

/// One `char` attribute list holding attribute `attr` = `"x"`.
fn one_attribute(b: &mut Vec<u8>, attr: &[u8]) {
    b.extend_from_slice(&12u32.to_be_bytes()); // NC_ATTRIBUTE
    b.extend_from_slice(&1u32.to_be_bytes());
    name(b, attr);
    b.extend_from_slice(&2u32.to_be_bytes()); // NC_CHAR
    b.extend_from_slice(&1u32.to_be_bytes());
    b.extend_from_slice(b"x\0\0\0");
}

/// A classic file: dimension `dim` of 2, global attribute `global`, and a
/// float variable `var` over it with attribute `attr` and values 1, 2.
fn classic(dim: &[u8], global: &[u8], var: &[u8], attr: &[u8]) -> Vec<u8> {
    let mut b = b"CDF\x01".to_vec();
    b.extend_from_slice(&0u32.to_be_bytes()); // numrecs
    b.extend_from_slice(&10u32.to_be_bytes()); // NC_DIMENSION
    b.extend_from_slice(&1u32.to_be_bytes());
    name(&mut b, dim);
    b.extend_from_slice(&2u32.to_be_bytes());
    one_attribute(&mut b, global);
    b.extend_from_slice(&11u32.to_be_bytes()); // NC_VARIABLE
    b.extend_from_slice(&1u32.to_be_bytes());
    name(&mut b, var);
    b.extend_from_slice(&1u32.to_be_bytes()); // one dimension: id 0
    b.extend_from_slice(&0u32.to_be_bytes());
    one_attribute(&mut b, attr);
    b.extend_from_slice(&5u32.to_be_bytes()); // NC_FLOAT
    b.extend_from_slice(&8u32.to_be_bytes()); // vsize
    let begin = b.len() as u32 + 4;
    b.extend_from_slice(&begin.to_be_bytes());
    b.extend_from_slice(&1f32.to_be_bytes());
    b.extend_from_slice(&2f32.to_be_bytes());
    b
}

#[test]
fn names_that_are_not_utf8_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ok = classic(b"x", b"title", b"t", b"units");
    std::fs::write(d.join("ok.nc"), &ok).unwrap();
    let run = tgm_in(d, &["convert-netcdf", "ok.nc", "-o", "ok.tgm"]);
    assert!(run.ok, "{}", run.err);
    let bad = b"b\xffd";
    let cases = [
        (
            "dim.nc",
            classic(bad, b"title", b"t", b"units"),
            "dimension 0 of group /",
        ),
        (
            "global.nc",
            classic(b"x", bad, b"t", b"units"),
            "group / attribute 0",
        ),
        (
            "var.nc",
            classic(b"x", b"title", bad, b"units"),
            "variable 0 of group /",
        ),
        (
            "attr.nc",
            classic(b"x", b"title", b"t", bad),
            "variable t attribute 0",
        ),
    ];
    for (file, bytes, what) in cases {
        std::fs::write(d.join(file), &bytes).unwrap();
        let run = tgm_in(d, &["convert-netcdf", file, "-o", "out.tgm"]);
        assert_eq!(run.code, 1, "{file}: {}", run.err);
        let want = format!("the name of {what} is not UTF-8: \"b\u{fffd}d\"");
        assert!(
            run.err.contains(file) && run.err.contains(&want),
            "{file}: {}",
            run.err
        );
        assert!(!d.join("out.tgm").exists(), "{file}: output written");
    }
}
