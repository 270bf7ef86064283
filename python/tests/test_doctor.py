"""tgm.doctor(): the build's features and the codec self-test."""

import tgm


def test_report_lists_the_wheels_features_and_round_trips():
    r = tgm.doctor()
    assert r["build"]["wire_version"] == tgm.WIRE_VERSION
    assert r["build"]["version"] == tgm.__version__
    rows = {f["name"]: f for f in r["features"]}
    # The wheel is built with the library's default codecs and `remote`.
    assert rows["zstd"] == {
        "name": "zstd", "kind": "compression", "state": "on",
        "backend": "libzstd", "linkage": "ffi",
    }
    assert rows["remote"]["state"] == ("on" if tgm._native.remote_enabled() else "off")
    # The optional compressors: on in the default wheel (test_codecs.py
    # checks they work), named with the reference's backends.
    for name, backend in (("blosc2", "libblosc2"), ("zfp", "libzfp"), ("sz3", "SZ3")):
        if rows[name]["state"] == "on":
            assert rows[name] == {
                "name": name, "kind": "compression", "state": "on",
                "backend": backend, "linkage": "ffi",
            }
        else:
            assert rows[name] == {"name": name, "kind": "compression", "state": "off"}
    for name in ("grib", "netcdf", "nifti", "dicom"):
        assert rows[name]["kind"] == "converter"
    outcomes = {t["label"].split()[-1]: t["outcome"] for t in r["self_test"]}
    assert outcomes["none/none/none"] == "ok"
    assert outcomes["simple_packing(16)+szip"] == "ok"
    assert all(t["outcome"] != "failed" for t in r["self_test"]), r["self_test"]
