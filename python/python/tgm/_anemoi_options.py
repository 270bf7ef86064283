"""The options of the anemoi-inference output ``tgm`` (README
"anemoi-inference"), read and checked without anemoi-inference (and
torch): :class:`TgmOutputOptions` is what :class:`tgm._anemoi.TgmOutput`
is configured with, :func:`output_options` reads the ``output:`` section
of a run's configuration."""

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ANEMOI_OPTIONS", "ENCODINGS", "TgmOutputOptions", "output_options"]

#: The encodings a step's fields may use.
ENCODINGS = ("none", "simple_packing")

#: Options every anemoi-inference output takes; passed on to anemoi.
ANEMOI_OPTIONS = ("variables", "post_processors", "output_frequency", "write_initial_state")


@dataclass(frozen=True)
class TgmOutputOptions:
    """The output's own options: where to write and how to encode."""

    path: str
    encoding: str = "none"
    bits: int | None = None
    compression: str = "zstd"
    dtype: np.dtype = field(default_factory=lambda: np.dtype("float32"))
    storage_options: dict[str, Any] = field(default_factory=dict)
    stack_pressure_levels: bool = False
    overwrite: bool = True

    @classmethod
    def of(
        cls,
        path: str | os.PathLike[str],
        *,
        encoding: str = "none",
        bits: int | None = None,
        compression: str = "zstd",
        dtype: Any = "float32",
        storage_options: dict[str, Any] | None = None,
        stack_pressure_levels: bool = False,
        overwrite: bool = True,
    ) -> "TgmOutputOptions":
        """Checked options; a ValueError naming the path and the option
        otherwise."""
        where = f"tgm output {os.fspath(path)}"
        if encoding not in ENCODINGS:
            raise ValueError(f"{where}: encoding {encoding!r} is not one of {ENCODINGS}")
        if encoding == "simple_packing" and bits is None:
            raise ValueError(f"{where}: bits must be set when encoding='simple_packing'")
        if bits is not None and (isinstance(bits, bool) or not isinstance(bits, int)):
            raise ValueError(f"{where}: bits {bits!r} is not a whole number")
        if not isinstance(compression, str) or not compression:
            raise ValueError(f"{where}: compression {compression!r} is not a compressor's name")
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            raise ValueError(f"{where}: dtype {dtype!r}: {e}") from None
        if storage_options is not None and not isinstance(storage_options, dict):
            raise ValueError(f"{where}: storage_options must be a mapping, not {type(storage_options).__name__}")
        for name, value in (("stack_pressure_levels", stack_pressure_levels), ("overwrite", overwrite)):
            if not isinstance(value, bool):
                raise ValueError(f"{where}: {name} must be true or false, not {value!r}")
        return cls(os.fspath(path), encoding, bits, compression, dt, dict(storage_options or {}),
                   stack_pressure_levels, overwrite)


def output_options(output: Any) -> tuple[TgmOutputOptions, dict[str, Any]]:
    """The options of the output ``tgm`` in a run's ``output:`` section
    (``{"tgm": {"path": ..., ...}}`` or ``{"tgm": path}``), and the
    options passed on to anemoi-inference (:data:`ANEMOI_OPTIONS`). A
    ValueError when the section is not the ``tgm`` output; a TypeError
    naming an option neither takes."""
    if not isinstance(output, dict) or list(output) != ["tgm"]:
        raise ValueError(f"not the tgm output's section: {output!r}")
    config = output["tgm"]
    if not isinstance(config, dict):
        config = {"path": config}
    config = dict(config)
    if "path" not in config:
        raise ValueError("tgm output: path is not set")
    anemoi = {k: config.pop(k) for k in ANEMOI_OPTIONS if k in config}
    known = set(TgmOutputOptions.__dataclass_fields__)
    unknown = sorted(set(config) - known)
    if unknown:
        raise TypeError(f"tgm output {config['path']}: unknown option(s) {', '.join(unknown)}")
    path = config.pop("path")
    return TgmOutputOptions.of(path, **config), anemoi
