//! The archives a viewer shows: a local file, the `.tgm` files of a
//! directory, or a URL the browser reads by range requests itself.

use std::path::{Path, PathBuf};

use crate::error::{at_path, CliResult};

/// One archive of the viewer's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Archive {
    /// A file served (or copied into a site) as `data/<index>.tgm`.
    Local {
        /// Shown in the page's list.
        name: String,
        /// Where it is.
        path: PathBuf,
    },
    /// An `http(s)://` URL the page fetches directly (the server must
    /// answer range requests and, from another origin, allow CORS).
    Remote {
        /// The URL.
        url: String,
    },
}

/// The archives named by `input`: a URL, a `.tgm` file, or a directory
/// (its `.tgm` files, sorted by name; none is an error).
pub fn collect(input: &str) -> CliResult<Vec<Archive>> {
    if input.starts_with("http://") || input.starts_with("https://") {
        return Ok(vec![Archive::Remote {
            url: input.to_string(),
        }]);
    }
    let path = Path::new(input);
    let meta = std::fs::metadata(path).map_err(|e| at_path(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![local(path.to_path_buf())]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| at_path(path, e))? {
        let p = entry.map_err(|e| at_path(path, e))?.path();
        if p.extension().is_some_and(|x| x == "tgm") && p.is_file() {
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(at_path(path, "no .tgm files in this directory"));
    }
    files.sort();
    Ok(files.into_iter().map(local).collect())
}

fn local(path: PathBuf) -> Archive {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Archive::Local { name, path }
}

/// Where the page finds archive `i`: `data/<i>.tgm` for a local file.
pub fn href(i: usize, a: &Archive) -> String {
    match a {
        Archive::Local { .. } => format!("data/{i}.tgm"),
        Archive::Remote { url } => url.clone(),
    }
}

/// The page's `archives.json`: `[{"name", "url"}]`.
pub fn listing(archives: &[Archive]) -> String {
    let v: Vec<serde_json::Value> = archives
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let name = match a {
                Archive::Local { name, .. } => name.clone(),
                Archive::Remote { url } => url.clone(),
            };
            serde_json::json!({ "name": name, "url": href(i, a) })
        })
        .collect();
    serde_json::Value::Array(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_lists_its_tgm_files_sorted() {
        let d = tempfile::tempdir().unwrap();
        for n in ["b.tgm", "a.tgm", "notes.txt"] {
            std::fs::write(d.path().join(n), b"x").unwrap();
        }
        let v = collect(d.path().to_str().unwrap()).unwrap();
        let names: Vec<_> = v
            .iter()
            .map(|a| match a {
                Archive::Local { name, .. } => name.as_str(),
                Archive::Remote { .. } => "remote",
            })
            .collect();
        assert_eq!(names, ["a.tgm", "b.tgm"]);
        let json: serde_json::Value = serde_json::from_str(&listing(&v)).unwrap();
        assert_eq!(json[1]["url"], "data/1.tgm");
        let empty = tempfile::tempdir().unwrap();
        let e = collect(empty.path().to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("no .tgm files"), "{e}");
        let e = collect("/nonexistent/x.tgm").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.tgm"), "{e}");
        let u = collect("https://example.org/a.tgm").unwrap();
        assert_eq!(href(0, &u[0]), "https://example.org/a.tgm");
    }
}
