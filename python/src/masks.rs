//! NaN/Inf mask options of the Python encoders (`spec/pipeline.md` §5):
//! the reference's `nan_mask_method`, `pos_inf_mask_method`,
//! `neg_inf_mask_method` and `small_mask_threshold_bytes` keywords.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use tgm::decode::locate_object;
use tgm::pipeline::{MaskMethod, MaskOptions};
use tgm::Limits;

use crate::convert::IntoPyResult;
use crate::core::{verify_policy, Input};

/// Mask settings as the Python layer passes them: three method names
/// (None keeps the library default) and the small-mask threshold.
pub type MaskArgs = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<usize>,
);

fn method(py: Python<'_>, name: Option<&str>, default: MaskMethod) -> PyResult<MaskMethod> {
    name.map_or(Ok(default), |n| MaskMethod::from_name(n).py(py))
}

/// The library's mask options for `args` (defaults where absent).
pub fn mask_options(py: Python<'_>, args: Option<&MaskArgs>) -> PyResult<MaskOptions> {
    let mut m = MaskOptions::default();
    let Some((nan, pos, neg, threshold)) = args else {
        return Ok(m);
    };
    m.nan = method(py, nan.as_deref(), m.nan)?;
    m.pos_inf = method(py, pos.as_deref(), m.pos_inf)?;
    m.neg_inf = method(py, neg.as_deref(), m.neg_inf)?;
    if let Some(t) = threshold {
        m.small_mask_threshold = *t;
    }
    Ok(m)
}

/// The NaN/Inf masks of object `index` of the message in `buf` as
/// `[(kind, packed bits)]` (kinds `nan`, `inf+`, `inf-`; bits MSB first,
/// one per element); the frame digest is checked first, as in decoding.
#[pyfunction]
#[pyo3(signature = (buf, index, verify_hash=false))]
pub fn decode_masks(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    index: usize,
    verify_hash: bool,
) -> PyResult<Vec<(&'static str, Py<PyBytes>)>> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    let masks = py
        .allow_threads(|| -> tgm::Result<_> {
            let limits = Limits::default();
            let o = locate_object(bytes, 0, index, &limits)?;
            o.verify(verify_policy(verify_hash))?;
            o.masks(&limits)
        })
        .py(py)?;
    Ok(masks
        .into_iter()
        .map(|(k, bits)| (k, PyBytes::new(py, &bits).unbind()))
        .collect())
}
