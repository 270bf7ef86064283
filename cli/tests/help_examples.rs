//! Every example that `--help` of a command working on archives and
//! arrays ends with runs, as printed, through `sh` in a directory holding
//! the files it names (issue 25 item 7). The converters' examples need
//! external data and libraries; their suites run them.

mod common;

use std::path::Path;
use std::process::Command;

use tgm::cbor::Value;
use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

/// The commands whose examples run here.
const COMMANDS: [&str; 15] = [
    "info",
    "ls",
    "dump",
    "get",
    "stats",
    "set",
    "copy",
    "merge",
    "split",
    "reshuffle",
    "validate",
    "import",
    "export",
    "salvage",
    "recompress",
];

/// The example lines at the end of `tgm CMD --help`.
fn examples(cmd: &str) -> Vec<String> {
    let r = common::tgm_in(Path::new("."), &[cmd, "--help"]);
    assert!(r.ok, "{cmd}: {}", r.err);
    let tail = r
        .out
        .rsplit_once("Example")
        .unwrap_or_else(|| panic!("{cmd}: --help has no example:\n{}", r.out))
        .1;
    tail.lines()
        .filter_map(|l| l.strip_prefix("  tgm "))
        .map(|l| format!("tgm {l}"))
        .collect()
}

/// One message of two 4 × 5 float64 fields with MARS keys the examples
/// select on.
fn archive(path: &Path) {
    let field =
        |k: f64| -> Vec<u8> { (0..20).flat_map(|i| (k + i as f64).to_ne_bytes()).collect() };
    let entry = |param: &str, level: u64| {
        tgm::Map::from_iter([
            (
                "mars".to_string(),
                Value::text_map([
                    ("class", Value::Text("od".into())),
                    ("param", Value::Text(param.into())),
                    ("levelist", Value::Uint(level)),
                ]),
            ),
            ("step".to_string(), Value::Uint(6)),
        ])
    };
    let d = ObjectDescriptor::new(Dtype::Float64, vec![4, 5]);
    let (a, b) = (field(280.0), field(1000.0));
    let meta = GlobalMetadata::with_base(vec![entry("2t", 850), entry("130", 500)]);
    let msg = tgm::encode(&meta, &[(&d, &a[..]), (&d, &b[..])], &EncodeOptions::new()).unwrap();
    std::fs::write(path, msg).unwrap();
}

/// A directory with every file the examples read; `out.tgm` only when the
/// example reads it rather than writes it.
fn fixture(with_out: bool) -> tempfile::TempDir {
    let d = common::fixture();
    let p = |n: &str| d.path().join(n);
    archive(&p("in.tgm"));
    for name in ["a.tgm", "b.tgm", "streamed.tgm"] {
        std::fs::copy(p("in.tgm"), p(name)).unwrap();
    }
    let whole = std::fs::read(p("in.tgm")).unwrap();
    std::fs::write(
        p("damaged.tgm"),
        [&whole[..], &whole[..whole.len() / 2]].concat(),
    )
    .unwrap();
    common::f64_npy(&p("c.npy"), &[1.0, 2.0]);
    common::f64_npy(&p("t.npy"), &[280.0, 281.0, 282.5]);
    let r = common::tgm_in(d.path(), &["export", "in.tgm", "-o", "exported"]);
    assert!(r.ok, "{}", r.err);
    if with_out {
        std::fs::copy(p("in.tgm"), p("out.tgm")).unwrap();
    }
    d
}

#[test]
fn every_help_example_runs() {
    let bin = Path::new(env!("CARGO_BIN_EXE_tgm")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for cmd in COMMANDS {
        let lines = examples(cmd);
        assert!(!lines.is_empty(), "{cmd}: no example line");
        for line in lines {
            let writes_out =
                matches!(cmd, "set" | "recompress" | "import") && !line.contains("--append");
            let d = fixture(!writes_out);
            let o = Command::new("sh")
                .args(["-c", &line])
                .current_dir(d.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            // salvage exits 1 when it skipped damaged bytes, as it must here.
            let want = if cmd == "salvage" { 1 } else { 0 };
            assert_eq!(o.status.code(), Some(want), "{line}: {err}");
        }
    }
}
