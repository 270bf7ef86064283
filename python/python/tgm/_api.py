"""Buffer-level functions with the reference package's names, signatures
and return shapes (``spec/format.md`` §12 for decoding)."""

import json

import numpy as np

from . import _native
from ._dtypes import as_array, as_flat_array, encodable
from ._errors import InvalidArgumentError
from ._types import RESERVED, DataObjectDescriptor, Message, Metadata


def _hash_flag(hash):
    if hash is None or hash is False:
        return False
    if hash == "xxh3" or hash is True:
        return True
    raise InvalidArgumentError(f"unknown hash algorithm {hash!r} (only 'xxh3' or None)")


def _split_metadata(global_meta_dict):
    """``(base, extra)`` from a reference-style metadata dict: ``base`` is the
    per-object list, ``_extra_`` and every other top-level key (``version``
    included, as in the reference) are extra; library-owned ``_reserved_``
    sections are dropped, as the encoder writes those itself."""
    if isinstance(global_meta_dict, Metadata):
        global_meta_dict = global_meta_dict.to_dict()
    if global_meta_dict is None:
        global_meta_dict = {}
    if not isinstance(global_meta_dict, dict):
        raise InvalidArgumentError("metadata must be a dict")
    d = dict(global_meta_dict)
    base = d.pop("base", None) or []
    if not isinstance(base, (list, tuple)):
        raise InvalidArgumentError("metadata 'base' must be a list of dicts")
    d.pop(RESERVED, None)
    extra = d.pop("_extra_", None) or {}
    if not isinstance(extra, dict):
        raise InvalidArgumentError("metadata '_extra_' must be a dict")
    extra = {**extra, **d}
    clean = []
    for b in base:
        if not isinstance(b, dict):
            raise InvalidArgumentError("metadata 'base' entries must be dicts")
        clean.append({k: v for k, v in b.items() if k != RESERVED})
    return clean, extra


def _descriptor_dict(desc):
    if isinstance(desc, DataObjectDescriptor):
        return desc.to_dict()
    if not isinstance(desc, dict):
        raise InvalidArgumentError("a descriptor must be a dict")
    return desc


def _check_unsupported(**options):
    for name, value in options.items():
        if value is not None:
            raise InvalidArgumentError(f"option {name} is not supported by tgm")


def _encode_args(descriptors_and_data):
    objects = []
    for item in descriptors_and_data:
        try:
            desc, data = item
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                "each object must be a (descriptor, data) pair"
            ) from None
        desc = _descriptor_dict(desc)
        objects.append((desc, encodable(desc, data)))
    return objects


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
):
    """Encode arrays into one wire-format message → ``bytes``.

    ``global_meta_dict`` is ``{"base": [...], ...}`` with any extra keys;
    ``descriptors_and_data`` a list of ``(descriptor_dict, array)`` pairs.
    """
    _check_unsupported(
        nan_mask_method=nan_mask_method,
        pos_inf_mask_method=pos_inf_mask_method,
        neg_inf_mask_method=neg_inf_mask_method,
        small_mask_threshold_bytes=small_mask_threshold_bytes,
        aggregate_hash=aggregate_hash,
    )
    base, extra = _split_metadata(global_meta_dict)
    objects = _encode_args(descriptors_and_data)
    return _native.encode(
        base, extra, objects, _hash_flag(hash), threads, allow_nan, allow_inf
    )


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
    return Message(
        Metadata._from_native(meta),
        [_object(d, raw, native_byte_order) for d, raw in objects],
    )


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
    meta, desc, raw = _native.decode_object(
        _buffer(buf), index, native_byte_order, threads, restore_non_finite, verify_hash
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
    """Elements ``[(start, count), ...]`` of one object, without decoding the
    rest (pipelines without filter or compression) → ``list[ndarray]``, or
    one concatenated ndarray with ``join=True``."""
    ranges = [(int(a), int(b)) for a, b in ranges]
    desc, parts = _native.decode_range(
        _buffer(buf), object_index, ranges, native_byte_order, threads, restore_non_finite
    )
    arrays = [as_flat_array(desc, p, native_byte_order) for p in parts]
    if join:
        if not arrays:
            return as_flat_array(desc, np.zeros(0, np.uint8), native_byte_order)
        return np.concatenate(arrays)
    return arrays


def scan(buf):
    """Message boundaries in *buf* → ``list[(offset, length)]``."""
    return _native.scan(_buffer(buf))


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
    """xxh3-64 digest of *data* as 16 hex digits."""
    if algo != "xxh3":
        raise InvalidArgumentError(f"unknown hash algorithm {algo!r} (only 'xxh3')")
    if isinstance(data, str):
        raise TypeError("compute_hash takes bytes, not str")
    return _native.compute_hash(data)


def compute_packing_params(values, bits_per_value, decimal_scale_factor):
    """simple_packing parameters for float64 *values* → dict of ``sp_*`` keys."""
    arr = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
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
    ):
        _check_unsupported(
            nan_mask_method=nan_mask_method,
            pos_inf_mask_method=pos_inf_mask_method,
            neg_inf_mask_method=neg_inf_mask_method,
            small_mask_threshold_bytes=small_mask_threshold_bytes,
            aggregate_hash=aggregate_hash,
        )
        base, extra = _split_metadata(global_meta_dict)
        self._enc = _native.StreamingEncoder(
            base, extra, _hash_flag(hash), threads, allow_nan, allow_inf
        )

    def write_object(self, descriptor, data):
        """Encode and write one object frame."""
        desc = _descriptor_dict(descriptor)
        self._enc.write_object(desc, encodable(desc, data))

    @property
    def object_count(self):
        return self._enc.num_objects()

    def finish(self):
        return self._enc.finish(False, False)

    def finish_backfilled(self):
        return self._enc.finish(True, False)

    def finish_and_reset(self):
        return self._enc.finish(False, True)

    def finish_and_reset_backfilled(self):
        return self._enc.finish(True, True)
