"""Result types shaped like the reference package's: ``Metadata``,
``DataObjectDescriptor`` and the ``Message`` named tuple."""

from collections import namedtuple
from collections.abc import Mapping

RESERVED = "_reserved_"

#: Descriptor keys that are fields rather than pipeline parameters
#: (``spec/format.md`` §6).
DESCRIPTOR_FIELDS = (
    "type",
    "ndim",
    "shape",
    "strides",
    "dtype",
    "byte_order",
    "encoding",
    "filter",
    "compression",
    "masks",
)

Message = namedtuple("Message", ["metadata", "objects"])
Message.__doc__ = """A decoded message: ``metadata`` (:class:`Metadata`) and
``objects``, a list of ``(DataObjectDescriptor, ndarray)`` pairs."""

from . import _native

_MISSING = object()


class Metadata:
    """Message-level metadata (``spec/format.md`` §7).

    ``base[i]`` holds all metadata of object *i*; ``extra`` the free-form
    message-level keys; ``reserved`` the library's provenance. Dict-style
    access (``meta["mars"]``) finds the first ``base[i]`` holding the key
    (ignoring ``_reserved_``), then ``extra``: every lookup is the
    library's (``spec/format.md`` §7.1), answered from the sections as they
    were when the first lookup was made.
    """

    __slots__ = ("_base", "_reserved", "_extra", "_version", "_view")

    def __init__(self, base=None, extra=None, reserved=None, version=3):
        self._base = [dict(b) for b in (base or [])]
        self._extra = dict(extra or {})
        self._reserved = dict(reserved or {})
        self._version = version
        self._view = None

    def _lookups(self):
        """The native view the lookups ask, built on first use."""
        if self._view is None:
            self._view = _native.MetadataView(self._base, self._extra)
        return self._view

    @classmethod
    def _from_native(cls, d):
        return cls(d["base"], d["extra"], d["reserved"])

    @classmethod
    def _lazy(cls, load):
        """Metadata built from ``load()`` (a native metadata dict) when first used."""
        return _LazyMetadata(load)

    @property
    def version(self):
        """Wire-format version of the message (always 3)."""
        return self._version

    @property
    def base(self):
        """Per-object metadata list."""
        return self._base

    @property
    def extra(self):
        """Free-form message-level metadata."""
        return self._extra

    @property
    def reserved(self):
        """Library provenance (read-only)."""
        return self._reserved

    @property
    def num_objects(self):
        """Number of data objects (length of ``base``)."""
        return len(self._base)

    def keys(self):
        """Unique top-level keys in first-seen order: each ``base[i]`` then ``extra``."""
        return self._lookups().keys()

    def values(self):
        """The value of each key of :meth:`keys`."""
        return [self[k] for k in self.keys()]

    def items(self):
        """``(key, value)`` pairs of :meth:`keys`."""
        return [(k, self[k]) for k in self.keys()]

    def __getitem__(self, key):
        if not isinstance(key, str):
            raise KeyError(key)
        v = self._lookups().get_key(key, _MISSING)
        if v is _MISSING:
            raise KeyError(key)
        return v

    def get(self, key, default=None):
        """``self[key]``, or ``default`` when the key is absent."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key):
        return self.get(key, _MISSING) is not _MISSING

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def get_path(self, path, default=None):
        """Dotted lookup (``"mars.param"``) across ``base[i]`` then ``extra``;
        a path starting ``extra.`` or ``_extra_.`` looks in ``extra`` only."""
        return self._lookups().get(path, None, default)

    def get_path_at(self, obj, path, default=None):
        """Dotted lookup within ``base[obj]`` only (a negative ``obj`` counts
        from the end); ``default`` when there is no such object."""
        if not -len(self._base) <= obj < len(self._base):
            return default
        return self._lookups().get(path, obj % len(self._base), default)

    def has_path(self, path):
        """Whether :meth:`get_path` finds ``path``."""
        return self.get_path(path, _MISSING) is not _MISSING

    def has_path_at(self, obj, path):
        """Whether :meth:`get_path_at` finds ``path`` in ``base[obj]``."""
        return self.get_path_at(obj, path, _MISSING) is not _MISSING

    def to_dict(self):
        """The metadata in the shape :func:`tgm.encode` accepts."""
        return {
            "base": [{k: v for k, v in b.items() if k != RESERVED} for b in self._base],
            "_extra_": dict(self._extra),
        }

    def __eq__(self, other):
        if not isinstance(other, Metadata):
            return NotImplemented
        return (self._base, self._extra, self._reserved) == (
            other._base,
            other._extra,
            other._reserved,
        )

    def __getstate__(self):
        return (self._base, self._extra, self._reserved, self._version)

    def __setstate__(self, state):
        self._base, self._extra, self._reserved, self._version = state
        self._view = None

    def __repr__(self):
        extra = "[" + ", ".join(f'"{k}"' for k in self._extra) + "]"
        return f"Metadata(version={self._version}, base_len={len(self._base)}, extra_keys={extra})"


Mapping.register(Metadata)


class _LazyMetadata(Metadata):
    """:class:`Metadata` whose fields are converted from the native parse
    on first use: a file handle returns one with every object it decodes
    without converting the whole message's metadata each time."""

    __slots__ = ("_load",)

    def __init__(self, load):
        self._load = load

    def __getattr__(self, name):
        if name not in Metadata.__slots__:
            raise AttributeError(name)
        d = self._load()
        Metadata.__init__(self, d["base"], d["extra"], d["reserved"])
        return object.__getattribute__(self, name)

    def __reduce__(self):
        return (Metadata, (self._base, self._extra, self._reserved, self._version))


