//! `tgm convert-netcdf` and `tgm to-netcdf` against netCDF-C itself.
//!
//! Test files (NetCDF-3 classic and NetCDF-4, several types, fill values,
//! scale/offset packing, an unlimited dimension) are generated at test time
//! with the `netcdf` crate; round trips are read back with it and, when
//! `ncdump` (Debian's netcdf-bin) is installed, compared with `ncdump`.
//! Compiled only with the `netcdf` feature (`.ci/weather.sh`).
#![cfg(feature = "netcdf")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use netcdf::AttributeValue;
use tgm::cbor::Value;
use tgm::{DecodeOptions, DecodedMessage, Dtype, TgmFile};

/// Held by every test: HDF5 locks the files it writes, and a `tgm` child
/// spawned by one test thread inherits the descriptors another thread has
/// open, so concurrent tests could see each other's files locked.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const FILL_T: f32 = -999.0;
const FILL_P: i16 = -32767;
const SCALE: f64 = 0.01;
const OFFSET: f64 = 273.15;
const NT: usize = 3;
const NLAT: usize = 3;
const NLON: usize = 4;

fn tgm(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 2),
        "tgm {args:?} crashed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn t2m_values() -> Vec<f32> {
    (0..NT * NLAT * NLON)
        .map(|i| {
            if i % 5 == 2 {
                FILL_T
            } else {
                250.0 + i as f32 * 0.75
            }
        })
        .collect()
}

fn packed_values() -> Vec<i16> {
    (0..NT * NLAT * NLON)
        .map(|i| {
            if i % 7 == 3 {
                FILL_P
            } else {
                (i as i16 - 10) * 123
            }
        })
        .collect()
}

/// A NetCDF file with coordinates, a float field with fill values, a
/// packed short field, an int and a byte variable; NetCDF-4 adds unsigned,
/// 64-bit and string-attribute cases.
fn make_sample(path: &Path, netcdf4: bool) {
    let opts = if netcdf4 {
        netcdf::Options::NETCDF4
    } else {
        netcdf::Options::empty()
    };
    let mut f = netcdf::create_with(path, opts).unwrap();
    f.add_unlimited_dimension("time").unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    f.add_attribute("title", "tgm NetCDF test").unwrap();
    f.add_attribute("Conventions", "CF-1.8").unwrap();
    f.add_attribute("version", 3i32).unwrap();
    f.add_attribute("weights", vec![0.5f64, 0.25]).unwrap();

    let mut v = f.add_variable::<f64>("time", &["time"]).unwrap();
    v.put_attribute("units", "hours since 2024-01-01 00:00:00")
        .unwrap();
    v.put_attribute("standard_name", "time").unwrap();
    let mut v = f.add_variable::<f32>("lat", &["lat"]).unwrap();
    v.put_attribute("units", "degrees_north").unwrap();
    v.put_attribute("standard_name", "latitude").unwrap();
    let mut v = f.add_variable::<f32>("lon", &["lon"]).unwrap();
    v.put_attribute("units", "degrees_east").unwrap();

    let mut v = f
        .add_variable::<f32>("t2m", &["time", "lat", "lon"])
        .unwrap();
    v.put_attribute("_FillValue", FILL_T).unwrap();
    v.put_attribute("units", "K").unwrap();
    v.put_attribute("standard_name", "air_temperature").unwrap();
    v.put_attribute("long_name", "2 metre temperature").unwrap();

    let mut v = f
        .add_variable::<i16>("packed", &["time", "lat", "lon"])
        .unwrap();
    v.put_attribute("_FillValue", FILL_P).unwrap();
    v.put_attribute("scale_factor", SCALE).unwrap();
    v.put_attribute("add_offset", OFFSET).unwrap();
    v.put_attribute("units", "K").unwrap();

    let mut v = f.add_variable::<i32>("counts", &["lat", "lon"]).unwrap();
    v.put_attribute("valid_range", vec![0i32, 1000]).unwrap();
    let counts: Vec<i32> = (0..12).map(|i| i * 37 - 5).collect();
    let mut v = f.add_variable::<i8>("flags", &["lat"]).unwrap();
    v.put_attribute("flag_values", vec![-1i8, 0, 1]).unwrap();

    if netcdf4 {
        let mut v = f.add_variable::<u16>("u16var", &["lon"]).unwrap();
        v.put_attribute("names", vec!["a", "bc"]).unwrap();
        let mut v = f.add_variable::<i64>("i64var", &["lat"]).unwrap();
        v.put_attribute("big", u64::MAX).unwrap();
        f.add_variable::<u8>("u8var", &["lat"]).unwrap();
    }

    f.enddef().unwrap();
    f.variable_mut("time")
        .unwrap()
        .put_values(&[0.0f64, 6.0, 12.0], 0..NT)
        .unwrap();
    f.variable_mut("lat")
        .unwrap()
        .put_values(&[50.0f32, 45.0, 40.0], ..)
        .unwrap();
    f.variable_mut("lon")
        .unwrap()
        .put_values(&[0.0f32, 10.0, 20.0, 30.0], ..)
        .unwrap();
    f.variable_mut("t2m")
        .unwrap()
        .put_values(&t2m_values(), [0..NT, 0..NLAT, 0..NLON])
        .unwrap();
    f.variable_mut("packed")
        .unwrap()
        .put_values(&packed_values(), [0..NT, 0..NLAT, 0..NLON])
        .unwrap();
    f.variable_mut("counts")
        .unwrap()
        .put_values(&counts, ..)
        .unwrap();
    f.variable_mut("flags")
        .unwrap()
        .put_values(&[-1i8, 0, 1], ..)
        .unwrap();
    if netcdf4 {
        f.variable_mut("u16var")
            .unwrap()
            .put_values(&[0u16, 1, 65535, 300], ..)
            .unwrap();
        f.variable_mut("i64var")
            .unwrap()
            .put_values(&[i64::MIN, 0, i64::MAX], ..)
            .unwrap();
        f.variable_mut("u8var")
            .unwrap()
            .put_values(&[0u8, 128, 255], ..)
            .unwrap();
    }
    f.close().unwrap();
}

fn read_tgm(path: &Path) -> Vec<DecodedMessage> {
    let f = TgmFile::open(path).unwrap();
    (0..f.num_messages())
        .map(|m| {
            let b = f.message_bytes(m).unwrap();
            tgm::Message::parse(&b)
                .unwrap()
                .decode(&DecodeOptions::default())
                .unwrap()
        })
        .collect()
}

fn f64s(data: &[u8]) -> Vec<f64> {
    data.chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn object<'a>(msg: &'a DecodedMessage, name: &str) -> (usize, &'a tgm::DecodedObject) {
    let i = msg
        .metadata
        .base
        .iter()
        .position(|b| b.get("name").and_then(Value::as_text) == Some(name))
        .unwrap_or_else(|| panic!("no object {name}"));
    (i, &msg.objects[i])
}

