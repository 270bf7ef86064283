"""``TgmStore``: a tgm archive as a read-only zarr-python 3 store, so that
``zarr.open_group(store=TgmStore(path), mode="r")`` and
``xr.open_dataset(TgmStore(path), engine="zarr")`` read it.

The store shows the dataset ``xr.open_dataset(path, engine="tgm")`` gives
(names, dimensions, stacking, grids; ``tgm.xarray_backend``), Zarr v3
laid out:

* ``zarr.json``: the root group, with the dataset's attributes;
* ``<variable>/zarr.json``: one array per variable and coordinate, with
  ``dimension_names``, its attributes CF-encoded (times as numbers with
  ``units``; non-index coordinates in ``coordinates``) and one ``bytes``
  codec (little-endian);
* ``<variable>/c/i/j/...``: one chunk per data object (stacking
  dimensions of chunk length 1, the object's own dimensions whole),
  decoded when the chunk is read; coordinates are one chunk.

Objects are decoded on each chunk read, as the xarray backend reads them;
a URL works as for :meth:`tgm.TensogramFile.open`.

``mode="w"`` (a new file, replacing one only because ``"w"`` asked) and
``mode="a"`` (new arrays appended as new messages; the existing ones are
shown and never rewritten) make the store writable: what zarr writes is
held in memory until the store is closed (``with TgmStore(...) as
store:`` or ``store.close()``), then written as :func:`tgm.to_tgm` writes
variables (``tgm._zarr_writes``). ``mode="w"`` also takes a URL
(``s3://``, ``gs://``, ``az://``, ``http(s)://``, configured by
``storage_options`` as for reads): the messages stream into an upload
that completes on close, and an existing object is refused unless
``overwrite=True`` (``spec/remote.md`` §7). Appending to a URL, and any
write to a file object, is refused.
"""

import json
import math
import os

import numpy as np
import xarray as xr
from xarray import conventions
from xarray.backends.zarr import FillValueCoder
from xarray.core import indexing
from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype

from . import _remote
from ._errors import InvalidArgumentError
from ._zarr_writes import Writes, same_metadata
from .xarray_backend import ObjectArray, StackedArray, open_tgm_dataset

#: Zarr v3 ``data_type`` of each NumPy type a variable can have.
_ZARR_TYPES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128",
}


