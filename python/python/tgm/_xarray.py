"""xarray beyond ``engine="tgm"``: :func:`open_datasets` (one dataset per
hypercube) and the way back, :func:`to_tgm` and the ``ds.tgm`` accessor.

xarray is imported when these are first used, never by ``import tgm``.

A Dataset is written CF-encoded, as the NetCDF backends write it: times as
numbers with ``units``/``calendar``, non-index coordinates named in the
``coordinates`` attribute, then one message per variable (data variables
and coordinates alike), each object carrying ``name``, ``dim_names`` and
the variable's attributes under ``netcdf.attrs``; the first message holds
the dataset's attributes. ``xr.open_dataset(path, engine="tgm")`` decodes
them back (``tgm.xarray_backend``), so the dataset comes back identical.
"""

import sys

import numpy as np

from ._converters import _write_new
from ._dtypes import NUMPY_TYPES
from ._errors import EncodeError

#: The tgm dtype of each NumPy kind+size written (``bool`` as ``bitmask``,
#: which reads back as bool).
_WIRE_DTYPES = {np.dtype(code).newbyteorder("=").str[1:]: name for name, code in NUMPY_TYPES.items()
                if name not in ("bfloat16", "bitmask")}


def _wire_dtype(name, arr):
    if arr.dtype == np.bool_:
        return "bitmask"
    wire = _WIRE_DTYPES.get(arr.dtype.newbyteorder("=").str[1:])
    if wire is None:
        raise EncodeError(
            f"variable {name!r}: values of type {arr.dtype} have no Tensogram dtype "
            "(numbers and booleans only); nothing was written"
        )
    return wire


def _encoded_variables(ds):
    """The CF-encoded variables and attributes of ``ds``, as a NetCDF
    backend writes them."""
    from xarray import conventions

    variables, attrs = conventions.encode_dataset_coordinates(ds)
    return conventions.cf_encoder(variables, attrs)


def _messages(ds, pipeline):
    """``(metadata, [(descriptor, array)])`` per variable of ``ds``; every
    variable's values are checked before the first message is made."""
    variables, attrs = _encoded_variables(ds)
    return variable_messages(variables, attrs, pipeline)


def variable_messages(variables, attrs, pipeline=None):
    """``(metadata, [(descriptor, array)])`` per already CF-encoded
    variable (name → ``xr.Variable``), the first message carrying the
    dataset's ``attrs``; every variable's values are checked before the
    first message is made."""
    plan = []
    for name, var in variables.items():
        arr = np.asarray(var.values)
        wire = _wire_dtype(name, arr)
        desc = {"type": "ntensor", "shape": list(arr.shape), "dtype": wire}
        if pipeline and wire not in ("bitmask",):
            desc.update(pipeline)
        entry = {"name": str(name), "dim_names": [str(d) for d in var.dims]}
        if var.attrs:
            entry["netcdf"] = {"attrs": dict(var.attrs)}
        plan.append((entry, desc, arr))
    first = True
    for entry, desc, arr in plan:
        meta = {"base": [entry]}
        if first and attrs:
            meta["netcdf"] = {"attrs": dict(attrs)}
        first = False
        yield meta, [(desc, arr)]


def to_tgm(ds, path, pipeline=None, *, force=False, allow_nan=True, storage_options=None):
    """Write Dataset ``ds`` (or a DataArray, as a one-variable Dataset) to
    the tgm file ``path``, so that ``xr.open_dataset(path, engine="tgm")``
    gives it back (``xr.testing.assert_identical`` holds for a lossless
    ``pipeline``).

    ``pipeline`` is a dict of descriptor keys applied to every numeric
    variable (``{"compression": "zstd"}``, ``{"encoding":
    "simple_packing", "sp_bits_per_value": 16}``); NaNs are kept through
    a mask unless ``allow_nan=False``. ``path`` is never replaced unless
    ``force=True``; the file is written beside it and renamed into place,
    so a failure (a variable of strings, an attribute with no CBOR form)
    leaves nothing behind.

    ``path`` may be a URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``,
    configured by ``storage_options`` as for reads): each message is
    encoded and streamed into the upload, which completes only when the
    last is written (``spec/remote.md`` §7); returns ``{"target",
    "bytes", "etag"}`` then."""
    import xarray as xr

    from . import _native, _remote, _sink
    from ._file import TensogramFile

    if isinstance(ds, xr.DataArray):
        ds = ds.to_dataset(name=ds.name if ds.name is not None else "values")
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_tgm writes an xarray Dataset or DataArray, not {type(ds).__name__}")
    messages = list(_messages(ds, pipeline))

    if _remote.is_url(path):
        from . import _api

        encoded = (_api.encode(meta, objects, allow_nan=allow_nan) for meta, objects in messages)
        return _sink.write_messages(path, encoded, storage_options, overwrite=force)
    if storage_options:
        raise TypeError("storage_options apply to URLs, not to local paths")

    def write(tmp):
        with TensogramFile.create(tmp) as f:
            for meta, objects in messages:
                f.append(meta, objects, allow_nan=allow_nan)
        # The file ends with its catalogue (spec/files.md §9.4).
        _native.end_with_catalogue(tmp)

    _write_new(path, force, write)


def open_datasets(path, **kwargs):
    """One xarray Dataset per consistent hypercube of a tgm file, as
    cfgrib's ``open_datasets``: objects are grouped by level type, grid and
    shape, and a group whose variables still cannot share one dataset
    is split by variable. Takes the arguments of
    ``xr.open_dataset(path, engine="tgm", ...)`` (``filter_by_keys``,
    ``decode_times``, ``drop_variables`` ...)."""
    from .xarray_backend import TgmBackendEntrypoint

    return TgmBackendEntrypoint().open_datasets(path, **kwargs)


class TgmAccessor:
    """``ds.tgm``: tgm's methods on an xarray Dataset or DataArray."""

    def __init__(self, obj):
        self._obj = obj

    def to_file(self, path, pipeline=None, *, force=False, allow_nan=True, storage_options=None):
        """:func:`tgm.to_tgm` of this Dataset."""
        return to_tgm(
            self._obj, path, pipeline, force=force, allow_nan=allow_nan,
            storage_options=storage_options,
        )


def register_accessor():
    """Register ``ds.tgm`` and ``da.tgm`` on xarray (once)."""
    xr = sys.modules["xarray"]
    for cls, register in ((xr.Dataset, xr.register_dataset_accessor),
                          (xr.DataArray, xr.register_dataarray_accessor)):
        if "tgm" not in cls.__dict__:
            register("tgm")(TgmAccessor)


class _AfterXarrayImport:
    """A meta path finder that registers the accessor once xarray is
    imported, so that ``import tgm`` does not import xarray itself."""

    def find_spec(self, name, path=None, target=None):
        """xarray's spec from the path, its loader registering the accessor
        after running the module; None for every other module."""
        if name != "xarray":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module
        finder = self

        def exec_and_register(module):
            exec_module(module)
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            register_accessor()

        spec.loader.exec_module = exec_and_register
        return spec


def install_accessor():
    """Register ``ds.tgm`` now if xarray is loaded, else when it is."""
    if "xarray" in sys.modules:
        register_accessor()
    elif not any(isinstance(f, _AfterXarrayImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarrayImport())


__all__ = ["open_datasets", "to_tgm", "install_accessor"]
