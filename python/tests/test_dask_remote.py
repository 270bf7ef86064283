"""Dask at scale over a remote archive: a ``LocalCluster`` of worker
processes computes over ``xr.open_dataset(url, engine="tgm",
chunks={})`` served by nginx on loopback, and the workers never rescan the
file: they receive its layout in the pickled handle, so each object costs
one ranged request (counted in nginx's access log) and opening a URL by
scanning fails on the workers. Skips when nginx, the ``remote`` feature or
dask.distributed is absent."""

import json
import time

import numpy as np
import pytest

import tgm
from conftest import desc
from test_remote import nginx  # noqa: F401  (the module-scoped server fixture)

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
xr = pytest.importorskip("xarray")

MEMBERS, STEPS, SHAPE = 4, 5, (24, 40)


def _forbid_scanning():
    """On a worker: opening a URL by locating its messages raises; opening
    from a shipped layout still works."""
    import tgm._remote as remote

    def scan(*_args, **_kwargs):
        raise RuntimeError("a worker rescanned the remote file")

    remote.open_native = scan
    return True


def _responses(server, name):
    """``[(status, body bytes)]`` of the responses for ``name`` so far.

    nginx logs a request after sending its last byte, so the client may
    already hold the answer when the line is written: the log is read once
    it has stayed unchanged for 0.2 s (at most 5 s).
    """
    log, deadline = server.log("access.log"), time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.2)
        again = server.log("access.log")
        if again == log:
            break
        log = again
    out = []
    for line in log.splitlines():
        uri, status, sent = line.split()
        if uri == f"/{name}":
            out.append((int(status), int(sent)))
    return out


def _layout(url):
    """The layout of ``url`` with every message's data frames."""
    f = tgm.TensogramFile.open(url)
    for m in range(len(f)):
        f.file_decode_descriptors(m)
    return json.loads(tgm._native.source_layout(f._native))


@pytest.fixture(scope="module")
def remote_archive(nginx):  # noqa: F811
    rng = np.random.default_rng(11)
    fields, messages = {}, []
    for member in range(MEMBERS):
        for step in range(0, 6 * STEPS, 6):
            a = rng.standard_normal(SHAPE)
            fields[(member, step)] = a
            mars = {"param": "t", "number": member, "step": step, "date": 20240101, "time": 0}
            messages.append(tgm.encode({"base": [{"mars": mars, "dim_names": ["y", "x"]}]},
                                       [(desc(list(SHAPE), "float64", compression="zstd"), a)]))
    url = nginx.put("ens.tgm", b"".join(messages))
    expected = np.stack([[fields[(m, s)] for s in range(0, 6 * STEPS, 6)] for m in range(MEMBERS)])
    return url, expected


@pytest.mark.timeout(240)
def test_local_cluster_over_nginx_never_rescans(nginx, remote_archive):  # noqa: F811
    url, expected = remote_archive
    ds = xr.open_dataset(url, engine="tgm", chunks={})
    assert ds.t.dims == ("number", "step", "y", "x")
    assert ds.t.data.numblocks == (MEMBERS, STEPS, 1, 1)
    layout = _layout(url)
    before = len(_responses(nginx, "ens.tgm"))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster, timeout="60s") as client:
        assert all(client.run(_forbid_scanning).values())
        mean = ds.t.mean(dim="number").compute()
        np.testing.assert_allclose(mean.values, expected.mean(axis=0), rtol=1e-12)
        spread = float(ds.t.std().compute())
        np.testing.assert_allclose(spread, expected.std(), rtol=1e-12)
    during = _responses(nginx, "ens.tgm")[before:]
    frames = sorted(o["len"] for m in layout["messages"] for o in m["objects"]) * 2
    n_objects = MEMBERS * STEPS
    assert len(frames) == 2 * n_objects
    # Two passes over every object, each one ranged request of its data
    # frame; besides them only the workers' opening probes (at most two
    # per worker process), where a rescan would read every message again.
    read = sorted(sent for status, sent in during if status == 206)
    for sent in frames:
        read.remove(sent)
    assert len(read) <= 4, during
    print(f"\n{len(during)} requests during the computations: {len(frames)} frames, {len(read)} opening probes")


def test_pickled_remote_handle_carries_its_layout(nginx, remote_archive):  # noqa: F811
    import pickle

    url, expected = remote_archive
    f = tgm.TensogramFile.open(url)
    f.file_decode_descriptors(0)
    blob = pickle.dumps(f)
    frame = _layout(url)["messages"][0]["objects"][0]["len"]
    tgm._remote._FROM_LAYOUT.clear()  # as in a fresh worker process
    before = len(_responses(nginx, "ens.tgm"))
    g = pickle.loads(blob)
    assert len(g) == MEMBERS * STEPS
    np.testing.assert_array_equal(g.object_array(0, 0), expected[0, 0])
    during = _responses(nginx, "ens.tgm")[before:]
    # The frame, and at most an opening probe: no message is located again.
    assert during.count((206, frame)) == 1 and len(during) <= 2, during


def test_a_changed_remote_file_is_refused_when_unpickled(nginx):  # noqa: F811
    import pickle

    a = tgm.encode({"base": [{}]}, [(desc([4], "float32"), np.zeros(4, np.float32))])
    url = nginx.put("changing.tgm", a)
    blob = pickle.dumps(tgm.TensogramFile.open(url))
    nginx.put("changing.tgm", a + a)
    with pytest.raises(tgm.TensogramError):
        pickle.loads(blob)
