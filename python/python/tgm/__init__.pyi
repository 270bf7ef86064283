"""Type stubs of the public ``tgm`` API (the reference package's names)."""

from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Mapping, Sequence
from os import PathLike
from types import TracebackType
from typing import Any, Literal, NamedTuple, overload

import numpy as np
import numpy.typing as npt

from typing_extensions import Buffer, Self

from ._errors import (
    CodecError as CodecError,
    EncodeError as EncodeError,
    FramingError as FramingError,
    HashMismatchError as HashMismatchError,
    IntegrityError as IntegrityError,
    InvalidArgumentError as InvalidArgumentError,
    LimitExceededError as LimitExceededError,
    MetadataError as MetadataError,
    MissingHashError as MissingHashError,
    RangeNotSupportedError as RangeNotSupportedError,
    TensogramError as TensogramError,
    TensogramIOError as TensogramIOError,
    UnsupportedCodecError as UnsupportedCodecError,
)

from ._remote import RemoteTensogramFile, _Reader, _Reading
from ._sink import TensogramWriter, _Written

_Array = npt.NDArray[Any]
_Path = str | PathLike[str]
_MetaIn = Mapping[str, Any] | Metadata | None
_DescIn = Mapping[str, Any] | DataObjectDescriptor
_Data = npt.ArrayLike | Buffer
_Hash = Literal["xxh3"] | bool | None
_Range = tuple[int, int]

__version__: str
WIRE_VERSION: int

class Metadata(Mapping[str, Any]):
    def __init__(
        self,
        base: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
        reserved: dict[str, Any] | None = None,
        version: int = 3,
    ) -> None: ...
    @property
    def version(self) -> int: ...
    @property
    def base(self) -> list[dict[str, Any]]: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def reserved(self) -> dict[str, Any]: ...
    @property
    def num_objects(self) -> int: ...
    def __getitem__(self, key: str) -> Any: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def get(self, key: str, default: Any = None) -> Any: ...  # type: ignore[override]
    def get_path(self, path: str, default: Any = None) -> Any: ...
    def get_path_at(self, obj: int, path: str, default: Any = None) -> Any: ...
    def has_path(self, path: str) -> bool: ...
    def has_path_at(self, obj: int, path: str) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...

