"""The xarray backend: dims from dim_names, MARS keys as coordinates,
hypercube stacking, lazy reads, decode_range for slices."""

import numpy as np
import pytest

import tgm
from conftest import desc

xr = pytest.importorskip("xarray")

STEPS, LEVELS = (0, 6, 12), (500, 850)


def field(param, step, level):
    return np.arange(20.0).reshape(4, 5) + step * 100 + level + (param == "z") * 10000


@pytest.fixture
def archive(tmp_path):
    p = tmp_path / "fc.tgm"
    with tgm.TensogramFile.create(p) as f:
        for step in STEPS:
            for level in LEVELS:
                for param in ("t", "z"):
                    mars = {"class": "od", "param": param, "step": step, "levelist": level}
                    f.append(
                        {"base": [{"mars": mars, "dim_names": ["lat", "lon"]}]},
                        [(desc([4, 5], "float64", encoding="simple_packing", sp_bits_per_value=32), field(param, step, level))],
                    )
    return p


def test_engine_is_registered():
    assert "tgm" in xr.backends.list_engines()


def test_hypercube(archive):
    ds = xr.open_dataset(archive, engine="tgm")
    assert set(ds.data_vars) == {"t", "z"}
    assert ds.t.dims == ("levelist", "step", "lat", "lon")
    assert ds.step.values.tolist() == list(STEPS)
    assert ds.levelist.values.tolist() == list(LEVELS)
    assert ds.t.attrs["mars.class"] == "od"
    for step in STEPS:
        for level in LEVELS:
            got = ds.z.sel(step=step, levelist=level).values
            np.testing.assert_allclose(got, field("z", step, level), rtol=0, atol=1e-5)


def test_reads_are_lazy_and_slices_use_decode_range(archive, monkeypatch):
    ds = xr.open_dataset(archive, engine="tgm", drop_variables=["z"])
    assert "z" not in ds
    calls = {"range": 0, "full": 0}
    real_range = tgm.TensogramFile.file_decode_range
    real_full = tgm.TensogramFile.object_array

    def count_range(self, *a, **k):
        calls["range"] += 1
        return real_range(self, *a, **k)

    def count_full(self, *a, **k):
        calls["full"] += 1
        return real_full(self, *a, **k)

    monkeypatch.setattr(tgm.TensogramFile, "file_decode_range", count_range)
    monkeypatch.setattr(tgm.TensogramFile, "object_array", count_full)
    row = ds.t.isel(step=2, levelist=1, lat=slice(1, 3), lon=slice(1, 4)).values
    np.testing.assert_allclose(row, field("t", 12, 850)[1:3, 1:4], atol=1e-5)
    assert calls == {"range": 1, "full": 0}
    whole = ds.t.isel(step=0, levelist=0).values
    np.testing.assert_allclose(whole, field("t", 0, 500), atol=1e-5)
    assert calls["full"] == 1


def test_one_dask_chunk_per_object(archive):
    pytest.importorskip("dask")
    ds = xr.open_dataset(archive, engine="tgm", chunks={})
    assert ds.t.chunks == ((1, 1), (1, 1, 1), (4,), (5,))
    expected = np.mean([field("t", s, l) for s in STEPS for l in LEVELS])
    assert abs(float(ds.t.mean().compute()) - expected) < 1e-6


def test_single_objects_and_default_dims(tmp_path):
    p = tmp_path / "plain.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append({"base": [{"name": "a"}, {}]}, [(desc([2, 3], "int32"), np.arange(6, dtype=np.int32).reshape(2, 3)), (desc([4], "uint8"), np.arange(4, dtype=np.uint8))])
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.a.dims == ("a_dim_0", "a_dim_1")
    assert ds.object_0_1.dims == ("object_0_1_dim_0",)
    assert ds.a.values.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert ds.object_0_1.values.tolist() == [0, 1, 2, 3]


def test_incomplete_hypercube_is_refused(tmp_path):
    p = tmp_path / "holes.tgm"
    with tgm.TensogramFile.create(p) as f:
        for step, level in ((0, 500), (6, 850)):
            f.append({"base": [{"mars": {"param": "t", "step": step, "levelist": level}}]}, [(desc([2], "float64"), np.zeros(2))])
    with pytest.raises(tgm.MetadataError):
        xr.open_dataset(p, engine="tgm")
