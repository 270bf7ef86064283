"""Grid coordinates of a field from its ``geography`` metadata, as the
core's dataset view gives them (``tgm::view``, through
``_native.view_grid``; ``spec/kerchunk.md`` §2) for one field (earthkit's
MARS view); a dataset's fields share their grids through
``_native.ViewGrids``, as in ``tgm refs``: ``latitude``/``longitude`` dimension coordinates of
``regular_ll`` and ``regular_gg`` fields, a ``values`` dimension with
``latitude(values)``/``longitude(values)`` for global ``reduced_gg`` and
``reduced_rotated_gg`` fields, ``y`` and ``x`` dimensions with 2-D
``latitude(y, x)``/``longitude(y, x)`` for ``rotated_ll`` and ``rotated_gg``
fields (each rotated point unrotated as ecCodes unrotates them), the
``values`` dimension alone for other 1-D fields with a geography. Gaussian latitudes are ecCodes' ``distinctLatitudes`` (what
cfgrib shows) to the bit.
"""

import numpy as np

from . import _native
from ._errors import InvalidArgumentError


def gaussian_latitudes(n):
    """The ``2n`` Gaussian latitudes of Gaussian number ``n`` (degrees,
    north to south, as ecCodes computes them), or None when the core
    computes none for ``n``."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return None
    try:
        return _native.gaussian_latitudes(n)
    except OverflowError:
        return None


class Grid:
    """The coordinates of one field's grid: ``dims`` of the field,
    ``coords`` as ``{name: (dims, values)}`` and ``attrs`` as ``{name:
    CF attributes}``."""

    def __init__(self, dims, coords, attrs):
        self.dims = dims
        self.coords = coords
        self.attrs = attrs


def grid_of(geo, shape):
    """The :class:`Grid` of a field of ``shape`` with geography ``geo``,
    or None when the core gives it no grid dimensions."""
    if not isinstance(geo, dict):
        return None
    try:
        native = _native.view_grid(geo, [int(n) for n in shape])
    except (TypeError, ValueError, OverflowError, InvalidArgumentError):
        # A geography no metadata could hold (a user's own dict).
        return None
    if native is None:
        return None
    dims, coords = native
    return Grid(tuple(dims), {k: (tuple(d), v) for k, d, v, _ in coords}, {k: a for k, _, _, a in coords})
