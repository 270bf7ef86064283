//! Which files `convert-dicom` reads from the paths it is given
//! (spec/convert.md "DICOM directories").
//!
//! A file named on the command line is always read (and an error if it is
//! not a DICOM image). A directory contributes its files in sorted name
//! order; hidden files, DICOMDIR media directories and files without the
//! DICOM prefix ("DICM" at byte 128) are skipped with a reason instead of
//! aborting the run. Sub-directories are skipped unless `recursive`, which
//! descends depth-first in sorted order and visits each directory and file
//! once (by canonical path), so symbolic-link loops end.

use std::collections::HashSet;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{MedicalError, MedicalErrorKind, MedicalResult};

/// Why a file found in a directory was not read as an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// A name starting with `.`.
    Hidden,
    /// A DICOMDIR media directory (by name or by its SOP class).
    Dicomdir,
    /// No "DICM" prefix at byte 128: not a DICOM Part 10 file.
    NotDicom,
    /// A DICOM file without pixel data (report, presentation state…);
    /// holds its SOP class UID when present.
    NoPixelData(Option<String>),
    /// A sub-directory while not recursing.
    SubDirectory,
    /// A directory or file already visited through another path
    /// (a symbolic link); holds the first path.
    AlreadyVisited(PathBuf),
    /// A listed DICOM file that cannot be converted (a colour image, an
    /// unsupported transfer syntax, a file tgm cannot read), left out
    /// when asked ([`Reading`](super::dicom::Reading)); holds why.
    Unsupported(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Hidden => f.write_str("hidden file"),
            SkipReason::Dicomdir => f.write_str("DICOMDIR media directory, not an image"),
            SkipReason::NotDicom => {
                f.write_str("not a DICOM file (no \"DICM\" prefix at byte 128)")
            }
            SkipReason::NoPixelData(Some(class)) => {
                write!(f, "DICOM file without PixelData (SOP class {class})")
            }
            SkipReason::NoPixelData(None) => f.write_str("DICOM file without PixelData"),
            SkipReason::SubDirectory => f.write_str("sub-directory (use --recursive to read it)"),
            SkipReason::AlreadyVisited(first) => {
                write!(f, "already read as {}", first.display())
            }
            SkipReason::Unsupported(why) => write!(f, "not converted: {why}"),
        }
    }
}

/// A path left out of the conversion and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The path as found (under the directory the user gave).
    pub path: PathBuf,
    /// Why it was left out.
    pub reason: SkipReason,
}

/// A file to read: its path and whether it was found in a directory
/// (then a non-image DICOM file is skipped rather than refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Path to the file.
    pub path: PathBuf,
    /// Found by listing a directory, not named by the user.
    pub listed: bool,
}

/// The files to read, in order, and what was skipped.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Files to read.
    pub files: Vec<Candidate>,
    /// Paths left out, in the order met.
    pub skipped: Vec<Skipped>,
}

impl SkipReason {
    /// The reason recorded when the file `path`, found in a directory,
    /// cannot be converted and is left out: the error `e` without the
    /// path it starts with ("PATH: why", "PATH is why").
    pub fn unsupported(path: &Path, e: &MedicalError) -> SkipReason {
        let shown = path.display().to_string();
        let error = e.detail();
        let why = error
            .strip_prefix(&shown)
            .and_then(|rest| rest.strip_prefix(": ").or(rest.strip_prefix(" is ")))
            .unwrap_or(error);
        SkipReason::Unsupported(why.to_string())
    }
}

/// SOP class of a DICOMDIR (Media Storage Directory Storage, PS3.4 Annex F).
pub const DICOMDIR_SOP_CLASS: &str = "1.2.840.10008.1.3.10";

/// Expands `inputs` (files and directories) into the files to read.
pub fn gather(inputs: &[PathBuf], recursive: bool) -> MedicalResult<Gathered> {
    let mut walk = Walk {
        recursive,
        seen_dirs: HashSet::new(),
        seen_files: Vec::new(),
        out: Gathered::default(),
    };
    for p in inputs {
        if p.is_dir() {
            walk.directory(p)?;
        } else {
            walk.file(p, false)?;
        }
    }
    if walk.out.files.is_empty() {
        let skipped: Vec<String> = walk
            .out
            .skipped
            .iter()
            .map(|s| format!("{} ({})", s.path.display(), s.reason))
            .collect();
        return Err(if skipped.is_empty() {
            MedicalError::invalid_argument("no DICOM files given")
        } else {
            MedicalError::new(
                MedicalErrorKind::NotThisFormat,
                format!(
                    "no DICOM images among the inputs; skipped: {}",
                    skipped.join("; ")
                ),
            )
        });
    }
    Ok(walk.out)
}

