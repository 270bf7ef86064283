"""earthkit-data plugins (earthkit-data 1.x), registered through entry points
in the tgm wheel:

* the source ``ekd.from_source("tgm", x)`` (:mod:`.source`) where ``x`` is
  a path, a URL (read by tgm's own remote reader), bytes-like content or a
  binary stream;
* the encoder ``to_target("file", "out.tgm", encoder="tgm")``
  (:mod:`.encoder`);
* earthkit-data's reader functions for a file, bytes and a stream
  (:mod:`.readers`), which ``tgm_earthkit.pth`` adds to earthkit-data's
  reader table so that ``from_source("file", "x.tgm")``,
  ``from_source("memory", ...)`` and ``from_source("stream", ...)``
  recognise Tensogram content by its magic.

Archives written by :func:`tgm.convert_grib` are handed to earthkit-data as
the GRIB :func:`tgm.to_grib` rebuilds, so their fields, ``metadata()``,
``sel()``, ``order_by()``, ``to_numpy()`` and ``to_xarray()`` are
earthkit's view of the source GRIB. Other archives whose objects carry MARS
keys become fields built from those keys (:mod:`.mars`, :mod:`.fieldlist`);
every archive is a Dataset of tgm's xarray backend.

``import tgm`` never imports this package: earthkit-data loads it through
the entry points.
"""

from .data import TgmData
from .detection import TGM_MAGIC, is_mars_tgm
from .encoder import TgmEncodedData, TgmEncoder
from .fieldlist import TgmSimpleFieldList, build_fieldlist_from_path
from .readers.file import TgmFileReader
from .source import TgmSource

__all__ = [
    "TGM_MAGIC",
    "TgmData",
    "TgmEncodedData",
    "TgmEncoder",
    "TgmFileReader",
    "TgmSimpleFieldList",
    "TgmSource",
    "build_fieldlist_from_path",
    "is_mars_tgm",
]


def _register_suffix():
    """``to_target("file", "x.tgm")`` chooses the tgm encoder."""
    try:
        import earthkit.data.encoders as encoders

        encoders._SUFFIXES.setdefault((".tgm",), "tgm")
    except Exception:  # earthkit-data's private table moved
        pass


def _install_readers():
    """tgm's readers in earthkit-data's reader table even where
    ``tgm_earthkit.pth`` did not run."""
    try:
        import _tgm_earthkit_hook
        import earthkit.data.readers

        _tgm_earthkit_hook.install_file_reader(earthkit.data.readers)
    except Exception:
        pass


_install_readers()
_register_suffix()
