"""The xarray backend side by side with cfgrib on one GRIB file: the same
variable names, dimensions, latitude/longitude, step/time/valid_time
coordinates, units and values. Needs a tgm binary with convert-grib
(TGM_WEATHER_BIN, as .ci/python.sh sets), ecCodes' grib_filter and samples,
and cfgrib (PyPI); skips with the reason otherwise."""

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("cfgrib", reason="cfgrib is not installed (pip install cfgrib)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = pathlib.Path("/usr/share/eccodes/samples/regular_ll_sfc_grib2.tmpl")


def tgm_with_convert_grib():
    candidates = [os.environ.get("TGM_WEATHER_BIN")]
    candidates += [str(ROOT / "target" / p / "tgm") for p in ("release", "debug")]
    for c in candidates:
        if c and os.path.exists(c) and subprocess.run([c, "convert-grib", "--help"], capture_output=True).returncode == 0:
            return c
    pytest.skip("no tgm binary with convert-grib: build with --features grib or set TGM_WEATHER_BIN")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tgm = tgm_with_convert_grib()
    if shutil.which("grib_filter") is None or not SAMPLE.exists():
        pytest.skip("ecCodes' grib_filter or its samples are not installed (run .ci/weather.sh)")
    d = tmp_path_factory.mktemp("cfgrib")
    n = 16 * 31
    rules = []
    # msl (151) and sp (134): GRIB short names that are also cfgrib's names.
    for param, base in ((151, 101000.0), (134, 98000.0)):
        for step in (0, 6):
            values = ",".join(f"{base + 30 * np.sin(i * 0.1 + step):.6f}" for i in range(n))
            rules.append(
                f"set paramId={param}; set step={step}; set bitsPerValue=16; "
                f"set values={{{values}}}; write;"
            )
    (d / "rules").write_text("\n".join(rules))
    grib = d / "f.grib"
    subprocess.run(["grib_filter", "-o", grib, d / "rules", SAMPLE], check=True, capture_output=True)
    archive = d / "f.tgm"
    subprocess.run([tgm, "convert-grib", grib, "-o", archive], check=True, capture_output=True)
    cf = xr.open_dataset(grib, engine="cfgrib", backend_kwargs={"indexpath": ""})
    ours = xr.open_dataset(archive, engine="tgm")
    return cf, ours


def test_same_variables_dimensions_and_coordinates(pair):
    cf, ours = pair
    assert set(ours.data_vars) == set(cf.data_vars) == {"msl", "sp"}
    for name in cf.data_vars:
        assert ours[name].dims == cf[name].dims
    np.testing.assert_allclose(ours.latitude.values, cf.latitude.values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.longitude.values, cf.longitude.values, rtol=0, atol=1e-9)
    assert ours.step.values.tolist() == cf.step.values.tolist()
    assert ours.time.values == cf.time.values
    assert ours.valid_time.values.tolist() == cf.valid_time.values.tolist()


def test_same_values_and_units(pair):
    cf, ours = pair
    for name in cf.data_vars:
        want = cf[name].values
        np.testing.assert_array_equal(ours[name].values.astype(want.dtype), want)
        assert ours[name].attrs["units"] == cf[name].attrs["units"]
        assert ours[name].attrs["GRIB_shortName"] == cf[name].attrs["GRIB_shortName"]
        assert ours[name].attrs["GRIB_paramId"] == cf[name].attrs["GRIB_paramId"]
