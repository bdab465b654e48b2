"""A two-state hidden Markov model with the Markov-chain compound node, against forward–backward on floats.

Model (the shape of voice activity detection: a Markov chain of switches and
an observed mixture output per step)::

    z_1..z_T ~ MarkovChain(π, A)          π = (0.7, 0.3), A = [[0.95, 0.1], [0.05, 0.9]] (columns: from state j)
    y_t = Mixture(z_t, [s_t, a_t])        s_t ~ N(0, 0.5) ("silence"), a_t ~ N(0, 9) ("activity")
    y_t observed,  t = 1..T,  T = 10**4 (quick: 10**3)

with y drawn from the model (numpy ``default_rng``, seed 20240601).

Ours, two columns: ``ours_s`` is what a user pays, building the model,
``fg.compile(model, marginals=["z"])``, one sum-product sweep ``fg.run`` (the
switch messages of the T mixture nodes, batched as one node over a plate of
T, and one forward–backward pass in the chain node, an associative scan) and
reading p(z_t | y) for every t and log p(y); ``ours_run_s`` is the sweep and
the reading alone on a compiled plan.

Peer (``ratio`` is against it): Rabiner's scaled forward–backward written for
K = 2 on Python floats, the emission likelihoods N(y_t; 0, v_k) computed
inside the timed call with numpy; about 1 µs per step, the fastest
straightforward version for two states. Extra column ``numpy_loop_s``: the same
recursion as a Python loop over t on numpy vectors of length 2.

Agreement (checked on every run, the exit status is 1 if it fails): p(z_t | y)
of ours and of both peers within 1e-9 of each other at every t, log p(y) within
1e-9 relative.

Run from the repository root::

    python -m benchmarks.markov_chain            # full
    python -m benchmarks.markov_chain --quick    # under a minute
    python -m benchmarks.markov_chain --steps 100000
    python -m benchmarks.markov_chain --profile [--quick]

Timing: ``time.perf_counter``; ours (both columns) and the peers alternate
within each repeat (full: 15 repeats, quick: 31), medians; one untimed warm-up
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
from fgraph.nodes import Mixture, Normal
from fgraph.nodes.markov_chain import MarkovChain

SEED = 20240601
INITIAL = np.array([0.7, 0.3])
TRANSITION = np.array([[0.95, 0.1], [0.05, 0.9]])  # TRANSITION[i, j] = P(z_t = i | z_{t-1} = j)
VARIANCES = np.array([0.5, 9.0])  # emission variance of each state (mean 0)
PROBABILITY_TOLERANCE = 1e-9  # max |difference| of p(z_t | y)
EVIDENCE_TOLERANCE = 1e-9  # relative difference of log p(y)


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


def read(result) -> dict:
    return {"probabilities": np.asarray(result.marginal("z").probabilities), "log_evidence": float(result.log_evidence)}


def ours(y: np.ndarray) -> dict:
    """What a user pays: build, compile, run, read."""
    return read(fg.run(fg.compile(build_model(y), marginals=["z"])))


def ours_run(plan) -> dict:
    """The sweep and the reading on a compiled plan."""
    return read(fg.run(plan))


def emission_likelihoods(y: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * y[:, None] ** 2 / VARIANCES) / np.sqrt(2.0 * math.pi * VARIANCES)  # (T, 2)


def peer(y: np.ndarray) -> dict:
    """Scaled forward–backward for two states on Python floats, emission likelihoods (numpy) included."""
    likelihood = emission_likelihoods(y)
    first, second = likelihood[:, 0].tolist(), likelihood[:, 1].tolist()
    (a00, a01), (a10, a11) = TRANSITION.tolist()
    predicted0, predicted1 = INITIAL.tolist()
    filtered0, filtered1, norms = [], [], []
    for l0, l1 in zip(first, second):
        joint0, joint1 = predicted0 * l0, predicted1 * l1
        norm = joint0 + joint1
        joint0, joint1 = joint0 / norm, joint1 / norm
        filtered0.append(joint0)
        filtered1.append(joint1)
        norms.append(norm)
        predicted0, predicted1 = a00 * joint0 + a01 * joint1, a10 * joint0 + a11 * joint1
    steps = len(norms)
    posterior0, posterior1 = [0.0] * steps, [0.0] * steps
    posterior0[-1], posterior1[-1] = filtered0[-1], filtered1[-1]
    back0 = back1 = 1.0
    for t in range(steps - 1, 0, -1):
        # β_{t−1}(j) = Σ_i A[i, j] l_t(i) β_t(i) / c_t
        weighted0, weighted1 = first[t] * back0 / norms[t], second[t] * back1 / norms[t]
        back0, back1 = a00 * weighted0 + a10 * weighted1, a01 * weighted0 + a11 * weighted1
        mass0, mass1 = filtered0[t - 1] * back0, filtered1[t - 1] * back1
        total = mass0 + mass1
        posterior0[t - 1], posterior1[t - 1] = mass0 / total, mass1 / total
    return {"probabilities": np.column_stack([posterior0, posterior1]),
            "log_evidence": math.fsum(map(math.log, norms))}


def numpy_loop(y: np.ndarray) -> dict:
    """Scaled forward–backward as a Python loop over t on numpy vectors of length 2 (extra column)."""
    steps = len(y)
    likelihood = emission_likelihoods(y)
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


def differences(result: dict, reference: dict) -> dict:
    return {"max_abs_diff_probabilities": float(np.max(np.abs(result["probabilities"] - reference["probabilities"]))),
            "rel_diff_log_evidence": abs(result["log_evidence"] - reference["log_evidence"])
            / abs(reference["log_evidence"])}


def agrees(difference: dict) -> bool:
    return (difference["max_abs_diff_probabilities"] <= PROBABILITY_TOLERANCE
            and difference["rel_diff_log_evidence"] <= EVIDENCE_TOLERANCE)


def run(quick: bool, steps: int | None = None, repeats: int | None = None) -> dict:
    steps = steps or (10**3 if quick else 10**4)
    repeats = repeats or (31 if quick else 15)
    y = simulate(steps)
    calls = {"ours": ours, "ours_run": ours_run, "peer": peer, "numpy_loop": numpy_loop}
    shared = sequence_comparison(y, steps, repeats, build_model, {"marginals": ["z"]}, calls, differences, agrees)
    return {
        "benchmark": "markov_chain",
        "peer": "scaled forward-backward on Python floats (K = 2)",
        **shared,
        "params": {"T": steps, "repeats": repeats, "quick": quick, "pi": INITIAL.tolist(),
                   "A": TRANSITION.tolist(), "variances": VARIANCES.tolist(),
                   "tolerance": {"probabilities_abs": PROBABILITY_TOLERANCE, "log_evidence_rel": EVIDENCE_TOLERANCE},
                   "timing": "ours_s = build + compile + run + p(z_t | y) for all t + log p(y); ours_run_s = run + "
                             "read on a compiled plan; peer_s and numpy_loop_s = emission likelihoods + "
                             "forward-backward; stages_s from one separate build and compile"},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 10**3 (under a minute)")
    parser.add_argument("--steps", type=int, help="another length T")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        y = simulate(arguments.steps or (10**3 if arguments.quick else 10**4))
        profile(lambda: ours(y), 5, f"T = {len(y)}, build to read", 15)
        return
    report = run(arguments.quick, arguments.steps)
    print(json.dumps(report))
    if not report["agree"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
