"""The xarray backend side by side with cfgrib on GRIB made from ecCodes'
samples: regular and reduced Gaussian grids (latitudes equal to ecCodes'
to the bit), rotated latitude/longitude grids (every point unrotated as
ecCodes unrotates it, to the bit), mixed level types, ``filter_by_keys`` and
``tgm.open_datasets``, polar stereographic, Lambert conformal and Lambert
azimuthal equal-area grids (ecCodes' projected points, to the bit). Needs tgm built with the ``grib`` feature,
ecCodes' grib_filter and samples, and cfgrib (PyPI); skips with the
reason otherwise."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tgm

xr = pytest.importorskip("xarray")
pytest.importorskip("cfgrib", reason="cfgrib is not installed (pip install cfgrib)")

SAMPLES = pathlib.Path("/usr/share/eccodes/samples")


def make_grib(tmp_path, name, fields):
    """A GRIB file of ``fields``: ``(sample, {key: value})`` with values
    made from the field's position; returns its path."""
    if not tgm.__has_grib__:
        pytest.skip("tgm was built without the grib feature (MATURIN_PEP517_ARGS=--features grib)")
    if shutil.which("grib_filter") is None or not SAMPLES.is_dir():
        pytest.skip("ecCodes' grib_filter or its samples are not installed (run .ci/weather.sh)")
    out = tmp_path / f"{name}.grib"
    with open(out, "wb") as fh:
        for i, (sample, keys) in enumerate(fields):
            # The keys first (they may change the number of points), then values.
            sets = "; ".join(f'set {k}="{v}"' if isinstance(v, str) else f"set {k}={v}" for k, v in keys.items())
            shaped = grib_filter(tmp_path, f"{sets}; write;", SAMPLES / sample)
            n = int(subprocess.run(["grib_get", "-p", "numberOfPoints", shaped],
                                   capture_output=True, text=True, check=True).stdout.split()[0])
            values = ",".join(f"{250 + 20 * np.sin(j * 0.01 + i):.4f}" for j in range(n))
            fh.write(grib_filter(tmp_path, f"set bitsPerValue=16; set values={{{values}}}; write;", shaped).read_bytes())
    return out


def grib_filter(tmp_path, rules, source):
    """``rules`` run by grib_filter on ``source`` → the path of its output."""
    (tmp_path / "rules").write_text(rules)
    out = tmp_path / f"{source.name}.out"
    subprocess.run(["grib_filter", "-o", out, tmp_path / "rules", source], check=True, capture_output=True)
    return out


def to_archive(grib):
    archive = grib.with_suffix(".tgm")
    archive.write_bytes(b"".join(tgm.convert_grib(grib, grouping="one_to_one")))
    return archive


def cfgrib(path, **kw):
    return xr.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": "", **kw})


def assert_same(ours, cf):
    """Same variables, dimensions, grid coordinates (bit for bit) and values."""
    assert set(ours.data_vars) == set(cf.data_vars)
    for name in cf.data_vars:
        assert ours[name].dims == cf[name].dims, name
        want = cf[name].values
        np.testing.assert_array_equal(ours[name].values.astype(want.dtype), want)
    for c in ("latitude", "longitude"):
        assert ours[c].dims == cf[c].dims
        np.testing.assert_array_equal(ours[c].values, cf[c].values)
        assert ours[c].attrs["units"] == cf[c].attrs["units"]


def test_gaussian_latitudes_equal_eccodes():
    eccodes = pytest.importorskip("eccodes", reason="the eccodes Python package is not installed")
    from tgm._grids import gaussian_latitudes

    for n in (*range(1, 65), 80, 320, 640, 1280, 8000):
        raw = eccodes.codes_get_gaussian_latitudes(n)
        want = np.array([raw[i] for i in range(2 * n)])
        np.testing.assert_array_equal(gaussian_latitudes(n), want, err_msg=f"N{n}")
    for n in (0, -1, 8001, 2**70, 2.0, True, "32"):
        assert gaussian_latitudes(n) is None, n


def test_regular_gaussian(tmp_path):
    fields = [("regular_gg_pl_grib2.tmpl", {"level": lev, "step": step})
              for step in (0, 6) for lev in (500, 850)]
    grib = make_grib(tmp_path, "gg", fields)
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("step", "isobaricInhPa", "latitude", "longitude")
    assert_same(ours, cf)
    assert ours.isobaricInhPa.values.tolist() == cf.isobaricInhPa.values.tolist()


