"""Timing shared by the benchmarks: ours and the peers called in turn within each repeat, medians reported."""
from __future__ import annotations

import statistics
import time
from typing import Callable

import fgraph as fg


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


def sequence_comparison(y, steps: int, repeats: int, build_model: Callable, compile_options: dict, calls: dict,
                        differences: Callable, agrees: Callable) -> dict:
    """Time a chain benchmark: ours from the data, ours on a compiled plan, the peer and a numpy loop.

    ``calls`` maps ``"ours"`` (build to read), ``"peer"`` and ``"numpy_loop"``
    to functions of the data ``y`` and ``"ours_run"`` to a function of a
    compiled plan. Each is warmed up on the first 50 steps and at full size,
    then timed alternately; ``differences(result, reference)`` and
    ``agrees(difference)`` compare each of ours and the numpy loop with the
    peer. Returns the fields the chain benchmarks share (times, ratios,
    ``agree``, stages, cost per step, ``quality``).
    """
    for name in ("ours", "peer", "numpy_loop"):
        calls[name](y[:50])
    start = time.perf_counter()
    model = build_model(y)
    built = time.perf_counter()
    plan = fg.compile(model, **compile_options)
    compiled = time.perf_counter()
    timed = {"ours": lambda: calls["ours"](y), "ours_run": lambda: calls["ours_run"](plan),
             "peer": lambda: calls["peer"](y), "numpy_loop": lambda: calls["numpy_loop"](y)}
    for call in timed.values():  # warm-up at full size
        call()
    medians, results = alternating_medians(timed, repeats)
    compared = ("ours", "ours_run", "numpy_loop")
    quality = {f"{name}_vs_peer": differences(results[name], results["peer"]) for name in compared}
    quality.update(log_evidence_ours=results["ours"]["log_evidence"], log_evidence_peer=results["peer"]["log_evidence"])
    return {
        "ours_s": round(medians["ours"], 6),
        "peer_s": round(medians["peer"], 6),
        "ratio": round(medians["ours"] / medians["peer"], 3),
        "ours_run_s": round(medians["ours_run"], 6),
        "ratio_run_only": round(medians["ours_run"] / medians["peer"], 3),
        "numpy_loop_s": round(medians["numpy_loop"], 6),
        "ratio_numpy_loop": round(medians["ours"] / medians["numpy_loop"], 3),
        "agree": all(agrees(quality[f"{name}_vs_peer"]) for name in compared),
        "stages_s": {"build": round(built - start, 5), "compile": round(compiled - built, 5)},
        "us_per_step": round(1e6 * medians["ours"] / steps, 3),
        "us_per_step_run_only": round(1e6 * medians["ours_run"] / steps, 3),
        "peer_us_per_step": round(1e6 * medians["peer"] / steps, 3),
        "quality": quality,
    }
