"""Hostile inputs through the converters in process and through the Zarr
store: mutated GRIB, NetCDF, NIfTI and DICOM files (the fuzz corpus's
samples with bytes flipped, cut short and length fields inflated) go
through ``tgm.convert_*``, mutated archives through ``tgm.to_*`` and
``tgm.zarr.TgmStore`` read by zarr, all in ONE interpreter. Every call
either succeeds or raises an ``Exception``: never a Rust panic
(``pyo3_runtime.PanicException`` is not an ``Exception``), never a native
crash. The loop runs in a child interpreter so that a crash inside ecCodes
or netCDF-C is reported here as the signal that killed it, naming the
last input, instead of taking the test run down."""

import json
import pathlib
import random
import subprocess
import sys
import textwrap
import zlib

import pytest

import tgm
from tgm import _converters

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fuzz" / "corpus"
SAMPLES = {
    "grib": sorted((CORPUS / "weather_grib_scan").glob("*.grib")),
    "netcdf": sorted((CORPUS / "weather_netcdf_classic").glob("*.nc")),
    "nifti": sorted((CORPUS / "medical_nifti").glob("*.nii*")),
    "dicom": sorted(p for p in (CORPUS / "medical_dicom_scan").iterdir() if p.is_file())
    if (CORPUS / "medical_dicom_scan").is_dir()
    else [],
}
BUILT = {
    "grib": tgm.__has_grib__,
    "netcdf": tgm.__has_netcdf__,
    "nifti": _converters.has("nifti"),
    "dicom": _converters.has("dicom"),
}
# Per sample: flipped bytes, cuts, and inflated 4-byte fields.
FLIPS, CUTS, INFLATIONS = 12, (1, 8, 64, 0.25, 0.5, 0.9), 12


