"""earthkit-data plugins (earthkit-data 1.x), registered through entry points
in the tgm wheel:

* the source ``ekd.from_source("tgm", x)`` where ``x`` is a path, a URL
  (``http(s)://``, ``s3://``, ``gs://``, ``az://``, read by tgm's own remote
  reader), bytes-like content or a binary stream;
* the encoder ``to_target("file", "out.tgm", encoder="tgm")``;
* a reader that lets ``ekd.from_source("file", "x.tgm")`` recognise
  Tensogram files by their magic (installed into earthkit-data's reader
  table by ``tgm_earthkit.pth`` when earthkit-data is imported).

earthkit-data is imported by this module, which ``import tgm`` never
imports: earthkit-data loads it through the entry points.

Archives written by :func:`tgm.convert_grib` (every object carrying its
``grib`` section) are handed to earthkit-data as the GRIB that
:func:`tgm.to_grib` rebuilds, so every field is earthkit's own GRIB field:
``metadata()``, ``sel()``, ``order_by()``, ``to_numpy()`` and
``to_xarray()`` are earthkit's view of the source GRIB. Other archives with
per-object MARS keys become fields built from those keys (and the
``geography`` section's grid where tgm knows it); archives without MARS
keys are Datasets of tgm's xarray backend.
"""

import io
import os
import re

import numpy as np

from earthkit.data.data.grib import GribData
from earthkit.data.data.source import DefaultSourceData
from earthkit.data.encoders import EncodedData, Encoder
from earthkit.data.readers import Reader, memory_reader
from earthkit.data.sources import Source

TGM_MAGIC = b"TENSOGRM"

__all__ = ["TGM_MAGIC", "TgmData", "TgmEncodedData", "TgmEncoder", "TgmReader", "TgmSource"]


def _matches(magic, deeper_check=False):
    if not magic or len(magic) < len(TGM_MAGIC):
        return False
    if deeper_check:
        return TGM_MAGIC in bytes(magic)
    return bytes(magic[: len(TGM_MAGIC)]) == TGM_MAGIC


def _read_messages(src):
    """Every message of ``src`` (path, URL, bytes-like or binary stream) as
    ``bytes``; a ValueError when there is none."""
    messages = _all_messages(src)
    if not messages:
        raise ValueError("no Tensogram message found in the input of the tgm source")
    return messages


def _all_messages(src):
    import tgm

    if isinstance(src, (bytes, bytearray, memoryview)):
        buf = bytes(src)
        return [buf[o : o + n] for o, n in tgm.scan(buf)]
    if hasattr(src, "read"):
        seekable = getattr(src, "seekable", None)
        if not (callable(seekable) and seekable()):
            src = io.BytesIO(src.read())
        f = tgm.TensogramFile.open(src)
    else:
        if not isinstance(src, str):
            src = os.fspath(src)
        f = tgm.TensogramFile.open(src)
    with f:
        return [bytes(f.read_message(i)) for i in range(len(f))]


def _bases(messages):
    import tgm

    out = []
    for m in messages:
        meta = tgm.decode_metadata(m)
        out.extend(b if isinstance(b, dict) else {} for b in (meta.base or []))
    return out


def _has_mars(base):
    mars = base.get("mars")
    return isinstance(mars, dict) and bool(mars)


def _grib_bytes(messages, bases):
    """The GRIB :func:`tgm.to_grib` rebuilds, or None when the archive was
    not written by :func:`tgm.convert_grib`."""
    import tgm

    if not bases or not all(isinstance(b.get("grib"), dict) and _has_mars(b) for b in bases):
        return None
    try:
        return tgm.to_grib(messages)
    except Exception:  # no ecCodes in this wheel, or not convert_grib's layout
        return None


def _mars_fields(messages):
    """Fields built from the per-object MARS keys (objects without them,
    such as coordinates, are skipped)."""
    import tgm

    fields = []
    for m in messages:
        meta, objects = tgm.decode(m)
        base = list(meta.base or [])
        for i, (_desc, arr) in enumerate(objects):
            b = base[i] if i < len(base) and isinstance(base[i], dict) else {}
            if not _has_mars(b):
                continue
            fields.append(_mars_field(b, np.asarray(arr)))
    return fields


