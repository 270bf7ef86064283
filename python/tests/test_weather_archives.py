"""The reference package (tensogram 0.24.0) decodes archives written by tgm's
weather converters (convert-grib, convert-netcdf) to the values ecCodes and
netCDF-C read from the source files.

Needs a tgm binary built with the `grib` and `netcdf` features (TGM_WEATHER_BIN,
which `.ci/python.sh` sets, or one in target/) and the ecCodes / netCDF-C
command-line tools; each test skips with the reason otherwise.
"""

import math
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

ref = pytest.importorskip("tensogram")

from conftest import eccodes_values  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = pathlib.Path("/usr/share/eccodes/samples")


def tgm_with(command):
    """A tgm binary offering `command`, or skip."""
    candidates = [os.environ.get("TGM_WEATHER_BIN")]
    candidates += [str(ROOT / "target" / p / "tgm") for p in ("release", "debug")]
    for c in candidates:
        if c and os.path.exists(c):
            r = subprocess.run([c, command, "--help"], capture_output=True)
            if r.returncode == 0:
                return c
    pytest.skip(f"no tgm binary with {command}: build with --features grib,netcdf or set TGM_WEATHER_BIN")


def need_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (run .ci/weather.sh)")


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, f"{args}: {r.stderr}"
    return r.stdout


def reference_objects(path):
    """(base entry, array) of every object of every message, read by the reference."""
    f = ref.TensogramFile.open(str(path))
    out = []
    for i in range(f.message_count()):
        m = ref.decode(f.read_message(i))
        out += [(m.metadata.base[j], obj[1]) for j, obj in enumerate(m.objects)]
    return out


CDL = """netcdf sample {
dimensions:
  time = UNLIMITED ; lat = 2 ; lon = 3 ;
variables:
  double time(time) ; time:units = "hours since 2024-01-01" ;
  float lat(lat) ; lat:units = "degrees_north" ;
  float lon(lon) ;
  float t2m(time, lat, lon) ; t2m:_FillValue = -999.f ; t2m:units = "K" ;
  short sp(time, lat, lon) ; sp:scale_factor = 0.5 ; sp:add_offset = 1000. ; sp:_FillValue = -32767s ;
  int counts(lat, lon) ;
data:
  time = 0, 6 ;
  lat = 50.5, 40.25 ;
  lon = 0, 10, 20 ;
  t2m = 271.1, 272.2, _, 274.4, 275.5, 276.6, 277.7, 278.8, 279.9, 280.1, 281.2, -999 ;
  sp = 1, 2, 3, _, 5, 6, 7, 8, 9, 10, 11, 12 ;
  counts = 1, -2, 3, -4, 5, -6 ;
}
"""


@pytest.mark.parametrize("kind", ["classic", "nc4"])
def test_reference_decodes_netcdf_archive(tmp_path, kind):
    tgm = tgm_with("convert-netcdf")
    need_tools("ncgen")
    cdl = tmp_path / "sample.cdl"
    cdl.write_text(CDL)
    nc = tmp_path / "sample.nc"
    run("ncgen", "-k", kind, "-o", nc, cdl)
    plain, cf = tmp_path / "plain.tgm", tmp_path / "cf.tgm"
    run(tgm, "convert-netcdf", nc, "-o", plain)
    run(tgm, "convert-netcdf", nc, "-o", cf, "--cf", "--split-by", "record", "--compression", "zstd")

    objs = {b["name"]: (b, a) for b, a in reference_objects(plain)}
    t2m = np.array([271.1, 272.2, np.nan, 274.4, 275.5, 276.6, 277.7, 278.8, 279.9, 280.1, 281.2, np.nan], dtype=np.float32)
    base, arr = objs["t2m"]
    assert base["dim_names"] == ["time", "lat", "lon"]
    assert base["cf"]["units"] == "K"
    np.testing.assert_array_equal(arr, t2m.reshape(2, 2, 3))
    sp = np.array([1, 2, 3, -32767, 5, 6, 7, 8, 9, 10, 11, 12], dtype=np.int16)
    np.testing.assert_array_equal(objs["sp"][1], sp.reshape(2, 2, 3))
    np.testing.assert_array_equal(objs["lat"][1], np.array([50.5, 40.25], dtype=np.float32))
    np.testing.assert_array_equal(objs["counts"][1], np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.int32))

    # --cf and one message per time step: packed shorts unpacked to float64.
    steps = [(b, a) for b, a in reference_objects(cf) if b["name"] == "sp"]
    assert [b["netcdf"]["record"] for b, _ in steps] == [0, 1]
    want = np.where(sp == -32767, np.nan, sp * 0.5 + 1000.0).reshape(2, 1, 2, 3)
    for r, (_, a) in enumerate(steps):
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, want[r])


