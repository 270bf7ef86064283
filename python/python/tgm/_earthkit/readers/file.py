"""The reader of a tgm file (a local path or a URL) and the function
earthkit-data calls to get one (:func:`reader`)."""

from earthkit.data.data.grib import GribData
from earthkit.data.readers import Reader, memory_reader

from ..archive import Archive
from ..detection import TGM_MAGIC, _match_magic

__all__ = ["TgmFileReader", "reader"]


def _is_remote(path):
    import tgm

    return tgm.is_remote_url(path)


class TgmFileReader(Reader):
    """earthkit-data's reader of one tgm file. Nothing is read until a
    conversion asks: archives of :func:`tgm.convert_grib` are then
    earthkit's GRIB (the GRIB :func:`tgm.to_grib` rebuilds), archives
    with MARS keys a FieldList of fields built from them, every archive a
    Dataset of tgm's xarray backend."""

    _format = "tgm"
    _binary = True
    _appendable = True

    def __init__(self, source, path, **kwargs):
        super().__init__(source, path, **kwargs)
        # earthkit-data keeps the source only weakly; it owns the
        # temporary file of bytes input, which must live as long as this.
        self.owner = source
        self._archive = Archive(path, self.storage_options)
        self._fieldlist = None
        #: Set by :func:`tgm._earthkit.readers.memory.memory_reader`.
        self.in_memory = False

    @property
    def storage_options(self):
        """The source's ``storage_options`` (None for local input)."""
        return getattr(self.owner, "storage_options", None)

    def is_mars(self):
        """Whether some object of the archive carries MARS keys."""
        return self._archive.is_mars

    def messages(self):
        """The archive's messages, as bytes."""
        return self._archive.messages

    def _no_mars(self, what):
        return f"{self.path} has no MARS metadata (no object carries MARS keys): {what}"

    # -- conversions

    def to_fieldlist(self, **_kwargs):
        """earthkit's GRIB FieldList for archives of :func:`tgm.convert_grib`,
        else the fields of the MARS objects; a NotImplementedError for an
        archive without MARS keys."""
        if not self.is_mars():
            raise NotImplementedError(self._no_mars("use to_xarray() for its Dataset"))
        if self._fieldlist is None:
            grib = self._archive.grib
            if grib is not None:
                from earthkit.data import from_source

                self._fieldlist = from_source("memory", grib).to_fieldlist()
            else:
                from ..fieldlist import fieldlist_of

                self._fieldlist = fieldlist_of(self._archive)
        return self._fieldlist

    def to_xarray(self, **kwargs):
        """earthkit's Dataset of the GRIB for archives of
        :func:`tgm.convert_grib`, else tgm's xarray backend's (every
        object)."""
        if self._archive.grib is not None:
            return self.to_fieldlist().to_xarray(**kwargs)
        from ..fieldlist import open_backend_dataset

        return open_backend_dataset(self._archive, **kwargs)

    def to_numpy(self, **kwargs):
        """The fields' values for archives of :func:`tgm.convert_grib`;
        otherwise the values of the Dataset's only variable (a ValueError
        when it has several: iterate ``to_fieldlist()`` or use
        ``to_xarray()``)."""
        if self._archive.grib is not None:
            return self.to_fieldlist().to_numpy(**kwargs)
        ds = self.to_xarray(**kwargs)
        if len(ds.data_vars) != 1:
            raise ValueError(
                f"{self.path}: to_numpy() needs a single-variable archive, this one has "
                f"{len(ds.data_vars)} variables: use to_xarray() or to_fieldlist()"
            )
        return next(iter(ds.data_vars.values())).values

    def to_data_object(self):
        """earthkit's GRIB data object for archives of
        :func:`tgm.convert_grib`, else a :class:`~tgm._earthkit.data.TgmData`."""
        grib = self._archive.grib
        if grib is not None:
            return _grib_data(self.owner, grib).to_data_object()
        from ..data import TgmData

        return TgmData(self)

    # -- FieldList conveniences (MARS content)

    def _fields(self, what):
        if not self.is_mars():
            raise TypeError(self._no_mars(f"{what} needs a FieldList; use to_xarray()"))
        return self.to_fieldlist()

    def __len__(self):
        return len(self._fields("len()"))

    def __iter__(self):
        return iter(self._fields("iteration"))

    def sel(self, *args, **kwargs):
        return self.to_fieldlist().sel(*args, **kwargs)

    def order_by(self, *args, **kwargs):
        return self.to_fieldlist().order_by(*args, **kwargs)

    def get(self, *args, **kwargs):
        return self.to_fieldlist().get(*args, **kwargs)

    # -- earthkit-data's reader protocol

    def mutate_source(self):
        """None: a file source stays as it is (a tgm file is one source).
        In memory (``from_source("memory", ...)``) the reader stands for
        the source, as earthkit's GRIB reader in memory does, so that its
        data object is this reader's."""
        return self if self.in_memory else None

    def _default_encoder(self):
        return "tgm"

    def _encode_default(self, encoder, **kwargs):
        return encoder.encode(self, **kwargs)

    def close(self):
        """Remove the source's temporary file of bytes input, if any."""
        close = getattr(self.owner, "close", None)
        if callable(close):
            close()

    def __repr__(self):
        return f"{type(self).__name__}({self.path})"


class TgmGribData(GribData):
    """earthkit's GRIB data object over a GRIB fieldlist in memory."""

    def to_fieldlist(self):
        # the reader is the fieldlist (GribData's default would copy its
        # fields into arrays, losing their GRIB handles)
        return self._reader


def _grib_data(owner, grib):
    """earthkit's GRIB reader of ``grib`` in memory, whose data object is
    earthkit's GRIB data object (as ``from_source("file", grib)`` gives)."""
    grib_reader = memory_reader(owner, grib)
    grib_reader.to_data_object = lambda: TgmGribData(grib_reader)
    return grib_reader


def reader(source, path, *, magic=None, deeper_check=False, **_kwargs):
    """earthkit-data's reader function: with ``magic`` (earthkit-data's
    discovery), a :class:`TgmFileReader` for Tensogram content and None
    otherwise; without (the tgm source names this reader), a reader for a
    URL at once, and for a local file after checking its first bytes (a
    ValueError naming the path when they are not Tensogram's magic)."""
    if magic is not None:
        return TgmFileReader(source, path) if _match_magic(magic, deeper_check) else None
    if _is_remote(path):
        return TgmFileReader(source, path)
    with open(path, "rb") as f:
        head = f.read(len(TGM_MAGIC))
    if not _match_magic(head, False):
        raise ValueError(
            f"{path!r} does not look like a tensogram file: it starts with {head!r}, "
            f"not the magic {TGM_MAGIC!r} (spec/format.md §3)"
        )
    return TgmFileReader(source, path)
