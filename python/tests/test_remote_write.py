"""Writing archives to object storage from Python (``spec/remote.md`` §7)
against a real S3 server on loopback: s3s-fs, which .ci/remote.sh
installs (these tests skip, saying so, when it is absent). s3s-fs keeps
each object as a file in the bucket's directory, so a test sees exactly
what the store holds."""

import pathlib

import numpy as np
import pytest

import tgm
from tgm import _converters

from conftest import desc
from test_remote import s3, s3s_fs  # noqa: F401 (the server fixture)

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRIB = ROOT / "fuzz" / "corpus" / "weather_grib_scan"
NIFTI = ROOT / "fuzz" / "corpus" / "medical_nifti"


def options(endpoint):
    return {
        "endpoint": endpoint,
        "allow_http": True,
        "region": "us-east-1",
        "access_key_id": "ak",
        "secret_access_key": "sk",
    }


def big_message(i, n=1 << 20):
    """A message of ``n`` float64 values (8 MiB for the default ``n``)."""
    a = np.arange(n, dtype="float64") + i
    return tgm.encode({"base": [{"i": i}]}, [(desc([n], "float64"), a)]), a


def leftovers(bucket):
    """Files in the bucket's directory other than finished objects (s3s-fs
    keeps multipart parts beside the objects until completed or aborted)."""
    return sorted(p.name for p in bucket.parent.rglob("*") if p.is_file() and p.parent != bucket)


def test_create_streams_messages_into_an_object_that_appears_when_closed(s3):
    endpoint, bucket = s3
    url = "s3://tgm-test/streamed.tgm"
    arrays = []
    with tgm.TensogramFile.create(url, options(endpoint)) as w:
        assert w.is_remote() and w.source() == url
        for i in range(6):
            msg, a = big_message(i)
            w.append_bytes(msg)
            arrays.append(a)
        # Parts went out while the archive was written, none of it is at
        # the key yet.
        assert w.acknowledged() > 0
        assert not (bucket / "streamed.tgm").exists()
    assert w.bytes == (bucket / "streamed.tgm").stat().st_size
    assert w.etag
    f = tgm.TensogramFile.open(bucket / "streamed.tgm")
    assert len(f) == 6
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(f.object_array(i, 0), a)
    # The archive ends with its catalogue (spec/files.md §9.4).
    tail = tgm.TensogramFile.open_remote(url, options(endpoint))
    assert tail.message_count() == 6
    assert tgm.scan((bucket / "streamed.tgm").read_bytes())[-1][0] > sum(
        len(big_message(i)[0]) for i in range(6)
    ) - 1


def test_an_exception_aborts_the_upload_and_leaves_nothing(s3):
    endpoint, bucket = s3
    url = "s3://tgm-test/aborted.tgm"
    with pytest.raises(RuntimeError, match="boom"):
        with tgm.TensogramFile.create(url, options(endpoint)) as w:
            for i in range(3):
                w.append_bytes(big_message(i)[0])
            raise RuntimeError("boom")
    assert not (bucket / "aborted.tgm").exists()
    assert leftovers(bucket) == []
    with pytest.raises(tgm.InvalidArgumentError, match="finished or aborted"):
        w.append_bytes(b"x")


def test_an_existing_object_is_kept_unless_overwrite(s3):
    endpoint, bucket = s3
    (bucket / "kept.tgm").write_bytes(b"old")
    url = "s3://tgm-test/kept.tgm"
    with pytest.raises(OSError) as e:
        tgm.TensogramFile.create(url, options(endpoint))
    assert e.value.kind == "already_exists" and url in str(e.value)
    assert (bucket / "kept.tgm").read_bytes() == b"old"
    msg, a = big_message(0, 16)
    with tgm.TensogramFile.create(url, options(endpoint), overwrite=True) as w:
        w.append_bytes(msg)
    np.testing.assert_array_equal(tgm.TensogramFile.open(bucket / "kept.tgm").object_array(0, 0), a)


