"""Between an object's metadata entry (``base[i]``, ``spec/format.md``
§7.1) and an earthkit-data field: a field built from the entry's ``mars``
map (earthkit's typed components, the flat request under ``labels.mars``,
every key of the entry through ``metadata()``), and the entry written for
a field."""

import re

import numpy as np

__all__ = ["base_entry_to_field", "extract_mars_keys", "field_to_base_entry", "has_mars_namespace"]

#: Keywords of a MARS request: these go to an entry's ``mars`` map, any
#: other key of a field's request to its ``_extra_`` map.
MARS_KEYWORDS = frozenset({
    "class", "stream", "expver", "type", "param", "date", "time", "step", "levtype",
    "levelist", "number", "domain", "grid", "area", "hdate", "origin", "method",
    "system", "fcmonth", "frequency", "direction", "anoffset",
})


def has_mars_namespace(entry):
    """Whether ``entry`` is a map with a non-empty ``mars`` map."""
    if not isinstance(entry, dict):
        return False
    mars = entry.get("mars")
    return isinstance(mars, dict) and len(mars) > 0


def extract_mars_keys(entry):
    """The flat request of ``entry``: its scalar and map keys but the
    library's ``_reserved_`` (§7.2), with the ``mars`` map's keys on top
    (they win over a sibling of the same name). Not a map: ``{}``."""
    if not isinstance(entry, dict):
        return {}
    request = {k: v for k, v in entry.items() if k not in ("_reserved_", "mars")}
    mars = entry.get("mars")
    if isinstance(mars, dict):
        request.update(mars)
    return request


def _builder_request(mars):
    """The request earthkit's MARS builders accept: ISO dates
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
    """A component earthkit builds from ``request``, or None where the
    request lacks what it needs (a field without a date has no time)."""
    try:
        return build(request)
    except Exception:
        return None


def base_entry_to_field(entry, values, shape=None):
    """An earthkit :class:`Field` of one object: ``values`` (its decoded
    array, shaped ``shape``), the typed components earthkit builds from
    its ``mars`` map, a geography from its ``geography`` map where tgm
    places the grid (:func:`tgm._grids.grid_of`), else the shape alone;
    ``labels.mars`` is :func:`extract_mars_keys` of the entry and
    ``metadata(key)`` answers from the entry (:class:`EntryKeys`)."""
    from earthkit.data.core.field import Field
    from earthkit.data.field.handler.data import ArrayDataFieldComponentHandler
    from earthkit.data.field.handler.labels import SimpleLabels
    from earthkit.data.field.mars.ensemble import MarsEnsembleBuilder
    from earthkit.data.field.mars.parameter import MarsParameterBuilder
    from earthkit.data.field.mars.time import MarsTimeBuilder
    from earthkit.data.field.mars.vertical import MarsVerticalBuilder

    values = np.asarray(values)
    if shape is not None and tuple(values.shape) != tuple(shape):
        values = values.reshape(shape)
    entry = entry if isinstance(entry, dict) else {}
    request = _builder_request(entry.get("mars") or {})
    parts = dict(
        data=ArrayDataFieldComponentHandler(values),
        parameter=_component(MarsParameterBuilder.build, request),
        time=_component(MarsTimeBuilder.build, request),
        vertical=_component(MarsVerticalBuilder.build, request),
        ensemble=_component(MarsEnsembleBuilder.build, request),
        geography=_geography(entry.get("geography"), values.shape),
        labels=SimpleLabels({"mars": extract_mars_keys(entry)}),
    )
    field = Field(**{k: v for k, v in parts.items() if v is not None})
    field._set_private_data("tgm", EntryKeys(entry))
    return field


class EntryKeys:
    """``field.metadata(key)`` of a field built from an object's entry:
    the key in the entry's ``mars`` map, else its ``grib`` map, else its
    ``geography`` map, else a scalar beside them. ``entry`` is the object's
    entry without ``_reserved_``, as the encoder writes it back."""

    def __init__(self, entry):
        self.entry = {k: v for k, v in entry.items() if k != "_reserved_"}
        maps = [entry.get(s) for s in ("mars", "grib", "geography")]
        self._maps = [m for m in maps if isinstance(m, dict)]
        self._maps.append({k: v for k, v in entry.items() if not isinstance(v, (dict, list))})

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


def _field_request(field):
    """The flat request of ``field``: its ``labels.mars``, else the MARS
    keywords earthkit answers under ``metadata.<key>`` (GRIB fields); {}
    for an object that answers neither."""
    try:
        labels = field.get("labels.mars", None)
    except (AttributeError, TypeError, KeyError, ValueError):
        labels = None
    if isinstance(labels, dict) and labels:
        return dict(labels)
    request = {}
    for key in sorted(MARS_KEYWORDS):
        try:
            value = field.get(f"metadata.{key}", None)
        except (AttributeError, TypeError, KeyError, ValueError):
            continue
        if value is not None:
            request[key] = value
    return request


def field_to_base_entry(field):
    """The entry (``base[i]``) written for ``field``: a field built from a
    tgm object gets that object's entry back; any other field its request,
    the MARS keywords (:data:`MARS_KEYWORDS`) in ``mars`` and the other
    keys in ``_extra_`` (empty maps left out)."""
    get_private = getattr(field, "_get_private_data", None)
    keys = get_private("tgm") if callable(get_private) else None
    if isinstance(keys, EntryKeys):
        return dict(keys.entry)
    request = _field_request(field)
    entry = {}
    mars = {k: v for k, v in request.items() if k in MARS_KEYWORDS}
    extra = {k: v for k, v in request.items() if k not in MARS_KEYWORDS}
    if mars:
        entry["mars"] = mars
    if extra:
        entry["_extra_"] = extra
    return entry