type Snapshot = (
    Vec<(String, usize, bool)>,
    Vec<(String, AttributeValue)>,
    Vec<(
        String,
        String,
        Vec<String>,
        Vec<(String, AttributeValue)>,
        Vec<u8>,
    )>,
);

/// Dimensions, global attributes and every variable (type, dims,
/// attributes sorted by name, raw values) of a NetCDF file.
fn snapshot(path: &Path) -> Snapshot {
    let f = netcdf::open(path).unwrap();
    let dims = f
        .dimensions()
        .map(|d| (d.name(), d.len(), d.is_unlimited()))
        .collect();
    let mut globals: Vec<_> = f
        .attributes()
        .map(|a| (a.name().to_string(), a.value().unwrap()))
        .collect();
    globals.sort_by(|a, b| a.0.cmp(&b.0));
    let vars = f
        .variables()
        .map(|v| {
            let mut attrs: Vec<_> = v
                .attributes()
                .map(|a| (a.name().to_string(), a.value().unwrap()))
                .collect();
            attrs.sort_by(|a, b| a.0.cmp(&b.0));
            (
                v.name(),
                format!("{:?}", v.vartype()),
                v.dimensions().iter().map(|d| d.name()).collect(),
                attrs,
                v.get_raw_values(..).unwrap(),
            )
        })
        .collect();
    (dims, globals, vars)
}

/// The `data:` section of `ncdump`, or None (with a note) without ncdump.
fn ncdump_data(path: &Path) -> Option<String> {
    let out = match Command::new("ncdump").arg(path).output() {
        Ok(o) => o,
        Err(_) => {
            common::skip::skip("the ncdump comparison: ncdump (netcdf-bin) is not installed");
            return None;
        }
    };
    assert!(out.status.success(), "ncdump {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    let at = text.find("\ndata:").expect("ncdump prints a data section");
    Some(text[at..].to_string())
}

fn assert_same_netcdf(original: &Path, round: &Path) {
    let (d0, g0, v0) = snapshot(original);
    let (d1, g1, v1) = snapshot(round);
    assert_eq!(d0, d1, "dimensions");
    assert_eq!(g0, g1, "global attributes");
    assert_eq!(v0.len(), v1.len(), "variable count");
    for (a, b) in v0.iter().zip(&v1) {
        assert_eq!(a.0, b.0, "variable order");
        assert_eq!(a.1, b.1, "type of {}", a.0);
        assert_eq!(a.2, b.2, "dims of {}", a.0);
        assert_eq!(a.3, b.3, "attributes of {}", a.0);
        assert_eq!(a.4, b.4, "values of {}", a.0);
    }
    if let (Some(x), Some(y)) = (ncdump_data(original), ncdump_data(round)) {
        assert_eq!(x, y, "ncdump data sections differ");
    }
    let h = Command::new("ncdump").arg("-h").arg(round).output();
    if let Ok(h) = h {
        let text = String::from_utf8_lossy(&h.stdout);
        assert!(text.contains("float t2m(time, lat, lon)"), "{text}");
        assert!(text.contains("time = UNLIMITED"), "{text}");
    }
}

fn round_trip(netcdf4: bool, extra: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("in.nc");
    make_sample(&nc, netcdf4);
    let arch = dir.path().join("a.tgm");
    let mut args = vec!["convert-netcdf", s(&nc), "-o", s(&arch)];
    args.extend_from_slice(extra);
    let (ok, err) = tgm(&args);
    assert!(ok, "convert-netcdf: {err}");
    let back = dir.path().join("back.nc");
    let (ok, err) = tgm(&["to-netcdf", s(&arch), "-o", s(&back)]);
    assert!(ok, "to-netcdf: {err}");
    assert_same_netcdf(&nc, &back);
    (dir, arch, nc)
}

#[test]
fn classic_file_converts_with_metadata_and_round_trips() {
    let _serial = serial();
    let (_dir, arch, _) = round_trip(false, &[]);
    let msgs = read_tgm(&arch);
    assert_eq!(msgs.len(), 1);
    let m = &msgs[0];
    assert_eq!(m.objects.len(), 7);
    let nc = m.metadata.extra.get("netcdf").unwrap();
    assert_eq!(nc.get("format").and_then(Value::as_text), Some("classic"));
    let attrs = nc.get("attrs").unwrap();
    assert_eq!(
        attrs.get("title").and_then(Value::as_text),
        Some("tgm NetCDF test")
    );
    assert_eq!(attrs.get("version").and_then(Value::as_i64), Some(3));

    let (i, t2m) = object(m, "t2m");
    assert_eq!(t2m.descriptor.dtype, Dtype::Float32);
    assert_eq!(
        t2m.descriptor.shape,
        vec![NT as u64, NLAT as u64, NLON as u64]
    );
    let entry = &m.metadata.base[i];
    let dims: Vec<&str> = entry["dim_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_text().unwrap())
        .collect();
    assert_eq!(dims, ["time", "lat", "lon"]);
    assert_eq!(entry["cf"].get("units").and_then(Value::as_text), Some("K"));
    assert_eq!(
        entry["cf"].get("standard_name").and_then(Value::as_text),
        Some("air_temperature")
    );
    for (got, want) in f32s(&t2m.data).iter().zip(t2m_values()) {
        if want == FILL_T {
            assert!(got.is_nan(), "fill must decode as NaN");
        } else {
            assert_eq!(*got, want);
        }
    }
    // Without --cf the packed integers are kept, packing attributes recorded.
    let (i, packed) = object(m, "packed");
    assert_eq!(packed.descriptor.dtype, Dtype::Int16);
    let nc_entry = &m.metadata.base[i]["netcdf"];
    assert_eq!(nc_entry.get("type").and_then(Value::as_text), Some("short"));
    assert_eq!(
        nc_entry
            .get("attrs")
            .unwrap()
            .get("scale_factor")
            .and_then(Value::as_f64),
        Some(SCALE)
    );
    assert!(nc_entry.get("unpacked").is_none());
    // Coordinates are objects too.
    let (_, lat) = object(m, "lat");
    assert_eq!(f32s(&lat.data), [50.0, 45.0, 40.0]);
}

#[test]
fn netcdf4_cf_unpacks_and_repacks() {
    let _serial = serial();
    let (_dir, arch, _) = round_trip(true, &["--cf"]);
    let m = &read_tgm(&arch)[0];
    assert_eq!(
        m.metadata.extra["netcdf"]
            .get("format")
            .and_then(Value::as_text),
        Some("netcdf4")
    );
    let (i, packed) = object(m, "packed");
    assert_eq!(packed.descriptor.dtype, Dtype::Float64);
    assert_eq!(
        m.metadata.base[i]["netcdf"].get("unpacked"),
        Some(&Value::Bool(true))
    );
    for (got, q) in f64s(&packed.data).iter().zip(packed_values()) {
        if q == FILL_P {
            assert!(got.is_nan());
        } else {
            assert_eq!(*got, f64::from(q) * SCALE + OFFSET);
        }
    }
    let (_, u) = object(m, "u16var");
    assert_eq!(u.descriptor.dtype, Dtype::Uint16);
    let (_, big) = object(m, "i64var");
    assert_eq!(big.descriptor.dtype, Dtype::Int64);
}

#[test]
fn split_by_variable_gives_one_message_per_variable() {
    let _serial = serial();
    let (_dir, arch, _) = round_trip(true, &["--split-by", "variable"]);
    let msgs = read_tgm(&arch);
    assert_eq!(msgs.len(), 10);
    for m in &msgs {
        assert_eq!(m.objects.len(), 1);
        // One object: its dimension names are the message's.
        assert_eq!(
            m.metadata.extra.get("dim_names"),
            m.metadata.base[0].get("dim_names")
        );
    }
}

#[test]
fn split_by_record_gives_one_message_per_time_step() {
    let _serial = serial();
    let (_dir, arch, _) = round_trip(false, &["--split-by", "record", "--cf"]);
    let msgs = read_tgm(&arch);
    assert_eq!(msgs.len(), NT);
    let per_step = NLAT * NLON;
    for (r, m) in msgs.iter().enumerate() {
        let (i, t2m) = object(m, "t2m");
        assert_eq!(t2m.descriptor.shape, vec![1, NLAT as u64, NLON as u64]);
        assert_eq!(
            m.metadata.base[i]["netcdf"]
                .get("record")
                .and_then(Value::as_u64),
            Some(r as u64)
        );
        let want = &t2m_values()[r * per_step..(r + 1) * per_step];
        for (got, w) in f32s(&t2m.data).iter().zip(want) {
            assert!(if *w == FILL_T { got.is_nan() } else { got == w });
        }
        let (_, time) = object(m, "time");
        assert_eq!(f64s(&time.data), [r as f64 * 6.0]);
    }
}

#[test]
fn record_split_needs_an_unlimited_dimension() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("fixed.nc");
    let mut f = netcdf::create(&nc).unwrap();
    f.add_dimension("x", 2).unwrap();
    f.add_variable::<f64>("v", &["x"])
        .unwrap()
        .put_values(&[1.0f64, 2.0], ..)
        .unwrap();
    f.close().unwrap();
    let out = dir.path().join("o.tgm");
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&nc),
        "-o",
        s(&out),
        "--split-by",
        "record",
    ]);
    assert!(!ok);
    assert!(
        err.contains("unlimited") && err.contains("fixed.nc"),
        "{err}"
    );
    assert!(!out.exists());

    let empty = dir.path().join("norecords.nc");
    let mut f = netcdf::create(&empty).unwrap();
    f.add_unlimited_dimension("t").unwrap();
    f.add_variable::<f64>("v", &["t"]).unwrap();
    f.close().unwrap();
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&empty),
        "-o",
        s(&out),
        "--split-by",
        "record",
    ]);
    assert!(!ok);
    assert!(
        err.contains("no records") && err.contains("norecords.nc"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn pipeline_flags_pack_float64_and_compress_the_rest() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("in.nc");
    make_sample(&nc, true);
    let arch = dir.path().join("a.tgm");
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&nc),
        "-o",
        s(&arch),
        "--cf",
        "--encoding",
        "simple_packing",
        "--bits",
        "24",
        "--compression",
        "zstd",
    ]);
    assert!(ok, "{err}");
    let f = TgmFile::open(&arch).unwrap();
    let bytes = f.message_bytes(0).unwrap();
    let msg = tgm::Message::parse(&bytes).unwrap();
    let decoded = msg.decode(&DecodeOptions::default()).unwrap();
    for o in &decoded.objects {
        let d = &o.descriptor;
        assert_eq!(d.compression(), "zstd");
        let want = if d.dtype == Dtype::Float64 {
            "simple_packing"
        } else {
            "none"
        };
        assert_eq!(d.encoding(), want, "{:?}", d.dtype);
    }
    let (_, packed) = object(&decoded, "packed");
    for (got, q) in f64s(&packed.data).iter().zip(packed_values()) {
        if q == FILL_P {
            assert!(got.is_nan());
        } else {
            let want = f64::from(q) * SCALE + OFFSET;
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
    }
}

