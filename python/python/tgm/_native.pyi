"""Type stubs of the native extension module ``tgm._native`` (Rust, PyO3).

Dicts are the wire shapes: metadata as ``{"base": [...], "_extra_": {...},
...}``, descriptors as flat dicts; arrays are flat ``uint8`` NumPy arrays
of decoded bytes that the Python layer views with the descriptor's dtype.
"""

from collections.abc import Iterable, Sequence
from os import PathLike
from typing import Any, final

import numpy as np
import numpy.typing as npt

from typing_extensions import Buffer

_Bytes = npt.NDArray[np.uint8]
_Dict = dict[str, Any]
_Masks = tuple[str | None, str | None, str | None, int | None]
_Path = str | PathLike[str]
# One (start, count) element range; any iterable of two integers is taken.
_RangeIn = tuple[int, int] | Sequence[int]

__all__ = [
    "__version__",
    "NUMPY_TYPES",
    "encode",
    "encode_pre_encoded",
    "decode",
    "decode_masks",
    "object_count",
    "decode_metadata",
    "decode_descriptors",
    "decode_object",
    "decode_range",
    "locate_raw",
    "scan",
    "append_message",
    "end_with_catalogue",
    "compute_hash",
    "compute_packing_params",
    "validate",
    "validate_file",
    "StreamingEncoder",
    "File",
    "MetadataHandle",
    "MetadataView",
    "caller_metadata",
    "Sink",
    "remote_enabled",
    "source_layout",
    "open_url_from_layout",
    "open_catalogue_file",
    "index_archives",
    "decode_object_data",
    "doctor",
    "kerchunk_refs",
    "view_object",
    "view_listed_dims",
    "view_grid",
    "ViewGrids",
    "gaussian_latitudes",
    "view_coordinate",
    "view_valid_times",
    "view_stack_order",
    "VIEW_SCALAR_COORDINATE_KEYS",
    "convert_grib",
    "to_grib",
    "convert_netcdf",
    "to_netcdf",
    "convert_nifti",
    "to_nifti",
    "convert_dicom",
    "to_dicom",
    "_sz3_use_interpreter",
    "_sz3_child",
]

__version__: str

