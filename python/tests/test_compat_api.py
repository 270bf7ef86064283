"""Behaviours of the reference API that tgm carries over: pre-encoded
payloads, NaN/Inf mask options and decode_with_masks, the descriptor
metadata warning, streaming encoder state, error categories, Python-style
indexes, NumPy values in metadata and bool arrays for bitmasks."""

import warnings

import numpy as np
import pytest

import tgm
from conftest import desc


def one(arr, **kw):
    return tgm.encode({"base": [{}]}, [(desc(arr.shape, str(arr.dtype), **kw), arr)])


# -- encode_pre_encoded ------------------------------------------------


def test_pre_encoded_raw_payload_equals_encode():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = desc([3, 4], "float32", byte_order="little")
    msg = tgm.encode_pre_encoded({}, [(d, a.astype("<f4").tobytes())])
    out = tgm.decode(msg, verify_hash=True).objects[0][1]
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(tgm.decode(one(a)).objects[0][1], out)


def test_pre_encoded_simple_packing_payload_is_written_as_given():
    values = np.linspace(0.0, 1.0, 64)
    d = desc([64], "float64", encoding="simple_packing")
    d.update(tgm.compute_packing_params(values, 16, 0))
    encoded = tgm.encode({}, [(d, values)])
    region = tgm.decode_descriptors(encoded)[1][0]
    assert region.encoding == "simple_packing"
    # The payload of a 16-bit packing of 64 values is 128 bytes; rebuild it
    # from the quantised values and wrap it unchanged.
    p = tgm.compute_packing_params(values, 16, 0)
    scale = 2.0 ** -p["sp_binary_scale_factor"]
    q = np.round((values - p["sp_reference_value"]) * scale).astype(">u2")
    msg = tgm.encode_pre_encoded({}, [(d, q.tobytes())])
    np.testing.assert_array_equal(tgm.decode(msg).objects[0][1], tgm.decode(encoded).objects[0][1])


def test_pre_encoded_raw_payload_of_the_wrong_size_is_refused():
    d = desc([4], "float32")
    with pytest.raises(tgm.InvalidArgumentError, match="16"):
        tgm.encode_pre_encoded({}, [(d, b"\0" * 12)])


def test_pre_encoded_szip_offsets_must_increase():
    d = desc([100], "float64", encoding="simple_packing", compression="szip")
    d.update(tgm.compute_packing_params(np.zeros(100), 16, 0))
    d.update(szip_rsi=128, szip_block_size=16, szip_flags=8, szip_block_offsets=[0, 200, 100])
    with pytest.raises(ValueError, match="szip_block_offsets"):
        tgm.encode_pre_encoded({}, [(d, b"\0" * 200)])


@pytest.mark.parametrize("payload", [np.zeros(4, np.float32), 42, None])
def test_pre_encoded_payload_must_be_bytes_like(payload):
    with pytest.raises(TypeError, match="pre-encoded payload"):
        tgm.encode_pre_encoded({}, [(desc([4], "float32"), payload)])


def test_streaming_pre_encoded_and_encoded_objects_mix():
    a = np.arange(4, dtype=np.float32)
    enc = tgm.StreamingEncoder({})
    enc.write_object_pre_encoded(desc([4], "float32", byte_order="little"), a.astype("<f4").tobytes())
    enc.write_object(desc([4], "float32"), a * 2)
    objs = tgm.decode(enc.finish(), verify_hash=True).objects
    np.testing.assert_array_equal(objs[0][1], a)
    np.testing.assert_array_equal(objs[1][1], a * 2)


# -- streaming encoder state ------------------------------------------


def test_streaming_encoder_refuses_use_after_finish():
    enc = tgm.StreamingEncoder({})
    enc.finish()
    with pytest.raises(RuntimeError, match="already finished"):
        enc.finish()
    with pytest.raises(RuntimeError, match="already finished"):
        enc.write_object(desc([1], "uint8"), np.zeros(1, np.uint8))


def test_streaming_encoder_reset_keeps_going():
    enc = tgm.StreamingEncoder({"run": 7})
    enc.write_object(desc([1], "uint8"), np.ones(1, np.uint8))
    first = enc.finish_and_reset()
    enc.write_object(desc([2], "uint8"), np.ones(2, np.uint8))
    second = enc.finish_backfilled()
    assert len(tgm.scan(first + second)) == 2
    assert tgm.decode(second).metadata["run"] == 7


# -- NaN/Inf masks -------------------------------------------------------