class DataObjectDescriptor:
    def __init__(self, d: Mapping[str, Any]) -> None: ...
    @property
    def obj_type(self) -> str: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def strides(self) -> list[int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def byte_order(self) -> str: ...
    @property
    def encoding(self) -> str: ...
    @property
    def filter(self) -> str: ...
    @property
    def compression(self) -> str: ...
    @property
    def masks(self) -> dict[str, Any] | None: ...
    @property
    def ndim(self) -> int: ...
    @property
    def hash(self) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def to_dict(self) -> dict[str, Any]: ...

class Message(NamedTuple):
    metadata: Metadata
    objects: list[tuple[DataObjectDescriptor, _Array]]

class MessageIter:
    def __init__(self, buf: Buffer, verify_hash: bool = False) -> None: ...
    def __iter__(self) -> Self: ...
    def __len__(self) -> int: ...
    def __next__(self) -> Message: ...

class StreamingEncoder:
    def __init__(
        self,
        global_meta_dict: _MetaIn,
        hash: _Hash = "xxh3",
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        nan_mask_method: str | None = None,
        pos_inf_mask_method: str | None = None,
        neg_inf_mask_method: str | None = None,
        small_mask_threshold_bytes: int | None = None,
        aggregate_hash: None = None,
        zstd_content_size: bool = False,
    ) -> None: ...
    def write_object(self, descriptor: _DescIn, data: _Data) -> None: ...
    def write_object_pre_encoded(self, descriptor: _DescIn, data: Buffer) -> None: ...
    @property
    def object_count(self) -> int: ...
    def finish(self) -> bytes: ...
    def finish_backfilled(self) -> bytes: ...
    def finish_and_reset(self) -> bytes: ...
    def finish_and_reset_backfilled(self) -> bytes: ...

class TensogramFile(_Reading):
    def __init__(
        self,
        path: _Path,
        *,
        intact_only: bool = False,
        zero_copy: bool = False,
        _native_file: Any = None,
    ) -> None: ...
    # A URL string opens a RemoteTensogramFile too: a str cannot tell
    # which statically, and the path is what most code passes.
    @overload
    @classmethod
    def open(
        cls,
        source: _Path,
        *,
        bidirectional: bool = True,
        intact_only: bool = False,
        zero_copy: bool = False,
    ) -> Self: ...
    @overload
    @classmethod
    def open(
        cls,
        source: _Reader,
        *,
        bidirectional: bool = True,
        intact_only: bool = False,
        zero_copy: Literal[False] = False,
    ) -> RemoteTensogramFile: ...
    @overload
    @classmethod
    def create(cls, path: _Path) -> Self: ...
    @overload
    @classmethod
    def create(
        cls, path: _Path, storage_options: Mapping[str, Any] | None = None, *, overwrite: bool = False
    ) -> Self | TensogramWriter: ...
    @classmethod
    def open_remote(
        cls,
        source: str | _Reader,
        storage_options: Mapping[str, Any] | None = None,
        *,
        bidirectional: bool = True,
        intact_only: bool = False,
    ) -> RemoteTensogramFile: ...
    @classmethod
    def from_layout(
        cls, path: _Path, size: int, spans: Sequence[_Range], *, zero_copy: bool = False
    ) -> Self: ...
    def refresh(self) -> None: ...
    @property
    def layout(self) -> tuple[int, list[_Range]]: ...
    def source(self) -> str: ...
    def append(
        self,
        global_meta_dict: _MetaIn,
        descriptors_and_data: Iterable[tuple[_DescIn, _Data]],
        hash: _Hash = "xxh3",
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        nan_mask_method: str | None = None,
        pos_inf_mask_method: str | None = None,
        neg_inf_mask_method: str | None = None,
        small_mask_threshold_bytes: int | None = None,
        aggregate_hash: None = None,
        zstd_content_size: bool = False,
    ) -> None: ...
    def append_bytes(self, message: Buffer) -> None: ...
    def __iter__(self) -> TensogramFileIter: ...

class TensogramFileIter:
    def __init__(self, f: TensogramFile) -> None: ...
    def __iter__(self) -> Self: ...
    def __len__(self) -> int: ...
    def __next__(self) -> Message: ...

class AsyncTensogramFile:
    def __init__(self, f: TensogramFile) -> None: ...
    @staticmethod
    def open(
        source: _Path, *, bidirectional: bool = True, intact_only: bool = False, zero_copy: bool = False
    ) -> Awaitable[AsyncTensogramFile]: ...
    @staticmethod
    def open_remote(
        source: str | _Reader,
        storage_options: Mapping[str, Any] | None = None,
        *,
        bidirectional: bool = True,
        intact_only: bool = False,
    ) -> Awaitable[AsyncTensogramFile]: ...
    def source(self) -> str: ...
    def is_remote(self) -> bool: ...
    def __len__(self) -> int: ...
    async def message_count(self) -> int: ...
    async def messages(self) -> list[bytes]: ...
    async def read_message(self, index: int) -> bytes: ...
    async def decode_message(
        self, index: int, native_byte_order: bool = True, threads: int = 0, verify_hash: bool = False
    ) -> Message: ...
    async def file_decode_metadata(self, msg_index: int) -> Metadata: ...
    async def file_decode_descriptors(self, msg_index: int) -> dict[str, Any]: ...
    async def file_decode_object(
        self,
        msg_index: int,
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> dict[str, Any]: ...
    async def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: Iterable[_Range],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> Any: ...
    async def file_decode_object_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> list[dict[str, Any]]: ...
    async def file_decode_range_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        ranges: Iterable[_Range],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[Any]: ...
    async def prefetch_layouts(self, msg_indices: Iterable[int]) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self,
        _exc_type: type[BaseException] | None = None,
        _exc_val: BaseException | None = None,
        _exc_tb: TracebackType | None = None,
    ) -> bool: ...
    def __aiter__(self) -> AsyncIterator[Message]: ...

__has_grib__: bool
__has_netcdf__: bool

_Paths = _Path | Sequence[_Path]
_Level = int | None

def doctor() -> dict[str, Any]: ...
def kerchunk_refs(
    path: _Path | _Reader, target: str | None = None, *, storage_options: Mapping[str, Any] | None = None
) -> dict[str, Any]: ...
def open_datasets(path: _Path | _Reader, **kwargs: Any) -> list[Any]: ...
def to_tgm(
    ds: Any,
    path: _Path,
    pipeline: Mapping[str, Any] | None = None,
    *,
    force: bool = False,
    allow_nan: bool = True,
    storage_options: Mapping[str, Any] | None = None,
) -> _Written | None: ...
@overload
def convert_grib(
    path: _Paths,
    *,
    grouping: Literal["merge_all", "one_to_one"] = "merge_all",
    preserve_all_keys: bool = False,
    encoding: Literal["none", "source", "codes", "simple_packing"] = "none",
    bits: int | None = None,
    filter: Literal["none", "shuffle"] = "none",
    compression: Literal["none", "auto", "szip", "zstd", "lz4"] = "none",
    compression_level: _Level = None,
    threads: int = 0,
    hash: Literal["xxh3"] | None = "xxh3",
    split: bool | None = None,
    all_keys: bool | None = None,
    level: _Level = None,
    no_hash: bool | None = None,
    max_decoded_bytes: int | None = None,
    per_object_metadata: bool = False,
    output: None = None,
    storage_options: None = None,
    force: bool = False,
) -> list[bytes]: ...
@overload
def convert_grib(
    path: _Paths,
    *,
    grouping: Literal["merge_all", "one_to_one"] = "merge_all",
    preserve_all_keys: bool = False,
    encoding: Literal["none", "source", "codes", "simple_packing"] = "none",
    bits: int | None = None,
    filter: Literal["none", "shuffle"] = "none",
    compression: Literal["none", "auto", "szip", "zstd", "lz4"] = "none",
    compression_level: _Level = None,
    threads: int = 0,
    hash: Literal["xxh3"] | None = "xxh3",
    split: bool | None = None,
    all_keys: bool | None = None,
    level: _Level = None,
    no_hash: bool | None = None,
    max_decoded_bytes: int | None = None,
    per_object_metadata: bool = False,
    output: _Path,
    storage_options: Mapping[str, Any] | None = None,
    force: bool = False,
) -> _Written: ...
def convert_grib_buffer(buf: Buffer, **kwargs: Any) -> list[bytes]: ...
def to_grib(messages: Iterable[Buffer]) -> bytes: ...
@overload
def convert_netcdf(
    path: _Paths,
    *,
    split_by: Literal["file", "variable", "record"] = "file",
    cf: bool = False,
    encoding: Literal["none", "simple_packing"] = "none",
    bits: int | None = None,
    filter: Literal["none", "shuffle"] = "none",
    compression: Literal["none", "szip", "zstd", "lz4"] = "none",
    compression_level: _Level = None,
    threads: int = 0,
    hash: Literal["xxh3"] | None = "xxh3",
    level: _Level = None,
    no_hash: bool | None = None,
    max_decoded_bytes: int | None = None,
    output: None = None,
    storage_options: None = None,
    force: bool = False,
) -> list[bytes]: ...
@overload
def convert_netcdf(
    path: _Paths,
    *,
    split_by: Literal["file", "variable", "record"] = "file",
    cf: bool = False,
    encoding: Literal["none", "simple_packing"] = "none",
    bits: int | None = None,
    filter: Literal["none", "shuffle"] = "none",
    compression: Literal["none", "szip", "zstd", "lz4"] = "none",
    compression_level: _Level = None,
    threads: int = 0,
    hash: Literal["xxh3"] | None = "xxh3",
    level: _Level = None,
    no_hash: bool | None = None,
    max_decoded_bytes: int | None = None,
    output: _Path,
    storage_options: Mapping[str, Any] | None = None,
    force: bool = False,
) -> _Written: ...
def to_netcdf(
    messages: Iterable[Buffer],
    path: _Path,
    *,
    force: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> _Written: ...
@overload
def convert_nifti(
    path: _Paths,
    *,
    mask: _Path | None = None,
    byte_order: Literal["keep", "little", "big"] = "keep",
    compression: Literal["none", "zstd", "szip"] = "zstd",
    level: _Level = None,
    max_decoded_bytes: int | None = None,
    output: None = None,
    storage_options: None = None,
    force: bool = False,
) -> bytes: ...
@overload
def convert_nifti(
    path: _Paths,
    *,
    mask: _Path | None = None,
    byte_order: Literal["keep", "little", "big"] = "keep",
    compression: Literal["none", "zstd", "szip"] = "zstd",
    level: _Level = None,
    max_decoded_bytes: int | None = None,
    output: _Path,
    storage_options: Mapping[str, Any] | None = None,
    force: bool = False,
) -> _Written: ...
def to_nifti(
    input: _Path,
    output: _Path,
    *,
    message: int = 0,
    object: int = 0,
    nifti2: bool = False,
    force: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> _Written: ...
@overload
def convert_dicom(
    path: _Paths,
    *,
    recursive: bool = False,
    skip_unsupported: bool = False,
    deidentify: bool = False,
    retain_patient_characteristics: bool = False,
    retain_full_dates: bool = False,
    retain_device_identity: bool = False,
    retain_institution_identity: bool = False,
    deid_key: _Path | None = None,
    allow_burned_in: bool = False,
    compression: Literal["none", "zstd", "szip"] = "zstd",
    level: _Level = None,
    output: None = None,
    storage_options: None = None,
    force: bool = False,
) -> list[bytes]: ...
@overload
def convert_dicom(
    path: _Paths,
    *,
    recursive: bool = False,
    skip_unsupported: bool = False,
    deidentify: bool = False,
    retain_patient_characteristics: bool = False,
    retain_full_dates: bool = False,
    retain_device_identity: bool = False,
    retain_institution_identity: bool = False,
    deid_key: _Path | None = None,
    allow_burned_in: bool = False,
    compression: Literal["none", "zstd", "szip"] = "zstd",
    level: _Level = None,
    output: _Path,
    storage_options: Mapping[str, Any] | None = None,
    force: bool = False,
) -> _Written: ...
def to_dicom(
    input: _Path,
    output_dir: _Path,
    *,
    message: int = 0,
    object: int = 0,
    force: bool = False,
    strict: bool = False,
) -> list[str]: ...
def compute_hash(data: bytes | bytearray, algo: str = "xxh3") -> str: ...
def compute_packing_params(
    values: npt.ArrayLike, bits_per_value: int, decimal_scale_factor: int
) -> dict[str, Any]: ...
def decode(
    buf: Buffer,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> Message: ...
def decode_descriptors(buf: Buffer) -> tuple[Metadata, list[DataObjectDescriptor]]: ...
def decode_metadata(buf: Buffer) -> Metadata: ...
def decode_object(
    buf: Buffer,
    index: int,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> tuple[Metadata, DataObjectDescriptor, _Array]: ...
def decode_range(
    buf: Buffer,
    object_index: int,
    ranges: Iterable[_Range],
    join: bool = False,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> Any: ...
def decode_with_masks(
    buf: Buffer, native_byte_order: bool = True, threads: int = 0, verify_hash: bool = False
) -> Message: ...
def encode(
    global_meta_dict: _MetaIn,
    descriptors_and_data: Iterable[tuple[_DescIn, _Data]],
    hash: _Hash = "xxh3",
    threads: int = 0,
    allow_nan: bool = False,
    allow_inf: bool = False,
    nan_mask_method: str | None = None,
    pos_inf_mask_method: str | None = None,
    neg_inf_mask_method: str | None = None,
    small_mask_threshold_bytes: int | None = None,
    aggregate_hash: None = None,
    zstd_content_size: bool = False,
) -> bytes: ...
def encode_pre_encoded(
    global_meta_dict: _MetaIn,
    descriptors_and_data: Iterable[tuple[_DescIn, Buffer]],
    hash: _Hash = "xxh3",
    threads: int = 0,
) -> bytes: ...
def iter_messages(buf: Buffer, *, verify_hash: bool = False) -> MessageIter: ...
def scan(buf: Buffer) -> list[_Range]: ...
def validate(buf: Buffer, level: str = "default", check_canonical: bool = False) -> dict[str, Any]: ...
def validate_file(
    path: _Path, level: str = "default", check_canonical: bool = False
) -> dict[str, Any]: ...
def write_catalogue(path: _Path) -> int | None: ...
def is_remote_url(source: object) -> bool: ...
def open_catalogue(
    location: str | PathLike[str], storage_options: Mapping[str, Any] | None = None
) -> list[RemoteTensogramFile]: ...
def index_archives(
    inputs: str | PathLike[str] | Iterable[str | PathLike[str]],
    output: str | PathLike[str],
    storage_options: Mapping[str, Any] | None = None,
    *,
    force: bool = False,
) -> dict[str, Any]: ...

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
    "TensogramError",
    "FramingError",
    "MetadataError",
    "CodecError",
    "UnsupportedCodecError",
    "LimitExceededError",
    "EncodeError",
    "InvalidArgumentError",
    "RangeNotSupportedError",
    "TensogramIOError",
    "IntegrityError",
    "HashMismatchError",
    "MissingHashError",
]
