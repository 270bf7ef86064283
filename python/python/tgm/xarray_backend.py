"""xarray backend ``engine="tgm"`` (entry point ``xarray.backends``).

Each data object becomes (part of) a variable:

* dimension names come from the ``dim_names`` list in the object's
  metadata (``base[i]``), else from ``_extra_``, else ``dim_0``, ``dim_1`` ...;
* fields on a regular latitude/longitude or regular Gaussian grid
  (``geography``) get the dimensions ``latitude``/``longitude`` with their
  coordinate values, global reduced Gaussian fields a ``values`` dimension
  with ``latitude(values)``/``longitude(values)``, other 1-D fields with a
  geography ``values``, as cfgrib gives them and as ``tgm refs`` writes
  them, shared by every variable on that grid, the first grid holding a
  name taking it (the core's ``ViewGrids``, one rule with ``tgm refs``);
* what each object is in the dataset is the core's view (``tgm::view``,
  the rules ``tgm refs`` follows; ``spec/kerchunk.md`` §2): the variable
  name is GRIB's ``grib.cfVarName`` (cfgrib's name: ``t2m``) when known,
  else ``grib.shortName``, else ``mars.param``, else ``name``, else
  ``object_<m>_<o>``; the stacking keys are the MARS keys but ``param``,
  with MARS ``date`` and ``time`` as one ``time`` (the forecast reference
  time, datetime64), an integer ``step`` (hours) as timedelta64 and a level
  key (``levelist``) as a float named after GRIB's ``typeOfLevel``
  (``isobaricInhPa``, ``hybrid``), as cfgrib builds them; ``valid_time``
  is time + step over the ``time`` and ``step`` dimensions there are;
* attributes: the object's NetCDF attributes (``netcdf.attrs``, without
  ``scale_factor``/``add_offset`` when the converter already applied them),
  then the view's: its ``cf`` attributes and cfgrib's (``GRIB_<key>``,
  ``units``, ``long_name``, ``standard_name``); the dataset's from the
  message's ``netcdf.attrs`` and the view's (``GRIB_edition``,
  ``GRIB_centre``, ``institution``, ``Conventions = "CF-1.7"`` for GRIB
  fields, as cfgrib says). Stacked variables keep the attributes every
  object shares. CF decoding (times, masking and scaling) then runs as for
  any xarray backend, under the standard ``mask_and_scale``,
  ``decode_times``, ``decode_timedelta``, ``use_cftime``,
  ``concat_characters`` and ``decode_coords`` arguments;
* floating values are their stored type (float64 for ``convert-grib``'s
  exact values); ``values_dtype=np.float32`` gives cfgrib's float32;
* objects sharing a variable name are stacked into a hypercube along the
  MARS keys whose values differ between them; those keys become dimension
  coordinates in the order of ``stack_keys``, else ``number``, ``date``,
  ``time`` and ``step`` first as cfgrib orders them and the others sorted.
  ``number``, ``time`` and ``step`` with one value are scalar coordinates
  when every variable holding them agrees; other keys with one value
  become variable attributes ``MARS_<key>`` (as GRIB keys are
  ``GRIB_<key>``; CF attribute names allow no dots; a time as ISO 8601
  text, a step in hours);
* ``filter_by_keys`` (``{"typeOfLevel": "isobaricInhPa", "step": [0, 6]}``)
  keeps the objects whose ``mars``, ``grib`` or ``geography`` key holds one
  of the given values; :func:`open_tgm_datasets` (``tgm.open_datasets``)
  gives one dataset per level type, grid and shape where one dataset
  cannot hold them all;
* data is read lazily, one object per read: slices through
  ``decode_range`` when the pipeline allows, anything else by decoding the
  object (only its frame is read once the message's index is known). With
  ``chunks={}`` each object is one Dask chunk;
* values have the type a user computes with: ``bitmask`` objects are bool
  arrays of the declared shape, ``bfloat16`` objects ``ml_dtypes.bfloat16``
  when that package is installed, else float32 (exactly: every bfloat16 is a
  float32); such variables carry ``tgm_stored_dtype`` naming the stored type;
* loaded arrays own their memory: rewriting or truncating the file after
  ``.load()`` changes nothing. ``zero_copy=True`` serves uncompressed
  native-order objects as read-only views of the file's memory map
  instead, which change when the file is rewritten in place and kill the
  process (SIGBUS) when read after it was truncated;
* a file that is not a Tensogram file or holds bytes outside complete
  messages is refused, as by ``TensogramFile.open``; ``intact_only=True``
  opens the intact messages of a damaged file.
"""

