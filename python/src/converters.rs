//! The converters of `tgm-convert` (GRIB through ecCodes, NetCDF through
//! netCDF-C, NIfTI, DICOM), called in process with the command line's
//! options. Each is
//! behind the cargo feature of the same name (`python/Cargo.toml`); the
//! Python layer (`tgm/_converters.py`) raises an error naming the feature
//! when a function is absent from this module.

use pyo3::prelude::*;

use tgm::doctor::Backend;

/// The converter rows of `tgm.doctor()`: `(name, backend)`, `None` for a
/// converter not built in.
pub fn features() -> Vec<(&'static str, Option<Backend>)> {
    vec![
        ("grib", cfg!(feature = "grib").then_some(("ecCodes", "ffi"))),
        (
            "netcdf",
            cfg!(feature = "netcdf").then_some(("netCDF-C", "ffi")),
        ),
        (
            "nifti",
            cfg!(feature = "nifti").then_some(("nifti", "pure-rust")),
        ),
        (
            "dicom",
            cfg!(feature = "dicom").then_some(("dicom-rs", "pure-rust")),
        ),
    ]
}

/// The stages asked for, by name: encoding, bits, filter, compression,
/// level, each checked by the converter's rules (`spec/pipeline.md` §10).
#[cfg(any(feature = "grib", feature = "netcdf"))]
type Stages = (
    Option<String>,
    Option<u64>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// Registers the converters built in.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    #[cfg(feature = "grib")]
    {
        m.add_function(wrap_pyfunction!(grib::convert_grib, m)?)?;
        m.add_function(wrap_pyfunction!(grib::to_grib, m)?)?;
    }
    #[cfg(feature = "netcdf")]
    {
        m.add_function(wrap_pyfunction!(netcdf::convert_netcdf, m)?)?;
        m.add_function(wrap_pyfunction!(netcdf::to_netcdf, m)?)?;
    }
    #[cfg(feature = "nifti")]
    {
        m.add_function(wrap_pyfunction!(nifti::convert_nifti, m)?)?;
        m.add_function(wrap_pyfunction!(nifti::to_nifti, m)?)?;
    }
    #[cfg(feature = "dicom")]
    {
        m.add_function(wrap_pyfunction!(dicom::convert_dicom, m)?)?;
        m.add_function(wrap_pyfunction!(dicom::to_dicom, m)?)?;
    }
    let _ = m;
    Ok(())
}

/// A converter's failure as a `ValueError` of the tgm hierarchy (an
/// `InvalidInput` error of the library, whose text is the converter's).
#[cfg(any(
    feature = "grib",
    feature = "netcdf",
    feature = "nifti",
    feature = "dicom"
))]
fn failed(py: Python<'_>, e: impl std::fmt::Display) -> PyErr {
    crate::convert::py_err(
        py,
        tgm::Error::new(tgm::ErrorKind::InvalidInput, e.to_string()),
    )
}

/// A medical converter's error as a library error of the matching kind,
/// chosen by its [`MedicalErrorKind`]: a failed read or write is `Io`
/// (`TensogramIOError`), an index out of range `InvalidArgument`, a
/// failure of the library its own kind; everything else `InvalidInput`
/// (`EncodeError`). Every one is a `ValueError`; the text is the
/// converter's (`spec/convert.md`, "Converter errors").
#[cfg(any(feature = "nifti", feature = "dicom"))]
fn medical_error(e: tgm_convert::medical::MedicalError) -> tgm::Error {
    use tgm_convert::medical::MedicalErrorKind;
    let kind = match e.kind() {
        MedicalErrorKind::Io => tgm::ErrorKind::Io,
        MedicalErrorKind::InvalidArgument => tgm::ErrorKind::InvalidArgument,
        MedicalErrorKind::Archive => std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<tgm::Error>())
            .map_or(tgm::ErrorKind::InvalidInput, |t| t.kind().clone()),
        _ => tgm::ErrorKind::InvalidInput,
    };
    tgm::Error::new(kind, e.to_string())
}

/// Decodes each message of `messages` (one `.tgm` message each).
#[cfg(any(feature = "grib", feature = "netcdf"))]
fn decode_all(py: Python<'_>, messages: &[Vec<u8>]) -> PyResult<Vec<tgm::DecodedMessage>> {
    use crate::convert::IntoPyResult;
    let opts = tgm::DecodeOptions::default();
    py.allow_threads(|| {
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                tgm::decode(m, &opts).map_err(|e| {
                    tgm::Error::new(e.kind().clone(), format!("cannot decode message {i}: {e}"))
                })
            })
            .collect::<tgm::Result<Vec<_>>>()
    })
    .py(py)
}