def same_archive(a, b):
    """Two archives hold the same messages (each message's provenance, a
    time and an id, aside) and end alike with a catalogue."""
    ra, rb = tgm.scan(a.read_bytes()), tgm.scan(b.read_bytes())
    # The data messages' sizes; the catalogues' vary with the provenance
    # they compress.
    assert len(ra) == len(rb)
    assert [n for _, n in ra][:-1] == [n for _, n in rb][:-1]
    fa, fb = tgm.TensogramFile.open(a), tgm.TensogramFile.open(b)
    assert len(fa) == len(fb)
    for i in range(len(fa)):
        ma, mb = fa.decode_message(i), fb.decode_message(i)
        assert repr(ma.metadata.base) == repr(mb.metadata.base)  # NaN attributes
        for (da, xa), (db, xb) in zip(ma.objects, mb.objects):
            np.testing.assert_array_equal(xa, xb)


def test_to_tgm_writes_what_a_local_file_gets(s3, tmp_path):
    xr = pytest.importorskip("xarray")
    endpoint, bucket = s3
    ds = xr.Dataset(
        {"t": (("y", "x"), np.arange(12, dtype="float32").reshape(3, 4))},
        attrs={"title": "remote"},
    )
    tgm.to_tgm(ds, tmp_path / "local.tgm")
    got = tgm.to_tgm(ds, "s3://tgm-test/ds.tgm", storage_options=options(endpoint))
    same_archive(bucket / "ds.tgm", tmp_path / "local.tgm")
    assert got["bytes"] == (bucket / "ds.tgm").stat().st_size and got["etag"]
    with pytest.raises(OSError) as e:
        tgm.to_tgm(ds, "s3://tgm-test/ds.tgm", storage_options=options(endpoint))
    assert e.value.kind == "already_exists"
    ds2 = ds * 2
    tgm.to_tgm(ds2, "s3://tgm-test/ds.tgm", force=True, storage_options=options(endpoint))
    back = xr.open_dataset(bucket / "ds.tgm", engine="tgm")
    np.testing.assert_array_equal(back["t"].values, ds2["t"].values)
    with pytest.raises(TypeError, match="storage_options"):
        tgm.to_tgm(ds, tmp_path / "other.tgm", storage_options=options(endpoint))


def test_a_failing_to_tgm_leaves_no_object(s3):
    xr = pytest.importorskip("xarray")
    endpoint, bucket = s3
    ds = xr.Dataset({"s": (("x",), np.array(["a", "b"], dtype=object))})
    with pytest.raises(Exception):
        tgm.to_tgm(ds, "s3://tgm-test/bad.tgm", storage_options=options(endpoint))
    assert not (bucket / "bad.tgm").exists()


@pytest.mark.skipif(not _converters.has("nifti"), reason="built without the 'nifti' feature")
def test_convert_nifti_writes_its_archive_to_a_bucket(s3, tmp_path):
    endpoint, bucket = s3
    src = NIFTI / "plain.nii"
    got = tgm.convert_nifti(src, output="s3://tgm-test/vol.tgm", storage_options=options(endpoint))
    local = tgm.convert_nifti(src, output=tmp_path / "vol.tgm")
    same_archive(bucket / "vol.tgm", tmp_path / "vol.tgm")
    assert got["bytes"] == local["bytes"] and got["etag"] and local["etag"] is None
    with pytest.raises(TypeError, match="output"):
        tgm.convert_nifti(src, storage_options=options(endpoint))