import importlib
import itertools
import math
import os

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from . import _native
from ._dtypes import numpy_dtype
from ._errors import MetadataError, RangeNotSupportedError
from . import _remote
from ._file import TensogramFile

#: Most element runs requested through decode_range for one read; beyond
#: it the object is decoded whole.
MAX_RANGES = 4096


#: Stored types whose values are converted on reading, and to what.
CONVERTED = ("bitmask", "bfloat16")

#: Compressions whose objects are read by element ranges on indexing.
RANGE_COMPRESSIONS = ("none", "szip")


def _bfloat16_type():
    """``ml_dtypes.bfloat16`` when installed, else None."""
    # Imported by name: an optional dependency, with no type information.
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def value_dtype(stored):
    """The NumPy type of a variable's values for stored type ``stored``."""
    if stored == "bitmask":
        return np.dtype(bool)
    if stored == "bfloat16":
        return _bfloat16_type() or np.dtype(np.float32)
    return numpy_dtype(stored)


def to_values(stored, raw, shape):
    """A whole object as read (``bitmask`` packed MSB first, ``bfloat16``
    as native-order ``uint16`` bits) → its values of :func:`value_dtype`."""
    raw = np.asarray(raw)
    if stored == "bitmask":
        n = math.prod(shape)
        bits = np.unpackbits(raw.view(np.uint8).reshape(-1), count=n, bitorder="big")
        return bits.astype(bool).reshape(shape)
    if stored == "bfloat16":
        u16 = raw.view(np.uint16).reshape(shape)
        ml = _bfloat16_type()
        if ml is not None:
            return u16.view(ml)
        return (u16.astype(np.uint32) << 16).view(np.float32)
    return raw


class ObjectArray(BackendArray):
    """One data object of a file, read on indexing. Pickles as the file's
    path and message layout, so workers do not rescan the file."""

    def __init__(self, f, msg, obj, desc, values_dtype=None):
        self.file = f
        self.msg = msg
        self.obj = obj
        self.shape = tuple(desc.shape)
        self.stored = desc.dtype
        self.dtype = value_dtype(desc.dtype)
        # Floating values given as ``values_dtype`` when asked (cfgrib's
        # float32), exact float64 otherwise.
        self._cast = None
        if values_dtype is not None and np.issubdtype(self.dtype, np.floating):
            self._cast = np.dtype(values_dtype)
            self.dtype = self._cast
        # Outer indexing reads only the elements asked for where the
        # pipeline allows ranges (``spec/pipeline.md``): stored as is, or
        # szip (the RSIs that hold them), with or without simple packing.
        self._ranges_ok = (
            desc.filter == "none" and desc.compression in RANGE_COMPRESSIONS and desc.dtype not in CONVERTED
        )

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._read
        )

    def _whole(self):
        return to_values(self.stored, self.file.object_array(self.msg, self.obj), self.shape)

    def _read(self, key):
        out = self._read_stored(key)
        return out if self._cast is None else np.asarray(out).astype(self._cast)

    def _read_stored(self, key):
        key = tuple(key)
        # A key covering the object (Dask's chunk keys spell it out as
        # slice(0, n, 1)) reads it whole: one request of its frame.
        full = all(isinstance(k, slice) and k.indices(n) == (0, n, 1) for k, n in zip(key, self.shape))
        if full or not self._ranges_ok or not self.shape:
            return self._whole()[key]
        try:
            return self._read_ranges(key)
        except RangeNotSupportedError:
            return self._whole()[key]

    def _read_ranges(self, key):
        # Only the indices the key names: the shape is the file's claim.
        axes = [np.arange(*k.indices(n)) if isinstance(k, slice) else np.array([k]) for k, n in zip(key, self.shape)]
        sizes = [len(a) for a in axes]
        if 0 in sizes:
            return self._whole()[key]
        last = axes[-1]
        runs = [(int(last[0]), len(last))] if np.all(np.diff(last) == 1) else [(int(i), 1) for i in last]
        n_rows = math.prod(sizes[:-1])
        if n_rows * len(runs) > MAX_RANGES:
            return self._whole()[key]
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


