"""The encoder ``to_target(..., encoder="tgm")`` (and the ``.tgm``
suffix): earthkit fields and xarray objects as tgm archives.

* GRIB fields go through :func:`tgm.convert_grib`, one message per field,
  so a GRIB round trip through earthkit keeps values, every MARS key and
  the grid; its keyword arguments (``encoding``, ``compression``, ...)
  given to the encoder or to ``to_target`` pass on.
* Other fields (built from a tgm archive's MARS keys, or any object with
  ``to_numpy()``) make one message, one object per field, with the entry
  :func:`tgm._earthkit.mars.field_to_base_entry` gives.
* xarray Datasets and DataArrays go through :func:`tgm.to_tgm`.
* The data object of an archive without MARS keys is written as read.
"""

import os

import numpy as np

from earthkit.data.encoders import EncodedData, Encoder

from tgm._dtypes import NUMPY_TYPES

from .mars import EntryKeys, field_to_base_entry
from .readers.file import TgmFileReader

__all__ = ["TgmEncodedData", "TgmEncoder", "encoder"]

_SUPPORTED = "supported inputs are earthkit FieldLists and Fields and xarray Datasets and DataArrays"

#: Wire dtype of each NumPy dtype the encoder writes (``spec/format.md``
#: §5; ``bfloat16`` and ``bitmask`` have no NumPy type of their own).
_WIRE_DTYPES = {np.dtype(code): name for name, code in NUMPY_TYPES.items()
                if name not in ("bfloat16", "bitmask")}


def _numpy_to_tgm_dtype(arr):
    """The wire dtype of ``arr``; a ValueError for one tgm cannot store."""
    name = _WIRE_DTYPES.get(np.dtype(arr.dtype).newbyteorder("="))
    if name is None:
        raise ValueError(f"unsupported numpy dtype for a tgm object: {arr.dtype!r}")
    return name


def _compute_strides(shape):
    """Row-major strides of ``shape`` in elements (``spec/format.md`` §6)."""
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= n
    return strides[::-1]


def _descriptor(arr, compression="none"):
    return {"type": "ntensor", "dtype": _numpy_to_tgm_dtype(arr), "ndim": arr.ndim,
            "shape": list(arr.shape), "strides": _compute_strides(arr.shape),
            "encoding": "none", "filter": "none", "compression": compression}


class TgmEncodedData(EncodedData):
    """The messages the encoder produced: ``messages`` (a list of encoded
    messages, or one bytes-like payload) and the ``metadata`` that
    ``get()`` answers from."""

    def __init__(self, messages, metadata=None):
        if isinstance(messages, (bytes, bytearray, memoryview)):
            messages = [messages]
        self.messages = [bytes(m) for m in messages]
        self._metadata = dict(metadata or {})

    def to_bytes(self):
        return b"".join(self.messages)

    def to_file(self, f):
        """Write to a path (created or replaced: earthkit's file target
        chose it) or a binary file object."""
        if isinstance(f, (str, bytes, os.PathLike)):
            with open(f, "wb") as g:
                g.write(self.to_bytes())
            return
        f.write(self.to_bytes())

    def get(self, key=None, default=None):
        """A copy of the metadata without ``key``, else its value of ``key``;
        ``get("messages")`` is the list of messages."""
        if key is None:
            return dict(self._metadata)
        if key == "messages":
            return self.messages
        return self._metadata.get(key, default)


def _is_field(data):
    """A field: ``metadata()`` and ``to_numpy()``, no length."""
    return hasattr(data, "metadata") and hasattr(data, "to_numpy") and not hasattr(data, "__len__")


def _is_fieldlist(data):
    """Fields in order: a length, and iteration or indexing (earthkit's
    FieldLists are indexed)."""
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        return False
    return hasattr(data, "__len__") and (hasattr(data, "__iter__") or hasattr(data, "__getitem__"))


