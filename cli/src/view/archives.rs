//! The archives a viewer shows: a local file, the Tensogram files of a
//! directory, or a URL the browser reads by range requests itself. Only
//! archives are served: a file must start with the Tensogram magic, and a
//! directory's entry must resolve inside the directory (`spec/wasm.md` §3).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{at_path, CliResult};

/// One archive of the viewer's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Archive {
    /// A file served (or copied into a site) as `data/<index>.tgm`.
    Local {
        /// Shown in the page's list: the file's name, never its folder.
        name: String,
        /// Where it is, with every symbolic link resolved.
        path: PathBuf,
    },
    /// An `http(s)://` URL the page fetches directly (the server must
    /// answer range requests and, from another origin, allow CORS).
    Remote {
        /// The URL.
        url: String,
    },
}

/// The archives named by `input`, and what was left out of a directory.
#[derive(Debug)]
pub struct Collected {
    /// What the viewer shows.
    pub archives: Vec<Archive>,
    /// One line per file of a directory left out: its path and why.
    pub skipped: Vec<String>,
}

/// Why `path` (resolved) is not an archive, if it is not.
fn not_an_archive(path: &Path) -> Option<String> {
    let mut magic = [0u8; 8];
    match File::open(path).and_then(|mut f| f.read_exact(&mut magic)) {
        Ok(()) if &magic == tgm::wire::MAGIC => None,
        Ok(()) => Some("does not start with the Tensogram magic TENSOGRM".into()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Some("is shorter than the Tensogram magic TENSOGRM".into())
        }
        Err(e) => Some(e.to_string()),
    }
}

/// The archives named by `input`: a URL, a Tensogram file (refused if it
/// is not one), or a directory (its `.tgm` files that are archives and
/// resolve inside it, sorted by name; none is an error).
pub fn collect(input: &str) -> CliResult<Collected> {
    if input.starts_with("http://") || input.starts_with("https://") {
        let archives = vec![Archive::Remote {
            url: input.to_string(),
        }];
        return Ok(Collected {
            archives,
            skipped: Vec::new(),
        });
    }
    let path = Path::new(input);
    let meta = std::fs::metadata(path).map_err(|e| at_path(path, e))?;
    if !meta.is_dir() {
        let real = std::fs::canonicalize(path).map_err(|e| at_path(path, e))?;
        if let Some(why) = not_an_archive(&real) {
            return Err(at_path(
                path,
                format!("{why}: tgm view serves archives only"),
            ));
        }
        return Ok(Collected {
            archives: vec![local(path, real)],
            skipped: Vec::new(),
        });
    }
    let root = std::fs::canonicalize(path).map_err(|e| at_path(path, e))?;
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| at_path(path, e))? {
        let p = entry.map_err(|e| at_path(path, e))?.path();
        if p.extension().is_none_or(|x| x != "tgm") {
            continue;
        }
        let why = match std::fs::canonicalize(&p) {
            Err(e) => Some(format!("cannot be resolved ({e})")),
            Ok(real) if !real.starts_with(&root) => Some(format!(
                "leads to {}, outside the served folder",
                real.display()
            )),
            Ok(real) if !real.is_file() => continue,
            Ok(real) => match not_an_archive(&real) {
                Some(why) => Some(why),
                None => {
                    found.push((p.clone(), real));
                    None
                }
            },
        };
        if let Some(why) = why {
            skipped.push(format!("{}: {why}: not served", p.display()));
        }
    }
    skipped.sort();
    if found.is_empty() {
        return Err(at_path(
            path,
            "no .tgm files in this directory are archives it holds",
        ));
    }
    found.sort();
    Ok(Collected {
        archives: found.into_iter().map(|(p, real)| local(&p, real)).collect(),
        skipped,
    })
}

/// The archives of every input in order (each as [`collect`] finds
/// them); a name shown twice gets ` (2)`, ` (3)`… so that the page's
/// list tells them apart.
pub fn collect_all(inputs: &[String]) -> CliResult<Collected> {
    let mut all = Collected {
        archives: Vec::new(),
        skipped: Vec::new(),
    };
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for input in inputs {
        let c = collect(input)?;
        all.skipped.extend(c.skipped);
        for mut a in c.archives {
            if let Archive::Local { name, .. } = &mut a {
                let n = seen.entry(name.clone()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    *name = format!("{name} ({n})");
                }
            }
            all.archives.push(a);
        }
    }
    Ok(all)
}

