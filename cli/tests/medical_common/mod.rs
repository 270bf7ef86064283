//! Helpers shared by the medical integration tests.

use std::process::Command;

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
