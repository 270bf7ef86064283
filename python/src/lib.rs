//! Native extension module `tgm._native` of the `tgm` Python package.
//! The Python layer in `python/tgm/` builds the public API on these
//! functions; see docs/src/guide/python.md.

mod convert;
mod converters;
mod core;
mod doctor;
mod file;
mod kerchunk;
mod masks;
mod metadata;
mod objects;
mod pre_encoded;
mod ranges;
mod remote;
mod remote_layout;
mod sink;
mod sz3_child;
mod view;
mod writing;

use pyo3::prelude::*;

/// The extension module. It holds no global state, so it declares support
/// for free-threaded Python.
#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // NumPy's view of each dtype's stored elements (`Dtype::numpy_storage_code`).
    let numpy_types = pyo3::types::PyDict::new(m.py());
    for d in tgm::Dtype::ALL {
        numpy_types.set_item(d.name(), d.numpy_storage_code())?;
    }
    m.add("NUMPY_TYPES", numpy_types)?;
    m.add_function(wrap_pyfunction!(core::encode, m)?)?;
    m.add_function(wrap_pyfunction!(pre_encoded::encode_pre_encoded, m)?)?;
    m.add_function(wrap_pyfunction!(core::decode, m)?)?;
    m.add_function(wrap_pyfunction!(masks::decode_masks, m)?)?;
    m.add_function(wrap_pyfunction!(objects::object_count, m)?)?;
    m.add_function(wrap_pyfunction!(core::decode_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(core::decode_descriptors, m)?)?;
    m.add_function(wrap_pyfunction!(core::decode_object, m)?)?;
    m.add_function(wrap_pyfunction!(core::decode_range, m)?)?;
    m.add_function(wrap_pyfunction!(core::locate_raw, m)?)?;
    m.add_function(wrap_pyfunction!(core::scan, m)?)?;
    m.add_function(wrap_pyfunction!(writing::append_message, m)?)?;
    m.add_function(wrap_pyfunction!(writing::end_with_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(core::compute_hash, m)?)?;
    m.add_function(wrap_pyfunction!(core::compute_packing_params, m)?)?;
    m.add_function(wrap_pyfunction!(core::validate, m)?)?;
    m.add_function(wrap_pyfunction!(core::validate_file, m)?)?;
    m.add_function(wrap_pyfunction!(kerchunk::kerchunk_refs, m)?)?;
    m.add_class::<core::NativeStreamingEncoder>()?;
    m.add_class::<sink::NativeSink>()?;
    m.add_function(wrap_pyfunction!(remote::remote_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(remote_layout::source_layout, m)?)?;
    m.add_function(wrap_pyfunction!(remote_layout::open_url_from_layout, m)?)?;
    m.add_function(wrap_pyfunction!(remote_layout::decode_object_data, m)?)?;
    m.add_function(wrap_pyfunction!(remote_layout::open_catalogue_file, m)?)?;
    m.add_function(wrap_pyfunction!(remote_layout::index_archives, m)?)?;
    m.add_function(wrap_pyfunction!(doctor::doctor, m)?)?;
    m.add_function(wrap_pyfunction!(sz3_child::_sz3_use_interpreter, m)?)?;
    m.add_function(wrap_pyfunction!(sz3_child::_sz3_child, m)?)?;
    converters::register(m)?;
    view::register(m)?;
    m.add_class::<file::NativeFile>()?;
    m.add_class::<file::NativeMetadata>()?;
    m.add_class::<metadata::MetadataView>()?;
    m.add_function(wrap_pyfunction!(metadata::caller_metadata, m)?)?;
    Ok(())
}
