"""A warning when a descriptor carries keys that look like application
metadata (``spec/format.md`` §6: a descriptor describes the tensor and its
pipeline; what the tensor *is* belongs in ``metadata["base"][i]``).

The keys are kept, as the reference keeps them; the warning only points the
caller at the right place, once per descriptor, from the caller's own line.
"""

import os
import sys
import warnings

#: Keys that describe what a tensor is rather than how it is stored.
METADATA_LIKE_KEYS = frozenset(
    {
        "name",
        "param",
        "shortName",
        "long_name",
        "description",
        "units",
        "dim_names",
        "mars",
        "cf",
        "product",
        "instrument",
    }
)

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_stacklevel():
    """The ``stacklevel`` of the first frame outside the tgm package."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(
        os.path.abspath(frame.f_code.co_filename)
    ) == _PACKAGE_DIR:
        frame = frame.f_back
        level += 1
    return level


def warn_metadata_like_keys(desc):
    """Warns (``UserWarning``) once if dict ``desc`` holds metadata-like keys."""
    found = sorted(k for k in desc if k in METADATA_LIKE_KEYS)
    if not found:
        return
    names = ", ".join(f"'{k}'" for k in found)
    warnings.warn(
        f"descriptor keys {names} look like application metadata; they are kept "
        "in the descriptor, but belong in meta['base'][i] for the object they "
        "describe",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )
