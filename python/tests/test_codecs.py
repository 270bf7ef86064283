"""The optional compressors blosc2, zfp and sz3 (cargo features of the
wheel, README "Optional codecs"): descriptor keys as the reference's, round
trips, range decoding where offered and refused by name elsewhere, payload
bytes identical to the reference wheel's both ways, and the error naming
the feature of a wheel built without one."""

import os
import struct

import numpy as np
import pytest

import tgm
from conftest import desc

BUILT = {f["name"] for f in tgm.doctor()["features"] if f["state"] == "on"}
CODECS = ("blosc2", "zfp", "sz3")

# Descriptor keys exactly as the reference's users pass them.
PIPELINES = {
    "blosc2_blosclz": {"compression": "blosc2", "blosc2_codec": "blosclz", "blosc2_clevel": 5},
    "blosc2_lz4": {"compression": "blosc2", "blosc2_codec": "lz4", "blosc2_clevel": 5},
    "blosc2_lz4hc": {"compression": "blosc2", "blosc2_codec": "lz4hc", "blosc2_clevel": 9},
    "blosc2_zlib": {"compression": "blosc2", "blosc2_codec": "zlib", "blosc2_clevel": 1},
    "blosc2_zstd": {"compression": "blosc2", "blosc2_codec": "zstd", "blosc2_clevel": 5},
    "blosc2_shuffle": {
        "filter": "shuffle",
        "shuffle_element_size": 8,
        "compression": "blosc2",
        "blosc2_codec": "zstd",
        "blosc2_clevel": 3,
    },
    "zfp_rate": {"compression": "zfp", "zfp_mode": "fixed_rate", "zfp_rate": 16.0},
    "zfp_precision": {"compression": "zfp", "zfp_mode": "fixed_precision", "zfp_precision": 32},
    "zfp_accuracy": {"compression": "zfp", "zfp_mode": "fixed_accuracy", "zfp_tolerance": 1e-3},
    "sz3_abs": {"compression": "sz3", "sz3_error_bound_mode": "abs", "sz3_error_bound": 1e-3},
    "sz3_rel": {"compression": "sz3", "sz3_error_bound_mode": "rel", "sz3_error_bound": 1e-4},
    "sz3_psnr": {"compression": "sz3", "sz3_error_bound_mode": "psnr", "sz3_error_bound": 80.0},
}
# Largest error allowed on VALUES (range 200): 0 for lossless codecs.
MAX_ERROR = {"zfp_rate": 1e-2, "zfp_precision": 1e-6, "zfp_accuracy": 1e-3, "sz3_abs": 1e-3, "sz3_rel": 2e-2, "sz3_psnr": 1.0}
VALUES = np.sin(np.arange(6000) * 0.01) * 100.0 + np.cos(np.arange(6000) * 0.003) * 3.0


def codec_of(name):
    return PIPELINES[name]["compression"]


def needs(name):
    c = codec_of(name)
    if c not in BUILT:
        pytest.skip(f"this wheel was built without cargo feature {c!r}")


def encode(mod, name, values=VALUES, **kw):
    d = desc(list(values.shape), "float64", **PIPELINES[name])
    return mod.encode({"base": [{}]}, [(d, values)], **kw)


def payload(msg):
    """The payload region of the first data-object frame (spec/format.md
    §3.7: header 16 bytes, region, descriptor CBOR, cbor_offset, hash, ENDF)."""
    pos = 24
    while True:
        assert msg[pos : pos + 2] == b"FR", pos
        ftype, _, flags, length = struct.unpack(">HHHQ", msg[pos + 2 : pos + 16])
        if ftype == 9:
            assert flags & 1, "descriptor after the payload"
            (cbor_offset,) = struct.unpack(">Q", msg[pos + length - 20 : pos + length - 12])
            return bytes(msg[pos + 16 : pos + cbor_offset])
        pos = (pos + length + 7) // 8 * 8