/// convert-netcdf checks its stage flags by the library's rules, as
/// `import` does (`spec/pipeline.md` §10): the same flags are refused with
/// the same words, and nothing is written.
#[test]
fn stage_flags_are_refused_as_import_refuses_them() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("in.nc");
    make_sample(&nc, false);
    let npy = dir.path().join("a.npy");
    common::f64_npy(&npy, &[1.0, 2.0, 3.0]);
    let out = dir.path().join("out.tgm");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--bits", "12"],
            "--bits has no effect without --encoding simple_packing",
        ),
        (
            &["--compression", "lz4", "--level", "3"],
            "--level has no effect with compression \"lz4\"",
        ),
        (
            &["--compression", "zstd", "--level", "23"],
            "--level 23 is outside zstd's levels",
        ),
        (
            &["--szip-rsi", "32"],
            "--szip-rsi has no effect without --compression szip",
        ),
        (
            &["--encoding", "simple_packing", "--compression", "zfp"],
            "--compression zfp codes float64 values itself",
        ),
        (&["--filter", "bitshuffle"], "unknown filter \"bitshuffle\""),
    ];
    for (flags, message) in cases {
        for input in [&nc, &npy] {
            let command = if input == &nc {
                "convert-netcdf"
            } else {
                "import"
            };
            let mut args = vec![command, s(input), "-o", s(&out)];
            args.extend_from_slice(flags);
            let (ok, err) = tgm(&args);
            assert!(!ok, "{args:?} was accepted");
            assert!(err.contains(message), "{args:?}: {err}");
            assert!(!out.exists(), "{args:?} left an output");
        }
    }
}

#[test]
fn not_netcdf_and_truncated_files_are_refused_with_their_path() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    let text = dir.path().join("notes.nc");
    std::fs::write(&text, "just some text, not a NetCDF file\n").unwrap();
    let (ok, err) = tgm(&["convert-netcdf", s(&text), "-o", s(&out)]);
    assert!(!ok);
    assert!(
        err.contains("notes.nc") && err.contains("not a NetCDF file"),
        "{err}"
    );

    for netcdf4 in [false, true] {
        let nc = dir.path().join("full.nc");
        make_sample(&nc, netcdf4);
        let bytes = std::fs::read(&nc).unwrap();
        for cut in [bytes.len() / 2, bytes.len() - 8, 40] {
            let t = dir.path().join(format!("cut{cut}.nc"));
            std::fs::write(&t, &bytes[..cut]).unwrap();
            let (ok, err) = tgm(&["convert-netcdf", s(&t), "-o", s(&out)]);
            assert!(
                !ok,
                "truncated at {cut} of {} (netcdf4 {netcdf4}) accepted",
                bytes.len()
            );
            assert!(err.contains(&format!("cut{cut}.nc")), "{err}");
            assert!(!out.exists());
        }
        std::fs::remove_file(&nc).unwrap();
    }
}

