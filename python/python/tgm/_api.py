"""Buffer-level functions with the reference package's names, signatures
and return shapes (``spec/format.md`` §12 for decoding)."""

import json
import operator
import os

import numpy as np

from . import _native
from ._descriptor_keys import warn_metadata_like_keys
from ._dtypes import NATIVE, as_array, encodable, numpy_dtype
from ._errors import InvalidArgumentError
from ._masks import mask_args
from ._types import DataObjectDescriptor, Message, Metadata


def _hash_flag(hash):
    if hash is None or hash is False:
        return False
    if hash == "xxh3" or hash is True:
        return True
    raise InvalidArgumentError(f"unknown hash algorithm {hash!r} (only 'xxh3' or None)")


def _split_metadata(global_meta_dict):
    """``(base, extra)`` from a reference-style metadata dict, read by the
    library's caller rule (``spec/format.md`` §7.2): ``base`` is the
    per-object list; ``_extra_`` (or its alias ``extra``) and every other
    top-level key (``version`` included, as in the reference) are extra;
    a key given twice and ``_reserved_`` anywhere are errors."""
    if isinstance(global_meta_dict, Metadata):
        global_meta_dict = global_meta_dict.to_dict()
    if global_meta_dict is None:
        global_meta_dict = {}
    if not isinstance(global_meta_dict, dict):
        raise InvalidArgumentError("metadata must be a dict")
    return _native.caller_metadata(global_meta_dict)


def _descriptor_dict(desc):
    if isinstance(desc, DataObjectDescriptor):
        return desc.to_dict()
    if not isinstance(desc, dict):
        raise InvalidArgumentError("a descriptor must be a dict")
    return desc


def _check_aggregate_hash(aggregate_hash):
    if aggregate_hash is not None:
        raise InvalidArgumentError("option aggregate_hash is not supported by tgm")


def _pairs(descriptors_and_data):
    """``(descriptor dict, data)`` of each item, warning about descriptors
    that carry application metadata."""
    for item in descriptors_and_data:
        try:
            desc, data = item
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                f"each object must be a (descriptor, data) pair, got {type(item).__name__}"
            ) from None
        desc = _descriptor_dict(desc)
        warn_metadata_like_keys(desc)
        yield desc, data


def _encode_args(descriptors_and_data):
    return [(desc, encodable(desc, data)) for desc, data in _pairs(descriptors_and_data)]


def _payload(data):
    """A pre-encoded payload: bytes-like only (an array would hide its
    element order and type)."""
    if isinstance(data, (bytes, bytearray)):
        return data
    if isinstance(data, memoryview) and not hasattr(data.obj, "dtype"):
        return data.cast("B") if data.format != "B" or data.ndim != 1 else data
    raise TypeError(
        "a pre-encoded payload must be bytes, bytearray or memoryview, "
        f"got {type(data).__module__}.{type(data).__name__}"
    )


