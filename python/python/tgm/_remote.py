"""Files that are not local paths: URLs (``http(s)://``, ``s3://``,
``gs://``, ``az://``; ``spec/remote.md``) and file-like objects with
``read`` and ``seek`` (such as ``fsspec.open(...)`` files).

:class:`RemoteTensogramFile` has the reading API of
:class:`tgm.TensogramFile`; each call reads what it needs by ranged reads
(an object: its frame, once the message's index is known), never the whole
file. Remote files are read-only.
"""

import os
import warnings

from . import _api, _native
from ._dtypes import as_array
from ._errors import InvalidArgumentError, TensogramIOError
from ._types import DataObjectDescriptor, Metadata

#: URL schemes read remotely (``spec/remote.md`` §1).
SCHEMES = ("http://", "https://", "s3://", "s3a://", "gs://", "az://", "azure://")


def is_url(source):
    """Whether ``source`` is a string naming a remote object."""
    return isinstance(source, str) and source.lower().startswith(SCHEMES)


def is_reader(source):
    """Whether ``source`` is a file-like object (``read`` and ``seek``)."""
    return not isinstance(source, (str, bytes)) and all(
        callable(getattr(source, a, None)) for a in ("read", "seek")
    )


def storage_pairs(storage_options):
    """``storage_options`` (a dict, or None) as ``[(key, value)]`` strings.
    Values go through ``str``; one that cannot is a ``ValueError``."""
    if storage_options is None:
        return []
    if not isinstance(storage_options, dict):
        raise TypeError(
            f"storage_options must be a dict, got {type(storage_options).__name__}"
        )
    pairs = []
    for k, v in storage_options.items():
        if not isinstance(k, str):
            raise TypeError(f"storage option keys must be str, got {type(k).__name__}")
        if isinstance(v, bool):
            v = "true" if v else "false"
        try:
            pairs.append((k, str(v)))
        except Exception as e:
            raise ValueError(
                f"storage option {k!r}: value must be convertible to string ({e})"
            ) from e
    return pairs


def reader_name(obj):
    """How errors name a file object: its ``name`` (or ``path``, as fsspec
    files have) when it is a string, else its type."""
    for attr in ("name", "path"):
        v = getattr(obj, attr, None)
        if isinstance(v, str):
            return v
    return f"<{type(obj).__name__} object>"


def open_native(source, storage_options, intact_only):
    """The native handle of ``source`` (a URL or file object), its messages
    located; damage refused unless ``intact_only``."""
    if is_reader(source):
        if storage_options:
            raise TypeError("storage_options apply to URLs, not to file objects")
        return _native.File.open_reader(source, reader_name(source), intact_only)
    pairs = storage_pairs(storage_options)
    if not _native.remote_enabled():
        raise InvalidArgumentError(
            f"{source}: this tgm was built without the 'remote' cargo feature"
        )
    try:
        return _native.File.open_url(source, pairs, intact_only)
    except InvalidArgumentError as e:
        # A URL that names no object is an I/O failure to open it, as in
        # the reference (``OSError``), not a bad index.
        raise TensogramIOError(f"{source}: invalid remote source: {e.detail}") from e


#: Handles opened from a shipped layout in this process, by (URL, storage
#: options, layout): the tasks of one Dask graph unpickle the same handle
#: many times, and share one connection and one set of read indexes.
_FROM_LAYOUT = {}
_FROM_LAYOUT_MAX = 16


def _from_layout(source, storage_options, layout):
    """The native handle of URL ``source`` from its ``layout`` (JSON of
    ``_native.source_layout``): nothing is scanned, the layout is checked
    against the object's length and ETag (``spec/remote.md`` §6)."""
    key = (source, repr(sorted(storage_pairs(storage_options))), layout)
    native = _FROM_LAYOUT.get(key)
    if native is None:
        native = _native.open_url_from_layout(source, layout, storage_pairs(storage_options))
        if len(_FROM_LAYOUT) >= _FROM_LAYOUT_MAX:
            _FROM_LAYOUT.pop(next(iter(_FROM_LAYOUT)))
        _FROM_LAYOUT[key] = native
    return native