/// A NetCDF-3 classic header declaring one float variable over `dims`.
fn classic_header(dims: &[u32]) -> Vec<u8> {
    fn name(b: &mut Vec<u8>, s: &str) {
        b.extend_from_slice(&(s.len() as u32).to_be_bytes());
        b.extend_from_slice(s.as_bytes());
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
    }
    let mut b = b"CDF\x01".to_vec();
    b.extend_from_slice(&0u32.to_be_bytes()); // numrecs
    b.extend_from_slice(&10u32.to_be_bytes()); // NC_DIMENSION
    b.extend_from_slice(&(dims.len() as u32).to_be_bytes());
    for (i, &d) in dims.iter().enumerate() {
        name(&mut b, &format!("d{i}"));
        b.extend_from_slice(&d.to_be_bytes());
    }
    b.extend_from_slice(&[0; 8]); // no global attributes
    b.extend_from_slice(&11u32.to_be_bytes()); // NC_VARIABLE
    b.extend_from_slice(&1u32.to_be_bytes());
    name(&mut b, "huge");
    b.extend_from_slice(&(dims.len() as u32).to_be_bytes());
    for i in 0..dims.len() as u32 {
        b.extend_from_slice(&i.to_be_bytes());
    }
    b.extend_from_slice(&[0; 8]); // no variable attributes
    b.extend_from_slice(&5u32.to_be_bytes()); // NC_FLOAT
    b.extend_from_slice(&u32::MAX.to_be_bytes()); // vsize
    let begin = b.len() as u32 + 4;
    b.extend_from_slice(&begin.to_be_bytes());
    b.extend_from_slice(&[0; 64]);
    b
}

#[test]
fn oversized_variables_are_refused_before_allocation() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tgm");
    // 40 GB declared in a 200-byte file; then a product past u64.
    for (label, dims) in [
        ("big", vec![100_000u32, 100_000]),
        ("overflow", vec![0x7fff_ffff, 0x7fff_ffff, 0x7fff_ffff]),
    ] {
        let p = dir.path().join(format!("{label}.nc"));
        std::fs::write(&p, classic_header(&dims)).unwrap();
        let (ok, err) = tgm(&["convert-netcdf", s(&p), "-o", s(&out)]);
        assert!(!ok, "{label} accepted");
        assert!(err.contains(&format!("{label}.nc")), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn to_netcdf_refuses_archives_without_netcdf_metadata() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("plain.tgm");
    let d = tgm::ObjectDescriptor::new(Dtype::Float64, vec![2]);
    let data: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let bytes = tgm::encode(
        &tgm::GlobalMetadata::with_base(vec![tgm::Map::new()]),
        &[(&d, &data[..])],
        &tgm::EncodeOptions::new(),
    )
    .unwrap();
    std::fs::write(&arch, bytes).unwrap();
    let out = dir.path().join("o.nc");
    let (ok, err) = tgm(&["to-netcdf", s(&arch), "-o", s(&out)]);
    assert!(!ok);
    assert!(err.contains("plain.tgm") && err.contains("netcdf"), "{err}");
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "a partial file was left behind");
}

#[test]
fn dash_and_non_archives_leave_no_output() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("notatgm.txt");
    std::fs::write(&junk, b"plain text, not an archive").unwrap();
    let back = dir.path().join("n.nc");
    let (ok, err) = tgm(&["to-netcdf", s(&junk), "-o", s(&back)]);
    assert!(!ok && err.contains("notatgm.txt"), "{err}");
    assert!(!back.exists());
    // A NetCDF file on stdin, converted to stdout, then back to stdout.
    let nc = dir.path().join("t.nc");
    make_sample(&nc, false);
    let pipe = |args: &[&str], input: Vec<u8>| {
        let (r, out) = common::tgm_stdin(dir.path(), args, &input);
        assert!(r.ok, "{}", r.err);
        out
    };
    let arch = pipe(
        &["convert-netcdf", "-", "-o", "-"],
        std::fs::read(&nc).unwrap(),
    );
    let via_file = dir.path().join("t.tgm");
    assert!(tgm(&["convert-netcdf", s(&nc), "-o", s(&via_file)]).0);
    assert_eq!(
        tgm::decode(&arch, &Default::default())
            .unwrap()
            .objects
            .len(),
        read_tgm(&via_file)[0].objects.len()
    );
    let back_nc = pipe(&["to-netcdf", "-", "-o", "-"], arch);
    let round = dir.path().join("round.nc");
    std::fs::write(&round, back_nc).unwrap();
    assert_same_netcdf(&nc, &round);
}

/// `cdl` compiled by `ncgen -k nc4` into `dir/name`, or None (with a note)
/// without ncgen.
fn ncgen(dir: &Path, name: &str, cdl: &str) -> Option<PathBuf> {
    ncgen_kind(dir, name, cdl, "nc4")
}

/// `cdl` compiled by `ncgen -k kind`.
fn ncgen_kind(dir: &Path, name: &str, cdl: &str, kind: &str) -> Option<PathBuf> {
    let src = dir.join(format!("{name}.cdl"));
    std::fs::write(&src, cdl).unwrap();
    let out = dir.join(name);
    let st = match Command::new("ncgen")
        .args(["-k", kind, "-o"])
        .arg(&out)
        .arg(&src)
        .output()
    {
        Ok(st) => st,
        Err(_) => {
            common::skip::skip("ncgen (netcdf-bin) is not installed; run .ci/weather.sh");
            return None;
        }
    };
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    Some(out)
}

#[test]
fn nan_stays_distinct_from_the_fill_value() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf t { dimensions: x = 4 ; variables: float v(x) ; v:_FillValue = -999.f ; \
               data: v = 1, NaNf, -999, 2.5 ; }";
    let Some(input) = ncgen(dir.path(), "nan.nc", cdl) else {
        return;
    };
    let t = dir.path().join("nan.tgm");
    let back = dir.path().join("nan.back.nc");
    let (ok, err) = tgm(&["convert-netcdf", s(&input), "-o", s(&t)]);
    assert!(ok, "{err}");
    let msgs = read_tgm(&t);
    let (_, obj) = object(&msgs[0], "v");
    let v = f32s(&obj.data);
    assert!(v[1].is_nan(), "{v:?}");
    assert_eq!([v[0], v[2], v[3]], [1.0, -999.0, 2.5]);
    let (ok, err) = tgm(&["to-netcdf", s(&t), "-o", s(&back)]);
    assert!(ok, "{err}");
    let data = ncdump_data(&back).unwrap();
    assert!(data.contains("v = 1, NaNf, _, 2.5"), "{data}");
}

