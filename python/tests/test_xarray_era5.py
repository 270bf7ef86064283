"""cfgrib's ERA5 samples converted by `tgm convert-grib`, opened with
`xr.open_dataset(engine="tgm")`, give the dataset cfgrib gives from the GRIB:
the same variables (named by cfVarName), dimensions, coordinates (names,
dimensions, dtypes, values, attributes), variable and dataset attributes, and
values (float64 by default, float32 with values_dtype); and `tgm refs` read by
stock xarray through zarr gives the same variables, dimensions and coordinates
as the backend.

Needs a tgm binary with convert-grib (TGM_WEATHER_BIN, as .ci/python.sh sets),
cfgrib and the samples (TGM_CFGRIB_SAMPLES, fetched by .ci/cfgrib-samples.sh);
each test skips with the reason otherwise.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("cfgrib", reason="cfgrib is not installed (pip install cfgrib)")

from test_xarray_cfgrib import tgm_with_convert_grib  # noqa: E402

#: Attributes cfgrib writes that describe cfgrib itself, not the data:
#: its missing-value marker (tgm's missing values are NaN) and the history
#: line naming cfgrib's and ecCodes' versions and the time of opening.
CFGRIB_ONLY_ATTRS = {"GRIB_missingValue", "history"}


def sample(name):
    d = os.environ.get("TGM_CFGRIB_SAMPLES")
    path = pathlib.Path(d) / name if d else None
    if path is None or not path.exists():
        pytest.skip(f"cfgrib's {name} is absent: set TGM_CFGRIB_SAMPLES (.ci/cfgrib-samples.sh fetches it)")
    return path


def convert(grib, out, *args):
    subprocess.run([tgm_with_convert_grib(), "convert-grib", grib, "-o", out, *args],
                   check=True, capture_output=True)
    return out


def open_cfgrib(grib, **kwargs):
    return xr.open_dataset(grib, engine="cfgrib", backend_kwargs={"indexpath": ""}, **kwargs)


@pytest.fixture(scope="module")
def era5(tmp_path_factory):
    grib = sample("era5-levels-members.grib")
    archive = convert(grib, tmp_path_factory.mktemp("era5") / "era5.tgm")
    return grib, archive


def without(attrs, names):
    return {k: v for k, v in attrs.items() if k not in names}


def assert_same_attrs(ours, theirs, what, skip=()):
    """cfgrib's attributes, and beyond them only tgm's ``MARS_<key>`` (the
    archive's MARS keys with one value, python/COMPAT.md)."""
    want = without(theirs, CFGRIB_ONLY_ATTRS | set(skip))
    got = {k: v for k, v in ours.items() if k not in skip and not k.startswith("MARS_")}
    assert set(got) == set(want), (what, sorted(set(got) ^ set(want)))
    for k, v in want.items():
        assert type(got[k]) is type(v) or (isinstance(v, (int, float)) and isinstance(got[k], (int, float))), \
            (what, k, got[k], v)
        assert got[k] == v, (what, k, got[k], v)


def assert_equal_attrs(a, b, what):
    assert set(a) == set(b), (what, sorted(set(a) ^ set(b)))
    for k, v in b.items():
        assert np.array_equal(a[k], v), (what, k, a[k], v)


def assert_same_coords(ours, theirs, skip=()):
    assert set(ours.coords) == set(theirs.coords) - set(skip), (sorted(ours.coords), sorted(theirs.coords))
    for name in ours.coords:
        a, b = ours[name], theirs[name]
        assert a.dims == b.dims, (name, a.dims, b.dims)
        assert a.dtype == b.dtype, (name, a.dtype, b.dtype)
        np.testing.assert_array_equal(a.values, b.values, err_msg=name)
        assert_same_attrs(a.attrs, b.attrs, name)


def test_era5_is_the_dataset_cfgrib_gives(era5):
    grib, archive = era5
    cf = open_cfgrib(grib, values_dtype=np.dtype("float64"))
    ours = xr.open_dataset(archive, engine="tgm")
    assert set(ours.data_vars) == set(cf.data_vars) == {"z", "t"}
    assert dict(ours.sizes) == dict(cf.sizes)
    assert_same_coords(ours, cf)
    # One datetime64 reference time from MARS date and time, not two int dims.
    assert ours.time.dtype == np.dtype("datetime64[ns]") and "date" not in ours.dims
    for name in cf.data_vars:
        assert ours[name].dims == cf[name].dims, name
        assert_same_attrs(ours[name].attrs, cf[name].attrs, name)
    assert_same_attrs(ours.attrs, cf.attrs, "dataset")


def test_era5_values_are_float64_exact_and_float32_on_request(era5):
    grib, archive = era5
    exact = open_cfgrib(grib, values_dtype=np.dtype("float64"))
    ours = xr.open_dataset(archive, engine="tgm")
    single = open_cfgrib(grib)
    ours32 = xr.open_dataset(archive, engine="tgm", values_dtype=np.float32)
    for name in exact.data_vars:
        assert ours[name].dtype == np.float64
        np.testing.assert_array_equal(ours[name].values, exact[name].values, err_msg=name)
        assert single[name].dtype == ours32[name].dtype == np.float32
        np.testing.assert_array_equal(ours32[name].values, single[name].values, err_msg=name)


def test_a_scalar_time_field_is_named_by_cfvarname(tmp_path):
    grib = sample("era5-single-level-scalar-time.grib")
    archive = convert(grib, tmp_path / "t2m.tgm")
    cf = open_cfgrib(grib, values_dtype=np.dtype("float64"))
    ours = xr.open_dataset(archive, engine="tgm")
    assert list(ours.data_vars) == list(cf.data_vars) == ["t2m"]
    assert ours.t2m.attrs["GRIB_shortName"] == "2t"
    # cfgrib's `number` and level coordinate of a surface analysis
    # (`surface`), from GRIB's `number` and `level`, have no MARS key in
    # tgm's metadata (python/COMPAT.md).
    assert_same_coords(ours, cf, skip={"number", "surface"})
    assert_same_attrs(ours.t2m.attrs, cf.t2m.attrs, "t2m")
    np.testing.assert_array_equal(ours.t2m.values, cf.t2m.values)


def open_refs(refs):
    return xr.open_dataset(
        "reference://", engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": str(refs), "remote_protocol": "file"}},
    )


def test_refs_and_the_backend_give_one_dataset(tmp_path):
    pytest.importorskip("zarr", reason="zarr is not installed")
    pytest.importorskip("fsspec", reason="fsspec is not installed")
    grib = sample("era5-levels-members.grib")
    # Lossless values in one codec chain, so that zarr stacks every field.
    archive = convert(grib, tmp_path / "era5.tgm", "--encoding", "none", "--compression", "zstd")
    refs = tmp_path / "era5.json"
    subprocess.run([tgm_with_convert_grib(), "refs", archive, "-o", refs], check=True, capture_output=True)
    assert json.loads(json.loads(refs.read_text())["refs"][".zattrs"])["tgm_unexpressible"] == []
    ours = xr.open_dataset(archive, engine="tgm")
    zarr_ds = open_refs(refs)
    assert set(zarr_ds.data_vars) == set(ours.data_vars) == {"z", "t"}
    assert dict(zarr_ds.sizes) == dict(ours.sizes)
    for name in ours.data_vars:
        assert zarr_ds[name].dims == ours[name].dims, name
        assert_equal_attrs(zarr_ds[name].attrs, ours[name].attrs, name)
        np.testing.assert_array_equal(zarr_ds[name].values, ours[name].values, err_msg=name)
    assert_same_coords(zarr_ds, ours)
    for name in ours.coords:
        assert_equal_attrs(zarr_ds[name].attrs, ours[name].attrs, name)
    assert_equal_attrs(without(zarr_ds.attrs, {"tgm_unexpressible"}), ours.attrs, "dataset")
