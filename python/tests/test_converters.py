"""GRIB and NetCDF converters called in process (tgm.convert_grib, to_grib,
convert_netcdf, to_netcdf). The GRIB and NetCDF files are the fuzz corpus's
samples; values are checked against ecCodes' own command-line tools where
installed. Tests of a converter skip when the wheel was built without it;
the error of a missing converter is tested in every build."""

import pathlib
import re
import warnings

import numpy as np
import pytest

import tgm
from tgm import _converters

from conftest import eccodes_values

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRIB = ROOT / "fuzz" / "corpus" / "weather_grib_scan"
NETCDF = ROOT / "fuzz" / "corpus" / "weather_netcdf_classic"
NIFTI = ROOT / "fuzz" / "corpus" / "medical_nifti"

needs_grib = pytest.mark.skipif(
    not tgm.__has_grib__, reason="built without the 'grib' feature (needs libeccodes-dev)"
)
needs_netcdf = pytest.mark.skipif(
    not tgm.__has_netcdf__, reason="built without the 'netcdf' feature (needs libnetcdf-dev)"
)
needs_dicom = pytest.mark.skipif(
    not _converters.has("dicom"), reason="built without the 'dicom' feature"
)
needs_nifti = pytest.mark.skipif(
    not _converters.has("nifti"), reason="built without the 'nifti' feature"
)


def values(messages):
    out = []
    for m in messages:
        out += [a for _, a in tgm.decode(m).objects]
    return out


@needs_grib
def test_convert_grib_gives_ecCodes_values():
    path = GRIB / "two-messages.grib"
    merged = tgm.convert_grib(path)
    split = tgm.convert_grib(str(path), split=True)
    assert len(merged) == 1 and len(split) == 2
    assert all(isinstance(m, bytes) for m in split)
    want = eccodes_values(path)
    got = values(split)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == np.float64
        np.testing.assert_array_equal(g.ravel(), w)
    for g, w in zip(values(merged), got):
        np.testing.assert_array_equal(g, w)


@needs_grib
def test_grib_round_trips_through_to_grib():
    path = GRIB / "grib2.grib"
    messages = tgm.convert_grib(path, encoding="source", compression="auto", all_keys=True)
    back = tgm.to_grib(messages)
    assert back[:4] == b"GRIB"
    again = tgm.convert_grib_buffer(back)
    for a, b in zip(values(messages), values(again)):
        np.testing.assert_array_equal(a, b)
    assert "grib_keys" in tgm.decode_metadata(messages[0]).base[0]


@needs_grib
def test_keys_fields_share_are_stored_once_and_read_back_per_field():
    path = GRIB / "two-messages.grib"
    [shared] = tgm.convert_grib(path)
    [whole] = tgm.convert_grib(path, per_object_metadata=True)
    assert len(shared) < len(whole)
    a, b = tgm.decode_metadata(shared), tgm.decode_metadata(whole)
    assert len(a.base) == len(b.base) == 2
    for i in range(2):
        assert a.base[i]["geography"] == b.base[i]["geography"]
        assert a.base[i]["mars"] == b.base[i]["mars"]
    assert "_shared_" not in a.extra
    for x, y in zip(values([shared]), values([whole])):
        np.testing.assert_array_equal(x, y)


@needs_grib
def test_grib_pipeline_options():
    path = GRIB / "grib2.grib"
    plain = tgm.convert_grib(path)
    packed = tgm.convert_grib(path, encoding="simple_packing", bits=12, compression="zstd", level=3)
    d, arr = tgm.decode(packed[0]).objects[0]
    assert (d.encoding, d.compression) == ("simple_packing", "zstd")
    np.testing.assert_allclose(arr, values(plain)[0], atol=np.ptp(arr) / 2**11)
    assert tgm.decode(tgm.convert_grib(path, hash=None)[0]).objects
    # codes: the fields' own codes, the values ecCodes decodes.
    codes = tgm.convert_grib(path, encoding="codes", compression="auto")
    for a, b in zip(values(codes), values(plain)):
        np.testing.assert_array_equal(a, b)
    assert tgm.decode(codes[0]).objects[0][0].encoding == "simple_packing"
    with pytest.raises(ValueError, match="bits=65 exceeds 64"):
        tgm.convert_grib(path, encoding="simple_packing", bits=65)
    with pytest.raises(ValueError, match='unknown compression "snappy"'):
        tgm.convert_grib(path, compression="snappy")
    with pytest.raises(ValueError, match="only zstd has levels"):
        tgm.convert_grib(path, compression="lz4", level=3)
    with pytest.raises(ValueError, match="grouping"):
        tgm.convert_grib(path, grouping="by_param")
    with pytest.raises(FileNotFoundError):
        tgm.convert_grib(GRIB / "missing.grib")
    with pytest.raises(ValueError):
        tgm.convert_grib_buffer(b"not GRIB at all")
    with pytest.raises(TypeError):
        tgm.convert_grib_buffer(12)


