#!/usr/bin/env python3
"""Turns criterion's estimates into the Markdown tables of the book's
performance pages (docs/src/performance/library.md).

    python3 benches/table.py pipeline            # after cargo bench --bench pipeline
    python3 benches/table.py pipeline --baseline before   # the saved baseline instead
    python3 benches/table.py compare             # before vs new, tgm only
    python3 benches/table.py eccodes             # after cargo bench --features eccodes-bench --bench eccodes
    python3 benches/table.py szip                # after cargo bench -p tgm-szip --features libaec-conformance --bench szip

Reads target/criterion/<group>/<op>_<library>/<case>/<baseline>/estimates.json
(mean times) and, for eccodes, target/criterion/eccodes_sizes.json. Uses only
the standard library.
"""

import argparse
import json
import os
import sys

CRITERION = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")


def mean_ms(group, bench, case, baseline="new"):
    path = os.path.join(CRITERION, group, bench, case, baseline, "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["mean"]["point_estimate"] / 1e6
    except FileNotFoundError:
        return None


def cases(group, bench):
    d = os.path.join(CRITERION, group, bench)
    if not os.path.isdir(d):
        sys.exit(f"no results under {d}; run the benchmark first")
    return sorted(c for c in os.listdir(d) if c != "report")


def fmt(ms):
    return "" if ms is None else f"{ms:.1f}"


def ratio(slow, fast):
    return "" if slow is None or fast is None else f"{slow / fast:.2f}×"


def pipeline(baseline):
    g = "pipeline_16M_f64"
    print("| pipeline | decode tgm | decode reference | ratio "
          "| encode tgm | encode reference | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in cases(g, "encode_tgm"):
        dt, dr = mean_ms(g, "decode_tgm", c, baseline), mean_ms(g, "decode_reference", c, baseline)
        et, er = mean_ms(g, "encode_tgm", c, baseline), mean_ms(g, "encode_reference", c, baseline)
        print(f"| {c} | {fmt(dt)} | {fmt(dr)} | {ratio(dr, dt)} "
              f"| {fmt(et)} | {fmt(er)} | {ratio(er, et)} |")


def compare():
    g = "pipeline_16M_f64"
    print("| pipeline | decode before | decode after | speed-up "
          "| encode before | encode after | speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in cases(g, "encode_tgm"):
        db, da = mean_ms(g, "decode_tgm", c, "before"), mean_ms(g, "decode_tgm", c)
        eb, ea = mean_ms(g, "encode_tgm", c, "before"), mean_ms(g, "encode_tgm", c)
        print(f"| {c} | {fmt(db)} | {fmt(da)} | {ratio(db, da)} "
              f"| {fmt(eb)} | {fmt(ea)} | {ratio(eb, ea)} |")


def eccodes(baseline):
    g = "eccodes_4096x4096"
    try:
        with open(os.path.join(CRITERION, "eccodes_sizes.json")) as f:
            sizes = json.load(f)
    except FileNotFoundError:
        sizes = {}
    print("| packing | op | ecCodes | tgm | tgm, reused buffers | reference "
          "| ecCodes ÷ tgm | ecCodes ÷ tgm reused | reference ÷ tgm |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in cases(g, "encode_tgm"):
        for op in ("encode", "decode"):
            e = mean_ms(g, f"{op}_eccodes", c, baseline)
            t = mean_ms(g, f"{op}_tgm", c, baseline)
            ti = mean_ms(g, f"{op}_tgm_into", c, baseline)
            r = mean_ms(g, f"{op}_reference", c, baseline)
            print(f"| {c} | {op} | {fmt(e)} | {fmt(t)} | {fmt(ti)} | {fmt(r)} "
                  f"| {ratio(e, t)} | {ratio(e, ti)} | {ratio(r, t)} |")
    if sizes:
        print()
        print("| packing | ecCodes bytes | tgm bytes | reference bytes |")
        print("|---|---:|---:|---:|")
        for c, s in sizes.items():
            print(f"| {c} | {s['eccodes']:,} | {s['tgm']:,} | {s['reference']:,} |")


SZIP_SETS = [
    ("szip_weather16", "16-bit quantised field"),
    ("szip_weather24", "24-bit quantised field"),
    ("szip_image_u16", "uint16 image"),
]


def szip(baseline):
    print("| data | op | tgm | tgm, 2 threads | reference | libaec | ref ÷ tgm | libaec ÷ tgm |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for group, label in SZIP_SETS:
        for op in ("encode", "decode"):
            t, t2, r, l = (mean_ms(group, op, lib, baseline)
                           for lib in ("tgm", "tgm-2-threads", "reference", "libaec"))
            print(f"| {label} | {op} | {fmt(t)} | {fmt(t2)} | {fmt(r)} | {fmt(l)} "
                  f"| {ratio(r, t)} | {ratio(l, t)} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table", choices=["pipeline", "compare", "eccodes", "szip"])
    p.add_argument("--baseline", default="new", help="criterion baseline directory (default new)")
    a = p.parse_args()
    if a.table == "pipeline":
        pipeline(a.baseline)
    elif a.table == "compare":
        compare()
    elif a.table == "szip":
        szip(a.baseline)
    else:
        eccodes(a.baseline)


if __name__ == "__main__":
    main()
