//! `--compression blosc2|zfp|sz3` and their flags through `import` and
//! `recompress` (needs the tgm-cli features blosc2, zfp, sz3; without them
//! this suite is empty).
#![cfg(all(feature = "blosc2", feature = "zfp", feature = "sz3"))]

mod common;

use common::*;

fn field() -> tempfile::TempDir {
    let d = fixture();
    let vals: Vec<f64> = (0..5000)
        .map(|i| 280.0 + 10.0 * (i as f64 * 0.01).sin())
        .collect();
    f64_npy(&d.path().join("big.npy"), &vals);
    assert!(tgm_in(d.path(), &["import", "big.npy", "-o", "x.tgm"]).ok);
    d
}

fn stat(out: &str, k: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{k}\t")))
        .unwrap_or_else(|| panic!("no {k} in {out}"))
        .parse()
        .unwrap()
}

#[test]
fn recompress_writes_each_codec_with_its_parameters() {
    let d = field();
    for (args, key, max_err) in [
        (
            vec!["blosc2", "--blosc2-codec", "zstd", "--level", "7"],
            "blosc2_codec",
            0.0,
        ),
        (
            vec![
                "zfp",
                "--zfp-mode",
                "fixed_accuracy",
                "--zfp-tolerance",
                "0.01",
            ],
            "zfp_tolerance",
            0.01,
        ),
        (
            vec!["zfp", "--zfp-mode", "fixed_rate", "--zfp-rate", "24"],
            "zfp_rate",
            0.01,
        ),
        (
            vec![
                "sz3",
                "--sz3-error-bound-mode",
                "abs",
                "--sz3-error-bound",
                "0.001",
            ],
            "sz3_error_bound",
            0.001,
        ),
    ] {
        let mut a = vec!["recompress", "x.tgm", "y.tgm", "--compression"];
        a.extend(&args);
        let r = tgm_in(d.path(), &a);
        assert!(r.ok, "{args:?}: {}", r.err);
        assert!(
            stat(&r.out, "bytes_after") < stat(&r.out, "bytes_before"),
            "{}",
            r.out
        );
        let e = stat(&r.out, "max_abs_error");
        assert!(e <= max_err, "{args:?}: {e}");
        let dump = tgm_in(d.path(), &["dump", "y.tgm"]);
        assert!(dump.ok && dump.out.contains(key), "{}", dump.out);
        assert!(
            tgm_in(d.path(), &["validate", "--full", "y.tgm"]).ok,
            "{args:?}"
        );
        std::fs::remove_file(d.path().join("y.tgm")).unwrap();
    }
}

#[test]
fn flags_without_effect_or_out_of_range_are_usage_errors_naming_the_flag() {
    let d = field();
    for (args, says) in [
        (vec!["zstd", "--zfp-rate", "8"], "--zfp-rate"),
        (
            vec!["blosc2", "--sz3-error-bound", "1"],
            "--sz3-error-bound",
        ),
        (vec!["blosc2", "--level", "10"], "--level"),
        (vec!["blosc2", "--blosc2-codec", "snappy"], "--blosc2-codec"),
        (vec!["zfp"], "--zfp-mode"),
        (vec!["zfp", "--zfp-mode", "fixed_rate"], "--zfp-rate"),
        (
            vec![
                "zfp",
                "--zfp-mode",
                "fixed_rate",
                "--zfp-rate",
                "8",
                "--level",
                "3",
            ],
            "--level",
        ),
        (
            vec![
                "sz3",
                "--sz3-error-bound-mode",
                "l2",
                "--sz3-error-bound",
                "1",
            ],
            "--sz3-error-bound-mode",
        ),
        (
            vec![
                "sz3",
                "--sz3-error-bound-mode",
                "abs",
                "--sz3-error-bound",
                "1",
                "--filter",
                "shuffle",
            ],
            "--filter none",
        ),
    ] {
        let mut a = vec!["recompress", "x.tgm", "y.tgm", "--compression"];
        a.extend(&args);
        let r = tgm_in(d.path(), &a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(r.err.contains(says), "{args:?}: {}", r.err);
        assert!(!d.path().join("y.tgm").exists(), "{args:?}");
    }
}

#[test]
fn import_refuses_zfp_on_integers_before_writing() {
    let d = fixture();
    std::fs::write(
        d.path().join("i.npy"),
        tgm::npy::write_npy(
            &tgm::npy::npy_layout(tgm::Dtype::Int32, &[4], tgm::ByteOrder::Little),
            &[0u8; 16],
        ),
    )
    .unwrap();
    let r = tgm_in(
        d.path(),
        &[
            "import",
            "i.npy",
            "-o",
            "i.tgm",
            "--compression",
            "zfp",
            "--zfp-mode",
            "fixed_rate",
            "--zfp-rate",
            "8",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("float64"), "{}", r.err);
    assert!(!d.path().join("i.tgm").exists());
}
