//! Kerchunk references of a local file (`spec/kerchunk.md`): the JSON
//! document and the objects left out, for `tgm.kerchunk_refs`.

use pyo3::prelude::*;

use tgm::TgmFile;

use crate::convert::{invalid_argument, IntoPyResult};

/// `(reference JSON text, [(message, object, variable, reason)])` for the
/// file at `path`, chunk references pointing at `target` (default: the
/// file's absolute path).
#[pyfunction]
#[pyo3(signature = (path, target=None))]
#[allow(clippy::type_complexity)]
pub fn kerchunk_refs(
    py: Python<'_>,
    path: std::path::PathBuf,
    target: Option<String>,
) -> PyResult<(String, Vec<(usize, usize, String, String)>)> {
    let target = match target {
        Some(t) => t,
        None => {
            let abs = std::fs::canonicalize(&path)
                .map_err(|e| invalid_argument(py, format!("{}: {e}", path.display())))?;
            abs.to_str().map(str::to_owned).ok_or_else(|| {
                invalid_argument(
                    py,
                    format!("{}: the path is not UTF-8; give target", path.display()),
                )
            })?
        }
    };
    let refs = py
        .allow_threads(|| {
            let f = TgmFile::open(&path)?;
            tgm::kerchunk::refs_of_file(&f, &target)
        })
        .py(py)?;
    Ok(result(&refs))
}

/// `(reference JSON text, [(message, object, variable, reason)])`: what
/// `kerchunk_refs` returns, for a local file or any byte source.
pub(crate) fn result(refs: &tgm::kerchunk::Refs) -> (String, Vec<(usize, usize, String, String)>) {
    let skipped = refs
        .unexpressible
        .iter()
        .map(|u| (u.message, u.object, u.variable.clone(), u.reason.clone()))
        .collect();
    (refs.to_json(), skipped)
}