def encode(
    base: Any,
    extra: Any,
    objects: list[tuple[Any, Buffer]],
    hash: bool = True,
    threads: int = 0,
    allow_nan: bool = False,
    allow_inf: bool = False,
    masks: _Masks | None = None,
    zstd_content_size: bool = False,
) -> bytes: ...
def encode_pre_encoded(
    base: Any, extra: Any, objects: list[tuple[Any, Buffer]], hash: bool = True
) -> bytes: ...
def decode(
    buf: Buffer,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> tuple[_Dict, list[tuple[_Dict, _Bytes]]]: ...
def decode_masks(buf: Buffer, index: int, verify_hash: bool = False) -> list[tuple[str, bytes]]: ...
def object_count(buf: Buffer) -> int: ...
def _sz3_use_interpreter(interpreter: str, module_path: str) -> None: ...
def _sz3_child() -> None: ...
def decode_metadata(buf: Buffer) -> _Dict: ...
def decode_descriptors(buf: Buffer) -> tuple[_Dict, list[_Dict]]: ...
def decode_object(
    buf: Buffer,
    index: int,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> tuple[_Dict, _Dict, _Bytes]: ...
def decode_range(
    buf: Buffer,
    index: int,
    ranges: Iterable[_RangeIn],
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> tuple[str, str, list[_Bytes]]: ...
def locate_raw(
    buf: Buffer, index: int, verify_hash: bool = False
) -> tuple[_Dict, int | None, int | None]: ...
def scan(buf: Buffer) -> list[tuple[int, int]]: ...
def append_message(path: str | PathLike[str], message: Buffer) -> None: ...
def end_with_catalogue(path: str | PathLike[str]) -> int | None: ...
def compute_hash(buf: Buffer) -> str: ...
def compute_packing_params(
    values: Buffer, bits_per_value: int, decimal_scale_factor: int
) -> tuple[float, int, int, int]: ...
def kerchunk_refs(
    path: _Path, target: str | None = None
) -> tuple[str, list[tuple[int, int, str, str]]]: ...
def view_object(
    entry: _Dict | None, m: int, o: int
) -> tuple[str, dict[str, tuple[str, Any]], _Dict, _Dict]: ...
def view_listed_dims(entry: _Dict | None, extra: _Dict | None, ndim: int) -> list[str] | None: ...
def view_grid(
    geography: _Dict, shape: Sequence[int]
) -> tuple[list[str], list[tuple[str, list[str], npt.NDArray[np.float64], dict[str, str]]]] | None: ...

@final
class ViewGrids:
    def __init__(self) -> None: ...
    def dims(self, geography: _Dict, shape: Sequence[int]) -> list[str] | None: ...
    def coordinates(
        self,
    ) -> list[tuple[str, list[str], npt.NDArray[np.float64], dict[str, str]]]: ...

def gaussian_latitudes(n: int) -> npt.NDArray[np.float64] | None: ...
def view_coordinate(key: str) -> tuple[dict[str, str], bool]: ...
def view_valid_times(times: Sequence[int], steps: Sequence[int], objects: int) -> list[int] | None: ...
def view_stack_order(varying: Sequence[str], order: Sequence[str] | None = None) -> list[str]: ...

VIEW_SCALAR_COORDINATE_KEYS: tuple[str, ...]
NUMPY_TYPES: dict[str, str]

def remote_enabled() -> bool: ...
def source_layout(f: File) -> str: ...
def open_url_from_layout(
    url: str, layout: str, storage_options: Sequence[tuple[str, str]] = ...
) -> File: ...
def open_catalogue_file(
    location: str, storage_options: Sequence[tuple[str, str]] = ...
) -> list[tuple[str, File, str | None]]: ...
def index_archives(
    inputs: Sequence[str], output: str, storage_options: Sequence[tuple[str, str]] = ..., force: bool = False
) -> tuple[int, int, str | None]: ...
def decode_object_data(
    f: File, m: int, o: int, native_byte_order: bool = True, verify_hash: bool = False
) -> tuple[dict[str, Any], npt.NDArray[np.uint8]]: ...
def doctor() -> str: ...
def caller_metadata(meta: _Dict) -> tuple[list[_Dict], _Dict]: ...

# The converters exist only in a build with their cargo feature
# (``python/Cargo.toml``); ``tgm._converters`` looks them up by name.
# encoding, bits, filter, compression, level, checked by the library
_Stages = tuple[str | None, int | None, str | None, str | None, int | None]
_Deid = tuple[bool, bool, bool, bool, _Path | None, bool]

def convert_grib(
    paths: Sequence[_Path],
    split: bool,
    all_keys: bool,
    stages: _Stages,
    no_hash: bool,
    max_decoded_bytes: int | None,
    per_object_metadata: bool,
    sink: Sink | None = None,
) -> list[bytes]: ...
def to_grib(messages: Sequence[bytes]) -> bytes: ...
def convert_netcdf(
    paths: Sequence[_Path],
    split_by: str,
    cf: bool,
    stages: _Stages,
    no_hash: bool,
    max_decoded_bytes: int | None,
    sink: Sink | None = None,
) -> tuple[list[bytes], list[tuple[str, str]]]: ...
def to_netcdf(messages: Sequence[bytes], path: _Path) -> None: ...
def convert_nifti(
    paths: Sequence[_Path],
    mask: _Path | None,
    byte_order: str,
    compression: str,
    level: int | None,
    max_decoded_bytes: int | None,
    sink: Sink | None = None,
) -> bytes | None: ...
def to_nifti(input: _Path, message: int, object: int, nifti2: bool, gzip: bool) -> bytes: ...
def convert_dicom(
    paths: Sequence[_Path],
    recursive: bool,
    skip_unsupported: bool,
    deid: _Deid | None,
    compression: str,
    level: int | None,
    sink: Sink | None = None,
) -> tuple[list[bytes], list[tuple[str, str]]]: ...
def to_dicom(
    input: _Path, message: int, object: int, strict: bool
) -> tuple[list[bytes], list[str]]: ...
def validate(buf: Buffer, level: str = "default", canonical: bool = False) -> str: ...
def validate_file(path: _Path, level: str = "default", canonical: bool = False) -> str: ...
@final
class StreamingEncoder:
    """A message written one object at a time into memory."""

    def __new__(
        cls,
        base: Any,
        extra: Any,
        hash: bool = True,
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        masks: _Masks | None = None,
        zstd_content_size: bool = False,
    ) -> StreamingEncoder: ...
    def write_object(self, descriptor: Any, data: Buffer) -> None: ...
    def write_object_pre_encoded(self, descriptor: Any, payload: Buffer) -> None: ...
    def num_objects(self) -> int: ...
    def finish(self, backfill: bool, reset: bool) -> bytes: ...

@final
class File:
    """An open file: a local path read through positioned reads, a URL or
    a file object."""

    def __new__(cls, path: _Path, intact_only: bool = False) -> File: ...
    @staticmethod
    def from_layout(path: _Path, size: int, spans: Sequence[tuple[int, int]]) -> File: ...
    @staticmethod
    def open_url(
        url: str, storage_options: Sequence[tuple[str, str]] = ..., intact_only: bool = False
    ) -> File: ...
    @staticmethod
    def open_reader(obj: Any, name: str, intact_only: bool = False) -> File: ...
    def torn_tail(self) -> tuple[int, int, str] | None: ...
    def kerchunk_refs(self, target: str) -> tuple[str, list[tuple[int, int, str, str]]]: ...
    def prefetch(self, messages: Sequence[int]) -> None: ...
    def refresh(self, intact_only: bool = False) -> None: ...
    def catalogued(self) -> bool: ...
    def size(self) -> int: ...
    def count(self) -> int: ...
    def spans(self) -> list[tuple[int, int]]: ...
    def span(self, m: int) -> tuple[int, int]: ...
    def damage(self) -> list[tuple[int, int, str, bool]]: ...
    def message_bytes(self, m: int) -> bytes: ...
    def decode_message(
        self,
        m: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> tuple[_Dict, list[tuple[_Dict, _Bytes]]]: ...
    def metadata(self, m: int, verify_hash: bool = False) -> _Dict: ...
    def metadata_handle(self, m: int, verify_hash: bool = False) -> MetadataHandle: ...
    def descriptors(self, m: int) -> tuple[_Dict, list[_Dict]]: ...
    def object_count(self, m: int) -> int: ...
    def decode_object(
        self,
        m: int,
        o: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> tuple[_Dict, _Bytes, int, int]: ...
    def decode_range(
        self,
        m: int,
        o: int,
        ranges: Iterable[_RangeIn],
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
    ) -> tuple[str, str, list[_Bytes]]: ...

@final
class MetadataHandle:
    """Parsed message metadata shared with a file's cache."""

    def to_dict(self) -> _Dict: ...

@final
class MetadataView:
    """Metadata sections held natively; lookups by the library's rules."""

    def __new__(cls, base: Sequence[_Dict], extra: _Dict) -> MetadataView: ...
    def get(self, path: str, obj: int | None = None, default: Any = None) -> Any: ...
    def get_key(self, key: str, default: Any = None) -> Any: ...
    def keys(self) -> list[str]: ...

@final
class Sink:
    """A new file or object written front to back, appearing when finished."""

    def __new__(
        cls, target: str, storage_options: Sequence[tuple[str, str]] = ..., overwrite: bool = False
    ) -> Sink: ...
    def write(self, data: Buffer) -> None: ...
    def acknowledged(self) -> int: ...
    def finish(self) -> tuple[int, str | None]: ...
    def abort(self) -> None: ...
    @property
    def target(self) -> str: ...
