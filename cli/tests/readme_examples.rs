//! Runs every `tgm ...` example of README.md's "Command line" section, in
//! order, in a temporary directory holding the fixture files they name.

use std::process::Command;

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

/// The `tgm` lines of the section's `sh` blocks.
fn examples() -> Vec<String> {
    let readme = include_str!("../../README.md");
    let start = readme.find("\n## Command line").expect("section exists");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let mut in_sh = false;
    let mut out = Vec::new();
    for line in rest[..end].lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if in_sh && line.starts_with("tgm ") {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn every_command_line_example_in_the_readme_runs() {
    let ex = examples();
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
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_tgm"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in &ex {
        let o = Command::new("sh")
            .arg("-c")
            .arg(line)
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "README example failed: {line}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
