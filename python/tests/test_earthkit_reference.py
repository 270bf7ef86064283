"""The interface the reference's earthkit plugin suite
(``python/tensogram-earthkit/tests`` in ecmwf/tensogram 0.24.0) checks, run
against tgm's plugin: the source name is ``tgm`` (the reference's is
``tensogram``), the fixtures are this file's own (a MARS archive of two
fields and two coordinate objects, a non-MARS archive of two variables).
Tests of the reference's private modules (``TensogramFileReader``,
``_compute_strides``, the reader-shaped modules) have no counterpart;
python/COMPAT.md lists them and the other differences."""

import io

import numpy as np
import pytest

import tgm
from conftest import desc
from test_remote import nginx  # noqa: F401  (the nginx fixture: skips without nginx or the remote feature)

ekd = pytest.importorskip("earthkit.data", reason="earthkit-data is not installed (pip install earthkit-data)")
xr = pytest.importorskip("xarray")
if not ekd.__version__.startswith("1."):
    pytest.skip(f"the tgm plugin targets earthkit-data 1.x, found {ekd.__version__}", allow_module_level=True)

from earthkit.data.encoders import create_encoder  # noqa: E402
from earthkit.data.core.fieldlist import FieldList  # noqa: E402

T2 = np.full((4, 6), 273.15, np.float32) + np.arange(24, dtype=np.float32).reshape(4, 6)
TP = np.linspace(0.0, 1.0, 24, dtype=np.float32).reshape(4, 6)


def mars_bytes():
    mars = {"class": "od", "stream": "oper", "type": "fc", "date": "2025-01-01", "time": "0000",
            "levtype": "sfc"}
    base = [{"name": "latitude"}, {"name": "longitude"},
            {"mars": {**mars, "param": "2t", "step": 0}},
            {"mars": {**mars, "param": "tp", "step": 6}}]
    objects = [(desc([4], "float32"), np.linspace(60, 30, 4, dtype=np.float32)),
               (desc([6], "float32"), np.linspace(-10, 20, 6, dtype=np.float32)),
               (desc([4, 6], "float32"), T2), (desc([4, 6], "float32"), TP)]
    return tgm.encode({"base": base, "_extra_": {"title": "MARS"}}, objects)


def nonmars_bytes():
    base = [{"name": "a", "dim_names": ["y", "x"]}, {"name": "b", "dim_names": ["y", "x"]}]
    objects = [(desc([3, 5], "float64"), np.arange(15.0).reshape(3, 5)),
               (desc([3, 5], "float64"), -np.arange(15.0).reshape(3, 5))]
    return tgm.encode({"base": base}, objects)


def one_object_bytes():
    return tgm.encode({"base": [{"name": "v", "dim_names": ["n"]}]},
                      [(desc([7], "float32"), np.arange(7, dtype=np.float32))])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ekref")
    (d / "mars.tgm").write_bytes(mars_bytes())
    (d / "nonmars.tgm").write_bytes(nonmars_bytes())
    return d / "mars.tgm", d / "nonmars.tgm"


def by_param(fl):
    return {f.get("labels.mars")["param"]: f for f in fl}


# test_source.py


def test_source_entry_point_and_resolution(files):
    import entrypoints

    assert "tgm" in {e.name for e in entrypoints.get_group_all("earthkit.data.sources")}
    from earthkit.data.sources import get_source

    assert type(get_source("tgm", str(files[0]))).__module__.startswith("tgm._earthkit.")


def test_smoke_and_missing_file(files, tmp_path):
    assert hasattr(ekd.from_source("tgm", str(files[0])), "to_fieldlist")
    assert hasattr(ekd.from_source("tgm", str(files[1])), "to_xarray")
    with pytest.raises(FileNotFoundError):
        ekd.from_source("tgm", str(tmp_path / "does_not_exist.tgm"))


# test_mars_path.py


def test_mars_fieldlist_skips_coordinates(files):
    fl = ekd.from_source("tgm", str(files[0])).to_fieldlist()
    assert isinstance(fl, FieldList)
    assert len(fl) == 2
    assert all(f.shape == (4, 6) for f in fl)
    np.testing.assert_array_equal(by_param(fl)["2t"].to_numpy(), T2)
    np.testing.assert_array_equal(by_param(fl)["tp"].to_numpy(), TP)