#: NetCDF attributes already applied when ``netcdf.unpacked`` is true.
PACKING_ATTRS = ("scale_factor", "add_offset")


def _section(entry, key):
    v = entry.get(key)
    return v if isinstance(v, dict) else {}


def _attr_value(v):
    if isinstance(v, (int, float, str, bool, np.ndarray, np.generic)):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float, str, bool)) for x in v):
        return list(v)
    return str(v)


def _attrs(entry, view_attrs):
    """The variable attributes of one object: its NetCDF attributes, then
    those of the core's view (``cf``, cfgrib's ``GRIB_<key>``, ``units``,
    ``long_name``, ``standard_name``)."""
    nc = _section(entry, "netcdf")
    out = {}
    for k, v in _section(nc, "attrs").items():
        if not (nc.get("unpacked") and k in PACKING_ATTRS):
            out[k] = _attr_value(v)
    for k, v in view_attrs.items():
        if k.startswith("GRIB_"):
            out[k] = _attr_value(v)
        else:
            out.setdefault(k, _attr_value(v))
    return out


def _same(a, b):
    try:
        return bool(np.array_equal(a, b)) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else a == b
    except (TypeError, ValueError):
        return False


def _shared_attrs(all_attrs):
    """The attributes every one of ``all_attrs`` holds with one value."""
    first = all_attrs[0]
    return {k: v for k, v in first.items() if all(k in a and _same(a[k], v) for a in all_attrs[1:])}


def _dims(entry, meta, shape, name, grids):
    """Dimension names of one object: its ``dim_names`` (or the message's),
    else those its grid takes in ``grids`` (a ``_native.ViewGrids``:
    ``latitude``/``longitude`` or ``values``, given to the first grid
    holding them, as in ``tgm refs``); else ``<name>_dim_<i>``."""
    ndim = len(shape)
    listed = _native.view_listed_dims(entry, meta.extra, ndim)
    if listed is not None:
        return tuple(listed)
    geo = _section(entry, "geography")
    dims = None
    if isinstance(geo, dict):
        try:
            dims = grids.dims(geo, [int(n) for n in shape])
        except (TypeError, ValueError, OverflowError, InvalidArgumentError):
            # A geography no metadata could hold (a user's own dict).
            dims = None
    if dims is not None and len(dims) == ndim:
        return tuple(dims)
    return tuple(f"{name}_dim_{i}" for i in range(ndim))


def _key_value(entry, key):
    """The value of GRIB/MARS key ``key`` for one object: from its
    ``mars``, ``grib`` or ``geography`` section (in that order), else
    from the entry itself; None when absent."""
    for section in ("mars", "grib", "geography"):
        sec = _section(entry, section)
        if key in sec:
            return sec[key]
    return entry.get(key)


def _matches(entry, filter_by_keys):
    """Whether one object's keys hold the values of ``filter_by_keys``
    (a value or a list of accepted values per key; ``500`` matches
    ``"500"``). An object without the key does not match."""
    for key, want in filter_by_keys.items():
        have = _key_value(entry, key)
        if have is None:
            return False
        accepted = want if isinstance(want, (list, tuple, set)) else [want]
        if not any(_same(have, w) or str(have) == str(w) for w in accepted):
            return False
    return True