def _normalised(mars):
    """The MARS request earthkit's builders take: ISO dates
    (``"2025-01-01"``) as ``20250101``, times (``"0000"``, ``"12:00"``) as
    numbers."""
    request = dict(mars)
    date = request.get("date")
    if isinstance(date, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        request["date"] = int(date.replace("-", ""))
    time = request.get("time")
    if isinstance(time, str) and re.fullmatch(r"\d{1,2}:?\d{2}", time):
        request["time"] = int(time.replace(":", ""))
    return request


def _component(build, request):
    try:
        return build(request)
    except Exception:
        return None


def _mars_field(base, values):
    from earthkit.data.core.field import Field
    from earthkit.data.field.handler.data import ArrayDataFieldComponentHandler
    from earthkit.data.field.handler.labels import SimpleLabels
    from earthkit.data.field.mars.ensemble import MarsEnsembleBuilder
    from earthkit.data.field.mars.parameter import MarsParameterBuilder
    from earthkit.data.field.mars.time import MarsTimeBuilder
    from earthkit.data.field.mars.vertical import MarsVerticalBuilder

    request = _normalised(base["mars"])
    kwargs = dict(
        data=ArrayDataFieldComponentHandler(values),
        parameter=_component(MarsParameterBuilder.build, request),
        time=_component(MarsTimeBuilder.build, request),
        vertical=_component(MarsVerticalBuilder.build, request),
        ensemble=_component(MarsEnsembleBuilder.build, request),
        geography=_geography(base.get("geography"), values.shape),
        labels=SimpleLabels({"mars": dict(base["mars"])}),
    )
    field = Field(**{k: v for k, v in kwargs.items() if v is not None})
    field._set_private_data("tgm", _Keys(base))
    return field


class _Keys:
    """``field.metadata(key)`` of a field built from MARS keys: the key in
    the object's ``mars`` section, else its ``grib`` section, else its
    ``geography`` section, else a scalar beside them."""

    def __init__(self, base):
        self.base = {k: v for k, v in base.items() if k != "_reserved_"}
        self._maps = [base.get(s) for s in ("mars", "grib", "geography")]
        self._maps = [m for m in self._maps if isinstance(m, dict)]
        self._maps.append({k: v for k, v in base.items() if not isinstance(v, (dict, list))})

    def metadata(self, key, default=None, astype=None, raise_on_missing=False):
        for m in self._maps:
            if key in m:
                v = m[key]
                if astype is not None and v is not None:
                    try:
                        v = astype(v)
                    except (TypeError, ValueError):
                        pass
                return v
        if raise_on_missing:
            raise KeyError(f"Key {key} not found in field")
        return default

    def get(self, key, default=None):
        return self.metadata(key, default=default)


def _geography(geo, shape):
    from earthkit.data.field.handler.geography import GeographyFieldComponentHandler

    from tgm._grids import grid_of

    grid = grid_of(geo, shape)
    if grid is None:
        return _shape_only(shape)
    coords = {k: np.asarray(v[1]) for k, v in grid.coords.items()}
    lat, lon = coords.get("latitude"), coords.get("longitude")
    if lat is None or lon is None:
        return _shape_only(shape)
    if tuple(grid.dims) == ("latitude", "longitude"):
        lon, lat = np.meshgrid(lon, lat)
    try:
        return GeographyFieldComponentHandler.from_any({"latitudes": lat, "longitudes": lon})
    except Exception:
        return _shape_only(shape)


def _shape_only(shape):
    """A geography without coordinates, so that ``field.shape`` and
    ``to_numpy()`` keep the object's shape."""
    from earthkit.data.field.component.geography import EmptyGeography
    from earthkit.data.field.handler.geography import GeographyFieldComponentHandler

    try:
        return GeographyFieldComponentHandler.from_any(EmptyGeography(shape=tuple(shape)))
    except Exception:
        return None


class TgmGribData(GribData):
    """earthkit's GRIB data object over a GRIB fieldlist in memory."""

    def to_fieldlist(self):
        # the reader is the fieldlist (GribData's default would copy its
        # fields into arrays, losing their GRIB handles)
        return self._reader


def _grib_data(source, grib):
    """earthkit's GRIB fieldlist of ``grib`` in memory, whose data object is
    earthkit's GRIB data object (as ``from_source("file", grib)`` gives)."""
    reader = memory_reader(source, grib)
    reader.to_data_object = lambda: TgmGribData(reader)
    return reader


class _Content:
    """The decoded side of a tgm source or reader: a FieldList for MARS
    content, a Dataset of tgm's xarray backend otherwise."""

    def __init__(self, messages):
        self._messages = messages
        self._bases = _bases(messages)
        self.is_mars = any(_has_mars(b) for b in self._bases)
        self.grib = _grib_bytes(messages, self._bases)
        self._fieldlist = None

    def to_fieldlist(self, **_kwargs):
        if not self.is_mars:
            raise NotImplementedError(
                "this tgm archive carries no MARS keys: use to_xarray() for its Dataset"
            )
        if self._fieldlist is None:
            from earthkit.data import from_source
            from earthkit.data.indexing.simple import SimpleFieldList

            if self.grib is not None:
                self._fieldlist = from_source("memory", self.grib).to_fieldlist()
            else:
                self._fieldlist = SimpleFieldList(_mars_fields(self._messages))
        return self._fieldlist

    def to_xarray(self, **kwargs):
        """earthkit's Dataset of the GRIB for convert_grib archives, else
        tgm's xarray backend's (every object, as the reference's plugin)."""
        if self.grib is not None:
            return self.to_fieldlist().to_xarray(**kwargs)
        import xarray as xr

        return xr.open_dataset(io.BytesIO(b"".join(self._messages)), engine="tgm", **kwargs)

    def to_numpy(self, **kwargs):
        """The fields' values for MARS content; the only object's values, or
        the Dataset's variables stacked, otherwise."""
        if self.is_mars:
            return self.to_fieldlist().to_numpy(**kwargs)
        ds = self.to_xarray()
        if len(ds.data_vars) == 1:
            return next(iter(ds.data_vars.values())).values
        return ds.to_array().values


class TgmSource(Source):
    """``ekd.from_source("tgm", path_or_url_or_bytes_or_stream)``.

    ``storage_options`` is accepted for the reference's sake (tgm's
    remote reader takes its settings from the environment)."""

    def __init__(self, source, *, storage_options=None, **kwargs):
        super().__init__(**kwargs)
        self._input = source
        self.storage_options = storage_options
        self._content = None

    def _loaded(self):
        if self._content is None:
            self._content = _Content(_read_messages(self._input))
        return self._content

    def to_xarray(self, **kwargs):
        return self._loaded().to_xarray(**kwargs)

    def to_numpy(self, **kwargs):
        return self._loaded().to_numpy(**kwargs)

    def to_fieldlist(self, **kwargs):
        return self._loaded().to_fieldlist(**kwargs)

    def _default_encoder(self):
        return "tgm"

    def to_data_object(self):
        return _data_object(self, self._loaded())

    def close(self):
        """Nothing to release: content is read when first asked for and
        not kept open."""

    def __repr__(self):
        return f"TgmSource({self._input!r})" if isinstance(self._input, str) else "TgmSource(...)"


def _data_object(owner, content):
    """earthkit's GRIB data object over the GRIB :func:`tgm.to_grib` rebuilds
    (archives of :func:`tgm.convert_grib`), else a Data object exposing
    to_fieldlist (MARS content only), to_xarray and to_numpy."""
    if content.grib is not None:
        return _grib_data(owner, content.grib).to_data_object()

    return TgmData(owner, content)


class TgmData(DefaultSourceData):
    """The data object of a tgm archive not written by convert_grib:
    ``to_fieldlist()`` (MARS content; a NotImplementedError naming MARS
    otherwise), ``to_xarray()`` and ``to_numpy()``; ``sel()``, ``len()``
    and iteration are its FieldList's, and ``storage_options`` the
    source's."""

    _TYPE_NAME = "Tensogram"

    def __init__(self, owner, content):
        super().__init__(owner)
        self._content = content
        self._types = [self._XARRAY, self._NUMPY]
        if content.is_mars:
            self._types.insert(1, self._FIELDLIST)

    def to_fieldlist(self, *args, **kwargs):
        return self._content.to_fieldlist()

    def to_xarray(self, *args, **kwargs):
        return self._content.to_xarray(**kwargs)

    def to_numpy(self, *args, **kwargs):
        return self._content.to_numpy(**kwargs)

    @property
    def storage_options(self):
        return getattr(self._source, "storage_options", None)

    def sel(self, *args, **kwargs):
        return self.to_fieldlist().sel(*args, **kwargs)

    def close(self):
        """The source's :meth:`TgmSource.close` (nothing is kept open)."""
        self._source.close()

    def __len__(self):
        return len(self.to_fieldlist())

    def __iter__(self):
        return iter(self.to_fieldlist())


# ---------------------------------------------------------------------------
# the encoder


class TgmEncodedData(EncodedData):
    """Tensogram messages produced by :class:`TgmEncoder`: ``messages`` (a
    list of encoded messages, or one bytes-like payload) and the
    ``metadata`` that ``get()`` answers from, as the reference's."""

    def __init__(self, messages, metadata=None):
        if isinstance(messages, (bytes, bytearray, memoryview)):
            messages = [messages]
        self.messages = [bytes(m) for m in messages]
        self._metadata = dict(metadata or {})

    def to_bytes(self):
        return b"".join(self.messages)

    def to_file(self, f):
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as g:
                g.write(self.to_bytes())
            return
        f.write(self.to_bytes())

    def get(self, key=None, default=None):
        """The metadata (a copy) without ``key``, else its value of ``key``;
        ``get("messages")`` is the list of messages."""
        if key is None:
            return dict(self._metadata)
        if key == "messages":
            return self.messages
        return self._metadata.get(key, default)


class TgmEncoder(Encoder):
    """``to_target(..., encoder="tgm")``: GRIB-backed fields are written
    through :func:`tgm.convert_grib` (one message per field, float64
    values, every GRIB key kept by ``to_grib``), so a GRIB round trip
    keeps values, MARS keys and grid; an xarray Dataset through
    :func:`tgm.to_tgm`. Keyword arguments of :func:`tgm.convert_grib`
    (``encoding``, ``compression``, ...) given to the encoder or to
    ``to_target`` are passed on."""

    _CONVERT_KEYS = ("encoding", "bits", "filter", "compression", "compression_level",
                     "hash", "preserve_all_keys")

    def __init__(self, template=None, metadata=None, **kwargs):
        self._convert = {k: kwargs.pop(k) for k in list(kwargs) if k in self._CONVERT_KEYS}
        super().__init__(template=template, metadata=metadata, **kwargs)

    def _options(self, kwargs):
        opts = dict(self._convert)
        opts.update({k: kwargs[k] for k in self._CONVERT_KEYS if k in kwargs})
        return opts

    def encode(self, data=None, values=None, check_nans=False, metadata=None, template=None,
               missing_value=9999, target=None, **kwargs):
        if data is None:
            raise ValueError("the tgm encoder requires a data object (a FieldList, a Field or a Dataset)")
        if values is not None or template is not None or metadata:
            raise ValueError("the tgm encoder takes no values, template or metadata")
        import xarray as xr

        opts = self._options(kwargs)
        if isinstance(data, (xr.Dataset, xr.DataArray)):
            return self._encode_xarray(data, target=target, **opts)
        if hasattr(data, "to_fieldlist") and not hasattr(data, "sel"):
            content = getattr(data, "_content", None) or getattr(data, "_reader", None)
            if isinstance(content, _Content) and not content.is_mars:
                return TgmEncodedData(content._messages)
            data = data.to_fieldlist()
        if hasattr(data, "sel") or hasattr(data, "_get_grib_context"):
            return self._encode_fields(data, **opts)
        if hasattr(data, "to_xarray"):
            return self._encode_xarray(data.to_xarray(), target=target, **opts)
        raise ValueError(f"the tgm encoder cannot encode {type(data).__name__}")

    def _grib(self, fields):
        from earthkit.data.encoders.grib import GribEncoder

        enc = GribEncoder()
        parts = []
        for f in fields:
            r = enc.encode(f)
            for e in r if hasattr(r, "__next__") else [r]:
                parts.append(e.to_bytes())
        return b"".join(parts)

    def _encode_fields(self, fields, **opts):
        """One message per field: fields read from a tgm archive without
        GRIB headers as their object was (MARS keys, geography, values);
        GRIB-backed fields through :func:`tgm.convert_grib`."""
        import tgm

        from earthkit.data.core.field import Field

        fields = [fields] if isinstance(fields, Field) else list(fields)
        if not fields:
            raise ValueError("the tgm encoder was given no fields")
        opts.setdefault("grouping", "one_to_one")
        messages = []
        for f in fields:
            keys = f._get_private_data("tgm") if hasattr(f, "_get_private_data") else None
            if isinstance(keys, _Keys):
                values = np.ascontiguousarray(f.to_numpy())
                desc = {"type": "ntensor", "shape": list(values.shape), "dtype": values.dtype.name}
                if opts.get("compression", "none") != "none":
                    desc["compression"] = opts["compression"]
                messages.append(tgm.encode({"base": [keys.base]}, [(desc, values)]))
            else:
                messages.extend(tgm.convert_grib_buffer(self._grib([f]), **opts))
        return TgmEncodedData(messages)

    def _encode(self, data, *, target=None, **kwargs):
        return self.encode(data, target=target, **kwargs)

    def _encode_field(self, field, *, target=None, **kwargs):
        return self._encode_fields([field], **self._options(kwargs))

    def _encode_fieldlist(self, fieldlist, *, target=None, **kwargs):
        return self._encode_fields(fieldlist, **self._options(kwargs))

    def _encode_xarray(self, data, *, target=None, **kwargs):
        import tempfile

        import tgm

        fd, tmp = tempfile.mkstemp(suffix=".tgm")
        os.close(fd)
        try:
            tgm.to_tgm(data, tmp, force=True)
            return TgmEncodedData(_read_messages(tmp))
        finally:
            os.unlink(tmp)

    def _encode_featurelist(self, featurelist, *, target=None, **kwargs):
        raise NotImplementedError("the tgm encoder writes fields and Datasets, not features")

    def _encode_path(self, path_info, *, target=None, **kwargs):
        return None



# ---------------------------------------------------------------------------
# from_source("file", "x.tgm")


class TgmReader(Reader):
    """earthkit-data's reader of a local tgm file (``from_source("file",
    ...)``)."""

    _format = "tgm"
    _binary = True
    _appendable = True

    def __init__(self, source, path, content):
        super().__init__(source, path)
        self._content = content

    def to_xarray(self, **kwargs):
        return self._content.to_xarray(**kwargs)

    def to_numpy(self, **kwargs):
        return self._content.to_numpy(**kwargs)

    def to_fieldlist(self, **kwargs):
        return self._content.to_fieldlist(**kwargs)

    def to_data_object(self):
        return _data_object(self, self._content)

    def _encode_default(self, encoder, **kwargs):
        return encoder.encode(self, **kwargs)

    def mutate_source(self):
        # in memory (from_source("memory", ...)) the reader stands for the
        # source, as earthkit's GRIB reader in memory does
        return self if self.path is None else None



def _reader(source, path, *, magic=None, deeper_check=False, **_kwargs):
    if not _matches(magic, deeper_check) or not isinstance(path, str) or not os.path.isfile(path):
        return None
    content = _Content(_read_messages(path))
    if content.grib is not None:
        return _grib_data(source, content.grib)
    return TgmReader(source, path, content)


def _memory_reader(source, buf, *, magic=None, deeper_check=False, **_kwargs):
    if not _matches(magic, deeper_check):
        return None
    content = _Content(_read_messages(buf))
    if content.grib is not None:
        return _grib_data(source, content.grib)
    return TgmReader(source, None, content)


def _install():
    """The ``.tgm`` suffix chooses the tgm encoder
    (``to_target("file", "x.tgm")``), and tgm's reader is in earthkit-data's
    reader table even where ``tgm_earthkit.pth`` did not run."""
    try:
        import _tgm_earthkit_hook
        import earthkit.data.readers

        _tgm_earthkit_hook.install_file_reader(earthkit.data.readers)
    except Exception:
        pass
    _register_suffix()


def _register_suffix():
    """``to_target("file", "x.tgm")`` chooses the tgm encoder."""
    try:
        import earthkit.data.encoders as encoders

        encoders._SUFFIXES.setdefault((".tgm",), "tgm")
    except Exception:  # earthkit-data's private table moved
        pass


_install()
