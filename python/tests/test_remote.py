"""Remote files from Python: URLs served by a real nginx on loopback (the
server .ci/remote.sh installs; these tests skip when it is absent) and
file-like objects. ``spec/remote.md``."""

import asyncio
import io
import pickle
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import tgm

from conftest import desc
from test_validate import cli

NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    log_format bytes "$request_uri $status $body_bytes_sent";
    access_log {d}/access.log bytes;
    client_body_temp_path {d}/tmp;
    proxy_temp_path {d}/tmp;
    fastcgi_temp_path {d}/tmp;
    uwsgi_temp_path {d}/tmp;
    scgi_temp_path {d}/tmp;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {d}/www;
        location /forbidden/ {{ return 403; }}
    }}
}}
"""


class Nginx:
    """nginx serving ``www`` of a scratch directory on a free loopback port."""

    def __init__(self, exe):
        self.dir = Path(tempfile.mkdtemp(prefix="tgm-py-nginx-"))
        (self.dir / "www").mkdir()
        (self.dir / "tmp").mkdir()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(d=self.dir, port=self.port))
        self.proc = subprocess.Popen(
            [exe, "-p", str(self.dir), "-c", str(conf), "-e", str(self.dir / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"nginx did not start: {self.log('error.log')}")
                time.sleep(0.05)

    def log(self, name):
        p = self.dir / name
        return p.read_text() if p.exists() else ""

    def put(self, name, data):
        """Serves ``data`` at ``name`` → its URL."""
        (self.dir / "www" / name).write_bytes(data)
        return f"http://127.0.0.1:{self.port}/{name}"

    def body_bytes(self, name):
        """Response body bytes sent so far for ``name`` (the access log is
        written when each response ends)."""
        total = 0
        for line in self.log("access.log").splitlines():
            uri, _status, sent = line.split()
            if uri == f"/{name}":
                total += int(sent)
        return total

    def requests(self, name):
        """Requests answered so far for ``name``."""
        return sum(1 for line in self.log("access.log").splitlines() if line.split()[0] == f"/{name}")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def nginx():
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if exe is None:
        pytest.skip("nginx is not installed (apt-get install nginx, or bash .ci/remote.sh)")
    if not tgm._native.remote_enabled():
        pytest.skip("this tgm was built without the 'remote' feature")
    server = Nginx(exe)
    yield server
    server.stop()


def archive(n_messages, n_elements=16, dtype="float32"):
    """``n_messages`` one-object messages; message i holds ``i + arange``."""
    parts, arrays = [], []
    for i in range(n_messages):
        a = (np.arange(n_elements) + i).astype(dtype)
        arrays.append(a)
        parts.append(tgm.encode({"base": [{"i": i}]}, [(desc([n_elements], dtype), a)]))
    return b"".join(parts), arrays


def test_url_reads_what_a_local_copy_reads(nginx, tmp_path):
    data, arrays = archive(3)
    url = nginx.put("same.tgm", data)
    local = tmp_path / "same.tgm"
    local.write_bytes(data)
    with tgm.TensogramFile.open(url) as r, tgm.TensogramFile.open(local) as f:
        assert r.is_remote() and r.source() == url
        assert r.message_count() == len(f) == 3
        for i in range(3):
            assert r.read_message(i) == f.read_message(i)
            assert r.file_decode_metadata(i).base == f.file_decode_metadata(i).base
            rd = r.file_decode_descriptors(i)["descriptors"]
            assert [d.shape for d in rd] == [[16]]
            np.testing.assert_array_equal(r.file_decode_object(i, 0)["data"], arrays[i])
            np.testing.assert_array_equal(r.decode_message(i).objects[0][1], arrays[i])
        parts = r.file_decode_range(2, 0, [(1, 3), (10, 2)])
        np.testing.assert_array_equal(parts[0], arrays[2][1:4])
        np.testing.assert_array_equal(parts[1], arrays[2][10:12])
        np.testing.assert_array_equal(r[-1].objects[0][1], arrays[2])


def test_an_object_costs_its_frame_not_the_file(nginx):
    data, arrays = archive(4, n_elements=1 << 18)  # 1 MiB per object
    url = nginx.put("big.tgm", data)
    r = tgm.TensogramFile.open(url)
    opened = nginx.body_bytes("big.tgm")
    # Opening: the first 2 KiB, the 8 KiB tail and one 64 KiB readahead
    # window at each end (``spec/remote.md`` §3.1), not the file.
    assert opened <= 2048 + 8192 + 2 * 64 * 1024, opened
    arr = r.file_decode_object(3, 0)["data"]
    np.testing.assert_array_equal(arr, arrays[3])
    sent = nginx.body_bytes("big.tgm") - opened
    one_message = len(data) // 4
    # The object: its frame (less what opening already read of it) and its
    # message's index, not the file.
    assert one_message - 2 * 64 * 1024 <= sent < one_message + 64 * 1024, (sent, len(data))


def test_batch_reads_check_indexes_before_reading(nginx):
    data, arrays = archive(3)
    url = nginx.put("batch.tgm", data)
    r = tgm.TensogramFile.open(url)
    got = r.file_decode_object_batch([2, 0], 0)
    np.testing.assert_array_equal(got[0]["data"], arrays[2])
    np.testing.assert_array_equal(got[1]["data"], arrays[0])
    ranges = r.file_decode_range_batch([1, 2], 0, [(0, 2)], join=True)
    np.testing.assert_array_equal(ranges[1], arrays[2][:2])
    with pytest.raises(tgm.InvalidArgumentError, match="out of range"):
        r.file_decode_object_batch([0, 3], 0)
    with pytest.raises(tgm.InvalidArgumentError, match="out of range"):
        r.prefetch_layouts([7])


def test_async_handles_read_urls_concurrently(nginx):
    data, arrays = archive(3)
    url = nginx.put("async.tgm", data)

    async def main():
        f = await tgm.AsyncTensogramFile.open_remote(url, {"allow_http": True})
        assert f.is_remote()
        assert await f.message_count() == 3
        await f.prefetch_layouts([0, 1, 2])
        got = await asyncio.gather(*(f.file_decode_object(i, 0) for i in range(3)))
        return [g["data"] for g in got]

    for got, want in zip(asyncio.run(main()), arrays):
        np.testing.assert_array_equal(got, want)


def test_missing_and_refused_objects_are_os_errors_naming_the_url(nginx):
    url = f"http://127.0.0.1:{nginx.port}/no-such.tgm"
    with pytest.raises(OSError, match="no-such.tgm") as e:
        tgm.TensogramFile.open(url)
    assert e.value.kind == "not_found"
    url = f"http://127.0.0.1:{nginx.port}/forbidden/x.tgm"
    with pytest.raises(OSError) as e:
        tgm.TensogramFile.open(url)
    assert e.value.kind == "forbidden"


def test_an_object_replaced_after_open_is_an_error_not_other_values(nginx):
    data, _ = archive(3, n_elements=4096)
    url = nginx.put("changing.tgm", data)
    f = tgm.TensogramFile.open(url)
    other, _ = archive(3, n_elements=4097)  # another size: nginx's ETag changes
    nginx.put("changing.tgm", other)
    with pytest.raises(OSError) as e:
        f.file_decode_object(2, 0)
    assert e.value.kind == "object_changed"


def test_storage_options_are_checked(nginx):
    url = nginx.put("opts.tgm", archive(1)[0])
    with pytest.raises(OSError, match="no_such_option"):
        tgm.TensogramFile.open_remote(url, {"no_such_option": "1"})

    class NoStr:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(ValueError, match="convertible to string"):
        tgm.TensogramFile.open_remote(url, {"timeout": NoStr()})
    with pytest.raises(TypeError):
        tgm.TensogramFile.open_remote(url, ["allow_http"])
    assert tgm.TensogramFile.open_remote(url, {"timeout": "5s"}).message_count() == 1


def test_remote_files_are_read_only(nginx):
    data, _ = archive(1)
    url = nginx.put("ro.tgm", data)
    r = tgm.TensogramFile.open(url)
    with pytest.raises(OSError, match="read-only"):
        r.append_bytes(data)
    with pytest.raises(RuntimeError, match="iteration"):
        iter(r)
    assert (nginx.dir / "www" / "ro.tgm").read_bytes() == data


class CountingReader(io.BytesIO):
    """A file object that counts the bytes read from it."""

    def __init__(self, data):
        super().__init__(data)
        self.bytes_read = 0

    def read(self, n=-1):
        out = super().read(n)
        self.bytes_read += len(out)
        return out


def test_file_objects_are_read_by_ranges():
    data, arrays = archive(4, n_elements=1 << 16)
    src = CountingReader(data)
    f = tgm.TensogramFile.open(src)
    assert f.is_remote() and f.source() is src
    assert f.message_count() == 4
    np.testing.assert_array_equal(f.file_decode_object(1, 0)["data"], arrays[1])
    assert src.bytes_read < len(data) // 2
    np.testing.assert_array_equal(f.file_decode_range(3, 0, [(5, 2)])[0], arrays[3][5:7])
    with pytest.raises(TypeError, match="storage_options"):
        tgm.TensogramFile.open_remote(io.BytesIO(data), {"timeout": "1s"})


class SlowReader(io.BytesIO):
    """A file object whose reads release the GIL (as real I/O does)."""

    def read(self, n=-1):
        time.sleep(0.001)
        return super().read(n)


def test_file_objects_are_read_safely_from_many_threads():
    from concurrent.futures import ThreadPoolExecutor

    data, arrays = archive(8, n_elements=4096)
    f = tgm.TensogramFile.open(SlowReader(data))
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: f.file_decode_object(i % 8, 0)["data"], range(64)))
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, arrays[i % 8])


def test_a_file_object_cut_short_is_refused_unless_intact_only():
    data, arrays = archive(2)
    start = tgm.scan(data)[1][0]
    with pytest.raises(tgm.FramingError) as e:
        tgm.TensogramFile.open(io.BytesIO(data[:-10]))
    assert e.value.offset == start and e.value.message_index == 1
    assert "BytesIO" in str(e.value) and "intact_only" in str(e.value)
    with pytest.raises(tgm.InvalidArgumentError, match="zero_copy"):
        tgm.TensogramFile.open(io.BytesIO(data), zero_copy=True)
    f = tgm.TensogramFile.open(io.BytesIO(data[:-10]), intact_only=True)
    assert f.message_count() == 1
    assert f.damage() == [(start, len(data) - 10 - start, f.damage()[0][2], True)]
    np.testing.assert_array_equal(f.file_decode_object(0, 0)["data"], arrays[0])
    with pytest.raises(tgm.InvalidArgumentError):
        f.file_decode_object(1, 0)


def test_fsspec_files_open_like_paths(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    data, arrays = archive(2)
    p = tmp_path / "a.tgm"
    p.write_bytes(data)
    with fsspec.open(f"file://{p}", "rb") as fh:
        f = tgm.TensogramFile.open(fh)
        np.testing.assert_array_equal(f.file_decode_object(1, 0)["data"], arrays[1])


def test_file_object_errors_are_typed():
    class Broken(io.BytesIO):
        def read(self, n=-1):
            raise OSError("disk gone")

    data, _ = archive(1)
    with pytest.raises(OSError, match="disk gone"):
        tgm.TensogramFile.open(Broken(data)).file_decode_object(0, 0)


def test_xarray_opens_a_url_and_a_pickled_handle_reopens_it(nginx):
    import pickle

    xr = pytest.importorskip("xarray")
    from tgm.xarray_backend import TgmBackendEntrypoint
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    msg = tgm.encode(
        {"base": [{"mars": {"param": "2t"}, "dim_names": ["y", "x"]}]},
        [(desc([3, 4], "float32"), data)],
    )
    url = nginx.put("xr.tgm", msg)
    ds = xr.open_dataset(url, engine=TgmBackendEntrypoint)
    np.testing.assert_array_equal(ds["2t"].values, data)
    f = pickle.loads(pickle.dumps(tgm.TensogramFile.open_remote(url, {"timeout": "10s"})))
    np.testing.assert_array_equal(f.object_array(0, 0), data)
    with pytest.raises(TypeError, match="file object"):
        pickle.dumps(tgm.TensogramFile.open(io.BytesIO(msg)))


def s3s_fs():
    """The s3s-fs binary .ci/remote.sh installs, or skip."""
    candidates = [os.environ.get("TGM_S3S_FS"), shutil.which("s3s-fs")]
    roots = [Path(__file__).resolve().parents[2] / "target"]
    if os.environ.get("TGM_CI_CACHE"):
        roots.append(Path(os.environ["TGM_CI_CACHE"]))
    candidates += [str(r / "tools" / "bin" / "s3s-fs") for r in roots]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("s3s-fs is not installed (bash .ci/remote.sh, or set TGM_S3S_FS)")


@pytest.fixture
def s3(tmp_path, monkeypatch):
    """s3s-fs serving bucket ``tgm-test`` → ``(endpoint, bucket directory)``."""
    if not tgm._native.remote_enabled():
        pytest.skip("this tgm was built without the 'remote' feature")
    exe = s3s_fs()
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    bucket = tmp_path / "data" / "tgm-test"
    bucket.mkdir(parents=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["--host", "127.0.0.1", "--port", str(port), "--access-key", "ak", "--secret-key", "sk"]
    proc = subprocess.Popen(
        [exe, *args, str(tmp_path / "data")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("s3s-fs did not start")
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", bucket
    proc.kill()
    proc.wait()


def test_s3_objects_open_with_storage_options(s3):
    endpoint, bucket = s3
    data, arrays = archive(2)
    (bucket / "a.tgm").write_bytes(data)
    opts = {
        "endpoint": endpoint,
        "allow_http": True,
        "region": "us-east-1",
        "access_key_id": "ak",
        "secret_access_key": "sk",
    }
    f = tgm.TensogramFile.open_remote("s3://tgm-test/a.tgm", opts)
    assert f.message_count() == 2
    np.testing.assert_array_equal(f.file_decode_object(1, 0)["data"], arrays[1])
    with pytest.raises(OSError) as e:
        tgm.TensogramFile.open_remote("s3://tgm-test/a.tgm", {**opts, "secret_access_key": "bad"})
    assert e.value.kind in ("forbidden", "remote")
    with pytest.raises(OSError) as e:
        tgm.TensogramFile.open_remote("s3://tgm-test/missing.tgm", opts)
    assert e.value.kind == "not_found"


def test_a_url_cut_short_is_refused_unless_intact_only(nginx):
    data, arrays = archive(3)
    start = tgm.scan(data)[2][0]
    url = nginx.put("cut.tgm", data[:-7])
    with pytest.raises(tgm.FramingError) as e:
        tgm.TensogramFile.open(url)
    assert e.value.offset == start and e.value.message_index == 2
    assert url in str(e.value) and "intact_only" in str(e.value)
    with pytest.raises(tgm.InvalidArgumentError, match="zero_copy"):
        tgm.TensogramFile.open(url, zero_copy=True)
    f = tgm.TensogramFile.open(url, intact_only=True)
    assert len(f) == 2 and [d[:2] for d in f.damage()] == [(start, len(data) - 7 - start)]
    np.testing.assert_array_equal(f.object_array(1, 0), arrays[1])
    g = tgm.TensogramFile.open_remote(url, intact_only=True)
    assert pickle.loads(pickle.dumps(g)).damage() == f.damage()
    xr = pytest.importorskip("xarray")
    with pytest.raises(tgm.FramingError):
        xr.open_dataset(url, engine="tgm")
    assert set(xr.open_dataset(url, engine="tgm", intact_only=True).data_vars) == {"object_0_0", "object_1_0"}


def test_an_async_url_cut_short_is_refused_unless_intact_only(nginx):
    data, arrays = archive(3)
    start = tgm.scan(data)[2][0]
    url = nginx.put("cut-async.tgm", data[:-7])

    async def refused():
        await tgm.AsyncTensogramFile.open_remote(url)

    with pytest.raises(tgm.FramingError) as e:
        asyncio.run(refused())
    assert e.value.offset == start and "intact_only" in str(e.value)

    async def intact():
        f = await tgm.AsyncTensogramFile.open_remote(url, intact_only=True)
        return await f.message_count(), await f.file_decode_object(1, 0)

    count, got = asyncio.run(intact())
    assert count == 2
    np.testing.assert_array_equal(got["data"], arrays[1])


def test_kerchunk_refs_of_a_url_are_those_of_the_local_file(nginx, tmp_path):
    data, _ = archive(2)
    url = nginx.put("refs.tgm", data)
    local = tmp_path / "refs.tgm"
    local.write_bytes(data)
    assert tgm.kerchunk_refs(url) == tgm.kerchunk_refs(local, target=url)
    assert tgm.kerchunk_refs(io.BytesIO(data), target=url) == tgm.kerchunk_refs(url)
    with pytest.raises(tgm.InvalidArgumentError, match="needs target"):
        tgm.kerchunk_refs(io.BytesIO(data))
    with pytest.raises(TypeError, match="storage_options"):
        tgm.kerchunk_refs(local, storage_options={"timeout": "5s"})
    with pytest.raises(OSError, match="no-such"):
        tgm.kerchunk_refs(f"http://127.0.0.1:{nginx.port}/no-such.tgm")


def test_xarray_decodes_cf_from_a_url_as_from_a_path(nginx, tmp_path):
    xr = pytest.importorskip("xarray")
    packed = np.array([[0, 2, -1]], dtype=np.int16)
    attrs = {"scale_factor": 0.5, "add_offset": 100.0, "_FillValue": -1}
    msg = tgm.encode(
        {"base": [{"name": "t", "dim_names": ["y", "x"], "netcdf": {"attrs": attrs}}]},
        [(desc([1, 3], "int16"), packed)],
    )
    url = nginx.put("cf.tgm", msg)
    local = tmp_path / "cf.tgm"
    local.write_bytes(msg)
    for kw, want in (({}, [[100.0, 101.0, np.nan]]), ({"mask_and_scale": False}, [[0, 2, -1]])):
        got = xr.open_dataset(url, engine="tgm", **kw)["t"].values
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, xr.open_dataset(local, engine="tgm", **kw)["t"].values)


def test_a_catalogued_archive_opens_in_xarray_from_its_tail(nginx, tmp_path):
    """Issue 41: a file ended with its catalogue opens over HTTP in xarray
    from the catalogue, not the messages: 1,000 fields in at most 5
    requests and under 2 % of the file, the same dataset as the local file
    without a catalogue (spec/files.md §9.3)."""
    xr = pytest.importorskip("xarray")
    plain = tmp_path / "plain.tgm"
    with tgm.TensogramFile.create(plain) as f:
        for step in range(250):
            for param in ("2t", "msl", "10u", "10v"):
                mars = {"class": "od", "param": param, "step": step}
                values = np.arange(2000, dtype=np.float32) + step
                f.append({"base": [{"mars": mars, "dim_names": ["values"]}]}, [(desc([2000], "float32"), values)])
    path = tmp_path / "cat.tgm"
    shutil.copy(plain, path)
    assert tgm.write_catalogue(path) > 0
    with tgm.TensogramFile.open(path) as f, tgm.TensogramFile.open(plain) as g:
        assert f._handle().catalogued() and not g._handle().catalogued()
        assert len(f) == len(g) == 1000
    data = path.read_bytes()
    url = nginx.put("cat.tgm", data)
    before, sent_before = nginx.requests("cat.tgm"), nginx.body_bytes("cat.tgm")
    remote = xr.open_dataset(url, engine="tgm")
    requests = nginx.requests("cat.tgm") - before
    sent = nginx.body_bytes("cat.tgm") - sent_before
    print(f"{len(data)} bytes: open_dataset sent {requests} requests, {sent} bytes")
    assert requests <= 5, requests
    assert sent * 50 < len(data), (sent, len(data))
    local = xr.open_dataset(plain, engine="tgm")
    xr.testing.assert_identical(remote.load(), local.load())


def fields(n, offset, name):
    """``n`` messages of one 8-value field each, MARS param ``name`` and
    steps ``0..n``, written without a catalogue (as the reference writes)."""
    parts = []
    for step in range(n):
        a = (np.arange(8) + offset + step).astype("float32")
        meta = {"base": [{"mars": {"param": name, "step": step}}]}
        parts.append(tgm.encode(meta, [(desc([8], "float32"), a)]))
    return b"".join(parts)


def test_a_catalogue_file_opens_many_archives_in_xarray_without_touching_them(nginx, tmp_path):
    """``spec/files.md`` §9.5: archives tgm did not write, catalogued by
    ``tgm index``, open in xarray from the catalogue file alone; values are
    read from each archive with requests pinned to its ETag."""
    xr = pytest.importorskip("xarray")
    urls, local = [], []
    for k, name in enumerate(["2t", "msl", "10u"]):
        data = fields(6, 100 * k, name)
        urls.append(nginx.put(f"cat-{name}.tgm", data))
        local.append(data)
    cat = tmp_path / "all.tgmc"
    subprocess.run([cli(), "index", *urls, "-o", str(cat)], check=True, capture_output=True)
    cat_url = nginx.put("all.tgmc", cat.read_bytes())
    before = {u: nginx.requests(u.rsplit("/", 1)[1]) for u in urls}
    ds = xr.open_dataset(cat_url, engine="tgm")
    assert sorted(ds.data_vars) == ["10u", "2t", "msl"]
    assert ds["msl"].sizes["step"] == 6
    # Opening read the catalogue file only.
    assert {u: nginx.requests(u.rsplit("/", 1)[1]) for u in urls} == before
    assert nginx.requests("all.tgmc") <= 2
    whole = tmp_path / "whole.tgm"
    whole.write_bytes(b"".join(local))
    want = xr.open_dataset(whole, engine="tgm")
    xr.testing.assert_identical(ds.load(), want.load())
    files = tgm.open_catalogue(cat_url)
    assert [f.source() for f in files] == urls
    assert [len(f) for f in files] == [6, 6, 6]


def test_a_catalogue_file_of_a_thousand_archives_opens_in_one_request_and_each_field_costs_one(nginx, tmp_path):
    """Issue 41's many-files dataset at its size: 1,000 archives of one
    field each, catalogued by ``tgm index``, open in xarray (Dask chunks)
    with requests for the catalogue file only; loading the variable then
    costs exactly one ranged request per archive."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    count = 1000
    (nginx.dir / "www" / "thousand").mkdir()
    urls, values = [], []
    for k in range(count):
        a = (np.arange(8) + k).astype("float32")
        meta = {"base": [{"mars": {"param": "2t", "step": k}}]}
        urls.append(nginx.put(f"thousand/a{k:04d}.tgm", tgm.encode(meta, [(desc([8], "float32"), a)])))
        values.append(a)
    cat = tmp_path / "thousand.tgmc"
    r = subprocess.run([cli(), "index", *urls, "-o", str(cat)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"catalogued {count} archive(s)" in r.stderr, r.stderr
    cat_url = nginx.put("thousand/all.tgmc", cat.read_bytes())

    def requests_in_folder():
        lines = nginx.log("access.log").splitlines()
        return [line.split()[0] for line in lines if line.startswith("/thousand/")]

    before = len(requests_in_folder())
    started = time.monotonic()
    ds = xr.open_dataset(cat_url, engine="tgm", chunks={})
    opened = time.monotonic() - started
    sent = requests_in_folder()[before:]
    print(f"open_dataset of {count} archives: {len(sent)} request(s), {opened:.2f} s")
    assert set(sent) == {"/thousand/all.tgmc"}, sent[:10]
    assert len(sent) <= 2, sent
    assert ds["2t"].sizes["step"] == count

    before = len(requests_in_folder())
    got = ds["2t"].load().values
    sent = requests_in_folder()[before:]
    assert sorted(sent) == sorted(f"/thousand/a{k:04d}.tgm" for k in range(count)), len(sent)
    np.testing.assert_array_equal(got, np.stack(values))


def test_a_changed_archive_is_scanned_with_a_warning_or_refused_when_read(nginx, tmp_path):
    data = fields(4, 0, "2t")
    url = nginx.put("cat-changing.tgm", data)
    cat = tmp_path / "one.tgmc"
    subprocess.run([cli(), "index", url, "-o", str(cat)], check=True, capture_output=True)
    nginx.put("cat-changing.tgm", data + fields(1, 50, "2t"))
    files = tgm.open_catalogue(str(cat))
    # Listed from the catalogue (its ETag trusted), but the read is pinned.
    with pytest.raises(tgm.TensogramError, match="cat-changing.tgm"):
        files[0].file_decode_object(0, 0)
    # A local archive is checked first: changed, it is scanned, and said so.
    path = tmp_path / "local.tgm"
    path.write_bytes(data)
    local_cat = tmp_path / "local.tgmc"
    subprocess.run([cli(), "index", str(path), "-o", str(local_cat)], check=True, capture_output=True)
    path.write_bytes(data + fields(2, 9, "2t"))
    with pytest.warns(UserWarning, match="its catalogue was not used"):
        files = tgm.open_catalogue(str(local_cat))
    assert len(files[0]) == 6


def test_a_point_series_over_szip_fields_reads_a_small_part_of_the_file(nginx, tmp_path):
    """Outer indexing reads element ranges (the frame's tail, then the szip
    RSIs holding the points, ``spec/remote.md`` §4): a point's time series
    over remote fields of 16-bit simple packing + szip, in a file ending
    with its catalogue, costs well under 5% of the file."""
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(7)
    parts, fields_ = [], []
    for step in range(6):
        a = 280 + 10 * rng.standard_normal((1000, 2000))
        fields_.append(a)
        p = tgm.compute_packing_params(a.ravel(), 16, 0)
        d = {"type": "ntensor", "shape": [1000, 2000], "dtype": "float64", "encoding": "simple_packing", **p,
             "compression": "szip", "szip_rsi": 32, "szip_block_size": 16, "szip_flags": 8}
        parts.append(tgm.encode({"base": [{"mars": {"param": "t", "step": step}}]}, [(d, a)]))
    local = tmp_path / "points.tgm"
    local.write_bytes(b"".join(parts))
    tgm.write_catalogue(str(local))
    data = local.read_bytes()
    url = nginx.put("points.tgm", data)
    ds = xr.open_dataset(url, engine="tgm")
    before = nginx.body_bytes("points.tgm")
    got = ds["t"][:, 570, 1010].values
    sent = nginx.body_bytes("points.tgm") - before
    want = xr.open_dataset(local, engine="tgm")["t"][:, 570, 1010].values
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, [f[570, 1010] for f in fields_], atol=0.01)
    print(f"point series of 6 fields: {sent} of {len(data)} bytes ({100 * sent / len(data):.2f} %)")
    assert sent < 0.05 * len(data), (sent, len(data))
    # A window of rows and columns too.
    box = ds["t"][1:4, 10:14, 200:220].values
    np.testing.assert_array_equal(box, xr.open_dataset(local, engine="tgm")["t"][1:4, 10:14, 200:220].values)
