"""One tgm archive as the plugin reads it: its messages (from a local path
or a URL, through tgm's own readers), whether its objects carry MARS keys,
and the GRIB :func:`tgm.to_grib` rebuilds for archives written by
:func:`tgm.convert_grib`."""

import os

from .mars import has_mars_namespace

__all__ = ["Archive"]


def _messages(path, storage_options):
    """Every message of the archive at ``path`` (a local path, or a URL
    read with the store's ``storage_options``, ``spec/remote.md`` §1) as
    bytes; a ValueError naming the path when it holds none."""
    import tgm

    if tgm.is_remote_url(path):
        opened = tgm.TensogramFile.open_remote(path, storage_options or None)
    else:
        opened = tgm.TensogramFile.open(path)
    with opened as f:
        messages = [bytes(f.read_message(i)) for i in range(len(f))]
    if not messages:
        raise ValueError(f"{path}: no Tensogram message found")
    return messages


class Archive:
    """The decoded side of a tgm file, read once when first asked for."""

    def __init__(self, path, storage_options=None):
        self.path = path if isinstance(path, str) else os.fspath(path)
        self.storage_options = storage_options
        self._messages = None
        self._entries = None
        self._grib = False

    @property
    def messages(self):
        if self._messages is None:
            self._messages = _messages(self.path, self.storage_options)
        return self._messages

    @property
    def entries(self):
        """Every object's metadata entry (``base[i]``, ``spec/format.md``
        §7.1), message after message; ``{}`` where an entry is not a map."""
        if self._entries is None:
            import tgm

            entries = []
            for m in self.messages:
                base = tgm.decode_metadata(m).base or []
                entries.extend(b if isinstance(b, dict) else {} for b in base)
            self._entries = entries
        return self._entries

    @property
    def is_mars(self):
        """Whether some object carries a non-empty ``mars`` map."""
        return any(has_mars_namespace(e) for e in self.entries)

    @property
    def grib(self):
        """The GRIB :func:`tgm.to_grib` rebuilds when every object carries
        ``mars`` and ``grib`` maps (the layout of :func:`tgm.convert_grib`)
        and this wheel has ecCodes; None otherwise."""
        if self._grib is False:
            self._grib = None
            entries = self.entries
            if entries and all(isinstance(e.get("grib"), dict) and has_mars_namespace(e)
                               for e in entries):
                import tgm

                try:
                    self._grib = tgm.to_grib(self.messages)
                except Exception:  # no ecCodes in this wheel, or not convert_grib's layout
                    self._grib = None
        return self._grib

    def objects(self):
        """``(entry, descriptor, array)`` of every object, message after
        message; an object beyond its message's entries has entry None."""
        import tgm

        for m in self.messages:
            meta, objects = tgm.decode(m)
            base = list(meta.base or [])
            for i, (desc, arr) in enumerate(objects):
                yield (base[i] if i < len(base) else None), desc, arr