fn local(named: &Path, path: PathBuf) -> Archive {
    let name = named.file_name().map_or_else(
        || "archive.tgm".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Archive::Local { name, path }
}

/// Opens a served archive for one request: it must still be where it was
/// found (no symbolic link put in its way since) and still start with the
/// magic. The error says why, without naming the file.
pub fn open(path: &Path) -> Result<File, String> {
    match std::fs::canonicalize(path) {
        Ok(real) if real == path => {}
        Ok(_) => return Err("it has moved behind a symbolic link".into()),
        Err(e) => return Err(e.to_string()),
    }
    if let Some(why) = not_an_archive(path) {
        return Err(format!("it {why}"));
    }
    File::open(path).map_err(|e| e.to_string())
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
    fn a_directory_lists_its_archives_sorted_and_says_what_it_left_out() {
        let d = tempfile::tempdir().unwrap();
        for n in ["b.tgm", "a.tgm"] {
            std::fs::write(d.path().join(n), b"TENSOGRM...").unwrap();
        }
        std::fs::write(d.path().join("notes.txt"), b"x").unwrap();
        std::fs::write(d.path().join("short.tgm"), b"TENSO").unwrap();
        std::fs::write(d.path().join("text.tgm"), b"not an archive").unwrap();
        let c = collect(d.path().to_str().unwrap()).unwrap();
        let names: Vec<_> = c
            .archives
            .iter()
            .map(|a| match a {
                Archive::Local { name, .. } => name.as_str(),
                Archive::Remote { .. } => "remote",
            })
            .collect();
        assert_eq!(names, ["a.tgm", "b.tgm"]);
        assert_eq!(c.skipped.len(), 2, "{:?}", c.skipped);
        assert!(c.skipped[0].contains("short.tgm") && c.skipped[0].contains("shorter"));
        assert!(c.skipped[1].contains("text.tgm") && c.skipped[1].contains("TENSOGRM"));
        let json: serde_json::Value = serde_json::from_str(&listing(&c.archives)).unwrap();
        assert_eq!(json[1]["url"], "data/1.tgm");
        let empty = tempfile::tempdir().unwrap();
        let e = collect(empty.path().to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("no .tgm files"), "{e}");
        let e = collect("/nonexistent/x.tgm").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.tgm"), "{e}");
        let u = collect("https://example.org/a.tgm").unwrap();
        assert_eq!(href(0, &u.archives[0]), "https://example.org/a.tgm");
    }

    #[test]
    fn several_inputs_are_listed_in_order_with_repeated_names_told_apart() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for n in ["b.tgm", "a.tgm", "sub/a.tgm"] {
            std::fs::write(d.path().join(n), b"TENSOGRM...").unwrap();
        }
        let arg = |n: &str| d.path().join(n).to_str().unwrap().to_string();
        let c = collect_all(&[arg("b.tgm"), arg("sub"), arg("a.tgm")]).unwrap();
        let json: serde_json::Value = serde_json::from_str(&listing(&c.archives)).unwrap();
        let names: Vec<_> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b.tgm", "a.tgm", "a.tgm (2)"]);
        assert_eq!(json[2]["url"], "data/2.tgm");
        let e = collect_all(&[arg("a.tgm"), arg("missing.tgm")]).unwrap_err();
        assert!(e.to_string().contains("missing.tgm"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_swapped_in_after_the_start_is_not_opened() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.tgm");
        std::fs::write(&a, b"TENSOGRM").unwrap();
        let c = collect(a.to_str().unwrap()).unwrap();
        let Archive::Local { path, .. } = &c.archives[0] else {
            panic!()
        };
        assert!(open(path).is_ok());
        let elsewhere = d.path().join("elsewhere");
        std::fs::write(&elsewhere, b"TENSOGRM secret").unwrap();
        std::fs::remove_file(&a).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &a).unwrap();
        let e = open(path).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_file(&a).unwrap();
        std::fs::write(&a, b"plain text").unwrap();
        let e = open(path).unwrap_err();
        assert!(e.contains("TENSOGRM"), "{e}");
    }
}