class Record:
    """One data object kept for a dataset: where it is, its metadata
    entry, descriptor and the message's metadata."""

    def __init__(self, m, o, entry, desc, meta, f=None, numbered=None):
        self.m, self.o, self.entry, self.desc, self.meta = m, o, entry, desc, meta
        #: The file holding the object (several for a catalogue file).
        self.f = f
        # The core's view (tgm::view): name, stacking keys as (kind,
        # value), attributes and the dataset attributes it gives.
        self.name, self.keys, self.view_attrs, self.dataset_attrs = _native.view_object(
            entry, m if numbered is None else numbered, o
        )


def _scan(f, filter_by_keys, first=0):
    """The :class:`Record` of every object of ``f`` matching
    ``filter_by_keys``, and the dataset attributes of the messages;
    ``first`` numbers the messages of ``f`` in unnamed objects' names
    (after those of the archives before it in a catalogue file)."""
    records, global_attrs = [], {}
    for m in range(len(f)):
        info = f.file_decode_descriptors(m)
        meta, descs = info["metadata"], info["descriptors"]
        for k, v in _section(_section(meta.extra, "netcdf"), "attrs").items():
            global_attrs.setdefault(k, _attr_value(v))
        for o, desc in enumerate(descs):
            entry = meta.base[o] if o < len(meta.base) else {}
            if filter_by_keys and not _matches(entry, filter_by_keys):
                continue
            records.append(Record(m, o, entry, desc, meta, f, first + m))
    giving = [r.dataset_attrs for r in records if r.dataset_attrs]
    for k, v in (_shared_attrs(giving) if giving else {}).items():
        global_attrs.setdefault(k, _attr_value(v))
    return records, global_attrs


#: The core's times (seconds since 1970) and durations (hours) as NumPy
#: types.
_TIME_KINDS = {"time": "datetime64[s]", "span": "timedelta64[h]"}


def _key_values(keys):
    """The core's stacking keys (``{key: (kind, value)}``) as coordinate
    values: times datetime64[ns], durations timedelta64[ns]."""
    out = {}
    for k, (kind, v) in keys.items():
        t = _TIME_KINDS.get(kind)
        out[k] = np.array(v, t).astype(t[:-3] + "[ns]")[()] if t else v
    return out


def _attr_of_key(v):
    """A stacking key's value as a ``MARS_<key>`` attribute, as ``tgm refs``
    writes it: a time as ISO 8601 text, a duration as its hours."""
    if isinstance(v, np.datetime64):
        return str(v.astype("datetime64[s]"))
    if isinstance(v, np.timedelta64):
        return int(v.astype("timedelta64[h]").astype(np.int64))
    return v


def _coordinate(key, dims, values):
    """A coordinate with the core's attributes for ``key``."""
    return xr.Variable(dims, values, attrs=dict(_native.view_coordinate(key)[0]))


