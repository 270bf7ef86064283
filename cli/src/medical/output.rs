//! Writing an output file safely: never replacing an existing file unless
//! asked, and never leaving a half-written file under the target name.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::CliResult;

/// Writes `bytes` to `path` through a temporary file in the same directory
/// that is synced and then renamed into place. Refuses to replace an existing
/// file unless `force` is set.
pub fn write_new_file(path: &Path, bytes: &[u8], force: bool) -> CliResult {
    if !force && path.exists() {
        return Err(format!(
            "{} already exists (pass --force to replace it)",
            path.display()
        )
        .into());
    }
    let tmp = temp_path(path)?;
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", path.display()).into());
    }
    Ok(())
}

/// `.NAME.PID.tmp` next to `path`.
fn temp_path(path: &Path) -> CliResult<PathBuf> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: output path has no file name", path.display()))?;
    let tmp_name = format!(".{name}.{}.tmp", std::process::id());
    Ok(match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp_name),
        _ => PathBuf::from(tmp_name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        write_new_file(&p, b"one", false).unwrap();
        let err = write_new_file(&p, b"two", false).unwrap_err().to_string();
        assert!(err.contains("already exists"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        write_new_file(&p, b"two", true).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }
}
