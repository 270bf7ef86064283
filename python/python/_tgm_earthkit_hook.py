"""Imported at interpreter start by ``tgm_earthkit.pth`` (tgm wheel): when
earthkit-data's reader table (``earthkit.data.readers``) is imported, adds
tgm's reader functions (``tgm._earthkit.readers``) to it so that
``earthkit.data.from_source("file" | "memory" | "stream", ...)`` recognise
Tensogram content by its magic. Imports nothing until then, and
tgm itself only when earthkit-data is handed tgm content, or just before
the eccodes package loads its library (see :class:`_TgmEarthkitFinder`)."""

import sys


_MAGIC = b"TENSOGRM"


def _tgm_reader(method):
    """earthkit-data's reader signature; tgm is imported only for input
    that starts with (or, on earthkit's deeper pass, holds) tgm's magic."""

    def read(source, data, *, magic=None, deeper_check=False, **kwargs):
        head = bytes(magic or b"")
        if not (head[: len(_MAGIC)] == _MAGIC or (deeper_check and _MAGIC in head)):
            return None
        try:
            import tgm._earthkit.readers as readers
        except Exception:  # a broken tgm must not break earthkit-data
            return None
        return getattr(readers, method)(source, data, magic=magic, deeper_check=deeper_check, **kwargs)

    return read


def install_file_reader(readers_module):
    """Put tgm's readers first in earthkit-data's reader table (they decline
    whatever does not start with tgm's magic). Idempotent."""
    original = readers_module._readers
    if getattr(original, "_tgm", False):
        return
    table = {name: _tgm_reader(name) for name in ("reader", "memory_reader", "stream_reader")}

    def _readers(method_name):
        out = dict(original(method_name))
        if method_name in table:
            out = {"tgm": table[method_name], **out}
        return out

    _readers._tgm = True
    readers_module._readers = _readers


class _TgmEarthkitFinder:
    """Watches two imports and then steps aside:

    * ``earthkit.data.readers``: adds tgm's readers once it has run;
    * ``gribapi`` (the eccodes package's bindings): imports ``tgm._native``
      first, so that a tgm wheel built with ecCodes loads its ecCodes before
      the eccodes package's own copy (the other order crashes the process
      at exit)."""

    def __init__(self):
        self._names = {"earthkit.data.readers", "gribapi"}

    def find_spec(self, name, path=None, target=None):
        if name not in self._names:
            return None
        self._names.discard(name)
        if not self._names and self in sys.meta_path:
            sys.meta_path.remove(self)
        if name == "gribapi":
            try:
                import tgm._native  # noqa: F401
            except Exception:
                pass
            return None
        import importlib.util

        if self in sys.meta_path:
            sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self._names and self not in sys.meta_path:
                sys.meta_path.insert(0, self)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            run(module)
            try:
                install_file_reader(module)
            except Exception:  # earthkit-data's private table changed
                pass

        loader.exec_module = exec_module
        return spec


if "earthkit.data.readers" in sys.modules:
    install_file_reader(sys.modules["earthkit.data.readers"])
elif not any(type(f).__name__ == "_TgmEarthkitFinder" for f in sys.meta_path):
    sys.meta_path.insert(0, _TgmEarthkitFinder())
