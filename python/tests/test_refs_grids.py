"""`tgm refs` read by stock xarray through zarr and fsspec, and
`xr.open_dataset(path, engine="tgm")`, give one dataset on regular_ll,
regular_gg, reduced_gg, rotated_ll, rotated_gg, reduced_rotated_gg,
polar_stereographic, lambert, lambert_azimuthal_equal_area, mercator and space_view fields: the same variables,
dimensions and
coordinates (names, dimensions, dtypes, values and attributes), both from
the core's dataset view (spec/kerchunk.md §2). The archives are made by
`tgm import --meta geography.…` (scripts/plot-example.sh does the same).

Needs the tgm binary (TGM_BIN, as .ci/python.sh sets, or target/*/tgm:
test_validate.cli),
zarr and fsspec; skips with the reason otherwise.
"""

import json
import subprocess

import numpy as np
import pytest

import tgm
from tgm._grids import gaussian_latitudes
from test_validate import cli

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr", reason="zarr is not installed (pip install 'zarr>=3')")
pytest.importorskip("fsspec", reason="fsspec is not installed (pip install fsspec)")

N2 = gaussian_latitudes(2)

#: Geography keys of each grid (as convert-grib copies them) and the
#: shape of its fields.
GRIDS = {
    "regular_ll": ((3, 4), {
        "gridType": "regular_ll", "Ni": 4, "Nj": 3,
        "latitudeOfFirstGridPointInDegrees": 60, "latitudeOfLastGridPointInDegrees": -60,
        "longitudeOfFirstGridPointInDegrees": 0, "longitudeOfLastGridPointInDegrees": 270,
    }),
    # Rows alternating direction across the meridian (cfgrib's
    # alternate-scanning.grib in small): latitude(y, x), longitude(y, x).
    "regular_ll_alternate_rows": ((3, 4), {
        "gridType": "regular_ll", "Ni": 4, "Nj": 3, "alternativeRowScanning": 1,
        "latitudeOfFirstGridPointInDegrees": 60, "latitudeOfLastGridPointInDegrees": -60,
        "longitudeOfFirstGridPointInDegrees": 350, "longitudeOfLastGridPointInDegrees": 20,
    }),
    "regular_gg": ((4, 8), {
        "gridType": "regular_gg", "N": 2, "Ni": 8, "Nj": 4,
        "latitudeOfFirstGridPointInDegrees": 59.444408, "latitudeOfLastGridPointInDegrees": -59.444408,
        "longitudeOfFirstGridPointInDegrees": 0, "longitudeOfLastGridPointInDegrees": 315,
    }),
    "reduced_gg": ((12,), {
        "gridType": "reduced_gg", "N": 2, "pl": [2, 4, 4, 2],
        "latitudeOfFirstGridPointInDegrees": 59.444408, "latitudeOfLastGridPointInDegrees": -59.444408,
        "longitudeOfFirstGridPointInDegrees": 0,
    }),
    "rotated_ll": ((3, 4), {
        "gridType": "rotated_ll", "Ni": 4, "Nj": 3,
        "latitudeOfFirstGridPointInDegrees": 10, "latitudeOfLastGridPointInDegrees": -10,
        "longitudeOfFirstGridPointInDegrees": 0, "longitudeOfLastGridPointInDegrees": 30,
        "jDirectionIncrementInDegrees": 10, "iScansNegatively": 0, "jScansPositively": 0,
        "latitudeOfSouthernPoleInDegrees": -30, "longitudeOfSouthernPoleInDegrees": 0,
        "angleOfRotationInDegrees": 0,
    }),
    "rotated_gg": ((4, 8), {
        "gridType": "rotated_gg", "N": 2, "Ni": 8, "Nj": 4,
        "latitudeOfFirstGridPointInDegrees": 59.444408, "latitudeOfLastGridPointInDegrees": -59.444408,
        "longitudeOfFirstGridPointInDegrees": 0, "longitudeOfLastGridPointInDegrees": 315,
        "latitudeOfSouthernPoleInDegrees": -30, "longitudeOfSouthernPoleInDegrees": 0,
    }),
    "reduced_rotated_gg": ((12,), {
        "gridType": "reduced_rotated_gg", "N": 2, "pl": [2, 4, 4, 2],
        "latitudeOfFirstGridPointInDegrees": 59.444408, "latitudeOfLastGridPointInDegrees": -59.444408,
        "longitudeOfFirstGridPointInDegrees": 0,
        "latitudeOfSouthernPoleInDegrees": -30, "longitudeOfSouthernPoleInDegrees": 0,
    }),
    "polar_stereographic": ((3, 4), {
        "gridType": "polar_stereographic", "Ni": 4, "Nj": 3, "radius": 6371229, "earthIsOblate": 0,
        "latitudeOfFirstGridPointInDegrees": 55, "longitudeOfFirstGridPointInDegrees": 350,
        "orientationOfTheGridInDegrees": 10, "LaDInDegrees": 60, "DxInMetres": 50000, "DyInMetres": 50000,
        "iScansNegatively": 0, "jScansPositively": 1, "jPointsAreConsecutive": 0, "alternativeRowScanning": 0,
    }),
    "lambert": ((3, 4), {
        "gridType": "lambert", "Ni": 4, "Nj": 3, "radius": 6371229, "earthIsOblate": 0,
        "latitudeOfFirstGridPointInDegrees": 25, "longitudeOfFirstGridPointInDegrees": 250,
        "LoVInDegrees": 262, "LaDInDegrees": 40, "Latin1InDegrees": 33, "Latin2InDegrees": 45,
        "DxInMetres": 30000, "DyInMetres": 30000,
        "iScansNegatively": 0, "jScansPositively": 1, "jPointsAreConsecutive": 0, "alternativeRowScanning": 0,
    }),
    "lambert_azimuthal_equal_area": ((3, 4), {
        "gridType": "lambert_azimuthal_equal_area", "Ni": 4, "Nj": 3, "radius": 6371229, "earthIsOblate": 0,
        "latitudeOfFirstGridPointInDegrees": 40, "longitudeOfFirstGridPointInDegrees": 350,
        "standardParallelInDegrees": 52, "centralLongitudeInDegrees": 10,
        "xDirectionGridLengthInMillimetres": 50000000, "yDirectionGridLengthInMillimetres": 50000000,
        "iScansNegatively": 0, "jScansPositively": 0, "jPointsAreConsecutive": 0, "alternativeRowScanning": 0,
    }),
    "mercator": ((3, 4), {
        "gridType": "mercator", "Ni": 4, "Nj": 3, "radius": 6371229, "earthIsOblate": 0,
        "latitudeOfFirstGridPointInDegrees": 10, "longitudeOfFirstGridPointInDegrees": 100,
        "LaDInDegrees": 20, "orientationOfTheGridInDegrees": 0, "DiInMetres": 100000, "DjInMetres": 100000,
        "iScansNegatively": 0, "jScansPositively": 1, "jPointsAreConsecutive": 0, "alternativeRowScanning": 0,
    }),
    "space_view": ((3, 4), {
        "gridType": "space_view", "Ni": 4, "Nj": 3, "radius": 6371229, "earthIsOblate": 0,
        "latitudeOfSubSatellitePointInDegrees": 0, "longitudeOfSubSatellitePointInDegrees": 10,
        "dx": 4, "dy": 4, "XpInGridLengths": 1, "YpInGridLengths": 1, "NrInRadiusOfEarth": 6.6107, "Xo": 0, "Yo": 0,
        "iScansNegatively": 0, "jScansPositively": 0, "jPointsAreConsecutive": 0, "alternativeRowScanning": 0,
    }),
}