@pytest.mark.parametrize("method", ["none", "rle", "roaring", "lz4", "zstd"])
def test_mask_method_is_written_and_restored(method):
    a = np.arange(256, dtype=np.float64)
    a[[3, 70, 200]] = np.nan
    msg = tgm.encode(
        {}, [(desc([256], "float64"), a)], allow_nan=True, nan_mask_method=method,
        small_mask_threshold_bytes=0,
    )
    d, out = tgm.decode(msg).objects[0]
    assert d.masks["nan"]["method"] == method
    assert np.flatnonzero(np.isnan(out)).tolist() == [3, 70, 200]


def test_unknown_mask_method_names_the_accepted_ones():
    with pytest.raises(ValueError, match="unknown mask method") as e:
        tgm.encode({}, [(desc([1], "float64"), np.zeros(1))], nan_mask_method="bogus")
    for name in ("none", "rle", "roaring", "lz4", "zstd", "blosc2"):
        assert f'"{name}"' in str(e.value)


def test_decode_with_masks_gives_substitutes_and_bool_masks():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 5.0])
    msg = tgm.encode({}, [(desc([5], "float64"), a)], allow_nan=True, allow_inf=True)
    _, payload, masks = tgm.decode_with_masks(msg).objects[0]
    np.testing.assert_array_equal(payload, [1.0, 0.0, 0.0, 0.0, 5.0])
    assert sorted(masks) == ["inf+", "inf-", "nan"]
    assert masks["nan"].tolist() == [False, True, False, False, False]
    assert masks["inf+"].tolist() == [False, False, True, False, False]
    assert masks["inf-"].tolist() == [False, False, False, True, False]
    _, _, none = tgm.decode_with_masks(one(np.ones(3))).objects[0]
    assert none == {}


# -- descriptor metadata warning ----------------------------------------


def test_metadata_like_descriptor_keys_warn_once_from_the_callers_line():
    d = desc([2], "float32", units="K", name="t2m")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        msg = tgm.encode({}, [(d, np.zeros(2, np.float32))])  # the caller's line
    (w,) = [w for w in caught if issubclass(w.category, UserWarning)]
    assert "'name'" in str(w.message) and "'units'" in str(w.message)
    assert w.filename == __file__
    with open(__file__) as f:
        assert "the caller's line" in f.readlines()[w.lineno - 1]
    assert tgm.decode(msg).objects[0][0].params["units"] == "K"


def test_clean_descriptor_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tgm.encode({}, [(desc([2], "float32", zstd_level=3, compression="zstd"), np.zeros(2, np.float32))])


# -- errors and indexes -------------------------------------------------


def test_errors_start_with_the_reference_category():
    msg = one(np.ones(10, np.float32))
    for bad in (b"", b"not a message", msg[:20]):
        with pytest.raises(tgm.FramingError, match="^FramingError: "):
            tgm.decode(bad)
    with pytest.raises(IndexError, match="^ObjectError: .*out of range"):
        tgm.decode_object(msg, 5)


def test_negative_object_indexes_count_from_the_end():
    a, b = np.arange(3, dtype=np.int32), np.arange(5, dtype=np.int16)
    msg = tgm.encode({}, [(desc([3], "int32"), a), (desc([5], "int16"), b)])
    np.testing.assert_array_equal(tgm.decode_object(msg, -1)[2], b)
    np.testing.assert_array_equal(tgm.decode_object(msg, -2)[2], a)
    np.testing.assert_array_equal(tgm.decode_range(msg, -1, [(1, 2)], join=True), b[1:3])
    with pytest.raises(IndexError, match="-3"):
        tgm.decode_object(msg, -3)


@pytest.mark.parametrize("rng", [(1.5, 2), (1, 2.0), ("1", 2)])
def test_decode_range_refuses_non_integers(rng):
    msg = one(np.arange(10, dtype=np.float32))
    with pytest.raises(TypeError, match="range"):
        tgm.decode_range(msg, 0, [rng])


@pytest.mark.parametrize("rng", [(True, 2), (1, False), (np.bool_(True), 2)])
def test_decode_range_refuses_bools(rng):
    msg = one(np.arange(10, dtype=np.float32))
    with pytest.raises(TypeError, match="range .* must be an integer"):
        tgm.decode_range(msg, 0, [rng])


