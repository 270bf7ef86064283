//! Unix manners of every command: closed pipes, file modes under the
//! umask, `-` for stdin/stdout, damaged inputs, and no partial outputs.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{archive, fixture, tgm_in, tgm_stdin};

/// Runs `tgm ARGS` in `dir` with stdout and/or stderr writing into a pipe
/// whose reader is closed before the command starts; returns the exit code
/// (101 would be a panic).
fn with_broken_pipe(dir: &Path, args: &[&str], stdout: bool, stderr: bool) -> i32 {
    let broken = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        Stdio::from(writer)
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tgm"));
    cmd.current_dir(dir).args(args);
    cmd.stdout(if stdout { broken() } else { Stdio::null() });
    cmd.stderr(if stderr { broken() } else { Stdio::null() });
    cmd.status().unwrap().code().unwrap_or(-1)
}

#[test]
fn a_broken_stderr_never_panics() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    // An error message, then a note after success ("wrote 3 file(s)").
    assert_eq!(
        with_broken_pipe(d.path(), &["ls", "missing.tgm"], true, true),
        1
    );
    assert_eq!(
        with_broken_pipe(d.path(), &["ls", "missing.tgm"], false, true),
        1
    );
    let split = ["split", "-o", "o_[index].tgm", "x.tgm"];
    assert_eq!(with_broken_pipe(d.path(), &split, false, true), 0);
    assert!(d.path().join("o_2.tgm").exists());
    let import = ["import", "a.npy", "-o", "y.tgm"];
    assert_eq!(with_broken_pipe(d.path(), &import, true, true), 0);
    // A usage error reported by the binary itself, not by clap.
    let bad = [
        "import",
        "a.npy",
        "-o",
        "z.tgm",
        "--compression",
        "zstd",
        "--level",
        "99",
    ];
    assert_eq!(with_broken_pipe(d.path(), &bad, false, true), 2);
    // validate's report of a damaged file goes to stderr.
    let bytes = std::fs::read(d.path().join("x.tgm")).unwrap();
    std::fs::write(d.path().join("cut.tgm"), &bytes[..bytes.len() - 7]).unwrap();
    let validate = ["validate", "cut.tgm"];
    assert_eq!(with_broken_pipe(d.path(), &validate, true, true), 1);
}

#[test]
fn a_broken_stdout_ends_every_writer_quietly() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    for args in [
        &["demo"][..],
        &["info", "x.tgm"],
        &["info", "-j", "x.tgm"],
        &["get", "-p", "name", "x.tgm"],
        &["salvage", "x.tgm"],
        &["import", "a.npy", "-o", "-"],
        &["set", "-s", "step=1", "x.tgm", "-"],
    ] {
        assert_eq!(with_broken_pipe(d.path(), args, true, false), 0, "{args:?}");
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn outputs_are_created_with_the_umask() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 2);
    let bin = env!("CARGO_BIN_EXE_tgm");
    for (umask, want) in [("022", 0o644), ("002", 0o664), ("077", 0o600)] {
        let script = format!(
            "umask {umask} && '{bin}' import a.npy -o i{umask}.tgm \
             && '{bin}' set -s step=1 x.tgm s{umask}.tgm \
             && '{bin}' export x.tgm -o e{umask} 2>/dev/null"
        );
        let st = Command::new("sh")
            .current_dir(d.path())
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(st.success(), "umask {umask}");
        for f in [
            format!("i{umask}.tgm"),
            format!("s{umask}.tgm"),
            format!("e{umask}/m1.json"),
            format!("e{umask}/m0_f0.npy"),
        ] {
            assert_eq!(mode(&d.path().join(&f)), want, "{f} under umask {umask}");
        }
    }
}

fn npy_bytes(d: &Path) -> Vec<u8> {
    std::fs::read(d.join("a.npy")).unwrap()
}

