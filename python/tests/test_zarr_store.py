"""``tgm.zarr.TgmStore`` read by zarr-python 3 (PyPI): ``zarr.open_group``
gives one array per variable, one chunk per object, with the values tgm
decodes; xarray's zarr engine gives the dataset the tgm engine gives; a
URL works (nginx on loopback), takes no appends (writing a new object to
a bucket is in test_remote_write.py); ``mode="w"`` and
``mode="a"`` write what zarr and ``ds.to_zarr`` write as messages that
tgm reads back, appending without rewriting a byte of the file."""

import asyncio

import numpy as np
import pytest

import tgm
from conftest import desc
from test_remote import nginx  # noqa: F401  (the module-scoped server fixture)

zarr = pytest.importorskip("zarr", minversion="3", reason="zarr-python 3 is not installed (pip install 'zarr>=3')")
xr = pytest.importorskip("xarray")
from tgm.zarr import TgmStore  # noqa: E402

STEPS, MEMBERS = (0, 6, 12), (0, 1)
GEO = {"gridType": "regular_ll", "Ni": 5, "Nj": 4, "latitudeOfFirstGridPointInDegrees": 60.0,
       "latitudeOfLastGridPointInDegrees": 30.0, "longitudeOfFirstGridPointInDegrees": 0.0,
       "longitudeOfLastGridPointInDegrees": 20.0}


def field(param, number, step):
    return np.arange(20.0).reshape(4, 5) * (1 + number) + step + (param == "u") * 1000


def archive_bytes():
    msgs = []
    for number in MEMBERS:
        for step in STEPS:
            for param, comp in (("t", "zstd"), ("u", "none")):
                entry = {"mars": {"param": param, "number": number, "step": step, "date": 20240301, "time": 1200},
                         "grib": {"shortName": param, "units": "K" if param == "t" else "m s**-1"}, "geography": GEO}
                msgs.append(tgm.encode({"base": [entry]}, [(desc([4, 5], "float64", compression=comp),
                                                            field(param, number, step))]))
    mask = {"base": [{"name": "land", "dim_names": ["latitude", "longitude"]}]}
    msgs.append(tgm.encode(mask, [(desc([4, 5], "bitmask"), np.arange(20).reshape(4, 5) % 3 == 0)]))
    return b"".join(msgs)


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "fc.tgm"
    p.write_bytes(archive_bytes())
    return p


def test_open_group_lists_arrays_with_one_chunk_per_object(path):
    g = zarr.open_group(store=TgmStore(path), mode="r")
    assert {"t", "u", "land", "latitude", "longitude", "step", "number"} <= set(g.array_keys())
    t = g["t"]
    assert t.shape == (2, 3, 4, 5)
    assert t.chunks == (1, 1, 4, 5)
    assert t.metadata.dimension_names == ("number", "step", "latitude", "longitude")
    np.testing.assert_array_equal(t[1, 2], field("t", 1, 12))
    np.testing.assert_array_equal(g["u"][:, 0, 1, 2], [field("u", n, 0)[1, 2] for n in MEMBERS])
    np.testing.assert_array_equal(g["land"][:], np.arange(20).reshape(4, 5) % 3 == 0)
    assert t.attrs["units"] == "K"


def test_xarray_zarr_engine_gives_the_tgm_dataset(path):
    ours = xr.open_dataset(path, engine="tgm").load()
    via_zarr = xr.open_dataset(TgmStore(path), engine="zarr", consolidated=False, zarr_format=3).load()
    xr.testing.assert_equal(via_zarr, ours)
    assert via_zarr.t.attrs["units"] == ours.t.attrs["units"]
    assert via_zarr.valid_time.dtype == np.dtype("datetime64[ns]")


def test_store_is_read_only(path):
    store = TgmStore(path)
    with pytest.raises(tgm.InvalidArgumentError, match="read-only"):
        TgmStore(path, read_only=False)
    with pytest.raises(tgm.InvalidArgumentError, match="mode must be"):
        TgmStore(path, mode="x")
    g = zarr.open_group(store=store, mode="r")
    with pytest.raises(ValueError, match="read-only"):
        g["t"][0, 0] = np.zeros((4, 5))
    assert store.read_only


def test_missing_keys_and_chunks_out_of_range(path):
    store = TgmStore(path)
    assert asyncio.run(store.exists("t/c/1/2/0/0"))
    assert not asyncio.run(store.exists("t/c/2/0/0/0"))
    assert not asyncio.run(store.exists("nope/zarr.json"))
    assert asyncio.run(store.get("t/c/9/9/9/9")) is None
    assert asyncio.run(store.get("t/c/x")) is None


def test_remote_archive(nginx):  # noqa: F811
    url = nginx.put("zarr.tgm", archive_bytes())
    g = zarr.open_group(store=TgmStore(url), mode="r")
    np.testing.assert_array_equal(g["t"][0, 1], field("t", 0, 6))


def test_remote_archive_refuses_appends(nginx):  # noqa: F811
    url = nginx.put("zarr-w.tgm", archive_bytes())
    with pytest.raises(tgm.InvalidArgumentError, match="cannot append to an object"):
        TgmStore(url, mode="a")


def sample_dataset():
    rng = np.random.default_rng(7)
    return xr.Dataset(
        {"t2m": (("time", "lat", "lon"), rng.normal(280, 5, (2, 3, 4)), {"units": "K", "long_name": "2 m temperature"}),
         "flag": (("lat", "lon"), rng.integers(0, 9, (3, 4)).astype(np.int16))},
        coords={"time": np.array(["2024-03-01T00", "2024-03-01T06"], dtype="datetime64[ns]"),
                "lat": [50.0, 40.0, 30.0], "lon": [0.0, 10.0, 20.0, 30.0]},
        attrs={"title": "zarr → tgm"},
    )


