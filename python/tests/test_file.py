"""TensogramFile, AsyncTensogramFile, zero-copy views and pickling."""

import asyncio
import gc
import pickle

import numpy as np
import pytest

import tgm
from conftest import desc

ref = pytest.importorskip("tensogram")


def write_archive(path, n=5):
    with tgm.TensogramFile.create(path) as f:
        for i in range(n):
            f.append(
                {"base": [{"step": i}, {"step": i}]},
                [
                    (desc([3, 4], "float64"), np.arange(12.0).reshape(3, 4) + i),
                    (desc([50], "float32", compression="zstd", zstd_level=1), np.full(50, i, np.float32)),
                ],
            )
    return path


def test_file_api_matches_reference(tmp_path):
    p = write_archive(tmp_path / "a.tgm")
    ours, theirs = tgm.TensogramFile.open(p), ref.TensogramFile.open(str(p))
    assert len(ours) == len(theirs) == ours.message_count() == 5
    assert ours.source() == str(p) and not ours.is_remote()
    assert ours.read_message(2) == theirs.read_message(2)
    assert ours.messages() == theirs.messages()
    for i in (0, 4, -1):
        a, b = ours[i], theirs[i]
        assert a.metadata.base == b.metadata.base
        for (da, xa), (db, xb) in zip(a.objects, b.objects):
            assert da.shape == db.shape
            np.testing.assert_array_equal(xa, xb)
    assert [m.metadata.base[0]["step"] for m in ours] == [0, 1, 2, 3, 4]
    assert len(iter(ours)) == 5
    assert [m.metadata.base[0]["step"] for m in ours[1:3]] == [1, 2]
    o = ours.file_decode_object(3, 1)
    t = theirs.file_decode_object(3, 1)
    assert set(o) == set(t) == {"metadata", "descriptor", "data"}
    np.testing.assert_array_equal(o["data"], t["data"])
    d = ours.file_decode_descriptors(1)
    assert set(d) == {"metadata", "descriptors"} and len(d["descriptors"]) == 2
    assert ours.file_decode_metadata(1).base[1]["step"] == 1
    r1 = ours.file_decode_range(2, 0, [(1, 3)])
    r2 = theirs.file_decode_range(2, 0, [(1, 3)])
    np.testing.assert_array_equal(r1[0], r2[0])
    batch = ours.file_decode_object_batch([0, 2], 0)
    np.testing.assert_array_equal(batch[1]["data"], np.arange(12.0).reshape(3, 4) + 2)
    with pytest.raises(IndexError):
        ours[5]


def test_reference_written_file_reads_in_tgm(tmp_path):
    p = str(tmp_path / "r.tgm")
    with ref.TensogramFile.create(p) as f:
        for i in range(3):
            f.append({"base": [{"i": i}]}, [(desc([8], "int32"), np.arange(8, dtype=np.int32) * i)])
    f = tgm.TensogramFile.open(p)
    assert len(f) == 3
    np.testing.assert_array_equal(f.object_array(2, 0), np.arange(8) * 2)


def test_append_to_opened_file(tmp_path):
    p = write_archive(tmp_path / "a.tgm", 2)
    f = tgm.TensogramFile.open(p)
    assert len(f) == 2
    f.append({}, [(desc([1], "uint8"), np.array([9], np.uint8))])
    assert len(f) == 3
    assert f[2].objects[0][1][0] == 9


def test_zero_copy_view_is_read_only_and_keeps_the_mapping(tmp_path):
    p = write_archive(tmp_path / "a.tgm")
    f = tgm.TensogramFile.open(p, zero_copy=True)
    view = f.object_array(3, 0)
    np.testing.assert_array_equal(view, np.arange(12.0).reshape(3, 4) + 3)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 1.0
    # The view borrows from the memory map: no copy was made.
    base = view
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    assert type(base).__name__ == "mmap"
    f.close()
    del f
    gc.collect()
    assert view.sum() == (np.arange(12.0) + 3).sum()
    # A compressed object is decoded instead.
    g = tgm.TensogramFile.open(p, zero_copy=True)
    arr = g.object_array(1, 1)
    assert arr.flags.writeable and arr.flags.owndata is False
    np.testing.assert_array_equal(arr, np.full(50, 1, np.float32))


