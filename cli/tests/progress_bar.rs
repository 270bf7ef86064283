//! The progress bar seen from a real terminal: `tgm import` and
//! `tgm export` of one large object run under a pseudo-terminal (the
//! `script` utility) draw a bar that advances per chunk, with its rate and
//! time left; with stderr sent to a file, nothing of it is written.

mod common;

use std::path::Path;
use std::process::Command;

/// Elements of the object: 256 MiB of float64.
const N: usize = 32 << 20;

/// Runs `tgm ARGS` (with `extra` shell text after it, a redirection) in
/// `dir` under a pseudo-terminal; returns what the terminal received, or
/// `None` when `script` is missing.
fn on_terminal(dir: &Path, args: &str, extra: &str) -> Option<String> {
    let tgm = env!("CARGO_BIN_EXE_tgm");
    let line = format!("'{tgm}' {args} {extra}");
    let out = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("COLUMNS", "160")
        .stdin(std::process::Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            common::skip::skip(&format!("`script` (util-linux) cannot run here: {e}"));
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "tgm {args} failed: {text}");
    Some(text)
}

/// The distinct percentages strictly between 0 and 100 drawn in `text` on
/// bars labelled `label`.
fn intermediate_percentages(text: &str, label: &str) -> std::collections::BTreeSet<u32> {
    text.split(['\r', '\n', '\x1b'])
        .filter(|drawn| drawn.contains(label))
        .flat_map(|drawn| drawn.split('%'))
        .filter_map(|before| {
            let digits: String = before
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.chars().rev().collect::<String>().parse().ok()
        })
        .filter(|p| (1..100).contains(p))
        .collect()
}

/// A bar labelled `what` advanced several times, with a rate and a time
/// left.
fn assert_bar(text: &str, what: &str) {
    let seen = intermediate_percentages(text, what);
    assert!(
        seen.len() >= 3,
        "{what}: few steps drawn {seen:?}: {text:?}"
    );
    assert!(text.contains("/s,"), "{what}: no rate: {text:?}");
    assert!(text.contains("left)"), "{what}: no time left: {text:?}");
}

#[test]
#[ignore = "256 MiB through a pseudo-terminal: run by .ci/run's test stage"]
fn a_long_encode_and_decode_draw_an_advancing_bar_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<f64> = (0..N).map(|i| (i as f64 * 1e-5).sin() * 40.0).collect();
    common::f64_npy(&dir.path().join("big.npy"), &vals);
    drop(vals);
    let import = "import big.npy -o big.tgm --encoding simple_packing --compression szip";
    let Some(text) = on_terminal(dir.path(), import, "") else {
        return;
    };
    assert_bar(&text, "encoding");
    let Some(text) = on_terminal(dir.path(), "export big.tgm -o out", "") else {
        return;
    };
    assert_bar(&text, "decoding");

    // stderr to a file: no bar there, and none on the terminal.
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();
    let quiet = on_terminal(dir.path(), "export big.tgm -o out", "2>err.txt").unwrap();
    let err = std::fs::read_to_string(dir.path().join("err.txt")).unwrap();
    assert!(!err.contains('%') && !err.contains('\r'), "{err:?}");
    assert!(intermediate_percentages(&quiet, "").is_empty(), "{quiet:?}");
    let import = format!("{import} -f");
    let quiet = on_terminal(dir.path(), &import, "2>err.txt").unwrap();
    let err = std::fs::read_to_string(dir.path().join("err.txt")).unwrap();
    assert!(!err.contains('%') && !err.contains('\r'), "{err:?}");
    assert!(intermediate_percentages(&quiet, "").is_empty(), "{quiet:?}");
}
