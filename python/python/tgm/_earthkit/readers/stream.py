"""earthkit-data's reader function for a stream of Tensogram content: the
stream is read to its end (and closed), then read as bytes in memory."""

import contextlib

from ..detection import TGM_MAGIC, _match_magic

__all__ = ["stream_reader"]


def stream_reader(source, stream, magic=None, *, deeper_check=False, memory=False, **_kwargs):
    """A reader of the content of ``stream`` (any binary object with
    ``read``), or None when it is not Tensogram content: at once when
    earthkit-data peeked its first bytes (``magic``) and they are not
    Tensogram's, otherwise after reading it. ``memory`` is accepted for
    earthkit-data's sake: the content is always read whole."""
    if magic is not None and len(magic) >= len(TGM_MAGIC) and not _match_magic(magic, deeper_check):
        return None
    buffer = stream.read()
    with contextlib.suppress(Exception):
        stream.close()
    if not buffer:
        return None
    from .memory import memory_reader

    return memory_reader(source, buffer, magic=magic or None, deeper_check=deeper_check)