/// `PyBytes` of each encoded message.
#[cfg(any(feature = "grib", feature = "netcdf", feature = "dicom"))]
fn bytes_list(py: Python<'_>, messages: Vec<Vec<u8>>) -> Vec<Py<pyo3::types::PyBytes>> {
    messages
        .iter()
        .map(|m| pyo3::types::PyBytes::new(py, m).unbind())
        .collect()
}

#[cfg(feature = "grib")]
mod grib {
    use std::path::PathBuf;

    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use tgm_convert::weather::convert::{
        convert_files, convert_files_to, encode_message, ConvertOptions, PipelineChoice,
    };
    use tgm_convert::weather::export::message_to_grib;

    use super::{bytes_list, decode_all, failed, Stages};
    use crate::sink::NativeSink;

    /// `tgm convert-grib`'s choices, checked by the converter's rules
    /// (`PipelineChoice::from_names`).
    fn pipeline(py: Python<'_>, p: &Stages) -> PyResult<PipelineChoice> {
        let (encoding, bits, filter, compression, level) = p;
        PipelineChoice::from_names(
            encoding.as_deref(),
            *bits,
            filter.as_deref(),
            compression.as_deref(),
            *level,
        )
        .map_err(|e| failed(py, e))
    }

    /// GRIB files → encoded messages: one per file, or one per GRIB
    /// message with `split` (`tgm convert-grib`). With `sink`, each
    /// message is written into it as soon as its fields are read (the
    /// library's `convert_files_to`: memory holds one message), and none
    /// is returned.
    #[pyfunction]
    #[pyo3(signature = (paths, split, all_keys, stages, no_hash, max_decoded_bytes, per_object_metadata, sink=None))]
    #[allow(clippy::too_many_arguments)]
    pub fn convert_grib(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        split: bool,
        all_keys: bool,
        stages: Stages,
        no_hash: bool,
        max_decoded_bytes: Option<u64>,
        per_object_metadata: bool,
        sink: Option<Bound<'_, NativeSink>>,
    ) -> PyResult<Vec<Py<PyBytes>>> {
        let opts = ConvertOptions {
            split,
            all_keys,
            pipeline: pipeline(py, &stages)?,
            no_hash,
            max_decoded_bytes,
            layout: if per_object_metadata {
                tgm::metadata::BaseLayout::PerObject
            } else {
                tgm::metadata::BaseLayout::SharedOnce
            },
        };
        if let Some(sink) = sink {
            let sink = sink.get();
            let written = py
                .allow_threads(|| sink.write_with(|out| convert_files_to(&paths, &opts, out)))
                .map_err(|e| crate::convert::py_err(py, e))?;
            written.map_err(|e| failed(py, e))?;
            return Ok(Vec::new());
        }
        let encoded = py
            .allow_threads(|| -> Result<Vec<Vec<u8>>, String> {
                let messages = convert_files(&paths, &opts).map_err(|e| e.to_string())?;
                messages
                    .iter()
                    .map(|m| encode_message(m, &opts).map_err(|e| e.to_string()))
                    .collect()
            })
            .map_err(|e| failed(py, e))?;
        Ok(bytes_list(py, encoded))
    }

    /// Messages written by `convert_grib` → GRIB2 bytes (`tgm to-grib`).
    #[pyfunction]
    pub fn to_grib(py: Python<'_>, messages: Vec<Vec<u8>>) -> PyResult<Py<PyBytes>> {
        let decoded = decode_all(py, &messages)?;
        let out = py
            .allow_threads(|| -> Result<Vec<u8>, String> {
                let mut out = Vec::new();
                for (i, m) in decoded.iter().enumerate() {
                    let g = message_to_grib(m).map_err(|e| format!("message {i}: {e}"))?;
                    out.extend_from_slice(&g);
                }
                Ok(out)
            })
            .map_err(|e| failed(py, e))?;
        Ok(PyBytes::new(py, &out).unbind())
    }
}

#[cfg(feature = "netcdf")]
mod netcdf {
    use std::path::PathBuf;

    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use tgm::pipeline::StageRequest;
    use tgm::EncodeOptions;
    use tgm_convert::weather::netcdf::{
        convert_file_each, write_netcdf, ConvertOptions, NcMessage, NetcdfEncoder, NetcdfError,
        SplitBy,
    };