def encode(
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
    """Encode arrays into one wire-format message → ``bytes``.

    ``global_meta_dict`` is ``{"base": [...], ...}`` with any extra keys;
    ``descriptors_and_data`` a list of ``(descriptor_dict, array)`` pairs.
    Arrays are read in place, without a copy, so the GIL stays held while
    encoding unless every buffer is immutable (``bytes``).
    ``zstd_content_size=True`` records the size in zstd frame headers, for
    readers that need it; by default frames omit it, as the reference
    writes them (``spec/pipeline.md`` §4.1).
    """
    _check_aggregate_hash(aggregate_hash)
    masks = mask_args(
        nan_mask_method, pos_inf_mask_method, neg_inf_mask_method, small_mask_threshold_bytes
    )
    base, extra = _split_metadata(global_meta_dict)
    objects = _encode_args(descriptors_and_data)
    flags = (_hash_flag(hash), threads, allow_nan, allow_inf, masks, bool(zstd_content_size))
    return _native.encode(base, extra, objects, *flags)


def encode_pre_encoded(global_meta_dict, descriptors_and_data, hash="xxh3", threads=0):
    """Wrap payloads that already went through their descriptors' pipelines
    into one message → ``bytes`` (``spec/format.md`` §11.5).

    ``descriptors_and_data`` is a list of ``(descriptor_dict, payload)``
    pairs, each payload bytes-like and exactly what the pipeline would have
    written (``szip_block_offsets`` are bit offsets). Frame digests are
    always computed here. ``threads`` is accepted for the reference's
    signature; nothing is encoded, so it has no effect.
    """
    base, extra = _split_metadata(global_meta_dict)
    objects = [(desc, _payload(data)) for desc, data in _pairs(descriptors_and_data)]
    return _native.encode_pre_encoded(base, extra, objects, _hash_flag(hash))


def _buffer(buf):
    """``buf`` as a flat byte buffer (bytes-like objects, memory maps,
    NumPy arrays of any dtype). ``bytes`` and read-only memory maps are
    read in place; the native layer copies any other buffer before it
    releases the GIL, so another thread writing it cannot race the read."""
    if isinstance(buf, (bytes, bytearray)):
        return buf
    if isinstance(buf, str):
        raise TypeError("a message is bytes-like, not str")
    mv = memoryview(buf)
    if mv.format != "B" or mv.ndim != 1:
        if not mv.c_contiguous:
            raise InvalidArgumentError("message buffer must be C-contiguous")
        mv = mv.cast("B")
    return mv


def _object_index(mv, index):
    """``index`` as a non-negative object index, negative ones counting from
    the end as Python sequences do; floats are refused (``TypeError``)."""
    i = operator.index(index)
    if i >= 0:
        return i
    n = _native.object_count(mv)
    if i + n < 0:
        raise InvalidArgumentError(
            f"ObjectError: object index {i} out of range for a message of {n} objects"
        )
    return i + n


def _object(desc, raw, native_byte_order):
    return (DataObjectDescriptor(desc), as_array(desc, raw, native_byte_order))


def decode(buf, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False):
    """Decode a message → ``Message(metadata, objects)``.

    Frame digests are checked whenever present; ``verify_hash=True`` also
    requires every frame to carry one (``MissingHashError`` otherwise).
    """
    meta, objects = _native.decode(
        _buffer(buf), native_byte_order, threads, restore_non_finite, verify_hash
    )
    return _message(meta, objects, native_byte_order)


def _message(meta, objects, native_byte_order):
    """A ``Message`` of native metadata and ``(descriptor, bytes)`` pairs."""
    return Message(
        Metadata._from_native(meta),
        [_object(d, raw, native_byte_order) for d, raw in objects],
    )


def decode_with_masks(buf, native_byte_order=True, threads=0, verify_hash=False):
    """Decode a message without restoring NaN/Inf → ``Message(metadata,
    objects)`` whose objects are ``(DataObjectDescriptor, ndarray, masks)``:
    the array holds the stored substitutes (zeros) where values were
    non-finite, and ``masks`` maps each kind present (``"nan"``, ``"inf+"``,
    ``"inf-"``) to a flat bool array, one entry per element."""
    mv = _buffer(buf)
    msg = decode(mv, native_byte_order, threads, False, verify_hash)
    objects = []
    for i, (desc, arr) in enumerate(msg.objects):
        n = int(np.prod(desc.shape, dtype=np.int64))
        masks = {}
        if desc.masks:
            for kind, bits in _native.decode_masks(mv, i, verify_hash):
                masks[kind] = np.unpackbits(np.frombuffer(bits, np.uint8), count=n).astype(bool)
        objects.append((desc, arr, masks))
    return Message(msg.metadata, objects)


def decode_metadata(buf):
    """Decode only the metadata → ``Metadata``."""
    return Metadata._from_native(_native.decode_metadata(_buffer(buf)))


def decode_descriptors(buf):
    """Decode metadata and descriptors, no payloads →
    ``(Metadata, list[DataObjectDescriptor])``."""
    meta, descs = _native.decode_descriptors(_buffer(buf))
    return Metadata._from_native(meta), [DataObjectDescriptor(d) for d in descs]


def decode_object(
    buf, index, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False
):
    """Decode object *index* → ``(Metadata, DataObjectDescriptor, ndarray)``."""
    mv = _buffer(buf)
    meta, desc, raw = _native.decode_object(
        mv, _object_index(mv, index), native_byte_order, threads, restore_non_finite, verify_hash
    )
    d, arr = _object(desc, raw, native_byte_order)
    return Metadata._from_native(meta), d, arr


def decode_range(
    buf,
    object_index,
    ranges,
    join=False,
    native_byte_order=True,
    threads=0,
    restore_non_finite=True,
):
    """Elements ``[(start, count), ...]`` of one object, decoding only the
    blocks that hold them where the pipeline allows (``spec/pipeline.md``
    §7) → ``list[ndarray]``, or one concatenated ndarray with ``join=True``.

    Each range is a pair of non-negative integers; floats and bools are
    refused (``TypeError``) rather than truncated. As in the reference,
    the frame's digest, which covers the whole payload, is not checked
    (``decode_object`` checks it).
    """
    mv = _buffer(buf)
    dtype, byte_order, parts = _native.decode_range(
        mv,
        _object_index(mv, object_index),
        ranges,
        native_byte_order,
        threads,
        restore_non_finite,
    )
    return range_arrays(dtype, byte_order, parts, join, native_byte_order)


def range_arrays(dtype, byte_order, parts, join, native_byte_order):
    """The native decoder's range bytes (uint8 arrays) of an object of wire
    dtype ``dtype`` stored in ``byte_order``, as flat arrays of that dtype,
    or one concatenated array with ``join`` (the bytes joined first, then
    viewed once)."""
    dt = np.dtype(np.uint8) if dtype == "bitmask" else None
    if dt is None:
        dt = numpy_dtype(dtype, NATIVE if native_byte_order else byte_order)
    if not join:
        return [p.view(dt) for p in parts]
    if not parts:
        return np.zeros(0, dt)
    joined = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return joined.view(dt)


def scan(buf):
    """Message boundaries in *buf* → ``list[(offset, length)]``."""
    return _native.scan(_buffer(buf))


def write_catalogue(path):
    """End the local file *path* with the catalogue of its messages (a
    message of no objects listing every message, its metadata and
    descriptors), replacing one at its end, so that it opens from one read
    of its tail, locally and over HTTP or object storage
    (``spec/files.md`` §9). For files appended to with
    :meth:`TensogramFile.append`, which writes plain messages as the
    reference does. Returns the catalogue's length, or ``None`` when the
    file is not wholly complete messages (nothing is then written)."""
    return _native.end_with_catalogue(os.fspath(path))


class MessageIter:
    """Iterator over the messages of a byte buffer, decoding each on demand.
    Keeps a reference to the buffer (copying only mutable ones)."""

    def __init__(self, buf, verify_hash=False):
        self._buf = buf if isinstance(buf, bytes) else bytes(buf)
        self._spans = _native.scan(self._buf)
        self._pos = 0
        self._verify = verify_hash

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._spans) - self._pos

    def __next__(self):
        if self._pos >= len(self._spans):
            raise StopIteration
        off, length = self._spans[self._pos]
        self._pos += 1
        return decode(memoryview(self._buf)[off : off + length], verify_hash=self._verify)

    def __repr__(self):
        return f"MessageIter(remaining={len(self)})"


