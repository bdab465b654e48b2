"""cProfile tables for the benchmarks' ``--profile`` option (ours only)."""
from __future__ import annotations

import cProfile
import os
import pstats
from typing import Callable


def _location(filename: str, line: int, function: str) -> str:
    """A short, readable place: project files relative, library files by package/module."""
    if filename.startswith(os.getcwd()):
        return f"`{os.path.relpath(filename)}:{line}({function})`"
    if filename.startswith("~") or filename.startswith("<"):
        return f"`{function}`"
    return f"`{'/'.join(filename.split(os.sep)[-3:])}:{line}({function})`"


def profile(call: Callable[[], object], calls: int, title: str, top: int) -> None:
    """Run ``call`` once (warm-up), then ``calls`` times under cProfile; print the top functions.

    Two Markdown tables: all functions by own time, and the project's functions
    (outside benchmarks/) by cumulative time; percentages of the profiled time.
    """
    call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    print(f"profile of ours, {title}, {calls} calls, {total:.3f} s under cProfile")
    project = [item for item in stats.stats.items()
               if item[0][0].startswith(os.getcwd()) and "benchmarks" not in item[0][0]]
    tables = {
        "by own time": sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:top],
        "project functions by cumulative time": sorted(project, key=lambda item: item[1][3], reverse=True)[:top],
    }
    for heading, rows in tables.items():
        print(f"\ntop {top} {heading}")
        print("| own time % | cumulative % | calls | function |")
        print("|---:|---:|---:|---|")
        for key, (_, calls_made, own, cumulative, _) in rows:
            print(f"| {100 * own / total:.1f} | {100 * cumulative / total:.1f} | {calls_made} | {_location(*key)} |")