/// `ncdump` of `path` without its first line (which names the file), or
/// `ncdump -s` with `special`.
fn ncdump_body(path: &Path, special: bool) -> String {
    let mut cmd = Command::new("ncdump");
    if special {
        cmd.arg("-s");
    }
    let out = cmd.arg(path).output().unwrap();
    assert!(out.status.success(), "ncdump {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_once('\n').unwrap().1.to_string()
}

/// `input` converted with `args`, then written back by `to-netcdf`, which
/// `ncdump` must show as the input: the archive and the NetCDF file.
fn through_tgm(input: &Path, args: &[&str]) -> (PathBuf, PathBuf) {
    let t = input.with_extension("tgm");
    let back = input.with_extension("back.nc");
    let mut conv = vec!["convert-netcdf", s(input), "-o", s(&t), "--force"];
    conv.extend_from_slice(args);
    let (ok, err) = tgm(&conv);
    assert!(ok, "convert-netcdf: {err}");
    let (ok, err) = tgm(&["to-netcdf", s(&t), "-o", s(&back), "--force"]);
    assert!(ok, "to-netcdf: {err}");
    assert_eq!(
        ncdump_body(input, false),
        ncdump_body(&back, false),
        "{} {args:?}",
        input.display()
    );
    (t, back)
}

/// Nested groups, a dimension of the root used in a sub-group, one of a
/// sub-group used in its child, an unlimited dimension used in a group,
/// group attributes and an empty group; attributes out of name order.
const GROUPS_CDL: &str = "netcdf g {
dimensions: x = 2 ; time = UNLIMITED ;
variables: float a(x) ; a:units = \"K\" ;
  :title = \"groups\" ;
data: a = 1, 2 ;
group: forecast {
  dimensions: y = 3 ;
  variables: float t2m(x, y) ; t2m:long_name = \"2 metre temperature\" ; t2m:units = \"K\" ;
    t2m:comment = \"declared last\" ;
    int step(time) ;
  :kind = \"fc\" ;
  data: t2m = 1, 2, 3, 4, 5, 6 ; step = 0, 6 ;
  group: member1 {
    variables: double w(y) ;
    data: w = 7, 8, 9 ;
  }
}
group: empty { :note = \"no variables\" ; }
}";

#[test]
fn every_group_is_read_by_path_and_written_back() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let Some(input) = ncgen(dir.path(), "groups.nc", GROUPS_CDL) else {
        return;
    };
    for split in ["file", "variable", "record"] {
        let (t, _) = through_tgm(&input, &["--split-by", split]);
        let msgs = read_tgm(&t);
        let holding = |name: &str| {
            msgs.iter()
                .find(|m| {
                    m.metadata
                        .base
                        .iter()
                        .any(|b| b.get("name").and_then(Value::as_text) == Some(name))
                })
                .unwrap_or_else(|| panic!("no message holds {name}"))
        };
        let m = holding("/forecast/t2m");
        let (i, t2m) = object(m, "/forecast/t2m");
        assert_eq!(t2m.descriptor.shape, [2, 3]);
        assert_eq!(f32s(&t2m.data), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let dims: Vec<&str> = m.metadata.base[i]["dim_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_text().unwrap())
            .collect();
        assert_eq!(dims, ["x", "/forecast/y"], "{split}");
        let (_, w) = object(holding("/forecast/member1/w"), "/forecast/member1/w");
        assert_eq!(f64s(&w.data), [7.0, 8.0, 9.0]);
    }
}

#[test]
fn char_and_string_variables_round_trip() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf s {
dimensions: n = 3 ; len = 5 ; t = UNLIMITED ;
variables:
  char station(n, len) ; station:long_name = \"station name\" ;
  string label(n) ; label:comment = \"free text\" ;
  string note ;
  char code(t) ;
  string events(t) ;
data:
  station = \"Paris\", \"Rome\", \"Oslo\" ;
  label = \"first\", \"\", \"third \u{e9}\" ;
  note = \"a scalar\" ;
  code = \"ab\" ;
  events = \"start\", \"stop\" ;
}";
    let Some(input) = ncgen(dir.path(), "text.nc", cdl) else {
        return;
    };
    for split in ["file", "record"] {
        let (t, _) = through_tgm(&input, &["--split-by", split]);
        let msgs = read_tgm(&t);
        let (i, label) = object(&msgs[0], "label");
        assert_eq!(label.data, b"first\0\0third \xc3\xa9\0");
        let nc = &msgs[0].metadata.base[i]["netcdf"];
        assert_eq!(nc.get("type").and_then(Value::as_text), Some("string"));
        let (_, station) = object(&msgs[0], "station");
        assert_eq!(station.descriptor.dtype, Dtype::Uint8);
        assert_eq!(&station.data[..5], b"Paris");
    }
    // NetCDF-3 char variables too.
    let classic = "netcdf c { dimensions: n = 2 ; len = 3 ; variables: char id(n, len) ; \
                   data: id = \"abc\", \"de\" ; }";
    let c = ncgen_kind(dir.path(), "classic-char.nc", classic, "classic").unwrap();
    let (_, back) = through_tgm(&c, &[]);
    let data = ncdump_data(&back).unwrap();
    assert!(data.contains("\"abc\",\n  \"de\""), "{data}");
}

#[test]
fn source_chunking_and_deflate_are_written_back() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf c {
dimensions: t = UNLIMITED ; y = 4 ; x = 6 ;
variables:
  float v(t, y, x) ; v:_ChunkSizes = 2, 2, 3 ; v:_DeflateLevel = 7 ; v:_Shuffle = \"false\" ;
  float plain(y, x) ; plain:_Storage = \"contiguous\" ;
data:
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
  plain = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
}";
    let Some(input) = ncgen(dir.path(), "chunked.nc", cdl) else {
        return;
    };
    let (t, back) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let (i, _) = object(&msgs[0], "v");
    let nc = &msgs[0].metadata.base[i]["netcdf"];
    assert_eq!(nc.get("deflate").and_then(Value::as_i64), Some(7));
    assert_eq!(nc.get("shuffle"), Some(&Value::Bool(false)));
    let header = ncdump_body(&back, true);
    assert!(header.contains("v:_ChunkSizes = 2, 2, 3 ;"), "{header}");
    assert!(header.contains("v:_DeflateLevel = 7 ;"), "{header}");
    assert!(!header.contains("v:_Shuffle"), "{header}");
    // A contiguous source variable gets the default storage.
    assert!(header.contains("plain:_DeflateLevel = 4 ;"), "{header}");
    assert!(header.contains("plain:_Shuffle = \"true\" ;"), "{header}");
}

