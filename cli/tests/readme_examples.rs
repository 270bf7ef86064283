//! Runs every `tgm ...` example of the book's command-line guide
//! (docs/src/guide/cli.md) and of the README's medical archive, in order,
//! in a temporary directory holding the fixture files they name.

use std::path::Path;

#[path = "doc/examples.rs"]
mod doc_examples;

fn npy_f64(vals: &[f64]) -> Vec<u8> {
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    tgm::npy::write_npy(
        &tgm::npy::npy_layout(
            tgm::Dtype::Float64,
            &[vals.len() as u64],
            tgm::ByteOrder::Little,
        ),
        &data,
    )
}

#[test]
fn every_command_line_example_in_the_book_runs() {
    let page = include_str!("../../docs/src/guide/cli.md");
    let ex = doc_examples::tgm_lines(page, "# The command line");
    assert!(ex.len() >= 20, "found only {} examples", ex.len());
    let dir = tempfile::tempdir().unwrap();
    for (name, vals) in [
        ("a.npy", vec![1.0, 2.0, 3.0]),
        ("b.npy", vec![4.0, 5.5]),
        ("c.npy", vec![-1.0; 4]),
        (
            "t.npy",
            (0..100).map(|i| 280.0 + (i as f64 * 0.1).sin()).collect(),
        ),
    ] {
        std::fs::write(dir.path().join(name), npy_f64(&vals)).unwrap();
    }
    let g: Vec<u8> = (0..12).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    let layout = tgm::npy::npy_layout(tgm::Dtype::Float64, &[3, 4], tgm::ByteOrder::Little);
    std::fs::write(dir.path().join("g.npy"), tgm::npy::write_npy(&layout, &g)).unwrap();
    for line in &ex {
        run(line, dir.path());
    }
}

/// Runs `line` with `sh` in `dir`, this build's `tgm` first on the path;
/// its standard output.
fn run(line: &str, dir: &Path) -> String {
    let o = doc_examples::sh(line, dir, Path::new(env!("CARGO_BIN_EXE_tgm")));
    assert!(
        o.status.success(),
        "example failed: {line}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The README's medical commands, on a NIfTI image and a DICOM series that
/// `tgm` writes from an int16 volume.
#[test]
fn the_readme_medical_example_runs() {
    let ex = doc_examples::tgm_lines(include_str!("../../README.md"), "## A medical archive");
    assert!(ex.len() >= 4, "found only {ex:?}");
    let dir = tempfile::tempdir().unwrap();
    let voxels: Vec<u8> = (0..120i16).flat_map(|v| (v - 50).to_le_bytes()).collect();
    let layout = tgm::npy::npy_layout(tgm::Dtype::Int16, &[4, 5, 6], tgm::ByteOrder::Little);
    std::fs::write(
        dir.path().join("v.npy"),
        tgm::npy::write_npy(&layout, &voxels),
    )
    .unwrap();
    for fixture in [
        "tgm import v.npy -o v.tgm",
        "tgm to-nifti v.tgm -o ct.nii.gz",
        "tgm to-dicom v.tgm -o series/",
    ] {
        run(fixture, dir.path());
    }
    for line in &ex {
        run(line, dir.path());
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("slices"))
            .unwrap()
            .count(),
        4
    );
}
