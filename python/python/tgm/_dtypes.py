"""NumPy views of decoded bytes and raw bytes of arrays to encode
(element types of ``spec/format.md`` §5)."""

import sys

import numpy as np

from . import _native
from ._errors import EncodeError, InvalidArgumentError

NATIVE = "little" if sys.byteorder == "little" else "big"

#: NumPy type of each wire dtype, as the core gives it
#: (``Dtype::numpy_storage_code``). ``bfloat16`` is returned as its raw
#: ``uint16`` bits and ``bitmask`` as packed ``uint8`` bytes, as the
#: reference does.
NUMPY_TYPES = dict(_native.NUMPY_TYPES)

_ORDER_CHAR = {"little": "<", "big": ">"}


def numpy_dtype(name, byte_order=NATIVE):
    """The NumPy dtype of wire dtype ``name`` stored in ``byte_order``."""
    try:
        code = NUMPY_TYPES[name]
    except KeyError:
        raise InvalidArgumentError(f"unknown dtype {name!r}") from None
    return np.dtype(_ORDER_CHAR[byte_order] + code)


def as_array(desc, raw, native_byte_order=True):
    """View decoded bytes ``raw`` (a uint8 array or buffer) as the
    descriptor's array, without copying."""
    order = NATIVE if native_byte_order else desc.get("byte_order", NATIVE)
    dt = numpy_dtype(desc["dtype"], order)
    flat = np.frombuffer(raw, dtype=np.uint8) if not isinstance(raw, np.ndarray) else raw
    if desc["dtype"] == "bitmask":
        return flat
    arr = flat.view(dt)
    return arr.reshape(desc["shape"])


def encodable(desc, data):
    """The raw bytes to encode for ``data`` under descriptor dict ``desc``,
    as a C-contiguous uint8 buffer in the descriptor's byte order.

    ``data`` is a NumPy array, anything NumPy can import through DLPack
    (``__dlpack__``), or bytes-like. Arrays must have the descriptor's element type (``bfloat16`` takes any
    2-byte type holding the raw bits, ``bitmask`` packed ``uint8`` or one
    ``bool`` per element); arrays
    in the other byte order are swapped. ``bytes``-like data is taken as
    already in the descriptor's byte order.
    """
    if not isinstance(desc, dict):
        raise InvalidArgumentError("a descriptor must be a dict")
    if isinstance(data, (bytes, bytearray, memoryview)):
        mv = memoryview(data)
        if not mv.c_contiguous:
            raise EncodeError("data buffer must be C-contiguous")
        return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv
    if not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__"):
        # Any DLPack producer on the CPU (PyTorch, JAX, CuPy host arrays ...).
        data = np.from_dlpack(data)
    if not isinstance(data, np.ndarray):
        if hasattr(data, "__array__") or isinstance(data, (list, tuple)):
            data = np.asarray(data)
        else:
            raise EncodeError(
                f"data must be a numpy array or bytes-like, not {type(data).__name__}"
            )
    name = desc.get("dtype")
    if name not in NUMPY_TYPES:
        raise InvalidArgumentError(f"unknown dtype {name!r}")
    if name == "bitmask" and data.dtype == np.bool_:
        # One bool per element, packed MSB first as the format stores them.
        n = int(np.prod(desc.get("shape", []), dtype=np.int64))
        if data.size != n:
            raise EncodeError(
                f"bool array of {data.size} elements does not match bitmask shape "
                f"{desc.get('shape')} ({n} elements)"
            )
        data = np.packbits(data.reshape(-1))
    target = desc.get("byte_order", NATIVE)
    if target not in _ORDER_CHAR:
        raise InvalidArgumentError(f"unknown byte_order {target!r}")
    want = numpy_dtype(name, target)
    have = data.dtype
    if name == "bfloat16":
        ok = have.itemsize == 2 and have.kind in "uiV" or have.name == "bfloat16"
    elif name == "bitmask":
        ok = have == np.uint8
    else:
        ok = have.kind == want.kind and have.itemsize == want.itemsize
    if not ok:
        raise EncodeError(f"array of {have} does not match descriptor dtype {name!r}")
    if have.itemsize > 1 and have.str[0] != want.str[0]:
        if name == "bfloat16":
            data = data.byteswap()
        else:
            data = data.astype(want)
    data = np.ascontiguousarray(data)
    return data.reshape(-1).view(np.uint8)