def _json_value(v):
    """An attribute value as JSON (NumPy values as Python ones, non-finite
    floats as Zarr's ``"NaN"``/``"Infinity"`` strings)."""
    if isinstance(v, np.ndarray):
        return [_json_value(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _attributes(attrs, dtype):
    """Array attributes as JSON; a CF ``_FillValue`` as xarray's zarr
    backend stores it (base64 of the value's bytes for floats)."""
    out = {k: _json_value(v) for k, v in attrs.items() if k != "_FillValue"}
    if "_FillValue" in attrs:
        out["_FillValue"] = _json_value(FillValueCoder.encode(attrs["_FillValue"], dtype))
    return out


def _fill_value(dtype):
    if dtype.kind == "b":
        return False
    if dtype.kind in "fc":
        return 0.0 if dtype.kind == "f" else [0.0, 0.0]
    return 0


def _backing(var):
    """The :class:`ObjectArray` or :class:`StackedArray` behind a variable
    read lazily, else None (coordinates, in memory)."""
    data = var._data
    if isinstance(data, indexing.LazilyIndexedArray) and isinstance(data.array, (ObjectArray, StackedArray)):
        return data.array
    return None


class _Array:
    """One array of the store: its metadata and how to make a chunk."""

    def __init__(self, name, var, backing):
        dtype = np.dtype(var.dtype)
        if dtype.name not in _ZARR_TYPES:
            raise InvalidArgumentError(
                f"variable {name!r}: values of type {dtype} have no Zarr v3 data type in TgmStore"
            )
        self.dtype = dtype
        self.shape = tuple(var.shape)
        self.backing = backing
        self.values = None if backing is not None else np.asarray(var.values)
        if isinstance(backing, StackedArray):
            self.chunks = (1,) * backing.grid.ndim + self.shape[backing.grid.ndim:]
        else:
            self.chunks = self.shape
        self.meta = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": _ZARR_TYPES[dtype.name],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [max(c, 1) for c in self.chunks]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": _fill_value(dtype),
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
            if dtype.itemsize > 1 else [{"name": "bytes"}],
            "attributes": _attributes(var.attrs, dtype),
            "dimension_names": list(var.dims),
        }

    def n_chunks(self):
        """Number of chunks along each dimension."""
        return tuple(math.ceil(s / max(c, 1)) for s, c in zip(self.shape, self.chunks))

    def chunk(self, index):
        """Bytes of chunk ``index`` (a tuple), or None when out of range."""
        if len(index) != len(self.shape) or any(not 0 <= i < n for i, n in zip(index, self.n_chunks())):
            return None
        if self.backing is None:
            arr = self.values
        elif isinstance(self.backing, ObjectArray):
            arr = self.backing._whole()
        else:
            stack = index[: self.backing.grid.ndim]
            if any(i != 0 for i in index[self.backing.grid.ndim:]):
                return None
            arr = self.backing.grid[stack]._whole()
        return np.ascontiguousarray(arr, dtype=self.dtype.newbyteorder("<")).tobytes()


def _chunk_index(rest):
    """``c/1/0`` → ``(1, 0)``; ``c`` → ``()``; anything else None."""
    if rest == "c":
        return ()
    if not rest.startswith("c/"):
        return None
    try:
        return tuple(int(p) for p in rest[2:].split("/"))
    except ValueError:
        return None


class TgmStore(Store):
    """A tgm file, URL or file object as a Zarr v3 store (see the module
    documentation). ``mode`` is ``"r"`` (the default), ``"w"`` or
    ``"a"``; ``open_dataset_kwargs`` go to the tgm backend
    (``filter_by_keys``, ``drop_variables``, ``stack_keys``,
    ``intact_only``)."""

    supports_partial_writes = False
    supports_listing = True

    def __init__(
        self, source, *, mode="r", read_only=None, storage_options=None, overwrite=False,
        **open_dataset_kwargs,
    ):
        if mode not in ("r", "w", "a"):
            raise InvalidArgumentError(f"TgmStore mode must be 'r', 'w' or 'a', not {mode!r}")
        if read_only is not None and read_only != (mode == "r"):
            raise InvalidArgumentError(
                f"TgmStore with mode={mode!r} is {'read-only' if mode == 'r' else 'writable'}: "
                "pass mode='w' or 'a' to write, mode='r' to read"
            )
        writable = mode != "r"
        url = _remote.is_url(source)
        if writable and not url and (
            not isinstance(source, (str, os.PathLike)) or "://" in os.fspath(source)
        ):
            raise InvalidArgumentError(
                f"TgmStore: {source!r} is neither a local path nor a URL written to; file "
                "objects are read-only (open with mode='r')"
            )
        if url and mode == "a":
            raise InvalidArgumentError(
                f"TgmStore: {source}: an object store cannot append to an object; write a new "
                "archive with mode='w' (or append with `tgm import --append --force`, which "
                "rewrites the object)"
            )
        if storage_options and not (url and mode == "w"):
            raise InvalidArgumentError(
                "TgmStore: storage_options configure the store of a URL written with mode='w'"
            )
        super().__init__(read_only=not writable)
        self.source = source
        self._mode = mode
        self._output = (storage_options, bool(overwrite))
        self._writes = Writes() if writable else None
        self._arrays, self._meta, self._close = {}, {}, lambda: None
        if mode == "w" or (mode == "a" and not os.path.exists(source)):
            return
        self._load(open_tgm_dataset(source, decode=None, **open_dataset_kwargs))

    @property
    def supports_writes(self):
        """Whether the store was opened with ``mode="w"`` or ``"a"``."""
        return self._writes is not None

    @property
    def supports_deletes(self):
        """As :attr:`supports_writes` (only keys written since opening)."""
        return self._writes is not None

    def _load(self, raw):
        variables, attrs = conventions.encode_dataset_coordinates(raw)
        self._arrays = {}
        for name, var in variables.items():
            backing = _backing(raw.variables[name])
            if backing is None:
                var = conventions.encode_cf_variable(xr.Variable(var.dims, var.values, var.attrs, var.encoding), name=name)
            self._arrays[str(name)] = _Array(str(name), var, backing)
        group = {"zarr_format": 3, "node_type": "group",
                 "attributes": {k: _json_value(v) for k, v in attrs.items()}}
        self._meta = {"zarr.json": json.dumps(group).encode()}
        for name, a in self._arrays.items():
            self._meta[f"{name}/zarr.json"] = json.dumps(a.meta).encode()
        self._close = raw.close

    def __eq__(self, other):
        return isinstance(other, TgmStore) and other.source == self.source

    def __repr__(self):
        return f"TgmStore({self.source!r})"

    def _bytes(self, key):
        if self._writes is not None and key in self._writes.keys:
            return self._writes.keys[key]
        if key in self._meta:
            return self._meta[key]
        name, _, rest = key.partition("/")
        a = self._arrays.get(name)
        index = _chunk_index(rest) if a is not None else None
        return None if index is None else a.chunk(index)

    async def get(self, key, prototype=None, byte_range: ByteRequest | None = None):
        """The bytes of ``key`` (metadata, or a chunk decoded now), or None."""
        data = self._bytes(key)
        if data is None:
            return None
        if isinstance(byte_range, RangeByteRequest):
            data = data[byte_range.start:byte_range.end]
        elif isinstance(byte_range, OffsetByteRequest):
            data = data[byte_range.offset:]
        elif isinstance(byte_range, SuffixByteRequest):
            data = data[len(data) - byte_range.suffix:]
        return (prototype or default_buffer_prototype()).buffer.from_bytes(data)

    async def get_partial_values(self, prototype, key_ranges):
        """:meth:`get` of each ``(key, byte_range)``."""
        return [await self.get(k, prototype, r) for k, r in key_ranges]

    async def exists(self, key):
        """Whether ``key`` is metadata or a chunk in range."""
        if key in self._meta or (self._writes is not None and key in self._writes.keys):
            return True
        name, _, rest = key.partition("/")
        a = self._arrays.get(name)
        index = _chunk_index(rest) if a is not None else None
        return index is not None and len(index) == len(a.shape) and all(
            0 <= i < n for i, n in zip(index, a.n_chunks()))

    async def set(self, key, value):
        """Hold ``key`` until the store is closed; refused when read-only
        or when it would change what the archive already holds."""
        self._check_writable()
        data = value.to_bytes()
        if self._in_archive(key):
            if key.endswith("zarr.json") and same_metadata(self._meta[key], data):
                return
            raise InvalidArgumentError(
                f"{os.fspath(self.source)}: {key!r} is already in the archive; appending adds "
                "new arrays and never rewrites existing messages"
            )
        self._writes.set(key, data)

    async def delete(self, key):
        """Forget ``key`` written since opening; keys of the archive are
        refused."""
        self._check_writable()
        if self._in_archive(key):
            raise InvalidArgumentError(
                f"{os.fspath(self.source)}: {key!r} is in the archive, and TgmStore never "
                "deletes what a file holds"
            )
        self._writes.delete(key)

    def _in_archive(self, key):
        if key in self._meta:
            return True
        name, _, rest = key.partition("/")
        return name in self._arrays and rest != ""

    def _keys(self):
        if self._writes is not None:
            yield from (k for k in self._writes.keys if not self._in_archive(k))
        yield from self._meta
        for name, a in self._arrays.items():
            for index in np.ndindex(*a.n_chunks()):
                yield f"{name}/c" + "".join(f"/{i}" for i in index)

    async def list(self):
        """Every key: metadata, then each array's chunks."""
        for k in self._keys():
            yield k

    async def list_prefix(self, prefix):
        """The keys starting with ``prefix``."""
        for k in self._keys():
            if k.startswith(prefix):
                yield k

    async def list_dir(self, prefix):
        """The names directly under ``prefix``."""
        prefix = prefix.rstrip("/")
        seen = set()
        for k in self._keys():
            if prefix and not k.startswith(prefix + "/"):
                continue
            rest = k[len(prefix) + 1:] if prefix else k
            head = rest.split("/", 1)[0]
            if head not in seen:
                seen.add(head)
                yield head

    def __exit__(self, exc_type, exc_value, traceback):
        """Close; when the block raised, what was written is dropped, so an
        interrupted ``to_zarr`` leaves the file as it was."""
        if exc_type is not None and self._writes is not None:
            self._writes.keys.clear()
        self.close()

    def close(self):
        """Write what was written (mode ``"w"``/``"a"``), then release the
        file."""
        try:
            if self._writes is not None:
                self._writes.commit(
                    self.source if _remote.is_url(self.source) else os.fspath(self.source),
                    append=self._mode == "a",
                    output=self._output,
                )
        finally:
            self._close()
            super().close()