def test_mars_keys_get_and_sel(files):
    fl = ekd.from_source("tgm", str(files[0])).to_fieldlist()
    assert {f.get("labels.mars")["param"] for f in fl} == {"2t", "tp"}
    assert sorted(f.get("labels.mars")["step"] for f in fl) == [0, 6]
    sub = fl.sel(**{"parameter.variable": "2t"})
    assert len(sub) == 1 and sub[0].get("labels.mars")["param"] == "2t"
    assert len(fl.sel(**{"parameter.variable": "nonexistent"})) == 0
    # ISO dates and "0000" times become earthkit's time component
    assert [str(f.get("time.valid_datetime")) for f in fl] == ["2025-01-01 00:00:00", "2025-01-01 06:00:00"]


def test_data_object_sel_len_and_iteration_are_its_fieldlists(files):
    data = ekd.from_source("tgm", str(files[0]))
    assert len(data) == 2
    assert sorted(f.get("labels.mars")["param"] for f in data) == ["2t", "tp"]
    sub = data.sel(**{"parameter.variable": "tp"})
    assert len(sub) == 1
    np.testing.assert_array_equal(sub[0].to_numpy(), TP)
    with pytest.raises(TypeError, match="no MARS metadata"):
        len(ekd.from_source("tgm", str(files[1])))


def test_mars_to_xarray_is_the_backends(files):
    ds = ekd.from_source("tgm", str(files[0])).to_xarray()
    backend = xr.open_dataset(files[0], engine="tgm")
    assert set(ds.data_vars) == set(backend.data_vars)
    for name in ds.data_vars:
        np.testing.assert_array_equal(ds[name].values, backend[name].values, err_msg=name)


def test_nonmars_to_fieldlist_names_mars(files):
    with pytest.raises(NotImplementedError, match="MARS"):
        ekd.from_source("tgm", str(files[1])).to_fieldlist()


# test_nonmars_path.py


def test_nonmars_to_xarray_matches_backend(files):
    ds = ekd.from_source("tgm", str(files[1])).to_xarray()
    assert isinstance(ds, xr.Dataset)
    xr.testing.assert_identical(ds, xr.open_dataset(files[1], engine="tgm"))


def test_to_numpy_of_several_variables_is_refused(files):
    with pytest.raises(ValueError, match="single-variable"):
        ekd.from_source("tgm", str(files[1])).to_numpy()


def test_nonmars_to_numpy_of_one_object():
    arr = ekd.from_source("tgm", one_object_bytes()).to_numpy()
    np.testing.assert_array_equal(arr, np.arange(7, dtype=np.float32))


# test_memory.py and test_streaming.py


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview, io.BytesIO])
def test_bytes_and_streams_match_the_file(files, wrap):
    mars, nonmars = files
    via_file = ekd.from_source("tgm", str(nonmars)).to_xarray()
    xr.testing.assert_identical(ekd.from_source("tgm", wrap(nonmars.read_bytes())).to_xarray(), via_file)
    a = by_param(ekd.from_source("tgm", wrap(mars.read_bytes())).to_fieldlist())
    b = by_param(ekd.from_source("tgm", str(mars)).to_fieldlist())
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k].to_numpy(), b[k].to_numpy())


def test_memory_source_recognises_tgm():
    data = ekd.from_source("memory", nonmars_bytes())
    assert set(data.to_xarray().data_vars) == {"a", "b"}
    assert "fieldlist" not in data.available_types
    fl = ekd.from_source("memory", mars_bytes()).to_fieldlist()
    assert sorted(by_param(fl)) == ["2t", "tp"]


def test_garbage_bytes_are_refused():
    with pytest.raises(ValueError):
        ekd.from_source("tgm", b"\x00\x00\x00")


def test_streams_through_the_tgm_and_the_stream_source():
    data = ekd.from_source("tgm", io.BufferedReader(io.BytesIO(nonmars_bytes())))
    assert set(data.to_xarray().data_vars) == {"a", "b"}
    # earthkit's own stream source finds tgm's stream reader by the magic:
    # its fields one by one, or all of them
    stream = ekd.from_source("stream", io.BufferedReader(io.BytesIO(mars_bytes())))
    assert [f.get("labels.mars")["param"] for f in stream.to_fieldlist()] == ["2t", "tp"]
    stream = ekd.from_source("stream", io.BufferedReader(io.BytesIO(mars_bytes())))
    fl = stream.to_fieldlist(read_all=True)
    np.testing.assert_array_equal(fl.sel(**{"parameter.variable": "tp"})[0].to_numpy(), TP)


# test_array_namespace.py


def test_to_numpy_dtype_and_flatten(files):
    fl = ekd.from_source("tgm", str(files[0])).to_fieldlist()
    assert fl.to_numpy().shape == (2, 4, 6)
    assert fl.to_numpy(dtype=np.float64).dtype == np.float64
    assert fl.to_numpy(flatten=True).shape == (2, 24)
    assert fl[0].to_numpy(flatten=True).shape == (24,)
    np.testing.assert_array_equal(fl.values, fl.to_numpy(flatten=True))