def _build(f, records, global_attrs, drop_variables=None, stack_keys=None, decode=None, values_dtype=None):
    """The dataset of ``records`` of ``f``."""
    groups, grids = {}, _native.ViewGrids()
    for r in records:
        groups.setdefault(r.name, []).append(
            (ObjectArray(r.f or f, r.m, r.o, r.desc, values_dtype),
             _dims(r.entry, r.meta, tuple(r.desc.shape), r.name, grids),
             _key_values(r.keys), r.desc, _attrs(r.entry, r.view_attrs))
        )
    drop = set(drop_variables or ())
    variables, coords, scalars = {}, {}, {}
    for name, members in groups.items():
        if name in drop:
            continue
        variables[name], var_coords, scalars[name] = _stack(name, members, stack_keys)
        for k, values in var_coords.items():
            if coords.setdefault(k, values) != values:
                raise MetadataError(
                    f"variables disagree on the values of key {k!r}; open them "
                    "separately with filter_by_keys or drop_variables, or use tgm.open_datasets"
                )
    shared = _scalar_coords(variables, coords, scalars)
    out = {k: _coordinate(k, (k,), values) for k, values in coords.items()}
    out.update({k: _coordinate(k, (), v) for k, v in shared.items()})
    valid = _valid_time(out, sum(len(m) for name, m in groups.items() if name not in drop))
    if valid is not None:
        out["valid_time"] = valid
    # A variable of the file (a dataset written back by tgm.to_tgm) wins
    # over a coordinate derived from the keys.
    out = {k: v for k, v in out.items() if k not in variables}
    for k, dims, values, attrs in grids.coordinates():
        if any(set(dims) <= set(v.dims) for v in variables.values()):
            out[k] = xr.Variable(tuple(dims), values, attrs=attrs)
    ds = xr.Dataset(variables, coords=out, attrs=global_attrs)
    if decode is not None:
        ds = xr.decode_cf(ds, **decode)
    return ds


def _scalar_coords(variables, coords, scalars):
    """The scalar coordinates (the core's ``SCALAR_COORDINATE_KEYS``)
    every variable holding them agrees on and none stacks along; the
    others become ``MARS_<key>`` attributes of their variables."""
    shared = {}
    for key in _native.VIEW_SCALAR_COORDINATE_KEYS:
        values = [s[key] for s in scalars.values() if key in s]
        if values and key not in coords and all(_same(v, values[0]) for v in values):
            shared[key] = values[0]
    for name, s in scalars.items():
        for k, v in s.items():
            if k not in shared:
                variables[name].attrs[f"MARS_{k}"] = _attr_of_key(v)
    return shared


def _valid_time(coords, objects):
    """cfgrib's ``valid_time`` (the core's reference time plus step) over
    the ``time`` and ``step`` dimensions there are; None without a
    reference time, or when times and steps of different variables would
    span more values than the core builds for ``objects`` objects."""
    time, step = coords.get("time"), coords.get("step")
    if time is None or not np.issubdtype(time.dtype, np.datetime64):
        return None
    if step is not None and not np.issubdtype(step.dtype, np.timedelta64):
        step = None
    times = np.atleast_1d(time.values).astype("datetime64[s]").astype(np.int64)
    steps = np.zeros(1, np.int64) if step is None else np.atleast_1d(step.values).astype("timedelta64[h]").astype(np.int64)
    dims = time.dims + (step.dims if step is not None else ())
    shape = tuple(len(times) if d == "time" else len(steps) for d in dims)
    valid = _native.view_valid_times(times.tolist(), steps.tolist(), objects)
    if valid is None:
        return None
    values = np.array(valid, "datetime64[s]")
    return _coordinate("valid_time", dims, values.reshape(shape).astype("datetime64[ns]"))


def open_tgm_dataset(
    path, drop_variables=None, stack_keys=None, decode=None, intact_only=False, zero_copy=False,
    filter_by_keys=None, values_dtype=None,
):
    """The dataset of a tgm file, URL or file object; see the module
    documentation. ``decode`` holds the arguments of ``xr.decode_cf`` (no
    CF decoding when None); ``filter_by_keys`` leaves out the objects whose
    keys do not match; ``values_dtype`` is the type of floating values
    (their stored type when None)."""
    f, records, global_attrs = _open_records(path, intact_only, zero_copy, filter_by_keys)
    ds = _build(f, records, global_attrs, drop_variables, stack_keys, decode, values_dtype)
    ds.set_close(f.close)
    return ds


class _Archives:
    """The archives of a catalogue file, closed together."""

    def __init__(self, files):
        self.files = files

    def close(self):
        for f in self.files:
            f.close()


def _is_catalogue_file(path):
    return isinstance(path, str) and path.lower().endswith(".tgmc")


