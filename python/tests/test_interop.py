"""tgm and the reference wheel (tensogram 0.24.0) read each other's messages
with identical values."""

import numpy as np
import pytest

import tgm
from conftest import DTYPES, desc, sample

ref = pytest.importorskip("tensogram")

PIPELINES = {
    "none": {},
    "zstd": {"compression": "zstd", "zstd_level": 3},
    "lz4": {"compression": "lz4"},
    "shuffle_zstd": {"filter": "shuffle", "shuffle_element_size": 8, "compression": "zstd", "zstd_level": 1},
    "packing": {"encoding": "simple_packing", "sp_bits_per_value": 16},
    "packing_szip": {
        "encoding": "simple_packing",
        "sp_bits_per_value": 16,
        "compression": "szip",
        "szip_rsi": 128,
        "szip_block_size": 16,
        "szip_flags": 8,
    },
}


def assert_same(a, b):
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_tgm_to_reference(dtype):
    data = sample(dtype).reshape(4, 6)
    msg = tgm.encode({"base": [{"k": dtype}]}, [(desc([4, 6], dtype), data)])
    out = ref.decode(msg)
    arr = out.objects[0][1]
    assert out.metadata.base[0]["k"] == dtype
    assert_same(arr, data)


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
def test_every_dtype_reference_to_tgm(dtype):
    data = sample("uint16" if dtype == "bfloat16" else dtype).reshape(4, 6)
    # The reference accepts raw bytes for every dtype.
    msg = ref.encode({"base": [{"k": dtype}]}, [(desc([4, 6], dtype), data.tobytes())])
    out = tgm.decode(msg)
    d, arr = out.objects[0]
    assert d.dtype == dtype
    assert out.metadata.base[0]["k"] == dtype
    assert_same(arr, data)
    assert_same(arr, ref.decode(msg).objects[0][1])


def test_bitmask_both_ways():
    bits = np.array([0b10110000, 0b00000001], dtype=np.uint8)
    msg = tgm.encode({}, [(desc([16], "bitmask"), bits)])
    assert_same(ref.decode(msg).objects[0][1], bits)
    msg = ref.encode({}, [(desc([16], "bitmask"), bits)])
    assert_same(tgm.decode(msg).objects[0][1], bits)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipelines_both_ways(name):
    data = np.linspace(-50, 250, 3000).reshape(30, 100)
    d = desc([30, 100], "float64", **PIPELINES[name])
    for enc, dec in ((tgm, ref), (ref, tgm)):
        msg = enc.encode({"base": [{"mars": {"param": "t"}}]}, [(d, data)])
        ours = tgm.decode(msg).objects[0][1]
        theirs = ref.decode(msg).objects[0][1]
        assert_same(ours, theirs)
        if name.startswith("packing"):
            np.testing.assert_allclose(ours, data, atol=300 / 2**15)
        else:
            assert_same(ours, data)
        dd = dec.decode(msg).objects[0][0]
        assert dd.encoding == d.get("encoding", "none")
        assert dd.compression == d.get("compression", "none")


def test_identical_params_after_auto_packing():
    data = np.linspace(0, 100, 1000)
    d = desc([1000], "float64", encoding="simple_packing", sp_bits_per_value=16)
    ours = tgm.decode(tgm.encode({}, [(d, data)])).objects[0][0].params
    theirs = ref.decode(ref.encode({}, [(d, data)])).objects[0][0].params
    assert ours == theirs


def test_big_endian_objects():
    data = np.arange(6, dtype=np.float32)
    d = desc([6], "float32", byte_order="big")
    for enc in (tgm, ref):
        msg = enc.encode({}, [(d, data.astype(">f4").tobytes())])
        for native in (True, False):
            a = tgm.decode(msg, native_byte_order=native).objects[0][1]
            b = ref.decode(msg, native_byte_order=native).objects[0][1]
            np.testing.assert_array_equal(a, data)
            if native:
                assert_same(a, b)
            else:
                # Same stored bytes; the reference labels them native-order
                # (wrong values), tgm labels them big-endian.
                assert a.dtype == np.dtype(">f4")
                assert a.tobytes() == b.tobytes()


def test_tgm_swaps_arrays_into_the_descriptor_order():
    data = np.arange(6, dtype="<i4")
    msg = tgm.encode({}, [(desc([6], "int32", byte_order="big"), data)])
    assert_same(ref.decode(msg).objects[0][1], data)
    msg = tgm.encode({}, [(desc([6], "int32"), data.astype(">i4"))])
    assert_same(ref.decode(msg).objects[0][1], data)


def test_metadata_and_descriptor_views_match(simple_message):
    msg, _ = simple_message
    m1, d1 = tgm.decode_descriptors(msg)
    m2, d2 = ref.decode_descriptors(msg)
    assert m1.base == m2.base and m1.extra == m2.extra
    assert list(m1.keys()) == list(m2.keys())
    assert m1["mars"] == m2["mars"] and ("foo" in m1) == ("foo" in m2)
    assert m1.get_path("mars.param") == m2.get_path("mars.param") == "2t"
    assert m1.version == m2.version == 3
    for a, b in zip(d1, d2):
        for attr in ("obj_type", "shape", "strides", "dtype", "byte_order", "encoding", "filter", "compression", "params", "ndim"):
            assert getattr(a, attr) == getattr(b, attr), attr
    assert tgm.decode_metadata(msg).base == ref.decode_metadata(msg).base


