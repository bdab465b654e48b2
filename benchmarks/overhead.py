"""The fixed cost of a call: ``fg.infer`` on a two-node model, and ``import fgraph``.

Model (one conjugate update)::

    x ~ N(0.3, 2),   y ~ N(x, 0.5),   y = 1.1 observed

Ours: ``fg.infer(model)`` on a model built once (the plan is compiled on the
first call and remembered, as for any re-run of a model), then reading the
posterior mean and variance of x and ``result.log_evidence``. Also timed:
``fg.run`` on a compiled plan (``ours_run_s``), and the whole first call on a
model built anew each time (``ours_cold_s``: build + compile + run + read).

Peer: the same closed-form conjugate update written in plain Python floats
(posterior precision, mean and ``log N(y | m0, v0 + r)``), the strongest
straightforward implementation of the same computation. The benchmark checks
that both return the same numbers (to 1e-12 relative) and exits non-zero when
they do not.

Import time: ``import fgraph`` in a fresh interpreter, timed inside it with
``time.perf_counter`` (median over runs), next to ``import numpy`` alone, the
floor under it (fgraph needs numpy). First call: a fresh interpreter imports
fgraph and its nodes, builds the model, runs ``fg.infer`` and reads the
posterior (``first_infer_s``: CPU time from the first import to the answer,
``time.process_time``, median over runs), what a script pays once.

Run from the repository root::

    python -m benchmarks.overhead              # full
    python -m benchmarks.overhead --quick      # seconds
    python -m benchmarks.overhead --profile    # cProfile of ours (fg.infer + read)

Timing: ``time.perf_counter`` around a batch of calls (full: 2000, quick:
200) per repeat, ours and the peer alternating (full: 7 repeats, quick: 3),
median per call. The last line printed is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import fgraph as fg
from benchmarks.profiling import profile
from fgraph.nodes import Normal

PRIOR_MEAN, PRIOR_VAR, NOISE_VAR, OBSERVATION = 0.3, 2.0, 0.5, 1.1
TOLERANCE = 1e-12
LOG_2PI = math.log(2.0 * math.pi)


def build() -> fg.Model:
    with fg.Model() as model:
        x = Normal("x", mean=PRIOR_MEAN, var=PRIOR_VAR)
        Normal("y", mean=x, var=NOISE_VAR, observed=OBSERVATION)
    return model


def read(result) -> tuple:
    q = result.marginal("x")
    return float(q.mean), float(q.var), result.log_evidence


def ours(model) -> tuple:
    return read(fg.infer(model))


def ours_run(plan) -> tuple:
    return read(fg.run(plan))


def ours_cold() -> tuple:
    return read(fg.infer(build()))


def peer() -> tuple:
    """The conjugate update on Python floats: posterior of x and log N(y | m0, v0 + r)."""
    precision = 1.0 / PRIOR_VAR + 1.0 / NOISE_VAR
    var = 1.0 / precision
    mean = var * (PRIOR_MEAN / PRIOR_VAR + OBSERVATION / NOISE_VAR)
    total_var = PRIOR_VAR + NOISE_VAR
    residual = OBSERVATION - PRIOR_MEAN
    log_evidence = -0.5 * (LOG_2PI + math.log(total_var) + residual * residual / total_var)
    return mean, var, log_evidence


def per_call(functions: dict, calls: int, repeats: int) -> tuple[dict, dict]:
    """Median seconds per call of each function (batches of ``calls``, alternating), and its last result."""
    times = {name: [] for name in functions}
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            for _ in range(calls):
                results[name] = function()
            times[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(values) for name, values in times.items()}, results


_IMPORT_PROBE = "import time; start = time.perf_counter(); import {module}; print(time.perf_counter() - start)"
_FIRST_INFER_PROBE = (
    "import time; start = time.process_time(); import fgraph as fg; from fgraph.nodes import Normal\n"
    "with fg.Model() as model:\n"
    "    x = Normal('x', mean=0.3, var=2.0)\n"
    "    Normal('y', mean=x, var=0.5, observed=1.1)\n"
    "result = fg.infer(model); q = result.marginal('x'); float(q.mean), float(q.var), result.log_evidence\n"
    "print(time.process_time() - start)"
)


def import_seconds(module: str, runs: int, source: str | None = None) -> float:
    """Median time of ``import module`` in a fresh interpreter (measured inside it), or of the probe
    ``source``, which prints its own time.

    As a user's interpreter does, it reads the modules' cached bytecode: the
    probe runs once untimed with bytecode writing allowed, whatever
    ``PYTHONDONTWRITEBYTECODE`` says in the calling shell.
    """
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    probe = [sys.executable, "-c", source or _IMPORT_PROBE.format(module=module)]
    subprocess.run(probe, capture_output=True, text=True, check=True, env=environment)
    seconds = []
    for _ in range(runs):
        completed = subprocess.run(probe, capture_output=True, text=True, check=True, env=environment)
        seconds.append(float(completed.stdout))
    return statistics.median(seconds)


def agrees(mine: tuple, reference: tuple) -> bool:
    return all(abs(a - b) <= TOLERANCE * max(abs(b), 1.0) for a, b in zip(mine, reference))


def run(quick: bool, calls: int | None = None, import_runs: int | None = None) -> dict:
    calls = calls or (200 if quick else 2000)
    repeats = 3 if quick else 7
    import_runs = import_runs or (3 if quick else 7)
    model = build()
    plan = fg.compile(model)
    functions = {"ours": lambda: ours(model), "peer": peer, "ours_run": lambda: ours_run(plan)}
    for function in list(functions.values()) + [ours_cold]:  # warm-up: rules loaded, plan compiled, constants kept
        function()
    medians, results = per_call(functions, calls, repeats)
    cold_calls = max(calls // 10, 1)  # a model built and compiled per call costs ten times more
    cold, cold_results = per_call({"ours_cold": ours_cold}, cold_calls, repeats)
    medians["ours_cold"], results["ours_cold"] = cold["ours_cold"], cold_results["ours_cold"]
    import_fgraph = import_seconds("fgraph", import_runs)
    import_numpy = import_seconds("numpy", import_runs)
    first_infer = import_seconds("fgraph", import_runs, _FIRST_INFER_PROBE)
    agree = all(agrees(results[name], results["peer"]) for name in ("ours", "ours_run", "ours_cold"))
    return {
        "benchmark": "overhead",
        "ours_s": round(medians["ours"], 7),
        "peer": "closed-form conjugate update on Python floats",
        "peer_s": round(medians["peer"], 8),
        "ratio": round(medians["ours"] / medians["peer"], 1),
        "agree": agree,
        "ours_run_s": round(medians["ours_run"], 7),
        "ratio_run_only": round(medians["ours_run"] / medians["peer"], 1),
        "ours_cold_s": round(medians["ours_cold"], 6),
        "import_fgraph_s": round(import_fgraph, 4),
        "import_numpy_s": round(import_numpy, 4),
        "first_infer_s": round(first_infer, 4),
        "targets": {"infer_us": 10, "infer_met": medians["ours"] <= 10e-6,
                    "first_infer_s": 0.2, "first_infer_met": first_infer <= 0.2},
        "quality": {"ours": results["ours"], "peer": results["peer"]},
        "params": {
            "calls": calls, "repeats": repeats, "import_runs": import_runs,
            "model": {"m0": PRIOR_MEAN, "v0": PRIOR_VAR, "r": NOISE_VAR, "y": OBSERVATION},
            "timing": "ours_s = fg.infer on a built model + read (mean, var, log evidence) per call; "
                      "ours_run_s = fg.run on a compiled plan + read; ours_cold_s = build + infer + read; "
                      "import times in a fresh interpreter; first_infer_s = import + build + infer + read in a "
                      "fresh interpreter, CPU",
        },
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and repeats (seconds)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        model = build()
        profile(lambda: ours(model), 2000, "fg.infer + read on a built model", 20)
        return
    report = run(arguments.quick)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
