"""Smoothing a scalar linear-Gaussian state-space model with the Gauss–Markov chain node, against Kalman + RTS.

Model::

    x_1 ~ N(0, 1),   x_t = 0.9 x_{t−1} + N(0, 0.5),   y_t = x_t + N(0, 1),   t = 1..T,
    T = 10**5 (quick: 10**4)

with y drawn from the model (numpy ``default_rng``, seed 20240601).

Ours, two columns: ``ours_s`` is what a user pays, building the model
(``GaussMarkovChain`` and one observed ``Normal`` over the plate of T steps),
``fg.compile``, one sum-product sweep ``fg.run`` (the chain node's messages
come from associative scans, ``rules/gauss_markov_chain/``) and reading the
posterior means and variances of every x_t and log p(y); ``ours_run_s`` is
the sweep and the reading alone on a compiled plan.

Peer (``ratio`` is against it): a Kalman filter and Rauch–Tung–Striebel
smoother on Python floats and lists, with the log evidence by the
prediction-error decomposition, the straightforward fastest version of the
scalar recursions. Extra column ``numpy_loop_s``: the same recursions as a
Python loop writing into numpy arrays.

Agreement (checked on every run, the exit status is 1 if it fails): posterior
means and variances of ours and of both peers within 1e-9 (absolute) at every
t, log p(y) within 1e-10 relative.

Run from the repository root::

    python -m benchmarks.gauss_markov_chain            # full
    python -m benchmarks.gauss_markov_chain --quick    # under a minute
    python -m benchmarks.gauss_markov_chain --steps 1000000
    python -m benchmarks.gauss_markov_chain --profile [--quick]

Timing: ``time.perf_counter``; ours (both columns) and the peers alternate
within each repeat (full: 11 repeats, quick: 21), medians; one untimed warm-up
of each. The last line printed is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

import fgraph as fg
from benchmarks.profiling import profile
from benchmarks.timing import sequence_comparison
from fgraph.nodes import GaussMarkovChain, Normal

SEED = 20240601
# x_1 ~ N(0, INITIAL_VAR), x_t = GAIN x_{t-1} + N(0, PROCESS_VAR), y_t = x_t + N(0, OBSERVATION_VAR)
INITIAL_VAR = 1.0
GAIN = 0.9
PROCESS_VAR = 0.5
OBSERVATION_VAR = 1.0
MOMENT_TOLERANCE = 1e-9  # max |difference| of posterior means and variances
EVIDENCE_TOLERANCE = 1e-10  # relative difference of log p(y)
LOG_2PI = math.log(2.0 * math.pi)


def simulate(steps: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    states = np.empty(steps)
    states[0] = rng.normal(0.0, math.sqrt(INITIAL_VAR))
    noise = rng.normal(0.0, math.sqrt(PROCESS_VAR), size=steps)
    for t in range(1, steps):
        states[t] = GAIN * states[t - 1] + noise[t]
    return states + rng.normal(0.0, math.sqrt(OBSERVATION_VAR), size=steps)


def build_model(y: np.ndarray) -> fg.Model:
    with fg.Model() as model:
        x = GaussMarkovChain("x", GAIN, PROCESS_VAR, 0.0, INITIAL_VAR, len(y))
        Normal("y", mean=x, var=OBSERVATION_VAR, observed=y)
    return model


def read(result) -> dict:
    marginal = result.marginal("x")
    return {"mean": np.asarray(marginal.mean), "var": np.asarray(marginal.var),
            "log_evidence": float(result.log_evidence)}


def ours(y: np.ndarray) -> dict:
    """What a user pays: build, compile, run, read."""
    return read(fg.run(fg.compile(build_model(y))))


def ours_run(plan) -> dict:
    """The sweep and the reading on a compiled plan."""
    return read(fg.run(plan))


def peer(y: np.ndarray) -> dict:
    """Scalar Kalman filter + RTS smoother on Python floats; log evidence by the prediction-error decomposition."""
    a, q, r = GAIN, PROCESS_VAR, OBSERVATION_VAR
    filtered_mean, filtered_var = [], []
    predicted_mean, predicted_var = 0.0, INITIAL_VAR
    log_terms = []
    log = math.log
    for observation in y.tolist():
        innovation_var = predicted_var + r
        innovation = observation - predicted_mean
        log_terms.append(log(innovation_var) + innovation * innovation / innovation_var)
        gain = predicted_var / innovation_var
        mean = predicted_mean + gain * innovation
        var = predicted_var - gain * predicted_var
        filtered_mean.append(mean)
        filtered_var.append(var)
        predicted_mean, predicted_var = a * mean, a * a * var + q
    steps = len(filtered_mean)
    smoothed_mean, smoothed_var = filtered_mean[:], filtered_var[:]
    next_mean, next_var = filtered_mean[-1], filtered_var[-1]
    for t in range(steps - 2, -1, -1):
        mean, var = filtered_mean[t], filtered_var[t]
        next_predicted_var = a * a * var + q
        smoother_gain = var * a / next_predicted_var
        next_mean = mean + smoother_gain * (next_mean - a * mean)
        next_var = var + smoother_gain * smoother_gain * (next_var - next_predicted_var)
        smoothed_mean[t], smoothed_var[t] = next_mean, next_var
    log_evidence = -0.5 * (steps * LOG_2PI + math.fsum(log_terms))
    return {"mean": np.array(smoothed_mean), "var": np.array(smoothed_var), "log_evidence": log_evidence}


def numpy_loop(y: np.ndarray) -> dict:
    """The same recursions as a Python loop writing into numpy arrays (extra column)."""
    steps = len(y)
    ys = y.tolist()
    filtered_mean, filtered_var = np.empty(steps), np.empty(steps)
    predicted_mean, predicted_var = 0.0, INITIAL_VAR
    log_evidence = 0.0
    for t in range(steps):
        innovation_var = predicted_var + OBSERVATION_VAR
        innovation = ys[t] - predicted_mean
        log_evidence -= 0.5 * (LOG_2PI + math.log(innovation_var) + innovation * innovation / innovation_var)
        gain = predicted_var / innovation_var
        mean = predicted_mean + gain * innovation
        var = (1.0 - gain) * predicted_var
        filtered_mean[t], filtered_var[t] = mean, var
        predicted_mean = GAIN * mean
        predicted_var = GAIN * GAIN * var + PROCESS_VAR
    smoothed_mean, smoothed_var = np.empty(steps), np.empty(steps)
    smoothed_mean[-1], smoothed_var[-1] = filtered_mean[-1], filtered_var[-1]
    for t in range(steps - 2, -1, -1):
        next_predicted_var = GAIN * GAIN * filtered_var[t] + PROCESS_VAR
        smoother_gain = filtered_var[t] * GAIN / next_predicted_var
        smoothed_mean[t] = filtered_mean[t] + smoother_gain * (smoothed_mean[t + 1] - GAIN * filtered_mean[t])
        smoothed_var[t] = filtered_var[t] + smoother_gain * smoother_gain * (smoothed_var[t + 1] - next_predicted_var)
    return {"mean": smoothed_mean, "var": smoothed_var, "log_evidence": log_evidence}


def differences(result: dict, reference: dict) -> dict:
    return {"max_abs_diff_mean": float(np.max(np.abs(result["mean"] - reference["mean"]))),
            "max_abs_diff_var": float(np.max(np.abs(result["var"] - reference["var"]))),
            "rel_diff_log_evidence": abs(result["log_evidence"] - reference["log_evidence"])
            / abs(reference["log_evidence"])}


def agrees(difference: dict) -> bool:
    return (difference["max_abs_diff_mean"] <= MOMENT_TOLERANCE and difference["max_abs_diff_var"] <= MOMENT_TOLERANCE
            and difference["rel_diff_log_evidence"] <= EVIDENCE_TOLERANCE)


def run(quick: bool, steps: int | None = None, repeats: int | None = None) -> dict:
    steps = steps or (10**4 if quick else 10**5)
    repeats = repeats or (21 if quick else 11)
    y = simulate(steps)
    calls = {"ours": ours, "ours_run": ours_run, "peer": peer, "numpy_loop": numpy_loop}
    shared = sequence_comparison(y, steps, repeats, build_model, {}, calls, differences, agrees)
    return {
        "benchmark": "gauss_markov_chain",
        "peer": "Kalman filter + RTS smoother on Python floats (lists)",
        **shared,
        "params": {"T": steps, "repeats": repeats, "quick": quick,
                   "model": {"x1_var": INITIAL_VAR, "a": GAIN, "q": PROCESS_VAR, "r": OBSERVATION_VAR},
                   "tolerance": {"moments_abs": MOMENT_TOLERANCE, "log_evidence_rel": EVIDENCE_TOLERANCE},
                   "timing": "ours_s = build + compile + run + posterior means/variances of all x_t + log p(y); "
                             "ours_run_s = run + read on a compiled plan; peer_s and numpy_loop_s = filter + "
                             "smoother + log evidence; stages_s from one separate build and compile"},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10**4 (under a minute)")
    parser.add_argument("--steps", type=int, help="another length T")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        y = simulate(arguments.steps or (10**4 if arguments.quick else 10**5))
        profile(lambda: ours(y), 5, f"T = {len(y)}, build to read", 15)
        return
    report = run(arguments.quick, arguments.steps)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
