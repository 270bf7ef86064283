import shutil
import subprocess

import numpy as np
import pytest

import tgm

DTYPES = [
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]


def sample(dtype, n=24, seed=0):
    """Deterministic values spanning the dtype's range."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt) * 100
    if dt.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)


def desc(shape, dtype, **kw):
    d = {"type": "ntensor", "shape": list(shape), "dtype": dtype}
    d.update(kw)
    return d


@pytest.fixture
def simple_message():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    meta = {"base": [{"mars": {"param": "2t"}, "dim_names": ["y", "x"]}], "foo": 1}
    return tgm.encode(meta, [(desc([3, 4], "float32"), data)]), data


def eccodes_values(path):
    """Every field's values as ecCodes' grib_get_data prints them."""
    if shutil.which("grib_get_data") is None:
        pytest.skip("grib_get_data not installed (libeccodes-tools)")
    out = subprocess.run(
        ["grib_get_data", "-m", "nan", "-F", "%.17g", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout
    fields, cur = [], []
    for line in out.splitlines():
        parts = line.split()
        if not parts or parts[0] == "Latitude":
            if cur:
                fields.append(np.array(cur))
            cur = []
            continue
        cur.append(float(parts[2]))
    if cur:
        fields.append(np.array(cur))
    return fields