def mutations(data: bytes, seed: int):
    """Deterministic hostile variants of ``data``."""
    rng = random.Random(seed)
    out = []
    for _ in range(FLIPS):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        out.append(bytes(b))
    for cut in CUTS:
        n = cut if isinstance(cut, int) else int(len(data) * cut)
        out.append(data[: min(n, len(data) - 1)])
    for _ in range(INFLATIONS):
        b = bytearray(data)
        at = rng.randrange(max(1, len(b) - 4))
        b[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00"])
        out.append(bytes(b))
    return out


def write_cases(tmp: pathlib.Path, kind: str, samples, suffix_of=lambda p: p.suffix):
    paths = []
    for i, sample in enumerate(samples):
        for j, data in enumerate(mutations(sample.read_bytes(), seed=zlib.crc32(f"{kind}{i}".encode()))):
            name = sample.name.split(".")[0]
            suffix = "".join(sample.suffixes) if kind == "nifti" else suffix_of(sample)
            p = tmp / f"{kind}-{name}-{j}{suffix}"
            p.write_bytes(data)
            paths.append(str(p))
    return paths


CHILD = textwrap.dedent(
    r"""
    import json, os, sys, pathlib
    import tgm

    cases = json.load(open(sys.argv[1]))
    status = pathlib.Path(sys.argv[2])
    counts = {"ok": 0, "refused": 0}
    bad = []

    def run(label, fn):
        status.write_text(label)
        try:
            fn()
            counts["ok"] += 1
        except Exception:
            counts["refused"] += 1
        except BaseException as e:  # a Rust panic surfaces as PanicException
            bad.append(f"{label}: {type(e).__name__}: {e}")

    out = pathlib.Path(sys.argv[3])
    for i, (kind, path) in enumerate(cases["convert"]):
        conv = {"grib": tgm.convert_grib, "netcdf": tgm.convert_netcdf,
                "nifti": tgm.convert_nifti, "dicom": tgm.convert_dicom}[kind]
        run(f"convert_{kind} {path}", lambda: conv(path))
    for i, (kind, path) in enumerate(cases["back"]):
        def back(kind=kind, path=path, i=i):
            if kind == "grib":
                tgm.to_grib([open(path, "rb").read()])
            elif kind == "netcdf":
                tgm.to_netcdf([open(path, "rb").read()], str(out / f"{i}.nc"), force=True)
            elif kind == "nifti":
                tgm.to_nifti(path, str(out / f"{i}.nii"), force=True)
            else:
                d = out / f"dcm{i}"
                d.mkdir(exist_ok=True)
                tgm.to_dicom(path, str(d), force=True)
        run(f"to_{kind} {path}", back)
    if cases["zarr"]:
        import numpy as np
        import zarr
        from tgm.zarr import TgmStore

        for path in cases["zarr"]:
            def read(path=path):
                g = zarr.open_group(store=TgmStore(path), mode="r")
                for name, arr in g.arrays():
                    np.asarray(arr[...])
            run(f"zarr {path}", read)
    status.write_text("done")
    print(json.dumps({"counts": counts, "bad": bad}))
    """
)


def run_child(tmp_path, cases):
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps(cases))
    status = tmp_path / "status"
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.run(
        [sys.executable, str(script), str(spec), str(status), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    last = status.read_text() if status.exists() else "(before the first input)"
    assert proc.returncode == 0, (
        f"the interpreter died (exit {proc.returncode}) on {last}\n{proc.stderr[-3000:]}"
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not report["bad"], "\n".join(report["bad"])
    return report["counts"]


def test_mutated_sources_through_the_converters_in_one_interpreter(tmp_path):
    kinds = [k for k in SAMPLES if BUILT[k] and SAMPLES[k]]
    if not kinds:
        pytest.skip("the wheel was built without any converter")
    cases = {"convert": [], "back": [], "zarr": []}
    for kind in kinds:
        for p in write_cases(tmp_path, kind, SAMPLES[kind]):
            cases["convert"].append((kind, p))
    counts = run_child(tmp_path, cases)
    total = len(cases["convert"])
    assert counts["ok"] + counts["refused"] == total
    # The mutations are hostile: most must be refused, not silently taken.
    assert counts["refused"] > 0, counts


def archives_of(kind, sample):
    """The honest archive a converter makes of ``sample``, as one file's bytes."""
    if kind == "grib":
        return b"".join(tgm.convert_grib(str(sample), split=True))
    if kind == "netcdf":
        return b"".join(tgm.convert_netcdf(str(sample)))
    if kind == "nifti":
        return tgm.convert_nifti(str(sample))
    return b"".join(tgm.convert_dicom(str(sample)))


def test_mutated_archives_through_to_converters_in_one_interpreter(tmp_path):
    cases = {"convert": [], "back": [], "zarr": []}
    for kind in [k for k in SAMPLES if BUILT[k] and SAMPLES[k]]:
        honest = []
        for sample in SAMPLES[kind]:
            try:
                honest.append(archives_of(kind, sample))
            except Exception:
                continue  # a sample the converter refuses has no archive
        for i, data in enumerate(honest[:2]):
            for j, bad in enumerate(mutations(data, seed=i * 131 + len(kind))):
                p = tmp_path / f"back-{kind}-{i}-{j}.tgm"
                p.write_bytes(bad)
                cases["back"].append((kind, str(p)))
    if not cases["back"]:
        pytest.skip("the wheel was built without any converter")
    counts = run_child(tmp_path, cases)
    assert counts["ok"] + counts["refused"] == len(cases["back"])
    assert counts["refused"] > 0, counts


def test_mutated_archives_through_the_zarr_store(tmp_path):
    pytest.importorskip("zarr", minversion="3", reason="zarr-python 3 is not installed (pip install 'zarr>=3')")
    import numpy as np

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
    honest = b"".join(msgs)
    cases = {"convert": [], "back": [], "zarr": []}
    for j, bad in enumerate(mutations(honest, seed=7) + mutations(honest, seed=8)):
        p = tmp_path / f"zarr-{j}.tgm"
        p.write_bytes(bad)
        cases["zarr"].append(str(p))
    counts = run_child(tmp_path, cases)
    assert counts["ok"] + counts["refused"] == len(cases["zarr"])
    assert counts["refused"] > 0, counts
