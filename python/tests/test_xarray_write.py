"""Writing a Dataset back: ``tgm.to_tgm`` and ``ds.tgm.to_file`` give a
file that ``xr.open_dataset(engine="tgm")`` opens identical; existing
files are kept unless asked; what cannot be written is refused before
anything exists; ``ds.to_netcdf`` of a tgm dataset is CF-valid."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tgm

xr = pytest.importorskip("xarray")


def sample_dataset():
    rng = np.random.default_rng(5)
    time = np.array(["2024-01-01T00", "2024-01-01T06", "2024-01-01T12"], dtype="datetime64[ns]")
    lat = np.linspace(60.0, 30.0, 4)
    lon = np.linspace(-10.0, 20.0, 5)
    t = rng.standard_normal((3, 4, 5)) * 10 + 280
    t[1, 2, 3] = np.nan
    return xr.Dataset(
        {
            "t": (("time", "latitude", "longitude"), t,
                  {"units": "K", "standard_name": "air_temperature", "long_name": "temperature"}),
            "mask": (("latitude", "longitude"), rng.random((4, 5)) > 0.5, {"long_name": "land"}),
            "count": (("time",), np.array([3, 1, 4], dtype=np.int16), {"units": "1"}),
            "level": ((), np.float32(850.0), {"units": "hPa"}),
        },
        coords={
            "time": ("time", time, {"standard_name": "time"}),
            "latitude": ("latitude", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude": ("longitude", lon, {"units": "degrees_east", "standard_name": "longitude"}),
            "step_hours": ("time", np.array([0, 6, 12], dtype=np.int32), {"long_name": "hours"}),
        },
        attrs={"title": "a test", "Conventions": "CF-1.8", "version": 3, "scales": [1.5, 2.5]},
    )


def test_round_trip_is_identical(tmp_path):
    ds = sample_dataset()
    p = tmp_path / "ds.tgm"
    tgm.to_tgm(ds, p)
    back = xr.open_dataset(p, engine="tgm")
    xr.testing.assert_identical(back.load(), ds)
    assert back["mask"].dtype == bool
    assert "step_hours" in back.coords


def test_accessor_and_lossless_pipeline(tmp_path):
    ds = sample_dataset()
    p = tmp_path / "z.tgm"
    ds.tgm.to_file(p, pipeline={"compression": "zstd"})
    _, descs = tgm.TensogramFile.open(p).object_descriptor(0, 0)
    assert descs.compression == "zstd"
    xr.testing.assert_identical(xr.open_dataset(p, engine="tgm").load(), ds)


def test_dataarray_accessor(tmp_path):
    da = sample_dataset()["t"]
    p = tmp_path / "t.tgm"
    da.tgm.to_file(p)
    back = xr.open_dataset(p, engine="tgm")["t"]
    xr.testing.assert_identical(back.load(), da)


def test_tgm_dataset_round_trip(tmp_path):
    """A dataset read from tgm (stacked, time coordinates, MARS attributes)
    written again and reread is identical."""
    src = tmp_path / "src.tgm"
    with tgm.TensogramFile.create(src) as f:
        for step in (0, 6):
            entry = {"mars": {"param": "t", "step": step, "date": 20240101, "time": 1200, "class": "od"},
                     "grib": {"shortName": "t", "units": "K"}, "dim_names": ["y", "x"]}
            f.append({"base": [entry]}, [({"type": "ntensor", "shape": [2, 3], "dtype": "float64"},
                                          np.arange(6.0).reshape(2, 3) + step)])
    ds = xr.open_dataset(src, engine="tgm").load()
    out = tmp_path / "again.tgm"
    tgm.to_tgm(ds, out)
    xr.testing.assert_identical(xr.open_dataset(out, engine="tgm").load(), ds)


def test_existing_file_is_kept_unless_forced(tmp_path):
    p = tmp_path / "keep.tgm"
    p.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match="keep.tgm"):
        tgm.to_tgm(sample_dataset(), p)
    assert p.read_bytes() == b"precious"
    tgm.to_tgm(sample_dataset(), p, force=True)
    xr.testing.assert_identical(xr.open_dataset(p, engine="tgm").load(), sample_dataset())


def test_strings_are_refused_before_anything_is_written(tmp_path):
    ds = sample_dataset().assign(names=(("latitude",), np.array(["a", "b", "c", "d"])))
    p = tmp_path / "s.tgm"
    with pytest.raises(tgm.EncodeError, match="names"):
        tgm.to_tgm(ds, p)
    assert os.listdir(tmp_path) == []


def test_unstorable_attribute_leaves_nothing(tmp_path):
    ds = sample_dataset()
    ds.t.attrs["bad"] = {1, 2}
    p = tmp_path / "a.tgm"
    with pytest.raises(TypeError, match="bad"):
        tgm.to_tgm(ds, p)
    assert os.listdir(tmp_path) == []


def test_to_netcdf_of_a_tgm_dataset_is_cf_valid(tmp_path):
    netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (pip install netCDF4)")
    src = tmp_path / "grid.tgm"
    geo = {"gridType": "regular_ll", "Ni": 5, "Nj": 4, "latitudeOfFirstGridPointInDegrees": 60.0,
           "latitudeOfLastGridPointInDegrees": 30.0, "longitudeOfFirstGridPointInDegrees": 0.0,
           "longitudeOfLastGridPointInDegrees": 20.0}
    with tgm.TensogramFile.create(src) as f:
        for step in (0, 6):
            entry = {"mars": {"param": "130", "step": step, "date": 20240101, "time": 0, "levtype": "sfc"},
                     "grib": {"shortName": "t", "units": "K", "paramId": 130}, "geography": geo}
            f.append({"base": [entry]}, [({"type": "ntensor", "shape": [4, 5], "dtype": "float32"},
                                          np.full((4, 5), 280.0 + step, dtype=np.float32))])
    nc = tmp_path / "out.nc"
    xr.open_dataset(src, engine="tgm").to_netcdf(nc)
    with netCDF4.Dataset(nc) as d:
        assert set(d.dimensions) == {"step", "latitude", "longitude"}
        assert d["t"].dimensions == ("step", "latitude", "longitude")
        assert d["t"].units == "K"
        assert d["latitude"].units == "degrees_north"
        assert d["longitude"].units == "degrees_east"
        assert d["valid_time"].units.startswith(("hours since", "seconds since", "days since"))
        assert d["step"].units in ("hours", "seconds", "days", "minutes")
    beside = pathlib.Path(sys.executable).parent / "cfchecks"
    cfchecks = shutil.which("cfchecks") or (str(beside) if beside.exists() else None)
    if cfchecks is None:
        pytest.skip("cfchecks (cfchecker, with libudunits2) is not installed: the file was checked with netCDF4 only")
    out = subprocess.run([cfchecks, "-v", "1.8", str(nc)], capture_output=True, text=True)
    if "URLError" in out.stderr:
        # Offline: CF's tables cannot be fetched; check against local ones
        # holding the standard names the file uses, with CF's canonical units.
        tables = offline_cf_tables(tmp_path)
        out = subprocess.run([cfchecks, "-v", "1.8", *tables, str(nc)], capture_output=True, text=True)
    assert "ERRORS detected: 0" in out.stdout, out.stdout + out.stderr


#: The CF standard names ``ds.to_netcdf`` of a tgm GRIB dataset uses.
CF_NAMES = {"latitude": "degree_north", "longitude": "degree_east", "time": "s",
            "forecast_period": "s", "forecast_reference_time": "s"}


def offline_cf_tables(d):
    """cfchecks' ``-s``/``-a``/``-r`` options naming local tables."""
    entries = "".join(f'<entry id="{n}"><canonical_units>{u}</canonical_units><grib></grib><amip></amip>'
                      f"<description></description></entry>" for n, u in CF_NAMES.items())
    (d / "names.xml").write_text(
        '<?xml version="1.0"?><standard_name_table><version_number>84</version_number>'
        f"<last_modified>2024-01-19T15:55:10Z</last_modified>{entries}</standard_name_table>")
    head = "<version_number>1</version_number><date>2024-01-01</date><last_modified>2024-01-01</last_modified>"
    (d / "areas.xml").write_text(f'<?xml version="1.0"?><area_type_table>{head}<entry id="land"></entry></area_type_table>')
    (d / "regions.xml").write_text(
        f'<?xml version="1.0"?><standard_region_table>{head}<entry id="global"></entry></standard_region_table>')
    return ["-s", str(d / "names.xml"), "-a", str(d / "areas.xml"), "-r", str(d / "regions.xml")]
