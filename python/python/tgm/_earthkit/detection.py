"""Recognising Tensogram content: the preamble magic (``spec/format.md``
§3) and whether a message's objects carry MARS keys."""

from .mars import has_mars_namespace

__all__ = ["TGM_MAGIC", "is_mars_tgm"]

#: The first eight bytes of every message (``spec/format.md`` §3).
TGM_MAGIC = b"TENSOGRM"


def _match_magic(magic, deeper_check):
    """Whether ``magic`` (bytes earthkit-data peeked, or None) is Tensogram
    content: starting with :data:`TGM_MAGIC`, or, on earthkit-data's
    second (``deeper_check``) pass, holding it anywhere. Fewer than eight
    bytes never match."""
    if not magic or len(magic) < len(TGM_MAGIC):
        return False
    head = bytes(magic)
    if deeper_check:
        return TGM_MAGIC in head
    return head[: len(TGM_MAGIC)] == TGM_MAGIC


def is_mars_tgm(meta):
    """Whether some object of a decoded message (``meta.base``, a list of
    per-object maps, ``spec/format.md`` §7.1) carries a non-empty ``mars``
    map. Message-level keys do not count: earthkit's fields are objects."""
    base = getattr(meta, "base", None)
    if not isinstance(base, list):
        return False
    return any(has_mars_namespace(entry) for entry in base)
