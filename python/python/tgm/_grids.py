"""Latitude/longitude coordinates of GRIB grids from an object's
``geography`` metadata (the keys ``convert-grib`` copies; ``spec/convert.md``,
"GRIB write-back"), as cfgrib shows them:

* ``regular_ll``: the core's dataset view (``tgm::view``, through
  ``_native.view_grid``), as ``tgm refs`` gives them;
* ``regular_gg``: 1-D ``latitude`` and ``longitude`` dimension coordinates
  of a field of shape ``(Nj, Ni)``;
* ``reduced_gg``: one ``values`` dimension with ``latitude(values)`` and
  ``longitude(values)`` coordinates, row by row as ecCodes iterates.

Gaussian latitudes are the roots of the Legendre polynomial of degree
``2N``, found as ecCodes finds them (Newton iterations from the zeros of
the Bessel function J0, to 1e-14), so that they are equal to the
``distinctLatitudes`` cfgrib reads from ecCodes. Any other grid, or
geography keys that do not describe the object's shape, gives no
coordinates.
"""

import math

import numpy as np

from . import _native

#: The first zeros of the Bessel function J0: the first guesses of the
#: Legendre roots; later ones are spaced by pi.
_J0_ZEROS = (
    2.4048255577, 5.5200781103, 8.6537279129, 11.7915344391, 14.9309177086,
    18.0710639679, 21.2116366299, 24.3524715308, 27.4934791320, 30.6346064684,
    33.7758202136, 36.9170983537, 40.0584257646, 43.1997917132, 46.3411883717,
    49.4826098974, 52.6240518411, 55.7655107550, 58.9069839261, 62.0484691902,
    65.1899648002, 68.3314693299, 71.4729816036, 74.6145006437, 77.7560256304,
    80.8975558711, 84.0390907769, 87.1806298436, 90.3221726372, 93.4637187819,
    96.6052679510, 99.7468198587, 102.8883742542, 106.0299309165, 109.1714896498,
    112.3130502805, 115.4546126537, 118.5961766309, 121.7377420880, 124.8793089132,
    128.0208770059, 131.1624462752, 134.3040166383, 137.4455880203, 140.5871603528,
    143.7287335737, 146.8703076258, 150.0118824570, 153.1534580192, 156.2950342685,
)

#: Newton iterations allowed per root, and the step below which it stops.
_MAX_ITER = 10
_PRECISION = 1.0e-14

#: Largest Gaussian number computed (ecCodes' own tables end well below).
MAX_N = 8000


#: Latitudes computed, by Gaussian number (a few grids per process).
_LATITUDES: dict = {}
_LATITUDES_MAX = 8


def gaussian_latitudes(n):
    """The ``2n`` Gaussian latitudes of Gaussian number ``n``, north to
    south, in degrees; None when ``n`` is out of range or a root does not
    converge. Each root is refined on its own until its Newton step is
    below 1e-14, with the arithmetic in ecCodes' order."""
    if not isinstance(n, int) or not 0 < n <= MAX_N:
        return None
    if n not in _LATITUDES:
        if len(_LATITUDES) >= _LATITUDES_MAX:
            _LATITUDES.pop(next(iter(_LATITUDES)))
        _LATITUDES[n] = _compute(n)
    return _LATITUDES[n]


def _compute(n):
    """:func:`gaussian_latitudes` computed."""
    nlat = 2 * n
    guess = np.empty(n)
    k = min(n, len(_J0_ZEROS))
    guess[:k] = _J0_ZEROS[:k]
    for i in range(k, n):
        guess[i] = guess[i - 1] + math.pi
    conv_val = 1.0 - ((2.0 / math.pi) * (2.0 / math.pi)) * 0.25
    denom = math.sqrt(((nlat + 0.5) * (nlat + 0.5)) + conv_val)
    # libm's cos and asin, element by element: NumPy's vectorised ones can
    # differ from them in the last bit.
    root = np.array([math.cos(x / denom) for x in guess])
    active = np.ones(n, dtype=bool)
    for _ in range(_MAX_ITER + 2):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        r = root[idx]
        mem2 = np.ones_like(r)
        mem1 = r.copy()
        leg = mem1
        for i in range(nlat):
            leg = ((2.0 * (i + 1) - 1.0) * r * mem1 - i * mem2) / float(i + 1)
            mem2, mem1 = mem1, leg
        step = leg / ((float(nlat) * (mem2 - r * leg)) / (1.0 - (r * r)))
        root[idx] = r - step
        active[idx] = np.abs(step) >= _PRECISION
    if active.any():
        return None
    north = np.array([math.asin(r) * (180.0 / math.pi) for r in root])
    return np.concatenate([north, -north[::-1]])