@needs_grib
def test_to_grib_refuses_messages_not_from_grib():
    msg = tgm.encode({}, [({"shape": [2], "dtype": "float64"}, np.zeros(2))])
    with pytest.raises(ValueError):
        tgm.to_grib([msg])
    with pytest.raises(ValueError, match="cannot decode message 0"):
        tgm.to_grib([b"garbage"])


@needs_netcdf
def test_netcdf_stages_follow_the_library_rules_and_pack_around_missing_values(tmp_path):
    """The stages of convert_netcdf are checked and applied by the library
    (spec/pipeline.md §10), as `tgm convert-netcdf` applies them: options
    without effect are refused, and a float64 variable with missing values
    is packed over its present values, its NaN kept."""
    netCDF4 = pytest.importorskip("netCDF4")
    src = tmp_path / "fill.nc"
    with netCDF4.Dataset(src, "w") as ds:
        ds.createDimension("x", 1000)
        v = ds.createVariable("t", "f8", ("x",), fill_value=-9999.0)
        v[:] = np.ma.masked_array(
            1000.0 + np.linspace(0.0, 1.0, 1000), mask=np.arange(1000) % 7 == 0
        )
        i = ds.createVariable("n", "i4", ("x",))
        i[:] = np.arange(1000)
    [msg] = tgm.convert_netcdf(src, encoding="simple_packing", bits=16, compression="zstd")
    t, n = values([msg])
    want = 1000.0 + np.linspace(0.0, 1.0, 1000)
    missing = np.arange(1000) % 7 == 0
    assert np.isnan(t[missing]).all()
    # The quantum of 16 bits over the present values' range (1), not over
    # a range widened to the NaN's stand-in.
    assert np.abs(t[~missing] - want[~missing]).max() <= 1.0 / 2**16
    np.testing.assert_array_equal(n, np.arange(1000))
    [d_t, d_n] = [d for d, _ in tgm.decode(msg).objects]
    assert (d_t.encoding, d_n.encoding) == ("simple_packing", "none")
    assert d_n.compression == "zstd"
    refused = [
        (dict(bits=12), "bits has no effect without encoding='simple_packing'"),
        (dict(compression="lz4", level=3), "level has no effect with compression \"lz4\""),
        (dict(compression="zstd", level=23), "level=23 is outside zstd's levels"),
        (dict(encoding="simple_packing", bits=65), "bits=65 exceeds 64"),
        (dict(compression="snappy"), "unknown compression \"snappy\""),
    ]
    for kwargs, message in refused:
        with pytest.raises(ValueError, match=re.escape(message)):
            tgm.convert_netcdf(src, **kwargs)