def iter_messages(buf, *, verify_hash=False):
    """Iterate over the messages in *buf*, yielding ``Message`` tuples."""
    return MessageIter(buf, verify_hash)


def validate(buf, level="default", check_canonical=False):
    """Validate *buf* as one message → ``{"issues", "object_count",
    "hash_verified", "byte_offset"}``.

    Levels (``spec/files.md`` §8): ``quick`` (structure), ``default``
    (plus metadata, digests and payload decoding), ``checksum`` (structure
    and digests only), ``full`` (plus NaN/Inf not declared by a mask).
    ``check_canonical`` also warns about non-canonical CBOR key order.
    """
    if isinstance(buf, str):
        raise TypeError("a message is bytes-like, not str")
    return json.loads(_native.validate(_buffer(buf), level, bool(check_canonical)))


def validate_file(path, level="default", check_canonical=False):
    """Validate every message of a file → ``{"file_issues", "messages"}``.

    ``messages`` holds one report per complete message, as :func:`validate`
    returns; ``file_issues`` the bytes outside complete messages (garbage,
    a truncated message, trailing bytes), each with ``byte_offset``,
    ``length`` and ``description``.
    """
    import os

    return json.loads(_native.validate_file(os.fspath(path), level, bool(check_canonical)))


def compute_hash(data, algo="xxh3"):
    """xxh3-64 digest of *data* (``bytes`` or ``bytearray``, as in the
    reference; convert views and arrays with ``bytes(...)`` or
    ``.tobytes()``) as 16 lowercase hex digits."""
    if algo != "xxh3":
        raise InvalidArgumentError(f"unknown hash type {algo!r} (only 'xxh3')")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(
            f"compute_hash takes bytes or bytearray, not {type(data).__name__}"
        )
    return _native.compute_hash(data)


