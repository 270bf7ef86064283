"""tgm.kerchunk_refs: the reference document of a local file (see
spec/kerchunk.md; .ci/kerchunk.sh reads such documents with stock zarr)."""

import json
import os

import numpy as np
import pytest

import tgm
from conftest import desc


@pytest.fixture
def archive(tmp_path):
    p = tmp_path / "k.tgm"
    with tgm.TensogramFile.create(p) as f:
        f.append(
            {"base": [{"name": "a", "dim_names": ["y", "x"]}, {"name": "m"}]},
            [
                (desc([2, 3], "float32"), np.arange(6, dtype=np.float32).reshape(2, 3)),
                (desc([8], "bitmask"), np.packbits(np.ones(8, bool))),
            ],
        )
    return p


def test_refs_point_at_the_payload_bytes(archive):
    doc = tgm.kerchunk_refs(archive)
    assert doc["version"] == 1
    refs = doc["refs"]
    assert json.loads(refs[".zgroup"]) == {"zarr_format": 2}
    zarray = json.loads(refs["a/.zarray"])
    assert zarray["shape"] == [2, 3] and zarray["dtype"] == "<f4" and zarray["compressor"] is None
    assert json.loads(refs["a/.zattrs"])["_ARRAY_DIMENSIONS"] == ["y", "x"]
    path, offset, length = refs["a/0.0"]
    assert path == os.path.realpath(archive)
    raw = archive.read_bytes()[offset : offset + length]
    assert np.frombuffer(raw, "<f4").tolist() == list(range(6))


def test_unexpressible_objects_are_listed(archive):
    doc = tgm.kerchunk_refs(archive, target="https://example.org/k.tgm")
    assert doc["refs"]["a/0.0"][0] == "https://example.org/k.tgm"
    listed = json.loads(doc["refs"][".zattrs"])["tgm_unexpressible"]
    assert [(u["message"], u["object"], u["variable"]) for u in listed] == [(0, 1, "m")]
    assert "bitmask" in listed[0]["reason"]
    assert not any(k.startswith("m/") for k in doc["refs"])


def test_a_missing_file_names_its_path(tmp_path):
    missing = tmp_path / "nope.tgm"
    with pytest.raises(Exception, match="nope.tgm"):
        tgm.kerchunk_refs(missing)
