//! A remote file's layout shipped to another process (`spec/remote.md` §6):
//! the located messages and data frames as JSON, a handle opened from them
//! without reading the file, and an object read without its message's
//! metadata, so a Dask worker that unpickles a remote handle reads each
//! object with one request and never rescans.

use pyo3::prelude::*;

use tgm::file::FileLayout;

use crate::convert::{descriptor_to_py, IntoPyResult};
use crate::core::array_of;
use crate::core::decode_options;
use crate::file::NativeFile;

/// The layout of `f` as JSON: every message's span and, for messages whose
/// index was read, each data frame with its descriptor and digest.
#[pyfunction]
pub fn source_layout(py: Python<'_>, f: &NativeFile) -> PyResult<String> {
    f.read(py, |f| f.layout()?.to_json())
}

/// Object `o` of message `m` of `f`, reading its data frame only (the
/// message's metadata is not read) → `(descriptor dict, uint8 array)`.
#[pyfunction]
#[pyo3(signature = (f, m, o, native_byte_order=true, verify_hash=false))]
pub fn decode_object_data(
    py: Python<'_>,
    f: &NativeFile,
    m: usize,
    o: usize,
    native_byte_order: bool,
    verify_hash: bool,
) -> PyResult<(PyObject, PyObject)> {
    let opts = decode_options(native_byte_order, 0, true, verify_hash);
    let obj = f.read(py, |f| f.decode_object(m, o, &opts))?;
    Ok((
        descriptor_to_py(py, &obj.descriptor)?,
        array_of(py, obj.data),
    ))
}

/// Opens `url` from `layout` (JSON from [`source_layout`]) without reading
/// it: the layout is checked against the object's length and ETag, and
/// bounded by the default limits; each frame is checked when read.
#[pyfunction]
#[pyo3(signature = (url, layout, storage_options=Vec::new()))]
pub fn open_url_from_layout(
    py: Python<'_>,
    url: &str,
    layout: &str,
    storage_options: Vec<(String, String)>,
) -> PyResult<NativeFile> {
    let layout = FileLayout::from_json(layout).py(py)?;
    open(py, url, &layout, storage_options)
}

/// Opens `url` through the `remote` feature from a checked layout.
fn open(
    py: Python<'_>,
    url: &str,
    layout: &FileLayout,
    storage_options: Vec<(String, String)>,
) -> PyResult<NativeFile> {
    #[cfg(feature = "remote")]
    {
        use tgm::file::{ByteSource, TgmFile};
        use tgm::remote::{RemoteOptions, RemoteSource};
        use tgm::Limits;
        let opts = RemoteOptions::default().with_storage_options(storage_options);
        let file = py
            .allow_threads(|| -> tgm::Result<_> {
                let src: Box<dyn ByteSource> = Box::new(RemoteSource::open(url, &opts)?);
                TgmFile::from_layout(src, layout, &Limits::default())
            })
            .py(py)?;
        Ok(NativeFile::of(file, None))
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = (layout, storage_options);
        Err(crate::convert::invalid_argument(
            py,
            format!("{url}: this tgm was built without the `remote` feature"),
        ))
    }
}

/// The archives the catalogue file at `location` lists (`spec/files.md`
/// §9.5), each opened from its catalogue → `[(location, file, stale)]`,
/// `stale` saying why a catalogue was not taken (the archive was then
/// scanned). Remote archives whose ETag is recorded are not fetched until
/// an object is read.
#[pyfunction]
#[pyo3(signature = (location, storage_options=Vec::new()))]
pub fn open_catalogue_file(
    py: Python<'_>,
    location: &str,
    storage_options: Vec<(String, String)>,
) -> PyResult<Vec<(String, NativeFile, Option<String>)>> {
    #[cfg(feature = "remote")]
    {
        use tgm::remote::RemoteOptions;
        use tgm::Limits;
        let opts = RemoteOptions::default().with_storage_options(storage_options);
        let listed = py
            .allow_threads(|| {
                tgm::remote::open_catalogue_file(location, &opts, &Limits::default(), |b| b)
            })
            .py(py)?;
        Ok(listed
            .into_iter()
            .map(|a| (a.location, NativeFile::of(a.file, None), a.stale))
            .collect())
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = storage_options;
        Err(crate::convert::invalid_argument(
            py,
            format!("{location}: catalogue files need the `remote` feature"),
        ))
    }
}

/// `tgm.index_archives`: one catalogue file at `output` (`.tgmc`, a local
/// path or URL) over the archives `inputs` name (files, URLs, object-store
/// folders with a pattern in the last segment), as `tgm index` writes it
/// (`spec/files.md` §9.5) → `(archives, bytes, ETag or None)`. Every
/// archive is opened before anything is written; an existing output is
/// refused unless `force`.
#[pyfunction]
#[pyo3(signature = (inputs, output, storage_options=Vec::new(), force=false))]
pub fn index_archives(
    py: Python<'_>,
    inputs: Vec<String>,
    output: String,
    storage_options: Vec<(String, String)>,
    force: bool,
) -> PyResult<(usize, u64, Option<String>)> {
    #[cfg(feature = "remote")]
    {
        use std::io::Write;
        use tgm::file::{write_error, Existing};
        use tgm::remote::RemoteOptions;
        use tgm::Limits;
        if !tgm::file::archive_catalogue::has_catalogue_file_name(&output) {
            return Err(crate::convert::invalid_argument(
                py,
                format!("{output}: a catalogue file's name ends in .tgmc (readers take it as a catalogue by that)"),
            ));
        }
        let existing = if force {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        let written = py
            .allow_threads(|| -> tgm::Result<_> {
                let opts = RemoteOptions::default().with_storage_options(storage_options.clone());
                let limits = Limits::default();
                let cats = tgm::remote::index_archives(&inputs, &output, &opts, &limits, || ())?;
                let messages = cats
                    .iter()
                    .map(|c| c.to_message())
                    .collect::<tgm::Result<Vec<_>>>()?;
                let mut sink = crate::sink::open(&output, storage_options, existing)?;
                for m in &messages {
                    sink.write_all(m).map_err(|e| write_error(&output, e))?;
                }
                Ok((cats.len(), sink.finish()?))
            })
            .py(py)?;
        Ok((written.0, written.1.bytes, written.1.etag))
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = (inputs, storage_options, force);
        Err(crate::convert::invalid_argument(
            py,
            format!("{output}: catalogue files need the `remote` feature"),
        ))
    }
}
