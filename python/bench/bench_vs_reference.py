"""tgm vs the reference wheel (tensogram 0.24.0): best-of-N wall times,
printed as a Markdown table.

    python python/bench/bench_vs_reference.py [--repeat N] [--values N]

Cases: decode and encode of one float64 object (16 Mi values by default)
with simple_packing 16 bits + szip; ``decode_range`` of that message in
each shape the reference's signature takes (one 1,000-element range, 100
ranges of 10 elements joined into one array) and ``file_decode_range`` of
a 1,000-element range from a file holding it; and open + read of one object
of message 700 in a 1,000-message file. Calls that take microseconds are
timed as a loop of ``--calls`` calls and reported per call. The two
packages are timed in turn, repetition by repetition, so that both see the
same load on a shared machine.
"""

import argparse
import os
import tempfile

import numpy as np

import tensogram as ref
import tgm
from _timing import best_pair


def per_call(fa, fb, args):
    """Best-of-``--repeat`` times of one call of ``fa`` and of ``fb``, from
    loops of ``--calls`` calls timed in turn."""

    def loop(fn):
        def calls():
            for _ in range(args.calls):
                fn()

        return calls

    ta, tb = best_pair(loop(fa), loop(fb), args.repeat)
    return ta / args.calls, tb / args.calls


def range_rows(msg, n, args):
    """The ``decode_range`` rows: element ranges of the szip message."""
    one = [(n // 2 + 17, 1000)]
    step = n // 100
    spread = [(i * step + 5, 10) for i in range(100)]
    for ranges in (one, spread):
        want = ref.decode_range(msg, 0, ranges, join=True)
        assert np.array_equal(tgm.decode_range(msg, 0, ranges, join=True), want)
    rows = [
        (
            "decode_range, one range of 1,000 elements (szip)",
            *per_call(
                lambda: ref.decode_range(msg, 0, one),
                lambda: tgm.decode_range(msg, 0, one),
                args,
            ),
        ),
        (
            "decode_range, 100 ranges of 10 elements, join=True (szip)",
            *per_call(
                lambda: ref.decode_range(msg, 0, spread, join=True),
                lambda: tgm.decode_range(msg, 0, spread, join=True),
                args,
            ),
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "field.tgm")
        with open(path, "wb") as fh:
            fh.write(msg)
        with ref.TensogramFile.open(path) as fr, tgm.TensogramFile.open(path) as ft:
            want = fr.file_decode_range(0, 0, one)[0]
            assert np.array_equal(ft.file_decode_range(0, 0, one)[0], want)
            rows.append(
                (
                    "file_decode_range, one range of 1,000 elements (szip, open file)",
                    *per_call(
                        lambda: fr.file_decode_range(0, 0, one),
                        lambda: ft.file_decode_range(0, 0, one),
                        args,
                    ),
                )
            )
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--values", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()

    n = args.values
    data = np.cumsum(np.random.default_rng(0).standard_normal(n)) + 280.0
    desc = {
        "type": "ntensor",
        "shape": [n],
        "dtype": "float64",
        "encoding": "simple_packing",
        "sp_bits_per_value": 16,
        "compression": "szip",
        "szip_rsi": 128,
        "szip_block_size": 32,
        "szip_flags": 8,
    }
    msg = ref.encode({}, [(desc, data)])
    assert np.array_equal(tgm.decode(msg).objects[0][1], ref.decode(msg).objects[0][1])
    rows = []
    rows.append(
        (
            f"decode {n:,} float64, simple_packing 16 + szip",
            *best_pair(
                lambda: ref.decode(msg),
                lambda: tgm.decode(msg),
                args.repeat,
            ),
        )
    )
    rows.append(
        (
            f"encode {n:,} float64, simple_packing 16 + szip",
            *best_pair(
                lambda: ref.encode({}, [(desc, data)]),
                lambda: tgm.encode({}, [(desc, data)]),
                args.repeat,
            ),
        )
    )
    rows.extend(range_rows(msg, n, args))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "many.tgm")
        small = {"type": "ntensor", "shape": [1024], "dtype": "float32"}
        with open(path, "wb") as fh:
            for i in range(1000):
                fh.write(ref.encode({"base": [{"i": i}]}, [(small, np.full(1024, i, np.float32))]))

        def read_ref():
            with ref.TensogramFile.open(path) as f:
                return f.file_decode_object(700, 0)["data"]

        def read_tgm():
            with tgm.TensogramFile.open(path) as f:
                return f.file_decode_object(700, 0)["data"]

        assert np.array_equal(read_ref(), read_tgm())
        rows.append(
            (
                "open 1,000-message file + read one object of message 700",
                *best_pair(read_ref, read_tgm, args.repeat),
            )
        )

    print(f"| case (best of {args.repeat}) | tensogram 0.24.0 | tgm | speed-up |")
    print("|---|---:|---:|---:|")
    for name, t_ref, t_tgm in rows:
        print(f"| {name} | {ms(t_ref)} | {ms(t_tgm)} | {t_ref / t_tgm:.2f}x |")


def ms(t):
    """A time in milliseconds with three significant digits at least."""
    return f"{t * 1e3:.3f} ms" if t < 0.01 else f"{t * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