@needs_netcdf
def test_netcdf_round_trips_and_never_replaces_a_file(tmp_path):
    src = NETCDF / "classic.nc"
    messages = tgm.convert_netcdf(src)
    by_var = tgm.convert_netcdf(src, split_by="variable", compression="zstd", filter="shuffle")
    assert len(by_var) >= len(messages) == 1
    out = tmp_path / "back.nc"
    tgm.to_netcdf(messages, out)
    again = tgm.convert_netcdf(out)
    for a, b in zip(values(messages), values(again)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(values(messages), values(by_var)):
        np.testing.assert_array_equal(a, b)
    out.write_bytes(b"KEEP")
    with pytest.raises(FileExistsError):
        tgm.to_netcdf(messages, out)
    assert out.read_bytes() == b"KEEP"
    with pytest.raises(ValueError):
        tgm.to_netcdf([b"garbage"], out, force=True)
    assert out.read_bytes() == b"KEEP"
    tgm.to_netcdf(messages, out, force=True)
    assert out.read_bytes()[:4] == b"\x89HDF"
    with pytest.raises(ValueError, match="no messages"):
        tgm.to_netcdf([], tmp_path / "none.nc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.nc"]


@needs_nifti
def test_nifti_round_trips_and_matches_nibabel(tmp_path):
    msg = tgm.convert_nifti(NIFTI / "plain.nii", compression="none")
    (arr,) = values([msg])
    zipped = tgm.convert_nifti(str(NIFTI / "plain.nii"), compression="zstd", level=5)
    assert tgm.decode(zipped).objects[0][0].compression == "zstd"
    np.testing.assert_array_equal(values([zipped])[0], arr)
    archive = tmp_path / "v.tgm"
    archive.write_bytes(msg)
    for name in ("back.nii", "back.nii.gz"):
        tgm.to_nifti(archive, tmp_path / name)
        np.testing.assert_array_equal(values([tgm.convert_nifti(tmp_path / name)])[0], arr)
    assert (tmp_path / "back.nii.gz").read_bytes()[:2] == b"\x1f\x8b"
    before = (tmp_path / "back.nii").read_bytes()
    with pytest.raises(FileExistsError):
        tgm.to_nifti(archive, tmp_path / "back.nii")
    with pytest.raises(ValueError, match="object 3"):
        tgm.to_nifti(archive, tmp_path / "other.nii", object=3)
    assert (tmp_path / "back.nii").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.nii", "back.nii.gz", "v.tgm"]
    with pytest.raises(ValueError, match='unknown compression "lz4"'):
        tgm.convert_nifti(NIFTI / "plain.nii", compression="lz4")
    with pytest.raises(ValueError):
        tgm.convert_nifti(GRIB / "grib2.grib")
    nib = pytest.importorskip("nibabel")
    # The object's shape is NIfTI's dims reversed (C order of the same voxels).
    want = np.asarray(nib.load(str(NIFTI / "plain.nii")).dataobj.get_unscaled()).T
    assert arr.shape == want.shape
    np.testing.assert_array_equal(arr, want)


@needs_nifti
def test_a_nii_gz_is_the_same_file_from_python_and_the_cli(tmp_path):
    """One gzip writer for every door: no time in the header, so the bytes
    depend only on the image (a bucket copy compares equal to a local one
    whenever each is written)."""
    import subprocess
    from test_validate import cli

    archive = tmp_path / "v.tgm"
    archive.write_bytes(tgm.convert_nifti(NIFTI / "plain.nii"))
    tgm.to_nifti(archive, tmp_path / "py.nii.gz")
    subprocess.run([cli(), "to-nifti", str(archive), "--output", str(tmp_path / "cli.nii.gz")], check=True)
    got = (tmp_path / "py.nii.gz").read_bytes()
    assert got[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    assert got == (tmp_path / "cli.nii.gz").read_bytes()


@needs_dicom
def test_dicom_series_round_trips_to_pydicom_pixels(tmp_path):
    pydicom = pytest.importorskip("pydicom")
    from pydicom.data import get_testdata_file

    src = get_testdata_file("CT_small.dcm")
    want = pydicom.dcmread(src).pixel_array
    (msg,) = tgm.convert_dicom(src)
    (arr,) = values([msg])
    assert arr.shape == (1, *want.shape)
    np.testing.assert_array_equal(arr[0], want)
    (anon,) = tgm.convert_dicom(src, deidentify=True, compression="none")
    np.testing.assert_array_equal(values([anon])[0], arr)
    assert "CompressedSamples" in repr(tgm.decode_metadata(msg).base)
    assert "CompressedSamples" not in repr(tgm.decode_metadata(anon).base)
    archive = tmp_path / "ct.tgm"
    archive.write_bytes(msg)
    out = tmp_path / "slices"
    (slice0,) = tgm.to_dicom(archive, out)
    np.testing.assert_array_equal(pydicom.dcmread(slice0).pixel_array, want)
    before = pathlib.Path(slice0).read_bytes()
    with pytest.raises(FileExistsError):
        tgm.to_dicom(archive, out)
    assert pathlib.Path(slice0).read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["slice_00000.dcm"]
    with pytest.raises(ValueError, match="deidentify=True"):
        tgm.convert_dicom(src, retain_full_dates=True)
    with pytest.raises(ValueError):
        tgm.convert_dicom(GRIB / "grib2.grib")


def test_a_converter_not_built_in_names_its_feature(monkeypatch):
    names = ["convert_grib", "to_grib", "convert_netcdf", "to_netcdf", "convert_nifti"]
    for name in names + ["to_nifti", "convert_dicom", "to_dicom"]:
        monkeypatch.delattr(_converters._native, name, raising=False)
    with pytest.raises(RuntimeError, match="without GRIB support.*feature 'grib'"):
        tgm.convert_grib("x.grib")
    with pytest.raises(RuntimeError, match="without GRIB support"):
        tgm.convert_grib_buffer(b"GRIB")
    with pytest.raises(RuntimeError, match="without GRIB support"):
        tgm.to_grib([b""])
    with pytest.raises(RuntimeError, match="without NetCDF support.*feature 'netcdf'"):
        tgm.convert_netcdf("x.nc")
    with pytest.raises(RuntimeError, match="without NetCDF support"):
        tgm.to_netcdf([b""], "x.nc")
    with pytest.raises(RuntimeError, match="without NIfTI support.*feature 'nifti'"):
        tgm.convert_nifti("x.nii")
    with pytest.raises(RuntimeError, match="without NIfTI support"):
        tgm.to_nifti("x.tgm", "x.nii")
    with pytest.raises(RuntimeError, match="without DICOM support.*feature 'dicom'"):
        tgm.convert_dicom("x.dcm")
    with pytest.raises(RuntimeError, match="without DICOM support"):
        tgm.to_dicom("x.tgm", "out")


def same_messages(archive, messages):
    """``archive`` holds ``messages`` (each one's provenance, a time and an
    id, aside), then their catalogue."""
    spans = tgm.scan(archive.read_bytes())
    assert [n for _, n in spans[:-1]] == [len(m) for m in messages]
    f = tgm.TensogramFile.open(archive)
    assert len(f) == len(messages)
    for i, m in enumerate(messages):
        got, want = f.decode_message(i), tgm.decode(m)
        assert repr(got.metadata.base) == repr(want.metadata.base)
        for (_, a), (_, b) in zip(got.objects, want.objects, strict=True):
            np.testing.assert_array_equal(a, b)


@needs_grib
def test_convert_grib_writes_each_message_straight_into_its_output(tmp_path):
    src = GRIB / "two-messages.grib"
    messages = tgm.convert_grib(src, split=True)
    out = tmp_path / "g.tgm"
    got = tgm.convert_grib(src, split=True, output=out)
    data = out.read_bytes()
    assert got == {"target": str(out), "bytes": len(data), "etag": None}
    same_messages(out, messages)
    with pytest.raises(tgm.TensogramError, match="already exists"):
        tgm.convert_grib(src, output=out)
    assert out.read_bytes() == data
    # A conversion that fails on its second input leaves no output behind.
    bad = tmp_path / "bad.grib"
    bad.write_bytes(b"GRIB" + bytes(200))
    with pytest.raises(ValueError):
        tgm.convert_grib([src, bad], output=tmp_path / "x.tgm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.grib", "g.tgm"]


@needs_netcdf
def test_convert_netcdf_writes_each_message_straight_into_its_output(tmp_path):
    src = NETCDF / "classic.nc"
    with warnings.catch_warnings(record=True) as returned:
        warnings.simplefilter("always")
        messages = tgm.convert_netcdf(src, split_by="variable")
    out = tmp_path / "n.tgm"
    with warnings.catch_warnings(record=True) as written:
        warnings.simplefilter("always")
        got = tgm.convert_netcdf(src, split_by="variable", output=out)
    # The same variables left out, said the same way.
    assert [str(w.message) for w in written] == [str(w.message) for w in returned]
    assert got["bytes"] == out.stat().st_size
    assert len(messages) > 1
    same_messages(out, messages)
    with pytest.raises(ValueError):
        tgm.convert_netcdf([src, GRIB / "grib2.grib"], output=tmp_path / "x.tgm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.tgm"]


@needs_dicom
def test_convert_dicom_writes_each_series_straight_into_its_output(tmp_path):
    pytest.importorskip("pydicom")
    from pydicom.data import get_testdata_file

    # Two series, and a file that is no image, left out with a warning.
    series = [get_testdata_file("CT_small.dcm"), get_testdata_file("MR_small.dcm")]
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, f in enumerate(series):
        (inputs / f"{i}.dcm").write_bytes(pathlib.Path(f).read_bytes())
    (inputs / "notes.txt").write_text("not DICOM")
    with warnings.catch_warnings(record=True) as returned:
        warnings.simplefilter("always")
        messages = tgm.convert_dicom(inputs)
    out = tmp_path / "s.tgm"
    with warnings.catch_warnings(record=True) as written:
        warnings.simplefilter("always")
        got = tgm.convert_dicom(inputs, output=out)
    assert [str(w.message) for w in written] == [str(w.message) for w in returned] != []
    assert len(messages) == 2 and got["bytes"] == out.stat().st_size
    same_messages(out, messages)
    with pytest.raises(ValueError):
        tgm.convert_dicom([inputs, GRIB / "grib2.grib"], output=tmp_path / "x.tgm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "s.tgm"]


# Each converter writing into an output whose writes fail (a file-size
# limit, as a full disk would), in a child process so the limit stays there.
FULL_OUTPUT = """
import resource, signal, sys, tgm
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))
out = sys.argv[2]
convert = {"grib": tgm.convert_grib, "netcdf": tgm.convert_netcdf, "dicom": tgm.convert_dicom,
           "nifti": tgm.convert_nifti}
try:
    convert[sys.argv[1]](sys.argv[3], output=out)
except tgm.TensogramIOError as e:
    assert str(e).startswith(out + ": File too large"), e
    print("refused")
"""


@pytest.mark.parametrize(
    "converter",
    [
        pytest.param("grib", marks=needs_grib),
        pytest.param("netcdf", marks=needs_netcdf),
        pytest.param("dicom", marks=needs_dicom),
        pytest.param("nifti", marks=needs_nifti),
    ],
)
def test_a_converter_whose_output_cannot_be_written_raises_the_outputs_error(
    converter, tmp_path
):
    import subprocess
    import sys

    if converter == "dicom":
        pytest.importorskip("pydicom")
        from pydicom.data import get_testdata_file

        source = get_testdata_file("CT_small.dcm")
    else:
        source = {"grib": GRIB / "two-messages.grib", "netcdf": NETCDF / "classic.nc",
                  "nifti": NIFTI / "plain.nii"}[converter]
    out = tmp_path / "out" / "x.tgm"
    out.parent.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", FULL_OUTPUT, converter, str(out), str(source)],
        capture_output=True,
        text=True,
    )
    assert (run.returncode, run.stdout.strip()) == (0, "refused"), run.stderr
    assert list(out.parent.iterdir()) == []


@needs_nifti
def test_convert_nifti_encodes_its_message_straight_into_its_output(tmp_path):
    inputs = [NIFTI / "plain.nii", NIFTI / "gz.nii.gz"]
    message = tgm.convert_nifti(inputs[0])
    out = tmp_path / "v.tgm"
    got = tgm.convert_nifti(inputs[0], output=out)
    assert got["bytes"] == out.stat().st_size
    same_messages(out, [message])
    with pytest.raises(tgm.TensogramError, match="already exists"):
        tgm.convert_nifti(inputs[0], output=out)
    # A failure (not NIfTI) leaves no output behind.
    with pytest.raises(ValueError):
        tgm.convert_nifti(GRIB / "grib2.grib", output=tmp_path / "x.tgm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.tgm"]
