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
    assert ds.t.dims == ("step", "levelist", "lat", "lon")
    assert ds.step.values.tolist() == [np.timedelta64(s, "h").astype("timedelta64[ns]") for s in STEPS]
    assert ds.levelist.values.tolist() == list(LEVELS)
    assert ds.t.attrs["MARS_class"] == "od"
    for step in STEPS:
        for level in LEVELS:
            got = ds.z.sel(step=np.timedelta64(step, "h"), levelist=level).values
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
    assert ds.t.chunks == ((1, 1, 1), (1, 1), (4,), (5,))
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


def test_bitmask_variables_are_bool_arrays_of_the_declared_shape(tmp_path):
    rng = np.random.default_rng(7)
    flags = rng.random(16) < 0.5
    grid = rng.random((3, 5)) < 0.3
    p = tmp_path / "masks.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append(
            {"base": [{"name": "flags"}, {"name": "grid"}, {"name": "rle"}]},
            [
                (desc([16], "bitmask"), np.packbits(flags)),
                (desc([3, 5], "bitmask"), np.packbits(grid.reshape(-1))),
                (desc([3, 5], "bitmask", compression="rle"), np.packbits(grid.reshape(-1))),
            ],
        )
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.flags.dtype == bool and ds.flags.shape == (16,)
    assert ds.flags.values.tolist() == flags.tolist()
    assert int(ds.flags.sum()) == int(flags.sum())
    for name in ("grid", "rle"):
        assert ds[name].dtype == bool and ds[name].shape == (3, 5)
        assert ds[name].values.tolist() == grid.tolist()
        assert ds[name][1, 2:4].values.tolist() == grid[1, 2:4].tolist()
        assert ds[name].attrs["tgm_stored_dtype"] == "bitmask"


def test_bfloat16_variables_are_float_values_naming_the_stored_type(tmp_path):
    values = np.array([1.0, -2.5, 3.140625, 0.0, 65280.0, -0.0078125], dtype=np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)
    p = tmp_path / "bf16.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append({"base": [{"name": "b"}]}, [(desc([2, 3], "bfloat16"), bits.reshape(2, 3))])
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.b.attrs["tgm_stored_dtype"] == "bfloat16"
    try:
        import ml_dtypes

        assert ds.b.dtype == np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        assert ds.b.dtype == np.float32
    assert ds.b.values.astype(np.float32).tolist() == values.reshape(2, 3).tolist()
    assert ds.b[1, 1:].values.astype(np.float32).tolist() == values[4:].tolist()


def test_netcdf_attributes_and_cf_decoding(tmp_path):
    p = tmp_path / "nc.tgm"
    packed = np.array([[0, 10, -1], [4, -1, 2]], dtype=np.int16)
    with tgm.TensogramFile.create(p) as f:
        f.append(
            {
                "base": [
                    {
                        "name": "time",
                        "dim_names": ["time"],
                        "netcdf": {"attrs": {"units": "hours since 2000-01-01", "calendar": "standard"}},
                        "cf": {"units": "hours since 2000-01-01", "calendar": "standard"},
                    },
                    {
                        "name": "t2m",
                        "dim_names": ["time", "x"],
                        "netcdf": {
                            "attrs": {"units": "K", "scale_factor": 0.5, "add_offset": 100.0, "_FillValue": -1},
                        },
                        "cf": {"units": "K", "standard_name": "air_temperature"},
                    },
                    {
                        "name": "unpacked",
                        "dim_names": ["time", "x"],
                        "netcdf": {"attrs": {"scale_factor": 0.5, "add_offset": 100.0}, "unpacked": True},
                    },
                ],
                "netcdf": {"attrs": {"title": "a test", "Conventions": "CF-1.8"}},
            },
            [
                (desc([2], "int64"), np.array([0, 6], dtype=np.int64)),
                (desc([2, 3], "int16"), packed),
                (desc([2, 3], "float64"), np.full((2, 3), 7.0)),
            ],
        )
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.attrs == {"title": "a test", "Conventions": "CF-1.8"}
    assert ds.time.dtype == np.dtype("datetime64[ns]")
    assert ds.time.values.tolist() == np.array(["2000-01-01T00", "2000-01-01T06"], "datetime64[ns]").tolist()
    assert ds.t2m.attrs["units"] == "K" and ds.t2m.attrs["standard_name"] == "air_temperature"
    want = np.where(packed == -1, np.nan, packed * 0.5 + 100.0)
    np.testing.assert_array_equal(ds.t2m.values, want)
    assert "scale_factor" not in ds.unpacked.attrs and ds.unpacked.values.tolist() == [[7.0] * 3] * 2
    raw = xr.open_dataset(p, engine="tgm", mask_and_scale=False, decode_times=False)
    assert raw.t2m.dtype == np.int16 and raw.t2m.values.tolist() == packed.tolist()
    assert raw.t2m.attrs["scale_factor"] == 0.5
    assert raw.time.values.tolist() == [0, 6] and raw.time.attrs["units"] == "hours since 2000-01-01"
    assert set(xr.open_dataset(p, engine="tgm", drop_variables=["t2m"]).data_vars) == {"unpacked"}


