"""Type stubs of ``tgm._remote``: files read from a URL or a file object."""

import os
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, NoReturn, Protocol, overload

import numpy.typing as npt

from typing_extensions import Self

from . import _native
from . import DataObjectDescriptor, Message, Metadata

_Range = tuple[int, int]

class _Reader(Protocol):
    """A file-like object tgm reads: ``read`` and ``seek``."""

    def read(self, n: int = ..., /) -> bytes: ...
    def seek(self, offset: int, whence: int = ..., /) -> int: ...

SCHEMES: tuple[str, ...]

def is_url(source: object) -> bool: ...
def is_reader(source: object) -> bool: ...
def reader_name(obj: object) -> str: ...
def storage_pairs(storage_options: Mapping[str, Any] | None) -> list[tuple[str, str]]: ...
def open_native(
    source: str | _Reader, storage_options: Mapping[str, Any] | None, intact_only: bool
) -> _native.File: ...

class _Reading:
    # The reading API shared with tgm.TensogramFile (stubs only).
    def is_remote(self) -> bool: ...
    def message_count(self) -> int: ...
    def damage(self) -> list[tuple[int, int, str, bool]]: ...
    def __len__(self) -> int: ...
    def read_message(self, index: int) -> bytes: ...
    def messages(self) -> list[bytes]: ...
    def decode_message(
        self,
        index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> Message: ...
    @overload
    def __getitem__(self, key: int) -> Message: ...
    @overload
    def __getitem__(self, key: slice) -> list[Message]: ...
    def file_decode_metadata(self, msg_index: int) -> Metadata: ...
    def file_decode_descriptors(self, msg_index: int) -> dict[str, Any]: ...
    def file_decode_object(
        self,
        msg_index: int,
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> dict[str, Any]: ...
    def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: Iterable[_Range],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> Any: ...
    def file_decode_object_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> list[dict[str, Any]]: ...
    def file_decode_range_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        ranges: Iterable[_Range],
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[Any]: ...
    def object_array(self, msg_index: int, obj_index: int, verify_hash: bool = False) -> npt.NDArray[Any]: ...
    def object_descriptor(
        self, msg_index: int, obj_index: int
    ) -> tuple[Metadata, DataObjectDescriptor]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        _exc_type: type[BaseException] | None = None,
        _exc_val: BaseException | None = None,
        _exc_tb: TracebackType | None = None,
    ) -> bool: ...

def open_catalogue(
    location: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
) -> list[RemoteTensogramFile]: ...
def index_archives(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None = None,
    *,
    force: bool = False,
) -> dict[str, Any]: ...

class RemoteTensogramFile(_Reading):
    def __init__(
        self,
        source: str | _Reader,
        storage_options: Mapping[str, Any] | None = None,
        *,
        intact_only: bool = False,
    ) -> None: ...
    def source(self) -> str | _Reader: ...
    def __iter__(self) -> NoReturn: ...
    def prefetch_layouts(self, msg_indices: Iterable[int]) -> None: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any]) -> None: ...
    def append(self, *_args: Any, **_kwargs: Any) -> NoReturn: ...
    def append_bytes(self, *_args: Any, **_kwargs: Any) -> NoReturn: ...
