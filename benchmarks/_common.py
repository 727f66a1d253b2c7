"""What the benchmark scripts share: the median time of one call.

The scripts run as ``python benchmarks/<name>.py``, which puts this folder first on the import path, so they
import it as ``from _common import timed``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeats: int, warmup: int = 2, min_seconds: float = 1.0) -> float:
    """Median seconds per call after warm-up, over at least ``repeats`` calls and ``min_seconds`` of calls.

    Example:
        >>> timed(lambda: None, repeats=3, min_seconds=0.0) < 0.01
        True
    """
    for _ in range(warmup):
        fn()
    runs: list[float] = []
    start = time.perf_counter()
    while len(runs) < repeats or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)
