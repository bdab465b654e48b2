"""Timing shared by the benchmarks: ours and the peers called in turn within each repeat, medians reported."""
from __future__ import annotations

import statistics
import time
from typing import Callable


def alternating_medians(calls: dict[str, Callable[[], object]], repeats: int) -> tuple[dict, dict]:
    """Call each function once per repeat, in turn; return ``(median seconds by name, last result by name)``.

    Alternating within a repeat exposes ours and the peers to the same machine
    state (load, frequency, caches), so their ratio is steadier than that of
    separate loops.
    """
    times = {name: [] for name in calls}
    results = {}
    for _ in range(repeats):
        for name, call in calls.items():
            started = time.perf_counter()
            results[name] = call()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}, results
