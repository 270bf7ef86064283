//! `tgm view --site DIR`: the page, the reader, `archives.json` and copies
//! of local archives as static files, for any web server or object store
//! that answers range requests (`spec/wasm.md` §3). Nothing that exists is
//! replaced: every target is checked first, and a failed write removes
//! what this run created.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::archives::{self, Archive};
use super::assets::{Asset, Assets};
use crate::error::{at_path, CliResult};

/// Where one file of the site comes from.
enum Source {
    Page(Asset),
    Copy(PathBuf),
    Text(String),
}

/// Writes the site into `dir` (created if missing); returns the number of
/// files written.
pub fn write(dir: &Path, assets: &Assets, list: &[Archive]) -> CliResult<usize> {
    let mut plan: Vec<(PathBuf, Source)> = assets
        .site_files()?
        .into_iter()
        .map(|(rel, a)| (rel, Source::Page(a)))
        .collect();
    plan.push((
        PathBuf::from("archives.json"),
        Source::Text(archives::listing(list)),
    ));
    for (i, a) in list.iter().enumerate() {
        if let Archive::Local { path, .. } = a {
            plan.push((
                PathBuf::from(archives::href(i, a)),
                Source::Copy(path.clone()),
            ));
        }
    }
    for (rel, _) in &plan {
        let p = dir.join(rel);
        if p.exists() {
            return Err(at_path(
                &p,
                "exists; tgm view --site writes into a new or empty folder and replaces nothing",
            ));
        }
    }
    let mut made = Made::default();
    for (rel, src) in &plan {
        let p = dir.join(rel);
        if let Err(e) = made.file(&p, src) {
            made.undo();
            return Err(e);
        }
    }
    Ok(plan.len())
}

/// Files and folders this run created, to remove on failure.
#[derive(Default)]
struct Made {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Made {
    fn file(&mut self, p: &Path, src: &Source) -> CliResult<()> {
        if let Some(parent) = p.parent() {
            self.dir(parent)?;
        }
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map_err(|e| at_path(p, e))?;
        self.files.push(p.to_path_buf());
        match src {
            Source::Text(s) => out.write_all(s.as_bytes()).map_err(|e| at_path(p, e))?,
            Source::Page(a) => a.copy_to(&mut out, p)?,
            Source::Copy(from) => {
                let mut f = File::open(from).map_err(|e| at_path(from, e))?;
                std::io::copy(&mut f, &mut out).map_err(|e| at_path(p, e))?;
            }
        }
        out.sync_all().map_err(|e| at_path(p, e))
    }

    fn dir(&mut self, d: &Path) -> CliResult<()> {
        if d.as_os_str().is_empty() || d.is_dir() {
            return Ok(());
        }
        if let Some(parent) = d.parent() {
            self.dir(parent)?;
        }
        std::fs::create_dir(d).map_err(|e| at_path(d, e))?;
        self.dirs.push(d.to_path_buf());
        Ok(())
    }

    fn undo(&self) {
        for f in self.files.iter().rev() {
            let _ = std::fs::remove_file(f);
        }
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assets() -> (tempfile::TempDir, Assets) {
        let d = super::super::assets::fake_root();
        let a = Assets::find(Some(d.path())).unwrap();
        (d, a)
    }

    #[test]
    fn writes_the_page_the_listing_and_copies_and_replaces_nothing() {
        let (_keep, a) = assets();
        let work = tempfile::tempdir().unwrap();
        let arch = work.path().join("era5.tgm");
        std::fs::write(&arch, b"TENSOGRM archive bytes").unwrap();
        let list = archives::collect(arch.to_str().unwrap()).unwrap().archives;
        let site = work.path().join("site");
        assert_eq!(write(&site, &a, &list).unwrap(), 6);
        assert_eq!(
            std::fs::read(site.join("data/0.tgm")).unwrap(),
            b"TENSOGRM archive bytes"
        );
        assert_eq!(
            std::fs::read_to_string(site.join("index.html")).unwrap(),
            "viewer/index.html"
        );
        let json = std::fs::read_to_string(site.join("archives.json")).unwrap();
        assert!(json.contains("era5.tgm"), "{json}");
        // A second run refuses before writing anything.
        std::fs::remove_file(site.join("archives.json")).unwrap();
        let e = write(&site, &a, &list).unwrap_err().to_string();
        assert!(e.contains("exists"), "{e}");
        assert!(!site.join("archives.json").exists());
    }

    #[test]
    fn a_failed_copy_removes_what_the_run_made() {
        let (_keep, a) = assets();
        let work = tempfile::tempdir().unwrap();
        let list = vec![Archive::Local {
            name: "gone.tgm".into(),
            path: work.path().join("gone.tgm"),
        }];
        let site = work.path().join("site");
        let e = write(&site, &a, &list).unwrap_err().to_string();
        assert!(e.contains("gone.tgm"), "{e}");
        assert!(!site.exists());
    }
}