def test_to_zarr_writes_a_tgm_file_the_tgm_engine_reads_back(tmp_path):
    target = tmp_path / "out.tgm"
    ds = sample_dataset()
    with TgmStore(target, mode="w") as store:
        ds.to_zarr(store, zarr_format=3, consolidated=False)
        assert not target.exists()  # nothing reaches the file before close
    back = xr.open_dataset(target, engine="tgm").load()
    xr.testing.assert_equal(back, ds)
    assert back.t2m.attrs["units"] == "K" and back.attrs["title"] == "zarr → tgm"
    assert len(tgm.TensogramFile.open(target)) == len(ds.variables)
    assert not [p for p in tmp_path.iterdir() if p.name != "out.tgm"]  # no temporary left


def test_zarr_api_writes_and_an_append_adds_messages_without_rewriting(tmp_path):
    target = tmp_path / "z.tgm"
    with TgmStore(target, mode="w") as store:
        g = zarr.open_group(store=store, mode="w", zarr_format=3)
        a = g.create_array("a", shape=(4, 6), chunks=(2, 3), dtype="float32", dimension_names=("y", "x"))
        a[:2, :] = 1.5
        a[2:, 3:] = np.arange(6, dtype="float32").reshape(2, 3)  # chunk (1, 0) never written: fill value
    before = target.read_bytes()
    expected = np.zeros((4, 6), "float32")
    expected[:2] = 1.5
    expected[2:, 3:] = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(xr.open_dataset(target, engine="tgm").a.values, expected)

    with TgmStore(target, mode="a") as store:
        g = zarr.open_group(store=store, mode="a", zarr_format=3)
        assert set(g.array_keys()) == {"a"}
        g.create_array("b", shape=(3,), dtype="int32", dimension_names=("z",))[:] = [7, 8, 9]
        with pytest.raises(tgm.InvalidArgumentError, match="already in the archive"):
            g["a"][0, 0] = 99.0
    after = target.read_bytes()
    # The messages before are kept as they were; the catalogue that ended
    # the file (spec/files.md §9.4) is replaced by one after the new ones.
    kept = tgm.scan(before)[-1][0]
    assert tgm.scan(after)[-1][0] > kept
    assert after[:kept] == before[:kept] and len(after) > len(before)
    with tgm.TensogramFile.open(target) as f:
        assert f._handle().catalogued()
    back = xr.open_dataset(target, engine="tgm")
    np.testing.assert_array_equal(back.b.values, [7, 8, 9])
    np.testing.assert_array_equal(back.a.values, expected)
    assert back.b.dims == ("z",)


def test_xarray_appends_new_variables_to_an_archive_it_wrote(tmp_path):
    target = tmp_path / "x.tgm"
    ds = sample_dataset()
    with TgmStore(target, mode="w") as store:
        ds.to_zarr(store, zarr_format=3, consolidated=False)
    t2m = xr.open_dataset(target, engine="tgm").t2m
    assert not isinstance(t2m.encoding.get("_FillValue", t2m.attrs.get("_FillValue", 0.0)), str)
    before = target.read_bytes()
    extra = xr.Dataset({"sp": (("lat", "lon"), np.full((3, 4), 1013.25), {"units": "hPa"})})
    with TgmStore(target, mode="a") as store:
        extra.to_zarr(store, mode="a", zarr_format=3, consolidated=False)
    kept = tgm.scan(before)[-1][0]
    assert target.read_bytes()[:kept] == before[:kept]
    back = xr.open_dataset(target, engine="tgm").load()
    xr.testing.assert_equal(back.t2m, ds.t2m)
    np.testing.assert_array_equal(back.sp.values, extra.sp.values)
    assert back.sp.dims == ("lat", "lon") and back.sp.attrs["units"] == "hPa"
    assert back.attrs["title"] == ds.attrs["title"]  # the archive keeps its root attributes
    appended = target.read_bytes()
    with pytest.raises(tgm.InvalidArgumentError, match="already in"), TgmStore(target, mode="a") as store:
        extra.rename(sp="msl").assign_coords(lat=ds.lat).to_zarr(store, mode="a", zarr_format=3,
                                                                 consolidated=False)
    assert target.read_bytes() == appended  # a refused append writes nothing


def test_nothing_reaches_the_file_before_close_nor_after_a_failure(path):
    before = path.read_bytes()
    store = TgmStore(path, mode="w")
    g = zarr.open_group(store=store, mode="w", zarr_format=3)
    g.create_array("s", shape=(2,), dtype="float64")[:] = [1.0, 2.0]
    assert path.read_bytes() == before
    store.close()
    np.testing.assert_array_equal(xr.open_dataset(path, engine="tgm").s.values, [1.0, 2.0])

    with pytest.raises(RuntimeError, match="interrupted"):
        with TgmStore(path, mode="a") as store:
            g = zarr.open_group(store=store, mode="a", zarr_format=3)
            g.create_array("half", shape=(2,), dtype="float64")[:] = [3.0, 4.0]
            raise RuntimeError("interrupted")
    assert "half" not in xr.open_dataset(path, engine="tgm")

    bad = path.parent / "bad.tgm"
    store = TgmStore(bad, mode="w")
    asyncio.run(store.set("s/c/0", zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(b"x")))
    with pytest.raises(tgm.InvalidArgumentError, match="without their array metadata"):
        store.close()
    assert not bad.exists()
    with pytest.raises(tgm.InvalidArgumentError, match="flat group"):
        asyncio.run(TgmStore(bad, mode="w").set("g/h/zarr.json", zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(b"{}")))
