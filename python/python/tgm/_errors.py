"""Exception classes raised by tgm.

Every error from the format engine is a :class:`TensogramError`, a
``ValueError`` (the reference raises ``ValueError``), with these attributes:

``kind``
    short machine-readable kind (``"framing"``, ``"hash_mismatch"`` ...)
``detail``
    the message without location
``offset``
    absolute byte offset of the problem in the input, or ``None``
``object_index`` / ``message_index``
    which object / message, or ``None``
"""


class TensogramError(ValueError):
    """Base class of every tgm error."""

    kind = "other"
    detail = ""
    offset = None
    object_index = None
    message_index = None

    def __reduce__(self):
        state = {
            "kind": self.kind,
            "detail": self.detail,
            "offset": self.offset,
            "object_index": self.object_index,
            "message_index": self.message_index,
        }
        return (_rebuild, (type(self), self.args, state))


def _rebuild(cls, args, state):
    e = cls(*args)
    for k, v in state.items():
        setattr(e, k, v)
    return e


class FramingError(TensogramError):
    """Magic bytes, frame lengths or offsets are wrong, or the input is cut short."""


class MetadataError(TensogramError):
    """Metadata or a descriptor is malformed or inconsistent."""


class CodecError(TensogramError):
    """A compressed or packed payload is corrupt."""


class UnsupportedCodecError(TensogramError):
    """An encoding, filter or compression this build cannot handle."""


class LimitExceededError(TensogramError):
    """A resource limit (size, element count, nesting) would be exceeded."""


class EncodeError(TensogramError):
    """The data given to the encoder does not fit its description."""


class InvalidArgumentError(TensogramError, IndexError):
    """An argument is out of range or not understood."""


class RangeNotSupportedError(TensogramError):
    """Partial decoding is not possible for this object's pipeline."""


class TensogramIOError(TensogramError, OSError):
    """The operating system reported an I/O error."""


class IntegrityError(TensogramError):
    """A digest check failed (as in the reference package)."""


class HashMismatchError(IntegrityError):
    """A frame's stored xxh3-64 digest differs from the recomputed one;
    ``expected`` (stored) and ``actual`` (recomputed) hold both in hex."""

    expected = None
    actual = None


class MissingHashError(IntegrityError):
    """``verify_hash=True`` was asked but a frame carries no digest."""


__all__ = [
    "TensogramError",
    "FramingError",
    "MetadataError",
    "CodecError",
    "UnsupportedCodecError",
    "LimitExceededError",
    "EncodeError",
    "InvalidArgumentError",
    "RangeNotSupportedError",
    "TensogramIOError",
    "IntegrityError",
    "HashMismatchError",
    "MissingHashError",
]