#: What the view gives each grid: the fields' grid dimensions and the
#: latitudes.
EXPECTED = {
    "regular_ll": (("latitude", "longitude"), ("latitude",), [60.0, 0.0, -60.0]),
    "regular_gg": (("latitude", "longitude"), ("latitude",), list(N2)),
    # The second row's first value lies at its last column, 20°E.
    "regular_ll_alternate_rows": (("y", "x"), ("y", "x"), ((1, 0), 0.0, 20.0)),
    "reduced_gg": (("values",), ("values",), list(np.repeat(N2, [2, 4, 4, 2]))),
    # The pole 30°S, 0°E turns the rotated equator's first point (0°, 0°)
    # to 60°N, 0°E; the other points are compared with cfgrib's in
    # test_xarray_grids.py.
    "rotated_ll": (("y", "x"), ("y", "x"), ((1, 0), 60.0, 0.0)),
    # Its first row, 59.444408° rotated at 0° rotated, passes over the pole:
    # 120° − 59.444408° at 180°.
    "rotated_gg": (("y", "x"), ("y", "x"), ((0, 0), 60.555592, 180.0)),
    "reduced_rotated_gg": (("values",), ("values",), ((0,), 60.555592, 180.0)),
    # A projected grid's first point is its first grid point; the others
    # are compared with cfgrib's in test_xarray_grids.py.
    "polar_stereographic": (("y", "x"), ("y", "x"), ((0, 0), 55.0, 350.0)),
    "lambert": (("y", "x"), ("y", "x"), ((0, 0), 25.0, 250.0)),
    "lambert_azimuthal_equal_area": (("y", "x"), ("y", "x"), ((0, 0), 40.0, 350.0)),
    "mercator": (("y", "x"), ("y", "x"), ((0, 0), 10.0, 100.0)),
    # The sub-satellite point is the second point of the second row.
    "space_view": (("y", "x"), ("y", "x"), ((1, 1), 0.0, 10.0)),
}