def test_ci_builds_the_codecs_it_names():
    """`.ci/python.sh` names the codecs it builds in TGM_WHEEL_CODECS: none
    of their tests may skip there."""
    wanted = [c for c in os.environ.get("TGM_WHEEL_CODECS", "").split(",") if c]
    missing = [c for c in wanted if c not in BUILT]
    assert not missing, f"wheel lacks {missing}; doctor says {sorted(BUILT)}"


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_round_trip(name):
    needs(name)
    msg = encode(tgm, name)
    d, out = tgm.decode(msg).objects[0]
    assert d.compression == codec_of(name)
    for key, value in PIPELINES[name].items():
        assert d.params.get(key, getattr(d, key, None)) == value, key
    assert out.dtype == np.float64 and out.shape == VALUES.shape
    err = np.max(np.abs(out - VALUES))
    assert err <= MAX_ERROR.get(name, 0.0), err
    if name.startswith(("zfp", "sz3")):
        assert len(payload(msg)) < VALUES.nbytes / 2


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_payload_bytes_identical_to_the_reference_both_ways(name):
    needs(name)
    ref = pytest.importorskip("tensogram")
    ours, theirs = encode(tgm, name), encode(ref, name)
    assert payload(ours) == payload(theirs)
    for msg in (ours, theirs):
        a = tgm.decode(msg).objects[0][1]
        b = ref.decode(msg).objects[0][1]
        np.testing.assert_array_equal(a, b)


RANGES = [(0, 3), (100, 250), (5990, 10)]


@pytest.mark.parametrize("name", ["blosc2_lz4", "blosc2_zstd", "zfp_rate"])
def test_decode_range_reads_blosc2_chunks_and_zfp_fixed_rate_blocks(name):
    needs(name)
    big = np.tile(VALUES, 40)  # 1.9 MB: several blosc2 blocks
    msg = encode(tgm, name, big)
    whole = tgm.decode(msg).objects[0][1]
    parts = tgm.decode_range(msg, 0, RANGES)
    assert len(parts) == len(RANGES)
    for (start, count), part in zip(RANGES, parts):
        np.testing.assert_array_equal(part, whole[start : start + count])
    try:
        import tensogram as ref
    except ImportError:
        return
    for mine, theirs in zip(parts, ref.decode_range(msg, 0, RANGES)):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize(
    "name, named",
    [("zfp_precision", "zfp"), ("zfp_accuracy", "zfp"), ("sz3_abs", "sz3"), ("blosc2_shuffle", "shuffle")],
)
def test_decode_range_is_refused_by_name_elsewhere(name, named):
    needs(name)
    msg = encode(tgm, name)
    with pytest.raises(tgm.RangeNotSupportedError, match=named):
        tgm.decode_range(msg, 0, [(0, 3)])


@pytest.mark.parametrize("codec", CODECS)
def test_a_wheel_without_the_feature_names_it(codec):
    if codec in BUILT:
        pytest.skip(f"this wheel was built with cargo feature {codec!r}")
    name = next(n for n in sorted(PIPELINES) if codec_of(n) == codec)
    with pytest.raises(tgm.UnsupportedCodecError, match=f'cargo feature "{codec}"'):
        encode(tgm, name)


def test_a_damaged_sz3_stream_is_an_error_not_a_crash():
    needs("sz3_abs")
    msg = bytearray(encode(tgm, "sz3_abs", hash=None))
    body = payload(msg)
    start = bytes(msg).index(body)
    # Past SZ3's 16-byte header: its zstd-coded body, then its configuration.
    for at in (20, len(body) // 2, len(body) - 30):
        bad = bytearray(msg)
        for i in range(at, min(at + 8, len(body))):
            bad[start + i] ^= 0xA5
        try:
            out = tgm.decode(bytes(bad)).objects[0][1]
        except tgm.CodecError as e:
            assert "sz3" in str(e)
        else:
            assert out.shape == VALUES.shape