@pytest.mark.parametrize("rng", [(-1, 2), (1, -2)])
def test_decode_range_refuses_negative_bounds(rng):
    msg = one(np.arange(10, dtype=np.float32))
    with pytest.raises(tgm.InvalidArgumentError, match="must not be negative"):
        tgm.decode_range(msg, 0, [rng])


@pytest.mark.parametrize("rng", [(1,), (1, 2, 3), [1], 5])
def test_decode_range_refuses_what_is_not_a_pair(rng):
    msg = one(np.arange(10, dtype=np.float32))
    with pytest.raises(tgm.InvalidArgumentError, match="pair"):
        tgm.decode_range(msg, 0, [rng])


def test_decode_range_takes_any_pair_of_integers():
    a = np.arange(10, dtype=np.float32)
    msg = one(a)
    for ranges in ([[2, 3]], [(np.int64(2), np.uint8(3))], np.array([[2, 3]]), iter([(2, 3)])):
        np.testing.assert_array_equal(tgm.decode_range(msg, 0, ranges, join=True), a[2:5])


def test_decode_range_reads_ranges_without_hashing_the_frame():
    """As in the reference, a range read does not check the frame digest
    (which covers the whole payload); decoding the object does."""
    a = np.arange(1000, dtype=np.float32)
    msg = bytearray(one(a))
    # A byte of element 900's storage, far from the range read.
    at = bytes(msg).index(a[900:901].tobytes())
    msg[at] ^= 0xFF
    np.testing.assert_array_equal(tgm.decode_range(bytes(msg), 0, [(0, 4)], join=True), a[:4])
    with pytest.raises(tgm.HashMismatchError):
        tgm.decode_object(bytes(msg), 0)


def test_compute_hash_takes_bytes_only():
    assert tgm.compute_hash(bytearray(b"hello world")) == "d447b1ea40e6988b"
    for bad in (memoryview(b"x"), np.zeros(2, np.uint8), "x"):
        with pytest.raises(TypeError):
            tgm.compute_hash(bad)
    with pytest.raises(ValueError, match="unknown hash type"):
        tgm.compute_hash(b"x", algo="md5")


# -- NumPy values in metadata, bool bitmasks ----------------------------


def test_numpy_values_in_metadata_become_python_values():
    meta = {
        "base": [{"scale": np.float32(0.5), "n": np.int64(-3), "levels": np.array([[1, 2], [3, 4]])}],
        "flag": np.bool_(True),
    }
    msg = tgm.encode(meta, [(desc([1], "uint8"), np.zeros(1, np.uint8))])
    m = tgm.decode_metadata(msg)
    assert m.base[0]["scale"] == 0.5 and m.base[0]["n"] == -3
    assert m.base[0]["levels"] == [[1, 2], [3, 4]]
    assert m.extra["flag"] is True


def test_numpy_values_without_a_cbor_form_are_named():
    meta = {"base": [{"when": np.datetime64("2024-01-01T00:00")}]}
    with pytest.raises(TypeError, match="datetime64"):
        tgm.encode(meta, [(desc([1], "uint8"), np.zeros(1, np.uint8))])


def test_bool_array_encodes_as_bitmask():
    bits = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 0], dtype=bool)
    from_bool = tgm.encode({}, [(desc([10], "bitmask"), bits)])
    from_packed = tgm.encode({}, [(desc([10], "bitmask"), np.packbits(bits))])
    a = tgm.decode(from_bool).objects[0][1]
    np.testing.assert_array_equal(a, tgm.decode(from_packed).objects[0][1])
    np.testing.assert_array_equal(np.unpackbits(a, count=10).astype(bool), bits)
    with pytest.raises(tgm.EncodeError, match="9 elements"):
        tgm.encode({}, [(desc([10], "bitmask"), bits[:9])])


def test_top_level_keys_join_explicit_extra_and_a_key_given_twice_is_refused():
    data = [(desc([1], "uint8"), np.zeros(1, np.uint8))]
    m = tgm.decode_metadata(tgm.encode({"base": [{}], "version": 99, "_extra_": {"run": "a"}}, data))
    assert m.extra == {"version": 99, "run": "a"}
    with pytest.raises(tgm.MetadataError, match="both at top level and in _extra_"):
        tgm.encode({"version": 99, "_extra_": {"version": 1}}, data)


def test_pre_encoded_pipeline_is_checked_before_writing():
    d = desc([10], "float32", encoding="bogus_encoding")
    with pytest.raises(tgm.UnsupportedCodecError, match="bogus_encoding"):
        tgm.encode_pre_encoded({}, [(d, b"\0" * 40)])
    d = desc([10], "float32", szip_block_offsets=[0, 80])
    with pytest.raises(ValueError, match="szip_block_offsets provided but compression"):
        tgm.encode_pre_encoded({}, [(d, b"\0" * 40)])


