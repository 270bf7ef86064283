"""The reference's NaN/Inf mask keywords (``nan_mask_method``,
``pos_inf_mask_method``, ``neg_inf_mask_method``,
``small_mask_threshold_bytes``) checked and passed to the native encoder
(``spec/pipeline.md`` §5)."""

from ._errors import InvalidArgumentError

#: Mask methods the format names; ``blosc2`` is not built into tgm.
MASK_METHODS = ("none", "rle", "roaring", "lz4", "zstd", "blosc2")


def _method(keyword, name):
    if name is None:
        return None
    if name not in MASK_METHODS:
        accepted = ", ".join(f'"{m}"' for m in MASK_METHODS)
        raise InvalidArgumentError(
            f"unknown mask method {name!r} for {keyword} (accepted: {accepted})"
        )
    return name


def mask_args(nan, pos_inf, neg_inf, small_mask_threshold_bytes):
    """The native encoder's ``masks`` argument, or None for the defaults."""
    methods = (
        _method("nan_mask_method", nan),
        _method("pos_inf_mask_method", pos_inf),
        _method("neg_inf_mask_method", neg_inf),
    )
    threshold = small_mask_threshold_bytes
    if threshold is not None:
        if isinstance(threshold, bool) or not hasattr(threshold, "__index__"):
            raise InvalidArgumentError("small_mask_threshold_bytes must be an integer")
        threshold = threshold.__index__()
        if threshold < 0:
            raise InvalidArgumentError("small_mask_threshold_bytes must not be negative")
    if methods == (None, None, None) and threshold is None:
        return None
    return (*methods, threshold)