def test_regular_gaussian_scanning_north_to_south_subarea(tmp_path):
    # Rows 3..10 of N32, south to north (jScansPositively=1).
    from tgm._grids import gaussian_latitudes

    lats = gaussian_latitudes(32)
    keys = {"Nj": 8, "numberOfDataPoints": 8 * 128, "jScansPositively": 1, "latitudeOfFirstGridPointInDegrees": round(lats[10], 6),
            "latitudeOfLastGridPointInDegrees": round(lats[3], 6), "global": 0}
    grib = make_grib(tmp_path, "sub", [("regular_gg_sfc_grib2.tmpl", keys)])
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.latitude.size == 8 and ours.latitude.values[0] < ours.latitude.values[-1]
    assert_same(ours, cf)


def test_regional_grid_across_the_meridian(tmp_path):
    # 10°W to 19°E: GRIB2 codes the first longitude as 350, the last as 19;
    # the columns run eastwards across 0 as ecCodes steps them.
    keys = {"Ni": 30, "Nj": 11, "numberOfDataPoints": 330, "iDirectionIncrementInDegrees": 1,
            "jDirectionIncrementInDegrees": 1, "latitudeOfFirstGridPointInDegrees": 60,
            "latitudeOfLastGridPointInDegrees": 50, "longitudeOfFirstGridPointInDegrees": 350,
            "longitudeOfLastGridPointInDegrees": 19}
    grib = make_grib(tmp_path, "meridian", [("regular_ll_sfc_grib2.tmpl", keys)])
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.longitude.values[0] == -10 and ours.longitude.values[-1] == 19
    assert np.all(np.diff(ours.longitude.values) > 0)
    assert_same(ours, cf)


def test_rows_that_alternate_direction_place_each_value_where_cfgrib_does(tmp_path):
    # cfgrib's own sample of alternativeRowScanning=1 (171 rows of 291
    # points, 10°W to 19°E): cfgrib reverses every second row's values onto
    # its latitude × longitude grid; tgm keeps the stored order on (y, x)
    # and gives every point its own latitude and longitude.
    sample = pathlib.Path(os.environ.get("TGM_CFGRIB_SAMPLES", "")) / "alternate-scanning.grib"
    if not sample.is_file():
        pytest.skip(f"cfgrib's sample is not at {sample}: set TGM_CFGRIB_SAMPLES (.ci/cfgrib-samples.sh)")
    if not tgm.__has_grib__:
        pytest.skip("tgm was built without the grib feature (MATURIN_PEP517_ARGS=--features grib)")
    local = tmp_path / sample.name
    shutil.copy(sample, local)
    ours, cf = xr.open_dataset(to_archive(local), engine="tgm"), cfgrib(local)
    assert ours.t2m.dims == ours.latitude.dims == ours.longitude.dims == ("y", "x")
    want = cf.t2m.values.copy()
    want[1::2] = want[1::2, ::-1]
    np.testing.assert_array_equal(ours.t2m.values.astype(want.dtype), want)
    lon = np.broadcast_to(cf.longitude.values, want.shape).copy()
    lon[1::2] = lon[1::2, ::-1]
    np.testing.assert_array_equal(ours.longitude.values, lon)
    np.testing.assert_array_equal(ours.latitude.values, np.broadcast_to(cf.latitude.values[:, None], want.shape))


def test_reduced_gaussian(tmp_path):
    fields = [("reduced_gg_pl_32_grib2.tmpl", {"shortName": p, "level": 850}) for p in ("t", "q")]
    grib = make_grib(tmp_path, "rgg", fields)
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("values",)
    assert ours.latitude.dims == ("values",)
    assert_same(ours, cf)


def classic_coordinates(tmp_path, grib):
    """``latitude`` and ``longitude`` as cfgrib gives them through ecCodes'
    default geoiterator, in a process of its own: importing earthkit-data
    sets ``ECCODES_ECKIT_GEO=1`` for the rest of the process, and ecCodes
    then iterates rotated grids through eckit-geo, which does not round
    the points to six decimals as its default iterator does."""
    lat, lon = tmp_path / "lat.npy", tmp_path / "lon.npy"
    code = ("import sys, numpy as np, xarray as xr; "
            "ds = xr.open_dataset(sys.argv[1], engine='cfgrib', backend_kwargs={'indexpath': ''}); "
            "np.save(sys.argv[2], ds.latitude.values); np.save(sys.argv[3], ds.longitude.values)")
    env = {k: v for k, v in os.environ.items() if k != "ECCODES_ECKIT_GEO"}
    subprocess.run([sys.executable, "-c", code, grib, lat, lon], env=env, check=True, capture_output=True)
    return np.load(lat), np.load(lon)


