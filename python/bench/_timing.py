"""Timing helper shared by the benchmark scripts."""

import time


def best(fn, repeat):
    """Best-of-``repeat`` wall time of ``fn()`` in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