def test_zero_copy_view_still_checks_digests(tmp_path):
    p = write_archive(tmp_path / "a.tgm", 1)
    raw = bytearray(p.read_bytes())
    off = tgm._native.locate_raw(bytes(raw), 0)[1]
    raw[off] ^= 0x40
    p.write_bytes(bytes(raw))
    with pytest.raises(tgm.HashMismatchError):
        tgm.TensogramFile.open(p, zero_copy=True).object_array(0, 0)
    with pytest.raises(tgm.HashMismatchError):
        tgm.TensogramFile.open(p).object_array(0, 0)


class _NoScan:
    """Stands in for the native file type: opening (which scans) fails,
    opening from a layout works."""

    from_layout = staticmethod(tgm._native.File.from_layout)

    def __init__(self, *args):
        raise AssertionError("the file was rescanned")


def test_pickled_file_reads_without_rescanning(tmp_path, monkeypatch):
    p = write_archive(tmp_path / "a.tgm")
    f = tgm.TensogramFile.open(p)
    blob = pickle.dumps(f)
    monkeypatch.setattr(tgm._native, "File", _NoScan)
    g = pickle.loads(blob)
    assert len(g) == 5
    np.testing.assert_array_equal(g.object_array(4, 0), np.arange(12.0).reshape(3, 4) + 4)
    np.testing.assert_array_equal(g.file_decode_object(4, 1)["data"], np.full(50, 4, np.float32))


def test_layout_of_a_changed_file_is_refused(tmp_path):
    p = write_archive(tmp_path / "a.tgm", 2)
    blob = pickle.dumps(tgm.TensogramFile.open(p))
    with open(p, "ab") as fh:
        fh.write(b"more")
    with pytest.raises(tgm.TensogramIOError):
        pickle.loads(blob).object_array(0, 0)


def test_async_file(tmp_path):
    p = write_archive(tmp_path / "a.tgm")

    async def main():
        async with await tgm.AsyncTensogramFile.open(p) as f:
            assert await f.message_count() == 5
            objs = await asyncio.gather(*(f.file_decode_object(i, 0) for i in range(5)))
            steps = [m.metadata.base[0]["step"] async for m in f]
            msg = await f.decode_message(1)
            return objs, steps, msg

    objs, steps, msg = asyncio.run(main())
    assert steps == [0, 1, 2, 3, 4]
    for i, o in enumerate(objs):
        np.testing.assert_array_equal(o["data"], np.arange(12.0).reshape(3, 4) + i)
    assert msg.metadata.base[0]["step"] == 1


def test_validate_file_reports_trailing_garbage(tmp_path):
    p = write_archive(tmp_path / "a.tgm", 2)
    size = p.stat().st_size
    with open(p, "ab") as fh:
        fh.write(b"TENSOGRM\x00\x03garbage")
    ours = tgm.validate_file(p)
    theirs = ref.validate_file(str(p))
    assert len(ours["messages"]) == len(theirs["messages"]) == 2
    assert all(m["issues"] == [] for m in ours["messages"])
    assert [i["byte_offset"] for i in ours["file_issues"]] == [size]
    assert len(theirs["file_issues"]) == 1


def test_open_missing_file():
    with pytest.raises(FileNotFoundError):
        tgm.TensogramFile.open("/nonexistent/x.tgm")


