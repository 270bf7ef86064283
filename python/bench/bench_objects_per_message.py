"""Reading object i costs the same whatever the message's size: the same
N fields stored as one N-object message and as N one-object messages,
read back (a) with ``xr.open_dataset(...).load()`` and by decoding every
object through one ``TensogramFile`` handle with (b) ``object_array`` and
(c) ``file_decode_object`` (which also returns the message's metadata). Best-of-R wall times
and the ratio one-message / many-messages (the target is at most 2).

    python python/bench/bench_objects_per_message.py [--objects N] [--repeat R]
"""

import argparse
import os
import tempfile

import numpy as np
import xarray as xr

import tgm
from _timing import best


def fields(n, shape):
    desc = {"type": "ntensor", "shape": list(shape), "dtype": "float32"}
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return [({"name": "t", "mars": {"step": i}}, desc, base + i) for i in range(n)]


def write(path, items, one_message):
    with tgm.TensogramFile.create(path) as f:
        if one_message:
            f.append({"base": [m for m, _, _ in items]}, [(d, a) for _, d, a in items])
        else:
            for m, d, a in items:
                f.append({"base": [m]}, [(d, a)])


def load_dataset(path):
    with xr.open_dataset(path, engine="tgm") as ds:
        ds.load()


def each_object(path, read):
    f = tgm.TensogramFile.open(path)
    for m in range(len(f)):
        for o in range(len(f.file_decode_descriptors(m)["descriptors"])):
            read(f, m, o)


def object_arrays(path):
    each_object(path, lambda f, m, o: f.object_array(m, o))


def decoded_objects(path):
    each_object(path, lambda f, m, o: f.file_decode_object(m, o)["data"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=2560)
    ap.add_argument("--shape", default="32x64")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    shape = tuple(int(s) for s in args.shape.split("x"))
    items = fields(args.objects, shape)
    with tempfile.TemporaryDirectory() as d:
        one = os.path.join(d, "one.tgm")
        many = os.path.join(d, "many.tgm")
        write(one, items, True)
        write(many, items, False)
        print(f"{args.objects} objects of float32 {args.shape}, best of {args.repeat}")
        print("| read | one message (s) | one message per object (s) | ratio |")
        print("|---|---|---|---|")
        cases = (
            ("ds.load()", load_dataset),
            ("object_array each", object_arrays),
            ("file_decode_object each", decoded_objects),
        )
        for name, fn in cases:
            a = best(lambda: fn(one), args.repeat)
            b = best(lambda: fn(many), args.repeat)
            print(f"| {name} | {a:.3f} | {b:.3f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()
