//! Stdin where a path is needed: `-` among the inputs of a command whose
//! reader needs a file (memory-mapped arrays, ecCodes, netCDF-C) is first
//! copied to a private temporary file. Errors name [`STDIN`], never the
//! temporary path.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{usage, CliError, CliResult, WithPath};
use crate::output::is_dash;

/// How stdin is named in messages.
pub const STDIN: &str = "<stdin>";

/// A copy of stdin in a private (mode 0700) temporary directory, removed
/// on drop.
pub struct Spooled {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Spooled {
    /// The copy's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Copies stdin to `stdin<suffix(first bytes)>` in a private temporary
/// directory: readers that choose a format by the file name see the right
/// one, and a name taken from the file stem is `stdin`.
pub fn stdin_to_file(suffix: fn(&[u8]) -> &'static str) -> CliResult<Spooled> {
    let label = Path::new(STDIN);
    let mut input = std::io::stdin().lock();
    let mut head = Vec::with_capacity(16);
    (&mut input).take(16).read_to_end(&mut head).at(label)?;
    let dir = tempfile::Builder::new()
        .prefix(".tgm-stdin-")
        .tempdir()
        .at(label)?;
    let path = dir.path().join(format!("stdin{}", suffix(&head)));
    let mut f = std::fs::File::create_new(&path).at(label)?;
    f.write_all(&head).at(label)?;
    std::io::copy(&mut input, &mut f).at(label)?;
    f.flush().at(label)?;
    Ok(Spooled { _dir: dir, path })
}

/// Input paths with `-` (at most one) replaced by a spooled copy of stdin.
pub struct Inputs {
    paths: Vec<PathBuf>,
    spool: Option<Spooled>,
}

impl Inputs {
    /// Spools stdin when `inputs` holds `-`; two `-` are a usage error.
    pub fn new(inputs: &[PathBuf], suffix: fn(&[u8]) -> &'static str) -> CliResult<Self> {
        if inputs.iter().filter(|p| is_dash(p)).count() > 1 {
            return Err(usage("`-` (stdin) can be given only once"));
        }
        let spool = match inputs.iter().any(|p| is_dash(p)) {
            true => Some(stdin_to_file(suffix)?),
            false => None,
        };
        let paths = inputs
            .iter()
            .map(|p| match &spool {
                Some(s) if is_dash(p) => s.path().to_path_buf(),
                _ => p.clone(),
            })
            .collect();
        Ok(Inputs { paths, spool })
    }

    /// The paths to read.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// `e` with the temporary file's path replaced by [`STDIN`].
    pub fn relabel_err(&self, e: CliError) -> CliError {
        match e {
            CliError::Failed(s) => CliError::Failed(self.relabel(s)),
            CliError::Usage(s) => CliError::Usage(self.relabel(s)),
            other => other,
        }
    }

    /// An error text of a reader of these inputs: the spooled copy called
    /// [`STDIN`], and the input named when there is one alone and the text
    /// names no input.
    #[cfg(feature = "grib")]
    pub fn describe_error(&self, given: &[PathBuf], text: String) -> String {
        let text = self.relabel(text);
        match given {
            [one] => {
                let name = match is_dash(one) {
                    true => STDIN.to_string(),
                    false => one.display().to_string(),
                };
                match text.contains(&name) {
                    true => text,
                    false => format!("{name}: {text}"),
                }
            }
            _ => text,
        }
    }

    /// `text` with the temporary file's path replaced by [`STDIN`].
    pub fn relabel(&self, text: String) -> String {
        match &self.spool {
            Some(s) => text.replace(&s.path().display().to_string(), STDIN),
            None => text,
        }
    }
}

/// No particular suffix.
pub fn no_suffix(_: &[u8]) -> &'static str {
    ""
}

/// `.nii.gz` for gzip data, else `.nii`.
#[cfg(feature = "nifti")]
pub fn nifti_suffix(head: &[u8]) -> &'static str {
    if head.starts_with(&[0x1f, 0x8b]) {
        ".nii.gz"
    } else {
        ".nii"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relabel_replaces_the_spool_path_only_when_spooled() {
        let plain = Inputs::new(&[PathBuf::from("a.npy")], no_suffix).unwrap();
        assert_eq!(plain.paths(), &[PathBuf::from("a.npy")]);
        assert_eq!(plain.relabel("a.npy: bad".into()), "a.npy: bad");
        assert!(Inputs::new(&[PathBuf::from("-"), PathBuf::from("-")], no_suffix).is_err());
    }
}