def test_reference_decodes_grib_archive_to_eccodes_values(tmp_path):
    tgm = tgm_with("convert-grib")
    need_tools("grib_filter", "grib_get_data")
    if not (SAMPLES / "regular_ll_sfc_grib2.tmpl").exists():
        pytest.skip(f"ecCodes samples ({SAMPLES}) not installed")
    n = 16 * 31
    values = [9999 if i % 11 == 0 else 280 + 10 * math.sin(i * 0.1) for i in range(n)]
    rules = tmp_path / "rules"
    rules.write_text(
        "set bitsPerValue=16; set bitmapPresent=1; set missingValue=9999; "
        f"set values={{{','.join(f'{v:.6f}' for v in values)}}}; write; "
        "set paramId=167; set bitsPerValue=12; set bitmapPresent=0; "
        f"set values={{{','.join(f'{250 + i * 0.01:.6f}' for i in range(n))}}}; write;"
    )
    grib = tmp_path / "two.grib"
    run("grib_filter", "-o", grib, rules, SAMPLES / "regular_ll_sfc_grib2.tmpl")
    archive = tmp_path / "two.tgm"
    run(tgm, "convert-grib", grib, "-o", archive)

    objs = reference_objects(archive)
    expected = eccodes_values(grib)
    assert len(objs) == len(expected) == 2
    assert np.isnan(expected[0]).sum() == len(range(0, n, 11))
    for (base, arr), want in zip(objs, expected):
        assert "mars" in base
        # Simple packing at the field's own bits: bit-identical to ecCodes.
        np.testing.assert_array_equal(arr.reshape(-1), want)


def test_reference_decodes_small_fields_and_patched_headers(tmp_path):
    """Fields of a few hundred points stored uncompressed at their own width,
    and headers that differ in bytes that are not MARS keys (a start minute)
    stored once with a patch per field (spec/convert.md): the reference
    decodes ecCodes' values, and to-grib gives back the source's bytes."""
    tgm = tgm_with("convert-grib")
    need_tools("grib_filter", "grib_get_data")
    if not (SAMPLES / "regular_ll_sfc_grib2.tmpl").exists():
        pytest.skip(f"ecCodes samples ({SAMPLES}) not installed")
    n = 16 * 31
    rules = "".join(
        f"set minute={minute}; set number={k}; set bitsPerValue=3; "
        f"set values={{{','.join(str((i * 7919 + k) % 8) for i in range(n))}}}; write; "
        for k, minute in enumerate((0, 6, 12, 18))
    )
    (tmp_path / "rules").write_text("set typeOfProcessedData=4; set productDefinitionTemplateNumber=1; " + rules)
    grib = tmp_path / "lagged.grib"
    run("grib_filter", "-o", grib, tmp_path / "rules", SAMPLES / "regular_ll_sfc_grib2.tmpl")
    archive = tmp_path / "lagged.tgm"
    run(tgm, "convert-grib", grib, "-o", archive)

    f = ref.TensogramFile.open(str(archive))
    m = ref.decode(f.read_message(0))
    descriptors = [obj[0] for obj in m.objects]
    assert [(d.compression, d.params["sp_bits_per_value"]) for d in descriptors] == [("none", 3)] * 4
    patches = [b.get("grib", {}).get("template_patch") for b in m.metadata.base]
    assert sum(p is not None for p in patches) == 3, patches
    expected = eccodes_values(grib)
    for (base, arr), want in zip(reference_objects(archive), expected):
        np.testing.assert_array_equal(arr.reshape(-1), want)
    back = tmp_path / "back.grib"
    run(tgm, "to-grib", archive, "-o", back)
    assert back.read_bytes() == grib.read_bytes()
