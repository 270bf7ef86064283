"""``tgm.zarr.TgmStore`` read by zarr-python 3 (PyPI): ``zarr.open_group``
gives one array per variable, one chunk per object, with the values tgm
decodes; xarray's zarr engine gives the dataset the tgm engine gives; the
store is read-only; a URL works (nginx on loopback)."""

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
    g = zarr.open_group(store=store, mode="r")
    with pytest.raises(ValueError, match="read-only"):
        g["t"][0, 0] = np.zeros((4, 5))
    assert store.read_only


def test_missing_keys_and_chunks_out_of_range(path):
    import asyncio

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
