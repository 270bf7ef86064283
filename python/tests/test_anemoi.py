"""The anemoi-inference output plugin of the tgm wheel (tgm._anemoi, README
"anemoi-inference"), driven through anemoi-inference's own output API:
its registry (the ``anemoi.inference.outputs`` entry point), a
checkpoint built from dataset metadata, the output life cycle a runner
follows. anemoi-inference needs earthkit-data < 1 (the earthkit plugin
1.x) and torch, so these run in the environment
python/compat/run_plugin_suites.sh makes, and skip elsewhere; the
entry point itself is checked everywhere."""

import datetime
import importlib
import importlib.metadata
import inspect
import pathlib
import re

import numpy as np
import pytest

import tgm
from test_remote import s3, s3s_fs  # noqa: F401 (the server fixture: skips without s3s-fs)
from test_remote_write import options

ROOT = pathlib.Path(__file__).resolve().parents[2]
N_GRID = 12
#: name -> (MARS keys of the dataset's variable, is it on pressure levels)
VARIABLES = {
    "2t": {"param": "2t", "levtype": "sfc"},
    "t850": {"param": "t", "levtype": "pl", "levelist": 850},
    "t500": {"param": "t", "levtype": "pl", "levelist": 500},
}


def test_entry_point_is_registered():
    points = importlib.metadata.entry_points(group="anemoi.inference.outputs")
    assert {p.name: p.value for p in points if p.dist.name == "tgm"} == {"tgm": "tgm._anemoi:TgmOutput"}


def book_configuration():
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install pyyaml)")
    text = (ROOT / "docs/src/guide/earthkit.md").read_text()
    section = text[text.index("## anemoi-inference"):]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def test_book_configuration_is_the_outputs_options():
    # Read as the output reads its options, without anemoi-inference.
    from tgm._anemoi_options import output_options

    options, anemoi_options = output_options(book_configuration()["output"])
    assert options.path == "forecast.tgm"
    assert (options.compression, options.stack_pressure_levels, options.encoding) == ("zstd", True, "none")
    assert anemoi_options == {}


@pytest.mark.parametrize("section, error", [
    ({"tgm": {"path": "f.tgm", "compresion": "zstd"}}, "unknown option.*compresion"),
    ({"tgm": {"path": "f.tgm", "encoding": "simple_packing"}}, "bits must be set"),
    ({"tgm": {"path": "f.tgm", "encoding": "grib"}}, "encoding 'grib'"),
    ({"tgm": {"path": "f.tgm", "overwrite": "yes"}}, "overwrite must be true or false"),
    ({"tgm": {"compression": "zstd"}}, "path is not set"),
    ({"netcdf": {"path": "f.nc"}}, "not the tgm output"),
])
def test_output_options_are_checked(section, error):
    from tgm._anemoi_options import output_options

    with pytest.raises((ValueError, TypeError), match=error):
        output_options(section)


def test_output_options_of_a_path_and_anemois_own():
    from tgm._anemoi_options import output_options

    options, anemoi_options = output_options({"tgm": {"path": "s3://b/f.tgm", "output_frequency": 6,
                                                      "dtype": "float64"}})
    assert (options.path, options.dtype, anemoi_options) == ("s3://b/f.tgm", np.dtype("float64"),
                                                             {"output_frequency": 6})
    assert output_options({"tgm": "f.tgm"})[0].path == "f.tgm"


try:
    from anemoi.inference import outputs as anemoi
    from anemoi.inference.checkpoint import Checkpoint
    from anemoi.inference.context import Context
    from anemoi.inference.metadata import Metadata
    from anemoi.inference.output import Output
except ImportError:
    Context = object
    Output = None

needs_anemoi = pytest.mark.skipif(
    Output is None, reason="anemoi-inference is not installed (python/compat/run_plugin_suites.sh installs it)")

WITH_METADATA = Output is not None and "metadata" in inspect.signature(Output.__init__).parameters


def dataset_metadata():
    return Metadata({"dataset": {
        "variables": list(VARIABLES),
        "variables_metadata": {name: {"mars": mars} for name, mars in VARIABLES.items()},
    }})


