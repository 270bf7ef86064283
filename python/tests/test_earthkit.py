"""The earthkit-data plugins in the tgm wheel (tgm._earthkit, README
"earthkit-data"): ``ekd.from_source("tgm", ...)`` side by side with
earthkit's own view of the source GRIB, ``from_source("file", "x.tgm")``,
the ``tgm`` encoder's GRIB round trip, MARS archives without GRIB headers,
non-MARS archives as Datasets and remote URLs. Skips when earthkit-data
1.x is not installed (pip install earthkit-data); the GRIB tests need
ecCodes' grib_filter and samples and a wheel built with the grib
feature."""

import importlib.metadata
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tgm
from conftest import desc
from test_remote import nginx  # noqa: F401  (the nginx fixture: skips without nginx or the remote feature)

ekd = pytest.importorskip("earthkit.data", reason="earthkit-data is not installed (pip install earthkit-data)")
xr = pytest.importorskip("xarray")
if not ekd.__version__.startswith("1."):
    pytest.skip(f"the tgm plugin targets earthkit-data 1.x, found {ekd.__version__}", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = pathlib.Path("/usr/share/eccodes/samples/regular_ll_pl_grib2.tmpl")

#: MARS and grid keys compared field by field with earthkit's GRIB view.
KEYS = ["param", "shortName", "paramId", "levtype", "level", "typeOfLevel", "date", "time",
        "step", "class", "stream", "type", "expver", "number", "gridType", "Ni", "Nj", "units",
        "centre", "edition", "dataType", "bitsPerValue", "packingType", "md5GridSection",
        "N", "numberOfPoints", "numberOfDataPoints"]


def need_grib():
    if "convert_grib" not in tgm._native.__all__:
        pytest.skip("this tgm was built without the 'grib' feature")
    if shutil.which("grib_filter") is None or not SAMPLE.exists():
        pytest.skip("ecCodes' grib_filter or its samples are not installed (run .ci/weather.sh)")


def write_grib(path):
    """Eight fields: t and u at 850 and 500 hPa, steps 0 and 6, 16-bit."""
    n = 16 * 31
    rules = []
    for param in (130, 131):
        for level in (850, 500):
            for step in (0, 6):
                vals = ",".join(f"{200 + param - 130 + level / 100 + 30 * np.sin(i * 0.1 + step):.6f}"
                                for i in range(n))
                rules.append(f'set paramId={param}; set typeOfLevel="isobaricInhPa"; set level={level}; '
                             f"set step={step}; set bitsPerValue=16; set values={{{vals}}}; write;")
    r = path.with_suffix(".rules")
    r.write_text("\n".join(rules))
    subprocess.run(["grib_filter", "-o", path, r, SAMPLE], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def grib(tmp_path_factory):
    need_grib()
    d = tmp_path_factory.mktemp("ekd")
    g = write_grib(d / "f.grib")
    archive = d / "f.tgm"
    archive.write_bytes(b"".join(tgm.convert_grib(g)))
    return g, archive


def assert_same_fields(ours, ref):
    assert len(ours) == len(ref)
    np.testing.assert_array_equal(ours.to_numpy(), ref.to_numpy())
    present = 0
    for a, b in zip(ours, ref):
        for k in KEYS:
            want = b.get(f"metadata.{k}", default=None)
            assert a.get(f"metadata.{k}", default=None) == want, k
            present += want is not None
        np.testing.assert_array_equal(a.geography.latitudes(), b.geography.latitudes())
        np.testing.assert_array_equal(a.geography.longitudes(), b.geography.longitudes())
    assert present >= 10 * len(ref)


@pytest.fixture(scope="module")
def era5(tmp_path_factory):
    need_grib()
    # cfgrib's ERA5 sample (.ci/cfgrib-samples.sh fetches it into the
    # folder TGM_CFGRIB_SAMPLES names).
    whole = pathlib.Path(os.environ.get("TGM_CFGRIB_SAMPLES", "")) / "era5-levels-members.grib"
    if not whole.is_file():
        pytest.skip(f"cfgrib's ERA5 sample is not at {whole}: set TGM_CFGRIB_SAMPLES "
                    "(.ci/cfgrib-samples.sh fetches it)")
    d = tmp_path_factory.mktemp("era5")
    # 16 of its 160 messages, a hypercube (to_xarray needs one): both
    # parameters, levels and times of the first day, two members; earthkit
    # writes their GRIB unchanged
    g = d / "era5.grib"
    subset = {"metadata.number": [0, 9], "metadata.dataDate": 20170101}
    ekd.from_source("file", str(whole)).to_fieldlist().sel(**subset).to_target("file", str(g))
    archive = d / "era5.tgm"
    archive.write_bytes(b"".join(tgm.convert_grib(g)))
    return g, archive


@pytest.mark.parametrize("sample", ["era5", "grib"])
def test_earthkits_view_of_the_archive_is_its_view_of_the_grib(sample, request, tmp_path):
    g, archive = request.getfixturevalue(sample)
    ref = ekd.from_source("file", str(g)).to_fieldlist()
    ours = ekd.from_source("tgm", str(archive)).to_fieldlist()
    assert_same_fields(ours, ref)
    for key in ("param", "shortName", "level", "step", "date", "time", "number", "gridType"):
        assert ([f.get(f"metadata.{key}", default=None) for f in ours]
                == [f.get(f"metadata.{key}", default=None) for f in ref]), key
    first = ref[0]
    pick = {"metadata.shortName": first.get("metadata.shortName"),
            "metadata.level": first.get("metadata.level")}
    assert len(ref.sel(**pick)) < len(ref)
    assert_same_fields(ours.sel(**pick), ref.sel(**pick))
    order = {"metadata.level": "descending", "metadata.shortName": "ascending"}
    assert_same_fields(ours.order_by(order), ref.order_by(order))
    np.testing.assert_array_equal(ours.to_numpy(flatten=True), ref.to_numpy(flatten=True))
    xr.testing.assert_identical(ours.to_xarray(), ref.to_xarray())
    # written by the tgm encoder and read again: the same fields
    out = tmp_path / "again.tgm"
    ref.to_target("file", str(out), encoder="tgm")
    assert_same_fields(ekd.from_source("file", str(out)).to_fieldlist(), ref)


def test_entry_points_are_in_the_wheel():
    eps = importlib.metadata.entry_points()
    assert next(iter(eps.select(group="earthkit.data.sources", name="tgm"))).value == "tgm._earthkit:TgmSource"
    assert next(iter(eps.select(group="earthkit.data.encoders", name="tgm"))).value == "tgm._earthkit:TgmEncoder"


INPUTS = {
    "str": lambda p: str(p),
    "pathlib": lambda p: p,
    "bytes": lambda p: p.read_bytes(),
    "bytearray": lambda p: bytearray(p.read_bytes()),
    "memoryview": lambda p: memoryview(p.read_bytes()),
    "stream": lambda p: io.BytesIO(p.read_bytes()),
    "open_file": lambda p: open(p, "rb"),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_tgm_source_is_earthkits_view_of_the_grib(grib, kind):
    g, archive = grib
    ref = ekd.from_source("file", str(g))
    ours = ekd.from_source("tgm", INPUTS[kind](archive))
    np.testing.assert_array_equal(ours.to_numpy(), ref.to_numpy())
    assert_same_fields(ours.to_fieldlist(), ref.to_fieldlist())
    xr.testing.assert_identical(ours.to_xarray(), ref.to_xarray())


def test_non_seekable_stream(grib):
    g, archive = grib

    class Pipe(io.RawIOBase):
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, buf):
            return self._b.readinto(buf)

    ours = ekd.from_source("tgm", Pipe(archive.read_bytes())).to_fieldlist()
    assert_same_fields(ours, ekd.from_source("file", str(g)).to_fieldlist())


SAMPLES = ["GRIB1", "GRIB2", "regular_ll_sfc_grib1", "reduced_gg_pl_32_grib1", "reduced_gg_pl_32_grib2",
           "gg_sfc_grib2", "polar_stereographic_sfc_grib2"]


@pytest.mark.parametrize("sample", SAMPLES)
def test_ecCodes_samples_of_both_editions_and_other_grids(grib, tmp_path, sample):
    eccodes = pytest.importorskip("eccodes")
    tmpl = SAMPLE.parent / f"{sample}.tmpl"
    if not tmpl.exists():
        pytest.skip(f"ecCodes sample {tmpl} not installed")
    g = tmp_path / "s.grib"
    with open(g, "wb") as out:
        for step in (0, 6):
            with open(tmpl, "rb") as f:
                h = eccodes.codes_grib_new_from_file(f)
            n = eccodes.codes_get(h, "numberOfDataPoints")
            eccodes.codes_set(h, "step", step)
            eccodes.codes_set(h, "bitsPerValue", 16)
            eccodes.codes_set_values(h, 250 + 20 * np.sin(np.arange(n) * 0.01 + step))
            eccodes.codes_write(h, out)
            eccodes.codes_release(h)
    ref = ekd.from_source("file", str(g))
    ours = ekd.from_source("tgm", b"".join(tgm.convert_grib(g)))
    assert_same_fields(ours.to_fieldlist(), ref.to_fieldlist())
    xr.testing.assert_identical(ours.to_xarray(), ref.to_xarray())
    ref.to_target("file", str(tmp_path / "o.tgm"), encoder="tgm")
    back = ekd.from_source("tgm", str(tmp_path / "o.tgm"))
    assert_same_fields(back.to_fieldlist(), ref.to_fieldlist())


def test_sel_and_order_by_match(grib):
    g, archive = grib
    ref = ekd.from_source("file", str(g)).to_fieldlist()
    ours = ekd.from_source("tgm", str(archive)).to_fieldlist()
    for sel in ({"parameter.variable": "u"}, {"vertical.level": 500}, {"metadata.shortName": "t", "time.step": 6}):
        a, b = ours.sel(**sel), ref.sel(**sel)
        assert len(a) == len(b) > 0
        assert_same_fields(a, b)
    for order in ("vertical.level", {"vertical.level": "descending", "time.step": "descending"}):
        a, b = ours.order_by(order), ref.order_by(order)
        assert a.metadata(["shortName", "level", "step"]) == b.metadata(["shortName", "level", "step"])
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


@pytest.mark.parametrize("name", ["x.tgm", "no_suffix"])
def test_file_source_recognises_tgm_by_its_magic(grib, tmp_path, name):
    g, archive = grib
    p = tmp_path / name
    p.write_bytes(archive.read_bytes())
    ours = ekd.from_source("file", str(p))
    ref = ekd.from_source("file", str(g))
    assert_same_fields(ours.to_fieldlist(), ref.to_fieldlist())
    xr.testing.assert_identical(ours.to_xarray(), ref.to_xarray())


def test_stream_source_recognises_tgm(grib):
    g, archive = grib
    ours = ekd.from_source("stream", io.BufferedReader(io.BytesIO(archive.read_bytes())))
    assert_same_fields(ours.to_fieldlist(read_all=True), ekd.from_source("file", str(g)).to_fieldlist())


def test_memory_source_recognises_tgm(grib):
    g, archive = grib
    ours = ekd.from_source("memory", archive.read_bytes()).to_fieldlist()
    assert_same_fields(ours, ekd.from_source("file", str(g)).to_fieldlist())


def test_encoder_grib_round_trip_is_exact(grib, tmp_path):
    g, _ = grib
    ref = ekd.from_source("file", str(g))
    out = tmp_path / "out.tgm"
    ref.to_target("file", str(out), encoder="tgm")
    assert out.read_bytes()[:8] == b"TENSOGRM"
    back = ekd.from_source("tgm", str(out))
    assert_same_fields(back.to_fieldlist(), ref.to_fieldlist())
    # and on to GRIB again through earthkit
    again = tmp_path / "again.grib"
    back.to_target("file", str(again))
    assert_same_fields(ekd.from_source("file", str(again)).to_fieldlist(), ref.to_fieldlist())


def test_encoder_of_a_fieldlist_a_field_and_the_suffix(grib, tmp_path):
    g, _ = grib
    ref = ekd.from_source("file", str(g)).to_fieldlist()
    ref.to_target("file", str(tmp_path / "a.tgm"), encoder="tgm")
    assert_same_fields(ekd.from_source("tgm", str(tmp_path / "a.tgm")).to_fieldlist(), ref)
    sub = ref.sel(**{"parameter.variable": "t"})
    sub.to_target("file", str(tmp_path / "b.tgm"))  # the .tgm suffix chooses the tgm encoder
    assert_same_fields(ekd.from_source("tgm", str(tmp_path / "b.tgm")).to_fieldlist(), sub)
    ref[3].to_target("file", str(tmp_path / "c.tgm"), encoder="tgm")
    assert_same_fields(ekd.from_source("tgm", str(tmp_path / "c.tgm")).to_fieldlist(), ref[3:4])


def test_encoder_passes_conversion_options(grib, tmp_path):
    g, _ = grib
    ref = ekd.from_source("file", str(g))
    ref.to_target("file", str(tmp_path / "z.tgm"), encoder="tgm", compression="zstd")
    with tgm.TensogramFile.open(str(tmp_path / "z.tgm")) as f:
        d = f.file_decode_descriptors(0)["descriptors"][0]
    assert d.compression == "zstd"
    assert_same_fields(ekd.from_source("tgm", str(tmp_path / "z.tgm")).to_fieldlist(), ref.to_fieldlist())


GEO = {"gridType": "regular_ll", "Ni": 4, "Nj": 3,
       "latitudeOfFirstGridPointInDegrees": 2.0, "latitudeOfLastGridPointInDegrees": 0.0,
       "longitudeOfFirstGridPointInDegrees": 0.0, "longitudeOfLastGridPointInDegrees": 3.0,
       "iDirectionIncrementInDegrees": 1.0, "jDirectionIncrementInDegrees": 1.0}


def mars_archive():
    """Four MARS objects without GRIB headers (as the reference writes
    them), one coordinate-like object without MARS keys."""
    base, objs = [], []
    for i, (param, step) in enumerate((("2t", 0), ("2t", 6), ("msl", 0), ("msl", 6))):
        base.append({"mars": {"param": param, "levtype": "sfc", "date": 20250101, "time": 1200,
                              "step": step, "class": "od", "type": "fc"}, "geography": GEO})
        objs.append((desc([3, 4], "float32"), np.full((3, 4), i, np.float32) + np.arange(4, dtype=np.float32)))
    base.append({"name": "aux"})
    objs.append((desc([2], "float64"), np.array([1.0, 2.0])))
    return tgm.encode({"base": base}, objs)


def test_mars_archive_without_grib_is_a_fieldlist():
    data = ekd.from_source("tgm", mars_archive())
    assert "fieldlist" in data.available_types
    fl = data.to_fieldlist()
    assert len(fl) == 4
    assert fl.metadata("param") == ["2t", "2t", "msl", "msl"]
    assert fl.metadata("step") == [0, 6, 0, 6]
    assert fl.metadata("class") == ["od"] * 4
    assert [f.get("parameter.variable") for f in fl] == ["2t", "2t", "msl", "msl"]
    assert [str(f.get("time.valid_datetime")) for f in fl] == [
        "2025-01-01 12:00:00", "2025-01-01 18:00:00", "2025-01-01 12:00:00", "2025-01-01 18:00:00"]
    assert fl.to_numpy().shape == (4, 3, 4)
    np.testing.assert_array_equal(fl[2].to_numpy(), np.full((3, 4), 2.0) + np.arange(4))
    assert fl.sel(**{"metadata.param": "msl"}).metadata("step") == [0, 6]
    assert fl.order_by({"time.step": "descending"}).metadata("step") == [6, 6, 0, 0]
    geo = fl[0].geography
    np.testing.assert_array_equal(geo.latitudes()[:, 0], [2.0, 1.0, 0.0])
    np.testing.assert_array_equal(geo.longitudes()[0], [0.0, 1.0, 2.0, 3.0])
    # the FieldList's Dataset is tgm's xarray backend's of the archive
    # (every object, the coordinate-like one too)
    ds = fl.to_xarray()
    xr.testing.assert_identical(ds, xr.open_dataset(io.BytesIO(mars_archive()), engine="tgm"))
    assert {"2t", "msl", "aux"} <= set(ds.data_vars)


def test_non_mars_archive_is_a_dataset(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    msg = tgm.encode({"base": [{"name": "x", "dim_names": ["y", "x"]}]}, [(desc([3, 4], "float32"), a)])
    data = ekd.from_source("tgm", msg)
    assert "fieldlist" not in data.available_types
    ds = data.to_xarray()
    xr.testing.assert_identical(ds, xr.open_dataset(io.BytesIO(msg), engine="tgm"))
    with pytest.raises(NotImplementedError, match="no MARS metadata"):
        data.to_fieldlist()
    p = tmp_path / "plain.tgm"
    p.write_bytes(msg)
    xr.testing.assert_identical(ekd.from_source("file", str(p)).to_xarray(), ds)
    # written back with the tgm encoder as it was read
    data.to_target("file", str(tmp_path / "copy.tgm"), encoder="tgm")
    xr.testing.assert_identical(xr.open_dataset(tmp_path / "copy.tgm", engine="tgm"), ds)


def test_xarray_dataset_through_the_encoder(tmp_path):
    ds = xr.Dataset({"v": (("y", "x"), np.arange(6.0).reshape(2, 3))}, attrs={"title": "t"})
    from tgm._earthkit import TgmEncoder

    TgmEncoder().encode(ds).to_file(str(tmp_path / "ds.tgm"))
    xr.testing.assert_identical(xr.open_dataset(tmp_path / "ds.tgm", engine="tgm"), ds)


def test_remote_url_uses_tgms_reader(grib, nginx):
    g, archive = grib
    url = nginx.put("f.tgm", archive.read_bytes())
    ours = ekd.from_source("tgm", url)
    assert_same_fields(ours.to_fieldlist(), ekd.from_source("file", str(g)).to_fieldlist())
    assert nginx.body_bytes("f.tgm") > 0


@pytest.mark.parametrize("first", ["eccodes", "earthkit"])
def test_grib_read_by_earthkit_then_tgm_exits_cleanly(grib, first):
    # The eccodes package bundles its own ecCodes; loaded before the one
    # tgm's wheel links, the process crashed at exit. tgm_earthkit.pth
    # loads tgm's first.
    g, archive = grib
    reads = {
        "eccodes": f"import eccodes; f = open({str(g)!r}, 'rb'); "
                   "h = eccodes.codes_grib_new_from_file(f); eccodes.codes_get_values(h)",
        "earthkit": f"import earthkit.data as ekd; ekd.from_source('file', {str(g)!r}).to_numpy()",
    }
    code = reads[first] + (f"; import earthkit.data as ekd; "
                           f"print(len(ekd.from_source('tgm', {str(archive)!r}).to_fieldlist()))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["8"]


def test_book_example(grib, tmp_path, monkeypatch):
    text = (ROOT / "docs/src/guide/earthkit.md").read_text()
    section = text[text.index("## earthkit-data"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    g, _ = grib
    monkeypatch.chdir(tmp_path)
    shutil.copy(g, tmp_path / "fc.grib")
    exec(compile(code, "docs/src/guide/earthkit.md", "exec"), {})
    assert (tmp_path / "fc.tgm").read_bytes()[:8] == b"TENSOGRM"
