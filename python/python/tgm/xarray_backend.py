"""xarray backend ``engine="tgm"`` (entry point ``xarray.backends``).

Each data object becomes (part of) a variable:

* dimension names come from the ``dim_names`` list in the object's
  metadata (``base[i]``), else from ``_extra_``, else ``dim_0``, ``dim_1`` ...;
* the variable name is ``mars.param`` when present, else ``name``, else
  ``object_<m>_<o>``;
* objects sharing a variable name are stacked into a hypercube along the
  MARS keys whose values differ between them (those keys become dimension
  coordinates, in the order of ``stack_keys`` or sorted); MARS keys with one
  value become variable attributes ``mars.<key>``;
* data is read lazily, one object per read: slices through
  ``decode_range`` when the pipeline allows, anything else by decoding the
  object (only its frame is read once the message's index is known). With
  ``chunks={}`` each object is one Dask chunk;
* loaded arrays own their memory: rewriting or truncating the file after
  ``.load()`` changes nothing. ``zero_copy=True`` serves uncompressed
  native-order objects as read-only views of the file's memory map
  instead, which change when the file is rewritten in place and kill the
  process (SIGBUS) when read after it was truncated;
* a file that is not a Tensogram file or holds bytes outside complete
  messages is refused, as by ``TensogramFile.open``; ``intact_only=True``
  opens the intact messages of a damaged file.
"""

import itertools
import math
import os

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ._dtypes import numpy_dtype
from ._errors import MetadataError, RangeNotSupportedError
from . import _remote
from ._file import TensogramFile

#: Most element runs requested through decode_range for one read; beyond
#: it the object is decoded whole.
MAX_RANGES = 4096


class ObjectArray(BackendArray):
    """One data object of a file, read on indexing. Pickles as the file's
    path and message layout, so workers do not rescan the file."""

    def __init__(self, f, msg, obj, desc):
        self.file = f
        self.msg = msg
        self.obj = obj
        self.shape = tuple(desc.shape)
        self.dtype = numpy_dtype(desc.dtype)
        self._ranges_ok = desc.filter == "none" and desc.compression == "none"

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._read
        )

    def _read(self, key):
        key = tuple(key)
        full = all(isinstance(k, slice) and k == slice(None) for k in key)
        if full or not self._ranges_ok or not self.shape:
            return np.asarray(self.file.object_array(self.msg, self.obj))[key]
        try:
            return self._read_ranges(key)
        except RangeNotSupportedError:
            return np.asarray(self.file.object_array(self.msg, self.obj))[key]

    def _read_ranges(self, key):
        axes = [np.arange(n)[k] if isinstance(k, slice) else np.array([k]) for k, n in zip(key, self.shape)]
        sizes = [len(a) for a in axes]
        if 0 in sizes:
            return np.asarray(self.file.object_array(self.msg, self.obj))[key]
        last = axes[-1]
        runs = [(int(last[0]), len(last))] if np.all(np.diff(last) == 1) else [(int(i), 1) for i in last]
        n_rows = math.prod(sizes[:-1])
        if n_rows * len(runs) > MAX_RANGES:
            return np.asarray(self.file.object_array(self.msg, self.obj))[key]
        strides = [math.prod(self.shape[i + 1 :]) for i in range(len(self.shape))]
        ranges = []
        for row in itertools.product(*axes[:-1]):
            base = sum(int(r) * s for r, s in zip(row, strides))
            ranges.extend((base + start, count) for start, count in runs)
        data = self.file.file_decode_range(self.msg, self.obj, ranges, join=True)
        data = data.reshape(sizes)
        squeeze = tuple(i for i, k in enumerate(key) if not isinstance(k, slice))
        return data.squeeze(axis=squeeze) if squeeze else data


class StackedArray(BackendArray):
    """Objects of equal shape laid on a grid of stacking coordinates."""

    def __init__(self, grid, obj_shape, dtype):
        self.grid = grid  # ndarray of ObjectArray, shape = stacking shape
        self.shape = tuple(grid.shape) + tuple(obj_shape)
        self.dtype = dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._read
        )

    def _read(self, key):
        key = tuple(key)
        k_stack, k_obj = key[: self.grid.ndim], key[self.grid.ndim :]
        cells = self.grid[k_stack]
        if isinstance(cells, ObjectArray):
            return cells._read(k_obj)
        out = None
        for idx in np.ndindex(cells.shape):
            part = cells[idx]._read(k_obj)
            if out is None:
                out = np.empty(cells.shape + part.shape, dtype=part.dtype)
            out[idx] = part
        if out is None:
            probe = np.empty(self.shape[self.grid.ndim :], dtype=self.dtype)[k_obj]
            out = np.empty(cells.shape + probe.shape, dtype=self.dtype)
        return out


def _variable_name(entry, m, o):
    mars = entry.get("mars")
    if isinstance(mars, dict) and "param" in mars:
        return str(mars["param"])
    if "name" in entry:
        return str(entry["name"])
    return f"object_{m}_{o}"


