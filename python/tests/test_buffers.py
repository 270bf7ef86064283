"""Writable buffers are never read after the GIL is released: a thread that
rewrites a ``bytearray`` or NumPy buffer while another decodes or encodes
it gives a result equal to one of the versions written, or a clean error,
never a mix. ``bytes`` and read-only views of ``bytes`` are read in place,
and so are the arrays given to ``encode`` (with the GIL held)."""

import contextlib
import threading

import numpy as np
import pytest

import tgm

N = 1 << 18  # 2 MiB of float64 per version


def message(fill):
    arr = np.full(N, fill, dtype=np.float64)
    d = {"type": "ntensor", "shape": [N], "dtype": "float64"}
    return tgm.encode({"base": [{}]}, [(d, arr)], hash=None)


A = message(1.0)
B = message(2.0)
assert len(A) == len(B)


def hammer(target, versions, stop):
    """Writes the versions into `target` in turn, each in one copy made with
    the GIL held (a memoryview assignment; NumPy's own assignment releases
    the GIL, and then no reader can see a whole version)."""
    dest = memoryview(target).cast("B")
    i = 0
    while not stop.is_set():
        dest[:] = versions[i % 2]
        i += 1


@contextlib.contextmanager
def rewritten(target, versions):
    """A thread running :func:`hammer` on `target` while the block runs."""
    stop = threading.Event()
    writer = threading.Thread(target=hammer, args=(target, versions, stop))
    writer.start()
    try:
        yield
    finally:
        stop.set()
        writer.join()


def one_version(values, seen):
    """Asserts that the decoded `values` hold one version, and records it."""
    values = np.unique(values)
    assert len(values) == 1, f"a mix of versions was read: {values[:8]}"
    seen.add(float(values[0]))


@pytest.mark.parametrize("kind", ["bytearray", "numpy", "memoryview"])
def test_decode_sees_one_whole_version_while_another_thread_writes(kind):
    if kind == "numpy":
        buf = np.frombuffer(bytearray(A), dtype=np.uint8)
    else:
        buf = bytearray(A)
    versions = [A, B]
    view = memoryview(buf).toreadonly() if kind == "memoryview" else buf
    seen = set()
    with rewritten(buf, versions):
        for _ in range(60):
            one_version(tgm.decode(view).objects[0][1], seen)
    assert seen <= {1.0, 2.0}


def test_validate_and_hash_copy_a_buffer_being_written():
    buf = bytearray(A)
    with rewritten(buf, [A, B]):
        for _ in range(30):
            assert tgm.compute_hash(buf) in {tgm.compute_hash(A), tgm.compute_hash(B)}
            r = tgm.validate(buf, level="full")
            assert not [i for i in r["issues"] if i["severity"] == "error"], r


def test_bytes_and_read_only_maps_decode(tmp_path):
    import mmap

    p = tmp_path / "a.tgm"
    p.write_bytes(A)
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        mv = memoryview(mm)
        try:
            _, objects = tgm.decode(mv[: len(A)])
            assert float(objects[0][1][0]) == 1.0
        finally:
            mv.release()
    _, objects = tgm.decode(memoryview(A)[: len(A)])
    assert float(objects[0][1][-1]) == 1.0


@pytest.mark.parametrize("kind", ["numpy", "bytearray"])
def test_encode_sees_one_whole_version_while_another_thread_writes(kind):
    """``encode`` reads arrays in place, so it must hold the GIL throughout:
    released, the writer would switch versions in the middle of the read."""
    versions = [np.full(N, 1.0).tobytes(), np.full(N, 2.0).tobytes()]
    raw = bytearray(versions[0])
    data = np.frombuffer(raw, dtype=np.float64) if kind == "numpy" else raw
    d = {"type": "ntensor", "shape": [N], "dtype": "float64"}
    seen = set()
    with rewritten(raw, versions):
        for _ in range(60):
            msg = tgm.encode({"base": [{}]}, [(d, data)], hash=None)
            one_version(tgm.decode(msg).objects[0][1], seen)
    assert seen <= {1.0, 2.0}