    use super::{bytes_list, decode_all, failed, Stages};
    use crate::sink::NativeSink;
    use tgm::file::write_error;

    /// NetCDF files → encoded messages grouped by `split_by` (`file`,
    /// `variable` or `record`; `tgm convert-netcdf`). The variables left out
    /// are returned with the reason for each. With `sink`, each message is
    /// written into it as soon as it is encoded, and none is returned.
    #[pyfunction]
    #[pyo3(signature = (paths, split_by, cf, stages, no_hash, max_decoded_bytes, sink=None))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn convert_netcdf(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        split_by: &str,
        cf: bool,
        stages: Stages,
        no_hash: bool,
        max_decoded_bytes: Option<u64>,
        sink: Option<Bound<'_, NativeSink>>,
    ) -> PyResult<(Vec<Py<PyBytes>>, Vec<(String, String)>)> {
        let split_by = match split_by {
            "file" => SplitBy::File,
            "variable" => SplitBy::Variable,
            "record" => SplitBy::Record,
            other => return Err(failed(py, format!("unknown split_by {other:?}"))),
        };
        let (encoding, bits, filter, compression, level) = stages;
        let request = StageRequest {
            encoding,
            bits,
            filter,
            compression,
            level,
            ..StageRequest::default()
        };
        let choice = request.choice().map_err(|e| failed(py, e))?;
        let convert = ConvertOptions {
            split_by,
            cf,
            max_decoded_bytes,
            skip_unsupported: true,
        };
        let encoder = NetcdfEncoder::new(choice, EncodeOptions::new().hashing(!no_hash));
        // Every input's messages, each handed to `deliver` as it is
        // encoded; the variables left out.
        let convert_all = |deliver: &mut dyn FnMut(Vec<u8>) -> Result<(), Failure>| {
            let mut skipped = Vec::new();
            for path in &paths {
                let mut failure = None;
                let mut each = |m: NcMessage| {
                    let done = encoder
                        .encode(m)
                        .map_err(|e| Failure::Convert(format!("{}: {e}", path.display())))
                        .and_then(&mut *deliver);
                    done.map_err(|f| {
                        failure = Some(f);
                        NetcdfError::Invalid(String::new())
                    })
                };
                match convert_file_each(path, &convert, &mut each) {
                    Ok(s) => skipped.extend(
                        s.into_iter()
                            .map(|(v, why)| (format!("{}: {v}", path.display()), why)),
                    ),
                    Err(e) => return Err(failure.unwrap_or(Failure::Convert(e.to_string()))),
                }
            }
            Ok(skipped)
        };
        let mut encoded = Vec::new();
        let done = match &sink {
            Some(sink) => {
                let sink = sink.get();
                let target = sink.target_name();
                py.allow_threads(|| {
                    sink.write_with(|out| {
                        convert_all(&mut |b| {
                            out.write_all(&b)
                                .map_err(|e| Failure::Output(write_error(target, e)))
                        })
                    })
                })
                .map_err(|e| crate::convert::py_err(py, e))?
            }
            None => py.allow_threads(|| {
                convert_all(&mut |b| {
                    encoded.push(b);
                    Ok(())
                })
            }),
        };
        let skipped = done.map_err(|f| match f {
            Failure::Convert(text) => failed(py, text),
            Failure::Output(e) => crate::convert::py_err(py, e),
        })?;
        Ok((bytes_list(py, encoded), skipped))
    }

    /// Why a conversion stopped: the converter's words, or the output's
    /// error (kept whole, so a full disk or a refused upload raises what
    /// the sink raises).
    enum Failure {
        Convert(String),
        Output(tgm::Error),
    }

    /// Messages written by `convert_netcdf` → a new NetCDF-4 file at `path`
    /// (`tgm to-netcdf`). The Python layer picks a fresh `path` and moves
    /// it into place.
    #[pyfunction]
    pub fn to_netcdf(py: Python<'_>, messages: Vec<Vec<u8>>, path: PathBuf) -> PyResult<()> {
        let decoded = decode_all(py, &messages)?;
        py.allow_threads(|| write_netcdf(&decoded, &path))
            .map_err(|e| failed(py, e))
    }
}

/// The medical converters' lossless pipeline choice, checked by their
/// rules (`PipelineArgs::from_names`, as `tgm convert-nifti` checks it).
#[cfg(any(feature = "nifti", feature = "dicom"))]
fn medical_pipeline(
    py: Python<'_>,
    compression: &str,
    level: Option<i64>,
) -> PyResult<tgm_convert::medical::pipeline::PipelineArgs> {
    tgm_convert::medical::pipeline::PipelineArgs::from_names(Some(compression), level)
        .map_err(|e| failed(py, e))
}

