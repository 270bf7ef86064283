//! The book's command-line reference (`docs/src/cli`, its entries in
//! `docs/src/SUMMARY.md`) is what this build's `--help` prints:
//! `tgm cli-reference --check` fails on any page that differs.
//! `TGM_BLESS=1` rewrites the pages instead; a build with the `grib` and
//! `netcdf` features renders every page (`.ci/weather.sh` runs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src")
}

fn cli_reference(dir: &Path, check: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tgm"));
    c.arg("cli-reference").arg(dir);
    if check {
        c.arg("--check");
    }
    c.output().unwrap()
}

#[test]
fn the_books_command_line_reference_is_this_builds_help() {
    let bless = std::env::var_os("TGM_BLESS").is_some();
    let o = cli_reference(&book(), !bless);
    assert!(
        o.status.success(),
        "the command-line reference is stale (TGM_BLESS=1 rewrites it):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_changed_page_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cli")).unwrap();
    std::fs::copy(book().join("SUMMARY.md"), dir.path().join("SUMMARY.md")).unwrap();
    for e in std::fs::read_dir(book().join("cli")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join("cli").join(e.file_name())).unwrap();
    }
    let page = dir.path().join("cli/ls.md");
    let edited = std::fs::read_to_string(&page)
        .unwrap()
        .replace("--where", "--wher");
    std::fs::write(&page, &edited).unwrap();
    std::fs::remove_file(dir.path().join("cli/info.md")).unwrap();
    let o = cli_reference(dir.path(), true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cli/ls.md: differs"), "{err}");
    assert!(err.contains("cli/info.md: missing"), "{err}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), edited);
    assert!(!dir.path().join("cli/info.md").exists());
}
