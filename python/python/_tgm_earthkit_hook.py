"""Imported at interpreter start by ``tgm_earthkit.pth`` (tgm wheel): when
earthkit-data's reader table (``earthkit.data.readers``) is imported, adds
tgm's reader to it so that ``earthkit.data.from_source("file", "x.tgm")``
recognises Tensogram files by their magic. Imports nothing until then, and
tgm itself only when earthkit-data first looks for a reader."""

import sys


def _tgm_reader(method):
    def read(*args, **kwargs):
        try:
            import tgm._earthkit as plugin
        except Exception:  # a broken tgm must not break earthkit-data
            return None
        return getattr(plugin, method)(*args, **kwargs)

    return read


def install_file_reader(readers_module):
    """Put tgm's readers first in earthkit-data's reader table (they decline
    whatever does not start with tgm's magic). Idempotent."""
    original = readers_module._readers
    if getattr(original, "_tgm", False):
        return
    table = {"reader": _tgm_reader("_reader"), "memory_reader": _tgm_reader("_memory_reader")}

    def _readers(method_name):
        out = dict(original(method_name))
        if method_name in table:
            out = {"tgm": table[method_name], **out}
        return out

    _readers._tgm = True
    readers_module._readers = _readers


class _TgmEarthkitFinder:
    _NAME = "earthkit.data.readers"

    def find_spec(self, name, path=None, target=None):
        if name != self._NAME:
            return None
        import importlib.util

        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
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