class ForecastContext(Context):
    """The context a runner gives its outputs: the checkpoint, the
    forecast's reference date, no variables of its own."""

    reference_date = datetime.datetime(2024, 1, 1)
    typed_variables: dict = {}
    write_initial_state = True

    def __init__(self):
        self._checkpoint = Checkpoint(dataset_metadata())

    @property
    def checkpoint(self):
        return self._checkpoint


def create(config):
    context = ForecastContext()
    if WITH_METADATA:
        return anemoi.create_output(context, config, context.checkpoint._metadata)
    return anemoi.create_output(context, config)


def state(hours, seed):
    rng = np.random.default_rng(seed)
    return {
        "date": datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=hours),
        "step": datetime.timedelta(hours=hours),
        "latitudes": np.linspace(90, -90, N_GRID),
        "longitudes": np.linspace(0, 330, N_GRID),
        "fields": {name: rng.random(N_GRID).astype(np.float32) for name in VARIABLES},
    }


def run_forecast(output, steps=(0, 6, 12)):
    """A runner's calls: open, the initial state, each later step, close."""
    states = [state(h, seed) for seed, h in enumerate(steps)]
    output.open(states[0])
    output.write_initial_state(states[0])
    for s in states[1:]:
        output.write_state(s)
    output.close()
    return states


