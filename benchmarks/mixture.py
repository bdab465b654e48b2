"""Bayesian model averaging with the mixture node, against closed-form numpy.

Model (plated, K = 3 sub-models, one shared switch and one shared ``x``)::

    z ~ Cat(π)                          π = (0.5, 0.3, 0.2)
    x_k ~ N(m_k, s_k)                   m = (-1, 0.5, 2), s = (1, 0.5, 4) (variances)
    x = Mixture(z, [x_1, x_2, x_3])     x = x_k when z = k
    y_n ~ N(x, v),  n = 1..N            v = 4, N = 10**5 (quick: 10**4)

with y drawn from N(1, 2**2) (numpy ``default_rng``, seed 20240601). The
sub-models stay competitive at any N (their posterior probabilities are about
π_k N(ȳ; m_k, s_k + v/N), so none underflows).

Ours: the model is built and compiled once for the quantities read
(``fg.compile(model, algorithm="bp", marginals=["z", "x"])``: the messages
back into the sub-models, which only their conditional posteriors need, are
left out; build and compile are timed separately, on fresh models); each timed call is
one sum-product sweep ``fg.run(plan)`` followed by reading the posterior
model probabilities (``result.marginal("z")``), the log evidence
(``result.log_evidence``) and the model-averaged posterior of x (``result.marginal("x")``, a mixture of K
Gaussians: weights, component means and variances, mean and variance). The
plate of N likelihood factors N(y_n | x, v) sends the product of its N
messages, computed from the data's sufficient statistics by the normal node's
plate rule (``rules/normal_mean_variance/mean.py``), scale included.

Peer: a hand-written numpy computation of the same quantities, vectorised over
N, by sufficient statistics (ȳ and Σ (y_n − ȳ)²) and the per-model conjugate
evidence

    log p(y | m = k) = −N/2 log(2πv) − Σ (y_n − ȳ)² / (2v) + ½ log(2πv/N)
                       + log N(ȳ; m_k, s_k + v/N),

posterior x | y, m = k ~ N(μ_k, σ²_k) with 1/σ²_k = 1/s_k + N/v,
μ_k = σ²_k (m_k/s_k + N ȳ/v); model probabilities by normalising
π_k p(y | m = k) in log space; the averaged posterior's moments from the
components. The peer reads the raw data on every call, as ours does.

Run from the repository root::

    python -m benchmarks.mixture            # full
    python -m benchmarks.mixture --quick    # under a minute
    python -m benchmarks.mixture --size 1000000      # another N (repeats of the mode)
    python -m benchmarks.mixture --profile [--quick]   # cProfile of ours only

Timing: ``time.perf_counter``; ours and the peer alternate within each repeat
(full: 301 repeats, quick: 101), medians reported; one untimed warm-up of each
first. ``peer_back_to_back_s`` times the peer alone, called repeatedly (warm
caches), for comparison. The last line printed is one JSON object.
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
from nodes import Categorical, Mixture, Normal

SEED = 20240601

MODEL_PRIOR = np.array([0.5, 0.3, 0.2])  # π
PRIOR_MEANS = np.array([-1.0, 0.5, 2.0])  # m_k
PRIOR_VARS = np.array([1.0, 0.5, 4.0])  # s_k
NOISE_VAR = 4.0  # v
DATA_MEAN, DATA_STD = 1.0, 2.0


def build_model(data: np.ndarray) -> fg.Model:
    """The model of the module docstring, observing ``data`` (shape ``(N,)``)."""
    with fg.Model() as model:
        inputs = [
            Normal(f"x{k + 1}", mean=float(mean), var=float(var))
            for k, (mean, var) in enumerate(zip(PRIOR_MEANS, PRIOR_VARS))
        ]
        switch = Categorical("z", p=MODEL_PRIOR)
        x = Mixture("x", switch, inputs)
        Normal("y", mean=x, var=NOISE_VAR, observed=data)
    return model


QUERIED = ["z", "x"]  # the marginals read by extract(); the log evidence comes with them


def extract(result) -> dict:
    """The compared quantities, read from a result of ours."""
    averaged = result.marginal("x")
    return {
        "model_probabilities": np.asarray(result.marginal("z").probabilities, dtype=float),
        "log_evidence": float(result.log_evidence),
        "weights": np.asarray(averaged.weights, dtype=float),
        "component_means": np.array([float(c.mean) for c in averaged.components]),
        "component_vars": np.array([float(c.var) for c in averaged.components]),
        "mean": float(averaged.mean),
        "var": float(averaged.var),
    }


def ours(plan) -> dict:
    """One sum-product sweep on the compiled plan, then the compared quantities."""
    return extract(fg.run(plan))


def peer(data: np.ndarray) -> dict:
    """Closed-form model averaging by sufficient statistics (numpy, vectorised over N)."""
    count = data.size
    data_mean = data.mean()
    scatter = np.sum((data - data_mean) ** 2)
    # log ∫ Π_n N(y_n; x, v) N(x; m_k, s_k) dx, split into the part common to all models
    # and the predictive density of the sample mean under model k
    common = (
        -0.5 * count * math.log(2.0 * math.pi * NOISE_VAR)
        - scatter / (2.0 * NOISE_VAR)
        + 0.5 * math.log(2.0 * math.pi * NOISE_VAR / count)
    )
    predictive_var = PRIOR_VARS + NOISE_VAR / count
    log_evidence_per_model = common - 0.5 * np.log(2.0 * math.pi * predictive_var) - (
        (data_mean - PRIOR_MEANS) ** 2 / (2.0 * predictive_var)
    )
    log_joint = np.log(MODEL_PRIOR) + log_evidence_per_model
    largest = log_joint.max()
    log_evidence = largest + math.log(np.sum(np.exp(log_joint - largest)))
    probabilities = np.exp(log_joint - log_evidence)
    posterior_vars = 1.0 / (1.0 / PRIOR_VARS + count / NOISE_VAR)
    posterior_means = posterior_vars * (PRIOR_MEANS / PRIOR_VARS + count * data_mean / NOISE_VAR)
    mean = float(np.sum(probabilities * posterior_means))
    var = float(np.sum(probabilities * (posterior_vars + (posterior_means - mean) ** 2)))
    return {
        "model_probabilities": probabilities,
        "log_evidence": float(log_evidence),
        "weights": probabilities,
        "component_means": posterior_means,
        "component_vars": posterior_vars,
        "mean": mean,
        "var": var,
    }


def max_abs_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def max_rel_diff(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def run(quick: bool, size: int | None = None) -> dict:
    size = size or (10**4 if quick else 10**5)
    repeats = 101 if quick else 301
    data = np.random.default_rng(SEED).normal(DATA_MEAN, DATA_STD, size=size)

    # warm-up on a small instance (imports, rule registry), untimed
    small = data[:min(100, size)]
    ours(fg.compile(build_model(small), algorithm="bp", marginals=QUERIED))
    peer(small)

    # build and compile (once per use of the model; medians over as many fresh models as repeats)
    times = {"build": [], "compile": [], "ours": [], "peer": [], "run": [], "extract": []}
    for _ in range(repeats):
        start = time.perf_counter()
        model = build_model(data)
        built = time.perf_counter()
        plan = fg.compile(model, algorithm="bp", marginals=QUERIED)
        times["build"].append(built - start)
        times["compile"].append(time.perf_counter() - built)

    ours(plan)  # warm-up at full size, untimed
    peer(data)
    for _ in range(repeats):
        start_ours = time.perf_counter()
        result = fg.run(plan)
        ran = time.perf_counter()
        ours_result = extract(result)
        done = time.perf_counter()
        times["ours"].append(done - start_ours)
        times["run"].append(ran - start_ours)
        times["extract"].append(done - ran)
        start_peer = time.perf_counter()
        peer_result = peer(data)
        times["peer"].append(time.perf_counter() - start_peer)
    # the peer again, back to back: in the alternation it starts after ours has evicted its data from cache
    times["peer_back_to_back"] = []
    for _ in range(repeats):
        start_peer = time.perf_counter()
        peer(data)
        times["peer_back_to_back"].append(time.perf_counter() - start_peer)
    medians = {name: statistics.median(values) for name, values in times.items()}

    quality = {
        "max_abs_diff_model_probabilities": max_abs_diff(ours_result["model_probabilities"], peer_result["model_probabilities"]),
        "max_rel_diff_model_probabilities": max_rel_diff(ours_result["model_probabilities"], peer_result["model_probabilities"]),
        "log_evidence_ours": ours_result["log_evidence"],
        "log_evidence_peer": peer_result["log_evidence"],
        "abs_diff_log_evidence": abs(ours_result["log_evidence"] - peer_result["log_evidence"]),
        "rel_diff_log_evidence": max_rel_diff(ours_result["log_evidence"], peer_result["log_evidence"]),
        "max_abs_diff_mixture_weights": max_abs_diff(ours_result["weights"], peer_result["weights"]),
        "max_abs_diff_component_means": max_abs_diff(ours_result["component_means"], peer_result["component_means"]),
        "max_rel_diff_component_vars": max_rel_diff(ours_result["component_vars"], peer_result["component_vars"]),
        "abs_diff_mean_x": abs(ours_result["mean"] - peer_result["mean"]),
        "abs_diff_var_x": abs(ours_result["var"] - peer_result["var"]),
        "rel_diff_var_x": max_rel_diff(ours_result["var"], peer_result["var"]),
        "model_probabilities": [float(p) for p in peer_result["model_probabilities"]],
        "mean_x": peer_result["mean"],
        "var_x": peer_result["var"],
    }
    # absolute differences of O(1) quantities and relative ones of the rest (log evidence ~ -N, variances ~ 1/N)
    quality["agree_1e-9"] = bool(max(
        quality["max_abs_diff_model_probabilities"], quality["rel_diff_log_evidence"],
        quality["max_abs_diff_mixture_weights"], quality["max_abs_diff_component_means"],
        quality["max_rel_diff_component_vars"], quality["abs_diff_mean_x"], quality["rel_diff_var_x"],
    ) <= 1e-9)
    return {
        "benchmark": "mixture",
        "ours_s": round(medians["ours"], 6),
        "peer": "numpy closed form (sufficient statistics, vectorised over N)",
        "peer_s": round(medians["peer"], 6),
        "ratio": round(medians["ours"] / medians["peer"], 2),
        "ratio_run_only": round(medians["run"] / medians["peer"], 2),
        "peer_back_to_back_s": round(medians["peer_back_to_back"], 6),
        "ratio_back_to_back": round(medians["ours"] / medians["peer_back_to_back"], 2),
        "stages_s": {
            "build": round(medians["build"], 6),
            "compile": round(medians["compile"], 6),
            "run": round(medians["run"], 6),
            "extract": round(medians["extract"], 6),
        },
        "messages": len(plan.schedule),
        "params": {
            "N": size,
            "K": len(MODEL_PRIOR),
            "repeats": repeats,
            "quick": quick,
            "timing": "ours_s = fg.run(plan) (one BP sweep) + extract (model probabilities, log evidence, "
            "averaged posterior of x); build and compile not in ours_s (stages_s: medians); "
            "peer_s = sufficient statistics + per-model evidence + averaging",
            "model": {
                "pi": MODEL_PRIOR.tolist(), "m": PRIOR_MEANS.tolist(), "s": PRIOR_VARS.tolist(), "v": NOISE_VAR,
            },
            "data": "N(%g, %g**2), numpy default_rng seed %d" % (DATA_MEAN, DATA_STD, SEED),
        },
        "quality": quality,
    }


def profile_ours(quick: bool, size: int | None = None, calls: int = 20, top: int = 15) -> None:
    """cProfile of ``ours(plan)`` only (``calls`` calls after a warm-up); top functions."""
    size = size or (10**4 if quick else 10**5)
    data = np.random.default_rng(SEED).normal(DATA_MEAN, DATA_STD, size=size)
    plan = fg.compile(build_model(data), algorithm="bp", marginals=QUERIED)
    profile(lambda: ours(plan), calls, f"N = {data.size}", top)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 10**4, fewer repeats (under a minute)")
    parser.add_argument("--size", type=int, help="number of observations N (overrides the default of the mode)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        profile_ours(arguments.quick, arguments.size)
        return
    print(json.dumps(run(arguments.quick, arguments.size)))


if __name__ == "__main__":
    main()
