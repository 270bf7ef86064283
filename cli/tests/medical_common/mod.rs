//! Helpers shared by the medical integration tests.
// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

#[path = "../../../tests/common/skip.rs"]
pub mod skip;

use std::path::{Path, PathBuf};

use dicom_core::Tag;
use dicom_dictionary_std::tags;
use std::process::Command;

/// Runs tgm: (success, stderr).
pub fn tgm(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs tgm with its address space limited to 1 GiB, so a value
/// allocated from a hostile length fails the run: (exit code, stderr),
/// -1 when killed by a signal (an abort on a failed allocation).
pub fn tgm_limited(args: &[&str]) -> (i32, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tgm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The Python named by `TGM_MEDICAL_PYTHON` when it imports pydicom and
/// nibabel; `None`, with a message saying so, otherwise.
pub fn python() -> Option<String> {
    let Some(py) = std::env::var_os("TGM_MEDICAL_PYTHON") else {
        skip::skip(
            "the pydicom/nibabel checks: TGM_MEDICAL_PYTHON is unset \
             (.ci/medical.sh sets it to a virtual environment with both)",
        );
        return None;
    };
    let py = py.to_string_lossy().into_owned();
    let ok = Command::new(&py)
        .args(["-c", "import pydicom, nibabel, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip::skip(&format!(
            "the pydicom/nibabel checks: {py} cannot import pydicom, nibabel and numpy"
        ));
        return None;
    }
    Some(py)
}

/// Runs `script` with `args` under `py`; its stdout, or a panic with its
/// stderr when it fails.
pub fn run_python(py: &str, script: &str, args: &[&str]) -> String {
    run_python_with(py, script, args, &[])
}

/// [`run_python`] with environment variables `env` set.
pub fn run_python_with(py: &str, script: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Checks every file with pydicom in strict mode: each element's value
/// validated against its VR (reading and writing rules), the Type 1 and
/// Type 2 attributes present; prints nothing on success. The elements
/// whose tags (hex, comma-separated) are in `TGM_VERBATIM_TAGS`, written
/// as their source held them, are read with warnings and not validated.
pub const PYDICOM_STRICT: &str = r#"
import os, sys, io, pydicom
from pydicom import config
from pydicom.valuerep import validate_value
from pydicom.multival import MultiValue
verbatim = {int(t, 16) for t in os.environ.get("TGM_VERBATIM_TAGS", "").split(",") if t}
config.settings.reading_validation_mode = config.WARN if verbatim else config.RAISE
config.settings.writing_validation_mode = config.WARN if verbatim else config.RAISE
required = sys.argv[1].split(",")
for path in sys.argv[2:]:
    ds = pydicom.dcmread(path)
    for elem in ds.iterall():
        if elem.VR in ("SQ", "OB", "OW", "UN") or elem.tag in verbatim:
            continue
        values = elem.value if isinstance(elem.value, (MultiValue, list)) else [elem.value]
        for v in values:
            if v is None:
                continue
            if elem.VR in ("DS", "IS", "PN"):
                v = str(v)
            validate_value(elem.VR, v, config.RAISE)
    missing = [k for k in required if k not in ds]
    if missing:
        raise SystemExit(f"{path}: missing {missing}")
    ds.pixel_array
    ds.save_as(io.BytesIO())
"#;

/// `tgm CONVERT input -o dir/a.tgm`, then `tgm to-dicom` into `dir/out`:
/// the files written, sorted.
pub fn convert_then_to_dicom(convert: &str, input: &Path, dir: &Path) -> Vec<PathBuf> {
    convert_with_then_to_dicom(&[convert], input, dir).1
}

/// [`convert_then_to_dicom`] with the convert command and its options in
/// `convert`: the conversion's stderr and the files written.
pub fn convert_with_then_to_dicom(
    convert: &[&str],
    input: &Path,
    dir: &Path,
) -> (String, Vec<PathBuf>) {
    let archive = dir.join("a.tgm");
    let mut args = convert.to_vec();
    args.extend([s(input), "-o", s(&archive)]);
    let (ok, converted) = tgm(&args);
    assert!(ok, "{converted}");
    let out = dir.join("out");
    let (ok, err) = tgm(&["to-dicom", s(&archive), "-o", s(&out)]);
    assert!(ok, "{err}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    (converted, files)
}

/// The US attributes of an unsigned single-sample image of this size.
pub fn pixel_module(rows: u16, cols: u16, bits: u16) -> Vec<(Tag, u16)> {
    vec![
        (tags::SAMPLES_PER_PIXEL, 1),
        (tags::ROWS, rows),
        (tags::COLUMNS, cols),
        (tags::BITS_ALLOCATED, bits),
        (tags::BITS_STORED, bits),
        (tags::HIGH_BIT, bits - 1),
        (tags::PIXEL_REPRESENTATION, 0),
    ]
}

/// The filter and compression of object 0 of message 0 of the archive at
/// `path`.
pub fn stored_pipeline(path: &Path) -> [String; 2] {
    let file = tgm::TgmFile::open(path).unwrap();
    file.with_message(0, |m| {
        let d = m.object(0)?.descriptor().clone();
        Ok([d.filter().to_string(), d.compression().to_string()])
    })
    .unwrap()
}