def open_catalogue(location, storage_options=None):
    """The archives a catalogue file (``.tgmc``, written by ``tgm index``)
    lists, in order, each a read-only file opened from its catalogue
    (``spec/files.md`` §9.5): a remote archive whose ETag was recorded is
    not fetched until an object is read, and every read is pinned to that
    ETag. An archive its catalogue no longer matches is scanned, with a
    warning saying why."""
    if not _native.remote_enabled():
        raise InvalidArgumentError(f"{location}: this tgm was built without the 'remote' cargo feature")
    pairs = storage_pairs(storage_options)
    out = []
    for loc, native, stale in _native.open_catalogue_file(os.fspath(location), pairs):
        if stale:
            warnings.warn(f"{loc}: its catalogue was not used ({stale}); the archive was scanned", stacklevel=2)
        f = RemoteTensogramFile.__new__(RemoteTensogramFile)
        f._source, f._options, f._intact_only, f._native = loc, storage_options, False, native
        out.append(f)
    return out


def index_archives(inputs, output, storage_options=None, *, force=False):
    """One catalogue file at ``output`` (``.tgmc``, a local path or URL)
    over the archives ``inputs`` names — files, URLs, and object-store
    folders with a pattern in their last segment
    (``"s3://bucket/era5/*.tgm"``) — as ``tgm index`` writes it
    (``spec/files.md`` §9.5) → ``{"target", "bytes", "etag",
    "archives"}``. Archives are opened many at a time, all before anything
    is written; one that is not whole messages is an error naming it. An
    existing ``output`` is refused unless ``force``."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    names = [i if is_url(i) else os.fspath(i) for i in inputs]
    target = output if is_url(output) else os.fspath(output)
    archives, size, etag = _native.index_archives(names, target, storage_pairs(storage_options), bool(force))
    return {"target": target, "bytes": size, "etag": etag, "archives": archives}


class RemoteTensogramFile:
    """A ``.tgm`` read from a URL or a file-like object, with the reading
    API of :class:`tgm.TensogramFile` (``spec/remote.md``).

    As for a local file, bytes outside complete messages are refused with a
    :class:`tgm.FramingError` naming the source, offset and message index;
    ``intact_only=True`` reads the intact messages before them instead.
    """

    def __init__(self, source, storage_options=None, *, intact_only=False):
        self._source = source
        self._options = storage_options
        self._intact_only = bool(intact_only)
        self._native = open_native(source, storage_options, self._intact_only)

    # -- reference API ------------------------------------------------
    def source(self):
        """The URL (or file object) read."""
        return self._source

    def is_remote(self):
        """True: bytes come from a URL or file object, not a local path."""
        return True

    def message_count(self):
        """Number of complete messages."""
        return self._native.count()

    def damage(self):
        """Byte ranges outside complete messages, as ``[(offset, length,
        reason, truncated)]`` (empty unless opened with ``intact_only``)."""
        return self._native.damage()

    def __len__(self):
        return self.message_count()

    def _m(self, index):
        n = self.message_count()
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise InvalidArgumentError(
                f"message index {index} out of range for file with {n} messages"
            )
        return i

    def read_message(self, index):
        """The bytes of message ``index``."""
        return self._native.message_bytes(self._m(index))

    def messages(self):
        """Every message's bytes, in order."""
        return [self.read_message(i) for i in range(len(self))]

    def decode_message(
        self, index, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False
    ):
        """Decode message ``index`` whole → ``Message(metadata, objects)``."""
        return _api.decode(
            self.read_message(index), native_byte_order, threads, restore_non_finite, verify_hash
        )

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self.decode_message(i) for i in range(*key.indices(len(self)))]
        return self.decode_message(key)

    def __iter__(self):
        raise RuntimeError(
            "iteration not supported on remote files: use indexing or file_decode_object"
        )

    def file_decode_metadata(self, msg_index):
        """Metadata of message ``msg_index`` → ``Metadata``."""
        return Metadata._from_native(self._native.metadata(self._m(msg_index)))

    def file_decode_descriptors(self, msg_index):
        """``{"metadata": Metadata, "descriptors": [DataObjectDescriptor]}``
        without reading any payload."""
        meta, descs = self._native.descriptors(self._m(msg_index))
        return {
            "metadata": Metadata._from_native(meta),
            "descriptors": [DataObjectDescriptor(d) for d in descs],
        }

    def _o(self, m, obj_index):
        if obj_index >= 0:
            return obj_index
        return obj_index + len(self._native.descriptors(m)[1])

    def file_decode_object(
        self, msg_index, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """One object, reading its frame only →
        ``{"metadata", "descriptor", "data"}``."""
        m = self._m(msg_index)
        meta = self._native.metadata(m, verify_hash)
        desc, buf, start, end = self._native.decode_object(
            m, self._o(m, obj_index), native_byte_order, threads, True, verify_hash
        )
        return {
            "metadata": Metadata._from_native(meta),
            "descriptor": DataObjectDescriptor(desc),
            "data": as_array(desc, buf[start:end], native_byte_order),
        }

    def file_decode_range(
        self, msg_index, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """Element ranges ``[(start, count)]`` of one object, reading only
        the bytes they need where the pipeline allows (``spec/remote.md`` §4)."""
        m = self._m(msg_index)
        dtype, order, parts = self._native.decode_range(
            m, self._o(m, obj_index), ranges, native_byte_order, threads
        )
        return _api.range_arrays(dtype, order, parts, join, native_byte_order)

    def file_decode_object_batch(
        self, msg_indices, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """:meth:`file_decode_object` of ``obj_index`` in each listed message;
        message indexes are checked before anything is read."""
        ms = [self._m(i) for i in msg_indices]
        self.prefetch_layouts(ms)
        return [
            self.file_decode_object(m, obj_index, native_byte_order, threads, verify_hash)
            for m in ms
        ]

    def file_decode_range_batch(
        self, msg_indices, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """:meth:`file_decode_range` in each listed message."""
        ms = [self._m(i) for i in msg_indices]
        self.prefetch_layouts(ms)
        return [
            self.file_decode_range(m, obj_index, ranges, join, native_byte_order, threads)
            for m in ms
        ]

    def prefetch_layouts(self, msg_indices):
        """Read and keep the index of each listed message, so that each
        later object read is one request."""
        self._native.prefetch([self._m(i) for i in msg_indices])

    def object_array(self, msg_index, obj_index, verify_hash=False):
        """Object ``obj_index`` of message ``msg_index`` as a new ndarray
        (what :meth:`tgm.TensogramFile.object_array` gives for a local
        file, always decoded: there is no mapping to view)."""
        m = self._m(msg_index)
        desc, raw = _native.decode_object_data(self._native, m, self._o(m, obj_index), True, verify_hash)
        return as_array(desc, raw)

    def object_descriptor(self, msg_index, obj_index):
        """``(Metadata, DataObjectDescriptor)`` of one object, no payload read."""
        info = self.file_decode_descriptors(msg_index)
        descs = info["descriptors"]
        if not 0 <= obj_index < len(descs):
            raise IndexError(f"object index {obj_index} out of range ({len(descs)} objects)")
        return info["metadata"], descs[obj_index]

    def __getstate__(self):
        if not is_url(self._source):
            raise TypeError("a TensogramFile over a file object cannot be pickled")
        state = {
            "source": self._source,
            "storage_options": self._options,
            "intact_only": self._intact_only,
        }
        # A layout holds no damage: a damaged file is located again.
        if not self._native.damage():
            state["layout"] = _native.source_layout(self._native)
        return state

    def __setstate__(self, state):
        layout = state.get("layout")
        if layout is None:
            self.__init__(
                state["source"], state["storage_options"], intact_only=state.get("intact_only", False)
            )
            return
        self._source = state["source"]
        self._options = state["storage_options"]
        self._intact_only = bool(state.get("intact_only", False))
        self._native = _from_layout(self._source, self._options, layout)

    def append(self, *_args, **_kwargs):
        """Remote files are read-only."""
        raise TensogramIOError(f"{self._source}: remote files are read-only")

    append_bytes = append

    # -- lifetime -----------------------------------------------------
    def close(self):
        """Nothing to release beyond the handle itself."""

    def __enter__(self):
        return self

    def __exit__(self, _exc_type=None, _exc_val=None, _exc_tb=None):
        self.close()
        return False

    def __repr__(self):
        return f"TensogramFile(source={self._source!r}, remote=True)"
