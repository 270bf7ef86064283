"""Hostile inputs through the converters in process and through the Zarr
store (issue 47 item 5): mutated GRIB, NetCDF, NIfTI and DICOM files
through every ``tgm.convert_*``, mutated archives through every
``tgm.to_*`` and through ``tgm.zarr.TgmStore`` read by zarr, each set in
ONE interpreter (``hostile_child.py``). The inputs are the fuzz corpus's
seeds, nibabel's and pydicom's test files (real NIfTI-2, RLE, JPEG 2000
and JPEG-LS data, decoded by C libraries), and the header fields the
command line's hostile suites set (``hostile_inputs.py``).

Every call returns or raises a ``tgm.TensogramError`` naming the file;
the honest inputs convert; no call grows the interpreter's peak resident
size by more than the default decoded-bytes budget allows
(``spec/convert.md`` "Hostile files"); and a crash inside ecCodes,
netCDF-C, OpenJPEG or CharLS is reported as the signal that killed the
child, naming the input, instead of taking the test run down."""

import gzip
import json
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import pytest

import tgm
from tgm import _converters

import hostile_inputs as hi

CHILD = pathlib.Path(__file__).with_name("hostile_child.py")
KINDS = [k for k in ("grib", "netcdf", "nifti", "dicom") if _converters.has(k)]
# The largest growth of the peak resident size one call may cause: the
# default decoded-bytes budget (256 MiB + 64 × the input, inputs here are
# under 400 KB) and the copies a conversion makes of what it decoded.
MAX_GROWTH_MIB = 320
# The slowest one call may be.
MAX_CALL_S = 10
# Door variants: each mutated input goes through one, in turn.
VARIANTS = {
    "grib": [
        ("convert_grib", {}),
        ("convert_grib", {"split": True, "encoding": "source"}),
        ("convert_grib_buffer", {"encoding": "simple_packing", "compression": "szip"}),
    ],
    "netcdf": [
        ("convert_netcdf", {}),
        ("convert_netcdf", {"split_by": "record"}),
        ("convert_netcdf", {"split_by": "variable", "cf": True}),
    ],
    "nifti": [
        ("convert_nifti", {}),
        ("convert_nifti", {"compression": "none", "byte_order": "big"}),
    ],
    "dicom": [
        ("convert_dicom", {}),
        ("convert_dicom", {"deidentify": True}),
    ],
}


def honest(kind):
    """The inputs of ``kind`` that convert: the fuzz corpus's (but DICOM,
    whose seeds are fragments for the pre-scan) and the packages'."""
    return ([] if kind == "dicom" else hi.corpus(kind)) + hi.package_samples(kind)


def hostile(kind):
    """The fuzz targets' regression inputs, and header fields set to what
    no honest file holds, by ``kind``."""
    return [p.read_bytes() for p in hi.regressions(kind)] + fields(kind)


def fields(kind):
    if kind == "grib":
        return [v for p in hi.corpus("grib") for v in hi.grib2_counts(p.read_bytes())]
    if kind == "nifti":
        plain = [p for p in honest("nifti") if p.suffix == ".nii"]
        out = [v for p in plain for v in hi.nifti1_fields(p.read_bytes())] + hi.nifti2_hostile()
        return out + [gzip.compress(v, mtime=0) for v in out]
    if kind == "dicom":
        return [p.read_bytes() for p in hi.package_samples("dicom", ("UN_sequence.dcm",))]
    return []


def kinds():
    """The converters built in that have honest inputs here (DICOM's come
    from pydicom, which .ci/python.sh installs)."""
    return [k for k in KINDS if honest(k)]


def suffix(path):
    return ".nii.gz" if path.name.endswith(".nii.gz") else path.suffix


