"""tgm vs the reference wheel (tensogram 0.24.0): best-of-N wall times,
printed as a Markdown table.

    python python/bench/bench_vs_reference.py [--repeat N] [--values N]

Cases: decode and encode of one float64 object (16 Mi values by default)
with simple_packing 16 bits + szip, and open + read of one object of
message 700 in a 1,000-message file.
"""

import argparse
import os
import tempfile

import numpy as np

import tensogram as ref
import tgm
from _timing import best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--values", type=int, default=16 * 1024 * 1024)
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
            best(lambda: ref.decode(msg), args.repeat),
            best(lambda: tgm.decode(msg), args.repeat),
        )
    )
    rows.append(
        (
            f"encode {n:,} float64, simple_packing 16 + szip",
            best(lambda: ref.encode({}, [(desc, data)]), args.repeat),
            best(lambda: tgm.encode({}, [(desc, data)]), args.repeat),
        )
    )
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
                best(read_ref, args.repeat),
                best(read_tgm, args.repeat),
            )
        )

    print(f"| case (best of {args.repeat}) | tensogram 0.24.0 | tgm | speed-up |")
    print("|---|---:|---:|---:|")
    for name, t_ref, t_tgm in rows:
        print(f"| {name} | {t_ref * 1e3:.2f} ms | {t_tgm * 1e3:.2f} ms | {t_ref / t_tgm:.2f}x |")


if __name__ == "__main__":
    main()
