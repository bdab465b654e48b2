"""Smoothing a 2-D linear-Gaussian state-space model with the MvGaussMarkovChain node, against a numpy Kalman + RTS loop.

Model (a noisy rotation observed in noise)::

    x_1 ~ N(0, I),   x_t = A x_{t−1} + N(0, Q),   y_t = x_t + N(0, R),   t = 1..T,
    A = rotation by π/15 scaled by 0.99,  Q = 0.1 I,  R = 0.5 I,
    T = 10**4 and 5·10**4 (quick: 2·10**3)

with x and y drawn from the model (numpy ``default_rng``, seed 20240601).

Ours, two columns: ``ours_s`` is what a user pays, building the model
(``MvGaussMarkovChain`` and one observed ``MvNormal`` over the plate of T steps),
``fg.compile``, one sum-product sweep ``fg.run`` (the chain's messages come from
a forward and a backward associative scan, ``rules/mv_gauss_markov_chain/``) and reading
the posterior means and covariances of every x_t and log p(y); ``ours_run_s`` is the
sweep and the reading alone on a compiled plan.

Peer (``ratio`` is against it): a Kalman filter and Rauch–Tung–Striebel smoother as a
Python loop over time with numpy's small-matrix operations (``@``, ``np.linalg.inv``,
``np.linalg.slogdet``), the log evidence by the prediction-error decomposition: the
straightforward numpy code for a d-dimensional state.

Unrolled (``unrolled_s``, for T up to :data:`UNROLLED_MAX_STEPS`, where the graph fits in memory and
time): the same model as one node per step, ``MvNormal`` for x_1, ``MvLinear`` x_t = A x_{t−1} + N(0, Q)
and an observed ``MvNormal`` y_t per step (2T nodes), built, compiled and run by sum-product (exact on
this chain) with the same reading; timed once per repeat after its own warm-up, and checked against
the peer like ours.

Agreement (checked on every run, the exit status is 1 if it fails): posterior means and
covariances within 1e-9 (absolute) at every t, log p(y) within 1e-10 relative.

Run from the repository root::

    python -m benchmarks.ssm              # T = 10**4 and 5·10**4
    python -m benchmarks.ssm --quick      # T = 2·10**3 (seconds)
    python -m benchmarks.ssm --steps 100000

Timing: ``time.perf_counter``; ours (both columns) and the peer alternate within each repeat
(5 repeats, quick 3), medians, after one untimed warm-up of each. One JSON line per T; the
last line is one JSON object, for the largest T, with every T under ``per_T``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

import fgraph as fg
from benchmarks.timing import alternating_medians
from fgraph.nodes import MvNormal
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain
from fgraph.nodes.mv_linear import MvLinear

SEED = 20240601
ANGLE, DAMPING = math.pi / 15, 0.99
TRANSITION = DAMPING * np.array([[math.cos(ANGLE), -math.sin(ANGLE)], [math.sin(ANGLE), math.cos(ANGLE)]])
PROCESS_COV = 0.1 * np.eye(2)
OBSERVATION_COV = 0.5 * np.eye(2)
INITIAL_MEAN, INITIAL_COV = np.zeros(2), np.eye(2)
MOMENT_TOLERANCE = 1e-9
EVIDENCE_TOLERANCE = 1e-10
LOG_2PI = math.log(2.0 * math.pi)
UNROLLED_MAX_STEPS = 10**4


def simulate(steps: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    states = np.empty((steps, 2))
    states[0] = rng.multivariate_normal(INITIAL_MEAN, INITIAL_COV)
    noise = rng.multivariate_normal(np.zeros(2), PROCESS_COV, size=steps)
    for t in range(1, steps):
        states[t] = TRANSITION @ states[t - 1] + noise[t]
    return states + rng.multivariate_normal(np.zeros(2), OBSERVATION_COV, size=steps)


def build_model(y: np.ndarray) -> fg.Model:
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", TRANSITION, PROCESS_COV, INITIAL_MEAN, INITIAL_COV, len(y))
        MvNormal("y", mean=x, cov=OBSERVATION_COV, observed=y)
    return model


def read(result) -> dict:
    marginal = result.marginal("x")
    return {"mean": np.asarray(marginal.mean), "cov": np.asarray(marginal.cov),
            "log_evidence": float(result.log_evidence)}


def build_unrolled(y: np.ndarray) -> fg.Model:
    """One MvLinear transition and one observed MvNormal per step."""
    with fg.Model() as model:
        x = MvNormal("x0", mean=INITIAL_MEAN, cov=INITIAL_COV)
        MvNormal("y0", mean=x, cov=OBSERVATION_COV, observed=y[0])
        for t in range(1, len(y)):
            x = MvLinear(f"x{t}", x, TRANSITION, PROCESS_COV)
            MvNormal(f"y{t}", mean=x, cov=OBSERVATION_COV, observed=y[t])
    return model


def unrolled(y: np.ndarray) -> dict:
    """What a user pays for the unrolled graph: build, compile, run, read every x_t and log p(y)."""
    result = fg.run(fg.compile(build_unrolled(y)))
    marginals = [result.marginal(f"x{t}") for t in range(len(y))]
    return {"mean": np.array([m.mean for m in marginals]), "cov": np.array([m.cov for m in marginals]),
            "log_evidence": float(result.log_evidence)}


def ours(y: np.ndarray) -> dict:
    """What a user pays: build, compile, run, read."""
    return read(fg.run(fg.compile(build_model(y))))


def peer(y: np.ndarray) -> dict:
    """Kalman filter + RTS smoother, a Python loop over numpy 2×2 operations; log evidence by prediction errors."""
    A, Q, R = TRANSITION, PROCESS_COV, OBSERVATION_COV
    steps, d = y.shape
    filtered_mean, filtered_cov = np.empty((steps, d)), np.empty((steps, d, d))
    predicted_mean, predicted_cov = np.empty((steps, d)), np.empty((steps, d, d))
    mean, cov = INITIAL_MEAN, INITIAL_COV
    log_evidence = 0.0
    for t in range(steps):
        if t > 0:
            mean = A @ mean
            cov = A @ cov @ A.T + Q
        predicted_mean[t], predicted_cov[t] = mean, cov
        innovation_cov = cov + R
        innovation = y[t] - mean
        inverse = np.linalg.inv(innovation_cov)
        log_evidence -= 0.5 * (d * LOG_2PI + np.linalg.slogdet(innovation_cov)[1] + innovation @ inverse @ innovation)
        gain = cov @ inverse
        mean = mean + gain @ innovation
        cov = cov - gain @ cov
        filtered_mean[t], filtered_cov[t] = mean, cov
    smoothed_mean, smoothed_cov = filtered_mean.copy(), filtered_cov.copy()
    for t in range(steps - 2, -1, -1):
        gain = filtered_cov[t] @ A.T @ np.linalg.inv(predicted_cov[t + 1])
        smoothed_mean[t] = filtered_mean[t] + gain @ (smoothed_mean[t + 1] - predicted_mean[t + 1])
        smoothed_cov[t] = filtered_cov[t] + gain @ (smoothed_cov[t + 1] - predicted_cov[t + 1]) @ gain.T
    return {"mean": smoothed_mean, "cov": smoothed_cov, "log_evidence": log_evidence}


def differences(result: dict, reference: dict) -> dict:
    return {"max_abs_diff_mean": float(np.max(np.abs(result["mean"] - reference["mean"]))),
            "max_abs_diff_cov": float(np.max(np.abs(result["cov"] - reference["cov"]))),
            "rel_diff_log_evidence": abs(result["log_evidence"] - reference["log_evidence"])
            / abs(reference["log_evidence"])}


def agrees(difference: dict) -> bool:
    return (difference["max_abs_diff_mean"] <= MOMENT_TOLERANCE and difference["max_abs_diff_cov"] <= MOMENT_TOLERANCE
            and difference["rel_diff_log_evidence"] <= EVIDENCE_TOLERANCE)


def run_one(steps: int, repeats: int) -> dict:
    y = simulate(steps)
    plan = fg.compile(build_model(y))
    calls = {"ours": lambda: ours(y), "ours_run": lambda: read(fg.run(plan)), "peer": lambda: peer(y)}
    if steps <= UNROLLED_MAX_STEPS:
        calls["unrolled"] = lambda: unrolled(y)
    ours(y[:50]), peer(y[:50])
    for call in calls.values():  # warm-up at full size
        call()
    medians, results = alternating_medians(calls, repeats)
    quality = {name: differences(results[name], results["peer"]) for name in ("ours", "ours_run", "unrolled")
               if name in results}
    return {
        "T": steps, "ours_s": round(medians["ours"], 5), "ours_run_s": round(medians["ours_run"], 5),
        "unrolled_s": round(medians["unrolled"], 5) if "unrolled" in medians else None,
        "peer_s": round(medians["peer"], 5), "ratio": round(medians["ours"] / medians["peer"], 4),
        "ratio_run_only": round(medians["ours_run"] / medians["peer"], 4),
        "agree": all(agrees(difference) for difference in quality.values()), "quality": quality,
        "us_per_step": round(1e6 * medians["ours"] / steps, 3),
        "peer_us_per_step": round(1e6 * medians["peer"] / steps, 3),
    }


def run(quick: bool, steps: list | None = None, repeats: int | None = None) -> dict:
    sizes = steps or ([2000] if quick else [10**4, 5 * 10**4])
    repeats = repeats or (3 if quick else 5)
    per_T = []
    for size in sizes:
        per_T.append(run_one(size, repeats))
        print(json.dumps(per_T[-1]))
    last = per_T[-1]
    return {
        "benchmark": "ssm", "peer": "Kalman filter + RTS smoother, a Python loop over numpy 2x2 operations",
        **{key: last[key] for key in ("ours_s", "ours_run_s", "peer_s", "ratio", "ratio_run_only")},
        "unrolled_s": {entry["T"]: entry["unrolled_s"] for entry in per_T},
        "agree": all(entry["agree"] for entry in per_T), "per_T": per_T,
        "params": {"T": [entry["T"] for entry in per_T], "repeats": repeats, "quick": quick, "d": 2,
                   "tolerance": {"moments_abs": MOMENT_TOLERANCE, "log_evidence_rel": EVIDENCE_TOLERANCE},
                   "timing": "ours_s = build + compile + run + posterior means/covariances of all x_t + log p(y); "
                             "ours_run_s = run + read on a compiled plan; peer_s = filter + smoother + log evidence; "
                             "unrolled_s = the same as ours_s for the unrolled graph (T <= "
                             f"{UNROLLED_MAX_STEPS})"},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 2000 (seconds)")
    parser.add_argument("--steps", type=int, nargs="+", help="other lengths T")
    arguments = parser.parse_args(argv)
    report = run(arguments.quick, arguments.steps)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
