"""``tgm.doctor()``: the build's features and a codec self-test, in the
shape of the reference's report."""

import json

from . import _native


def doctor():
    """What this build holds and whether its codecs round-trip → ``{"build":
    {version, wire_version, target, profile}, "features": [{name, kind,
    state[, backend, linkage]}], "self_test": [{label, outcome[, reason]}]}``.
    A failed self-test row is in the report, not raised."""
    return json.loads(_native.doctor())
