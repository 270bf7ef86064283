"""`tgm refs` of cfgrib's ERA5 sample converted by `tgm convert-grib`, read by
stock xarray through zarr and fsspec without tgm: the dataset cfgrib gives
(spec/kerchunk.md §2), checked against what ecCodes' own tools read from the
GRIB: variables named by cfVarName, one datetime64 `time` from MARS date and
time, `step` and `valid_time`, float pressure levels from the largest,
latitude/longitude, cfgrib's attributes and every value bit for bit.

Needs TGM_BIN built with convert-grib, ecCodes' grib_ls and grib_get_data,
and the sample (TGM_CFGRIB_SAMPLES, fetched by .ci/cfgrib-samples.sh); skips
with the reason otherwise. Run by .ci/kerchunk.sh.
"""

import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
import xarray as xr

TGM = os.environ.get("TGM_BIN")
if not TGM:
    pytest.skip("TGM_BIN is not set (run .ci/kerchunk.sh)", allow_module_level=True)

KEYS = ["cfVarName", "shortName", "name", "units", "cfName", "dataDate", "dataTime", "step", "number", "level"]


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, f"{args}: {r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def era5(tmp_path_factory):
    d = os.environ.get("TGM_CFGRIB_SAMPLES")
    grib = pathlib.Path(d) / "era5-levels-members.grib" if d else None
    if grib is None or not grib.exists():
        pytest.skip("cfgrib's era5-levels-members.grib is absent: set TGM_CFGRIB_SAMPLES (.ci/cfgrib-samples.sh)")
    missing = [t for t in ("grib_ls", "grib_get_data") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (run .ci/weather.sh)")
    if subprocess.run([TGM, "convert-grib", "--help"], capture_output=True).returncode != 0:
        pytest.skip("TGM_BIN has no convert-grib (build with --features grib)")
    out = tmp_path_factory.mktemp("era5")
    archive = out / "era5.tgm"
    # Lossless float64 values in one codec chain, so that every field stacks.
    run(TGM, "convert-grib", grib, "-o", archive, "--encoding", "none", "--compression", "zstd")
    refs = out / "era5.json"
    run(TGM, "refs", archive, "-o", refs)
    fields = json.loads(run("grib_ls", "-j", "-p", ",".join(KEYS), grib))["messages"]
    ds = xr.open_dataset(
        "reference://", engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": str(refs), "remote_protocol": "file"}},
    )
    return grib, fields, ds


def reference_time(f):
    d, t = str(f["dataDate"]), int(f["dataTime"])
    return np.datetime64(f"{d[:4]}-{d[4:6]}-{d[6:]}T{t // 100:02d}:{t % 100:02d}", "ns")


def test_variables_dimensions_and_coordinates_are_cfgribs(era5):
    _, fields, ds = era5
    assert set(ds.data_vars) == {f["cfVarName"] for f in fields} == {"z", "t"}
    dims = ("number", "time", "isobaricInhPa", "latitude", "longitude")
    for name in ds.data_vars:
        assert ds[name].dims == dims
    times = sorted({reference_time(f) for f in fields})
    assert ds.time.dtype == np.dtype("datetime64[ns]")
    assert list(ds.time.values) == times
    assert ds.number.dtype == np.int64
    assert list(ds.number.values) == sorted({int(f["number"]) for f in fields})
    assert ds.isobaricInhPa.dtype == np.float64
    assert list(ds.isobaricInhPa.values) == sorted({float(f["level"]) for f in fields}, reverse=True)
    assert {f["step"] for f in fields} == {0}
    assert ds.step.dims == () and ds.step.values == np.timedelta64(0, "ns")
    assert ds.valid_time.dims == ("time",) and list(ds.valid_time.values) == times
    assert ds.time.attrs["standard_name"] == "forecast_reference_time"
    assert ds.step.attrs["standard_name"] == "forecast_period"
    assert ds.latitude.attrs["stored_direction"] == "decreasing"


def grid_points(grib):
    """(latitudes, longitudes, values of every field) as grib_get_data prints them."""
    lines = run("grib_get_data", "-F", "%.17g", grib).splitlines()
    rows = [line.split() for line in lines if line and not line.lstrip().startswith("Lat")]
    a = np.array(rows, dtype=np.float64)
    return a[:, 0], a[:, 1], a[:, 2]


def test_grid_and_every_value_are_ecCodes(era5):
    grib, fields, ds = era5
    lat, lon, values = grid_points(grib)
    n = ds.latitude.size * ds.longitude.size
    np.testing.assert_array_equal(np.unique(lat[:n])[::-1], ds.latitude.values)
    np.testing.assert_array_equal(np.unique(lon[:n]), ds.longitude.values)
    values = values.reshape(len(fields), ds.latitude.size, ds.longitude.size)
    for i, f in enumerate(fields):
        at = dict(number=int(f["number"]), time=reference_time(f), isobaricInhPa=float(f["level"]))
        got = ds[f["cfVarName"]].sel(at).values
        assert np.array_equal(got, values[i]), (i, at)


def test_attributes_are_cfgribs(era5):
    _, fields, ds = era5
    for f in fields:
        a = ds[f["cfVarName"]].attrs
        assert a["GRIB_cfVarName"] == f["cfVarName"]
        assert a["GRIB_shortName"] == f["shortName"]
        assert a["units"] == a["GRIB_units"] == f["units"]
        assert a["standard_name"] == a["GRIB_cfName"] == f["cfName"]
        assert a["long_name"] == a["GRIB_name"] == f["name"]
        assert a["GRIB_gridType"] == "regular_ll"
        assert a["GRIB_Nx"] == ds.longitude.size and a["GRIB_Ny"] == ds.latitude.size
    assert ds.attrs["Conventions"] == "CF-1.7"
    assert ds.attrs["GRIB_centre"] == "ecmf"
