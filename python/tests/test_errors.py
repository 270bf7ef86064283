"""Bad input raises typed exceptions carrying kind and location; it never
crashes the interpreter or raises anything untyped."""

import pickle

import numpy as np
import pytest

import tgm
from conftest import desc


def test_hierarchy():
    assert issubclass(tgm.TensogramError, ValueError)
    for name in ("FramingError", "MetadataError", "CodecError", "EncodeError", "IntegrityError", "LimitExceededError"):
        assert issubclass(getattr(tgm, name), tgm.TensogramError)
    assert issubclass(tgm.HashMismatchError, tgm.IntegrityError)
    assert issubclass(tgm.MissingHashError, tgm.IntegrityError)
    assert issubclass(tgm.TensogramIOError, OSError)


def test_junk_and_truncation(simple_message):
    msg, _ = simple_message
    with pytest.raises(tgm.FramingError) as e:
        tgm.decode(b"junk")
    assert e.value.kind == "truncated" and e.value.offset == 0
    with pytest.raises(tgm.FramingError) as e:
        tgm.decode(msg[:-5])
    assert e.value.offset is not None
    with pytest.raises(tgm.FramingError):
        tgm.decode(b"X" * 200)


def test_corrupt_payload_is_a_hash_mismatch_with_location(simple_message):
    msg, _ = simple_message
    _, _, length = tgm._native.locate_raw(msg, 0)
    off = tgm._native.locate_raw(msg, 0)[1]
    bad = bytearray(msg)
    bad[off + 3] ^= 0xFF
    with pytest.raises(tgm.HashMismatchError) as e:
        tgm.decode(bytes(bad))
    err = e.value
    assert isinstance(err, tgm.IntegrityError)
    assert err.kind == "hash_mismatch"
    assert err.object_index == 0
    assert err.offset is not None and err.offset < off
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is tgm.HashMismatchError and again.offset == err.offset


def test_verify_hash_requires_digests():
    msg = tgm.encode({}, [(desc([2], "float32"), np.ones(2, np.float32))], hash=None)
    np.testing.assert_array_equal(tgm.decode(msg).objects[0][1], np.ones(2))
    with pytest.raises(tgm.MissingHashError) as e:
        tgm.decode(msg, verify_hash=True)
    # The first frame without a digest: the header metadata frame after
    # the 24-byte preamble.
    assert e.value.offset == 24


def test_object_index_out_of_range(simple_message):
    msg, _ = simple_message
    with pytest.raises(IndexError):
        tgm.decode_object(msg, 5)
    with pytest.raises(tgm.TensogramError):
        tgm.decode_range(msg, 3, [(0, 1)])


def test_range_outside_object(simple_message):
    msg, _ = simple_message
    with pytest.raises(tgm.TensogramError):
        tgm.decode_range(msg, 0, [(10, 5)])


def test_range_on_compressed_object_is_typed():
    msg = tgm.encode({}, [(desc([100], "float64", compression="zstd", zstd_level=1), np.zeros(100))])
    with pytest.raises(tgm.RangeNotSupportedError):
        tgm.decode_range(msg, 0, [(0, 4)])


@pytest.mark.parametrize(
    "descriptor, data, exc",
    [
        (desc([3, 5], "float32"), np.zeros((3, 4), np.float32), tgm.EncodeError),
        (desc([4], "float32"), np.zeros(4, np.int32), tgm.EncodeError),
        (desc([4], "float128"), np.zeros(4), tgm.InvalidArgumentError),
        (desc([4], "float64", encoding="wavelet"), np.zeros(4), tgm.TensogramError),
        (desc([4], "float64", compression="nope"), np.zeros(4), tgm.TensogramError),
        (desc([4], "float64", byte_order="middle"), np.zeros(4), tgm.InvalidArgumentError),
        (desc([2**40, 2**40], "float64"), np.zeros(4), tgm.TensogramError),
        ({"shape": [4]}, np.zeros(4), tgm.InvalidArgumentError),
        (desc([3], "float64"), "abc", tgm.EncodeError),
    ],
)
def test_bad_encode_input(descriptor, data, exc):
    with pytest.raises(exc):
        tgm.encode({}, [(descriptor, data)])


def test_non_finite_needs_allow_nan():
    data = np.array([1.0, np.nan, 2.0])
    with pytest.raises(tgm.EncodeError) as e:
        tgm.encode({}, [(desc([3], "float64"), data)])
    assert e.value.object_index == 0
    msg = tgm.encode({}, [(desc([3], "float64"), data)], allow_nan=True)
    out = tgm.decode(msg).objects[0][1]
    assert np.isnan(out[1]) and out[0] == 1.0 and out[2] == 2.0


def test_bad_metadata():
    obj = [(desc([1], "float64"), np.zeros(1))]
    deep = {}
    node = deep
    for _ in range(100):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(tgm.TensogramError):
        tgm.encode({"base": [deep]}, obj)
    with pytest.raises(tgm.TensogramError):
        tgm.encode({"big": 2**70}, obj)
    with pytest.raises(TypeError):
        tgm.encode({"obj": object()}, obj)
    with pytest.raises(tgm.TensogramError):
        tgm.encode({"base": [{}, {}]}, obj)


def test_mutated_messages_never_escape_the_error_hierarchy(simple_message):
    msg, _ = simple_message
    rng = np.random.default_rng(7)
    for _ in range(600):
        bad = bytearray(msg)
        for pos in rng.integers(0, len(bad), size=rng.integers(1, 4)):
            bad[pos] = rng.integers(0, 256)
        cut = bytes(bad[: rng.integers(len(bad) // 2, len(bad) + 1)])
        for fn in (tgm.decode, tgm.decode_metadata, tgm.decode_descriptors, lambda b: tgm.decode_object(b, 0), tgm.validate):
            try:
                fn(cut)
            except tgm.TensogramError:
                pass


def test_validate_reports_corruption(simple_message):
    msg, _ = simple_message
    off = tgm._native.locate_raw(msg, 0)[1]
    bad = bytearray(msg)
    bad[off] ^= 1
    report = tgm.validate(bytes(bad))
    assert report["hash_verified"] is False
    assert [i["code"] for i in report["issues"]] == ["hash_mismatch"]
    assert report["issues"][0]["object_index"] == 0
    assert tgm.validate(b"nonsense")["issues"][0]["severity"] == "error"
    with pytest.raises(tgm.InvalidArgumentError):
        tgm.validate(msg, level="extreme")


def test_unsupported_reference_options_are_refused():
    with pytest.raises(tgm.InvalidArgumentError):
        tgm.encode({}, [(desc([1], "float64"), np.zeros(1))], aggregate_hash="footer")
    with pytest.raises(tgm.InvalidArgumentError):
        tgm.encode({}, [(desc([1], "float64"), np.zeros(1))], hash="md5")


def test_message_buffers_of_any_kind(simple_message):
    msg, data = simple_message
    assert len(msg) % 8 == 0
    for buf in (bytearray(msg), memoryview(msg), np.frombuffer(msg, np.uint8), np.frombuffer(msg, np.float64)):
        np.testing.assert_array_equal(tgm.decode(buf).objects[0][1], data)
    with pytest.raises(TypeError):
        tgm.decode("text")
    with pytest.raises(tgm.InvalidArgumentError):
        tgm.decode(np.frombuffer(msg, np.uint8)[::2])