def _numbers(geo, keys):
    vals = [geo.get(k) for k in keys]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return None
    return vals


def _gaussian_rows(geo, nj):
    """The ``nj`` latitudes of the rows of a (regular or reduced) Gaussian
    grid from its first row's latitude, in scanning order."""
    v = _numbers(geo, ("N", "latitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees"))
    if v is None or not isinstance(v[0], int):
        return None
    lats = gaussian_latitudes(v[0])
    if lats is None or not 0 < nj <= len(lats):
        return None
    first = int(np.argmin(np.abs(lats - v[1])))
    rows = lats[first : first + nj] if v[1] >= v[2] else lats[first::-1][:nj]
    if len(rows) != nj or abs(rows[-1] - v[2]) >= abs(lats[0] - lats[1]):
        return None
    return rows


def _regular_gg(geo, shape):
    v = _numbers(geo, ("Nj", "Ni", "longitudeOfFirstGridPointInDegrees", "longitudeOfLastGridPointInDegrees"))
    if v is None or tuple(shape) != (v[0], v[1]):
        return None
    rows = _gaussian_rows(geo, v[0])
    if rows is None:
        return None
    return {"latitude": rows, "longitude": np.linspace(v[2], v[3], v[1])}


def _reduced_gg(geo, shape):
    """Global reduced Gaussian grids only: ``pl`` holds the ``2N`` row
    lengths and the field every point."""
    pl = geo.get("pl")
    v = _numbers(geo, ("N", "longitudeOfFirstGridPointInDegrees"))
    if v is None or not isinstance(pl, list) or len(shape) != 1:
        return None
    if not all(isinstance(p, int) and p >= 0 for p in pl) or sum(pl) != shape[0] or len(pl) != 2 * v[0]:
        return None
    rows = _gaussian_rows(geo, len(pl))
    if rows is None or v[1] != 0:
        return None
    pl = np.asarray(pl, dtype=np.int64)
    lat = np.repeat(rows, pl)
    # Position of each point in its row.
    j = np.arange(shape[0]) - np.repeat(np.cumsum(pl) - pl, pl)
    lon = j * 360.0 / np.repeat(pl, pl).astype(np.float64)
    return {"latitude": lat, "longitude": lon}


#: CF attributes of the coordinates (the core's, cfgrib's).
GRID_ATTRS = {k: _native.view_coordinate(k)[0] for k in ("latitude", "longitude")}


class Grid:
    """The coordinates of one field's grid: ``dims`` of the field,
    ``coords`` as ``{name: (dims, values)}`` and ``attrs`` as ``{name:
    CF attributes}``."""

    def __init__(self, dims, coords, attrs=None):
        self.dims = dims
        self.coords = coords
        self.attrs = attrs or {k: GRID_ATTRS.get(k, {}) for k in coords}

    def conflicts(self, taken):
        """Whether ``taken`` (``{name: (dims, values)}``) holds one of these
        coordinates with other values."""
        for k, (d, v) in self.coords.items():
            if k in taken and (taken[k][0] != d or not np.array_equal(taken[k][1], v)):
                return True
        return False


def grid_of(geo, shape):
    """The :class:`Grid` of a field of ``shape`` with geography ``geo``,
    or None when the geography is absent, unknown or does not fit."""
    if not isinstance(geo, dict):
        return None
    kind = geo.get("gridType")
    if kind == "regular_ll":
        try:
            native = _native.view_grid(geo, [int(n) for n in shape])
        except (TypeError, ValueError, OverflowError):
            return None
        if native is None:
            return None
        dims, coords = native
        return Grid(tuple(dims), {k: ((k,), np.asarray(v)) for k, v, _ in coords},
                    {k: a for k, _, a in coords})
    if kind == "regular_gg" and len(shape) == 2:
        c = _regular_gg(geo, shape)
        if c is None:
            return None
        return Grid(("latitude", "longitude"), {k: ((k,), v) for k, v in c.items()})
    if kind == "reduced_gg":
        c = _reduced_gg(geo, shape)
        if c is None:
            return None
        return Grid(("values",), {k: (("values",), v) for k, v in c.items()})
    return None