#[cfg(feature = "nifti")]
mod nifti {
    use std::path::PathBuf;

    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use tgm_convert::medical::nifti::{
        object_to_nifti, write_nifti_message, ByteOrderChoice, Version,
    };
    use tgm_convert::medical::nifti_stream::NiftiStream;
    use tgm_convert::medical::pipeline::encode_options;
    use tgm_convert::medical::ObjectPick;

    use super::{failed, medical_error, medical_pipeline};
    use crate::convert::IntoPyResult;
    use crate::sink::NativeSink;

    /// NIfTI-1/2 volumes (and an optional mask on the first one's grid) →
    /// one encoded message, one object per input (`tgm convert-nifti`: the
    /// converter's `write_nifti_message`). With `sink`, the message is
    /// encoded straight into it and none is returned.
    #[pyfunction]
    #[pyo3(signature = (paths, mask, byte_order, compression, level, max_decoded_bytes, sink=None))]
    #[allow(clippy::too_many_arguments)]
    pub fn convert_nifti(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        mask: Option<PathBuf>,
        byte_order: &str,
        compression: &str,
        level: Option<i64>,
        max_decoded_bytes: Option<u64>,
        sink: Option<Bound<'_, NativeSink>>,
    ) -> PyResult<Option<Py<PyBytes>>> {
        let order = match byte_order {
            "keep" => ByteOrderChoice::Keep,
            "little" => ByteOrderChoice::Little,
            "big" => ByteOrderChoice::Big,
            other => return Err(failed(py, format!("unknown byte_order {other:?}"))),
        };
        let pipeline = medical_pipeline(py, compression, level)?;
        let write = |out: &mut dyn std::io::Write| -> tgm::Result<()> {
            let opts = encode_options();
            write_nifti_message(
                &paths,
                mask.as_deref(),
                &pipeline,
                order,
                max_decoded_bytes,
                &opts,
                out,
            )
            .map(drop)
            .map_err(medical_error)
        };
        if let Some(sink) = sink {
            let sink = sink.get();
            py.allow_threads(|| sink.write_with(write)).py(py)?.py(py)?;
            return Ok(None);
        }
        let msg = py
            .allow_threads(|| {
                let mut msg = Vec::new();
                write(&mut msg).map(|()| msg)
            })
            .py(py)?;
        Ok(Some(PyBytes::new(py, &msg).unbind()))
    }

    /// Object `object` of message `message` of the `.tgm` file `input` →
    /// NIfTI bytes (`tgm to-nifti`; NIfTI-2 with `nifti2`, else only when
    /// needed), gzip-compressed as `tgm to-nifti` writes a `.nii.gz` when
    /// `gzip` (the library's `NiftiStream`: the same bytes from every door).
    #[pyfunction]
    pub fn to_nifti(
        py: Python<'_>,
        input: PathBuf,
        message: usize,
        object: usize,
        nifti2: bool,
        gzip: bool,
    ) -> PyResult<Py<PyBytes>> {
        let pick = ObjectPick {
            input,
            message,
            object,
        };
        let version = if nifti2 {
            Version::Nifti2
        } else {
            Version::Auto
        };
        let nii = py
            .allow_threads(|| -> tgm::Result<Vec<u8>> {
                let (d, data, entry) = pick.decode().map_err(medical_error)?;
                let nii = object_to_nifti(&d, &data, &entry, version)
                    .map_err(|e| medical_error(e.context(pick.describe())))?;
                if !gzip {
                    return Ok(nii);
                }
                let mut out = NiftiStream::new(Vec::new(), true)?;
                out.write(&nii)?;
                Ok(out.finish()?)
            })
            .py(py)?;
        Ok(PyBytes::new(py, &nii).unbind())
    }
}

#[cfg(feature = "dicom")]
mod dicom {
    use std::path::PathBuf;

    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use tgm_convert::medical::deid::Deidentify;
    use tgm_convert::medical::deid_profile::RetainOptions;
    use tgm_convert::medical::deid_uid::UidKey;
    use tgm_convert::medical::dicom::{dicom_to_messages, Reading};
    use tgm_convert::medical::dicom_conform::Conformance;
    use tgm_convert::medical::dicom_write::object_to_dicom;
    use tgm_convert::medical::pipeline::encode_options;
    use tgm_convert::medical::ObjectPick;

