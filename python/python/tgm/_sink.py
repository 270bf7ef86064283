"""Writing a new archive front to back (``spec/remote.md`` §7): to a URL
(``s3://``, ``gs://``, ``az://``, ``http(s)://``) the bytes go straight
into the parts of a multipart upload (a ``PUT`` for ``http(s)://``), never
through a local copy; to a local path, into a temporary sibling. Either
way the output ends with the catalogue of its messages (``spec/files.md``
§9.4) and appears only when complete: an exception, :meth:`Output.abort`
or an output dropped unfinished leaves nothing at the target (an upload
is aborted). An existing target is refused unless ``overwrite=True``.
"""

import os

from . import _api, _native, _remote


def _options(target, storage_options):
    if storage_options and not _remote.is_url(target):
        raise TypeError("storage_options apply to URLs, not to local paths")
    return _remote.storage_pairs(storage_options)


class Output:
    """A new file or object being written. As a context manager it is
    finished when the block ends and aborted when it raises. After
    :meth:`finish`, ``bytes`` and ``etag`` (the store's entity tag of the
    new object; None for a local file) say what was written."""

    def __init__(self, target, storage_options=None, *, overwrite=False):
        target = target if _remote.is_url(target) else os.fspath(target)
        self._native = _native.Sink(target, _options(target, storage_options), bool(overwrite))
        self.target = target
        self.bytes = None
        self.etag = None
        self._open = True

    def write(self, data):
        """Append bytes (whole messages, for the catalogue to end them)."""
        self._native.write(data)

    def acknowledged(self):
        """Bytes the destination has acknowledged so far (parts uploaded)."""
        return self._native.acknowledged()

    def finish(self):
        """End with the catalogue and make the output appear → ``{"target",
        "bytes", "etag"}``."""
        self._open = False
        self.bytes, self.etag = self._native.finish()
        return self.written()

    def written(self):
        """``{"target", "bytes", "etag"}`` of the finished output."""
        return {"target": self.target, "bytes": self.bytes, "etag": self.etag}

    def abort(self):
        """Abandon the output: nothing appears at the target."""
        self._open = False
        self._native.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._open:
            return False
        if exc_type is None:
            self.finish()
        else:
            self.abort()
        return False


def write_messages(target, messages, storage_options=None, *, overwrite=False):
    """Write encoded messages (an iterable of bytes, consumed one at a
    time) as a new archive at ``target`` → ``{"target", "bytes", "etag"}``."""
    with Output(target, storage_options, overwrite=overwrite) as out:
        for m in messages:
            out.write(m)
    return out.written()


class TensogramWriter(Output):
    """``TensogramFile.create(url)``: a new remote archive written message
    by message (``append``, ``append_bytes``), appearing at the URL when
    closed (``close()`` or the end of a ``with`` block); an exception in
    the block, or :meth:`abort`, leaves nothing there."""

    def append(self, global_meta_dict, descriptors_and_data, **encode_options):
        """Encode one message (options as :func:`tgm.encode`) and write it."""
        self.write(_api.encode(global_meta_dict, descriptors_and_data, **encode_options))

    def append_bytes(self, message):
        """Write one already-encoded message."""
        self.write(message)

    def source(self):
        """The URL written."""
        return self.target

    def is_remote(self):
        """True: the archive is written to a URL."""
        return True

    def close(self):
        """Finish the archive (once): it appears at the URL now."""
        if self._open:
            self.finish()