@pytest.mark.skipif(not _converters.has("nifti"), reason="built without the 'nifti' feature")
def test_to_nifti_writes_the_image_to_a_bucket_as_to_a_local_path(s3, tmp_path):
    endpoint, bucket = s3
    archive = tmp_path / "vol.tgm"
    tgm.convert_nifti(NIFTI / "plain.nii", output=archive)
    for name in ["back.nii", "back.nii.gz"]:
        url = f"s3://tgm-test/{name}"
        got = tgm.to_nifti(archive, url, storage_options=options(endpoint))
        local = tgm.to_nifti(archive, tmp_path / name)
        assert (bucket / name).read_bytes() == (tmp_path / name).read_bytes()
        assert got["target"] == url and got["bytes"] == local["bytes"] and got["etag"]
        assert local["etag"] is None
        with pytest.raises(tgm.TensogramError, match="already exists"):
            tgm.to_nifti(archive, url, storage_options=options(endpoint))
        tgm.to_nifti(archive, url, storage_options=options(endpoint), force=True)
    with pytest.raises(TypeError, match="storage_options"):
        tgm.to_nifti(archive, tmp_path / "x.nii", storage_options=options(endpoint))


@pytest.mark.skipif(not _converters.has("netcdf"), reason="built without the 'netcdf' feature")
def test_to_netcdf_writes_the_file_to_a_bucket_as_to_a_local_path(s3, tmp_path):
    endpoint, bucket = s3
    messages = tgm.convert_netcdf(ROOT / "fuzz" / "corpus" / "weather_netcdf_classic" / "classic.nc")
    got = tgm.to_netcdf(messages, "s3://tgm-test/back.nc", storage_options=options(endpoint))
    local = tgm.to_netcdf(messages, tmp_path / "back.nc")
    assert got["bytes"] == (bucket / "back.nc").stat().st_size and got["etag"]
    assert local["bytes"] == (tmp_path / "back.nc").stat().st_size
    (tmp_path / "fetched.nc").write_bytes((bucket / "back.nc").read_bytes())
    for a, b in zip(tgm.convert_netcdf(tmp_path / "fetched.nc"), tgm.convert_netcdf(tmp_path / "back.nc")):
        assert [x[1].tobytes() for x in tgm.decode(a).objects] == [x[1].tobytes() for x in tgm.decode(b).objects]
    with pytest.raises(tgm.TensogramError, match="already exists"):
        tgm.to_netcdf(messages, "s3://tgm-test/back.nc", storage_options=options(endpoint))


@pytest.mark.skipif(not tgm.__has_grib__, reason="built without the 'grib' feature")
def test_convert_grib_into_a_bucket_lists_as_the_local_conversion(s3, tmp_path):
    endpoint, bucket = s3
    src = GRIB / "two-messages.grib"
    tgm.convert_grib(src, split=True, output="s3://tgm-test/g.tgm", storage_options=options(endpoint))
    tgm.convert_grib(src, split=True, output=tmp_path / "g.tgm")
    same_archive(bucket / "g.tgm", tmp_path / "g.tgm")
    f = tgm.TensogramFile.open_remote("s3://tgm-test/g.tgm", options(endpoint))
    assert f.message_count() == 2


def test_a_zarr_store_writes_to_a_bucket(s3):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    from tgm.zarr import TgmStore

    endpoint, bucket = s3
    url = "s3://tgm-test/z.tgm"
    ds = xr.Dataset({"t": (("y", "x"), np.arange(6, dtype="float64").reshape(2, 3))})
    with TgmStore(url, mode="w", storage_options=options(endpoint)) as store:
        ds.to_zarr(store, zarr_format=3, consolidated=False)
        assert not (bucket / "z.tgm").exists()
    back = xr.open_dataset(bucket / "z.tgm", engine="tgm")
    np.testing.assert_array_equal(back["t"].values, ds["t"].values)
    with pytest.raises(OSError) as e:
        with TgmStore(url, mode="w", storage_options=options(endpoint)) as store:
            ds.to_zarr(store, zarr_format=3, consolidated=False)
    assert e.value.kind == "already_exists"
    with pytest.raises(tgm.InvalidArgumentError, match="cannot append"):
        TgmStore(url, mode="a", storage_options=options(endpoint))