def _open_records(path, intact_only, zero_copy, filter_by_keys):
    """The opened file (or archives of a catalogue file, ``spec/files.md``
    §9.5), the records of their objects and the dataset attributes."""
    if not _is_catalogue_file(path):
        f = TensogramFile.open(path, intact_only=intact_only, zero_copy=zero_copy)
        records, global_attrs = _scan(f, filter_by_keys)
        return f, records, global_attrs
    from ._remote import open_catalogue

    files = open_catalogue(path)
    records, global_attrs, first = [], {}, 0
    for f in files:
        r, a = _scan(f, filter_by_keys, first)
        records.extend(r)
        for k, v in a.items():
            global_attrs.setdefault(k, v)
        first += len(f)
    return _Archives(files), records, global_attrs


def _hypercube_key(r):
    """What objects of one hypercube share: the level type, the grid and
    the object's shape."""
    geo = _section(r.entry, "geography")
    grid = tuple(repr(geo.get(k)) for k in ("gridType", "N", "Ni", "Nj", "numberOfPoints",
                                             "latitudeOfFirstGridPointInDegrees",
                                             "longitudeOfFirstGridPointInDegrees"))
    level = _section(r.entry, "grib").get("typeOfLevel", _section(r.entry, "mars").get("levtype"))
    return (repr(level), grid, tuple(r.desc.shape))


def _split(records):
    """``records`` grouped by level type, grid and shape."""
    parts = {}
    for r in records:
        parts.setdefault(_hypercube_key(r), []).append(r)
    return list(parts.values())


def open_tgm_datasets(path, drop_variables=None, stack_keys=None, decode=None, intact_only=False,
                      zero_copy=False, filter_by_keys=None, values_dtype=None):
    """One dataset per consistent hypercube of a tgm file (see
    :func:`tgm.open_datasets`)."""
    f, records, global_attrs = _open_records(path, intact_only, zero_copy, filter_by_keys)
    out = []
    for group in _split(records):
        try:
            out.append(_build(f, group, global_attrs, drop_variables, stack_keys, decode, values_dtype))
        except MetadataError:
            by_name = {}
            for r in group:
                by_name.setdefault(r.name, []).append(r)
            out.extend(_build(f, g, global_attrs, drop_variables, stack_keys, decode, values_dtype)
                       for g in by_name.values())
    out = [ds for ds in out if ds.data_vars]
    for ds in out:
        ds.set_close(f.close)
    return out


def _stack(name, members, stack_keys):
    first_arr, dims, _, desc, _ = members[0]
    for arr, d, _, _, _ in members:
        if arr.shape != first_arr.shape or d != dims or (arr.dtype, arr.stored) != (first_arr.dtype, first_arr.stored):
            raise MetadataError(
                f"variable {name!r}: objects differ in shape, dims or dtype and cannot be stacked"
            )
    keys = sorted({k for _, _, mars, _, _ in members for k in mars})
    varying = [k for k in keys if len({mars.get(k) for _, _, mars, _, _ in members}) > 1]
    varying = _native.view_stack_order(varying, None if stack_keys is None else list(stack_keys))
    constant = _shared_attrs([a for *_, a in members])
    scalars = {k: members[0][2][k] for k in keys if k not in varying and k in members[0][2]}
    if desc.dtype in CONVERTED:
        constant["tgm_stored_dtype"] = desc.dtype
    if not varying:
        if len(members) > 1:
            raise MetadataError(
                f"variable {name!r}: {len(members)} objects with identical MARS keys cannot be stacked"
            )
        lazy = indexing.LazilyIndexedArray(first_arr)
        var = xr.Variable(dims, lazy, attrs=constant)
        var.encoding["preferred_chunks"] = dict(zip(dims, first_arr.shape))
        return var, {}, scalars
    coords = {
        k: sorted({mars.get(k) for _, _, mars, _, _ in members}, key=lambda v: (str(type(v)), v),
                  reverse=_native.view_coordinate(k)[1])
        for k in varying
    }
    # The cells the keys span, counted before any is allocated: objects
    # whose keys all differ would otherwise span a grid of their count to
    # the power of the keys. (Fewer cells than objects: two share keys,
    # found below.)
    cells = math.prod(len(coords[k]) for k in varying)
    if cells > len(members):
        raise MetadataError(
            f"variable {name!r}: {len(members)} objects do not fill the hypercube over {varying} "
            f"({cells} cells)"
        )
    grid = np.empty(tuple(len(coords[k]) for k in varying), dtype=object)
    where = {k: {v: i for i, v in enumerate(coords[k])} for k in varying}
    for arr, _, mars, _, _ in members:
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
    return var, coords, scalars


