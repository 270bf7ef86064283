"""Compares two pytest JUnit reports of the same suite: of the tests that
pass in the first (the reference wheel), how many pass in the second (tgm).
Prints the score, the per-file shortfall and every test that differs."""

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


def main(reference_xml, tgm_xml):
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


if __name__ == "__main__":
    main(*sys.argv[1:3])
