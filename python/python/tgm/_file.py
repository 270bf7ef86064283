"""File access with the reference package's ``TensogramFile`` and
``AsyncTensogramFile`` API (``spec/files.md``).

A file is indexed once (message offsets and lengths) and memory-mapped;
decoding works on slices of the mapping without copying the file. The
index travels with a pickled ``TensogramFile``, so a Dask worker that
unpickles one reads objects without rescanning the file.
"""

import asyncio
import mmap
import os

import numpy as np

from . import _api, _native, _remote
from ._dtypes import NATIVE, numpy_dtype
from ._errors import InvalidArgumentError, TensogramIOError
from ._types import DataObjectDescriptor, Metadata


class TensogramFile:
    """A file of concatenated messages.

    ``TensogramFile.open(path)`` reads (and can append);
    ``TensogramFile.create(path)`` truncates first. ``len(f)``, ``f[i]``,
    ``f[a:b]`` and iteration decode whole messages; ``file_decode_*``
    reach single objects; :meth:`object_array` returns a read-only view of
    the mapping when the object is stored uncompressed in native order.
    """

    def __init__(self, path, *, _layout=None):
        self._path = os.fspath(path)
        self._spans = None
        self._size = None
        self._mm = None
        if _layout is not None:
            self._size, spans = _layout
            self._spans = [tuple(s) for s in spans]

    # -- construction -------------------------------------------------
    @classmethod
    def open(cls, source, *, bidirectional=True):
        """Open an existing file: a local path, a URL (``http(s)://``,
        ``s3://``, ``gs://``, ``az://``) or a file-like object with ``read``
        and ``seek`` (the last two give a read-only
        :class:`tgm._remote.RemoteTensogramFile`). ``bidirectional`` is
        accepted for the reference's sake; tgm locates messages one way."""
        _check_bidirectional(bidirectional)
        if _remote.is_url(source) or _remote.is_reader(source):
            return _remote.RemoteTensogramFile(source)
        src = os.fspath(source)
        if not os.path.exists(src):
            raise FileNotFoundError(2, "No such file or directory", src)
        f = cls(src)
        f._index()
        return f

    @classmethod
    def create(cls, path):
        """Create (or truncate) a file for appending."""
        with open(path, "wb"):
            pass
        f = cls(path)
        f._spans, f._size = [], 0
        return f

    @classmethod
    def open_remote(cls, source, storage_options=None, *, bidirectional=True):
        """Open a URL (or file-like object) read-only; ``storage_options``
        are the store's configuration keys (``spec/remote.md`` §1)."""
        _check_bidirectional(bidirectional)
        return _remote.RemoteTensogramFile(source, storage_options)

    @classmethod
    def from_layout(cls, path, size, spans):
        """A reader over a file whose message offsets are already known,
        as ``[(offset, length)]`` for a file of ``size`` bytes; nothing is
        scanned. Reads fail with a typed error if the file has changed size."""
        return cls(path, _layout=(size, spans))

    # -- index and mapping --------------------------------------------
    def _index(self):
        if self._spans is None:
            size, spans, _torn = _native.index_file(self._path)
            self._size, self._spans = size, spans
            self._mm = None
        return self._spans

    def _mapping(self):
        if self._mm is None:
            with open(self._path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size != self._size:
                    raise TensogramIOError(
                        f"{self._path}: size {size} differs from the indexed {self._size}"
                    )
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return self._mm

    def _span(self, index):
        spans = self._index()
        n = len(spans)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            # A ValueError and an IndexError, as code for the reference
            # catches the first and sequence code the second.
            raise InvalidArgumentError(
                f"message index {index} out of range for file with {n} messages"
            )
        return spans[i]

    def _message(self, index):
        off, length = self._span(index)
        return memoryview(self._mapping())[off : off + length], off

    @property
    def layout(self):
        """``(size, [(offset, length)])`` of the indexed file."""
        return self._size, list(self._index())

    # -- reference API ------------------------------------------------
    def source(self):
        return self._path

    def is_remote(self):
        return False

    def message_count(self):
        return len(self._index())

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
        )
        self.append_bytes(msg)

    def append_bytes(self, message):
        """Append one already-encoded message."""
        with open(self._path, "ab") as fh:
            fh.write(message)
            fh.flush()
        # Re-index on next use: appends may follow a torn tail.
        self._spans = None
        self._mm = None

    def read_message(self, index):
        mv, _ = self._message(index)
        return bytes(mv)

    def messages(self):
        return [self.read_message(i) for i in range(len(self))]

    def decode_message(
        self, index, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False
    ):
        mv, _ = self._message(index)
        return _api.decode(mv, native_byte_order, threads, restore_non_finite, verify_hash)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self.decode_message(i) for i in range(*key.indices(len(self)))]
        return self.decode_message(key)

    def __iter__(self):
        return TensogramFileIter(self)

    def file_decode_metadata(self, msg_index):
        mv, _ = self._message(msg_index)
        return _api.decode_metadata(mv)

    def file_decode_descriptors(self, msg_index):
        mv, _ = self._message(msg_index)
        meta, descs = _api.decode_descriptors(mv)
        return {"metadata": meta, "descriptors": descs}

    def file_decode_object(
        self, msg_index, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        mv, _ = self._message(msg_index)
        meta, desc, arr = _api.decode_object(
            mv, obj_index, native_byte_order, threads, True, verify_hash
        )
        return {"metadata": meta, "descriptor": desc, "data": arr}

    def file_decode_range(
        self, msg_index, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        mv, _ = self._message(msg_index)
        return _api.decode_range(mv, obj_index, ranges, join, native_byte_order, threads)

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
        return [
            self.file_decode_range(m, obj_index, ranges, join, native_byte_order, threads)
            for m in msg_indices
        ]

    # -- beyond the reference -----------------------------------------
    def object_array(self, msg_index, obj_index, verify_hash=False):
        """Object ``obj_index`` of message ``msg_index`` as an ndarray.

        An object stored uncompressed, without masks and in native byte
        order comes back as a read-only view of the memory map (the array
        keeps the mapping alive); any other object is decoded into a new
        array. Frame digests are checked first when present.
        """
        mv, base = self._message(msg_index)
        desc, off, length = _native.locate_raw(mv, obj_index, verify_hash)
        if off is None:
            _, _, arr = _api.decode_object(mv, obj_index, verify_hash=verify_hash)
            return arr
        dt = numpy_dtype(desc["dtype"], NATIVE)
        if desc["dtype"] == "bitmask":
            return np.frombuffer(self._mapping(), np.uint8, count=length, offset=base + off)
        count = length // dt.itemsize
        arr = np.frombuffer(self._mapping(), dt, count=count, offset=base + off)
        return arr.reshape(desc["shape"])

    def object_descriptor(self, msg_index, obj_index):
        """Metadata and descriptor of one object, without decoding it →
        ``(Metadata, DataObjectDescriptor)``."""
        mv, _ = self._message(msg_index)
        meta, descs = _api.decode_descriptors(mv)
        if not 0 <= obj_index < len(descs):
            raise IndexError(f"object index {obj_index} out of range ({len(descs)} objects)")
        return meta, descs[obj_index]

    # -- lifetime and pickling ----------------------------------------
    def close(self):
        """Drop the mapping (arrays viewing it keep it alive)."""
        self._mm = None

    def __enter__(self):
        return self

    def __exit__(self, _exc_type=None, _exc_val=None, _exc_tb=None):
        self.close()
        return False

    def __getstate__(self):
        return {"path": self._path, "layout": (self._size, list(self._index()))}

    def __setstate__(self, state):
        self.__init__(state["path"], _layout=state["layout"])

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
    def open(source, *, bidirectional=True):
        """Open a path, URL or file object → awaitable of :class:`AsyncTensogramFile`."""
        _check_bidirectional(bidirectional)
        return AsyncTensogramFile._opened(TensogramFile.open, source)

    @staticmethod
    async def _opened(opener, *args):
        return AsyncTensogramFile(await asyncio.to_thread(opener, *args))

    @staticmethod
    def open_remote(source, storage_options=None, *, bidirectional=True):
        """Open a URL read-only → awaitable of :class:`AsyncTensogramFile`;
        arguments are checked at once, as in the reference."""
        _check_bidirectional(bidirectional)
        _remote.storage_pairs(storage_options)
        return AsyncTensogramFile._opened(TensogramFile.open_remote, source, storage_options)

    def _run(self, fn, *args):
        return asyncio.to_thread(fn, *args)

    def source(self):
        return self._f.source()

    def is_remote(self):
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
        return await self._run(self._f.messages)

    async def read_message(self, index):
        return await self._run(self._f.read_message, index)

    async def decode_message(self, index, native_byte_order=True, threads=0, verify_hash=False):
        return await self._run(
            self._f.decode_message, index, native_byte_order, threads, True, verify_hash
        )

    async def file_decode_metadata(self, msg_index):
        return await self._run(self._f.file_decode_metadata, msg_index)

    async def file_decode_descriptors(self, msg_index):
        return await self._run(self._f.file_decode_descriptors, msg_index)

    async def file_decode_object(
        self, msg_index, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
        return await self._run(
            self._f.file_decode_object, msg_index, obj_index, native_byte_order, threads, verify_hash
        )

    async def file_decode_range(
        self, msg_index, obj_index, ranges, join=False, native_byte_order=True, threads=0
    ):
        return await self._run(
            self._f.file_decode_range, msg_index, obj_index, ranges, join, native_byte_order, threads
        )

    async def file_decode_object_batch(
        self, msg_indices, obj_index, native_byte_order=True, threads=0, verify_hash=False
    ):
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


def _check_bidirectional(bidirectional):
    if not isinstance(bidirectional, bool):
        raise TypeError(f"bidirectional must be a bool, got {type(bidirectional).__name__}")



__all__ = ["TensogramFile", "TensogramFileIter", "AsyncTensogramFile", "Metadata", "DataObjectDescriptor"]