def run(*args):
    r = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"tgm {' '.join(map(str, args))}: {r.stderr}"


def meta_args(prefix, value):
    """``--meta`` assignments of ``value`` under the dotted key ``prefix``."""
    if isinstance(value, dict):
        return [a for k, v in value.items() for a in meta_args(f"{prefix}.{k}", v)]
    return ["--meta", f"{prefix}={json.dumps(value)}"]


#: The parameters of the fields on the first grid of an archive, and on
#: the second.
PARAMS = [("t", "z"), ("msl", "sp")]


def archive(tmp_path, grids):
    """Two parameters at steps 0 and 6 on each of ``grids``, appended one
    field per message by `tgm import`."""
    path = tmp_path / "fields.tgm"
    for i, grid in enumerate(grids):
        shape, geo = GRIDS[grid]
        for param, step in [(p, s) for p in PARAMS[i] for s in (0, 6)]:
            values = 250.0 + np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + step + i
            npy = tmp_path / f"{grid}_{param}_{step}.npy"
            np.save(npy, values)
            run("import", npy, "-o", path, *(["--append"] if path.exists() else []),
                "--meta", f"name={param}", "--meta", f"grib.shortName={param}",
                "--meta", "mars.date=20240115", "--meta", "mars.time=1200",
                "--meta", f"mars.step={step}", *meta_args("geography", geo))
    return path


def open_both(tmp_path, path):
    refs = tmp_path / "refs.json"
    run("refs", path, "-o", refs)
    assert json.loads(json.loads(refs.read_text())["refs"][".zattrs"])["tgm_unexpressible"] == []
    through_refs = xr.open_dataset(
        "reference://", engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": str(refs), "remote_protocol": "file"}},
    )
    return through_refs, xr.open_dataset(path, engine="tgm")


def assert_one_dataset(a, b):
    """Same variables (dims, values), coordinates (dims, dtype, values,
    attributes) and sizes."""
    assert set(a.data_vars) == set(b.data_vars)
    assert dict(a.sizes) == dict(b.sizes)
    for name in b.data_vars:
        assert a[name].dims == b[name].dims, name
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
    assert set(a.coords) == set(b.coords), (sorted(a.coords), sorted(b.coords))
    for name in b.coords:
        assert a[name].dims == b[name].dims, name
        assert a[name].dtype == b[name].dtype, name
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)
        assert a[name].attrs == b[name].attrs, name


@pytest.mark.parametrize("grid", sorted(GRIDS))
def test_refs_and_the_backend_give_one_grid(tmp_path, grid):
    through_refs, ours = open_both(tmp_path, archive(tmp_path, [grid]))
    dims, lat_dims, lats = EXPECTED[grid]
    assert set(ours.data_vars) == {"t", "z"}
    assert ours.t.dims == ("step", *dims)
    assert ours.latitude.dims == lat_dims
    assert ours.latitude.dtype == ours.longitude.dtype == np.float64
    if isinstance(lats, tuple):
        # One point of a rotated grid, unrotated, or of a projected one.
        at, lat, lon = lats
        np.testing.assert_allclose([ours.latitude.values[at], ours.longitude.values[at]], [lat, lon], atol=1e-6)
    else:
        np.testing.assert_array_equal(ours.latitude.values, lats)
    assert ours.latitude.attrs["units"] == "degrees_north"
    assert_one_dataset(through_refs, ours)


def test_refs_and_the_backend_agree_where_grids_collide(tmp_path):
    # latitude and longitude are the first grid's; the others' fields keep
    # dimensions of their own, on both sides.
    through_refs, ours = open_both(tmp_path, archive(tmp_path, ["regular_ll", "reduced_gg"]))
    assert ours.latitude.dims == ("latitude",)
    assert ours.msl.dims == ("step", "msl_dim_0")
    assert_one_dataset(through_refs, ours)
