"""A two-state hidden Markov model over T steps with the Markov-chain compound node, against numpy forward–backward.

Model (the shape of voice activity detection: a Markov chain of switches and
an observed mixture output per step)::

    z_1..z_T ~ MarkovChain(π, A)          π = (0.7, 0.3), A = [[0.95, 0.1], [0.05, 0.9]] (columns: from state j)
    y_t = Mixture(z_t, [s_t, a_t])        s_t ~ N(0, 0.5) ("silence"), a_t ~ N(0, 9) ("activity")
    y_t observed,  t = 1..T,  T = 10**4 (quick: 10**3)

with y drawn from the model (numpy ``default_rng``, seed 20240601).

Ours: ``fg.compile(model, marginals=["z"])`` once (timed separately), then per
call one sum-product sweep ``fg.run(plan)`` (the switch messages of the T
mixture nodes, batched as one node over a plate of T, and one forward–backward
pass in the chain node) and reading p(z_t | y) for every t and log p(y).

Peer: a hand-written numpy scaled forward–backward pass (Rabiner's α/β with
per-step normalisers) over the same emission likelihoods N(y_t; 0, v_k),
computed inside the timed call; a Python loop over t with numpy vectors of
length 2, as a numpy user would write it.

Run from the repository root::

    python -m benchmarks.markov_chain            # full
    python -m benchmarks.markov_chain --quick    # under a minute
    python -m benchmarks.markov_chain --profile [--quick]

Timing: ``time.perf_counter``; ours and the peer alternate within each repeat
(full: 15 repeats, quick: 31), medians; one untimed warm-up of each. The last line printed is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import numpy as np

import fgraph as fg
from benchmarks.profiling import profile
from nodes import Mixture, Normal
from nodes.markov_chain import MarkovChain

SEED = 20240601
INITIAL = np.array([0.7, 0.3])
TRANSITION = np.array([[0.95, 0.1], [0.05, 0.9]])  # TRANSITION[i, j] = P(z_t = i | z_{t-1} = j)
VARIANCES = np.array([0.5, 9.0])  # emission variance of each state (mean 0)


def simulate(steps: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    state = rng.choice(2, p=INITIAL)
    y = np.empty(steps)
    for t in range(steps):
        if t > 0:
            state = rng.choice(2, p=TRANSITION[:, state])
        y[t] = rng.normal(0.0, math.sqrt(VARIANCES[state]))
    return y


def build_model(y: np.ndarray) -> fg.Model:
    steps = len(y)
    with fg.Model() as model:
        z = MarkovChain("z", INITIAL, TRANSITION, steps)
        inputs = [Normal(name, mean=0.0, var=float(var), batch_shape=(steps,))
                  for name, var in zip(("silence", "activity"), VARIANCES)]
        Mixture("y", z, inputs, observed=y)
    return model


def ours(plan) -> dict:
    result = fg.run(plan)
    return {"probabilities": np.asarray(result.marginal("z").probabilities), "log_evidence": float(result.log_evidence)}


def peer(y: np.ndarray) -> dict:
    """Scaled forward–backward (numpy), emission likelihoods included."""
    steps = len(y)
    likelihood = np.exp(-0.5 * y[:, None] ** 2 / VARIANCES) / np.sqrt(2.0 * math.pi * VARIANCES)  # (T, 2)
    alpha = np.empty((steps, 2))
    norms = np.empty(steps)
    predicted = INITIAL
    for t in range(steps):
        joint = predicted * likelihood[t]
        norms[t] = joint.sum()
        alpha[t] = joint / norms[t]
        predicted = TRANSITION @ alpha[t]
    beta = np.empty((steps, 2))
    beta[-1] = 1.0
    for t in range(steps - 2, -1, -1):
        beta[t] = TRANSITION.T @ (likelihood[t + 1] * beta[t + 1]) / norms[t + 1]
    posterior = alpha * beta
    posterior /= posterior.sum(axis=1, keepdims=True)
    return {"probabilities": posterior, "log_evidence": float(np.log(norms).sum())}


def run(quick: bool) -> dict:
    steps = 10**3 if quick else 10**4
    repeats = 31 if quick else 15
    y = simulate(steps)
    small = y[:50]
    ours(fg.compile(build_model(small), marginals=["z"]))
    peer(small)
    start = time.perf_counter()
    model = build_model(y)
    built = time.perf_counter()
    plan = fg.compile(model, marginals=["z"])
    compiled = time.perf_counter()
    ours(plan)
    peer(y)
    times = {"ours": [], "peer": []}
    for _ in range(repeats):
        start_ours = time.perf_counter()
        ours_result = ours(plan)
        times["ours"].append(time.perf_counter() - start_ours)
        start_peer = time.perf_counter()
        peer_result = peer(y)
        times["peer"].append(time.perf_counter() - start_peer)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "benchmark": "markov_chain",
        "ours_s": round(medians["ours"], 5),
        "peer": "numpy scaled forward-backward (Python loop over t)",
        "peer_s": round(medians["peer"], 5),
        "ratio": round(medians["ours"] / medians["peer"], 2),
        "stages_s": {"build": round(built - start, 4), "compile": round(compiled - built, 4)},
        "us_per_step": round(1e6 * medians["ours"] / steps, 2),
        "params": {"T": steps, "repeats": repeats, "quick": quick, "pi": INITIAL.tolist(),
                   "A": TRANSITION.tolist(), "variances": VARIANCES.tolist(),
                   "timing": "ours_s = fg.run(plan) + p(z_t | y) for all t + log p(y); compile not included "
                             "(stages_s); peer_s = emission likelihoods + forward-backward"},
        "quality": {
            "max_abs_diff_probabilities": float(np.max(np.abs(ours_result["probabilities"] - peer_result["probabilities"]))),
            "log_evidence_ours": ours_result["log_evidence"],
            "log_evidence_peer": peer_result["log_evidence"],
            "rel_diff_log_evidence": abs(ours_result["log_evidence"] - peer_result["log_evidence"])
            / abs(peer_result["log_evidence"]),
        },
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10**3 (under a minute)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        y = simulate(10**3 if arguments.quick else 10**4)
        plan = fg.compile(build_model(y), marginals=["z"])
        profile(lambda: ours(plan), 5, f"T = {len(y)}", 15)
        return
    print(json.dumps(run(arguments.quick)))


if __name__ == "__main__":
    main()
