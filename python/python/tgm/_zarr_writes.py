"""The write side of :class:`tgm.zarr.TgmStore`: the keys zarr writes,
held in memory until the store is closed, then turned into tgm messages.

zarr writes metadata and chunks in any order and may rewrite either, so
nothing reaches the file before :meth:`Writes.commit`. There every array
written (``<name>/zarr.json`` plus its chunks) is read back through
zarr itself (codecs, fill values of chunks never written) and becomes one
message, as :func:`tgm.to_tgm` writes a variable: ``name``,
``dim_names`` (Zarr's ``dimension_names``) and the array's attributes
under ``netcdf.attrs``; the root group's attributes go on the first
message. All messages are encoded before the file is touched: a new file
is written beside the target and renamed into place; an append goes
through the library's locking appender, after the last complete message
(``spec/files.md`` §5: messages are self-delimiting, so appending never
rewrites one). Either way the file ends with its catalogue (§9.4).
"""

import json
import os

import numpy as np

from . import _remote
from ._converters import _write_new
from ._sink import write_messages
from ._errors import InvalidArgumentError

ROOT = "zarr.json"


def _array_name(key):
    """``"t/zarr.json"`` or ``"t/c/0/1"`` → ``"t"``; the root → None. A
    key under a nested group is refused (one flat group per file)."""
    if key == ROOT:
        return None
    name, _, rest = key.partition("/")
    if not name or not rest or (rest != ROOT and rest != "c" and not rest.startswith("c/")):
        raise InvalidArgumentError(
            f"TgmStore writes one flat group of arrays; key {key!r} (a nested group or an "
            "unknown key) has no place in a tgm file"
        )
    return name


def same_metadata(a, b):
    """Whether a rewritten ``zarr.json`` ``b`` says nothing the archive's
    ``a`` does not: the same document, or a group's whose attributes are a
    subset of the archive's (xarray's ``to_zarr(mode="a")`` rewrites the
    root group with the appended dataset's attributes, often none; the
    archive keeps its own)."""
    try:
        old, new = json.loads(a), json.loads(b)
    except ValueError:
        return False
    if old == new:
        return True
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    if old.get("node_type") != "group" or new.get("node_type") != "group":
        return False
    kept, asked = old.pop("attributes", {}), new.pop("attributes", {})
    return old == new and all(k in kept and kept[k] == v for k, v in asked.items())


class Writes:
    """Keys written to a store, by name, until :meth:`commit`."""

    def __init__(self):
        self.keys = {}

    def set(self, key, data):
        _array_name(key)
        self.keys[key] = bytes(data)

    def delete(self, key):
        self.keys.pop(key, None)

    def arrays(self):
        """Names of the arrays whose ``zarr.json`` was written, in the
        order they were first written."""
        return [k[: -len(ROOT) - 1] for k in self.keys if k != ROOT and k.endswith("/" + ROOT)]

    def _variables(self):
        """name → ``xr.Variable`` of every array written, read through
        zarr from the buffered keys, and the root group's attributes."""
        import xarray as xr
        import zarr
        from zarr.core.buffer import default_buffer_prototype
        from zarr.storage import MemoryStore

        orphans = {_array_name(k) for k in self.keys} - {None} - set(self.arrays())
        if orphans:
            raise InvalidArgumentError(
                f"TgmStore: chunks of {sorted(orphans)} were written without their array "
                "metadata; nothing was written"
            )
        buffer = default_buffer_prototype().buffer
        store = MemoryStore({k: buffer.from_bytes(v) for k, v in self.keys.items()}, read_only=True)
        attrs = json.loads(self.keys[ROOT]).get("attributes", {}) if ROOT in self.keys else {}
        variables = {}
        for name in self.arrays():
            a = zarr.open_array(store=store, path=name, mode="r")
            values = np.asarray(a[...])
            dims = getattr(a.metadata, "dimension_names", None)
            if not dims or any(d is None for d in dims):
                dims = [f"{name}_dim_{i}" for i in range(values.ndim)]
            variables[name] = xr.Variable(list(dims), values, _decoded_attrs(a))
        return variables, attrs

    def commit(self, path, append, output=(None, False)):
        """Write the arrays as messages to ``path``: a new file (replacing
        one there) unless ``append``, else after the existing messages. A
        URL gets a new object, streamed message by message, with
        ``output`` = ``(storage_options, overwrite)``."""
        import tgm

        from ._xarray import variable_messages

        variables, attrs = self._variables()
        if not variables:
            return
        if _remote.is_url(path):
            storage_options, overwrite = output
            encoded = (
                tgm.encode(meta, objects, allow_nan=True)
                for meta, objects in variable_messages(variables, attrs)
            )
            write_messages(path, encoded, storage_options, overwrite=overwrite)
            self.keys.clear()
            return
        data = b"".join(
            tgm.encode(meta, objects, allow_nan=True) for meta, objects in variable_messages(variables, attrs)
        )
        from . import _native

        # The file ends with its catalogue (spec/files.md §9.4): a new file
        # before it is renamed into place, an appended one after the
        # messages (the appender cuts the catalogue there first).
        if append and os.path.exists(path):
            _native.append_message(path, data)
            _native.end_with_catalogue(path)
        else:
            def write(tmp):
                with open(tmp, "xb") as f:
                    f.write(data)
                _native.end_with_catalogue(tmp)

            _write_new(path, True, write)
        self.keys.clear()


def _decoded_attrs(a):
    """An array's attributes with xarray's zarr encoding of ``_FillValue``
    (base64 of the value's bytes for floats) turned back into the value,
    so the archive stores the number and reads back as xarray wrote it."""
    from xarray.backends.zarr import FillValueCoder

    attrs = dict(a.attrs)
    if isinstance(attrs.get("_FillValue"), str) and a.dtype.kind == "f":
        attrs["_FillValue"] = FillValueCoder.decode(attrs["_FillValue"], a.dtype)
    return attrs
