"""The interpreter ``test_hostile_doors.py`` feeds hostile inputs to, one
after the other: ``hostile_child.py CASES STATUS OUT``. CASES is a JSON
list of ``{"door", "path", "expect", "kwargs"}``; before each call the
case's label is written to STATUS, so that the parent names the input a
native crash or a hang stopped on. Prints one JSON report line: per door
how many inputs converted and how many were refused, every call that
broke a rule, the largest growth of the peak resident size one call
caused and the slowest call.

The rules: a call returns, or raises a ``tgm.TensogramError`` whose
message names the input file (a Rust panic surfaces as
``pyo3_runtime.PanicException``, which is not one); a case whose
``expect`` is ``"ok"`` (an honest input) returns a non-empty result."""

import json
import os
import pathlib
import resource
import sys
import time
import warnings

import numpy as np
import zarr

import tgm
from tgm.zarr import TgmStore


def read_all(path):
    """Every array of the archive at ``path``, through TgmStore and zarr."""
    group = zarr.open(store=TgmStore(path), mode="r")
    out = [dict(group.attrs)]
    for _, arr in group.arrays():
        out.append(np.asarray(arr[...]))
    return out


def one_message(path):
    return [pathlib.Path(path).read_bytes()]


def doors(out):
    """What each door does with a case's path (and keyword arguments)."""
    return {
        "convert_grib": lambda p, kw: tgm.convert_grib(p, **kw),
        "convert_grib_buffer": lambda p, kw: tgm.convert_grib_buffer(pathlib.Path(p).read_bytes(), **kw),
        "convert_netcdf": lambda p, kw: tgm.convert_netcdf(p, **kw),
        "convert_nifti": lambda p, kw: [tgm.convert_nifti(p, **kw)],
        "convert_dicom": lambda p, kw: tgm.convert_dicom(p, **kw),
        "to_grib": lambda p, kw: [tgm.to_grib(one_message(p))],
        "to_netcdf": lambda p, kw: tgm.to_netcdf(one_message(p), str(out / "o.nc"), force=True) or [1],
        "to_nifti": lambda p, kw: tgm.to_nifti(p, str(out / "o.nii"), force=True) or [1],
        "to_dicom": lambda p, kw: tgm.to_dicom(p, str(out / "dcm"), force=True),
        "zarr": lambda p, kw: read_all(p),
    }


# The doors whose errors name the input file (a buffer has no name).
NAMED = {"convert_grib", "convert_netcdf", "convert_nifti", "convert_dicom"}


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(cases_path, status_path, out):
    warnings.simplefilter("ignore")
    cases = json.loads(pathlib.Path(cases_path).read_text())
    status = pathlib.Path(status_path)
    table = doors(pathlib.Path(out))
    counts, bad = {}, []
    worst_growth, slowest = (0.0, ""), (0.0, "")
    for case in cases:
        door, path, kwargs = case["door"], case["path"], case.get("kwargs", {})
        label = f"{door}({os.path.basename(path)}, {kwargs})"
        status.write_text(label)
        c = counts.setdefault(door, {"ok": 0, "refused": 0})
        before, start = peak_mib(), time.monotonic()
        try:
            result = table[door](path, kwargs)
            if case["expect"] == "ok" and not result:
                bad.append(f"{label}: an honest input gave an empty result")
            c["ok"] += 1
        except tgm.TensogramError as e:
            c["refused"] += 1
            if case["expect"] == "ok":
                bad.append(f"{label}: an honest input was refused: {e}")
            elif door in NAMED and os.path.basename(path) not in str(e):
                bad.append(f"{label}: the error does not name the file: {e}")
        except BaseException as e:  # noqa: BLE001 - every other class breaks the rules
            bad.append(f"{label}: {type(e).__module__}.{type(e).__name__}: {e}")
        growth, took = peak_mib() - before, time.monotonic() - start
        worst_growth = max(worst_growth, (growth, label))
        slowest = max(slowest, (took, label))
    status.write_text("done")
    print(json.dumps({"counts": counts, "bad": bad, "growth_mib": worst_growth, "slowest_s": slowest}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