@pytest.mark.parametrize("sample", ["rotated_ll_pl_grib2.tmpl", "rotated_ll_pl_grib1.tmpl"])
def test_rotated_lat_lon(tmp_path, sample):
    # ecCodes' sample with its south pole moved off the geographic one, so
    # that unrotating changes every point; two levels stacked over (y, x).
    pole = {"latitudeOfSouthernPoleInDegrees": -40, "longitudeOfSouthernPoleInDegrees": 10}
    keys = {"shortName": "t", **pole}
    grib = make_grib(tmp_path, "rot", [(sample, {**keys, "level": lev}) for lev in (500, 850)])
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("isobaricInhPa", "y", "x") == cf.t.dims
    np.testing.assert_array_equal(ours.t.values.astype(cf.t.dtype), cf.t.values)
    assert ours.latitude.dims == ours.longitude.dims == ("y", "x") == cf.latitude.dims
    lat, lon = classic_coordinates(tmp_path, grib)
    assert lat.shape == (31, 16)
    # Not the rotated grid's own latitudes (60°N to 0° in rows).
    assert len(np.unique(lat[0])) == 16
    np.testing.assert_array_equal(ours.latitude.values, lat)
    np.testing.assert_array_equal(ours.longitude.values, lon)
    for c in ("latitude", "longitude"):
        assert ours[c].attrs == cf[c].attrs


@pytest.mark.parametrize("sample", ["reduced_rotated_gg_pl_32_grib2.tmpl", "reduced_rotated_gg_pl_32_grib1.tmpl"])
def test_reduced_rotated_gaussian(tmp_path, sample):
    # A reduced Gaussian grid whose south pole is moved off the geographic
    # one: each point unrotated as ecCodes' reduced Gaussian geoiterator
    # unrotates it, which cfgrib shows as latitude(values), longitude(values).
    pole = {"latitudeOfSouthernPoleInDegrees": -40, "longitudeOfSouthernPoleInDegrees": 10}
    grib = make_grib(tmp_path, "rrg", [(sample, {"shortName": "t", "level": 500, **pole})])
    ours = xr.open_dataset(to_archive(grib), engine="tgm")
    assert ours.t.dims == ("values",)
    assert ours.latitude.dims == ours.longitude.dims == ("values",)
    lat, lon = classic_coordinates(tmp_path, grib)
    assert lat.shape == (6114,)
    # Not the rotated grid's own Gaussian rows.
    assert len(np.unique(lat[:20])) > 1
    np.testing.assert_array_equal(ours.latitude.values, lat)
    np.testing.assert_array_equal(ours.longitude.values, lon)


LAEA = {"gridDefinitionTemplateNumber": 140, "Nx": 16, "Ny": 31, "latitudeOfFirstGridPoint": 40000000,
        "longitudeOfFirstGridPoint": 350000000, "standardParallelInMicrodegrees": 52000000,
        "centralLongitudeInMicrodegrees": 10000000, "xDirectionGridLengthInMillimetres": 50000000,
        "yDirectionGridLengthInMillimetres": 45000000}

