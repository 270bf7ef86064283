"""The anemoi-inference output ``tgm``, registered through the entry point
group ``anemoi.inference.outputs`` of the tgm wheel: each forecast step is
encoded as one message and written at once, so a run never holds more
than one step.

Configuration (docs/src/guide/earthkit.md)::

    output:
      tgm:
        path: forecast.tgm        # or s3://bucket/forecast.tgm, ...

A step's message holds the grid's latitudes and longitudes (float64,
named ``grid_latitude`` and ``grid_longitude``), then one object per field
(or, with ``stack_pressure_levels``, one ``(values, level)`` object per
pressure-level parameter, its levels ascending). Each object's base entry
carries ``anemoi.variable``, ``dim_names`` and the field's MARS keys
(``date``, ``time`` and ``step`` of the step, then the variable's GRIB
keys); ``_extra_.dim_names`` maps axis sizes to names. These are the
metadata the reference's ``tensogram-anemoi`` plugin writes, so the files
of either read the same (python/COMPAT.md "The anemoi-inference output").

Local paths and the URLs tgm writes (``s3://``, ``gs://``, ``az://``,
``http(s)://``; ``storage_options`` are the store's keys,
``spec/remote.md`` §1) go through tgm's writer (``spec/remote.md`` §7):
the archive ends with its catalogue (``spec/files.md`` §9.4) and appears
whole when the output is closed, or not at all. Other URLs
(``memory://``, ``file://``, any fsspec protocol) are written through
fsspec with ``storage_options`` as fsspec's, message by message.

anemoi-inference is imported by this module, which ``import tgm`` never
imports: anemoi-inference loads it through the entry point. Both of its
output interfaces are served: ``Output(context, ...)`` (up to 0.10, the
reference plugin's range) and ``Output(context, metadata, ...)`` (0.11
on).
"""

import inspect
import logging
import os
from datetime import timedelta
from typing import Any, BinaryIO

import numpy as np

from anemoi.inference.decorators import main_argument
from anemoi.inference.output import Output
from anemoi.inference.state import reduce_state

from . import _api, _remote, _sink
from ._anemoi_options import TgmOutputOptions

__all__ = ["TgmOutput"]

LOG = logging.getLogger(__name__)

#: Base-entry names of the coordinate objects: not latitude/longitude, so
#: that xarray readers keep the grid on the fields' ``values`` axis.
COORDINATE_NAMES = {"latitude": "grid_latitude", "longitude": "grid_longitude"}

State = dict[str, Any]
Entry = dict[str, Any]
Descriptor = dict[str, Any]


class _FsspecDestination:
    """A URL tgm does not write (``memory://``, ``file://``, ...), opened
    through fsspec; messages are written as they come."""

    def __init__(self, url: str, storage_options: dict[str, Any]) -> None:
        try:
            import fsspec
        except ImportError as e:
            raise ImportError(
                f"{url}: tgm writes local paths and {', '.join(_remote.SCHEMES)} URLs; "
                "other URLs need fsspec (pip install fsspec)"
            ) from e
        self._handle: BinaryIO = fsspec.open(url, "wb", **storage_options).open()

    def write(self, data: bytes) -> None:
        self._handle.write(data)

    def finish(self) -> None:
        self._handle.close()