class DataObjectDescriptor:
    """One object's tensor description and pipeline (``spec/format.md`` §6).

    ``params`` holds every key that is not a descriptor field: pipeline
    parameters (``sp_*``, ``szip_*``, ``zstd_level`` ...) and annotations.
    """

    __slots__ = ("_d",)

    def __init__(self, d):
        self._d = dict(d)

    @property
    def obj_type(self):
        """The object type (``"ntensor"``)."""
        return self._d.get("type", "ntensor")

    @property
    def shape(self):
        """Extent of each dimension."""
        return list(self._d["shape"])

    @property
    def strides(self):
        """Element strides of each dimension."""
        return list(self._d.get("strides", []))

    @property
    def dtype(self):
        """Wire element type (``"float32"``, ``"bitmask"`` ...)."""
        return self._d["dtype"]

    @property
    def byte_order(self):
        """Stored byte order, ``"little"`` or ``"big"``."""
        return self._d.get("byte_order", "little")

    @property
    def encoding(self):
        """Encoding stage (``"none"``, ``"simple_packing"`` ...)."""
        return self._d.get("encoding", "none")

    @property
    def filter(self):
        """Filter stage (``"none"``, ``"shuffle"`` ...)."""
        return self._d.get("filter", "none")

    @property
    def compression(self):
        """Compression stage (``"none"``, ``"zstd"``, ``"szip"`` ...)."""
        return self._d.get("compression", "none")

    @property
    def masks(self):
        """NaN/Inf mask descriptions, or ``None``."""
        return self._d.get("masks")

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self._d["shape"])

    @property
    def hash(self):
        """Always ``None``: v3 keeps digests in frame footers, not descriptors."""
        return None

    @property
    def params(self):
        """Every key that is not a descriptor field (pipeline parameters, annotations)."""
        return {k: v for k, v in self._d.items() if k not in DESCRIPTOR_FIELDS}

    def to_dict(self):
        """The descriptor as the flat dict :func:`tgm.encode` accepts."""
        return {k: v for k, v in self._d.items() if k not in ("ndim", "masks")}

    def __eq__(self, other):
        if not isinstance(other, DataObjectDescriptor):
            return NotImplemented
        return self._d == other._d

    def __getstate__(self):
        return self._d

    def __setstate__(self, state):
        self._d = state

    def __repr__(self):
        return (
            f"DataObjectDescriptor(type={self.obj_type!r}, shape={self.shape}, "
            f"dtype={self.dtype!r}, encoding={self.encoding!r}, compression={self.compression!r})"
        )
