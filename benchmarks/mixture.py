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

Peer (the strongest straightforward implementation, ``peer``): the closed
form on sufficient statistics, one ``sum`` and one ``dot`` pass over the data
(Σy, Σy²) and Python floats for the K = 3 sub-models: the per-model conjugate
evidence

    log p(y | m = k) = −N/2 log(2πv) − Σ (y_n − ȳ)² / (2v) + ½ log(2πv/N)
                       + log N(ȳ; m_k, s_k + v/N),      Σ (y_n − ȳ)² = Σy² − N ȳ²,

posterior x | y, m = k ~ N(μ_k, σ²_k) with 1/σ²_k = 1/s_k + N/v,
μ_k = σ²_k (m_k/s_k + N ȳ/v); model probabilities by normalising
π_k p(y | m = k) in log space; the averaged posterior's moments from the
components. It reads the raw data on every call, as ours does. The weaker
numpy version vectorised over N and K (``peer_vectorised``: ``y.mean()``,
``np.sum((y - ȳ)**2)``, arrays of length K) is kept as an extra column.

Run from the repository root::

    python -m benchmarks.mixture            # full: N = 10**5 and 10**6
    python -m benchmarks.mixture --quick    # N = 10**4, under a minute
    python -m benchmarks.mixture --size 1000000      # another N (repeats of the mode)
    python -m benchmarks.mixture --profile [--quick]   # cProfile of ours only

Timing: ``time.perf_counter``; ours and the peer alternate within each repeat
(full: 301 repeats, quick: 101), medians reported; one untimed warm-up of each
first. Each of the two thus starts right after the other has read all of y,
so they find the data in the same state of the caches; the vectorised peer,
whose N-element temporaries would evict the data before the next call, is
timed in a loop of its own afterwards. ``peer_back_to_back_s`` times the peer
alone, called repeatedly, for comparison. One JSON line per N; the last line printed is one
JSON object with the first N at the top level and every N under ``"sizes"``;
the benchmark exits non-zero if ours and a peer disagree.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

import fgraph as fg
from benchmarks.profiling import profile
from fgraph.nodes import Categorical, Mixture, Normal

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


# the same constants as Python floats, for the peer's scalar arithmetic
PRIOR_TERMS = [(math.log(p), float(m), float(s)) for p, m, s in zip(MODEL_PRIOR, PRIOR_MEANS, PRIOR_VARS)]
LOG_2PI = math.log(2.0 * math.pi)


def peer(data: np.ndarray) -> dict:
    """Closed-form model averaging: Σy and Σy² in one ``sum`` and one ``dot`` pass, then Python floats for K = 3."""
    count = data.size
    data_mean = float(data.sum()) / count
    scatter = float(np.dot(data, data)) - count * data_mean * data_mean
    v = NOISE_VAR
    common = -0.5 * count * (LOG_2PI + math.log(v)) - scatter / (2.0 * v) + 0.5 * (LOG_2PI + math.log(v / count))
    log_joint, posterior_means, posterior_vars = [], [], []
    for log_prior, prior_mean, prior_var in PRIOR_TERMS:
        predictive_var = prior_var + v / count
        difference = data_mean - prior_mean
        log_joint.append(log_prior + common - 0.5 * (LOG_2PI + math.log(predictive_var))
                         - difference * difference / (2.0 * predictive_var))
        posterior_var = 1.0 / (1.0 / prior_var + count / v)
        posterior_vars.append(posterior_var)
        posterior_means.append(posterior_var * (prior_mean / prior_var + count * data_mean / v))
    largest = max(log_joint)
    log_evidence = largest + math.log(sum(math.exp(value - largest) for value in log_joint))
    probabilities = [math.exp(value - log_evidence) for value in log_joint]
    mean = sum(p * m for p, m in zip(probabilities, posterior_means))
    var = sum(p * (s + (m - mean) ** 2) for p, m, s in zip(probabilities, posterior_means, posterior_vars))
    return {
        "model_probabilities": probabilities,
        "log_evidence": log_evidence,
        "weights": probabilities,
        "component_means": posterior_means,
        "component_vars": posterior_vars,
        "mean": mean,
        "var": var,
    }


def peer_vectorised(data: np.ndarray) -> dict:
    """Closed-form model averaging by sufficient statistics (numpy, vectorised over N and K)."""
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


