"""The FieldList of an archive's MARS objects (one earthkit field per
object with a ``mars`` map; others, such as coordinates, are left to the
Dataset), whose ``to_xarray()`` is tgm's xarray backend's Dataset of the
archive."""

from earthkit.data.indexing.simple import SimpleFieldList

from .archive import Archive
from .mars import base_entry_to_field, has_mars_namespace

__all__ = ["TgmSimpleFieldList", "build_fieldlist_from_path"]


def open_backend_dataset(archive, **kwargs):
    """tgm's xarray backend's Dataset of ``archive`` (a local path is
    opened by the backend itself, a URL's messages as they were read)."""
    import io

    import xarray as xr

    import tgm

    kwargs.pop("storage_options", None)  # the archive was opened with them
    if tgm.is_remote_url(archive.path):
        return xr.open_dataset(io.BytesIO(b"".join(archive.messages)), engine="tgm", **kwargs)
    return xr.open_dataset(archive.path, engine="tgm", **kwargs)


class TgmSimpleFieldList(SimpleFieldList):
    """The fields of a tgm archive; ``to_xarray()`` is tgm's xarray
    backend's Dataset of that archive (every object, coordinates
    included), or earthkit's Dataset of the fields when there is no
    archive behind them."""

    def __init__(self, fields, file_path=None, storage_options=None, *, archive=None):
        super().__init__(fields)
        if archive is None and file_path is not None:
            archive = Archive(file_path, storage_options)
        self._archive = archive

    def to_xarray(self, **kwargs):
        if self._archive is None:
            return super().to_xarray(**kwargs)
        return open_backend_dataset(self._archive, **kwargs)


def fieldlist_of(archive):
    """The :class:`TgmSimpleFieldList` of an opened :class:`Archive`."""
    fields = [base_entry_to_field(entry, arr, tuple(desc.shape))
              for entry, desc, arr in archive.objects() if has_mars_namespace(entry)]
    return TgmSimpleFieldList(fields, archive=archive)


def build_fieldlist_from_path(file_path, storage_options=None):
    """The fields of the archive at ``file_path`` (a local path, or a URL
    read with ``storage_options``) built from their MARS keys."""
    return fieldlist_of(Archive(file_path, storage_options))