#[test]
fn packed_variables_come_back_as_the_same_integers() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf p { dimensions: x = 6 ; variables: short p(x) ; \
               p:_FillValue = -32767s ; p:add_offset = 273.15 ; p:scale_factor = 0.001 ; \
               byte b(x) ; b:add_offset = -1.5f ; b:scale_factor = 0.3f ; \
               data: p = -32768, -32767, -1, 0, 12345, 32767 ; b = -128, -1, 0, 1, 77, 127 ; }";
    let Some(input) = ncgen(dir.path(), "packed.nc", cdl) else {
        return;
    };
    for args in [&[][..], &["--cf"][..]] {
        let (t, _) = through_tgm(&input, args);
        let msgs = read_tgm(&t);
        let (_, p) = object(&msgs[0], "p");
        let want = if args.is_empty() {
            Dtype::Int16
        } else {
            Dtype::Float64
        };
        assert_eq!(p.descriptor.dtype, want);
    }
}

#[test]
fn to_netcdf_writes_chunked_deflated_variables() {
    let _g = serial();
    let (dir, _, _) = round_trip(true, &[]);
    let round = dir.path().join("back.nc");
    let out = match Command::new("ncdump").args(["-hs"]).arg(&round).output() {
        Ok(o) => o,
        Err(_) => {
            common::skip::skip("ncdump (netcdf-bin) is not installed; run .ci/weather.sh");
            return;
        }
    };
    let header = String::from_utf8(out.stdout).unwrap();
    assert!(header.contains("t2m:_Storage = \"chunked\""), "{header}");
    assert!(header.contains("t2m:_DeflateLevel = 4"), "{header}");
    assert!(header.contains("t2m:_Shuffle = \"true\""), "{header}");
    assert!(header.contains("lat:_Storage = \"chunked\""), "{header}");
}

/// `input` with its NetCDF-3 record count set to the streaming marker.
fn streaming(dir: &Path, input: &Path) -> PathBuf {
    let mut b = std::fs::read(input).unwrap();
    b[4..8].fill(0xff);
    let out = dir.join(format!(
        "streaming-{}",
        input.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&out, b).unwrap();
    out
}

#[test]
fn streaming_record_counts_are_bounded_by_the_bytes_present() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let with = "netcdf s { dimensions: t = UNLIMITED ; x = 2 ; \
                variables: float v(t, x) ; float c(x) ; data: v = 1, 2, 3, 4 ; c = 5, 6 ; }";
    let without = "netcdf s { dimensions: t = UNLIMITED ; x = 2 ; \
                   variables: float c(x) ; data: c = 5, 6 ; }";
    let (Some(with), Some(without)) = (
        ncgen_kind(d, "rec.nc", with, "classic"),
        ncgen_kind(d, "norec.nc", without, "classic"),
    ) else {
        return;
    };
    // netCDF-C reports 2^32-1 records for both; the bytes hold 2 and 0.
    let t = d.join("rec.tgm");
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&streaming(d, &with)),
        "-o",
        s(&t),
        "--split-by",
        "record",
    ]);
    assert!(ok, "{err}");
    let msgs = read_tgm(&t);
    assert_eq!(msgs.len(), 2);
    let (_, v) = object(&msgs[1], "v");
    assert_eq!(f32s(&v.data), [3.0, 4.0]);
    let empty = streaming(d, &without);
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&empty),
        "-o",
        s(&d.join("no.tgm")),
        "--split-by",
        "record",
    ]);
    assert!(!ok && err.contains("has no records"), "{err}");
}

#[test]
fn unwritten_netcdf4_variables_are_charged_to_the_budget() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf u { dimensions: x = 20000 ; y = 20000 ; variables: float v(x, y) ; }";
    let Some(input) = ncgen(dir.path(), "unwritten.nc", cdl) else {
        return;
    };
    assert!(std::fs::metadata(&input).unwrap().len() < 100_000);
    let t = dir.path().join("u.tgm");
    let (ok, err) = tgm(&["convert-netcdf", s(&input), "-o", s(&t)]);
    assert!(
        !ok && err.contains("variable v") && err.contains("decoded-bytes budget"),
        "{err}"
    );
    assert!(!t.exists());
}

#[test]
fn to_netcdf_writes_only_the_variables_objects_selects() {
    let _serial = serial();
    let (dir, arch, nc) = round_trip(false, &[]);
    let out = dir.path().join("sel.nc");
    let (ok, err) = tgm(&[
        "to-netcdf",
        s(&arch),
        "--objects",
        "name=t2m/lat/lon",
        "-o",
        s(&out),
    ]);
    assert!(ok, "{err}");
    let (_, _, vars) = snapshot(&out);
    let names: Vec<&str> = vars.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(names, ["lat", "lon", "t2m"]);
    // Each kept variable is the source's, attributes and values included.
    let (_, _, all) = snapshot(&nc);
    for v in &vars {
        assert!(all.contains(v), "{} differs", v.0);
    }
    let none = dir.path().join("none.nc");
    let (ok, err) = tgm(&[
        "to-netcdf",
        s(&arch),
        "--objects",
        "name=nothing",
        "-o",
        s(&none),
    ]);
    assert!(!ok && err.contains("no object matches"), "{err}");
    assert!(!none.exists());
}

#[test]
fn plot_turns_a_south_first_latitude_north_up() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let nc = dir.path().join("south.nc");
    {
        let mut f = netcdf::create(&nc).unwrap();
        f.add_dimension("lat", 3).unwrap();
        f.add_dimension("lon", 4).unwrap();
        let mut v = f.add_variable::<f32>("lat", &["lat"]).unwrap();
        v.put_attribute("units", "degrees_north").unwrap();
        v.put_values(&[-30.0f32, 0.0, 30.0], ..).unwrap();
        let mut v = f.add_variable::<f32>("t", &["lat", "lon"]).unwrap();
        let t: Vec<f32> = [70.0f32, 100.0, 130.0]
            .iter()
            .flat_map(|&x| [x; 4])
            .collect();
        v.put_values(&t, ..).unwrap();
    }
    let arch = dir.path().join("south.tgm");
    let (ok, err) = tgm(&["convert-netcdf", s(&nc), "-o", s(&arch)]);
    assert!(ok, "{err}");
    let png = dir.path().join("t.png");
    let (ok, err) = tgm(&["plot", s(&arch), "--objects", "name=t", "-o", s(&png)]);
    assert!(ok, "{err}");
    let p = common::Png::read(&png);
    let e = |v| common::expected(colorous::VIRIDIS, (70.0, 130.0), v, false);
    assert_eq!(p.cell(0, 3, 4, 0, 1), e(130.0), "north at the top");
    assert_eq!(p.cell(0, 3, 4, 2, 1), e(70.0));
}

