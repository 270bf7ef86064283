//! The viewer's files, found at run time so that building the CLI needs no
//! WebAssembly toolchain: `viewer/` (the page, from the repository's
//! `wasm/viewer`) and `pkg/` (the reader, made by `wasm/build.sh`) under
//! one root (`spec/wasm.md` §3).

use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};

/// Files the page cannot work without, relative to the root.
const REQUIRED: [&str; 4] = [
    "viewer/index.html",
    "viewer/viewer.js",
    "pkg/tgm.js",
    "pkg/tgm_wasm_bg.wasm",
];

/// The folders the page loads files from.
const FOLDERS: [&str; 2] = ["viewer", "pkg"];

/// A root holding the viewer's files.
#[derive(Debug, Clone)]
pub struct Assets {
    root: PathBuf,
}

impl Assets {
    /// The first root with every required file: `explicit` (`--assets`
    /// or `TGM_VIEWER_ASSETS`) alone when given, else `share/tgm/viewer`
    /// beside the executable's folder, else the source tree's `wasm/`.
    pub fn find(explicit: Option<&Path>) -> CliResult<Assets> {
        let candidates: Vec<PathBuf> = match explicit {
            Some(p) => vec![p.to_path_buf()],
            None => {
                let mut v = Vec::new();
                if let Some(bin) = std::env::current_exe().ok().and_then(|e| {
                    e.parent()
                        .and_then(Path::parent)
                        .map(|p| p.join("share/tgm/viewer"))
                }) {
                    v.push(bin);
                }
                v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../wasm"));
                v
            }
        };
        for root in &candidates {
            if REQUIRED.iter().all(|f| root.join(f).is_file()) {
                return Ok(Assets { root: root.clone() });
            }
        }
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        Err(CliError::Failed(format!(
            "the viewer's files ({}) were not found in {}: build them with wasm/build.sh, \
             or name their folder with --assets DIR",
            REQUIRED.join(", "),
            looked.join(", ")
        )))
    }

    /// The file serving URL path `path`: `/` is the page, `/viewer/NAME`
    /// and `/pkg/NAME` the files there; anything else (other folders,
    /// names with separators or leading dots) is none.
    pub fn file(&self, path: &str) -> Option<PathBuf> {
        if path == "/" || path == "/index.html" {
            return Some(self.root.join("viewer/index.html"));
        }
        let rest = path.strip_prefix('/')?;
        let (folder, name) = rest.split_once('/')?;
        let plain = !name.is_empty()
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !plain || !FOLDERS.contains(&folder) {
            return None;
        }
        let p = self.root.join(folder).join(name);
        p.is_file().then_some(p)
    }

    /// Every file of a static site: (path in the site, source file).
    /// The page becomes the site's `index.html`.
    pub fn site_files(&self) -> CliResult<Vec<(PathBuf, PathBuf)>> {
        let mut out = vec![(
            PathBuf::from("index.html"),
            self.root.join("viewer/index.html"),
        )];
        for folder in FOLDERS {
            let dir = self.root.join(folder);
            let entries = std::fs::read_dir(&dir).map_err(|e| crate::error::at_path(&dir, e))?;
            let mut names = Vec::new();
            for e in entries {
                let e = e.map_err(|e| crate::error::at_path(&dir, e))?;
                let name = e.file_name().to_string_lossy().into_owned();
                if self.file(&format!("/{folder}/{name}")).is_some() && name != "index.html" {
                    names.push(name);
                }
            }
            names.sort();
            out.extend(
                names
                    .into_iter()
                    .map(|n| (Path::new(folder).join(&n), dir.join(&n))),
            );
        }
        Ok(out)
    }
}

/// The Content-Type of a file served by name.
pub fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("ts") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A folder with the required files, each holding its own name (tests).
#[cfg(test)]
pub fn fake_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in REQUIRED {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, f).unwrap();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_in_the_two_folders_are_served() {
        let d = fake_root();
        let a = Assets::find(Some(d.path())).unwrap();
        assert!(a.file("/").unwrap().ends_with("viewer/index.html"));
        assert!(a.file("/pkg/tgm.js").is_some());
        for bad in [
            "/pkg/../viewer/index.html",
            "/pkg/",
            "/other/tgm.js",
            "/pkg/.hidden",
            "/pkg/missing.js",
            "/viewer/sub/x.js",
            "pkg/tgm.js",
        ] {
            assert!(a.file(bad).is_none(), "{bad}");
        }
        let site: Vec<_> = a
            .site_files()
            .unwrap()
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(
            site,
            [
                "index.html",
                "viewer/viewer.js",
                "pkg/tgm.js",
                "pkg/tgm_wasm_bg.wasm"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_root_without_the_built_reader_is_refused_naming_the_build() {
        let d = fake_root();
        std::fs::remove_file(d.path().join("pkg/tgm_wasm_bg.wasm")).unwrap();
        let e = Assets::find(Some(d.path())).unwrap_err().to_string();
        assert!(e.contains("wasm/build.sh"), "{e}");
        assert!(e.contains(&d.path().display().to_string()), "{e}");
    }
}
