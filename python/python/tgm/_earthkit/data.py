"""The data object ``ekd.from_source("tgm", ...)`` returns for an archive
not written by :func:`tgm.convert_grib` (whose data object is earthkit's
GRIB one): conversions and FieldList conveniences of its reader."""

from earthkit.data.data.source import DefaultSourceData

__all__ = ["TgmData"]

#: Every conversion a data object of tgm content offers.
CONVERSIONS = ("xarray", "numpy", "fieldlist")


class _Conversions:
    """``available_types``: on the class, every conversion
    (:data:`CONVERSIONS`); on a data object, those its archive has
    (``fieldlist`` for MARS content only)."""

    def __get__(self, data, owner=None):
        if data is None:
            return CONVERSIONS
        if data._reader.is_mars():
            return CONVERSIONS
        return tuple(c for c in CONVERSIONS if c != "fieldlist")


class TgmData(DefaultSourceData):
    """``to_xarray()``, ``to_numpy()``, ``to_fieldlist()`` (MARS content;
    a NotImplementedError naming MARS otherwise), ``sel()``,
    ``order_by()``, ``get()``, ``len()`` and iteration of a
    :class:`~tgm._earthkit.readers.file.TgmFileReader`."""

    available_types = _Conversions()

    def to_xarray(self, *args, **kwargs):
        return self._reader.to_xarray(**kwargs)

    def to_numpy(self, *args, **kwargs):
        return self._reader.to_numpy(**kwargs)

    def to_fieldlist(self, *args, **kwargs):
        return self._reader.to_fieldlist(**kwargs)

    def sel(self, *args, **kwargs):
        return self._reader.sel(*args, **kwargs)

    def order_by(self, *args, **kwargs):
        return self._reader.order_by(*args, **kwargs)

    def get(self, *args, **kwargs):
        return self._reader.get(*args, **kwargs)

    def __len__(self):
        return len(self._reader)

    def __iter__(self):
        return iter(self._reader)

    @property
    def storage_options(self):
        """The source's ``storage_options`` (None for local input)."""
        return self._reader.storage_options

    @property
    def _tmp_path(self):
        """The temporary file holding bytes or a stream given to the source
        (None for a path or URL)."""
        return getattr(self._reader.owner, "_tmp_path", None)

    def close(self):
        """Remove the temporary file of bytes or stream input now (it is
        removed when the source is collected otherwise); idempotent."""
        self._reader.close()