/// A vlen of compounds is refused before any output, naming the variable;
/// `--skip-unsupported` leaves it out and converts the rest.
#[test]
fn vlens_of_compounds_are_refused_unless_skipped() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf t { types: compound c_t { int a ; } ; c_t(*) ragged ;
        dimensions: x = 2 ; variables: ragged r(x) ; float v(x) ;
        data: r = {{1}, {2}}, {{3}} ; v = 1, 2 ; }";
    let Some(nc) = ncgen(dir.path(), "vlen.nc", cdl) else {
        return;
    };
    let out = dir.path().join("vlen.tgm");
    let (ok, err) = tgm(&["convert-netcdf", s(&nc), "-o", s(&out)]);
    assert!(!ok, "a vlen of compounds was accepted");
    assert!(
        err.contains("variable r")
            && err.contains("vlen type ragged")
            && err.contains("--skip-unsupported"),
        "{err}"
    );
    assert!(!out.exists(), "output written before the refusal");
    let (ok, err) = tgm(&[
        "convert-netcdf",
        s(&nc),
        "-o",
        s(&out),
        "--skip-unsupported",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("skipping variable r:"), "{err}");
    let f = TgmFile::open(&out).unwrap();
    assert_eq!(f.num_messages(), 1);
}

/// A vlen variable becomes a values object (flat, named as the variable)
/// and a lengths object (uint64, the variable's shape, `var.lengths`), and
/// comes back as the same ragged array from every split.
#[test]
fn vlen_variables_round_trip_as_values_and_lengths() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf v { types: int(*) ragged_t ; double(*) dr_t ;
dimensions: time = UNLIMITED ; x = 3 ;
variables: ragged_t r(time, x) ; r:long_name = \"ragged\" ; dr_t d(x) ; float v(x) ;
data: r = {1, 2, 3}, {4}, {}, {5, 6}, {7}, {8, 9, 10, 11} ;
  d = {0.5}, {1.5, 2.5}, {} ; v = 1, 2, 3 ; }";
    let Some(input) = ncgen(dir.path(), "vlen.nc", cdl) else {
        return;
    };
    for split in ["file", "variable", "record"] {
        through_tgm(&input, &["--split-by", split]);
    }
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let (i, values) = object(&msgs[0], "r");
    assert_eq!(values.descriptor.dtype, Dtype::Int32);
    let ints: Vec<i32> = values
        .data
        .chunks_exact(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ints, (1..=11).collect::<Vec<_>>());
    let (_, lengths) = object(&msgs[0], "r.lengths");
    assert_eq!(lengths.descriptor.dtype, Dtype::Uint64);
    assert_eq!(lengths.descriptor.shape, [2, 3]);
    let lens: Vec<u64> = lengths
        .data
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(lens, [3, 1, 0, 2, 1, 4]);
    let v = nc_meta(&msgs[0], i).get("vlen").unwrap();
    assert_eq!(v.get("base").and_then(Value::as_text), Some("int"));
}

/// The `netcdf` map of object `i` of `msg`.
fn nc_meta(msg: &DecodedMessage, i: usize) -> &Value {
    msg.metadata.base[i].get("netcdf").unwrap()
}

/// Enum variables (with an enum `_FillValue` among other attributes, over
/// an unlimited dimension), an enum global attribute and an unused enum
/// type come back as `ncdump` showed them, from every split; the archive
/// holds the base integers and the type's members in order.
#[test]
fn enum_types_round_trip() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf e {
types:
  ubyte enum cloud_t {Clear = 0, Cumulonimbus = 1, Stratus = 2, Missing = 255} ;
  short enum level_t {Low = -5, High = 300} ;
dimensions: time = UNLIMITED ; station = 3 ;
variables:
  cloud_t cloud(time, station) ;
    cloud:long_name = \"cloud type\" ;
    cloud_t cloud:_FillValue = Missing ;
    cloud:units = \"1\" ;
  float t(station) ;
  :title = \"enums\" ;
  cloud_t :default_cloud = Stratus ;
data:
  cloud = Clear, _, Stratus, Cumulonimbus, Clear, _ ;
  t = 1, 2, 3 ;
}";
    let Some(input) = ncgen(dir.path(), "enum.nc", cdl) else {
        return;
    };
    for split in ["file", "variable", "record"] {
        through_tgm(&input, &["--split-by", split]);
    }
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let (i, obj) = object(&msgs[0], "cloud");
    assert_eq!(obj.descriptor.dtype, Dtype::Uint8);
    assert_eq!(obj.data, [0, 255, 2, 1, 0, 255]);
    let e = nc_meta(&msgs[0], i).get("enum").unwrap();
    assert_eq!(e.get("name").and_then(Value::as_text), Some("cloud_t"));
    assert_eq!(e.get("base").and_then(Value::as_text), Some("ubyte"));
    let names: Vec<&str> = e
        .get("members")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|m| m.as_array().unwrap()[0].as_text().unwrap())
        .collect();
    assert_eq!(names, ["Clear", "Cumulonimbus", "Stratus", "Missing"]);
}

/// An opaque variable is stored as uint8 with a trailing axis of the
/// opaque size and comes back as the same type and bytes.
#[test]
fn opaque_types_round_trip() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf o { types: opaque(5) blob_t ; dimensions: x = 2 ;
variables: blob_t b(x) ; b:comment = \"raw\" ; int n(x) ;
data: b = 0XDEADBEEF00, 0X0102030405 ; n = 1, 2 ; }";
    let Some(input) = ncgen(dir.path(), "opaque.nc", cdl) else {
        return;
    };
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let (i, obj) = object(&msgs[0], "b");
    assert_eq!(obj.descriptor.dtype, Dtype::Uint8);
    assert_eq!(obj.descriptor.shape, [2, 5]);
    assert_eq!(obj.data, [0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5]);
    let o = nc_meta(&msgs[0], i).get("opaque").unwrap();
    assert_eq!(o.get("size").and_then(Value::as_u64), Some(5));
}