class _DLPackOnly:
    """A producer exposing only the DLPack protocol."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_in_and_out(tmp_path):
    src = np.arange(12.0).reshape(3, 4)
    p = tmp_path / "d.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append({}, [(desc([3, 4], "float64"), _DLPackOnly(src))])
    view = tgm.TensogramFile.open(p, zero_copy=True).object_array(0, 0)
    assert not view.flags.writeable
    # The read-only mmap view exports through DLPack without a copy.
    imported = np.from_dlpack(view)
    assert np.shares_memory(imported, view)
    np.testing.assert_array_equal(imported, src)


def test_concurrent_reads_from_threads(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    p = write_archive(tmp_path / "a.tgm", 8)
    f = tgm.TensogramFile.open(p)
    buf = p.read_bytes()

    def work(i):
        a = f.object_array(i % 8, 0)
        b = f.file_decode_object(i % 8, 1)["data"]
        off, length = tgm.scan(buf)[i % 8]
        c = tgm.decode(buf[off : off + length]).objects[0][1]
        return a.sum(), b.sum(), c.sum()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(64)))
    for i, (a, b, c) in enumerate(results):
        step = i % 8
        assert a == c == (np.arange(12.0) + step).sum()
        assert b == 50 * step


def test_from_layout_reads_without_scanning(tmp_path, monkeypatch):
    p = write_archive(tmp_path / "a.tgm", 3)
    size, spans = tgm.TensogramFile.open(p).layout
    assert size == p.stat().st_size and len(spans) == 3
    monkeypatch.setattr(tgm._native, "File", _NoScan)
    g = tgm.TensogramFile.from_layout(p, size, spans)
    assert g.file_decode_metadata(2).base[0]["step"] == 2


def test_range_reads_after_a_rewrite_never_use_the_old_element_type(tmp_path):
    """A handle keeps each object's element type for its range reads; after
    the file is rewritten with another type, a range read is an error
    naming the change, never the new bytes viewed as the old type."""
    p = tmp_path / "k.tgm"
    p.write_bytes(tgm.encode({}, [(desc([8], "float32"), np.arange(8, dtype=np.float32))]))
    f = tgm.TensogramFile.open(str(p))
    np.testing.assert_array_equal(f.file_decode_range(0, 0, [(1, 2)], join=True), [1.0, 2.0])
    p.write_bytes(tgm.encode({}, [(desc([16], "int16"), np.arange(16, dtype=np.int16) * 3)]))
    with pytest.raises(tgm.FramingError, match="differs"):
        f.refresh()
        f.file_decode_range(0, 0, [(1, 2)], join=True)
    g = tgm.TensogramFile.open(str(p))
    np.testing.assert_array_equal(g.file_decode_range(0, 0, [(1, 2)], join=True), [3, 6])


def test_refresh_finds_what_another_writer_appended_and_keeps_what_was_read(tmp_path):
    """A handle looks at its file again on refresh: messages appended by
    another writer are found, those read before still read the same."""
    p = tmp_path / "grow.tgm"

    def one(v):
        return tgm.encode({"base": [{"v": v}]}, [(desc([4], "float32"), np.full(4, v, dtype=np.float32))])

    p.write_bytes(one(1))
    f = tgm.TensogramFile.open(str(p))
    assert f.file_decode_metadata(0).base[0]["v"] == 1
    with open(p, "ab") as out:
        out.write(one(2) + one(3))
    f.refresh()
    assert f._handle().count() == 3
    assert [f.file_decode_metadata(i).base[0]["v"] for i in range(3)] == [1, 2, 3]
    np.testing.assert_array_equal(f.file_decode_object(2, 0)["data"], np.full(4, 3, dtype=np.float32))


def test_refresh_is_refused_on_a_file_object(tmp_path):
    """Only a local path is looked at again; a file object's handle says so."""
    p = tmp_path / "one.tgm"
    p.write_bytes(tgm.encode({}, [(desc([2], "uint8"), np.arange(2, dtype=np.uint8))]))
    with open(p, "rb") as fh:
        native = tgm._native.File.open_reader(fh, str(p))
        assert native.count() == 1
        with pytest.raises(tgm.InvalidArgumentError, match="local files only"):
            native.refresh()
