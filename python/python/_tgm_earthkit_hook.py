"""Imported at interpreter start by ``tgm_earthkit.pth`` (tgm wheel): when
earthkit-data's reader table (``earthkit.data.readers``) is imported, adds
tgm's reader to it so that ``earthkit.data.from_source("file", "x.tgm")``
recognises Tensogram files by their magic. Imports nothing until then."""

import sys


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
                from tgm._earthkit import install_file_reader

                install_file_reader(module)
            except Exception:  # a broken tgm must not break earthkit-data
                pass

        loader.exec_module = exec_module
        return spec


if not any(type(f).__name__ == "_TgmEarthkitFinder" for f in sys.meta_path):
    sys.meta_path.insert(0, _TgmEarthkitFinder())