def differences(ours_result: dict, peer_result: dict) -> dict:
    """Differences of every compared quantity, and whether all are within 1e-9.

    Absolute differences of O(1) quantities and relative ones of the rest
    (the log evidence is ~ -N, the component variances ~ 1/N).
    """
    quality = {
        "max_abs_diff_model_probabilities": max_abs_diff(ours_result["model_probabilities"], peer_result["model_probabilities"]),
        "max_rel_diff_model_probabilities": max_rel_diff(ours_result["model_probabilities"], peer_result["model_probabilities"]),
        "abs_diff_log_evidence": abs(ours_result["log_evidence"] - peer_result["log_evidence"]),
        "rel_diff_log_evidence": max_rel_diff(ours_result["log_evidence"], peer_result["log_evidence"]),
        "max_abs_diff_mixture_weights": max_abs_diff(ours_result["weights"], peer_result["weights"]),
        "max_abs_diff_component_means": max_abs_diff(ours_result["component_means"], peer_result["component_means"]),
        "max_rel_diff_component_vars": max_rel_diff(ours_result["component_vars"], peer_result["component_vars"]),
        "abs_diff_mean_x": abs(ours_result["mean"] - peer_result["mean"]),
        "abs_diff_var_x": abs(ours_result["var"] - peer_result["var"]),
        "rel_diff_var_x": max_rel_diff(ours_result["var"], peer_result["var"]),
    }
    quality["agree_1e-9"] = bool(max(
        quality["max_abs_diff_model_probabilities"], quality["rel_diff_log_evidence"],
        quality["max_abs_diff_mixture_weights"], quality["max_abs_diff_component_means"],
        quality["max_rel_diff_component_vars"], quality["abs_diff_mean_x"], quality["rel_diff_var_x"],
    ) <= 1e-9)
    return quality


def run(quick: bool, size: int | None = None, repeats: int | None = None) -> dict:
    size = size or (10**4 if quick else 10**5)
    repeats = repeats or (101 if quick else 301)
    data = np.random.default_rng(SEED).normal(DATA_MEAN, DATA_STD, size=size)

    # warm-up on a small instance (imports, rule registry), untimed
    small = data[:min(100, size)]
    ours(fg.compile(build_model(small), algorithm="bp", marginals=QUERIED))
    peer(small)
    peer_vectorised(small)

    # build and compile (once per use of the model; medians over as many fresh models as repeats)
    times = {name: [] for name in ("build", "compile", "ours", "peer", "peer_vectorised", "run", "extract")}
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
    # the vectorised peer in a loop of its own: its temporaries of N elements would evict the data from the
    # cache before whichever call came next, and ours and the peer must find the data alike (each after the other)
    for _ in range(repeats):
        start_peer = time.perf_counter()
        vectorised_result = peer_vectorised(data)
        times["peer_vectorised"].append(time.perf_counter() - start_peer)
    # the peer again, back to back (each call after the peer itself)
    times["peer_back_to_back"] = []
    for _ in range(repeats):
        start_peer = time.perf_counter()
        peer(data)
        times["peer_back_to_back"].append(time.perf_counter() - start_peer)
    medians = {name: statistics.median(values) for name, values in times.items()}

    quality = differences(ours_result, peer_result)
    quality_vectorised = differences(ours_result, vectorised_result)
    quality.update({
        "log_evidence_ours": ours_result["log_evidence"],
        "log_evidence_peer": peer_result["log_evidence"],
        "model_probabilities": [float(p) for p in peer_result["model_probabilities"]],
        "mean_x": peer_result["mean"],
        "var_x": peer_result["var"],
        "vs_peer_vectorised": quality_vectorised,
    })
    user_s = medians["build"] + medians["compile"] + medians["ours"]
    return {
        "benchmark": "mixture",
        "ours_s": round(medians["ours"], 6),
        "peer": "closed form on sufficient statistics (sum + dot, Python floats for K = 3)",
        "peer_s": round(medians["peer"], 6),
        "ratio": round(medians["ours"] / medians["peer"], 2),
        "ratio_run_only": round(medians["run"] / medians["peer"], 2),
        "agree": quality["agree_1e-9"] and quality_vectorised["agree_1e-9"],
        # a model used once: build + compile + run + read
        "ours_with_build_and_compile_s": round(user_s, 6),
        "ratio_with_build_and_compile": round(user_s / medians["peer"], 2),
        "peer_vectorised_s": round(medians["peer_vectorised"], 6),
        "ratio_vs_peer_vectorised": round(medians["ours"] / medians["peer_vectorised"], 2),
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
            "averaged posterior of x) on a compiled plan; build and compile in stages_s (medians) and "
            "ours_with_build_and_compile_s; peer_s = sum + dot + per-model evidence + averaging",
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
    sizes = [arguments.size] if arguments.size else ([10**4] if arguments.quick else [10**5, 10**6])
    reports = []
    for size in sizes:
        reports.append(run(arguments.quick, size))
        print(json.dumps(reports[-1]), flush=True)
    # the last line: the first size at the top level, every size's ratios under "sizes"
    summary = dict(reports[0])
    summary["agree"] = all(report["agree"] for report in reports)
    summary["sizes"] = {
        str(report["params"]["N"]): {key: report[key] for key in
                                     ("ours_s", "peer_s", "ratio", "ratio_run_only", "agree")}
        for report in reports
    }
    print(json.dumps(summary))
    if not summary["agree"]:
        sys.exit("the results of ours and a peer disagree (see the quality fields above)")


if __name__ == "__main__":
    main()
