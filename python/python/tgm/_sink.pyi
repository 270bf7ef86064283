"""Type stubs of ``tgm._sink``: new archives written front to back."""

from collections.abc import Iterable, Mapping
from os import PathLike
from types import TracebackType
from typing import Any, TypedDict

from typing_extensions import Buffer, Self

from . import _native

class _Written(TypedDict):
    target: str
    bytes: int
    etag: str | None

def _options(target: str, storage_options: Mapping[str, Any] | None) -> list[tuple[str, str]]: ...

class Output:
    target: str
    bytes: int | None
    etag: str | None
    _native: _native.Sink
    _open: bool
    def __init__(
        self,
        target: str | PathLike[str],
        storage_options: Mapping[str, Any] | None = None,
        *,
        overwrite: bool = False,
    ) -> None: ...
    def write(self, data: Buffer) -> None: ...
    def acknowledged(self) -> int: ...
    def finish(self) -> _Written: ...
    def written(self) -> _Written: ...
    def abort(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...

def write_messages(
    target: str | PathLike[str],
    messages: Iterable[Buffer],
    storage_options: Mapping[str, Any] | None = None,
    *,
    overwrite: bool = False,
) -> _Written: ...

class TensogramWriter(Output):
    def append(
        self, global_meta_dict: Mapping[str, Any] | None, descriptors_and_data: Any, **encode_options: Any
    ) -> None: ...
    def append_bytes(self, message: Buffer) -> None: ...
    def source(self) -> str: ...
    def is_remote(self) -> bool: ...
    def close(self) -> None: ...
