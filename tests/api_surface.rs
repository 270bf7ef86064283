//! The public surface stays the one `spec/api.md` lists: every public
//! module and every crate-root re-export of `src/lib.rs` is named there,
//! and no shipped door (CLI, Python, C, WebAssembly, converters, tools)
//! reaches into the hidden `tgm::__fuzz`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Top-level `pub mod NAME` lines of `lib.rs` (the hidden module aside;
/// the modules inside it are indented).
fn public_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches([';', '{', ' ']).to_string())
        .filter(|m| !m.starts_with("__"))
        .collect()
}

/// The names a top-level `pub use …;` of `lib.rs` brings to the crate root.
fn root_reexports(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = lib;
    while let Some(at) = rest.find("\npub use ") {
        let stmt = &rest[at + "\npub use ".len()..];
        let end = stmt.find(';').expect("a `pub use` ends with `;`");
        let body = &stmt[..end];
        let list = match (body.find('{'), body.rfind('}')) {
            (Some(a), Some(b)) => &body[a + 1..b],
            _ => body.rsplit("::").next().unwrap_or(body),
        };
        names.extend(
            list.split(',')
                .map(|n| n.trim().rsplit(" as ").next().unwrap_or("").trim())
                .filter(|n| !n.is_empty())
                .map(str::to_string),
        );
        rest = &stmt[end..];
    }
    names
}

#[test]
fn spec_api_names_every_public_module_and_root_item() {
    let lib = read("src/lib.rs");
    let spec = read("spec/api.md");
    let modules = public_modules(&lib);
    assert!(modules.len() > 10, "parsed {modules:?}");
    for m in &modules {
        assert!(
            spec.contains(&format!("- `{m}`")),
            "spec/api.md has no line for the public module `{m}`"
        );
    }
    let items = root_reexports(&lib);
    assert!(items.iter().any(|i| i == "TgmFile"), "parsed {items:?}");
    for i in &items {
        assert!(
            spec.contains(&format!("`{i}`")),
            "spec/api.md does not name the root item `{i}`"
        );
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "target") {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_shipped_door_uses_the_hidden_module() {
    let mut files = Vec::new();
    for door in ["cli", "python/src", "ffi", "wasm", "convert", "tools"] {
        rust_files(&root().join(door), &mut files);
    }
    assert!(files.len() > 20, "found only {files:?}");
    let users: Vec<_> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("__fuzz")))
        .collect();
    assert!(
        users.is_empty(),
        "tgm::__fuzz used outside tests and fuzz targets: {users:?}"
    );
}
