"""NumPy values in metadata are stored as their Python values; a value
that has no CBOR form is refused with an error naming its key."""

import numpy as np
import pytest

import tgm
from conftest import desc

D = desc([2], "float32")
X = np.zeros(2, np.float32)


def test_numpy_scalars_and_arrays_are_stored_as_python_values():
    meta = {
        "base": [{"mars": {"step": np.int64(6), "levels": np.arange(3, dtype=np.int16)}}],
        "scale": np.float32(0.5),
        "grid": np.array([[1.5, 2.0], [3.0, 4.0]]),
        "flag": np.bool_(True),
    }
    got = tgm.decode_metadata(tgm.encode(meta, [(D, X)]))
    assert got.base[0]["mars"] == {"step": 6, "levels": [0, 1, 2]}
    assert type(got.base[0]["mars"]["step"]) is int
    assert got.extra["scale"] == 0.5 and got.extra["grid"] == [[1.5, 2.0], [3.0, 4.0]]
    assert got.extra["flag"] is True


@pytest.mark.parametrize(
    "meta, key",
    [
        ({"base": [{"a": {"b": [1, {2, 3}]}}]}, "base[0].a.b[1]"),
        ({"base": [{"t": np.array([np.datetime64("2020-01-01")])}]}, "base[0].t"),
        ({"base": [{"o": np.array([object()])}]}, "base[0].o"),
        ({"when": {"x": object()}}, "_extra_.when.x"),
    ],
)
def test_refused_values_name_their_key(meta, key):
    with pytest.raises(TypeError) as e:
        tgm.encode(meta, [(D, X)])
    assert f"key {key}:" in str(e.value)


def test_out_of_range_integer_names_its_key():
    with pytest.raises(tgm.InvalidArgumentError, match=r"key _extra_\.big: integer"):
        tgm.encode({"big": 2**70}, [(D, X)])


def test_bool_array_is_accepted_for_a_bitmask_object():
    bits = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], bool)
    msg = tgm.encode({}, [(desc([10], "bitmask"), bits)])
    packed = tgm.decode(msg).objects[0][1]
    np.testing.assert_array_equal(np.unpackbits(packed, count=10).astype(bool), bits)
    again = tgm.encode({}, [(desc([10], "bitmask"), np.packbits(bits))])
    np.testing.assert_array_equal(tgm.decode(again).objects[0][1], packed)