/// A compound variable with array members, a nested compound array, an
/// enum and an opaque member becomes one object per member, named
/// `var.member`, and is rebuilt as the same type with the same values
/// from every split.
#[test]
fn compound_types_round_trip_one_object_per_member() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf c {
types:
  ubyte enum flag_t {Bad = 0, Good = 1} ;
  opaque(3) blob_t ;
  compound wind_t { float u ; float v ; } ;
  compound obs_t { int id ; double vals(2, 3) ; wind_t w(2) ; char tag(4) ; flag_t q ; blob_t raw ; } ;
dimensions: time = UNLIMITED ; s = 2 ;
variables:
  obs_t obs(time, s) ; obs:long_name = \"observations\" ;
  int plain(s) ;
data:
  obs = {1, {1, 2, 3, 4, 5, 6}, {{0.5, 1}, {2, 3}}, {\"abcd\"}, Good, 0X010203},
    {2, {7, 8, 9, 10, 11, 12}, {{4, 5}, {6, 7}}, {\"efgh\"}, Bad, 0X040506},
    {3, {1, 2, 3, 4, 5, 6}, {{8, 9}, {10, 11}}, {\"ijkl\"}, Good, 0X070809},
    {4, {7, 8, 9, 10, 11, 12}, {{12, 13}, {14, 15}}, {\"mnop\"}, Bad, 0X0A0B0C} ;
  plain = 5, 6 ;
}";
    let Some(input) = ncgen(dir.path(), "compound.nc", cdl) else {
        return;
    };
    for split in ["file", "variable", "record"] {
        through_tgm(&input, &["--split-by", split]);
    }
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let names: Vec<&str> = msgs[0]
        .metadata
        .base
        .iter()
        .map(|b| b.get("name").and_then(Value::as_text).unwrap())
        .collect();
    assert_eq!(
        names,
        ["obs.id", "obs.vals", "obs.w.u", "obs.w.v", "obs.tag", "obs.q", "obs.raw", "plain"]
    );
    let (_, id) = object(&msgs[0], "obs.id");
    assert_eq!(id.descriptor.dtype, Dtype::Int32);
    assert_eq!(id.descriptor.shape, [2, 2]);
    let (_, vals) = object(&msgs[0], "obs.vals");
    assert_eq!(vals.descriptor.shape, [2, 2, 2, 3]);
    assert_eq!(f64s(&vals.data)[6..12], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let (_, u) = object(&msgs[0], "obs.w.u");
    assert_eq!(u.descriptor.shape, [2, 2, 2]);
    assert_eq!(f32s(&u.data), [0.5, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]);
    let (_, tag) = object(&msgs[0], "obs.tag");
    assert_eq!(&tag.data[..8], b"abcdefgh");
    let (_, raw) = object(&msgs[0], "obs.raw");
    assert_eq!(raw.descriptor.shape, [2, 2, 3]);
    assert_eq!(&raw.data[..6], &[1, 2, 3, 4, 5, 6]);
}

/// A compound holding a string (or vlen) member is refused before any
/// output, naming the member; an attribute of a compound type is refused
/// naming the attribute.
#[test]
fn compounds_with_variable_length_members_are_refused_by_name() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf r { types: compound rec_t { int a ; string label ; } ;
dimensions: x = 1 ; variables: rec_t r(x) ; data: r = {1, \"one\"} ; }";
    let Some(input) = ncgen(dir.path(), "strmember.nc", cdl) else {
        return;
    };
    let out = dir.path().join("strmember.tgm");
    let (ok, err) = tgm(&["convert-netcdf", s(&input), "-o", s(&out)]);
    assert!(!ok, "a compound with a string member was accepted");
    assert!(
        err.contains("variable r") && err.contains("member label"),
        "{err}"
    );
    assert!(!out.exists(), "output written before the refusal");

    let cdl = "netcdf a { types: compound pair_t { int a ; int b ; } ;
dimensions: x = 1 ; variables: int v(x) ; pair_t v:range = {1, 2} ; data: v = 1 ; }";
    let input = ncgen(dir.path(), "cattr.nc", cdl).unwrap();
    let out = dir.path().join("cattr.tgm");
    let (ok, err) = tgm(&["convert-netcdf", s(&input), "-o", s(&out)]);
    assert!(!ok, "an attribute of a compound type was accepted");
    assert!(
        err.contains("variable v attribute range") && err.contains("compound type pair_t"),
        "{err}"
    );
    assert!(!out.exists(), "output written before the refusal");
}

/// `m` with the `size` of every compound definition in its objects'
/// `netcdf.compound` set to `size`, and without `_extra_.netcdf.types`.
fn with_compound_size(m: &DecodedMessage, size: u64) -> Vec<u8> {
    let mut meta = tgm::GlobalMetadata::with_base(m.metadata.base.clone());
    meta.extra = m.metadata.extra.clone();
    if let Some(Value::Map(nc)) = meta.extra.get_mut("netcdf") {
        nc.retain(|(k, _)| k.as_text() != Some("types"));
    }
    for entry in &mut meta.base {
        entry.remove("_reserved_");
        let Some(Value::Map(nc)) = entry.get_mut("netcdf") else {
            continue;
        };
        for (k, v) in nc.iter_mut() {
            if let (Some("compound"), Value::Map(def)) = (k.as_text(), v) {
                for (dk, dv) in def.iter_mut() {
                    if dk.as_text() == Some("size") {
                        *dv = Value::from(size);
                    }
                }
            }
        }
    }
    let objects: Vec<_> = m
        .objects
        .iter()
        .map(|o| (&o.descriptor, &o.data[..]))
        .collect();
    tgm::encode(&meta, &objects, &tgm::EncodeOptions::new()).unwrap()
}

/// An archive whose compound definition claims elements far larger than
/// its members is refused by `to-netcdf` before the elements are
/// allocated, and leaves no output.
#[test]
fn oversized_compound_definitions_are_refused_on_write_back() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf c { types: compound p_t { int a ; short b ; } ; dimensions: x = 2 ;
variables: p_t p(x) ; data: p = {1, 2}, {3, 4} ; }";
    let Some(input) = ncgen(dir.path(), "big.nc", cdl) else {
        return;
    };
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let out = dir.path().join("big.back2.nc");
    for (size, refused) in [(8, false), (1_000_000, true)] {
        let arch = dir.path().join(format!("size{size}.tgm"));
        std::fs::write(&arch, with_compound_size(&msgs[0], size)).unwrap();
        let (ok, err) = tgm(&["to-netcdf", s(&arch), "-o", s(&out), "--force"]);
        assert_eq!(ok, !refused, "size {size}: {err}");
        if refused {
            assert!(
                err.contains("compound p_t") && err.contains("8 times"),
                "{err}"
            );
        }
    }
}

/// Types defined in a sub-group, a compound there using a root enum, and
/// an enum `_FillValue` in the sub-group come back in their groups.
#[test]
fn user_defined_types_of_sub_groups_round_trip() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cdl = "netcdf g {
types: byte enum e_t {A = 1, B = 2} ;
dimensions: x = 2 ;
variables: e_t top(x) ;
data: top = A, B ;
group: sub {
  types: compound pt_t { e_t k ; float f ; } ; opaque(2) o_t ;
  variables: pt_t p(x) ; o_t o(x) ; e_t ee(x) ; e_t ee:_FillValue = B ;
  data: p = {A, 1.5}, {B, 2.5} ; o = 0X0102, 0X0304 ; ee = A, _ ;
}
}";
    let Some(input) = ncgen(dir.path(), "groups.nc", cdl) else {
        return;
    };
    for split in ["file", "variable"] {
        through_tgm(&input, &["--split-by", split]);
    }
    let (t, _) = through_tgm(&input, &[]);
    let msgs = read_tgm(&t);
    let (_, k) = object(&msgs[0], "/sub/p.k");
    assert_eq!(k.descriptor.dtype, Dtype::Int8);
    assert_eq!(k.data, [1, 2]);
}