class TgmEncoder(Encoder):
    """Writes earthkit data as tgm archives (see the module documentation)."""

    _CONVERT_KEYS = ("encoding", "bits", "filter", "compression", "compression_level",
                     "hash", "preserve_all_keys")

    def __init__(self, template=None, metadata=None, **kwargs):
        self._convert = {k: kwargs.pop(k) for k in list(kwargs) if k in self._CONVERT_KEYS}
        super().__init__(template=template, metadata=metadata, **kwargs)

    def _options(self, kwargs):
        opts = dict(self._convert)
        opts.update({k: kwargs[k] for k in self._CONVERT_KEYS if k in kwargs})
        return opts

    def encode(self, data=None, values=None, check_nans=False, metadata=None, template=None,
               missing_value=9999, target=None, **kwargs):
        if data is None:
            raise ValueError(f"the tgm encoder requires a data object to encode: {_SUPPORTED}")
        if values is not None or template is not None or metadata:
            raise ValueError("the tgm encoder takes no values, template or metadata")
        import xarray as xr

        opts = self._options(kwargs)
        if isinstance(data, (xr.Dataset, xr.DataArray)):
            return self._encode_xarray(data, **opts)
        reader = getattr(data, "_reader", data)
        if isinstance(reader, TgmFileReader) and not reader.is_mars():
            return TgmEncodedData(reader.messages())
        if hasattr(data, "to_fieldlist") and not hasattr(data, "sel"):
            data = data.to_fieldlist()
        return self._encode(data, **opts)

    def _encode(self, data, *, target=None, **kwargs):
        """Fields (one, or an iterable with a length) as fields, an object
        with ``to_xarray()`` as its Dataset; a ValueError otherwise."""
        if _is_field(data):
            return self._encode_field(data, **kwargs)
        if _is_fieldlist(data):
            return self._encode_fieldlist(data, **kwargs)
        if hasattr(data, "to_xarray"):
            return self._encode_xarray(data.to_xarray(), **kwargs)
        raise ValueError(f"the tgm encoder cannot encode {type(data).__name__}: {_SUPPORTED}")

    def _encode_field(self, field, *, target=None, **kwargs):
        return self._encode_fields([field], **self._options(kwargs))

    def _encode_fieldlist(self, fieldlist, *, target=None, **kwargs):
        return self._encode_fields(list(fieldlist), **self._options(kwargs))

    def _encode_fields(self, fields, **opts):
        """GRIB fields through :func:`tgm.convert_grib` (a message each),
        the others together through :meth:`_encode_fieldlist_like`, in
        their order."""
        import tgm

        if not fields:
            raise ValueError("the tgm encoder cannot encode an empty FieldList")
        messages, plain = [], []

        def flush():
            if plain:
                messages.extend(self._encode_fieldlist_like(plain, **opts).messages)
                plain.clear()

        for f in fields:
            if _is_grib(f):
                flush()
                messages.extend(tgm.convert_grib_buffer(_grib_of(f), grouping="one_to_one", **opts))
            else:
                plain.append(f)
        flush()
        return TgmEncodedData(messages)

    def _encode_fieldlist_like(self, fields, compression="none", **_opts):
        """One message, one object per field: its values (reshaped to the
        field's ``shape`` when ``to_numpy()`` is flat, stored as they are
        but for ``compression``) and the entry
        :func:`~tgm._earthkit.mars.field_to_base_entry` gives."""
        import tgm

        fields = list(fields)
        if not fields:
            raise ValueError("the tgm encoder cannot encode an empty FieldList")
        base, objects = [], []
        for f in fields:
            arr = np.asarray(f.to_numpy())
            shape = tuple(getattr(f, "shape", arr.shape) or arr.shape)
            if arr.shape != shape and arr.size == int(np.prod(shape)):
                arr = arr.reshape(shape)
            arr = np.ascontiguousarray(arr)
            base.append(field_to_base_entry(f))
            objects.append((_descriptor(arr, compression), arr))
        return TgmEncodedData([tgm.encode({"base": base}, objects)])

    def _encode_xarray(self, data, *, target=None, **_kwargs):
        """A Dataset (a nameless DataArray is named ``data``) through
        :func:`tgm.to_tgm`; a ValueError for one without data variables."""
        import tempfile

        import xarray as xr

        import tgm

        from .archive import Archive

        if isinstance(data, xr.DataArray):
            data = (data if data.name is not None else data.rename("data")).to_dataset()
        if not data.data_vars:
            raise ValueError("the tgm encoder cannot write an xarray object with no data variables")
        fd, tmp = tempfile.mkstemp(suffix=".tgm", prefix="tgm-earthkit-")
        os.close(fd)
        try:
            tgm.to_tgm(data, tmp, force=True)
            return TgmEncodedData(Archive(tmp).messages)
        finally:
            os.unlink(tmp)

    def _encode_featurelist(self, featurelist, *, target=None, **kwargs):
        raise ValueError(f"the tgm encoder cannot encode a FeatureList: {_SUPPORTED}")

    def _encode_path(self, path_info, *, target=None, **kwargs):
        raise ValueError(f"the tgm encoder cannot encode a path: {_SUPPORTED}")


def _is_grib(field):
    """Whether ``field`` carries a GRIB message (earthkit's GRIB fields);
    fields built from a tgm object's entry do not."""
    get_private = getattr(field, "_get_private_data", None)
    if callable(get_private) and isinstance(get_private("tgm"), EntryKeys):
        return False
    context = {}
    try:
        field._get_grib_context(context)
    except Exception:  # not an earthkit field, or one without GRIB context
        return False
    return context.get("handle") is not None


def _grib_of(field):
    from earthkit.data.encoders.grib import GribEncoder

    encoded = GribEncoder().encode(field)
    parts = encoded if hasattr(encoded, "__next__") else [encoded]
    return b"".join(e.to_bytes() for e in parts)


#: What earthkit-data's encoder loader takes from this module.
encoder = TgmEncoder
