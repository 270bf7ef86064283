"""Validation through both doors: ``tgm.validate``/``tgm.validate_file`` and
the CLI's ``tgm validate -j`` run the same library validator
(``spec/files.md`` §8), so one damaged corpus gives the same report."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import tgm

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli():
    """The tgm binary (TGM_BIN, or target/{debug,release}/tgm), or skip."""
    candidates = [os.environ.get("TGM_BIN")]
    candidates += [str(ROOT / "target" / p / "tgm") for p in ("debug", "release")]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    pytest.skip("no tgm binary: run `cargo build -p tgm-cli` or set TGM_BIN")


def floats(values, hash="xxh3", **meta):
    arr = np.asarray(values, dtype=np.float64)
    d = {"type": "ntensor", "shape": list(arr.shape), "dtype": "float64"}
    return tgm.encode({"base": [{}], **meta}, [(d, arr)], hash=hash)


def patch(msg, old, new):
    """``msg`` with the single occurrence of ``old`` replaced by ``new``."""
    b = bytearray(msg)
    at = b.find(old)
    assert at >= 0 and b.find(old, at + 1) < 0
    b[at : at + len(new)] = new
    return bytes(b)


def f64(x):
    return np.float64(x).tobytes()


GOOD = floats([1.5, 2.5, 3.5])
NAN = patch(floats([1.5, 12345.25, 3.5], hash=None), f64(12345.25), f64(np.nan))
INF = patch(floats([1.5, 12345.25, 3.5], hash=None), f64(12345.25), f64(np.inf))
FLIPPED = patch(GOOD, f64(2.5), f64(2.75))
# Two extra keys of equal length swapped in place: same framing, keys out of order.
NON_CANONICAL = patch(
    floats([1.0], hash=None, aa=1, ab=2), b"\x62aa\x01\x62ab\x02", b"\x62ab\x02\x62aa\x01"
)

# file name -> (bytes, codes the default/full report must contain, file issues)
CORPUS = {
    "good.tgm": (GOOD + GOOD, set(), 0),
    "bad_magic.tgm": (b"WRONGMAG" + GOOD[8:] + GOOD, set(), 1),
    "truncated.tgm": (GOOD + GOOD[:-9], set(), 1),
    "hash_flip.tgm": (FLIPPED, {"hash_mismatch"}, 0),
    "nan.tgm": (NAN, {"nan_detected", "no_hash_available"}, 0),
    "inf.tgm": (INF, {"inf_detected", "no_hash_available"}, 0),
    "non_canonical.tgm": (NON_CANONICAL, {"metadata_cbor_non_canonical", "no_hash_available"}, 0),
    "trailing.tgm": (GOOD + b"trailing garbage", set(), 1),
    "between.tgm": (GOOD + b"junk" + GOOD, set(), 1),
}

FLAGS = {
    "quick": ["--quick"],
    "default": [],
    "checksum": ["--checksum"],
    "full": ["--full"],
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("validate")
    for name, (data, _, _) in CORPUS.items():
        (d / name).write_bytes(data)
    return d


@pytest.mark.parametrize("level", list(FLAGS))
@pytest.mark.parametrize("canonical", [False, True])
def test_cli_and_python_give_the_same_report(corpus, level, canonical):
    names = sorted(CORPUS)
    args = [cli(), "validate", "-j", *FLAGS[level]]
    args += ["--canonical"] if canonical else []
    done = subprocess.run(
        args + [str(corpus / n) for n in names], capture_output=True, text=True, timeout=120
    )
    entries = json.loads(done.stdout)
    assert [e["file"] for e in entries] == [str(corpus / n) for n in names]
    all_ok = True
    for name, e in zip(names, entries):
        py = tgm.validate_file(corpus / name, level=level, check_canonical=canonical)
        assert e["file_issues"] == py["file_issues"], name
        assert e["message_reports"] == py["messages"], name
        ok = not py["file_issues"] and not any(
            i["severity"] == "error" for m in py["messages"] for i in m["issues"]
        )
        assert e["status"] == ("ok" if ok else "failed"), name
        all_ok &= ok
        codes = {i["code"] for m in py["messages"] for i in m["issues"]}
        _, expected, file_issues = CORPUS[name]
        assert len(py["file_issues"]) == file_issues, (name, py)
        if level == "full":
            want = set(expected)
            if not canonical:
                want.discard("metadata_cbor_non_canonical")
            assert codes == want, (name, py)
    assert done.returncode == (0 if all_ok else 1), done.stderr


def test_levels_reach_what_they_promise():
    def codes(msg, level, **kw):
        return {i["code"] for i in tgm.validate(msg, level=level, **kw)["issues"]}

    assert codes(NAN, "default") == {"no_hash_available"}
    assert codes(INF, "full") == {"inf_detected", "no_hash_available"}
    assert codes(FLIPPED, "quick") == set()
    assert codes(FLIPPED, "checksum") == {"hash_mismatch"}
    assert codes(NON_CANONICAL, "quick", check_canonical=True) == {"metadata_cbor_non_canonical"}
    r = tgm.validate(GOOD[:0])
    assert [i["code"] for i in r["issues"]] == ["buffer_too_short"]
    assert (r["object_count"], r["hash_verified"]) == (0, False)
    r = tgm.validate(b"WRONGMAG" + GOOD[8:])
    assert r["issues"][0]["code"] == "invalid_magic"
    assert "object_index" not in r["issues"][0]
    r = tgm.validate(GOOD, level="full")
    assert (r["issues"], r["object_count"], r["hash_verified"]) == ([], 1, True)


def test_issue_position_and_errors():
    r = tgm.validate(FLIPPED)
    (issue,) = r["issues"]
    assert (issue["code"], issue["level"], issue["severity"]) == (
        "hash_mismatch",
        "integrity",
        "error",
    )
    assert issue["object_index"] == 0
    assert 0 < issue["byte_offset"] < FLIPPED.find(f64(2.75))
    with pytest.raises(ValueError, match="unknown validation level"):
        tgm.validate(GOOD, level="bogus")
    with pytest.raises(OSError, match="nonexistent"):
        tgm.validate_file("/nonexistent/path/to/file.tgm")


def test_file_report_positions_every_message(tmp_path):
    p = tmp_path / "x.tgm"
    p.write_bytes(GOOD + b"junk" + GOOD)
    r = tgm.validate_file(p)
    assert [m["byte_offset"] for m in r["messages"]] == [0, len(GOOD) + 4]
    assert r["file_issues"] == [
        {"byte_offset": len(GOOD), "length": 4, "description": f"4 unrecognized bytes at offset {len(GOOD)}"}
    ]



@pytest.mark.parametrize("level", list(FLAGS))
def test_reports_match_the_reference_package(corpus, level):
    """Codes, levels, severities, objects, damage and ``hash_verified`` are
    the reference's (tgm adds offsets the reference leaves out)."""
    ref = pytest.importorskip("tensogram")

    def essence(r):
        issues = [
            [(i["code"], i["level"], i["severity"], i.get("object_index")) for i in m["issues"]]
            for m in r["messages"]
        ]
        damage = [(f["byte_offset"], f["length"]) for f in r["file_issues"]]
        return issues, damage, [m["hash_verified"] for m in r["messages"]]

    for name in sorted(CORPUS):
        for canonical in (False, True):
            a = ref.validate_file(str(corpus / name), level=level, check_canonical=canonical)
            b = tgm.validate_file(corpus / name, level=level, check_canonical=canonical)
            assert essence(b) == essence(a), (name, canonical)
    for buf in (b"", GOOD[:30], b"WRONGMAG" + GOOD[8:], GOOD[:-1], FLIPPED):
        a, b = ref.validate(buf, level=level), tgm.validate(buf, level=level)
        assert [i["code"] for i in b["issues"]] == [i["code"] for i in a["issues"]], buf[:8]