# test_encoder.py


def test_encoder_entry_point_and_resolution():
    import entrypoints

    assert "tgm" in {e.name for e in entrypoints.get_group_all("earthkit.data.encoders")}
    assert type(create_encoder("tgm")).__module__.startswith("tgm._earthkit.")


def test_fieldlist_round_trip_keeps_values_and_mars_keys(files, tmp_path):
    original = ekd.from_source("tgm", str(files[0])).to_fieldlist()
    out = tmp_path / "rt.tgm"
    original.to_target("file", str(out), encoder="tgm")
    assert out.read_bytes()[:8] == b"TENSOGRM"
    restored = ekd.from_source("tgm", str(out)).to_fieldlist()
    assert len(restored) == len(original)
    a, b = by_param(restored), by_param(original)
    for p in b:
        np.testing.assert_array_equal(a[p].to_numpy(), b[p].to_numpy(), err_msg=p)
        assert a[p].get("labels.mars") == b[p].get("labels.mars")


def test_to_bytes_matches_to_file(files, tmp_path):
    fl = ekd.from_source("tgm", str(files[0])).to_fieldlist()
    via_bytes = create_encoder("tgm").encode(fl).to_bytes()
    fl.to_target("file", str(tmp_path / "d.tgm"), encoder="tgm")
    via_file = (tmp_path / "d.tgm").read_bytes()
    # the same message (one object per field) but for the encoding time in
    # its provenance
    a, b = list(tgm.iter_messages(via_bytes)), list(tgm.iter_messages(via_file))
    assert len(a) == len(b) == 1 and len(a[0][1]) == 2
    for (ma, oa), (mb, ob) in zip(a, b):
        assert [x["mars"] for x in ma.base] == [x["mars"] for x in mb.base]
        for (_, va), (_, vb) in zip(oa, ob):
            np.testing.assert_array_equal(va, vb)


def test_xarray_dataset_through_the_encoder(files, tmp_path):
    ds = ekd.from_source("tgm", str(files[1])).to_xarray()
    create_encoder("tgm").encode(ds).to_file(str(tmp_path / "x.tgm"))
    restored = ekd.from_source("tgm", str(tmp_path / "x.tgm")).to_xarray()
    assert set(restored.data_vars) == set(ds.data_vars)
    for name in ds.data_vars:
        np.testing.assert_array_equal(restored[name].values, ds[name].values)


def test_encoded_data_of_one_payload_and_its_metadata(tmp_path):
    from tgm._earthkit import TgmEncodedData

    msg = one_object_bytes()
    ed = TgmEncodedData(msg, metadata={"a": 1})
    assert ed.to_bytes() == msg and ed.get("messages") == [msg]
    ed.to_file(tmp_path / "one.tgm")
    assert (tmp_path / "one.tgm").read_bytes() == msg
    meta = ed.get()
    meta["a"] = 2
    assert ed.get() == {"a": 1} and ed.get("a") == 1 and ed.get("b", "none") == "none"
    assert TgmEncodedData([msg, msg]).get() == {}


def test_source_close_keeps_the_file(files):
    source = ekd.from_source("tgm", str(files[1]))
    source.close()
    source.close()
    assert files[1].exists()
    np.testing.assert_array_equal(source.to_xarray()["a"].values, np.arange(15.0).reshape(3, 5))


def test_encode_without_data_is_refused():
    with pytest.raises(ValueError, match="requires a data object"):
        create_encoder("tgm").encode(data=None)


# test_remote.py


def test_http_matches_local_and_takes_storage_options(files, nginx):
    mars_url = nginx.put("mars.tgm", files[0].read_bytes())
    nonmars_url = nginx.put("nonmars.tgm", files[1].read_bytes())
    xr.testing.assert_identical(ekd.from_source("tgm", nonmars_url).to_xarray(),
                                ekd.from_source("tgm", str(files[1])).to_xarray())
    a = by_param(ekd.from_source("tgm", mars_url).to_fieldlist())
    b = by_param(ekd.from_source("tgm", str(files[0])).to_fieldlist())
    for p in b:
        np.testing.assert_array_equal(a[p].to_numpy(), b[p].to_numpy())
    data = ekd.from_source("tgm", nonmars_url, storage_options={"timeout": "10s"})
    assert data.storage_options == data._source.storage_options == {"timeout": "10s"}
    assert tgm.is_remote_url(nonmars_url) and not tgm.is_remote_url(str(files[1]))
