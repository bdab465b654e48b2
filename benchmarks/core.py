"""Core engine benchmark: a plated VMP model and an unrolled BP chain.

Part ``vmp``: Normal–Gamma variational message passing on an i.i.d. plate of
N points (full: 10**6, quick: 10**5), 50 iterations, with the free energy
(the negative lower bound) computed after every iteration. Three peers, same
priors, same initial q(tau), same iterations, same bound:

* ``numpy``, the strongest: the same coordinate updates written by hand on the
  sufficient statistics (Σy, Σy², N), one ``sum`` and one ``dot`` pass over
  the data, then Python floats (``vmp_numpy``). ``ratio`` is against it.
* BayesPy's equivalent model, which works element by element
  (``ratio_vs_bayespy``).
* Ours element-wise, ``fg.compile(..., collapse_plates=False)``, against
  BayesPy (``ratio_uncollapsed``): the like-for-like engine comparison.

Ours (``ours_s``) is what a user pays: build the model, ``fg.compile`` (the
engine collapses the observed plate to its sufficient statistics, see
``fgraph/plates.py``), ``fg.run`` and read the posteriors; ``ours_run_s`` is
``fg.run`` alone (``ratio_run_only``). ``agree`` checks the posteriors and
the free energy of every iteration against the numpy peer and the final ones
against BayesPy; the benchmark exits non-zero if they disagree.

Part ``chain``: smoothing in a scalar linear-Gaussian state-space model of
length T (full: 1000, quick: 200) by sum-product on the unrolled graph (one
``GaussianLinear`` node per step, built with a Python ``for`` loop), against a
hand-written Kalman filter + Rauch–Tung–Striebel smoother (scalar, Python loop
over t) that also returns the log evidence by the prediction-error
decomposition. Times of ours: build (DSL), compile, run, extract (posterior
means/variances of every x_t and the log evidence). The same model is also
timed as one ``GaussMarkovChain`` compound node (``ours_compound_s``, build to
extract, ``ratio_compound``).

Run from the repository root::

    python -m benchmarks.core            # full
    python -m benchmarks.core --quick    # under a minute
    python -m benchmarks.core --part chain --quick
    python -m benchmarks.core --profile [--part vmp|chain]   # cProfile of ours only

Timing: ``time.perf_counter``, ours and the peer alternate within each repeat
(full: 5 repeats, quick: 3), medians reported; one untimed warm-up run of each
on a small instance first (imports, rule registry loading). The last line
printed is one JSON object for the whole run; one JSON line per part precedes it.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings

import numpy as np
from scipy.special import digamma

import fgraph as fg
from benchmarks.profiling import profile
from nodes import Gamma, Normal

SEED = 20240601

# Normal–Gamma priors (shared by ours and BayesPy): mu ~ N(m0, v0), tau ~ Gamma(a0, b0) (rate).
PRIOR_MEAN = 0.0
PRIOR_VAR = 100.0
PRIOR_SHAPE = 2.0
PRIOR_RATE = 1.0
VMP_ITERATIONS = 50

# Linear-Gaussian chain: x_1 ~ N(0, INITIAL_VAR), x_t = A x_{t-1} + N(0, Q), y_t = x_t + N(0, R).
INITIAL_VAR = 1.0
TRANSITION = 0.9
PROCESS_VAR = 0.5
OBSERVATION_VAR = 1.0


def median_times(repeats: int, functions: dict) -> tuple[dict, dict]:
    """Call each function once per repeat, alternating; return (median seconds, last results)."""
    times = {name: [] for name in functions}
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            results[name] = function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}, results


def relative_difference(ours: float, peer: float) -> float:
    return abs(ours - peer) / max(abs(peer), 1e-300)


# ---------------------------------------------------------------- part 1: VMP
def build_vmp_model(data: np.ndarray) -> fg.Model:
    with fg.Model() as model:
        mu = Normal("mu", mean=PRIOR_MEAN, var=PRIOR_VAR)
        tau = Gamma("tau", shape=PRIOR_SHAPE, rate=PRIOR_RATE)
        Normal("y", mean=mu, precision=tau, observed=data)
    return model


def vmp_ours(data: np.ndarray, collapse_plates: bool = True) -> dict:
    """Build, compile, run (bound every iteration), read; ``collapse_plates=False`` runs the plate element-wise.

    ``fg.infer`` is ``fg.compile`` followed by ``fg.run``; they are called
    separately here to time the run alone as well (``run_s``).
    """
    model = build_vmp_model(data)
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(PRIOR_SHAPE, PRIOR_RATE)},
                      collapse_plates=collapse_plates)
    start = time.perf_counter()
    result = fg.run(plan, iterations=VMP_ITERATIONS, free_energy=True)
    run_s = time.perf_counter() - start
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    return {
        "mean_mu": float(q_mu.mean),
        "var_mu": float(q_mu.var),
        "mean_tau": float(q_tau.mean),
        "free_energy": result.free_energy[-1],
        "trace": list(result.free_energy),
        "iterations": result.iterations,
        "run_s": run_s,
    }


def vmp_numpy(data: np.ndarray) -> dict:
    """The same VMP written by hand on the sufficient statistics (Σy, Σy², N), with the same bound.

    q(mu) = N(m, v) and q(tau) = Gamma(a, b) (rate); each iteration updates
    q(mu) given E[tau], then q(tau) given q(mu) (the engine's schedule), then
    the free energy

        F = N/2 log 2π - N/2 E[log tau] + E[tau] S/2 + KL(q(mu) ‖ p(mu)) + KL(q(tau) ‖ p(tau)),
        S = E[Σ (y_i - mu)²] = Σy² - 2 m Σy + N (m² + v).

    One ``sum`` and one ``dot`` pass over the data, then Python floats.
    """
    count = data.size
    total = float(data.sum())
    total_squares = float(np.dot(data, data))
    m0, v0, a0, b0 = PRIOR_MEAN, PRIOR_VAR, PRIOR_SHAPE, PRIOR_RATE
    shape = a0 + 0.5 * count  # q(tau)'s shape does not change
    digamma_shape = float(digamma(shape))
    constant = (0.5 * count * math.log(2.0 * math.pi) + (shape - a0) * digamma_shape - math.lgamma(shape)
                + math.lgamma(a0) - a0 * math.log(b0) - 0.5 * count * digamma_shape)
    mean_tau = a0 / b0
    trace = []
    for _ in range(VMP_ITERATIONS):
        var_mu = 1.0 / (1.0 / v0 + count * mean_tau)
        mean_mu = var_mu * (m0 / v0 + mean_tau * total)
        squares = total_squares - 2.0 * mean_mu * total + count * (mean_mu * mean_mu + var_mu)
        rate = b0 + 0.5 * squares
        log_rate = math.log(rate)
        mean_tau = shape / rate
        # the terms of F that depend on q: likelihood and KL(q(tau)) (with E[log tau] = ψ(a) − log b), KL(q(mu))
        trace.append(constant + 0.5 * count * log_rate + 0.5 * mean_tau * squares + a0 * log_rate
                     + shape * (b0 - rate) / rate
                     + 0.5 * (math.log(v0 / var_mu) + (var_mu + (mean_mu - m0) ** 2) / v0 - 1.0))
    return {"mean_mu": mean_mu, "var_mu": var_mu, "mean_tau": mean_tau, "free_energy": trace[-1], "trace": trace}


def vmp_bayespy(data: np.ndarray) -> dict:
    from bayespy.inference import VB
    from bayespy.nodes import Gamma as BayesPyGamma
    from bayespy.nodes import GaussianARD

    mu = GaussianARD(PRIOR_MEAN, 1.0 / PRIOR_VAR)
    tau = BayesPyGamma(PRIOR_SHAPE, PRIOR_RATE)
    y = GaussianARD(mu, tau, plates=data.shape)
    y.observe(data)
    inference = VB(y, mu, tau)
    tau.initialize_from_parameters(PRIOR_SHAPE, PRIOR_RATE)
    # BayesPy stops when (L1 - L0) / mean(|L0|, |L1|) < tol; with tol = -inf that never
    # holds, so it runs exactly `repeat` iterations (the bound is still computed each one).
    inference.update(repeat=VMP_ITERATIONS, tol=-np.inf, verbose=False)
    # Variance from the natural parameters (precision * mean, -precision / 2): E[mu^2] - E[mu]^2
    # would lose ~9 digits to cancellation here.
    return {
        "mean_mu": float(mu.u[0]),
        "var_mu": float(-0.5 / mu.phi[1]),
        "mean_tau": float(tau.u[0]),
        "free_energy": -float(inference.L[inference.iter - 1]),
        "iterations": int(inference.iter),
    }


#: Largest relative difference of posteriors and free energies counted as agreement (rounding is ~1e-14 here).
AGREEMENT = 1e-9


def vmp_differences(ours: dict, peer: dict) -> dict:
    """Relative differences of the posterior moments and the final free energy (and the trace, if both have one)."""
    differences = {
        "E_mu": relative_difference(ours["mean_mu"], peer["mean_mu"]),
        "Var_mu": relative_difference(ours["var_mu"], peer["var_mu"]),
        "E_tau": relative_difference(ours["mean_tau"], peer["mean_tau"]),
        "F": relative_difference(ours["free_energy"], peer["free_energy"]),
    }
    if "trace" in peer:
        if len(ours["trace"]) != len(peer["trace"]):
            differences["F_every_iteration"] = math.inf
        else:
            differences["F_every_iteration"] = max(relative_difference(a, b) for a, b in zip(ours["trace"], peer["trace"]))
    return differences


def run_vmp(quick: bool, size: int | None = None, repeats: int | None = None) -> dict:
    size = size or (10**5 if quick else 10**6)
    repeats = repeats or (3 if quick else 5)
    rng = np.random.default_rng(SEED)
    data = rng.normal(2.0, 0.5, size=size)
    warm = data[:1000]
    vmp_ours(warm)
    vmp_ours(warm, collapse_plates=False)
    vmp_numpy(warm)
    run_times = {True: [], False: []}  # fg.run alone, per repeat, collapsed and element-wise

    def timed_ours(collapse_plates: bool):
        def call():
            result = vmp_ours(data, collapse_plates)
            run_times[collapse_plates].append(result["run_s"])
            return result
        return call

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmp_bayespy(warm)
        medians, results = median_times(
            repeats,
            {
                "ours": timed_ours(True),
                "numpy": lambda: vmp_numpy(data),
                "bayespy": lambda: vmp_bayespy(data),
                "ours_uncollapsed": timed_ours(False),
            },
        )
    ours_run_s, uncollapsed_run_s = statistics.median(run_times[True]), statistics.median(run_times[False])
    ours, numpy_peer, bayespy = results["ours"], results["numpy"], results["bayespy"]
    uncollapsed = results["ours_uncollapsed"]
    differences = {
        "ours_vs_numpy": vmp_differences(ours, numpy_peer),
        "ours_vs_bayespy": vmp_differences(ours, bayespy),
        "uncollapsed_vs_numpy": vmp_differences(uncollapsed, numpy_peer),
        "uncollapsed_vs_bayespy": vmp_differences(uncollapsed, bayespy),
    }
    agree = all(value <= AGREEMENT for pair in differences.values() for value in pair.values())
    agree = agree and ours["iterations"] == uncollapsed["iterations"] == bayespy["iterations"] == VMP_ITERATIONS
    return {
        "benchmark": "core.vmp",
        "ours_s": round(medians["ours"], 5),
        "peer": "numpy VMP on sufficient statistics (sum + dot, Python floats)",
        "peer_s": round(medians["numpy"], 5),
        "ratio": round(medians["ours"] / medians["numpy"], 3),
        "ours_run_s": round(ours_run_s, 5),
        "ratio_run_only": round(ours_run_s / medians["numpy"], 3),
        "agree": agree,
        "bayespy_s": round(medians["bayespy"], 4),
        "ratio_vs_bayespy": round(medians["ours"] / medians["bayespy"], 4),
        # the engine run element by element, as BayesPy works: the like-for-like engine comparison
        "ours_uncollapsed_s": round(medians["ours_uncollapsed"], 4),
        "ours_uncollapsed_run_s": round(uncollapsed_run_s, 4),
        "ratio_uncollapsed": round(medians["ours_uncollapsed"] / medians["bayespy"], 3),
        "params": {
            "N": size,
            "iterations": VMP_ITERATIONS,
            "repeats": repeats,
            "timing": "ours_s = build + compile + run + read (bound every iteration); ours_run_s = fg.run alone "
            "(medians); peer_s = sum + dot + 50 iterations with the bound; ratio_uncollapsed = "
            "ours element-wise / bayespy",
            "prior": {"m0": PRIOR_MEAN, "v0": PRIOR_VAR, "a0": PRIOR_SHAPE, "b0": PRIOR_RATE},
            "data": "N(2, 0.5**2), numpy default_rng seed %d" % SEED,
        },
        "quality": {
            "relative_differences": differences,
            "agreement_threshold": AGREEMENT,
            "E_mu": ours["mean_mu"],
            "E_tau": ours["mean_tau"],
            "free_energy_ours": ours["free_energy"],
            "free_energy_numpy": numpy_peer["free_energy"],
            "minus_lower_bound_bayespy": bayespy["free_energy"],
        },
    }


# -------------------------------------------------------------- part 2: chain
def simulate_chain(rng: np.random.Generator, length: int) -> np.ndarray:
    states = np.empty(length)
    states[0] = rng.normal(0.0, math.sqrt(INITIAL_VAR))
    for t in range(1, length):
        states[t] = TRANSITION * states[t - 1] + rng.normal(0.0, math.sqrt(PROCESS_VAR))
    return states + rng.normal(0.0, math.sqrt(OBSERVATION_VAR), size=length)


def kalman_smoother(observations: np.ndarray) -> dict:
    """Scalar Kalman filter + RTS smoother; log evidence by the prediction-error decomposition.

    Returns smoothed means and variances (shape (T,)) and log p(y_1:T) in nats.
    """
    length = len(observations)
    ys = observations.tolist()
    filtered_mean, filtered_var = np.empty(length), np.empty(length)
    predicted_mean, predicted_var = 0.0, INITIAL_VAR
    log_evidence = 0.0
    log_2pi = math.log(2.0 * math.pi)
    for t in range(length):
        innovation_var = predicted_var + OBSERVATION_VAR
        innovation = ys[t] - predicted_mean
        log_evidence -= 0.5 * (log_2pi + math.log(innovation_var) + innovation * innovation / innovation_var)
        gain = predicted_var / innovation_var
        mean = predicted_mean + gain * innovation
        var = (1.0 - gain) * predicted_var
        filtered_mean[t], filtered_var[t] = mean, var
        predicted_mean = TRANSITION * mean
        predicted_var = TRANSITION * TRANSITION * var + PROCESS_VAR
    smoothed_mean, smoothed_var = np.empty(length), np.empty(length)
    smoothed_mean[-1], smoothed_var[-1] = filtered_mean[-1], filtered_var[-1]
    for t in range(length - 2, -1, -1):
        next_predicted_var = TRANSITION * TRANSITION * filtered_var[t] + PROCESS_VAR
        smoother_gain = filtered_var[t] * TRANSITION / next_predicted_var
        smoothed_mean[t] = filtered_mean[t] + smoother_gain * (smoothed_mean[t + 1] - TRANSITION * filtered_mean[t])
        smoothed_var[t] = filtered_var[t] + smoother_gain * smoother_gain * (smoothed_var[t + 1] - next_predicted_var)
    return {"mean": smoothed_mean, "var": smoothed_var, "log_evidence": log_evidence}


def build_chain(observations: np.ndarray) -> fg.Model:
    """The unrolled chain: one latent x_t and one observed y_t per step, built with a Python loop."""
    from nodes import Linear

    with fg.Model() as model:
        state = Normal("x1", mean=0.0, var=INITIAL_VAR)
        Normal("y1", mean=state, var=OBSERVATION_VAR, observed=observations[0])
        for t in range(2, len(observations) + 1):
            state = Linear(f"x{t}", state, gain=TRANSITION, var=PROCESS_VAR)
            Normal(f"y{t}", mean=state, var=OBSERVATION_VAR, observed=observations[t - 1])
    return model


def chain_ours(observations: np.ndarray) -> dict:
    """Build, compile, run, extract; returns the results and the time of each stage."""
    length = len(observations)
    start = time.perf_counter()
    model = build_chain(observations)
    built = time.perf_counter()
    plan = fg.compile(model, algorithm="bp")
    compiled = time.perf_counter()
    result = fg.run(plan)
    ran = time.perf_counter()
    marginals = [result.marginal(f"x{t}") for t in range(1, length + 1)]
    mean = np.array([float(q.mean) for q in marginals])
    var = np.array([float(q.var) for q in marginals])
    log_evidence = result.log_evidence
    extracted = time.perf_counter()
    return {
        "mean": mean,
        "var": var,
        "log_evidence": log_evidence,
        "messages": len(result.schedule),
        "stages": {"build": built - start, "compile": compiled - built, "run": ran - compiled, "extract": extracted - ran},
    }


def chain_compound(observations: np.ndarray) -> dict:
    """The same model with the Gauss–Markov compound node: build, compile, run, extract."""
    from nodes import GaussMarkovChain, Normal

    with fg.Model() as model:
        x = GaussMarkovChain("x", TRANSITION, PROCESS_VAR, 0.0, INITIAL_VAR, len(observations))
        Normal("y", mean=x, var=OBSERVATION_VAR, observed=observations)
    result = fg.infer(model)
    marginal = result.marginal("x")
    return {"mean": np.asarray(marginal.mean), "var": np.asarray(marginal.var), "log_evidence": result.log_evidence}


def run_chain(quick: bool) -> dict:
    length = 200 if quick else 1000
    repeats = 3 if quick else 5
    rng = np.random.default_rng(SEED)
    observations = simulate_chain(rng, length)
    chain_ours(observations[:10])
    chain_compound(observations[:10])
    kalman_smoother(observations[:10])
    stage_times = {"build": [], "compile": [], "run": [], "extract": []}
    totals = {"ours": [], "peer": [], "compound": []}
    for _ in range(repeats):
        start = time.perf_counter()
        ours = chain_ours(observations)
        totals["ours"].append(time.perf_counter() - start)
        for stage, seconds in ours["stages"].items():
            stage_times[stage].append(seconds)
        start = time.perf_counter()
        compound = chain_compound(observations)
        totals["compound"].append(time.perf_counter() - start)
        start = time.perf_counter()
        peer = kalman_smoother(observations)
        totals["peer"].append(time.perf_counter() - start)
    ours_s = statistics.median(totals["ours"])
    peer_s = statistics.median(totals["peer"])
    compound_s = statistics.median(totals["compound"])
    stages = {stage: statistics.median(values) for stage, values in stage_times.items()}
    return {
        "benchmark": "core.chain",
        "ours_s": round(ours_s, 4),
        "peer": "numpy Kalman filter + RTS smoother (Python loop)",
        "peer_s": round(peer_s, 6),
        "ratio": round(ours_s / peer_s, 2),
        "ratio_run_only": round(stages["run"] / peer_s, 2),
        "stages_s": {stage: round(seconds, 4) for stage, seconds in stages.items()},
        "messages": ours["messages"],
        "us_per_message": round(1e6 * stages["run"] / ours["messages"], 2),
        # the same model as one Gauss–Markov compound node (nodes/gauss_markov_chain.py), build to extract
        "ours_compound_s": round(compound_s, 6),
        "ratio_compound": round(compound_s / peer_s, 2),
        "params": {
            "T": length,
            "repeats": repeats,
            "model": {"x1_var": INITIAL_VAR, "a": TRANSITION, "q": PROCESS_VAR, "r": OBSERVATION_VAR},
            "timing": "ours_s = build + compile + run + extract (all marginals and log evidence); "
            "peer_s = filter + smoother + log evidence; us_per_message = run / len(result.schedule)",
        },
        "quality": {
            "max_abs_diff_mean": float(np.max(np.abs(ours["mean"] - peer["mean"]))),
            "max_abs_diff_var": float(np.max(np.abs(ours["var"] - peer["var"]))),
            "log_evidence_ours": ours["log_evidence"],
            "log_evidence_peer": peer["log_evidence"],
            "abs_diff_log_evidence": abs(ours["log_evidence"] - peer["log_evidence"]),
            "compound_max_abs_diff_mean": float(np.max(np.abs(compound["mean"] - peer["mean"]))),
            "compound_max_abs_diff_var": float(np.max(np.abs(compound["var"] - peer["var"]))),
            "compound_abs_diff_log_evidence": abs(compound["log_evidence"] - peer["log_evidence"]),
        },
    }


def profile_ours(part: str, quick: bool, top: int = 10) -> None:
    """Run ours only under cProfile (5 calls after a warm-up) and print the top functions."""
    rng = np.random.default_rng(SEED)
    if part in ("vmp", "vmp-uncollapsed"):
        data = rng.normal(2.0, 0.5, size=10**5 if quick else 10**6)
        call = lambda: vmp_ours(data, collapse_plates=part == "vmp")  # noqa: E731
    else:
        observations = simulate_chain(rng, 200 if quick else 1000)
        call = lambda: chain_ours(observations)  # noqa: E731
    profile(call, 5, f"part {part}, {'quick' if quick else 'full'} size", top)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats (under a minute)")
    parser.add_argument("--part", choices=("vmp", "chain"), help="run one part only (default: both)")
    parser.add_argument("--profile", action="store_true", help="profile ours only (cProfile) instead of timing")
    arguments = parser.parse_args(argv)
    if arguments.profile:
        selected = {"vmp": ["vmp", "vmp-uncollapsed"], "chain": ["chain"]}
        for part in selected[arguments.part] if arguments.part else ["vmp", "vmp-uncollapsed", "chain"]:
            profile_ours(part, arguments.quick)
            print()
        return
    parts = [arguments.part] if arguments.part else ["vmp", "chain"]
    reports = {}
    if "vmp" in parts:
        reports["vmp"] = run_vmp(arguments.quick)
        print(json.dumps(reports["vmp"]), flush=True)
    if "chain" in parts:
        reports["chain"] = run_chain(arguments.quick)
        print(json.dumps(reports["chain"]), flush=True)
    # The headline (top-level fields) is part 1 when it ran; part 2 is nested under "chain".
    headline = reports.get("vmp") or reports["chain"]
    summary = {"benchmark": "core", "parts": parts, "quick": arguments.quick}
    summary.update({key: value for key, value in headline.items() if key != "benchmark"})
    if "vmp" in reports and "chain" in reports:
        summary["chain"] = {key: value for key, value in reports["chain"].items() if key != "benchmark"}
    print(json.dumps(summary))
    if any(report.get("agree") is False for report in reports.values()):
        sys.exit("the results of ours and a peer disagree (see the quality fields above)")


if __name__ == "__main__":
    main()
