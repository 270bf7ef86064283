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


def best_pair(fa, fb, repeat):
    """Best-of-``repeat`` wall times of ``fa()`` and ``fb()``, timed in
    turn so that both see the same load on a shared machine."""
    ta, tb = [], []
    for _ in range(repeat):
        for fn, times in ((fa, ta), (fb, tb)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return min(ta), min(tb)
