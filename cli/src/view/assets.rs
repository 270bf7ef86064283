//! The viewer's files: built into the executable (the page of
//! `wasm/viewer` and the reader package `wasm/pkg` that `wasm/build.sh`
//! makes and the repository holds), or, for developers, read from a folder
//! named by `--assets` with `viewer/` and `pkg/` under it (`spec/wasm.md`
//! §3).

use std::fs::File;
use std::path::{Path, PathBuf};

use super::response::Body;
use crate::error::{at_path, CliError, CliResult};

/// Files the page cannot work without, relative to the root.
const REQUIRED: [&str; 4] = [
    "viewer/index.html",
    "viewer/viewer.js",
    "pkg/tgm.js",
    "pkg/tgm_wasm_bg.wasm",
];

/// The folders the page loads files from.
const FOLDERS: [&str; 2] = ["viewer", "pkg"];

/// The files built into the executable: the page and what it loads.
const EMBEDDED: [(&str, &[u8]); 6] = [
    (
        "viewer/index.html",
        include_bytes!("../../../wasm/viewer/index.html"),
    ),
    (
        "viewer/viewer.css",
        include_bytes!("../../../wasm/viewer/viewer.css"),
    ),
    (
        "viewer/viewer.js",
        include_bytes!("../../../wasm/viewer/viewer.js"),
    ),
    ("pkg/tgm.js", include_bytes!("../../../wasm/pkg/tgm.js")),
    (
        "pkg/tgm_wasm.js",
        include_bytes!("../../../wasm/pkg/tgm_wasm.js"),
    ),
    (
        "pkg/tgm_wasm_bg.wasm",
        include_bytes!("../../../wasm/pkg/tgm_wasm_bg.wasm"),
    ),
];

/// Where the viewer's files come from.
#[derive(Debug, Clone)]
pub enum Assets {
    /// The copies built into the executable.
    Embedded,
    /// A folder holding `viewer/` and `pkg/` (`--assets DIR`).
    Dir(PathBuf),
}

/// One file of the page: its path in the site (`viewer/viewer.js`) and
/// its bytes.
#[derive(Debug, Clone)]
pub struct Asset {
    /// The path under the site's root, `/`-separated.
    pub rel: String,
    content: Content,
}

#[derive(Debug, Clone)]
enum Content {
    Embedded(&'static [u8]),
    File(PathBuf),
}

impl Asset {
    /// The body that serves it.
    pub fn body(&self) -> CliResult<Body> {
        match &self.content {
            Content::Embedded(b) => Ok(Body::Static(b)),
            Content::File(p) => {
                let f = File::open(p).map_err(|e| at_path(p, e))?;
                let len = f.metadata().map_err(|e| at_path(p, e))?.len();
                Ok(Body::File(f, len))
            }
        }
    }

    /// Copies it to `out`.
    pub fn copy_to(&self, out: &mut impl std::io::Write, to: &Path) -> CliResult<()> {
        match &self.content {
            Content::Embedded(b) => out.write_all(b).map_err(|e| at_path(to, e)),
            Content::File(p) => {
                let mut f = File::open(p).map_err(|e| at_path(p, e))?;
                std::io::copy(&mut f, out)
                    .map(drop)
                    .map_err(|e| at_path(to, e))
            }
        }
    }

    /// Its Content-Type.
    pub fn content_type(&self) -> &'static str {
        content_type(Path::new(&self.rel))
    }
}

/// Whether `name` is a plain file name: letters, digits, `.`, `_`, `-`,
/// not starting with `.`.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

impl Assets {
    /// The built-in files, or those of `explicit` (`--assets` or
    /// `TGM_VIEWER_ASSETS`), which must hold every required file.
    pub fn find(explicit: Option<&Path>) -> CliResult<Assets> {
        let Some(root) = explicit else {
            return Ok(Assets::Embedded);
        };
        let missing: Vec<&str> = REQUIRED
            .into_iter()
            .filter(|f| !root.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(CliError::Failed(format!(
                "{}: the viewer's files {} are missing: build the reader with wasm/build.sh \
                 --out DIR/pkg and copy wasm/viewer to DIR/viewer, or leave out --assets \
                 (and TGM_VIEWER_ASSETS) to use the files built into tgm",
                root.display(),
                missing.join(", ")
            )));
        }
        Ok(Assets::Dir(root.to_path_buf()))
    }

