"""tgm: Tensogram v3 tensor messages for Python.

A drop-in for the reference package: ``import tgm as tensogram`` runs code
written for ``import tensogram``. See docs/src/guide/python.md.
"""

import sys as _sys

from . import _native
from ._native import __version__
from ._errors import *  # noqa: F401,F403
from ._errors import __all__ as _error_names
from ._types import DataObjectDescriptor, Message, Metadata
from ._api import (
    MessageIter,
    StreamingEncoder,
    compute_hash,
    compute_packing_params,
    decode,
    decode_descriptors,
    decode_metadata,
    decode_object,
    decode_range,
    decode_with_masks,
    encode,
    encode_pre_encoded,
    iter_messages,
    scan,
    validate,
    validate_file,
    write_catalogue,
)
from ._file import AsyncTensogramFile, TensogramFile, TensogramFileIter
from ._doctor import doctor
from ._converters import (
    convert_grib,
    convert_dicom,
    convert_grib_buffer,
    convert_netcdf,
    convert_nifti,
    to_dicom,
    to_grib,
    to_netcdf,
    to_nifti,
)
from ._converters import has as _has_converter

#: Whether the GRIB and NetCDF converters are built in (cargo features
#: ``grib`` and ``netcdf``); the reference's names.
__has_grib__ = _has_converter("grib")
__has_netcdf__ = _has_converter("netcdf")
from ._kerchunk import kerchunk_refs
from ._remote import index_archives, is_url as is_remote_url, open_catalogue
from ._xarray import install_accessor as _install_accessor, open_datasets, to_tgm

_install_accessor()

#: Wire-format version read and written.
WIRE_VERSION = 3

__all__ = [
    "__version__",
    "WIRE_VERSION",
    "Message",
    "Metadata",
    "DataObjectDescriptor",
    "MessageIter",
    "StreamingEncoder",
    "TensogramFile",
    "TensogramFileIter",
    "AsyncTensogramFile",
    "compute_hash",
    "compute_packing_params",
    "convert_dicom",
    "convert_grib",
    "convert_grib_buffer",
    "convert_netcdf",
    "convert_nifti",
    "decode",
    "decode_descriptors",
    "decode_metadata",
    "decode_object",
    "decode_range",
    "decode_with_masks",
    "doctor",
    "encode",
    "encode_pre_encoded",
    "is_remote_url",
    "iter_messages",
    "kerchunk_refs",
    "open_catalogue",
    "index_archives",
    "open_datasets",
    "scan",
    "to_dicom",
    "to_grib",
    "to_netcdf",
    "to_nifti",
    "to_tgm",
    "validate",
    "validate_file",
    "write_catalogue",
    *_error_names,
]

# sz3 decodes run in a child process started from this interpreter
# (spec/pipeline.md §4.7); TGM_SZ3_HELPER, when set, wins.
_native._sz3_use_interpreter(_sys.executable or "", _native.__file__)