def _open_destination(
    path: str, storage_options: dict[str, Any], overwrite: bool
) -> _sink.Output | _FsspecDestination:
    """tgm's writer for a local path or a URL tgm writes, else fsspec."""
    if "://" in path and not _remote.is_url(path):
        return _FsspecDestination(path, storage_options)
    if not _remote.is_url(path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return _sink.Output(path, storage_options or None, overwrite=overwrite)


def _mars_of_step(state: State) -> dict[str, Any]:
    """``date``, ``time`` (of the forecast's base time) and ``step`` (hours:
    an int when whole)."""
    step: timedelta = state["step"]
    seconds = step.total_seconds()
    hours: int | float = int(seconds // 3600) if seconds % 3600 == 0 else seconds / 3600
    base = state["date"] - step
    return {"date": base.strftime("%Y%m%d"), "time": base.strftime("%H%M"), "step": hours}


class _TgmWriter(Output):
    """The writing of :class:`TgmOutput`, whichever anemoi-inference
    interface constructs it."""

    def __init__(
        self,
        output_args: tuple[Any, ...],
        path: str | os.PathLike[str],
        *,
        variables: Any = None,
        post_processors: list[Any] | None = None,
        output_frequency: int | None = None,
        write_initial_state: bool | None = None,
        **options: Any,
    ) -> None:
        """``options`` are :meth:`TgmOutputOptions.of`'s (README
        "anemoi-inference"); the others anemoi-inference's own."""
        super().__init__(
            *output_args,
            variables=variables,
            post_processors=post_processors,
            output_frequency=output_frequency,
            write_initial_state=write_initial_state,
        )
        checked = TgmOutputOptions.of(path, **options)
        self.path = checked.path
        self.encoding = checked.encoding
        self.bits = checked.bits
        self.compression = checked.compression
        self.dtype = checked.dtype
        self.storage_options = checked.storage_options
        self.stack_pressure_levels = checked.stack_pressure_levels
        self.overwrite = checked.overwrite
        self._destination: _sink.Output | _FsspecDestination | None = None

    def __repr__(self) -> str:
        return f"TgmOutput({self.path})"

    # -- lifecycle ------------------------------------------------------
    def open(self, state: State) -> None:
        """Open the destination (once): a local path's directory is made."""
        if self._destination is None:
            self._destination = _open_destination(self.path, self.storage_options, self.overwrite)
            LOG.info("tgm output: writing to %s", self.path)

    def write_initial_state(self, state: State) -> None:
        """The initial state, its multi-step fields reduced to their last step."""
        super().write_initial_state(reduce_state(state))

    def write_step(self, state: State) -> None:
        """Encode one step as a message and write it."""
        if self._destination is None:
            raise RuntimeError(f"{self!r}: write_step called before open() or after close()")
        self._destination.write(_api.encode(*self.message(state)))

    def close(self) -> None:
        """Finish the archive (once): a tgm-written archive appears now."""
        destination, self._destination = self._destination, None
        if destination is not None:
            destination.finish()

    # -- the message of a step -------------------------------------------
    def message(self, state: State) -> tuple[dict[str, Any], list[tuple[Descriptor, np.ndarray]]]:
        """The global metadata and ``(descriptor, array)`` pairs of a step."""
        base: list[Entry] = []
        objects: list[tuple[Descriptor, np.ndarray]] = []
        for variable, key in (("latitude", "latitudes"), ("longitude", "longitudes")):
            arr = np.asarray(state[key], dtype=np.float64)
            base.append({"name": COORDINATE_NAMES[variable], "anemoi": {"variable": variable},
                         "dim_names": [variable]})
            objects.append(({"type": "ntensor", "shape": list(arr.shape), "dtype": "float64"}, arr))
        step_mars = _mars_of_step(state)
        flat, levels = self._fields(state)
        for name, grib, values in flat:
            base.append(self._entry(name, {**step_mars, **grib}, ["values"]))
            objects.append(self._object(self._array(values)))
        for param in sorted(levels):
            group = sorted(levels[param], key=lambda item: item[0])
            mars = {**step_mars, **{k: v for k, v in group[0][1].items() if k != "level"},
                    "levelist": [level for level, _, _ in group]}
            base.append(self._entry(param, mars, ["values", "level"]))
            objects.append(self._object(np.column_stack([self._array(v) for _, _, v in group])))
        sizes = {str(len(state["latitudes"])): "values"}
        for _, arr in objects:
            if arr.ndim == 2:
                sizes.setdefault(str(arr.shape[1]), "level")
        return {"base": base, "_extra_": {"dim_names": sizes}}, objects

    def _fields(self, state: State) -> tuple[
        list[tuple[str, dict[str, Any], Any]], dict[str, list[tuple[Any, dict[str, Any], Any]]]
    ]:
        """The step's fields written one object each, and (with
        ``stack_pressure_levels``) the pressure-level ones by parameter."""
        flat: list[tuple[str, dict[str, Any], Any]] = []
        levels: dict[str, list[tuple[Any, dict[str, Any], Any]]] = {}
        for name, values in state["fields"].items():
            if self.skip_variable(name):
                continue
            variable = self.typed_variables.get(name)
            if variable is None:
                LOG.warning("tgm output: %r has no typed variable; its MARS keys are the step's", name)
            grib = dict(getattr(variable, "grib_keys", None) or {})
            if self.stack_pressure_levels and getattr(variable, "is_pressure_level", False):
                levels.setdefault(variable.param, []).append((variable.level, grib, values))
            else:
                flat.append((name, grib, values))
        if self.stack_pressure_levels and not levels:
            LOG.warning("tgm output: stack_pressure_levels is set but no field is on pressure levels")
        return flat, levels

    def _entry(self, name: str, mars: dict[str, Any], dim_names: list[str]) -> Entry:
        return {"name": name, "anemoi": {"variable": name}, "dim_names": dim_names, "mars": mars}

    def _array(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=self.dtype)
        # simple_packing takes float64 input.
        return arr.astype(np.float64) if self.encoding == "simple_packing" else arr

    def _object(self, arr: np.ndarray) -> tuple[Descriptor, np.ndarray]:
        descriptor: Descriptor = {"type": "ntensor", "shape": list(arr.shape), "dtype": arr.dtype.name,
                                  "encoding": self.encoding, "compression": self.compression}
        if self.encoding == "simple_packing":
            descriptor["sp_bits_per_value"] = self.bits
        return descriptor, arr


# anemoi-inference 0.11 added the dataset metadata after the context; its
# ``main_argument`` finds the path's position from this signature.
if "metadata" in inspect.signature(Output.__init__).parameters:

    @main_argument("path")
    class TgmOutput(_TgmWriter):
        """Writes each forecast step as one tgm message (module docstring)."""

        def __init__(self, context: Any, metadata: Any, path: str | os.PathLike[str], **options: Any) -> None:
            super().__init__((context, metadata), path, **options)

else:

    @main_argument("path")
    class TgmOutput(_TgmWriter):  # type: ignore[no-redef]
        """Writes each forecast step as one tgm message (module docstring)."""

        def __init__(self, context: Any, path: str | os.PathLike[str], **options: Any) -> None:
            super().__init__((context,), path, **options)