# -- metadata dict rules ------------------------------------------------


@pytest.mark.parametrize(
    "meta",
    [{"base": [{"_reserved_": {}}]}, {"base": [{}], "_reserved_": {"uuid": "x"}}],
)
def test_reserved_is_refused_wherever_the_caller_puts_it(meta):
    with pytest.raises(ValueError, match="_reserved_"):
        tgm.encode(meta, [(desc([1], "uint8"), np.zeros(1, np.uint8))])


def test_extra_is_an_alias_of_explicit_extra():
    data = [(desc([1], "uint8"), np.zeros(1, np.uint8))]
    m = tgm.decode_metadata(tgm.encode({"extra": {"run": 3}}, data))
    assert m.extra == {"run": 3}
    with pytest.raises(ValueError, match=r"'extra' must be a dict \(a map: the alias of _extra_\), not a text"):
        tgm.encode({"extra": "x"}, data)
    with pytest.raises(ValueError, match="base"):
        tgm.encode({"base": None}, data)


def test_paths_with_an_extra_prefix_and_past_the_last_object():
    m = tgm.Metadata(base=[{"source": "object"}], extra={"source": "message"})
    assert m.get_path("source") == "object"
    assert m.get_path("extra.source") == "message"
    assert m.has_path("extra.source") and not m.has_path("extra.missing")
    assert m.get_path_at(5, "source", "D") == "D" and not m.has_path_at(5, "source")


@pytest.mark.parametrize("bad, what", [(np.nan, "NaN"), (np.inf, "infinite value"), (-np.inf, "infinite value")])
def test_packing_params_refuse_non_finite_values(bad, what):
    with pytest.raises(ValueError, match=f"{what} at element 1"):
        tgm.compute_packing_params(np.array([1.0, bad, 2.0]), 16, 0)


def test_packing_param_errors_name_the_given_key_first():
    d = desc([4], "float64", encoding="simple_packing", sp_bits_per_value=16, sp_binary_scale_factor=0)
    with pytest.raises(ValueError, match="sp_binary_scale_factor given without sp_reference_value"):
        tgm.encode({}, [(d, np.zeros(4))])
    with pytest.raises(ValueError, match="simple_packing only supports float64"):
        d = desc([4], "float32", encoding="simple_packing", sp_bits_per_value=16)
        tgm.encode({}, [(d, np.zeros(4, np.float32))])


def test_hash_mismatch_carries_expected_and_actual():
    msg = bytearray(one(np.arange(8, dtype=np.float32)))
    _, off, _ = tgm._native.locate_raw(bytes(msg), 0)
    msg[off] ^= 1
    with pytest.raises(tgm.HashMismatchError) as e:
        tgm.decode(bytes(msg))
    assert len(e.value.expected) == len(e.value.actual) == 16
    assert e.value.expected != e.value.actual


# -- files ----------------------------------------------------------------


def test_file_index_errors_are_value_and_index_errors(tmp_path):
    p = tmp_path / "a.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append({}, [(desc([1], "uint8"), np.zeros(1, np.uint8))])
    with tgm.TensogramFile.open(p) as f:
        for call in (lambda: f[3], lambda: f.decode_message(-2), lambda: f.file_decode_object(9, 0)):
            with pytest.raises(ValueError, match="out of range"):
                call()
            with pytest.raises(IndexError):
                call()
    with pytest.raises(TypeError, match="bidirectional"):
        tgm.TensogramFile.open(p, bidirectional="yes")


def test_async_file_len_needs_message_count_first(tmp_path):
    import asyncio

    p = tmp_path / "a.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append({}, [(desc([1], "uint8"), np.zeros(1, np.uint8))])

    async def main():
        af = await tgm.AsyncTensogramFile.open(p)
        with pytest.raises(RuntimeError, match="message_count"):
            len(af)
        assert await af.message_count() == 1 and len(af) == 1
        it = af.__aiter__()
        assert repr(it) == "AsyncTensogramFileIter(position=0, remaining=1)"
        return [m async for m in it]

    assert len(asyncio.run(main())) == 1
    with pytest.raises(TypeError, match="bidirectional"):
        tgm.AsyncTensogramFile.open(p, bidirectional=1)