PROJECTED = {
    "polar_north": ("polar_stereographic_pl_grib2.tmpl",
                    {"latitudeOfFirstGridPointInDegrees": 55, "longitudeOfFirstGridPointInDegrees": 350,
                     "orientationOfTheGridInDegrees": 10, "LaDInDegrees": 60}),
    "polar_grib1": ("polar_stereographic_pl_grib1.tmpl",
                    {"latitudeOfFirstGridPointInDegrees": 55, "orientationOfTheGridInDegrees": 10}),
    "polar_south": ("polar_stereographic_pl_grib2.tmpl",
                    {"projectionCentreFlag": 128, "latitudeOfFirstGridPointInDegrees": -55, "LaDInDegrees": -60}),
    "lambert": ("regular_ll_pl_grib2.tmpl",
                {"gridDefinitionTemplateNumber": 30, "Latin1InDegrees": 33, "Latin2InDegrees": 45,
                 "LaDInDegrees": 40, "LoVInDegrees": 262, "latitudeOfFirstGridPointInDegrees": 25,
                 "longitudeOfFirstGridPointInDegrees": 250, "DxInMetres": 30000, "DyInMetres": 30000}),
    "lambert_oblate": ("regular_ll_pl_grib2.tmpl",
                       {"gridDefinitionTemplateNumber": 30, "shapeOfTheEarth": 4, "Latin1InDegrees": 33,
                        "Latin2InDegrees": 45, "LaDInDegrees": 40, "LoVInDegrees": 262,
                        "latitudeOfFirstGridPointInDegrees": 25, "longitudeOfFirstGridPointInDegrees": 250,
                        "DxInMetres": 30000, "DyInMetres": 30000}),
    "lambert_south": ("regular_ll_pl_grib2.tmpl",
                      {"gridDefinitionTemplateNumber": 30, "Latin1InDegrees": -50, "Latin2InDegrees": -50,
                       "LaDInDegrees": -50, "LoVInDegrees": 140, "latitudeOfFirstGridPointInDegrees": -40,
                       "longitudeOfFirstGridPointInDegrees": 120, "DxInMetres": 20000, "DyInMetres": 25000}),
    "laea": ("regular_ll_pl_grib2.tmpl", LAEA),
    # Lambert azimuthal equal-area points follow the scanning flags.
    "laea_minus_i_minus_j": ("regular_ll_pl_grib2.tmpl", {**LAEA, "jScansPositively": 0, "iScansNegatively": 1}),
}


@pytest.mark.parametrize("case", sorted(PROJECTED))
def test_projected_grids(tmp_path, case):
    # Polar stereographic and Lambert conformal grids scanned +i +j (where
    # ecCodes' points follow the message's order), Lambert azimuthal
    # equal-area ones in any direction: latitude(y, x) and longitude(y, x)
    # as cfgrib shows them through ecCodes' geoiterators.
    sample, keys = PROJECTED[case]
    if not (SAMPLES / sample).exists():
        pytest.skip(f"ecCodes' sample {sample} is not installed")
    fields = [(sample, {"typeOfLevel": "isobaricInhPa", "shortName": "t", "level": lev, "jScansPositively": 1, **keys})
              for lev in (500, 850)]
    grib = make_grib(tmp_path, case, fields)
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("isobaricInhPa", "y", "x") == cf.t.dims
    np.testing.assert_array_equal(ours.t.values.astype(cf.t.dtype), cf.t.values)
    assert ours.latitude.dims == ours.longitude.dims == ("y", "x") == cf.latitude.dims
    lat, lon = classic_coordinates(tmp_path, grib)
    np.testing.assert_array_equal(ours.latitude.values, lat)
    np.testing.assert_array_equal(ours.longitude.values, lon)
    for c in ("latitude", "longitude"):
        assert ours[c].attrs == cf[c].attrs


MERCATOR = {"gridDefinitionTemplateNumber": 10, "latitudeOfFirstGridPointInDegrees": 10,
            "longitudeOfFirstGridPointInDegrees": 100, "LaDInDegrees": 20, "orientationOfTheGridInDegrees": 0,
            "DiInMetres": 100000, "DjInMetres": 60000, "latitudeOfLastGridPointInDegrees": 30,
            "longitudeOfLastGridPointInDegrees": 115}


@pytest.mark.parametrize("earth", [{}, {"shapeOfTheEarth": 4}], ids=["sphere", "grs80"])
def test_mercator_points_are_cfgribs_on_rows_and_columns(tmp_path, earth):
    # cfgrib lays Mercator fields out on one `values` dimension; tgm keeps
    # the rows and columns, with ecCodes' points in the same order (rows Dj
    # apart, as ecCodes steps them from 2.33 on).
    eccodes = pytest.importorskip("eccodes", reason="the eccodes Python package is not installed")
    if tuple(int(p) for p in eccodes.codes_get_api_version().split(".")[:2]) < (2, 33):
        pytest.skip(f"cfgrib's ecCodes {eccodes.codes_get_api_version()} steps Mercator rows by Di (before 2.33)")
    fields = [("regular_ll_pl_grib2.tmpl", {"typeOfLevel": "isobaricInhPa", "shortName": "t", "level": lev,
                                            "jScansPositively": 1, **MERCATOR, **earth})
              for lev in (500, 850)]
    grib = make_grib(tmp_path, "mercator", fields)
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("isobaricInhPa", "y", "x")
    assert cf.t.dims == ("isobaricInhPa", "values")
    ny, nx = ours.t.shape[1:]
    assert ny * nx == cf.sizes["values"] and ny > 1 and nx > 1
    np.testing.assert_array_equal(ours.t.values.reshape(2, -1).astype(cf.t.dtype), cf.t.values)
    lat, lon = classic_coordinates(tmp_path, grib)
    assert ours.latitude.dims == ("y", "x")
    np.testing.assert_array_equal(ours.latitude.values.ravel(), lat)
    np.testing.assert_array_equal(ours.longitude.values.ravel(), lon)
    # Rows are parallels, columns meridians.
    assert (ours.latitude.values == ours.latitude.values[:, :1]).all()
    assert (ours.longitude.values == ours.longitude.values[:1, :]).all()
    for c in ("latitude", "longitude"):
        assert ours[c].attrs == cf[c].attrs