struct Walk {
    recursive: bool,
    seen_dirs: HashSet<PathBuf>,
    /// Canonical path of each file taken, with the path it was taken as.
    seen_files: Vec<(PathBuf, PathBuf)>,
    out: Gathered,
}

impl Walk {
    fn skip(&mut self, path: &Path, reason: SkipReason) {
        self.out.skipped.push(Skipped {
            path: path.to_path_buf(),
            reason,
        });
    }

    fn canonical(path: &Path) -> MedicalResult<PathBuf> {
        std::fs::canonicalize(path).map_err(|e| MedicalError::io(path, "cannot resolve", e))
    }

    fn directory(&mut self, dir: &Path) -> MedicalResult {
        let canon = Self::canonical(dir)?;
        if !self.seen_dirs.insert(canon.clone()) {
            self.skip(dir, SkipReason::AlreadyVisited(canon));
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| MedicalError::io(dir, "cannot list", e))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(|e| MedicalError::io(dir, "cannot list", e))?;
        entries.sort();
        for p in entries {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if name.starts_with('.') {
                self.skip(&p, SkipReason::Hidden);
            } else if p.is_dir() {
                if self.recursive {
                    self.directory(&p)?;
                } else {
                    self.skip(&p, SkipReason::SubDirectory);
                }
            } else if name.eq_ignore_ascii_case("DICOMDIR") {
                self.skip(&p, SkipReason::Dicomdir);
            } else if !has_dicm_prefix(&p)? {
                self.skip(&p, SkipReason::NotDicom);
            } else {
                self.file(&p, true)?;
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, listed: bool) -> MedicalResult {
        let canon = Self::canonical(path)?;
        if let Some((_, first)) = self.seen_files.iter().find(|(c, _)| *c == canon) {
            let first = first.clone();
            self.skip(path, SkipReason::AlreadyVisited(first));
            return Ok(());
        }
        self.seen_files.push((canon, path.to_path_buf()));
        self.out.files.push(Candidate {
            path: path.to_path_buf(),
            listed,
        });
        Ok(())
    }
}

/// Whether `path` holds "DICM" at byte 128 (PS3.10 7.1).
fn has_dicm_prefix(path: &Path) -> MedicalResult<bool> {
    let f = std::fs::File::open(path).map_err(|e| MedicalError::io(path, "cannot open", e))?;
    let mut head = Vec::with_capacity(132);
    f.take(132)
        .read_to_end(&mut head)
        .map_err(|e| MedicalError::io(path, "cannot read", e))?;
    Ok(head.len() == 132 && &head[128..] == b"DICM")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dicm(path: &Path) {
        let mut b = vec![0u8; 128];
        b.extend_from_slice(b"DICM");
        std::fs::write(path, b).unwrap();
    }

    #[test]
    fn skips_hidden_dicomdir_non_dicom_and_sub_directories_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for n in ["b.dcm", "a.dcm", "DICOMDIR", ".hidden.dcm"] {
            dicm(&d.join(n));
        }
        std::fs::write(d.join("README.txt"), "notes").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        dicm(&d.join("sub/c.dcm"));
        let g = gather(&[d.to_path_buf()], false).unwrap();
        let files: Vec<_> = g.files.iter().map(|c| c.path.clone()).collect();
        assert_eq!(files, [d.join("a.dcm"), d.join("b.dcm")]);
        assert!(g.files.iter().all(|c| c.listed));
        let skipped: Vec<_> = g
            .skipped
            .iter()
            .map(|s| (s.path.clone(), s.reason.clone()))
            .collect();
        assert_eq!(
            skipped,
            [
                (d.join(".hidden.dcm"), SkipReason::Hidden),
                (d.join("DICOMDIR"), SkipReason::Dicomdir),
                (d.join("README.txt"), SkipReason::NotDicom),
                (d.join("sub"), SkipReason::SubDirectory),
            ]
        );
        let g = gather(&[d.to_path_buf()], true).unwrap();
        let files: Vec<_> = g.files.iter().map(|c| c.path.clone()).collect();
        assert_eq!(
            files,
            [d.join("a.dcm"), d.join("b.dcm"), d.join("sub/c.dcm")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_is_visited_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("s")).unwrap();
        dicm(&d.join("s/x.dcm"));
        std::os::unix::fs::symlink(d, d.join("s/loop")).unwrap();
        let g = gather(&[d.to_path_buf()], true).unwrap();
        assert_eq!(g.files.len(), 1);
        assert!(g.skipped.iter().any(
            |s| s.path == d.join("s/loop") && matches!(s.reason, SkipReason::AlreadyVisited(_))
        ));
    }

    #[test]
    fn nothing_to_read_names_what_was_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let e = gather(&[dir.path().to_path_buf()], false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("notes.txt") && e.contains("DICM"), "{e}");
    }
}