def _dims(entry, meta, ndim, name):
    names = entry.get("dim_names", meta.extra.get("dim_names"))
    if isinstance(names, list) and len(names) == ndim and all(isinstance(n, str) for n in names):
        return tuple(names)
    return tuple(f"{name}_dim_{i}" for i in range(ndim))


def _scalar(v):
    return v if isinstance(v, (int, float, str, bool)) else str(v)


def open_tgm_dataset(path, drop_variables=None, stack_keys=None, intact_only=False, zero_copy=False):
    """The dataset of a tgm file; see the module documentation."""
    f = TensogramFile.open(path, intact_only=intact_only, zero_copy=zero_copy)
    groups = {}
    for m in range(len(f)):
        info = f.file_decode_descriptors(m)
        meta, descs = info["metadata"], info["descriptors"]
        for o, desc in enumerate(descs):
            entry = meta.base[o] if o < len(meta.base) else {}
            name = _variable_name(entry, m, o)
            mars = entry.get("mars") if isinstance(entry.get("mars"), dict) else {}
            mars = {k: _scalar(v) for k, v in mars.items() if k != "param"}
            groups.setdefault(name, []).append(
                (ObjectArray(f, m, o, desc), _dims(entry, meta, desc.ndim, name), mars, desc)
            )
    drop = set(drop_variables or ())
    variables, coords = {}, {}
    for name, members in groups.items():
        if name in drop:
            continue
        variables[name], var_coords = _stack(name, members, stack_keys)
        for k, values in var_coords.items():
            if coords.setdefault(k, values) != values:
                raise MetadataError(
                    f"variables disagree on the values of MARS key {k!r}; "
                    "open them separately with drop_variables"
                )
    ds = xr.Dataset(variables, coords=coords)
    ds.set_close(f.close)
    return ds


def _stack(name, members, stack_keys):
    first_arr, dims, _, desc = members[0]
    for arr, d, _, _ in members:
        if arr.shape != first_arr.shape or d != dims or arr.dtype != first_arr.dtype:
            raise MetadataError(
                f"variable {name!r}: objects differ in shape, dims or dtype and cannot be stacked"
            )
    keys = sorted({k for _, _, mars, _ in members for k in mars})
    varying = [k for k in keys if len({mars.get(k) for _, _, mars, _ in members}) > 1]
    if stack_keys is not None:
        varying = [k for k in stack_keys if k in varying] + [k for k in varying if k not in stack_keys]
    constant = {f"mars.{k}": members[0][2][k] for k in keys if k not in varying and k in members[0][2]}
    if not varying:
        if len(members) > 1:
            raise MetadataError(
                f"variable {name!r}: {len(members)} objects with identical MARS keys cannot be stacked"
            )
        lazy = indexing.LazilyIndexedArray(first_arr)
        var = xr.Variable(dims, lazy, attrs=constant)
        var.encoding["preferred_chunks"] = dict(zip(dims, first_arr.shape))
        return var, {}
    coords = {k: sorted({mars.get(k) for _, _, mars, _ in members}, key=lambda v: (str(type(v)), v)) for k in varying}
    grid = np.empty(tuple(len(coords[k]) for k in varying), dtype=object)
    where = {k: {v: i for i, v in enumerate(coords[k])} for k in varying}
    for arr, _, mars, _ in members:
        pos = tuple(where[k][mars.get(k)] for k in varying)
        if grid[pos] is not None:
            raise MetadataError(f"variable {name!r}: two objects share MARS keys {dict(zip(varying, pos))}")
        grid[pos] = arr
    if any(c is None for c in grid.flat):
        raise MetadataError(
            f"variable {name!r}: the objects do not fill the hypercube over {varying}"
        )
    stacked = StackedArray(grid, first_arr.shape, first_arr.dtype)
    all_dims = tuple(varying) + dims
    var = xr.Variable(all_dims, indexing.LazilyIndexedArray(stacked), attrs=constant)
    chunks = {k: 1 for k in varying}
    chunks.update(zip(dims, first_arr.shape))
    var.encoding["preferred_chunks"] = chunks
    return var, coords


class TgmBackendEntrypoint(BackendEntrypoint):
    """``xr.open_dataset(path, engine="tgm")``."""

    description = "Tensogram v3 (.tgm) files through tgm"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "stack_keys",
        "intact_only",
        "zero_copy",
    )

    def open_dataset(
        self,
        filename_or_obj,
        *,
        drop_variables=None,
        stack_keys=None,
        intact_only=False,
        zero_copy=False,
    ):
        """The dataset of a tgm file, URL or file object (see the module
        documentation)."""
        src = filename_or_obj
        if not (_remote.is_url(src) or _remote.is_reader(src)):
            src = os.fspath(src)
        return open_tgm_dataset(src, drop_variables, stack_keys, intact_only, zero_copy)

    def guess_can_open(self, filename_or_obj):
        """Whether the path ends in ``.tgm``."""
        try:
            return os.fspath(filename_or_obj).endswith(".tgm")
        except TypeError:
            return False