SPACE_VIEW = {"gridDefinitionTemplateNumber": 90, "Nx": 16, "Ny": 31, "latitudeOfSubSatellitePoint": 0,
              "longitudeOfSubSatellitePoint": 10000000, "dx": 14, "dy": 28, "Xp": 8500, "Yp": 15000,
              "Nr": 6610700, "Xo": 1, "Yo": 0}


@pytest.mark.parametrize("more", [{}, {"iScansNegatively": 1}, {"shapeOfTheEarth": 4}],
                         ids=["sphere", "minus_i", "grs80"])
def test_space_view_points_are_cfgribs_and_nan_off_the_disc(tmp_path, more):
    # A satellite's view: cfgrib puts it on `values` with ecCodes' points in
    # the message's order, and 0°, 0° for points off the earth's disc; tgm
    # keeps rows and columns and gives those points NaN.
    fields = [("regular_ll_pl_grib2.tmpl", {"typeOfLevel": "isobaricInhPa", "shortName": "t", "level": lev,
                                            **SPACE_VIEW, **more})
              for lev in (500, 850)]
    grib = make_grib(tmp_path, "space_view", fields)
    ours, cf = xr.open_dataset(to_archive(grib), engine="tgm"), cfgrib(grib)
    assert ours.t.dims == ("isobaricInhPa", "y", "x") and ours.t.shape == (2, 31, 16)
    assert cf.t.dims == ("isobaricInhPa", "values")
    np.testing.assert_array_equal(ours.t.values.reshape(2, -1).astype(cf.t.dtype), cf.t.values)
    lat, lon = classic_coordinates(tmp_path, grib)
    off = np.isnan(ours.latitude.values.ravel())
    assert 0 < off.sum() < off.size
    assert (np.isnan(ours.longitude.values.ravel()) == off).all()
    assert (lat[off] == 0).all() and (lon[off] == 0).all()
    np.testing.assert_array_equal(ours.latitude.values.ravel()[~off], lat[~off])
    np.testing.assert_array_equal(ours.longitude.values.ravel()[~off], lon[~off])


def test_projected_grid_scanned_minus_j_has_dimensions_without_coordinates(tmp_path):
    # ecCodes computes the points towards +j from the first one whatever the
    # scanning and reorders only the values; tgm gives no points it cannot
    # pair with the stored values.
    grib = make_grib(tmp_path, "ps", [("polar_stereographic_pl_grib2.tmpl", {"shortName": "t", "level": 500})])
    ours = xr.open_dataset(to_archive(grib), engine="tgm")
    assert ours.t.dims == ("y", "x")
    assert "latitude" not in ours.coords and "longitude" not in ours.coords


class Rules:
    """A value written into grib_filter's rules as it is (an array)."""

    def __init__(self, text):
        self.text = text

    def __format__(self, spec):
        return self.text


def test_rotated_gaussian(tmp_path):
    # ecCodes' Gaussian geoiterator leaves a rotated_gg grid's points in the
    # rotated frame (cfgrib shows them as latitudes); tgm unrotates them as
    # ecCodes unrotates every other rotated grid. The reference points: the
    # same pole on a reduced rotated Gaussian grid whose every row has the
    # regular grid's 128 columns, which ecCodes does unrotate (GRIB2, whose
    # microdegrees give both grids the same longitudes 360·j/128).
    pole = {"latitudeOfSouthernPoleInDegrees": -40, "longitudeOfSouthernPoleInDegrees": 10}
    regular = make_grib(tmp_path, "rgg", [("rotated_gg_pl_grib2.tmpl", {"shortName": "t", "level": 500, **pole})])
    ours = xr.open_dataset(to_archive(regular), engine="tgm")
    cf = cfgrib(regular)
    assert ours.t.dims == ("y", "x") == cf.t.dims
    assert ours.latitude.dims == ours.longitude.dims == ("y", "x") == cf.latitude.dims
    rotated_frame, _ = classic_coordinates(tmp_path, regular)
    assert len(np.unique(rotated_frame[0])) == 1
    pl = Rules("{" + ",".join(["128"] * 64) + "}")
    reduced = make_grib(tmp_path, "rrg", [("reduced_rotated_gg_pl_32_grib2.tmpl",
                                            {"shortName": "t", "level": 500, "pl": pl,
                                             "numberOfDataPoints": 64 * 128, **pole})])
    lat, lon = classic_coordinates(tmp_path, reduced)
    assert lat.shape == (64 * 128,)
    np.testing.assert_array_equal(ours.latitude.values, lat.reshape(64, 128))
    np.testing.assert_array_equal(ours.longitude.values, lon.reshape(64, 128))


