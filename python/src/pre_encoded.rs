//! `encode_pre_encoded`: one message around payloads that already went
//! through their descriptors' pipelines (`spec/format.md` §11.5).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use tgm::encode::EncodeOptions;
use tgm::ObjectDescriptor;

use crate::convert::{descriptor_from_py, metadata_from_py, IntoPyResult};
use crate::core::Input;

/// Encodes one message from `objects`, a list of `(descriptor dict,
/// bytes-like payload)`; each payload is written as given and its frame
/// digest computed here.
#[pyfunction]
#[pyo3(signature = (base, extra, objects, hash=true))]
pub fn encode_pre_encoded(
    py: Python<'_>,
    base: &Bound<'_, PyAny>,
    extra: &Bound<'_, PyAny>,
    objects: &Bound<'_, PyList>,
    hash: bool,
) -> PyResult<Py<PyBytes>> {
    let meta = metadata_from_py(base, extra)?;
    let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = objects.extract()?;
    let inputs = items
        .iter()
        .map(|(_, payload)| Input::of(payload))
        .collect::<PyResult<Vec<Input>>>()?;
    let descs = items
        .iter()
        .map(|(d, _)| descriptor_from_py(d))
        .collect::<PyResult<Vec<ObjectDescriptor>>>()?;
    let pairs = descs
        .iter()
        .zip(&inputs)
        .map(|(d, payload)| (d, payload.bytes()))
        .collect::<Vec<(&ObjectDescriptor, &[u8])>>();
    let opts = EncodeOptions::new().hashing(hash);
    let out = py
        .allow_threads(|| tgm::encode_pre_encoded(&meta, &pairs, &opts))
        .py(py)?;
    Ok(PyBytes::new(py, &out).unbind())
}
