"""The source ``ekd.from_source("tgm", x)``: ``x`` a local path, a URL
(``http(s)://``, ``s3://``, ``gs://``, ``az://``, read by tgm's own remote
reader with ``storage_options``), bytes-like content or a binary stream
(seekable or not). Bytes and streams are kept in a temporary file, removed
by :meth:`TgmSource.close` or when the source is collected."""

import os

from earthkit.data.sources.file import FileSource

from .readers.file import reader as file_reader
from .readers.memory import owned_by, spill

__all__ = ["TgmSource", "source"]

_BYTES = (bytes, bytearray, memoryview)


class TgmSource(FileSource):
    """A file source whose reader is always tgm's
    (:func:`tgm._earthkit.readers.file.reader`)."""

    # earthkit-data calls a source's own ``reader`` when it has one
    reader = staticmethod(file_reader)

    def __init__(self, path, *, storage_options=None, **kwargs):
        self.storage_options = storage_options
        self._tmp_path = None
        self._remove_tmp = None
        if hasattr(path, "read"):
            path = path.read()
        if isinstance(path, _BYTES):
            self._tmp_path = spill(path)
            self._remove_tmp = owned_by(self, self._tmp_path)
            path = self._tmp_path
        super().__init__(path if isinstance(path, str) else os.fspath(path), **kwargs)

    def to_fieldlist(self, **kwargs):
        return self._reader.to_fieldlist(**kwargs)

    def _default_encoder(self):
        return "tgm"

    def close(self):
        """Remove the temporary file of bytes or stream input now (a no-op
        for a path or URL, and when called again)."""
        if self._remove_tmp is not None:
            self._remove_tmp()
            self._remove_tmp = None
            self._tmp_path = None


#: What earthkit-data's source loader takes from this module.
source = TgmSource