def test_grib_short_names_and_attributes(tmp_path):
    p = tmp_path / "grib.tgm"
    with tgm.TensogramFile.create(p) as f:
        for step in (0, 6):
            grib = {"shortName": "t", "paramId": 130, "units": "K", "typeOfLevel": "surface", "referenceValue": 200.0 + step}
            f.append(
                {"base": [{"mars": {"param": "130", "step": step}, "grib": grib}]},
                [(desc([2, 2], "float64"), np.full((2, 2), float(step)))],
            )
    ds = xr.open_dataset(p, engine="tgm")
    assert list(ds.data_vars) == ["t"]
    assert ds.t.dims == ("step", "t_dim_0", "t_dim_1")
    assert ds.t.attrs["units"] == "K"
    assert ds.t.attrs["GRIB_shortName"] == "t" and ds.t.attrs["GRIB_paramId"] == 130
    assert "GRIB_referenceValue" not in ds.t.attrs
    assert ds.t.sel(step="6h").values.tolist() == [[6.0, 6.0], [6.0, 6.0]]


def test_regular_grids_share_latitude_longitude_dimensions(tmp_path):
    geo = {
        "gridType": "regular_ll", "Ni": 3, "Nj": 2,
        "latitudeOfFirstGridPointInDegrees": 10.0, "latitudeOfLastGridPointInDegrees": 0.0,
        "longitudeOfFirstGridPointInDegrees": 0.0, "longitudeOfLastGridPointInDegrees": 20.0,
    }
    reduced = {"gridType": "reduced_gg", "N": 1, "numberOfPoints": 4}
    p = tmp_path / "grid.tgm"
    with tgm.TensogramFile.create(p) as f:
        for short, value in (("t", 1.0), ("z", 2.0)):
            f.append(
                {"base": [{"mars": {"param": short}, "grib": {"shortName": short}, "geography": geo}]},
                [(desc([2, 3], "float64"), np.full((2, 3), value))],
            )
        f.append(
            {"base": [{"mars": {"param": "q"}, "grib": {"shortName": "q"}, "geography": reduced}]},
            [(desc([4], "float64"), np.zeros(4))],
        )
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.t.dims == ds.z.dims == ("latitude", "longitude")
    assert ds.q.dims == ("values",)
    assert ds.latitude.values.tolist() == [10.0, 0.0]
    assert ds.longitude.values.tolist() == [0.0, 10.0, 20.0]
    assert ds.latitude.attrs["units"] == "degrees_north"
    prod = ds.t * ds.z
    assert prod.shape == (2, 3) and prod.values.tolist() == [[2.0] * 3] * 2
    assert float(ds.t.sel(latitude=0.0, longitude=10.0)) == 1.0


def test_mars_times_as_cfgrib_shows_them(tmp_path):
    p = tmp_path / "times.tgm"
    with tgm.TensogramFile.create(p) as f:
        for step in (0, 6, 12):
            mars = {"param": "2t", "date": 20240229, "time": 1200, "step": step}
            f.append({"base": [{"mars": mars}]}, [(desc([2], "float64"), np.full(2, float(step)))])
    ds = xr.open_dataset(p, engine="tgm")
    assert ds.step.dtype == np.dtype("timedelta64[ns]")
    assert ds.time.values == np.datetime64("2024-02-29T12:00", "ns")
    assert ds.valid_time.dims == ("step",)
    assert ds.valid_time.values.tolist() == np.array(
        ["2024-02-29T12:00", "2024-02-29T18:00", "2024-03-01T00:00"], "datetime64[ns]"
    ).tolist()
    assert ds["2t"].sel(step="12h").values.tolist() == [12.0, 12.0]


def test_filter_by_keys_and_open_datasets_arguments(archive):
    ds = xr.open_dataset(archive, engine="tgm", filter_by_keys={"step": 6, "param": ["z"]})
    assert set(ds.data_vars) == {"z"}
    assert ds.z.dims == ("levelist", "lat", "lon")
    np.testing.assert_allclose(ds.z.sel(levelist=850).values, field("z", 6, 850), atol=1e-5)
    (one,) = tgm.open_datasets(archive, filter_by_keys={"levelist": "500"})
    assert one.t.dims == ("step", "lat", "lon")
    with pytest.raises(TypeError, match="nonsense"):
        tgm.open_datasets(archive, nonsense=1)
