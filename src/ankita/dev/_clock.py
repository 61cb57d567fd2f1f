"""A fixed piece of CPU work timed beside a measurement: absolute times differ up to 3x between
machines and moments, so a figure is reported beside this reference from the same run."""

from __future__ import annotations

import time

LOOPS = 1_000_000


def reference_ms(repeats: int = 3) -> float:
    """Milliseconds of one pure-Python loop of LOOPS multiply-adds, the best of `repeats`."""
    best = float("inf")
    for _ in range(repeats):
        start, total = time.perf_counter(), 0
        for i in range(LOOPS):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 1)