def compute_packing_params(values, bits_per_value, decimal_scale_factor):
    """simple_packing parameters for float64 *values* → dict of ``sp_*`` keys."""
    arr = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        what = "NaN" if np.isnan(arr[i]) else "infinite value"
        raise InvalidArgumentError(
            f"compute_packing_params: {what} at element {i}; simple_packing needs finite values"
        )
    r, e, d, b = _native.compute_packing_params(
        arr.view(np.uint8), int(bits_per_value), int(decimal_scale_factor)
    )
    return {
        "sp_reference_value": r,
        "sp_binary_scale_factor": e,
        "sp_decimal_scale_factor": d,
        "sp_bits_per_value": b,
    }


class StreamingEncoder:
    """Message built one object at a time in memory (``spec/format.md`` §11.4).

    ``finish()`` leaves the length fields zero (readers scan forward);
    ``finish_backfilled()`` writes them. The ``*_and_reset`` variants start
    the next message with the same metadata.
    """

    def __init__(
        self,
        global_meta_dict,
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
        _check_aggregate_hash(aggregate_hash)
        masks = mask_args(
            nan_mask_method, pos_inf_mask_method, neg_inf_mask_method, small_mask_threshold_bytes
        )
        base, extra = _split_metadata(global_meta_dict)
        flags = (_hash_flag(hash), threads, allow_nan, allow_inf, masks, bool(zstd_content_size))
        self._enc = _native.StreamingEncoder(base, extra, *flags)
        self._finished = False

    def _open(self):
        if self._finished:
            raise RuntimeError("the encoder is already finished")
        return self._enc

    def write_object(self, descriptor, data):
        """Encode and write one object frame."""
        ((desc, data),) = _pairs([(descriptor, data)])
        self._open().write_object(desc, encodable(desc, data))

    def write_object_pre_encoded(self, descriptor, data):
        """Write one object frame around a payload that already went through
        the descriptor's pipeline (as :func:`encode_pre_encoded`)."""
        ((desc, data),) = _pairs([(descriptor, data)])
        self._open().write_object_pre_encoded(desc, _payload(data))

    @property
    def object_count(self):
        """Objects written to the current message."""
        return self._enc.num_objects()

    def _finish(self, backfill, reset):
        out = self._open().finish(backfill, reset)
        self._finished = not reset
        return out

    def finish(self):
        """End the message (length fields left zero) → ``bytes``."""
        return self._finish(False, False)

    def finish_backfilled(self):
        """End the message with its length written in → ``bytes``."""
        return self._finish(True, False)

    def finish_and_reset(self):
        """:meth:`finish`, then start the next message with the same metadata."""
        return self._finish(False, True)

    def finish_and_reset_backfilled(self):
        """:meth:`finish_backfilled`, then start the next message."""
        return self._finish(True, True)