@pytest.fixture
def mixed(tmp_path):
    """t and r on two pressure levels, msl at the surface, t at N48 on
    reduced Gaussian."""
    fields = [("regular_ll_pl_grib2.tmpl", {"shortName": p, "level": lev}) for p in ("t", "r") for lev in (500, 850)]
    fields += [("regular_ll_sfc_grib2.tmpl", {"shortName": "msl"})]
    fields += [("gg_sfc_grib2.tmpl", {"shortName": "2t"})]
    grib = make_grib(tmp_path, "mixed", fields)
    return grib, to_archive(grib)


def test_mixed_level_types_in_one_dataset(mixed):
    _, archive = mixed
    ds = xr.open_dataset(archive, engine="tgm", filter_by_keys={"gridType": "regular_ll"})
    assert set(ds.data_vars) == {"t", "r", "msl"}
    assert ds.t.dims == ("isobaricInhPa", "latitude", "longitude")
    assert ds.msl.dims == ("latitude", "longitude")
    # Pressure levels from the top of the column down, as cfgrib stores them.
    assert ds.isobaricInhPa.values.tolist() == [850, 500]


@pytest.mark.parametrize("keys", [{"typeOfLevel": "isobaricInhPa"}, {"typeOfLevel": "surface", "gridType": "regular_ll"},
                                  {"shortName": ["t", "msl"], "gridType": "regular_ll"}, {"level": 850}])
def test_filter_by_keys_like_cfgrib(mixed, keys):
    grib, archive = mixed
    ours = xr.open_dataset(archive, engine="tgm", filter_by_keys=keys)
    cf = cfgrib(grib, filter_by_keys=keys)
    assert set(ours.data_vars) == set(cf.data_vars)
    for name in cf.data_vars:
        np.testing.assert_array_equal(ours[name].values.astype(cf[name].dtype), cf[name].values)


def test_filter_that_matches_nothing_gives_an_empty_dataset(mixed):
    _, archive = mixed
    assert not xr.open_dataset(archive, engine="tgm", filter_by_keys={"shortName": "nope"}).data_vars


def test_open_datasets_like_cfgrib(mixed):
    grib, archive = mixed
    cfgrib_mod = pytest.importorskip("cfgrib")
    theirs = cfgrib_mod.open_datasets(str(grib), backend_kwargs={"indexpath": ""})
    ours = tgm.open_datasets(archive)

    def short_names(d):
        # cfgrib names 2t "t2m" (ecCodes' cfVarName); tgm keeps the shortName.
        return tuple(sorted(d[v].attrs["GRIB_shortName"] for v in d.data_vars))

    assert sorted(map(short_names, ours)) == sorted(map(short_names, theirs))
    by_names = {short_names(d): d for d in theirs}
    for d in ours:
        cf = by_names[short_names(d)]
        cf_by_short = {cf[v].attrs["GRIB_shortName"]: cf[v] for v in cf.data_vars}
        for name in d.data_vars:
            want = cf_by_short[d[name].attrs["GRIB_shortName"]]
            assert d[name].dims == want.dims
            np.testing.assert_array_equal(d[name].values.astype(want.dtype), want.values)
        np.testing.assert_array_equal(d.latitude.values, cf.latitude.values)


def test_open_datasets_of_one_hypercube_is_one_dataset(tmp_path):
    grib = make_grib(tmp_path, "one", [("regular_ll_sfc_grib2.tmpl", {"step": s}) for s in (0, 6)])
    (ds,) = tgm.open_datasets(to_archive(grib), filter_by_keys={"step": [0, 6]})
    assert ds["t"].dims == ("step", "latitude", "longitude")