#[test]
fn dash_is_stdin_and_stdout_for_single_files() {
    let d = fixture();
    // import - (a .npy on stdin) to stdout, then set from stdin to stdout.
    let (r, tgm_bytes) = tgm_stdin(d.path(), &["import", "-", "-o", "-"], &npy_bytes(d.path()));
    assert!(r.ok, "{}", r.err);
    let m = tgm::decode(&tgm_bytes, &Default::default()).unwrap();
    assert_eq!(m.objects.len(), 1);
    assert_eq!(m.metadata.lookup(Some(0), "name"), None);
    let (r, set) = tgm_stdin(d.path(), &["set", "-s", "step=6", "-", "-"], &tgm_bytes);
    assert!(r.ok, "{}", r.err);
    let m = tgm::decode(&set, &Default::default()).unwrap();
    assert_eq!(
        m.metadata.lookup(Some(0), "step"),
        Some(&tgm::cbor::Value::Uint(6))
    );
    // salvage - and export from stdin.
    let (r, out) = tgm_stdin(d.path(), &["salvage", "-", "-o", "-"], &set);
    assert!(r.ok, "{}", r.err);
    assert_eq!(out, set);
    let (r, _) = tgm_stdin(d.path(), &["export", "-", "-o", "ex"], &set);
    assert!(r.ok, "{}", r.err);
    assert!(d.path().join("ex/m0_o0.npy").exists());
    assert!(!d.path().join("-").exists());
}

#[test]
fn dash_is_a_usage_error_where_a_directory_or_many_files_go() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 1);
    for args in [
        &["export", "x.tgm", "-o", "-"][..],
        &["split", "-o", "-", "x.tgm"],
        &["to-dicom", "x.tgm", "-o", "-"],
    ] {
        let r = tgm_in(d.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(r.err.contains("`-` (stdout) cannot"), "{}", r.err);
        assert!(
            !d.path().join("-").exists(),
            "{args:?} created a file named -"
        );
    }
    let (r, _) = tgm_stdin(d.path(), &["import", "-", "-", "-o", "y.tgm"], b"");
    assert_eq!(r.code, 2, "{}", r.err);
}

#[test]
fn errors_about_stdin_name_stdin_not_a_temporary_file() {
    let d = fixture();
    let (r, _) = tgm_stdin(
        d.path(),
        &["import", "-", "-o", "x.tgm"],
        b"not an npy file at all",
    );
    assert_eq!(r.code, 1);
    assert!(r.err.contains("<stdin>"), "{}", r.err);
    assert!(
        !r.err.contains("tgm-stdin") && !r.err.contains("/tmp"),
        "{}",
        r.err
    );
    assert!(!d.path().join("x.tgm").exists());
    let (r, _) = tgm_stdin(d.path(), &["ls", "-"], b"neither");
    assert_eq!(r.code, 1);
    assert!(r.err.contains("<stdin>: not a Tensogram file"), "{}", r.err);
}

#[cfg(feature = "nifti")]
#[test]
fn nifti_converters_read_stdin_and_write_stdout() {
    let d = fixture();
    assert!(tgm_in(d.path(), &["import", "a.npy", "-o", "x.tgm"]).ok);
    let (r, nii) = tgm_stdin(
        d.path(),
        &["to-nifti", "-", "-o", "-"],
        &std::fs::read(d.path().join("x.tgm")).unwrap(),
    );
    assert!(r.ok, "{}", r.err);
    assert!(nii.len() > 348, "{}", nii.len());
    let (r, back) = tgm_stdin(d.path(), &["convert-nifti", "-", "-o", "-"], &nii);
    assert!(r.ok, "{}", r.err);
    let m = tgm::decode(&back, &Default::default()).unwrap();
    let values: Vec<f64> = m.objects[0]
        .data
        .chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, [1.0, 2.5, 3.0, 4.0]);
    assert_eq!(m.metadata.lookup(Some(0), "name"), Some(&"stdin".into()));
}

/// `n` messages, then the first `keep` bytes of one more.
fn cut_archive(dir: &Path, n: usize, keep: usize) -> (Vec<u8>, u64) {
    archive(&dir.join("whole.tgm"), n + 1);
    let whole = std::fs::read(dir.join("whole.tgm")).unwrap();
    let f = tgm::TgmFile::open(dir.join("whole.tgm")).unwrap();
    let last = f.spans()[n];
    let cut = &whole[..last.offset as usize + keep];
    std::fs::write(dir.join("cut.tgm"), cut).unwrap();
    (cut.to_vec(), last.offset)
}

