"""File access with the reference package's ``TensogramFile`` and
``AsyncTensogramFile`` API (``spec/files.md``).

A file is located once when opened (message offsets, then each message's
index and frame envelopes when first read) and read through positioned
reads: every array returned owns its memory, so rewriting or truncating
the file afterwards neither changes nor breaks it. Zero-copy views of a
memory map are an explicit opt-in (``zero_copy=True``), with the risk that
comes with any memory map: a view changes when the file is rewritten in
place, and touching it after the file was truncated kills the process
(SIGBUS).

A file that is not a Tensogram file, or holds bytes outside complete
messages (a message cut short, garbage between or after messages), is
refused when opened; ``intact_only=True`` reads its intact messages.
"""

import asyncio
import mmap
import operator
import os

import numpy as np

from . import _api, _native, _remote
from ._dtypes import NATIVE, as_array, numpy_dtype
from ._errors import InvalidArgumentError, TensogramIOError
from ._types import DataObjectDescriptor, Metadata


class TensogramFile:
    """A file of concatenated messages.

    ``TensogramFile.open(path)`` reads (and can append);
    ``TensogramFile.create(path)`` truncates first. ``len(f)``, ``f[i]``,
    ``f[a:b]`` and iteration decode whole messages; ``file_decode_*`` and
    :meth:`object_array` reach single objects, reading only that object's
    frame once the message's index is known. Arrays own their memory
    unless the file was opened with ``zero_copy=True``.
    """

    def __init__(self, path, *, intact_only=False, zero_copy=False, _native_file=None):
        self._path = os.fspath(path)
        self._intact_only = bool(intact_only)
        self._zero_copy = bool(zero_copy)
        self._nf = _native_file
        self._mm = None

    # -- construction -------------------------------------------------
    @classmethod
    def open(cls, source, *, bidirectional=True, intact_only=False, zero_copy=False):
        """Open an existing file: a local path, a URL (``http(s)://``,
        ``s3://``, ``gs://``, ``az://``) or a file-like object with ``read``
        and ``seek`` (the last two give a read-only
        :class:`tgm._remote.RemoteTensogramFile`). ``bidirectional`` is
        accepted for the reference's sake; tgm locates messages one way.

        Raises a :class:`FramingError` naming the path, the absolute byte
        offset and the message index when a local file is not a Tensogram
        file or holds bytes outside complete messages; ``intact_only=True``
        reads the intact messages of such a file instead.
        ``zero_copy=True`` makes :meth:`object_array` return read-only
        views of a memory map where the object is stored as is: no copy,
        but the view changes if the file is rewritten in place, and
        reading it after the file was truncated kills the process (SIGBUS).
        """
        _check_bidirectional(bidirectional)
        if _remote.is_url(source) or _remote.is_reader(source):
            if zero_copy:
                raise InvalidArgumentError(
                    f"{_remote.reader_name(source) if _remote.is_reader(source) else source}: "
                    "zero_copy=True needs a local file to map; a URL or file object "
                    "is read into new arrays (open it without zero_copy)"
                )
            return _remote.RemoteTensogramFile(source, intact_only=intact_only)
        src = os.fspath(source)
        if not os.path.exists(src):
            raise FileNotFoundError(2, "No such file or directory", src)
        f = cls(src, intact_only=intact_only, zero_copy=zero_copy)
        f._handle()
        return f

    @classmethod
    def create(cls, path, storage_options=None, *, overwrite=False):
        """Create (or truncate) a file for appending.

        A URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``; its store
        configured by ``storage_options`` as for reads) gives a
        write-only :class:`tgm._sink.TensogramWriter` instead: messages
        appended stream into an upload that completes when it is closed
        (or its ``with`` block ends) and is aborted on an exception, so the
        object appears whole or not at all; an existing object is refused
        unless ``overwrite=True`` (``spec/remote.md`` §7)."""
        if _remote.is_url(path):
            from ._sink import TensogramWriter

            return TensogramWriter(path, storage_options, overwrite=overwrite)
        if storage_options:
            raise TypeError("storage_options apply to URLs, not to local paths")
        with open(path, "wb"):
            pass
        return cls.open(path)

    @classmethod
    def open_remote(cls, source, storage_options=None, *, bidirectional=True, intact_only=False):
        """Open a URL (or file-like object) read-only; ``storage_options``
        are the store's configuration keys (``spec/remote.md`` §1);
        ``intact_only`` as in :meth:`open`."""
        _check_bidirectional(bidirectional)
        return _remote.RemoteTensogramFile(source, storage_options, intact_only=intact_only)

    @classmethod
    def from_layout(cls, path, size, spans, *, zero_copy=False):
        """A reader over a file whose message offsets are already known,
        as ``[(offset, length)]`` for a file of ``size`` bytes; nothing is
        scanned. A file of another size is refused (``TensogramIOError``)."""
        path = os.fspath(path)
        _check_size(path, size)
        nf = _native.File.from_layout(path, int(size), [tuple(s) for s in spans])
        return cls(path, zero_copy=zero_copy, _native_file=nf)

    # -- native handle, index and mapping ------------------------------
    def _handle(self):
        if self._nf is None:
            self._nf = _native.File(self._path, self._intact_only)
        return self._nf

    def refresh(self):
        """Locate the messages another writer appended since the file was
        opened (done for you by :meth:`message_count` and by an index past
        the last known message)."""
        self._handle().refresh(self._intact_only)
        self._mm = None

    def _mapping(self):
        """The memory map behind ``zero_copy`` views."""
        if self._mm is None:
            with open(self._path, "rb") as fh:
                _check_size(self._path, self._handle().size(), os.fstat(fh.fileno()).st_size)
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return self._mm

    def _msg(self, index):
        """``index`` as a message index in range, negative ones counting
        from the end; a negative index, or one past the known end, looks
        for appended messages first."""
        i = operator.index(index)
        n = self._handle().count()
        if i >= n or i < 0:
            self.refresh()
            n = self._nf.count()
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            # A ValueError and an IndexError, as code for the reference
            # catches the first and sequence code the second.
            raise InvalidArgumentError(
                f"message index {index} out of range for file with {n} messages"
            )
        return j

    def _obj(self, m, index):
        """Object ``index`` of message ``m``, negative ones counting from the end."""
        i = operator.index(index)
        if i >= 0:
            return i
        n = self._nf.object_count(m)
        if i + n < 0:
            raise InvalidArgumentError(
                f"object index {index} out of range for a message of {n} objects"
            )
        return i + n

    @property
    def layout(self):
        """``(size, [(offset, length)])`` of the located file."""
        nf = self._handle()
        return nf.size(), nf.spans()

    def damage(self):
        """Byte ranges outside complete messages, as ``[(offset, length,
        reason, truncated)]`` (empty unless opened with ``intact_only``)."""
        return self._handle().damage()

    # -- reference API ------------------------------------------------
    def source(self):
        """The path opened."""
        return self._path

    def is_remote(self):
        """False: URLs and file objects open as :class:`tgm._remote.RemoteTensogramFile`."""
        return False

    def message_count(self):
        """Number of complete messages, including any appended since opening."""
        self.refresh()
        return self._nf.count()

    def __len__(self):
        return self.message_count()

    def append(
        self,
        global_meta_dict,
        descriptors_and_data,
        hash="xxh3",
        threads=0,
        allow_nan=False,
        allow_inf=False,
        nan_mask_method=None,
        pos_inf_mask_method=None,
        neg_inf_mask_method=None,
        small_mask_threshold_bytes=None,
        aggregate_hash=None,
        zstd_content_size=False,
    ):
        """Encode one message and append it to the file."""
        msg = _api.encode(
            global_meta_dict,
            descriptors_and_data,
            hash=hash,
            threads=threads,
            allow_nan=allow_nan,
            allow_inf=allow_inf,
            nan_mask_method=nan_mask_method,
            pos_inf_mask_method=pos_inf_mask_method,
            neg_inf_mask_method=neg_inf_mask_method,
            small_mask_threshold_bytes=small_mask_threshold_bytes,
            aggregate_hash=aggregate_hash,
            zstd_content_size=zstd_content_size,
        )
        self.append_bytes(msg)

    def append_bytes(self, message):
        """Append one already-encoded message."""
        with open(self._path, "ab") as fh:
            fh.write(message)
            fh.flush()
        self.refresh()

    def read_message(self, index):
        """The bytes of message ``index``."""
        return self._nf.message_bytes(self._msg(index))

    def messages(self):
        """The bytes of every message."""
        return [self.read_message(i) for i in range(len(self))]

    def decode_message(
        self, index, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False
    ):
        """Decode message ``index`` → ``Message(metadata, objects)``; error
        offsets are absolute in the file."""
        meta, objects = self._nf.decode_message(
            self._msg(index), native_byte_order, threads, restore_non_finite, verify_hash
        )
        return _api._message(meta, objects, native_byte_order)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self.decode_message(i) for i in range(*key.indices(len(self)))]
        return self.decode_message(key)

    def __iter__(self):
        return TensogramFileIter(self)

    def file_decode_metadata(self, msg_index):
        """Metadata of message ``msg_index`` → ``Metadata``."""
        return Metadata._from_native(self._nf.metadata(self._msg(msg_index)))

    def file_decode_descriptors(self, msg_index):
        """Metadata and descriptors of message ``msg_index``, no payload
        read → ``{"metadata": Metadata, "descriptors": [DataObjectDescriptor]}``."""
        meta, descs = self._nf.descriptors(self._msg(msg_index))
        return {
            "metadata": Metadata._from_native(meta),
            "descriptors": [DataObjectDescriptor(d) for d in descs],
        }

    def _decode(self, m, o, native_byte_order, threads, restore_non_finite, verify_hash):
        desc, buf, start, end = self._nf.decode_object(
            m, o, native_byte_order, threads, restore_non_finite, verify_hash
        )
        return desc, as_array(desc, buf[start:end], native_byte_order)

    def file_decode_object(
        self, msg_index, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """Decode one object → ``{"metadata", "descriptor", "data"}``; only
        that object's frame is read once the message's index is known."""
        m = self._msg(msg_index)
        o = self._obj(m, obj_index)
        desc, arr = self._decode(m, o, native_byte_order, threads, True, verify_hash)
        meta = Metadata._lazy(self._nf.metadata_handle(m, verify_hash).to_dict)
        return {"metadata": meta, "descriptor": DataObjectDescriptor(desc), "data": arr}

    def file_decode_range(
        self, msg_index, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """Elements ``[(start, count), ...]`` of one object → ``list[ndarray]``,
        or one ndarray with ``join=True`` (as :func:`tgm.decode_range`)."""
        m = self._msg(msg_index)
        o = self._obj(m, obj_index)
        dtype, order, parts = self._nf.decode_range(m, o, ranges, native_byte_order, threads)
        return _api.range_arrays(dtype, order, parts, join, native_byte_order)

    def file_decode_object_batch(
        self, msg_indices, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """``file_decode_object`` for each message index (the reference
        supports this on remote files only)."""
        return [
            self.file_decode_object(m, obj_index, native_byte_order, threads, verify_hash)
            for m in msg_indices
        ]

    def file_decode_range_batch(
        self, msg_indices, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """``file_decode_range`` for each message index."""
        return [
            self.file_decode_range(m, obj_index, ranges, join, native_byte_order, threads)
            for m in msg_indices
        ]

    # -- beyond the reference -----------------------------------------
    def object_array(self, msg_index, obj_index, verify_hash=False):
        """Object ``obj_index`` of message ``msg_index`` as an ndarray that
        owns its memory (frame digests checked when present).

        With ``zero_copy=True`` at opening, an object stored uncompressed,
        without masks and in native byte order comes back as a read-only
        view of the file's memory map instead (the array keeps the mapping
        alive; see :meth:`open` for the risk).
        """
        m = self._msg(msg_index)
        o = self._obj(m, obj_index)
        if self._zero_copy:
            view = self._mapped_array(m, o, verify_hash)
            if view is not None:
                return view
        return self._decode(m, o, True, 0, True, verify_hash)[1]

    def _mapped_array(self, m, o, verify_hash):
        off, length = self._nf.span(m)
        mm = self._mapping()
        desc, at, n = _native.locate_raw(memoryview(mm)[off : off + length], o, verify_hash)
        if at is None:
            return None
        if desc["dtype"] == "bitmask":
            return np.frombuffer(mm, np.uint8, count=n, offset=off + at)
        dt = numpy_dtype(desc["dtype"], NATIVE)
        arr = np.frombuffer(mm, dt, count=n // dt.itemsize, offset=off + at)
        return arr.reshape(desc["shape"])

    def object_descriptor(self, msg_index, obj_index):
        """Metadata and descriptor of one object, without decoding it →
        ``(Metadata, DataObjectDescriptor)``."""
        info = self.file_decode_descriptors(msg_index)
        descs = info["descriptors"]
        o = operator.index(obj_index)
        if not -len(descs) <= o < len(descs):
            raise IndexError(f"object index {obj_index} out of range ({len(descs)} objects)")
        return info["metadata"], descs[o]

    # -- lifetime and pickling ----------------------------------------
    def close(self):
        """Release the file (reopened on next use; arrays returned stay valid)."""
        self._nf = None
        self._mm = None

    def __enter__(self):
        return self

    def __exit__(self, _exc_type=None, _exc_val=None, _exc_tb=None):
        self.close()
        return False

    def __getstate__(self):
        return {
            "path": self._path,
            "layout": self.layout,
            "intact_only": self._intact_only,
            "zero_copy": self._zero_copy,
        }

    def __setstate__(self, state):
        size, spans = state["layout"]
        g = TensogramFile.from_layout(state["path"], size, spans, zero_copy=state["zero_copy"])
        self.__init__(
            g._path,
            intact_only=state["intact_only"],
            zero_copy=g._zero_copy,
            _native_file=g._nf,
        )

    def __repr__(self):
        return f"TensogramFile(source={self._path!r})"


class TensogramFileIter:
    """Iterator over the messages of a :class:`TensogramFile`."""

    def __init__(self, f):
        self._f = f
        self._pos = 0
        self._n = len(f)

    def __iter__(self):
        return self

    def __len__(self):
        return self._n - self._pos

    def __next__(self):
        if self._pos >= self._n:
            raise StopIteration
        self._pos += 1
        return self._f.decode_message(self._pos - 1)

    def __repr__(self):
        return f"TensogramFileIter(position={self._pos}, remaining={len(self)})"


class AsyncTensogramFile:
    """``asyncio`` wrapper of :class:`TensogramFile`: each call runs in a
    worker thread (the native code releases the GIL), so
    ``asyncio.gather`` decodes concurrently."""

    def __init__(self, f):
        self._f = f
        self._counted = False

    @staticmethod
    def open(source, *, bidirectional=True, intact_only=False, zero_copy=False):
        """Open a path, URL or file object → awaitable of
        :class:`AsyncTensogramFile` (``intact_only`` and ``zero_copy`` as in
        :meth:`TensogramFile.open`)."""
        _check_bidirectional(bidirectional)
        return AsyncTensogramFile._opened(source, intact_only, zero_copy)

    @staticmethod
    async def _opened(source, intact_only, zero_copy):
        f = await asyncio.to_thread(
            TensogramFile.open, source, intact_only=intact_only, zero_copy=zero_copy
        )
        return AsyncTensogramFile(f)

    @staticmethod
    def open_remote(source, storage_options=None, *, bidirectional=True, intact_only=False):
        """Open a URL read-only → awaitable of :class:`AsyncTensogramFile`;
        arguments are checked at once, as in the reference (``intact_only``
        as in :meth:`TensogramFile.open`)."""
        _check_bidirectional(bidirectional)
        _remote.storage_pairs(storage_options)
        return AsyncTensogramFile._opened_remote(source, storage_options, intact_only)

    @staticmethod
    async def _opened_remote(source, storage_options, intact_only):
        f = await asyncio.to_thread(
            TensogramFile.open_remote, source, storage_options, intact_only=intact_only
        )
        return AsyncTensogramFile(f)

    def _run(self, fn, *args):
        return asyncio.to_thread(fn, *args)

    def source(self):
        """The path opened."""
        return self._f.source()

    def is_remote(self):
        """Whether the file is read from a URL or a file object."""
        return self._f.is_remote()

    def __len__(self):
        """The message count, once :meth:`message_count` was awaited (as in
        the reference, ``len`` never blocks the event loop on I/O)."""
        if not self._counted:
            raise RuntimeError("await f.message_count() before len(f)")
        return len(self._f)

    async def message_count(self):
        """Number of messages in the file."""
        n = await self._run(self._f.message_count)
        self._counted = True
        return n

    async def messages(self):
        """The bytes of every message."""
        return await self._run(self._f.messages)

    async def read_message(self, index):
        """The bytes of message ``index``."""
        return await self._run(self._f.read_message, index)

    async def decode_message(self, index, native_byte_order=True, threads=0, verify_hash=False):
        """Decode message ``index`` → ``Message(metadata, objects)``."""
        return await self._run(
            self._f.decode_message, index, native_byte_order, threads, True, verify_hash
        )

    async def file_decode_metadata(self, msg_index):
        """Metadata of message ``msg_index`` → ``Metadata``."""
        return await self._run(self._f.file_decode_metadata, msg_index)

    async def file_decode_descriptors(self, msg_index):
        """Metadata and descriptors of message ``msg_index``, no payload read."""
        return await self._run(self._f.file_decode_descriptors, msg_index)

    async def file_decode_object(
        self, msg_index, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """Decode one object → ``{"metadata", "descriptor", "data"}``."""
        return await self._run(
            self._f.file_decode_object, msg_index, obj_index, native_byte_order, threads, verify_hash
        )

    async def file_decode_range(
        self, msg_index, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """Elements ``[(start, count), ...]`` of one object (as :meth:`TensogramFile.file_decode_range`)."""
        return await self._run(
            self._f.file_decode_range, msg_index, obj_index, ranges, join, native_byte_order, threads
        )

    async def file_decode_object_batch(
        self, msg_indices, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        """``file_decode_object`` for each message index."""
        return await self._run(
            self._f.file_decode_object_batch,
            msg_indices,
            obj_index,
            native_byte_order,
            threads,
            verify_hash,
        )

    async def file_decode_range_batch(
        self, msg_indices, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        """``file_decode_range`` for each message index."""
        return await self._run(
            self._f.file_decode_range_batch,
            msg_indices,
            obj_index,
            ranges,
            join,
            native_byte_order,
            threads,
        )

    async def prefetch_layouts(self, msg_indices):
        """Read and keep the listed messages' indexes (remote files; local
        files are indexed when opened, and only the indexes are checked)."""
        prefetch = getattr(self._f, "prefetch_layouts", None)
        if prefetch is None:
            for i in msg_indices:
                self._f._span(i)
            return None
        return await self._run(prefetch, msg_indices)

    async def __aenter__(self):
        return self

    async def __aexit__(self, _exc_type=None, _exc_val=None, _exc_tb=None):
        self._f.close()
        return False

    def __aiter__(self):
        return AsyncTensogramFileIter(self)

    def __repr__(self):
        return f"AsyncTensogramFile(source={self._f.source()!r})"


class AsyncTensogramFileIter:
    """Asynchronous iterator over the messages of an :class:`AsyncTensogramFile`."""

    def __init__(self, af):
        self._af = af
        self._pos = 0

    def __aiter__(self):
        return self

    def __len__(self):
        return len(self._af._f) - self._pos

    async def __anext__(self):
        if self._pos >= len(self._af._f):
            raise StopAsyncIteration
        self._pos += 1
        return await self._af.decode_message(self._pos - 1)

    def __repr__(self):
        return f"AsyncTensogramFileIter(position={self._pos}, remaining={len(self)})"


def _check_size(path, expected, actual=None):
    """Refuses a file whose size is not the one its layout was made for."""
    if actual is None:
        actual = os.stat(path).st_size
    if actual != expected:
        raise TensogramIOError(f"{path}: size {actual} differs from the located {expected}")


def _check_bidirectional(bidirectional):
    if not isinstance(bidirectional, bool):
        raise TypeError(f"bidirectional must be a bool, got {type(bidirectional).__name__}")



__all__ = ["TensogramFile", "TensogramFileIter", "AsyncTensogramFile", "Metadata", "DataObjectDescriptor"]
