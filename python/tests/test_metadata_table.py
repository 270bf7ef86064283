"""The table of metadata rules (``testdata/metadata_lookup.json``,
``spec/format.md`` §7.1, §7.2) through the Python API: each case's dict is
given to ``tgm.encode``, and the lookups in the message scope
(``get_path``, ``has_path``, and ``meta[key]`` / ``in`` for one-segment
paths) and in the object scope (``get_path_at``, ``has_path_at``) read the
decoded metadata back. The scope ``object_then_extra`` has no Python
method; the Rust and CLI runners check it."""

import json
from pathlib import Path

import numpy as np
import pytest

import tgm
from conftest import desc

TABLE = Path(__file__).resolve().parents[2] / "testdata" / "metadata_lookup.json"
CASES = json.loads(TABLE.read_text())["cases"]
MISSING = object()


def _objects(case):
    n = case.get("objects", max(1, len(case["metadata"].get("base", []) or [])))
    return [(desc([1], "uint8"), np.array([7], np.uint8))] * n


@pytest.mark.parametrize("case", [c for c in CASES if "error" in c], ids=lambda c: c["name"])
def test_caller_errors(case):
    assert case["error"]["kind"] == "metadata"
    with pytest.raises(tgm.MetadataError) as e:
        tgm.encode(case["metadata"], _objects(case))
    assert case["error"]["mentions"] in str(e.value)


@pytest.mark.parametrize("case", [c for c in CASES if "lookups" in c], ids=lambda c: c["name"])
def test_lookups(case):
    meta = tgm.decode_metadata(tgm.encode(case["metadata"], _objects(case)))
    asked = 0
    for lookup in case["lookups"]:
        scope, path = lookup["scope"], lookup["path"]
        want = MISSING if lookup.get("absent") else lookup["value"]
        where = f"{scope} {path!r}"
        if scope == "message":
            assert meta.get_path(path, MISSING) == want, where
            assert meta.has_path(path) == (want is not MISSING), where
            if "." not in path:
                assert meta.get(path, MISSING) == want, where
                assert (path in meta) == (want is not MISSING), where
        elif "object" in scope:
            i = scope["object"]
            assert meta.get_path_at(i, path, MISSING) == want, where
            assert meta.has_path_at(i, path) == (want is not MISSING), where
        else:
            continue
        asked += 1
    assert asked > 0 or all("object_then_extra" in l["scope"] for l in case["lookups"])


def test_metadata_round_trips_through_to_dict():
    meta = tgm.decode_metadata(
        tgm.encode({"base": [{"a": 1}], "extra": {"extra": 2, "base": 3}}, _objects({"metadata": {}}))
    )
    again = tgm.decode_metadata(tgm.encode(meta, _objects({"metadata": {}})))
    assert again.extra == {"extra": 2, "base": 3} and again.base[0]["a"] == 1
