"""A script written for the reference package (``import tensogram``). The
compatibility test runs it unchanged against the reference and against tgm
(installed as ``tensogram``) and compares the output. It prints only
values that do not depend on the encoder (no lengths, times or uuids)."""

import asyncio
import os
import sys
import tempfile

import numpy as np
import tensogram

out = []


def show(*args):
    out.append(" ".join(str(a) for a in args))


data = np.arange(12, dtype=np.float32).reshape(3, 4)
meta = {"version": 3, "base": [{"mars": {"param": "2t", "step": 6}, "dim_names": ["y", "x"]}], "source": "demo"}
msg = tensogram.encode(meta, [({"type": "ntensor", "shape": [3, 4], "dtype": "float32"}, data)])
result = tensogram.decode(msg)
meta_out, objects = result
show("meta", meta_out.version, meta_out.num_objects, meta_out["mars"], meta_out.get("source"), "mars" in meta_out)
show("keys", list(meta_out.keys()), meta_out.get_path("mars.step"), meta_out.has_path("mars.param"))
show("base", meta_out.base[0]["dim_names"], meta_out.extra)
for d, arr in result.objects:
    show("desc", d.obj_type, d.shape, d.strides, d.dtype, d.byte_order, d.encoding, d.filter, d.compression, d.params, d.ndim)
    show("data", arr.dtype, arr.shape, arr.tolist())

m, descs = tensogram.decode_descriptors(msg)
show("descriptors", [x.shape for x in descs], m.base[0]["mars"])
show("metadata", tensogram.decode_metadata(msg)["mars"]["param"])
_, d, arr = tensogram.decode_object(msg, 0)
show("object", d.dtype, arr.sum())
show("range", [a.tolist() for a in tensogram.decode_range(msg, 0, [(0, 2), (10, 2)])])
show("range-join", tensogram.decode_range(msg, 0, [(0, 2), (10, 2)], join=True).tolist())
show("scan", len(tensogram.scan(msg + msg)))
show("hash", tensogram.compute_hash(b"hello world"))
values = np.linspace(270.0, 300.0, 1000)
params = tensogram.compute_packing_params(values, 16, 0)
show("packing", params)
packed = tensogram.encode(
    {"base": [{}]},
    [({"type": "ntensor", "shape": [1000], "dtype": "float64", "encoding": "simple_packing", "compression": "szip",
       "szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8, **params}, values)],
)
dec = tensogram.decode(packed).objects[0][1]
show("packed", dec.dtype, float(np.abs(dec - values).max()) < 1e-3)
report = tensogram.validate(msg)
show("validate", report["issues"], report["object_count"], report["hash_verified"])
for m2 in tensogram.iter_messages(msg + packed):
    show("iter", m2.objects[0][0].dtype)

try:
    tensogram.decode(b"not a message")
except ValueError as e:
    show("error", type(e).__mro__[-3].__name__)

enc = tensogram.StreamingEncoder({"base": [{"k": 1}]})
enc.write_object({"type": "ntensor", "shape": [4], "dtype": "int32"}, np.arange(4, dtype=np.int32))
show("stream", tensogram.decode(enc.finish()).objects[0][1].tolist())

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "data.tgm")
    with tensogram.TensogramFile.create(path) as f:
        for step in range(3):
            f.append({"base": [{"mars": {"step": step}}]}, [({"type": "ntensor", "shape": [2], "dtype": "float64"}, np.full(2, step * 1.5))])
    with tensogram.TensogramFile.open(path) as f:
        show("file", len(f), f.message_count())
        for m3 in f:
            show("file-msg", m3.metadata["mars"], m3.objects[0][1].tolist())
        show("file-idx", f[1].metadata["mars"], f.file_decode_object(2, 0)["data"].tolist())
        show("file-range", f.file_decode_range(2, 0, [(1, 1)], join=True).tolist())
        show("file-meta", f.file_decode_metadata(0)["mars"])
    show("validate-file", [len(r["issues"]) for r in tensogram.validate_file(path)["messages"]])

    async def main():
        f = await tensogram.AsyncTensogramFile.open(path)
        objs = await asyncio.gather(f.file_decode_object(0, 0), f.file_decode_object(1, 0))
        return [o["data"].tolist() for o in objs]

    show("async", asyncio.run(main()))

sys.stdout.write("\n".join(out) + "\n")
