"""Damage is an error: opening a file that is not a Tensogram file or holds
bytes outside complete messages raises, naming the path, the absolute byte
offset and the message index; ``intact_only=True`` reads the intact
messages. A handle follows another writer's appends."""

import numpy as np
import pytest

import tgm
from conftest import desc


def message(i, n=1):
    return tgm.encode(
        {"base": [{"name": f"v{o}", "mars": {"step": i}} for o in range(n)]},
        [(desc([16], "float32"), np.full(16, i + o, np.float32)) for o in range(n)],
    )


def archive(path, count):
    msgs = [message(i) for i in range(count)]
    path.write_bytes(b"".join(msgs))
    return msgs


def test_cut_inside_a_message_is_refused(tmp_path):
    p = tmp_path / "a.tgm"
    msgs = archive(p, 100)
    start = sum(len(m) for m in msgs[:80])
    p.write_bytes(p.read_bytes()[: start + len(msgs[80]) // 2])
    with pytest.raises(tgm.FramingError) as e:
        tgm.TensogramFile.open(p)
    err = e.value
    assert err.offset == start and err.message_index == 80
    assert str(p) in str(err) and f"offset {start}" in str(err) and "message 80" in str(err)
    assert "intact_only" in str(err)
    f = tgm.TensogramFile.open(p, intact_only=True)
    assert len(f) == 80
    np.testing.assert_array_equal(f.object_array(79, 0), np.full(16, 79, np.float32))
    assert f.damage() == [(start, len(msgs[80]) // 2, f.damage()[0][2], True)]


def test_one_message_missing_its_end_is_refused(tmp_path):
    p = tmp_path / "a.tgm"
    (m,) = archive(p, 1)
    p.write_bytes(m[:-100])
    with pytest.raises(tgm.FramingError) as e:
        tgm.TensogramFile.open(p)
    assert e.value.offset == 0 and e.value.message_index == 0
    assert len(tgm.TensogramFile.open(p, intact_only=True)) == 0


def test_trailing_and_interleaved_garbage_is_refused(tmp_path):
    p = tmp_path / "a.tgm"
    a, b = message(0), message(1)
    p.write_bytes(a + b"junk" * 10 + b + b"x" * 7)
    with pytest.raises(tgm.FramingError) as e:
        tgm.TensogramFile.open(p)
    assert e.value.offset == len(a) and e.value.message_index == 1
    f = tgm.TensogramFile.open(p, intact_only=True)
    assert len(f) == 2
    assert [d[:2] for d in f.damage()] == [(len(a), 40), (len(a) + 40 + len(b), 7)]


@pytest.mark.parametrize(
    "content",
    [
        b"GRIB\x00\x00\x00\x02" + bytes(200) + b"7777",
        b"CDF\x01" + bytes(300),
        b"\x89HDF\r\n\x1a\n" + bytes(300),
        b"root:x:0:0:root:/root:/bin/bash\n" * 20,
    ],
    ids=["grib", "netcdf3", "netcdf4", "passwd"],
)
def test_foreign_files_are_refused(tmp_path, content):
    p = tmp_path / "foreign.tgm"
    p.write_bytes(content)
    for opts in ({}, {"intact_only": True}):
        with pytest.raises(tgm.FramingError) as e:
            tgm.TensogramFile.open(p, **opts)
        assert "not a Tensogram file" in str(e.value) and str(p) in str(e.value)
        assert e.value.offset == 0


def test_etc_passwd_is_refused():
    with pytest.raises(tgm.FramingError, match="not a Tensogram file"):
        tgm.TensogramFile.open("/etc/passwd")


def test_empty_file_has_no_messages(tmp_path):
    p = tmp_path / "empty.tgm"
    p.write_bytes(b"")
    assert len(tgm.TensogramFile.open(p)) == 0


def test_xarray_follows_the_same_rule(tmp_path):
    xr = pytest.importorskip("xarray")
    p = tmp_path / "a.tgm"
    msgs = archive(p, 3)
    p.write_bytes(p.read_bytes()[:-10])
    with pytest.raises(tgm.FramingError) as e:
        xr.open_dataset(p, engine="tgm")
    assert e.value.message_index == 2 and e.value.offset == len(msgs[0]) + len(msgs[1])
    ds = xr.open_dataset(p, engine="tgm", intact_only=True)
    assert ds["v0"].shape == (2, 16)
    q = tmp_path / "b.tgm"
    q.write_bytes(b"CDF\x01" + bytes(300))
    with pytest.raises(tgm.FramingError, match="not a Tensogram file"):
        xr.open_dataset(q, engine="tgm")


def test_bit_flip_error_has_absolute_offset_and_indexes(tmp_path):
    p = tmp_path / "a.tgm"
    msgs = [message(i, n=3) for i in range(3)]
    p.write_bytes(b"".join(msgs))
    base = len(msgs[0]) + len(msgs[1])
    # The payload of object 1 of message 2: found through the buffer API.
    _, rel, _ = tgm._native.locate_raw(msgs[2], 1)
    raw = bytearray(p.read_bytes())
    raw[base + rel + 3] ^= 0x10
    p.write_bytes(bytes(raw))
    f = tgm.TensogramFile.open(p)
    with pytest.raises(tgm.HashMismatchError) as e:
        f.file_decode_object(2, 1)
    err = e.value
    assert err.message_index == 2 and err.object_index == 1
    assert err.offset is not None and base <= err.offset < base + len(msgs[2])
    assert f"offset {err.offset}" in str(err) and str(p) in str(err)
    np.testing.assert_array_equal(f.file_decode_object(2, 0)["data"], np.full(16, 2, np.float32))
    with pytest.raises(tgm.HashMismatchError) as e:
        f.decode_message(2)
    assert (e.value.offset, e.value.message_index, e.value.object_index) == (err.offset, 2, 1)
    with pytest.raises(tgm.HashMismatchError) as e:
        f[-1]
    assert e.value.offset == err.offset


def test_handle_follows_another_writers_appends(tmp_path):
    p = tmp_path / "a.tgm"
    archive(p, 2)
    f = tgm.TensogramFile.open(p)
    np.testing.assert_array_equal(f.object_array(1, 0), np.full(16, 1, np.float32))
    with open(p, "ab") as fh:
        fh.write(message(2) + message(3))
    # An index past the known end looks for new messages first.
    np.testing.assert_array_equal(f.object_array(3, 0), np.full(16, 3, np.float32))
    assert len(f) == 4
    with open(p, "ab") as fh:
        fh.write(message(4))
    assert f.file_decode_metadata(-1).base[0]["mars"]["step"] == 4
    w = tgm.TensogramFile.open(p)
    w.append({}, [(desc([1], "uint8"), np.array([7], np.uint8))])
    assert f[5].objects[0][1][0] == 7


def test_negative_indexes_count_from_the_end(tmp_path):
    p = tmp_path / "a.tgm"
    p.write_bytes(b"".join(message(i, n=3) for i in range(4)))
    f = tgm.TensogramFile.open(p)
    np.testing.assert_array_equal(f.object_array(-1, -1), np.full(16, 5, np.float32))
    np.testing.assert_array_equal(f.file_decode_object(-2, -3)["data"], np.full(16, 2, np.float32))
    np.testing.assert_array_equal(
        f.file_decode_range(-1, -2, [(0, 2)], join=True), np.full(2, 4, np.float32)
    )
    assert f.object_descriptor(0, -1)[1].shape == [16]
    with pytest.raises(IndexError):
        f.object_array(0, -4)
    with pytest.raises(IndexError):
        f.object_array(-5, 0)


def test_object_reads_do_not_convert_the_message_metadata_each_time(tmp_path):
    import pickle

    p = tmp_path / "a.tgm"
    p.write_bytes(message(0, n=200))
    f = tgm.TensogramFile.open(p)
    a = f.file_decode_object(0, 7)["metadata"]
    b = f.file_decode_object(0, 8)["metadata"]
    # Nothing converted yet: the fields are filled on first use.
    with pytest.raises(AttributeError):
        object.__getattribute__(a, "_base")
    assert isinstance(a, tgm.Metadata)
    p.write_bytes(b"")  # the parsed metadata no longer needs the file
    assert a == b and a.num_objects == 200 and a.base[7]["name"] == "v7"
    a.base[0]["name"] = "changed"
    assert b.base[0]["name"] == "v0", "each result owns its metadata"
    again = pickle.loads(pickle.dumps(b))
    assert type(again) is tgm.Metadata and again == b