def test_decode_object_and_range_match(simple_message):
    msg, data = simple_message
    _, d, arr = tgm.decode_object(msg, 0)
    assert_same(arr, ref.decode_object(msg, 0)[2])
    ranges = [(1, 3), (5, 2)]
    for a, b in zip(tgm.decode_range(msg, 0, ranges), ref.decode_range(msg, 0, ranges)):
        assert_same(a, b)
    assert_same(tgm.decode_range(msg, 0, ranges, join=True), ref.decode_range(msg, 0, ranges, join=True))


@pytest.mark.parametrize("native", [True, False])
def test_decode_range_szip_many_ranges_match(native):
    # Ranges in RSIs of their own, two sharing one, one crossing an RSI
    # boundary, given out of order: each array and the joined one as the
    # reference gives them, in either byte order.
    n = 64 * 4096
    data = np.cumsum(np.random.default_rng(3).standard_normal(n)) + 280.0
    d = desc(
        [n], "float64", encoding="simple_packing", sp_bits_per_value=16,
        compression="szip", szip_rsi=128, szip_block_size=32, szip_flags=8,
    )
    msg = ref.encode({}, [(d, data)])
    ranges = [(i * 4096 + i * 397 % 4000, 10) for i in range(60)] + [(4090, 12), (20, 3), (0, 1)]
    ranges.reverse()
    for a, b in zip(
        tgm.decode_range(msg, 0, ranges, native_byte_order=native),
        ref.decode_range(msg, 0, ranges, native_byte_order=native),
    ):
        assert_same(a, b)
    joined = tgm.decode_range(msg, 0, ranges, join=True, native_byte_order=native)
    assert_same(joined, ref.decode_range(msg, 0, ranges, join=True, native_byte_order=native))
    assert_same(tgm.decode_range(msg, 0, [], join=True), ref.decode_range(msg, 0, [], join=True))


def test_decode_range_simple_packing_matches():
    data = np.linspace(0, 1, 5000)
    msg = ref.encode({}, [(desc([5000], "float64", encoding="simple_packing", sp_bits_per_value=12), data)])
    ranges = [(0, 10), (4990, 10), (2500, 1)]
    for a, b in zip(tgm.decode_range(msg, 0, ranges), ref.decode_range(msg, 0, ranges)):
        assert_same(a, b)


def test_scan_hash_packing_params_match():
    msgs = [ref.encode({"base": [{"i": i}]}, [(desc([3], "int16"), np.arange(3, dtype=np.int16))]) for i in range(3)]
    buf = b"junk" + b"".join(msgs) + b"tail"
    assert tgm.scan(buf) == ref.scan(buf)
    assert tgm.compute_hash(b"hello world") == ref.compute_hash(b"hello world") == "d447b1ea40e6988b"
    v = np.random.default_rng(1).standard_normal(1000) * 30 + 270
    for bits, dsf in ((16, 0), (24, 2), (8, -1)):
        assert tgm.compute_packing_params(v, bits, dsf) == ref.compute_packing_params(v, bits, dsf)


def test_validate_agrees_on_good_messages(simple_message):
    msg, _ = simple_message
    for level in ("quick", "default", "full"):
        ours, theirs = tgm.validate(msg, level), ref.validate(msg, level)
        assert ours["issues"] == theirs["issues"] == []
        assert ours["object_count"] == theirs["object_count"]
    assert tgm.validate(msg)["hash_verified"] == ref.validate(msg)["hash_verified"] is True


def test_iter_messages_matches():
    msgs = [tgm.encode({"base": [{"i": i}]}, [(desc([2], "float64"), np.full(2, float(i)))]) for i in range(4)]
    buf = b"".join(msgs)
    ours = list(tgm.iter_messages(buf))
    theirs = list(ref.iter_messages(buf))
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        assert a.metadata.base == b.metadata.base
        assert_same(a.objects[0][1], b.objects[0][1])


def test_streaming_encoder_output_reads_in_reference():
    enc = tgm.StreamingEncoder({"base": [{"a": 1}, {"b": 2}]})
    enc.write_object(desc([4], "float32"), np.ones(4, np.float32))
    enc.write_object(desc([2], "int64"), np.array([7, 8]))
    for finish in ("finish_and_reset", "finish_and_reset_backfilled", "finish_backfilled"):
        msg = getattr(enc, finish)()
        out = ref.decode(msg)
        assert out.metadata.base[1]["b"] == 2
        assert_same(out.objects[1][1], np.array([7, 8]))
        if finish != "finish_backfilled":
            enc.write_object(desc([4], "float32"), np.ones(4, np.float32))
            enc.write_object(desc([2], "int64"), np.array([7, 8]))
    # A finished encoder refuses further use, as the reference's does.
    with pytest.raises(RuntimeError, match="already finished"):
        enc.finish()