#[test]
fn read_commands_show_intact_messages_of_a_cut_file_and_exit_1() {
    let d = fixture();
    let (_, at) = cut_archive(d.path(), 96, 40);
    let at = at.to_string();
    let r = tgm_in(d.path(), &["ls", "cut.tgm"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.out.lines().count(), 1 + 96, "{}", r.out);
    assert!(
        r.err.contains("truncated") && r.err.contains(&at),
        "{}",
        r.err
    );
    let r = tgm_in(d.path(), &["get", "-p", "name", "cut.tgm"]);
    assert_eq!((r.code, r.out.lines().count()), (1, 96));
    assert!(r.out.starts_with("cut.tgm\t0\t0\tf0\n"), "{}", r.out);
    let r = tgm_in(d.path(), &["dump", "-j", "cut.tgm"]);
    assert_eq!(r.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 96);
    let r = tgm_in(d.path(), &["info", "-j", "cut.tgm"]);
    assert_eq!(r.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(doc["messages"], 96);
    assert_eq!(doc["damage"][0]["offset"].to_string(), at);
    assert_eq!(doc["damage"][0]["truncated"], true);
    let r = tgm_in(d.path(), &["export", "cut.tgm", "-o", "ex"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(d.path().join("ex/m95.json").exists());
    assert!(r.err.contains("truncated"), "{}", r.err);
}

#[test]
fn a_cut_single_message_is_truncated_not_foreign() {
    let d = fixture();
    cut_archive(d.path(), 0, 60);
    for cmd in ["ls", "dump", "info"] {
        let r = tgm_in(d.path(), &[cmd, "cut.tgm"]);
        assert_eq!(r.code, 1, "{cmd}");
        assert!(
            r.err.contains("truncated") && r.err.contains("offset 0"),
            "{cmd}: {}",
            r.err
        );
        assert!(!r.err.contains("not a Tensogram"), "{cmd}: {}", r.err);
    }
}

#[test]
fn bytes_between_messages_are_reported_with_their_offset() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    let mut b = std::fs::read(d.path().join("x.tgm")).unwrap();
    let f = tgm::TgmFile::open(d.path().join("x.tgm")).unwrap();
    let at = f.spans()[1].offset as usize;
    b.splice(at..at, b"0123456789abcdef0123456789".iter().copied());
    std::fs::write(d.path().join("g.tgm"), &b).unwrap();
    let r = tgm_in(d.path(), &["ls", "g.tgm"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.out.lines().count(), 4, "{}", r.out);
    assert!(
        r.err.contains(&format!("26 bytes at offset {at}")),
        "{}",
        r.err
    );
}

#[test]
fn failed_writers_leave_no_output() {
    let d = fixture();
    std::fs::write(
        d.path().join("notatgm.txt"),
        b"just some text, long enough to scan",
    )
    .unwrap();
    let r = tgm_in(d.path(), &["salvage", "notatgm.txt", "-o", "good.tgm"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("not written"), "{}", r.err);
    assert!(!d.path().join("good.tgm").exists());
    for args in [
        &["to-nifti", "notatgm.txt", "-o", "o.nii"][..],
        &["to-dicom", "notatgm.txt", "-o", "dcm"],
    ] {
        let r = tgm_in(d.path(), args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.err.contains("notatgm.txt"), "{}", r.err);
    }
    assert!(!d.path().join("o.nii").exists());
    assert!(!d.path().join("dcm").exists());
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.to_string_lossy().starts_with(".tgm-partial")),
        "{names:?}"
    );
}

#[test]
fn level_is_checked_against_the_codec() {
    let d = fixture();
    let zstd = |level: &str| {
        tgm_in(
            d.path(),
            &[
                "import",
                "a.npy",
                "-o",
                &format!("z{level}.tgm"),
                "--compression",
                "zstd",
                "--level",
                level,
            ],
        )
        .code
    };
    assert_eq!(zstd("22"), 0);
    assert_eq!(zstd("-5"), 0);
    assert_eq!(zstd("23"), 2);
    assert_eq!(zstd("30"), 2);
    let r = tgm_in(
        d.path(),
        &[
            "import",
            "a.npy",
            "-o",
            "l.tgm",
            "--compression",
            "lz4",
            "--level",
            "1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
}

#[test]
fn encode_options_belong_to_encoding_commands_only() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 1);
    assert_eq!(tgm_in(d.path(), &["ls", "--allow-nan", "x.tgm"]).code, 2);
    assert_eq!(
        tgm_in(d.path(), &["info", "--nan-mask-method", "rle", "x.tgm"]).code,
        2
    );
    let r = tgm_in(
        d.path(),
        &[
            "import",
            "--allow-nan",
            "--nan-mask-method",
            "rle",
            "a.npy",
            "-o",
            "y.tgm",
        ],
    );
    assert!(r.ok, "{}", r.err);
    assert!(!tgm_in(d.path(), &["ls", "--help"])
        .out
        .contains("allow-nan"));
    assert!(tgm_in(d.path(), &["set", "--help"])
        .out
        .contains("allow-nan"));
    assert!(tgm_in(d.path(), &["ls", "--threads", "2", "x.tgm"]).ok);
}

#[test]
fn json_reports_of_info_get_and_salvage() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 2);
    let r = tgm_in(d.path(), &["get", "-j", "-p", "name,mars.param", "x.tgm"]);
    assert!(r.ok, "{}", r.err);
    let rows: Vec<serde_json::Value> = r
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[1]["message"], 1);
    assert_eq!(rows[1]["object"], 0);
    assert_eq!(rows[1]["keys"]["name"], "f1");
    assert_eq!(rows[1]["keys"]["mars.param"], "p1");
    let r = tgm_in(d.path(), &["salvage", "-j", "x.tgm"]);
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(doc["intact_messages"], 2);
    assert_eq!(doc["skipped"].as_array().unwrap().len(), 0);
    let r = tgm_in(d.path(), &["info", "-j", "x.tgm"]);
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(doc["messages"], 2);
    assert_eq!(doc["damage"].as_array().unwrap().len(), 0);
}

