"""Code a user writes against tgm, type-checked with ``mypy --strict`` in
``.ci/python.sh`` (never run). The ``type: ignore`` lines are misuses the
stubs must reject: ``--strict`` warns about an ignore that is not needed,
so stubs that grow too loose fail the check."""

import numpy as np
import numpy.typing as npt

import tgm


def roundtrip(path: str) -> float:
    desc = {"type": "ntensor", "shape": [4], "dtype": "float32"}
    msg: bytes = tgm.encode({"base": [{"name": "t"}]}, [(desc, np.zeros(4, np.float32))])
    meta: tgm.Metadata = tgm.decode_metadata(msg)
    first: int = meta.num_objects
    m, d, arr = tgm.decode_object(msg, -1)
    shape: list[int] = d.shape
    with tgm.TensogramFile.create(path) as f:
        f.append({"base": [{"step": 1}]}, [(desc, np.ones(4, np.float32))])
    g = tgm.TensogramFile.open(path, intact_only=True)
    a: npt.NDArray[np.generic] = g.object_array(0, -1)
    n: int = len(g) + first + len(shape) + len(m)
    damaged: list[tuple[int, int, str, bool]] = g.damage()
    try:
        tgm.TensogramFile.open(path, zero_copy=False)
    except tgm.FramingError as e:
        print(e.offset, e.message_index, e.object_index)
    tgm.decode_object(msg, "0")  # type: ignore[arg-type]
    tgm.TensogramFile.open(path, intact_only="yes")  # type: ignore[call-overload]
    g.object_array(0)  # type: ignore[call-arg]
    return float(a.sum() + arr.sum()) + n + len(damaged)


def remote_and_converters(url: str, grib: str) -> int:
    r: tgm._remote.RemoteTensogramFile = tgm.TensogramFile.open_remote(url, intact_only=True)
    cut: list[tuple[int, int, str, bool]] = r.damage()
    refs: dict[str, object] = tgm.kerchunk_refs(url)
    report: dict[str, object] = tgm.doctor()
    msgs: list[bytes] = tgm.convert_grib(grib, encoding="simple_packing", bits=12)
    back: bytes = tgm.to_grib(msgs)
    has: bool = tgm.__has_grib__ and tgm.__has_netcdf__
    tgm.convert_grib(grib, encoding="zfp")  # type: ignore[call-overload]
    opts = {"endpoint": "http://127.0.0.1:9000"}
    out = tgm.convert_grib(grib, output=url, storage_options=opts, force=True)
    etag: str | None = out["etag"]
    with tgm.TensogramFile.create(url, opts, overwrite=True) as w:
        w.append({"base": [{"step": 1}]}, [({"type": "ntensor", "shape": [1], "dtype": "int8"}, b"\0")])
    written: int = len(tgm.convert_nifti(grib)) + out["bytes"]
    tgm.convert_grib(grib, storage_options=opts)  # type: ignore[call-overload]
    with open(grib, "rb") as fh:
        tgm.TensogramFile.open(fh, zero_copy=True)  # type: ignore[call-overload]
    return len(cut) + len(refs) + len(report) + len(back) + int(has) + len(r.read_message(0)) + written + len(etag or "")
