"""An unrolled scalar Gaussian chain of T ``Normal`` nodes built with the DSL, by BP, against a Kalman smoother.

Model (a Gaussian random walk observed in noise, one node per step)::

    x_1 ~ N(0, 1),   x_t ~ N(x_{t-1}, 0.5)  (t = 2..T),   y_t ~ N(x_t, 1) observed  (t = 1..T)

built with a Python ``for`` loop of ``Normal`` statements (2T factor nodes,
T latent variables, 3T - 1 messages per sweep), with y drawn from the model
(numpy ``default_rng``, seed 20240601).

Ours, as a user pays it: build the model with the DSL, ``fg.compile``,
``fg.run`` (one sum-product sweep, exact on this tree), and read the
posterior mean and variance of every x_t and ``result.log_evidence``.
Each stage is also timed on its own; ``us_per_message`` is the run alone per
message of the schedule, ``us_per_message_total`` the whole per message;
``ours_cpu_s`` is ``ours_s`` in CPU time (``time.process_time``), which other
jobs on a shared machine disturb less than the wall clock.

Peer: the strongest straightforward implementation of the same computation,
a Kalman filter and a Rauch–Tung–Striebel smoother over Python floats (lists,
no numpy in the loop), with the log evidence by the prediction-error
decomposition. Both return the same numbers; the benchmark checks that they
agree (means and variances to 1e-9, log evidence to 1e-9 relative) and exits
non-zero when they do not.

Run from the repository root::

    python -m benchmarks.unrolled              # T = 10**3, 3·10**3, 10**4
    python -m benchmarks.unrolled --quick      # T = 10**2, 3·10**2, 10**3 (seconds)
    python -m benchmarks.unrolled --profile [--quick]   # cProfile of ours at the largest T
    python -m benchmarks.unrolled --large      # T = 10**5, one repeat (about a minute)

Timing: ``time.perf_counter``; ours and the peer alternate within each
repeat (full: 5 repeats, quick: 3), medians; one untimed warm-up of each on a
small chain first, and an untimed ``gc.collect()`` before every timed call
(the previous call's model is a reference cycle the collector would
otherwise free during the next build). One JSON line per T; the last line is one JSON object for
the largest T with the per-message costs of every T under ``per_T``.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time

import numpy as np

import fgraph as fg
from benchmarks.profiling import profile
from fgraph.nodes import Normal

SEED = 20240601
INITIAL_MEAN, INITIAL_VAR = 0.0, 1.0
STEP_VAR = 0.5  # random-walk variance q
NOISE_VAR = 1.0  # observation variance r
TOLERANCE = 1e-9


def simulate(length: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    steps = rng.normal(0.0, math.sqrt(STEP_VAR), size=length)
    steps[0] = rng.normal(INITIAL_MEAN, math.sqrt(INITIAL_VAR))
    states = np.cumsum(steps)  # x_1, then x_t = x_{t-1} + step_t
    return states + rng.normal(0.0, math.sqrt(NOISE_VAR), size=length)


def build(observations) -> fg.Model:
    """The unrolled chain, one ``Normal`` statement per state and per observation."""
    with fg.Model() as model:
        state = Normal("x1", mean=INITIAL_MEAN, var=INITIAL_VAR)
        Normal("y1", mean=state, var=NOISE_VAR, observed=observations[0])
        for t in range(2, len(observations) + 1):
            state = Normal(f"x{t}", mean=state, var=STEP_VAR)
            Normal(f"y{t}", mean=state, var=NOISE_VAR, observed=observations[t - 1])
    return model


def ours(observations) -> dict:
    """Build, compile, run, read every marginal and the log evidence; the time of each stage."""
    length = len(observations)
    cpu_start = time.process_time()
    start = time.perf_counter()
    model = build(observations)
    built = time.perf_counter()
    plan = fg.compile(model)
    compiled = time.perf_counter()
    result = fg.run(plan)
    ran = time.perf_counter()
    mean, var = [0.0] * length, [0.0] * length
    for t in range(length):
        q = result.marginal(f"x{t + 1}")
        mean[t], var[t] = float(q.mean), float(q.var)
    log_evidence = result.log_evidence
    read = time.perf_counter()
    cpu = time.process_time() - cpu_start
    return {
        "mean": mean, "var": var, "log_evidence": log_evidence, "messages": len(plan.schedule), "cpu": cpu,
        "stages": {"build": built - start, "compile": compiled - built, "run": ran - compiled, "read": read - ran},
    }


def kalman_smoother(observations) -> dict:
    """Kalman filter + RTS smoother for the random walk, Python floats; log p(y) by prediction errors."""
    ys = [float(y) for y in observations]
    length = len(ys)
    filtered_mean, filtered_var = [0.0] * length, [0.0] * length
    predicted_mean, predicted_var = INITIAL_MEAN, INITIAL_VAR
    log_evidence = 0.0
    log_2pi = math.log(2.0 * math.pi)
    for t in range(length):
        innovation_var = predicted_var + NOISE_VAR
        innovation = ys[t] - predicted_mean
        log_evidence -= 0.5 * (log_2pi + math.log(innovation_var) + innovation * innovation / innovation_var)
        gain = predicted_var / innovation_var
        filtered_mean[t] = mean = predicted_mean + gain * innovation
        filtered_var[t] = var = (1.0 - gain) * predicted_var
        predicted_mean, predicted_var = mean, var + STEP_VAR
    mean, var = filtered_mean[:], filtered_var[:]
    for t in range(length - 2, -1, -1):
        next_predicted_var = filtered_var[t] + STEP_VAR
        smoother_gain = filtered_var[t] / next_predicted_var
        mean[t] = filtered_mean[t] + smoother_gain * (mean[t + 1] - filtered_mean[t])
        var[t] = filtered_var[t] + smoother_gain * smoother_gain * (var[t + 1] - next_predicted_var)
    return {"mean": mean, "var": var, "log_evidence": log_evidence}


def differences(mine: dict, peer: dict) -> dict:
    return {
        "max_abs_diff_mean": max(abs(a - b) for a, b in zip(mine["mean"], peer["mean"])),
        "max_abs_diff_var": max(abs(a - b) for a, b in zip(mine["var"], peer["var"])),
        "rel_diff_log_evidence": abs(mine["log_evidence"] - peer["log_evidence"]) / abs(peer["log_evidence"]),
    }


def agrees(quality: dict) -> bool:
    return all(value <= TOLERANCE for value in quality.values())


def run_length(length: int, repeats: int) -> dict:
    observations = simulate(length)
    totals, stages = {"ours": [], "peer": [], "ours_cpu": []}, {"build": [], "compile": [], "run": [], "read": []}
    for _ in range(repeats):
        # the previous repeat's model, plan and result are reference cycles: free them before the clock
        # starts, so that a build is not charged for collecting the last one (as for a user's first model)
        gc.collect()
        start = time.perf_counter()
        mine = ours(observations)
        totals["ours"].append(time.perf_counter() - start)
        totals["ours_cpu"].append(mine["cpu"])
        for stage, seconds in mine["stages"].items():
            stages[stage].append(seconds)
        gc.collect()
        start = time.perf_counter()
        peer = kalman_smoother(observations)
        totals["peer"].append(time.perf_counter() - start)
    ours_s, peer_s = statistics.median(totals["ours"]), statistics.median(totals["peer"])
    stage_s = {stage: statistics.median(values) for stage, values in stages.items()}
    quality = differences(mine, peer)
    messages = mine["messages"]
    return {
        "benchmark": "unrolled",
        "ours_s": round(ours_s, 4),
        "peer": "Kalman filter + RTS smoother on Python floats",
        "peer_s": round(peer_s, 6),
        "ratio": round(ours_s / peer_s, 1),
        "agree": agrees(quality),
        # the same in CPU time (time.process_time): less disturbed by other jobs on a shared machine
        "ours_cpu_s": round(statistics.median(totals["ours_cpu"]), 4),
        "ours_run_s": round(stage_s["run"], 4),
        "ratio_run_only": round(stage_s["run"] / peer_s, 1),
        "stages_s": {stage: round(seconds, 4) for stage, seconds in stage_s.items()},
        "messages": messages,
        "us_per_message": round(1e6 * stage_s["run"] / messages, 2),
        "us_per_message_total": round(1e6 * ours_s / messages, 2),
        "peer_us_per_step": round(1e6 * peer_s / length, 3),
        "quality": quality,
        "params": {
            "T": length, "repeats": repeats,
            "model": {"x1": [INITIAL_MEAN, INITIAL_VAR], "q": STEP_VAR, "r": NOISE_VAR},
            "timing": "ours_s = DSL build + compile + run + read (every mean and variance, log evidence); "
                      "peer_s = filter + smoother + log evidence; us_per_message = run / len(schedule)",
        },
    }


def run(lengths, repeats: int) -> list:
    """One report per chain length (the warm-up first: imports, rule registry)."""
    warm = simulate(20)
    ours(warm)
    kalman_smoother(warm)
    return [run_length(length, repeats) for length in lengths]


def summary(reports: list, quick: bool) -> dict:
    """The largest T's report with the per-message costs of every T (flat in T when the cost is linear)."""
    headline = dict(reports[-1])
    headline["quick"] = quick
    headline["agree"] = all(report["agree"] for report in reports)
    headline["per_T"] = {
        str(report["params"]["T"]): {key: report[key] for key in
                                     ("ours_s", "ours_cpu_s", "peer_s", "ratio", "us_per_message",
                                      "us_per_message_total")}
        for report in reports
    }
    return headline


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10**2, 3·10**2, 10**3 (seconds)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    parser.add_argument("--large", action="store_true",
                        help="T = 10**5 alone, one repeat (about a minute: the issue's target at scale)")
    arguments = parser.parse_args(argv)
    lengths = (100, 300, 1000) if arguments.quick else (100_000,) if arguments.large else (1000, 3000, 10000)
    if arguments.profile:
        observations = simulate(lengths[-1])
        profile(lambda: ours(observations), 3, f"T = {lengths[-1]}", 15)
        return
    reports = run(lengths, repeats=3 if arguments.quick else 1 if arguments.large else 5)
    for report in reports:
        print(json.dumps(report), flush=True)
    headline = summary(reports, arguments.quick)
    print(json.dumps(headline))
    if not headline["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
