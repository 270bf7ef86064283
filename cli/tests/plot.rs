//! `tgm plot`: pixels of the written PNG checked against the colour map's
//! colours for known values, north up, transparent NaN, panels of a
//! volume, determinism and refusals (`spec/plot.md`).

mod common;

use std::path::Path;

use common::{expected, tgm_in, Png};
use tgm::cbor::Value;
use tgm::pipeline::PipelineOptions;
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

fn lightness(p: [u8; 4]) -> u32 {
    u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])
}

/// One message of float64 objects with their metadata entries.
fn write(path: &Path, objects: &[(Vec<u64>, Vec<f64>, tgm::Map)]) {
    let mut p = PipelineOptions::default();
    p.allow_nan = true;
    let descs: Vec<_> = objects
        .iter()
        .map(|o| ObjectDescriptor::new(Dtype::Float64, o.0.clone()))
        .collect();
    let bytes: Vec<Vec<u8>> = objects
        .iter()
        .map(|o| o.1.iter().flat_map(|v| v.to_ne_bytes()).collect())
        .collect();
    let data: Vec<_> = descs.iter().zip(&bytes).map(|(d, b)| (d, &b[..])).collect();
    let base = objects.iter().map(|o| o.2.clone()).collect();
    let opts = EncodeOptions::new().pipeline(p);
    std::fs::write(
        path,
        tgm::encode(&GlobalMetadata::with_base(base), &data, &opts).unwrap(),
    )
    .unwrap();
}

