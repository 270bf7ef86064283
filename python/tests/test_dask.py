"""Dask distributed with worker processes computes over a multi-message
archive and matches NumPy; workers read objects without rescanning."""

import numpy as np
import pytest

import tgm
from conftest import desc

distributed = pytest.importorskip("distributed")
xr = pytest.importorskip("xarray")


def _forbid_scanning():
    import tgm as worker_tgm

    class NoScan:
        """The native file type, except that opening (which scans) fails;
        opening from a shipped layout works."""

        from_layout = staticmethod(worker_tgm._native.File.from_layout)

        def __init__(self, *args):
            raise RuntimeError("a worker rescanned the file")

    worker_tgm._native.File = NoScan
    return True


def _tasks_run(dask_worker):
    return len(dask_worker.state.log)


@pytest.mark.timeout(180)
def test_local_cluster_matches_numpy(tmp_path):
    p = tmp_path / "archive.tgm"
    rng = np.random.default_rng(3)
    fields = {}
    with tgm.TensogramFile.create(p) as f:
        for member in range(4):
            for step in range(3):
                a = rng.standard_normal((16, 32))
                fields[(member, step)] = a
                f.append(
                    {"base": [{"mars": {"param": "t", "number": member, "step": step}, "dim_names": ["y", "x"]}]},
                    [(desc([16, 32], "float64"), a)],
                )
    expected = np.stack([[fields[(m, s)] for s in range(3)] for m in range(4)])
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster, timeout="60s") as client:
        assert all(client.run(_forbid_scanning).values())
        ds = xr.open_dataset(p, engine="tgm", chunks={})
        t = ds.t
        assert t.dims == ("number", "step", "y", "x")
        mean = t.mean(dim="number").compute()
        np.testing.assert_allclose(mean.values, expected.mean(axis=0), rtol=1e-12)
        total = float(t.sum().compute())
        assert abs(total - expected.sum()) < 1e-9
        # The graph ran on the workers, whose scanner raises.
        assert sum(client.run(_tasks_run).values()) > 0
