"""Arrays that stay put: what a file handle or an xarray dataset returns
by default owns its memory, so rewriting or truncating the file under
open handles changes nothing and never faults. Each scenario runs in a
subprocess, so that a SIGBUS is reported as a failure (exit status -7)
instead of killing pytest."""

import subprocess
import sys
import textwrap

import pytest

COMMON = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import tgm

    path = sys.argv[1]

    def desc(shape, dtype, **kw):
        d = {"type": "ntensor", "shape": list(shape), "dtype": dtype}
        d.update(kw)
        return d

    with tgm.TensogramFile.create(path) as f:
        for i in range(4):
            f.append(
                {"base": [{"name": "raw", "mars": {"step": i}}, {"name": "packed", "mars": {"step": i}}]},
                [
                    (desc([64, 64], "float64"), np.arange(4096.0).reshape(64, 64) + i),
                    (desc([1000], "float32", compression="zstd", zstd_level=1),
                     np.full(1000, i, np.float32)),
                ],
            )
        # A variable of one object: loaded, it is that object's array.
        f.append({"base": [{"name": "single"}]}, [(desc([4096], "float64"), np.arange(4096.0))])

    def clobber():
        # Rewrite in place with other bytes, then truncate to a few bytes.
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.write(b"\\xff" * size)
            fh.flush()
        with open(path, "r+b") as fh:
            fh.truncate(16)
    """
)


def run(tmp_path, body):
    script = COMMON + textwrap.dedent(body)
    p = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "a.tgm")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, f"exit status {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p.stdout


def test_handle_arrays_survive_rewrite_and_truncation(tmp_path):
    out = run(
        tmp_path,
        """
        f = tgm.TensogramFile.open(path)
        raw = f.object_array(2, 0)
        packed = f.object_array(2, 1)
        obj = f.file_decode_object(1, 0)["data"]
        msg = f.decode_message(3)
        rng = f.file_decode_range(0, 0, [(10, 5)], join=True)
        expect = [raw.copy(), packed.copy(), obj.copy(), msg.objects[0][1].copy(), rng.copy()]
        clobber()
        got = [raw, packed, obj, msg.objects[0][1], rng]
        for a, b in zip(got, expect):
            assert np.array_equal(a, b)
            a.sum()
        # Reading through the handle now fails with an error, not a signal.
        try:
            f.object_array(3, 0)
        except tgm.TensogramError as e:
            print("error", type(e).__name__)
        else:
            raise AssertionError("read from a truncated file succeeded")
        print("ok")
        """,
    )
    assert "ok" in out and "error" in out


def test_loaded_dataset_survives_rewrite_and_truncation(tmp_path):
    pytest.importorskip("xarray")
    out = run(
        tmp_path,
        """
        import xarray as xr
        ds = xr.open_dataset(path, engine="tgm").load()
        expect = {k: v.values.copy() for k, v in ds.data_vars.items()}
        clobber()
        for k, v in ds.data_vars.items():
            assert np.array_equal(v.values, expect[k]), k
            float(v.sum())
        print("ok", sorted(expect))
        """,
    )
    assert "ok ['packed', 'raw', 'single']" in out


def test_zero_copy_is_an_explicit_opt_in(tmp_path):
    """The opt-in view does follow the file: rewriting it in place changes
    the view (the documented risk), while the default array does not."""
    out = run(
        tmp_path,
        """
        f = tgm.TensogramFile.open(path, zero_copy=True)
        view = f.object_array(0, 0)
        owned = tgm.TensogramFile.open(path).object_array(0, 0)
        assert not view.flags.writeable and owned.flags.writeable
        before = view.copy()
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.write(b"\\x00" * size)
        print("view changed", not np.array_equal(view, before))
        print("owned kept", np.array_equal(owned, before))
        """,
    )
    assert "view changed True" in out
    assert "owned kept True" in out