def _source(filename_or_obj):
    """A URL or file object as given, anything else as a path."""
    if _remote.is_url(filename_or_obj) or _remote.is_reader(filename_or_obj):
        return filename_or_obj
    return os.fspath(filename_or_obj)


#: The arguments of ``open_dataset`` beyond the source, with their defaults.
OPEN_DEFAULTS = {
    "drop_variables": None,
    "stack_keys": None,
    "filter_by_keys": None,
    "values_dtype": None,
    "intact_only": False,
    "zero_copy": False,
    "mask_and_scale": True,
    "decode_times": True,
    "decode_timedelta": None,
    "use_cftime": None,
    "concat_characters": True,
    "decode_coords": True,
}

#: Those of them that are ``xr.decode_cf``'s.
DECODE_ARGS = ("mask_and_scale", "decode_times", "decode_timedelta", "use_cftime", "concat_characters",
               "decode_coords")


def _open(opener, filename_or_obj, kwargs):
    """``opener`` (:func:`open_tgm_dataset` or :func:`open_tgm_datasets`)
    of the source with ``kwargs`` (names of :data:`OPEN_DEFAULTS`)."""
    unknown = sorted(set(kwargs) - set(OPEN_DEFAULTS))
    if unknown:
        raise TypeError(f"unexpected arguments for the tgm engine: {', '.join(unknown)}")
    a = {**OPEN_DEFAULTS, **kwargs}
    decode = {k: a[k] for k in DECODE_ARGS}
    return opener(_source(filename_or_obj), a["drop_variables"], a["stack_keys"], decode, a["intact_only"],
                  a["zero_copy"], a["filter_by_keys"], a["values_dtype"])


class TgmBackendEntrypoint(BackendEntrypoint):
    """``xr.open_dataset(path, engine="tgm")``."""

    description = "Tensogram v3 (.tgm) files through tgm"
    open_dataset_parameters = ("filename_or_obj", *OPEN_DEFAULTS)

    def open_dataset(
        self,
        filename_or_obj,
        *,
        drop_variables=None,
        stack_keys=None,
        filter_by_keys=None,
        values_dtype=None,
        intact_only=False,
        zero_copy=False,
        mask_and_scale=True,
        decode_times=True,
        decode_timedelta=None,
        use_cftime=None,
        concat_characters=True,
        decode_coords=True,
    ):
        """The dataset of a tgm file, URL or file object (see the module
        documentation)."""
        kwargs = {k: v for k, v in locals().items() if k in OPEN_DEFAULTS}
        return _open(open_tgm_dataset, filename_or_obj, kwargs)

    def open_datasets(self, filename_or_obj, **kwargs):
        """One dataset per hypercube (:func:`tgm.open_datasets`), with the
        arguments of :meth:`open_dataset`."""
        return _open(open_tgm_datasets, filename_or_obj, kwargs)

    def guess_can_open(self, filename_or_obj):
        """Whether the path ends in ``.tgm`` (or ``.tgmc``, a catalogue file)."""
        try:
            return os.fspath(filename_or_obj).endswith((".tgm", ".tgmc"))
        except TypeError:
            return False