    /// The file serving URL path `path`: `/` is the page, `/viewer/NAME`
    /// and `/pkg/NAME` the files there; anything else (other folders,
    /// names with separators or leading dots) is none.
    pub fn file(&self, path: &str) -> Option<Asset> {
        let rel = if path == "/" || path == "/index.html" {
            "viewer/index.html"
        } else {
            let rest = path.strip_prefix('/')?;
            let (folder, name) = rest.split_once('/')?;
            if !plain(name) || !FOLDERS.contains(&folder) {
                return None;
            }
            rest
        };
        let content = match self {
            Assets::Embedded => {
                let (_, b) = EMBEDDED.iter().find(|(r, _)| *r == rel)?;
                Content::Embedded(b)
            }
            Assets::Dir(root) => {
                let p = root.join(rel);
                if !p.is_file() {
                    return None;
                }
                Content::File(p)
            }
        };
        Some(Asset {
            rel: rel.to_string(),
            content,
        })
    }

    /// Every file of a static site: (path in the site, file). The page
    /// becomes the site's `index.html`.
    pub fn site_files(&self) -> CliResult<Vec<(PathBuf, Asset)>> {
        let mut rels: Vec<String> = match self {
            Assets::Embedded => EMBEDDED.iter().map(|(r, _)| r.to_string()).collect(),
            Assets::Dir(root) => {
                let mut v = Vec::new();
                for folder in FOLDERS {
                    let dir = root.join(folder);
                    for e in std::fs::read_dir(&dir).map_err(|e| at_path(&dir, e))? {
                        let e = e.map_err(|e| at_path(&dir, e))?;
                        v.push(format!("{folder}/{}", e.file_name().to_string_lossy()));
                    }
                }
                v
            }
        };
        rels.retain(|r| r != "viewer/index.html");
        rels.sort_by(|a, b| {
            let key = |r: &str| (FOLDERS.iter().position(|f| r.starts_with(f)), r.to_string());
            key(a).cmp(&key(b))
        });
        let mut out = Vec::new();
        let page = self.file("/").ok_or_else(|| {
            CliError::Failed("the viewer's page viewer/index.html is missing".into())
        })?;
        out.push((PathBuf::from("index.html"), page));
        for rel in rels {
            if let Some(a) = self.file(&format!("/{rel}")) {
                out.push((PathBuf::from(&rel), a));
            }
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

    fn read(a: &Asset) -> Vec<u8> {
        let mut v = Vec::new();
        a.copy_to(&mut v, Path::new("test")).unwrap();
        v
    }

    #[test]
    fn only_plain_names_in_the_two_folders_are_served() {
        let d = fake_root();
        for a in [Assets::find(Some(d.path())).unwrap(), Assets::Embedded] {
            assert_eq!(a.file("/").unwrap().rel, "viewer/index.html");
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
        }
        let a = Assets::find(Some(d.path())).unwrap();
        assert_eq!(read(&a.file("/pkg/tgm.js").unwrap()), b"pkg/tgm.js");
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
    fn the_built_in_files_are_the_page_and_a_webassembly_module() {
        let a = Assets::Embedded;
        let page = String::from_utf8(read(&a.file("/").unwrap())).unwrap();
        assert!(page.contains("viewer/viewer.js"), "{page}");
        let wasm = a.file("/pkg/tgm_wasm_bg.wasm").unwrap();
        assert_eq!(wasm.content_type(), "application/wasm");
        assert_eq!(&read(&wasm)[..4], b"\0asm");
        let site = a.site_files().unwrap();
        assert_eq!(site.len(), EMBEDDED.len());
        assert_eq!(site[0].0, PathBuf::from("index.html"));
    }

    #[test]
    fn a_root_without_the_built_reader_is_refused_naming_the_build() {
        let d = fake_root();
        std::fs::remove_file(d.path().join("pkg/tgm_wasm_bg.wasm")).unwrap();
        let e = Assets::find(Some(d.path())).unwrap_err().to_string();
        assert!(e.contains("wasm/build.sh"), "{e}");
        assert!(e.contains("pkg/tgm_wasm_bg.wasm"), "{e}");
        assert!(e.contains(&d.path().display().to_string()), "{e}");
    }
}