@needs_anemoi
def test_forecast_written_through_the_registry(tmp_path):
    path = tmp_path / "out" / "forecast.tgm"
    output = create({"tgm": str(path)})
    assert isinstance(output, importlib.import_module("tgm._anemoi").TgmOutput)
    states = run_forecast(output)
    f = tgm.TensogramFile.open(str(path))
    assert len(f) == 3
    for s, (meta, objects) in zip(states, f):
        hours = int(s["step"].total_seconds() // 3600)
        assert [b["name"] for b in meta.base] == ["grid_latitude", "grid_longitude", *VARIABLES]
        assert [b["dim_names"] for b in meta.base] == [["latitude"], ["longitude"]] + [["values"]] * 3
        assert meta.extra["dim_names"] == {str(N_GRID): "values"}
        np.testing.assert_array_equal(objects[0][1], s["latitudes"])
        np.testing.assert_array_equal(objects[1][1], s["longitudes"])
        for (desc, arr), entry, name in zip(objects[2:], meta.base[2:], VARIABLES):
            assert entry["anemoi"] == {"variable": name}
            assert entry["mars"]["date"] == "20240101" and entry["mars"]["time"] == "0000"
            assert entry["mars"]["step"] == hours
            assert entry["mars"]["param"] == VARIABLES[name]["param"]
            assert desc.dtype == "float32" and desc.compression == "zstd"
            np.testing.assert_array_equal(arr, s["fields"][name])


@needs_anemoi
def test_pressure_levels_stacked(tmp_path):
    path = tmp_path / "stacked.tgm"
    output = create({"tgm": {"path": str(path), "stack_pressure_levels": True}})
    states = run_forecast(output, steps=(0, 6))
    meta, objects = tgm.TensogramFile.open(str(path))[1]
    assert [b["name"] for b in meta.base] == ["grid_latitude", "grid_longitude", "2t", "t"]
    t = meta.base[3]
    assert t["mars"]["levelist"] == [500, 850] and "level" not in t["mars"]
    assert t["dim_names"] == ["values", "level"]
    assert meta.extra["dim_names"] == {str(N_GRID): "values", "2": "level"}
    np.testing.assert_array_equal(objects[3][1], np.column_stack(
        [states[1]["fields"]["t500"], states[1]["fields"]["t850"]]))


@needs_anemoi
def test_variables_and_output_frequency(tmp_path):
    path = tmp_path / "selected.tgm"
    output = create({"tgm": {"path": str(path), "variables": ["2t"], "output_frequency": 12}})
    run_forecast(output, steps=(0, 6, 12))
    f = tgm.TensogramFile.open(str(path))
    assert [m.base[2]["mars"]["step"] for m, _ in f] == [0, 12]
    assert all(len(m.base) == 3 for m, _ in f)


@needs_anemoi
def test_simple_packing_needs_bits(tmp_path):
    with pytest.raises(ValueError, match=r"packed\.tgm: bits must be set"):
        create({"tgm": {"path": str(tmp_path / "packed.tgm"), "encoding": "simple_packing"}})


@needs_anemoi
def test_nothing_appears_before_close(tmp_path):
    path = tmp_path / "partial.tgm"
    output = create({"tgm": str(path)})
    s = state(0, 0)
    output.open(s)
    output.write_step(s)
    assert not path.exists()
    output.close()
    assert len(tgm.TensogramFile.open(str(path))) == 1


@needs_anemoi
def test_forecast_written_to_a_bucket(s3, tmp_path):
    """An s3:// path goes through tgm's writer: the object appears when the
    output is closed, holding what a local path gets."""
    endpoint, bucket = s3
    output = create({"tgm": {"path": "s3://tgm-test/run/forecast.tgm", "storage_options": options(endpoint)}})
    local = create({"tgm": str(tmp_path / "forecast.tgm")})
    states = [state(h, seed) for seed, h in enumerate((0, 6))]
    for out in (output, local):
        out.open(states[0])
        for s in states:
            out.write_step(s)
    assert not (bucket / "run" / "forecast.tgm").exists()
    for out in (output, local):
        out.close()
    remote = tgm.TensogramFile.open(bucket / "run" / "forecast.tgm")
    ours = tgm.TensogramFile.open(tmp_path / "forecast.tgm")
    assert len(remote) == len(ours) == 2
    for (m1, o1), (m2, o2) in zip(remote, ours):
        assert m1.base == m2.base and m1.extra == m2.extra
        for (_, a1), (_, a2) in zip(o1, o2, strict=True):
            np.testing.assert_array_equal(a1, a2)


@needs_anemoi
def test_same_messages_as_the_reference_plugin(tmp_path):
    """Both plugins write the same steps: the metadata and arrays tgm reads
    are equal, and the reference wheel reads tgm's file as its own (plus
    the catalogue message that ends tgm's archives)."""
    pytest.importorskip("tensogram_anemoi", reason="the reference's tensogram-anemoi is not installed")
    if WITH_METADATA:
        pytest.skip("the reference's tensogram-anemoi 0.24.0 takes anemoi-inference < 0.11 only")
    tensogram = pytest.importorskip("tensogram", reason="the reference wheel is not installed")
    for options in ({}, {"stack_pressure_levels": True, "dtype": "float64"}):
        paths = {}
        for name in ("tgm", "tensogram"):
            paths[name] = tmp_path / f"{name}-{len(options)}.tgm"
            run_forecast(create({name: {"path": str(paths[name]), **options}}))
        ours, theirs = (list(tgm.TensogramFile.open(str(paths[n]))) for n in ("tgm", "tensogram"))
        assert len(ours) == len(theirs) == 3
        for (m1, o1), (m2, o2) in zip(ours, theirs):
            assert m1.base == m2.base and m1.extra == m2.extra
            for (d1, a1), (d2, a2) in zip(o1, o2, strict=True):
                assert d1.dtype == d2.dtype and d1.shape == d2.shape
                np.testing.assert_array_equal(a1, a2)
        read_by_reference = tensogram.TensogramFile.open(str(paths["tgm"]))
        assert len(read_by_reference) == 4
        for i, (m1, o1) in enumerate(ours):
            m2, o2 = read_by_reference[i]
            assert m2.base == m1.base
            for (_, a1), (_, a2) in zip(o1, o2, strict=True):
                np.testing.assert_array_equal(a1, a2)
        assert len(read_by_reference[3][1]) == 0


@needs_anemoi
def test_book_configuration(tmp_path, monkeypatch):
    config = book_configuration()
    monkeypatch.chdir(tmp_path)
    states = run_forecast(create(config["output"]))
    path = pathlib.Path(config["output"]["tgm"]["path"])
    f = tgm.TensogramFile.open(str(path))
    assert len(f) == len(states)
    assert [b["name"] for b in f[0].metadata.base] == ["grid_latitude", "grid_longitude", "2t", "t"]