    use super::{bytes_list, medical_error, medical_pipeline};
    use crate::convert::IntoPyResult;
    use crate::sink::NativeSink;

    /// De-identification as `tgm convert-dicom --deidentify` takes it:
    /// the four retain options, the UID key file (else a random key) and
    /// whether burned-in annotations are allowed.
    type Deid = (bool, bool, bool, bool, Option<PathBuf>, bool);

    fn deidentify(d: Deid) -> tgm::Result<Deidentify> {
        let (patient, dates, device, institution, key, allow_burned_in) = d;
        let key = match key {
            Some(p) => UidKey::from_file(&p),
            None => UidKey::random(),
        }
        .map_err(medical_error)?;
        Ok(Deidentify {
            retain: RetainOptions {
                retain_patient_characteristics: patient,
                retain_full_dates: dates,
                retain_device_identity: device,
                retain_institution_identity: institution,
            },
            key,
            allow_burned_in,
        })
    }

    /// DICOM files and directories → one encoded message per series
    /// (`tgm convert-dicom`), and the files left out with the reason. With
    /// `sink`, each series' message is written into it as soon as it is
    /// encoded (memory holds one series), and none is returned.
    #[pyfunction]
    #[pyo3(signature = (paths, recursive, skip_unsupported, deid, compression, level, sink=None))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn convert_dicom(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        recursive: bool,
        skip_unsupported: bool,
        deid: Option<Deid>,
        compression: &str,
        level: Option<i64>,
        sink: Option<Bound<'_, NativeSink>>,
    ) -> PyResult<(Vec<Py<PyBytes>>, Vec<(String, String)>)> {
        let pipeline = medical_pipeline(py, compression, level)?;
        let sink = sink.as_ref().map(|s| s.get());
        let (encoded, skipped) = py
            .allow_threads(|| -> tgm::Result<_> {
                let deid = deid.map(deidentify).transpose()?;
                let reading = Reading {
                    recursive,
                    skip_unsupported,
                };
                let conv =
                    dicom_to_messages(&paths, reading, &pipeline, deid.as_ref()).map_err(|e| {
                        match e.is_skippable() {
                            true => {
                                let text = format!(
                                    "{e} (skip_unsupported=True leaves such files out and \
                                     converts the rest)"
                                );
                                tgm::Error::new(medical_error(e).kind().clone(), text)
                            }
                            false => medical_error(e),
                        }
                    })?;
                let mut out = Vec::with_capacity(if sink.is_some() { 0 } else { conv.len() });
                let opts = encode_options();
                for i in 0..conv.len() {
                    // One series' volume at a time, encoded by the
                    // converter straight into the output.
                    let write = |w: &mut dyn std::io::Write| {
                        conv.write_message(i, &opts, w).map_err(medical_error)
                    };
                    match sink {
                        Some(sink) => drop(sink.write_with(write)??),
                        None => {
                            let mut message = Vec::new();
                            write(&mut message)?;
                            out.push(message);
                        }
                    }
                }
                let skipped = conv
                    .skipped
                    .iter()
                    .map(|s| (s.path.display().to_string(), s.reason.to_string()))
                    .collect::<Vec<_>>();
                Ok((out, skipped))
            })
            .py(py)?;
        Ok((bytes_list(py, encoded), skipped))
    }

    /// Object `object` of message `message` of the `.tgm` file `input` →
    /// the bytes of each DICOM slice file (`tgm to-dicom`, `strict` as
    /// `--strict`), and each recorded value written verbatim although its
    /// VR's rules reject it.
    #[pyfunction]
    pub fn to_dicom(
        py: Python<'_>,
        input: PathBuf,
        message: usize,
        object: usize,
        strict: bool,
    ) -> PyResult<(Vec<Py<PyBytes>>, Vec<String>)> {
        let pick = ObjectPick {
            input,
            message,
            object,
        };
        let mode = if strict {
            Conformance::Strict
        } else {
            Conformance::Verbatim
        };
        let out = py
            .allow_threads(|| -> tgm::Result<_> {
                let (d, data, entry) = pick.decode().map_err(medical_error)?;
                object_to_dicom(&d, &data, &entry, mode)
                    .map_err(|e| medical_error(e.context(pick.describe())))
            })
            .py(py)?;
        let warnings = out.nonconforming.iter().map(|v| v.to_string()).collect();
        Ok((bytes_list(py, out.files), warnings))
    }
}
