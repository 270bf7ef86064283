"""Compares two pytest JUnit reports of the same suite: of the tests that
pass in the first (the reference wheel), how many pass in the second (tgm).
Prints the score, the per-file shortfall and every test that differs.

    python compare_junit.py REFERENCE.xml TGM.xml [COMPAT.md]

With COMPAT.md, exits 1 when a test that passes on the reference fails on
tgm without being named there (as ``test_file.py::Class::test``)."""

import collections
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    """``{test id: "passed" | "failed" | "skipped"}`` of a JUnit report."""
    result = {}
    for case in ET.parse(path).iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            result[test_id] = "failed"
        elif case.find("skipped") is not None:
            result[test_id] = "skipped"
        else:
            result[test_id] = "passed"
    return result


def documented_name(test_id):
    """``tests.test_x.TestY::test_z`` as COMPAT.md names it:
    ``test_x.py::TestY::test_z``."""
    classname, _, name = test_id.partition("::")
    parts = classname.split(".")
    module = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
    return "::".join([parts[module] + ".py", *parts[module + 1:], name])


def main(reference_xml, tgm_xml, compat_md=None):
    ref = outcomes(reference_xml)
    ours = outcomes(tgm_xml)
    passing = [t for t, o in ref.items() if o == "passed"]
    kept = [t for t in passing if ours.get(t) == "passed"]
    lost = [t for t in passing if ours.get(t) != "passed"]
    by_file = collections.Counter(t.split("::")[0] for t in lost)
    for test_id in sorted(lost):
        print(f"  not on tgm ({ours.get(test_id, 'missing')}): {test_id}")
    for name, n in by_file.most_common():
        print(f"{n:5d}  {name}")
    share = 100.0 * len(kept) / len(passing) if passing else 0.0
    print(
        f"reference wheel: {len(passing)} of {len(ref)} pass; "
        f"tgm passes {len(kept)} of those ({share:.1f} %)"
    )
    if compat_md is None:
        return 0
    with open(compat_md, encoding="utf-8") as f:
        text = f.read()
    undocumented = [t for t in lost if documented_name(t) not in text]
    for test_id in undocumented:
        print(f"  not named in {compat_md}: {documented_name(test_id)}")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