#[test]
fn demo_removes_its_temporary_files() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tgm"))
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bit-identical"));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn errors_name_the_output_never_its_temporary_file() {
    let d = fixture();
    let r = tgm_in(d.path(), &["import", "a.npy", "-o", "nodir/x.tgm"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("nodir/x.tgm: "), "{}", r.err);
    assert!(!r.err.contains("tgm-partial"), "{}", r.err);
}

/// `-j` of every writing command: one JSON object on stdout naming each
/// output with its size (no ETag for a local file); stdout as an output
/// is refused beside it, before anything is written.
#[test]
fn writing_commands_report_their_outputs_with_j() {
    let d = fixture();
    archive(&d.path().join("x.tgm"), 3);
    let cases: &[(&[&str], &[&str])] = &[
        (&["copy", "-j", "x.tgm", "c.tgm"], &["c.tgm"]),
        (&["merge", "-j", "x.tgm", "-o", "m.tgm"], &["m.tgm"]),
        (&["set", "-j", "-s", "step=1", "x.tgm", "s.tgm"], &["s.tgm"]),
        (&["reshuffle", "-j", "x.tgm", "-o", "r.tgm"], &["r.tgm"]),
        (
            &["recompress", "-j", "x.tgm", "z.tgm", "--compression", "lz4"],
            &["z.tgm"],
        ),
        (
            &["split", "-j", "x.tgm", "-o", "p[index].tgm"],
            &["p0.tgm", "p1.tgm", "p2.tgm"],
        ),
        (&["index", "-j", "x.tgm", "-o", "x.tgmc"], &["x.tgmc"]),
        (&["refs", "-j", "x.tgm", "-o", "x.json"], &["x.json"]),
    ];
    for (args, outputs) in cases {
        let r = tgm_in(d.path(), args);
        assert!(r.ok, "{args:?}: {}", r.err);
        let doc: serde_json::Value = serde_json::from_str(r.out.trim())
            .unwrap_or_else(|e| panic!("{args:?}: -j printed {:?}: {e}", r.out));
        let got: Vec<(String, u64)> = doc["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .map(|o| {
                assert!(o["etag"].is_null(), "{args:?}: {o}");
                (
                    o["target"].as_str().unwrap().to_string(),
                    o["bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, u64)> = outputs
            .iter()
            .map(|o| {
                let len = std::fs::metadata(d.path().join(o)).unwrap().len();
                (o.to_string(), len)
            })
            .collect();
        assert_eq!(got, want, "{args:?}");
    }
    let r = tgm_in(d.path(), &["copy", "-j", "x.tgm", "-"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("-j reports on stdout"), "{}", r.err);
    assert!(r.out.is_empty(), "{:?}", r.out);
}
