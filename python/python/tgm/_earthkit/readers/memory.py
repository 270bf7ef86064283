"""earthkit-data's reader function for Tensogram content in memory
(``from_source("memory", bytes)``)."""

import contextlib
import os
import tempfile
import weakref

from ..detection import TGM_MAGIC, _match_magic

__all__ = ["memory_reader", "spill"]


def _remove(path):
    with contextlib.suppress(OSError):
        os.unlink(path)


def spill(buffer):
    """A new temporary ``.tgm`` file holding ``buffer``, for tgm's file
    readers and xarray backend; removed again if writing fails."""
    fd, path = tempfile.mkstemp(suffix=".tgm", prefix="tgm-earthkit-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer)
    except BaseException:
        _remove(path)
        raise
    return path


def owned_by(obj, path):
    """Remove the file at ``path`` once ``obj`` is collected; returns the
    finaliser (calling it removes the file at once, and only once)."""
    return weakref.finalize(obj, _remove, path)


def memory_reader(source, buffer, *, magic=None, deeper_check=False, **_kwargs):
    """A :class:`~tgm._earthkit.readers.file.TgmFileReader` of ``buffer``
    (bytes-like) when it is Tensogram content (``magic``, or its own first
    bytes when earthkit-data peeked none), else None. The bytes are kept
    in a temporary file removed when the reader is collected."""
    if magic is None:
        magic = bytes(buffer[: len(TGM_MAGIC)])
    if not _match_magic(magic, deeper_check):
        return None
    from .file import TgmFileReader

    path = spill(buffer)
    reader = TgmFileReader(source, path)
    reader.in_memory = True
    owned_by(reader, path)
    return reader