def run_child(tmp_path, cases):
    """Runs ``cases`` in one child interpreter: its report."""
    spec, status, out = tmp_path / "cases.json", tmp_path / "status", tmp_path / "out"
    spec.write_text(json.dumps(cases))
    out.mkdir()
    cmd = [sys.executable, "-X", "faulthandler", str(CHILD), str(spec), str(status), str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=CHILD.parent)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the interpreter hung on {status.read_text()}")
    last = status.read_text() if status.exists() else "(before the first input)"
    assert proc.returncode == 0, (
        f"the interpreter died (exit {proc.returncode}) on {last}\n{proc.stderr[-3000:]}"
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not report["bad"], "\n".join(report["bad"])
    growth, label = report["growth_mib"]
    assert growth < MAX_GROWTH_MIB, f"{label} grew the peak resident size by {growth:.0f} MiB"
    took, label = report["slowest_s"]
    assert took < MAX_CALL_S, f"{label} took {took:.1f} s"
    counts = report["counts"]
    doors = {c["door"] for c in cases}
    assert set(counts) == doors, counts
    assert sum(c["ok"] + c["refused"] for c in counts.values()) == len(cases)
    # Every door met inputs it refused and inputs it converted.
    for door, c in counts.items():
        assert c["refused"] > 0 and c["ok"] > 0, (door, c)
    return counts


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_mutated_sources_through_the_converters_in_one_interpreter(tmp_path):
    if not kinds():
        pytest.skip("the wheel was built without any converter")
    cases = []
    for kind in kinds():
        variants = VARIANTS[kind]
        for door, kwargs in variants:
            for p in honest(kind):
                cases.append({"door": door, "path": str(p), "expect": "ok", "kwargs": kwargs})
        inputs = [(p, hi.file_mutations(p, zlib.crc32(f"{kind}{p.name}".encode()))) for p in honest(kind)]
        inputs += [(p, hi.mutations(p.read_bytes(), 7)) for p in hi.corpus(kind) if kind == "dicom"]
        n = 0
        for sample, variants_of in inputs:
            for data in variants_of:
                door, kwargs = variants[n % len(variants)]
                path = write(tmp_path, f"{kind}-{n}{suffix(sample)}", data)
                cases.append({"door": door, "path": path, "expect": "any", "kwargs": kwargs})
                n += 1
        ext = {"grib": ".grib", "nifti": ".nii", "dicom": ".dcm"}.get(kind, "")
        for i, data in enumerate(hostile(kind)):
            name = f"{kind}-field{i}{ext}" + (".gz" if data[:2] == b"\x1f\x8b" else "")
            door, kwargs = variants[i % len(variants)]
            cases.append({"door": door, "path": write(tmp_path, name, data), "expect": "any", "kwargs": kwargs})
    run_child(tmp_path, cases)


def archives(kind):
    """The honest archive files of ``kind``: each message the converter
    makes of each honest input, one file per message."""
    out = []
    for p in honest(kind):
        if kind == "grib":
            out += tgm.convert_grib(str(p), split=True)
        elif kind == "netcdf":
            out += tgm.convert_netcdf(str(p))
        elif kind == "nifti":
            out.append(tgm.convert_nifti(str(p)))
        else:
            out += tgm.convert_dicom(str(p))
    assert out, kind
    return out


def test_mutated_archives_through_the_to_converters_in_one_interpreter(tmp_path):
    if not kinds():
        pytest.skip("the wheel was built without any converter")
    cases = []
    for kind in kinds():
        for i, msg in enumerate(archives(kind)):
            door = f"to_{kind}"
            cases.append({"door": door, "path": write(tmp_path, f"{kind}-{i}.tgm", msg), "expect": "ok"})
            for j, bad in enumerate(hi.mutations(msg, seed=i * 131 + len(kind))):
                path = write(tmp_path, f"{kind}-{i}-{j}.tgm", bad)
                cases.append({"door": door, "path": path, "expect": "any"})
    run_child(tmp_path, cases)


def synthetic_archive():
    """Four messages, one object each: raw, zstd, lz4, and simple packing
    with szip."""
    msgs = []
    for i, comp in enumerate(("none", "zstd", "lz4", "szip")):
        values = np.linspace(0, 1, 512).reshape(16, 32) + i
        d = {"type": "ntensor", "shape": [16, 32], "dtype": "float64"}
        if comp == "szip":
            d.update(encoding="simple_packing", compression="szip", szip_rsi=128, szip_block_size=16, szip_flags=8)
            d.update(tgm.compute_packing_params(values.ravel(), 16, 0))
        else:
            d["compression"] = comp
        entry = {"name": f"v{i}", "dim_names": ["y", "x"], "mars": {"param": f"p{i}", "step": i}}
        msgs.append(tgm.encode({"base": [entry]}, [(d, values)]))
    return b"".join(msgs)


def test_mutated_archives_through_the_zarr_store(tmp_path):
    pytest.importorskip("zarr", minversion="3", reason="zarr-python 3 is not installed (pip install 'zarr>=3')")
    honest_archives = [synthetic_archive()]
    for kind in ("netcdf", "nifti"):
        if kind in kinds():
            honest_archives += [b"".join(archives(kind)[:1])]
    cases = []
    for i, data in enumerate(honest_archives):
        cases.append({"door": "zarr", "path": write(tmp_path, f"zarr-{i}.tgm", data), "expect": "ok"})
        for j, bad in enumerate(hi.mutations(data, seed=7 + i) + hi.mutations(data, seed=70 + i)):
            cases.append({"door": "zarr", "path": write(tmp_path, f"zarr-{i}-{j}.tgm", bad), "expect": "any"})
    run_child(tmp_path, cases)


# A message of a few hundred bytes whose object claims a 10⁹ × 10⁹
# regular_ll field, opened by xarray in a child limited to 3 GiB of
# address space: the grid keeps its
# dimensions without coordinates (spec/kerchunk.md §2.1), where building
# them would allocate 16 GB.
CLAIMED_SHAPE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import tgm, xarray as xr
ds = xr.open_dataset(sys.argv[1], engine="tgm")
assert dict(ds.sizes) == {"latitude": 10**9, "longitude": 10**9}, ds.sizes
assert list(ds.coords) == [], list(ds.coords)
assert ds["t"].dims == ("latitude", "longitude")
print("opened")
"""


def test_a_claimed_shape_opens_without_building_its_coordinates(tmp_path):
    pytest.importorskip("xarray")
    n = 10**9
    desc = {"type": "ntensor", "ndim": 2, "shape": [n, n], "strides": [n, 1],
            "dtype": "float64", "byte_order": "little", "encoding": "none",
            "filter": "none", "compression": "zstd"}
    geo = {"gridType": "regular_ll", "Ni": n, "Nj": n,
           "latitudeOfFirstGridPointInDegrees": 90.0, "latitudeOfLastGridPointInDegrees": -90.0,
           "longitudeOfFirstGridPointInDegrees": 0.0, "longitudeOfLastGridPointInDegrees": 359.0}
    meta = {"base": [{"geography": geo, "mars": {"param": "t"}}]}
    path = tmp_path / "claim.tgm"
    path.write_bytes(tgm.encode_pre_encoded(meta, [(desc, bytes(40))]))
    assert path.stat().st_size < 1000
    run = subprocess.run([sys.executable, "-c", CLAIMED_SHAPE, str(path)],
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "opened"), run.stderr[-2000:]


# 1,000 one-byte objects of one variable whose three stacking keys all
# differ span a hypercube of 10⁹ cells; opening them is refused before the
# cells are allocated (8 GB of object pointers), in a child limited to
# 3 GiB of address space.
SPARSE_HYPERCUBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import tgm, xarray as xr
try:
    xr.open_dataset(sys.argv[1], engine="tgm")
except tgm.MetadataError as e:
    assert "do not fill the hypercube" in str(e) and "1000000000 cells" in str(e), e
    print("refused")
"""


def test_a_sparse_hypercube_is_refused_before_its_cells_exist(tmp_path):
    pytest.importorskip("xarray")
    desc = {"type": "ntensor", "ndim": 1, "shape": [1], "strides": [1], "dtype": "uint8",
            "byte_order": "little", "encoding": "none", "filter": "none", "compression": "none"}
    path = tmp_path / "sparse.tgm"
    with tgm.TensogramFile.create(path) as f:
        for i in range(1000):
            mars = {"param": "t", "step": i, "levelist": i, "number": i}
            f.append({"base": [{"mars": mars}]}, [(desc, np.zeros(1, np.uint8))])
    run = subprocess.run([sys.executable, "-c", SPARSE_HYPERCUBE, str(path)],
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "refused"), run.stderr[-2000:]


def test_times_and_steps_of_different_variables_do_not_multiply(tmp_path):
    # 2,048 objects of "a" at 2,048 reference times and step 0, and 2,048 of
    # "b" at one time and 2,048 steps: time and step are dimensions of the
    # dataset, but a valid_time over both would hold 4,194,304 values, more
    # than the objects and than the core's budget, so neither door builds it.
    pytest.importorskip("xarray")
    import datetime

    import xarray as xr

    from test_validate import cli

    desc = {"type": "ntensor", "ndim": 1, "shape": [1], "strides": [1], "dtype": "uint8",
            "byte_order": "little", "encoding": "none", "filter": "none", "compression": "none"}
    day = datetime.date(2000, 1, 1)
    path = tmp_path / "times.tgm"
    with tgm.TensogramFile.create(path) as f:
        for i in range(2048):
            date = int((day + datetime.timedelta(days=i)).strftime("%Y%m%d"))
            for mars in ({"param": "a", "date": date, "time": 0, "step": 0},
                         {"param": "b", "date": 20000101, "time": 0, "step": i}):
                f.append({"base": [{"mars": mars}]}, [(desc, np.zeros(1, np.uint8))])
    ds = xr.open_dataset(path, engine="tgm")
    assert (ds.sizes["time"], ds.sizes["step"]) == (2048, 2048)
    assert "valid_time" not in ds.coords
    refs = tmp_path / "times.json"
    subprocess.run([cli(), "refs", str(path), "-o", str(refs)], check=True, capture_output=True)
    keys = json.loads(refs.read_text())["refs"]
    assert "time/.zarray" in keys and "step/.zarray" in keys
    assert not any(k.startswith("valid_time/") for k in keys)
