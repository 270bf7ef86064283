"""Kerchunk references written by `tgm refs`, read by stock xarray, zarr,
fsspec, numcodecs and imagecodecs in an environment without tgm: every
expressible pipeline gives the values `tgm export` writes, bit for bit,
from the local file and over HTTP (nginx on loopback). Run by
.ci/kerchunk.sh with TGM_BIN naming the tgm binary; see spec/kerchunk.md.
"""

import json
import os
import shutil
import socket
import subprocess
import time

import imagecodecs.numcodecs
import numpy as np
import pytest
import xarray as xr

# szip objects decode through imagecodecs' libaec, registered with numcodecs.
imagecodecs.numcodecs.register_codecs()

TGM = os.environ.get("TGM_BIN")
if not TGM:
    pytest.skip("TGM_BIN is not set (run .ci/kerchunk.sh)", allow_module_level=True)


def test_tgm_is_not_importable():
    with pytest.raises(ImportError):
        import tgm  # noqa: F401


def field(shape, dtype):
    n = int(np.prod(shape))
    x = np.arange(n, dtype=np.float64)
    v = 250.0 + 30.0 * np.sin(x * 0.013) + 5.0 * np.cos(x * 0.17) - x * 1e-3
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        v = (v * 7) % (np.iinfo(dt).max // 2)
    if dt.kind == "c":
        return (v + 1j * v[::-1]).astype(dt).reshape(shape)
    return v.astype(dt).reshape(shape)


# name → (shape, dtype, pipeline arguments of `tgm import`)
EXPRESSIBLE = {
    "raw_f8": ((6, 7), "<f8", []),
    "raw_f4_be": ((5, 4, 3), ">f4", []),
    "raw_i2": ((40,), "<i2", []),
    "raw_u1": ((3, 5), "|u1", []),
    "raw_f2": ((9,), "<f2", []),
    "raw_c8": ((4, 3), "<c8", []),
    "raw_scalar": ((), "<f8", []),
    "zstd_f4": ((30, 20), "<f4", ["--compression", "zstd"]),
    "zstd_f4_content_size": ((30, 20), "<f4", ["--compression", "zstd", "--zstd-content-size"]),
    "zstd_i2": ((501,), "<i2", ["--compression", "zstd", "--level", "19"]),
    "zstd_f8_be": ((64,), ">f8", ["--compression", "zstd", "--level", "5"]),
    "lz4_i4": ((50, 3), "<i4", ["--compression", "lz4"]),
    "shuffle_zstd_f8": ((40, 25), "<f8", ["--filter", "shuffle", "--compression", "zstd"]),
    "shuffle_lz4_u2": ((300,), "<u2", ["--filter", "shuffle", "--compression", "lz4"]),
    "sp8": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "8"]),
    "sp16": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "16"]),
    "sp32": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "32"]),
    "sp16_be": ((10, 9), ">f8", ["--encoding", "simple_packing", "--bits", "16"]),
    # Other widths: imagecodecs_packints unpacks the bits first.
    "sp1": ((7, 12), "<f8", ["--encoding", "simple_packing", "--bits", "1"]),
    "sp5": ((13, 7), "<f8", ["--encoding", "simple_packing", "--bits", "5"]),
    "sp12": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "12"]),
    "sp24": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "24"]),
    "sp31_be": ((9, 11), ">f8", ["--encoding", "simple_packing", "--bits", "31"]),
    "sp16_shuffle_zstd": ((30, 40), "<f8",
                          ["--encoding", "simple_packing", "--bits", "16", "--filter", "shuffle",
                           "--compression", "zstd"]),
    "sp16_lz4": ((30, 40), "<f8", ["--encoding", "simple_packing", "--bits", "16", "--compression", "lz4"]),
    "szip_u2": ((4000,), "<u2", ["--compression", "szip"]),
    "szip_f4": ((50, 40), "<f4", ["--compression", "szip"]),
    "sp16_szip": ((64, 50), "<f8", ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"]),
    "sp8_szip": ((64, 50), "<f8", ["--encoding", "simple_packing", "--bits", "8", "--compression", "szip"]),
    "shuffle_szip_f8_whole_rsis": ((64, 32), "<f8", ["--filter", "shuffle", "--compression", "szip"]),
    # Sizes that are not whole blocks: imagecodecs' decoder returns the
    # last block whole, cut back by imagecodecs_packints (spec/kerchunk.md §3).
    "shuffle_szip_f8": ((60, 50), "<f8", ["--filter", "shuffle", "--compression", "szip"]),
    "sp16_szip_part_block": ((61, 53), "<f8", ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"]),
    "sp16_szip_era5_grid": ((61, 120), "<f8", ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"]),
    "sp8_szip_part_block": ((3, 7, 11), "<f8", ["--encoding", "simple_packing", "--bits", "8", "--compression", "szip"]),
    "szip_u2_part_block": ((4001,), "<u2", ["--compression", "szip"]),
    "szip_i2_signed": ((37, 11), "<i2", ["--compression", "szip"]),
    "szip_i4_be": ((13, 17), ">i4", ["--compression", "szip"]),
    "szip_f4_part_block": ((13, 17), "<f4", ["--compression", "szip"]),
    "shuffle_szip_f8_part_block": ((7, 9, 5), "<f8", ["--filter", "shuffle", "--compression", "szip"]),
    "szip_u1_part_block": ((999,), "|u1", ["--compression", "szip"]),
    "szip_u4_blocks_32": ((45,), "<u4", ["--compression", "szip", "--szip-block-size", "32", "--szip-rsi", "3"]),
}

# name → (shape, dtype, pipeline arguments, words the listed reason holds)
UNEXPRESSIBLE = {
    "sp40": ((20, 30), "<f8", ["--encoding", "simple_packing", "--bits", "40"], "40 bits"),
    "nan_masked": ((10,), "<f8", ["--allow-nan"], "masks"),
    # A constant field: more than 8 decoded bytes per payload byte, more
    # than imagecodecs' decoder makes room for without an output size.
    "szip_constant_u2": ((5000,), "<u2", ["--compression", "szip"], "8 per payload byte"),
    # Five values in a block of 16: the padded block is twice the object.
    "sp16_szip_tiny": ((5,), "<f8", ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"],
                       "twice or more"),
}


def tgm(*args):
    r = subprocess.run([TGM, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"tgm {' '.join(map(str, args))}: {r.stderr}"
    return r


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """One message per case (appended), its `tgm export` and its refs."""
    d = tmp_path_factory.mktemp("kerchunk")
    path = d / "cases.tgm"
    order = []
    for name, (shape, dtype, args, *_) in {**EXPRESSIBLE, **UNEXPRESSIBLE}.items():
        data = field(shape, dtype)
        if name == "nan_masked":
            data[3] = np.nan
        if name == "szip_constant_u2":
            data[:] = 1234
        if name == "szip_i2_signed":
            data = data - 300
        npy = d / f"{name}.npy"
        np.save(npy, data)
        tgm("import", npy, "-o", path, *(["--append"] if order else []), *args)
        npy.unlink()
        order.append(name)
    # A message of two objects stacked along mars.step, and one of two
    # packed objects (per-object codec parameters) that cannot be stacked.
    for i, step in enumerate((0, 6)):
        np.save(d / f"t{step}.npy", field((4, 5), "<f8") + step)
    stack = ["-m", "0:mars.param=t", "-m", "0:mars.step=0", "-m", "1:mars.param=t", "-m", "1:mars.step=6"]
    tgm("import", d / "t0.npy", d / "t6.npy", "-o", path, "--append", *stack, "--compression", "zstd")
    packed = [a.replace("mars.param=t", "mars.param=p") for a in stack]
    tgm("import", d / "t0.npy", d / "t6.npy", "-o", path, "--append", *packed,
        "--encoding", "simple_packing", "--bits", "16")
    tgm("export", path, "-o", d / "export")
    refs = d / "refs.json"
    r = tgm("refs", path, "-o", refs)
    return {"dir": d, "path": path, "order": order, "refs": refs, "stderr": r.stderr}


def exported(archive, m, o=0):
    ex = archive["dir"] / "export"
    named = sorted(ex.glob(f"m{m}_*.npy"))
    return np.load(named[o])


def open_refs(refs, protocol):
    options = {"fo": str(refs), "remote_protocol": protocol}
    if protocol == "http":
        # zarr 3 reads through an asynchronous reference filesystem, whose
        # target filesystem must be asynchronous too.
        options["remote_options"] = {"asynchronous": True}
    return xr.open_dataset(
        "reference://",
        engine="zarr",
        mask_and_scale=False,
        backend_kwargs={"consolidated": False, "storage_options": options},
    )


def assert_bit_identical(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, what
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("="), (what, got.dtype, want.dtype)
    a = np.ascontiguousarray(got.astype(want.dtype.newbyteorder("=")))
    b = np.ascontiguousarray(want.astype(want.dtype.newbyteorder("=")))
    assert a.tobytes() == b.tobytes(), what


def check_dataset(ds, archive):
    for m, name in enumerate(archive["order"]):
        if name in UNEXPRESSIBLE:
            assert name not in ds.variables
            continue
        assert_bit_identical(ds[name].values, exported(archive, m), name)
    n = len(archive["order"])
    t = ds["t"]
    assert t.dims == ("step", "t_dim_0", "t_dim_1")
    # MARS step (hours) as a duration, as cfgrib shows it.
    assert list(ds["step"].values) == [np.timedelta64(0, "h"), np.timedelta64(6, "h")]
    for i in range(2):
        assert_bit_identical(t.isel(step=i).values, exported(archive, n, i), f"t step {i}")
        assert_bit_identical(ds[f"p_{n + 1}_{i}"].values, exported(archive, n + 1, i), f"p {i}")
        assert ds[f"p_{n + 1}_{i}"].attrs["MARS_step"] == [0, 6][i]


def test_every_expressible_pipeline_reads_back_identically(archive):
    check_dataset(open_refs(archive["refs"], "file"), archive)


def test_unexpressible_objects_are_listed_with_the_reason(archive):
    refs = json.loads(archive["refs"].read_text())
    listed = json.loads(refs["refs"][".zattrs"])["tgm_unexpressible"]
    by_name = {u["variable"]: u for u in listed}
    for m, name in enumerate(archive["order"]):
        if name in UNEXPRESSIBLE:
            u = by_name[name]
            assert (u["message"], u["object"]) == (m, 0)
            assert UNEXPRESSIBLE[name][3] in u["reason"], u
            assert f"message {m} object 0 ({name}) left out" in archive["stderr"]
    assert set(by_name) == set(UNEXPRESSIBLE)


def chunk_bytes(archive, key):
    refs = json.loads(archive["refs"].read_text())["refs"]
    target, offset, length = refs[key]
    with open(target, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def zstd_frame_records_size(frame):
    """Whether a zstd frame header has a content-size field: the size flag
    (bits 7-6 of the descriptor) or the single-segment bit (5) set."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    return frame[4] & 0xE0 != 0


def test_default_zstd_frames_omit_their_size_and_stock_numcodecs_reads_them(archive):
    import numcodecs

    assert tuple(int(x) for x in numcodecs.__version__.split(".")[:3]) >= (0, 16, 2)
    ds = open_refs(archive["refs"], "file")
    for m, name in enumerate(archive["order"]):
        if not name.startswith("zstd_"):
            continue
        frame = chunk_bytes(archive, f"{name}/" + ".".join(["0"] * len(EXPRESSIBLE[name][0])))
        assert zstd_frame_records_size(frame) == name.endswith("content_size"), name
        assert_bit_identical(ds[name].values, exported(archive, m), name)


def test_part_block_szip_objects_are_cut_by_packints(archive):
    refs = json.loads(archive["refs"].read_text())["refs"]
    for name in ("sp16_szip_part_block", "sp16_szip_era5_grid", "szip_u2_part_block", "shuffle_szip_f8"):
        meta = json.loads(refs[f"{name}/.zarray"])
        assert meta["compressor"]["id"] == "imagecodecs_aec", name
        assert meta["filters"][-1]["id"] == "imagecodecs_packints", name
    meta = json.loads(refs["szip_u2/.zarray"])
    assert not any(f["id"] == "imagecodecs_packints" for f in meta["filters"] or [])


def test_refs_refuses_to_overwrite(archive):
    before = archive["refs"].read_bytes()
    r = subprocess.run([TGM, "refs", archive["path"], "-o", archive["refs"]], capture_output=True, text=True)
    assert r.returncode != 0 and "already exists" in r.stderr
    assert archive["refs"].read_bytes() == before


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nginx(archive):
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if exe is None:
        pytest.skip("nginx is not installed (apt-get install nginx): the HTTP checks are skipped")
    d = archive["dir"] / "nginx"
    (d / "tmp").mkdir(parents=True)
    port = free_port()
    conf = d / "nginx.conf"
    conf.write_text(
        f"""daemon off; master_process off; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off; client_body_temp_path {d}/tmp/body; proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi; uwsgi_temp_path {d}/tmp/uwsgi; scgi_temp_path {d}/tmp/scgi;
    default_type application/octet-stream;
    server {{ listen 127.0.0.1:{port}; root {archive["dir"]}; location / {{ }} }}
}}
"""
    )
    proc = subprocess.Popen([exe, "-p", str(d), "-c", str(conf), "-e", str(d / "error.log")])
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail(f"nginx did not listen: {(d / 'error.log').read_text()}")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_refs_of_a_url_read_over_http(archive, nginx):
    refs = archive["dir"] / "refs_http.json"
    tgm("refs", f"{nginx}/cases.tgm", "-o", refs)
    doc = json.loads(refs.read_text())
    assert doc["refs"]["raw_f8/0.0"][0] == f"{nginx}/cases.tgm"
    check_dataset(open_refs(refs, "http"), archive)
