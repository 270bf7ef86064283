//! Writing a whole output file safely: into a temporary file in the target's
//! directory, then moved into place; an existing target is replaced only
//! when forced.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::GribError;

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = format!(".{name}.{}.tmp", std::process::id());
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

/// Writes `bytes` to `path`. Without `force` an existing `path` is an error
/// and is left untouched (the final link refuses to replace it).
pub fn write_new(path: &Path, bytes: &[u8], force: bool) -> Result<(), GribError> {
    let io =
        |e: std::io::Error, what: &str| GribError::Io(format!("{what} {}: {e}", path.display()));
    if !force && path.exists() {
        return Err(GribError::Io(format!(
            "{} exists; pass --force to replace it",
            path.display()
        )));
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io(e, "cannot create a temporary file next to"))?;
        f.write_all(bytes).map_err(|e| io(e, "cannot write"))?;
        f.sync_all().map_err(|e| io(e, "cannot sync"))?;
        drop(f);
        if force {
            std::fs::rename(&tmp, path).map_err(|e| io(e, "cannot replace"))
        } else {
            std::fs::hard_link(&tmp, path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    GribError::Io(format!(
                        "{} exists; pass --force to replace it",
                        path.display()
                    ))
                } else {
                    io(e, "cannot create")
                }
            })
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}