fn entry(pairs: &[(&str, Value)]) -> tgm::Map {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A 5 × 8 regular lat/lon field whose value is 100 + the latitude (190
/// at the north row), NaN at row 1 column 2, stored north first or south
/// first.
fn latlon(path: &Path, south_first: bool) {
    let lats = [90.0, 45.0, 0.0, -45.0, -90.0];
    let mut v = Vec::new();
    let order: Vec<usize> = if south_first {
        (0..5).rev().collect()
    } else {
        (0..5).collect()
    };
    for &r in &order {
        for c in 0..8 {
            v.push(if (r, c) == (1, 2) {
                f64::NAN
            } else {
                100.0 + lats[r]
            });
        }
    }
    let (first, last) = if south_first {
        (-90.0, 90.0)
    } else {
        (90.0, -90.0)
    };
    let geography = Value::text_map([
        ("gridType", Value::from("regular_ll")),
        ("Ni", Value::from_i64(8)),
        ("Nj", Value::from_i64(5)),
        ("latitudeOfFirstGridPointInDegrees", Value::Float(first)),
        ("latitudeOfLastGridPointInDegrees", Value::Float(last)),
        ("iDirectionIncrementInDegrees", Value::Float(45.0)),
        ("jDirectionIncrementInDegrees", Value::Float(45.0)),
        ("jScansPositively", Value::from_i64(i64::from(south_first))),
    ]);
    let mars = Value::text_map([
        ("param", Value::from("167")),
        ("levtype", Value::from("sfc")),
        ("date", Value::from_i64(20240101)),
        ("time", Value::from("1200")),
    ]);
    let e = entry(&[
        ("name", Value::from("t2m")),
        ("mars", mars),
        ("geography", geography),
    ]);
    write(path, &[(vec![5, 8], v, e)]);
}

#[test]
fn a_field_is_drawn_north_up_in_viridis_with_nan_transparent() {
    let d = tempfile::tempdir().unwrap();
    latlon(&d.path().join("n.tgm"), false);
    latlon(&d.path().join("s.tgm"), true);
    for f in ["n", "s"] {
        let r = tgm_in(
            d.path(),
            &["plot", &format!("{f}.tgm"), "-o", &format!("{f}.png")],
        );
        assert!(r.ok, "{}", r.err);
    }
    let (n, s) = (
        Png::read(&d.path().join("n.png")),
        Png::read(&d.path().join("s.png")),
    );
    assert_eq!(n.chunk("tgm-cmap"), "viridis", "no value below 0: viridis");
    assert!(n
        .chunk("Title")
        .contains("t2m, param 167, sfc, 20240101, time 1200"));
    let range = n.range();
    assert_eq!(range, (10.0, 190.0));
    let values = [190.0, 145.0, 100.0, 55.0, 10.0];
    for png in [&n, &s] {
        for (r, v) in values.iter().enumerate() {
            for c in [0, 5, 7] {
                let want = expected(colorous::VIRIDIS, range, *v, false);
                assert_eq!(png.cell(0, 5, 8, r as u64, c), want, "row {r} col {c}");
            }
        }
        assert_eq!(png.cell(0, 5, 8, 1, 2)[3], 0, "NaN is transparent");
        assert!(lightness(png.cell(0, 5, 8, 0, 0)) > lightness(png.cell(0, 5, 8, 4, 0)));
    }
    // Stored south first, drawn the same.
    assert_eq!(n.panels(), s.panels());
    let p = &n.panels()[0];
    let k = |k: &str| p[k].as_u64().unwrap() as u32;
    for y in k("y")..k("y") + k("h") {
        for x in k("x")..k("x") + k("w") {
            assert!(n.px(x, y) == s.px(x, y), "pixel ({x}, {y})");
        }
    }
}

#[test]
fn the_png_is_small_paletted_and_the_same_every_run() {
    let d = tempfile::tempdir().unwrap();
    latlon(&d.path().join("n.tgm"), false);
    for o in ["a.png", "b.png"] {
        assert!(tgm_in(d.path(), &["plot", "n.tgm", "-o", o]).ok);
    }
    let a = std::fs::read(d.path().join("a.png")).unwrap();
    assert_eq!(a, std::fs::read(d.path().join("b.png")).unwrap());
    assert!(a.len() < 40_000, "{} bytes", a.len());
    // Colour type 3 (indexed) in the IHDR.
    assert_eq!(a[25], 3);
}

#[test]
fn range_and_cmap_fix_the_scale() {
    let d = tempfile::tempdir().unwrap();
    latlon(&d.path().join("n.tgm"), false);
    let r = tgm_in(
        d.path(),
        &[
            "plot", "n.tgm", "--cmap", "cividis", "--range", "50:150", "-o", "c.png",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("c.png"));
    assert_eq!(p.range(), (50.0, 150.0));
    let e = |v| expected(colorous::CIVIDIS, (50.0, 150.0), v, false);
    assert_eq!(p.cell(0, 5, 8, 0, 3), e(150.0), "clamped to the top");
    assert_eq!(p.cell(0, 5, 8, 2, 3), e(100.0));
    assert_eq!(p.cell(0, 5, 8, 4, 3), e(50.0), "clamped to the bottom");
    // A negative range needs no `=`.
    let r = tgm_in(
        d.path(),
        &["plot", "n.tgm", "--range", "-5:5", "-o", "m.png"],
    );
    assert!(r.ok, "{}", r.err);
}

#[test]
fn data_spanning_zero_gets_the_diverging_map_symmetric_about_zero() {
    let d = tempfile::tempdir().unwrap();
    let v: Vec<f64> = (0..12).map(|i| i as f64 - 3.0).collect();
    write(&d.path().join("a.tgm"), &[(vec![3, 4], v, tgm::Map::new())]);
    assert!(tgm_in(d.path(), &["plot", "a.tgm", "-o", "a.png"]).ok);
    let p = Png::read(&d.path().join("a.png"));
    assert_eq!(p.chunk("tgm-cmap"), "rdbu-r");
    assert_eq!(p.range(), (-8.0, 8.0));
    // Without geography, row 0 is at the top.
    for (i, c) in [(0u64, 0u64), (2, 3)] {
        let want = (i * 4 + c) as f64 - 3.0;
        let e = expected(colorous::RED_BLUE, (-8.0, 8.0), want, true);
        assert_eq!(p.cell(0, 3, 4, i, c), e);
    }
}

#[test]
fn a_volume_gives_three_panels_of_its_mid_planes() {
    let d = tempfile::tempdir().unwrap();
    // value = 100·k + 10·j + i over [4, 5, 6].
    let v: Vec<f64> = (0..4)
        .flat_map(|k| {
            (0..5).flat_map(move |j| (0..6).map(move |i| f64::from(100 * k + 10 * j + i)))
        })
        .collect();
    write(
        &d.path().join("v.tgm"),
        &[(vec![4, 5, 6], v, tgm::Map::new())],
    );
    let r = tgm_in(
        d.path(),
        &["plot", "v.tgm", "--range", "0:400", "-o", "v.png"],
    );
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("v.png"));
    let panels = p.panels();
    assert_eq!(panels.len(), 3);
    assert_eq!(panels[0]["label"], "axis 0=2  axis 1 down, axis 2 across");
    assert_eq!(panels[2]["label"], "axis 2=3  axis 0 down, axis 1 across");
    let g = colorous::VIRIDIS;
    let e = |v: f64| expected(g, (0.0, 400.0), v, false);
    // Panel 0: k = 2, rows j, cols i.
    assert_eq!(p.cell(0, 5, 6, 4, 5), e(245.0));
    // Panel 1: j = 2, rows k, cols i.
    assert_eq!(p.cell(1, 4, 6, 3, 1), e(321.0));
    // Panel 2: i = 3, rows k, cols j.
    assert_eq!(p.cell(2, 4, 5, 1, 4), e(143.0));
    // --slice leaves one plane.
    let r = tgm_in(
        d.path(),
        &["plot", "v.tgm", "--slice", "2=0", "-o", "s.png"],
    );
    assert!(r.ok, "{}", r.err);
    assert_eq!(Png::read(&d.path().join("s.png")).panels().len(), 1);
}

#[test]
fn a_reduced_gaussian_grid_is_drawn_row_by_row() {
    let d = tempfile::tempdir().unwrap();
    // N = 2: rows of 4, 8, 8, 4 points; value = row number · 10 + point.
    let pl = [4u64, 8, 8, 4];
    let mut v = Vec::new();
    for (r, &n) in pl.iter().enumerate() {
        v.extend((0..n).map(|i| (r * 10) as f64 + i as f64));
    }
    let geography = Value::text_map([
        ("gridType", Value::from("reduced_gg")),
        ("N", Value::from_i64(2)),
        (
            "pl",
            Value::Array(pl.iter().map(|&n| Value::Uint(n)).collect()),
        ),
    ]);
    write(
        &d.path().join("r.tgm"),
        &[(vec![24], v, entry(&[("geography", geography)]))],
    );
    let r = tgm_in(
        d.path(),
        &["plot", "r.tgm", "--range", "0:40", "-o", "r.png"],
    );
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("r.png"));
    let panel = &p.panels()[0];
    let n = |k: &str| panel[k].as_u64().unwrap() as u32;
    let (x, y, w, h) = (n("x"), n("y"), n("w"), n("h"));
    let e = |v: f64| expected(colorous::VIRIDIS, (0.0, 40.0), v, false);
    // Gaussian latitudes of N2: ±59.44°, ±19.88°; the picture spans
    // their outer band edges, about ±79.2°.
    let top = 59.444 + (59.444 - 19.875) / 2.0;
    let at_lat = |lat: f64| y + ((top - lat) / (2.0 * top) * f64::from(h)) as u32;
    // Last point of the northern row (4 points) and of the second (8).
    assert_eq!(p.px(x + w - 1, at_lat(59.4)), e(3.0));
    assert_eq!(p.px(x + w - 1, at_lat(19.9)), e(17.0));
    assert_eq!(p.px(x, at_lat(-19.9)), e(20.0));
    assert_eq!(p.px(x + w / 2 + 1, at_lat(-59.4)), e(32.0));
}

#[test]
fn a_medical_volume_states_its_convention() {
    let d = tempfile::tempdir().unwrap();
    // RAS-like voxels: i to the patient's right (-x in LPS).
    let aff = [
        [-1.0, 0.0, 0.0, 0.0],
        [0.0, -1.0, 0.0, 0.0],
        [0.0, 0.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let affine = Value::Array(
        aff.iter()
            .map(|r| Value::Array(r.iter().map(|&x| Value::Float(x)).collect()))
            .collect(),
    );
    let v: Vec<f64> = (0..3 * 4 * 5).map(f64::from).collect();
    let geometry = Value::text_map([("affine_lps", affine), ("modality", Value::from("MR"))]);
    let attributes = Value::text_map([("SeriesDescription", Value::from("T1 axial"))]);
    let dicom = Value::text_map([("attributes", attributes)]);
    write(
        &d.path().join("m.tgm"),
        &[(
            vec![3, 4, 5],
            v,
            entry(&[
                ("name", Value::from("brain")),
                ("geometry", geometry),
                ("dicom", dicom),
            ]),
        )],
    );
    for (conv, first_col) in [("radiological", 4u64), ("neurological", 0)] {
        let o = format!("{conv}.png");
        let r = tgm_in(d.path(), &["plot", "m.tgm", "--convention", conv, "-o", &o]);
        assert!(r.ok, "{}", r.err);
        let p = Png::read(&d.path().join(&o));
        assert!(p.chunk("Title").contains(&format!("{conv} convention")));
        assert!(p.chunk("Title").starts_with("brain, T1 axial, MR |"));
        assert_eq!(p.chunk("tgm-cmap"), "greys");
        let labels: Vec<String> = p.panels().iter().map(|q| q["label"].to_string()).collect();
        assert!(labels[0].contains("axial"), "{labels:?}");
        // Axial panel (k = 1): anterior (j = 3) at the top, and the left
        // column is voxel i = first_col.
        let want = 20.0 + 15.0 + first_col as f64;
        let g = colorous::GREYS;
        assert_eq!(p.cell(0, 4, 5, 0, 0), expected(g, (0.0, 59.0), want, true));
    }
}

#[test]
fn refusals_name_the_cause_and_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    latlon(&d.path().join("n.tgm"), false);
    let no_out = |args: &[&str], want: &str| {
        let mut a = vec!["plot", "n.tgm", "-o", "x.png"];
        a.extend_from_slice(args);
        let r = tgm_in(d.path(), &a);
        assert!(!r.ok, "{args:?}");
        assert!(r.err.contains(want), "{args:?}: {}", r.err);
        assert!(!d.path().join("x.png").exists());
    };
    no_out(&["--object", "1"], "message 0 has 1 objects");
    no_out(&["--slice", "2=0"], "the object has 2 axes");
    no_out(&["--slice", "0=9"], "axis 0 has 5 elements");
    no_out(&["--range", "5:1"], "LOW:HIGH");
    no_out(&["-w", "name=nothing"], "no object matches");
    // A 1-D object without a grid, and a complex one.
    let desc = ObjectDescriptor::new(Dtype::Complex64, vec![2, 2]);
    let c = tgm::encode(
        &GlobalMetadata::with_base(vec![tgm::Map::new()]),
        &[(&desc, &[0u8; 32][..])],
        &EncodeOptions::new(),
    )
    .unwrap();
    std::fs::write(d.path().join("c.tgm"), c).unwrap();
    write(
        &d.path().join("l.tgm"),
        &[(vec![6], vec![1.0; 6], tgm::Map::new())],
    );
    for (f, want) in [("c.tgm", "complex"), ("l.tgm", "nothing 2-D to draw")] {
        let r = tgm_in(d.path(), &["plot", f, "-o", "x.png"]);
        assert!(!r.ok && r.err.contains(want), "{f}: {}", r.err);
        assert!(
            r.err.contains(&format!("{f}: message 0 object 0")),
            "{}",
            r.err
        );
    }
    // An existing output is kept unless --force.
    std::fs::write(d.path().join("x.png"), b"mine").unwrap();
    let r = tgm_in(d.path(), &["plot", "n.tgm", "-o", "x.png"]);
    assert!(!r.ok && r.err.contains("already exists"), "{}", r.err);
    assert_eq!(std::fs::read(d.path().join("x.png")).unwrap(), b"mine");
    assert!(tgm_in(d.path(), &["plot", "n.tgm", "-o", "x.png", "--force"]).ok);
    assert_eq!(
        &std::fs::read(d.path().join("x.png")).unwrap()[1..4],
        b"PNG"
    );
}

#[test]
fn a_bitmask_is_drawn_as_zeros_and_ones() {
    let d = tempfile::tempdir().unwrap();
    let desc = ObjectDescriptor::new(Dtype::Bitmask, vec![2, 4]);
    let m = tgm::encode(
        &GlobalMetadata::with_base(vec![tgm::Map::new()]),
        &[(&desc, &[0b1000_0001][..])],
        &EncodeOptions::new(),
    )
    .unwrap();
    std::fs::write(d.path().join("b.tgm"), m).unwrap();
    let r = tgm_in(d.path(), &["plot", "b.tgm", "-o", "b.png"]);
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("b.png"));
    assert_eq!(p.range(), (0.0, 1.0));
    let e = |v| expected(colorous::VIRIDIS, (0.0, 1.0), v, false);
    assert_eq!(p.cell(0, 2, 4, 0, 0), e(1.0));
    assert_eq!(p.cell(0, 2, 4, 0, 1), e(0.0));
    assert_eq!(p.cell(0, 2, 4, 1, 3), e(1.0));
}

/// A NIfTI volume through `convert-nifti`: RAS voxels (i to the patient's
/// right, j anterior, k superior), value 100·k + 10·j + i over k, j, i of
/// 3, 4, 5. Each panel's top-left voxel is the one the convention puts there.
#[cfg(feature = "nifti")]
#[test]
fn a_converted_nifti_volume_faces_the_viewer_by_its_convention() {
    use tgm_convert::medical::nifti_header::{header_from_meta, write_header};
    let d = tempfile::tempdir().unwrap();
    let mut h = header_from_meta(None, Dtype::Int16, &[5, 4, 3], tgm::ByteOrder::Little).unwrap();
    h.sform_code = 1;
    h.srow_x = [1.0, 0.0, 0.0, 0.0];
    h.srow_y = [0.0, 1.0, 0.0, 0.0];
    h.srow_z = [0.0, 0.0, 1.0, 0.0];
    let mut bytes = write_header(&h, &[]).unwrap();
    for k in 0..3i16 {
        for j in 0..4i16 {
            for i in 0..5i16 {
                bytes.extend((100 * k + 10 * j + i).to_le_bytes());
            }
        }
    }
    std::fs::write(d.path().join("v.nii"), bytes).unwrap();
    let r = tgm_in(d.path(), &["convert-nifti", "v.nii", "-o", "v.tgm"]);
    assert!(r.ok, "{}", r.err);
    // (panel, rows, cols, value at top-left) for each convention.
    let cases = [
        (
            "radiological",
            [
                ("axial", 4, 5, 134.0),
                ("coronal", 3, 5, 224.0),
                ("sagittal", 3, 4, 232.0),
            ],
        ),
        (
            "neurological",
            [
                ("axial", 4, 5, 130.0),
                ("coronal", 3, 5, 220.0),
                ("sagittal", 3, 4, 232.0),
            ],
        ),
    ];
    for (conv, panels) in cases {
        let o = format!("{conv}.png");
        let r = tgm_in(d.path(), &["plot", "v.tgm", "--convention", conv, "-o", &o]);
        assert!(r.ok, "{}", r.err);
        let p = Png::read(&d.path().join(&o));
        assert_eq!(p.range(), (0.0, 234.0));
        for (i, (name, rows, cols, v)) in panels.into_iter().enumerate() {
            assert!(p.panels()[i]["label"].as_str().unwrap().starts_with(name));
            let want = expected(colorous::GREYS, (0.0, 234.0), v, true);
            assert_eq!(p.cell(i, rows, cols, 0, 0), want, "{conv} {name}");
        }
    }
}

#[test]
fn a_variable_with_an_ascending_latitude_coordinate_is_turned_north_up() {
    let d = tempfile::tempdir().unwrap();
    let named = |name: &str, dims: &[&str], units: &str| {
        let dims = Value::Array(dims.iter().map(|x| Value::from(*x)).collect());
        let cf = Value::text_map([("units", Value::from(units))]);
        entry(&[("name", Value::from(name)), ("dim_names", dims), ("cf", cf)])
    };
    // t[time, lat, lon] = latitude + 100, lat stored south first.
    let lat = vec![-30.0, 0.0, 30.0];
    let t: Vec<f64> = (0..2)
        .flat_map(|_| lat.iter().flat_map(|l| [l + 100.0; 4]))
        .collect();
    write(
        &d.path().join("nc.tgm"),
        &[
            (
                vec![3],
                lat.clone(),
                named("lat", &["lat"], "degrees_north"),
            ),
            (vec![2, 3, 4], t, named("t", &["time", "lat", "lon"], "K")),
        ],
    );
    let r = tgm_in(
        d.path(),
        &[
            "plot", "nc.tgm", "--object", "1", "--slice", "0=1", "-o", "t.png",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("t.png"));
    let e = |v| expected(colorous::VIRIDIS, (70.0, 130.0), v, false);
    assert_eq!(p.cell(0, 3, 4, 0, 0), e(130.0), "north at the top");
    assert_eq!(p.cell(0, 3, 4, 2, 3), e(70.0));
    // Without latitude units the rows stay as stored.
    let t: Vec<f64> = (0..2)
        .flat_map(|_| lat.iter().flat_map(|l| [l + 100.0; 4]))
        .collect();
    write(
        &d.path().join("plain.tgm"),
        &[
            (vec![3], lat, named("lat", &["lat"], "m")),
            (vec![2, 3, 4], t, named("t", &["time", "lat", "lon"], "K")),
        ],
    );
    let r = tgm_in(
        d.path(),
        &[
            "plot",
            "plain.tgm",
            "--object",
            "1",
            "--slice",
            "0=1",
            "-o",
            "p.png",
        ],
    );
    assert!(r.ok, "{}", r.err);
    let p = Png::read(&d.path().join("p.png"));
    assert_eq!(p.cell(0, 3, 4, 0, 0), e(70.0), "stored order");
}

/// A cut file with no intact object reports its damage (the cut message,
/// at its offset), not that the selection matched nothing, and writes no
/// picture.
#[test]
fn a_cut_file_reports_its_damage() {
    let d = tempfile::tempdir().unwrap();
    latlon(&d.path().join("n.tgm"), false);
    let whole = std::fs::read(d.path().join("n.tgm")).unwrap();
    std::fs::write(d.path().join("cut.tgm"), &whole[..whole.len() / 2]).unwrap();
    let r = tgm_in(d.path(), &["plot", "cut.tgm", "-o", "x.png"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(r.err.contains("cut.tgm"), "{}", r.err);
    assert!(r.err.contains("truncated"), "{}", r.err);
    assert!(r.err.contains("offset 0"), "{}", r.err);
    assert!(!r.err.contains("no object matches"), "{}", r.err);
    assert!(!d.path().join("x.png").exists());
}
