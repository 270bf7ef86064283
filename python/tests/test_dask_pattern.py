"""Converting many GRIB files on many workers straight into a bucket, then
one catalogue over the results (``spec/remote.md`` §7, ``spec/files.md``
§9.5), as the README's Dask pattern shows: each task writes one object (no
locks), ``tgm.index_archives`` (``tgm index``) catalogues the folder, and workers read each object
from its own archive through handles pickled from the catalogue. Runs
against s3s-fs on loopback and a ``distributed.LocalCluster`` of worker
processes; skips, saying so, when either is missing."""

import pathlib

import numpy as np
import pytest

import tgm

from test_remote import s3, s3s_fs  # noqa: F401 (the server fixture)
from test_remote_write import options

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRIB = ROOT / "fuzz" / "corpus" / "weather_grib_scan"
SOURCES = ["grib1.grib", "grib2.grib", "ccsds-grib2.grib", "reduced-gg-grib1.grib", "two-messages.grib"]


def convert_one(src, url, storage_options):
    """One task: one GRIB file converted into its own object."""
    import tgm as t

    return t.convert_grib(src, split=True, output=url, storage_options=storage_options)


def object_sum(f, m, o):
    """One task: one object read by a worker from a pickled handle."""
    return float(np.nansum(f.file_decode_object(m, o)["data"].astype("float64")))


@pytest.mark.skipif(not tgm.__has_grib__, reason="built without the 'grib' feature")
def test_many_workers_convert_into_a_bucket_and_one_catalogue_opens_the_results(s3, tmp_path):
    distributed = pytest.importorskip("distributed")
    endpoint, bucket = s3
    opts = options(endpoint)
    urls = [f"s3://tgm-test/dask/{pathlib.Path(s).stem}.tgm" for s in SOURCES]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        futures = client.map(convert_one, [str(GRIB / s) for s in SOURCES], urls, [opts] * len(urls))
        written = client.gather(futures)
        assert sorted(w["target"] for w in written) == sorted(urls)
        assert all(w["etag"] for w in written), written

        # One catalogue over the folder, written from Python.
        cat = "s3://tgm-test/dask/all.tgmc"
        done = tgm.index_archives("s3://tgm-test/dask/*.tgm", cat, opts)
        assert done["archives"] == len(SOURCES) and done["etag"], done
        with pytest.raises(tgm.TensogramError, match="already exists"):
            tgm.index_archives("s3://tgm-test/dask/*.tgm", cat, opts)

        files = tgm.open_catalogue(cat, opts)
        assert sorted(f.source() for f in files) == sorted(urls)
        local = {}
        for s in SOURCES:
            out = tmp_path / f"{pathlib.Path(s).stem}.tgm"
            tgm.convert_grib(GRIB / s, split=True, output=out)
            local[pathlib.Path(s).stem] = tgm.TensogramFile.open(out)
        tasks, want = [], []
        for f in files:
            ref = local[pathlib.PurePosixPath(f.source()).stem]
            assert len(f) == len(ref)
            for m in range(len(f)):
                assert f.file_decode_metadata(m).base == ref.file_decode_metadata(m).base
                tasks.append(client.submit(object_sum, f, m, 0, pure=False))
                want.append(float(np.nansum(ref.file_decode_object(m, 0)["data"].astype("float64"))))
        assert client.gather(tasks) == want
    # One object per task and the catalogue, nothing else (no parts left).
    names = sorted(p.name for p in bucket.rglob("*") if p.is_file())
    assert names == sorted([*(pathlib.PurePosixPath(u).name for u in urls), "all.tgmc"]), names
